"""Firebase Genkit's own span payloads (``conventions/genkit.yaml``).

Genkit writes each action's input and output as JSON in ``genkit:input`` / ``genkit:output``;
a model action's are Genkit's ``GenerateRequest`` (``{"messages": [...], "tools", "config"}``)
and ``GenerateResponse`` (``{"message": {...}, "finishReason", "usage": {"inputTokens",
"outputTokens"}, "raw": <provider response>}``). A Genkit message is ``{"role": "system" |
"user" | "model" | "tool", "content": [part, ...]}``, each part one of ``{"text"}``,
``{"toolRequest": {"name", "ref", "input"}}``, ``{"toolResponse": {"name", "ref",
"output"}}`` (``ref`` is the model's call id) or media / data / reasoning parts, which carry no
text, call or result.
"""

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
from otel_oracles.mapping.parsers.scalars import parse_json

_ROLES = {"model": "assistant"}
"""Genkit role names that differ from the GenAI ones (``system``, ``user``, ``tool`` agree)."""


def _genkit_message(node: Any) -> Message | None:
    """One Genkit message in the GenAI parts format; ``None`` for anything else."""
    if not isinstance(node, dict) or not isinstance(node.get("role"), str):
        return None
    content = node.get("content")
    if not isinstance(content, list):
        return None
    parts: list[dict[str, Any]] = []
    for item in content:
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("text"), str):
            parts.append(text_part(item["text"]))
        elif isinstance(item.get("toolRequest"), dict):
            call = item["toolRequest"]
            parts.append(
                tool_call_part(
                    call.get("ref"), call.get("name"), call.get("input"), "input" in call
                )
            )
        elif isinstance(item.get("toolResponse"), dict):
            reply = item["toolResponse"]
            parts.append(
                tool_response_part(reply.get("ref"), reply.get("output"), "output" in reply)
            )
    role = node["role"]
    return {"role": _ROLES.get(role, role), "parts": parts}


def parse_genkit_messages(value: Any) -> list[Message] | None:
    """A model action's input (``genkit:input``, a ``GenerateRequest``): its ``messages`` in
    the GenAI parts format. A message of an unknown shape makes the whole input no value (no
    partial conversation)."""
    value = parse_json(value)
    messages = value.get("messages") if isinstance(value, dict) else None
    if not isinstance(messages, list):
        return None
    out: list[Message] = []
    for node in messages:
        message = _genkit_message(node)
        if message is None:
            return None
        out.append(message)
    return out or None


def parse_genkit_response(value: Any) -> list[Message] | None:
    """A model action's output (``genkit:output``, a ``GenerateResponse``): its ``message`` as
    one assistant message, with Genkit's ``finishReason``. Genkit reports ``stop`` for a turn
    that requested tools too; the tool-call parts show the request."""
    value = parse_json(value)
    if not isinstance(value, dict):
        return None
    message = _genkit_message(value.get("message"))
    if message is None:
        return None
    if isinstance(value.get("finishReason"), str):
        message["finish_reason"] = value["finishReason"]
    return [message]


def _usage(value: Any, key: str) -> int | None:
    value = parse_json(value)
    usage = value.get("usage") if isinstance(value, dict) else None
    count = usage.get(key) if isinstance(usage, dict) else None
    return count if isinstance(count, int) and not isinstance(count, bool) else None


def parse_genkit_input_tokens(value: Any) -> int | None:
    """``usage.inputTokens`` of a ``GenerateResponse`` (``genkit:output``)."""
    return _usage(value, "inputTokens")


def parse_genkit_output_tokens(value: Any) -> int | None:
    """``usage.outputTokens`` of a ``GenerateResponse`` (``genkit:output``)."""
    return _usage(value, "outputTokens")


PARSERS: Mapping[str, Parser] = {
    "genkit_messages": parse_genkit_messages,
    "genkit_response": parse_genkit_response,
    "genkit_input_tokens": parse_genkit_input_tokens,
    "genkit_output_tokens": parse_genkit_output_tokens,
}
"""Registered names (as written in YAML ``parse:``) -> parser."""
