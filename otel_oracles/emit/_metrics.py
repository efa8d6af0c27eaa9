"""The grader's metrics, with low-cardinality attributes only.

Attributes are contract id and version, verdict, check name and oracle type, outcome, agent
name, provider and model, and the graded service's version; never trace ids or free text, so
a dashboard's series count grows with contracts and deploys, not with traffic. The values a
trace supplies are cut to ``MAX_LABEL_CHARS`` (``trace_label``); the SDK keeps at most 2,000
series per instrument.

The verdict metrics (traces, results, the four failure counts, the grading duration) are
counted in the core (``GradeTally``, ``native/python/src/grade_tally.rs``) and kept here as
series per metric exporter (``_ReaderSeries``), which the exporter adds to each collection
of the SDK's instruments its reader hands it (``GraderMetrics.attach``): nothing per verdict
goes through the SDK's instruments. The SDK recorded each verdict's duration with a
``Histogram.record`` (its attribute dict copied and hashed, a measurement object, its
locks) and each distinct attribute set of a batch with a ``Counter.add``; the series here
keep what its aggregations keep (cumulative or delta per reader, start times, min and max,
the 2,000-series limit with its overflow point) and no exemplars, as the SDK's default
trace-based filter took none (no span is current where the grader counts).

The live receiver (``serve``) feeds the ``receiver_*`` methods (the SDK's instruments);
offline grading never calls them. All methods are cheap, thread-safe and never raise.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, TypeVar

from opentelemetry.metrics import Meter, NoOpMeter

from otel_oracles._native import GradeTally, VerdictLabels
from otel_oracles.emit import _names as n
from otel_oracles.model.step import GENERATION, Step, Trajectory

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from opentelemetry.metrics import CallbackOptions, Observation
    from opentelemetry.sdk.metrics.export import Metric, MetricsData
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope

    from otel_oracles.emit._metric_export import OwnMetricExporter
    from otel_oracles.model.result import Verdict

_NOOP: GraderMetrics | None = None

DURATION_BUCKETS_S: tuple[float, ...] = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
    60.0,
)  # fmt: skip
"""Bucket bounds of ``otel_oracles.grade.duration``: grading takes sub-millisecond for trace
checks and seconds for replayed test commands. One set for every tally, so a worker
process's counts add to the receiving process's."""

CARDINALITY_LIMIT = 2000
"""Series per metric and reader, as the SDK's default limit: past it, new attribute sets
count in one ``otel.metric.overflow`` series."""
_OVERFLOW: dict[str, Any] = {"otel.metric.overflow": True}


MAX_LABEL_CHARS = 128
"""The longest label value taken from a trace (agent name, provider, model, service version).

Those values are the sender's: one trace can name its model with megabytes. Metric series
are cumulative, so every such value is held, and sent again with each of its data points on
every export, for the life of the process: 100 traces naming a 200 KB model each made one
metrics export of 132 MB, which the transport drops (over 64 MiB), so the grader's metrics
stopped for every sender until a restart. Names are short; a longer value is cut."""


MAX_TRACE_LABEL_VALUES = 64
"""Distinct values kept per label taken from a trace (agent name, provider, model, service
version) for the life of the process; later new values count under ``OTHER_LABEL``.

Each value starts series that stay (cumulative), and the SDK folds everything past 2,000
series per instrument into one ``otel.metric.overflow`` point: a sender naming a new agent
per trace pushed every later series of every contract, check and outcome into that point,
blinding the dashboards and alerts for all senders. Real deployments name a handful of
agents and models and a version per deploy."""

OTHER_LABEL = "_other"
"""The value a trace-derived label takes once ``MAX_TRACE_LABEL_VALUES`` are in use."""

_TRACE_LABEL_KEYS = frozenset(
    {n.AGENT_NAME, n.PROVIDER_NAME, n.REQUEST_MODEL, n.SUBJECT_SERVICE_VERSION}
)


LABELS = VerdictLabels(n, GENERATION, MAX_LABEL_CHARS)
"""The label rules, in the core (``native/python/src/grade_tally.rs``): called with
``(verdict, trajectory)`` it gives the verdict's metric labels (contract id and version, then
the agent, provider, model and service version each when known), and the tally asks it
without a Python call. The emitter took these labels twice a verdict (the grade span's and
the tally's), each an interpreter step a read; the core reads them for a few hundred
instructions (docs/performance-history.md, "Emission: the labels read by the core")."""

trace_label = LABELS.label
"""``trace_label(value)``: ``value`` as a metric attribute and grade-span attribute: ``None``
unless a non-empty string, cut to ``MAX_LABEL_CHARS`` characters (the last one an ellipsis)
when longer."""

agent_label = LABELS.agent
"""``agent_label(verdict, trajectory)``: the graded agent's name as a label
(``trace_label``): the verdict's, else the trajectory's (``None`` or not)."""

generation_labels = LABELS.generation
"""``generation_labels(trajectory)``: (provider, model) of the trajectory's (``None`` or not)
first generation steps that name them, in step order, as labels (``trace_label``)."""


_SERVICE_VERSION = "service.version"


def labels_only(trajectory: Trajectory) -> Trajectory:
    """A trajectory holding only what emission reads of ``trajectory``: its agent name, the
    graded service's version and its first generation's provider and model (as labels),
    the same labels from both (``agent_label``, ``generation_labels``, the tally's).

    For a caller that holds pairs before exporting them (``BatchingEmitter``): a graded
    trajectory (its steps, their messages and attribute dicts) kept until a batch of 256
    verdicts filled survived the young collections and was rescanned by the older ones,
    ~84 M instructions of collections in a grade of 2,000 traces
    (docs/performance-history.md, "Emission: a batch holds a trajectory's labels, not the
    trajectory")."""
    provider, model = generation_labels(trajectory)
    steps = (
        [
            Step.from_normalized(
                {"index": 0, "kind": GENERATION, "provider": provider, "model": model}
            )
        ]
        if provider or model
        else []
    )
    version = trajectory.resource.get(_SERVICE_VERSION)
    return Trajectory.from_normalized(
        {
            "steps": steps,
            "agent_name": trajectory.agent_name,
            "resource": {} if version is None else {_SERVICE_VERSION: version},
        }
    )


class GraderMetrics:
    """The grader's metrics on one meter (see module docstring)."""

    def __init__(
        self, meter: Meter, duration_buckets_s: tuple[float, ...] = DURATION_BUCKETS_S
    ) -> None:
        # One set per key from the start: creating one on first use outside the lock could
        # replace a set another thread had just recorded a value in.
        self._label_values: dict[str, set[str]] = {key: set() for key in _TRACE_LABEL_KEYS}
        self._label_lock = threading.Lock()
        self.is_noop = isinstance(meter, NoOpMeter)
        self.duration_buckets_s = tuple(duration_buckets_s or DURATION_BUCKETS_S)
        self._meter = meter
        self._collected = False
        """Whether the ``_COLLECTED`` gauge is observed (``attach``)."""
        self._readers: list[_ReaderSeries] = []
        self._series_lock = threading.Lock()
        """Held while counts are added to the readers' series or one collects them."""
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
        """A shared instance whose methods do nothing (its tallies count, for a worker process
        that sends their ``state`` to the process owning the meter)."""
        global _NOOP
        if _NOOP is None:
            _NOOP = cls(NoOpMeter("otel_oracles"))
        return _NOOP

    def attach(
        self, exporter: OwnMetricExporter, resource: Resource, scope: InstrumentationScope
    ) -> None:
        """Adds the verdict metrics to every collection ``exporter`` exports, as ``scope``'s
        metrics under ``resource`` (those of the meter this was made with), in the
        temporality ``exporter`` asks its reader for.

        The merge is the exporter's (``OwnMetricExporter.add_metrics``): the SDK's periodic
        reader hands it each collection right after making it, and the SDK has no public
        way to add points to a collection itself (no metric producers in the Python SDK).
        The reader hands it nothing when the SDK's instruments collected nothing (always,
        offline), so this also observes one gauge (``_COLLECTED``) that every collection
        reports and the merge takes out again: a collection with neither verdicts nor the
        receiver's metrics then reaches no destination, as before."""
        from opentelemetry.sdk.metrics import Counter, Histogram

        if exporter.add_metrics is not None:
            raise ValueError("attach: the exporter already has metrics attached")
        series = _ReaderSeries(
            exporter.is_delta(Counter), exporter.is_delta(Histogram), self.duration_buckets_s
        )
        with self._series_lock:
            if not self._collected:
                self._meter.create_observable_gauge(_COLLECTED, [_observe_collection])
                self._collected = True
            self._readers.append(series)

        def add_metrics(data: MetricsData) -> MetricsData:
            with self._series_lock:
                metrics = series.collect()
            return _with_metrics(data, metrics, resource, scope)

        exporter.add_metrics = add_metrics

    # ---- grading -------------------------------------------------------------------------

    def record_verdict(self, verdict: Verdict, trajectory: Trajectory | None) -> None:
        """Count one verdict and its results."""
        tally = self.tally()
        tally.add(verdict, trajectory)
        tally.flush()

    def tally(self) -> Tally:
        """A local aggregator for a batch of verdicts, added to the series by ``flush``."""
        return Tally(self)

    def record(self, state: TallyState) -> None:
        """Adds a tally's counts (``Tally.state``) to every reader's series, each label set's
        trace-derived values bounded (``bounded``)."""
        if not self._readers:
            return
        groups: list[_Bounded] = [
            (self.bounded(labels), verdicts, counts, results, durations)
            for labels, verdicts, counts, results, durations in state
        ]
        with self._series_lock:
            for series in self._readers:
                series.add(groups)

    def bounded(self, labels: Labels) -> dict[str, Any]:
        """``labels`` as attributes, each trace-derived value past the first
        ``MAX_TRACE_LABEL_VALUES`` of its key replaced by ``OTHER_LABEL`` (recorded here, in
        the process that owns the meter, so worker processes' tallies share one budget)."""
        out = dict(labels)
        for key, value in labels:
            seen = self._label_values.get(key)  # None: not a label taken from a trace
            if seen is None or value in seen:
                continue
            with self._label_lock:
                if len(seen) < MAX_TRACE_LABEL_VALUES:
                    seen.add(value)
                elif value not in seen:
                    out[key] = OTHER_LABEL
        return out

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

_Durations = tuple[list[int], float, float, float]
"""A histogram of grading seconds: bucket counts (``DURATION_BUCKETS_S``), sum, min, max."""

TallyState = list[tuple[Labels, dict[str, int], list[int], dict[tuple[str, str, str], int],
                        _Durations]]  # fmt: skip
"""A tally as plain data, one entry per label set: (labels, traces per verdict, the four
failure counts, results per (check name, oracle type, outcome), the durations' histogram).
Picklable, so a grading worker process can count its verdicts and the receiving process,
which owns the one meter provider, records them (two processes exporting cumulative
counters under the same resource would overwrite each other's series)."""

_Bounded = tuple[dict[str, Any], dict[str, int], list[int], dict[tuple[str, str, str], int],
                 _Durations]  # fmt: skip
"""A ``TallyState`` entry with its labels as bounded attributes (``GraderMetrics.bounded``)."""

_SUMS: tuple[tuple[str, str, str], ...] = (
    (n.METRIC_TRACES, "{trace}", "Traces graded, per contract and verdict."),
    (n.METRIC_RESULTS, "{result}", "Check results, per contract, check and outcome."),
    (n.METRIC_INVARIANT_FAILURES, "{failure}", "Invariant failures (must-hold violated)."),
    (n.METRIC_TOLERATED_FAILURES, "{failure}", "Tolerated failures (within budget)."),
    (n.METRIC_BUDGETS_EXHAUSTED, "{budget}", "Tolerances used beyond their budget."),
    (n.METRIC_MISSING_EVIDENCE, "{result}", "Checks that lacked the evidence to judge."),
)
"""The verdict counters (monotonic sums): name, unit, description."""
_DURATION = (n.METRIC_DURATION, "s", "Time to grade one trace against one contract.")
_TRACES, _RESULTS, _FIRST_COUNT = 0, 1, 2


class Tally:
    """Counts for a batch of verdicts, added to the metric series by ``flush``. Not
    thread-safe: one per batch, on one thread.

    The counting is the core's (``GradeTally``): grouped by a verdict's labels, asked once
    per run of verdicts of one trajectory and contract, each result counted under them by
    its check, oracle type and outcome, each duration put in its bucket."""

    def __init__(self, metrics: GraderMetrics) -> None:
        self._m = metrics
        self._core = GradeTally(LABELS, list(metrics.duration_buckets_s))

    @property
    def core(self) -> GradeTally:
        """The core's counts, for a caller that counts in the core itself (the records'
        builder, ``VerdictRecords.build``, counts each verdict it builds)."""
        return self._core

    def add(self, verdict: Verdict, trajectory: Trajectory | None) -> None:
        self._core.add([(verdict, trajectory)])

    def add_all(self, pairs: list[tuple[Verdict, Trajectory | None]]) -> None:
        """``add`` of every pair, in one call to the core."""
        self._core.add(pairs)

    def state(self) -> TallyState:
        """What ``flush`` would record, as plain data (see ``TallyState``)."""
        state: TallyState = self._core.state()
        return state

    def merge(self, state: TallyState) -> None:
        """Add a tally made elsewhere (another process) to this one."""
        self._core.merge(state)

    def flush(self) -> None:
        if len(self._core):
            self._m.record(self._core.take())


class _Sum:
    """One counter series: its attributes, start time and value (cumulative, or since the
    reader's last collection)."""

    __slots__ = ("attributes", "start", "value")

    def __init__(self, attributes: dict[str, Any], start: int) -> None:
        self.attributes = attributes
        self.start = start
        self.value = 0


class _Histogram:
    """One duration series (see ``_Sum``): bucket counts, sum, min and max."""

    __slots__ = ("attributes", "buckets", "max", "min", "start", "sum")

    def __init__(self, attributes: dict[str, Any], start: int, bounds: int) -> None:
        self.attributes = attributes
        self.start = start
        self.buckets = [0] * (bounds + 1)
        self.sum = 0.0
        self.min = float("inf")
        self.max = float("-inf")


_Key = tuple[tuple[str, Any], ...]
_S = TypeVar("_S")


def _series(
    table: dict[_Key, _S], attributes: dict[str, Any], make: Callable[[dict[str, Any]], _S]
) -> _S:
    """``attributes``' series in ``table``, made by ``make`` on first use; past
    ``CARDINALITY_LIMIT`` series a new attribute set counts in the one overflow series, as the
    SDK's aggregations do."""
    key = tuple(attributes.items())
    found = table.get(key)
    if found is None:
        if len(table) >= CARDINALITY_LIMIT:
            attributes = dict(_OVERFLOW)
            key = tuple(attributes.items())
            found = table.get(key)
        if found is None:
            found = table[key] = make(attributes)
    return found


class _ReaderSeries:
    """The verdict metrics' series for one metric exporter (and so its reader), kept as the
    SDK's aggregations keep them for that reader: cumulative series hold their total from
    their first count (their start time); delta series hold what came since the last
    collection, start at it, and are dropped by it (a series with nothing new is not
    reported). Past
    ``CARDINALITY_LIMIT`` series a metric counts new attribute sets in one overflow series.
    The caller holds ``GraderMetrics._series_lock``."""

    def __init__(self, sums_delta: bool, durations_delta: bool, bounds: tuple[float, ...]) -> None:
        self.sums_delta = sums_delta
        self.durations_delta = durations_delta
        self.bounds = bounds
        self.sums: list[dict[_Key, _Sum]] = [{} for _ in _SUMS]
        self.durations: dict[_Key, _Histogram] = {}
        self.last_collection: int | None = None

    def _start(self) -> int:
        return self.last_collection or time.time_ns()

    def _sum(self, metric: int, attributes: dict[str, Any]) -> _Sum:
        return _series(self.sums[metric], attributes, lambda a: _Sum(a, self._start()))

    def _histogram(self, attributes: dict[str, Any]) -> _Histogram:
        bounds = len(self.bounds)
        return _series(self.durations, attributes, lambda a: _Histogram(a, self._start(), bounds))

    def add(self, groups: list[_Bounded]) -> None:
        for attributes, verdicts, counts, results, durations in groups:
            for verdict, count in verdicts.items():
                self._sum(_TRACES, {**attributes, n.VERDICT: verdict}).value += count
            for at, count in enumerate(counts):
                if count:
                    self._sum(_FIRST_COUNT + at, attributes).value += count
            for (name, oracle_type, outcome), count in results.items():
                point = self._sum(
                    _RESULTS,
                    {
                        **attributes,
                        n.EVALUATION_NAME: name,
                        n.ORACLE_TYPE: oracle_type,
                        n.OUTCOME: outcome,
                    },
                )
                point.value += count
            buckets, total, low, high = durations
            h = self._histogram(attributes)
            h.buckets = [a + b for a, b in zip(h.buckets, buckets, strict=True)]
            h.sum += total
            h.min = min(h.min, low)
            h.max = max(h.max, high)

    def collect(self) -> list[Metric]:
        """The metrics as the SDK's collection makes them, now."""
        from opentelemetry.sdk.metrics.export import (
            AggregationTemporality,
            Histogram,
            HistogramDataPoint,
            Metric,
            NumberDataPoint,
            Sum,
        )

        now = time.time_ns()
        metrics: list[Metric] = []
        sums_temporality = (
            AggregationTemporality.DELTA if self.sums_delta else AggregationTemporality.CUMULATIVE
        )
        for (name, unit, description), series in zip(_SUMS, self.sums, strict=True):
            if not series:
                continue
            points = [
                NumberDataPoint(
                    attributes=s.attributes,
                    start_time_unix_nano=s.start,
                    time_unix_nano=now,
                    value=s.value,
                    exemplars=[],
                )
                for s in series.values()
            ]
            data = Sum(
                data_points=points,
                aggregation_temporality=sums_temporality,
                is_monotonic=True,
            )
            metrics.append(Metric(name=name, description=description, unit=unit, data=data))
        if self.durations:
            bounds = self.bounds
            hist_points = [
                HistogramDataPoint(
                    attributes=h.attributes,
                    start_time_unix_nano=h.start,
                    time_unix_nano=now,
                    count=sum(h.buckets),
                    sum=h.sum,
                    bucket_counts=tuple(h.buckets),
                    explicit_bounds=bounds,
                    min=h.min,
                    max=h.max,
                    exemplars=[],
                )
                for h in self.durations.values()
            ]
            name, unit, description = _DURATION
            hist = Histogram(
                data_points=hist_points,
                aggregation_temporality=(
                    AggregationTemporality.DELTA
                    if self.durations_delta
                    else AggregationTemporality.CUMULATIVE
                ),
            )
            metrics.append(Metric(name=name, description=description, unit=unit, data=hist))
        if self.sums_delta:
            self.sums = [{} for _ in _SUMS]
        if self.durations_delta:
            self.durations = {}
        if self.sums_delta or self.durations_delta:
            self.last_collection = now
        return metrics


_COLLECTED = "otel_oracles.collection"
"""A gauge observed at every collection so that the SDK's reader always hands the collection
to its exporter (``GraderMetrics.attach``); ``_with_metrics`` takes it out, so no
destination ever receives it."""


def _observe_collection(options: CallbackOptions) -> Iterable[Observation]:
    from opentelemetry.metrics import Observation

    return (Observation(0),)


def _with_metrics(
    data: MetricsData,
    metrics: list[Metric],
    resource: Resource,
    scope: InstrumentationScope,
) -> MetricsData:
    """``data`` (what the SDK collected) without the ``_COLLECTED`` gauge and with
    ``metrics`` added to ``scope``'s metrics under ``resource``; a scope or resource left
    with no metrics is dropped."""
    from opentelemetry.sdk.metrics.export import MetricsData, ResourceMetrics, ScopeMetrics

    resources: list[ResourceMetrics] = []
    pending = metrics
    for rm in data.resource_metrics:
        scopes: list[ScopeMetrics] = []
        for sm in rm.scope_metrics:
            kept = [m for m in sm.metrics if m.name != _COLLECTED]
            if pending and rm.resource == resource and sm.scope == scope:
                kept = [*pending, *kept]
                pending = []
            if kept:
                scopes.append(ScopeMetrics(scope=sm.scope, metrics=kept, schema_url=sm.schema_url))
        if pending and rm.resource == resource:
            scopes.insert(
                0, ScopeMetrics(scope=scope, metrics=pending, schema_url=scope.schema_url or "")
            )
            pending = []
        if scopes:
            resources.append(
                ResourceMetrics(
                    resource=rm.resource, scope_metrics=scopes, schema_url=rm.schema_url
                )
            )
    if pending:
        resources.append(
            ResourceMetrics(
                resource=resource,
                scope_metrics=[
                    ScopeMetrics(scope=scope, metrics=pending, schema_url=scope.schema_url or "")
                ],
                schema_url=resource.schema_url,
            )
        )
    return MetricsData(resource_metrics=resources)
