"""Haystack ``ChatMessage`` objects as tracers record them (``conventions/haystack.yaml``): the
``repr`` OpenInference's Haystack instrumentor writes, and the ``to_dict()`` form (or, where the
payload was not JSON-serializable, the ``repr``) that Haystack's own tracer writes in its agent's
content tags.
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


_TO_DICT_KINDS = {
    "text": "TextContent",
    "tool_call": "ToolCall",
    "tool_call_result": "ToolCallResult",
    "reasoning": "ReasoningContent",
}
"""``ChatMessage.to_dict()`` content keys -> the dataclass each one serializes."""


def _from_to_dict(message: Mapping[str, Any]) -> dict[str, Any]:
    """A ``ChatMessage.to_dict()`` (``{"role", "meta", "name", "content": [{"text": ...},
    {"tool_call": {...}}, {"tool_call_result": {...}}, ...]}``) in the shape
    ``parse_python_repr`` gives its ``repr``, so one reader serves both. A content item of a
    kind not listed (an image, a file) is kept as an unknown item, which yields no part."""
    items: list[Any] = []
    content = message.get("content")
    for item in content if isinstance(content, list) else []:
        if not isinstance(item, dict) or len(item) != 1:
            items.append(None)
            continue
        ((key, body),) = item.items()
        kind = _TO_DICT_KINDS.get(key)
        if kind == "TextContent":
            items.append({"__type__": kind, "text": body})
        elif kind is not None and isinstance(body, dict):
            fields = dict(body)
            if kind == "ToolCallResult" and isinstance(fields.get("origin"), dict):
                fields["origin"] = {"__type__": "ToolCall", **fields["origin"]}
            items.append({"__type__": kind, **fields})
        else:
            items.append(None)
    return {
        "__type__": "ChatMessage",
        "_role": message.get("role"),
        "_content": items,
        "_meta": message.get("meta"),
    }


def _chat_message(item: Any) -> Any:
    """One recorded ``ChatMessage``, as ``parse_python_repr`` reads a ``repr``: a ``repr``
    string, an already parsed ``repr``, or a ``to_dict()`` object."""
    if isinstance(item, dict) and "__type__" not in item and "role" in item:
        return _from_to_dict(item)
    return parse_python_repr(item)


def parse_haystack_messages(value: Any) -> list[dict[str, Any]] | None:
    """Haystack ``ChatMessage`` objects recorded with ``str()`` (OpenInference's Haystack
    instrumentor: a component's ``input.value`` ``{"messages": [...]}`` and a generator's
    ``output.value`` ``{"replies": [...]}``, each message a ``repr``), read with
    ``parse_python_repr`` into GenAI messages: text, tool calls with their ids, tool results
    linked to their call by the result's ``origin`` (an error result as ``{"error": ...}``),
    and the reply's finish reason from its ``_meta``. The flattened ``llm.*_messages``
    attributes of that instrumentor drop tool calls from the input and every tool result, so
    these reprs are the only complete record. Haystack's own tracer records the same lists as
    ``to_dict()`` objects in JSON, or, when a payload is not JSON-serializable (a generator's
    input holds the ``Tool`` objects), the whole payload's ``repr``
    (``parse: [json, python_repr, haystack_messages]`` reads every form). Anything else is no
    value."""
    if isinstance(value, dict):
        value = value.get("messages", value.get("replies"))
    if not isinstance(value, list):
        return None
    out: list[dict[str, Any]] = []
    for item in value:
        message = _chat_message(item)
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


def _token_count(usage: Mapping[str, Any], *keys: str) -> int | None:
    for key in keys:
        count = usage.get(key)
        if isinstance(count, int) and not isinstance(count, bool):
            return count
    return None


def parse_haystack_reply_meta(value: Any) -> dict[str, Any] | None:
    """The model and token usage of a chat generator's first reply, from the ``meta`` Haystack
    writes on it (``{"replies": [{"meta": {"model", "usage": {"prompt_tokens",
    "completion_tokens"}}, ...}]}``, or ``_meta`` in a ``repr``): Haystack's own tracer puts
    no model or usage attribute on its model-call span, only this payload, so the fields are
    read from it with ``key:`` (``model``, ``input_tokens``, ``output_tokens``). No reply, or
    no meta, is no value."""
    if isinstance(value, dict):
        value = value.get("replies")
    if not isinstance(value, list) or not value:
        return None
    reply = _chat_message(value[0])
    meta = reply.get("_meta") if isinstance(reply, dict) else None
    if not isinstance(meta, dict):
        return None
    out: dict[str, Any] = {}
    if isinstance(meta.get("model"), str) and meta["model"]:
        out["model"] = meta["model"]
    usage = meta.get("usage")
    if isinstance(usage, dict):
        tokens_in = _token_count(usage, "prompt_tokens", "input_tokens")
        tokens_out = _token_count(usage, "completion_tokens", "output_tokens")
        if tokens_in is not None:
            out["input_tokens"] = tokens_in
        if tokens_out is not None:
            out["output_tokens"] = tokens_out
    return out or None


def parse_haystack_agent_reply(value: Any) -> list[dict[str, Any]] | None:
    """The reply a Haystack ``Agent`` run ended with, from its output as OpenInference's
    instrumentor records it (``{"messages": [...]}``: the whole conversation, system prompt
    and tool results included, each ``ChatMessage`` a ``repr``, read by
    ``parse_haystack_messages``): the last message when it is the assistant's, as one
    message; no messages (``[]``) when the run ended on another one. Read whole, the
    conversation would put the prompt's example ids and the tools' results in the answer
    text. Anything that is not such a conversation is no value."""
    messages = parse_haystack_messages(value)
    if not messages:
        return None
    last = messages[-1]
    return [last] if last.get("role") == "assistant" else []


PARSERS: Mapping[str, Parser] = {
    "haystack_messages": parse_haystack_messages,
    "haystack_agent_reply": parse_haystack_agent_reply,
    "haystack_reply_meta": parse_haystack_reply_meta,
}
"""Registered names (as written in YAML ``parse:``) -> parser."""
