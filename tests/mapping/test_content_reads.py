"""The text a content condition (``{field: ..., regex: ...}``) tests, as the compiled core
works it out with the field reader's raw read: the first of the field's sources holding a
value that is no redaction placeholder, a string as it is and any other value as JSON (events
as their bodies, or their attributes for an event without one). The captured traces hold
strings and bodies only (``test_content_conditions.py``); these spans hold the other shapes,
each tested by a regex that only that exact text matches."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest

from otel_oracles.assemble import build_trace
from otel_oracles.mapping._compile import ContentReads, rule_table
from otel_oracles.mapping.config import Rule, Source
from otel_oracles.model.span import EventRecord, SpanRecord

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"

SOURCES = [
    Source.model_validate({"span_name": "^(.+)$"}),  # holds no content: passed over
    Source.model_validate({"const": "constant"}),  # likewise
    Source.model_validate({"attr": "reply"}),
    Source.model_validate({"event": "choice", "attr": "text"}),
    Source.model_validate({"event": "choice"}),
]


def _selects(regex: str, span: SpanRecord) -> bool:
    """Whether a rule testing the content of ``SOURCES`` with ``regex`` matches ``span``."""
    rule = Rule.model_validate(
        {"id": "r", "step": "other", "match": {"all": [{"field": "output", "regex": regex}]}}
    )
    content = ContentReads(frozenset({"__REDACTED__"}))
    table = rule_table([rule], [{"output": SOURCES}], content)
    trace = build_trace(TRACE_ID, [span])
    return table.select(trace.spans, trace.children) == [0]


def _span(attributes: Any = None, events: list[EventRecord] | None = None) -> SpanRecord:
    return SpanRecord(
        trace_id=TRACE_ID,
        span_id="a1",
        parent_span_id="",
        name="op",
        attributes=attributes if attributes is not None else {},
        events=events or [],
    )


def _event(attributes: dict[str, Any] | None = None, body: Any = None) -> EventRecord:
    return EventRecord(name="choice", time_ns=1, attributes=attributes or {}, body=body)


@pytest.mark.parametrize(
    ("span", "text"),
    [
        (_span({"reply": "hello"}), "hello"),
        (_span(MappingProxyType({"reply": "hello"})), "hello"),  # any mapping
        (_span({"reply": ["a", 1, None]}), '["a", 1, null]'),
        (_span({"reply": {"é": 1.5}}), '{"é": 1.5}'),  # not ASCII-escaped
        (_span({"reply": "__REDACTED__"}, [_event({"text": "kept"})]), "kept"),
        (_span({"reply": None}, [_event({"text": "kept"})]), "kept"),
        (_span({}, [_event({"other": 1}), _event({"text": "second"})]), "second"),
        (_span({}, [_event({"other": 1}, body={"b": True})]), '[{"b": true}]'),
        (_span({}, [_event({"other": 1}), _event(body="x")]), '[{"other": 1}, "x"]'),
    ],
)
def test_the_content_is_the_first_source_with_a_value_as_text(span: SpanRecord, text: str) -> None:
    assert _selects(f"^{_escaped(text)}$", span)
    assert not _selects(f"^{_escaped(text)}.", span)


def test_no_content_never_matches_and_a_span_key_never_poses_as_content() -> None:
    assert not _selects(".*", _span({"reply": "__REDACTED__"}))
    assert not _selects(".*", _span({}))
    own = {"\x00content:0": "hello", "other": "x"}
    assert not _selects("hello", _span(own))
    assert not _selects("hello", _span(MappingProxyType(own)))


def _escaped(text: str) -> str:
    return "".join("\\" + c if c in r"\.^$*+?()[]{}|" else c for c in text)
