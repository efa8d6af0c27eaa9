"""Which traces are subjects, and the verdict of a subject that could not be graded."""

from __future__ import annotations

from typing import NamedTuple

from otel_oracles.grade.completeness import TRACE_COMPLETE
from otel_oracles.model.contract import Contract
from otel_oracles.model.result import OracleResult, Outcome, Verdict, count_outcomes
from otel_oracles.model.span import Trace
from otel_oracles.model.step import StepKind, Trajectory

NOT_AGENT_RUN = "held no agent run (no model call, tool call or agent step): not graded"


def holds_agent_run(trajectory: Trajectory) -> bool:
    """Whether a trajectory is an agent run that contracts grade: it has a model call, a tool
    call (file edits and commands included), a retrieval, an agent or a handoff step, or
    spans no convention recognised (they may be an agent run of an unknown framework: fail
    closed, the graders report them). A trace with none (a LangGraph graph compiled at
    start-up, embeddings only) is no failing run, and no passing one either: not a subject."""
    if trajectory.unmapped_spans:
        return True
    # A loop, not ``any`` over a generator: asked of every trace, and the first step nearly
    # always answers.
    other = StepKind.OTHER
    for step in trajectory.steps:  # noqa: SIM110  (no generator: see above)
        if step.kind != other:
            return True
    return False


def shows_agent_work(trajectory: Trajectory) -> bool:
    """Whether a convention recognised agent work in the trajectory (a step of a kind other
    than ``other``): what a trace graded only because its missing part could match a
    contract's selector must show. Spans no convention recognised alone (an unflagged
    remote parent's web request, a lost batch of some service) are no run that a selector
    keyed on the agent could have been meant for, and grading them against every such
    contract would fail services that are no agents."""
    return any(step.kind != StepKind.OTHER for step in trajectory.steps)


def possibly_its_run(verdict: Verdict, why: str) -> Verdict:
    """``verdict`` of a contract that grades a trace only because the part of it that never
    arrived could match its selector (``could_select``): its ``trace_complete`` result
    (there is one: the trace has orphans) says so, so the report tells why this contract
    reports a trace its ``match`` does not show to be its own (the message in full, and
    ``possibly_its_run: true`` in the details, which a report shows in its default
    privacy mode too)."""
    results = [
        r.model_copy(
            update={
                "message": f"{r.message}; graded as possibly this contract's run: {why}",
                "details": {**r.details, "possibly_its_run": True},
            }
        )
        if r.oracle_type == TRACE_COMPLETE
        else r
        for r in verdict.results
    ]
    return verdict.model_copy(update={"results": results})


def mapped_agent_names(trajectory: Trajectory) -> dict[str, str]:
    """Span id -> agent name, for every step a convention gave an agent name."""
    return {
        step.source.span_id: step.agent_name
        for step in trajectory.steps
        if step.agent_name and step.source is not None
    }


def error_verdict(
    contract: Contract, trace: Trace, stage: str, message: str, error_type: str
) -> tuple[Verdict, Trajectory]:
    """A verdict of one ``error`` result named ``stage``: the trace could not be graded. It
    names the trace's root span, so its grade span is a child of the graded trace like any
    other verdict's (without it the span started a trace of its own)."""
    result = OracleResult(
        oracle_type=stage,
        name=stage,
        outcome=Outcome.ERROR,
        passed=False,
        message=message,
        details={"error.type": error_type},
        contract_id=contract.id,
        contract_version=contract.version,
    )
    trajectory = Trajectory(steps=[], trace_id=trace.trace_id, span_count=len(trace.spans))
    verdict = Verdict(
        contract_id=contract.id,
        contract_version=contract.version,
        contract_hash=contract.content_hash,
        contract_name=contract.name,
        subject=trace.trace_id,
        trace_id=trace.trace_id,
        root_span_id=root.span_id if (root := trace.root) is not None else None,
        passed=False,
        results=[result],
        counts=count_outcomes([result]),
    )
    return verdict, trajectory


class NotGraded(NamedTuple):
    """Why a subject could not be graded, as its ``error`` verdicts say it: the result's name
    (``stage``), its message and ``error.type``. Plain and picklable, because the process
    that tells why (the parent of a worker that died) is not the one that makes the
    verdicts. ``serve`` gives its crashes and dead workers' traces these too, so an
    offline gate and a live one report a crash alike."""

    stage: str
    message: str
    error_type: str

    @classmethod
    def crashed(cls, exc: BaseException) -> NotGraded:
        """Grading the subject raised ``exc`` outside any check (mapping, selection,
        evidence: a bug in the grader or a plug-in), so no contract's checks ran."""
        return cls(
            "grading_crash",
            f"grading this trace crashed ({type(exc).__name__}: {exc}); not graded",
            type(exc).__name__,
        )

    @classmethod
    def worker_died(cls, exitcode: int | None) -> NotGraded:
        """The process grading the subject died (``exitcode`` negative: the signal that
        killed it, e.g. SIGKILL from the OOM killer)."""
        return cls(
            "worker_died",
            f"the grading worker process died ({how_it_ended(exitcode)}) while this trace "
            "was in hand; not graded",
            "WorkerProcessDied",
        )


def how_it_ended(exitcode: int | None) -> str:
    """A process's end in words: ``killed by SIGKILL`` for a negative ``exitcode`` (the
    signal, as ``multiprocessing`` reports it), else ``exit code N``."""
    if exitcode is not None and exitcode < 0:
        # Imported here: only a crashed worker needs it, and ``signal`` makes its three
        # enums (~5 M instructions) at import, at every start of ``grade``.
        import signal

        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit code {exitcode}"
