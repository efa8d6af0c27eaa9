"""The mapping's shortcuts give the results of the long way: a non-agent step's own agent
name (read only when no agent encloses it), decoded message lists kept as they are, and
rules with child conditions decided per span."""

from __future__ import annotations

import json
from typing import Any

from otel_oracles.assemble import build_trace
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.mapping._compile import rule_table
from otel_oracles.mapping.config import Rule
from otel_oracles.mapping.parsers.otel_genai import parse_genai_messages
from otel_oracles.model.span import SpanRecord
from otel_oracles.model.step import StepKind

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"


def _span(span_id: str, parent: str, name: str, start: int, **attrs: Any) -> SpanRecord:
    return SpanRecord(
        trace_id=TRACE_ID,
        span_id=span_id,
        parent_span_id=parent,
        name=name,
        start_ns=start,
        end_ns=start + 10,
        attributes=attrs,
    )


def _tool(span_id: str, parent: str, start: int, **attrs: Any) -> SpanRecord:
    return _span(
        span_id,
        parent,
        "execute_tool search",
        start,
        **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search", **attrs},
    )


def test_tool_without_enclosing_agent_keeps_its_own_agent_name() -> None:
    trace = build_trace(TRACE_ID, [_tool("a1", "", 1, **{"gen_ai.agent.name": "solo"})])
    (step,) = map_trace(trace, load_conventions()).steps
    assert step.kind == StepKind.TOOL_CALL
    assert step.agent_name == "solo"


def test_tool_own_agent_name_is_normalized_and_placeholders_skipped() -> None:
    conventions = load_conventions()
    odd = build_trace(TRACE_ID, [_tool("a1", "", 1, **{"gen_ai.agent.name": 7})])
    assert map_trace(odd, conventions).steps[0].agent_name == "7"
    hidden = build_trace(TRACE_ID, [_tool("a1", "", 1, **{"gen_ai.agent.name": ""})])
    step = map_trace(hidden, conventions).steps[0]
    assert step.agent_name is None


def test_enclosing_agent_name_replaces_the_tool_attribute() -> None:
    agent = _span(
        "b1",
        "",
        "invoke_agent planner",
        1,
        **{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner"},
    )
    tool = _tool("b2", "b1", 2, **{"gen_ai.agent.name": "OpenAI Agent"})
    orphan = _tool("b3", "", 3, **{"gen_ai.agent.name": "worker"})
    steps = map_trace(build_trace(TRACE_ID, [agent, tool, orphan]), load_conventions()).steps
    assert [(s.kind, s.agent_name) for s in steps] == [
        (StepKind.AGENT, "planner"),
        (StepKind.TOOL_CALL, "planner"),
        (StepKind.TOOL_CALL, "worker"),
    ]


def test_decoded_messages_kept_equal_to_the_normalized_shape() -> None:
    messages = [
        {"role": "assistant", "parts": [{"type": "text", "content": "hi"}]},
        {"role": "assistant", "parts": [{"type": "text", "content": "x"}], "finish_reason": "stop"},
        {"role": "user", "parts": [{"type": "text", "content": "q"}], "finish_reason": None},
        {"parts": [{"type": "text", "content": "no role"}], "role": "user"},
        {"role": "tool", "parts": [1, {"type": "tool_call_response", "id": "c", "result": 2}]},
        {"role": "assistant", "parts": "not a list"},
        {"role": "assistant", "parts": [], "name": "bot", "extra": 1},
    ]
    parsed = parse_genai_messages(json.dumps(messages))
    structured = parse_genai_messages(messages)
    assert parsed == structured
    assert [list(m) for m in parsed or []] == [list(m) for m in structured or []]
    assert parsed == [
        messages[0],
        messages[1],
        {"role": "user", "parts": [{"type": "text", "content": "q"}]},
        {"role": "user", "parts": [{"type": "text", "content": "no role"}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c", "response": 2}]},
        {"role": "assistant", "parts": []},
        {"role": "assistant", "parts": [], "name": "bot"},
    ]
    # Caller-owned (structured) input is never handed back: the result is a copy.
    assert all(m is not s for m, s in zip(structured or [], messages, strict=False))


def test_delegating_tool_with_a_nested_agent_is_a_handoff_only_with_that_child() -> None:
    delegate = _tool("c1", "", 1, **{"gen_ai.tool.name": "delegate"})
    nested = _span(
        "c2",
        "c1",
        "invoke_agent helper",
        2,
        **{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper"},
    )
    plain = _tool("c3", "", 5, **{"gen_ai.tool.name": "delegate"})
    conventions = load_conventions()
    steps = map_trace(build_trace(TRACE_ID, [delegate, nested]), conventions).steps
    assert [s.kind for s in steps] == [StepKind.HANDOFF, StepKind.AGENT]
    kinds = [s.kind for s in map_trace(build_trace(TRACE_ID, [plain]), conventions).steps]
    assert kinds == [StepKind.TOOL_CALL]


def test_regex_memo_stays_bounded_and_keeps_learning_new_span_names() -> None:
    """A long-running server sees ever new span names (tools, models): the rule table's
    memo of regex answers on names (the core's own, and those Python gave for regexes the
    core cannot answer itself) starts over when full instead of growing, and mapping stays
    right past it."""
    from otel_oracles._native import RULE_MEMO_TEXTS

    conventions = load_conventions()
    table = conventions.compiled().table
    # A case-insensitive regex is Python's to answer: every new name is asked and remembered.
    match = {"all": [{"span_name": "(?i)^TOOL_"}]}
    asked = rule_table([Rule.model_validate({"id": "r", "step": "other", "match": match})])
    total = RULE_MEMO_TEXTS + 300
    for i in range(total):
        name = f"tool_{i}"
        attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
        span = _span(f"{i:016x}", "", f"execute_tool {name}", 1, **attrs)
        trace = build_trace(TRACE_ID, [span])
        (step,) = map_trace(trace, conventions).steps
        assert (step.kind, step.tool) == (StepKind.TOOL_CALL, name)
        assert table.remembered_texts <= RULE_MEMO_TEXTS
        named = build_trace(TRACE_ID, [_span(f"{i:016x}", "", name, 1)])
        assert asked.select(named.spans, named.children) == [0]
        assert 0 < asked.remembered_texts <= RULE_MEMO_TEXTS
    assert asked.host_searches == total
