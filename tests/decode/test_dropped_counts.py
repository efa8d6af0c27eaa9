"""OTLP's dropped counts reach the records: ``SpanRecord.dropped_attributes`` /
``dropped_events`` / ``dropped_links``, ``EventRecord``, ``LinkRecord`` and ``LogRecord``
``dropped_attributes``.

A span that lost attributes to an SDK's limits has an attribute dict that looks complete;
only these counts say otherwise, so every decoder must carry them. The spans here are real:
a Koog capture (the Kotlin SDK writes ``droppedAttributesCount`` on its spans) and spans the
Python SDK cut to its ``SpanLimits``, exported by its real OTLP exporter to a real receiver
on 127.0.0.1; the same request is decoded as protobuf and as OTLP/JSON in both spellings.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk._logs import (
    LoggerProvider,
    LogRecordDroppedAttributesWarning,
    LogRecordLimits,
)
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link

from otel_oracles.decode import decode, read_paths
from otel_oracles.inprocess import sdk_traces
from otel_oracles.model.span import SpanRecord
from tests.support.otlp_sink import OtlpSink
from tests.support.transfer_reference import handed_over

KOOG = Path(__file__).resolve().parents[1] / "testdata" / "traces" / "koog"
PROTOBUF = "application/x-protobuf"


def _counts(span: SpanRecord) -> tuple[Any, ...]:
    return (
        span.dropped_attributes,
        span.dropped_events,
        span.dropped_links,
        [e.dropped_attributes for e in span.events],
        [lk.dropped_attributes for lk in span.links],
    )


def _koog_file_counts(path: Path) -> dict[str, tuple[int, int, int]]:
    """What the capture file says, read with ``json`` (not the decoder under test)."""
    found: dict[str, tuple[int, int, int]] = {}
    for resource in json.loads(path.read_text())["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                found[span["spanId"].lower()] = (
                    int(span.get("droppedAttributesCount", 0)),
                    int(span.get("droppedEventsCount", 0)),
                    int(span.get("droppedLinksCount", 0)),
                )
    return found


@pytest.mark.parametrize("name", ["a_happy", "c_retry_exhausted", "h_coding_agent"])
def test_koog_capture_carries_its_dropped_counts_from_protobuf_and_json(name: str) -> None:
    want = _koog_file_counts(KOOG / f"{name}.otlp.json")
    assert any(a for a, _, _ in want.values()), "the capture reports dropped attributes"
    for path in (KOOG / f"{name}.otlp.json", KOOG / f"{name}.raw"):
        problems: list[Any] = []
        spans = [s for b in read_paths([str(path)], problems) for s in b.spans]
        assert problems == []
        got = {s.span_id: (s.dropped_attributes, s.dropped_events, s.dropped_links) for s in spans}
        assert got == want, path.name


@pytest.fixture(scope="module")
def limited_request() -> Iterator[bytes]:
    """The exact body the SDK's OTLP/HTTP exporter sent for spans cut by ``SpanLimits``."""
    limits = SpanLimits(
        max_span_attributes=4,
        max_events=2,
        max_links=1,
        max_event_attributes=1,
        max_link_attributes=1,
    )
    finished = InMemorySpanExporter()
    provider = TracerProvider(span_limits=limits)
    provider.add_span_processor(SimpleSpanProcessor(finished))
    tracer = provider.get_tracer("limits-test")
    with tracer.start_as_current_span("whole") as whole:
        whole.set_attribute("a", 1)
        context = whole.get_span_context()
    # A full BoundedList drops its oldest entry: the second link is kept.
    links = [Link(context), Link(context, {"x": 1, "y": 2, "z": 3})]
    with tracer.start_as_current_span("cut", links=links) as span:
        for i in range(10):
            span.set_attribute(f"k{i}", i)
        for i in range(5):
            span.add_event(f"e{i}", {"p": 1, "q": 2, "r": 3})
    provider.shutdown()
    with OtlpSink() as sink:
        exporter = OTLPSpanExporter(endpoint=sink.http_endpoint + "/v1/traces")
        assert exporter.export(finished.get_finished_spans()) == SpanExportResult.SUCCESS
        exporter.shutdown()
        (received,) = sink.requests("traces")
        yield received.body


def _cut_and_whole(spans: list[SpanRecord]) -> tuple[SpanRecord, SpanRecord]:
    by_name = {s.name: s for s in spans}
    return by_name["cut"], by_name["whole"]


def _check_limited(spans: list[SpanRecord]) -> None:
    cut, whole = _cut_and_whole(spans)
    assert len(cut.attributes) == 4 and len(cut.events) == 2 and len(cut.links) == 1
    assert _counts(cut) == (6, 3, 1, [2, 2], [2])
    assert _counts(whole) == (0, 0, 0, [], [])


def test_sdk_span_limits_reach_the_records_from_protobuf(limited_request: bytes) -> None:
    _check_limited(decode(limited_request, PROTOBUF).spans)


@pytest.mark.parametrize("snake_case", [False, True], ids=["camelCase", "snake_case"])
def test_sdk_span_limits_reach_the_records_from_otlp_json(
    limited_request: bytes, snake_case: bool
) -> None:
    request = ExportTraceServiceRequest.FromString(limited_request)
    text = json_format.MessageToJson(request, preserving_proto_field_name=snake_case)
    assert ("dropped_attributes_count" in text) is snake_case
    _check_limited(decode(text.encode(), "application/json").spans)


def test_dropped_counts_survive_the_transfer_to_serves_grading_workers(
    limited_request: bytes,
) -> None:
    """serve's receiving process keeps WireSpans; a worker rebuilds the full records from
    the body (``handed_over``: serve's route), counts included, as the offline decode."""
    wire = decode(limited_request, PROTOBUF, for_transfer=True).spans
    _check_limited(handed_over(wire)[0])
    _check_limited(pickle.loads(pickle.dumps(decode(limited_request, PROTOBUF).spans)))


def test_spans_without_limits_report_nothing_dropped() -> None:
    problems: list[Any] = []
    path = KOOG.parent / "pydantic-ai" / "g_handoff.otlp.json"
    spans = [s for b in read_paths([str(path)], problems) for s in b.spans]
    assert spans and problems == []
    assert {_counts(s)[:3] for s in spans} == {(0, 0, 0)}


def test_in_process_grading_reads_the_sdks_counts_of_spans_and_log_events() -> None:
    """``sdk_traces`` (what ``GradingSpanProcessor`` and the ``grade_trace`` fixture grade)
    encodes SDK spans and log records as OTLP and decodes them: the counts come through,
    a log-based event's from its log record."""
    spans_out = InMemorySpanExporter()
    provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=2))
    provider.add_span_processor(SimpleSpanProcessor(spans_out))
    logs_out = InMemoryLogRecordExporter()
    loggers = LoggerProvider(log_record_limits=LogRecordLimits(max_log_record_attributes=1))
    loggers.add_log_record_processor(SimpleLogRecordProcessor(logs_out))
    tracer, logger = provider.get_tracer("t"), loggers.get_logger("t")
    with (
        tracer.start_as_current_span("chat", attributes={"a": 1, "b": 2, "c": 3}),
        pytest.warns(LogRecordDroppedAttributesWarning),
    ):
        logger.emit(event_name="gen_ai.choice", attributes={"x": 1, "y": 2, "z": 3})
    (trace,) = sdk_traces(spans_out.get_finished_spans(), logs_out.get_finished_logs())
    (span,) = trace.spans
    assert span.dropped_attributes == 1
    (event,) = span.events
    assert (event.from_log, event.name, len(event.attributes)) == (True, "gen_ai.choice", 1)
    assert event.dropped_attributes == 2
    provider.shutdown()
    loggers.shutdown()


def test_a_malformed_count_reads_as_dropped_with_a_located_problem() -> None:
    """Read as 0 it would say "nothing dropped" (``test_sdk_limits_untrusted_counts``)."""
    span = {
        "traceId": "5b8efff798038103d269b633813fc60c",
        "spanId": "eee19b7ec3c1b174",
        "name": "x",
        "droppedAttributesCount": -1,
        "dropped_events_count": "3",
    }
    body = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).encode()
    batch = decode(body, "application/json")
    (record,) = batch.spans
    assert (record.dropped_attributes, record.dropped_events) == (2**32 - 1, 3)
    assert list(batch.problems) == [
        "resourceSpans[0].scopeSpans[0].spans[0].droppedAttributesCount: must be an integer "
        "from 0 to 2^32-1, got -1; read as 4294967295 (dropped, how many unknown)"
    ]
