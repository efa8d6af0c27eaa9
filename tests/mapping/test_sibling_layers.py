"""One tool call, one step, when two layers record it side by side: an agent framework's
tracer writes the call from its own stream of messages, and the ``mcp`` SDK's server span for
the same call hangs beside it (not inside it: the framework's channel to the server carries
no trace context), as the Claude Agent SDK's traces show under OpenLIT and OpenInference
(``openlit-claude-agent-sdk``, ``claude-agent-sdk-mcp`` in the real-trace matrix). These tests
pin the conditions of the join, each of which a wrong join would break: another layer (scope),
the same tool, within the call's time, beside it, one to one, and calls of one tool run at
the same time never given each other's outcome."""

from __future__ import annotations

from typing import Any

from otel_oracles.assemble._tree import build_trace
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.span import SpanKind, SpanRecord, StatusCode
from otel_oracles.model.step import Step, Trajectory

TRACE = "0" * 31 + "7"
FRAMEWORK = "openlit.instrumentation.claude_agent_sdk"
MCP = "mcp-python-sdk"


def _span(
    span_id: str,
    parent: str,
    name: str,
    start: int,
    end: int,
    scope: str,
    *,
    attrs: dict[str, Any],
    error: bool = False,
    kind: int = SpanKind.INTERNAL,
) -> SpanRecord:
    return SpanRecord(
        TRACE,
        span_id,
        parent,
        name,
        kind=kind,
        start_ns=start,
        end_ns=end,
        status_code=StatusCode.ERROR if error else StatusCode.UNSET,
        attributes=attrs,
        scope_name=scope,
    )


def _run(span_id: str = "a" * 16, parent: str = "", start: int = 0, end: int = 1000) -> SpanRecord:
    return _span(
        span_id,
        parent,
        "invoke_agent support",
        start,
        end,
        FRAMEWORK,
        attrs={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"},
    )


def _framework_call(
    span_id: str, parent: str, start: int, end: int, call_id: str, tool: str = "search_docs"
) -> SpanRecord:
    return _span(
        span_id,
        parent,
        f"execute_tool mcp__scenario__{tool}",
        start,
        end,
        FRAMEWORK,
        attrs={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": f"mcp__scenario__{tool}",
            "gen_ai.tool.call.id": call_id,
        },
    )


def _mcp_call(
    span_id: str,
    parent: str,
    start: int,
    end: int,
    *,
    tool: str = "search_docs",
    error: bool = False,
    scope: str = MCP,
) -> SpanRecord:
    return _span(
        span_id,
        parent,
        f"tools/call {tool}",
        start,
        end,
        scope,
        error=error,
        kind=SpanKind.SERVER,
        attrs={"mcp.method.name": "tools/call", "gen_ai.tool.name": tool},
    )


def _map(spans: list[SpanRecord]) -> Trajectory:
    return map_trace(build_trace(TRACE, spans), load_conventions())


def _calls(t: Trajectory) -> list[Step]:
    return t.tool_calls()


ROOT = "a" * 16


def test_a_call_recorded_beside_its_framework_span_is_one_step_failed_if_either_says() -> None:
    t = _map(
        [
            _run(),
            _framework_call("b" * 16, ROOT, 100, 200, "toolu_1"),
            _mcp_call("c" * 16, ROOT, 150, 160, error=True),
        ]
    )
    (call,) = _calls(t)
    assert call.source is not None and call.source.span_id == "b" * 16
    assert call.tool == "mcp__scenario__search_docs" and call.call_id == "toolu_1"
    assert call.status == "error"  # only the MCP server's span shows the failure
    assert call.attributes["mcp_tool"] == "search_docs"
    assert call.attributes["stacked_spans"] == ["c" * 16]


def test_a_sub_agents_call_hung_under_the_run_by_the_other_layer_is_one_step() -> None:
    sub = "e" * 16
    t = _map(
        [
            _run(),
            _run(sub, ROOT, 50, 400),
            _framework_call("b" * 16, sub, 100, 200, "toolu_1"),
            _mcp_call("c" * 16, ROOT, 150, 160),
        ]
    )
    assert len(_calls(t)) == 1


def test_another_tool_the_same_layer_or_a_call_outside_its_time_stays_a_call_of_its_own() -> None:
    other_tool = _map(
        [
            _run(),
            _framework_call("b" * 16, ROOT, 100, 200, "toolu_1"),
            _mcp_call("c" * 16, ROOT, 150, 160, tool="delete_records"),
        ]
    )
    assert len(_calls(other_tool)) == 2
    same_layer = _map(
        [
            _run(),
            _framework_call("b" * 16, ROOT, 100, 200, "toolu_1"),
            _mcp_call("c" * 16, ROOT, 150, 160, scope=FRAMEWORK),
        ]
    )
    assert len(_calls(same_layer)) == 2
    outside = _map(
        [
            _run(),
            _framework_call("b" * 16, ROOT, 100, 200, "toolu_1"),
            _mcp_call("c" * 16, ROOT, 190, 210),
        ]
    )
    assert len(_calls(outside)) == 2


def test_calls_run_at_once_join_in_order_only_when_the_pairing_cannot_move_an_outcome() -> None:
    def run(first_fails: bool) -> Trajectory:
        return _map(
            [
                _run(),
                _framework_call("b" * 16, ROOT, 100, 300, "toolu_1"),
                _framework_call("d" * 16, ROOT, 110, 310, "toolu_2"),
                _mcp_call("c" * 16, ROOT, 150, 160, error=first_fails),
                _mcp_call("f" * 16, ROOT, 170, 180),
            ]
        )

    agree = _calls(run(first_fails=False))
    assert [c.call_id for c in agree] == ["toolu_1", "toolu_2"]
    # One of two overlapping calls failed: which one depends on the pairing, so no
    # framework span is given the failure; the MCP layer's calls stay apart, as recorded.
    apart = _calls(run(first_fails=True))
    assert len(apart) == 4
    failed = [c for c in apart if c.status == "error"]
    assert len(failed) == 1 and failed[0].source is not None
    assert failed[0].source.span_id == "c" * 16
