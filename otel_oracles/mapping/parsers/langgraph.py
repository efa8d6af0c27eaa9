"""LangChain callback payloads as tracers record them (``conventions/langgraph.yaml``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_oracles.mapping.parsers._registry import Parser
from otel_oracles.mapping.parsers.python_literals import parse_python_literal
from otel_oracles.mapping.parsers.scalars import (
    parse_json,
    parse_json_or_text,
)


def parse_langchain_tool_input(value: Any) -> Any:
    """A LangChain tool-start callback payload as a tracer recorded it (OpenLLMetry's
    ``gen_ai.tool.call.arguments``: ``{"input_str": "{'query': ...}", "inputs": {...},
    "tags", "metadata", "kwargs": {"tool_call_id", ...}}``): the tool's arguments are
    ``inputs`` when it is an object, else ``input_str``, which LangChain fills with
    ``str(dict)`` (a Python repr, read without evaluating it). The callback's own
    ``kwargs``/``metadata`` are never the arguments. Other values are returned unchanged."""
    if not isinstance(value, dict) or "input_str" not in value:
        return value
    inputs = value.get("inputs")
    if isinstance(inputs, dict):
        return inputs
    return parse_python_literal(parse_json(value.get("input_str")))


def _langchain_message_body(node: Any) -> dict[str, Any] | None:
    """The fields of a serialized LangChain message: ``dumpd`` form ``{"lc": 1, "type":
    "constructor", "id": [..., "ToolMessage"], "kwargs": {...}}``, ``message_to_dict`` form
    ``{"type": "tool", "data": {...}}``, or the message's own fields (pydantic ``model_dump``,
    as Langfuse's callback handler records a tool's ``ToolMessage``: ``{"content", "type",
    "additional_kwargs", ...}``); ``None`` for anything else."""
    if not isinstance(node, dict):
        return None
    if node.get("lc") == 1 and node.get("type") == "constructor":
        kwargs = node.get("kwargs")
        return kwargs if isinstance(kwargs, dict) and "content" in kwargs else None
    data = node.get("data")
    if isinstance(node.get("type"), str) and isinstance(data, dict) and "content" in data:
        return data
    if isinstance(node.get("type"), str) and "content" in node and "additional_kwargs" in node:
        return node
    return None


def parse_langchain_message_content(value: Any) -> Any:
    """The content of a serialized LangChain message (a tool's ``ToolMessage``), also when a
    callback payload wraps it as ``{"output": <message>, "kwargs": ...}`` (OpenLLMetry). A
    tool that returns an object reaches the model as that object's JSON text, so object and
    array text is decoded (``json_or_text``). Values that are no LangChain message are
    returned unchanged."""
    body = _langchain_message_body(value)
    if body is None and isinstance(value, dict):
        body = _langchain_message_body(value.get("output"))
    if body is None:
        return value
    return parse_json_or_text(body["content"])


def parse_object_only(value: Any) -> dict[str, Any] | None:
    """An object (JSON object already decoded) or nothing. For tool inputs that some tracers
    record as the bare value when a tool takes one argument (OpenInference's LangChain
    tracer: ``enterprise refund window`` for ``{"query": ...}``): such text is not the
    arguments, and without it the mapper takes them from the model's matching tool call."""
    return value if isinstance(value, dict) else None


PARSERS: Mapping[str, Parser] = {
    "langchain_tool_input": parse_langchain_tool_input,
    "langchain_message_content": parse_langchain_message_content,
    "object_only": parse_object_only,
}
"""Registered names (as written in YAML ``parse:``) -> parser."""
