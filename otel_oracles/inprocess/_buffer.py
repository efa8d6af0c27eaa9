"""The traces an in-process grader holds until their root span has ended and the wait passed.

Every method takes one lock for a few dictionary operations: the SDK calls ``on_end`` on
the thread (or event loop) that ended the span, and the buffer must never make it wait for
grading. Whatever is not kept is counted (``BufferCounts``), nothing is dropped silently.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal, cast

from opentelemetry.sdk.trace import ReadableSpan

from otel_oracles.decode.config import MAX_ANY_VALUE_DEPTH
from otel_oracles.inprocess._sdk_records import SdkLogRecord
from otel_oracles.inprocess.config import ProcessorLimits

Closed = Literal["graded", "dropped"]


@dataclass(slots=True)
class PendingTrace:
    """One trace's spans and log records so far; ``due`` is set once its root ended."""

    trace_id: int
    first_seen: float
    spans: list[ReadableSpan] = field(default_factory=list)
    logs: list[SdkLogRecord] = field(default_factory=list)
    due: float | None = None
    truncated: bool = False
    nbytes: int = 0
    """What ``record_bytes`` counted for the spans and records held; given back to the
    buffer's total when the trace leaves it."""


_VALUE_OVERHEAD = 16
"""Bytes counted per attribute value and per name beside its text: an empty value still
costs the grader an object, so a flood of empty attributes is not free."""


def _value_bytes(value: object, limit: int) -> int:
    """The bytes an attribute value (or a log body) holds, counted without copying it: the
    length of text and bytes (a string's characters: at least a byte each), the sum over
    sequences and mappings, a fixed cost for numbers and booleans.

    A log body is any value the program hands the SDK, not an attribute the SDK checked: a
    list nested 100,000 deep ended a recursive count in ``RecursionError`` on the agent's
    thread (the record lost, its trace graded without it), and a list holding itself twice,
    forty levels down, stands for 2^40 values the grader's encoder would write out. So the
    walk keeps its own stack and stops as soon as the count passes ``limit`` (the most a
    trace may hold): it costs at most ``limit / 16`` steps. A value nested deeper than the
    decoder reads (``MAX_ANY_VALUE_DEPTH``, where ``otel-oracles grade`` reads it as null)
    counts as more than ``limit``: such a record is not kept and its trace not graded."""
    total = 0
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        total += _VALUE_OVERHEAD
        if isinstance(item, str | bytes | bytearray):
            total += len(item)
        elif isinstance(item, Mapping | list | tuple):
            if depth >= MAX_ANY_VALUE_DEPTH:
                return limit + 1
            if isinstance(item, Mapping):
                for key, inner in cast("Mapping[object, object]", item).items():
                    total += _VALUE_OVERHEAD + (len(key) if isinstance(key, str) else 0)
                    stack.append((inner, depth + 1))
            else:
                stack.extend((inner, depth + 1) for inner in cast("Iterable[object]", item))
        if total > limit:
            return limit + 1
    return total


def _attributes_bytes(attributes: Mapping[str, object] | None, limit: int) -> int:
    if not attributes:
        return 0
    total = 0
    for key, value in attributes.items():
        total += len(key) + _value_bytes(value, limit)
        if total > limit:
            return limit + 1
    return total


def span_bytes(span: ReadableSpan, limit: int) -> int:
    """What keeping ``span`` costs, for the byte limits: its name, attributes, events and
    links (the resource and scope are shared by every span of the provider, not counted).
    A lower bound of its memory, linear in its attributes (the SDK bounds their number);
    ``limit + 1`` once past ``limit``."""
    total = _VALUE_OVERHEAD + len(span.name) + _attributes_bytes(span.attributes, limit)
    for event in span.events:
        total += _VALUE_OVERHEAD + len(event.name) + _attributes_bytes(event.attributes, limit)
    for link in span.links:
        total += _VALUE_OVERHEAD + 32 + _attributes_bytes(link.attributes, limit)
    return min(total, limit + 1)


def record_bytes(record: SdkLogRecord, limit: int) -> int:
    """What keeping a log record costs: its event name, body and attributes; ``limit + 1``
    once past ``limit`` (see ``_value_bytes``: the body is walked, never recursed into)."""
    log = record.log_record
    total = (
        _VALUE_OVERHEAD
        + len(log.event_name or "")
        + _value_bytes(log.body, limit)
        + _attributes_bytes(log.attributes, limit)
    )
    return min(total, limit + 1)


@dataclass(slots=True)
class BufferCounts:
    """What the buffer did not keep, since it was made."""

    dropped_spans: int = 0
    """Spans (and log records) not kept: buffer full, trace over its span cap or byte
    limit, buffer over its byte limit, trace already dropped, or ended after shutdown."""
    dropped_traces: int = 0
    """Traces not graded because part of them was not kept."""
    late_spans: int = 0
    """Spans (and log records) that arrived after their trace was graded."""
    evicted_traces: int = 0
    """Traces whose root did not end within ``max_trace_age_millis``."""
    buffered_bytes: int = 0
    """Bytes (``span_bytes``, ``record_bytes``) of the spans and records held now."""


@dataclass(frozen=True, slots=True)
class Taken:
    """What ``take`` handed out: traces to grade, and how many were evicted or dropped."""

    ready: list[PendingTrace]
    evicted: int
    dropped: int


class TraceBuffer:
    """Spans and log records by trace id, with the limits of ``ProcessorLimits``."""

    def __init__(
        self, limits: ProcessorLimits, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limits = limits
        self.counts = BufferCounts()
        self._clock = clock
        self._lock = threading.Lock()
        self._pending: dict[int, PendingTrace] = {}
        self._closed: OrderedDict[int, Closed] = OrderedDict()
        self._open = True

    def __len__(self) -> int:
        with self._lock:
            return len(self._pending)

    def add_span(self, span: ReadableSpan) -> bool:
        """Keep ``span``; True when it is its trace's local root (a span without a parent,
        or whose parent is in another process), whose end starts the wait."""
        context = span.context
        if context is None:
            return False
        is_root = span.parent is None or span.parent.is_remote
        nbytes = span_bytes(span, self.limits.max_trace_bytes)
        with self._lock:
            pending = self._pending_for(context.trace_id)
            if pending is None:
                return False
            if len(pending.spans) >= self.limits.max_spans_per_trace or not self._fits(
                pending, nbytes
            ):
                self._truncate(pending)
            else:
                pending.spans.append(span)
                self._hold(pending, nbytes)
            if is_root:
                pending.due = self._clock() + self.limits.wait_millis / 1000
        return is_root

    def add_log(self, record: SdkLogRecord) -> None:
        """Keep a log record of a trace (records outside any trace belong to no run)."""
        trace_id = record.log_record.trace_id
        if not trace_id:
            return
        nbytes = record_bytes(record, self.limits.max_trace_bytes)
        with self._lock:
            pending = self._pending_for(trace_id)
            if pending is None:
                return
            if len(pending.logs) >= self.limits.max_spans_per_trace or not self._fits(
                pending, nbytes
            ):
                self._truncate(pending)
            else:
                pending.logs.append(record)
                self._hold(pending, nbytes)

    def _fits(self, pending: PendingTrace, nbytes: int) -> bool:
        """Whether ``nbytes`` more stay within the trace's and the buffer's byte limits
        (lock held)."""
        return (
            not pending.truncated
            and pending.nbytes + nbytes <= self.limits.max_trace_bytes
            and self.counts.buffered_bytes + nbytes <= self.limits.max_buffered_bytes
        )

    def _hold(self, pending: PendingTrace, nbytes: int) -> None:
        pending.nbytes += nbytes
        self.counts.buffered_bytes += nbytes

    def _truncate(self, pending: PendingTrace) -> None:
        """A record of ``pending`` was not kept: the trace will not be graded, so what it
        holds is let go at once (its id stays pending, to count its later records and drop
        it when its root ends; ``dropped_spans`` counts the records refused, the trace is
        counted in ``dropped_traces``). Lock held."""
        if not pending.truncated:
            pending.spans.clear()
            pending.logs.clear()
            self.counts.buffered_bytes -= pending.nbytes
            pending.nbytes = 0
            pending.truncated = True
        self.counts.dropped_spans += 1

    def _pending_for(self, trace_id: int) -> PendingTrace | None:
        """The trace's entry, made when new; None (counted) when it cannot be kept.
        Called with the lock held."""
        pending = self._pending.get(trace_id)
        if pending is not None:
            return pending
        closed = self._closed.get(trace_id)
        if closed == "graded":
            self.counts.late_spans += 1
            return None
        if closed == "dropped" or not self._open:
            self.counts.dropped_spans += 1
            return None
        if len(self._pending) >= self.limits.max_traces:
            self.counts.dropped_spans += 1
            self.counts.dropped_traces += 1
            self._close(trace_id, "dropped")
            return None
        pending = PendingTrace(trace_id, self._clock())
        self._pending[trace_id] = pending
        return pending

    def take(self, *, everything_due: bool = False, close: bool = False) -> Taken:
        """Hand out the traces to grade now: those whose root ended and whose wait has
        passed (``everything_due``: whose root ended at all). Traces past their age limit
        are evicted; ``close`` evicts every trace whose root has not ended, and stops the
        buffer from taking more (shutdown). Over-cap traces are dropped, not graded."""
        now = self._clock()
        max_age = self.limits.max_trace_age_millis / 1000
        ready: list[PendingTrace] = []
        evicted = dropped = 0
        with self._lock:
            if close:
                self._open = False
            for trace_id, pending in list(self._pending.items()):
                if pending.due is not None and (everything_due or close or pending.due <= now):
                    del self._pending[trace_id]
                    self.counts.buffered_bytes -= pending.nbytes
                    if pending.truncated:
                        dropped += 1
                        self._close(trace_id, "dropped")
                    else:
                        ready.append(pending)
                        self._close(trace_id, "graded")
                elif close or now - pending.first_seen >= max_age:
                    del self._pending[trace_id]
                    self.counts.buffered_bytes -= pending.nbytes
                    evicted += 1
                    self._close(trace_id, "dropped")
            self.counts.evicted_traces += evicted
            self.counts.dropped_traces += dropped
        return Taken(ready, evicted, dropped)

    def next_due(self) -> float | None:
        """The clock time at which ``take`` next has something to do, if any."""
        max_age = self.limits.max_trace_age_millis / 1000
        with self._lock:
            times = [
                p.due if p.due is not None else p.first_seen + max_age
                for p in self._pending.values()
            ]
        return min(times, default=None)

    def _close(self, trace_id: int, how: Closed) -> None:
        if self.limits.max_closed_traces == 0:
            return
        self._closed[trace_id] = how
        self._closed.move_to_end(trace_id)
        while len(self._closed) > self.limits.max_closed_traces:
            self._closed.popitem(last=False)
