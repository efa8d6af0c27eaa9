"""Offline assembly runs in the compiled core for natively decoded batches (spans wait there,
records are built at release) and for batches of Python records alike: one policy, so a
crafted interleaving gives the same traces, in the same order, with the same counts at every
trace yielded, whichever way the batches come."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

from otel_oracles.assemble import AssemblyStats, assemble_offline
from otel_oracles.decode import DecodedBatch, decode
from otel_oracles.emit import is_own_telemetry, own_markers
from otel_oracles.session import without_own_telemetry


def trace_id(n: int) -> str:
    return f"{n:032x}"


def span_id(t: int, i: int) -> str:
    return f"{t:08x}{i:08x}"


def spans_body(spans: list[tuple[int, int, int | None]], scope: str = "agent") -> bytes:
    """OTLP/JSON with spans ``(trace, index, parent index or None for a root)``."""
    items = [
        {
            "traceId": trace_id(t),
            "spanId": span_id(t, i),
            **({"parentSpanId": span_id(t, p)} if p is not None else {}),
            "name": f"s{t}.{i}",
            "kind": 1,
            "startTimeUnixNano": str(i),
            "endTimeUnixNano": str(i + 1),
        }
        for t, i, p in spans
    ]
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "agent"}}]}
    return json.dumps(
        {
            "resourceSpans": [
                {"resource": resource, "scopeSpans": [{"scope": {"name": scope}, "spans": items}]}
            ]
        }
    ).encode()


def logs_body(logs: list[tuple[int | None, int]]) -> bytes:
    """OTLP/JSON with log events ``(trace or None for no trace context, span index)``."""
    items: list[dict[str, Any]] = [
        {"eventName": "gen_ai.choice", "timeUnixNano": "5"}
        | ({"traceId": trace_id(t), "spanId": span_id(t, i)} if t is not None else {})
        for t, i in logs
    ]
    return json.dumps(
        {
            "resourceLogs": [
                {"resource": {}, "scopeLogs": [{"scope": {"name": "agent"}, "logRecords": items}]}
            ]
        }
    ).encode()


# Trace 1's log event comes before any of its spans (a logs file read first); trace 2's
# root comes first and a child long after (stays one trace within the window); trace 3
# never gets a root; trace 4 gets a straggler after release (late); trace 5 only has a log
# record (dropped unattached at the end); one log record has no trace context.
BODIES = [
    logs_body([(1, 0), (5, 0), (None, 0)]),
    spans_body([(2, 0, None), (3, 1, 0), (4, 1, 0)]),
    spans_body([(4, 0, None), (3, 2, 0)]),
    spans_body([(1, 1, 0), (6, 1, 0), (6, 2, 0)]),
    spans_body([(6, 0, None), (7, 0, None)]),
    spans_body([(8, 0, None), (9, 0, None), (10, 0, None), (11, 0, None)]),
    spans_body([(4, 2, 0), (2, 1, 0), (1, 0, None)]),
    spans_body([(12, 0, None)]),
]


def native_batches() -> list[DecodedBatch]:
    return [decode(body, "application/json") for body in BODIES]


def record_batches() -> list[DecodedBatch]:
    """The same batches as Python records (what tests and tools build by hand)."""
    out = []
    for batch in native_batches():
        out.append(DecodedBatch(list(batch.spans), list(batch.logs)))
        assert out[-1].native is None
    return out


def run(batches: list[DecodedBatch], **limits: int) -> tuple[list[Any], AssemblyStats]:
    """Each trace yielded (id, span ids, events, incomplete) with the counts read right then."""
    stats = AssemblyStats()
    seen = []
    for trace in assemble_offline(iter(batches), stats=stats, **limits):
        # Copied (the sample of late ids grows as the stream goes on), as ``asdict`` copied.
        counts = {n: copy.copy(getattr(stats, n)) for n in stats._fields if n != "joined"}
        spans = [(s.span_id, [e.name for e in s.events]) for s in trace.spans]
        seen.append((trace.trace_id, spans, trace.incomplete, counts))
    return seen, stats


def test_native_and_python_batches_assemble_alike_at_every_trace() -> None:
    for limits in ({"idle_spans": 3}, {"idle_spans": 3, "max_buffered_spans": 4}, {}):
        native, native_stats = run(native_batches(), **limits)
        records, record_stats = run(record_batches(), **limits)
        assert native == records, limits
        assert native_stats == record_stats, limits


def test_crafted_interleaving_releases_in_policy_order_with_every_count() -> None:
    # (The same order and counts as the Python assembler this replaced gave.)
    seen, stats = run(native_batches(), idle_spans=3)
    order = [int(t, 16) for t, _, _, _ in seen]
    # After each batch, rooted traces idle for 3 records go (2 after batch 3, 4 after 4,
    # ...); 3 never gets a root and goes once idle for 4 x 3 records (after batch 7); 1
    # (rooted in batch 7) and 12 are left at the end and go in first-seen order.
    assert order == [2, 4, 6, 7, 8, 9, 10, 11, 3, 1, 12]
    assert not any(incomplete for _, _, incomplete, _ in seen)
    # 2's child and 4's straggler came after their trace was released.
    assert stats.late_spans == 2
    assert stats.late_trace_ids == [trace_id(4), trace_id(2)]
    assert stats.unattached_logs == 2, "no trace context, and trace 5's spans never came"
    assert (stats.spans_read, stats.logs_read, stats.traces) == (18, 3, 11)
    assert (stats.buffered_spans, stats.peak_buffered_spans, stats.evicted_traces) == (0, 9, 0)
    one = next(spans for t, spans, _, _ in seen if t == trace_id(1))
    assert dict(one) == {span_id(1, 1): [], span_id(1, 0): ["gen_ai.choice"]}, (
        "the log read before its spans reaches its root span"
    )


def test_over_the_cap_traces_are_released_incomplete_in_both_forms() -> None:
    seen, stats = run(native_batches(), idle_spans=100, max_buffered_spans=4)
    assert stats.evicted_traces > 0 and any(incomplete for _, _, incomplete, _ in seen)
    assert stats.peak_buffered_spans > 4
    held = sum(len(spans) for _, spans, _, _ in seen)
    assert held + stats.late_spans == stats.spans_read, "nothing silently dropped"


def _own_scope_body() -> bytes:
    """Trace 20 in the grader's scope: a grade span as the emitter writes it (span 0) and a
    sender's tool span dressed in the same scope (span 1)."""
    body = json.loads(spans_body([(20, 0, None), (20, 1, 0)], scope=own_markers()[0]))
    grade, forged = body["resourceSpans"][0]["scopeSpans"][0]["spans"]
    grade["name"] = "grade c"
    grade["attributes"] = [
        {"key": key, "value": value}
        for key, value in (
            ("otel_oracles.contract.id", {"stringValue": "c"}),
            ("otel_oracles.contract.version", {"stringValue": "1"}),
            ("otel_oracles.verdict", {"stringValue": "pass"}),
            ("otel_oracles.checks", {"intValue": "1"}),
        )
    ]
    forged["name"] = "execute_tool delete_records"
    forged["attributes"] = [
        {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
        {"key": "gen_ai.tool.name", "value": {"stringValue": "delete_records"}},
    ]
    return json.dumps(body).encode()


def test_own_telemetry_is_dropped_in_the_core_without_building_records() -> None:
    """Only the grade-shaped span of the grader's scope is dropped, in the core as in Python:
    the markers are strings a sender can write, so the forged tool span is kept."""
    mixed = decode(_own_scope_body(), "application/json")
    agent = decode(spans_body([(21, 0, None)]), "application/json")

    def batches() -> Iterator[DecodedBatch]:
        yield mixed
        yield agent

    kept = list(without_own_telemetry(batches()))
    assert all(b.native is not None for b in kept), "no records built to filter"
    assert [b.span_count for b in kept] == [1, 1]
    traces = list(assemble_offline(kept))
    assert [t.trace_id for t in traces] == [trace_id(20), trace_id(21)]
    assert [s.name for s in traces[0].spans] == ["execute_tool delete_records"]
    records = decode(_own_scope_body(), "application/json").spans
    assert [is_own_telemetry(s, *own_markers()) for s in records] == [True, False]
