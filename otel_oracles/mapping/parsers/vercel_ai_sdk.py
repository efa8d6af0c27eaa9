"""The Vercel AI SDK's legacy ``ai.*`` telemetry (``conventions/vercel-ai-sdk.yaml``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_oracles.mapping.parsers._registry import Parser
from otel_oracles.mapping.parsers.messages import (
    Message,
    text_part,
    tool_call_part,
    tool_response_part,
)
from otel_oracles.mapping.parsers.scalars import (
    parse_json,
)


def parse_vercel_messages(value: Any) -> list[Message] | None:
    """``ai.prompt.messages``: AI SDK messages whose content is a string or a list of parts
    (``text``, ``tool-call`` with ``toolCallId``/``toolName``/``args``|``input``,
    ``tool-result`` with ``result``|``output``)."""
    value = parse_json(value)
    if not isinstance(value, list):
        return None
    out: list[Message] = []
    for msg in value:
        if not isinstance(msg, dict):
            continue
        content = msg.get("content")
        parts: list[dict[str, Any]] = []
        if isinstance(content, str):
            parts.append(text_part(content))
        for item in content if isinstance(content, list) else []:
            if not isinstance(item, dict):
                continue
            kind = item.get("type")
            if kind == "text":
                parts.append(text_part(item.get("text")))
            elif kind == "tool-call":
                key = "args" if "args" in item else "input"
                parts.append(
                    tool_call_part(
                        item.get("toolCallId"), item.get("toolName"), item.get(key), key in item
                    )
                )
            elif kind == "tool-result":
                key = "result" if "result" in item else "output"
                parts.append(tool_response_part(item.get("toolCallId"), item.get(key), key in item))
        out.append({"role": msg.get("role"), "parts": parts})
    return out or None


def parse_vercel_response(values: Any) -> list[Message] | None:
    """``ai.response.text`` + ``ai.response.toolCalls`` (+ ``ai.response.finishReason``) as
    one assistant output message."""
    if not isinstance(values, Mapping) or not values:
        return None
    parts: list[dict[str, Any]] = []
    if values.get("ai.response.text") is not None:
        parts.append(text_part(values["ai.response.text"]))
    calls = parse_json(values.get("ai.response.toolCalls"))
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, dict):
            key = "args" if "args" in call else "input"
            parts.append(
                tool_call_part(
                    call.get("toolCallId"), call.get("toolName"), call.get(key), key in call
                )
            )
    if not parts:
        return None
    msg: Message = {"role": "assistant", "parts": parts}
    if values.get("ai.response.finishReason") is not None:
        msg["finish_reason"] = values["ai.response.finishReason"]
    return [msg]


PARSERS: Mapping[str, Parser] = {
    "vercel_messages": parse_vercel_messages,
    "vercel_response": parse_vercel_response,
}
"""Registered names (as written in YAML ``parse:``) -> parser."""
