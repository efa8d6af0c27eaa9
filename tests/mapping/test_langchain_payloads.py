"""LangChain tracer payloads: tool inputs and ToolMessage outputs as OpenInference's and
OpenLLMetry's LangChain instrumentations record them (shapes copied from the
langgraph-openinference / langgraph-openllmetry captures)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from otel_oracles.mapping.parsers import builtin_parsers
from otel_oracles.mapping.parsers.langgraph import (
    parse_exception_repr_type,
    parse_js_error_type,
    parse_langchain_message_content,
    parse_langchain_message_name,
    parse_langchain_messages,
    parse_langchain_tool_input,
    parse_langgraph_command_goto,
    parse_langgraph_structured_response,
    parse_object_only,
    parse_traceloop_js_tool_args,
)

apply_parsers = builtin_parsers().apply
PARSERS = builtin_parsers()

DOCS = {"documents": [{"id": "doc-42", "text": "30 days"}]}
CALLBACK_INPUT = {
    "input_str": "{'command': 'curl https://example.com'}",
    "tags": ["seq:step:1"],
    "metadata": {"langgraph_node": "tools", "langgraph_step": 8},
    "inputs": {"command": "curl https://example.com"},
    "kwargs": {"color": "green", "name": None, "tool_call_id": "call_3_0"},
}
TOOL_MESSAGE_DUMPD = {
    "lc": 1,
    "type": "constructor",
    "id": ["langchain", "schema", "messages", "ToolMessage"],
    "kwargs": {"content": json.dumps(DOCS), "type": "tool", "name": "search_docs",
               "tool_call_id": "call_0_0", "status": "success"},
}  # fmt: skip
TOOL_MESSAGE_DICT = {
    "type": "tool",
    "data": {"content": json.dumps(DOCS), "type": "tool", "tool_call_id": "call_0_0"},
}


def test_callback_payload_gives_the_tool_inputs_not_the_callback_kwargs() -> None:
    assert parse_langchain_tool_input(CALLBACK_INPUT) == {"command": "curl https://example.com"}


def test_callback_payload_without_inputs_reads_the_python_repr_in_input_str() -> None:
    payload = {k: v for k, v in CALLBACK_INPUT.items() if k != "inputs"}
    assert parse_langchain_tool_input(payload) == {"command": "curl https://example.com"}


def test_callback_payload_with_plain_text_input_keeps_the_text() -> None:
    assert parse_langchain_tool_input({"input_str": "enterprise refund window"}) == (
        "enterprise refund window"
    )


@pytest.mark.parametrize("value", [{"query": "x"}, "text", ["a"], None])
def test_values_that_are_no_callback_payload_pass_through(value: Any) -> None:
    assert parse_langchain_tool_input(value) == value


@pytest.mark.parametrize(
    "value",
    [TOOL_MESSAGE_DUMPD, TOOL_MESSAGE_DICT, {"output": TOOL_MESSAGE_DUMPD, "kwargs": {}}],
    ids=["dumpd", "message_to_dict", "callback_output"],
)
def test_tool_message_content_is_the_tool_result_decoded(value: Any) -> None:
    assert parse_langchain_message_content(value) == DOCS


def test_plain_text_tool_message_content_stays_text() -> None:
    msg = {"type": "tool", "data": {"content": "wrote 33 bytes to calc.py"}}
    assert parse_langchain_message_content(msg) == "wrote 33 bytes to calc.py"


def test_a_tool_message_with_status_error_is_an_error_result() -> None:
    """LangChain hands a tool error it handled on as a ``ToolMessage`` with ``status`` error
    (``handle_tool_error``; langchain-mcp-adapters for an MCP ``isError`` result): the
    result is ``{"error": ...}``, a failed call, not the tool's output."""
    block = {"type": "text", "text": "Error executing tool search_docs: timed out", "id": "lc_1"}
    msg = {"type": "tool", "data": {"content": [block], "status": "error"}}
    assert parse_langchain_message_content(msg) == {"error": [block]}
    ok = {"type": "tool", "data": {"content": "fine", "status": "success"}}
    assert parse_langchain_message_content(ok) == "fine"


@pytest.mark.parametrize(
    "value",
    [{"output": "plain"}, {"type": "tool"}, {"lc": 1, "type": "secret"}, DOCS, "text", 3],
)
def test_values_that_are_no_langchain_message_pass_through(value: Any) -> None:
    assert parse_langchain_message_content(value) == value


def test_object_only_drops_a_bare_value() -> None:
    assert parse_object_only({"query": "q"}) == {"query": "q"}
    assert parse_object_only("enterprise refund window") is None
    assert parse_object_only(["q"]) is None


def test_parsers_chain_from_the_recorded_json_text() -> None:
    for name in ("langchain_tool_input", "langchain_message_content", "object_only"):
        assert name in PARSERS
    text = json.dumps(CALLBACK_INPUT)
    assert apply_parsers(["json", "langchain_tool_input"], text) == CALLBACK_INPUT["inputs"]
    out = json.dumps({"output": TOOL_MESSAGE_DUMPD, "kwargs": {"tags": []}})
    assert apply_parsers(["json", "langchain_message_content"], out) == DOCS
    assert apply_parsers(["json", "python_literal", "object_only"], "refund window") is None


def dumpd(cls: str, **kwargs: Any) -> dict[str, Any]:
    """A LangChain message serialized by ``dumpd``, as the LangSmith SDK exports it."""
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", cls],
            "kwargs": kwargs}  # fmt: skip


CALL = {"name": "search_docs", "args": {"query": "refunds"}, "id": "call_0_0", "type": "tool_call"}


def test_chat_model_input_payload_is_the_conversation() -> None:
    """``gen_ai.prompt`` of a LangSmith ``llm`` span: one list of messages per prompt."""
    payload = {"messages": [[
        dumpd("SystemMessage", content="Cite sources.", type="system"),
        dumpd("HumanMessage", content="Refund window?", type="human"),
        dumpd("AIMessage", content="", type="ai", tool_calls=[CALL]),
        dumpd("ToolMessage", content=json.dumps(DOCS), type="tool", tool_call_id="call_0_0"),
    ]]}  # fmt: skip
    messages = parse_langchain_messages(json.loads(json.dumps(payload)))
    assert messages is not None
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool"]
    assert messages[2]["parts"][-1] == {
        "type": "tool_call", "id": "call_0_0", "name": "search_docs",
        "arguments": {"query": "refunds"},
    }  # fmt: skip
    assert messages[3]["parts"][0]["id"] == "call_0_0"
    assert messages[3]["parts"][0]["response"] == DOCS


def test_chat_model_output_payload_keeps_the_finish_reason() -> None:
    """``gen_ai.completion``: the ``LLMResult``, each generation's message with its reason."""
    payload = {
        "generations": [[{
            "text": "30 days [doc-42].", "type": "ChatGeneration",
            "generation_info": {"finish_reason": "stop"},
            "message": dumpd("AIMessage", content="30 days [doc-42].", type="ai"),
        }]],
        "llm_output": {"model_name": "gpt-4o-mini"}, "type": "LLMResult",
    }  # fmt: skip
    assert parse_langchain_messages(payload) == [
        {"role": "assistant", "parts": [{"type": "text", "content": "30 days [doc-42]."}],
         "finish_reason": "stop"}
    ]  # fmt: skip


def test_role_comes_from_the_class_name_when_the_message_has_no_type() -> None:
    payload = {"messages": [[dumpd("HumanMessage", content="hi")]]}
    messages = parse_langchain_messages(payload)
    assert messages is not None and messages[0]["role"] == "user"


@pytest.mark.parametrize(
    "value",
    [
        {},  # LANGSMITH_HIDE_INPUTS / _OUTPUTS
        {"messages": [[dumpd("HumanMessage", content="a")], [dumpd("HumanMessage", content="b")]]},
        {"messages": [[{"role": "user", "text": "no known message shape"}]]},
        {"messages": "not a batch"},
        "text",
        None,
    ],
    ids=["hidden", "batch-of-two", "unknown-shape", "not-a-list", "text", "none"],
)
def test_anything_else_is_no_conversation(value: Any) -> None:
    """A hidden payload, a batch of several prompts (not one conversation) or a message shape
    not known here gives no value, never a partial conversation."""
    assert parse_langchain_messages(value) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ParentCommand(Command(graph='__parent__'))Traceback (most recent call last): ...",
         "ParentCommand"),
        ("scenarios.SearchBackendError('timed out')", "scenarios.SearchBackendError"),
        ("timed out (no repr)", None),
        ("", None),
        (42, None),
    ],
)  # fmt: skip
def test_exception_type_is_read_from_the_repr_at_the_start(text: Any, expected: Any) -> None:
    assert parse_exception_repr_type(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\n\nParentCommand\n    at RunnableCallable._route (state.js:7:4)", "ParentCommand"),
        ("timed out\n\nSearchBackendError: timed out\n    at run (a.mjs:5)", "SearchBackendError"),
        # The message's own first line is never the name, even when it looks like one.
        ("Timeout: x\n    at run (a.mjs:5:1)", None),
        # A multi-line message puts its second line above the frames: no name is guessed.
        ("a\nb\n\nTypeError: a\nb\n    at run (a.mjs:5:1)", None),
        ("no stack at all", None),
        (None, None),
    ],
)  # fmt: skip
def test_javascript_error_name_is_read_from_the_stack_head(text: Any, expected: Any) -> None:
    assert parse_js_error_type(text) == expected


def test_tool_message_names_the_tool_in_any_serialized_form() -> None:
    assert parse_langchain_message_name(TOOL_MESSAGE_DUMPD) == "search_docs"
    assert parse_langchain_message_name({"output": TOOL_MESSAGE_DUMPD}) == "search_docs"
    # A message form without a name, and anything that is no message, name no tool.
    assert parse_langchain_message_name(TOOL_MESSAGE_DICT) is None
    assert parse_langchain_message_name({"name": "search_docs"}) is None
    assert parse_langchain_message_name("search_docs") is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"lg_name": "Command", "goto": ["research_agent"], "graph": "p"}, "research_agent"),
        ({"lg_name": "Command", "goto": "research_agent"}, "research_agent"),
        # Several targets, none, or no Command: no one target.
        ({"lg_name": "Command", "goto": ["a", "b"]}, None),
        ({"lg_name": "Command", "update": {}}, None),
        ({"goto": ["research_agent"]}, None),
        ("research_agent", None),
    ],
)  # fmt: skip
def test_langgraph_command_goto_is_its_single_target(value: Any, expected: Any) -> None:
    assert parse_langgraph_command_goto(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"args": ['{"query": "refund window"}']}, {"query": "refund window"}),
        ({"args": [{"query": "refund window"}, {"callbacks": []}]}, {"query": "refund window"}),
        # The bare value of a one-argument call, no list, or nothing: no arguments.
        ({"args": ["refund window"]}, None),
        ({"args": []}, None),
        ({"query": "refund window"}, None),
        (None, None),
    ],
)
def test_openllmetry_js_tool_input_is_its_first_argument_object(value: Any, expected: Any) -> None:
    assert parse_traceloop_js_tool_args(value) == expected


ANSWER = {"answer": "Refunds take 30 days [doc-42].", "sources": ["doc-42"]}


@pytest.mark.parametrize(
    "state",
    [
        {"messages": [], "structured_response": ANSWER},  # MLflow, the LangSmith SDK
        {"outputs": {"messages": [], "structured_response": ANSWER}, "kwargs": {}},  # OpenLLMetry
    ],
)
def test_an_agent_states_structured_response_is_its_structured_output(state: Any) -> None:
    assert parse_langgraph_structured_response(state) == ANSWER
    recorded = json.dumps(state)
    assert apply_parsers(["json", "langgraph_structured_response"], recorded) == ANSWER


@pytest.mark.parametrize(
    "state",
    [
        {"messages": [], "structured_response": None},  # a run without a response format
        {"messages": [], "structured_response": "answer='x' sources=[]"},  # a repr: no object
        {"messages": [], "structured_response": {}},
        {"outputs": None, "kwargs": {}},
        "[REDACTED]",
        None,
    ],
)
def test_no_structured_object_is_no_structured_output(state: Any) -> None:
    assert parse_langgraph_structured_response(state) is None
