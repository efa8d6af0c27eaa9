"""The evaluator: one contract against one trajectory -> one ``Verdict``.

Every check runs independently: one failing or raising never stops the others. A raising
check is an ``error`` result (a harness problem, not an agent failure). The same function
serves offline files, the server, and the AgentBench ``run``/``gate`` commands.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

from otel_oracles.errors import OtelOraclesError, ReplayError, SandboxError
from otel_oracles.grade.completeness import trace_complete
from otel_oracles.grade.evidence import coverage_gap, gaps_for, missing_names
from otel_oracles.grade.oracles.base import Finding, GradeContext, OracleCheck
from otel_oracles.grade.registry import instantiate
from otel_oracles.model.contract import Contract, OracleSpec
from otel_oracles.model.result import Layer, OracleResult, Outcome, Verdict, count_outcomes
from otel_oracles.model.step import Trajectory
from otel_oracles.replay import replayed_files, replayed_workspace
from otel_oracles.sandbox import SANDBOXED, CommandPolicy

BUDGET_PARAMS: tuple[str, ...] = ("max", "allowed", "max_total")


# Enum members read once: ``Outcome.PASS`` is a class-attribute lookup through the enum
# machinery, and a check reads several.
_PASS = Outcome.PASS
_TOLERATED = Outcome.TOLERATED
_INVARIANT_FAILURE = Outcome.INVARIANT_FAILURE
_BUDGET_EXHAUSTED = Outcome.BUDGET_EXHAUSTED
_MISSING_EVIDENCE = Outcome.MISSING_EVIDENCE
_ERROR = Outcome.ERROR

_new_result = OracleResult.__pydantic_validator__.validate_python
"""``OracleResult(**fields)`` in one pydantic-core call, without ``BaseModel.__init__``."""

_new_verdict = Verdict.__pydantic_validator__.validate_python


def outcome_for(layer: Layer, finding: Finding) -> Outcome:
    """The layer/finding table in ``otel_oracles.grade.oracles.base``."""
    if finding.status == "missing":
        return _MISSING_EVIDENCE
    if layer == "tolerance":
        if finding.status == "fail":
            if finding.breach == "rule":
                return _INVARIANT_FAILURE
            return _BUDGET_EXHAUSTED
        return _TOLERATED if finding.used > 0 else _PASS
    return _PASS if finding.status == "pass" else _INVARIANT_FAILURE


@dataclass(frozen=True, slots=True)
class PlannedCheck:
    """One check of a contract, prepared once: its oracle instantiated with validated params
    and its evidence names resolved, so grading a trace does no per-check set-up."""

    layer: Layer
    spec: OracleSpec
    oracle: OracleCheck | None
    evidence: tuple[str, ...]
    """Sorted evidence names (``find_gaps`` order)."""
    setup_error: Exception | None
    """What instantiating the oracle (or asking its evidence) raised; reported per check as
    the ``error`` result it has always been."""
    budget: int | None


def plan_check(layer: Layer, spec: OracleSpec) -> PlannedCheck:
    oracle: OracleCheck | None = None
    evidence: tuple[str, ...] = ()
    error: Exception | None = None
    try:
        oracle = instantiate(spec)
        evidence = tuple(sorted(set(oracle.required_evidence())))
    except Exception as exc:  # noqa: BLE001 - reported by the check, never stops the others
        oracle, error = None, exc
    budget = next((spec.params[k] for k in BUDGET_PARAMS if k in spec.params), None)
    return PlannedCheck(
        layer=layer,
        spec=spec,
        oracle=oracle,
        evidence=evidence,
        setup_error=error,
        budget=budget if isinstance(budget, int) and not isinstance(budget, bool) else None,
    )


MAX_PLANS = 1024
"""Contracts whose plans are kept (a run holds a handful; the bound only guards servers that
reload contracts forever)."""

_plans: dict[int, tuple[Contract, tuple[PlannedCheck, ...]]] = {}


def contract_plan(contract: Contract) -> tuple[PlannedCheck, ...]:
    """Every check of ``contract``, planned once per contract object (contracts are frozen).
    The entry holds the contract itself, so its ``id`` cannot be reused while cached."""
    entry = _plans.get(id(contract))
    if entry is not None and entry[0] is contract:
        return entry[1]
    if len(_plans) >= MAX_PLANS:
        _plans.clear()
    plan = tuple(plan_check(layer, spec) for layer, spec in contract.checks())
    _plans[id(contract)] = (contract, plan)
    return plan


def run_check(layer: Layer, spec: OracleSpec, ctx: GradeContext) -> OracleResult:
    return run_planned(plan_check(layer, spec), ctx)


def _fails_with(exc: Exception) -> tuple[Finding, Outcome, dict[str, object]]:
    if isinstance(exc, OtelOraclesError):
        # A user-facing problem found while checking (e.g. a task-authoring mistake): its
        # message is meant to be read as it is; it is still a harness error, not the agent's.
        return Finding.fail(exc.message), _ERROR, {"error.type": type(exc).__name__}
    # A crashing oracle must not stop the others.
    finding = Finding.fail(f"oracle raised {type(exc).__name__}: {exc}")
    return finding, _ERROR, {"error.type": type(exc).__name__}


def _fail_closed_on_coverage(finding: Finding, oracle: OracleCheck, ctx: GradeContext) -> Finding:
    """A pass of a check that needs complete visibility, on a trajectory with spans no
    convention recognised, is ``missing_evidence`` naming them (DESIGN section 8: the
    unrecognised spans may hold the call, the request or the source the check rules out),
    unless the check or its contract says ``coverage: lenient``."""
    gap = coverage_gap(ctx.trajectory)
    if gap is None or oracle.coverage(ctx.contract) == "lenient":
        return finding
    return Finding.missing(
        f"{gap} (with them left out: {finding.message})",
        details={**finding.details, "unclassified_spans": dict(ctx.trajectory.unmapped_spans)},
        span_ids=finding.span_ids,
        step_indexes=finding.step_indexes,
    )


def run_planned(check: PlannedCheck, ctx: GradeContext) -> OracleResult:
    start = time.perf_counter_ns()
    contract = ctx.contract
    spec = check.spec
    layer = check.layer
    error_details: dict[str, object] = {}
    if check.setup_error is not None:
        finding, outcome, error_details = _fails_with(check.setup_error)
    else:
        oracle = check.oracle
        assert oracle is not None
        try:
            gaps = gaps_for(check.evidence, ctx.trajectory) if check.evidence else []
            if ctx.trajectory.incomplete:
                gaps.insert(0, "trace incomplete: graded on timeout before all spans arrived")
            if not gaps and oracle.runs_commands:
                # Checked before the check runs, so a plug-in cannot run anything here.
                problem = ctx.command_problem()
                if problem is not None:
                    raise SandboxError(problem)
            if gaps:
                missing = missing_names(check.evidence, ctx.trajectory)
                if ctx.trajectory.incomplete:
                    missing.insert(0, "trace_complete")
                finding = Finding.missing("; ".join(gaps), details={"evidence": missing})
            else:
                finding = oracle.check(ctx)
            if finding.status == "pass" and oracle.needs_full_coverage:
                finding = _fail_closed_on_coverage(finding, oracle, ctx)
            outcome = outcome_for(layer, finding)
        except Exception as exc:
            if exc is ctx.replay_error:
                raise  # the lazy replay failed: the whole verdict is a replay error
            finding, outcome, error_details = _fails_with(exc)
    passed = (
        outcome is _PASS
        or outcome is _TOLERATED
        or (outcome is _MISSING_EVIDENCE and contract.on_missing_evidence == "warn")
    )
    result: OracleResult = _new_result(
        {
            "oracle_type": spec.type,
            "name": spec.label,
            "layer": layer,
            "outcome": outcome,
            "passed": passed,
            "message": finding.message,
            "details": {**finding.details, **error_details} if error_details else finding.details,
            "params": spec.params,
            "span_ids": finding.span_ids,
            "step_indexes": finding.step_indexes,
            "used": finding.used,
            "budget": check.budget,
            "why": spec.why,
            "contract_id": contract.id,
            "contract_version": contract.version,
            "duration_ns": time.perf_counter_ns() - start,
        }
    )
    return result


def _context(
    contract: Contract,
    trajectory: Trajectory,
    stack: contextlib.ExitStack,
    commands: CommandPolicy,
) -> GradeContext:
    """The context, with the workspace replayed lazily when the replay can be decided in
    memory (same files, same ``ReplayError``), else on disk right away as always."""
    initial = dict(contract.workspace or {})
    if contract.workspace is None:
        return GradeContext(
            trajectory=trajectory, contract=contract, initial_workspace=initial, commands=commands
        )
    spec = contract.workspace
    files = replayed_files(spec, trajectory)
    if files is None:
        root = stack.enter_context(replayed_workspace(spec, trajectory))
        return GradeContext(
            trajectory=trajectory,
            contract=contract,
            workspace=root,
            initial_workspace=initial,
            commands=commands,
        )
    return GradeContext(
        trajectory=trajectory,
        contract=contract,
        initial_workspace=initial,
        materialize=lambda: stack.enter_context(replayed_workspace(spec, trajectory)),
        files=files,
        commands=commands,
    )


def grade(
    contract: Contract, trajectory: Trajectory, *, commands: CommandPolicy = SANDBOXED
) -> Verdict:
    """Run every check of ``contract`` on ``trajectory``.

    ``commands`` says whether and how checks that execute commands run: sandboxed by
    default, because the workspace holds files the trace wrote (docs/security.md).
    """
    start = time.perf_counter_ns()
    results: list[OracleResult] = []
    plan = contract_plan(contract)
    try:
        with contextlib.ExitStack() as stack:
            ctx = _context(contract, trajectory, stack, commands)
            results = [run_planned(check, ctx) for check in plan]
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
    results.extend(trace_complete(contract, trajectory))
    verdict: Verdict = _new_verdict(
        {
            "contract_id": contract.id,
            "contract_version": contract.version,
            "contract_hash": contract.content_hash,
            "contract_name": contract.name,
            "subject": trajectory.trace_id or trajectory.source or "<trajectory>",
            "trace_id": trajectory.trace_id,
            "root_span_id": trajectory.root_span_id,
            "root_name": trajectory.root_name,
            "agent_name": trajectory.agent_name,
            "passed": all(r.passed for r in results),
            "results": results,
            "counts": count_outcomes(results),
            "duration_ns": time.perf_counter_ns() - start,
        }
    )
    return verdict
