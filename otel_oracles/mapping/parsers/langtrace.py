"""Model-call messages as Langtrace's provider instrumentations record them (OpenAI, LiteLLM:
the ``gen_ai.content.prompt`` / ``gen_ai.content.completion`` span events,
``conventions/langtrace.yaml``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_oracles.mapping.parsers._registry import Parser
from otel_oracles.mapping.parsers.messages import Message
from otel_oracles.mapping.parsers.providers import openai_message


def parse_langtrace_messages(value: Any) -> list[Message] | None:
    """The messages of a Langtrace ``gen_ai.prompt`` / ``gen_ai.completion`` event: OpenAI chat
    messages, except that Langtrace writes an assistant turn's tool calls as the ``content``
    list (``[{"id", "type": "function", "function": {...}}]``) of its completion, and, in the
    next call's prompt, replaces that turn by a list of empty calls (``[{"id": "", "type":
    ""}]``): such an entry is an assistant turn whose content was not recorded (a message
    with no parts, never an invented call). ``None`` for anything but a list of messages."""
    if not isinstance(value, list) or not value:
        return None
    out: list[Message] = []
    for item in value:
        if isinstance(item, list):
            out.append({"role": "assistant", "parts": []})
            continue
        if not isinstance(item, dict) or "role" not in item:
            return None
        calls = _content_tool_calls(item.get("content"))
        if calls:
            item = {**item, "content": None, "tool_calls": calls}
        out.append(openai_message(item, output=item.get("role") == "assistant"))
    return out


def _content_tool_calls(content: Any) -> list[dict[str, Any]]:
    """Tool calls written as a message's content list (``{"type": "function", "function":
    {"name", "arguments"}, "id"}`` items); empty when the content is anything else."""
    if not isinstance(content, list) or not content:
        return []
    if not all(isinstance(c, dict) and isinstance(c.get("function"), dict) for c in content):
        return []
    return list(content)


PARSERS: Mapping[str, Parser] = {
    "langtrace_messages": parse_langtrace_messages,
}
"""Registered names (as written in YAML ``parse:``) -> parser."""
