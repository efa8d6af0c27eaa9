"""The lean internal span record every decoder produces.

No stage after ``decode`` touches protobuf or JSON classes: they see only these records.
Attribute values are plain Python values (str, bool, int, float, bytes, list, dict), exactly
as OTLP's ``AnyValue`` carried them. ``attributes`` and ``resource`` are ``Mapping`` rather than
``dict`` so a decoder may hand out a lazy mapping that converts values on first access.
Timestamps are integer nanoseconds since the epoch, as in OTLP.

The native core makes ``SpanRecord``, ``EventRecord``, ``LinkRecord`` and ``LogRecord`` without
calling them (``object.__new__`` and each slot written, ``native/python/src/batch.rs``
``RecordClass``): their ``__init__`` must only assign their fields. A class whose ``__slots__``
differ from the fields the core builds, or with a ``__post_init__``, is called instead.
"""

from __future__ import annotations

import copyreg
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from types import MappingProxyType
from typing import Any

EMPTY: Mapping[str, Any] = MappingProxyType({})

SESSION_ATTRIBUTES: tuple[str, ...] = ("gen_ai.conversation.id", "session.id")
"""Span attributes whose shared value puts traces into one agent run (``assemble`` joins
them); ``decode`` keeps them on the lightweight spans ``serve`` assembles."""


def _empty_again() -> Mapping[str, Any]:
    return EMPTY


# Records cross process boundaries pickled (serve's grading workers); an empty read-only
# mapping unpickles as the shared one.
def _reduce_mapping_proxy(m: MappingProxyType[Any, Any]) -> Any:
    return (_empty_again, ()) if not m else (dict, (dict(m),))


copyreg.pickle(MappingProxyType, _reduce_mapping_proxy)


def _empty() -> Mapping[str, Any]:
    """Shared immutable empty mapping (dataclasses refuse unhashable defaults)."""
    return EMPTY


class _NoItems(list):  # type: ignore[type-arg]
    """An empty list that refuses to grow. Most spans have no events and no links; one
    fresh empty list each was 112 bytes per span, a third of a minimal span record, and a
    body of a million one-span traces paid it a million times. Records share ``NO_ITEMS``
    instead; code that wants other contents assigns a new list (as ``build_trace`` does)."""

    __slots__ = ()

    def _refuse(self, *_args: Any, **_kwargs: Any) -> Any:
        raise TypeError("NO_ITEMS is shared by many records: assign a new list instead")

    append = extend = insert = remove = pop = clear = sort = reverse = _refuse
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse

    def __reduce__(self) -> Any:
        return (_no_items, ())


def _no_items() -> Any:
    return NO_ITEMS


NO_ITEMS: Any = _NoItems()
"""The shared empty ``events``/``links`` list of span records (read-only)."""


class SpanKind(IntEnum):
    """OTLP ``Span.SpanKind`` numbering."""

    UNSPECIFIED = 0
    INTERNAL = 1
    SERVER = 2
    CLIENT = 3
    PRODUCER = 4
    CONSUMER = 5


class StatusCode(IntEnum):
    """OTLP ``Status.StatusCode`` numbering."""

    UNSET = 0
    OK = 1
    ERROR = 2


@dataclass(slots=True)
class EventRecord:
    """A span event, or a log-based event attached to its span.

    ``body`` is set only for log records (log-based GenAI events put content in the body);
    ``from_log`` tells the two forms apart for coverage reports. ``dropped_attributes``
    is OTLP's ``dropped_attributes_count`` of the span event (or of the log record): how
    many attributes the sender left out.
    """

    name: str
    time_ns: int
    attributes: Mapping[str, Any] = field(default_factory=_empty)
    body: Any = None
    from_log: bool = False
    dropped_attributes: int = 0


@dataclass(slots=True)
class LinkRecord:
    """A span link (another span this one relates to, possibly in another trace).
    ``dropped_attributes`` is OTLP's ``dropped_attributes_count`` of the link."""

    trace_id: str
    span_id: str
    attributes: Mapping[str, Any] = field(default_factory=_empty)
    dropped_attributes: int = 0


@dataclass(slots=True)
class SpanRecord:
    """One span, decoupled from its wire format. Ids are lowercase hex strings;
    ``parent_span_id`` is ``""`` for a root span.

    ``dropped_attributes``, ``dropped_events`` and ``dropped_links`` are OTLP's
    ``dropped_attributes_count``, ``dropped_events_count`` and ``dropped_links_count``: how
    many the sender left out of ``attributes``, ``events`` and ``links`` (an SDK's span
    limits), 0 when it reported none. Every decoder carries them; a span that lost data
    has lists that look complete, and only these counts say otherwise.

    ``flags`` is OTLP's ``Span.flags`` as sent (0 when absent): the W3C trace flags, and,
    from senders that record it, whether the parent span context came from another process
    (``parent_is_remote``)."""

    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    kind: int = SpanKind.UNSPECIFIED
    start_ns: int = 0
    end_ns: int = 0
    status_code: int = StatusCode.UNSET
    status_message: str = ""
    attributes: Mapping[str, Any] = field(default_factory=_empty)
    events: list[EventRecord] = field(default_factory=list)
    links: list[LinkRecord] = field(default_factory=list)
    resource: Mapping[str, Any] = field(default_factory=_empty)
    scope_name: str = ""
    scope_version: str = ""
    dropped_attributes: int = 0
    dropped_events: int = 0
    dropped_links: int = 0
    flags: int = 0

    @property
    def parent_is_remote(self) -> bool:
        """Whether the sender said the parent span context came from another process (OTLP
        span flags: bit 8 says bit 9 is known, bit 9 that the parent is remote). Such a
        span is where this service's part of a distributed trace begins; its parent is
        the caller's, whose spans may be exported elsewhere or not at all. A sender that
        does not record it (bit 8 clear) says nothing: ``False``."""
        return self.flags & REMOTE_PARENT_FLAGS == REMOTE_PARENT_FLAGS

    @property
    def duration_ns(self) -> int:
        """End minus start, never negative (clock skew in exporters happens)."""
        return max(0, self.end_ns - self.start_ns)

    @property
    def is_error(self) -> bool:
        return self.status_code == StatusCode.ERROR


REMOTE_PARENT_FLAGS = 0x300
"""OTLP's SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK | SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK."""


@dataclass(slots=True)
class LogRecord:
    """A decoded OTLP log record. Those carrying an event name and a span context become
    ``EventRecord``s on their span during assembly; the rest are counted, not graded.
    ``dropped_attributes`` is OTLP's ``dropped_attributes_count`` of the record."""

    trace_id: str
    span_id: str
    event_name: str
    time_ns: int
    attributes: Mapping[str, Any] = field(default_factory=_empty)
    body: Any = None
    severity_number: int = 0
    resource: Mapping[str, Any] = field(default_factory=_empty)
    scope_name: str = ""
    dropped_attributes: int = 0

    def as_event(self) -> EventRecord:
        return EventRecord(
            name=self.event_name,
            time_ns=self.time_ns,
            attributes=self.attributes,
            body=self.body,
            from_log=True,
            dropped_attributes=self.dropped_attributes,
        )


@dataclass(slots=True)
class Trace:
    """All spans of one trace id, assembled into a tree.

    ``spans`` is ordered by start time, ties broken by tree order (parent before child,
    then siblings in arrival order). ``orphans`` are spans whose parent id names a span that
    never arrived; they stay in ``spans`` and are reported as missing evidence.
    ``incomplete`` is set by the online assembler when a trace was graded on timeout.
    """

    trace_id: str
    spans: list[SpanRecord]
    roots: list[SpanRecord]
    children: dict[str, list[SpanRecord]]
    orphans: list[SpanRecord] = field(default_factory=list)
    unattached_logs: int = 0
    incomplete: bool = False

    @property
    def root(self) -> SpanRecord | None:
        """The true root (no parent id), else the earliest orphan, else None."""
        for span in self.roots:
            if not span.parent_span_id:
                return span
        return self.roots[0] if self.roots else None

    @property
    def resource(self) -> Mapping[str, Any]:
        root = self.root
        return root.resource if root is not None else EMPTY

    def span(self, span_id: str) -> SpanRecord | None:
        for s in self.spans:
            if s.span_id == span_id:
                return s
        return None
