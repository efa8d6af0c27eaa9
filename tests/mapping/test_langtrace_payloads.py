"""LangChain chat model calls as Langtrace's langchain_core instrumentation records them: the
call's positional arguments and the returned AIMessage, each message dumped as its own fields
with empty ones left out and strings stripped (shapes from the langtrace-langgraph captures);
and provider calls' messages as its OpenAI and LiteLLM instrumentations write them in span
events (shapes from the langtrace-crewai captures)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from otel_oracles.mapping.parsers import builtin_parsers

apply_parsers = builtin_parsers().apply

CONFIG = {"metadata": {"langgraph_node": "agent"}, "configurable": {}}
CALLING = {
    "response_metadata": {"finish_reason": "tool_calls"},
    "type": "ai",
    "name": "support_agent",
    "id": "lc_run-0",
    "tool_calls": [
        {"name": "search_docs", "args": {"query": "q"}, "id": "call_0", "type": "tool_call"}
    ],
}
RESULT = {"content": '{"documents": []}', "type": "tool", "name": "search_docs",
          "id": "t0", "tool_call_id": "call_0", "status": "success"}  # fmt: skip
FAILED = {**RESULT, "content": "Error: SearchBackendError('timed out')", "status": "error"}


def test_call_input_reads_every_message_of_the_first_argument() -> None:
    messages = [{"content": "s", "type": "system"}, {"content": "u", "type": "human"}, CALLING]
    got = apply_parsers(["json", "langtrace_chat_input"], json.dumps([[*messages, RESULT], CONFIG]))
    assert [m["role"] for m in got] == ["system", "user", "assistant", "tool"]
    call = got[2]["parts"][0]
    assert (call["id"], call["name"], call["arguments"]) == (
        "call_0",
        "search_docs",
        {"query": "q"},
    )
    assert got[3]["parts"] == [
        {"type": "tool_call_response", "id": "call_0", "response": {"documents": []}}
    ]


def test_a_tool_message_with_error_status_is_a_failed_calls_result() -> None:
    got = apply_parsers(["langtrace_chat_input"], [[CALLING, FAILED], CONFIG])
    assert got[1]["parts"][0]["response"] == {"error": "Error: SearchBackendError('timed out')"}


def test_a_plain_string_prompt_is_one_user_message() -> None:
    got = apply_parsers(["langtrace_chat_input"], ["hello", CONFIG])
    assert got == [{"role": "user", "parts": [{"type": "text", "content": "hello"}]}]


@pytest.mark.parametrize(
    "value",
    [[], [[]], [[{"content": "x", "type": "chunk"}]], {"messages": "HumanMessage"}, "x", None],
)
def test_inputs_that_are_no_conversation_are_no_messages(value: Any) -> None:
    assert apply_parsers(["langtrace_chat_input"], value) is None


def test_call_output_is_the_assistant_turn_with_its_finish_reason() -> None:
    got = apply_parsers(["langtrace_chat_output"], CALLING)
    assert got is not None and got[0]["finish_reason"] == "tool_calls"
    assert [p["type"] for p in got[0]["parts"]] == ["tool_call"]
    answer = {"content": "42 [doc-42].", "type": "ai", "response_metadata": {}}
    assert apply_parsers(["langtrace_chat_output"], answer) == [
        {"role": "assistant", "parts": [{"type": "text", "content": "42 [doc-42]."}]}
    ]


def test_an_output_that_is_no_assistant_message_is_no_value() -> None:
    assert apply_parsers(["langtrace_chat_output"], RESULT) is None
    assert apply_parsers(["langtrace_chat_output"], {"generations": []}) is None


# ---- provider calls: the gen_ai.content.prompt / gen_ai.content.completion events ----------

CALL = {"id": "call_0", "type": "function",
        "function": {"name": "search_docs", "arguments": '{"query": "q"}'}}  # fmt: skip


def test_a_completions_tool_calls_are_its_content_list() -> None:
    got = apply_parsers(
        ["json", "langtrace_messages"], json.dumps([{"role": "assistant", "content": [CALL]}])
    )
    assert got == [
        {"role": "assistant",
         "parts": [{"type": "tool_call", "id": "call_0", "name": "search_docs",
                    "arguments": {"query": "q"}}]}
    ]  # fmt: skip


def test_the_empty_calls_standing_for_an_assistant_turn_are_a_turn_with_no_content() -> None:
    prompt = [
        {"role": "user", "content": "u"},
        [{"id": "", "type": ""}],
        {"role": "tool", "tool_call_id": "call_0", "name": "search_docs", "content": "{}"},
    ]
    got = apply_parsers(["langtrace_messages"], prompt)
    assert [m["role"] for m in got] == ["user", "assistant", "tool"]
    assert got[1]["parts"] == []
    assert got[2]["parts"] == [{"type": "tool_call_response", "id": "call_0", "response": {}}]


@pytest.mark.parametrize("value", [[], {"role": "user"}, ["text"], [{"content": "x"}], None])
def test_values_that_are_no_message_list_are_no_messages(value: Any) -> None:
    assert apply_parsers(["langtrace_messages"], value) is None


def test_a_dspy_prediction_in_a_completion_event_is_read_for_its_answer() -> None:
    reply = (
        "[[ ## reasoning ## ]]\nEnough.\n\n[[ ## answer ## ]]\n30 days [doc-42].\n\n"
        "[[ ## completed ## ]]"
    )
    got = apply_parsers(["dspy_adapter_output"], [{"role": "assistant", "content": reply}])
    assert got == [
        {"role": "assistant",
         "parts": [{"type": "reasoning", "content": "Enough."},
                   {"type": "text", "content": "30 days [doc-42]."}]}
    ]  # fmt: skip
    step = "[[ ## next_tool_name ## ]]\nsearch_docs\n\n[[ ## completed ## ]]"
    assert apply_parsers(["dspy_adapter_output"], [{"role": "assistant", "content": step}]) is None
