"""The grader's metric instruments, with low-cardinality attributes only.

Attributes are contract id and version, verdict, check name and oracle type, outcome, agent
name, provider and model, and the graded service's version; never trace ids or free text, so
a dashboard's series count grows with contracts and deploys, not with traffic. The values a
trace supplies are cut to ``MAX_LABEL_CHARS`` (``trace_label``); the SDK keeps at most 2,000
series per instrument.

The live receiver (``serve``) feeds the ``receiver_*`` methods; offline grading never calls
them. All methods are cheap, thread-safe and never raise (SDK instruments swallow errors).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from opentelemetry.metrics import Meter, NoOpMeter

from otel_oracles.emit import _names as n
from otel_oracles.model.step import Step, StepKind, Trajectory

if TYPE_CHECKING:
    from otel_oracles.model.result import Verdict

_NOOP: GraderMetrics | None = None


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


def trace_label(value: object) -> str | None:
    """``value`` as a metric attribute and grade-span attribute: ``None`` unless a non-empty
    string, cut to ``MAX_LABEL_CHARS`` characters (the last one an ellipsis) when longer."""
    if not isinstance(value, str) or not value:
        return None
    if len(value) <= MAX_LABEL_CHARS:
        return value
    return value[: MAX_LABEL_CHARS - 1] + "\u2026"


def agent_label(verdict: Verdict, trajectory: Trajectory | None) -> str | None:
    """The graded agent's name as a label (``trace_label``): the verdict's, else the
    trajectory's."""
    return trace_label(verdict.agent_name or (trajectory.agent_name if trajectory else None))


def generation_labels(trajectory: Trajectory | None) -> tuple[str | None, str | None]:
    """(provider, model) of the trajectory's first generation that names them, as labels
    (``trace_label``)."""
    if trajectory is None:
        return None, None
    provider = model = None
    # The steps in order, not ``generations()``: the first generation usually names both,
    # and a list of every generation was built per grade span and per tally of a trace.
    generation = StepKind.GENERATION
    for step in trajectory.steps:
        if step.kind != generation:
            continue
        provider = provider or step.provider
        model = model or step.model
        if provider and model:
            break
    return trace_label(provider), trace_label(model)


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
                {"index": 0, "kind": StepKind.GENERATION, "provider": provider, "model": model}
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
    """All instruments of one meter (see module docstring)."""

    def __init__(self, meter: Meter, duration_buckets_s: tuple[float, ...] = ()) -> None:
        # One set per key from the start: creating one on first use outside the lock could
        # replace a set another thread had just recorded a value in.
        self._label_values: dict[str, set[str]] = {key: set() for key in _TRACE_LABEL_KEYS}
        self._label_lock = threading.Lock()
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

_Group = tuple[dict[str, int], list[int], dict[tuple[str, str, str], int]]
"""What a tally counts under one set of labels: traces per verdict, the four failure counts
(``_COUNTED``, in order), and results per (check name, oracle type, outcome)."""

TallyState = tuple[list[tuple[Labels, dict[str, int], list[int], dict[tuple[str, str, str], int]]],
                   list[tuple[Labels, float]]]  # fmt: skip
"""A tally as plain data: ([(labels, traces per verdict, failure counts, results per (check,
oracle type, outcome))], [(labels, grading seconds)]). Picklable, so a grading worker
process can count its verdicts and the receiving process, which owns the one meter
provider, records them (two processes exporting cumulative counters under the same resource
would overwrite each other's series)."""

_COUNTED = ("_invariant", "_tolerated", "_exhausted", "_missing")
"""The instruments of a verdict's four failure counts, in ``_Group`` order."""


class Tally:
    """Counts for a batch of verdicts, added to the instruments by ``flush``. Not
    thread-safe: one per batch, on one thread.

    Grouped by a verdict's labels (contract, agent, provider, model, service version): a
    verdict's labels are built and hashed once, and each of its results is counted under
    them by a small key of its own. Keying every result by its full attribute tuple made
    counting ~3 µs a span in a grading worker (each key a fresh tuple of eight pairs, hashed
    again when the worker merged its traces' tallies, and pickled whole)."""

    def __init__(self, metrics: GraderMetrics) -> None:
        self._m = metrics
        self._groups: dict[Labels, _Group] = {}
        self._durations: list[tuple[Labels, float]] = []
        self._trajectory: tuple[Trajectory | None, Labels] | None = None
        """The last trajectory's labels: a trace's verdicts share their trajectory."""

    def _trajectory_labels(self, trajectory: Trajectory | None) -> Labels:
        """Provider, model and service version of ``trajectory`` (kept for the next call)."""
        last = self._trajectory
        if last is not None and last[0] is trajectory:
            return last[1]
        found: list[tuple[str, Any]] = []
        provider, model = generation_labels(trajectory)
        if provider:
            found.append((n.PROVIDER_NAME, provider))
        if model:
            found.append((n.REQUEST_MODEL, model))
        # The graded service's version: a deploy starts new series, so a rise in missing
        # evidence (or failures) after it shows per version (alerts/otel-oracles.rules.yaml).
        version = trace_label(trajectory.resource.get(_SERVICE_VERSION) if trajectory else None)
        if version:
            found.append((n.SUBJECT_SERVICE_VERSION, version))
        labels = tuple(found)
        self._trajectory = (trajectory, labels)
        return labels

    def add(self, verdict: Verdict, trajectory: Trajectory | None) -> None:
        agent = agent_label(verdict, trajectory)
        labels: Labels = (
            (n.CONTRACT_ID, verdict.contract_id),
            (n.CONTRACT_VERSION, verdict.contract_version),
            *(((n.AGENT_NAME, agent),) if agent else ()),
            *self._trajectory_labels(trajectory),
        )
        group = self._groups.get(labels)
        if group is None:
            group = self._groups[labels] = ({}, [0, 0, 0, 0], {})
        verdicts, counts, results = group
        verdicts[verdict.verdict] = verdicts.get(verdict.verdict, 0) + 1
        self._durations.append((labels, verdict.duration_ns / 1e9))
        c = verdict.counts
        counts[0] += c.invariant_failures
        counts[1] += c.tolerated_failures
        counts[2] += c.budget_exhausted
        counts[3] += c.missing_evidence
        for r in verdict.results:
            # ``_value_``: the outcome's string without the enum's descriptor.
            key = (r.name, r.oracle_type, r.outcome._value_)
            results[key] = results.get(key, 0) + 1

    def state(self) -> TallyState:
        """What ``flush`` would record, as plain data (see ``TallyState``)."""
        return [
            (labels, verdicts, counts, results)
            for labels, (verdicts, counts, results) in self._groups.items()
        ], list(self._durations)

    def merge(self, state: TallyState) -> None:
        """Add a tally made elsewhere (another process) to this one."""
        groups, durations = state
        mine = self._groups
        for labels, verdicts, counts, results in groups:
            group = mine.get(labels)
            if group is None:
                mine[labels] = (dict(verdicts), list(counts), dict(results))
                continue
            into, total, counted = group
            for verdict, count in verdicts.items():
                into[verdict] = into.get(verdict, 0) + count
            for i, count in enumerate(counts):
                total[i] += count
            for key, count in results.items():
                counted[key] = counted.get(key, 0) + count
        self._durations.extend(durations)

    def flush(self) -> None:
        m = self._m
        bounded: dict[Labels, dict[str, Any]] = {}
        for labels, (verdicts, counts, results) in self._groups.items():
            attributes = bounded[labels] = m.bounded(labels)
            for verdict, count in verdicts.items():
                m._traces.add(count, {**attributes, n.VERDICT: verdict})
            for instrument, count in zip(_COUNTED, counts, strict=True):
                if count:
                    getattr(m, instrument).add(count, attributes)
            for (name, oracle_type, outcome), count in results.items():
                m._results.add(
                    count,
                    {
                        **attributes,
                        n.EVALUATION_NAME: name,
                        n.ORACLE_TYPE: oracle_type,
                        n.OUTCOME: outcome,
                    },
                )
        # A verdict's duration under the attributes its group's counts got (a merged tally's
        # durations may carry labels of no group here): one ``bounded`` per label set.
        for labels, seconds in self._durations:
            if labels not in bounded:
                bounded[labels] = m.bounded(labels)
            m._duration.record(seconds, bounded[labels])
        self._groups.clear()
        self._durations.clear()
