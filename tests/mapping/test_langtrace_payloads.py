"""LangChain chat model calls as Langtrace's langchain_core instrumentation records them: the
call's positional arguments and the returned AIMessage, each message dumped as its own fields
with empty ones left out and strings stripped (shapes from the langtrace-langgraph captures)."""

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
