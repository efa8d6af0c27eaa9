"""Haystack ``ChatMessage`` reprs as OpenInference's Haystack instrumentor records them
(``conventions/haystack.yaml``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_oracles.mapping.parsers._registry import Parser
from otel_oracles.mapping.parsers.python_literals import parse_python_repr
from otel_oracles.mapping.parsers.scalars import (
    parse_string,
)


def _haystack_part(item: Any) -> dict[str, Any] | None:
    """One ``ChatMessage`` content item (as ``parse_python_repr`` reads it) as a GenAI part."""
    if not isinstance(item, dict):
        return None
    kind = item.get("__type__")
    if kind == "TextContent":
        return {"type": "text", "content": parse_string(item.get("text"))}
    if kind == "ToolCall":
        return {
            "type": "tool_call",
            "id": parse_string(item.get("id")),
            "name": parse_string(item.get("tool_name")),
            "arguments": item.get("arguments"),
        }
    if kind == "ToolCallResult":
        origin = item.get("origin")
        origin = origin if isinstance(origin, dict) else {}
        part: dict[str, Any] = {
            "type": "tool_call_response",
            "id": parse_string(origin.get("id")),
            "response": item.get("result"),
        }
        if item.get("error") is True:
            # Haystack hands a failed tool's error text back as the result, flagged ``error``.
            part["response"] = {"error": item.get("result")}
        return part
    if kind == "ReasoningContent":
        return {"type": "reasoning", "content": parse_string(item.get("reasoning_text"))}
    return None


def parse_haystack_messages(value: Any) -> list[dict[str, Any]] | None:
    """Haystack ``ChatMessage`` objects recorded with ``str()`` (OpenInference's Haystack
    instrumentor: a component's ``input.value`` ``{"messages": [...]}`` and a generator's
    ``output.value`` ``{"replies": [...]}``, each message a ``repr``), read with
    ``parse_python_repr`` into GenAI messages: text, tool calls with their ids, tool results
    linked to their call by the result's ``origin`` (an error result as ``{"error": ...}``),
    and the reply's finish reason from its ``_meta``. The flattened ``llm.*_messages``
    attributes of that instrumentor drop tool calls from the input and every tool result, so
    these reprs are the only complete record. Anything else is no value."""
    if isinstance(value, dict):
        value = value.get("messages", value.get("replies"))
    if not isinstance(value, list):
        return None
    out: list[dict[str, Any]] = []
    for item in value:
        message = parse_python_repr(item)
        if not isinstance(message, dict) or message.get("__type__") != "ChatMessage":
            return None
        content = message.get("_content")
        items = content if isinstance(content, list) else []
        parts = [p for p in map(_haystack_part, items) if p is not None]
        role = parse_string(message.get("_role")) or "user"
        parsed: dict[str, Any] = {"role": role, "parts": parts}
        meta = message.get("_meta")
        if isinstance(meta, dict) and meta.get("finish_reason"):
            parsed["finish_reason"] = parse_string(meta["finish_reason"])
        out.append(parsed)
    return out or None


PARSERS: Mapping[str, Parser] = {
    "haystack_messages": parse_haystack_messages,
}
"""Registered names (as written in YAML ``parse:``) -> parser."""
