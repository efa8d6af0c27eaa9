"""OTel GenAI semantic conventions (``conventions/otel-genai.yaml``): the v1.37+ parts format,
system instructions, retrieval documents, and the v1.28-era per-message events.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_oracles._native import parse_genai_messages as parse_genai_messages
from otel_oracles._native import parse_streamed_partials as parse_streamed_partials
from otel_oracles.mapping.parsers._registry import Parser
from otel_oracles.mapping.parsers.messages import (
    Message,
    text_part,
    tool_response_part,
)
from otel_oracles.mapping.parsers.providers import openai_message
from otel_oracles.mapping.parsers.scalars import (
    parse_json,
)
from otel_oracles.model.defaults import DEFAULT_PLACEHOLDERS
from otel_oracles.model.span import EventRecord

# ``genai_messages`` (``gen_ai.input.messages`` / ``gen_ai.output.messages``: a JSON string,
# ``bytes`` or the structured AnyValue array of ``{role, parts[], finish_reason?}``) is the
# compiled core's (native/core/src/parsers/genai.rs, bound in native/python/src/parsers.rs),
# called by the mapper with no Python frame between. It returns the normalised messages, or
# ``None`` for a value holding no message list or object, and reads what producers write
# besides the semconv shape: one message instead of a list; a provider chat message (no
# ``parts`` list but ``content`` / ``tool_calls``, read as ``providers.openai_message``
# reads it); tool-call arguments as JSON object text (pydantic-ai); ``result`` for
# ``response`` (pydantic-ai, semconv examples before #323); provider content blocks where
# parts belong (read as ``providers.block_part`` reads them); provider role names. Parts and
# values it keeps are the very objects it was given.
#
# ``streamed_partials`` (after ``genai_messages``) is the core's too: a model call's output
# messages without the partial chunks of a stream that its last message assembles. When
# every message but the last is a dict whose ``finish_reason`` is ``""`` (a chunk the stream
# had not finished) and the last has one, the last alone. Google ADK with
# ``StreamingMode.SSE`` records every partial event of the call as an output message (a
# tool call first without its arguments, text 16 characters at a time) before the
# aggregated one; read whole, one requested call would count as several and the text as
# twice the answer. Anything else is returned unchanged.


def parse_genai_parts_as_system(value: Any) -> list[Message] | None:
    """``gen_ai.system_instructions`` (an array of parts) as one system message."""
    value = parse_json(value)
    if not isinstance(value, list):
        return None
    return [{"role": "system", "parts": [p for p in value if isinstance(p, dict)]}]


_EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}


_WHOLE_BODY_KEYS = ("body", "gen_ai.event.content")
"""Span-event attributes that hold the whole event body as one JSON string: ``body``, and
``gen_ai.event.content``, where Azure's SDKs (``azure-ai-inference``'s
``AIInferenceInstrumentor``) write each message event's JSON."""


def _event_payload(event: EventRecord) -> Any:
    """Log-based events carry content in the body; span-event producers put it in
    attributes (sometimes as one JSON string under ``body`` or ``gen_ai.event.content``)."""
    if event.body is not None:
        return parse_json(event.body)
    attrs = {k: v for k, v in event.attributes.items() if k not in ("gen_ai.system", "event.name")}
    for key in _WHOLE_BODY_KEYS:
        if set(attrs) == {key}:
            return parse_json(attrs[key])
    return {k: parse_json(v) if k in ("tool_calls", "message") else v for k, v in attrs.items()}


def _unwrapped(body: dict[str, Any]) -> dict[str, Any]:
    """An event body whose ``content`` is not the message's content but the whole message
    (``{role, parts}``: ADK for Go writes the Gemini ``Content`` there, with ``index`` and
    ``finish_reason`` beside it) read as that message; a ``content`` that is a redaction
    placeholder (``<elided>`` with capture off) read as content not captured."""
    content = body.get("content")
    if isinstance(content, dict) and isinstance(content.get("parts"), list):
        return {**{k: v for k, v in body.items() if k != "content"}, **content}
    if isinstance(content, str) and content in DEFAULT_PLACEHOLDERS:
        return {k: v for k, v in body.items() if k != "content"}
    return body


def parse_legacy_input_events(events: Any) -> list[Message] | None:
    """``gen_ai.{system,user,assistant,tool}.message`` events, in order, as input messages.
    With content capture off the bodies are empty or keep only ids and tool names. A body
    holding a whole message keeps that message's own role (ADK for Go logs every request
    content, the model's turns and the tool responses too, as ``gen_ai.user.message``)."""
    if not isinstance(events, list):
        return None
    out: list[Message] = []
    for event in events:
        role = _EVENT_ROLES.get(event.name)
        if role is None:
            continue
        payload = _event_payload(event)
        body = _unwrapped(dict(payload)) if isinstance(payload, dict) else {}
        body.setdefault("role", role)
        if role == "tool" and "content" not in body and "id" in body:
            out.append({"role": "tool", "parts": [tool_response_part(body["id"], None, False)]})
            continue
        msg = openai_message(body)
        if not msg["parts"] and role != "tool":
            msg["parts"] = [text_part(None)]
        out.append(msg)
    return out or None


def parse_legacy_choice_events(events: Any) -> list[Message] | None:
    """``gen_ai.choice`` events as output messages (``{index, finish_reason, message}``)."""
    if not isinstance(events, list):
        return None
    out: list[Message] = []
    for event in events:
        if event.name != "gen_ai.choice":
            continue
        payload = _event_payload(event)
        body = payload if isinstance(payload, dict) else {}
        if "message" not in body and isinstance(body.get("content"), dict | str):
            # {index, content: {role, parts}, finish_reason} (ADK for Go)
            whole = _unwrapped(body)
            body = {**body, "message": whole} if whole is not body else body
        message = body.get("message")
        if isinstance(message, dict):
            msg_body = dict(message)
        elif isinstance(message, list | str):
            # Anthropic-style producers put the content-block list (or text) itself here.
            msg_body = {"content": message}
        else:
            msg_body = {}
        if "tool_calls" in body and "tool_calls" not in msg_body:
            # OpenLLMetry (use_attributes=False) puts tool_calls beside message, not in it.
            msg_body["tool_calls"] = body["tool_calls"]
        msg = openai_message(msg_body, output=True)
        if not msg["parts"]:
            msg["parts"] = [text_part(None)]
        reason = body.get("finish_reason", body.get("stop_reason"))
        if reason is not None:
            msg["finish_reason"] = reason
        out.append(msg)
    return out or None


def parse_legacy_finish_reasons(events: Any) -> list[str] | None:
    if not isinstance(events, list):
        return None
    reasons = []
    for event in events:
        payload = _event_payload(event)
        if isinstance(payload, dict) and payload.get("finish_reason") is not None:
            reasons.append(str(payload["finish_reason"]))
    return reasons or None


def parse_genai_documents(value: Any) -> list[dict[str, Any]] | None:
    """``gen_ai.retrieval.documents``: an array of ``{id?, score?, ...}``."""
    value = parse_json(value)
    if isinstance(value, list):
        return [d for d in value if isinstance(d, dict)] or None
    return None


def _document(item: Any) -> dict[str, Any] | None:
    """One retrieved document as ``{id?, content?, metadata?, score?}``: a GenAI / OpenInference
    document as it is, LangChain's ``Document`` dump (``page_content``), or LlamaIndex's
    ``NodeWithScore`` dump (``{"node": {"id_", "text", "metadata"}, "score"}``)."""
    if not isinstance(item, dict):
        return None
    node = item.get("node")
    if isinstance(node, dict):  # LlamaIndex NodeWithScore
        doc = {
            "id": node.get("id_", node.get("id")),
            "content": node.get("text"),
            "metadata": node.get("metadata"),
            "score": item.get("score"),
        }
    elif "page_content" in item:  # LangChain Document
        doc = {
            "id": item.get("id"),
            "content": item.get("page_content"),
            "metadata": item.get("metadata"),
        }
    else:
        return item
    return {k: v for k, v in doc.items() if v is not None}


def parse_document_list(value: Any) -> list[dict[str, Any]] | None:
    """The documents a retriever returned, as a list (JSON text or an array attribute) or an
    object holding it under ``documents`` (OpenLLMetry's ``{"documents": [...], "count"}``),
    in the shapes frameworks dump them (``_document``). An empty list is kept: the retrieval
    found nothing (what degraded checks need to see), which is not the same as documents
    that were not captured (``None``: no list at all)."""
    value = parse_json(value)
    if isinstance(value, dict):
        value = value.get("documents")
    if not isinstance(value, list | tuple):
        return None
    docs = [d for d in map(_document, value) if d is not None]
    return docs if docs or not value else None


def parse_no_documents_when_zero(value: Any) -> list[dict[str, Any]] | None:
    """A retrieval's document count (OpenLIT's ``gen_ai.retrieval.document_count``) as its
    documents where it says there were none (``[]``); any other count says nothing of what
    they were (``None``)."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    return [] if str(value).strip() == "0" else None


def parse_assistant_text(value: Any) -> list[Message] | None:
    """A model call's answer recorded as bare text (``gen_ai.completion`` as Quarkus
    LangChain4j writes it: the response's text, no JSON) as one assistant message. Text that
    parses as a JSON list or object is a structured form some other parser owns, and no other
    value is an answer: ``None`` for both, so the field stays uncaptured rather than guessed."""
    if not isinstance(value, str) or not value.strip():
        return None
    if isinstance(parse_json(value), list | dict):
        return None
    return [{"role": "assistant", "parts": [text_part(value)]}]


PARSERS: Mapping[str, Parser] = {
    "genai_messages": parse_genai_messages,
    "streamed_partials": parse_streamed_partials,
    "assistant_text": parse_assistant_text,
    "genai_parts_as_system": parse_genai_parts_as_system,
    "genai_documents": parse_genai_documents,
    "document_list": parse_document_list,
    "no_documents_when_zero": parse_no_documents_when_zero,
    "legacy_input_events": parse_legacy_input_events,
    "legacy_choice_events": parse_legacy_choice_events,
    "legacy_finish_reasons": parse_legacy_finish_reasons,
}
"""Registered names (as written in YAML ``parse:``) -> parser."""
