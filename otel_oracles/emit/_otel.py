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
own resource and instrumentation scope) and hands them to its sinks in batches of
``max_export_batch_size`` before ``export`` returns; spans and log records share that one
batching, counting and back-off path. It never touches the global providers. The package's
sinks encode the records directly (OTLP protobuf sent by ``_transport``, OTLP/JSON lines);
an SDK exporter a user supplies gets the SDK's objects (``_sdk_adapter``). Skipping the
Tracer/Logger (per-value attribute re-validation, span processors) and the SDK objects
matters: emission cost more than grading (docs/performance-history.md, G4).
Metrics go through the emitter's own MeterProvider: they are aggregated, so the periodic
reader cannot drop them, and ``shutdown`` performs the final collection.
"""

from __future__ import annotations

import functools
import logging
import random
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from opentelemetry._logs import SeverityNumber
from opentelemetry.sdk._logs.export import LogRecordExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricExporter, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace.export import SpanExporter
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace.status import StatusCode

from otel_oracles.emit import _names as n
from otel_oracles.emit._base import EmitResult, Emitter, GradedPair
from otel_oracles.emit._explain import error_type, explain, explain_key, safe_identifier
from otel_oracles.emit._metric_export import OwnMetricExporter
from otel_oracles.emit._metrics import GraderMetrics, agent_label, generation_labels
from otel_oracles.emit._records import Attrs, ItemBatch
from otel_oracles.emit._records import EventItem as _EventItem
from otel_oracles.emit._records import LogItem as _LogItem
from otel_oracles.emit._records import SpanItem as _SpanItem
from otel_oracles.emit._resource import grader_resource, grader_version
from otel_oracles.emit._sdk_adapter import SdkExporterSink
from otel_oracles.emit._sinks import RECORD_SIGNALS, SIGNAL_NOUN, RecordSignal, Sink
from otel_oracles.emit.config import (
    GRADE_DURATION_BUCKETS_S,
    EmitSettings,
)
from otel_oracles.model.result import OracleResult, Outcome, Verdict
from otel_oracles.model.step import Trajectory

logger = logging.getLogger(__name__)

_TRACE_ID = re.compile(r"^[0-9a-f]{32}$")
_SPAN_ID = re.compile(r"^[0-9a-f]{16}$")
_SEVERITY: dict[Outcome, tuple[SeverityNumber, str]] = {
    Outcome.PASS: (SeverityNumber.INFO, "INFO"),
    Outcome.TOLERATED: (SeverityNumber.INFO, "INFO"),
    Outcome.INVARIANT_FAILURE: (SeverityNumber.WARN, "WARN"),
    Outcome.BUDGET_EXHAUSTED: (SeverityNumber.WARN, "WARN"),
    Outcome.MISSING_EVIDENCE: (SeverityNumber.WARN, "WARN"),
    Outcome.ERROR: (SeverityNumber.ERROR, "ERROR"),
}
"""Failing checks are WARN so a log query for ``severity >= WARN`` finds them; a check that
itself crashed is ERROR (a harness problem)."""
_MAX_LIST_ATTRIBUTE = 16
_PASSING = frozenset({Outcome.PASS, Outcome.TOLERATED})
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
    objects built from the same records; ``metric_exporters`` get the metrics through the
    emitter's own ``MeterProvider``.

    Thread-safe: ``export`` calls are serialized (emission is CPU-bound Python; a lock is
    cheaper than the coordination a queue would need). ``export`` blocks for the network
    round trips of its batches; each sender's timeout (``OTEL_EXPORTER_OTLP_TIMEOUT``)
    bounds them, and a sink that failed a signal gets none of it for ``retry_after_seconds``.
    """

    def __init__(
        self,
        *,
        sinks: Sequence[Sink] = (),
        span_exporters: Sequence[SpanExporter] = (),
        log_exporters: Sequence[LogRecordExporter] = (),
        metric_exporters: Sequence[MetricExporter] = (),
        settings: EmitSettings | None = None,
        resource: Resource | None = None,
        destination: str = "",
    ) -> None:
        self.settings = settings or EmitSettings()
        self.destination = destination
        """Where the telemetry goes, for messages (e.g. ``OTLP grpc http://collector:4317``)."""
        self.stats = EmitStats()
        self.resource = resource or grader_resource()
        self._lock = threading.Lock()
        self._shutdown = False
        supplied: list[SpanExporter | LogRecordExporter] = [*span_exporters, *log_exporters]
        self._sinks: tuple[Sink, ...] = (*sinks, *(SdkExporterSink(e) for e in supplied))
        self._down_until: dict[tuple[int, RecordSignal], float] = {}
        """(id(sink), signal) -> monotonic time before which it gets no batches (it failed)."""
        self._pending: dict[RecordSignal, list[Any]] = {signal: [] for signal in RECORD_SIGNALS}
        release = grader_version()
        self._scope = InstrumentationScope(n.INSTRUMENTATION_SCOPE, release)
        self._random = random.Random()
        self._shared: dict[tuple[Any, ...], _Shared] = {}
        """Per (check, outcome, explanation): the attribute runs of both event forms."""
        self._contract_attrs: dict[tuple[Any, ...], tuple[Attrs]] = {}
        self._last_labels: tuple[Trajectory | None, tuple[str | None, str | None]] | None = None
        chosen = metric_exporters if self.settings.metrics else ()
        for exporter in chosen:
            if isinstance(exporter, OwnMetricExporter):
                exporter.on_failure = self._metric_export_failed
        readers = [PeriodicExportingMetricReader(e) for e in chosen]
        self._meter_provider = MeterProvider(
            metric_readers=readers, resource=self.resource, shutdown_on_exit=False
        )
        self._metrics = (
            GraderMetrics(
                self._meter_provider.get_meter(n.INSTRUMENTATION_SCOPE, release),
                GRADE_DURATION_BUCKETS_S,
            )
            if readers
            else GraderMetrics.noop()
        )

    def _metric_export_failed(self, exporter: str) -> None:
        """Counts a failed metric export (the periodic reader would only log it)."""
        with self._lock:
            self.stats.metric_exports_failed += 1
            self.stats.note_error(f"metrics: export via {exporter} failed")

    @property
    def metrics(self) -> GraderMetrics:
        return self._metrics

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
            ok = True
            batch = self.settings.max_export_batch_size
            tally = self._metrics.tally() if self.settings.metrics else None
            spans, logs = self._pending["traces"], self._pending["logs"]
            for verdict, trajectory in results:
                self._emit_one(verdict, trajectory)
                if tally is not None:
                    tally.add(verdict, trajectory)
                if len(spans) >= batch:
                    ok &= self._ship("traces")
                if len(logs) >= batch:
                    ok &= self._ship("logs")
            self._last_labels = None  # holds no trajectory between calls
            if tally is not None:
                tally.flush()
            for signal in RECORD_SIGNALS:
                ok &= self._ship(signal)
        return EmitResult.SUCCESS if ok else EmitResult.FAILURE

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Spans and logs never wait; this pushes out the metrics collected so far."""
        if self._shutdown:
            return False
        return self._meter_provider.force_flush(timeout_millis)

    def shutdown(self) -> None:
        with self._lock:
            if self._shutdown:
                return
            self._shutdown = True
        # The meter provider's shutdown collects and exports the final metric values.
        self._meter_provider.shutdown()
        for sink in self._sinks:
            try:
                sink.shutdown()
            except Exception:
                logger.exception("%s failed to shut down", sink.name)

    # ---- building telemetry --------------------------------------------------------------

    def _emit_one(self, verdict: Verdict, trajectory: Trajectory | None) -> None:
        now = time.time_ns()
        s = self.settings
        checks = (
            [self._check(verdict, r) for r in verdict.results]
            if s.log_events or (s.grade_span and s.span_events)
            else []
        )
        if s.grade_span:
            self._emit_grade_span(verdict, trajectory, now, checks)
        if s.log_events:
            self._emit_log_events(verdict, now, checks)

    def _check(self, verdict: Verdict, result: OracleResult) -> _Check:
        """The ``gen_ai.evaluation.result`` attributes of one check, shared by the span and
        log forms: one run shared by every result with the same check, outcome and
        explanation (contract, name, type, layer, score, outcome, explanation), plus the
        result's own few values (budget numbers, step indexes, span ids)."""
        mode = self.settings.explain
        # Keyed by what the explanation depends on when it is a cached template (no need to
        # render it again), else by the text itself.
        ekey = explain_key(result, mode)
        explanation = explain(result, mode) if ekey is None else None
        key: tuple[Any, ...] = (
            verdict.contract_id,
            verdict.contract_version,
            verdict.contract_hash,
            result.layer,
            result.passed,
            ekey,
            explanation,
        )
        if ekey is None:  # ekey names the check, outcome and error type; the text does not
            error = error_type(result) if result.outcome is Outcome.ERROR else None
            key += (result.name, result.oracle_type, result.outcome, error)
        shared = self._shared.get(key)
        if shared is None:
            if explanation is None:
                explanation = explain(result, mode)
            shared = self._shared_check(verdict, result, explanation)
            if len(self._shared) >= _MAX_SHARED:  # explanations repeat (templates)
                self._shared.clear()
            self._shared[key] = shared
        extra: dict[str, Any] | None = None
        if result.layer == "tolerance" or result.budget is not None:
            extra = {n.BUDGET_USED: result.used}
            if result.budget is not None:
                extra[n.BUDGET_LIMIT] = result.budget
        if result.step_indexes:
            extra = extra or {}
            extra[n.STEP_INDEXES] = list(result.step_indexes[:_MAX_LIST_ATTRIBUTE])
        pointed = None
        if result.span_ids:
            span_ids = [s for s in result.span_ids[:_MAX_LIST_ATTRIBUTE] if _SPAN_ID.match(s)]
            if span_ids:
                extra = extra or {}
                extra[n.EVALUATED_SPAN_IDS] = span_ids
                pointed = span_ids[0]
            elif len(result.span_ids) > _MAX_LIST_ATTRIBUTE:
                pointed = next(
                    (s for s in result.span_ids[_MAX_LIST_ATTRIBUTE:] if _SPAN_ID.match(s)), None
                )
        return _Check(shared, extra, pointed)

    @staticmethod
    def _shared_check(verdict: Verdict, result: OracleResult, explanation: str) -> _Shared:
        outcome = result.outcome
        log = {n.EVALUATION_NAME: result.name, **_contract_attributes(verdict)}
        log[n.ORACLE_TYPE] = result.oracle_type
        log[n.LAYER] = result.layer
        scored = {
            n.EVALUATION_SCORE_VALUE: 1.0 if outcome in _PASSING else 0.0,
            n.EVALUATION_SCORE_LABEL: outcome.value,
            n.EVALUATION_EXPLANATION: explanation,
        }
        # Span events carry only the gen_ai.evaluation.* core (and error.type): the
        # contract attributes are on the span itself, and the log form carries the full set.
        event = {n.EVALUATION_NAME: result.name, **scored}
        log.update(scored)
        log[n.OUTCOME] = outcome.value
        log[n.PASSED] = result.passed
        if outcome is Outcome.ERROR:
            log[n.ERROR_TYPE] = event[n.ERROR_TYPE] = error_type(result)
        severity, severity_text = _SEVERITY[outcome]
        return _Shared((Attrs(log),), (Attrs(event),), severity, severity_text)

    def _labels(self, trajectory: Trajectory | None) -> tuple[str | None, str | None]:
        """``generation_labels`` of the trajectory, kept for the next verdict: a trace's
        verdicts (one per contract) arrive together and share their trajectory."""
        last = self._last_labels
        if last is not None and last[0] is trajectory:
            return last[1]
        labels = generation_labels(trajectory)
        self._last_labels = (trajectory, labels)
        return labels

    def _emit_grade_span(
        self,
        verdict: Verdict,
        trajectory: Trajectory | None,
        now: int,
        checks: list[_Check],
    ) -> None:
        c = verdict.counts
        ckey = (verdict.contract_id, verdict.contract_version, verdict.contract_hash)
        contract = self._contract_attrs.get(ckey)
        if contract is None:
            contract = (Attrs(_contract_attributes(verdict)),)
            if len(self._contract_attrs) >= _MAX_SHARED:
                self._contract_attrs.clear()
            self._contract_attrs[ckey] = contract
        attrs: dict[str, Any] = {
            n.VERDICT: verdict.verdict,
            n.CHECKS: len(verdict.results),
            n.INVARIANT_FAILURES: c.invariant_failures,
            n.TOLERATED_FAILURES: c.tolerated_failures,
            n.BUDGET_EXHAUSTED: c.budget_exhausted,
            n.MISSING_EVIDENCE: c.missing_evidence,
            n.ERRORS: c.errors,
        }
        agent = agent_label(verdict, trajectory)
        if agent:
            attrs[n.AGENT_NAME] = agent
        provider, model = self._labels(trajectory)
        if provider:
            attrs[n.PROVIDER_NAME] = provider
        if model:
            attrs[n.REQUEST_MODEL] = model
        parent = _ids(verdict.trace_id, verdict.root_span_id or _any_span_id(verdict))
        if parent is None:
            subject = safe_identifier(PurePath(verdict.subject).name)
            if subject:
                attrs[n.SUBJECT] = subject
            trace_id = self._random.getrandbits(128) or 1
            parent_id = None
        else:
            trace_id, parent_id = parent
        event = n.EVALUATION_EVENT
        events = (
            [_EventItem(event, now, check.shared.event) for check in checks]
            if self.settings.span_events
            else []
        )
        failed = verdict.verdict != "pass"
        self._pending["traces"].append(
            _SpanItem(
                trace_id=trace_id,
                span_id=self._random.getrandbits(64) or 1,
                parent_id=parent_id,
                name=f"{n.GRADE_SPAN_PREFIX} {verdict.contract_id}",
                start=now - max(0, verdict.duration_ns),
                end=now,
                chunks=contract,
                extra=attrs,
                events=events,
                status_code=StatusCode.ERROR.value if failed else StatusCode.UNSET.value,
                status_message=_status_text(verdict) if failed else None,
            )
        )

    def _emit_log_events(self, verdict: Verdict, now: int, checks: list[_Check]) -> None:
        ids: dict[str | None, tuple[int, int]] = {}
        append = self._pending["logs"].append
        event = n.EVALUATION_EVENT
        for check in checks:
            span_id = check.span_id or verdict.root_span_id
            pair = ids.get(span_id)
            if pair is None:
                pair = ids[span_id] = _ids(verdict.trace_id, span_id) or (0, 0)
            shared = check.shared
            append(
                _LogItem(
                    now,
                    pair[0],
                    pair[1],
                    shared.severity,
                    shared.severity_text,
                    event,
                    shared.log,
                    check.extra,
                )
            )

    # ---- shipping ------------------------------------------------------------------------

    def _ship(self, signal: RecordSignal) -> bool:
        """Hand the pending records of ``signal`` to every sink that takes it. A sink that
        failed gets no batches of that signal for ``retry_after_seconds`` (they are counted
        as not delivered): a dead endpoint then costs one timeout, not one per batch."""
        pending = self._pending[signal]
        if not pending:
            return True
        batch = ItemBatch(list(pending), self.resource, self._scope)
        pending.clear()
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
                    delivered = sink.export(signal, batch)
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
            self._count(signal, len(batch), delivered)
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


class _Shared:
    """What every result with the same check, outcome and explanation emits alike."""

    __slots__ = ("event", "log", "severity", "severity_text")

    def __init__(
        self,
        log: tuple[Attrs],
        event: tuple[Attrs],
        severity: SeverityNumber,
        severity_text: str,
    ) -> None:
        self.log = log
        self.event = event
        self.severity = severity
        self.severity_text = severity_text


class _Check:
    """One result: its shared run, its own attributes, the span it points at."""

    __slots__ = ("extra", "shared", "span_id")

    def __init__(self, shared: _Shared, extra: dict[str, Any] | None, span_id: str | None) -> None:
        self.shared = shared
        self.extra = extra
        self.span_id = span_id


def _contract_attributes(verdict: Verdict) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        n.CONTRACT_ID: verdict.contract_id,
        n.CONTRACT_VERSION: verdict.contract_version,
    }
    if verdict.contract_hash:
        attrs[n.CONTRACT_HASH] = verdict.contract_hash
    return attrs


def _any_span_id(verdict: Verdict) -> str | None:
    """A parent when the trace had no root span: the first span a result points at."""
    for r in verdict.results:
        for s in r.span_ids:
            if _SPAN_ID.match(s):
                return s
    return None


@functools.lru_cache(maxsize=4096)
def _ids(trace_id: str | None, span_id: str | None) -> tuple[int, int] | None:
    """The graded span's ids (a remote, sampled parent), or None when they are unusable
    (an AgentBench trajectory has none: the grade span then starts its own trace). Cached:
    a trace's verdicts and results point at the same few spans."""
    if not trace_id or not span_id:
        return None
    t, s = trace_id.lower(), span_id.lower()
    if not _TRACE_ID.match(t) or not _SPAN_ID.match(s):
        return None
    ti, si = int(t, 16), int(s, 16)
    return (ti, si) if ti and si else None


def _status_text(verdict: Verdict) -> str:
    """``fail: invariant_failures=1, missing_evidence=2``: the non-zero numbers."""
    c = verdict.counts
    parts = [
        f"{label}={count}"
        for label, count in (
            ("invariant_failures", c.invariant_failures),
            ("budget_exhausted", c.budget_exhausted),
            ("missing_evidence", c.missing_evidence),
            ("errors", c.errors),
        )
        if count
    ]
    return f"{verdict.verdict}: " + ", ".join(parts) if parts else verdict.verdict
