"""The core's ``FieldReader`` resolves a set's sources itself (``_compile.build_set`` hands it
the compiled set's plain data as the cache reads it back): each distinct source once, shared
by number among the fields that read it, its ``parse:`` names asked of Python once per name
(none, one, or a chain of several, as ``ParserRegistry.chain`` makes them), a span-name
pattern's group function once per pattern; lists and tuples alike; an unknown name or a
number with no source refused."""

from __future__ import annotations

from typing import Any

import pytest

from otel_oracles._native import FieldReader
from otel_oracles.mapping._compile import _first_group, _named_parser
from otel_oracles.mapping.parsers import ParserRegistration, ParserRegistry, builtin_parsers
from otel_oracles.model.span import SpanRecord


def _span(name: str = "op", **attributes: Any) -> SpanRecord:
    return SpanRecord(
        trace_id="ab" * 16,
        span_id="cd" * 8,
        parent_span_id="",
        name=name,
        start_ns=1,
        end_ns=2,
        attributes=attributes,
    )


def _read(reader: FieldReader, span: SpanRecord, plan: int = 0) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    reader.read(span, [], plan, fields, set())
    return fields


def _upper(value: Any) -> Any:
    return value.upper() if isinstance(value, str) else None


def _registry() -> ParserRegistry:
    parsers = builtin_parsers().registrations()
    parsers["upper"] = ParserRegistration(_upper, "tests")
    return ParserRegistry(parsers)


class _Asked:
    """``parser`` and ``span_name`` for a reader, counting what it asks."""

    def __init__(self) -> None:
        self.registry = _registry()
        self.names: list[str] = []
        self.patterns: list[str] = []

    def parser(self, name: str) -> Any:
        self.names.append(name)
        return _named_parser(self.registry, name)

    def span_name(self, pattern: str) -> Any:
        self.patterns.append(pattern)
        return _first_group(pattern)


def _reader(sources: Any, plans: Any, asked: _Asked | None = None) -> FieldReader:
    asked = asked or _Asked()
    return FieldReader(
        sources, plans, asked.parser, asked.span_name, frozenset({"__REDACTED__"}), print
    )


SOURCES = [
    ["attr", "args", None, ["json"], "q"],
    ["attr", "who", None, ["upper"], None],
    ["attr", "args", None, ["json_or_text", "string_list"], None],
    ["span_name", "^run (.+)$", None, [], None],
    ["span_name", "^run (.+)$", None, ["upper"], None],
    ["attr", "args", None, [], None],
]


def test_each_name_and_pattern_is_asked_once_and_sources_are_shared() -> None:
    asked = _Asked()
    plans = [
        [["query", False, [0, 5]], ["tool", False, [1, 3]]],
        [["tool", False, [4]], ["raw", True, [5]], ["items", False, [2]]],
    ]
    reader = _reader(SOURCES, plans, asked)
    assert sorted(asked.names) == ["json", "json_or_text", "string_list", "upper"]
    assert asked.patterns == ["^run (.+)$"]
    span = _span("run lookup", args='{"q": 1}', who="web")
    assert _read(reader, span, 0) == {"query": 1, "tool": "WEB"}
    assert _read(reader, span, 1) == {"tool": "LOOKUP", "raw": '{"q": 1}'}
    assert _read(reader, _span("x", args='["a", 2]'), 1) == {
        "raw": '["a", 2]',
        "items": ["a", "2"],
    }
    assert _read(reader, _span("run it"), 0) == {"tool": "it"}


def test_tuples_read_as_lists() -> None:
    plans = [[["query", False, [0, 5]], ["tool", False, [1, 3]]]]
    as_tuples = _reader([tuple(s) for s in SOURCES], [[tuple(f) for f in plan] for plan in plans])
    as_lists = _reader(SOURCES, plans)
    for span in (_span("run a", args='{"q": 2}'), _span("b", who="n", args="[1]")):
        assert _read(as_tuples, span) == _read(as_lists, span)


def test_a_chain_of_names_runs_as_the_registry_chain() -> None:
    registry = _registry()
    chain = registry.chain(["json_or_text", "string_list"])
    assert chain is not None
    reader = _reader(SOURCES, [[["items", False, [2]]]])
    for raw in ('["a", "b"]', "plain", "[1, null]", '{"a": 1}', "[]"):
        want = chain(raw)
        got = _read(reader, _span(args=raw)).get("items")
        assert got == want


@pytest.mark.parametrize(
    ("sources", "plans", "error"),
    [
        ([["attr", "a", None, ["no such parser"], None]], [[["f", False, [0]]]], KeyError),
        ([["attr", "a", None, [], None]], [[["f", False, [1]]]], IndexError),
        ([["attr", "a", None, [], None]], [[["f", False, [-1]]]], OverflowError),
        ([["attr", "a", None, []]], [[["f", False, [0]]]], ValueError),
        ([["nowhere", "a", None, [], None]], [], ValueError),
        ([{"attr": "a"}], [], TypeError),
        ([["span_name", ["not", "a", "pattern"], None, [], None]], [], TypeError),
    ],
    ids=["unknown name", "no such source", "negative", "short", "tag", "shape", "pattern"],
)
def test_what_the_reader_refuses(sources: Any, plans: Any, error: type[Exception]) -> None:
    """Refused, never read otherwise: ``build_set``'s caller compiles the set again."""
    with pytest.raises(error):
        _reader(sources, plans)


def test_an_unused_source_is_resolved_all_the_same() -> None:
    """A source no field reads with an unknown parser is refused, as resolving every
    source in Python refused it."""
    with pytest.raises(KeyError):
        _reader([["attr", "a", None, [], None], ["attr", "b", None, ["nope"], None]], [])
