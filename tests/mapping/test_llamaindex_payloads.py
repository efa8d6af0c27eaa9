"""LlamaIndex tool outputs and handoff arguments as OpenInference's LlamaIndex instrumentation
records them (shapes copied from the llamaindex-openinference captures), and LlamaIndex's chat
messages, chat responses and agent results as MLflow's LlamaIndex autolog dumps them (shapes
from the mlflow-llamaindex captures)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from otel_oracles.mapping.parsers import builtin_parsers
from otel_oracles.mapping.parsers.handoffs import parse_handoff_target
from otel_oracles.mapping.parsers.llama_index import parse_llamaindex_tool_output

apply_parsers = builtin_parsers().apply

DOCS = {"documents": [{"id": "doc-42", "text": "30 days"}]}


def tool_output(**fields: Any) -> dict[str, Any]:
    return {"tool_name": "search_docs", "raw_input": {"args": [], "kwargs": {"q": "x"}},
            "is_error": False, **fields}  # fmt: skip


def test_raw_output_is_the_tools_own_return_value() -> None:
    value = tool_output(blocks=[{"text": str(DOCS)}], raw_output=DOCS)
    assert parse_llamaindex_tool_output(value) == DOCS


def test_without_raw_output_the_python_repr_the_model_saw_is_read() -> None:
    assert parse_llamaindex_tool_output(tool_output(blocks=[{"text": str(DOCS)}])) == DOCS
    assert parse_llamaindex_tool_output(tool_output(content=json.dumps(DOCS))) == DOCS


def test_plain_text_output_stays_text() -> None:
    value = tool_output(blocks=[{"text": "wrote 33 bytes to calc.py"}])
    assert parse_llamaindex_tool_output(value) == "wrote 33 bytes to calc.py"


@pytest.mark.parametrize("value", [DOCS, {"blocks": []}, "text", None, [1]])
def test_values_that_are_no_tool_output_pass_through(value: Any) -> None:
    assert parse_llamaindex_tool_output(value) == value


def test_chains_from_the_recorded_json_text() -> None:
    text = json.dumps(tool_output(blocks=[{"text": str(DOCS)}], raw_output=DOCS))
    assert apply_parsers(["json", "llamaindex_tool_output"], text) == DOCS


@pytest.mark.parametrize(
    ("arguments", "target"),
    [
        ({"to_agent": "research_agent", "reason": "research"}, "research_agent"),  # LlamaIndex
        ({"agent_name": "research_agent"}, "research_agent"),  # Google ADK transfer_to_agent
        ({"reason": "no target"}, None),
        ({"to_agent": ""}, None),
        ("research_agent", None),
    ],
)
def test_handoff_target_is_the_agent_the_arguments_name(arguments: Any, target: Any) -> None:
    assert parse_handoff_target(arguments) == target


def test_handoff_target_chains_from_llamaindex_tool_input() -> None:
    text = json.dumps({"kwargs": {"to_agent": "research_agent", "reason": "r"}})
    names = ["json", "traceloop_entity_input", "handoff_target"]
    assert apply_parsers(names, text) == "research_agent"


# ---- LlamaIndex's own objects as MLflow's LlamaIndex autolog dumps them -----------------

SYSTEM = {
    "role": "system",
    "additional_kwargs": {},
    "blocks": [{"block_type": "text", "text": "s"}],
}
CALLING = {
    "role": "assistant",
    "additional_kwargs": {
        "tool_calls": [
            {"id": "call_0", "type": "function",
             "function": {"name": "search_docs", "arguments": "{\"query\": \"q\"}"}}
        ]
    },
    "blocks": [{"block_type": "tool_call", "tool_call_id": "call_0", "tool_name": "search_docs",
                "tool_kwargs": "{\"query\": \"q\"}"}],
}  # fmt: skip
RESULT = {
    "role": "tool",
    "additional_kwargs": {"tool_call_id": "call_0"},
    "blocks": [{"block_type": "text", "text": '{"documents": []}'}],
}
ANSWER = {
    "role": "assistant",
    "additional_kwargs": {},
    "blocks": [{"block_type": "text", "text": "42 [doc-42]."}],
}


def test_llm_call_input_messages_keep_text_tool_calls_and_results() -> None:
    got = apply_parsers(
        ["json", "llamaindex_chat"],
        json.dumps({"messages": [SYSTEM, CALLING, RESULT], "kwargs": {}}),
    )
    assert [m["role"] for m in got] == ["system", "assistant", "tool"]
    assert got[0]["parts"] == [{"type": "text", "content": "s"}]
    call = got[1]["parts"][0]
    assert (call["type"], call["id"], call["name"], call["arguments"]) == (
        "tool_call", "call_0", "search_docs", {"query": "q"},
    )  # fmt: skip
    assert got[2]["parts"][0]["id"] == "call_0"


def test_tool_call_blocks_stand_in_when_additional_kwargs_has_none() -> None:
    calling = {**CALLING, "additional_kwargs": {}}
    got = apply_parsers(["llamaindex_chat"], [calling])
    assert got[0]["parts"][0]["name"] == "search_docs"


def test_chat_response_is_read_from_the_provider_body_with_its_finish_reason() -> None:
    message = {"role": "assistant", "content": "42 [doc-42]."}
    raw = {"choices": [{"finish_reason": "stop", "message": message}]}
    got = apply_parsers(["llamaindex_chat"], {"message": ANSWER, "raw": raw})
    assert got == [
        {"role": "assistant", "parts": [{"type": "text", "content": "42 [doc-42]."}],
         "finish_reason": "stop"}
    ]  # fmt: skip


def test_chat_response_without_a_provider_body_is_its_chat_message() -> None:
    got = apply_parsers(["llamaindex_chat"], {"message": ANSWER, "raw": None})
    assert got == [{"role": "assistant", "parts": [{"type": "text", "content": "42 [doc-42]."}]}]


@pytest.mark.parametrize(
    "value", ["[REDACTED]", None, {"tools": ["<FunctionTool>"]}, [{"role": "user"}]]
)
def test_values_that_are_no_chat_payload_are_no_messages(value: Any) -> None:
    assert apply_parsers(["llamaindex_chat"], value) is None


def test_agent_result_names_the_agent_that_answered_and_its_answer() -> None:
    result: dict[str, Any] = {"result": {"response": ANSWER, "current_agent_name": "support_agent",
                         "tool_calls": [], "structured_response": None}}  # fmt: skip
    assert apply_parsers(["llamaindex_agent_result"], result) == {
        "agent": "support_agent", "answer": "42 [doc-42].",
    }  # fmt: skip
    assert apply_parsers(["llamaindex_agent_result"], "[REDACTED]") is None
