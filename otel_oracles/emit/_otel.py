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
an evaluation pipeline must not lose results. The emitter builds the SDK's export records
(``ReadableSpan``, ``Event``, ``ReadableLogRecord``) itself, with its own resource and
instrumentation scope, and hands them to the OTLP exporters in batches of
``max_export_batch_size`` before ``export`` returns. It never touches the global providers.
Building the records directly instead of through a Tracer/Logger skips the per-value
attribute re-validation and span-processor machinery, which cost more than the grading
itself (see docs/telemetry.md, "Cost"); the attributes are built here from typed values.
Metrics go through the emitter's own MeterProvider: they are aggregated, so the periodic
reader cannot drop them, and ``shutdown`` performs the final collection.
"""

from __future__ import annotations

import functools
import logging
import os
import random
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, TypeVar

from opentelemetry import trace
from opentelemetry._logs import LogRecord, SeverityNumber
from opentelemetry.context import Context
from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    MetricExporter,
    MetricExportResult,
    MetricsData,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import INVALID_SPAN, NonRecordingSpan, SpanContext, SpanKind, TraceFlags
from opentelemetry.trace.status import Status, StatusCode

from otel_oracles.emit import _names as n
from otel_oracles.emit._base import EmitResult, Emitter, GradedPair
from otel_oracles.emit._explain import error_type, explain, safe_identifier
from otel_oracles.emit._metrics import GraderMetrics, generation_labels
from otel_oracles.emit.config import (
    DEFAULT_SERVICE_NAME,
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
_SAMPLED = TraceFlags(TraceFlags.SAMPLED)
_UNSET = Status(StatusCode.UNSET)
_PASSING = frozenset({Outcome.PASS, Outcome.TOLERATED})
_SPAN_EVENT_KEYS = (
    n.EVALUATION_NAME,
    n.EVALUATION_SCORE_VALUE,
    n.EVALUATION_SCORE_LABEL,
    n.EVALUATION_EXPLANATION,
    n.ERROR_TYPE,
)

T = TypeVar("T")


def _version() -> str:
    from otel_oracles import __version__  # late: the package imports emit

    return __version__


def grader_resource() -> Resource:
    """The SDK's resource (``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_SERVICE_NAME``, telemetry.sdk.*)
    with ``service.name`` defaulting to ``otel-oracles`` instead of ``unknown_service``."""
    detected = Resource.create({})
    attrs = dict(detected.attributes)
    if str(attrs.get("service.name", "")).startswith("unknown_service"):
        attrs["service.name"] = DEFAULT_SERVICE_NAME
    attrs.setdefault("service.version", _version())
    return Resource(attrs, detected.schema_url)


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


class _WatchedMetricExporter(MetricExporter):
    """Delegates to a real metric exporter and counts its failures, which the periodic
    reader would otherwise only log."""

    def __init__(self, inner: MetricExporter, stats: EmitStats, lock: threading.Lock) -> None:
        super().__init__(
            preferred_temporality=inner._preferred_temporality,
            preferred_aggregation=inner._preferred_aggregation,
        )
        self._inner = inner
        self._stats = stats
        self._lock = lock

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        try:
            result = self._inner.export(metrics_data, timeout_millis=timeout_millis, **kwargs)
        except Exception:
            logger.exception("metric exporter %s raised", type(self._inner).__name__)
            result = MetricExportResult.FAILURE
        if result is MetricExportResult.FAILURE:
            with self._lock:
                self._stats.metric_exports_failed += 1
                self._stats.note_error(f"metrics: export via {type(self._inner).__name__} failed")
        return result

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return self._inner.force_flush(timeout_millis)

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        self._inner.shutdown(timeout_millis=timeout_millis, **kwargs)


class OtelEmitter(Emitter):
    """Emits verdicts through the OpenTelemetry SDK to the given exporters.

    Thread-safe: ``export`` calls are serialized (emission is CPU-bound Python; a lock is
    cheaper than the coordination a queue would need). ``export`` blocks for the network
    round trips of its batches; each exporter's own timeout (``OTEL_EXPORTER_OTLP_TIMEOUT``)
    bounds them, and a failed exporter is skipped for ``retry_after_seconds``.
    """

    def __init__(
        self,
        *,
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
        self._span_exporters = tuple(span_exporters)
        self._down_until: dict[int, float] = {}
        """id(exporter) -> monotonic time before which it gets no batches (it failed)."""
        self._log_exporters = tuple(log_exporters)
        self._pending_spans: list[ReadableSpan] = []
        self._pending_logs: list[ReadableLogRecord] = []
        version = _version()
        self._scope = InstrumentationScope(n.INSTRUMENTATION_SCOPE, version)
        self._random = random.Random()
        self._static_attrs: dict[tuple[Any, ...], dict[str, Any]] = {}
        """Per-check attributes that never change (contract, name, type, layer), built once."""
        readers = [
            PeriodicExportingMetricReader(_WatchedMetricExporter(e, self.stats, self._lock))
            for e in (metric_exporters if self.settings.metrics else ())
        ]
        self._meter_provider = MeterProvider(
            metric_readers=readers, resource=self.resource, shutdown_on_exit=False
        )
        self._metrics = (
            GraderMetrics(
                self._meter_provider.get_meter(n.INSTRUMENTATION_SCOPE, version),
                GRADE_DURATION_BUCKETS_S,
            )
            if readers
            else GraderMetrics.noop()
        )

    @property
    def metrics(self) -> GraderMetrics:
        return self._metrics

    def delivery_warning(self) -> str | None:
        """One line saying what was not delivered and where, or None when everything was.
        Meant for the end of a run (after ``shutdown``, which pushes the last metrics)."""
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
            f"{', '.join(lost)} (see the log for the exporter errors)"
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
            for verdict, trajectory in results:
                self._emit_one(verdict, trajectory)
                if tally is not None:
                    tally.add(verdict, trajectory)
                if len(self._pending_spans) >= batch:
                    ok &= self._ship_spans()
                if len(self._pending_logs) >= batch:
                    ok &= self._ship_logs()
            if tally is not None:
                tally.flush()
            ok &= self._ship_spans()
            ok &= self._ship_logs()
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
        exporters: list[SpanExporter | LogRecordExporter] = [
            *self._span_exporters,
            *self._log_exporters,
        ]
        for exporter in exporters:
            try:
                exporter.shutdown()
            except Exception:
                logger.exception("exporter %s failed to shut down", type(exporter).__name__)

    # ---- building telemetry --------------------------------------------------------------

    def _emit_one(self, verdict: Verdict, trajectory: Trajectory | None) -> None:
        now = time.time_ns()
        s = self.settings
        events = [
            (r, self._event_attributes(verdict, r))
            for r in verdict.results
            if s.log_events or (s.grade_span and s.span_events)
        ]
        if s.grade_span:
            self._emit_grade_span(verdict, trajectory, now, events)
        if s.log_events:
            self._emit_log_events(verdict, now, events)

    def _event_attributes(self, verdict: Verdict, result: OracleResult) -> dict[str, Any]:
        """The ``gen_ai.evaluation.result`` attributes, shared by the span and log forms."""
        key = (
            verdict.contract_id,
            verdict.contract_version,
            verdict.contract_hash,
            result.name,
            result.oracle_type,
            result.layer,
        )
        static = self._static_attrs.get(key)
        if static is None:
            static = {n.EVALUATION_NAME: result.name, **_contract_attributes(verdict)}
            static[n.ORACLE_TYPE] = result.oracle_type
            static[n.LAYER] = result.layer
            if len(self._static_attrs) < 4096:  # bounded: contracts x checks in practice
                self._static_attrs[key] = static
        outcome = result.outcome
        attrs = {
            **static,
            n.EVALUATION_SCORE_VALUE: 1.0 if outcome in _PASSING else 0.0,
            n.EVALUATION_SCORE_LABEL: outcome.value,
            n.EVALUATION_EXPLANATION: explain(result, self.settings.explain),
            n.OUTCOME: outcome.value,
            n.PASSED: result.passed,
        }
        if outcome is Outcome.ERROR:
            attrs[n.ERROR_TYPE] = error_type(result)
        if result.layer == "tolerance" or result.budget is not None:
            attrs[n.BUDGET_USED] = result.used
            if result.budget is not None:
                attrs[n.BUDGET_LIMIT] = result.budget
        if result.step_indexes:
            attrs[n.STEP_INDEXES] = list(result.step_indexes[:_MAX_LIST_ATTRIBUTE])
        if result.span_ids:
            span_ids = [s for s in result.span_ids[:_MAX_LIST_ATTRIBUTE] if _SPAN_ID.match(s)]
            if span_ids:
                attrs[n.EVALUATED_SPAN_IDS] = span_ids
        return attrs

    def _emit_grade_span(
        self,
        verdict: Verdict,
        trajectory: Trajectory | None,
        now: int,
        events: list[tuple[OracleResult, dict[str, Any]]],
    ) -> None:
        c = verdict.counts
        attrs: dict[str, Any] = {
            **_contract_attributes(verdict),
            n.VERDICT: verdict.verdict,
            n.CHECKS: len(verdict.results),
            n.INVARIANT_FAILURES: c.invariant_failures,
            n.TOLERATED_FAILURES: c.tolerated_failures,
            n.BUDGET_EXHAUSTED: c.budget_exhausted,
            n.MISSING_EVIDENCE: c.missing_evidence,
            n.ERRORS: c.errors,
        }
        agent = verdict.agent_name or (trajectory.agent_name if trajectory else None)
        if agent:
            attrs[n.AGENT_NAME] = agent
        provider, model = generation_labels(trajectory)
        if provider:
            attrs[n.PROVIDER_NAME] = provider
        if model:
            attrs[n.REQUEST_MODEL] = model
        parent = _span_context(verdict.trace_id, verdict.root_span_id or _any_span_id(verdict))
        if parent is None:
            subject = safe_identifier(PurePath(verdict.subject).name)
            if subject:
                attrs[n.SUBJECT] = subject
            trace_id = self._random.getrandbits(128) or 1
        else:
            trace_id = parent.trace_id
        context = SpanContext(
            trace_id, self._random.getrandbits(64) or 1, is_remote=False, trace_flags=_SAMPLED
        )
        # Span events carry only the gen_ai.evaluation.* core (and error.type): the contract
        # attributes are on the span itself, and the log form carries the full set. Halves
        # the encoding cost, which dominates emission.
        span_events = (
            [
                Event(n.EVALUATION_EVENT, {k: a[k] for k in _SPAN_EVENT_KEYS if k in a}, now)
                for _, a in events
            ]
            if self.settings.span_events
            else []
        )
        status = (
            _UNSET if verdict.verdict == "pass" else Status(StatusCode.ERROR, _status_text(verdict))
        )
        self._pending_spans.append(
            ReadableSpan(
                name=f"{n.GRADE_SPAN_PREFIX} {verdict.contract_id}",
                context=context,
                parent=parent,
                resource=self.resource,
                attributes=attrs,
                events=span_events,
                kind=SpanKind.INTERNAL,
                status=status,
                start_time=now - max(0, verdict.duration_ns),
                end_time=now,
                instrumentation_scope=self._scope,
            )
        )

    def _emit_log_events(
        self, verdict: Verdict, now: int, events: list[tuple[OracleResult, dict[str, Any]]]
    ) -> None:
        contexts: dict[str, Context] = {}
        for result, attrs in events:
            span_id = next((s for s in result.span_ids if _SPAN_ID.match(s)), None)
            span_id = span_id or verdict.root_span_id or ""
            ctx = contexts.get(span_id)
            if ctx is None:
                ctx = contexts[span_id] = _context_of(_span_context(verdict.trace_id, span_id))
            severity, severity_text = _SEVERITY[result.outcome]
            record = LogRecord(
                timestamp=now,
                observed_timestamp=now,
                context=ctx,
                severity_number=severity,
                severity_text=severity_text,
                attributes=attrs,
                event_name=n.EVALUATION_EVENT,
            )
            self._pending_logs.append(
                ReadableLogRecord(
                    log_record=record, resource=self.resource, instrumentation_scope=self._scope
                )
            )

    # ---- shipping ------------------------------------------------------------------------

    def _ship_spans(self) -> bool:
        items, self._pending_spans = self._pending_spans, []
        return self._ship(items, self._span_exporters, "spans", SpanExportResult.SUCCESS)

    def _ship_logs(self) -> bool:
        items, self._pending_logs = self._pending_logs, []
        return self._ship(items, self._log_exporters, "log records", LogRecordExportResult.SUCCESS)

    def _ship(
        self,
        items: Sequence[Any],
        exporters: Sequence[SpanExporter | LogRecordExporter],
        what: str,
        success: object,
    ) -> bool:
        """Hand ``items`` to every exporter. An exporter that failed gets no batches for
        ``retry_after_seconds`` (they are counted as not delivered): a dead endpoint then
        costs one exporter timeout, not one per batch."""
        if not items:
            return True
        ok = True
        now = time.monotonic()
        for exporter in exporters:
            key = id(exporter)
            delivered = False
            if now >= self._down_until.get(key, 0.0):
                delivered = _call(functools.partial(exporter.export, items), what) is success
                if not delivered:
                    self._down_until[key] = time.monotonic() + self.settings.retry_after_seconds
            if not delivered:
                ok = False
                self.stats.note_error(
                    f"{what}: export via {type(exporter).__name__} to "
                    f"{self.destination or 'its destination'} failed"
                )
            self._count(what, len(items), delivered)
        return ok

    def _count(self, what: str, count: int, delivered: bool) -> None:
        if what == "spans":
            if delivered:
                self.stats.spans_exported += count
            else:
                self.stats.spans_failed += count
        elif delivered:
            self.stats.log_records_exported += count
        else:
            self.stats.log_records_failed += count


def _call(fn: Callable[[], T], what: str) -> T | None:
    try:
        return fn()
    except Exception:
        logger.exception("exporting %s raised", what)
        return None


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


def _span_context(trace_id: str | None, span_id: str | None) -> SpanContext | None:
    """A remote, sampled context for the graded span, or None when the ids are unusable
    (an AgentBench trajectory has none: the grade span then starts its own trace)."""
    if not trace_id or not span_id:
        return None
    t, s = trace_id.lower(), span_id.lower()
    if not _TRACE_ID.match(t) or not _SPAN_ID.match(s) or int(t, 16) == 0 or int(s, 16) == 0:
        return None
    return SpanContext(int(t, 16), int(s, 16), is_remote=True, trace_flags=_SAMPLED)


def _context_of(span_context: SpanContext | None) -> Context:
    """An explicit context (never the ambient one, which may belong to the host app).

    Without ids it holds the invalid span: the API's ``LogRecord`` falls back to the
    ambient context when given an empty one, which would tie the record to whatever span
    the host application has open."""
    if span_context is None:
        return trace.set_span_in_context(INVALID_SPAN, Context())
    return trace.set_span_in_context(NonRecordingSpan(span_context), Context())


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


def otlp_destination(protocol: str) -> str:
    """The configured OTLP endpoint, for messages only (the SDK reads the same variables)."""
    default = "http://localhost:4317" if protocol == "grpc" else "http://localhost:4318"
    endpoint = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", default)
    return f"OTLP {protocol} {endpoint}"
