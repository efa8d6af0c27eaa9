"""The Azure AI Agents thread-message parsers on the event shapes the SDK's tracing writes
(``azure-ai-agents`` 1.1.0: ``gen_ai.<role>.message`` span events whose message is the JSON of
``gen_ai.event.content``, beside the thread's and message's ids)."""

from __future__ import annotations

import json

from otel_oracles.mapping.parsers.azure_agents import (
    parse_azure_thread_finish_reasons,
    parse_azure_thread_messages,
    parse_azure_tool_outputs,
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


def _output(call_id: str, content: str) -> EventRecord:
    return EventRecord(
        name="gen_ai.tool.message",
        time_ns=1,
        attributes={"gen_ai.event.content": json.dumps({"content": content, "id": call_id})},
    )


def test_posted_tool_outputs_are_tool_responses_by_call_id() -> None:
    events = [_output("call_0_0", '{"documents": []}'), _output("call_0_1", "done")]
    assert parse_azure_tool_outputs(events) == [
        {
            "role": "tool",
            "parts": [
                {"type": "tool_call_response", "id": "call_0_0", "response": {"documents": []}},
                {"type": "tool_call_response", "id": "call_0_1", "response": "done"},
            ],
        }
    ]


def test_recording_off_keeps_the_call_ids_and_leaves_the_outputs_not_captured() -> None:
    # With content recording off the SDK writes "" as the content; the id stays: a call
    # that opened no span is still counted, and its output is never an empty result.
    assert parse_azure_tool_outputs([_output("call_1_0", "")]) == [
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_1_0"}]}
    ]


def test_outputs_without_an_id_or_other_messages_are_not_outputs() -> None:
    user = _event("user", {"content": "Q?", "role": "user"})
    nameless = EventRecord(
        name="gen_ai.tool.message",
        time_ns=1,
        attributes={"gen_ai.event.content": json.dumps({"content": "x"})},
    )
    assert parse_azure_tool_outputs([user, nameless]) is None
