"""The evaluator: one contract against one trajectory -> one ``Verdict``.

Every check runs independently: one failing or raising never stops the others. A raising
check is an ``error`` result (a harness problem, not an agent failure). The same function
serves offline files, the server, and the AgentBench ``run``/``gate`` commands.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

from otel_oracles.errors import OtelOraclesError, ReplayError
from otel_oracles.grade.evidence import find_gaps
from otel_oracles.grade.oracles.base import Finding, GradeContext
from otel_oracles.grade.registry import instantiate
from otel_oracles.model.contract import Contract, OracleSpec
from otel_oracles.model.result import Layer, OracleResult, Outcome, Verdict, count_outcomes
from otel_oracles.model.step import Trajectory
from otel_oracles.replay import replayed_workspace

BUDGET_PARAMS: tuple[str, ...] = ("max", "allowed", "max_total")


def outcome_for(layer: Layer, finding: Finding) -> Outcome:
    """The layer/finding table in ``otel_oracles.grade.oracles.base``."""
    if finding.status == "missing":
        return Outcome.MISSING_EVIDENCE
    if layer == "tolerance":
        if finding.status == "fail":
            if finding.breach == "rule":
                return Outcome.INVARIANT_FAILURE
            return Outcome.BUDGET_EXHAUSTED
        return Outcome.TOLERATED if finding.used > 0 else Outcome.PASS
    return Outcome.PASS if finding.status == "pass" else Outcome.INVARIANT_FAILURE


def run_check(layer: Layer, spec: OracleSpec, ctx: GradeContext) -> OracleResult:
    start = time.perf_counter_ns()
    contract = ctx.contract
    try:
        oracle = instantiate(spec)
        gaps = find_gaps(oracle.required_evidence(), ctx.trajectory)
        if ctx.trajectory.incomplete:
            gaps.insert(0, "trace incomplete: graded on timeout before all spans arrived")
        finding = Finding.missing("; ".join(gaps)) if gaps else oracle.check(ctx)
        outcome = outcome_for(layer, finding)
        error_details: dict[str, object] = {}
    except OtelOraclesError as exc:
        # A user-facing problem found while checking (e.g. a task-authoring mistake): its
        # message is meant to be read as it is; it is still a harness error, not the agent's.
        finding = Finding.fail(exc.message)
        outcome = Outcome.ERROR
        error_details = {"error.type": type(exc).__name__}
    except Exception as exc:  # noqa: BLE001 - a crashing oracle must not stop the others
        finding = Finding.fail(f"oracle raised {type(exc).__name__}: {exc}")
        outcome = Outcome.ERROR
        error_details = {"error.type": type(exc).__name__}
    passed = outcome in (Outcome.PASS, Outcome.TOLERATED) or (
        outcome == Outcome.MISSING_EVIDENCE and contract.on_missing_evidence == "warn"
    )
    budget = next((spec.params[k] for k in BUDGET_PARAMS if k in spec.params), None)
    return OracleResult(
        oracle_type=spec.type,
        name=spec.label,
        layer=layer,
        outcome=outcome,
        passed=passed,
        message=finding.message,
        details={**finding.details, **error_details},
        params=spec.params,
        span_ids=list(finding.span_ids),
        step_indexes=list(finding.step_indexes),
        used=finding.used,
        budget=budget if isinstance(budget, int) and not isinstance(budget, bool) else None,
        why=spec.why,
        contract_id=contract.id,
        contract_version=contract.version,
        duration_ns=time.perf_counter_ns() - start,
    )


@contextlib.contextmanager
def _workspace(contract: Contract, trajectory: Trajectory) -> Iterator[Path | None]:
    if contract.workspace is None:
        yield None
    else:
        with replayed_workspace(contract.workspace, trajectory) as root:
            yield root


def grade(contract: Contract, trajectory: Trajectory) -> Verdict:
    """Run every check of ``contract`` on ``trajectory``."""
    start = time.perf_counter_ns()
    results: list[OracleResult] = []
    try:
        with _workspace(contract, trajectory) as root:
            ctx = GradeContext(
                trajectory=trajectory,
                contract=contract,
                workspace=root,
                initial_workspace=dict(contract.workspace or {}),
            )
            results = [run_check(layer, spec, ctx) for layer, spec in contract.checks()]
    except ReplayError as exc:
        results = [
            OracleResult(
                oracle_type="replay",
                name="replay",
                outcome=Outcome.ERROR,
                passed=False,
                message=f"replay refused: {exc.message}",
                details={"error.type": "ReplayError"},
                contract_id=contract.id,
                contract_version=contract.version,
            )
        ]
    return Verdict(
        contract_id=contract.id,
        contract_version=contract.version,
        contract_hash=contract.content_hash,
        contract_name=contract.name,
        subject=trajectory.trace_id or trajectory.source or "<trajectory>",
        trace_id=trajectory.trace_id,
        root_span_id=trajectory.root_span_id,
        root_name=trajectory.root_name,
        agent_name=trajectory.agent_name,
        passed=all(r.passed for r in results),
        results=results,
        counts=count_outcomes(results),
        duration_ns=time.perf_counter_ns() - start,
    )
