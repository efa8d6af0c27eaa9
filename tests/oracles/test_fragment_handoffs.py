"""A trace is a fragment of a longer run only when its model input refers to more tool calls
than its steps can account for. A handoff step without a call id (a delegation tool's span,
e.g. CrewAI's coworker tool in event-listener mode, whose requesting model call has no span)
may be one of those calls, like an id-less tool step."""

from __future__ import annotations

from typing import Any

from otel_oracles.grade.evidence import calls_outside
from otel_oracles.model.step import StepKind, Trajectory
from tests.oracles.trace_builders import gen, tool, traj


def _history(*ids: str) -> list[dict[str, Any]]:
    calls = [{"type": "tool_call", "id": i, "name": "t", "arguments": {}} for i in ids]
    return [{"role": "user", "parts": [{"type": "text", "content": "q"}]},
            {"role": "assistant", "parts": calls}]  # fmt: skip


def _delegating_run(*, with_handoff: bool) -> Trajectory:
    steps = []
    if with_handoff:
        steps.append(
            {"kind": StepKind.HANDOFF, "from_agent": "triage_agent", "to_agent": "research_agent",
             "tool": "delegate_work_to_coworker"}
        )  # fmt: skip
    steps.append(tool("search_docs", status="ok"))
    steps.append(gen("done", input_messages=_history("call_0_0", "call_1_0")))
    return traj(*steps)


def test_an_id_less_handoff_accounts_for_a_referenced_call() -> None:
    assert calls_outside(_delegating_run(with_handoff=True)) == []


def test_without_the_handoff_the_extra_reference_marks_a_fragment() -> None:
    assert calls_outside(_delegating_run(with_handoff=False)) == ["call_0_0", "call_1_0"]
