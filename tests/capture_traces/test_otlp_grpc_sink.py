"""``otlp_sink.OtlpGrpcSink`` keeps what a real OTLP/gRPC exporter sends, byte for byte.

Exporters that speak OTLP over gRPC only (eino-ext's APMPlus handler) are captured through
this sink; a body it changed or dropped would make a capture that is not what the exporter
sent. The exporter here is the OpenTelemetry SDK's own gRPC span exporter, sending to the sink
on 127.0.0.1 over a real gRPC channel.
"""

from __future__ import annotations

import sys
from pathlib import Path

from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

# The capture tools are scripts next to each other, not a package: import them as capture.py does.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "capture_traces"))

from otlp_sink import OtlpGrpcSink


def test_grpc_exporter_bodies_are_kept_as_sent() -> None:
    sink = OtlpGrpcSink()
    with sink as endpoint:
        assert endpoint.startswith("127.0.0.1:")
        provider = TracerProvider(resource=Resource.create({"service.name": "sink-test"}))
        exporter = OTLPSpanExporter(endpoint=endpoint, insecure=True, timeout=10)
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        tracer = provider.get_tracer("sink-test")
        with tracer.start_as_current_span("outer"), tracer.start_as_current_span("inner") as inner:
            inner.set_attribute("gen_ai.system", "eino")
        provider.shutdown()
    assert [r.signal for r in sink.received] == ["traces", "traces"]
    assert {r.content_type for r in sink.received} == {"application/x-protobuf"}
    names = []
    for item in sink.received:
        request = ExportTraceServiceRequest()
        request.ParseFromString(item.body)  # the undecoded body is the exporter's request
        spans = [s for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]
        names += [s.name for s in spans]
        assert request.SerializeToString() == item.body
    assert names == ["inner", "outer"]
