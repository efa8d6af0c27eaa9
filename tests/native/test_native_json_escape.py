"""The core escapes JSON strings in one place (``json_text::write_string``) for every writer
that spells them: the message parsers' ``json.dumps`` / ``orjson.dumps`` texts (written as
``str``), the JSON report and the scan text (written as bytes). Each must still write what the
Python serialiser it stands for writes, on the strings where escaping goes wrong: every ASCII
character, quotes and backslashes at the ends, runs of escapes, non-ASCII up to four bytes,
the line separators ``json`` leaves alone."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

from otel_oracles._native import json_indented
from otel_oracles.mapping.parsers.otel_genai import parse_genai_messages

TRICKY: list[str] = [
    *(chr(c) for c in range(0x80)),
    *(f"é{chr(c)}\u2028" for c in range(0x80)),
    "".join(chr(c) for c in range(0x80)),
    "".join(chr(c) for c in reversed(range(0x80))),
    "",
    '"',
    "\\",
    '\\"',
    '"\\"',
    "\x00\x00\n\n\x1f",
    "é😀中\x7f\x80\x9f\xa0\xad\u2028\u2029\ufeff\ufffd\U0010ffff",
    'line\u2028sep\r\n\ttab "q" \\ \x0b\x1b',
]


def _content(messages: Any) -> str:
    """The text content of the only part of the only message the parser returned."""
    [message] = messages
    [part] = message["parts"]
    content = part["content"]
    assert isinstance(content, str)
    return content


@pytest.mark.parametrize("text", TRICKY, ids=range(len(TRICKY)))
def test_every_writer_escapes_as_its_python_serialiser(text: str) -> None:
    value = {"k": text, text: [1, text]}
    # A structured text block: `json.dumps(..., ensure_ascii=False, sort_keys=True)`.
    block = [{"role": "user", "content": [{"type": "text", "text": value}]}]
    assert _content(parse_genai_messages(json.dumps(block))) == json.dumps(
        value, ensure_ascii=False, sort_keys=True
    )
    # A Bedrock Converse `json` block: `orjson.dumps`.
    block = [{"role": "user", "content": [{"json": value}]}]
    assert _content(parse_genai_messages(json.dumps(block))) == orjson.dumps(value).decode()
    # The JSON report.
    assert json_indented(value, 2) == json.dumps(value, indent=2, ensure_ascii=False)
