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


CLIENT, SERVER = "d" * 16, "e" * 16
MCP = "mcp-python-sdk"


def _mcp_call(output: str | None, server_failed: bool | None) -> Trajectory:
    """An agent framework's TOOL span (ended OK) around the MCP SDK's client span for the same
    call, and (unless ``server_failed`` is None: an untraced server) the server's span inside
    it; ``output`` None is content capture off."""
    attrs = {"openinference.span.kind": "TOOL", "tool.name": "search_docs",
             "input.value": '{"query": "refunds"}'}  # fmt: skip
    if output is not None:
        attrs["output.value"] = output
    outer = _span(OUTER, AGENT, "search_docs", 10, 50, **attrs)
    outer.scope_name, outer.status_code = "openinference.instrumentation.openai_agents", 1
    client = _span(CLIENT, OUTER, "MCP send tools/call search_docs", 12, 48,
                   **{"mcp.method.name": "tools/call", "jsonrpc.request.id": "3"})  # fmt: skip
    client.scope_name, client.kind = MCP, 3
    spans = [outer, client]
    if server_failed is not None:
        server = _span(SERVER, CLIENT, "tools/call search_docs", 14, 46, **{
            "mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "search_docs"})  # fmt: skip
        server.scope_name, server.kind = MCP, 2
        if server_failed:
            server.status_code = StatusCode.ERROR
        spans.append(server)
    invoke = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a"}
    agent = _span(AGENT, "", "invoke_agent support_agent", 0, 60, **invoke)
    return map_trace(build_trace(TRACE, [agent, *spans]), load_conventions())


def test_an_ok_around_a_layer_that_hides_the_outcome_is_no_proof() -> None:
    """The MCP client span ends OK for a tool that raised on the server (an ``isError``
    answer), and so does the agent framework's span around it: only the server's span or the
    captured result can show the outcome; without both it is unknown, never OK."""
    assert [s.status for s in _mcp_call(None, server_failed=True).tool_calls()] == ["error"]
    assert [s.status for s in _mcp_call(None, server_failed=False).tool_calls()] == ["ok"]
    assert [s.status for s in _mcp_call(None, server_failed=None).tool_calls()] == ["unset"]
    shown = _mcp_call('{"type": "text", "text": "Error executing tool search_docs"}', None)
    (call,) = shown.tool_calls()
    assert call.status == "error" and call.result == "Error executing tool search_docs"
    ok = _mcp_call('{"type": "text", "text": "{\\"documents\\": []}"}', None).tool_calls()
    assert [(s.status, s.result) for s in ok] == [("ok", {"documents": []})]
    assert ok[0].attributes.get("result_empty") is True


def _qualified_mcp_call(framework_name: str, served: str = "search_docs") -> Trajectory:
    """A framework's own tool span named ``framework_name`` (ended OK: nothing raised on the
    agent's side) around the MCP SDK's client span and the server's span, which name the
    tool ``served`` and end ERROR for an ``isError`` answer."""
    outer = _span(OUTER, AGENT, f"execute_tool {framework_name}", 10, 50, **{
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": framework_name,
        "gen_ai.tool.call.id": "call_0_0"})  # fmt: skip
    client = _span(CLIENT, OUTER, f"MCP send tools/call {served}", 12, 48,
                   **{"mcp.method.name": "tools/call", "jsonrpc.request.id": "3"})  # fmt: skip
    client.scope_name, client.kind = MCP, 3
    server = _span(SERVER, CLIENT, f"tools/call {served}", 14, 46, **{
        "mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": served, "error.type": "tool_error"})  # fmt: skip
    server.scope_name, server.kind, server.status_code = MCP, 2, StatusCode.ERROR
    invoke = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a"}
    agent = _span(AGENT, "", "invoke_agent support_agent", 0, 60, **invoke)
    return map_trace(build_trace(TRACE, [agent, outer, client, server]), load_conventions())


def test_an_mcp_call_under_a_toolset_qualified_name_is_one_call() -> None:
    """ADK, pydantic-ai, Strands and Agno offer an MCP server's tools as ``docs_<tool>``: the
    MCP spans inside the framework's span are the same call (one step, the server's failure
    kept, the server's name beside the framework's), never a second and third call."""
    for name in ("docs_search_docs", "mcp__docs__search_docs", "docs.search_docs"):
        (call,) = _qualified_mcp_call(name).tool_calls()
        assert call.tool == name
        assert call.status == "error"
        assert call.attributes["mcp_tool"] == "search_docs"
    edit = _qualified_mcp_call("docs_write_file", served="write_file").steps
    assert [s.kind for s in edit if s.tool] == [StepKind.FILE_EDIT]


def test_another_tool_inside_a_qualified_name_is_not_merged() -> None:
    """Only the server's own name after a qualifier is the same call: ``docs_search_docs``
    around ``search`` or ``lookup_docs`` is two calls."""
    for served in ("search", "lookup_docs", "docs_search_docs_v2"):
        calls = _qualified_mcp_call("docs_search_docs", served=served).tool_calls()
        assert [c.tool for c in calls] == ["docs_search_docs", served]


def test_an_mcp_call_tool_result_recorded_whole_is_read_for_what_it_says() -> None:
    """ADK and llama-index-tools-mcp record the whole ``CallToolResult``: its ``isError``
    is the call's failure, its structured content the result (an empty search is empty)."""
    from otel_oracles.mapping._tool_results import structured

    docs = {"documents": [], "status": "degraded"}
    ok = {"content": [{"type": "text", "text": '{"documents": []}'}],
          "structuredContent": docs, "isError": False}  # fmt: skip
    assert structured(ok) == docs
    failed = {"content": [{"type": "text", "text": "Error executing tool search_docs"}],
              "is_error": True}  # fmt: skip
    assert structured(failed) == {"error": "Error executing tool search_docs"}
    plain = {"content": [{"type": "text", "text": '{"documents": []}'}], "is_error": False}
    assert structured(plain) == {"documents": []}
    assert structured({"content": [], "note": "a tool's own object"}) == {
        "content": [],
        "note": "a tool's own object",
    }
