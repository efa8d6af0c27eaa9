"""``GradingSpanProcessor``: grade each trace inside the agent's own process.

Added to the application's ``TracerProvider`` next to its exporter, the processor keeps the
spans of every trace in memory until the trace's local root span ends, waits
``wait_millis`` for stragglers, and grades the trace against the contracts on a worker
thread, through the same grading session (``GradingSession.grade``) and the same emitter
(``build_emitter``: grade spans, ``gen_ai.evaluation.result`` events and metrics over OTLP,
on the grader's own providers) as ``otel-oracles grade --export otlp``. No collector and no
``serve`` are needed for a single service.

It obeys the SDK's processor rules: ``on_end`` runs on the thread (or event loop) that
ended the span, so it only appends to the buffer under a short lock and never waits for
grading; nothing raises into the instrumented program; ``force_flush`` grades every trace
whose root has ended and flushes the emitter within one deadline; ``shutdown`` does the
same, then stops (safe twice). Memory is bounded by ``ProcessorLimits``, and what is not
graded is counted in ``stats()``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from opentelemetry.context import Context
from opentelemetry.sdk._logs import LogRecordProcessor, ReadWriteLogRecord
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from otel_oracles.emit import EmitResult, Emitter, build_emitter
from otel_oracles.inprocess._buffer import PendingTrace, TraceBuffer
from otel_oracles.inprocess._sdk_records import sdk_traces
from otel_oracles.inprocess.config import ProcessorLimits
from otel_oracles.mapping import ConventionCache, ConventionSet, load_conventions
from otel_oracles.model.contract import Contract, discover_contract_files
from otel_oracles.model.result import Verdict
from otel_oracles.model.step import Trajectory
from otel_oracles.sandbox import CommandPolicy
from otel_oracles.session import GradingSession

_LOG = logging.getLogger(__name__)

COMMANDS_OFF = CommandPolicy(
    mode="off",
    off_reason=(
        "command-running checks are off in GradingSpanProcessor: pass "
        "commands=CommandPolicy(mode='sandbox') to run them in the sandbox (docs/security.md)"
    ),
)
"""Default for command-running checks: off, as in ``serve``; the traces graded here come
from the running program, and a check that runs commands over what they wrote is a
decision for whoever deploys it."""


@dataclass(frozen=True, slots=True)
class ProcessorStats:
    """What the processor has done since it was made."""

    graded_traces: int
    """Traces graded (each may give several verdicts, one per selecting contract)."""
    verdicts: int
    """Verdicts handed to the emitter."""
    pending_traces: int
    """Traces buffered now."""
    dropped_spans: int
    """Spans not kept (buffer full, span cap, byte limits, after shutdown)."""
    dropped_traces: int
    """Traces not graded because spans of theirs were not kept."""
    late_spans: int
    """Spans and log records that arrived after their trace was graded."""
    evicted_traces: int
    """Traces whose root never ended in time (or had not ended at shutdown)."""
    buffered_bytes: int
    """Bytes of span and log content held now (``ProcessorLimits.max_buffered_bytes``)."""
    grading_errors: int
    """Traces whose grading or export raised (logged; the others go on)."""
    export_failures: int
    """Exports the emitter reported as failed."""


def _load(contracts: Sequence[Contract | str | Path]) -> tuple[Contract, ...]:
    from otel_oracles import load_contract  # the public loader, wherever grade/ keeps it

    loaded: list[Contract] = []
    paths: list[str | Path] = [Path(c) for c in contracts if not isinstance(c, Contract)]
    loaded.extend(c for c in contracts if isinstance(c, Contract))
    if paths:
        loaded.extend(load_contract(f) for f in discover_contract_files(paths))
    if not loaded:
        raise ValueError("contracts: no contract given (contract objects, files or directories)")
    return tuple(loaded)


class GradingSpanProcessor(SpanProcessor):
    """Grades every trace the program records when its root span ends (see the module
    docstring). ``contracts``: ``Contract`` objects, files or directories, loaded now (an
    invalid one raises, naming file and key); ``emitter``: where verdicts go (default:
    ``build_emitter(export="otlp")``, configured by the standard ``OTEL_EXPORTER_OTLP_*``
    variables); the processor shuts it down with itself."""

    def __init__(
        self,
        contracts: Sequence[Contract | str | Path],
        *,
        conventions: ConventionSet | None = None,
        emitter: Emitter | None = None,
        limits: ProcessorLimits | None = None,
        commands: CommandPolicy = COMMANDS_OFF,
    ) -> None:
        self.contracts = _load(contracts)
        self.conventions = (
            conventions
            if conventions is not None
            else load_conventions(cache=ConventionCache.from_env())
        )
        self.emitter = emitter if emitter is not None else build_emitter(export="otlp")
        self.limits = limits or ProcessorLimits()
        self.commands = commands
        self._session = GradingSession(self.contracts, self.conventions, commands=commands)
        self._buffer = TraceBuffer(self.limits)
        self._max_age_s = self.limits.max_trace_age_millis / 1000
        self._wake = threading.Condition()
        self._flush_requested = 0
        self._flush_done = 0
        self._stopping = False
        self._shutdown = False
        self._graded = self._verdicts = self._errors = self._export_failures = 0
        self._late_reported = 0
        self._worker = threading.Thread(target=self._run, name="otel-oracles-grading", daemon=True)
        self._worker.start()

    # ---- SpanProcessor ---------------------------------------------------------------

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """Nothing: a span is graded once it has ended."""

    def on_end(self, span: ReadableSpan) -> None:
        try:
            if self._buffer.add_span(span):
                with self._wake:
                    self._wake.notify()
        except Exception:  # noqa: BLE001  # the SDK's rule: never raise into the program
            _LOG.exception("otel-oracles: could not buffer a span")

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Grade every trace whose root has ended (without waiting out ``wait_millis``)
        and flush the emitter; False when that took longer than ``timeout_millis``."""
        deadline = time.monotonic() + timeout_millis / 1000
        if not self._wait_for_flush(deadline):
            return False
        remaining = max(0, int((deadline - time.monotonic()) * 1000))
        return self.emitter.force_flush(remaining)

    def shutdown(self) -> None:
        """Grade what is pending (traces whose root ended), count the rest as evicted,
        stop the worker and shut the emitter down. Safe twice."""
        with self._wake:
            if self._shutdown:
                return
            self._shutdown = True
            self._stopping = True
            self._wake.notify()
        self._worker.join()
        self.emitter.shutdown()

    # ---- what it did -----------------------------------------------------------------

    def stats(self) -> ProcessorStats:
        """The counts so far (see ``ProcessorStats``)."""
        counts = self._buffer.counts
        with self._wake:
            graded, verdicts, errors, failures = (
                self._graded,
                self._verdicts,
                self._errors,
                self._export_failures,
            )
        return ProcessorStats(
            graded_traces=graded,
            verdicts=verdicts,
            pending_traces=len(self._buffer),
            dropped_spans=counts.dropped_spans,
            dropped_traces=counts.dropped_traces,
            late_spans=counts.late_spans,
            evicted_traces=counts.evicted_traces,
            buffered_bytes=counts.buffered_bytes,
            grading_errors=errors,
            export_failures=failures,
        )

    # ---- the worker ------------------------------------------------------------------

    def _wait_for_flush(self, deadline: float) -> bool:
        with self._wake:
            if self._shutdown:
                return True
            self._flush_requested += 1
            ticket = self._flush_requested
            self._wake.notify()
            while self._flush_done < ticket:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._wake.wait(left)
        return True

    def _run(self) -> None:
        while True:
            with self._wake:
                while not (self._stopping or self._flush_done < self._flush_requested):
                    due = self._buffer.next_due()
                    # on_end wakes the worker only for roots; a trace started meanwhile
                    # (whose root may never end) is looked at within one max age.
                    left = self._max_age_s if due is None else due - time.monotonic()
                    if left <= 0:
                        break
                    self._wake.wait(min(left, self._max_age_s))
                stopping = self._stopping
                flush_ticket = self._flush_requested
            taken = self._buffer.take(
                everything_due=flush_ticket > self._flush_done, close=stopping
            )
            self._report_counts(taken.evicted + taken.dropped)
            for pending in taken.ready:
                self._grade(pending)
            with self._wake:
                self._flush_done = max(self._flush_done, flush_ticket)
                self._wake.notify_all()
            if stopping:
                return

    def _report_counts(self, lost: int) -> None:
        """The grader's own metrics: traces lost from the buffer, and late spans since the
        last report (the buffer counts them on the program's threads, which must not wait
        for a meter)."""
        metrics = self.emitter.metrics
        if lost:
            metrics.evicted_traces(lost)
        late = self._buffer.counts.late_spans
        if late > self._late_reported:
            metrics.late_spans(late - self._late_reported)
            self._late_reported = late

    def _grade(self, pending: PendingTrace) -> None:
        try:
            graded: list[tuple[Verdict, Trajectory]] = []
            for trace in sdk_traces(pending.spans, pending.logs):
                graded.extend(self._session.grade(trace))
            result = self.emitter.export(graded) if graded else None
        except Exception:  # noqa: BLE001  # one trace's failure never stops the others
            _LOG.exception("otel-oracles: grading trace %032x failed", pending.trace_id)
            with self._wake:
                self._errors += 1
            return
        with self._wake:
            self._graded += 1
            self._verdicts += len(graded)
            if result is EmitResult.FAILURE:
                self._export_failures += 1


class GradingLogProcessor(LogRecordProcessor):
    """Hands the log records of traced runs (log-based GenAI events: prompts, answers,
    tool results) to a ``GradingSpanProcessor``, so they are graded with their trace's
    spans. Add it to the program's ``LoggerProvider``; records without a trace context
    belong to no run and are ignored. Its ``force_flush`` and ``shutdown`` grade what is
    pending; the span processor's own ``shutdown`` stops the grader."""

    def __init__(self, grader: GradingSpanProcessor) -> None:
        self.grader = grader

    def on_emit(self, log_record: ReadWriteLogRecord) -> None:
        try:
            self.grader._buffer.add_log(log_record)
        except Exception:  # noqa: BLE001  # the SDK's rule: never raise into the program
            _LOG.exception("otel-oracles: could not buffer a log record")

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self.grader.force_flush(timeout_millis)

    def shutdown(self) -> None:
        self.grader.force_flush()
