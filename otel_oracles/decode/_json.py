"""OTLP/JSON request objects -> span and log records.

Follows the OTLP/JSON encoding (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding):
hex trace/span ids, lowerCamelCase keys, enums as integers, 64-bit integers as decimal
strings. Tolerated because real tools write them: snake_case keys (decided per object by
which spelling is present), enum names (``"SPAN_KIND_CLIENT"``), 64-bit integers as JSON
numbers, and ids in base64 when they decode to exactly 16/8 bytes (protobuf's generic JSON
printer writes those). Anything else that is wrong is reported as a problem naming its place
in the request; a span with unusable ids is rejected, a bad enum reads as unspecified.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from typing import Any

from otel_oracles.decode._batch import DecodedBatch
from otel_oracles.decode._values import (
    BadValue,
    JsonAttributes,
    Report,
    _show,
    json_any,
    json_attributes_dict,
)
from otel_oracles.errors import InputError
from otel_oracles.model.span import (
    EMPTY,
    NO_ITEMS,
    EventRecord,
    LinkRecord,
    LogRecord,
    SpanRecord,
)

_HEX = re.compile(r"[0-9a-fA-F]+").fullmatch
_ZERO32 = "0" * 32
_ZERO16 = "0" * 16
_MAX_KIND = 5
_MAX_STATUS = 2

_SPAN_KINDS = {
    "SPAN_KIND_UNSPECIFIED": 0,
    "SPAN_KIND_INTERNAL": 1,
    "SPAN_KIND_SERVER": 2,
    "SPAN_KIND_CLIENT": 3,
    "SPAN_KIND_PRODUCER": 4,
    "SPAN_KIND_CONSUMER": 5,
}
_STATUS_CODES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}

# (camelCase, snake_case) spellings of every key we read.
_CAMEL = {
    "trace_id": "traceId",
    "span_id": "spanId",
    "parent_span_id": "parentSpanId",
    "start_time_unix_nano": "startTimeUnixNano",
    "end_time_unix_nano": "endTimeUnixNano",
    "time_unix_nano": "timeUnixNano",
    "observed_time_unix_nano": "observedTimeUnixNano",
    "resource_spans": "resourceSpans",
    "resource_logs": "resourceLogs",
    "resource_metrics": "resourceMetrics",
    "scope_spans": "scopeSpans",
    "scope_logs": "scopeLogs",
    "scope_metrics": "scopeMetrics",
    "log_records": "logRecords",
    "event_name": "eventName",
    "severity_number": "severityNumber",
}


def _get(obj: dict[str, Any], snake: str) -> Any:
    """Value under the camelCase spelling of ``snake``, else under ``snake`` itself."""
    camel = _CAMEL.get(snake, snake)
    value = obj.get(camel)
    if value is None and camel != snake:
        value = obj.get(snake)
    return value


class _Bad(Exception):
    """A field problem inside one record; the message says what, the caller says where."""


def _id(value: Any, size: int, field: str, *, optional: bool = False) -> str:
    """Lowercase hex id of ``size`` bytes from a hex (or clearly base64) string."""
    if value is None or value == "":
        if optional:
            return ""
        raise _Bad(f"{field} is missing")
    if type(value) is not str:
        raise _Bad(f"{field} must be a hex string, got {_show(value)}")
    if len(value) == 2 * size and _HEX(value):
        if value.count("0") == len(value):
            if optional:
                return ""  # an all-zero parent id is how some writers spell "no parent"
            raise _Bad(f"{field} is all zeros, which OTLP defines as invalid")
        return value.lower()
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) == size:
        return raw.hex()
    raise _Bad(f"{field} must be {2 * size} hex digits ({size} bytes), got {_show(value)}")


def _nanos(value: Any, field: str) -> int:
    if value is None:
        return 0
    if type(value) is int:
        return value
    if type(value) is str:
        try:
            return int(value, 10)
        except ValueError:
            pass
    elif type(value) is float and value.is_integer():
        return int(value)
    raise _Bad(f"{field} must be an integer (decimal string), got {_show(value)}")


def _enum(value: Any, names: dict[str, int], top: int, field: str, problems: list[str]) -> int:
    if value is None:
        return 0
    if type(value) is int and 0 <= value <= top:
        return value
    if type(value) is str and value in names:
        return names[value]
    problems.append(f"{field}: unknown value {_show(value)}; read as {next(iter(names))}")
    return 0


def _list(obj: dict[str, Any], snake: str, where: str) -> list[Any]:
    value = _get(obj, snake)
    if value is None:
        return []
    if type(value) is not list:
        raise _Bad(f"{where}.{_CAMEL.get(snake, snake)} must be a list, got {_show(value)}")
    return value


def decode_json_object(obj: Any, report: Report | None = None) -> DecodedBatch:
    """Decode one parsed OTLP/JSON request (traces, logs or metrics, detected by key).

    ``report`` receives problems found later, when a lazily converted attribute is read;
    problems found now go to ``batch.problems``. Raises ``InputError`` when ``obj`` is not an
    OTLP/JSON request at all.
    """
    if type(obj) is not dict:
        raise InputError(f"expected an OTLP/JSON request object, got a JSON {type(obj).__name__}")
    batch = DecodedBatch()
    if report is None:
        report = batch.problems.append
    found = False
    try:
        spans = _list(obj, "resource_spans", "")
        if spans or "resourceSpans" in obj or "resource_spans" in obj:
            found = True
            _spans(spans, batch, report)
        logs = _list(obj, "resource_logs", "")
        if logs or "resourceLogs" in obj or "resource_logs" in obj:
            found = True
            _logs(logs, batch, report)
        metrics = _list(obj, "resource_metrics", "")
        if metrics or "resourceMetrics" in obj or "resource_metrics" in obj:
            found = True
            batch.ignored += _count_metrics(metrics)
    except _Bad as exc:
        raise InputError(str(exc).lstrip(".")) from None
    if not found and obj:
        raise InputError(
            "not an OTLP/JSON request: expected a resourceSpans, resourceLogs or "
            f"resourceMetrics key, got keys {sorted(obj)[:8]}"
        )
    return batch


def _resource(entry: dict[str, Any], where: str, problems: list[str]) -> Any:
    resource = entry.get("resource")
    if resource is None:
        return EMPTY
    if type(resource) is not dict:
        raise _Bad(f"{where}.resource must be an object, got {_show(resource)}")
    attributes = resource.get("attributes")
    if not attributes:
        return EMPTY
    if type(attributes) is not list:
        raise _Bad(f"{where}.resource.attributes must be a list, got {_show(attributes)}")
    return json_attributes_dict(attributes, f"{where}.resource", problems)


def _scope(entry: dict[str, Any]) -> tuple[str, str]:
    scope = entry.get("scope")
    if type(scope) is not dict:
        return "", ""
    name = scope.get("name") or ""
    version = scope.get("version") or ""
    return (name if type(name) is str else str(name)), (
        version if type(version) is str else str(version)
    )


def _scopes(
    entries: list[Any], signal: str, problems: list[str]
) -> Iterator[tuple[Any, dict[str, Any], str]]:
    """(resource attributes, scope entry, its JSON path) for every readable scope of
    ``resourceSpans`` / ``resourceLogs`` (``signal`` = "Spans" / "Logs"); what cannot be
    read is reported in ``problems`` and skipped."""
    for ri, entry in enumerate(entries):
        rwhere = f"resource{signal}[{ri}]"
        if type(entry) is not dict:
            problems.append(f"{rwhere}: expected an object, got {_show(entry)}")
            continue
        try:
            resource = _resource(entry, rwhere, problems)
            scopes = _list(entry, f"scope_{signal.lower()}", rwhere)
        except _Bad as exc:
            problems.append(f"{exc}; resource skipped")
            continue
        for si, scope in enumerate(scopes):
            swhere = f"{rwhere}.scope{signal}[{si}]"
            if type(scope) is not dict:
                problems.append(f"{swhere}: expected an object, got {_show(scope)}")
                continue
            yield resource, scope, swhere


def _spans(resource_spans: list[Any], batch: DecodedBatch, report: Report) -> None:
    problems = batch.problems
    append = batch.spans.append
    for resource, ss, swhere in _scopes(resource_spans, "Spans", problems):
        scope_name, scope_version = _scope(ss)
        spans = ss.get("spans")
        if spans is None:
            continue
        if type(spans) is not list:
            problems.append(f"{swhere}.spans: must be a list, got {_show(spans)}")
            continue
        pwhere = f"{swhere}.spans"
        for pi, sp in enumerate(spans):
            try:
                append(_span(sp, pwhere, pi, resource, scope_name, scope_version, problems, report))
            except _Bad as exc:
                batch.rejected += 1
                problems.append(f"{pwhere}[{pi}]: {exc}; span rejected")


def _span(
    sp: Any,
    where: str,
    index: int,
    resource: Any,
    scope_name: str,
    scope_version: str,
    problems: list[str],
    report: Report,
) -> SpanRecord:
    # The hot path of JSON decoding: common, well-formed values are checked inline and only
    # unusual ones go through the general helpers.
    if type(sp) is not dict:
        raise _Bad(f"expected a span object, got {_show(sp)}")
    if "traceId" in sp:
        trace_id = sp["traceId"]
        span_id = sp.get("spanId")
        parent = sp.get("parentSpanId")
        start = sp.get("startTimeUnixNano")
        end = sp.get("endTimeUnixNano")
    else:
        trace_id = sp.get("trace_id")
        span_id = sp.get("span_id")
        parent = sp.get("parent_span_id")
        start = sp.get("start_time_unix_nano")
        end = sp.get("end_time_unix_nano")
    if type(trace_id) is str and len(trace_id) == 32 and _HEX(trace_id) and trace_id != _ZERO32:
        trace_id = trace_id.lower()
    else:
        trace_id = _id(trace_id, 16, "traceId")
    if type(span_id) is str and len(span_id) == 16 and _HEX(span_id) and span_id != _ZERO16:
        span_id = span_id.lower()
    else:
        span_id = _id(span_id, 8, "spanId")
    if not parent:
        parent = ""
    elif type(parent) is str and len(parent) == 16 and _HEX(parent) and parent != _ZERO16:
        parent = parent.lower()
    else:
        parent = _id(parent, 8, "parentSpanId", optional=True)
    name = sp.get("name", "")
    if type(name) is not str:
        raise _Bad(f"name must be a string, got {_show(name)}")
    kind = sp.get("kind", 0)
    if type(kind) is not int or kind < 0 or kind > _MAX_KIND:
        kind = _enum(kind, _SPAN_KINDS, _MAX_KIND, f"{where}[{index}].kind", problems)
    if type(start) is str and start.isdecimal():
        start = int(start)
    else:
        start = _nanos(start, "startTimeUnixNano")
    end = int(end) if type(end) is str and end.isdecimal() else _nanos(end, "endTimeUnixNano")
    code = 0
    message = ""
    status = sp.get("status")
    if status:
        if type(status) is not dict:
            problems.append(f"{where}[{index}].status: must be an object, got {_show(status)}")
        else:
            code = status.get("code", 0)
            if type(code) is not int or code < 0 or code > _MAX_STATUS:
                code = _enum(
                    code, _STATUS_CODES, _MAX_STATUS, f"{where}[{index}].status.code", problems
                )
            message = status.get("message") or ""
            if type(message) is not str:
                message = str(message)
    attributes: Any = sp.get("attributes")
    if not attributes:
        attributes = EMPTY
    elif type(attributes) is list:
        attributes = JsonAttributes(attributes, (where, index, ""), report)
    else:
        problems.append(
            f"{where}[{index}].attributes: must be a list, got {_show(attributes)}; ignored"
        )
        attributes = EMPTY
    events = sp.get("events")
    links = sp.get("links")
    return SpanRecord(
        trace_id,
        span_id,
        parent,
        name,
        kind,
        start,
        end,
        code,
        message,
        attributes,
        _events(events, where, index, problems, report) if events else NO_ITEMS,
        _links(links, where, index, problems, report) if links else NO_ITEMS,
        resource,
        scope_name,
        scope_version,
    )


def _events(
    events: Any, where: str, index: int, problems: list[str], report: Report
) -> list[EventRecord]:
    out: list[EventRecord] = []
    if type(events) is not list:
        problems.append(f"{where}[{index}].events: must be a list, got {_show(events)}; ignored")
        return out
    for ei, ev in enumerate(events):
        try:
            if type(ev) is not dict:
                raise _Bad(f"expected an event object, got {_show(ev)}")
            name = ev.get("name", "")
            attributes = ev.get("attributes")
            out.append(
                EventRecord(
                    name if type(name) is str else str(name),
                    _nanos(_get(ev, "time_unix_nano"), "timeUnixNano"),
                    JsonAttributes(attributes, (where, index, f".events[{ei}]"), report)
                    if type(attributes) is list and attributes
                    else EMPTY,
                )
            )
        except _Bad as exc:
            problems.append(f"{where}[{index}].events[{ei}]: {exc}; event ignored")
    return out


def _links(
    links: Any, where: str, index: int, problems: list[str], report: Report
) -> list[LinkRecord]:
    out: list[LinkRecord] = []
    if type(links) is not list:
        problems.append(f"{where}[{index}].links: must be a list, got {_show(links)}; ignored")
        return out
    for li, link in enumerate(links):
        try:
            if type(link) is not dict:
                raise _Bad(f"expected a link object, got {_show(link)}")
            attributes = link.get("attributes")
            out.append(
                LinkRecord(
                    _id(_get(link, "trace_id"), 16, "traceId"),
                    _id(_get(link, "span_id"), 8, "spanId"),
                    JsonAttributes(attributes, (where, index, f".links[{li}]"), report)
                    if type(attributes) is list and attributes
                    else EMPTY,
                )
            )
        except _Bad as exc:
            problems.append(f"{where}[{index}].links[{li}]: {exc}; link ignored")
    return out


def _logs(resource_logs: list[Any], batch: DecodedBatch, report: Report) -> None:
    problems = batch.problems
    for resource, sl, swhere in _scopes(resource_logs, "Logs", problems):
        scope_name, _ = _scope(sl)
        try:
            records = _list(sl, "log_records", swhere)
        except _Bad as exc:
            problems.append(str(exc))
            continue
        lwhere = f"{swhere}.logRecords"
        for li, lr in enumerate(records):
            try:
                batch.logs.append(_log(lr, lwhere, li, resource, scope_name, problems, report))
            except _Bad as exc:
                batch.rejected += 1
                problems.append(f"{lwhere}[{li}]: {exc}; log record rejected")


def _log(
    lr: Any,
    where: str,
    index: int,
    resource: Any,
    scope_name: str,
    problems: list[str],
    report: Report,
) -> LogRecord:
    if type(lr) is not dict:
        raise _Bad(f"expected a log record object, got {_show(lr)}")
    try:
        trace_id = _id(_get(lr, "trace_id"), 16, "traceId", optional=True)
        span_id = _id(_get(lr, "span_id"), 8, "spanId", optional=True)
    except _Bad as exc:
        problems.append(f"{where}[{index}]: {exc}; read without span context")
        trace_id = span_id = ""
    raw_attributes = lr.get("attributes")
    attributes: Any = (
        JsonAttributes(raw_attributes, (where, index, ""), report)
        if type(raw_attributes) is list and raw_attributes
        else EMPTY
    )
    event_name = _get(lr, "event_name")
    if not event_name or type(event_name) is not str:
        legacy = attributes.get("event.name")
        event_name = legacy if isinstance(legacy, str) else ""
    time_ns = _nanos(_get(lr, "time_unix_nano"), "timeUnixNano") or _nanos(
        _get(lr, "observed_time_unix_nano"), "observedTimeUnixNano"
    )
    body = lr.get("body")
    if body is not None:
        try:
            body = json_any(body)
        except BadValue as exc:
            problems.append(f"{where}[{index}].body: {exc}; read as null")
            body = None
    severity = _get(lr, "severity_number")
    if type(severity) is str:
        severity = _SEVERITY_NAMES.get(severity, 0)
    return LogRecord(
        trace_id,
        span_id,
        event_name,
        time_ns,
        attributes,
        body,
        severity if type(severity) is int else 0,
        resource,
        scope_name,
    )


_SEVERITY_NAMES = {
    f"SEVERITY_NUMBER_{name}{n if n > 1 else ''}": base + n - 1
    for name, base in (
        ("TRACE", 1),
        ("DEBUG", 5),
        ("INFO", 9),
        ("WARN", 13),
        ("ERROR", 17),
        ("FATAL", 21),
    )
    for n in range(1, 5)
}


def _count_metrics(resource_metrics: list[Any]) -> int:
    """Number of metrics in a metrics request (what we skip, for the summary)."""
    count = 0
    for rm in resource_metrics:
        if type(rm) is not dict:
            continue
        scope_metrics = _get(rm, "scope_metrics")
        if type(scope_metrics) is not list:
            continue
        for sm in scope_metrics:
            if type(sm) is dict and type(sm.get("metrics")) is list:
                count += len(sm["metrics"])
    return count
