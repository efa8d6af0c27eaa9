"""``python_literal`` and ``python_repr`` in the compiled core against ``ast``, the Python
parsers they replaced: for ``python_literal`` the reference below (the old implementation's
steps, kept on the test side only), for ``python_repr`` the ``ast`` path the core calls for
what it does not read itself; both read the same seeded text as ``tools/parser_corpus.py
--python-generated`` makes, mutated further, and the core must return the same value
(``repr``: types, key order, float spelling) or, where there is none, the very object it
was given."""

from __future__ import annotations

import ast
import random
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from otel_oracles import _native
from otel_oracles.mapping.parsers import builtin_parsers, python_literals
from otel_oracles.mapping.parsers.python_literals import MAX_LITERAL_CHARS, MAX_LITERAL_DEPTH

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import parser_corpus  # tools/parser_corpus.py, through the path above


def _jsonable(value: Any) -> Any:
    if isinstance(value, int):
        str(value)  # ValueError past the 4,300 digits Python writes: no value (reference)
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((_jsonable(v) for v in value), key=repr)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, complex):
        return str(value)
    return value


def _nesting_within(text: str, limit: int) -> bool:
    depth, quote, escaped = 0, "", False
    for ch in text:
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
            continue
        if ch in ("'", '"'):
            quote = ch
        elif ch in "([{":
            depth += 1
            if depth > limit:
                return False
        elif ch in ")]}":
            depth -= 1
    return True


def reference(value: Any) -> Any:
    """What the Python ``parse_python_literal`` returned (``ast.parse`` + ``literal_eval``)."""
    if not isinstance(value, str) or value.lstrip()[:1] not in ("{", "["):
        return value
    if len(value) > MAX_LITERAL_CHARS or not _nesting_within(value, MAX_LITERAL_DEPTH):
        return value
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes: a warning, the text kept
            node = ast.parse(value.strip(), mode="eval").body
        literal = ast.literal_eval(node)
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
        return value
    try:
        return _jsonable(literal)
    except ValueError:  # an int past the 4,300 digits str() writes
        return value


def _outcome(result: Any, given: Any) -> str | None:
    if result is given:
        return None
    try:
        return repr(result)
    except ValueError:
        return "an int repr cannot write"


_PIECES = [*"[]{}(),:'\"\\#\n\r\t -+.0123456789_jexobrRBuUfN", "'''", '"""', "\\N{BULLET}",
           "\\x", "\\u", "1e400", "True", "None", "set()", "...", "\u00e9", "\x0c", "\x0b",
           "\\ud800", "99999999999999999999999999999999999999999"]  # fmt: skip


def _mutated(r: random.Random, text: str) -> str:
    for _ in range(r.randint(1, 3)):
        at = r.randrange(len(text) + 1)
        pick = r.random()
        if pick < 0.5:
            text = text[:at] + r.choice(_PIECES) + text[at:]
        elif pick < 0.8:
            text = text[:at] + text[at + 1 :]
        else:
            text = text[:at]
    return text


def _called(parse: Any, text: str) -> str | None:
    """The outcome of ``parse(text)``, what it raises included (a big integer's ``str``)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _outcome(parse(text), text)
    except ValueError as exc:
        return f"raises {type(exc).__name__}"


def _differences(inputs: list[str]) -> tuple[int, list[tuple[str, str | None, str | None]]]:
    values, wrong = 0, []
    for text in inputs:
        with warnings.catch_warnings():
            # As in production: the corners the core leaves to ``ast`` may warn of invalid
            # escapes (pytest would turn the warning into an error, the text into no value).
            warnings.simplefilter("ignore")
            ours = _outcome(_native.parse_python_literal(text), text)
        theirs = _outcome(reference(text), text)
        values += theirs is not None
        if ours != theirs:
            wrong.append((text, ours, theirs))
    return values, wrong


def test_generated_python_reprs_read_as_literal_eval_reads_them() -> None:
    r = random.Random(1818)
    inputs = parser_corpus.python_generated(7, 3000) + parser_corpus.generated(7, 1000)
    inputs += ["[" + _mutated(r, t) for t in parser_corpus.python_generated(8, 3000)]
    inputs += [_mutated(r, t) for t in parser_corpus.python_generated(9, 3000)]
    values, wrong = _differences(inputs)
    assert values > 800, "the generated text reaches values"
    assert not wrong, f"{len(wrong)} differ, first: {wrong[0]!r:.600}"


def test_corners_read_as_literal_eval_reads_them() -> None:
    fooled = "['''it's''', "  # the quote scan misses the triple quote: depth from the parser
    inputs = [
        "[1]\n\\\n#c", "[1] \\\n\n", "[1, 2]  # [[[[", "[\n1\n,\n2\n]", "[1]\x0c\n#",
        "['a'\\\n'b']",
        fooled + "[" * 199 + "]" * 199 + "]", fooled + "[" * 200 + "]" * 200 + "]",
        "{" + "9" * 50 + ": 1}", "{" + "9" * 4400 + ": 1}", "[0x" + "f" * 40 + "]",
        "[170141183460469231731687303715884105728]", "[-(170141183460469231731687303715884105728)]",
        "['\\N{BULLET}']", "['\\N{bogus}']", "[u'a' '\\N{BULLET}']", "[b'\\N{BULLET}']",
        "['\\ud800', '\\udfff']", "{'\\ud800': 1}", "['\ud800']", "\ud800[1]",
        "{0j: 1, 0: 2, False: 3}", "{1: 'a', '1': 'b'}", "{(1, (2, b'x')): 3, b'\\xff': 1}",
        "{'\\x00\\n\\'': 1, b'\"\\'': 2, (\"'\",): 3}", "{'s': {'b', 'a', 3, (1, 2), b'a'}}",
        "[-0.0+0j, -0.0-0j, 0-0j, 1-1e400j, 0.1+0.2j, 1e-400j, 9" + "0" * 400 + ".0]",
        "['''a\r\nb''', 'a\\\r\nb', r'''\r\n''']", "[1,\r\n2]\r\n",
    ]  # fmt: skip
    values, wrong = _differences(inputs)
    assert values > 20
    assert not wrong, f"{len(wrong)} differ, first: {wrong[0]!r:.600}"


def test_python_literal_is_the_compiled_cores() -> None:
    assert builtin_parsers()["python_literal"] is _native.parse_python_literal
    for value in (None, 1, b"[1]", ["[1]"], {"a": "[1]"}, "(1, 2)", "42", "[1", "[x]"):
        assert _native.parse_python_literal(value) is value
    assert _native.parse_python_literal(" {'a': (1, 2), 3: {b'x'}} ") == {"a": [1, 2], "3": ["x"]}


def test_object_reprs_read_as_the_ast_path_reads_them(monkeypatch: pytest.MonkeyPatch) -> None:
    by_ast = python_literals.parse_python_repr_by_ast
    left_to_python = []

    def counted(value: Any) -> Any:
        left_to_python.append(value)
        return by_ast(value)

    # The core calls the module's function by name: counting which texts it leaves to ast.
    monkeypatch.setattr(python_literals, "parse_python_repr_by_ast", counted)
    r = random.Random(1819)
    inputs = parser_corpus.python_generated(10, 3000) + parser_corpus.generated(10, 1000)
    inputs += [_mutated(r, t) for t in parser_corpus.python_generated(11, 3000)]
    objects = [
        "ChatMessage(_role=<ChatRole.USER: 'user'>, _content=[TextContent(text='x')], "
        "_name=None, _meta={})",
        "ResponseFunctionToolCall(arguments='{\"q\": 1}', call_id='c1', name='search', "
        "type='function_call', id='fc_1', status='completed')",
        "[ToolCall(tool_name='calc', arguments={'x': 1}, id='t1')]",
        "M(status='success', result={'a': [1, 2.5, None]}, error=None)",
        "Point(x=1, y=<E.A: 2>, z=<object at 0x7f>, w=datetime.datetime(2024, 1, 1, 0, 0))",
    ]
    wrong = []
    for text in inputs + objects:
        ours, theirs = _called(_native.parse_python_repr, text), _called(by_ast, text)
        if ours != theirs:
            wrong.append((text, ours, theirs))
    assert not wrong, f"{len(wrong)} differ, first: {wrong[0]!r:.600}"
    for text in objects:  # real shapes are read by the core itself
        left_to_python.clear()
        assert _native.parse_python_repr(text) is not text
        assert left_to_python == [], text
    assert builtin_parsers()["python_repr"] is _native.parse_python_repr
