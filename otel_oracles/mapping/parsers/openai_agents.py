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

_REPR_PREFIXES = ("ResponseFunctionToolCall(",)


def parse_openai_agents_repr_tool_calls(messages: Any) -> Any:
    """The openai-agents-v2 instrumentation writes requested tool calls as text parts holding
    ``ResponseFunctionToolCall(arguments='...', call_id='...', name='...')`` repr strings;
    turn those parts into ``tool_call`` parts and leave every other part as it is."""
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
                call = parse_python_repr(content)
                if isinstance(call, dict) and call.get("name"):
                    parts.append(
                        tool_call_part(
                            call.get("call_id"),
                            call.get("name"),
                            call.get("arguments"),
                            "arguments" in call,
                        )
                    )
                    continue
            parts.append(part)
        out.append({**msg, "parts": parts})
    return out


PARSERS: Mapping[str, Parser] = {
    "openai_agents_repr_tool_calls": parse_openai_agents_repr_tool_calls,
}
"""Registered names (as written in YAML ``parse:``) -> parser."""
