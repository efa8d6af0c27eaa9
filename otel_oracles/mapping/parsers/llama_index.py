"""LlamaIndex payloads as OpenInference records them (``conventions/llama-index.yaml``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_oracles.mapping.parsers._registry import Parser
from otel_oracles.mapping.parsers.python_literals import parse_python_literal
from otel_oracles.mapping.parsers.scalars import (
    parse_json_or_text,
)


def parse_llamaindex_tool_output(value: Any) -> Any:
    """LlamaIndex's ``ToolOutput`` as the tracers record it (``{"blocks": [{"text": ...}],
    "tool_name", "raw_input", "raw_output", "is_error"}``; OpenLLMetry records the agent
    workflow's ``ToolCallResult`` event around it, ``{"tool_name", "tool_kwargs", "tool_id",
    "tool_output": ...}``): the tool's own return value (``raw_output``) when it is there,
    else the text the model was given, which LlamaIndex makes with ``str()`` (a Python repr
    is read as one). A failed call (``is_error``: the agent workflow caught the tool's
    exception and hands the model its text) is ``{"error": <that text>}``, since the text
    alone does not say it is an error. Values that are no ToolOutput are returned unchanged."""
    if isinstance(value, dict) and "tool_kwargs" in value and "tool_output" in value:
        value = value["tool_output"]
    if not isinstance(value, dict) or "tool_name" not in value:
        return value
    if value.get("is_error") is True:
        return {"error": _tool_output_text(value) or str(value.get("raw_output"))}
    if value.get("raw_output") is not None:
        return value["raw_output"]
    text = _tool_output_text(value)
    return value if text is None else parse_python_literal(parse_json_or_text(text))


def _tool_output_text(value: dict[str, Any]) -> str | None:
    """The text a ``ToolOutput`` gave the model, ``None`` when it records none."""
    blocks = value.get("blocks")
    if isinstance(value.get("content"), str):
        return str(value["content"])
    if isinstance(blocks, list):
        return "".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict))
    return None


PARSERS: Mapping[str, Parser] = {
    "llamaindex_tool_output": parse_llamaindex_tool_output,
}
"""Registered names (as written in YAML ``parse:``) -> parser."""
