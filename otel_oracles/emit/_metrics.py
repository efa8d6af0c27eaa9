"""The grader's metrics, with low-cardinality attributes only.

Attributes are contract id and version, verdict, check name and oracle type, outcome, agent
name, provider and model, and the graded service's version; never trace ids or free text, so
a dashboard's series count grows with contracts and deploys, not with traffic. The values a
trace supplies are cut to ``MAX_LABEL_CHARS`` (``trace_label``); at most 2,000 series are
kept per metric, as the SDK's limit.

The grader aggregates its metrics itself, with no meter provider: the verdict metrics
(traces, results, the four failure counts, the grading duration) are counted in the core
(``GradeTally``, ``native/python/src/grade_tally.rs``), the live receiver's four (buffered,
late, evicted, rejected) by the ``receiver`` methods here, and both are kept as series per
metric reader (``_ReaderSeries``), which the reader collects into the package's records
(``_metric_data``) for its exporter (``_metric_export.MetricReader``). The series keep what
the SDK's aggregations kept (cumulative or delta per reader, start times, min and max, the
2,000-series limit with its overflow point) and no exemplars, as the SDK's default
trace-based filter took none (no span is current where the grader counts); the tests hold
them to the SDK's instruments (``tests/emit/test_metric_tally.py``). Through the SDK, each
verdict's duration was a ``Histogram.record`` (its attribute dict copied and hashed, a
measurement object, its locks), and its ``MeterProvider`` cost an export grade ~159 M
instructions of imports.

The live receiver (``serve``) feeds the receiver methods; offline grading never calls them.
All methods are cheap, thread-safe and never raise.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any, TypeVar

from otel_oracles._native import GradeTally, VerdictLabels
from otel_oracles.emit import _names as n
from otel_oracles.emit._metric_data import (
    CUMULATIVE,
    DELTA,
    Histogram,
    HistogramDataPoint,
    Metric,
    NumberDataPoint,
    Sum,
)
from otel_oracles.model.step import GENERATION, Step, Trajectory

if TYPE_CHECKING:
    from collections.abc import Callable

    from otel_oracles.model.result import Verdict

logger = logging.getLogger(__name__)

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
    """The grader's metrics (see module docstring): the verdict metrics and the receiver's
    four, kept as series per metric reader (``reader_series``), which the reader collects
    (``collect``)."""

    def __init__(
        self, duration_buckets_s: tuple[float, ...] = DURATION_BUCKETS_S, *, noop: bool = False
    ) -> None:
        # One set per key from the start: creating one on first use outside the lock could
        # replace a set another thread had just recorded a value in.
        self._label_values: dict[str, set[str]] = {key: set() for key in _TRACE_LABEL_KEYS}
        self._label_lock = threading.Lock()
        self.is_noop = noop
        """Whether this records nothing (``noop``): no reader ever reads it."""
        self.duration_buckets_s = tuple(duration_buckets_s or DURATION_BUCKETS_S)
        self._readers: list[_ReaderSeries] = []
        self._series_lock = threading.Lock()
        """Held while counts are added to the readers' series or one collects them."""

    @classmethod
    def noop(cls) -> GraderMetrics:
        """A shared instance whose methods do nothing (its tallies count, for a worker process
        that sends their ``state`` to the process owning the metrics)."""
        global _NOOP
        if _NOOP is None:
            _NOOP = cls(noop=True)
        return _NOOP

    def reader_series(self, delta: bool) -> _ReaderSeries:
        """New series of every metric for one reader, counting from now: its counters and
        the durations as deltas when ``delta`` (the temporality its exporter asks for; the
        buffered traces, an up-down counter, are cumulative either way, as the
        specification's temporality preferences say)."""
        if self.is_noop:
            raise ValueError("reader_series: the no-op metrics have no readers")
        series = _ReaderSeries(delta, self.duration_buckets_s)
        with self._series_lock:
            self._readers.append(series)
        return series

    def collect(self, series: _ReaderSeries) -> list[Metric]:
        """``series``' metrics now (``_ReaderSeries.collect``), under the lock the counts are
        added with."""
        with self._series_lock:
            return series.collect()

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
        self._receiver(_BUFFERED, delta, _NO_ATTRIBUTES)

    def late_spans(self, count: int = 1) -> None:
        """Spans that arrived for a trace already graded (counted, not regraded)."""
        self._receiver(_LATE, count, _NO_ATTRIBUTES)

    def evicted_traces(self, count: int = 1) -> None:
        """Traces dropped from the buffer to bound memory (each also reported)."""
        self._receiver(_EVICTED, count, _NO_ATTRIBUTES)

    def rejected_requests(self, error_type: str, transport: str, count: int = 1) -> None:
        """Requests refused; ``error_type`` is the OTLP status class (``resource_exhausted``,
        ``invalid_argument``), ``transport`` is ``grpc`` or ``http``."""
        self._receiver(_REJECTED, count, {n.ERROR_TYPE: error_type, n.TRANSPORT: transport})

    def _receiver(self, metric: int, count: int, attributes: dict[str, Any]) -> None:
        """Adds ``count`` to ``attributes``' series of receiver metric ``metric`` in every
        reader's series. A monotonic counter takes no negative count (the SDK's counters
        dropped those, with a warning)."""
        if not self._readers:
            return
        if count < 0 and metric != _BUFFERED:
            logger.warning("%s: a counter takes no negative count", _SUMS[metric][0])
            return
        with self._series_lock:
            for series in self._readers:
                series.add_receiver(metric, count, attributes)


Labels = tuple[tuple[str, Any], ...]

_Durations = tuple[list[int], float, float, float]
"""A histogram of grading seconds: bucket counts (``DURATION_BUCKETS_S``), sum, min, max."""

TallyState = list[tuple[Labels, dict[str, int], list[int], dict[tuple[str, str, str], int],
                        _Durations]]  # fmt: skip
"""A tally as plain data, one entry per label set: (labels, traces per verdict, the four
failure counts, results per (check name, oracle type, outcome), the durations' histogram).
Picklable, so a grading worker process can count its verdicts and the receiving process,
which owns the metrics and their readers, records them (two processes exporting cumulative
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
    (n.METRIC_BUFFERED_TRACES, "{trace}", "Traces buffered awaiting completion."),
    (n.METRIC_LATE_SPANS, "{span}", "Spans that arrived after their trace was graded."),
    (n.METRIC_EVICTED_TRACES, "{trace}", "Traces evicted from the buffer for memory."),
    (n.METRIC_REJECTED_REQUESTS, "{request}", "OTLP export requests the receiver refused."),
)
"""The sums: name, unit, description. The verdict counters, then the receiver's (``serve``):
the buffered traces an up-down counter (not monotonic, always cumulative), the rest
monotonic counters. A collection reports the verdict sums, the durations, then the
receiver's, each once it has a series."""
_DURATION = (n.METRIC_DURATION, "s", "Time to grade one trace against one contract.")
_TRACES, _RESULTS, _FIRST_COUNT = 0, 1, 2
_BUFFERED, _LATE, _EVICTED, _REJECTED = 6, 7, 8, 9
_VERDICT_SUMS = 6
_NO_ATTRIBUTES: dict[str, Any] = {}


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
    """Every metric's series for one reader, kept as the SDK's aggregations kept them for
    that reader: cumulative series hold their total from their first count (their start
    time); delta series hold what came since the last collection, start at it, and are
    dropped by it (a series with nothing new is not reported). Past ``CARDINALITY_LIMIT``
    series a metric counts new attribute sets in one overflow series. The caller holds
    ``GraderMetrics._series_lock``."""

    def __init__(self, delta: bool, bounds: tuple[float, ...]) -> None:
        self.delta = delta
        """Counters and the durations as deltas (the buffered traces stay cumulative)."""
        self.bounds = bounds
        self.sums: list[dict[_Key, _Sum]] = [{} for _ in _SUMS]
        self.durations: dict[_Key, _Histogram] = {}
        self.last_collection: int | None = None

    def _start(self, delta: bool) -> int:
        return (self.last_collection if delta else None) or time.time_ns()

    def _sum(self, metric: int, attributes: dict[str, Any]) -> _Sum:
        delta = self.delta and metric != _BUFFERED
        return _series(self.sums[metric], attributes, lambda a: _Sum(a, self._start(delta)))

    def _histogram(self, attributes: dict[str, Any]) -> _Histogram:
        bounds = len(self.bounds)
        return _series(
            self.durations, attributes, lambda a: _Histogram(a, self._start(self.delta), bounds)
        )

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

    def add_receiver(self, metric: int, count: int, attributes: dict[str, Any]) -> None:
        self._sum(metric, attributes).value += count

    def collect(self) -> list[Metric]:
        """The metrics as the SDK's collection made them, now."""
        now = time.time_ns()
        metrics: list[Metric] = []
        for at, ((name, unit, description), series) in enumerate(
            zip(_SUMS, self.sums, strict=True)
        ):
            if at == _VERDICT_SUMS:
                metrics.extend(self._durations(now))
            if not series:
                continue
            monotonic = at != _BUFFERED
            points = [NumberDataPoint(s.attributes, s.start, now, s.value) for s in series.values()]
            data = Sum(points, DELTA if self.delta and monotonic else CUMULATIVE, monotonic)
            metrics.append(Metric(name, description, unit, data))
        if self.delta:
            self.sums = [{} if at != _BUFFERED else s for at, s in enumerate(self.sums)]
            self.durations = {}
            self.last_collection = now
        return metrics

    def _durations(self, now: int) -> list[Metric]:
        if not self.durations:
            return []
        bounds = self.bounds
        points = [
            HistogramDataPoint(
                h.attributes,
                h.start,
                now,
                sum(h.buckets),
                h.sum,
                tuple(h.buckets),
                bounds,
                h.min,
                h.max,
            )
            for h in self.durations.values()
        ]
        name, unit, description = _DURATION
        return [
            Metric(name, description, unit, Histogram(points, DELTA if self.delta else CUMULATIVE))
        ]
