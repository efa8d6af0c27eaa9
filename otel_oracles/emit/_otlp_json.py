"""OTLP/JSON lines files, in the collector ``file`` exporter's format.

One OTLP/JSON object per line, one line per exported batch: ``{"resourceSpans": ...}``,
``{"resourceLogs": ...}`` or ``{"resourceMetrics": ...}``, all three signals in one file, so
the collector's ``otlpjsonfile`` receiver (or any OTLP/HTTP JSON endpoint) can load results
later. Encoding is strict OTLP/JSON: hex ids, integer enums, 64-bit integers as strings,
lowerCamelCase keys (protobuf's own JSON printer gives base64 ids; we fix those).
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import orjson
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, MetricsData
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

_ID_KEYS = frozenset({"traceId", "spanId", "parentSpanId"})


def _hex_ids(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            k: base64.b64decode(v).hex() if k in _ID_KEYS and isinstance(v, str) else _hex_ids(v)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_hex_ids(v) for v in node]
    return node


def otlp_json(message: Message) -> bytes:
    """A protobuf OTLP request as one strict OTLP/JSON line (no trailing newline)."""
    data = MessageToDict(message, use_integers_for_enums=True)
    return orjson.dumps(_hex_ids(data))


class OtlpJsonLinesFile:
    """One file shared by the three signal exporters; each write is one whole line.
    Thread-safe. The file is created (truncated) on open."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._fh: IO[bytes] | None = path.open("wb")
        self._users = 0

    def write(self, message: Message) -> bool:
        line = otlp_json(message) + b"\n"
        with self._lock:
            if self._fh is None:
                return False
            self._fh.write(line)
            return True

    def flush(self) -> None:
        with self._lock:
            if self._fh is not None:
                self._fh.flush()

    def acquire(self) -> OtlpJsonLinesFile:
        """Register one more exporter; the file closes when the last one shuts down."""
        with self._lock:
            self._users += 1
        return self

    def release(self) -> None:
        with self._lock:
            self._users -= 1
            if self._users <= 0 and self._fh is not None:
                self._fh.close()
                self._fh = None


class JsonLinesSpanExporter(SpanExporter):
    def __init__(self, out: OtlpJsonLinesFile) -> None:
        self._out = out.acquire()
        self._shutdown = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self._shutdown or not self._out.write(encode_spans(spans)):
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        self._out.flush()
        return True

    def shutdown(self) -> None:
        if not self._shutdown:
            self._shutdown = True
            self._out.release()


class JsonLinesLogExporter(LogRecordExporter):
    def __init__(self, out: OtlpJsonLinesFile) -> None:
        self._out = out.acquire()
        self._shutdown = False

    def export(self, batch: Sequence[ReadableLogRecord]) -> LogRecordExportResult:
        if self._shutdown or not self._out.write(encode_logs(batch)):
            return LogRecordExportResult.FAILURE
        return LogRecordExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        self._out.flush()
        return True

    def shutdown(self) -> None:
        if not self._shutdown:
            self._shutdown = True
            self._out.release()


class JsonLinesMetricExporter(MetricExporter):
    def __init__(self, out: OtlpJsonLinesFile) -> None:
        super().__init__()
        self._out = out.acquire()
        self._shutdown = False

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        if self._shutdown:
            return MetricExportResult.FAILURE
        request = encode_metrics(metrics_data)
        # The periodic reader exports even when nothing was recorded; skip empty lines.
        if request.resource_metrics and not self._out.write(request):
            return MetricExportResult.FAILURE
        return MetricExportResult.SUCCESS

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        self._out.flush()
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        if not self._shutdown:
            self._shutdown = True
            self._out.release()
