"""Strands Agents for TypeScript (``@strands-agents/sdk``): its spans are Strands' but named
and scoped otherwise (tests/testdata/traces/strands-js, strands-js-latest), so what tells them
apart must be what they hold, and its legacy ``gen_ai.choice`` events flatten a Converse block
into a typed one. Each test fails when the rule or parser it pins is removed."""

from __future__ import annotations

import json
from pathlib import Path

from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.mapping.parsers.providers import content_parts
from otel_oracles.model.step import StepKind
from otel_oracles.pipeline import read_traces

TRACES = Path(__file__).resolve().parents[1] / "testdata" / "traces"


def test_flattened_tool_use_block_is_a_tool_call() -> None:
    """``{"type": "toolUse", ...}``: the model requested the call; without this reading a
    turn's two calls could not be told to have been asked for together."""
    blocks = json.dumps(
        [
            {"type": "toolUse", "name": "search_docs", "toolUseId": "c0", "input": {"q": "a"}},
            {"type": "toolUse", "name": "search_docs", "toolUseId": "c1", "input": {"q": "b"}},
        ]
    )
    assert content_parts(blocks) == [
        {"type": "tool_call", "id": "c0", "name": "search_docs", "arguments": {"q": "a"}},
        {"type": "tool_call", "id": "c1", "name": "search_docs", "arguments": {"q": "b"}},
    ]


def test_flattened_tool_result_block_is_a_tool_response() -> None:
    block = {"type": "toolResult", "toolUseId": "c0", "content": [{"json": {"deleted": 12}}]}
    assert content_parts([block]) == [
        {"type": "tool_call_response", "id": "c0", "response": {"deleted": 12}}
    ]


def _trajectory(source: str, scenario: str):  # type: ignore[no-untyped-def]
    path = TRACES / source / f"{scenario}.otlp.json"
    (trace,) = read_traces([str(path)], [])
    return map_trace(trace, load_conventions())


def test_tool_spans_read_under_a_service_named_scope() -> None:
    """The scope is the service name, not Strands' own: the tool span is still read with its
    arguments and result (from the default form's span events), and the loop-cycle spans are
    known, so nothing is left unrecognised."""
    trajectory = _trajectory("strands-js", "a_happy")
    assert trajectory.unmapped_spans == {}
    (call,) = [s for s in trajectory.steps if s.kind is StepKind.TOOL_CALL]
    assert call.tool == "search_docs"
    assert call.arguments == {"query": "enterprise refund window"}
    assert isinstance(call.result, dict) and "documents" in call.result


def test_latest_conventions_read_the_same() -> None:
    trajectory = _trajectory("strands-js-latest", "b_tool_retry")
    assert trajectory.unmapped_spans == {}
    calls = [s for s in trajectory.steps if s.kind is StepKind.TOOL_CALL]
    assert [c.tool for c in calls] == ["search_docs", "search_docs"]
    assert all(c.arguments == {"query": "enterprise refund window"} for c in calls)
