"""DSPy ChatAdapter text (``conventions/dspy.yaml``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_oracles.mapping.parsers._registry import Parser

_FIELD_OPEN = "[[ ## "
_FIELD_CLOSE = " ## ]]"
_FIELD_MARKERS = frozenset({"completed"})
"""The end marker DSPy's ChatAdapter asks the model to write after the last field."""


def adapter_fields(text: str) -> dict[str, str]:
    """The ``[[ ## name ## ]]`` sections of a DSPy ChatAdapter reply, in order (a linear
    scan; text before the first header is ignored, as the adapter ignores it)."""
    fields: dict[str, str] = {}
    pos = text.find(_FIELD_OPEN)
    while pos != -1:
        end = text.find(_FIELD_CLOSE, pos + len(_FIELD_OPEN))
        if end == -1:
            break
        name = text[pos + len(_FIELD_OPEN) : end].strip()
        body_start = end + len(_FIELD_CLOSE)
        nxt = text.find(_FIELD_OPEN, body_start)
        fields[name] = text[body_start : nxt if nxt != -1 else len(text)].strip()
        pos = nxt
    return fields


def parse_dspy_adapter_output(value: Any) -> list[dict[str, Any]] | None:
    """A DSPy LM span's completions (``output.value``: a list of reply texts, or of assistant
    chat messages as Langtrace's completion event writes them, or GenAI semconv messages as
    ``genai_messages`` reads a ``chat`` span's output) when the reply
    is a prediction in ChatAdapter's field format: the assistant message whose text is the
    last output field (a signature's answer comes after its ``reasoning``), with the
    reasoning as a reasoning part. The model's text is a serialisation of the program's
    output fields, so the answer a contract must read is that field, not the headers around
    it. A ReAct step (``next_tool_name``: the tool runs as its own span) and text that is not
    in that format are no value, so the plain reply text is read instead."""
    if isinstance(value, list) and value:
        value = value[0]
    if isinstance(value, dict) and value.get("role") == "assistant":
        message_parts = value.get("parts")
        if isinstance(message_parts, list):  # a GenAI semconv message (``genai_messages``)
            texts = [
                p.get("content")
                for p in message_parts
                if isinstance(p, dict) and p.get("type", "text") == "text"
            ]
            value = "".join(t for t in texts if isinstance(t, str)) or None
        else:
            value = value.get("content")  # a chat message (Langtrace's completion event)
    if not isinstance(value, str):
        return None
    fields = adapter_fields(value)
    if not fields or "next_tool_name" in fields:
        return None
    outputs = [(name, text) for name, text in fields.items() if name not in _FIELD_MARKERS]
    if not outputs:
        return None
    parts: list[dict[str, Any]] = []
    if "reasoning" in fields:
        parts.append({"type": "reasoning", "content": fields["reasoning"]})
    answer = [text for name, text in outputs if name != "reasoning"]
    if answer:
        parts.append({"type": "text", "content": answer[-1]})
    return [{"role": "assistant", "parts": parts}] if parts else None


PARSERS: Mapping[str, Parser] = {
    "dspy_adapter_output": parse_dspy_adapter_output,
}
"""Registered names (as written in YAML ``parse:``) -> parser."""
