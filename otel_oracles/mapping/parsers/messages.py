"""The one internal message shape and the helpers that build it (no parsers of its own).

Every message parser returns the OTel GenAI parts format (semconv v1.37+
``gen_ai.input.messages``), whatever the convention it reads::

    {"role": "assistant", "parts": [
        {"type": "text", "content": "..."},
        {"type": "tool_call", "id": "call_1", "name": "search", "arguments": {...}},
        {"type": "tool_call_response", "id": "call_1", "response": ...}],
     "finish_reason": "tool_call"}

A part whose content was not captured keeps its structure and lacks the content key (or has
``None``), so later stages can tell "dropped" from "empty". Parsers never raise on malformed
input (instrumentations emit wrong things): they return ``None`` or what they could read.
A parser plug-in builds its parts with ``text_part``, ``tool_call_part`` and
``tool_response_part`` so they have exactly this shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_oracles.mapping.parsers.scalars import (
    parse_json_or_text,
    parse_string,
)

Message = dict[str, Any]
"""One message in the GenAI parts format (see the module docstring)."""


def unflatten(flat: Mapping[str, Any]) -> dict[str, Any]:
    """``{"0.message.role": "user"}`` -> ``{"0": {"message": {"role": "user"}}}``. Indexed
    levels stay dicts keyed by the index string; ``indexed`` turns them into ordered lists."""
    root: dict[str, Any] = {}
    for key, value in flat.items():
        segments = key.split(".")
        cursor: Any = root
        for seg in segments[:-1]:
            nxt = cursor.get(seg)
            if not isinstance(nxt, dict):
                nxt = {}
                cursor[seg] = nxt
            cursor = nxt
        if isinstance(cursor, dict) and not isinstance(cursor.get(segments[-1]), dict):
            cursor[segments[-1]] = value
    return root


def indexed(node: Any) -> list[Any]:
    """The values of an index-keyed dict in numeric order (non-numeric keys ignored)."""
    if isinstance(node, list):
        return node
    if not isinstance(node, dict):
        return []
    items = [(int(k), v) for k, v in node.items() if isinstance(k, str) and k.isdigit()]
    return [v for _, v in sorted(items, key=lambda kv: kv[0])]


def normalize_arguments(value: Any) -> Any:
    """Tool-call arguments: a JSON object string becomes a dict; other strings stay as they
    are (``Step.arguments_raw`` keeps them); ``None`` means not captured."""
    if isinstance(value, str):
        parsed = parse_json_or_text(value)
        return parsed if isinstance(parsed, dict) else value
    return value


def text_part(content: Any) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "text"}
    if content is not None:
        part["content"] = content if isinstance(content, str) else parse_string(content)
    return part


def tool_call_part(call_id: Any, name: Any, arguments: Any, has_arguments: bool) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "tool_call", "id": parse_string(call_id), "name": name}
    if has_arguments:
        part["arguments"] = normalize_arguments(arguments)
    return part


def tool_response_part(call_id: Any, response: Any, has_response: bool) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "tool_call_response", "id": parse_string(call_id)}
    if has_response:
        part["response"] = response
    return part
