"""Scalar parsers every mapping file uses: JSON text, numbers, strings, lists of strings."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import orjson

from otel_oracles.mapping.parsers._registry import Parser


def parse_json(value: Any) -> Any:
    """A JSON string becomes its value; anything else (already structured, or not JSON) is
    returned unchanged, because producers send both forms (semconv allows either on spans)."""
    if isinstance(value, str | bytes):
        text = value.strip() if isinstance(value, str) else value.strip().decode("utf-8", "replace")
        if text[:1] in ("{", "[", '"') or text in ("true", "false", "null") or _numeric(text):
            try:
                return orjson.loads(text)
            except orjson.JSONDecodeError:
                return value
    return value


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def parse_json_or_text(value: Any) -> Any:
    """JSON objects/arrays are parsed; any other string stays text (a tool's plain-text
    result such as ``"SearchBackendError: ..."`` is not JSON and must not be mangled)."""
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def parse_non_empty(value: Any) -> Any:
    """``None`` for an empty object, array or string, else the value. For producers that
    write ``{}`` where content capture is off (Google ADK schema 1's
    ``gcp.vertex.agent.tool_call_args`` / ``tool_response``): an empty payload is no evidence
    of what a tool was given or returned. Chain it after ``json``."""
    if isinstance(value, dict | list | str) and not value:
        return None
    return value


def parse_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def parse_string(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list):
        try:
            return json.dumps(value, ensure_ascii=False, sort_keys=True)
        except RecursionError:
            # JSON text in an attribute may nest up to orjson's 1024 levels, past what the
            # encoder recurses through: no usable string (as an unparseable int is no int).
            return None
    return str(value)


def parse_text_only(value: Any) -> str | None:
    """Text, or nothing. For payloads that are an answer only when they are text: MLflow's
    ``AGENT`` spans record whatever the traced function returned, and the OpenAI Agents SDK's
    agent spans record ``{"output_type": "str"}`` there, metadata that is no answer."""
    return value if isinstance(value, str) else None


def parse_string_list(value: Any) -> list[str] | None:
    """``["stop"]``, ``"stop"`` or a JSON array string all become a list of strings."""
    value = parse_json(value) if isinstance(value, str) and value.startswith("[") else value
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [str(v) for v in value if v is not None]
    return None


PARSERS: Mapping[str, Parser] = {
    "json": parse_json,
    "json_or_text": parse_json_or_text,
    "non_empty": parse_non_empty,
    "int": parse_int,
    "string": parse_string,
    "string_list": parse_string_list,
    "text_only": parse_text_only,
}
"""Registered names (as written in YAML ``parse:``) -> parser."""
