"""The traces an in-process grader holds until their root span has ended and the wait passed.

Every method takes one lock for a few dictionary operations: the SDK calls ``on_end`` on
the thread (or event loop) that ended the span, and the buffer must never make it wait for
grading. Whatever is not kept is counted (``BufferCounts``), nothing is dropped silently.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from opentelemetry.sdk.trace import ReadableSpan

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


@dataclass(slots=True)
class BufferCounts:
    """What the buffer did not keep, since it was made."""

    dropped_spans: int = 0
    """Spans not kept: buffer full, trace over its span cap, trace already dropped, or
    ended after shutdown."""
    dropped_traces: int = 0
    """Traces not graded because part of them was not kept."""
    late_spans: int = 0
    """Spans (and log records) that arrived after their trace was graded."""
    evicted_traces: int = 0
    """Traces whose root did not end within ``max_trace_age_millis``."""


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
        with self._lock:
            pending = self._pending_for(context.trace_id)
            if pending is None:
                return False
            if len(pending.spans) >= self.limits.max_spans_per_trace:
                pending.truncated = True
                self.counts.dropped_spans += 1
            else:
                pending.spans.append(span)
            if is_root:
                pending.due = self._clock() + self.limits.wait_millis / 1000
        return is_root

    def add_log(self, record: SdkLogRecord) -> None:
        """Keep a log record of a trace (records outside any trace belong to no run)."""
        trace_id = record.log_record.trace_id
        if not trace_id:
            return
        with self._lock:
            pending = self._pending_for(trace_id)
            if pending is not None:
                pending.logs.append(record)

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
                    if pending.truncated:
                        dropped += 1
                        self._close(trace_id, "dropped")
                    else:
                        ready.append(pending)
                        self._close(trace_id, "graded")
                elif close or now - pending.first_seen >= max_age:
                    del self._pending[trace_id]
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
