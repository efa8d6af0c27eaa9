"""The caching OTLP encoder (emit/_fast_otlp.py) must build exactly the request the SDK's own
encoder builds for the same records, and the exporters using it must deliver it. If an SDK
upgrade changes the encoding or the exporter internals the HTTP fast path relies on, these
fail instead of the telemetry silently changing."""

from __future__ import annotations

import pytest
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import (
    Link,
    NonRecordingSpan,
    SpanContext,
    SpanKind,
    TraceFlags,
    TraceState,
)
from opentelemetry.trace.status import Status, StatusCode

from otel_oracles.emit import EmitResult, EmitSettings, OtelEmitter, build_emitter
from otel_oracles.emit._fast_grpc import FastGrpcLogExporter, FastGrpcSpanExporter
from otel_oracles.emit._fast_http import FastHttpLogExporter, FastHttpSpanExporter
from otel_oracles.emit._fast_otlp import Encoder
from tests.emit.conftest import make_results, make_trajectory, make_verdict
from tests.support.otlp_sink import OtlpSink


class _Keep(SpanExporter, LogRecordExporter):
    def __init__(self) -> None:
        self.spans: list = []
        self.logs: list = []

    def export(self, batch):  # type: ignore[no-untyped-def,override]
        if batch and hasattr(batch[0], "log_record"):
            self.logs.extend(batch)
            return LogRecordExportResult.SUCCESS
        self.spans.extend(batch)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:  # type: ignore[override]
        pass


def _emitted(explain: str = "template") -> _Keep:
    keep = _Keep()
    emitter = OtelEmitter(
        span_exporters=[keep], log_exporters=[keep], settings=EmitSettings(explain=explain)
    )
    pairs = []
    for contract in ("support-answers", "no-deletes"):
        trajectory = make_trajectory()
        pairs.append((make_verdict(trajectory, make_results(contract), contract), trajectory))
    no_ids = make_trajectory(trace_id=None)
    pairs.append((make_verdict(no_ids), no_ids))
    assert emitter.export(pairs * 3) is EmitResult.SUCCESS
    emitter.shutdown()
    assert len(keep.spans) == 9 and len(keep.logs) == 54
    return keep


def _sdk_spans_with_everything() -> list:
    """Spans the emitter never makes (links, trace state, kinds, scope attributes), so the
    encoder matches the SDK beyond today's grade spans."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("t", "1.0", attributes={"scope.attr": "x"})
    state = TraceState([("vendor", "v1")])
    remote = SpanContext(
        0x1234, 0x5678, is_remote=True, trace_flags=TraceFlags(1), trace_state=state
    )
    parent = trace.set_span_in_context(NonRecordingSpan(remote))  # remote parent, trace state
    with (
        tracer.start_as_current_span(
            "a", context=parent, kind=SpanKind.SERVER, links=[Link(remote, {"k": 1})]
        ),
        tracer.start_as_current_span(
            "b", kind=SpanKind.CLIENT, attributes={"l": [1, 2], "f": 0.5, "b": True}
        ) as child,
    ):
        child.add_event("e", {"x": "y", "n": 3})
        child.set_status(Status(StatusCode.ERROR, "bad"))
    provider.shutdown()
    return list(memory.get_finished_spans())


@pytest.mark.parametrize("explain", ["template", "full"])
def test_encoder_builds_the_sdk_request_for_emitted_records(explain: str) -> None:
    keep = _emitted(explain)
    encoder = Encoder()
    for _ in range(2):  # the second pass is served from the caches
        assert encoder.logs(keep.logs) == encode_logs(keep.logs)
        assert encoder.spans(keep.spans) == encode_spans(keep.spans)


def test_encoder_builds_the_sdk_request_for_any_sdk_span() -> None:
    spans = _sdk_spans_with_everything()
    assert spans[-1].get_span_context().trace_state == {"vendor": "v1"}
    assert Encoder().spans(spans) == encode_spans(spans)


def test_build_emitter_uses_the_fast_exporters(monkeypatch: pytest.MonkeyPatch) -> None:
    for protocol, kinds in (
        ("grpc", (FastGrpcSpanExporter, FastGrpcLogExporter)),
        ("http/protobuf", (FastHttpSpanExporter, FastHttpLogExporter)),
    ):
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
        emitter = build_emitter("otlp")
        assert isinstance(emitter, OtelEmitter)
        assert isinstance(emitter._span_exporters[0], kinds[0])
        assert isinstance(emitter._log_exporters[0], kinds[1])
        if protocol != "grpc":
            # The installed SDK has the internals the HTTP fast path needs; an upgrade that
            # removes them falls back to the SDK's own export and fails here to say so.
            assert emitter._span_exporters[0].fast and emitter._log_exporters[0].fast
        else:
            # Likewise the gRPC stub that takes encoded requests as they are.
            assert emitter._span_exporters[0].bytes_in and emitter._log_exporters[0].bytes_in
        emitter.shutdown()


@pytest.mark.parametrize("protocol", ["grpc", "http/protobuf"])
def test_fast_exporters_deliver_the_sdk_request(
    monkeypatch: pytest.MonkeyPatch, sink: OtlpSink, protocol: str
) -> None:
    keep = _emitted()
    endpoint = sink.grpc_endpoint if protocol == "grpc" else sink.http_endpoint
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
    if protocol == "grpc":
        span_exporter, log_exporter = FastGrpcSpanExporter(), FastGrpcLogExporter()
    else:
        span_exporter, log_exporter = FastHttpSpanExporter(), FastHttpLogExporter()
    assert span_exporter.export(keep.spans) is SpanExportResult.SUCCESS
    assert log_exporter.export(keep.logs) is LogRecordExportResult.SUCCESS
    span_exporter.shutdown()
    log_exporter.shutdown()
    sink.wait_for_logs(len(keep.logs))
    (spans,) = sink.requests("traces")
    (logs,) = sink.requests("logs")
    assert spans.request == encode_spans(keep.spans)
    assert logs.request == encode_logs(keep.logs)


def test_records_without_ids_never_borrow_the_host_apps_current_span() -> None:
    """A verdict without trace ids (AgentBench) must not be tied to a span the embedding
    application happens to have open."""
    keep = _Keep()
    emitter = OtelEmitter(span_exporters=[keep], log_exporters=[keep])
    no_ids = make_trajectory(trace_id=None)
    tracer = TracerProvider().get_tracer("host-app")
    with tracer.start_as_current_span("host request") as host:
        assert host.get_span_context().trace_id != 0
        assert emitter.export([(make_verdict(no_ids), no_ids)]) is EmitResult.SUCCESS
    emitter.shutdown()
    assert keep.logs and all(r.log_record.trace_id == 0 for r in keep.logs)
    assert all(r.log_record.span_id == 0 for r in keep.logs)
