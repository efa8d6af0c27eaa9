"""The SDK limits' rules in the compiled core (``_limits.drop_cut_values``,
``lost_attributes``): values a cut reached dropped where they sit, on shapes the captures do
not show (tuples, ``dict`` subclasses, content attributes, arguments left as text)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from otel_oracles.mapping._limits import CUT_ATTRIBUTE, drop_cut_values, lost_attributes
from otel_oracles.model.span import SpanRecord

CUT = "x" * 20


@dataclass
class _Draft:
    fields: dict[str, Any]
    attributes: dict[str, Any] = field(default_factory=dict)
    redacted: set[str] = field(default_factory=set)


class _Items(dict[str, Any]):
    """A mapping whose ``items()`` is what Python's rule reads."""


def test_cut_strings_become_none_where_they_sit() -> None:
    kept = [{"role": "user", "content": "short"}]
    message = {"role": "assistant", "content": CUT, "parts": ("a", CUT)}
    draft = _Draft({"input_messages": kept, "output_messages": [message], "query": "q"})
    drop_cut_values([draft], len(CUT))
    assert draft.fields["input_messages"] is kept, "nothing cut: the same object"
    assert draft.fields["output_messages"] == [
        {"role": "assistant", "content": None, "parts": ["a", None]}
    ]
    assert message["content"] == CUT, "a copy, never the recorded value changed"
    assert draft.redacted == {"output_messages"}
    assert draft.attributes == {CUT_ATTRIBUTE: len(CUT)}


def test_a_dict_subclass_is_copied_into_a_plain_dict() -> None:
    draft = _Draft({"result": _Items(out=CUT, n=1)})
    drop_cut_values([draft], len(CUT))
    assert type(draft.fields["result"]) is dict
    assert draft.fields["result"] == {"out": None, "n": 1}


def test_arguments_left_as_text_stay_flagged_and_content_attributes_go() -> None:
    draft = _Draft({"arguments": CUT, "result": CUT + "!"}, {"structured_output": {"a": CUT}})
    drop_cut_values([draft], len(CUT))
    assert draft.fields == {"arguments": CUT, "result": CUT + "!"}
    assert draft.redacted == {"arguments"}
    assert draft.attributes == {CUT_ATTRIBUTE: len(CUT)}


def test_nothing_cut_leaves_the_draft_alone() -> None:
    draft = _Draft({"result": {"a": [CUT + "!"]}, "arguments": {"k": "v"}})
    drop_cut_values([draft], len(CUT))
    assert draft.redacted == set() and draft.attributes == {}


def _span(span_id: str, dropped: int, attrs: int, language: str) -> SpanRecord:
    return SpanRecord(
        "1" * 32, span_id * 16, "", "s", start_ns=0, end_ns=1,
        attributes={f"k{i}": i for i in range(attrs)}, dropped_attributes=dropped,
        resource={"service.name": "svc", "telemetry.sdk.language": language},
    )  # fmt: skip


def test_java_drops_are_a_loss_only_on_the_fullest_span_of_its_service() -> None:
    spans = [_span("a", 3, 128, "java"), _span("b", 2, 60, "java"), _span("c", 1, 10, "python")]
    assert lost_attributes(spans) == {"a" * 16: 3, "c" * 16: 1}
    assert lost_attributes([_span("d", 0, 5, "python")]) == {}


def test_spans_read_from_any_iterable_as_from_a_list() -> None:
    """A list is read in place, any other iterable through its iterator: the same answer."""
    spans = [_span("a", 3, 128, "java"), _span("b", 2, 60, "java"), _span("c", 1, 10, "python")]
    want = {"a" * 16: 3, "c" * 16: 1}
    assert lost_attributes(spans) == want
    assert lost_attributes(tuple(spans)) == want
    assert lost_attributes(span for span in spans) == want
