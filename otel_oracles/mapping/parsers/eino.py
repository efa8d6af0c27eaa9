"""CloudWeGo Eino's message dumps, as its callback handlers record them (``conventions/eino.yaml``).

Eino's APMPlus handler (``eino-ext/callbacks/apmplus``) writes a chat model's output as
``gen_ai.completion.N.role`` / ``.content`` when the message has text, and otherwise (a turn
that only requests tools) as the JSON dump of Eino's ``[]*schema.Message`` in
``gen_ai.completion.0.content`` with no role: ``{"role", "content", "tool_calls": [{"id",
"type", "function": {"name", "arguments"}}], "tool_call_id", "reasoning_content",
"response_meta": {"finish_reason", "usage"}}``. That is the OpenAI chat shape plus Eino's
``response_meta``, where the finish reason of such a turn lives (the handler writes
``gen_ai.response.finish_reason`` only beside text).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_oracles.mapping.parsers._registry import Parser
from otel_oracles.mapping.parsers.messages import Message
from otel_oracles.mapping.parsers.providers import openai_message
from otel_oracles.mapping.parsers.scalars import parse_json


def parse_eino_messages(value: Any) -> list[Message] | None:
    """A JSON list of Eino ``schema.Message`` dumps in the GenAI parts format, each with the
    finish reason of its ``response_meta``. Anything else (plain answer text, a list holding
    something that is not a message with a role) is no value, so the rule's next source (the
    indexed ``gen_ai.completion.N.*`` keys) is read instead; a partial list is never read."""
    value = parse_json(value)
    if not isinstance(value, list) or not value:
        return None
    out: list[Message] = []
    for node in value:
        if not isinstance(node, dict) or not isinstance(node.get("role"), str):
            return None
        message = openai_message(node)
        meta = node.get("response_meta")
        reason = meta.get("finish_reason") if isinstance(meta, dict) else None
        if isinstance(reason, str) and reason:
            message["finish_reason"] = reason
        out.append(message)
    return out


PARSERS: Mapping[str, Parser] = {"eino_messages": parse_eino_messages}
"""Registered names (as written in YAML ``parse:``) -> parser."""
