"""OpenLIT's own tool-call attributes on its model-call spans (``conventions/openlit.yaml``).

OpenLIT's openai, litellm and langchain instrumentors write the tool calls a model turn
requested on the turn's ``chat`` span as three flat strings, one entry per call joined with
``", "``, whatever the content switch says: ``gen_ai.tool.name``, ``gen_ai.tool.call.id`` and
the calls' argument texts (``gen_ai.tool.args``; the langchain instrumentor writes them under
``gen_ai.tool.call.arguments``). With content off they are the only record of which tools the
model asked for, so reading them turns "some tool was called" into named calls.

The join is lossy: a name, id or argument text holding ``", "`` cannot be told from two
entries, and OpenLIT drops empty entries, which shifts the others. So the calls are read only
when the fields agree (DESIGN section 8: fail closed where the data cannot show what
happened): the argument texts, JSON values that delimit themselves, count the calls; names
(and ids, when written) must split into exactly that many entries. A turn whose argument texts
are missing, or start as JSON but are no such values (an SDK's value length limit cut them
short), is read only when it holds one call (a name with no separator at all), its arguments
unknown; argument texts that are no JSON, or fields that disagree, are no value: the turn stays
a call of unknown tools.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from otel_oracles.mapping.parsers._registry import Parser
from otel_oracles.mapping.parsers.messages import Message, tool_call_part

SEPARATOR = ", "
"""How OpenLIT joins one field across the calls of a turn (``", ".join(...)``)."""

NAME_KEY = "gen_ai.tool.name"
ID_KEY = "gen_ai.tool.call.id"
ARGUMENT_KEYS = ("gen_ai.tool.args", "gen_ai.tool.call.arguments")
"""Where the instrumentors write the joined argument texts (openai / litellm; langchain)."""

MAX_TEXT = 256 * 1024
"""Longer joined fields are not split: the work stays bounded by a span's usual size."""

_DECODER = json.JSONDecoder()


def _text(values: Mapping[str, Any], key: str) -> str | None:
    """The attribute as a non-empty string, or ``None`` (absent, empty, not text, too long)."""
    value = values.get(key)
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_TEXT:
        return None
    return value


def split_json_values(text: str) -> list[Any] | None:
    """``'{"a": 1}, {"b": 2}'`` -> ``[{"a": 1}, {"b": 2}]``: JSON values joined by
    ``", "``, each read by the JSON grammar (so a ``", "`` inside one is no boundary), or
    ``None`` when the text is not exactly such a sequence."""
    values: list[Any] = []
    pos = 0
    while True:
        try:
            value, end = _DECODER.raw_decode(text, pos)
        except ValueError:
            return None
        values.append(value)
        if end == len(text):
            return values
        if not text.startswith(SEPARATOR, end):
            return None
        pos = end + len(SEPARATOR)


def _entries(text: str) -> list[str] | None:
    """One joined field split at the separator; ``None`` when an entry is blank or padded
    (an entry that held the separator itself, or one OpenLIT left empty)."""
    entries = text.split(SEPARATOR)
    if any(not entry or entry != entry.strip() for entry in entries):
        return None
    return entries


def parse_openlit_tool_calls(values: Any) -> list[Message] | None:
    """``attrs: [gen_ai.tool.name, gen_ai.tool.call.id, gen_ai.tool.args,
    gen_ai.tool.call.arguments]`` as one assistant message of tool-call parts, or ``None``
    when the joined fields cannot show the calls unambiguously (see the module docstring)."""
    if not isinstance(values, Mapping):
        return None
    names_text = _text(values, NAME_KEY)
    if names_text is None:
        return None
    names = _entries(names_text)
    if names is None:
        return None
    arguments: list[Any] | None = None
    texts = [text for key in ARGUMENT_KEYS if (text := _text(values, key)) is not None]
    if texts:
        arguments = split_json_values(texts[0])
        if arguments is None and not texts[0].startswith(("{", "[")):
            return None  # no JSON: the argument texts cannot count the calls
        if arguments is not None and len(arguments) != len(names):
            return None  # the argument texts count other calls than the names
    if arguments is None and len(names) > 1:
        return None  # nothing (left) to check the names' count against
    ids_text = _text(values, ID_KEY)
    ids: list[str | None] = [None] * len(names)
    if ids_text is not None:
        split_ids = _entries(ids_text)
        if split_ids is None or len(split_ids) != len(names):
            return None
        ids = list(split_ids)
    known = arguments is not None
    given: list[Any] = arguments if arguments is not None else [None] * len(names)
    parts = [
        tool_call_part(call_id, name, args, known)
        for call_id, name, args in zip(ids, names, given, strict=True)
    ]
    return [{"role": "assistant", "parts": parts}]


PARSERS: Mapping[str, Parser] = {
    "openlit_tool_calls": parse_openlit_tool_calls,
}
"""Registered names (as written in YAML ``parse:``) -> parser."""
