"""The run's wrappers in the compiled core (``_native.run_wrappers``): the unrecognised spans
around every drafted span, and the other unrecognised spans counted by name, on parent
chains a real capture does not show (loops, spans missing from the trace)."""

from __future__ import annotations

from otel_oracles._native import run_wrappers
from otel_oracles.model.span import SpanRecord

TRACE = "1" * 32


def _span(span_id: str, parent: str, name: str) -> SpanRecord:
    return SpanRecord(TRACE, span_id * 16, parent * 16, name, start_ns=0, end_ns=1)


def _run(
    spans: list[SpanRecord], drafted: list[str], unrecognised: list[str]
) -> tuple[int, dict[str, int]]:
    by_id = {s.span_id: s for s in spans}
    drafts = {s * 16: object() for s in drafted}
    return run_wrappers([by_id[s * 16] for s in unrecognised], drafts, by_id)


def test_the_spans_around_every_step_are_wrappers_and_the_others_are_counted() -> None:
    spans = [
        _span("a", "", "app"),
        _span("b", "a", "agent"),
        _span("c", "b", "chat"),
        _span("d", "a", "cache lookup"),
        _span("e", "a", "cache lookup"),
    ]
    assert _run(spans, ["b", "c"], ["a", "d", "e"]) == (1, {"cache lookup": 2})


def test_a_step_beside_the_others_leaves_no_wrapper() -> None:
    spans = [_span("a", "", "app"), _span("b", "a", "agent"), _span("c", "", "other root")]
    assert _run(spans, ["b", "c"], ["a"]) == (0, {"app": 1})


def test_a_drafted_span_missing_from_the_trace_leaves_no_wrapper() -> None:
    spans = [_span("a", "", "app"), _span("b", "a", "agent")]
    by_id = {s.span_id: s for s in spans}
    drafts = {"b" * 16: object(), "f" * 16: object()}
    assert run_wrappers([by_id["a" * 16]], drafts, by_id) == (0, {"app": 1})


def test_a_looping_parent_chain_ends_where_it_would_repeat() -> None:
    # p -> q -> p, and the step s under p: both p and q are around it.
    spans = [_span("p", "q", "loop one"), _span("q", "p", "loop two"), _span("s", "p", "agent")]
    assert _run(spans, ["s"], ["p", "q"]) == (2, {})


def test_no_steps_or_nothing_unrecognised() -> None:
    spans = [_span("a", "", "app"), _span("b", "a", "agent")]
    assert _run(spans, [], ["a"]) == (0, {"app": 1})
    assert _run(spans, ["b"], []) == (0, {})
