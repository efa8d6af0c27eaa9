"""The SDK's gRPC OTLP exporters with the caching encoder (``_fast_otlp``) as their
translate step; everything else (channel, credentials, headers, retries) is the SDK's.
``export_items`` runs the SDK's export loop on the emitter's own records (``_records``),
which the translate step encodes directly."""

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
from opentelemetry.sdk._logs.export import LogRecordExportResult
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult

from otel_oracles.emit._fast_otlp import Encoder
from otel_oracles.emit._records import ItemBatch, LogItem, SpanItem


class FastGrpcSpanExporter(GrpcSpanExporter):
    """The SDK's gRPC span exporter with the cached encoder as its translate step."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._fast_encoder = Encoder()

    def _translate_data(self, data: Sequence[ReadableSpan]) -> ExportTraceServiceRequest:
        if isinstance(data, ItemBatch):
            return self._fast_encoder.span_items(data)
        return self._fast_encoder.spans(data)

    accepts_items = True

    def export_items(self, batch: ItemBatch[SpanItem]) -> SpanExportResult:
        result: SpanExportResult = self._export(batch)  # type: ignore[arg-type]
        return result


class FastGrpcLogExporter(GrpcLogExporter):
    """The SDK's gRPC log exporter with the cached encoder as its translate step."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._fast_encoder = Encoder()

    def _translate_data(self, data: Sequence[ReadableLogRecord]) -> ExportLogsServiceRequest:
        if isinstance(data, ItemBatch):
            return self._fast_encoder.log_items(data)
        return self._fast_encoder.logs(data)

    accepts_items = True

    def export_items(self, batch: ItemBatch[LogItem]) -> LogRecordExportResult:
        result: LogRecordExportResult = self._export(batch)  # type: ignore[arg-type]
        return result
