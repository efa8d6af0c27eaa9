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

from otel_oracles.errors import OtelOraclesError, ReplayError, SandboxError
from otel_oracles.grade.compiled import CompiledCheck, CompiledContract, compile_check
from otel_oracles.grade.completeness import trace_complete
from otel_oracles.grade.evidence import Evidence
from otel_oracles.grade.loader import compile_contract
from otel_oracles.grade.oracles.base import Finding, GradeContext, OracleCheck
from otel_oracles.model.contract import Contract, OracleSpec
from otel_oracles.model.result import (
    Layer,
    OracleResult,
    Outcome,
    Verdict,
    trusted_result,
    trusted_verdict,
    verdict_tally,
)
from otel_oracles.model.step import Trajectory
from otel_oracles.replay import replayed_files, replayed_workspace
from otel_oracles.sandbox import SANDBOXED, CommandPolicy

# Enum members read once: ``Outcome.PASS`` is a class-attribute lookup through the enum
# machinery, and a check reads several.
_PASS = Outcome.PASS
_TOLERATED = Outcome.TOLERATED
_INVARIANT_FAILURE = Outcome.INVARIANT_FAILURE
_BUDGET_EXHAUSTED = Outcome.BUDGET_EXHAUSTED
_MISSING_EVIDENCE = Outcome.MISSING_EVIDENCE
_ERROR = Outcome.ERROR

_new_result = OracleResult.__pydantic_validator__.validate_python
"""``OracleResult(**fields)`` in one pydantic-core call, without ``BaseModel.__init__``: for
a finding whose values ``_plain_finding`` does not vouch for."""

_LAYERS: tuple[Layer, ...] = ("evidence", "invariant", "tolerance")

_new_verdict = Verdict.__pydantic_validator__.validate_python

_clock = time.perf_counter_ns


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


def _plain_finding(
    message: object, details: object, span_ids: object, step_indexes: object, used: object
) -> bool:
    """Whether a finding's values are exactly of the types its result holds (``str``, a
    ``dict`` keyed by ``str``, tuples of ``str`` and of ``int``, an ``int``), so that
    validating the result could change nothing but make the tuples lists. Subclasses
    (``bool`` for ``int``, ``StrEnum`` members for ``str``) and anything else, as a plug-in
    may return, are validated (where they are converted or refused as they always were).
    """
    if (
        type(message) is not str
        or type(details) is not dict
        or type(span_ids) is not tuple
        or type(step_indexes) is not tuple
    ):
        return False
    for key in details:
        if type(key) is not str:
            return False
    for span_id in span_ids:
        if type(span_id) is not str:
            return False
    for index in step_indexes:
        if type(index) is not int:
            return False
    return type(used) is int


_NONE = type(None)


def _plain_verdict(
    contract: Contract, subject: object, trajectory: Trajectory, results: list[OracleResult]
) -> bool:
    """Whether the values a verdict copies are exactly of its fields' types, so that
    validating it could change nothing but copy the results list: the contract's (a
    validated model, but one built by ``model_construct`` is not), the subject and the
    trajectory's four names (a ``Trajectory`` is a plain record, and one built by
    ``from_normalized`` holds what it was given), and the results (``OracleResult``
    itself; validation keeps instances as they are, converts anything else). Anything
    else is validated: a ``str`` subclass made ``str``, a wrong type refused, as always."""
    if (
        type(contract.id) is not str
        or type(contract.version) is not int
        or type(contract.content_hash) is not str
        or type(contract.name) is not str
        or type(subject) is not str
    ):
        return False
    for name in (
        trajectory.trace_id,
        trajectory.root_span_id,
        trajectory.root_name,
        trajectory.agent_name,
    ):
        kind = type(name)
        if kind is not str and kind is not _NONE:
            return False
    return all(type(result) is OracleResult for result in results)


def _known_clear(compiled: CompiledContract, ctx: GradeContext) -> tuple[bool, bool]:
    """What every check of ``compiled`` would ask of ``ctx``'s trajectory, asked once per
    contract: ``(clear, gapless)``. ``clear``: the trajectory is complete and lacks none of
    the contract's evidence names (``CompiledContract.evidence``, each probed once per
    trajectory, as every check would probe its own), so no check lacks any. ``gapless``: it
    has neither a fragment gap nor a coverage gap, so no result is made
    ``missing_evidence`` for one (``_fail_closed``). Either is ``False`` when working it
    out raises: each check that asks then raises it itself, as its own ``error`` result."""
    if ctx.trajectory.incomplete:
        return False, False
    ev = ctx.evidence
    try:
        clear = not ev.lacking(compiled.evidence)
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001 - the checks that need the probe report it
        clear = False
    try:
        gapless = ev.fragment_gap() is None and ev.coverage_gap() is None
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001 - the checks held against the gaps report it
        gapless = False
    return clear, gapless


def run_compiled(
    check: CompiledCheck, ctx: GradeContext, clear: bool = False, gapless: bool = False
) -> OracleResult:
    """One compiled check on ``ctx``: its result, never an exception (except the lazy
    replay's own failure, which makes the whole verdict a replay error, and
    ``KeyboardInterrupt``, which stops the run: see the module docstring). ``clear`` and
    ``gapless`` are what its contract's ``_known_clear`` found: when ``clear``, the check
    asks for neither its evidence nor completeness; when ``gapless``, its result is not
    held against the trajectory's gaps."""
    start = _clock()
    contract = ctx.contract
    error_details: dict[str, object] | None = None
    if check.setup_error is not None:
        finding, outcome, error_details = _fails_with(check.setup_error)
    else:
        oracle = check.oracle
        assert oracle is not None
        try:
            lacking = () if clear or not check.evidence else ctx.evidence.lacking(check.evidence)
            if lacking or (not clear and ctx.trajectory.incomplete):
                gaps = [message for _, message in lacking]
                missing = [name for name, _ in lacking]
                if ctx.trajectory.incomplete:
                    gaps.insert(0, "trace incomplete: graded on timeout before all spans arrived")
                    missing.insert(0, "trace_complete")
                finding = Finding.missing("; ".join(gaps), details={"evidence": missing})
                if oracle.failure_stands_on_gaps and not oracle.runs_commands:
                    finding = _failure_despite_gaps(finding, oracle, ctx)
            else:
                if oracle.runs_commands:
                    # Checked before the check runs, so a plug-in cannot run anything here.
                    problem = ctx.command_problem()
                    if problem is not None:
                        raise SandboxError(problem)
                finding = oracle.check(ctx)
            status = finding.status
            if not gapless and (
                finding.unseen or (status == "pass" and oracle.needs_full_coverage)
            ):
                finding = _fail_closed(finding, oracle, ctx)
                status = finding.status
            # ``outcome_for``, inline: it is asked of every result.
            if status == "missing":
                outcome = _MISSING_EVIDENCE
            elif check.layer != "tolerance":
                outcome = _PASS if status == "pass" else _INVARIANT_FAILURE
            elif status == "fail":
                outcome = _INVARIANT_FAILURE if finding.breach == "rule" else _BUDGET_EXHAUSTED
            else:
                outcome = _TOLERATED if finding.used > 0 else _PASS
        except KeyboardInterrupt:
            raise  # Ctrl-C stops the run: it is the user's, not a check's failure
        except BaseException as exc:  # a plug-in's SystemExit is that check's error
            if exc is ctx.replay_error:
                raise  # the lazy replay failed: the whole verdict is a replay error
            finding, outcome, error_details = _fails_with(exc)
    passed = (
        outcome is _PASS
        or outcome is _TOLERATED
        or (outcome is _MISSING_EVIDENCE and contract.on_missing_evidence == "warn")
    )
    message = finding.message
    details = finding.details
    span_ids = finding.span_ids
    step_indexes = finding.step_indexes
    used = finding.used
    fields = check.result_fields
    contract_id = contract.id
    contract_version = contract.version
    if (
        fields["layer"] in _LAYERS
        and type(contract_id) is str  # (a contract built by ``model_construct`` may hold
        and type(contract_version) is int  # anything: such a one is validated)
        and _plain_finding(message, details, span_ids, step_indexes, used)
    ):
        # The per-check fields come from the validated contract and the finding's values
        # were just type-checked: nothing to validate. The containers are copied, as
        # validation copies them, so no result shares one with the finding or the spec.
        return trusted_result(
            fields["oracle_type"],
            fields["name"],
            fields["layer"],
            outcome,
            passed,
            message,
            {**details} if error_details is None else {**details, **error_details},
            {**fields["params"]},
            [*span_ids],
            [*step_indexes],
            used,
            fields["budget"],
            fields["why"],
            contract_id,
            contract_version,
            _clock() - start,
        )
    result: OracleResult = _new_result(
        {
            **fields,
            "outcome": outcome,
            "passed": passed,
            "message": message,
            "details": details if error_details is None else {**details, **error_details},
            "span_ids": span_ids,
            "step_indexes": step_indexes,
            "used": used,
            "contract_id": contract_id,
            "contract_version": contract_version,
            "duration_ns": _clock() - start,
        }
    )
    return result


def _context(
    contract: Contract,
    evidence: Evidence,
    stack: contextlib.ExitStack,
    commands: CommandPolicy,
) -> GradeContext:
    """The context of a contract with a workspace, replayed lazily when the replay can be
    decided in memory (same files, same ``ReplayError``), else on disk right away as always
    (the directory removed when ``stack`` closes)."""
    trajectory = evidence.trajectory
    spec = contract.workspace
    assert spec is not None
    initial = dict(spec)
    try:
        files = replayed_files(spec, trajectory)
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
            materialize=lambda: stack.enter_context(replayed_workspace(spec, trajectory)),
            commands=commands,
            evidence=evidence,
        )
    if files is None:
        root = stack.enter_context(replayed_workspace(spec, trajectory))
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
        materialize=lambda: stack.enter_context(replayed_workspace(spec, trajectory)),
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
    try:
        if contract.workspace is None:
            # Nothing to replay, nothing to remove afterwards: no exit stack (most contracts).
            ctx = GradeContext(
                trajectory=trajectory,
                contract=contract,
                initial_workspace={},
                commands=commands,
                evidence=evidence,
            )
            clear, gapless = _known_clear(compiled, ctx)
            results = [run_compiled(check, ctx, clear, gapless) for check in compiled.checks]
        else:
            with contextlib.ExitStack() as stack:
                ctx = _context(contract, evidence, stack, commands)
                clear, gapless = _known_clear(compiled, ctx)
                results = [run_compiled(check, ctx, clear, gapless) for check in compiled.checks]
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
    passed, counts = verdict_tally(results)
    subject = trajectory.trace_id or trajectory.source or "<trajectory>"
    if _plain_verdict(contract, subject, trajectory, results):
        # Every value is of its field's exact type (the contract's were validated, the
        # trajectory's were just checked): nothing to validate. ``results`` is this call's
        # own list, as validation's copy of it would be.
        return trusted_verdict(
            contract.id,
            contract.version,
            contract.content_hash,
            contract.name,
            subject,
            trajectory.trace_id,
            trajectory.root_span_id,
            trajectory.root_name,
            trajectory.agent_name,
            passed,
            results,
            counts,
            _clock() - start,
        )
    verdict: Verdict = _new_verdict(
        {
            "contract_id": contract.id,
            "contract_version": contract.version,
            "contract_hash": contract.content_hash,
            "contract_name": contract.name,
            "subject": subject,
            "trace_id": trajectory.trace_id,
            "root_span_id": trajectory.root_span_id,
            "root_name": trajectory.root_name,
            "agent_name": trajectory.agent_name,
            "passed": passed,
            "results": results,
            "counts": counts,
            "duration_ns": _clock() - start,
        }
    )
    return verdict
