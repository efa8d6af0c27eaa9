"""One tool call, one step: a framework's own ``execute_tool`` span inside an
instrumentation's TOOL span for the same tool (AutoGen with OpenInference) is one call whose
fields come from both layers; a different tool inside a tool span stays a call of its own."""

from __future__ import annotations

from typing import Any

from otel_oracles.assemble._tree import build_trace
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.span import SpanRecord, StatusCode
from otel_oracles.model.step import StepKind, Trajectory

TRACE = "0" * 31 + "9"
AGENT, OUTER, INNER = "a" * 16, "b" * 16, "c" * 16
OI_TOOL = "openinference.instrumentation.autogen_agentchat"


def _span(span_id: str, parent: str, name: str, start: int, end: int, **attrs: Any) -> SpanRecord:
    return SpanRecord(TRACE, span_id, parent, name, start_ns=start, end_ns=end, attributes=attrs)


def _trace(inner_tool: str, outer_tool: str = "search_docs", failed: bool = True) -> Trajectory:
    outer = _span(OUTER, AGENT, f"support_agent.{outer_tool}", 10, 50, **{
        "openinference.span.kind": "TOOL", "tool.name": outer_tool,
        "input.value": '{"query": "refunds"}', "output.value": "upstream timed out"})  # fmt: skip
    outer.scope_name = OI_TOOL
    inner = _span(INNER, OUTER, f"execute_tool {inner_tool}", 12, 48, **{
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": inner_tool,
        "gen_ai.tool.call.id": "call_0_0"})  # fmt: skip
    if failed:
        inner.status_code = StatusCode.ERROR
    invoke = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a"}
    agent = _span(AGENT, "", "invoke_agent support_agent", 0, 60, **invoke)
    return map_trace(build_trace(TRACE, [agent, outer, inner]), load_conventions())


def test_nested_spans_of_the_same_tool_call_are_one_step() -> None:
    t = _trace("search_docs")
    (call,) = t.tool_calls()
    assert call.tool == "search_docs"
    assert call.arguments == {"query": "refunds"}  # from the outer TOOL span
    assert call.call_id == "call_0_0"  # from the inner execute_tool span
    assert call.status == "error"  # the inner span's failure is kept
    assert call.source is not None and call.source.span_id == OUTER


def test_a_different_tool_inside_a_tool_span_is_another_call() -> None:
    t = _trace("lookup_index", failed=False)
    assert [s.tool for s in t.tool_calls()] == ["search_docs", "lookup_index"]


def test_a_handoff_tool_recorded_twice_is_one_handoff() -> None:
    t = _trace("transfer_to_research_agent", outer_tool="transfer_to_research_agent",
               failed=False)  # fmt: skip
    assert t.tool_calls() == []
    (handoff,) = t.handoffs()
    assert handoff.kind is StepKind.HANDOFF
    assert handoff.to_agent == "research_agent"
