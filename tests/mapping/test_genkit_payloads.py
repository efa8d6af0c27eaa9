"""Genkit's action payloads (``genkit:input`` / ``genkit:output`` JSON) read by
``conventions/genkit.yaml``'s parsers, in the shapes the real ``genkit`` captures hold."""

from __future__ import annotations

import json
from typing import Any

import pytest

from otel_oracles.mapping.parsers.genkit import (
    parse_genkit_input_tokens,
    parse_genkit_messages,
    parse_genkit_output_tokens,
    parse_genkit_response,
)

REQUEST = {
    "messages": [
        {"role": "system", "content": [{"text": "Cite document ids."}]},
        {"role": "user", "content": [{"text": "Refund window?"}]},
        {"role": "model", "content": [
            {"toolRequest": {"name": "search_docs", "ref": "call_0_0",
                             "input": {"query": "refund window"}}}]},
        {"role": "tool", "content": [
            {"toolResponse": {"name": "search_docs", "ref": "call_0_0",
                              "output": {"error": "SearchBackendError: timed out"}}}]},
    ],
    "config": {"temperature": 0},
    "tools": [{"name": "search_docs"}],
}  # fmt: skip
RESPONSE = {
    "finishReason": "stop",
    "message": {"role": "model", "content": [{"text": "30 days [doc-42]."}]},
    "usage": {"inputTokens": 67, "outputTokens": 47, "totalTokens": 114},
    "raw": {"choices": [{"finish_reason": "stop"}]},
}


def test_request_messages_become_parts_with_the_model_role_as_assistant() -> None:
    assert parse_genkit_messages(json.dumps(REQUEST)) == [
        {"role": "system", "parts": [{"type": "text", "content": "Cite document ids."}]},
        {"role": "user", "parts": [{"type": "text", "content": "Refund window?"}]},
        {"role": "assistant", "parts": [
            {"type": "tool_call", "id": "call_0_0", "name": "search_docs",
             "arguments": {"query": "refund window"}}]},
        {"role": "tool", "parts": [
            {"type": "tool_call_response", "id": "call_0_0",
             "response": {"error": "SearchBackendError: timed out"}}]},
    ]  # fmt: skip


def test_response_is_one_assistant_message_with_its_finish_reason() -> None:
    assert parse_genkit_response(json.dumps(RESPONSE)) == [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": "30 days [doc-42]."}],
            "finish_reason": "stop",
        }
    ]
    assert parse_genkit_input_tokens(json.dumps(RESPONSE)) == 67
    assert parse_genkit_output_tokens(json.dumps(RESPONSE)) == 47


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        "not json",
        json.dumps({"messages": "x"}),
        # One message of an unknown shape: no partial conversation.
        json.dumps({"messages": [REQUEST["messages"][0], {"content": []}]}),
    ],
)
def test_input_that_is_no_generate_request_is_no_value(value: Any) -> None:
    assert parse_genkit_messages(value) is None


@pytest.mark.parametrize(
    "value",
    [None, json.dumps({"message": None}), json.dumps({"usage": {"inputTokens": True}}), "[]"],
)
def test_output_that_is_no_generate_response_is_no_value(value: Any) -> None:
    assert parse_genkit_response(value) is None
    assert parse_genkit_input_tokens(value) is None
