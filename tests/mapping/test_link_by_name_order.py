"""Tool spans without a call id are linked to the model's requests by name, in order: a span
is the call of the earliest unanswered request of its name before it, never of one past a
later model call that asked for the tool again (smolagents' ``t_invalid_args``: a request the
framework refused runs no tool, and the next request's span must not be handed to it)."""

from __future__ import annotations

import json
from typing import Any

from otel_oracles.assemble._tree import build_trace
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.span import SpanRecord
from otel_oracles.model.step import Step

TRACE = "0" * 31 + "5"
ROOT = "a" * 16


def _span(span_id: str, name: str, start: int, end: int, attrs: dict[str, Any]) -> SpanRecord:
    parent = "" if span_id == ROOT else ROOT
    return SpanRecord(TRACE, span_id, parent, name, start_ns=start, end_ns=end, attributes=attrs)


def _chat(span_id: str, start: int, call_id: str, args: dict[str, Any]) -> SpanRecord:
    part = {"type": "tool_call", "id": call_id, "name": "search_docs", "arguments": args}
    return _span(span_id, "chat", start, start + 10, {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [part]}]),
    })  # fmt: skip


def _tool(span_id: str, start: int, args: dict[str, Any]) -> SpanRecord:
    return _span(span_id, "execute_tool search_docs", start, start + 5, {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "search_docs",
        "gen_ai.tool.call.arguments": json.dumps(args),
    })  # fmt: skip


def _calls(spans: list[SpanRecord]) -> list[Step]:
    agent = _span(ROOT, "invoke_agent", 0, 1000,
                  {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a"})  # fmt: skip
    return map_trace(build_trace(TRACE, [agent, *spans]), load_conventions()).tool_calls()


def test_a_span_never_answers_a_request_past_a_later_request_of_its_tool() -> None:
    refused, good = {"q": "refunds"}, {"query": "refunds"}
    calls = _calls(
        [_chat("b" * 16, 100, "call_0", refused), _chat("c" * 16, 200, "call_1", good),
         _tool("d" * 16, 300, good)]
    )  # fmt: skip
    first, second = calls
    assert first.synthesized and first.call_id == "call_0" and first.arguments == refused
    assert not second.synthesized and second.call_id == "call_1" and second.arguments == good


def test_a_span_after_its_own_request_is_linked_to_it() -> None:
    a, b = {"query": "a"}, {"query": "b"}
    calls = _calls(
        [_chat("b" * 16, 100, "call_0", a), _tool("d" * 16, 150, a),
         _chat("c" * 16, 200, "call_1", b), _tool("e" * 16, 300, b)]
    )  # fmt: skip
    assert [(c.synthesized, c.call_id) for c in calls] == [(False, "call_0"), (False, "call_1")]
