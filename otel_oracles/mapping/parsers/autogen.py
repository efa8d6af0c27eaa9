"""AutoGen AgentChat's own model-client payloads, as tracers that dump them record them
(MLflow's AutoGen autolog, ``conventions/mlflow.yaml``, rule ``autogen_generation``).

AutoGen talks to a model through its ``ChatCompletionClient.create(messages)``, whose messages
are its own ``LLMMessage`` types, told apart by ``type`` (no ``role``): ``SystemMessage``,
``UserMessage``, ``AssistantMessage`` (its ``content`` a text or a list of ``FunctionCall``
``{id, name, arguments}``) and ``FunctionExecutionResultMessage`` (a list of
``FunctionExecutionResult`` ``{call_id, name, content, is_error}``; ``content`` is the tool's
return value made text with ``str()``, a Python repr for a dict). The reply is a
``CreateResult`` ``{finish_reason, content, usage, ...}`` whose ``content`` is again a text or
a list of ``FunctionCall``, and whose ``finish_reason`` says ``function_calls`` when it asked
for tools. Without this reader those calls are no parts at all: a call that asked for tools
read as an empty reply, and a run's tool calls as none."""

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
from otel_oracles.mapping.parsers.python_literals import parse_python_literal
from otel_oracles.mapping.parsers.scalars import parse_json, parse_json_or_text, parse_string

_ROLES = {
    "SystemMessage": "system",
    "UserMessage": "user",
    "AssistantMessage": "assistant",
    "FunctionExecutionResultMessage": "tool",
}
"""AutoGen's ``LLMMessage`` types -> GenAI roles."""


def _function_calls(content: Any) -> list[dict[str, Any]] | None:
    """A ``content`` that is a list of ``FunctionCall`` dumps as tool-call parts; ``None``
    for any other content (a text, or a list holding anything else)."""
    if not isinstance(content, list) or not content:
        return None
    if not all(isinstance(c, dict) and isinstance(c.get("name"), str) for c in content):
        return None
    return [
        tool_call_part(c.get("id"), c["name"], c.get("arguments"), "arguments" in c)
        for c in content
    ]


def _result(item: Mapping[str, Any]) -> dict[str, Any]:
    """One ``FunctionExecutionResult`` as a tool response: the tool's value read back from its
    text (JSON, or the Python repr ``str()`` made), and a failure (``is_error``: AutoGen caught
    the tool's exception and hands the model its message) as ``{"error": <message>}``, since
    the message alone does not say it is an error."""
    has = "content" in item
    value = parse_python_literal(parse_json_or_text(item.get("content"))) if has else None
    if has and item.get("is_error") is True:
        value = {"error": parse_string(item.get("content"))}
    return tool_response_part(item.get("call_id"), value, has)


def _content_parts(content: Any) -> list[dict[str, Any]]:
    calls = _function_calls(content)
    if calls is not None:
        return calls
    if isinstance(content, list):
        return [text_part(c) for c in content if isinstance(c, str)]
    return [text_part(content)] if content is not None else []


def _message(item: Mapping[str, Any]) -> Message | None:
    role = _ROLES.get(str(item.get("type")))
    if role is None:
        return None
    content = item.get("content")
    if role == "tool":
        results = content if isinstance(content, list) else []
        parts = [_result(r) for r in results if isinstance(r, dict)]
    else:
        parts = _content_parts(content)
    return {"role": role, "parts": parts}


def parse_autogen_messages(value: Any) -> list[Message] | None:
    """AutoGen's model-client request (``{"messages": [LLMMessage, ...]}``, or the list
    itself) or its reply (a ``CreateResult``) as GenAI messages; ``None`` for anything else,
    and for a list holding an item that is no ``LLMMessage`` (not AutoGen's shape: another
    reader's)."""
    value = parse_json(value)
    if isinstance(value, dict) and "finish_reason" in value and "content" in value:
        reply: Message = {"role": "assistant", "parts": _content_parts(value["content"])}
        reason = parse_string(value.get("finish_reason"))
        if reason is not None:
            reply["finish_reason"] = reason
        return [reply]
    if isinstance(value, dict):
        value = value.get("messages")
    if not isinstance(value, list):
        return None
    out = [_message(m) if isinstance(m, dict) else None for m in value]
    if not out or any(m is None for m in out):
        return None
    return [m for m in out if m is not None]


PARSERS: Mapping[str, Parser] = {
    "autogen_messages": parse_autogen_messages,
}
"""Registered names (as written in YAML ``parse:``) -> parser."""
