"""Record what registered parsers return, as an equivalence corpus for reimplementing them.

Before a built-in parser is replaced (by the compiled core's), its results are recorded on
every string value the traces hold (span and event attributes, log bodies, nested values)
and on seeded generated text aimed at the corners (numbers, escapes, whitespace, nesting,
truncation). The corpus keeps the interesting cases only: per parser and result shape, the
shortest inputs, plus every generated corner case. ``tests/mapping/test_parser_corpus.py``
then checks the registered parsers against it, whichever implementation they have.

    python tools/parser_corpus.py --parser json --parser json_or_text \\
        --out tests/testdata/parsers/json.jsonl tests/testdata/traces bench/out/data-200-c64
    python tools/parser_corpus.py --parser genai_messages --generated 4000 \\
        --out tests/testdata/parsers/genai_messages.jsonl tests/testdata/traces \\
        bench/out/data-2000-c64/traces.binpb
    python -W ignore tools/parser_corpus.py --parser python_literal --parser python_repr \\
        --python-generated 3000 --out tests/testdata/parsers/python_literals.jsonl \\
        tests/testdata/traces bench/out/data-2000-c64/traces.binpb
    python tools/parser_corpus.py --parser openinference_messages --flattened 4000 \\
        --out tests/testdata/parsers/openinference_messages.jsonl tests/testdata/traces \\
        bench/out/data-2000-c64/traces.binpb

Each line is ``[parser, input, expected]``: ``input`` is a string, or ``{"structured":
value}`` for a value given already decoded (or a span's attributes under a prefix, for
``attr_prefix`` parsers); ``expected`` is the ``repr`` of the result, or
``null`` when the parser returned its input object itself ("no value of this kind here").
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from otel_oracles.decode import read_paths
from otel_oracles.mapping.parsers import ParserRegistry, builtin_parsers

_WS = ("", " ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x1f", "\x85", "\xa0", "\u2028",
       "\u3000", "\ufeff", "\u200b")  # fmt: skip
_NUMBERS = ("0", "-0", "-0.0", "0.0", "-0e0", "1e-0", "1E+2", "1e400", "-1e400", "1.5e-400",
            "18446744073709551615", "18446744073709551616", "-9223372036854775808",
            "-9223372036854775809", "123456789012345678901234567890", "0.1",
            "1.7976931348623157e308", "5e-324", "2.2250738585072014e-308", "01", "1.", ".5", "-",
            "+1", "NaN", "Infinity", "-Infinity", "1_000", "0x10", "1e5", "9007199254740993",
            "-12", "3.14159", "1e-7", "100.0e-2", "1j", "0o7")  # fmt: skip
_STRINGS = ('"a"', '""', '"\\ud800"', '"\\udc00"', '"\\ud83d\\ude00"', '"\\u0000"', '"\x01"',
            '"\\n\\t\\"\\\\\\/"', '"\\x41"', '"\u00e9"', '"\U0001f600"', '"-0"', '"\\u00e9"',
            "'a'", '"\\uD834\\uDD1E"', '"a\nb"', "'it''s'", "b'x'", "'\\x41'", "u'a'")  # fmt: skip
_LITERALS = ("true", "false", "null", "True", "None", "False", "nul", "tru", "()", "set()")
_KEYS = ('"a"', '"b"', '"role"', '"parts"', '"type"', '"content"', '"\\u0061"', "'role'", "1")
_PARTS = (
    '{"type": "text", "content": "hi"}',
    '{"type": "text", "text": "hi"}',
    '{"type": "tool_call", "id": "c1", "name": "search", "arguments": "{\\"q\\": 1}"}',
    '{"type": "tool_call", "id": "c1", "name": "search", "arguments": "not json"}',
    '{"type": "tool_call_response", "id": "c1", "result": "ok"}',
    '{"type": "tool_call_response", "id": "c1", "response": {"a": [1, 2.5]}}',
    '{"type": "tool_use", "id": "t1", "name": "calc", "input": {"x": 1}}',
    '{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "4"}]}',
    '{"type": "thinking", "thinking": "hmm"}',
    '{"functionCall": {"name": "f", "args": {"a": 1}}}',
    '{"toolUse": {"toolUseId": "u1", "name": "g", "input": {}}}',
    '{"type": "reasoning", "content": "r"}',
    '{"type": 3}',
    '"bare text"',
    "7",
    # Provider blocks and their corners (what genai_messages converts).
    '{"json": {"b": [1e-7, 2.5e-5, 1e16, 0.1, -0.0, 18446744073709551615], "a": "\\u00e9\\n"}}',
    '{"json": "s"}',
    '{"json": null}',
    '{"toolResult": {"toolUseId": "u1", "content": [{"text": "{\\"a\\": 1}"}]}}',
    '{"toolResult": {"toolUseId": 7, "content": [{"json": {"x": [1]}}]}}',
    '{"toolResult": {"content": "[{\\"text\\": \\"ok\\"}, '
    '{\\"type\\": \\"text\\", \\"text\\": \\"!\\"}]"}}',
    '{"toolResult": {"toolUseId": "u2", "content": [{"type": null, "text": "x"}]}}',
    '{"reasoningContent": {"reasoningText": {"text": "why"}}}',
    '{"reasoningContent": {"reasoningText": {"text": ""}}}',
    '{"functionResponse": {"id": "f1", "name": "f", "response": {"r": 1}}}',
    '{"function_response": {"name": null}}',
    '{"function_call": {"id": 5, "args": "{\\"a\\": 1}"}}',
    '{"functionCall": null, "text": "t"}',
    '{"text": "deep", "thought": true}',
    '{"text": null, "thought": 0}',
    '{"type": "text", "text": {"z": 1, "a": [true, null, 1.5e300]}}',
    '{"type": "text", "text": 1e-5}',
    '{"type": "input_text", "content": false}',
    '{"type": "output_text"}',
    '{"type": "function_call", "call_id": "", "id": "i1", "name": "n", "arguments": "[1]"}',
    '{"type": "function_call", "call_id": 0, "arguments": "{\\"k\\": \\"v\\"}"}',
    '{"type": "function_call_output", "call_id": "c", "output": " {\\"o\\": 1} "}',
    '{"type": "function_call_output", "output": "plain"}',
    '{"type": "tool_result", "tool_use_id": "t", "content": '
    '[{"type": "text", "text": "[1,"}, {"type": "text", "text": "2]"}]}',
    '{"type": "tool_result", "content": [{"type": "text", "text": 5}]}',
    '{"type": "tool_result", "content": [{"type": "image"}]}',
    '{"type": "tool_result", "content": "{\\"r\\": true}"}',
    '{"type": "redacted_thinking", "thinking": null, "text": "t"}',
    '{"type": "reasoning", "text": "r", "content": "c"}',
    '{"type": "server_tool_use", "id": ["x"], "name": "web", "input": "{}"}',
    '{"type": "tool_call", "id": {"b": 1, "a": 2}, "arguments": {"already": "parsed"}}',
    '{"type": "tool_call", "arguments": " [\\"not an object\\"]"}',
    '{"type": "tool_call_response", "result": null, "id": 3}',
    '{"type": "tool_call_response", "result": 1, "response": 2}',
    '{"type": null, "text": "typed null"}',
    '{"type": "text", "text": "a", "content": "b"}',
    "{}",
    "null",
    "[]",
)
_ROLES = ('"user"', '"assistant"', '"model"', '"human"', '"ai"', '"tool"', '"function"',
          "null", "5", '""', "0", "[]", '"system"')  # fmt: skip
_CONTENTS = (
    '"plain text"',
    '"[{\\"type\\": \\"text\\", \\"text\\": \\"block\\"}]"',
    '" [ {\\"toolResult\\": {\\"toolUseId\\": \\"u\\", \\"content\\": [{\\"text\\": \\"1\\"}]}}]"',
    '"[{\\"type\\": \\"tool_result\\", \\"tool_use_id\\": \\"t\\", \\"content\\": \\"r\\"}]"',
    '"[{\\"no\\": \\"block\\"}]"',
    '"[1, 2]"',
    '"{\\"a\\": 1}"',
    "null",
    "12",
    "false",
    '{"type": "text", "text": "one block"}',
    '[{"type": "tool_result", "tool_use_id": "a", "content": "x"}, "str"]',
    '[{"toolResult": {"toolUseId": "b", "content": [{"json": [1]}]}}]',
    "[]",
)
_TOOL_CALLS = (
    '[{"id": "x", "function": {"name": "f", "arguments": "{}"}}]',
    '[{"id": "y", "name": "g", "args": {"a": 1}}, 3, {"function": null, "arguments": "[]"}]',
    '[{"id": 1.5, "function": {"name": "h", "args": "{\\"q\\": 1}"}}]',
    '"abc"',
    '{"k": 1}',
    "0",
    "[]",
    "null",
    "7",
    "true",
)


def _atom(r: random.Random) -> str:
    pick = r.random()
    if pick < 0.4:
        return r.choice(_NUMBERS)
    if pick < 0.8:
        return r.choice(_STRINGS)
    return r.choice(_LITERALS)


def _document(r: random.Random, depth: int = 0) -> str:
    pick = r.random()
    if depth > 4 or pick < 0.35:
        return _atom(r)

    def ws() -> str:
        return r.choice(_WS[:5]) if r.random() < 0.2 else ""

    if pick < 0.65:
        items = (ws() + _document(r, depth + 1) + ws() for _ in range(r.randint(0, 4)))
        open_, close = ("[", "]") if r.random() < 0.85 else ("(", ")")
        return open_ + ws() + ",".join(items) + close
    keys = [r.choice(_KEYS) for _ in range(r.randint(0, 4))]
    return "{" + ",".join(f"{k}{ws()}:{ws()}{_document(r, depth + 1)}" for k in keys) + "}"


def _message(r: random.Random) -> str:
    fields = []
    if r.random() < 0.9:
        fields.append(f'"role": {r.choice(_ROLES)}')
    shape = r.random()
    if shape < 0.7:
        parts = ", ".join(r.choice(_PARTS) for _ in range(r.randint(0, 3)))
        fields.append(f'"parts": [{parts}]')
    elif shape < 0.8:
        blocks = "[" + r.choice(_PARTS) + "]"
        fields.append(f'"content": {r.choice((*_STRINGS[:2], blocks, *_CONTENTS))}')
        if r.random() < 0.3:
            fields.append('"tool_call_id": ' + r.choice(('"tc"', '""', "0", "null")))
        if r.random() < 0.2:
            fields.append('"id": "mid"')
    elif shape < 0.9:
        fields.append(f'"tool_calls": {r.choice(_TOOL_CALLS)}')
    else:
        fields.append(f'"parts": {r.choice(_PARTS)}')
    if r.random() < 0.3:
        fields.append('"finish_reason": ' + r.choice(('"stop"', "null", "1")))
    if r.random() < 0.15:
        fields.append('"name": "bob"')
    if r.random() < 0.2:
        r.shuffle(fields)
    return "{" + ", ".join(fields) + "}"


def _mutate(r: random.Random, text: str) -> str:
    if not text:
        return text
    at = r.randrange(len(text) + 1)
    pick = r.random()
    if pick < 0.2:
        return text[:at]
    if pick < 0.4:
        return text[:at] + r.choice((*_WS, ",", "]", "}", "-0", '"', "\\", "'")) + text[at:]
    if pick < 0.5:
        return text[:at] + text[at + 1 :]
    return text


def generated(seed: int, count: int) -> list[str]:
    """Seeded corner-case text: JSON-ish and Python-repr-ish documents, GenAI message lists,
    mutated (truncated, characters inserted or dropped), wrapped in whitespace of every kind;
    nesting at and past the parsers' bounds; strings with lone surrogates."""
    r = random.Random(seed)
    out = []
    for _ in range(count):
        if r.random() < 0.3:
            text = "[" + ", ".join(_message(r) for _ in range(r.randint(0, 3))) + "]"
        else:
            text = _document(r)
        if r.random() < 0.3:
            text = _mutate(r, text)
        if r.random() < 0.3:
            text = r.choice(_WS) + text + r.choice(_WS)
        out.append(text)
    for depth in (31, 32, 33, 1023, 1024, 1025, 5000):
        out.append("[" * depth + "]" * depth)
        out.append('{"a":' * depth + "1" + "}" * depth)
    out += ["\ud800", '"\ud800"', '["\udfff"]', "[1, 2]\ud800", "'\ud800'"]
    return out


_PY_ATOMS = (
    # strings: prefixes, quotes, escapes, concatenation, what the tokenizer refuses
    r"r'\d'", r"b'\x00\xff'", r"rb'\\'", "BR'x'", "u'x'", "U'x'", "f'x'", "rf'{1}'",
    "'a' 'b'", "'a' b'b'", "b'a' b'b'", "'''tri\nple'''", '"""q"""', r"'\N{BULLET}'",
    r"'\N{no such name}'", r"'\ud800'", r"'\U0010ffff'", r"'\U00110000'", r"'\777'",
    r"b'\777'", r"'\x4'", r"'\d'", r"'it\'s'", r"r'\'", "'a\\\nb'", "'a\nb'",
    "b'\u00e9'", "'\u00e9\U0001f600'", r"'\a\b\f\v\0'", r"'\u12'", r'"\""',
    # numbers: bases, underscores, floats, imaginary, signs, limits
    "1_000", "0x_ff", "0XFF", "0o17", "0b101", "017", "00", "0777j", "0777.0", "1.", ".5",
    "1.e5", "1e5", "1E-5j", "2j", "1+2j", "-1-2j", "2j+1", "1.5-0j", "-2j", "-(1)", "--1",
    "+True", "-True", "- 1", "10**3", "1e400", "-1e400", "1__0", "1_", "1e", "0x", "0_0",
    "1.5e-400", "4.9e-324",
    # names, calls and <...> reprs
    "True", "False", "None", "...", "Ellipsis", "set()", "set([1])", "frozenset()", "x",
    "ChatMessage(_role=<ChatRole.USER: 'user'>, _content=[TextContent(text='x')])",
    "a.b.C(1, k=2)", "f(**k)", "f(*a)", "<object at 0x1>", "<a <b> c>", "<unclosed",
    "<function f.<locals>.g at 0x7f>", "Point(x=1, y=<E.A: 2>)", "lambda: 1",
    "[x for x in y]", "{'a': 1}['a']", "[1][0]", "M(a=1 b=2)",
)  # fmt: skip
_PY_CONTAINERS = (
    "{1, 2}", "{1, True, 1.0}", "{True, 1}", "{(1, 'a'): 2}", "{[1]: 2}",
    "{1: 'a', True: 'b', 1.0: 'c'}", "{b'k': 1}", "{None: 1}", "{1j: 2}", "{...: 1}",
    "{0: 1, -0.0: 2, False: 3}", "(1,)", "()", "((1))", "{**a}", "[*a]", "[1,]", "[,]",
    "{1:2,}", "[1, # c\n 2]", "[1,\n\t2]", "[1, \\\n 2]", "['\x00']", "[1] # trailing",
    "[1];", "[1] [2]", "{1: {2, 3}, 'k': [(4, 5), {6}]}", "{'s': {'b', 'a', 3, (1, 2)}}",
    "[{'x': 1}, {2: 3}][0]", "{'a': 1}.keys()", "{1: 2} if x else 3",
)  # fmt: skip


def python_generated(seed: int, count: int) -> list[str]:
    """Seeded Python-repr text for ``python_literal`` / ``python_repr``: containers of the
    tokenizer's and ``literal_eval``'s corners (string prefixes and escapes, number forms and
    limits, signs, complex numbers, sets and keys that compare equal across types, calls and
    ``<...>`` reprs, comments, continuations), mutated as ``generated`` mutates, plus nesting
    at and past the parsers' bound."""
    r = random.Random(seed)

    def value(depth: int) -> str:
        pick = r.random()
        if depth > 3 or pick < 0.5:
            return r.choice(_PY_ATOMS) if r.random() < 0.8 else r.choice(_PY_CONTAINERS)
        items = [value(depth + 1) for _ in range(r.randint(0, 3))]
        if pick < 0.7:
            return "[" + ", ".join(items) + "]"
        if pick < 0.8:
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if pick < 0.9:
            return "{" + ", ".join(f"{value(depth + 1)}: {v}" for v in items) + "}"
        return "Model(" + ", ".join(f"k{i}={v}" for i, v in enumerate(items)) + ")"

    out = list(_PY_ATOMS) + list(_PY_CONTAINERS)
    out += ["[" + a + "]" for a in _PY_ATOMS] + ["{'k': " + a + "}" for a in _PY_ATOMS]
    # Integers at and past the 4,300-digit limit of writing them in decimal (once each: they
    # would make most of the corpus's bytes if drawn into every document).
    for big in ("9" * 4300, "9" * 4301, "0x" + "f" * 5000):
        out += [big, "[" + big + "]", "{" + big + ": 1}", "M(k=" + big + ")"]
    for _ in range(count):
        text = value(0)
        if r.random() < 0.2:
            text = _mutate(r, text)
        if r.random() < 0.2:
            text = r.choice(_WS) + text + r.choice(_WS)
        out.append(text)
    for depth in (31, 32, 33, 100):
        out.append("[" * depth + "]" * depth)
        out.append("{'a': " * depth + "1" + "}" * depth)
        out.append("M(a=" * depth + "1" + ")" * depth)
    return out


_FLAT_PATHS = (
    "role",
    "content",
    "name",
    "tool_call_id",
    "contents.0.message_content.type",
    "contents.0.message_content.text",
    "contents.1.message_content.type",
    "contents.1.message_content.text",
    "contents.0.message.tool_call_id",
    "contents.1.message.tool_call_id",
    "tool_calls.0.tool_call.id",
    "tool_calls.0.tool_call.function.name",
    "tool_calls.0.tool_call.function.arguments",
    "tool_calls.1.tool_call.function.name",
    "tool_calls.01.tool_call.id",
    "tool_calls.0.tool_call",
    "tool_calls.0",
    "content.x",
    "contents",
    "contents.0",
    "role.x",
    "tool_calls.10.tool_call.function.arguments",
    "tool_calls.2.tool_call.function",
)
_FLAT_INDEXES = ("0", "1", "2", "10", "01", "00", "", "a", "\u0661", "\u00b2", "\uff11", "9" * 30)
_FLAT_VALUES: tuple[Any, ...] = (
    "user",
    "assistant",
    "tool",
    "system",
    "",
    "hi",
    '{"q": 1}',
    "[1, 2]",
    " [3] ",
    "not json",
    "text",
    "image",
    "call_1",
    0,
    1,
    2.5,
    True,
    False,
    None,
    ["a", "b"],
    [1, "x"],
    {"k": "v"},
    {"message_content": {"type": "text", "text": "inner"}},
    {"role": "user"},
    [],
    {},
    "\U0001f600",
)


def flattened_generated(seed: int, count: int) -> list[dict[str, Any]]:
    """Seeded flattened message attributes (OpenInference's ``N.message.*`` keys with the
    prefix stripped), as ``openinference_messages`` gets them: index keys of every form
    (leading zeros, non-ASCII digits, digits ``int()`` refuses), paths that overlap (a key
    that descends through another's value), values of every kind, keys in random order."""
    r = random.Random(seed)
    out: list[dict[str, Any]] = [{}]
    for _ in range(count):
        flat: dict[str, Any] = {}
        for _ in range(r.randint(1, 8)):
            index = r.choice(_FLAT_INDEXES) if r.random() < 0.3 else r.choice("0123")
            head = index + ".message" if r.random() < 0.95 else index
            key = head + "." + r.choice(_FLAT_PATHS) if r.random() < 0.97 else head
            flat[key] = copy.deepcopy(r.choice(_FLAT_VALUES))
        out.append(flat)
    return out


def trace_prefixed(paths: Iterable[str], prefixes: Iterable[str]) -> list[dict[str, Any]]:
    """Every span's attributes under each prefix (the prefix and its dot stripped), as an
    ``attr_prefix`` source hands them to its parsers; distinct ones only."""
    found: dict[str, dict[str, Any]] = {}
    problems: list[Any] = []
    starts = [p + "." for p in prefixes]
    for batch in read_paths(list(paths), problems):
        for span in batch.spans:
            for start in starts:
                flat = {
                    k[len(start) :]: v for k, v in span.attributes.items() if k.startswith(start)
                }
                if flat:
                    found.setdefault(repr(flat), flat)
    return list(found.values())


def trace_strings(paths: Iterable[str]) -> set[str]:
    """Every string in the span, event and log attributes and bodies of the traces."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, str):
            found.add(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item)

    problems: list[Any] = []
    for batch in read_paths(list(paths), problems):
        for span in batch.spans:
            walk(dict(span.attributes))
            for event in span.events:
                walk(dict(event.attributes))
                walk(event.body)
        for log in batch.logs:
            walk(dict(log.attributes))
            walk(log.body)
    return found


def _shape(value: Any, depth: int = 0) -> str:
    """A coarse structural signature: types, dict keys, distinct element shapes."""
    if depth > 2:
        return "..."
    if isinstance(value, dict):
        inner = ",".join(f"{k}:{_shape(v, depth + 1)}" for k, v in list(value.items())[:8])
        return "{" + inner[:200] + "}"
    if isinstance(value, list | tuple):
        inner = "|".join(sorted({_shape(v, depth + 1) for v in value[:8]}))
        return "[" + inner[:200] + "]"
    if isinstance(value, float) and value == 0 and str(value).startswith("-"):
        return "-0.0"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**63:
        return "bigint"
    return type(value).__name__


def _safe_repr(value: Any) -> str | None:
    try:
        return repr(value)
    except (RecursionError, ValueError):  # nested past what repr recurses through, or an int
        # past Python's 4,300-digit limit for writing it: not comparable
        return None


def _size(given: Any) -> int | None:
    """Length of the row's input as written, ``None`` when it cannot be written."""
    try:
        return len(json.dumps(given))
    except (RecursionError, TypeError):  # nested too deep, or a value JSON has no form for
        return None


def records(
    registry: ParserRegistry,
    parsers: list[str],
    real: Iterable[str],
    corner: Iterable[str],
    per_shape: int,
    structured: Iterable[tuple[Any, bool]] = (),
) -> Iterator[list[Any]]:
    """``[parser, input, expected]`` rows: every corner case, and per parser and result
    shape the ``per_shape`` shortest real strings (and their decoded JSON, as structured
    input, when the parser takes structured values too)."""
    corner = list(corner)
    real = sorted(real, key=lambda s: (len(s), s))
    structured = list(structured)
    for name in parsers:
        parse = registry[name]
        kept: dict[tuple[str, str], int] = {}
        inputs: list[tuple[Any, bool]] = [(s, True) for s in corner] + [(s, False) for s in real]
        inputs += [({"structured": v}, keep_all) for v, keep_all in structured]
        if name not in ("json", "json_or_text"):
            json_parse = registry["json"]
            inputs += [
                ({"structured": v}, keep_all)
                for s, keep_all in [(s, True) for s in corner] + [(s, False) for s in real]
                if (v := json_parse(s)) is not s and isinstance(v, list | dict)
            ]
        for given, keep_all in inputs:
            try:
                # A copy: a parser must not change its input, but the one recorded might.
                value = copy.deepcopy(given["structured"]) if isinstance(given, dict) else given
            except RecursionError:  # nested past what the copy recurses through: not kept
                continue
            try:
                result = parse(value)
            except Exception as exc:  # noqa: BLE001 - recorded: the port must raise too
                shape = f"raises {type(exc).__name__}"
                expected: str | None = shape
            else:
                if result is value:
                    expected, shape = None, "same"
                else:
                    expected, shape = _safe_repr(result), _shape(result)
                    if expected is None:
                        continue
            key = (shape, type(given).__name__)
            size = _size(given)
            if size is None:  # nested past what the corpus file's writer recurses through
                continue
            if not keep_all:
                if kept.get(key, 0) >= per_shape or size > 2000:
                    continue
                kept[key] = kept.get(key, 0) + 1
            elif size > 20_000:
                continue
            yield [name, given, expected]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="trace files or directories to harvest")
    parser.add_argument("--parser", action="append", required=True, help="registered name")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--generated", type=int, default=1500, help="corner cases to make")
    parser.add_argument(
        "--python-generated", type=int, default=0, help="Python-repr corner cases to make"
    )
    parser.add_argument(
        "--flattened",
        type=int,
        default=0,
        help="flattened message attributes to make (and harvest) for attr_prefix parsers",
    )
    parser.add_argument("--per-shape", type=int, default=1)
    args = parser.parse_args(argv)
    registry = builtin_parsers()
    real = trace_strings(args.paths)
    corner = generated(args.seed, args.generated)
    if args.python_generated:
        corner += python_generated(args.seed, args.python_generated)
    structured: list[tuple[Any, bool]] = []
    if args.flattened:
        prefixes = ("llm.input_messages", "llm.output_messages")
        structured += [(flat, False) for flat in trace_prefixed(args.paths, prefixes)]
        structured += [(flat, True) for flat in flattened_generated(args.seed, args.flattened)]
    rows = list(records(registry, args.parser, real, corner, args.per_shape, structured))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="ascii") as out:
        for row in rows:
            out.write(json.dumps(row) + "\n")
    print(f"{len(real)} trace strings; {len(rows)} rows -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
