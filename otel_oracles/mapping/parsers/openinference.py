"""OpenInference's flattened attributes (``conventions/openinference.yaml``; also ``dspy.yaml``
and ``haystack.yaml``): ``llm.*_messages.N.message.*`` and ``retrieval.documents.N.document.*``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_oracles.mapping.parsers._registry import Parser
from otel_oracles.mapping.parsers.messages import (
    Message,
    indexed,
    text_part,
    tool_call_part,
    tool_response_part,
    unflatten,
)
from otel_oracles.mapping.parsers.scalars import (
    parse_json,
    parse_json_or_text,
)


def parse_openinference_messages(flat: Any) -> list[Message] | None:
    """``llm.{input,output}_messages.N.message.*`` (prefix already stripped)."""
    if not isinstance(flat, Mapping) or not flat:
        return None
    out: list[Message] = []
    for node in indexed(unflatten(flat)):
        msg = node.get("message") if isinstance(node, dict) else None
        if not isinstance(msg, dict):
            continue
        role = msg.get("role")
        parts: list[dict[str, Any]] = []
        if role == "tool":
            texts, item_call_id = _contents_texts(msg.get("contents"))
            captured = "content" in msg or bool(texts)
            content = msg.get("content") if "content" in msg else "".join(texts) or None
            parts.append(
                tool_response_part(
                    msg.get("tool_call_id") or item_call_id,
                    parse_json_or_text(content),
                    captured,
                )
            )
        elif "content" in msg:
            parts.append(text_part(msg.get("content")))
        else:
            for item in indexed(msg.get("contents")):
                mc = item.get("message_content") if isinstance(item, dict) else None
                if isinstance(mc, dict) and mc.get("type") == "text":
                    parts.append(text_part(mc.get("text")))
        for call in indexed(msg.get("tool_calls")):
            tc = call.get("tool_call") if isinstance(call, dict) else None
            if not isinstance(tc, dict):
                continue
            fn: dict[str, Any] = tc["function"] if isinstance(tc.get("function"), dict) else {}
            # OpenInference omits empty values: a visible call without arguments had none
            # (hiding content removes the whole message list instead).
            parts.append(
                tool_call_part(tc.get("id"), fn.get("name"), fn.get("arguments", "{}"), True)
            )
        out.append({"role": role, "parts": parts})
    return out or None


def _contents_texts(contents: Any) -> tuple[list[str], Any]:
    """The text parts of a message's ``message.contents.N.message_content`` list (the
    multi-part form, which BeeAI uses for tool results too), and a tool-call id written
    beside a part (``contents.N.message.tool_call_id``: BeeAI puts it there rather than on
    the message)."""
    texts: list[str] = []
    call_id: Any = None
    for item in indexed(contents):
        if not isinstance(item, dict):
            continue
        mc = item.get("message_content")
        if isinstance(mc, dict) and mc.get("type") == "text" and isinstance(mc.get("text"), str):
            texts.append(mc["text"])
        inner = item.get("message")
        if call_id is None and isinstance(inner, dict):
            call_id = inner.get("tool_call_id")
    return texts, call_id


def parse_openinference_documents(flat: Any) -> list[dict[str, Any]] | None:
    """``retrieval.documents.N.document.{id,score,content,metadata}``."""
    if not isinstance(flat, Mapping) or not flat:
        return None
    docs = []
    for node in indexed(unflatten(flat)):
        doc = node.get("document") if isinstance(node, dict) else None
        if isinstance(doc, dict):
            docs.append({k: parse_json(v) if k == "metadata" else v for k, v in doc.items()})
    return docs or None


PARSERS: Mapping[str, Parser] = {
    "openinference_messages": parse_openinference_messages,
    "openinference_documents": parse_openinference_documents,
}
"""Registered names (as written in YAML ``parse:``) -> parser."""
