"""Which traces are subjects, and the verdict of a subject that could not be graded."""

from __future__ import annotations

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
    return bool(trajectory.unmapped_spans) or any(
        step.kind != StepKind.OTHER for step in trajectory.steps
    )


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
