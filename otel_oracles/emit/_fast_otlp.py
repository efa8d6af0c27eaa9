"""Faster OTLP protobuf encoding for the grader's own spans and log records.

Why: the SDK's encoder builds every attribute as a fresh protobuf ``KeyValue`` in Python
(~4-6 µs each), and an evaluation log record carries ~12 attributes whose values come from
tiny sets (contract id/version/hash, check name, oracle type, layer, outcome, score, the
templated explanation). Emission cost more than grading (docs/performance.md, G4). Here
each ``(key, value)`` pair is encoded once and the cached ``KeyValue`` is copied (in C by
upb) into every later message; resources and scopes are grouped by identity and encoded
once per request.

The output is the message the SDK's ``encode_spans``/``encode_logs`` build for the same
records (``tests/emit/test_emit_fast_encoding.py`` holds them equal on the installed SDK
and checks what a real receiver decoded). Transport, endpoint, headers, TLS, compression,
timeouts and retries stay the SDK exporters': ``FastGrpc*Exporter`` override only the
``_translate_data`` step, and ``FastHttp*Exporter`` replace only the encode step of
``export`` when the exporter has the internals that step needs; otherwise (another SDK
version) they behave exactly like the SDK's exporter.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from opentelemetry.exporter.otlp.proto.grpc._log_exporter import (
    OTLPLogExporter as GrpcLogExporter,
)
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
    OTLPSpanExporter as GrpcSpanExporter,
)
from opentelemetry.exporter.otlp.proto.http._log_exporter import (
    OTLPLogExporter as HttpLogExporter,
)
from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
    OTLPSpanExporter as HttpSpanExporter,
)
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import (
    AnyValue,
    ArrayValue,
    InstrumentationScope,
    KeyValue,
    KeyValueList,
)
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord, ResourceLogs, ScopeLogs
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, SpanFlags
from opentelemetry.proto.trace.v1.trace_pb2 import Status as PbStatus
from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk._logs.export import LogRecordExportResult
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.trace import SpanKind

logger = logging.getLogger(__name__)

_KIND = {
    SpanKind.INTERNAL: Span.SpanKind.SPAN_KIND_INTERNAL,
    SpanKind.SERVER: Span.SpanKind.SPAN_KIND_SERVER,
    SpanKind.CLIENT: Span.SpanKind.SPAN_KIND_CLIENT,
    SpanKind.PRODUCER: Span.SpanKind.SPAN_KIND_PRODUCER,
    SpanKind.CONSUMER: Span.SpanKind.SPAN_KIND_CONSUMER,
}
_HAS_IS_REMOTE = SpanFlags.SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK
_IS_REMOTE = SpanFlags.SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK
CACHE_MAX = 16_384
"""Cached ``KeyValue`` pairs; cleared when full (values repeat from small sets in practice)."""


def _value(value: Any) -> AnyValue:
    """``AnyValue`` exactly as the SDK's ``_encode_value`` builds it."""
    if value is None:
        return AnyValue()
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, str):
        return AnyValue(string_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, bytes):
        return AnyValue(bytes_value=value)
    if isinstance(value, Sequence):
        return AnyValue(array_value=ArrayValue(values=[_value(v) for v in value]))
    if isinstance(value, Mapping):
        return AnyValue(
            kvlist_value=KeyValueList(
                values=[KeyValue(key=str(k), value=_value(v)) for k, v in value.items()]
            )
        )
    raise TypeError(f"invalid attribute value type {type(value).__name__}")


class Encoder:
    """Encodes batches of SDK spans / log records into OTLP requests, caching attributes.

    Not thread-safe on its own; each exporter owns one and the SDK calls ``export`` from one
    thread at a time (the emitter serializes its calls).
    """

    def __init__(self) -> None:
        self._pairs: dict[tuple[str, type, Any], KeyValue] = {}
        self._resources: dict[int, tuple[Any, Resource]] = {}
        self._scopes: dict[int, tuple[Any, InstrumentationScope | None]] = {}

    def attributes(self, attributes: Mapping[str, Any] | None) -> list[KeyValue]:
        if not attributes:
            return []
        out = []
        pairs = self._pairs
        for key, value in attributes.items():
            if isinstance(value, str | bool | int | float):
                cache_key = (key, type(value), value)
                kv = pairs.get(cache_key)
                if kv is None:
                    if len(pairs) >= CACHE_MAX:
                        pairs.clear()
                    kv = pairs[cache_key] = KeyValue(key=key, value=_value(value))
                out.append(kv)
                continue
            try:
                out.append(KeyValue(key=key, value=_value(value)))
            except Exception:  # the SDK logs and skips a value it cannot encode, too
                logger.exception("cannot encode attribute %s", key)
        return out

    def _resource(self, sdk_resource: Any) -> Resource:
        held = self._resources.get(id(sdk_resource))
        if held is None or held[0] is not sdk_resource:
            held = (sdk_resource, Resource(attributes=self.attributes(sdk_resource.attributes)))
            self._resources[id(sdk_resource)] = held
        return held[1]

    def _scope(self, scope: Any) -> InstrumentationScope | None:
        held = self._scopes.get(id(scope))
        if held is None or held[0] is not scope:
            pb = (
                None
                if scope is None
                else InstrumentationScope(
                    name=scope.name,
                    version=scope.version,
                    attributes=self.attributes(scope.attributes),
                )
            )
            held = (scope, pb)
            self._scopes[id(scope)] = held
        return held[1]

    @staticmethod
    def _grouped(items: Sequence[Any]) -> Iterator[tuple[Any, list[tuple[Any, list[Any]]]]]:
        """(resource, [(scope, items)]) in first-seen order, as the SDK groups them (it keys
        dicts by resource and scope equality; the emitter reuses one object of each)."""
        by_resource: dict[int, tuple[Any, dict[int, tuple[Any, list[Any]]]]] = {}
        for item in items:
            resource = item.resource
            scope = item.instrumentation_scope or None
            scopes = by_resource.setdefault(id(resource), (resource, {}))[1]
            scopes.setdefault(id(scope), (scope, []))[1].append(item)
        for resource, scopes in by_resource.values():
            yield resource, list(scopes.values())

    # ---- logs -----------------------------------------------------------------------------

    def logs(self, batch: Sequence[ReadableLogRecord]) -> ExportLogsServiceRequest:
        resource_logs = []
        for resource, scopes in self._grouped(batch):
            scope_logs = [
                ScopeLogs(
                    scope=self._scope(scope),
                    log_records=[self._log(r) for r in records],
                    schema_url=scope.schema_url if scope else None,
                )
                for scope, records in scopes
            ]
            resource_logs.append(
                ResourceLogs(
                    resource=self._resource(resource),
                    scope_logs=scope_logs,
                    schema_url=resource.schema_url,
                )
            )
        return ExportLogsServiceRequest(resource_logs=resource_logs)

    def _log(self, readable: ReadableLogRecord) -> LogRecord:
        record = readable.log_record
        span_id = record.span_id
        trace_id = record.trace_id
        body = record.body
        return LogRecord(
            time_unix_nano=record.timestamp,
            observed_time_unix_nano=record.observed_timestamp,
            span_id=None if span_id == 0 else span_id.to_bytes(8, "big"),
            trace_id=None if trace_id == 0 else trace_id.to_bytes(16, "big"),
            flags=int(record.trace_flags),
            body=AnyValue() if body is None else _value(body),
            severity_text=record.severity_text,
            attributes=self.attributes(record.attributes),
            dropped_attributes_count=readable.dropped_attributes,
            severity_number=getattr(record.severity_number, "value", None),
            event_name=record.event_name,
        )

    # ---- spans ----------------------------------------------------------------------------

    def spans(self, batch: Sequence[ReadableSpan]) -> ExportTraceServiceRequest:
        resource_spans = []
        for resource, scopes in self._grouped(batch):
            scope_spans = [
                ScopeSpans(
                    scope=self._scope(scope),
                    spans=[self._span(s) for s in spans],
                    schema_url=scope.schema_url if scope else None,
                )
                for scope, spans in scopes
            ]
            resource_spans.append(
                ResourceSpans(
                    resource=self._resource(resource),
                    scope_spans=scope_spans,
                    schema_url=resource.schema_url,
                )
            )
        return ExportTraceServiceRequest(resource_spans=resource_spans)

    def _span(self, span: ReadableSpan) -> Span:
        context = span.get_span_context()
        parent = span.parent
        state = context.trace_state
        status = span.status
        flags = _HAS_IS_REMOTE | (_IS_REMOTE if parent is not None and parent.is_remote else 0)
        return Span(
            trace_id=context.trace_id.to_bytes(16, "big"),
            span_id=context.span_id.to_bytes(8, "big"),
            trace_state=None if state is None else ",".join(f"{k}={v}" for k, v in state.items()),
            parent_span_id=parent.span_id.to_bytes(8, "big") if parent else None,
            name=span.name,
            kind=_KIND[span.kind],
            start_time_unix_nano=span.start_time,
            end_time_unix_nano=span.end_time,
            attributes=self.attributes(span.attributes),
            events=[
                Span.Event(
                    name=e.name,
                    time_unix_nano=e.timestamp,
                    attributes=self.attributes(e.attributes),
                    dropped_attributes_count=e.dropped_attributes,
                )
                for e in span.events
            ]
            or None,
            links=[
                Span.Link(
                    trace_id=link.context.trace_id.to_bytes(16, "big"),
                    span_id=link.context.span_id.to_bytes(8, "big"),
                    attributes=self.attributes(link.attributes),
                    dropped_attributes_count=link.dropped_attributes,
                    flags=_HAS_IS_REMOTE | (_IS_REMOTE if link.context.is_remote else 0),
                )
                for link in span.links
            ]
            or None,
            status=None
            if status is None
            else PbStatus(code=status.status_code.value, message=status.description),
            dropped_attributes_count=span.dropped_attributes,
            dropped_events_count=span.dropped_events,
            dropped_links_count=span.dropped_links,
            flags=flags,
        )


# ---- exporters -----------------------------------------------------------------------------


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
        payload = self._fast_encoder.spans(spans).SerializePartialToString()
        ok = _http_export(self, payload, len(spans), "span")
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
        payload = self._fast_encoder.logs(batch).SerializeToString()
        ok = _http_export(self, payload, len(batch), "logs")
        return LogRecordExportResult.SUCCESS if ok else LogRecordExportResult.FAILURE
