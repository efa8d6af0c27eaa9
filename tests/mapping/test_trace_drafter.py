"""The compiled core's drafter of whole traces (``TraceDrafter`` in
``native/python/src/draft.rs``): the mapper's ``Draft`` records it makes have every slot set
as the dataclass would, which spans it drafts, counts or sets aside, and the token counts a
model call recording zero input tokens loses (``False`` compared as Python compares it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from otel_oracles.assemble import build_trace
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.mapping._mapper import Draft, _trace_drafter
from otel_oracles.model.span import SpanRecord, StatusCode, Trace
from otel_oracles.pipeline import read_traces

TRACES = Path(__file__).resolve().parents[1] / "testdata" / "traces"


def _span(span_id: str, parent: str, name: str, attrs: dict[str, Any]) -> SpanRecord:
    return SpanRecord(
        trace_id="a" * 32,
        span_id=span_id,
        parent_span_id=parent,
        name=name,
        start_ns=1,
        end_ns=10,
        status_code=StatusCode.UNSET,
        attributes=attrs,
    )


def _trace(spans: list[SpanRecord]) -> Trace:
    return build_trace("a" * 32, spans)


def _chat(span_id: str, parent: str, usage: tuple[Any, Any]) -> SpanRecord:
    return _span(
        span_id,
        parent,
        "chat gpt-4o",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.usage.input_tokens": usage[0],
            "gen_ai.usage.output_tokens": usage[1],
        },
    )


def test_core_drafts_have_every_slot_of_the_dataclass() -> None:
    conventions = load_conventions()
    compiled = conventions.compiled()
    drafter = compiled.trace_drafter or _trace_drafter(compiled)
    paths = sorted(p for p in TRACES.rglob("*") if p.suffix in (".json", ".jsonl"))
    assert paths
    seen = 0
    for path in paths[::8]:
        for trace in read_traces([str(path)], []):
            selected = compiled.table.select(trace.spans, trace.children)
            drafts, by_span, used, unrecognised, by_id = drafter.draft_trace(
                trace.spans, trace.children, selected
            )
            # Every span by its id, the last of an id kept, as the comprehension made it.
            expected_by_id = {s.span_id: s for s in trace.spans}
            assert list(by_id) == list(expected_by_id)
            assert all(by_id[k] is span for k, span in expected_by_id.items())
            rules = compiled.select(trace)
            assert [s for s, r in zip(trace.spans, rules, strict=True) if r is None] == (
                unrecognised
            )
            # Spans counted per convention file, the files in the order their first span
            # came (the drafter sums its per-rule counts per file once per trace).
            expected: dict[str, int] = {}
            for rule in rules:
                if rule is not None:
                    expected[rule.file] = expected.get(rule.file, 0) + 1
            assert list(used.items()) == list(expected.items())
            assert [d.span for d in drafts] == [
                s for s, r in zip(trace.spans, rules, strict=True) if r and r.step != "none"
            ]
            for draft in drafts:
                assert type(draft) is Draft
                assert by_span[draft.span.span_id] is draft
                fresh = Draft(kind=draft.rule.step, span=draft.span, rule=draft.rule)
                for name in Draft._fields:
                    value = getattr(draft, name)  # every slot set
                    if name in ("scope", "synthesized", "follows", "claimed"):
                        assert value == getattr(fresh, name)
                assert draft.kind == draft.rule.step
                assert draft.children == trace.children.get(draft.span.span_id, [])
                seen += 1
    assert seen > 50


def test_zero_input_tokens_are_no_usage_and_a_false_count_is_zero() -> None:
    conventions = load_conventions()
    spans = [
        _span("1" * 16, "", "invoke_agent a", {"gen_ai.operation.name": "invoke_agent"}),
        _chat("2" * 16, "1" * 16, (0, 0)),
        _chat("3" * 16, "1" * 16, (0, 5)),
        _chat("4" * 16, "1" * 16, (7, 0)),
    ]
    steps = map_trace(_trace(spans), conventions).steps
    usage = [(s.input_tokens, s.output_tokens) for s in steps if s.kind == "generation"]
    assert usage == [(None, None), (None, 5), (7, 0)]
