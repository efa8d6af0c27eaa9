"""Group a stream of decoded batches into traces, with memory bound by traces in flight."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from otel_oracles.assemble._sessions import SessionStats
from otel_oracles.assemble._tree import build_trace
from otel_oracles.assemble.config import (
    REMEMBERED_TRACE_IDS,
    UNROOTED_IDLE_FACTOR,
)
from otel_oracles.decode import DecodedBatch
from otel_oracles.model.span import LogRecord, SpanRecord, Trace

LATE_SAMPLE_SIZE = 20


@dataclass(slots=True)
class AssemblyStats:
    """What offline assembly did; read it after (or while) iterating the traces.

    Nothing is dropped silently: every span and log record read is either in a yielded trace
    or counted here as late or unattached.
    """

    spans_read: int = 0
    logs_read: int = 0
    traces: int = 0
    """Traces yielded."""
    late_spans: int = 0
    """Spans that arrived after their trace was released (not graded; see ``late_trace_ids``)."""
    late_logs: int = 0
    """Log records that arrived after their trace was released."""
    late_trace_ids: list[str] = field(default_factory=list)
    """The first few trace ids that received late records, for the report."""
    evicted_traces: int = 0
    """Traces released early (marked incomplete) to stay under ``max_buffered_spans``."""
    unattached_logs: int = 0
    """Log records not attached to any span (no span context, no event name, unknown span)."""
    buffered_spans: int = 0
    """Spans and log records held right now."""
    peak_buffered_spans: int = 0
    joined: SessionStats = field(default_factory=SessionStats)
    """Runs assembled from several traces (``join_sessions``)."""

    def summary(self) -> str:
        """One line for reports, or ``""`` when there is nothing worth saying."""
        parts = []
        if self.late_spans or self.late_logs:
            ids = ", ".join(self.late_trace_ids[:3])
            parts.append(
                f"{self.late_spans} late spans and {self.late_logs} late log records arrived "
                f"after their trace was graded (not graded; e.g. trace {ids}); raise the idle "
                "window or sort the input by time"
            )
        if self.evicted_traces:
            parts.append(
                f"{self.evicted_traces} traces graded incomplete to stay under the span "
                "buffer limit"
            )
        if self.joined.summary():
            parts.append(self.joined.summary())
        return "; ".join(parts)


class _Pending:
    __slots__ = ("first_seen", "has_root", "last_seen", "logs", "spans")

    def __init__(self, first_seen: int) -> None:
        self.spans: list[SpanRecord] = []
        # A list only once a log record arrives: most traces have none, and an empty list
        # per trace id was 56 bytes times every trace in flight.
        self.logs: list[LogRecord] | tuple[()] = ()
        self.first_seen = first_seen
        self.last_seen = first_seen
        self.has_root = False


class OfflineAssembly(Iterator[Trace]):
    """The iterator ``assemble_offline`` returns: traces, plus ``stats`` as they accrue."""

    def __init__(
        self,
        batches: Iterable[DecodedBatch],
        *,
        max_buffered_spans: int | None,
        idle_spans: int,
        stats: AssemblyStats,
    ) -> None:
        if max_buffered_spans is not None and max_buffered_spans < 1:
            raise ValueError(f"max_buffered_spans must be >= 1, got {max_buffered_spans}")
        if idle_spans < 1:
            raise ValueError(f"idle_spans must be >= 1, got {idle_spans}")
        self.stats = stats
        self._iter = self._run(iter(batches), max_buffered_spans, idle_spans)

    def __next__(self) -> Trace:
        return next(self._iter)

    def __iter__(self) -> OfflineAssembly:
        return self

    def _run(self, batches: Iterator[DecodedBatch], cap: int | None, idle: int) -> Iterator[Trace]:
        stats = self.stats
        # Three queues, each ordered by last activity: traces whose root has arrived, traces
        # with spans but no root yet, and trace ids seen only in log records so far (a logs
        # file read before its spans file); the last wait for their spans, idle or not.
        rooted: OrderedDict[str, _Pending] = OrderedDict()
        unrooted: OrderedDict[str, _Pending] = OrderedDict()
        waiting: OrderedDict[str, _Pending] = OrderedDict()
        released: OrderedDict[str, None] = OrderedDict()
        clock = 0  # records read so far
        unrooted_idle = idle * UNROOTED_IDLE_FACTOR

        def release(trace_id: str, pending: _Pending, *, incomplete: bool) -> Trace:
            stats.buffered_spans -= len(pending.spans) + len(pending.logs)
            released[trace_id] = None
            if len(released) > REMEMBERED_TRACE_IDS:
                released.popitem(last=False)
            trace = build_trace(trace_id, pending.spans, pending.logs)
            pending.spans = []
            pending.logs = ()
            trace.incomplete = incomplete
            stats.unattached_logs += trace.unattached_logs
            stats.traces += 1
            return trace

        def drop_logs_only(pending: _Pending) -> None:
            # Log records whose trace never showed a span: nothing to attach them to.
            stats.buffered_spans -= len(pending.logs)
            stats.unattached_logs += len(pending.logs)

        def late(trace_id: str) -> None:
            if (
                len(stats.late_trace_ids) < LATE_SAMPLE_SIZE
                and trace_id not in stats.late_trace_ids
            ):
                stats.late_trace_ids.append(trace_id)

        def pending_for(trace_id: str, *, span: bool) -> _Pending | None:
            pending = rooted.get(trace_id)
            if pending is not None:
                rooted.move_to_end(trace_id)
                return pending
            pending = unrooted.get(trace_id)
            if pending is not None:
                unrooted.move_to_end(trace_id)
                return pending
            pending = waiting.get(trace_id)
            if pending is not None:
                if span:
                    del waiting[trace_id]
                    unrooted[trace_id] = pending
                else:
                    waiting.move_to_end(trace_id)
                return pending
            if trace_id in released:
                return None
            pending = _Pending(clock)
            (unrooted if span else waiting)[trace_id] = pending
            return pending

        for batch in batches:
            added = 0
            last_id = ""
            pending: _Pending | None = None
            for span in batch.spans:
                trace_id = span.trace_id
                if trace_id != last_id:
                    last_id = trace_id
                    pending = pending_for(trace_id, span=True)
                clock += 1
                if pending is None:
                    stats.late_spans += 1
                    late(trace_id)
                    continue
                pending.spans.append(span)
                pending.last_seen = clock
                added += 1
                if not span.parent_span_id and not pending.has_root:
                    pending.has_root = True
                    unrooted.pop(trace_id, None)
                    rooted[trace_id] = pending
            for log in batch.logs:
                clock += 1
                trace_id = log.trace_id
                if not trace_id:
                    stats.unattached_logs += 1
                    continue
                pending = pending_for(trace_id, span=False)
                if pending is None:
                    stats.late_logs += 1
                    late(trace_id)
                    continue
                if isinstance(pending.logs, list):
                    pending.logs.append(log)
                else:
                    pending.logs = [log]
                pending.last_seen = clock
                added += 1
            stats.spans_read += len(batch.spans)
            stats.logs_read += len(batch.logs)
            stats.buffered_spans += added
            # Release traces idle long enough (oldest activity first).
            for queue, wait in ((rooted, idle), (unrooted, unrooted_idle)):
                while queue:
                    trace_id, pending = next(iter(queue.items()))
                    if clock - pending.last_seen < wait:
                        break
                    del queue[trace_id]
                    yield release(trace_id, pending, incomplete=False)
            stats.peak_buffered_spans = max(stats.peak_buffered_spans, stats.buffered_spans)
            if cap is not None:
                while stats.buffered_spans > cap and (rooted or unrooted or waiting):
                    queue = _oldest(rooted, unrooted, waiting)
                    trace_id, pending = queue.popitem(last=False)
                    if not pending.spans:
                        drop_logs_only(pending)
                        continue
                    stats.evicted_traces += 1
                    yield release(trace_id, pending, incomplete=True)
        # End of input: everything left is as complete as it will get, in first-seen order.
        rest = sorted([*rooted.items(), *unrooted.items()], key=lambda item: item[1].first_seen)
        for pending in waiting.values():
            drop_logs_only(pending)
        rooted.clear()
        unrooted.clear()
        waiting.clear()
        for trace_id, pending in rest:
            yield release(trace_id, pending, incomplete=False)


def _oldest(*queues: OrderedDict[str, _Pending]) -> OrderedDict[str, _Pending]:
    """The non-empty queue whose front trace has been idle longest."""
    candidates = [q for q in queues if q]
    return min(candidates, key=lambda q: next(iter(q.values())).last_seen)
