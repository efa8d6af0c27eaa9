"""The grader's metric instruments, with low-cardinality attributes only.

Attributes are contract id and version, verdict, check name and oracle type, outcome, agent
name, provider and model; never trace ids or free text, so a dashboard's series count grows
with the number of contracts, not with traffic.

The live receiver (``serve``) feeds the ``receiver_*`` methods; offline grading never calls
them. All methods are cheap, thread-safe and never raise (SDK instruments swallow errors).
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from opentelemetry.metrics import Meter, NoOpMeter

from otel_oracles.emit import _names as n

if TYPE_CHECKING:
    from otel_oracles.model.result import Verdict
    from otel_oracles.model.step import Trajectory

_NOOP: GraderMetrics | None = None


def generation_labels(trajectory: Trajectory | None) -> tuple[str | None, str | None]:
    """(provider, model) of the trajectory's first generation that names them."""
    if trajectory is None:
        return None, None
    provider = model = None
    for step in trajectory.generations():
        provider = provider or step.provider
        model = model or step.model
        if provider and model:
            break
    return provider, model


class GraderMetrics:
    """All instruments of one meter (see module docstring)."""

    def __init__(self, meter: Meter, duration_buckets_s: tuple[float, ...] = ()) -> None:
        self.is_noop = isinstance(meter, NoOpMeter)
        self._traces = meter.create_counter(
            n.METRIC_TRACES, "{trace}", "Traces graded, per contract and verdict."
        )
        self._results = meter.create_counter(
            n.METRIC_RESULTS, "{result}", "Check results, per contract, check and outcome."
        )
        self._invariant = meter.create_counter(
            n.METRIC_INVARIANT_FAILURES, "{failure}", "Invariant failures (must-hold violated)."
        )
        self._tolerated = meter.create_counter(
            n.METRIC_TOLERATED_FAILURES, "{failure}", "Tolerated failures (within budget)."
        )
        self._exhausted = meter.create_counter(
            n.METRIC_BUDGETS_EXHAUSTED, "{budget}", "Tolerances used beyond their budget."
        )
        self._missing = meter.create_counter(
            n.METRIC_MISSING_EVIDENCE, "{result}", "Checks that lacked the evidence to judge."
        )
        self._duration = meter.create_histogram(
            n.METRIC_DURATION,
            "s",
            "Time to grade one trace against one contract.",
            explicit_bucket_boundaries_advisory=list(duration_buckets_s) or None,
        )
        self._buffered = meter.create_up_down_counter(
            n.METRIC_BUFFERED_TRACES, "{trace}", "Traces buffered awaiting completion."
        )
        self._late = meter.create_counter(
            n.METRIC_LATE_SPANS, "{span}", "Spans that arrived after their trace was graded."
        )
        self._evicted = meter.create_counter(
            n.METRIC_EVICTED_TRACES, "{trace}", "Traces evicted from the buffer for memory."
        )
        self._rejected = meter.create_counter(
            n.METRIC_REJECTED_REQUESTS, "{request}", "OTLP export requests the receiver refused."
        )

    @classmethod
    def noop(cls) -> GraderMetrics:
        """A shared instance whose methods do nothing."""
        global _NOOP
        if _NOOP is None:
            _NOOP = cls(NoOpMeter("otel_oracles"))
        return _NOOP

    # ---- grading -------------------------------------------------------------------------

    def record_verdict(self, verdict: Verdict, trajectory: Trajectory | None) -> None:
        """Count one verdict and its results."""
        tally = self.tally()
        tally.add(verdict, trajectory)
        tally.flush()

    def tally(self) -> Tally:
        """A local aggregator for a batch of verdicts: one instrument call per distinct
        attribute set instead of ~10 per verdict (the SDK hashes attributes on every call)."""
        return Tally(self)

    # ---- live receiver -------------------------------------------------------------------

    def buffered_traces_changed(self, delta: int) -> None:
        """+1 when a trace starts buffering, -1 when it is graded or evicted."""
        self._buffered.add(delta)

    def late_spans(self, count: int = 1) -> None:
        """Spans that arrived for a trace already graded (counted, not regraded)."""
        self._late.add(count)

    def evicted_traces(self, count: int = 1) -> None:
        """Traces dropped from the buffer to bound memory (each also reported)."""
        self._evicted.add(count)

    def rejected_requests(self, error_type: str, transport: str, count: int = 1) -> None:
        """Requests refused; ``error_type`` is the OTLP status class (``resource_exhausted``,
        ``invalid_argument``), ``transport`` is ``grpc`` or ``http``."""
        self._rejected.add(count, {n.ERROR_TYPE: error_type, n.TRANSPORT: transport})


Labels = tuple[tuple[str, Any], ...]


class Tally:
    """Counts for a batch of verdicts, added to the instruments by ``flush``. Not
    thread-safe: one per batch, on one thread."""

    def __init__(self, metrics: GraderMetrics) -> None:
        self._m = metrics
        self._counts: dict[tuple[int, Labels], int] = defaultdict(int)
        self._instruments: dict[int, Any] = {}

    def _bump(self, instrument: Any, labels: Labels, value: int = 1) -> None:
        self._instruments[id(instrument)] = instrument
        self._counts[(id(instrument), labels)] += value

    def add(self, verdict: Verdict, trajectory: Trajectory | None) -> None:
        m = self._m
        base: list[tuple[str, Any]] = [
            (n.CONTRACT_ID, verdict.contract_id),
            (n.CONTRACT_VERSION, verdict.contract_version),
        ]
        agent = verdict.agent_name or (trajectory.agent_name if trajectory else None)
        if agent:
            base.append((n.AGENT_NAME, agent))
        provider, model = generation_labels(trajectory)
        if provider:
            base.append((n.PROVIDER_NAME, provider))
        if model:
            base.append((n.REQUEST_MODEL, model))
        labels = tuple(base)
        self._bump(m._traces, (*labels, (n.VERDICT, verdict.verdict)))
        m._duration.record(verdict.duration_ns / 1e9, dict(labels))
        c = verdict.counts
        for instrument, count in (
            (m._invariant, c.invariant_failures),
            (m._tolerated, c.tolerated_failures),
            (m._exhausted, c.budget_exhausted),
            (m._missing, c.missing_evidence),
        ):
            if count:
                self._bump(instrument, labels, count)
        for r in verdict.results:
            self._bump(
                m._results,
                (
                    *labels,
                    (n.EVALUATION_NAME, r.name),
                    (n.ORACLE_TYPE, r.oracle_type),
                    (n.OUTCOME, r.outcome.value),
                ),
            )

    def flush(self) -> None:
        for (instrument_id, labels), value in self._counts.items():
            self._instruments[instrument_id].add(value, dict(labels))
        self._counts.clear()
