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

The policy runs in the compiled core (``native/core/src/online.rs``; the binding,
``native/python/src/online.rs``, keeps spans decoded for transfer as compact entries: ids,
times, the position in their request body, no Python object per span). This class is its
Python face: the clock, the admission message, the ``BufferFull`` and ``ReadyTrace`` types.

Not thread-safe by design: the server calls it from its one event-loop thread only, which
keeps the per-span path free of locks.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from otel_oracles._native import OnlineBuffer, TransferSpans
from otel_oracles.model.span import LogRecord, SpanRecord

Reason = Literal["complete", "max_age", "span_limit", "evicted", "shutdown"]

SpanInput = Sequence[SpanRecord] | TransferSpans
"""A request's spans as ``offer`` takes them: records, or a body's ``TransferSpans``."""


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
        self._core = OnlineBuffer(
            decision_wait=decision_wait,
            max_trace_age=max_trace_age,
            max_traces=max_traces,
            overflow_traces=self.overflow_traces,
            max_buffered_spans=max_buffered_spans,
            max_spans_per_trace=max_spans_per_trace,
            decision_cache_size=decision_cache_size,
        )

    @property
    def buffered_traces(self) -> int:
        return self._core.buffered_traces

    @property
    def buffered_items(self) -> int:
        """Spans and log records buffered."""
        return self._core.buffered_items

    @property
    def draining_traces(self) -> int:
        """Buffered traces that leave without more data (root ended, over the span limit,
        or evicted)."""
        return self._core.draining_traces

    @property
    def draining_items(self) -> int:
        return self._core.draining_items

    @property
    def evictions(self) -> int:
        """Traces evicted at a hard cap so far."""
        return self._core.evictions

    def holds(self, trace_id: str) -> bool:
        """Whether ``trace_id`` is being assembled (buffered, not yet released)."""
        return self._core.holds(trace_id)

    def offer(self, spans: SpanInput, logs: Sequence[LogRecord] = ()) -> Admission:
        """Buffer one request's spans and log records, all or nothing.

        ``spans`` are records, or the ``TransferSpans`` of a body decoded for transfer
        (buffered as compact entries, released as ``WireSpan``s). Raises BufferFull
        (nothing buffered) by the admission policy in the module doc; an empty buffer always
        takes a request, so one request larger than the limits cannot livelock its sender.
        """
        accepted, rejected, late, unattached, overflow, traces, refused = self._core.offer(
            spans, logs, self._clock()
        )
        if refused is not None:
            what, buffered_traces, buffered_items = refused
            raise BufferFull(
                f"buffer full ({buffered_traces} traces, {buffered_items} spans buffered, "
                f"limit on {what}); retry later",
                self.retry_after,
            )
        result = Admission(accepted, rejected, late, unattached, overflow, traces=traces)
        if rejected:
            result.message = (
                f"{rejected} spans over max_spans_per_trace={self.max_spans_per_trace} were "
                "dropped; their traces are graded as incomplete"
            )
        return result

    def due(self, now: float | None = None, limit: int | None = None) -> list[ReadyTrace]:
        """Pop every trace gradable at ``now`` (at most ``limit``): evicted ones first (they
        free memory the senders are waiting for), then complete ones, then those too old."""
        now = self._clock() if now is None else now
        return [ReadyTrace(*released) for released in self._core.due(now, limit)]

    def drain(self) -> list[ReadyTrace]:
        """Release everything (shutdown): evicted traces as evicted, traces whose wait has
        passed as complete, the rest marked incomplete."""
        return [ReadyTrace(*released) for released in self._core.drain(self._clock())]
