"""``serve`` grades spans with the dropped counts their sender reported.

Spans cut by the Python SDK's ``SpanLimits`` go out through its real OTLP exporters (gRPC and
HTTP) to a real ``serve`` on 127.0.0.1; the trace the grading session is handed (through
the receivers, the spool and the online assembler) carries ``dropped_attributes`` /
``dropped_events`` / ``dropped_links``. The worker processes' route (WireSpans pickled
and rebuilt from the request body) is tested in tests/decode/test_dropped_counts.py.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from otel_oracles.session import GradingSession


@pytest.mark.parametrize("transport", ["grpc", "http"])
def test_serve_grades_spans_with_the_counts_their_sdk_dropped(
    serve: Any, monkeypatch: pytest.MonkeyPatch, transport: str
) -> None:
    graded: list[Any] = []
    handed = threading.Event()
    grade = GradingSession.grade

    def spy(self: GradingSession, trace: Any, *args: Any, **kwargs: Any) -> Any:
        graded.append(trace)
        handed.set()
        return grade(self, trace, *args, **kwargs)

    monkeypatch.setattr(GradingSession, "grade", spy)
    bg = serve()
    exporter = (
        GrpcExporter(endpoint=bg.grpc_endpoint, insecure=True)
        if transport == "grpc"
        else HttpExporter(endpoint=bg.http_url + "/v1/traces")
    )
    provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=3, max_events=1))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("limits")
    with tracer.start_as_current_span("invoke_agent support") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        with tracer.start_as_current_span("chat") as chat:
            for i in range(8):
                chat.set_attribute(f"k{i}", i)
            for i in range(3):
                chat.add_event(f"e{i}")
    provider.shutdown()
    assert handed.wait(20), "serve graded nothing"
    (trace,) = graded
    counts = {
        s.name: (s.dropped_attributes, s.dropped_events, s.dropped_links) for s in trace.spans
    }
    assert counts == {"invoke_agent support": (0, 0, 0), "chat": (5, 2, 0)}
