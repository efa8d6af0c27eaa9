"""OTLP/JSON lines files, in the collector ``file`` exporter's format.

One OTLP/JSON object per line, one line per exported batch: ``{"resourceSpans": ...}``,
``{"resourceLogs": ...}`` or ``{"resourceMetrics": ...}``, all three signals in one file, so
the collector's ``otlpjsonfile`` receiver (or any OTLP/HTTP JSON endpoint) can load results
later. Encoding is strict OTLP/JSON: hex ids, integer enums, 64-bit integers as strings,
lowerCamelCase keys (protobuf's own JSON printer gives base64 ids; we fix those).
Spans and log records are the emitter's own records (``_records``), written straight to
OTLP/JSON; metrics come from the SDK's ``MeterProvider`` through ``encode_metrics``.
"""

from __future__ import annotations

import base64
import threading
from pathlib import Path
from typing import IO, Any

import orjson
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message
from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics
from opentelemetry.sdk.metrics.export import MetricsData

from otel_oracles.emit._metric_export import OwnMetricExporter
from otel_oracles.emit._records import Attrs, ItemBatch, LogItem, SpanItem
from otel_oracles.emit._sinks import RecordSignal, Sink

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


def _scope(scope: Any) -> dict[str, Any]:
    if scope is None:
        return {}
    out: dict[str, Any] = {"name": scope.name}
    if scope.version:
        out["version"] = scope.version
    return out


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
    """``{"resourceSpans": ...}`` for the emitter's grade spans: straight to OTLP/JSON (the
    protobuf path, encode then protobuf's JSON printer, costs ~10x more per record)."""
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
    """``{"resourceLogs": ...}`` for the emitter's log records."""
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


class JsonLinesSink(Sink):
    """Grade spans and evaluation log records as lines of the results file."""

    name = "OTLP/JSON lines file"

    def __init__(self, out: OtlpJsonLinesFile) -> None:
        self._out = out.acquire()
        self._shutdown = False

    def export(self, signal: RecordSignal, batch: ItemBatch[Any]) -> bool:
        if self._shutdown:
            return False
        line = span_items_json(batch) if signal == "traces" else log_items_json(batch)
        return self._out.write(line)

    def shutdown(self) -> None:
        if not self._shutdown:
            self._shutdown = True
            self._out.release()


class JsonLinesMetricExporter(OwnMetricExporter):
    """Metrics as lines of the results file (cumulative, as the collector writes them)."""

    def __init__(self, out: OtlpJsonLinesFile) -> None:
        super().__init__()
        self._out = out.acquire()

    def deliver(self, metrics_data: MetricsData) -> bool:
        request = encode_metrics(metrics_data)
        # The periodic reader exports even when nothing was recorded; skip empty lines.
        return not request.resource_metrics or self._out.write(request)

    def force_flush(self, timeout_millis: float = 30_000) -> bool:
        self._out.flush()
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        if not self.shut_down:
            super().shutdown()
            self._out.release()
