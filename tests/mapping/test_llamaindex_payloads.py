"""LlamaIndex tool outputs and handoff arguments as OpenInference's LlamaIndex instrumentation
records them (shapes copied from the llamaindex-openinference captures)."""

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
