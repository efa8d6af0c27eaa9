"""assemble_offline(): group a stream of batches by trace id with bounded memory, counting
(never silently dropping) records that arrive after their trace was released."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from otel_oracles.assemble import AssemblyStats, assemble_offline, build_trace
from otel_oracles.decode import DecodedBatch, read_paths
from otel_oracles.model.result import InputProblem
from otel_oracles.model.span import LogRecord, SpanRecord, Trace

TRACES = Path(__file__).resolve().parents[1] / "testdata" / "traces"


def trace_id(n: int) -> str:
    return f"{n:032x}"


def span_id(t: int, i: int) -> str:
    return f"{t:08x}{i:08x}"


def time_ordered_export(
    traces: int, spans_per_trace: int, concurrent: int
) -> Iterator[DecodedBatch]:
    """Like a BatchSpanProcessor export: ``concurrent`` traces interleaved, children end (and
    are exported) before their root, 8 spans per batch."""
    pending: list[SpanRecord] = []
    for first in range(0, traces, concurrent):
        group = range(first, min(first + concurrent, traces))
        for i in range(1, spans_per_trace):
            for t in group:
                pending.append(SpanRecord(trace_id(t), span_id(t, i), span_id(t, 0), "child", 1, i))
        for t in group:
            pending.append(SpanRecord(trace_id(t), span_id(t, 0), "", "root", 1, 0))
        while len(pending) >= 8:
            yield DecodedBatch(spans=pending[:8])
            pending = pending[8:]
    if pending:
        yield DecodedBatch(spans=pending)


def test_real_file_set_is_grouped_exactly_one_trace_per_id() -> None:
    problems: list[InputProblem] = []
    source = TRACES / "openai-v2"
    paths = [str(p) for p in sorted(source.glob("*.otlp.json*"))]
    traces = list(assemble_offline(read_paths(paths, problems)))
    assert problems == []
    ids = [t.trace_id for t in traces]
    assert len(ids) == len(set(ids)), "each trace id is yielded once"
    spans_in = sum(len(b.spans) for b in read_paths(paths, []))
    assert sum(len(t.spans) for t in traces) == spans_in
    assert all(not t.incomplete for t in traces)
    attached = sum(1 for t in traces for s in t.spans for e in s.events if e.from_log)
    logs_in = sum(len(b.logs) for b in read_paths(paths, []))
    assert attached == logs_in, "every log-based event reaches its span across files"


def _log_events(traces: list[Trace]) -> list[tuple[str, str, int, object]]:
    return [
        (s.span_id, e.name, e.time_ns, (e.body, dict(e.attributes), e.dropped_attributes))
        for t in traces
        for s in t.spans
        for e in s.events
        if e.from_log
    ]


def test_decoded_log_records_attach_as_records_do_and_equal_ones_once() -> None:
    """The offline assembler attaches a released trace's decoded log records without
    building their ``LogRecord``s: the events are those ``build_trace`` attaches from the
    records, and a log file read twice (a retried export) adds none."""
    source = TRACES / "openai-v2"
    paths = [str(source / "d_forbidden_tool.otlp.json")]
    logs = [str(source / "d_forbidden_tool.logs.otlp.jsonl")]
    once = list(assemble_offline(read_paths(paths + logs, [])))
    twice = list(assemble_offline(read_paths(paths + logs + logs, [])))
    spans = [s for b in read_paths(paths, []) for s in b.spans]
    records = [rec for b in read_paths(logs, []) for rec in b.logs]
    built = build_trace(spans[0].trace_id, spans, records)
    assert _log_events(once) == _log_events(twice) == _log_events([built]) != []
    assert sum(t.unattached_logs for t in twice) == built.unattached_logs == 0


def test_memory_stays_bounded_by_traces_in_flight_not_input_size() -> None:
    peaks = []
    for traces in (200, 2000):
        stats = AssemblyStats()
        out = list(
            assemble_offline(
                time_ordered_export(traces, 10, concurrent=5), idle_spans=100, stats=stats
            )
        )
        assert len(out) == traces and stats.late_spans == 0
        assert all(len(t.spans) == 10 and t.orphans == [] for t in out)
        peaks.append(stats.peak_buffered_spans)
    assert peaks[1] <= peaks[0] * 1.2, f"10x the input must not grow the buffer: {peaks}"
    assert peaks[1] < 300


def test_traces_are_yielded_while_input_is_still_being_read() -> None:
    consumed = 0

    def batches() -> Iterator[DecodedBatch]:
        nonlocal consumed
        for batch in time_ordered_export(100, 10, concurrent=2):
            consumed += 1
            yield batch

    first = next(iter(assemble_offline(batches(), idle_spans=50)))
    assert first.trace_id == trace_id(0)
    assert consumed < 30, f"first trace must come out early, read {consumed} of 125 batches"


def test_span_arriving_after_its_trace_was_released_is_counted_late() -> None:
    batches = list(time_ordered_export(20, 5, concurrent=1))
    straggler = SpanRecord(trace_id(0), span_id(0, 99), span_id(0, 0), "late", 1, 9)
    batches.append(DecodedBatch(spans=[straggler]))
    assembly = assemble_offline(batches, idle_spans=10)
    traces = list(assembly)
    assert assembly.stats.late_spans == 1
    assert assembly.stats.late_trace_ids == [trace_id(0)]
    assert "1 late spans" in assembly.stats.summary()
    assert sum(len(t.spans) for t in traces) + assembly.stats.late_spans == 20 * 5 + 1


def test_late_log_record_is_counted_not_lost() -> None:
    batches = list(time_ordered_export(20, 5, concurrent=1))
    log = LogRecord(trace_id(0), span_id(0, 1), "gen_ai.choice", 5)
    batches.append(DecodedBatch(logs=[log]))
    assembly = assemble_offline(batches, idle_spans=10)
    list(assembly)
    assert assembly.stats.late_logs == 1


def test_buffer_limit_releases_least_recently_active_traces_as_incomplete() -> None:
    # No roots at all: nothing is ever complete, only the limit releases traces.
    batches = [
        DecodedBatch(spans=[SpanRecord(trace_id(t), span_id(t, i), "ff" * 8, "x", 1, i)])
        for i in range(3)
        for t in range(10)
    ]
    assembly = assemble_offline(batches, max_buffered_spans=12)
    traces = list(assembly)
    stats = assembly.stats
    assert stats.evicted_traces > 0 and any(t.incomplete for t in traces)
    assert stats.peak_buffered_spans <= 13
    assert sum(len(t.spans) for t in traces) + stats.late_spans == 30, "nothing silently dropped"


def test_default_groups_a_small_input_exactly_even_when_interleaved() -> None:
    # Trace 0's root comes first and its children much later: still one trace.
    batches = [DecodedBatch(spans=[SpanRecord(trace_id(0), span_id(0, 0), "", "root", 1, 0)])]
    batches += list(time_ordered_export(500, 10, concurrent=50))
    batches.append(
        DecodedBatch(spans=[SpanRecord(trace_id(0), span_id(0, 77), span_id(0, 0), "c", 1, 1)])
    )
    assembly = assemble_offline(batches)
    traces = {t.trace_id: t for t in assembly}
    assert assembly.stats.late_spans == 0
    assert len(traces[trace_id(0)].spans) == 11


def test_logs_without_trace_context_are_counted_unattached() -> None:
    batches = [
        DecodedBatch(
            spans=[SpanRecord(trace_id(1), span_id(1, 0), "", "root", 1, 0)],
            logs=[LogRecord("", "", "gen_ai.choice", 1)],
        )
    ]
    assembly = assemble_offline(batches)
    list(assembly)
    assert assembly.stats.unattached_logs == 1


def test_nonsense_limits_are_rejected_up_front() -> None:
    with pytest.raises(ValueError, match="max_buffered_spans must be >= 1"):
        assemble_offline([], max_buffered_spans=0)
    with pytest.raises(ValueError, match="idle_spans must be >= 1"):
        assemble_offline([], idle_spans=0)


def test_logs_read_long_before_their_spans_still_attach() -> None:
    # A logs file sorted before its spans file, longer than the idle window.
    logs = [LogRecord(trace_id(t), span_id(t, 0), "gen_ai.choice", 1) for t in range(50)]
    batches = [DecodedBatch(logs=logs[i : i + 5]) for i in range(0, 50, 5)]
    batches += list(time_ordered_export(50, 4, concurrent=1))
    assembly = assemble_offline(batches, idle_spans=3)
    traces = list(assembly)
    assert len(traces) == 50 and all(t.spans for t in traces), "no trace without spans"
    assert all([e.name for e in t.root.events] == ["gen_ai.choice"] for t in traces if t.root), (
        "each log-based event reaches its root span"
    )
    assert assembly.stats.unattached_logs == 0 and assembly.stats.late_logs == 0


def test_logs_whose_spans_never_come_are_counted_unattached_not_yielded() -> None:
    batches = [DecodedBatch(logs=[LogRecord(trace_id(9), span_id(9, 0), "gen_ai.choice", 1)])]
    assembly = assemble_offline(batches)
    assert list(assembly) == []
    assert assembly.stats.unattached_logs == 1 and assembly.stats.buffered_spans == 0
