"""Group a stream of decoded batches into traces, with memory bound by traces in flight."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from otel_oracles.assemble._tree import build_trace
from otel_oracles.assemble.config import (
    REMEMBERED_TRACE_IDS,
    UNROOTED_IDLE_FACTOR,
)
from otel_oracles.decode._batch import DecodedBatch
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
        return "; ".join(parts)


class _Pending:
    __slots__ = ("first_seen", "has_root", "last_seen", "logs", "spans")

    def __init__(self, first_seen: int) -> None:
        self.spans: list[SpanRecord] = []
        self.logs: list[LogRecord] = []
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
        # Two queues ordered by last activity: traces with their root, traces without.
        rooted: OrderedDict[str, _Pending] = OrderedDict()
        unrooted: OrderedDict[str, _Pending] = OrderedDict()
        released: OrderedDict[str, None] = OrderedDict()
        clock = 0  # records read so far
        unrooted_idle = idle * UNROOTED_IDLE_FACTOR

        def release(trace_id: str, pending: _Pending, *, incomplete: bool) -> Trace:
            stats.buffered_spans -= len(pending.spans) + len(pending.logs)
            released[trace_id] = None
            if len(released) > REMEMBERED_TRACE_IDS:
                released.popitem(last=False)
            trace = build_trace(trace_id, pending.spans, pending.logs)
            trace.incomplete = incomplete
            stats.unattached_logs += trace.unattached_logs
            stats.traces += 1
            return trace

        def late(trace_id: str) -> None:
            if (
                len(stats.late_trace_ids) < LATE_SAMPLE_SIZE
                and trace_id not in stats.late_trace_ids
            ):
                stats.late_trace_ids.append(trace_id)

        def pending_for(trace_id: str) -> _Pending | None:
            pending = rooted.get(trace_id)
            if pending is not None:
                rooted.move_to_end(trace_id)
                return pending
            pending = unrooted.get(trace_id)
            if pending is not None:
                unrooted.move_to_end(trace_id)
                return pending
            if trace_id in released:
                return None
            pending = unrooted[trace_id] = _Pending(clock)
            return pending

        for batch in batches:
            added = 0
            last_id = ""
            pending: _Pending | None = None
            for span in batch.spans:
                trace_id = span.trace_id
                if trace_id != last_id:
                    last_id = trace_id
                    pending = pending_for(trace_id)
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
                pending = pending_for(trace_id)
                if pending is None:
                    stats.late_logs += 1
                    late(trace_id)
                    continue
                pending.logs.append(log)
                pending.last_seen = clock
                added += 1
            stats.spans_read += len(batch.spans)
            stats.logs_read += len(batch.logs)
            stats.buffered_spans += added
            # Release traces idle long enough (oldest activity first).
            while rooted:
                trace_id, pending = next(iter(rooted.items()))
                if clock - pending.last_seen < idle:
                    break
                del rooted[trace_id]
                yield release(trace_id, pending, incomplete=False)
            while unrooted:
                trace_id, pending = next(iter(unrooted.items()))
                if clock - pending.last_seen < unrooted_idle:
                    break
                del unrooted[trace_id]
                yield release(trace_id, pending, incomplete=False)
            stats.peak_buffered_spans = max(stats.peak_buffered_spans, stats.buffered_spans)
            if cap is not None:
                while stats.buffered_spans > cap and (rooted or unrooted):
                    queue = _oldest(rooted, unrooted)
                    trace_id, pending = queue.popitem(last=False)
                    stats.evicted_traces += 1
                    yield release(trace_id, pending, incomplete=True)
        # End of input: everything left is as complete as it will get, in first-seen order.
        rest = sorted([*rooted.items(), *unrooted.items()], key=lambda item: item[1].first_seen)
        rooted.clear()
        unrooted.clear()
        for trace_id, pending in rest:
            yield release(trace_id, pending, incomplete=False)


def _oldest(
    rooted: OrderedDict[str, _Pending], unrooted: OrderedDict[str, _Pending]
) -> OrderedDict[str, _Pending]:
    if not rooted:
        return unrooted
    if not unrooted:
        return rooted
    first_rooted = next(iter(rooted.values()))
    first_unrooted = next(iter(unrooted.values()))
    return rooted if first_rooted.last_seen <= first_unrooted.last_seen else unrooted
