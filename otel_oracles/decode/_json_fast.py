"""Fast path for well-formed OTLP/JSON: typed decoding with msgspec, tolerant path on anything else.

Why: with orjson every attribute becomes two dicts and the Python code that walks them costs
more than the parse. msgspec decodes straight into typed structs in C and validates while it
does so (hex ids, integer fields, ``AnyValue`` variants), so a well-formed canonical request
needs almost no Python per span, and a malformed value can no longer surface later when an
attribute is read. Measured on 20k synthetic GenAI spans: ~35% less time per span than orjson
plus the tolerant walk.

The schema is strict on purpose (camelCase keys, integer enums, hex ids, no unknown fields):
anything it rejects (snake_case keys, enum names, base64 ids, a wrong-typed value, a field
from a newer OTLP version) is decoded again by the tolerant path in ``_json``, which accepts
what it can and reports the rest with its place in the request. Both paths produce identical
records for input both accept (tested on the real fixtures).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Annotated, Any, Literal

import msgspec
import orjson
from msgspec import Meta, Struct

from otel_oracles.decode._batch import DecodedBatch
from otel_oracles.decode._depth import too_deep
from otel_oracles.decode._json import _SPAN_KINDS, _STATUS_CODES, decode_json_object
from otel_oracles.decode._json import _count_metrics as count_metrics
from otel_oracles.decode._values import BadValue, LazyAttributes, Report, too_deep_value
from otel_oracles.decode.config import MAX_ANY_VALUE_DEPTH
from otel_oracles.errors import InputError
from otel_oracles.model.span import (
    EMPTY,
    NO_ITEMS,
    EventRecord,
    LinkRecord,
    LogRecord,
    SpanRecord,
)

_TraceId = Annotated[str, Meta(pattern="^[0-9a-fA-F]{32}$")]
_SpanId = Annotated[str, Meta(pattern="^[0-9a-fA-F]{16}$")]
_OptTraceId = Annotated[str, Meta(pattern="^([0-9a-fA-F]{32})?$")]
_OptSpanId = Annotated[str, Meta(pattern="^([0-9a-fA-F]{16})?$")]
# Enum names (protobuf's JSON printer writes them) are accepted here too and mapped below.
_Kind = (
    Annotated[int, Meta(ge=0, le=5)]
    | Literal[
        "SPAN_KIND_UNSPECIFIED",
        "SPAN_KIND_INTERNAL",
        "SPAN_KIND_SERVER",
        "SPAN_KIND_CLIENT",
        "SPAN_KIND_PRODUCER",
        "SPAN_KIND_CONSUMER",
    ]
)
_Code = (
    Annotated[int, Meta(ge=0, le=2)]
    | Literal["STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR"]
)
_ZERO32 = "0" * 32
_ZERO16 = "0" * 16


class _Strict(Struct, rename="camel", forbid_unknown_fields=True, gc=False):
    """Base: camelCase keys as OTLP/JSON writes them, nothing unknown.

    ``gc=False``: decoded requests are trees (no reference cycles), and untracked structs
    keep the garbage collector from rescanning every buffered attribute (measured: ~2x
    faster JSON ingestion when many traces are in flight)."""


class _ArrayValue(_Strict):
    values: list[_AnyValue] = []


class _KeyValueList(_Strict):
    values: list[_KeyValue] = []


class _AnyValue(_Strict):
    string_value: str | None = None
    bool_value: bool | None = None
    int_value: int | None = None
    double_value: float | None = None
    array_value: _ArrayValue | None = None
    kvlist_value: _KeyValueList | None = None
    bytes_value: str | None = None


class _KeyValue(_Strict):
    key: str
    value: _AnyValue | None = None


class _Scope(_Strict):
    name: str = ""
    version: str = ""
    attributes: list[_KeyValue] = []
    dropped_attributes_count: int = 0


class _Resource(_Strict):
    attributes: list[_KeyValue] = []
    dropped_attributes_count: int = 0
    entity_refs: list[Any] = []


class _Status(_Strict):
    code: _Code = 0
    message: str = ""


class _Event(_Strict):
    time_unix_nano: int = 0
    name: str = ""
    attributes: list[_KeyValue] = []
    dropped_attributes_count: int = 0


class _Link(_Strict):
    trace_id: _TraceId
    span_id: _SpanId
    trace_state: str = ""
    attributes: list[_KeyValue] = []
    dropped_attributes_count: int = 0
    flags: int = 0


class _Span(_Strict):
    trace_id: _TraceId
    span_id: _SpanId
    trace_state: str = ""
    parent_span_id: _OptSpanId = ""
    flags: int = 0
    name: str = ""
    kind: _Kind = 0
    start_time_unix_nano: int = 0
    end_time_unix_nano: int = 0
    attributes: list[_KeyValue] = []
    dropped_attributes_count: int = 0
    events: list[_Event] = []
    dropped_events_count: int = 0
    links: list[_Link] = []
    dropped_links_count: int = 0
    status: _Status | None = None


class _ScopeSpans(_Strict):
    scope: _Scope | None = None
    spans: list[_Span] = []
    schema_url: str = ""


class _ResourceSpans(_Strict):
    resource: _Resource | None = None
    scope_spans: list[_ScopeSpans] = []
    schema_url: str = ""


class _LogRecord(_Strict):
    time_unix_nano: int = 0
    observed_time_unix_nano: int = 0
    severity_number: Annotated[int, Meta(ge=0, le=24)] = 0
    severity_text: str = ""
    body: _AnyValue | None = None
    attributes: list[_KeyValue] = []
    dropped_attributes_count: int = 0
    flags: int = 0
    trace_id: _OptTraceId = ""
    span_id: _OptSpanId = ""
    event_name: str = ""


class _ScopeLogs(_Strict):
    scope: _Scope | None = None
    log_records: list[_LogRecord] = []
    schema_url: str = ""


class _ResourceLogs(_Strict):
    resource: _Resource | None = None
    scope_logs: list[_ScopeLogs] = []
    schema_url: str = ""


class _Request(_Strict):
    resource_spans: list[_ResourceSpans] | None = None
    resource_logs: list[_ResourceLogs] | None = None
    resource_metrics: msgspec.Raw | None = None


# strict=False: OTLP/JSON writes 64-bit integers as strings; this lets "123" decode to int.
_DECODER = msgspec.json.Decoder(_Request, strict=False)


class _Fallback(Exception):
    """Valid for the schema but not for OTLP (an all-zero id): let the tolerant path say why."""


def ms_any(value: _AnyValue | None, depth: int = 0) -> Any:
    """Plain Python value of a typed ``AnyValue``; raises ``ValueError`` for bad base64 and
    ``BadValue`` (a ``ValueError``) past ``MAX_ANY_VALUE_DEPTH`` (see ``json_any``)."""
    if value is None:
        return None
    x: Any = value.string_value
    if x is not None:
        return x
    x = value.int_value
    if x is not None:
        return x
    x = value.bool_value
    if x is not None:
        return x
    x = value.double_value
    if x is not None:
        return x
    array, kvlist = value.array_value, value.kvlist_value
    if array is not None or kvlist is not None:
        if depth >= MAX_ANY_VALUE_DEPTH:
            raise too_deep_value()
        if array is not None:
            return [ms_any(v, depth + 1) for v in array.values]
        assert kvlist is not None
        return {kv.key: ms_any(kv.value, depth + 1) for kv in kvlist.values}
    if value.bytes_value is not None:
        try:
            return base64.b64decode(value.bytes_value, validate=True)
        except (binascii.Error, ValueError):
            return base64.urlsafe_b64decode(value.bytes_value)
    return None


class MsAttributes(LazyAttributes):
    """Lazy view of a typed (msgspec-decoded) attribute list."""

    __slots__ = ()

    def _build(self) -> dict[str, _AnyValue | None]:
        index = self._index = {kv.key: kv.value for kv in self._raw}
        return index

    def _convert(self, key: str, raw: _AnyValue | None) -> Any:
        try:
            return ms_any(raw)
        except BadValue as exc:
            self._problem(f"attribute {key!r}: {exc}; read as null")
            assert self._index is not None
            self._index[key] = None
            return None
        except (binascii.Error, ValueError) as exc:
            self._problem(f"attribute {key!r}: bytesValue must be base64 ({exc}); read as null")
            assert self._index is not None
            self._index[key] = None
            return None


def decode_json_bytes(data: bytes, report: Report | None = None) -> DecodedBatch:
    """Decode one OTLP/JSON request from bytes: fast typed path, tolerant path otherwise.

    Raises ``orjson.JSONDecodeError`` for text that is not JSON and ``InputError`` for JSON
    that is not an OTLP request (both from the tolerant path, which words them).
    """
    try:
        try:
            request = _DECODER.decode(data)
            return _batch(request, report)
        except (msgspec.ValidationError, msgspec.DecodeError, _Fallback):
            return decode_json_object(orjson.loads(data), report)
    except RecursionError:
        # Both decoders stop at the interpreter's recursion limit; say where, not a traceback.
        raise InputError(too_deep(data)) from None


def _resource(resource: _Resource | None) -> Mapping[str, Any]:
    """Converted once per request (shared by its spans), so problems surface now."""
    if resource is None or not resource.attributes:
        return EMPTY
    try:
        return {kv.key: ms_any(kv.value) for kv in resource.attributes}
    except (binascii.Error, ValueError):
        raise _Fallback from None


def _batch(request: _Request, report: Report | None) -> DecodedBatch:
    batch = DecodedBatch()
    if report is None:
        report = batch.problems.append
    if request.resource_spans:
        _spans(request.resource_spans, batch, report)
    if request.resource_logs:
        _logs(request.resource_logs, batch, report)
    if request.resource_metrics is not None:
        batch.ignored += _count_metrics(request.resource_metrics)
    return batch


def _spans(resource_spans: list[_ResourceSpans], batch: DecodedBatch, report: Report) -> None:
    append = batch.spans.append
    for ri, rs in enumerate(resource_spans):
        resource = _resource(rs.resource)
        for si, ss in enumerate(rs.scope_spans):
            scope = ss.scope
            scope_name = scope.name if scope is not None else ""
            scope_version = scope.version if scope is not None else ""
            where = f"resourceSpans[{ri}].scopeSpans[{si}].spans"
            for pi, sp in enumerate(ss.spans):
                trace_id = sp.trace_id
                span_id = sp.span_id
                parent = sp.parent_span_id
                if trace_id == _ZERO32 or span_id == _ZERO16:
                    raise _Fallback
                if parent == _ZERO16:
                    parent = ""
                status = sp.status
                raw_kind = sp.kind
                kind = raw_kind if isinstance(raw_kind, int) else _SPAN_KINDS[raw_kind]
                code: Any = 0
                message = ""
                if status is not None:
                    raw_code = status.code
                    code = raw_code if isinstance(raw_code, int) else _STATUS_CODES[raw_code]
                    message = status.message
                events = sp.events
                links = sp.links
                append(
                    SpanRecord(
                        trace_id.lower(),
                        span_id.lower(),
                        parent.lower(),
                        sp.name,
                        kind,
                        sp.start_time_unix_nano,
                        sp.end_time_unix_nano,
                        code,
                        message,
                        MsAttributes(sp.attributes, (where, pi, ""), report)
                        if sp.attributes
                        else EMPTY,
                        [
                            EventRecord(
                                e.name,
                                e.time_unix_nano,
                                MsAttributes(e.attributes, (where, pi, f".events[{ei}]"), report)
                                if e.attributes
                                else EMPTY,
                            )
                            for ei, e in enumerate(events)
                        ]
                        if events
                        else NO_ITEMS,
                        [
                            LinkRecord(
                                lk.trace_id.lower(),
                                lk.span_id.lower(),
                                MsAttributes(lk.attributes, (where, pi, f".links[{li}]"), report)
                                if lk.attributes
                                else EMPTY,
                            )
                            for li, lk in enumerate(links)
                        ]
                        if links
                        else NO_ITEMS,
                        resource,
                        scope_name,
                        scope_version,
                    )
                )


def _logs(resource_logs: list[_ResourceLogs], batch: DecodedBatch, report: Report) -> None:
    append = batch.logs.append
    for ri, rl in enumerate(resource_logs):
        resource = _resource(rl.resource)
        for si, sl in enumerate(rl.scope_logs):
            scope_name = sl.scope.name if sl.scope is not None else ""
            where = f"resourceLogs[{ri}].scopeLogs[{si}].logRecords"
            for li, lr in enumerate(sl.log_records):
                if lr.trace_id == _ZERO32 or lr.span_id == _ZERO16:
                    raise _Fallback
                attributes: Mapping[str, Any] = (
                    MsAttributes(lr.attributes, (where, li, ""), report) if lr.attributes else EMPTY
                )
                event_name = lr.event_name
                if not event_name:
                    legacy = attributes.get("event.name")
                    event_name = legacy if isinstance(legacy, str) else ""
                try:
                    body = ms_any(lr.body)
                except (binascii.Error, ValueError):
                    raise _Fallback from None
                append(
                    LogRecord(
                        lr.trace_id.lower(),
                        lr.span_id.lower(),
                        event_name,
                        lr.time_unix_nano or lr.observed_time_unix_nano,
                        attributes,
                        body,
                        lr.severity_number,
                        resource,
                        scope_name,
                    )
                )


def _count_metrics(raw: msgspec.Raw) -> int:
    metrics = orjson.loads(raw)
    if type(metrics) is not list:
        raise _Fallback
    return count_metrics(metrics)
