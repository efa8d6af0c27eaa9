"""SDK spans and log records as the grader reads them: through the OTLP encoding the SDK's
exporters send and the project's own decoder, so a trace graded in-process (the
``GradingSpanProcessor``, the pytest ``grade_trace`` fixture) is graded exactly as
``otel-oracles grade`` would grade an export of the same run.

Text has no UTF-8 encoding while it holds a surrogate (Python's ``surrogateescape`` decoding
of bytes that are not UTF-8, ``os.fsdecode``), and the SDK accepts any ``str``: its encoder
dropped such an attribute (logging a traceback), and a span name, status description or
event name holding one raised, losing the whole trace. Each surrogate is written as its
escape (``\\udcff``) instead, as the reports write every character they cannot show: the
trace is graded and the text shown is what the reports show. The escaper is the core's
(``_native.escape_surrogates``), the one the reports and the emitter write with."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.attributes import BoundedAttributes
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import InstrumentationScope, KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord, ResourceLogs, ScopeLogs
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.sdk._logs import ReadableLogRecord, ReadWriteLogRecord
from opentelemetry.sdk.resources import Resource as SdkResource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util import BoundedList
from opentelemetry.sdk.util.instrumentation import InstrumentationScope as SdkScope
from opentelemetry.trace import Link, Status

from otel_oracles._native import escape_surrogates
from otel_oracles.decode import DecodedBatch, decode
from otel_oracles.emit import any_value
from otel_oracles.model.span import Trace
from otel_oracles.pipeline import traces_from_batches

PROTOBUF = "application/x-protobuf"

SdkLogRecord = ReadableLogRecord | ReadWriteLogRecord
"""What an exporter receives (readable) or a log processor's ``on_emit`` (read-write): the
same fields."""


def sdk_traces(spans: Sequence[ReadableSpan], logs: Sequence[SdkLogRecord] = ()) -> list[Trace]:
    """The traces ``spans`` and ``logs`` make, assembled and joined as an export of them
    would be by ``otel-oracles grade``."""
    batches: list[DecodedBatch] = []
    if spans:
        spans = [_encodable_span(span) if _holds_surrogate(span) else span for span in spans]
        batches.append(decode(encode_spans(spans).SerializeToString(), PROTOBUF))
    if logs:
        body = logs_request(logs).SerializeToString()
        batches.append(decode(body, PROTOBUF, signal="logs"))
    return list(traces_from_batches(batches))


def logs_request(records: Sequence[SdkLogRecord]) -> ExportLogsServiceRequest:
    """The OTLP request for SDK log records (the SDK's log encoder is not public API)."""
    request = ExportLogsServiceRequest()
    for readable in records:
        record = readable.log_record
        scope = readable.instrumentation_scope
        resource = readable.resource
        resource_logs = ResourceLogs(
            resource=Resource(attributes=_attributes(resource.attributes if resource else {}))
        )
        scope_logs = ScopeLogs(
            scope=InstrumentationScope(
                name=escape_surrogates(scope.name), version=escape_surrogates(scope.version or "")
            )
            if scope is not None
            else None
        )
        scope_logs.log_records.append(
            LogRecord(
                time_unix_nano=record.timestamp or 0,
                observed_time_unix_nano=record.observed_timestamp or 0,
                severity_number=record.severity_number.value if record.severity_number else 0,  # type: ignore[arg-type]
                severity_text=escape_surrogates(record.severity_text or ""),
                body=any_value(_value(record.body)) if record.body is not None else None,
                attributes=_attributes(record.attributes),
                dropped_attributes_count=readable.dropped_attributes,
                flags=int(record.trace_flags or 0),
                trace_id=record.trace_id.to_bytes(16, "big") if record.trace_id else b"",
                span_id=record.span_id.to_bytes(8, "big") if record.span_id else b"",
                event_name=escape_surrogates(record.event_name or ""),
            )
        )
        resource_logs.scope_logs.append(scope_logs)
        request.resource_logs.append(resource_logs)
    return request


def _attributes(attributes: Any) -> list[KeyValue]:
    return [
        KeyValue(key=escape_surrogates(k), value=any_value(_value(v)))
        for k, v in (attributes or {}).items()
    ]


def _value(value: Any) -> Any:
    """An attribute value (or log body) with each string in it, keys too, through the core's
    ``escape_surrogates``."""
    if isinstance(value, str):
        return escape_surrogates(value)
    if isinstance(value, Mapping):
        return {escape_surrogates(str(k)): _value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_value(v) for v in value)
    return value


def _holds(value: Any) -> bool:
    """Whether ``value`` (a string, attribute value or attributes) holds a surrogate."""
    if isinstance(value, str):
        return escape_surrogates(value) is not value  # a new str: one was escaped
    if isinstance(value, Mapping):
        return any(_holds(k) or _holds(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_holds(v) for v in value)
    return False


def _holds_surrogate(span: ReadableSpan) -> bool:
    """Whether any text of ``span`` the encoder writes holds a surrogate."""
    scope = span.instrumentation_scope
    return (
        _holds(span.name)
        or _holds(span.status.description or "")
        or _holds(span.attributes or {})
        or any(_holds(e.name) or _holds(e.attributes or {}) for e in span.events)
        or any(_holds(link.attributes or {}) for link in span.links)
        or _holds(span.resource.attributes)
        or (
            scope is not None
            and (_holds(scope.name) or _holds(scope.version or "") or _holds(scope.attributes))
        )
    )


def _bounded(attributes: Any) -> BoundedAttributes:
    """``_value`` of span, event or link attributes, their count of dropped ones kept."""
    clean = BoundedAttributes(attributes=_value(dict(attributes or {})), immutable=True)
    clean.dropped = getattr(attributes, "dropped", 0)
    return clean


def _encodable_span(span: ReadableSpan) -> ReadableSpan:
    """A copy of ``span`` with ``escape_surrogates`` of every text the encoder writes (the
    counts of dropped attributes, events and links, the instrumentation scope's attributes
    kept)."""
    events: BoundedList[Event] = BoundedList(None)
    events.extend(
        [Event(escape_surrogates(e.name), _bounded(e.attributes), e.timestamp) for e in span.events]
    )
    events.dropped = span.dropped_events
    links: BoundedList[Link] = BoundedList(None)
    links.extend([Link(link.context, _bounded(link.attributes)) for link in span.links])
    links.dropped = span.dropped_links
    scope = span.instrumentation_scope
    status = span.status
    return ReadableSpan(
        name=escape_surrogates(span.name),
        context=span.context,
        parent=span.parent,
        resource=SdkResource(_value(dict(span.resource.attributes)), span.resource.schema_url),
        attributes=_bounded(span.attributes),
        events=events,
        links=links,
        kind=span.kind,
        status=Status(status.status_code, escape_surrogates(status.description or "") or None),
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=None
        if scope is None
        else SdkScope(
            escape_surrogates(scope.name),
            scope.version and escape_surrogates(scope.version),
            scope.schema_url,
            _value(dict(scope.attributes or {})),
        ),
    )
