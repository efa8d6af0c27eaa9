"""The evaluator: one contract against one trajectory -> one ``Verdict``.

Every check runs independently: one failing or raising never stops the others. A raising
check is an ``error`` result (a harness problem, not an agent failure), whatever it raised:
an ``Exception``, or a ``BaseException`` such as a plug-in's ``sys.exit()`` (``SystemExit``)
or a stray ``GeneratorExit``, since what one check does must not cost the other checks, or
the other contracts on the same trace, their results. Only ``KeyboardInterrupt`` goes
through: in the main thread it is how Ctrl-C stops a run, and a check cannot tell it from
one a plug-in raised; an interrupted run is no failing check. The same function serves
offline files, the server, and the AgentBench ``run``/``gate`` commands.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from pydantic import ValidationError

from otel_oracles._native import CheckRunner, Tally, known_clear
from otel_oracles.errors import OtelOraclesError, ReplayError, SandboxError
from otel_oracles.grade.compiled import CompiledCheck, CompiledContract, compile_check
from otel_oracles.grade.completeness import trace_complete
from otel_oracles.grade.evidence import Evidence
from otel_oracles.grade.loader import compile_contract
from otel_oracles.grade.oracles.base import (
    Finding,
    GradeContext,
    OracleCheck,
    workspaceless_context,
)
from otel_oracles.model.contract import Contract, OracleSpec
from otel_oracles.model.result import (
    RESULTS,
    VERDICTS,
    Layer,
    OracleResult,
    Outcome,
    Verdict,
)
from otel_oracles.model.step import Trajectory
from otel_oracles.replay import WorkspaceReplay, replayed_workspace
from otel_oracles.sandbox import SANDBOXED, CommandPolicy

# Enum members read once: ``Outcome.PASS`` is a class-attribute lookup through the enum
# machinery, and a check reads several.
_PASS = Outcome.PASS
_TOLERATED = Outcome.TOLERATED
_INVARIANT_FAILURE = Outcome.INVARIANT_FAILURE
_BUDGET_EXHAUSTED = Outcome.BUDGET_EXHAUSTED
_MISSING_EVIDENCE = Outcome.MISSING_EVIDENCE
_ERROR = Outcome.ERROR

_clock = time.perf_counter_ns


def outcome_for(layer: Layer, finding: Finding) -> Outcome:
    """The layer/finding table in ``otel_oracles.grade.oracles.base``: what ``run_checks``
    (the core's loop, ``native/python/src/checks.rs``) makes of each finding, for callers
    that hold a finding of their own (the tests compare the two)."""
    if finding.status == "missing":
        return _MISSING_EVIDENCE
    if layer == "tolerance":
        if finding.status == "fail":
            if finding.breach == "rule":
                return _INVARIANT_FAILURE
            return _BUDGET_EXHAUSTED
        return _TOLERATED if finding.used > 0 else _PASS
    return _PASS if finding.status == "pass" else _INVARIANT_FAILURE


def run_check(layer: Layer, spec: OracleSpec, ctx: GradeContext) -> OracleResult:
    """Run one check of ``ctx.contract`` on ``ctx.trajectory`` (compiled for this call)."""
    return run_compiled(compile_check(layer, spec), ctx)


def _fails_with(exc: BaseException) -> tuple[Finding, Outcome, dict[str, object]]:
    if isinstance(exc, OtelOraclesError):
        # A user-facing problem found while checking (e.g. a task-authoring mistake): its
        # message is meant to be read as it is; it is still a harness error, not the agent's.
        return Finding.fail(exc.message), _ERROR, {"error.type": type(exc).__name__}
    # A crashing oracle must not stop the others.
    finding = Finding.fail(f"oracle raised {type(exc).__name__}: {exc}")
    return finding, _ERROR, {"error.type": type(exc).__name__}


def _unwritable(exc: BaseException) -> tuple[Finding, Outcome, dict[str, object]]:
    """The error of a check whose own finding no result could be built of (a plug-in
    returning ``details=None`` or a message that is no ``str``): that check's ``error``, as
    if its ``check`` had raised, so the contract's other checks keep their results. The
    message names the refused fields and what they should be, not the values (a plug-in may
    have put trace content there, and the report shows messages)."""
    if not isinstance(exc, ValidationError):
        return _fails_with(exc)
    problems = "; ".join(
        f"{'.'.join(str(part) for part in error['loc']) or 'finding'}: {error['msg']}"
        for error in exc.errors(include_url=False, include_input=False)
    )
    finding = Finding.fail(f"the oracle's finding cannot be a result ({problems})")
    return finding, _ERROR, {"error.type": type(exc).__name__}


def _fail_closed(finding: Finding, oracle: OracleCheck, ctx: GradeContext) -> Finding:
    """``finding`` (a pass of a check that needs the whole run seen, or a failure for
    something not seen) made ``missing_evidence`` where the trace does not show the whole
    run (``_fail_closed_on_fragment``), else where spans went unrecognised
    (``_fail_closed_on_coverage``). Asked of most results, which both leave as they are: the
    two gaps are read here first (each made once per trajectory), and the helpers run only
    when one is there."""
    ev = ctx.evidence
    if not oracle.holds_on_fragments and ev.fragment_gap() is not None:
        finding = _fail_closed_on_fragment(finding, oracle, ctx)
    if finding.status == "missing" or ev.coverage_gap() is None:
        return finding
    return _fail_closed_on_coverage(finding, oracle, ctx)


def _fail_closed_on_coverage(finding: Finding, oracle: OracleCheck, ctx: GradeContext) -> Finding:
    """A pass of a check that needs complete visibility (or a failure for something not
    seen, ``Finding.unseen``), on a trajectory with spans no convention recognised, is
    ``missing_evidence`` naming them (DESIGN section 8: the unrecognised spans may hold the
    call, the request or the source the check rules out, or the call it missed), unless the
    check or its contract says ``coverage: lenient``."""
    gap = ctx.evidence.coverage_gap()
    if gap is None or oracle.coverage(ctx.contract) == "lenient":
        return finding
    return Finding.missing(
        f"{gap} (with them left out: {finding.message})",
        details={**finding.details, "unclassified_spans": dict(ctx.trajectory.unmapped_spans)},
        span_ids=finding.span_ids,
        step_indexes=finding.step_indexes,
    )


def _fail_closed_on_fragment(finding: Finding, oracle: OracleCheck, ctx: GradeContext) -> Finding:
    """A pass of a check about everything the run did (or a failure for something not seen),
    on a trace that holds only part of a run (``Evidence.fragment_gap``), is
    ``missing_evidence`` naming why: the rest of the run, outside the trace, may hold the
    call, the retry or the step the check rules out. ``coverage: lenient`` does not relax
    this: it accepts spans no convention recognised, not a run the trace does not hold."""
    if oracle.holds_on_fragments:
        return finding
    gap = ctx.evidence.fragment_gap()
    if gap is None:
        return finding
    return Finding.missing(
        f"{gap} (in this trace: {finding.message})",
        details={**finding.details, "evidence": ["whole_run"]},
        span_ids=finding.span_ids,
        step_indexes=finding.step_indexes,
    )


def _failure_despite_gaps(missing: Finding, oracle: OracleCheck, ctx: GradeContext) -> Finding:
    """The failure ``oracle`` finds in the steps the trace shows, when such a failure stands
    whatever the missing evidence would add (``OracleCheck.failure_stands_on_gaps``): a
    recorded forbidden call is a violation even on a trace that holds only part of a run, or
    on one graded incomplete on timeout (the spans still to come could only add steps).
    Anything else it finds (a pass, a failure for something not seen) is ``missing``."""
    seen = oracle.check(ctx)
    if seen.status != "fail" or seen.unseen:
        return missing
    return dataclasses.replace(
        seen,
        message=f"{seen.message} (other evidence missing: {missing.message})",
        details={**seen.details, "evidence_missing": missing.details.get("evidence", [])},
    )


def _known_clear(compiled: CompiledContract, ctx: GradeContext) -> tuple[bool, bool]:
    """What every check of ``compiled`` would ask of ``ctx``'s trajectory, asked once per
    contract: ``(clear, gapless)``. ``clear``: the trajectory is complete and lacks none of
    the contract's evidence names (``CompiledContract.evidence``, asked through the plan
    made with the contract, ``CompiledContract.plan``: ``Evidence.lacking_of``; each probed
    once per trajectory, as every check would probe its own), so no check lacks any.
    ``gapless``: it has neither a fragment gap nor a coverage gap, so no result is made
    ``missing_evidence`` for one (``_fail_closed``). Either is ``False`` when working it
    out raises (``KeyboardInterrupt`` excepted): each check that asks then raises it
    itself, as its own ``error`` result. The core's (``evidence.rs`` ``known_clear``), which
    ``grade`` calls directly: once per contract and trajectory, its Python frame and the
    evidence's were ~1,500 instructions of each ask."""
    return known_clear(ctx.evidence, compiled.plan, ctx.trajectory.incomplete)


def _gapped(check: CompiledCheck, ctx: GradeContext) -> Finding | None:
    """The ``missing`` finding of a check whose contract's evidence is not known to be all
    there (``_known_clear``): what of its own evidence the trajectory lacks, and whether
    the trace is incomplete (graded on timeout), else ``None`` (the check judges). A
    recorded failure that stands whatever the missing evidence would add replaces it
    (``_failure_despite_gaps``)."""
    lacking = ctx.evidence.lacking_of(check.plan) if check.evidence else ()
    incomplete = ctx.trajectory.incomplete
    if not lacking and not incomplete:
        return None
    gaps = [message for _, message in lacking]
    missing = [name for name, _ in lacking]
    if incomplete:
        gaps.insert(0, "trace incomplete: graded on timeout before all spans arrived")
        missing.insert(0, "trace_complete")
    finding = Finding.missing("; ".join(gaps), details={"evidence": missing})
    oracle = check.oracle
    assert oracle is not None
    if oracle.failure_stands_on_gaps and not oracle.runs_commands:
        finding = _failure_despite_gaps(finding, oracle, ctx)
    return finding


def _refuse_commands(ctx: GradeContext) -> None:
    """Raise ``SandboxError`` when ``ctx``'s policy cannot run commands: asked before a
    check that runs commands runs, so a plug-in cannot run anything there."""
    problem = ctx.command_problem()
    if problem is not None:
        raise SandboxError(problem)


def _runner(complete: Callable[[Contract, Trajectory], list[OracleResult]]) -> CheckRunner:
    """The loop over a contract's checks and the verdict's epilogue, in the core
    (``native/python/src/checks.rs``), with ``complete`` as the result a trajectory with
    orphan spans adds (``trace_complete``; the tests give another)."""
    return CheckRunner(
        RESULTS,
        (_PASS, _TOLERATED, _INVARIANT_FAILURE, _BUDGET_EXHAUSTED, _MISSING_EVIDENCE),
        _fails_with,
        _unwritable,
        _gapped,
        _refuse_commands,
        _fail_closed,
        Finding,
        CompiledCheck,
        VERDICTS,
        complete,
        _clock,
    )


_RUNNER = _runner(trace_complete)
"""The evaluator's steps around each check's own ``check`` (its outcome, whether it passes,
its result built, unvalidated when every value is of its field's exact type) cost ~10 k
instructions a check more when interpreted (docs/performance.md), and the verdict's
epilogue (the tally, the counts, the verdict built) ~12 k a verdict: both are the core's.
The paths off the usual one call back the helpers above."""


def run_checks(
    checks: tuple[CompiledCheck, ...], ctx: GradeContext, clear: bool = False, gapless: bool = False
) -> list[OracleResult]:
    """One result per check of ``checks`` (compiled checks of ``ctx.contract``) on ``ctx``,
    never an exception (except the lazy replay's own failure, which makes the whole
    verdict a replay error, and ``KeyboardInterrupt``, which stops the run: see the module
    docstring). ``clear`` and ``gapless`` are what the contract's ``_known_clear`` found:
    when ``clear``, no check asks for its evidence nor completeness; when ``gapless``, no
    result is held against the trajectory's gaps."""
    results: list[OracleResult] = _RUNNER.run(checks, ctx, clear, gapless)[0]
    return results


def run_compiled(
    check: CompiledCheck, ctx: GradeContext, clear: bool = False, gapless: bool = False
) -> OracleResult:
    """One compiled check on ``ctx``: its result (``run_checks`` of that check alone)."""
    return run_checks((check,), ctx, clear, gapless)[0]


def _on_disk(
    opened: list[contextlib.ExitStack], workspace: Mapping[str, str], trajectory: Trajectory
) -> Path:
    """The directory of ``workspace`` with ``trajectory``'s edits (``replayed_workspace``),
    entered on the grade's exit stack, ``opened[0]``, made here by the first replay on
    disk. Most runs replay in memory and enter none: an ``ExitStack`` made, entered and left
    for every run of a contract with a workspace was ~7.9 k instructions, half what the
    in-memory replay itself costs, where the empty list and the ``try`` are ~1 k
    (docs/performance-history.md, "The evaluator's exit stack made by the first replay on
    disk")."""
    if not opened:
        opened.append(contextlib.ExitStack())
    return opened[0].enter_context(replayed_workspace(workspace, trajectory))


def _context(
    compiled: CompiledContract,
    workspace: WorkspaceReplay,
    evidence: Evidence,
    opened: list[contextlib.ExitStack],
    commands: CommandPolicy,
) -> GradeContext:
    """The context of a contract with a workspace (``compiled.workspace``), replayed lazily
    when the replay can be decided in memory (same files, same ``ReplayError``), else on
    disk right away as always (the directory removed when the grade leaves its exit stack,
    ``opened``: ``_on_disk``)."""
    trajectory = evidence.trajectory
    contract = compiled.contract
    spec = workspace.workspace
    initial = dict(spec)
    try:
        files = workspace.replayed_files(trajectory)
    except ReplayError:
        if not evidence.lacking(("file_edits",)):
            raise
        # Edits whose path or content was not captured cannot be replayed anyway: every
        # check that reads the workspace declares ``file_edits`` and reports it missing
        # without reading. The replay (and its refusal, the verdict's one ``replay``
        # result) happens only if a check reads the workspace all the same, so the checks
        # that never do (``no_network`` ...) still answer.
        return GradeContext(
            trajectory=trajectory,
            contract=contract,
            initial_workspace=initial,
            materialize=lambda: _on_disk(opened, spec, trajectory),
            commands=commands,
            evidence=evidence,
        )
    if files is None:
        root = _on_disk(opened, spec, trajectory)
        return GradeContext(
            trajectory=trajectory,
            contract=contract,
            workspace=root,
            initial_workspace=initial,
            commands=commands,
            evidence=evidence,
        )
    return GradeContext(
        trajectory=trajectory,
        contract=contract,
        initial_workspace=initial,
        materialize=lambda: _on_disk(opened, spec, trajectory),
        files=files,
        commands=commands,
        evidence=evidence,
    )


def grade(
    contract: CompiledContract | Contract,
    trajectory: Trajectory,
    *,
    commands: CommandPolicy = SANDBOXED,
    evidence: Evidence | None = None,
) -> Verdict:
    """Run every check of ``contract`` on ``trajectory``.

    Give a ``CompiledContract`` (``compile_contract``) when grading more than one
    trajectory: a plain ``Contract`` is compiled for this call. ``evidence`` is the
    trajectory's ``Evidence`` when the caller grades several contracts on it (what they ask
    of it is then computed once); a fresh one otherwise.
    ``commands`` says whether and how checks that execute commands run: sandboxed by
    default, because the workspace holds files the trace wrote (docs/security.md).
    """
    start = _clock()
    compiled = contract if isinstance(contract, CompiledContract) else compile_contract(contract)
    contract = compiled.contract
    if evidence is None:
        evidence = Evidence(trajectory)
    elif evidence.trajectory is not trajectory:
        raise ValueError("grade: evidence belongs to another trajectory")
    results: list[OracleResult] = []
    # What the core counted of the results as it made them, so the verdict's tally reads
    # only what is added after (``trace_complete``'s); none for results made here.
    tally: Tally | None = None
    try:
        workspace = compiled.workspace
        if workspace is None:
            # Nothing to replay, nothing to remove afterwards: no exit stack (most contracts).
            ctx = workspaceless_context(trajectory, contract, commands, evidence)
            clear, gapless = known_clear(evidence, compiled.plan, trajectory.incomplete)
            results, tally = _RUNNER.run(compiled.checks, ctx, clear, gapless)
        else:
            opened: list[contextlib.ExitStack] = []
            try:
                ctx = _context(compiled, workspace, evidence, opened, commands)
                clear, gapless = known_clear(evidence, compiled.plan, trajectory.incomplete)
                results, tally = _RUNNER.run(compiled.checks, ctx, clear, gapless)
            except BaseException as exc:
                # The stack left as a ``with`` leaves it: told of the exception.
                if not (opened and opened[0].__exit__(type(exc), exc, exc.__traceback__)):
                    raise
            else:
                if opened:
                    opened[0].close()
    except ReplayError as exc:
        tally = None
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
    # ``trace_complete``'s result added, the tally, the subject, the verdict built (without
    # validation when every value it copies is of its field's exact type): the core's.
    verdict: Verdict = _RUNNER.verdict(compiled, trajectory, results, start, tally)
    return verdict
