"""Log-based events linked to the span around the call that emitted them go to that call.

OpenLLMetry's Anthropic instrumentation (events mode) starts its ``anthropic.chat`` span
without making it current, so every message event names the application span above it; the
real capture ``openllmetry-anthropic-events`` shows it. A record emitted while exactly one child
was open belongs to that child (and on down); otherwise the recorded link stands."""

from __future__ import annotations

from pathlib import Path

from otel_oracles.assemble import build_trace
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.result import InputProblem
from otel_oracles.model.span import LogRecord, SpanRecord
from otel_oracles.pipeline import read_traces

TRACE = "0" * 31 + "9"
ROOT, CALL_1, CALL_2, INNER = "a" * 16, "b" * 16, "c" * 16, "d" * 16
CAPTURE = Path(__file__).resolve().parents[1] / "testdata/traces/openllmetry-anthropic-events"


def _span(span_id: str, parent: str, start: int, end: int) -> SpanRecord:
    return SpanRecord(TRACE, span_id, parent, span_id[:1], start_ns=start, end_ns=end)


def _log(at: int, span_id: str = ROOT) -> LogRecord:
    return LogRecord(TRACE, span_id, "gen_ai.choice", at, body={"index": 0, "at": at})


def _events_by_span(spans: list[SpanRecord], logs: list[LogRecord]) -> dict[str, list[int]]:
    trace = build_trace(TRACE, spans, logs)
    assert trace.unattached_logs == 0
    return {s.span_id: [e.body["at"] for e in s.events] for s in trace.spans if s.events}


def test_event_goes_to_the_one_child_open_at_its_time_and_on_down() -> None:
    spans = [
        _span(ROOT, "", 0, 100),
        _span(CALL_1, ROOT, 10, 40),
        _span(INNER, CALL_1, 20, 30),
        _span(CALL_2, ROOT, 50, 90),
    ]
    logs = [_log(15), _log(25), _log(60), _log(45), _log(95)]
    assert _events_by_span(spans, logs) == {
        CALL_1: [15],
        INNER: [25],
        CALL_2: [60],
        ROOT: [45, 95],  # between and after the calls: emitted by the root itself
    }


def test_overlapping_children_keep_the_recorded_link() -> None:
    spans = [_span(ROOT, "", 0, 100), _span(CALL_1, ROOT, 10, 60), _span(CALL_2, ROOT, 20, 90)]
    assert _events_by_span(spans, [_log(30), _log(15)]) == {ROOT: [30], CALL_1: [15]}


def test_a_child_without_an_end_time_keeps_the_recorded_link() -> None:
    spans = [_span(ROOT, "", 0, 100), _span(CALL_1, ROOT, 10, 0)]
    assert _events_by_span(spans, [_log(50), _log(5)]) == {ROOT: [5, 50]}


def test_a_leaf_keeps_its_events() -> None:
    spans = [_span(ROOT, "", 0, 100), _span(CALL_1, ROOT, 10, 40)]
    assert _events_by_span(spans, [_log(20, CALL_1), _log(90, CALL_1)]) == {CALL_1: [20, 90]}


def test_real_capture_tool_calls_come_from_the_calls_own_events() -> None:
    problems: list[InputProblem] = []
    files = [str(CAPTURE / "b_tool_retry.otlp.json"), str(CAPTURE / "b_tool_retry.logs.otlp.jsonl")]
    (trace,) = read_traces(files, problems)
    assert problems == []
    root = next(s for s in trace.spans if s.name == "agent_run")
    assert root.events == [], "every message event belongs to an anthropic.chat span"
    traj = map_trace(trace, load_conventions())
    calls = traj.tool_calls()
    assert [(c.tool, c.status) for c in calls] == [("search_docs", "error"), ("search_docs", "ok")]
