"""OpenLLMetry / Traceloop (``conventions/openllmetry.yaml``; ``traceloop_entity_input`` also in
``llama-index.yaml`` and ``smolagents.yaml``): flattened ``gen_ai.prompt.N.*`` content and
decorated tools' ``traceloop.entity.input``.
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
from otel_oracles.mapping.parsers.providers import (
    content_parts,
    parse_block_value,
)
from otel_oracles.mapping.parsers.scalars import (
    parse_json,
)


def parse_traceloop_messages(flat: Any) -> list[Message] | None:
    """``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*`` (prefix stripped): role, content,
    tool_call_id, finish_reason, ``tool_calls.M.{id,name,arguments}``."""
    if not isinstance(flat, Mapping) or not flat:
        return None
    out: list[Message] = []
    for node in indexed(unflatten(flat)):
        if not isinstance(node, dict):
            continue
        role = node.get("role")
        parts: list[dict[str, Any]] = []
        if role == "tool":
            # A result given as content blocks (Cohere v2's ``document`` blocks, text blocks)
            # is the blocks' value (``block_value``), so its error key or documents are read.
            parts.append(
                tool_response_part(
                    node.get("tool_call_id"),
                    parse_block_value(node.get("content")),
                    "content" in node,
                )
            )
        elif "content" in node and node["content"] is None:
            # An attribute set to None (an empty value on the wire): the message had no
            # content, as an assistant turn that only called tools (AgentOps writes the turn
            # without its calls). No text, which is not the same as text not captured.
            parts.append(text_part(""))
        elif "content" in node:
            content = parse_json(node["content"])
            if isinstance(content, list):
                parts.extend(content_parts(content))
            else:
                parts.append(text_part(node["content"]))
        for call in indexed(node.get("tool_calls")):
            if isinstance(call, dict):
                parts.append(
                    tool_call_part(
                        call.get("id"), call.get("name"), call.get("arguments"), "arguments" in call
                    )
                )
        msg: Message = {"role": role, "parts": parts}
        if node.get("finish_reason") is not None:
            msg["finish_reason"] = node["finish_reason"]
        out.append(msg)
    return out or None


def parse_traceloop_entity_input(value: Any) -> Any:
    """``traceloop.entity.input`` = ``{"args": [...], "kwargs": {...}}``: the keyword
    arguments are the tool's arguments; positional ones are kept under ``args``."""
    if not isinstance(value, dict) or not ({"args", "kwargs"} & value.keys()):
        return value
    kwargs: dict[str, Any] = value["kwargs"] if isinstance(value.get("kwargs"), dict) else {}
    args = value.get("args") or []
    return {**kwargs, "args": args} if args else dict(kwargs)


PARSERS: Mapping[str, Parser] = {
    "traceloop_messages": parse_traceloop_messages,
    "traceloop_entity_input": parse_traceloop_entity_input,
}
"""Registered names (as written in YAML ``parse:``) -> parser."""
