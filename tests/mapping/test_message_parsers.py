"""The named parsers on the payload shapes their conventions document, for the forms no real
trace in tests/testdata exercises yet (v1.26 span events, Vercel legacy ai.*, OpenInference
retrieval documents, Traceloop decorator input). Inputs are the attribute values as the
specs (shared/reference) give them."""

from __future__ import annotations

import json

from otel_oracles.mapping.parsers import builtin_parsers
from otel_oracles.mapping.parsers.openai_agents import parse_openai_agents_repr_tool_calls
from otel_oracles.mapping.parsers.openinference import (
    parse_openinference_documents,
    parse_openinference_messages,
)
from otel_oracles.mapping.parsers.openllmetry import (
    parse_traceloop_entity_input,
    parse_traceloop_messages,
)
from otel_oracles.mapping.parsers.otel_genai import (
    parse_genai_messages,
    parse_legacy_choice_events,
    parse_legacy_input_events,
)
from otel_oracles.mapping.parsers.providers import parse_openai_choices, parse_openai_messages
from otel_oracles.mapping.parsers.vercel_ai_sdk import parse_vercel_messages, parse_vercel_response
from otel_oracles.model.span import EventRecord

apply_parsers = builtin_parsers().apply


def test_v126_prompt_attribute_is_openai_messages() -> None:
    prompt = json.dumps(
        [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": None,
             "tool_calls": [{"id": "c1", "type": "function",
                             "function": {"name": "get_weather",
                                          "arguments": '{"city": "Oslo"}'}}]},
            {"role": "tool", "tool_call_id": "c1", "content": '{"temp": 3}'},
        ]
    )  # fmt: skip
    msgs = parse_openai_messages(prompt)
    assert msgs is not None
    assert msgs[1]["parts"] == [
        {"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": {"city": "Oslo"}}
    ]
    assert msgs[2]["parts"] == [{"type": "tool_call_response", "id": "c1", "response": {"temp": 3}}]


def test_v126_completion_attribute_is_a_choice_list() -> None:
    out = parse_openai_choices(json.dumps([{"role": "assistant", "content": "3 degrees"}]))
    assert out == [{"role": "assistant", "parts": [{"type": "text", "content": "3 degrees"}]}]


def test_v128_span_events_carry_content_in_attributes() -> None:
    """Producers that put v1.28 events on spans (no log body) write the fields as attributes."""
    events = [
        EventRecord("gen_ai.user.message", 1, {"content": "hi", "gen_ai.system": "openai"}),
        EventRecord("gen_ai.tool.message", 2, {"content": "ok", "id": "c9"}),
    ]
    msgs = parse_legacy_input_events(events)
    assert msgs == [
        {"role": "user", "parts": [{"type": "text", "content": "hi"}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c9", "response": "ok"}]},
    ]
    choice = EventRecord(
        "gen_ai.choice", 3, {"index": 0, "finish_reason": "stop",
                             "message": json.dumps({"role": "assistant", "content": "bye"})},
    )  # fmt: skip
    assert parse_legacy_choice_events([choice]) == [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": "bye"}],
            "finish_reason": "stop",
        }
    ]


def test_azure_span_events_carry_the_whole_message_in_gen_ai_event_content() -> None:
    """Azure's SDKs (``azure-ai-inference``'s ``AIInferenceInstrumentor``) write each v1.28
    message event as span-event attributes ``gen_ai.system`` plus ``gen_ai.event.content``,
    the whole message's JSON; with content recording off a choice keeps each tool call's id
    and type only, so the turn asked for calls whose names were not captured."""
    asked = {
        "id": "call_0",
        "type": "function",
        "function": {"name": "search_docs", "arguments": '{"query": "refunds"}'},
    }
    events = [
        EventRecord("gen_ai.user.message", 1, {"gen_ai.system": "az.ai.inference",
                    "gen_ai.event.content": json.dumps({"role": "user", "content": "hi"})}),
        EventRecord("gen_ai.assistant.message", 2, {"gen_ai.system": "az.ai.inference",
                    "gen_ai.event.content": json.dumps({"role": "assistant",
                                                        "tool_calls": [asked]})}),
        EventRecord("gen_ai.tool.message", 3, {"gen_ai.system": "az.ai.inference",
                    "gen_ai.event.content": json.dumps({"role": "tool", "content": "[]",
                                                        "tool_call_id": "call_0"})}),
    ]  # fmt: skip
    assert parse_legacy_input_events(events) == [
        {"role": "user", "parts": [{"type": "text", "content": "hi"}]},
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "call_0",
                                         "name": "search_docs",
                                         "arguments": {"query": "refunds"}}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_0",
                                    "response": []}]},
    ]  # fmt: skip
    hidden = {
        "finish_reason": "tool_calls",
        "index": 0,
        "message": {"tool_calls": [{"id": "call_0", "type": "function"}]},
    }
    choice = EventRecord("gen_ai.choice", 4, {"gen_ai.system": "az.ai.inference",
                         "gen_ai.event.content": json.dumps(hidden)})  # fmt: skip
    (message,) = parse_legacy_choice_events([choice]) or []
    assert message["finish_reason"] == "tool_calls"
    assert [(p["type"], p["id"], p.get("name")) for p in message["parts"]] == [
        ("tool_call", "call_0", None)
    ]


def test_structured_anyvalue_messages_need_no_json() -> None:
    value = [{"role": "assistant", "parts": [{"type": "tool_call", "id": "x", "name": "t",
                                              "arguments": {"a": 1}}]}]  # fmt: skip
    assert parse_genai_messages(value) == value


def test_vercel_legacy_prompt_and_response() -> None:
    prompt = json.dumps(
        [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "t1",
                                               "toolName": "search", "args": {"q": "x"}}]},
            {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "t1",
                                          "toolName": "search", "result": {"hits": 0}}]},
        ]
    )  # fmt: skip
    msgs = parse_vercel_messages(prompt)
    assert msgs is not None
    assert msgs[1]["parts"][0] == {"type": "tool_call", "id": "t1", "name": "search",
                                   "arguments": {"q": "x"}}  # fmt: skip
    assert msgs[2]["parts"][0] == {"type": "tool_call_response", "id": "t1",
                                   "response": {"hits": 0}}  # fmt: skip
    out = parse_vercel_response(
        {
            "ai.response.toolCalls": json.dumps(
                [{"toolCallType": "function", "toolCallId": "t2", "toolName": "search",
                  "args": '{"q": "y"}'}]
            ),
            "ai.response.finishReason": "tool-calls",
        }
    )  # fmt: skip
    assert out == [{"role": "assistant", "finish_reason": "tool-calls", "parts": [
        {"type": "tool_call", "id": "t2", "name": "search", "arguments": {"q": "y"}}]}]  # fmt: skip


def test_openinference_retrieval_documents_from_flattened_keys() -> None:
    flat = {
        "0.document.id": "doc-1", "0.document.score": 0.9, "0.document.content": "a",
        "1.document.id": "doc-2", "1.document.score": 0.5,
        "1.document.metadata": '{"source": "kb"}',
    }  # fmt: skip
    assert parse_openinference_documents(flat) == [
        {"id": "doc-1", "score": 0.9, "content": "a"},
        {"id": "doc-2", "score": 0.5, "metadata": {"source": "kb"}},
    ]


def test_openinference_tool_message_in_multi_part_contents_is_a_captured_response() -> None:
    """A tool result written as ``message.contents`` parts (BeeAI) is the response, with the
    call id found beside the part; a tool message with neither form was not captured."""
    flat = {
        "0.message.role": "tool",
        "0.message.contents.0.message.tool_call_id": "call_1",
        "0.message.contents.0.message_content.type": "text",
        "0.message.contents.0.message_content.text": '{"documents": []}',
        "1.message.role": "tool",
    }
    assert parse_openinference_messages(flat) == [
        {"role": "tool", "parts": [
            {"type": "tool_call_response", "id": "call_1", "response": {"documents": []}}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": None}]},
    ]  # fmt: skip


def test_traceloop_decorated_tool_input_keeps_keyword_arguments() -> None:
    raw = json.dumps({"args": [], "kwargs": {"query": "refunds"}})
    assert apply_parsers(["json", "traceloop_entity_input"], raw) == {"query": "refunds"}
    assert parse_traceloop_entity_input({"args": ["x"], "kwargs": {}}) == {"args": ["x"]}


def test_repr_tool_calls_are_read_without_evaluating_them() -> None:
    text = (
        "ResponseFunctionToolCall(arguments='{\"a\": 1}', call_id='c', name='t', "
        "x=__import__('os'))"
    )
    msgs = [{"role": "assistant", "parts": [{"type": "text", "content": text}]}]
    out = parse_openai_agents_repr_tool_calls(msgs)
    assert out[0]["parts"] == [{"type": "tool_call", "id": "c", "name": "t", "arguments": {"a": 1}}]


def test_a_malformed_value_parses_to_nothing_not_an_exception() -> None:
    for name in ("genai_messages", "openai_messages", "openinference_messages", "vercel_messages"):
        assert apply_parsers([name], "{not json") is None, name


def test_traceloop_content_with_no_value_is_no_text_not_dropped_content() -> None:
    """AgentOps writes an assistant turn that only called tools as ``content`` set to None
    (an attribute with no value) and without its calls: no text, which must not read as
    content the tracer dropped (a content key left out); the results follow, without ids."""
    flat = {"0.role": "user", "0.content": "hi", "1.role": "assistant", "1.content": None,
            "2.role": "tool", "2.content": "Error executing tool: timed out"}  # fmt: skip
    messages = parse_traceloop_messages(flat)
    assert messages is not None
    assert messages[1] == {"role": "assistant", "parts": [{"type": "text", "content": ""}]}
    assert messages[2]["parts"] == [
        {"type": "tool_call_response", "id": None, "response": "Error executing tool: timed out"}
    ]
    dropped = parse_traceloop_messages({"0.role": "assistant"})
    assert dropped == [{"role": "assistant", "parts": []}]


def test_traceloop_tool_message_reads_cohere_document_blocks() -> None:
    """OpenLLMetry's Cohere instrumentation writes a v2 tool message's content as it was sent
    (``cohere-openllmetry/*``): a list of ``document`` blocks, an attribute holding a list of
    maps. The result is the document's data, so its ``error`` key is seen."""
    flat = {
        "0.role": "tool",
        "0.content": [
            {"type": "document", "document": {"data": '{"error": "SearchBackendError: x"}'}}
        ],
    }
    messages = parse_traceloop_messages(flat)
    assert messages == [
        {
            "role": "tool",
            "parts": [
                {
                    "type": "tool_call_response",
                    "id": None,
                    "response": {"error": "SearchBackendError: x"},
                }
            ],
        }
    ]
