"""pydantic-ai's own message objects as MLflow's pydantic-ai autolog dumps them
(``pydantic_ai_messages``): requests and responses in the GenAI parts format, a tool's return
and a retry prompt as the results of the model's call ids."""

from __future__ import annotations

import json
from typing import Any

from otel_oracles.mapping.parsers.pydantic_ai import parse_pydantic_ai_messages

ASKED = {
    "kind": "response",
    "parts": [
        {
            "part_kind": "tool-call",
            "tool_name": "search_docs",
            "args": '{"query": "refunds"}',
            "tool_call_id": "call_1",
        }
    ],
    "finish_reason": "tool_call",
}


def request(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "request", "parts": list(parts), "instructions": "Be brief."}


def test_a_conversation_with_a_tool_call_and_its_return() -> None:
    messages = [
        request({"part_kind": "user-prompt", "content": "Refund window?"}),
        ASKED,
        request(
            {"part_kind": "tool-return", "tool_call_id": "call_1", "tool_name": "search_docs",
             "content": {"documents": []}},
        ),
    ]  # fmt: skip
    assert parse_pydantic_ai_messages(json.dumps({"messages": messages})) == [
        {"role": "user", "parts": [{"type": "text", "content": "Refund window?"}]},
        {
            "role": "assistant",
            "parts": [
                {"type": "tool_call", "id": "call_1", "name": "search_docs",
                 "arguments": {"query": "refunds"}},
            ],
            "finish_reason": "tool_call",
        },
        {"role": "tool", "parts": [
            {"type": "tool_call_response", "id": "call_1", "response": {"documents": []}}]},
    ]  # fmt: skip


def test_a_retry_prompt_for_a_call_is_an_error_result_and_otherwise_user_text() -> None:
    retry = request(
        {"part_kind": "retry-prompt", "tool_call_id": "call_1", "tool_name": "search_docs",
         "content": "SearchBackendError: timed out"},
        {"part_kind": "retry-prompt", "tool_name": None, "tool_call_id": None,
         "content": "Please answer in text."},
    )  # fmt: skip
    assert parse_pydantic_ai_messages([retry]) == [
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_1",
                                    "response": {"error": "SearchBackendError: timed out"}}]},
        {"role": "user", "parts": [{"type": "text", "content": "Please answer in text."}]},
    ]  # fmt: skip


def test_a_response_is_one_assistant_message() -> None:
    response = {
        "kind": "response",
        "parts": [
            {"part_kind": "thinking", "content": "Look it up."},
            {"part_kind": "text", "content": "30 days [doc-42]."},
        ],
        "finish_reason": "stop",
    }
    assert parse_pydantic_ai_messages(json.dumps(response)) == [
        {
            "role": "assistant",
            "parts": [
                {"type": "reasoning", "content": "Look it up."},
                {"type": "text", "content": "30 days [doc-42]."},
            ],
            "finish_reason": "stop",
        }
    ]


def test_anything_else_is_no_value() -> None:
    """No partial conversation: one message of an unknown shape voids the whole value, and the
    masked placeholder is no messages at all."""
    assert parse_pydantic_ai_messages([ASKED, {"role": "user", "content": "hi"}]) is None
    assert parse_pydantic_ai_messages('"[REDACTED]"') is None
    assert parse_pydantic_ai_messages({"messages": []}) is None
    assert parse_pydantic_ai_messages(None) is None
