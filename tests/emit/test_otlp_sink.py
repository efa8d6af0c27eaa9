"""The test OTLP sink receives what the real SDK exporters send, over gRPC and HTTP."""

from __future__ import annotations

import json
import urllib.request

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpans
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpLogs
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpans
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.support.otlp_sink import OtlpSink


@pytest.fixture
def sink():
    with OtlpSink() as s:
        yield s


@pytest.mark.parametrize("transport", ["grpc", "http"])
def test_sink_records_spans_sent_by_sdk_exporter(sink: OtlpSink, transport: str) -> None:
    if transport == "grpc":
        exporter = GrpcSpans(endpoint=sink.grpc_endpoint, insecure=True)
    else:
        exporter = HttpSpans(endpoint=f"{sink.http_endpoint}/v1/traces")
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with provider.get_tracer("t").start_as_current_span("hello", attributes={"k": "v"}):
        pass
    provider.shutdown()
    spans = sink.wait_for_spans(1, timeout=10)
    assert [s.span.name for s in spans] == ["hello"], "one span named hello expected"
    assert spans[0].attributes == {"k": "v"}
    assert b"hello" in sink.all_bytes()
    assert sink.requests("traces")[0].transport == transport


def test_sink_records_http_log_records_with_event_name(sink: OtlpSink) -> None:
    provider = LoggerProvider(shutdown_on_exit=False)
    provider.add_log_record_processor(
        SimpleLogRecordProcessor(HttpLogs(endpoint=f"{sink.http_endpoint}/v1/logs"))
    )
    provider.get_logger("t").emit(event_name="my.event", attributes={"a": 1})
    provider.shutdown()
    logs = sink.wait_for_logs(1)
    assert logs[0].record.event_name == "my.event"
    assert logs[0].attributes == {"a": 1}


def test_sink_decodes_otlp_json_with_hex_ids(sink: OtlpSink) -> None:
    body = {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "x"}}]
                },
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": "5b8efff798038103d269b633813fc60c",
                                "spanId": "eee19b7ec3c1b174",
                                "name": "json-span",
                                "kind": 2,
                                "startTimeUnixNano": "1544712660000000000",
                                "endTimeUnixNano": "1544712661000000000",
                            }
                        ]
                    }
                ],
            }
        ]
    }
    req = urllib.request.Request(
        f"{sink.http_endpoint}/v1/traces",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=5) as resp:
        assert resp.status == 200
    span = sink.spans()[0]
    assert span.trace_id == "5b8efff798038103d269b633813fc60c"
    assert span.span_id == "eee19b7ec3c1b174"
    assert span.resource == {"service.name": "x"}


def test_sink_rejects_retryably_when_asked(sink: OtlpSink) -> None:
    sink.reject_next(1)
    req = urllib.request.Request(
        f"{sink.http_endpoint}/v1/traces", data=b"", headers={"Content-Type": "application/json"}
    )
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(req, timeout=5)
    info.value.close()
    assert info.value.code == 503
    assert sink.requests() == [], "a rejected request must not be recorded"
