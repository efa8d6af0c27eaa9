"""Online trace assembly: spans arrive in pieces, traces leave whole (or marked incomplete).

A trace is *complete* once its root span (no parent id) has ended and no span or log record
of it has arrived for ``decision_wait``, the rule of the collector's tail-sampling processor.
A trace still open ``max_trace_age`` after its first span is released anyway, marked
incomplete, so a lost root never pins memory. Released trace ids go into a bounded decision
cache: anything arriving for them later is counted as late, not buffered and not regraded.

Memory is bounded by ``max_traces`` and ``max_buffered_spans``. ``offer`` is all-or-nothing:
when a request does not fit it raises ``BufferFull`` *before* buffering any of it, so the
sender can retry the whole request without creating duplicates (backpressure, not loss).

Not thread-safe by design: the server calls it from its one event-loop thread only, which
keeps the per-span path free of locks.
"""

from __future__ import annotations

import heapq
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from otel_oracles.model.span import LogRecord, SpanRecord

Reason = Literal["complete", "max_age", "span_limit", "shutdown"]


class BufferFull(Exception):
    """The buffer cannot take this request now; retry after ``retry_after`` seconds."""

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(slots=True)
class Admission:
    """What ``offer`` did with one request."""

    accepted: int = 0
    """Spans and log records buffered."""
    rejected: int = 0
    """Refused for good (over ``max_spans_per_trace``); reported as OTLP partial success."""
    late: int = 0
    """For traces already graded: counted, not buffered."""
    unattached_logs: int = 0
    """Log records without a trace id: nothing to attach them to."""
    message: str = ""


@dataclass(slots=True)
class ReadyTrace:
    """A trace released for grading."""

    trace_id: str
    spans: list[SpanRecord]
    logs: list[LogRecord]
    reason: Reason
    due_at: float
    """Monotonic time the trace became gradable (end of its decision wait, or its age limit):
    the start of the completion-to-verdict latency."""
    dropped_spans: int = 0

    @property
    def incomplete(self) -> bool:
        return self.reason != "complete"


@dataclass(slots=True)
class _Pending:
    first: float
    last: float
    spans: list[SpanRecord] = field(default_factory=list)
    logs: list[LogRecord] = field(default_factory=list)
    root_ended: bool = False
    dropped: int = 0

    @property
    def size(self) -> int:
        return len(self.spans) + len(self.logs)


class OnlineAssembler:
    """Buffers spans per trace id and releases traces by the completion policy above.

    ``clock`` returns monotonic seconds (injectable so the policy is testable without sleeps).
    """

    def __init__(
        self,
        *,
        decision_wait: float,
        max_trace_age: float,
        max_traces: int,
        max_buffered_spans: int,
        max_spans_per_trace: int,
        decision_cache_size: int,
        retry_after: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_trace_age < decision_wait:
            raise ValueError("max_trace_age must be >= decision_wait")
        self.decision_wait = decision_wait
        self.max_trace_age = max_trace_age
        self.max_traces = max_traces
        self.max_buffered_spans = max_buffered_spans
        self.max_spans_per_trace = max_spans_per_trace
        self.decision_cache_size = decision_cache_size
        self.retry_after = retry_after
        self._clock = clock
        # Ordered by last arrival: the front is the trace idle longest.
        self._active: OrderedDict[str, _Pending] = OrderedDict()
        # Idle past decision_wait but their root has not ended: only age (or a new span) moves them.
        self._stalled: dict[str, _Pending] = {}
        self._age_heap: list[tuple[float, str]] = []
        self._decided: OrderedDict[str, None] = OrderedDict()
        self.buffered_items = 0

    @property
    def buffered_traces(self) -> int:
        return len(self._active) + len(self._stalled)

    def _pending(self, trace_id: str) -> _Pending | None:
        p = self._active.get(trace_id)
        return p if p is not None else self._stalled.get(trace_id)

    def offer(self, spans: Sequence[SpanRecord], logs: Sequence[LogRecord] = ()) -> Admission:
        """Buffer one request's spans and log records, all or nothing.

        Raises BufferFull (nothing buffered) when the request would exceed ``max_traces`` or
        ``max_buffered_spans`` while other traces are buffered; an empty buffer always takes a
        request, so one request larger than the limits cannot livelock its sender.
        """
        result = Admission()
        groups: dict[str, tuple[list[SpanRecord], list[LogRecord]]] = {}
        for s in spans:
            g = groups.get(s.trace_id)
            if g is None:
                g = groups[s.trace_id] = ([], [])
            g[0].append(s)
        for rec in logs:
            if not rec.trace_id:
                result.unattached_logs += 1
                continue
            g = groups.get(rec.trace_id)
            if g is None:
                g = groups[rec.trace_id] = ([], [])
            g[1].append(rec)

        decided = self._decided
        new_traces = 0
        new_items = 0
        for tid in list(groups):
            g = groups[tid]
            if tid in decided:
                result.late += len(g[0]) + len(g[1])
                del groups[tid]
                continue
            if self._pending(tid) is None:
                new_traces += 1
            new_items += len(g[0]) + len(g[1])

        if self.buffered_traces and (
            self.buffered_traces + new_traces > self.max_traces
            or self.buffered_items + new_items > self.max_buffered_spans
        ):
            raise BufferFull(
                f"buffer full ({self.buffered_traces} traces, {self.buffered_items} spans "
                "buffered); retry later",
                self.retry_after,
            )

        now = self._clock()
        limit = self.max_spans_per_trace
        for tid, (tspans, tlogs) in groups.items():
            p = self._active.pop(tid, None)
            if p is None:
                p = self._stalled.pop(tid, None)
            if p is None:
                p = _Pending(first=now, last=now)
                heapq.heappush(self._age_heap, (now + self.max_trace_age, tid))
            p.last = now
            room = max(limit - p.size, 0)
            total = len(tspans) + len(tlogs)
            take = tspans
            if total > room:
                take = tspans[:room]
                tlogs = tlogs[: room - len(take)]
                over = total - len(take) - len(tlogs)
                p.dropped += over
                result.rejected += over
            if not p.root_ended:
                for s in take:
                    if not s.parent_span_id and s.end_ns:
                        p.root_ended = True
                        break
            p.spans.extend(take)
            p.logs.extend(tlogs)
            n = len(take) + len(tlogs)
            self.buffered_items += n
            result.accepted += n
            self._active[tid] = p  # (re)inserted at the back: most recent arrival
        if result.rejected:
            result.message = (
                f"{result.rejected} spans over max_spans_per_trace={limit} were dropped; "
                "their traces are graded as incomplete"
            )
        return result

    def _release(self, tid: str, p: _Pending, reason: Reason, due_at: float) -> ReadyTrace:
        self.buffered_items -= p.size
        if self.decision_cache_size:
            self._decided[tid] = None
            if len(self._decided) > self.decision_cache_size:
                self._decided.popitem(last=False)
        if p.dropped and reason == "complete":
            reason = "span_limit"
        return ReadyTrace(tid, p.spans, p.logs, reason, due_at, p.dropped)

    def due(self, now: float | None = None, limit: int | None = None) -> list[ReadyTrace]:
        """Pop every trace gradable at ``now`` (at most ``limit``), complete ones first."""
        now = self._clock() if now is None else now
        out: list[ReadyTrace] = []
        wait = self.decision_wait
        active = self._active
        while active and (limit is None or len(out) < limit):
            tid, p = next(iter(active.items()))
            if p.last + wait > now:
                break
            del active[tid]
            # Over its span limit a trace is incomplete for sure: waiting for its root (likely
            # among the dropped spans, as roots end last) would only pin memory.
            if p.root_ended or p.dropped:
                out.append(self._release(tid, p, "complete", p.last + wait))
            else:
                self._stalled[tid] = p
        heap = self._age_heap
        while heap and heap[0][0] <= now and (limit is None or len(out) < limit):
            deadline, tid = heapq.heappop(heap)
            old = self._pending(tid)
            if old is None or old.first + self.max_trace_age != deadline:
                continue  # already released (heap entries are deleted lazily)
            self._active.pop(tid, None)
            self._stalled.pop(tid, None)
            out.append(self._release(tid, old, "max_age", deadline))
        return out

    def drain(self) -> list[ReadyTrace]:
        """Release everything (shutdown): traces whose wait has passed as complete, the rest
        marked incomplete."""
        now = self._clock()
        out = self.due(now)
        for tid, p in [*self._active.items(), *self._stalled.items()]:
            out.append(self._release(tid, p, "shutdown", now))
        self._active.clear()
        self._stalled.clear()
        self._age_heap.clear()
        return out
