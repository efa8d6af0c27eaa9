"""OTLP protobuf request bodies -> span and log records.

Parses with the map-shaped descriptors of ``_lean`` so attributes stay in upb until read.
The records keep references into the parsed message: its arena lives as long as any record
from it does (a few hundred bytes per span, far less than the equivalent Python dicts).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Literal, cast

from google.protobuf.internal import api_implementation
from google.protobuf.message import DecodeError

from otel_oracles.decode._batch import DecodedBatch
from otel_oracles.decode._lean import LeanLogsRequest, LeanTracesRequest
from otel_oracles.decode._transfer import (
    RequestBody,
    WireSpan,
    logs_for_transfer,
    service_only,
    session_attributes,
)
from otel_oracles.decode._values import PbAttributes, pb_any
from otel_oracles.errors import InputError
from otel_oracles.model.span import (
    EMPTY,
    NO_ITEMS,
    SESSION_ATTRIBUTES,
    EventRecord,
    LinkRecord,
    LogRecord,
    SpanRecord,
)

logger = logging.getLogger(__name__)

Signal = Literal["traces", "logs"]

_MAX_KIND = 5  # SPAN_KIND_CONSUMER
_MAX_STATUS = 2  # STATUS_CODE_ERROR
_backend_checked = False


def warn_if_slow_backend() -> None:
    """Log once when protobuf runs on its pure-Python backend (about 250x slower than upb)."""
    global _backend_checked
    if _backend_checked:
        return
    _backend_checked = True
    backend = api_implementation.Type()
    if backend == "python":
        logger.warning(
            "protobuf is using its pure-Python backend, which decodes OTLP about 250x slower "
            "than upb. Fix: unset PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION and install a binary "
            "protobuf wheel (pip install --force-reinstall 'protobuf>=4.21')."
        )


def parse(payload: bytes, signal: Signal) -> Any:
    """Parse a request body; raise ``InputError`` when the bytes are not that message."""
    warn_if_slow_backend()
    message = LeanLogsRequest() if signal == "logs" else LeanTracesRequest()
    try:
        message.ParseFromString(payload)
    except DecodeError as exc:
        kind = "ExportLogsServiceRequest" if signal == "logs" else "ExportTraceServiceRequest"
        raise InputError(
            f"not a valid protobuf {kind} ({len(payload)} bytes): {exc} "
            "(truncated or not OTLP protobuf?)"
        ) from None
    return message


def looks_like(message: Any, signal: Signal) -> bool:
    """Whether a parsed message is plausibly that signal, for bodies of unknown signal.

    Traces and logs requests share their outer field numbers, so the other signal's bytes
    often parse without error; a wrong guess shows in the innermost records (a span always
    has 16-byte trace and 8-byte span ids; a log record has a timestamp).
    """
    seen = 0
    if signal == "traces":
        for rs in message.resource_spans:
            for ss in rs.scope_spans:
                for span in ss.spans:
                    if len(span.trace_id) != 16 or len(span.span_id) != 8:
                        return False
                    seen += 1
                    if seen >= 4:
                        return True
        return True
    for rl in message.resource_logs:
        for sl in rl.scope_logs:
            for record in sl.log_records:
                if record.time_unix_nano == 0 and record.observed_time_unix_nano == 0:
                    return False
                if len(record.trace_id) not in (0, 16) or len(record.span_id) not in (0, 8):
                    return False
                seen += 1
                if seen >= 4:
                    return True
    return True


def record_of(span: Any, resource: Any, scope_name: str, scope_version: str) -> SpanRecord:
    """The record ``traces_batch`` makes of an upb span that passed its id checks (enums
    out of range read as unspecified, as there)."""
    kind = span.kind
    code, message = (span.status.code, span.status.message) if span.HasField("status") else (0, "")
    parent = span.parent_span_id
    return _record(
        span,
        span.trace_id.hex(),
        span.span_id.hex(),
        parent.hex() if parent else "",
        kind if 0 <= kind <= _MAX_KIND else 0,
        code if 0 <= code <= _MAX_STATUS else 0,
        message,
        resource,
        scope_name,
        scope_version,
    )


def _record(
    span: Any,
    trace_id: str,
    span_id: str,
    parent: str,
    kind: int,
    code: int,
    message: str,
    resource: Any,
    scope_name: str,
    scope_version: str,
) -> SpanRecord:
    events = span.events
    links = span.links
    return SpanRecord(
        trace_id,
        span_id,
        parent,
        span.name,
        kind,
        span.start_time_unix_nano,
        span.end_time_unix_nano,
        code,
        message,
        PbAttributes(span.attributes),
        [EventRecord(e.name, e.time_unix_nano, PbAttributes(e.attributes)) for e in events]
        if events
        else NO_ITEMS,
        [
            LinkRecord(lk.trace_id.hex(), lk.span_id.hex(), PbAttributes(lk.attributes))
            for lk in links
        ]
        if links
        else NO_ITEMS,
        resource,
        scope_name,
        scope_version,
    )


# The two SESSION_ATTRIBUTES, looked up by name on the per-span path (no loop, no generator).
_CONVERSATION_ID, _SESSION_ID = SESSION_ATTRIBUTES


def traces_batch(message: Any, body: RequestBody | None = None) -> DecodedBatch:
    """Span records of a parsed (lean) ExportTraceServiceRequest / TracesData; given the
    request ``body``, ``WireSpan``s (see there) after the same checks."""
    batch = DecodedBatch()
    # WireSpans stand in for records for a body (the caller only assembles them).
    append: Callable[[Any], None] = batch.spans.append
    index = -1
    for ri, rs in enumerate(message.resource_spans):
        resource = PbAttributes(rs.resource.attributes) if rs.resource.attributes else EMPTY
        if body is not None:
            resource = service_only(resource)
        for si, ss in enumerate(rs.scope_spans):
            scope = ss.scope
            scope_name = scope.name
            scope_version = scope.version
            for pi, span in enumerate(ss.spans):
                index += 1
                trace_id = span.trace_id
                span_id = span.span_id
                parent = span.parent_span_id
                if len(trace_id) != 16 or len(span_id) != 8 or (parent and len(parent) != 8):
                    batch.rejected += 1
                    batch.problems.append(
                        f"resourceSpans[{ri}].scopeSpans[{si}].spans[{pi}] ({span.name!r}): "
                        f"{_bad_ids(trace_id, span_id, parent)}; span rejected"
                    )
                    continue
                kind = span.kind
                if kind > _MAX_KIND or kind < 0:
                    batch.problems.append(
                        f"resourceSpans[{ri}].scopeSpans[{si}].spans[{pi}].kind: unknown "
                        f"SpanKind {kind}; read as SPAN_KIND_UNSPECIFIED"
                    )
                    kind = 0
                code = 0
                message = ""
                if span.HasField("status"):
                    status = span.status
                    code = status.code
                    message = status.message
                    if code > _MAX_STATUS or code < 0:
                        batch.problems.append(
                            f"resourceSpans[{ri}].scopeSpans[{si}].spans[{pi}].status.code: "
                            f"unknown StatusCode {code}; read as STATUS_CODE_UNSET"
                        )
                        code = 0
                if body is not None:
                    raw = span.attributes
                    links = span.links
                    append(
                        WireSpan(
                            body,
                            index,
                            trace_id.hex(),
                            span_id.hex(),
                            parent.hex() if parent else "",
                            span.end_time_unix_nano,
                            resource,
                            scope_name,
                            span.start_time_unix_nano,
                            [LinkRecord(lk.trace_id.hex(), lk.span_id.hex()) for lk in links]
                            if links
                            else NO_ITEMS,
                            session_attributes(PbAttributes(raw))
                            if _CONVERSATION_ID in raw or _SESSION_ID in raw
                            else EMPTY,
                        )
                    )
                    continue
                append(
                    _record(
                        span,
                        trace_id.hex(),
                        span_id.hex(),
                        parent.hex() if parent else "",
                        kind,
                        code,
                        message,
                        resource,
                        scope_name,
                        scope_version,
                    )
                )
    return batch


def _bad_ids(trace_id: bytes, span_id: bytes, parent: bytes) -> str:
    wrong = []
    if len(trace_id) != 16:
        wrong.append(f"traceId has {len(trace_id)} bytes, expected 16")
    if len(span_id) != 8:
        wrong.append(f"spanId has {len(span_id)} bytes, expected 8")
    if len(parent) not in (0, 8):
        wrong.append(f"parentSpanId has {len(parent)} bytes, expected 0 or 8")
    return "; ".join(wrong)


def logs_batch(message: Any) -> DecodedBatch:
    """Log records of a parsed (lean) ExportLogsServiceRequest / LogsData."""
    batch = DecodedBatch()
    logs = batch.logs
    for ri, rl in enumerate(message.resource_logs):
        resource = PbAttributes(rl.resource.attributes) if rl.resource.attributes else EMPTY
        for si, sl in enumerate(rl.scope_logs):
            scope_name = sl.scope.name
            for li, record in enumerate(sl.log_records):
                trace_id = record.trace_id
                span_id = record.span_id
                if len(trace_id) not in (0, 16) or len(span_id) not in (0, 8):
                    batch.problems.append(
                        f"resourceLogs[{ri}].scopeLogs[{si}].logRecords[{li}]: traceId/spanId "
                        f"have {len(trace_id)}/{len(span_id)} bytes, expected 16/8; "
                        "read without span context"
                    )
                    trace_id = span_id = b""
                attributes = PbAttributes(record.attributes)
                event_name = record.event_name
                if not event_name:
                    legacy = attributes.get("event.name")
                    event_name = legacy if isinstance(legacy, str) else ""
                logs.append(
                    LogRecord(
                        trace_id.hex(),
                        span_id.hex(),
                        event_name,
                        record.time_unix_nano or record.observed_time_unix_nano,
                        attributes,
                        pb_any(record.body) if record.HasField("body") else None,
                        record.severity_number,
                        resource,
                        scope_name,
                    )
                )
    return batch


def decode_proto(
    payload: bytes, signal: Signal = "traces", for_transfer: bool = False
) -> DecodedBatch:
    """Decode one protobuf request body of the given signal (``for_transfer``: see
    ``WireSpan``)."""
    message = parse(payload, signal)
    if signal == "logs":
        batch = logs_batch(message)
        if for_transfer and batch.logs:
            # Stand-ins for the records (the caller only assembles them).
            body = RequestBody(payload, "proto-logs")
            batch.logs = cast(list[LogRecord], logs_for_transfer(batch.logs, body))
        return batch
    return traces_batch(message, RequestBody(payload, "proto-traces") if for_transfer else None)
