"""Online trace assembly: spans arrive in pieces, traces leave whole (or marked incomplete).

A trace is *complete* once its root span (no parent id) has ended and no span or log record
of it has arrived for ``decision_wait``, the rule of the collector's tail-sampling processor.
A trace still open ``max_trace_age`` after its first span is released anyway, marked
incomplete, so a lost root never pins memory. Released trace ids go into a bounded decision
cache: anything arriving for them later is counted as late, not buffered and not regraded.

Admission (docs/serve.md, "Backpressure and memory") is all-or-nothing per request: when a
request is refused, ``offer`` raises ``BufferFull`` *before* buffering any of it, so the
sender retries the whole request without creating duplicates. Refusing is only useful when
the buffer will make room *by itself*; a buffer full of traces still waiting for their root
only drains when more data comes in, so refusing everything would livelock (a collector's
retry queue holds the very roots the buffer waits for). Hence:

* a request that only continues buffered traces is admitted up to ``max_buffered_spans``;
* a request bringing new traces is admitted while ``max_traces`` is not reached; beyond it,
  up to ``max_traces + overflow_traces``, when it also continues a buffered trace (it may
  complete it) or when the traces already *draining* (root ended, or evicted) would not
  make room anyway;
* otherwise it is refused (retryable) -- and when the traces that drain by themselves cannot
  make room within the hard caps (``max_traces + overflow_traces`` traces,
  ``max_buffered_spans`` spans), the oldest stuck traces (no root, nothing for
  ``decision_wait``) are *evicted*: released to grading at once, marked incomplete (reason
  ``evicted``), so a retry fits. Nothing is dropped.

A refused request is *owed*: the sender will send it again, possibly after its trace's root
got in through another request and longer than ``decision_wait`` later (retry backoff). So
each refused request is remembered per trace (a fingerprint of its part of the trace, in a
bounded table) and a trace with a part still owed is not complete until that part arrives
(or ``max_trace_age``/eviction releases it as incomplete).

Not thread-safe by design: the server calls it from its one event-loop thread only, which
keeps the per-span path free of locks.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, cast

from otel_oracles.model.span import LogRecord, SpanRecord

Reason = Literal["complete", "max_age", "span_limit", "evicted", "shutdown"]

_NO_LOGS: tuple[LogRecord, ...] = ()


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
    overflow: bool = False
    """Admitted beyond ``max_traces`` (within ``overflow_traces``)."""
    message: str = ""
    traces: list[str] = field(default_factory=list)
    """Trace ids this request added to the buffer (not those it was late for): what
    ``serve``'s spool keeps the request for."""


@dataclass(slots=True)
class ReadyTrace:
    """A trace released for grading."""

    trace_id: str
    spans: list[SpanRecord]
    logs: list[LogRecord]
    reason: Reason
    due_at: float
    """Monotonic time the trace became gradable (end of its decision wait, its age limit, or
    its eviction): the start of the completion-to-verdict latency."""
    dropped_spans: int = 0
    members: tuple[str, ...] = ()
    """A run joined from several traces (``online_join``): every member trace id, earliest
    first (``trace_id`` is the first); empty for a subject of one trace."""

    @property
    def incomplete(self) -> bool:
        return self.reason != "complete"

    @property
    def trace_ids(self) -> tuple[str, ...]:
        """The traces this subject holds: what the spool settles once it is graded."""
        return self.members or (self.trace_id,)


@dataclass(slots=True)
class _Pending:
    first: float
    last: float
    spans: list[SpanRecord]
    logs: Sequence[LogRecord] = ()
    """A list once the trace has log records (most have none: no list per trace then)."""
    root_ended: bool = False
    dropped: int = 0
    evicted_at: float | None = None

    @property
    def size(self) -> int:
        return len(self.spans) + len(self.logs)

    @property
    def draining(self) -> bool:
        """Leaves the buffer without more data: its root ended (or it lost spans to the
        per-trace limit, so it does not wait for a root), or it was evicted."""
        return self.root_ended or bool(self.dropped) or self.evicted_at is not None


class OnlineAssembler:
    """Buffers spans per trace id and releases traces by the completion policy above.

    ``clock`` returns monotonic seconds (injectable so the policy is testable without sleeps).
    ``overflow_traces`` defaults to ``max_traces`` (a hard limit of twice the soft one).
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
        overflow_traces: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_trace_age < decision_wait:
            raise ValueError("max_trace_age must be >= decision_wait")
        self.decision_wait = decision_wait
        self.max_trace_age = max_trace_age
        self.max_traces = max_traces
        self.overflow_traces = max_traces if overflow_traces is None else overflow_traces
        self.max_buffered_spans = max_buffered_spans
        self.max_spans_per_trace = max_spans_per_trace
        self.decision_cache_size = decision_cache_size
        self.retry_after = retry_after
        self._clock = clock
        # Every buffered trace, by first arrival: the front is the oldest (age limit, eviction;
        # max_trace_age is the same for all, so this is also deadline order).
        self._all: OrderedDict[str, _Pending] = OrderedDict()
        # Ordered by last arrival: the front is the trace idle longest.
        self._active: OrderedDict[str, _Pending] = OrderedDict()
        # Idle past decision_wait but their root has not ended: only age (or a new span) moves them.
        self._stalled: dict[str, _Pending] = {}
        # Evicted, waiting for a grading slot; released before anything else.
        self._evicted: OrderedDict[str, _Pending] = OrderedDict()
        self._decided: OrderedDict[str, None] = OrderedDict()
        # trace id -> fingerprints of its parts in refused requests not yet re-sent
        self._owed: OrderedDict[str, set[tuple[str, int, int]]] = OrderedDict()
        self._owed_limit = 4 * (max_traces + self.overflow_traces) + 1024
        self.buffered_items = 0
        self.draining_traces = 0
        self.draining_items = 0
        self.evictions = 0

    @property
    def buffered_traces(self) -> int:
        return len(self._all)

    def holds(self, trace_id: str) -> bool:
        """Whether ``trace_id`` is being assembled (buffered, not yet released)."""
        return trace_id in self._all

    def offer(self, spans: Sequence[SpanRecord], logs: Sequence[LogRecord] = ()) -> Admission:
        """Buffer one request's spans and log records, all or nothing.

        Raises BufferFull (nothing buffered) by the admission policy in the module doc; an
        empty buffer always takes a request, so one request larger than the limits cannot
        livelock its sender.
        """
        result = Admission()
        # One list per trace (the one the trace keeps when it is new), a shared empty tuple
        # for a trace's logs when it has none: a request of many one-span traces costs one
        # list and one _Pending per trace, not four containers.
        groups: dict[str, tuple[list[SpanRecord], Sequence[LogRecord]]] = {}
        for s in spans:
            g = groups.get(s.trace_id)
            if g is None:
                groups[s.trace_id] = ([s], _NO_LOGS)
            else:
                g[0].append(s)
        for rec in logs:
            if not rec.trace_id:
                result.unattached_logs += 1
                continue
            g = groups.get(rec.trace_id)
            if g is None:
                groups[rec.trace_id] = ([], [rec])
            elif g[1] is _NO_LOGS:
                groups[rec.trace_id] = (g[0], [rec])
            else:
                cast(list[LogRecord], g[1]).append(rec)

        decided = self._decided
        buffered = self._all
        new_traces = 0
        new_items = 0
        continues = False
        for tid in list(groups):
            g = groups[tid]
            if tid in decided:
                result.late += len(g[0]) + len(g[1])
                del groups[tid]
                continue
            if tid in buffered:
                continues = True
            else:
                new_traces += 1
            new_items += len(g[0]) + len(g[1])

        owed = self._owed
        if buffered and groups:
            try:
                result.overflow = self._admit(new_traces, new_items, continues)
            except BufferFull:
                for tid, g in groups.items():
                    parts = owed.get(tid)
                    if parts is None:
                        parts = owed[tid] = set()
                        if len(owed) > self._owed_limit:
                            owed.popitem(last=False)
                    parts.add(_fingerprint(g))
                raise

        now = self._clock()
        limit = self.max_spans_per_trace
        result.traces = list(groups)
        for tid, (tspans, tlogs) in groups.items():
            if owed and (parts := owed.get(tid)) is not None:
                parts.discard(_fingerprint((tspans, tlogs)))
                if not parts:
                    del owed[tid]
            p = buffered.get(tid)
            fresh = p is None
            if p is None:
                p = buffered[tid] = _Pending(first=now, last=now, spans=tspans)
            elif p.evicted_at is None and self._active.pop(tid, None) is None:
                self._stalled.pop(tid, None)
            was_draining = p.draining
            p.last = now
            room = limit if fresh else max(limit - p.size, 0)
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
            if fresh:
                p.spans = take  # this request's list for the trace, kept (no copy)
            else:
                p.spans.extend(take)
            if tlogs:
                if isinstance(p.logs, list):
                    p.logs.extend(tlogs)
                else:
                    p.logs = list(tlogs)
            n = len(take) + len(tlogs)
            self.buffered_items += n
            result.accepted += n
            if was_draining:
                self.draining_items += n
            elif p.draining:
                self.draining_traces += 1
                self.draining_items += p.size
            if p.evicted_at is None:
                self._active[tid] = p  # (re)inserted at the back: most recent arrival
        if result.rejected:
            result.message = (
                f"{result.rejected} spans over max_spans_per_trace={limit} were dropped; "
                "their traces are graded as incomplete"
            )
        return result

    def _admit(self, new_traces: int, new_items: int, continues: bool) -> bool:
        """Raise BufferFull unless the policy admits the request; True when it is admitted
        beyond ``max_traces`` (overflow)."""
        if self.buffered_items + new_items > self.max_buffered_spans:
            self._evict_blocked(0, new_items)
            self._refuse("spans")
        traces = len(self._all)
        if not new_traces or traces + new_traces <= self.max_traces:
            return False
        if continues:
            # Refusing would hold the continued traces' completion hostage; the spans it
            # costs are bounded by max_buffered_spans (checked above).
            return True
        if traces + new_traces > self.max_traces + self.overflow_traces:
            self._evict_blocked(new_traces, 0)
            self._refuse("traces")
        if traces - self.draining_traces + new_traces > self.max_traces:
            return True  # what drains by itself would not make room: refusing cannot help
        self._refuse("traces")
        return False  # unreachable: _refuse raises

    def _refuse(self, what: str) -> None:
        raise BufferFull(
            f"buffer full ({len(self._all)} traces, {self.buffered_items} spans buffered, "
            f"limit on {what}); retry later",
            self.retry_after,
        )

    def _evict_blocked(self, new_traces: int, new_items: int) -> None:
        """At a hard cap: evict the oldest *stuck* traces (root not ended, or a part owed by
        a refused request, and nothing arrived for ``decision_wait``) until the request would
        fit once the traces that complete by themselves are graded. A trace that received
        data within ``decision_wait`` is never evicted: its next parts (continuations are
        always admitted) are likely on the way, and if they are not it becomes evictable
        ``decision_wait`` later, so the buffer still always drains. Scans the buffer: runs
        only at a hard cap."""
        owed = self._owed
        now = self._clock()
        quiet = now - self.decision_wait
        blocked: list[tuple[str, _Pending]] = []
        free_traces = free_items = 0
        for tid, p in self._all.items():
            if p.evicted_at is not None or (p.draining and tid not in owed):
                free_traces += 1
                free_items += p.size
            elif p.last <= quiet:
                blocked.append((tid, p))
        need_traces = len(self._all) - free_traces + new_traces
        need_traces -= self.max_traces + self.overflow_traces
        need_items = self.buffered_items - free_items + new_items - self.max_buffered_spans
        if not new_traces:
            need_traces = 0
        for tid, p in blocked:
            if need_traces <= 0 and need_items <= 0:
                break
            if self._active.pop(tid, None) is None:
                self._stalled.pop(tid, None)
            if not p.draining:
                self.draining_traces += 1
                self.draining_items += p.size
            p.evicted_at = now
            self._evicted[tid] = p
            self.evictions += 1
            need_traces -= 1
            need_items -= p.size

    def _release(self, tid: str, p: _Pending, reason: Reason, due_at: float) -> ReadyTrace:
        del self._all[tid]
        self.buffered_items -= p.size
        if p.draining:
            self.draining_traces -= 1
            self.draining_items -= p.size
        self._owed.pop(tid, None)
        if self.decision_cache_size:
            self._decided[tid] = None
            if len(self._decided) > self.decision_cache_size:
                self._decided.popitem(last=False)
        if p.dropped and reason == "complete":
            reason = "span_limit"
        logs = p.logs if isinstance(p.logs, list) else []
        return ReadyTrace(tid, p.spans, logs, reason, due_at, p.dropped)

    def due(self, now: float | None = None, limit: int | None = None) -> list[ReadyTrace]:
        """Pop every trace gradable at ``now`` (at most ``limit``): evicted ones first (they
        free memory the senders are waiting for), then complete ones, then those too old."""
        now = self._clock() if now is None else now
        out: list[ReadyTrace] = []
        evicted = self._evicted
        while evicted and (limit is None or len(out) < limit):
            tid, p = evicted.popitem(last=False)
            assert p.evicted_at is not None
            out.append(self._release(tid, p, "evicted", p.evicted_at))
        wait = self.decision_wait
        active = self._active
        while active and (limit is None or len(out) < limit):
            tid, p = next(iter(active.items()))
            if p.last + wait > now:
                break
            del active[tid]
            # Over its span limit a trace is incomplete for sure: waiting for its root (likely
            # among the dropped spans, as roots end last) would only pin memory.
            if (p.root_ended or p.dropped) and tid not in self._owed:
                out.append(self._release(tid, p, "complete", p.last + wait))
            else:
                self._stalled[tid] = p
        age = self.max_trace_age
        everything = self._all
        while everything and (limit is None or len(out) < limit):
            tid, p = next(iter(everything.items()))
            deadline = p.first + age
            if deadline > now:
                break
            if self._active.pop(tid, None) is None and self._stalled.pop(tid, None) is None:
                self._evicted.pop(tid, None)
            out.append(self._release(tid, p, "max_age", deadline))
        return out

    def drain(self) -> list[ReadyTrace]:
        """Release everything (shutdown): evicted traces as evicted, traces whose wait has
        passed as complete, the rest marked incomplete."""
        now = self._clock()
        out = self.due(now)
        for tid, p in list(self._all.items()):
            out.append(self._release(tid, p, "shutdown", now))
        self._active.clear()
        self._stalled.clear()
        self._evicted.clear()
        return out


def _fingerprint(group: tuple[list[SpanRecord], Sequence[LogRecord]]) -> tuple[str, int, int]:
    """Identifies one request's part of a trace across retries (a sender re-sends the same
    request): its first record and how many spans and log records it holds."""
    spans, logs = group
    first = spans[0].span_id if spans else f"{logs[0].span_id}/{logs[0].time_ns}"
    return first, len(spans), len(logs)
