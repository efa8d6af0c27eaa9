"""A model's request for a transfer tool that no span ran, read with the agent that starts
next, is the handoff (``handoff_requests`` in conventions/handoffs.yaml).

Shapes as the OpenAI Agents SDK writes them under
``opentelemetry-instrumentation-genai-openai-agents`` 1.3b0
(tests/testdata/traces/openai-agents-otel-genai): the SDK's handoff spans are dropped, so the
transfer is the triage model call's requested ``transfer_to_<agent>`` call and the next
agent's ``invoke_agent`` span beside the first. Any other agent next, or none, leaves the
request a call never run: the transfer is never guessed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from otel_oracles.assemble._tree import build_trace
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.span import SpanRecord
from otel_oracles.model.step import Trajectory

TRACE = "0" * 31 + "9"
WORKFLOW, TRIAGE, CHAT, NEXT, NEXT_CHAT = (c * 16 for c in "abcde")


def _span(span_id: str, parent: str, name: str, start: int, end: int, **attrs: Any) -> SpanRecord:
    return SpanRecord(TRACE, span_id, parent, name, start_ns=start, end_ns=end, attributes=attrs)


def _agent(span_id: str, parent: str, name: str, start: int, end: int) -> SpanRecord:
    attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name}
    return _span(span_id, parent, f"invoke_agent {name}", start, end, **attrs)


def _chat(span_id: str, parent: str, start: int, output: list[dict[str, Any]]) -> SpanRecord:
    attrs = {
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.output.messages": json.dumps(output),
    }  # fmt: skip
    return _span(span_id, parent, "chat gpt-4o-mini", start, start + 1, **attrs)


def _transfer_request(tool: str) -> list[dict[str, Any]]:
    part = {"type": "tool_call", "id": "call_1", "name": tool, "arguments": {}}
    return [{"role": "assistant", "parts": [part], "finish_reason": "tool_call"}]


ANSWER = [{"role": "assistant", "parts": [{"type": "text", "content": "Done."}]}]


def _map(tool: str, next_agent: str | None) -> Trajectory:
    spans = [
        _span(WORKFLOW, "", "Agent workflow", 0, 100),
        _agent(TRIAGE, WORKFLOW, "triage_agent", 1, 10),
        _chat(CHAT, TRIAGE, 2, _transfer_request(tool)),
    ]
    if next_agent is not None:
        spans += [
            _agent(NEXT, WORKFLOW, next_agent, 20, 30),
            _chat(NEXT_CHAT, NEXT, 21, ANSWER),
        ]
    return map_trace(build_trace(TRACE, spans), load_conventions())


@pytest.mark.parametrize("agent", ["research_agent", "Research Agent"])
def test_a_transfer_request_followed_by_its_agent_is_the_handoff(agent: str) -> None:
    t = _map("transfer_to_research_agent", agent)
    assert [(h.from_agent, h.to_agent) for h in t.handoffs()] == [("triage_agent", agent)]
    assert t.tool_calls() == [], "the transfer is the handoff, not a call never run"
    (handoff,) = t.handoffs()
    assert handoff.synthesized and handoff.tool == "transfer_to_research_agent"


@pytest.mark.parametrize("next_agent", ["records_agent", None], ids=["other-agent", "no-agent"])
def test_a_transfer_request_without_its_agent_next_stays_a_call_never_run(
    next_agent: str | None,
) -> None:
    t = _map("transfer_to_research_agent", next_agent)
    assert t.handoffs() == []
    assert [(s.tool, s.synthesized) for s in t.tool_calls()] == [
        ("transfer_to_research_agent", True)
    ]


def test_a_request_of_another_tool_is_no_handoff() -> None:
    t = _map("lookup_research_agent", "research_agent")
    assert t.handoffs() == []
    assert [s.tool for s in t.tool_calls()] == ["lookup_research_agent"]


@pytest.mark.parametrize(
    "agent",
    ["  Research -- Agent!", "research agent é", "RESEARCH_AGENT", "\u212aeeper"],
    ids=["punctuation", "non-ascii-end", "upper", "kelvin-sign"],
)
def test_the_agent_is_compared_as_a_tool_name_writes_it(agent: str) -> None:
    """Lower case (Python's ``str.lower``: the Kelvin sign is a ``k``), every run of other
    characters than ASCII letters and digits one ``_``, none at the ends."""
    tool = "transfer_to_keeper" if agent.startswith("\u212a") else "transfer_to_research_agent"
    t = _map(tool, agent)
    assert [(h.to_agent, h.tool) for h in t.handoffs()] == [(agent, tool)]


def test_an_agent_name_with_other_words_is_another_agent() -> None:
    t = _map("transfer_to_research_agent", "research agent 2")
    assert t.handoffs() == []
    assert [s.synthesized for s in t.tool_calls()] == [True]
