"""The Azure AI Agents thread-message parsers on the event shapes the SDK's tracing writes
(``azure-ai-agents`` 1.1.0: ``gen_ai.<role>.message`` span events whose message is the JSON of
``gen_ai.event.content``, beside the thread's and message's ids)."""

from __future__ import annotations

import json

from otel_oracles.mapping.parsers.azure_agents import (
    parse_azure_thread_finish_reasons,
    parse_azure_thread_messages,
)
from otel_oracles.model.span import EventRecord


def _event(role: str, body: dict[str, object]) -> EventRecord:
    return EventRecord(
        name=f"gen_ai.{role}.message",
        time_ns=1,
        attributes={
            "gen_ai.system": "az.ai.agents",
            "gen_ai.thread.id": "thread_1",
            "gen_ai.message.id": "msg_2",
            "gen_ai.event.content": json.dumps(body),
        },
    )


def test_a_listed_answer_is_the_text_value_of_its_content_item() -> None:
    events = [
        _event("user", {"content": {"text": {"value": "Q?"}}, "role": "user"}),
        _event("assistant", {"content": {"text": {"value": "A [doc-42]."}}, "role": "assistant"}),
    ]
    assert parse_azure_thread_messages(events) == [
        {"role": "assistant", "parts": [{"type": "text", "content": "A [doc-42]."}]}
    ]
    assert parse_azure_thread_finish_reasons(events) is None


def test_recording_off_leaves_the_answer_not_captured_never_empty() -> None:
    messages = parse_azure_thread_messages([_event("assistant", {"role": "assistant"})])
    assert messages == [{"role": "assistant", "parts": [{"type": "text"}]}]


def test_an_incomplete_message_carries_its_reason_as_the_finish_reason() -> None:
    body = {"content": {"text": {"value": "The window is"}}, "role": "assistant",
            "incomplete_details": {"reason": "max_tokens"}}  # fmt: skip
    events = [_event("assistant", body)]
    assert parse_azure_thread_messages(events) == [
        {"role": "assistant", "parts": [{"type": "text", "content": "The window is"}],
         "finish_reason": "max_tokens"}
    ]  # fmt: skip
    assert parse_azure_thread_finish_reasons(events) == ["max_tokens"]


def test_no_assistant_message_is_no_value() -> None:
    assert parse_azure_thread_messages([_event("user", {"content": "Q?", "role": "user"})]) is None
    assert parse_azure_thread_messages("not events") is None
