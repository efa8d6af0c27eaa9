"""The SDK's gRPC OTLP exporters with the caching encoder (``_fast_otlp``) as their
translate step; everything else (channel, credentials, headers, retries) is the SDK's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opentelemetry.exporter.otlp.proto.grpc._log_exporter import (
    OTLPLogExporter as GrpcLogExporter,
)
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
    OTLPSpanExporter as GrpcSpanExporter,
)
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk.trace import ReadableSpan

from otel_oracles.emit._fast_otlp import Encoder


class FastGrpcSpanExporter(GrpcSpanExporter):
    """The SDK's gRPC span exporter with the cached encoder as its translate step."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._fast_encoder = Encoder()

    def _translate_data(self, data: Sequence[ReadableSpan]) -> ExportTraceServiceRequest:
        return self._fast_encoder.spans(data)


class FastGrpcLogExporter(GrpcLogExporter):
    """The SDK's gRPC log exporter with the cached encoder as its translate step."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._fast_encoder = Encoder()

    def _translate_data(self, data: Sequence[ReadableLogRecord]) -> ExportLogsServiceRequest:
        return self._fast_encoder.logs(data)
