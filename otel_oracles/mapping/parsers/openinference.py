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
            parts.append(
                tool_response_part(
                    msg.get("tool_call_id"),
                    parse_json_or_text(msg.get("content")),
                    "content" in msg,
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
