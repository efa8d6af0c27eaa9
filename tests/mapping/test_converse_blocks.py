"""Bedrock Converse content blocks (``text`` / ``toolUse`` / ``toolResult`` / ``json`` /
``reasoningContent``, untyped), the message shape of the Bedrock Converse API and of Strands
Agents, which writes it into legacy GenAI events (``gen_ai.choice`` ``message``,
``gen_ai.*.message`` ``content``) and its latest-convention tool-result attribute, whatever
the model provider. Shapes as Strands 1.62 writes them (tests/testdata/traces/strands)."""

from __future__ import annotations

import json

import pytest

from otel_oracles.mapping.parsers import builtin_parsers
from otel_oracles.mapping.parsers.otel_genai import (
    parse_legacy_choice_events,
    parse_legacy_input_events,
)
from otel_oracles.mapping.parsers.providers import content_parts, parse_block_value
from otel_oracles.model.span import EventRecord

apply_parsers = builtin_parsers().apply

DOCS = {"documents": [{"id": "doc-42", "text": "30 days"}]}


def test_tool_use_block_is_a_tool_call() -> None:
    blocks = json.dumps(
        [{"toolUse": {"toolUseId": "call_0_0", "name": "search_docs", "input": {"q": "x"}}}]
    )
    assert content_parts(blocks) == [
        {"type": "tool_call", "id": "call_0_0", "name": "search_docs", "arguments": {"q": "x"}}
    ]


def test_tool_result_block_is_a_tool_response_with_decoded_text() -> None:
    block = {
        "toolResult": {
            "toolUseId": "call_1_0",
            "status": "success",
            "content": [{"text": json.dumps(DOCS)}],
        }
    }
    assert content_parts([block]) == [
        {"type": "tool_call_response", "id": "call_1_0", "response": DOCS}
    ]


def test_json_and_reasoning_blocks() -> None:
    parts = content_parts(
        [{"reasoningContent": {"reasoningText": {"text": "think"}}}, {"json": {"a": 1}}]
    )
    assert parts == [
        {"type": "reasoning", "content": "think"},
        {"type": "text", "content": '{"a":1}'},
    ]


def test_legacy_events_holding_converse_blocks() -> None:
    """Strands' default form: the requested tool call in gen_ai.choice, the tool result in a
    gen_ai.tool.message event of the next model call's input."""
    call = [{"toolUse": {"toolUseId": "c1", "name": "search_docs", "input": {"query": "q"}}}]
    choice = EventRecord(
        name="gen_ai.choice",
        time_ns=1,
        attributes={"finish_reason": "tool_use", "message": json.dumps(call)},
    )
    out = parse_legacy_choice_events([choice])
    assert out == [
        {
            "role": "assistant",
            "parts": [
                {
                    "type": "tool_call",
                    "id": "c1",
                    "name": "search_docs",
                    "arguments": {"query": "q"},
                }
            ],
            "finish_reason": "tool_use",
        }
    ]
    result = [
        {"toolResult": {"toolUseId": "c1", "status": "error", "content": [{"text": "Error: x"}]}}
    ]
    tool_msg = EventRecord(
        name="gen_ai.tool.message", time_ns=2, attributes={"content": json.dumps(result)}
    )
    inputs = parse_legacy_input_events([tool_msg])
    assert inputs is not None
    assert inputs[0]["parts"] == [
        {"type": "tool_call_response", "id": "c1", "response": "Error: x"}
    ]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (json.dumps([{"text": json.dumps(DOCS)}]), DOCS),  # Strands tool result
        ([{"json": DOCS}], DOCS),
        ([{"type": "text", "text": "wrote 5 bytes"}], "wrote 5 bytes"),  # Anthropic
        ([{"text": "exit_code=0\n"}, {"text": "1 passed"}], "exit_code=0\n1 passed"),
        (json.dumps(DOCS), DOCS),  # not a block list: only decoded
        ("plain text", "plain text"),
        ([{"image": {"format": "png"}}], [{"image": {"format": "png"}}]),  # kept as it is
        ([], []),
        # Cohere v2 tool content (cohere-openllmetry/*): one document is its data, decoded.
        ([{"type": "document", "document": {"data": json.dumps(DOCS)}}], DOCS),
        ([{"type": "document", "document": {"data": {"deleted": 12}}}], {"deleted": 12}),
        (
            [
                {"type": "document", "document": {"data": '{"id": "doc-1"}', "id": "d1"}},
                {"type": "text", "text": "second"},
            ],
            [{"id": "doc-1"}, "second"],
        ),
        # A document block without data, or beside a block of another kind: kept as it is.
        ([{"type": "document", "document": {}}], [{"type": "document", "document": {}}]),
        (
            [{"type": "document", "document": {"data": "x"}}, {"type": "image"}],
            [{"type": "document", "document": {"data": "x"}}, {"type": "image"}],
        ),
    ],
)
def test_block_value(value: object, expected: object) -> None:
    assert parse_block_value(value) == expected


def test_block_value_is_a_named_parser() -> None:
    assert apply_parsers(["block_value"], '[{"text": "{\\"deleted\\": 12}"}]') == {"deleted": 12}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        # AgentScope's ToolResponse as its TracingMiddleware records it (agentscope/*).
        (
            json.dumps(
                {
                    "content": [
                        {"type": "text", "text": json.dumps(DOCS), "id": "b1", "created_at": "t"}
                    ],
                    "state": "success",
                    "metadata": {},
                    "id": "call_0_0",
                }
            ),
            DOCS,
        ),
        ({"content": [{"type": "text", "text": "timed out"}], "state": "error"}, "timed out"),
        (json.dumps(DOCS), None),  # no envelope: nothing is read as the tool's result
        ({"content": "text, not blocks"}, None),
        ({"content": []}, None),
        ("plain text", None),
    ],
)
def test_envelope_content(value: object, expected: object) -> None:
    assert apply_parsers(["envelope_content"], value) == expected
