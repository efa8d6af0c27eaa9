"""The emitter's own records of grade spans and evaluation log records, before any encoding.

Why not the SDK's ``ReadableSpan`` / ``ReadableLogRecord``: building those (plus an
``Event``, a ``LogRecord`` and a ``Context`` with ``set_span_in_context`` per record) cost
more than encoding them, and the package's encoders (the native core's, through
``otel_oracles._native``) do not need them. These records carry exactly what the SDK objects
would, in ``__slots__`` objects; attributes are runs (``Attrs``) shared by every record with
the same values (a check's contract/name/type/layer, an outcome with its explanation)
followed by a small per-record dict, so an encoder serializes each shared run once and
reuses its bytes. This is the emitter's one record model: the OTLP protobuf and OTLP/JSON
encoders write these records (reading these slots, and keeping each run's bytes in
``Attrs.encoded``), and an SDK exporter a user supplies gets SDK objects built from them
(``_sdk_adapter``), so it sees what the SDK's own tracer and logger would have handed it.
When every sink is an ``OtlpSink``, no record object is made at all: the core writes the
records straight into the OTLP protobuf requests (``ProtoRequest``), the bytes the encoder
would make of these records.

This module imports nothing heavy: ``grade`` without an export imports it too.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any, TypeVar


class Severity(IntEnum):
    """The OTLP severity numbers the emitter's log records use (``SeverityNumber`` in
    ``logs.proto``).

    Why not the API's ``opentelemetry._logs.SeverityNumber``: importing it imports the logs
    API and, through it, ``opentelemetry.trace`` (about 17 M instructions of every exporting
    grade) for three numbers. The core reads a member's ``value`` as it read the API enum's;
    the SDK adapter hands a supplied exporter the API's member of the same number.
    """

    INFO = 9
    WARN = 13
    ERROR = 17


class Attrs:
    """An immutable run of attributes (in emission order) shared by many records. Encoders
    keep their serialization of it in ``encoded`` (keyed by what they encode it as)."""

    __slots__ = ("encoded", "items")

    def __init__(self, items: dict[str, Any]) -> None:
        self.items = items
        self.encoded: dict[Any, Any] = {}


def merged(chunks: tuple[Attrs, ...], extra: dict[str, Any] | None) -> dict[str, Any]:
    """The attributes as one dict, in emission order (runs never share a key)."""
    out: dict[str, Any] = {}
    for chunk in chunks:
        out.update(chunk.items)
    if extra:
        out.update(extra)
    return out


class EventItem:
    """One span event."""

    __slots__ = ("chunks", "name", "time")

    def __init__(self, name: str, time: int, chunks: tuple[Attrs, ...]) -> None:
        self.name = name
        self.time = time
        self.chunks = chunks


class SpanItem:
    """One finished INTERNAL span with a remote parent (or none) and no links."""

    __slots__ = (
        "chunks",
        "end",
        "events",
        "extra",
        "name",
        "parent_id",
        "span_id",
        "start",
        "status_code",
        "status_message",
        "trace_id",
    )

    def __init__(
        self,
        *,
        trace_id: int,
        span_id: int,
        parent_id: int | None,
        name: str,
        start: int,
        end: int,
        chunks: tuple[Attrs, ...],
        extra: dict[str, Any] | None,
        events: list[EventItem],
        status_code: int,
        status_message: str | None,
    ) -> None:
        self.trace_id = trace_id
        self.span_id = span_id
        self.parent_id = parent_id
        """The graded span's id (a remote, sampled parent), or None for a trace of its own."""
        self.name = name
        self.start = start
        self.end = end
        self.chunks = chunks
        self.extra = extra
        self.events = events
        self.status_code = status_code
        """``StatusCode`` value: 0 unset, 2 error."""
        self.status_message = status_message


class LogItem:
    """One log record (body-less event record, observed time = time)."""

    __slots__ = (
        "chunks",
        "event_name",
        "extra",
        "severity",
        "severity_text",
        "span_id",
        "time",
        "trace_id",
    )

    def __init__(  # positional: one per result, the cheapest call
        self,
        time: int,
        trace_id: int,
        span_id: int,
        severity: Severity,
        severity_text: str,
        event_name: str,
        chunks: tuple[Attrs, ...],
        extra: dict[str, Any] | None,
    ) -> None:
        self.time = time
        self.trace_id = trace_id
        """0 (with ``span_id`` 0) when the record points at no span; sampled otherwise."""
        self.span_id = span_id
        self.severity = severity
        self.severity_text = severity_text
        self.event_name = event_name
        self.chunks = chunks
        self.extra = extra


T = TypeVar("T")


class ItemBatch(list[T]):
    """Records of one signal, resource and instrumentation scope (the emitter has one
    resource and one scope: ``_resource.GraderResource`` and ``GraderScope``)."""

    def __init__(self, items: list[T], resource: Any, scope: Any) -> None:
        super().__init__(items)
        self.resource = resource
        self.scope = scope
