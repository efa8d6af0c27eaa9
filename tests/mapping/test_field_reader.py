"""The compiled core's field reader (``FieldReader``) reads a selected rule's fields as the
mapping files say: the first usable source in order, placeholders remembered while later
sources are tried (a content field left with one is redacted), the core's own ``json``
parsers and Python parsers alike, a parser's exception as "no value", ``key:``, and every
kind of source (attributes, several, a prefix, events, the span name, the status message,
a child's attribute, a constant)."""

from __future__ import annotations

from typing import Any

import pytest

from otel_oracles.assemble import build_trace
from otel_oracles.mapping import map_trace
from otel_oracles.mapping._loader import ConventionSet
from otel_oracles.mapping.config import ConventionFile
from otel_oracles.mapping.parsers import ParserRegistration, ParserRegistry, builtin_parsers
from otel_oracles.model.span import EventRecord, SpanRecord
from otel_oracles.model.step import Step

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"


def _boom(value: Any) -> Any:
    raise ValueError(f"cannot read {value!r}")


def _conventions(fields: dict[str, Any], step: str = "tool_call") -> ConventionSet:
    parsers = builtin_parsers().registrations()
    parsers["boom"] = ParserRegistration(_boom, "tests")
    file = ConventionFile.model_validate(
        {
            "name": "reader-test",
            "rules": [
                {
                    "id": "r",
                    "step": step,
                    "match": {"all": [{"attr": "t", "exists": True}]},
                    "fields": fields,
                }
            ],
        }
    )
    return ConventionSet(files=[file], parsers=ParserRegistry(parsers))


def _step(fields: dict[str, Any], *spans: SpanRecord, step: str = "tool_call") -> Step:
    trace = build_trace(TRACE_ID, list(spans))
    return map_trace(trace, _conventions(fields, step)).steps[0]


def _span(span_id: str = "a1", parent: str = "", **fields: Any) -> SpanRecord:
    attributes = {"t": 1, **fields.pop("attributes", {})}
    return SpanRecord(
        trace_id=TRACE_ID,
        span_id=span_id,
        parent_span_id=parent,
        name=fields.pop("name", "op"),
        start_ns=1,
        end_ns=2,
        attributes=attributes,
        **fields,
    )


def test_first_usable_source_wins_and_placeholders_let_later_sources_try() -> None:
    fields = {"tool": [{"attr": "a"}, {"attr": "b"}, {"attr": "c"}]}
    assert _step(fields, _span(attributes={"b": "second", "c": "third"})).tool == "second"
    assert _step(fields, _span(attributes={"a": "", "b": None, "c": "third"})).tool == "third"
    step = _step(fields, _span(attributes={"a": "__REDACTED__"}))
    assert step.tool is None and "tool" not in step.redacted  # not a content field


def test_content_field_left_with_a_placeholder_is_redacted_even_after_parsing() -> None:
    fields = {"arguments": [{"attr": "args", "parse": "json"}]}
    step = _step(fields, _span(attributes={"args": '"[REDACTED]"'}))
    assert step.arguments is None and "arguments" in step.redacted
    step = _step(fields, _span(attributes={"args": '{"q": 1}'}))
    assert step.arguments == {"q": 1} and not step.redacted


class _Masked(str):
    """A text that compares equal to the placeholder it starts with (an application's own
    string type could): longer than any placeholder, yet one by Python's comparison."""

    def __eq__(self, other: object) -> bool:
        return str.__eq__(self[:12], other)

    def __hash__(self) -> int:
        return hash(self[:12])


def test_placeholders_are_found_by_pythons_comparison_whatever_the_length() -> None:
    fields = {"arguments": [{"attr": "args"}]}
    step = _step(fields, _span(attributes={"args": _Masked("__REDACTED__ by the proxy")}))
    assert step.arguments is None and "arguments" in step.redacted
    long_text = "__REDACTED__" + "x" * 5000
    step = _step({"result": [{"attr": "r"}]}, _span(attributes={"r": long_text}))
    assert step.result == long_text and not step.redacted


def _reader_of(placeholders: list[str]) -> ConventionSet:
    file = ConventionFile.model_validate(
        {
            "name": "reader-lengths",
            "redaction_placeholders": placeholders,
            "rules": [
                {
                    "id": "r",
                    "step": "tool_call",
                    "match": {"all": [{"attr": "t", "exists": True}]},
                    "fields": {"result": [{"attr": "r"}]},
                }
            ],
        }
    )
    return ConventionSet(files=[file], parsers=builtin_parsers())


@pytest.mark.parametrize(
    "placeholders",
    [["", "ab", "h" * 62, "x" * 63], ["", "ab", "y" * 64, "z" * 200]],
    ids=["shorter-than-64", "64-and-longer"],
)
def test_placeholders_of_every_length_are_found_and_texts_of_their_lengths_kept(
    placeholders: list[str],
) -> None:
    """The reader passes over an exact ``str`` of no placeholder's length without asking the
    set (the placeholders' lengths as bits, when all are under 64 characters; else every
    ``str`` is asked): each placeholder is one, another text of its length is content, and
    so is a text of a length next to theirs."""
    conventions = _reader_of(placeholders)

    def read(value: str) -> Step:
        trace = build_trace(TRACE_ID, [_span(attributes={"r": value})])
        return map_trace(trace, conventions).steps[0]

    for placeholder in placeholders:
        step = read(placeholder)
        assert step.result is None and "result" in step.redacted, len(placeholder)
        if placeholder:
            other = "q" * len(placeholder)
            step = read(other)
            assert step.result == other and not step.redacted, len(other)
    for length in (1, 3, 61, 65, 199, 201):
        step = read("w" * length)
        assert step.result == "w" * length and not step.redacted, length


def test_a_parser_that_raises_gives_no_value_and_the_next_source_is_tried() -> None:
    fields = {"tool": [{"attr": "a", "parse": "boom"}, {"attr": "b"}]}
    assert _step(fields, _span(attributes={"a": "x", "b": "fallback"})).tool == "fallback"


def test_key_takes_a_value_of_the_parsed_object_only() -> None:
    fields = {
        "to_agent": [{"attr": "args", "parse": "json", "key": "coworker"}, {"const": "nobody"}]
    }
    assert (
        _step(
            fields, _span(attributes={"args": '{"coworker": "analyst"}'}), step="handoff"
        ).to_agent
        == "analyst"
    )
    assert (
        _step(fields, _span(attributes={"args": '["analyst"]'}), step="handoff").to_agent
        == "nobody"
    )
    assert (
        _step(fields, _span(attributes={"args": {"coworker": "writer"}}), step="handoff").to_agent
        == "writer"
    )


def test_every_kind_of_source() -> None:
    event = EventRecord(
        name="gen_ai.tool.message", time_ns=1, attributes={"id": "c1"}, body={"content": "r"}
    )
    other = EventRecord(name="other", time_ns=1, attributes={"id": "c0"})
    span = _span(
        name="execute_tool lookup",
        attributes={"x.0": "a", "x.1": "b", "xy": "no", "m": "mm"},
        events=[other, event],
        status_message="it broke",
        status_code=2,
    )
    child = _span("a2", "a1", attributes={"child.key": "from child"})
    fields = {
        "tool": [{"span_name": "^execute_tool (.+)$"}],
        "call_id": [{"event": "gen_ai.tool.message", "attr": "id"}],
        "result": [{"event": ["gen_ai.tool.message"], "body": True}],
        "error_message": [{"status_message": True}],
        "agent_name": [{"child_attr": "child.key"}],
        "model": [{"attrs": ["m", "absent"], "key": "m"}],
        "arguments": [{"attr_prefix": "x"}],
        "provider": [{"const": "acme"}],
    }
    step = _step(fields, span, child)
    assert step.tool == "lookup"
    assert step.call_id == "c1"
    assert step.result == {"content": "r"}
    assert step.error_message == "it broke"
    assert step.agent_name == "from child"
    assert step.model == "mm"
    assert step.arguments == {"0": "a", "1": "b"}
    assert step.provider == "acme"
