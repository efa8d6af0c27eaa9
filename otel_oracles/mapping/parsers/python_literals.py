"""Reading Python ``repr`` text from traces as data, never as code.

Callback-style instrumentations (LangChain handlers and the tracers built on them, the
openai-agents instrumentation) record payloads with ``str()``/``repr()``: ``input_str`` holds
``{'command': 'curl https://example.com'}``, a message list holds ``ResponseFunctionToolCall(
arguments='...', name='...')``. Such text is untrusted trace data, so it is *parsed* and
only literals are turned into values (the ``ast.literal_eval`` subset: strings, numbers,
bytes, booleans, ``None``, tuples, lists, dicts, sets), plus, in ``parse_python_repr``,
constructor calls read as ``{"__type__": name, keyword: value}``; nothing is ever evaluated.
Both parsers are the compiled core's (``native/core/src/parsers/python_literal.rs``); the
``ast`` functions below are the path it calls for the texts it leaves to Python, with the
results it reproduces. Size and depth are bounded before any parser sees the text (CPython's
parser recurses per nesting level and allocates per node), so a hostile payload costs at most
a bounded parse.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from otel_oracles._lazy_pattern import lazy_pattern
from otel_oracles._native import parse_python_literal as parse_python_literal
from otel_oracles._native import parse_python_repr as parse_python_repr
from otel_oracles.mapping.parsers._registry import Parser

# ``python_literal`` is the compiled core's (native/core/src/parsers/python_literal.rs, bound
# in native/python/src/parsers.rs): ``parse_python_literal(value)`` reads a ``str`` holding
# the ``repr`` of a dict or list (``{'a': (1, 2)}``, ``[('x', 2)]``) as its JSON-like value,
# exactly as ``ast.literal_eval`` then ``_jsonable`` below read it (tuples and sets become
# lists, sets sorted by ``repr``, bytes decoded, complex numbers and non-string keys as their
# ``str``), under the same bounds (``MAX_LITERAL_CHARS``, ``MAX_LITERAL_DEPTH``); any other
# value, and text that is no such literal, comes back as the very object given. Only
# containers are read: ``'None'`` or ``'42'`` as a payload is more likely text than a repr.
# ``python_repr`` is the core's too (``parse_python_repr``, same module): constructor calls,
# names and ``<...>`` reprs as ``parse_python_repr_by_ast`` reads them, which it calls for
# every other expression.

MAX_LITERAL_CHARS = 256 * 1024
"""Longer text is left as text (a tool payload of this size is not arguments worth reading)."""
MAX_LITERAL_DEPTH = 32
"""Deeper bracket nesting is left as text (real payloads nest a few levels)."""

_OPENERS = frozenset("([{")
_CLOSERS = frozenset(")]}")


def _nesting_within(text: str, limit: int) -> bool:
    """Whether brackets outside string literals nest at most ``limit`` deep. A linear scan
    that tracks quotes well enough for a bound (a wrong guess only refuses or allows a parse
    the AST walk below still checks)."""
    depth = 0
    quote = ""
    escaped = False
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
        elif ch in _OPENERS:
            depth += 1
            if depth > limit:
                return False
        elif ch in _CLOSERS:
            depth -= 1
    return True


def literal_tree(text: str) -> ast.expr | None:
    """The expression tree of ``text`` when it is small and shallow enough, else ``None``."""
    if len(text) > MAX_LITERAL_CHARS or not _nesting_within(text, MAX_LITERAL_DEPTH):
        return None
    try:
        return ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def literal_value(node: ast.expr) -> Any:
    """The value of a literal node, as JSON-like data (tuples and sets become lists, bytes
    become text); raises ``ValueError`` for anything that is not a literal."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError) as exc:
        raise ValueError("not a literal") from exc
    return _jsonable(value)


class UnwritableInteger(ValueError):
    """A literal integer of more than the 4,300 decimal digits Python writes."""


def _jsonable(value: Any) -> Any:
    if isinstance(value, int) and value.bit_length() > 127:
        # A hex, octal or binary literal is read whatever its length, but Python writes no
        # integer of more than 4,300 decimal digits (``sys.get_int_max_str_digits``): such a
        # value in a trace made every later ``json.dumps`` of the step raise (``inspect
        # --json`` ended in a traceback, checks that serialise arguments in ``error``). It
        # is no literal, as the same number in decimal is not (``ast.parse`` refuses it).
        try:
            str(value)
        except ValueError:
            raise UnwritableInteger("integer too long to write in decimal") from None
        return value
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


def parse_python_literal_by_ast(value: Any) -> Any:
    """``parse_python_literal`` by ``ast.literal_eval``: the compiled core calls it for the
    few texts it leaves to Python (``\\N{...}`` escapes, which need Unicode's name table;
    escapes of a lone surrogate and ``str`` values holding one, which no Rust string holds;
    integers past 127 bits, Python's big integers with their 4,300-digit limit). A
    Python-repr dict or list becomes its value; anything else is returned unchanged."""
    if not isinstance(value, str) or value.lstrip()[:1] not in ("{", "["):
        return value
    node = literal_tree(value)
    if node is None:
        return value
    try:
        return literal_value(node)
    except ValueError:
        return value


def _string_step(ch: str, quote: str, escaped: bool) -> tuple[str, bool, bool]:
    """Advance the string-literal state of a repr scan over ``ch``: the open quote (``""``
    outside a literal), whether the next character is escaped, and whether ``ch`` belongs
    to a literal (its quotes included)."""
    if quote:
        if escaped:
            return quote, False, True
        if ch == "\\":
            return quote, True, True
        return ("" if ch == quote else quote), False, True
    if ch in ("'", '"'):
        return ch, False, True
    return "", False, False


def _angle_end(text: str, start: int) -> int:
    """Index just past the ``>`` closing the ``<`` at ``start`` (nested ``<locals>`` and
    quoted text inside included), or ``-1`` when it is not closed."""
    depth = 0
    quote, escaped = "", False
    for i in range(start, len(text)):
        ch = text[i]
        quote, escaped, in_string = _string_step(ch, quote, escaped)
        if in_string:
            continue
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
            if depth == 0:
                return i + 1
    return -1


def _without_angle_reprs(text: str) -> str:
    """``text`` with each ``<...>`` repr outside string literals replaced by Python source:
    an enum member (``<ChatRole.USER: 'user'>``) by its value, anything else (``<State object
    at 0x...>``, ``<function f at 0x...>``) by ``None``. One pass, linear in the text."""
    out: list[str] = []
    quote, escaped = "", False
    i = 0
    while i < len(text):
        ch = text[i]
        quote, escaped, in_string = _string_step(ch, quote, escaped)
        if not in_string and ch == "<":
            end = _angle_end(text, i)
            if end == -1:
                return text
            inner = text[i + 1 : end - 1]
            name, sep, value = inner.partition(": ")
            enum_member = sep and name.replace(".", "").replace("_", "").isalnum()
            out.append(value if enum_member else "None")
            i = end
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _object_value(node: ast.expr) -> Any:
    """A repr node as data: literals as ``literal_value``; a constructor call
    ``Name(k=v, ...)`` as ``{"__type__": "Name", "k": v, ...}`` (positional arguments under
    ``"__args__"``); any other expression as ``None``. Never evaluates anything."""
    if isinstance(node, ast.Call):
        func = node.func
        parts: list[str] = []
        while isinstance(func, ast.Attribute):
            parts.append(func.attr)
            func = func.value
        if isinstance(func, ast.Name):
            parts.append(func.id)
        out: dict[str, Any] = {"__type__": ".".join(reversed(parts)) or None}
        if node.args:
            out["__args__"] = [_object_value(a) for a in node.args]
        for kw in node.keywords:
            if kw.arg is not None:
                out[kw.arg] = _object_value(kw.value)
        return out
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return [_object_value(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {
            str(_object_value(k)) if k is not None else "**": _object_value(v)
            for k, v in zip(node.keys, node.values, strict=True)
        }
    try:
        return literal_value(node)
    except UnwritableInteger as exc:
        # The ValueError ``str`` of such a dict key always raised: the text is no value.
        raise ValueError(str(exc)) from None
    except ValueError:
        return None


def parse_python_repr_by_ast(value: Any) -> Any:
    """``parse_python_repr`` by ``ast``, for what the compiled core does not read itself (it
    reads literals, constructor calls with keyword arguments, names and ``<...>`` reprs;
    any other expression, text that is no expression and the corners of
    ``parse_python_literal_by_ast`` come here). The ``repr`` of Python objects (dataclasses,
    pydantic models, enums) as data, for instrumentations that record a framework's objects
    with ``str()``: Haystack's
    ``ChatMessage(_role=<ChatRole.USER: 'user'>, _content=[TextContent(text='...')])`` becomes
    ``{"__type__": "ChatMessage", "_role": "user", "_content": [{"__type__":
    "TextContent", "text": "..."}]}``. Parsed with ``ast`` under the same size and depth
    bounds as ``parse_python_literal`` (after ``<...>`` reprs are replaced, see
    ``_without_angle_reprs``); nothing is evaluated. Text that is not such a repr is returned
    unchanged."""
    if not isinstance(value, str) or len(value) > MAX_LITERAL_CHARS:
        return value
    node = literal_tree(_without_angle_reprs(value))
    if node is None:
        return value
    return _object_value(node)


_FIELD_START = lazy_pattern(r"\s+([A-Za-z_]\w{0,100})=")
_BLANKS = lazy_pattern(r"\s+")


def _pydantic_str_call(text: str) -> str | None:
    """``field='a' other=[1, 2]`` (pydantic's ``__str__``: fields separated by spaces) as the
    call source ``M(field='a', other=[1, 2])``: each run of whitespace outside string
    literals and brackets that precedes ``name=`` becomes a comma. ``None`` when the quotes
    or brackets do not balance. One linear pass."""
    out: list[str] = []
    depth = 0
    quote, escaped = "", False
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in ("'", '"'):
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and ch.isspace():
            m = _FIELD_START().match(text, i)
            if m:
                out.append(", " + m.group(1) + "=")
                i = m.end()
                continue
            # No field starts after this run of whitespace, and none can from inside it
            # (every ending tried from a later blank was tried from this one): copy the run
            # whole, or a long run of blanks costs a match per blank over the rest of the
            # run (quadratic: 80,000 blanks took 44 s).
            blanks = _BLANKS().match(text, i)
            end = blanks.end() if blanks is not None else i + 1
            out.append(text[i:end])
            i = end
            continue
        out.append(ch)
        i += 1
    if quote or depth:
        return None
    return "M(" + "".join(out) + ")"


_FIELD_AT_START = lazy_pattern(r"[A-Za-z_]\w{0,100}=")


def pydantic_str_fields(text: str) -> dict[str, Any] | None:
    """The fields of a model as pydantic's ``str()`` writes it (``status='success'
    result={'a': 1} error=None``: ``name=repr`` pairs separated by spaces, no class name),
    read as a call's keyword arguments by ``parse_python_repr`` (never evaluated, the same
    bounds); ``None`` when the text is not that form."""
    if len(text) > MAX_LITERAL_CHARS or not _FIELD_AT_START().match(text):
        return None
    source = _pydantic_str_call(text)
    fields = parse_python_repr(source) if source is not None else None
    if not isinstance(fields, dict) or fields.get("__type__") != "M" or "__args__" in fields:
        return None
    return {k: v for k, v in fields.items() if k != "__type__"}


def parse_pydantic_str(value: Any) -> Any:
    """A model written by pydantic's ``str()`` as the object of its fields (see
    ``pydantic_str_fields``): Agno's ``FunctionExecutionResult`` in OpenLLMetry's
    ``traceloop.entity.output`` reads ``{"status": "success", "result": {...}, "error":
    None}``. Any other value is returned unchanged."""
    if not isinstance(value, str):
        return value
    fields = pydantic_str_fields(value)
    return value if fields is None else fields


_FAILED_STATUSES = frozenset({"failure", "failed", "error"})


def parse_execution_record(value: Any) -> Any:
    """An execution record, an object with a ``status`` and a ``result`` or ``error`` (Agno's
    ``FunctionExecutionResult`` as ``pydantic_str`` reads it): its ``result`` when it
    succeeded, ``{"error": <error>}`` when its status says it failed (``failure``,
    ``failed``, ``error``), so the tool-result rules judge it. Any other value is returned
    unchanged."""
    if not isinstance(value, dict) or not isinstance(value.get("status"), str):
        return value
    if "result" not in value and "error" not in value:
        return value
    if value["status"].lower() in _FAILED_STATUSES:
        return {"error": value.get("error") or value.get("result") or value["status"]}
    return value.get("result")


PARSERS: Mapping[str, Parser] = {
    "python_literal": parse_python_literal,
    "python_repr": parse_python_repr,
    "pydantic_str": parse_pydantic_str,
    "execution_record": parse_execution_record,
}
"""Registered names (``parse: [json, python_literal]``) -> parser."""
