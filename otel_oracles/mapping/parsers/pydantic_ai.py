"""pydantic-ai's own message objects, dumped as JSON (``conventions/mlflow.yaml``: MLflow's
pydantic-ai autolog records a model request's ``messages`` and its ``ModelResponse`` this way).

A pydantic-ai message is a ``ModelRequest`` (``{"kind": "request", "parts": [...],
"instructions"}``: parts ``system-prompt``, ``user-prompt``, ``tool-return`` and
``retry-prompt``) or a ``ModelResponse`` (``{"kind": "response", "parts": [...],
"finish_reason"}``: parts ``text``, ``tool-call``, ``thinking``), each part typed by its
``part_kind``. A tool's return value comes back as a ``tool-return`` part and a tool that
asked for a retry (``ModelRetry``) as a ``retry-prompt`` part, both naming the model's call id
(``tool_call_id``); the retry prompt's text is the error the model was shown.
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

_REQUEST_ROLES = {"system-prompt": "system", "user-prompt": "user"}


def _request_messages(node: dict[str, Any], parts: list[Any]) -> list[Message]:
    """A ``ModelRequest``'s parts as GenAI messages, one per run of parts with the same role
    (a request may hold a tool's return and the user's next prompt). Its ``instructions`` (the
    agent's system prompt, repeated on every request) are not a message of the conversation."""
    out: list[Message] = []

    def add(role: str, part: dict[str, Any]) -> None:
        if out and out[-1]["role"] == role:
            out[-1]["parts"].append(part)
        else:
            out.append({"role": role, "parts": [part]})

    for part in parts:
        if not isinstance(part, dict):
            continue
        kind = part.get("part_kind")
        if kind in _REQUEST_ROLES:
            add(_REQUEST_ROLES[kind], text_part(part.get("content")))
        elif kind == "tool-return" or (kind == "retry-prompt" and part.get("tool_call_id")):
            response = part.get("content")
            if kind == "retry-prompt":
                response = {"error": response}  # the model was told the call failed
            add("tool", tool_response_part(part.get("tool_call_id"), response, "content" in part))
        elif kind == "retry-prompt":
            add("user", text_part(part.get("content")))
    return out


def _response_message(node: dict[str, Any], parts: list[Any]) -> Message:
    """A ``ModelResponse`` as one assistant message, with pydantic-ai's finish reason."""
    out: list[dict[str, Any]] = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        kind = part.get("part_kind")
        if kind == "text":
            out.append(text_part(part.get("content")))
        elif kind == "tool-call":
            out.append(
                tool_call_part(
                    part.get("tool_call_id"),
                    part.get("tool_name"),
                    part.get("args"),
                    "args" in part,
                )
            )
        elif kind == "thinking" and isinstance(part.get("content"), str):
            out.append({"type": "reasoning", "content": part["content"]})
    message: Message = {"role": "assistant", "parts": out}
    if isinstance(node.get("finish_reason"), str):
        message["finish_reason"] = node["finish_reason"]
    return message


def _messages(node: Any) -> list[Message] | None:
    """One pydantic-ai message as GenAI messages; ``None`` for anything else."""
    if not isinstance(node, dict) or not isinstance(node.get("parts"), list):
        return None
    if node.get("kind") == "request":
        return _request_messages(node, node["parts"])
    if node.get("kind") == "response":
        return [_response_message(node, node["parts"])]
    return None


def parse_pydantic_ai_messages(value: Any) -> list[Message] | None:
    """pydantic-ai messages in the GenAI parts format: a list of them, an object holding them
    under ``messages`` (a model request's inputs), or one message (a ``ModelResponse``). A
    message of an unknown shape makes the whole value no value (no partial conversation)."""
    value = parse_json(value)
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        value = value["messages"]
    nodes = value if isinstance(value, list) else [value]
    out: list[Message] = []
    for node in nodes:
        messages = _messages(node)
        if messages is None:
            return None
        out.extend(messages)
    return out or None


PARSERS: Mapping[str, Parser] = {
    "pydantic_ai_messages": parse_pydantic_ai_messages,
}
"""Registered names (as written in YAML ``parse:``) -> parser."""
