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
    """LlamaIndex's ``ToolOutput`` as OpenInference records a tool span's output
    (``{"blocks": [{"text": ...}], "tool_name", "raw_input", "raw_output", "is_error"}``):
    the tool's own return value (``raw_output``) when it is there, else the text the model
    was given, which LlamaIndex makes with ``str()`` (a Python repr is read as one). Values
    that are no ToolOutput are returned unchanged."""
    if not isinstance(value, dict) or "tool_name" not in value:
        return value
    if value.get("raw_output") is not None:
        return value["raw_output"]
    blocks = value.get("blocks")
    if isinstance(value.get("content"), str):
        text = value["content"]
    elif isinstance(blocks, list):
        text = "".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict))
    else:
        return value
    return parse_python_literal(parse_json_or_text(text))


PARSERS: Mapping[str, Parser] = {
    "llamaindex_tool_output": parse_llamaindex_tool_output,
}
"""Registered names (as written in YAML ``parse:``) -> parser."""
