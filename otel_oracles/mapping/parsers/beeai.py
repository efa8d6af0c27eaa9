"""BeeAI Framework for TypeScript under ``@arizeai/openinference-instrumentation-beeai``
(``conventions/beeai.yaml``).

That instrumentation turns each of BeeAI's emitter events into a span of its own and names a
tool's spans after the emitter's namespace, which camel-cases the tool's name
(``tool.dynamic.deleteRecords.success-1`` for ``delete_records``). The name the model called
is only in the span's ``metadata``, the event's context: for a tool run by an agent,
``{"state": ..., "toolCallMsg": {"toolName", "toolCallId", "args"}}``, kept whatever the
instrumentation's content switch says.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_oracles.mapping.parsers._registry import Parser


def parse_beeai_tool_call(value: Any) -> dict[str, Any] | None:
    """The tool call a BeeAI tool event's context (``metadata``, parsed JSON) records:
    ``{"name", "id", "arguments"}`` from its ``toolCallMsg``, each only when it has the
    expected type; ``None`` when the context holds no tool call (a tool run outside an
    agent's loop), so the rule's next source is tried."""
    if not isinstance(value, dict):
        return None
    message = value.get("toolCallMsg")
    if not isinstance(message, dict):
        return None
    call: dict[str, Any] = {}
    if isinstance(name := message.get("toolName"), str) and name:
        call["name"] = name
    if isinstance(call_id := message.get("toolCallId"), str) and call_id:
        call["id"] = call_id
    if isinstance(arguments := message.get("args"), dict):
        call["arguments"] = arguments
    return call or None


PARSERS: Mapping[str, Parser] = {
    "beeai_tool_call": parse_beeai_tool_call,
}
"""Registered names (as written in YAML ``parse:``) -> parser."""
