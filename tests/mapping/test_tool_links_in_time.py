"""Tool steps linked to the model call that asked for them where the spans' order misleads:
a call whose span began before its model call's (OpenLIT's Claude Agent SDK instrumentation
opens the tool span at the streamed ``tool_use`` block and writes the turn's ``chat`` span
when the message ends), and a sub-agent's call hung under the run while its model call is
under the sub-agent (the same instrumentation). Each test also holds the bound that keeps
the link from taking another call: a step that was over before the model call began, a step
outside the sub-agent's run, the handoff that started the sub-agent."""

from __future__ import annotations

import json
from typing import Any

from otel_oracles.assemble._tree import build_trace
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.span import SpanRecord
from otel_oracles.model.step import Trajectory

TRACE = "0" * 31 + "9"
SCOPE = "openlit.instrumentation.claude_agent_sdk"
ROOT, SUB, GEN, TOOL, OTHER = "a" * 16, "b" * 16, "c" * 16, "d" * 16, "e" * 16


def _span(
    span_id: str, parent: str, name: str, start: int, end: int, attrs: dict[str, Any]
) -> SpanRecord:
    return SpanRecord(
        TRACE, span_id, parent, name, start_ns=start, end_ns=end, attributes=attrs,
        scope_name=SCOPE,
    )  # fmt: skip


def _agent(span_id: str, parent: str, start: int, end: int) -> SpanRecord:
    attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"}
    return _span(span_id, parent, "invoke_agent", start, end, attrs)


def _chat(span_id: str, parent: str, at: int, call_id: str | None) -> SpanRecord:
    """A model call recorded as an instant; with ``call_id`` its output asks for that call,
    without it (content off) only its finish reason says it asked for tools."""
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "claude-sonnet-4-5",
        "gen_ai.response.finish_reasons": ["tool_call"],
    }
    if call_id is not None:
        part = {"type": "tool_call", "id": call_id, "name": "search_docs", "arguments": {}}
        attrs["gen_ai.output.messages"] = json.dumps([{"role": "assistant", "parts": [part]}])
    return _span(span_id, parent, "chat claude-sonnet-4-5", at, at, attrs)


def _tool(span_id: str, parent: str, start: int, end: int, call_id: str) -> SpanRecord:
    return _span(span_id, parent, "execute_tool search_docs", start, end,
                 {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search_docs",
                  "gen_ai.tool.call.id": call_id})  # fmt: skip


def _map(spans: list[SpanRecord]) -> Trajectory:
    return map_trace(build_trace(TRACE, spans), load_conventions())


def test_a_call_still_running_when_its_model_call_began_is_that_call() -> None:
    t = _map([_agent(ROOT, "", 0, 1000), _tool(TOOL, ROOT, 100, 300, "toolu_1"),
              _chat(GEN, ROOT, 120, "toolu_1")])  # fmt: skip
    (call,) = t.tool_calls()
    assert not call.synthesized and call.source is not None and call.source.span_id == TOOL


def test_a_call_over_before_the_model_call_began_is_another_call() -> None:
    t = _map([_agent(ROOT, "", 0, 1000), _tool(TOOL, ROOT, 100, 110, "toolu_1"),
              _chat(GEN, ROOT, 120, "toolu_1")])  # fmt: skip
    assert [c.synthesized for c in t.tool_calls()] == [False, True]


def test_a_sub_agents_call_hung_under_the_run_answers_its_model_call() -> None:
    # Content off: the sub-agent's model call shows only that it asked for tools.
    t = _map([_agent(ROOT, "", 0, 1000), _agent(SUB, ROOT, 100, 500),
              _tool(TOOL, ROOT, 200, 300, "toolu_1"), _chat(GEN, SUB, 210, None)])  # fmt: skip
    (call,) = t.tool_calls()
    assert call.tool == "search_docs" and not call.synthesized


def test_a_call_outside_the_sub_agents_run_leaves_its_call_hidden() -> None:
    t = _map([_agent(ROOT, "", 0, 1000), _agent(SUB, ROOT, 100, 250),
              _tool(TOOL, ROOT, 200, 300, "toolu_1"), _chat(GEN, SUB, 210, None)])  # fmt: skip
    hidden = [c for c in t.tool_calls() if c.attributes.get("tool_calls_hidden")]
    assert len(hidden) == 1 and hidden[0].tool is None


def test_each_call_above_answers_one_model_call_only() -> None:
    t = _map([_agent(ROOT, "", 0, 1000), _agent(SUB, ROOT, 100, 500),
              _tool(TOOL, ROOT, 200, 300, "toolu_1"), _chat(GEN, SUB, 210, None),
              _chat(OTHER, SUB, 220, None)])  # fmt: skip
    hidden = [c for c in t.tool_calls() if c.attributes.get("tool_calls_hidden")]
    assert len(hidden) == 1
