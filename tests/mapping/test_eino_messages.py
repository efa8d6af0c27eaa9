"""Eino's message dumps (``gen_ai.completion.0.content`` of eino-ext's APMPlus handler) read by
``conventions/eino.yaml``'s ``eino_messages`` parser, in the shapes the real ``eino-apmplus``
captures hold."""

from __future__ import annotations

import json

import pytest

from otel_oracles.mapping.parsers.eino import parse_eino_messages

TOOL_TURN = [
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "call_0_0", "type": "function",
             "function": {"name": "search_docs", "arguments": '{"query": "refund window"}'}},
            {"id": "call_0_1", "type": "function",
             "function": {"name": "delete_records", "arguments": '{"table": "t", "where": "1"}'}},
        ],
        "response_meta": {"finish_reason": "tool_calls", "usage": {"prompt_tokens": 67}},
    }
]  # fmt: skip


def test_a_tool_requesting_turn_is_its_calls_with_the_finish_reason_of_its_meta() -> None:
    (message,) = parse_eino_messages(json.dumps(TOOL_TURN)) or []
    assert message["role"] == "assistant"
    assert message["finish_reason"] == "tool_calls"
    calls = [p for p in message["parts"] if p["type"] == "tool_call"]
    assert [(c["id"], c["name"]) for c in calls] == [
        ("call_0_0", "search_docs"),
        ("call_0_1", "delete_records"),
    ]
    assert not [p for p in message["parts"] if p["type"] == "text" and p["content"]]


def test_tool_messages_keep_their_call_ids() -> None:
    dump = [{"role": "tool", "content": '{"error": "boom"}', "tool_call_id": "call_0_0"}]
    (message,) = parse_eino_messages(dump) or []
    (part,) = message["parts"]
    assert part["type"] == "tool_call_response"
    assert part["id"] == "call_0_0"


@pytest.mark.parametrize(
    "value",
    [
        "Enterprise customers can request a full refund within 30 days [doc-42].",
        "[]",
        json.dumps([{"content": "no role"}]),
        json.dumps([TOOL_TURN[0], "not a message"]),
        json.dumps({"role": "assistant", "content": "an object, not a list"}),
    ],
)
def test_anything_but_a_list_of_messages_is_no_value(value: str) -> None:
    """Plain answer text goes to the rule's next source (the indexed keys); a partial list is
    never read as the turn."""
    assert parse_eino_messages(value) is None
