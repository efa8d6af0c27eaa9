"""Group a stream of decoded batches into traces, with memory bound by traces in flight."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from otel_oracles._frozen import Value
from otel_oracles._native import OfflineAssembler
from otel_oracles.assemble._sessions import ReleasedTrace, SessionStats
from otel_oracles.assemble.config import LATE_SAMPLE_SIZE
from otel_oracles.decode import DecodedBatch
from otel_oracles.model.span import Trace


# A plain class, not a dataclass: the methods ``dataclasses`` generates are compiled from
# source at every start (``otel_oracles._frozen``).
class AssemblyStats(Value):
    """What offline assembly did; read it after iterating the traces (while iterating, it
    reads as of the last batch the assembler finished releasing).

    Nothing is dropped silently: every span and log record read is either in a yielded trace
    or counted here as late or unattached.
    """

    __slots__ = (
        "buffered_spans",
        "evicted_traces",
        "joined",
        "late_logs",
        "late_spans",
        "late_trace_ids",
        "logs_read",
        "peak_buffered_spans",
        "spans_read",
        "traces",
        "unattached_logs",
    )
    spans_read: int
    logs_read: int
    traces: int
    """Traces yielded."""
    late_spans: int
    """Spans that arrived after their trace was released (not graded; see ``late_trace_ids``)."""
    late_logs: int
    """Log records that arrived after their trace was released."""
    late_trace_ids: list[str]
    """The first few trace ids that received late records, for the report."""
    evicted_traces: int
    """Traces released early (marked incomplete) to stay under ``max_buffered_spans``."""
    unattached_logs: int
    """Log records not attached to any span (no span context, no event name, unknown span)."""
    buffered_spans: int
    """Spans and log records held right now."""
    peak_buffered_spans: int
    joined: SessionStats
    """Runs assembled from several traces (``join_sessions``)."""

    def __init__(
        self,
        spans_read: int = 0,
        logs_read: int = 0,
        traces: int = 0,
        late_spans: int = 0,
        late_logs: int = 0,
        late_trace_ids: list[str] | None = None,
        evicted_traces: int = 0,
        unattached_logs: int = 0,
        buffered_spans: int = 0,
        peak_buffered_spans: int = 0,
        joined: SessionStats | None = None,
    ) -> None:
        self.spans_read = spans_read
        self.logs_read = logs_read
        self.traces = traces
        self.late_spans = late_spans
        self.late_logs = late_logs
        self.late_trace_ids = [] if late_trace_ids is None else late_trace_ids
        self.evicted_traces = evicted_traces
        self.unattached_logs = unattached_logs
        self.buffered_spans = buffered_spans
        self.peak_buffered_spans = peak_buffered_spans
        self.joined = SessionStats() if joined is None else joined

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


class OfflineAssembly(Iterator[Trace]):
    """The iterator ``assemble_offline`` returns: traces, plus ``stats`` as they accrue.

    The grouping and release policy live in the compiled core (``OfflineAssembler``,
    ``native/core/src/assemble_offline.rs``): natively decoded batches are handed over whole
    and their spans wait there, so Python records are built only for a released trace's
    spans; batches of records built in Python are handed over record by record. The core
    call that releases a trace also builds its ``Trace`` (the span tree of ``build_trace``,
    its log records attached as events); here each trace's log records attached nowhere are
    added to ``stats`` as it is yielded, and the core's counts once per batch, when the
    batch's traces are all out (and at the end): the callers read them when the stream is
    over, and a sync per trace was paid by every trace.

    Iterated, it yields the traces; ``released()`` yields each with its ``JoinFacts`` (what
    the join reads of it, worked out at release from its decoded spans), which
    ``traces_from_batches`` hands to ``join_released``.
    """

    def __init__(
        self,
        batches: Iterable[DecodedBatch],
        *,
        max_buffered_spans: int | None,
        idle_spans: int,
        stats: AssemblyStats,
    ) -> None:
        self._core = OfflineAssembler(idle_spans, max_buffered_spans)
        self.stats = stats
        self._batches = iter(batches)
        self._synced: _Counts = _NO_COUNTS

    def __iter__(self) -> OfflineAssembly:
        return self

    def __next__(self) -> Trace:
        released = self._release()
        if released is None:
            raise StopIteration
        return released[0]

    def released(self) -> Iterator[ReleasedTrace]:
        """The traces still to come, each with its ``JoinFacts`` when its spans were all
        decoded natively (else ``None``: the join reads its records). Shares this iterator's
        position and ``stats``."""
        return iter(self._release, None)

    def _release(self) -> ReleasedTrace | None:
        """The next trace released, with its ``JoinFacts``; ``None`` at the end."""
        core = self._core
        while True:
            released = core.next_release()
            if released is not None:
                self.stats.unattached_logs += released[0].unattached_logs
                return released
            # The batch's traces are all out: what the core counted for it (records read,
            # traces released, late and evicted ones) is added once here, not per trace.
            self._sync()
            if core.done:
                return None
            batch = next(self._batches, None)
            if batch is None:
                core.finish()
            elif batch.native is not None:
                core.push_batch(batch.native)
            else:
                core.push_records(batch.spans, batch.logs)

    def _sync(self) -> None:
        """Add what the core counted since the last call to ``stats``."""
        now = self._core.stats()
        if now == self._synced:
            return
        before, self._synced = self._synced, now
        stats = self.stats
        stats.spans_read += now[0] - before[0]
        stats.logs_read += now[1] - before[1]
        stats.traces += now[2] - before[2]
        stats.late_spans += now[3] - before[3]
        stats.late_logs += now[4] - before[4]
        sample = stats.late_trace_ids
        for trace_id in now[5][len(before[5]) :]:
            if len(sample) < LATE_SAMPLE_SIZE and trace_id not in sample:
                sample.append(trace_id)
        stats.evicted_traces += now[6] - before[6]
        stats.unattached_logs += now[7] - before[7]
        stats.buffered_spans += now[8] - before[8]
        stats.peak_buffered_spans = max(stats.peak_buffered_spans, now[9])


_Counts = tuple[int, int, int, int, int, list[str], int, int, int, int]
"""``OfflineAssembler.stats()``: ``AssemblyStats``' counts in field order, up to the peak."""

_NO_COUNTS: _Counts = (0, 0, 0, 0, 0, [], 0, 0, 0, 0)
