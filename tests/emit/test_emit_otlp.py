"""OtelEmitter through the real SDK OTLP exporters (gRPC and HTTP/protobuf) into a real sink."""

from __future__ import annotations

import socket
import time

import pytest

from otel_oracles.emit import EmitResult, EmitSettings, OtelEmitter, build_emitter
from otel_oracles.emit import _names as n
from otel_oracles.emit.config import GRADE_DURATION_BUCKETS_S
from otel_oracles.model.result import Outcome
from tests.emit.conftest import (
    CHAT_SPAN,
    ROOT_SPAN,
    TOOL_SPAN,
    TRACE_ID,
    make_trajectory,
    make_verdict,
)
from tests.support.otlp_sink import OtlpSink

PROTOCOLS = ["grpc", "http/protobuf"]


def _otlp_env(monkeypatch: pytest.MonkeyPatch, sink: OtlpSink, protocol: str) -> None:
    endpoint = sink.grpc_endpoint if protocol == "grpc" else sink.http_endpoint
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)


def _emit_one(monkeypatch: pytest.MonkeyPatch, sink: OtlpSink, protocol: str, **settings: object):
    _otlp_env(monkeypatch, sink, protocol)
    emitter = build_emitter("otlp", settings=EmitSettings(**settings) if settings else None)
    trajectory = make_trajectory()
    verdict = make_verdict(trajectory)
    assert emitter.export([(verdict, trajectory)]) is EmitResult.SUCCESS
    emitter.shutdown()
    return verdict


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_grade_span_is_child_of_graded_root_in_same_trace(
    monkeypatch: pytest.MonkeyPatch, sink: OtlpSink, protocol: str
) -> None:
    _emit_one(monkeypatch, sink, protocol)
    spans = sink.wait_for_spans(1)
    assert len(spans) == 1, "one grade span per verdict"
    span = spans[0]
    assert span.trace_id == TRACE_ID, "grade span must join the graded trace"
    assert span.parent_span_id == ROOT_SPAN, "grade span must be a child of the graded root"
    assert span.span.name == "grade support-answers"
    assert span.resource["service.name"] == "otel-oracles"
    assert span.scope_name == n.INSTRUMENTATION_SCOPE
    a = span.attributes
    assert a[n.CONTRACT_ID] == "support-answers"
    assert a[n.CONTRACT_VERSION] == 3
    assert a[n.CONTRACT_HASH] == "0123456789abcdef"
    assert a[n.VERDICT] == "fail"
    assert (a[n.INVARIANT_FAILURES], a[n.TOLERATED_FAILURES]) == (1, 1)
    assert (a[n.BUDGET_EXHAUSTED], a[n.MISSING_EVIDENCE], a[n.ERRORS]) == (1, 1, 1)
    assert a[n.AGENT_NAME] == "support"
    assert (a[n.PROVIDER_NAME], a[n.REQUEST_MODEL]) == ("openai", "gpt-4o-mini")
    assert span.span.status.code == 2, "a failing verdict marks the grade span ERROR"
    events = [e for e in span.span.events if e.name == n.EVALUATION_EVENT]
    assert len(events) == 6, "one span event per check"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_log_events_point_at_the_evaluated_span(
    monkeypatch: pytest.MonkeyPatch, sink: OtlpSink, protocol: str
) -> None:
    verdict = _emit_one(monkeypatch, sink, protocol)
    logs = sink.wait_for_logs(len(verdict.results))
    by_name = {log.attributes[n.EVALUATION_NAME]: log for log in logs}
    assert {log.record.event_name for log in logs} == {n.EVALUATION_EVENT}
    assert all(log.trace_id == TRACE_ID for log in logs)
    assert by_name["never-delete"].span_id == TOOL_SPAN, "offending tool span"
    assert by_name["no-shell"].span_id == CHAT_SPAN
    assert by_name["answer-schema"].span_id == ROOT_SPAN, "whole-trace check -> root span"
    failure = by_name["never-delete"].attributes
    assert failure[n.EVALUATION_SCORE_VALUE] == 0.0
    assert failure[n.EVALUATION_SCORE_LABEL] == Outcome.INVARIANT_FAILURE.value
    assert failure[n.OUTCOME] == "invariant_failure"
    assert failure[n.EVALUATED_SPAN_IDS] == [TOOL_SPAN]
    assert failure[n.STEP_INDEXES] == [1]
    assert by_name["never-delete"].record.severity_number == 13
    tolerated = by_name["one-retry"].attributes
    assert tolerated[n.EVALUATION_SCORE_VALUE] == 1.0
    assert (tolerated[n.BUDGET_USED], tolerated[n.BUDGET_LIMIT]) == (1, 1)
    errored = by_name["grounded"]
    assert errored.attributes[n.ERROR_TYPE] == "KeyError"
    assert errored.record.severity_number == 17
    assert n.ERROR_TYPE not in failure, "error.type only when the check itself errored"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_metrics_carry_low_cardinality_attributes_and_counts(
    monkeypatch: pytest.MonkeyPatch, sink: OtlpSink, protocol: str
) -> None:
    _otlp_env(monkeypatch, sink, protocol)
    emitter = build_emitter("otlp")
    trajectory = make_trajectory()
    emitter.export([(make_verdict(trajectory), trajectory)] * 3)
    emitter.shutdown()
    traces = sink.wait_for_metric(n.METRIC_TRACES)
    points = [p for m in traces for p in m.points()]
    assert len(points) == 1
    attrs, point = points[0]
    assert attrs == {
        n.CONTRACT_ID: "support-answers",
        n.CONTRACT_VERSION: 3,
        n.VERDICT: "fail",
        n.AGENT_NAME: "support",
        n.PROVIDER_NAME: "openai",
        n.REQUEST_MODEL: "gpt-4o-mini",
        n.SUBJECT_SERVICE_VERSION: "2.4.1",
    }
    assert point.as_int == 3
    assert traces[0].metric.unit == "{trace}"
    assert traces[0].metric.sum.is_monotonic
    results = {
        (a[n.EVALUATION_NAME], a[n.OUTCOME]): p.as_int
        for m in sink.metrics(n.METRIC_RESULTS)
        for a, p in m.points()
    }
    assert results[("never-delete", "invariant_failure")] == 3
    assert results[("no-shell", "pass")] == 3
    for name in (
        n.METRIC_INVARIANT_FAILURES,
        n.METRIC_TOLERATED_FAILURES,
        n.METRIC_BUDGETS_EXHAUSTED,
        n.METRIC_MISSING_EVIDENCE,
    ):
        (metric,) = sink.metrics(name)
        assert [p.as_int for _, p in metric.points()] == [3], f"{name} counts 1 per verdict"
    (duration,) = sink.metrics(n.METRIC_DURATION)
    assert duration.metric.unit == "s"
    ((_, hist),) = duration.points()
    assert hist.count == 3
    assert list(hist.explicit_bounds) == list(GRADE_DURATION_BUCKETS_S), "advised buckets"
    assert abs(hist.sum - 3 * 0.0015) < 1e-9
    for metric in sink.metrics():
        for a, _ in metric.points():
            assert not any("trace" in k and "id" in k for k in a), "no trace ids on metrics"


def test_service_name_and_resource_come_from_the_sdk_environment(
    monkeypatch: pytest.MonkeyPatch, sink: OtlpSink
) -> None:
    monkeypatch.setenv("OTEL_SERVICE_NAME", "grader-prod")
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=staging")
    _emit_one(monkeypatch, sink, "grpc")
    resource = sink.wait_for_spans(1)[0].resource
    assert resource["service.name"] == "grader-prod"
    assert resource["deployment.environment.name"] == "staging"


def test_each_form_can_be_switched_off(monkeypatch: pytest.MonkeyPatch, sink: OtlpSink) -> None:
    _emit_one(monkeypatch, sink, "grpc", log_events=False, span_events=False)
    span = sink.wait_for_spans(1)[0]
    assert list(span.span.events) == [], "span events switched off"
    assert sink.log_records() == [], "log events switched off"
    sink.clear()
    _emit_one(monkeypatch, sink, "grpc", grade_span=False)
    assert len(sink.wait_for_logs(6)) == 6
    assert sink.spans() == [], "grade span switched off"


def test_trajectory_without_trace_ids_gets_its_own_trace(
    monkeypatch: pytest.MonkeyPatch, sink: OtlpSink
) -> None:
    _otlp_env(monkeypatch, sink, "grpc")
    emitter = build_emitter("otlp")
    trajectory = make_trajectory(trace_id=None)
    emitter.export([(make_verdict(trajectory), trajectory)])
    emitter.shutdown()
    span = sink.wait_for_spans(1)[0]
    assert span.parent_span_id == "", "no graded trace: the grade span is a root"
    assert span.attributes[n.SUBJECT] == "run-01.json", "file name only, never the path"
    logs = sink.wait_for_logs(6)
    assert all(log.record.trace_id == b"" for log in logs)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_unreachable_endpoint_is_reported_not_raised(
    monkeypatch: pytest.MonkeyPatch, protocol: str
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
    emitter = build_emitter("otlp", settings=EmitSettings(max_export_batch_size=2))
    assert isinstance(emitter, OtelEmitter)
    trajectory = make_trajectory()
    start = time.monotonic()
    result = emitter.export([(make_verdict(trajectory), trajectory)] * 5)
    elapsed = time.monotonic() - start
    emitter.shutdown()
    assert result is EmitResult.FAILURE
    assert emitter.stats.spans_failed == 5 and emitter.stats.spans_exported == 0
    assert emitter.stats.log_records_failed == 30
    assert emitter.stats.errors, "a failure must be described for the user"
    assert not emitter.stats.ok
    # 5 span batches + 15 log batches: only the first of each is attempted (1 s timeout each).
    assert elapsed < 6, f"a dead endpoint must not cost a timeout per batch ({elapsed:.1f}s)"


def test_dead_endpoint_costs_one_timeout_across_export_calls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Offline grade exports in many calls; a dead collector must not cost a timeout each."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
    emitter = build_emitter("otlp")
    assert isinstance(emitter, OtelEmitter)
    trajectory = make_trajectory()
    start = time.monotonic()
    results = [emitter.export([(make_verdict(trajectory), trajectory)]) for _ in range(10)]
    elapsed = time.monotonic() - start
    emitter.shutdown()
    assert set(results) == {EmitResult.FAILURE}
    assert emitter.stats.spans_failed == 10, "every undelivered span is counted"
    assert elapsed < 5, f"10 calls to a dead endpoint took {elapsed:.1f}s"
