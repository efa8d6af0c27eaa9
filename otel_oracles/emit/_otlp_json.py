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
from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics
from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, MetricsData
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from otel_oracles.emit._records import Attrs, ItemBatch, LogItem, SpanItem

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


def _any(value: Any) -> dict[str, Any]:
    """A Python attribute value as an OTLP/JSON ``AnyValue``."""
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, bytes):
        return {"bytesValue": base64.b64encode(value).decode()}
    if isinstance(value, list | tuple):
        return {"arrayValue": {"values": [_any(v) for v in value]}}
    if isinstance(value, dict):
        return {"kvlistValue": {"values": _attrs(value)}}
    return {}


def _attrs(attributes: Any) -> list[dict[str, Any]]:
    return [{"key": k, "value": _any(v)} for k, v in (attributes or {}).items()]


def _grouped(
    items: Sequence[Any], resource_of: Any, scope_of: Any
) -> list[tuple[Any, list[tuple[Any, list[Any]]]]]:
    """Items grouped by resource, then scope, in first-seen order (as the SDK encoder)."""
    by_resource: dict[int, tuple[Any, dict[Any, tuple[Any, list[Any]]]]] = {}
    for item in items:
        resource, scope = resource_of(item), scope_of(item)
        _, scopes = by_resource.setdefault(id(resource), (resource, {}))
        scopes.setdefault(scope, (scope, []))[1].append(item)
    return [(res, list(scopes.values())) for res, scopes in by_resource.values()]


def _scope(scope: Any) -> dict[str, Any]:
    if scope is None:
        return {}
    out: dict[str, Any] = {"name": scope.name}
    if scope.version:
        out["version"] = scope.version
    return out


def spans_json(spans: Sequence[ReadableSpan]) -> bytes:
    """``{"resourceSpans": ...}`` for SDK spans, straight to OTLP/JSON: the protobuf path
    (encode, then protobuf's JSON printer) costs ~10x more per record."""
    resource_spans = []
    for resource, scopes in _grouped(
        spans, lambda s: s.resource, lambda s: s.instrumentation_scope
    ):
        scope_spans = []
        for scope, members in scopes:
            encoded = []
            for span in members:
                ctx = span.context
                parent = span.parent
                out: dict[str, Any] = {
                    "traceId": f"{ctx.trace_id:032x}",
                    "spanId": f"{ctx.span_id:016x}",
                }
                if parent is not None:
                    out["parentSpanId"] = f"{parent.span_id:016x}"
                out["name"] = span.name
                out["kind"] = span.kind.value + 1
                out["startTimeUnixNano"] = str(span.start_time)
                out["endTimeUnixNano"] = str(span.end_time)
                out["attributes"] = _attrs(span.attributes)
                if span.events:
                    out["events"] = [
                        {
                            "timeUnixNano": str(e.timestamp),
                            "name": e.name,
                            "attributes": _attrs(e.attributes),
                        }
                        for e in span.events
                    ]
                status: dict[str, Any] = {}
                if span.status.description:
                    status["message"] = span.status.description
                if span.status.status_code.value:
                    status["code"] = span.status.status_code.value
                out["status"] = status
                out["flags"] = 0x100 | (0x200 if parent is not None and parent.is_remote else 0)
                encoded.append(out)
            scope_spans.append({"scope": _scope(scope), "spans": encoded})
        resource_spans.append(
            {"resource": {"attributes": _attrs(resource.attributes)}, "scopeSpans": scope_spans}
        )
    return orjson.dumps({"resourceSpans": resource_spans})


def logs_json(records: Sequence[ReadableLogRecord]) -> bytes:
    """``{"resourceLogs": ...}`` for SDK log records, straight to OTLP/JSON."""
    resource_logs = []
    for resource, scopes in _grouped(
        records, lambda r: r.resource, lambda r: r.instrumentation_scope
    ):
        scope_logs = []
        for scope, members in scopes:
            encoded = []
            for rec in members:
                lr = rec.log_record
                out: dict[str, Any] = {}
                if lr.timestamp:
                    out["timeUnixNano"] = str(lr.timestamp)
                if lr.severity_number is not None:
                    out["severityNumber"] = lr.severity_number.value
                if lr.severity_text:
                    out["severityText"] = lr.severity_text
                out["body"] = _any(lr.body) if lr.body is not None else {}
                out["attributes"] = _attrs(lr.attributes)
                if int(lr.trace_flags or 0):
                    out["flags"] = int(lr.trace_flags)
                if lr.trace_id:
                    out["traceId"] = f"{lr.trace_id:032x}"
                if lr.span_id:
                    out["spanId"] = f"{lr.span_id:016x}"
                if lr.observed_timestamp:
                    out["observedTimeUnixNano"] = str(lr.observed_timestamp)
                if lr.event_name:
                    out["eventName"] = lr.event_name
                encoded.append(out)
            scope_logs.append({"scope": _scope(scope), "logRecords": encoded})
        resource_logs.append(
            {"resource": {"attributes": _attrs(resource.attributes)}, "scopeLogs": scope_logs}
        )
    return orjson.dumps({"resourceLogs": resource_logs})


_JSON = "json"
"""``Attrs.encoded`` key of a run's OTLP/JSON attribute list."""


def _chunk_attrs(chunks: tuple[Attrs, ...], extra: dict[str, Any] | None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for chunk in chunks:
        encoded = chunk.encoded.get(_JSON)
        if encoded is None:
            encoded = chunk.encoded[_JSON] = _attrs(chunk.items)
        out += encoded
    if extra:
        out += _attrs(extra)
    return out


def _resource_and_scope(batch: ItemBatch[Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    return {"attributes": _attrs(batch.resource.attributes)}, _scope(batch.scope or None)


def span_items_json(batch: ItemBatch[SpanItem]) -> bytes:
    """``spans_json`` of the SDK spans the emitter's grade spans stand for (same bytes)."""
    if not batch:
        return orjson.dumps({"resourceSpans": []})
    encoded = []
    for span in batch:
        out: dict[str, Any] = {
            "traceId": f"{span.trace_id:032x}",
            "spanId": f"{span.span_id:016x}",
        }
        if span.parent_id is not None:
            out["parentSpanId"] = f"{span.parent_id:016x}"
        out["name"] = span.name
        out["kind"] = 1  # INTERNAL
        out["startTimeUnixNano"] = str(span.start)
        out["endTimeUnixNano"] = str(span.end)
        out["attributes"] = _chunk_attrs(span.chunks, span.extra)
        if span.events:
            out["events"] = [
                {
                    "timeUnixNano": str(e.time),
                    "name": e.name,
                    "attributes": _chunk_attrs(e.chunks, None),
                }
                for e in span.events
            ]
        status: dict[str, Any] = {}
        if span.status_message:
            status["message"] = span.status_message
        if span.status_code:
            status["code"] = span.status_code
        out["status"] = status
        out["flags"] = 0x100 | (0x200 if span.parent_id is not None else 0)
        encoded.append(out)
    resource, scope = _resource_and_scope(batch)
    return orjson.dumps(
        {
            "resourceSpans": [
                {"resource": resource, "scopeSpans": [{"scope": scope, "spans": encoded}]}
            ]
        }
    )


def log_items_json(batch: ItemBatch[LogItem]) -> bytes:
    """``logs_json`` of the SDK log records the emitter's records stand for (same bytes)."""
    if not batch:
        return orjson.dumps({"resourceLogs": []})
    encoded = []
    for item in batch:
        out: dict[str, Any] = {}
        if item.time:
            out["timeUnixNano"] = str(item.time)
        out["severityNumber"] = item.severity.value
        if item.severity_text:
            out["severityText"] = item.severity_text
        out["body"] = {}
        out["attributes"] = _chunk_attrs(item.chunks, item.extra)
        if item.trace_id:
            out["flags"] = 1  # sampled
            out["traceId"] = f"{item.trace_id:032x}"
        if item.span_id:
            out["spanId"] = f"{item.span_id:016x}"
        if item.time:
            out["observedTimeUnixNano"] = str(item.time)
        if item.event_name:
            out["eventName"] = item.event_name
        encoded.append(out)
    resource, scope = _resource_and_scope(batch)
    return orjson.dumps(
        {
            "resourceLogs": [
                {"resource": resource, "scopeLogs": [{"scope": scope, "logRecords": encoded}]}
            ]
        }
    )


class OtlpJsonLinesFile:
    """One file shared by the three signal exporters; each write is one whole line.
    Thread-safe. The file is created (truncated) on open."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._fh: IO[bytes] | None = path.open("wb")
        self._users = 0

    def write(self, message: Message | bytes) -> bool:
        """Append one line: a protobuf request (converted) or an OTLP/JSON object's bytes."""
        line = (message if isinstance(message, bytes) else otlp_json(message)) + b"\n"
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


class _SharedFileWriter:
    """What the three file exporters share: a reference to the one results file, and the
    SDK lifecycle rules (flush on request; shutdown once, then every export fails)."""

    def __init__(self, out: OtlpJsonLinesFile) -> None:
        self._out = out.acquire()
        self._shutdown = False

    def _write(self, message: Message | bytes) -> bool:
        return not self._shutdown and self._out.write(message)

    def force_flush(self, timeout_millis: float = 30_000) -> bool:
        self._out.flush()
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        if not self._shutdown:
            self._shutdown = True
            self._out.release()


class JsonLinesSpanExporter(_SharedFileWriter, SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        ok = self._write(spans_json(spans))
        return SpanExportResult.SUCCESS if ok else SpanExportResult.FAILURE

    accepts_items = True

    def export_items(self, batch: ItemBatch[SpanItem]) -> SpanExportResult:
        ok = self._write(span_items_json(batch))
        return SpanExportResult.SUCCESS if ok else SpanExportResult.FAILURE


class JsonLinesLogExporter(_SharedFileWriter, LogRecordExporter):
    def export(self, batch: Sequence[ReadableLogRecord]) -> LogRecordExportResult:
        ok = self._write(logs_json(batch))
        return LogRecordExportResult.SUCCESS if ok else LogRecordExportResult.FAILURE

    accepts_items = True

    def export_items(self, batch: ItemBatch[LogItem]) -> LogRecordExportResult:
        ok = self._write(log_items_json(batch))
        return LogRecordExportResult.SUCCESS if ok else LogRecordExportResult.FAILURE


class JsonLinesMetricExporter(_SharedFileWriter, MetricExporter):
    def __init__(self, out: OtlpJsonLinesFile) -> None:
        MetricExporter.__init__(self)
        _SharedFileWriter.__init__(self, out)

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        if self._shutdown:
            return MetricExportResult.FAILURE
        request = encode_metrics(metrics_data)
        # The periodic reader exports even when nothing was recorded; skip empty lines.
        if request.resource_metrics and not self._write(request):
            return MetricExportResult.FAILURE
        return MetricExportResult.SUCCESS
