"""A handoff that does not name its target hands over to the agent that runs next.

Shapes as Google ADK 2.13 writes them (tests/testdata/traces/google-adk*): the triage agent's
``execute_tool transfer_to_agent`` span names the target only in its arguments, which content
capture drops; the sub-agent's ``invoke_agent`` span follows it, as a sibling under an
``invoke_workflow`` span (schema 2) or nested in the caller (schema 1)."""

from __future__ import annotations

from typing import Any

import pytest

from otel_oracles.assemble._tree import build_trace
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.span import SpanRecord
from otel_oracles.model.step import Trajectory

TRACE = "0" * 31 + "7"
WORKFLOW, TRIAGE, TRANSFER, RESEARCH, OTHER = (c * 16 for c in "abcde")


def _span(span_id: str, parent: str, name: str, start: int, **attrs: Any) -> SpanRecord:
    return SpanRecord(
        TRACE, span_id, parent, name, start_ns=start, end_ns=start + 10, attributes=attrs,
        scope_name="gcp.vertex.agent",
    )  # fmt: skip


def _agent(span_id: str, parent: str, name: str, start: int) -> SpanRecord:
    attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name}
    return _span(span_id, parent, f"invoke_agent {name}", start, **attrs)


def _transfer(parent: str, start: int, **extra: Any) -> SpanRecord:
    attrs = {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "transfer_to_agent",
        "gen_ai.tool.type": "TransferToAgentTool", "gen_ai.tool.call.id": "call_0", **extra,
    }  # fmt: skip
    return _span(TRANSFER, parent, "execute_tool transfer_to_agent", start, **attrs)


def _map(spans: list[SpanRecord]) -> Trajectory:
    return map_trace(build_trace(TRACE, spans), load_conventions())


@pytest.mark.parametrize("nested", [False, True], ids=["siblings", "nested"])
def test_transfer_without_arguments_hands_to_the_next_agent(nested: bool) -> None:
    research_parent = TRIAGE if nested else WORKFLOW
    t = _map(
        [
            _span(WORKFLOW, "", "invoke_workflow triage_agent", 0,
                  **{"gen_ai.operation.name": "invoke_workflow"}),
            _agent(TRIAGE, WORKFLOW, "triage_agent", 1),
            _transfer(TRIAGE, 2),
            _agent(RESEARCH, research_parent, "research_agent", 3),
        ]
    )  # fmt: skip
    assert [(h.from_agent, h.to_agent) for h in t.handoffs()] == [
        ("triage_agent", "research_agent")
    ]
    assert t.tool_calls() == [], "the transfer is the handoff, not a tool call"
    assert t.unmapped_spans == {}


def test_only_an_agent_that_starts_after_the_handoff_is_its_target() -> None:
    """An agent that ran before the transfer (or encloses it) is never its target; with no
    later agent the target stays unknown instead of guessed."""
    t = _map(
        [
            _agent(OTHER, "", "earlier_agent", 0),
            _agent(TRIAGE, "", "triage_agent", 1),
            _transfer(TRIAGE, 2),
        ]
    )
    assert [(h.from_agent, h.to_agent) for h in t.handoffs()] == [("triage_agent", None)]


def test_a_named_target_is_kept() -> None:
    """Instrumentations that name the target keep it (the OpenAI Agents handoff span)."""
    handoff = _span(TRANSFER, TRIAGE, "agent_handoff", 2, **{
        "gen_ai.operation.name": "agent_handoff", "gen_ai.handoff.from_agent": "triage_agent",
        "gen_ai.handoff.to_agent": "billing_agent"})  # fmt: skip
    t = _map(
        [_agent(TRIAGE, "", "triage_agent", 1), handoff, _agent(RESEARCH, "", "research_agent", 3)]
    )
    assert [h.to_agent for h in t.handoffs()] == ["billing_agent"]
