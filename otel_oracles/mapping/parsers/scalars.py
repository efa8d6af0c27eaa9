"""Scalar parsers every mapping file uses: JSON text, numbers, strings, lists of strings."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from otel_oracles._native import parse_json as parse_json
from otel_oracles._native import parse_json_or_text as parse_json_or_text
from otel_oracles._native import parse_request_tool_names as parse_request_tool_names
from otel_oracles._native import parse_string_list as parse_string_list
from otel_oracles._native import parse_tool_names as parse_tool_names
from otel_oracles.mapping.parsers._registry import Parser

# ``json`` and ``json_or_text`` are the compiled core's (native/core/src/content.rs, bound in
# native/python/src/parsers.rs), called by the mapper with no Python frame between:
#
# - ``parse_json(value)``: a JSON string (stripped as ``str.strip()`` strips) becomes its
#   value; anything else (already structured, or not JSON) is returned unchanged, because
#   producers send both forms (semconv allows either on spans). ``bytes`` are stripped of
#   ASCII whitespace and read as UTF-8 first.
# - ``parse_json_or_text(value)``: JSON objects/arrays are parsed; any other string stays
#   text (a tool's plain-text result such as ``"SearchBackendError: ..."`` is not JSON and
#   must not be mangled).
#
# JSON is read strictly: integers of up to 64 bits stay ``int`` (larger ones become
# ``float``), ``-0`` is ``0``, ``NaN``/``Infinity``, lone surrogates and text past the value
# are no JSON, a repeated key keeps its first position and last value, and nesting deeper
# than 1024 levels is no JSON. The strings ``parse: [json]`` leaves alone come back as the
# very same object.
#
# ``string_list`` is the core's too (``parse_string_list(value)``): ``["stop"]``, ``"stop"``
# or a JSON array text (a ``str`` starting with ``[``, read by ``parse_json``) all become a
# list of strings (each item that is not ``None`` as its ``str()``); any other value is
# ``None``.
#
# ``tool_names`` and ``request_tool_names`` are the core's too (native/python/src/tools.rs):
# the tools a model call offered (a step's ``tools_offered``), read from its recorded tool
# definitions, as a tuple of their names:
#
# - ``parse_tool_names(value)``: JSON text, a list or an ``attr_prefix`` mapping of tool
#   definitions (``gen_ai.tool.definitions``, ``llm.tools.N.tool.json_schema``,
#   ``llm.request.functions.N.name``); ``None`` when a definition has no readable name.
#   An attribute written only when tools were offered says nothing by its absence.
# - ``parse_request_tool_names(value)``: a recorded request's parameters
#   (``llm.invocation_parameters``): its ``tools``' names, ``()`` when it has none. Only
#   for instrumentations that copy every keyword of the request.


def parse_non_empty(value: Any) -> Any:
    """``None`` for an empty object, array or string, else the value. For producers that
    write ``{}`` where content capture is off (Google ADK schema 1's
    ``gcp.vertex.agent.tool_call_args`` / ``tool_response``): an empty payload is no evidence
    of what a tool was given or returned. Chain it after ``json``."""
    if isinstance(value, dict | list | str) and not value:
        return None
    return value


def parse_error_unless_json(value: Any) -> str | None:
    """``"error"`` for a text that is no JSON, else ``None``: a tool outcome (the ``outcome``
    field) for frameworks that JSON-encode whatever a tool returns but hand the model a
    failure's message as plain text (Spring AI's default tool result converter and exception
    processor), so the result's form is the only sign of the failure. Structured values and
    JSON texts (a JSON string included) say nothing about the outcome."""
    if not isinstance(value, str):
        return None
    return "error" if parse_json(value) is value else None


def parse_exit_code_outcome(value: Any) -> str | None:
    """``"success"`` for exit code 0, ``"error"`` for any other, ``None`` for a value that is
    no integer: a tool outcome (the ``outcome`` field) read from a command's exit status
    (``process.exit.code``, OpenTelemetry's process attribute, which GitHub Copilot CLI writes
    on its shell tool's spans whatever its content setting while ending them UNSET), so a
    command that failed is a failed call even where its output was not captured."""
    code = parse_int(value)
    if code is None:
        return None
    return "success" if code == 0 else "error"


EXIT_STATUS_KEYS = ("exit", "exit_code", "exitCode")
"""Keys under which a command tool's structured result reports its exit status."""


def parse_result_exit_code_outcome(value: Any) -> str | None:
    """The outcome (``exit_code_outcome``) of the exit status a command tool's structured
    result reports, under one of ``EXIT_STATUS_KEYS`` at its top level or in its ``metadata``
    object (OpenCode's ``bash`` tool returns ``{"output": ..., "metadata": {"exit": 6}}`` and
    ends its span OK whatever the command did); ``None`` when the result reports none (a
    plain-text result, another tool's result). Chain it after ``json``."""
    if not isinstance(value, Mapping):
        return None
    for holder in (value, value.get("metadata")):
        if isinstance(holder, Mapping):
            for key in EXIT_STATUS_KEYS:
                if key in holder:
                    return parse_exit_code_outcome(holder[key])
    return None


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
            # JSON text in an attribute may nest up to the JSON parser's 1024 levels, past what the
            # encoder recurses through: no usable string (as an unparseable int is no int).
            return None
    return str(value)


def parse_text_only(value: Any) -> str | None:
    """Text, or nothing. For payloads that are an answer only when they are text: MLflow's
    ``AGENT`` spans record whatever the traced function returned, and the OpenAI Agents SDK's
    agent spans record ``{"output_type": "str"}`` there, metadata that is no answer."""
    return value if isinstance(value, str) else None


PARSERS: Mapping[str, Parser] = {
    "json": parse_json,
    "json_or_text": parse_json_or_text,
    "non_empty": parse_non_empty,
    "error_unless_json": parse_error_unless_json,
    "exit_code_outcome": parse_exit_code_outcome,
    "result_exit_code_outcome": parse_result_exit_code_outcome,
    "int": parse_int,
    "string": parse_string,
    "string_list": parse_string_list,
    "text_only": parse_text_only,
    "tool_names": parse_tool_names,
    "request_tool_names": parse_request_tool_names,
}
"""Registered names (as written in YAML ``parse:``) -> parser."""
