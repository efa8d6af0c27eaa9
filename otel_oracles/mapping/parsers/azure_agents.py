"""Thread messages as the Azure AI Agents SDK's tracing records them.

``AIAgentsInstrumentor`` (``azure-ai-agents``) writes each thread message the client creates
or lists as a ``gen_ai.<role>.message`` span event whose ``gen_ai.event.content`` attribute
is the message's JSON (``{"content": ..., "role": ...}``), beside attributes of its own
(``gen_ai.thread.id``, ``gen_ai.message.id``, ``gen_ai.agent.id``, ...), so the GenAI
event parsers, which take such a key as the whole body only when it is the event's one
attribute, do not read it. A listed message's ``content`` is the service's content item,
``{"text": {"value": ...}}`` (a list of them for several items), not a string; with content
recording off the key is absent. A message the model did not finish carries the service's
``incomplete_details`` (``{"reason": "max_tokens" | "content_filter" | ...}``), read as its
finish reason so a cut-off answer is never graded as a complete one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_oracles.mapping.parsers.messages import Message, text_part, tool_response_part
from otel_oracles.mapping.parsers.scalars import parse_json, parse_json_or_text

EVENT_CONTENT = "gen_ai.event.content"
_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}


def _body(event: Any) -> dict[str, Any] | None:
    """The message JSON of one ``gen_ai.<role>.message`` event, or ``None``."""
    attributes = getattr(event, "attributes", None)
    if not isinstance(attributes, Mapping):
        return None
    body = parse_json(attributes.get(EVENT_CONTENT))
    return body if isinstance(body, dict) else None


def _item_text(item: Any) -> str | None:
    """The text of one content item: a string, or the service's ``{"text": {"value"}}``."""
    if isinstance(item, str):
        return item
    if isinstance(item, Mapping):
        text = item.get("text")
        if isinstance(text, Mapping) and isinstance(text.get("value"), str):
            return str(text["value"])
        if isinstance(text, str):
            return text
    return None


def _content_parts(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Text parts of a message body; ``[text_part(None)]`` when its content is not recorded
    (recording off, or an item no text can be read from: never an empty answer)."""
    if "content" not in body:
        return [text_part(None)]
    content = body["content"]
    items = content if isinstance(content, list) else [content]
    texts = [_item_text(item) for item in items]
    if not texts or any(text is None for text in texts):
        return [text_part(None)]
    return [text_part(text) for text in texts]


def _finish_reason(body: Mapping[str, Any]) -> str | None:
    details = body.get("incomplete_details")
    if isinstance(details, Mapping) and isinstance(details.get("reason"), str):
        return str(details["reason"])
    return None


def parse_azure_thread_messages(events: Any) -> list[Message] | None:
    """Assistant messages of the thread, in event order, as output messages (each with its
    ``finish_reason`` when the service marked it incomplete); ``None`` when there is none."""
    if not isinstance(events, list):
        return None
    out: list[Message] = []
    for event in events:
        if _ROLES.get(getattr(event, "name", "")) != "assistant":
            continue
        body = _body(event)
        if body is None:
            continue
        message: Message = {"role": "assistant", "parts": _content_parts(body)}
        reason = _finish_reason(body)
        if reason is not None:
            message["finish_reason"] = reason
        out.append(message)
    return out or None


def parse_azure_thread_finish_reasons(events: Any) -> list[str] | None:
    """The last assistant message's ``incomplete_details.reason`` as the finish reasons."""
    messages = parse_azure_thread_messages(events)
    if not messages:
        return None
    reason = messages[-1].get("finish_reason")
    return [reason] if isinstance(reason, str) else None


def parse_azure_tool_outputs(events: Any) -> list[Message] | None:
    """The tool outputs a ``submit_tool_outputs`` call posted to the run (one
    ``gen_ai.tool.message`` event per output, ``{"content": ..., "id": <call id>}``), as the
    tool messages the service's next model call is handed: one ``tool_call_response`` part
    per output, by call id. The ids are kept whatever the content switch says; with recording
    off the content is ``""``, read as not captured (never an empty result). An output the
    SDK posted for a call that opened no span (a function the toolset lacks, arguments it
    refused) is seen here only, by its id: the evidence that the run made a call no step
    shows. ``None`` when no output carries an id."""
    if not isinstance(events, list):
        return None
    parts: list[dict[str, Any]] = []
    for event in events:
        if _ROLES.get(getattr(event, "name", "")) != "tool":
            continue
        body = _body(event)
        if body is None or not isinstance(body.get("id"), str) or not body["id"]:
            continue
        content = body.get("content")
        has_content = isinstance(content, str) and content != ""
        response = parse_json_or_text(content) if has_content else None
        parts.append(tool_response_part(body["id"], response, has_content))
    if not parts:
        return None
    return [{"role": "tool", "parts": parts}]


PARSERS = {
    "azure_thread_messages": parse_azure_thread_messages,
    "azure_thread_finish_reasons": parse_azure_thread_finish_reasons,
    "azure_tool_outputs": parse_azure_tool_outputs,
}
"""Registered names (as written in YAML ``parse:``) -> parser."""
