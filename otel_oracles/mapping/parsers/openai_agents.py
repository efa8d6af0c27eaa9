"""The OpenAI Agents SDK instrumentation, python-contrib openai-agents-v2 0.1.0
(``conventions/openai-agents.yaml``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_oracles.mapping.parsers._registry import Parser
from otel_oracles.mapping.parsers.messages import (
    tool_call_part,
)
from otel_oracles.mapping.parsers.python_literals import parse_python_repr

_REPR_PREFIXES = ("ResponseFunctionToolCall(", "[ChatCompletionMessageToolCall(")


def parse_openai_agents_repr_tool_calls(messages: Any) -> Any:
    """Requested tool calls written as text parts holding Python reprs of the openai client's
    objects: one ``ResponseFunctionToolCall(arguments='...', call_id='...', name='...')`` (the
    openai-agents-v2 instrumentation), or the list of ``ChatCompletionMessageToolCall(
    function=Function(arguments='...', name='...'), id='...')`` a LiteLLM response carries
    (OpenLLMetry's CrewAI instrumentation writes that list as the answer's text). Turn those
    parts into ``tool_call`` parts and leave every other part as it is."""
    if not isinstance(messages, list):
        return messages
    out = []
    for msg in messages:
        if not isinstance(msg, dict):
            out.append(msg)
            continue
        parts = []
        for part in msg.get("parts") or []:
            content = part.get("content") if isinstance(part, dict) else None
            if (
                isinstance(content, str)
                and part.get("type") == "text"
                and content.startswith(_REPR_PREFIXES)
            ):
                calls = _repr_calls(parse_python_repr(content))
                if calls:
                    parts += calls
                    continue
            parts.append(part)
        out.append({**msg, "parts": parts})
    return out


def _repr_calls(value: Any) -> list[dict[str, Any]]:
    """``tool_call`` parts from a parsed repr: one Responses API call, or a list of
    chat-completions calls (each ``{"function": {"name", "arguments"}, "id"}``); an empty
    list when the value is neither."""
    if isinstance(value, dict) and value.get("name"):
        return [
            tool_call_part(
                value.get("call_id"),
                value.get("name"),
                value.get("arguments"),
                "arguments" in value,
            )
        ]
    if not isinstance(value, list) or not value:
        return []
    out = []
    for call in value:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not function.get("name"):
            return []
        out.append(
            tool_call_part(
                call.get("id"), function["name"], function.get("arguments"), "arguments" in function
            )
        )
    return out


PARSERS: Mapping[str, Parser] = {
    "openai_agents_repr_tool_calls": parse_openai_agents_repr_tool_calls,
}
"""Registered names (as written in YAML ``parse:``) -> parser."""
