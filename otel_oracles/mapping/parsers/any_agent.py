"""any-agent's own record of a model call's reply (``conventions/any-agent.yaml``).

any-agent (Mozilla AI) writes one ``call_llm <model>`` span per model call, whatever
framework runs the agent, and puts the reply in ``gen_ai.output``: the reply's text, or,
when the model asked for tools, a JSON list with one ``{"tool.name", "tool.args"}`` object per
requested call (``tool.args`` the call's arguments as JSON text; no call id). Read as text,
such a reply would be an answer made of JSON and the calls it asked for no calls at all."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_oracles.mapping.parsers._registry import Parser
from otel_oracles.mapping.parsers.messages import Message, text_part, tool_call_part
from otel_oracles.mapping.parsers.scalars import parse_json_or_text


def _calls(value: Any) -> list[dict[str, Any]] | None:
    """The requested calls of a reply that is any-agent's list of calls, else ``None``."""
    if not isinstance(value, list) or not value:
        return None
    if not all(isinstance(c, Mapping) and isinstance(c.get("tool.name"), str) for c in value):
        return None
    return [
        tool_call_part(None, c["tool.name"], c.get("tool.args"), "tool.args" in c) for c in value
    ]


def parse_any_agent_output(value: Any) -> list[Message] | None:
    """A ``call_llm`` span's ``gen_ai.output`` as the model's output message: tool-call parts
    (finish reason ``tool_call``) for a list of requested calls, a text part for any other
    text (a JSON answer included); ``None`` for an empty or non-text value."""
    if not isinstance(value, str) or not value.strip():
        return None
    calls = _calls(parse_json_or_text(value))
    if calls is not None:
        return [{"role": "assistant", "parts": calls, "finish_reason": "tool_call"}]
    return [{"role": "assistant", "parts": [text_part(value)]}]


PARSERS: Mapping[str, Parser] = {
    "any_agent_output": parse_any_agent_output,
}
"""Registered names (as written in YAML ``parse:``) -> parser."""
