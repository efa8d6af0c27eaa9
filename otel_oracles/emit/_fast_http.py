"""The SDK's HTTP/protobuf OTLP exporters with the caching encoder (``_fast_otlp``) in
place of their encode step; the session, endpoint, headers, TLS, compression, timeout and
the exporters' own self-metrics are the SDK's. On an SDK without the internals this relies
on, ``export`` is the SDK's own (a test fails to say so)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from opentelemetry.exporter.otlp.proto.http._log_exporter import (
    OTLPLogExporter as HttpLogExporter,
)
from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
    OTLPSpanExporter as HttpSpanExporter,
)
from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk._logs.export import LogRecordExportResult
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult

from otel_oracles.emit._fast_otlp import Encoder
from otel_oracles.emit._records import ItemBatch, LogItem, SpanItem

logger = logging.getLogger(__name__)

_HTTP_INTERNALS = ("_shutdown", "_metrics", "_client", "_max_request_size")


def _http_fast_path(exporter: object) -> bool:
    """True when ``exporter`` has the internals ``_http_export`` relies on (SDK 1.4x)."""
    client = getattr(exporter, "_client", None)
    metrics = getattr(exporter, "_metrics", None)
    return (
        all(hasattr(exporter, name) for name in _HTTP_INTERNALS)
        and callable(getattr(client, "export", None))
        and callable(getattr(metrics, "export_operation", None))
    )


def _http_export(exporter: Any, payload: bytes, count: int, what: str) -> bool:
    """The SDK HTTP exporter's ``export`` after its encode step: size guard, POST, the
    exporter's own self-metrics. Returns success."""
    with exporter._metrics.export_operation(count) as result:
        if 0 < exporter._max_request_size < len(payload):  # non-positive: no limit (SDK)
            logger.warning(
                "dropping %s batch: %d bytes exceed max_request_size %d",
                what,
                len(payload),
                exporter._max_request_size,
            )
            result.error = ValueError(f"{what} request of {len(payload)} bytes is too large")
            return False
        outcome = exporter._client.export(payload)
        if not outcome.success:
            result.error = outcome.error
            return False
    return True


class FastHttpSpanExporter(HttpSpanExporter):
    """The SDK's HTTP span exporter with the cached encoder in place of its encode step."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._fast_encoder = Encoder()
        self.fast = _http_fast_path(self)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if not self.fast or self._shutdown:
            return super().export(spans)
        payload = self._fast_encoder.spans_bytes(spans)
        ok = _http_export(self, payload, len(spans), "span")
        return SpanExportResult.SUCCESS if ok else SpanExportResult.FAILURE

    @property
    def accepts_items(self) -> bool:
        """The emitter's own records are encoded straight to the wire (``_records``)."""
        return self.fast

    def export_items(self, batch: ItemBatch[SpanItem]) -> SpanExportResult:
        if self._shutdown:
            logger.warning("Exporter already shutdown, ignoring batch")
            return SpanExportResult.FAILURE
        payload = self._fast_encoder.span_items_bytes(batch)
        ok = _http_export(self, payload, len(batch), "span")
        return SpanExportResult.SUCCESS if ok else SpanExportResult.FAILURE


class FastHttpLogExporter(HttpLogExporter):
    """The SDK's HTTP log exporter with the cached encoder in place of its encode step."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._fast_encoder = Encoder()
        self.fast = _http_fast_path(self)

    def export(self, batch: Sequence[ReadableLogRecord]) -> LogRecordExportResult:
        if not self.fast or self._shutdown:
            return super().export(batch)
        payload = self._fast_encoder.logs_bytes(batch)
        ok = _http_export(self, payload, len(batch), "logs")
        return LogRecordExportResult.SUCCESS if ok else LogRecordExportResult.FAILURE

    @property
    def accepts_items(self) -> bool:
        """The emitter's own records are encoded straight to the wire (``_records``)."""
        return self.fast

    def export_items(self, batch: ItemBatch[LogItem]) -> LogRecordExportResult:
        if self._shutdown:
            logger.warning("Exporter already shutdown, ignoring batch")
            return LogRecordExportResult.FAILURE
        payload = self._fast_encoder.log_items_bytes(batch)
        ok = _http_export(self, payload, len(batch), "logs")
        return LogRecordExportResult.SUCCESS if ok else LogRecordExportResult.FAILURE
