"""Logfire's model-client instrumentations in their version-1 span format, read from real
captures (``logfire-openai-v1``, ``logfire-anthropic-v1``), and the two general readings
they need: a response body holding its reply under ``message`` (``model_response``) and an
Anthropic call whose arguments Logfire wrapped as ``{"input": ...}``
(``wrapped_input_arguments``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.mapping.parsers.providers import (
    parse_model_response,
    parse_wrapped_input_arguments,
)
from otel_oracles.model.result import InputProblem
from otel_oracles.model.step import Step, StepKind
from otel_oracles.pipeline import read_traces

TRACES = Path(__file__).resolve().parents[1] / "testdata" / "traces"


def steps(source: str, scenario: str) -> list[Step]:
    problems: list[InputProblem] = []
    (trace,) = read_traces([str(TRACES / source / f"{scenario}.otlp.json")], problems)
    assert not problems
    return list(map_trace(trace, load_conventions()).steps)


def test_a_reply_under_message_is_the_output() -> None:
    """Logfire's ``{"message": ..., "usage": ...}``: the OpenAI message, its call included."""
    body = {
        "message": {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "function": {"name": "search_docs", "arguments": '{"query": "x"}'}}
            ],
        },
        "usage": {"prompt_tokens": 3},
    }
    (message,) = parse_model_response(body) or []
    assert message["role"] == "assistant"
    assert message["parts"] == [
        {"type": "tool_call", "id": "c1", "name": "search_docs", "arguments": {"query": "x"}}
    ]


def test_ollama_chat_body_reads_the_same_way() -> None:
    body = {"model": "m", "message": {"role": "assistant", "content": "hi"}, "done": True}
    (message,) = parse_model_response(body) or []
    assert message["parts"] == [{"type": "text", "content": "hi"}]


@pytest.mark.parametrize("body", [{"message": "text"}, {"message": {"id": 1}}, {"usage": {}}])
def test_a_body_without_a_reply_under_message_gives_no_messages(body: object) -> None:
    assert parse_model_response(body) is None


def test_wrapped_arguments_are_unwrapped_once() -> None:
    """Every call is wrapped once: a tool whose only parameter is ``input`` keeps it."""
    messages = [
        {
            "role": "assistant",
            "parts": [
                {"type": "tool_call", "id": "a", "name": "t", "arguments": {"input": {"q": 1}}},
                {"type": "tool_call", "id": "b", "name": "u", "arguments": {"input": {"input": 2}}},
                {"type": "tool_call", "id": "c", "name": "v", "arguments": {"q": 3}},
                {"type": "text", "content": "x"},
            ],
        }
    ]
    (out,) = parse_wrapped_input_arguments(messages)
    assert [p.get("arguments") for p in out["parts"]] == [{"q": 1}, {"input": 2}, {"q": 3}, None]
    assert parse_wrapped_input_arguments("not messages") == "not messages"


def test_anthropic_version_1_calls_keep_their_own_arguments() -> None:
    """``h_coding_agent``'s file write: the path and content, not ``{"input": {...}}``."""
    calls = [s for s in steps("logfire-anthropic-v1", "h_coding_agent") if s.tool == "write_file"]
    assert calls
    assert all(set(s.arguments or {}) == {"path", "content"} for s in calls)


def test_a_failed_version_1_call_keeps_its_request() -> None:
    """``o_run_error``: the call the API failed has no ``response_data``; its ``request_data``
    (written when the call started) still shows the search's result handed back."""
    mapped = steps("logfire-openai-v1", "o_run_error")
    searches = [s for s in mapped if s.kind == StepKind.TOOL_CALL]
    assert [s.tool for s in searches] == ["search_docs"]
    assert searches[0].result is not None


def test_version_2_spans_stay_plain_genai() -> None:
    """The default format's ``request_data`` is the model alone: otel-genai.yaml reads it."""
    generations = [s for s in steps("logfire-openai", "a_happy") if s.kind == StepKind.GENERATION]
    assert generations
    assert {s.convention for s in generations} == {"otel-genai"}
