"""Verdicts as OpenTelemetry: grade spans, evaluation events (span and log forms), metrics.

For each graded trace (see docs/telemetry.md for examples):

- one **grade span** ``grade {contract id}`` in the graded trace, child of its root span,
  carrying contract id/version/hash, the verdict and the four numbers;
- one ``gen_ai.evaluation.result`` **span event** per check on that span;
- one ``gen_ai.evaluation.result`` **log record** per check whose trace/span ids point at the
  evaluated span (the offending span, else the root span);
- **metrics** with low-cardinality attributes (``GraderMetrics``).

Why spans and logs are exported synchronously: the SDK's batch processors drop work when
their queue is full (a tight loop dropped about half its spans in our measurements), and
an evaluation pipeline must not lose results. The emitter builds its records itself
(``_records``: slotted records whose attributes are runs shared across verdicts, with its
own resource and instrumentation scope), all of a run of verdicts in one call to the core
(``VerdictRecords``, ``native/python/src/emit_records.rs``: it was the larger part of
emitting in Python, a few objects and lookups per check), and hands them to its sinks in batches of
``max_export_batch_size`` before ``export`` returns; spans and log records share that one
batching, counting and back-off path. It never touches the global providers. The package's
sinks encode the records directly (OTLP protobuf sent by ``_transport``, OTLP/JSON lines);
an SDK exporter a user supplies gets the SDK's objects (``_sdk_adapter``). When every sink
is an ``OtlpSink`` (``grade --export otlp``, ``serve``), the core writes each verdict's
records straight into the pending OTLP protobuf requests (``ProtoRequest``), the same bytes
the encoder makes of the records, with no record object per check. Skipping the
Tracer/Logger (per-value attribute re-validation, span processors) and the SDK objects
matters: emission cost more than grading (docs/performance-history.md, G4).
Metrics are aggregated by the grader itself (``GraderMetrics``, no meter provider), so no
queue can drop them, and each metric exporter's reader (``_metric_export.MetricReader``)
hands it a collection on the interval, on ``force_flush`` and a last one at ``shutdown``.
The verdict metrics are counted by the core (``GradeTally``), by the record builder as it
builds each verdict's records (from the fields and labels it read for them); an SDK metric
exporter a caller supplies gets the SDK's data classes (``SuppliedMetricExporter``:
cumulative unless the temporality preference variable says otherwise).
"""

from __future__ import annotations

import gc
import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from otel_oracles._native import ProtoRequest, VerdictRecords
from otel_oracles.emit import _names as n
from otel_oracles.emit._base import EmitResult, Emitter, GradedPair
from otel_oracles.emit._explain import SHOWN_FILTER, explain, safe_identifier
from otel_oracles.emit._metric_export import MetricReader, OwnMetricExporter, reader_for
from otel_oracles.emit._metrics import LABELS, GraderMetrics
from otel_oracles.emit._records import Attrs, EventItem, ItemBatch, LogItem, Severity, SpanItem
from otel_oracles.emit._resource import GraderResource, grader_record, grader_scope, record_of
from otel_oracles.emit._sinks import RECORD_SIGNALS, SIGNAL_NOUN, OtlpSink, RecordSignal, Sink
from otel_oracles.emit.config import (
    GRADE_DURATION_BUCKETS_S,
    EmitSettings,
)
from otel_oracles.model.result import Outcome

if TYPE_CHECKING:
    from opentelemetry.sdk._logs.export import LogRecordExporter
    from opentelemetry.sdk.metrics.export import MetricExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace.export import SpanExporter

logger = logging.getLogger(__name__)

_SEVERITY: dict[Outcome, tuple[Severity, str]] = {
    Outcome.PASS: (Severity.INFO, "INFO"),
    Outcome.TOLERATED: (Severity.INFO, "INFO"),
    Outcome.INVARIANT_FAILURE: (Severity.WARN, "WARN"),
    Outcome.BUDGET_EXHAUSTED: (Severity.WARN, "WARN"),
    Outcome.MISSING_EVIDENCE: (Severity.WARN, "WARN"),
    Outcome.ERROR: (Severity.ERROR, "ERROR"),
}
"""Failing checks are WARN so a log query for ``severity >= WARN`` finds them; a check that
itself crashed is ERROR (a harness problem)."""
_MAX_LIST_ATTRIBUTE = 16
_MAX_SHARED = 4096
"""Bound of each cache of shared attribute runs."""


@dataclass
class EmitStats:
    """What happened to the emitted telemetry, for reports and warnings."""

    spans_exported: int = 0
    spans_failed: int = 0
    log_records_exported: int = 0
    log_records_failed: int = 0
    metric_exports_failed: int = 0
    rejected_after_shutdown: int = 0
    errors: list[str] = field(default_factory=list)
    """One line per failed destination and signal (deduplicated, in order)."""

    @property
    def ok(self) -> bool:
        return not (
            self.spans_failed
            or self.log_records_failed
            or self.metric_exports_failed
            or self.rejected_after_shutdown
        )

    def note_error(self, message: str) -> None:
        if message not in self.errors:
            self.errors.append(message)


class OtelEmitter(Emitter):
    """Emits verdicts as OpenTelemetry to the given sinks and exporters.

    ``sinks`` are the package's own destinations (``build_emitter`` makes them);
    ``span_exporters`` / ``log_exporters`` are SDK exporters a caller supplies, fed SDK
    objects built from the same records; ``metric_exporters`` (the package's
    ``OwnMetricExporter``s, or SDK exporters, wrapped in a ``SuppliedMetricExporter``:
    cumulative unless ``OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`` says otherwise)
    get the metrics from a reader each (``MetricReader``), their failed exports counted in
    ``stats``.

    Thread-safe: ``export`` calls are serialized (emission is CPU-bound Python; a lock is
    cheaper than the coordination a queue would need). ``export`` blocks for the network
    round trips of its batches; each sender's timeout (``OTEL_EXPORTER_OTLP_TIMEOUT``)
    bounds them, and a sink that failed a signal gets none of it for ``retry_after_seconds``.

    ``pause_collector``: each ``export`` runs with the cyclic collector off (as the caller
    had it after). A call's records (an object or two per check, its dicts and lists) are
    all freed by reference counting before it returns, every signal shipped: the
    collections their allocations started found nothing of theirs to free and rescanned
    the caller's heap each time (docs/performance-history.md, "Emission: a call's records
    built with the collector paused"). For a program that owns its collector (``grade``):
    the pause is process-wide and lasts the network round trips too, up to a sender's
    timeout, so a host of other threads (an application's in-process processor, ``serve``'s
    receiver) leaves it off.
    """

    def __init__(
        self,
        *,
        sinks: Sequence[Sink] = (),
        span_exporters: Sequence[SpanExporter] = (),
        log_exporters: Sequence[LogRecordExporter] = (),
        metric_exporters: Sequence[OwnMetricExporter | MetricExporter] = (),
        settings: EmitSettings | None = None,
        resource: Resource | None = None,
        destination: str = "",
        pause_collector: bool = False,
    ) -> None:
        self.settings = settings or EmitSettings()
        self._pause_collector = pause_collector
        self.destination = destination
        """Where the telemetry goes, for messages (e.g. ``OTLP grpc http://collector:4317``)."""
        self.stats = EmitStats()
        self.resource: GraderResource = grader_record() if resource is None else record_of(resource)
        """The package's own record of the resource (``_resource``), as the sinks read it."""
        self._lock = threading.Lock()
        self._shutdown = False
        supplied: list[SpanExporter | LogRecordExporter] = [*span_exporters, *log_exporters]
        self._sinks: tuple[Sink, ...] = tuple(sinks)
        if supplied:
            # The SDK's trace and logs modules, only for a caller's own exporters: the
            # package's sinks encode the records themselves, and those imports were ~6% of
            # an OTLP export's fixed cost.
            from otel_oracles.emit._sdk_adapter import SdkExporterSink

            self._sinks += tuple(SdkExporterSink(e) for e in supplied)
        self._down_until: dict[tuple[int, RecordSignal], float] = {}
        """(id(sink), signal) -> monotonic time before which it gets no batches (it failed)."""
        self._pending: dict[RecordSignal, list[Any] | ProtoRequest]
        """Records not yet shipped: items, or (every sink an ``OtlpSink``) the requests the
        core writes them into, each verdict's without an item per check."""
        if self._sinks and all(isinstance(sink, OtlpSink) for sink in self._sinks):
            batch = self.settings.max_export_batch_size
            self._pending = {signal: ProtoRequest(batch) for signal in RECORD_SIGNALS}
        else:
            self._pending = {signal: [] for signal in RECORD_SIGNALS}
        self._scope = grader_scope()
        s = self.settings
        self._builder = VerdictRecords(
            n,
            (Attrs, SpanItem, EventItem, LogItem),
            (SHOWN_FILTER, explain, LABELS, _subject_label),
            _SEVERITY,
            [Outcome.PASS, Outcome.TOLERATED],
            Outcome.ERROR,
            s.explain,
            (s.grade_span, s.span_events, s.log_events),
            _MAX_LIST_ATTRIBUTE,
            _MAX_SHARED,
            random.SystemRandom().getrandbits(64),
        )
        """Builds the grade spans and log records (the core, ``emit_records.rs``)."""
        chosen = metric_exporters if self.settings.metrics else ()
        self._metrics = GraderMetrics(GRADE_DURATION_BUCKETS_S) if chosen else GraderMetrics.noop()
        self._readers: list[MetricReader] = []
        for exporter in chosen:
            reader = reader_for(exporter, self._metrics, self.resource, self._scope)
            reader.exporter.on_failure = self._metric_export_failed
            self._readers.append(reader)

    def _metric_export_failed(self, exporter: str) -> None:
        """Counts a failed metric export (the periodic reader would only log it)."""
        with self._lock:
            self.stats.metric_exports_failed += 1
            self.stats.note_error(f"metrics: export via {exporter} failed")

    @property
    def metrics(self) -> GraderMetrics:
        return self._metrics

    @property
    def reads_labels_only(self) -> bool:
        """The records (``VerdictRecords``) and the tally read a trajectory's labels only."""
        return True

    def delivery_warning(self, detail: str = "") -> str | None:
        """One line saying what was not delivered and where, or None when everything was.
        Meant for the end of a run (after ``shutdown``, which pushes the last metrics).
        ``detail`` (e.g. the first exporter error) replaces the pointer to the log."""
        st = self.stats
        if st.ok:
            return None
        lost = [
            f"{count} {what}"
            for count, what in (
                (st.spans_failed, "grade spans"),
                (st.log_records_failed, "evaluation log records"),
                (st.metric_exports_failed, "metric exports"),
                (st.rejected_after_shutdown, "verdicts after shutdown"),
            )
            if count
        ]
        return (
            f"results not delivered to {self.destination or 'the exporters'}: "
            f"{', '.join(lost)} ({detail or 'see the log for the exporter errors'})"
        )

    # ---- the seam ------------------------------------------------------------------------

    def export(self, results: Sequence[GradedPair]) -> EmitResult:
        with self._lock:
            if self._shutdown:
                self.stats.rejected_after_shutdown += len(results)
                logger.warning("export after shutdown: %d verdicts not emitted", len(results))
                return EmitResult.FAILURE
            collecting = self._pause_collector and gc.isenabled()  # see the class's text
            if collecting:
                gc.disable()
            try:
                return self._export(results)
            finally:
                if collecting:
                    gc.enable()

    def _export(self, results: Sequence[GradedPair]) -> EmitResult:
        """``export`` under the lock (the collector paused when asked for)."""
        ok = True
        batch = self.settings.max_export_batch_size
        tally = self._metrics.tally() if self.settings.metrics else None
        # The builder counts each verdict in the tally as it builds its records, from the
        # fields and labels it read for them.
        counter = tally.core if tally is not None else None
        spans, logs = self._pending["traces"], self._pending["logs"]
        pairs = results if type(results) is list else list(results)
        at = 0
        while at < len(pairs):
            at = self._builder.build(pairs, at, spans, logs, batch, counter)
            if len(spans) >= batch:
                ok &= self._ship("traces")
            if len(logs) >= batch:
                ok &= self._ship("logs")
        if tally is not None:
            tally.flush()
        for signal in RECORD_SIGNALS:
            ok &= self._ship(signal)
        return EmitResult.SUCCESS if ok else EmitResult.FAILURE

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Spans and logs never wait; this pushes out the metrics collected so far."""
        if self._shutdown:
            return False
        deadline = time.monotonic() + timeout_millis / 1000
        ok = True
        for reader in self._readers:
            left = deadline - time.monotonic()
            ok = left > 0 and reader.force_flush(left) and ok
        return ok

    def shutdown(self) -> None:
        with self._lock:
            if self._shutdown:
                return
            self._shutdown = True
        # Each reader's shutdown collects and exports the final metric values.
        for reader in self._readers:
            try:
                reader.shutdown()
            except Exception:
                logger.exception("%s failed to shut down", type(reader.exporter).__name__)
        for sink in self._sinks:
            try:
                sink.shutdown()
            except Exception:
                logger.exception("%s failed to shut down", sink.name)

    # ---- shipping ------------------------------------------------------------------------

    def _ship(self, signal: RecordSignal) -> bool:
        """Hand the pending records of ``signal`` to every sink that takes it. A sink that
        failed gets no batches of that signal for ``retry_after_seconds`` (they are counted
        as not delivered): a dead endpoint then costs one timeout, not one per batch."""
        pending = self._pending[signal]
        count = len(pending)
        if not count:
            return True
        deliver: Callable[[Sink], bool]
        if isinstance(pending, ProtoRequest):
            request = pending.take(self.resource, self._scope)

            def deliver(sink: Sink) -> bool:
                assert isinstance(sink, OtlpSink)  # the only sinks of a ProtoRequest
                return sink.send(signal, request)

        else:
            batch = ItemBatch(list(pending), self.resource, self._scope)
            pending.clear()

            def deliver(sink: Sink) -> bool:
                return sink.export(signal, batch)

        what = SIGNAL_NOUN[signal]
        ok = True
        now = time.monotonic()
        for sink in self._sinks:
            if not sink.accepts(signal):
                continue
            key = (id(sink), signal)
            delivered = False
            if now >= self._down_until.get(key, 0.0):
                try:
                    delivered = deliver(sink)
                except Exception:
                    logger.exception("exporting %s via %s raised", what, sink.name)
                if not delivered:
                    self._down_until[key] = time.monotonic() + self.settings.retry_after_seconds
            if not delivered:
                ok = False
                self.stats.note_error(
                    f"{what}: export via {sink.name} to "
                    f"{self.destination or 'its destination'} failed"
                )
            self._count(signal, count, delivered)
        return ok

    def _count(self, signal: RecordSignal, count: int, delivered: bool) -> None:
        if signal == "traces":
            if delivered:
                self.stats.spans_exported += count
            else:
                self.stats.spans_failed += count
        elif delivered:
            self.stats.log_records_exported += count
        else:
            self.stats.log_records_failed += count


def _subject_label(subject: str) -> str | None:
    """The ``otel_oracles.subject`` of a grade span that starts its own trace: the graded
    file's name when it is a safe identifier."""
    return safe_identifier(PurePath(subject).name)
