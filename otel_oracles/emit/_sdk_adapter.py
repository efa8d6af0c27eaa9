"""The one place SDK span and log objects are built: for exporters users supply.

The emitter's own sinks encode its records (``_records``) directly. An SDK
``SpanExporter`` / ``LogRecordExporter`` a user hands to ``OtelEmitter`` (their vendor's
exporter, or the SDK's in-memory exporters in their tests) gets the SDK's public objects
(``ReadableSpan`` with ``Event``s, ``ReadableLogRecord``) built from those records once per
batch: what the SDK's own tracer and logger would have passed it.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import trace
from opentelemetry._logs import LogRecord, SeverityNumber
from opentelemetry.context import Context
from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import INVALID_SPAN, NonRecordingSpan, SpanContext, SpanKind, TraceFlags
from opentelemetry.trace.status import Status, StatusCode

from otel_oracles.emit._records import ItemBatch, LogItem, SpanItem, merged
from otel_oracles.emit._resource import sdk_resource, sdk_scope
from otel_oracles.emit._sinks import RecordSignal, Sink

_SAMPLED = TraceFlags(TraceFlags.SAMPLED)
_UNSET = Status(StatusCode.UNSET)


class SdkExporterSink(Sink):
    """An SDK span or log record exporter as a sink for its signal."""

    def __init__(self, exporter: SpanExporter | LogRecordExporter) -> None:
        self.exporter = exporter
        self.name = type(exporter).__name__
        self._signal: RecordSignal = "traces" if isinstance(exporter, SpanExporter) else "logs"

    def accepts(self, signal: RecordSignal) -> bool:
        return signal == self._signal

    def export(self, signal: RecordSignal, batch: ItemBatch[Any]) -> bool:
        if isinstance(self.exporter, SpanExporter):
            return self.exporter.export(sdk_spans(batch)) is SpanExportResult.SUCCESS
        result = self.exporter.export(sdk_log_records(batch))
        return result is LogRecordExportResult.SUCCESS

    def shutdown(self) -> None:
        self.exporter.shutdown()


def sdk_spans(batch: ItemBatch[SpanItem]) -> list[ReadableSpan]:
    """The SDK spans the grade spans stand for."""
    resource, scope = sdk_resource(batch.resource), sdk_scope(batch.scope)
    out = []
    for span in batch:
        parent = (
            None
            if span.parent_id is None
            else SpanContext(span.trace_id, span.parent_id, is_remote=True, trace_flags=_SAMPLED)
        )
        context = SpanContext(span.trace_id, span.span_id, is_remote=False, trace_flags=_SAMPLED)
        status = (
            _UNSET
            if span.status_code == StatusCode.UNSET.value
            else Status(StatusCode(span.status_code), span.status_message)
        )
        out.append(
            ReadableSpan(
                name=span.name,
                context=context,
                parent=parent,
                resource=resource,
                attributes=merged(span.chunks, span.extra),
                events=[Event(e.name, merged(e.chunks, None), e.time) for e in span.events],
                kind=SpanKind.INTERNAL,
                status=status,
                start_time=span.start,
                end_time=span.end,
                instrumentation_scope=scope,
            )
        )
    return out


def sdk_log_records(batch: ItemBatch[LogItem]) -> list[ReadableLogRecord]:
    """The SDK log records the emitter's records stand for."""
    resource, scope = sdk_resource(batch.resource), sdk_scope(batch.scope)
    contexts: dict[tuple[int, int], Context] = {}
    out = []
    for item in batch:
        ids = (item.trace_id, item.span_id)
        ctx = contexts.get(ids)
        if ctx is None:
            span_context = (
                SpanContext(item.trace_id, item.span_id, is_remote=True, trace_flags=_SAMPLED)
                if item.trace_id
                else None
            )
            ctx = contexts[ids] = _context_of(span_context)
        record = LogRecord(
            timestamp=item.time,
            observed_timestamp=item.time,
            context=ctx,
            severity_number=SeverityNumber(item.severity),
            severity_text=item.severity_text,
            attributes=merged(item.chunks, item.extra),
            event_name=item.event_name,
        )
        out.append(
            ReadableLogRecord(log_record=record, resource=resource, instrumentation_scope=scope)
        )
    return out


def _context_of(span_context: SpanContext | None) -> Context:
    """An explicit context (never the ambient one, which may belong to the host app).

    Without ids it holds the invalid span: the API's ``LogRecord`` falls back to the
    ambient context when given an empty one, which would tie the record to whatever span
    the host application has open."""
    if span_context is None:
        return trace.set_span_in_context(INVALID_SPAN, Context())
    return trace.set_span_in_context(NonRecordingSpan(span_context), Context())
