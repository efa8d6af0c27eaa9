"""A grading worker process counts each trace's verdicts in a ``Tally``, merges a batch's
tallies into one, and sends it, pickled, to the receiving process, which merges it again and
records it (it owns the metrics' readers). Whatever path the counts take, the recorded
points must be those of counting every verdict in one tally: same series, same values.

The counts are the core's (``GradeTally``), the receiver's counts the grader's own, and
their series are collected by the grader's own reader (``MetricReader``), no meter
provider; what an exporter receives must be what the SDK's own instruments would have
aggregated from the same verdicts and receiver counts: names, units, descriptions,
attributes, values, buckets, min and max, in either temporality, collection after
collection."""

from __future__ import annotations

import math
import pickle
import threading
from typing import Any

import pytest
from opentelemetry.sdk.metrics import Counter, Histogram, MeterProvider
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    InMemoryMetricReader,
    MetricExporter,
    MetricExportResult,
)
from opentelemetry.sdk.metrics.export import MetricsData as SdkMetricsData
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.util.instrumentation import InstrumentationScope

from otel_oracles.emit import GraderMetrics
from otel_oracles.emit import _names as n
from otel_oracles.emit._metric_data import MetricsData
from otel_oracles.emit._metric_export import (
    TEMPORALITY_VARIABLE,
    MetricReader,
    OwnMetricExporter,
    SuppliedMetricExporter,
)
from otel_oracles.emit._metrics import (
    DURATION_BUCKETS_S,
    agent_label,
    generation_labels,
    trace_label,
)
from otel_oracles.model.result import Outcome, Verdict
from otel_oracles.model.step import Trajectory
from tests.emit.conftest import make_results, make_trajectory, make_verdict


class Kept(OwnMetricExporter):
    """Keeps every collection it is handed, as delivered (the verdict metrics added)."""

    def __init__(self, delta: bool = False) -> None:
        super().__init__(delta)
        self.delivered: list[MetricsData] = []
        self.arrived = threading.Event()

    def deliver(self, metrics_data: MetricsData, timeout_s: float) -> bool:
        self.delivered.append(metrics_data)
        self.arrived.set()
        return True


class Collecting:
    """The grader's metrics with one reader that collects only when asked (``collect``) and
    at shutdown, its exporter ``Kept`` (or a supplied SDK exporter wrapped as the emitter
    wraps it)."""

    def __init__(self, exporter: OwnMetricExporter) -> None:
        self.exporter = exporter
        self.metrics = GraderMetrics()
        self.reader = MetricReader(
            exporter,
            self.metrics,
            Resource.create({}),
            InstrumentationScope("test"),
            interval_ms=math.inf,
        )
        self.seen = 0

    def collect(self, kept: Kept) -> MetricsData | None:
        """What the next collection delivered, None when it delivered nothing."""
        self.reader.collect()
        new = kept.delivered[self.seen :]
        self.seen = len(kept.delivered)
        assert len(new) <= 1
        return new[0] if new else None


def recorded(count: Any) -> dict[tuple[str, tuple[tuple[str, Any], ...]], Any]:
    """Every point ``count(metrics)`` records: (metric, sorted attributes) -> value (a
    histogram's count and sum)."""
    kept = Kept()
    collecting = Collecting(kept)
    count(collecting.metrics)
    data = collecting.collect(kept)
    collecting.reader.shutdown()
    assert data is not None
    points: dict[tuple[str, tuple[tuple[str, Any], ...]], Any] = {}
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    key = (metric.name, tuple(sorted(dict(point.attributes or {}).items())))
                    value = getattr(point, "value", None)
                    points[key] = value if value is not None else (point.count, point.sum)
    return points


def verdicts() -> list[tuple[Verdict, Trajectory]]:
    """Two traces (one without a model), two contracts, results repeating across them."""
    named = make_trajectory()
    bare = make_trajectory("b" * 32).model_copy(update={"steps": [], "agent_name": None})
    extra = next(r for r in make_results() if r.name == "no-shell")
    assert extra.outcome is Outcome.PASS
    return [
        (make_verdict(named), named),
        (make_verdict(named, contract_id="other"), named),
        (make_verdict(bare, [*make_results(), extra]), bare),
        (make_verdict(named), named),
    ]


def test_tallies_merged_across_processes_record_what_one_tally_records() -> None:
    pairs = verdicts()

    def at_once(metrics: GraderMetrics) -> None:
        tally = metrics.tally()
        for verdict, trajectory in pairs:
            tally.add(verdict, trajectory)
        tally.flush()

    def as_serve_does(metrics: GraderMetrics) -> None:
        worker = GraderMetrics.noop()
        batch = worker.tally()
        for verdict, trajectory in pairs:  # one tally per trace, merged per exported batch
            one = worker.tally()
            one.add(verdict, trajectory)
            batch.merge(one.state())
        parent = metrics.tally()
        parent.merge(pickle.loads(pickle.dumps(batch.state())))
        parent.flush()

    once = recorded(at_once)
    assert once == recorded(as_serve_does)
    results = {
        dict(attrs)[n.EVALUATION_NAME]: value
        for (name, attrs), value in once.items()
        if name == n.METRIC_RESULTS
        and dict(attrs)[n.CONTRACT_ID] == "support-answers"
        and n.REQUEST_MODEL not in dict(attrs)
        and dict(attrs)[n.OUTCOME] == "pass"
    }
    assert results["no-shell"] == 2, "the bare trace's two passing no-shell results"
    traces = [v for (name, _), v in once.items() if name == n.METRIC_TRACES]
    assert sorted(traces) == [1, 1, 2]


_DELTA = {Counter: AggregationTemporality.DELTA, Histogram: AggregationTemporality.DELTA}


Received = list[tuple[str, tuple[Any, ...]]]
"""The receiver's counts of a batch: (``GraderMetrics`` method, its arguments)."""

RECEIVED: list[Received] = [
    [
        ("buffered_traces_changed", (3,)),
        ("late_spans", (2,)),
        ("rejected_requests", ("resource_exhausted", "grpc")),
        ("buffered_traces_changed", (-1,)),
    ],
    [
        ("buffered_traces_changed", (-2,)),
        ("evicted_traces", (1,)),
        ("rejected_requests", ("invalid_argument", "http", 2)),
        ("rejected_requests", ("resource_exhausted", "grpc")),
        ("late_spans", (-1,)),  # a counter takes no negative count
    ],
    [],
]


def sdk_recorded(
    batches: list[list[tuple[Verdict, Trajectory]]], delta: bool
) -> list[SdkMetricsData | None]:
    """Each collection after each batch, the verdicts and the receiver's counts
    (``RECEIVED``) recorded through the SDK's own instruments (one ``add`` per count, one
    ``record`` per duration), as they were before the grader aggregated its metrics."""
    reader = InMemoryMetricReader(preferred_temporality=_DELTA if delta else None)
    provider = MeterProvider(metric_readers=[reader], resource=Resource.create({}))
    meter = provider.get_meter("test")
    traces = meter.create_counter(
        n.METRIC_TRACES, "{trace}", "Traces graded, per contract and verdict."
    )
    results = meter.create_counter(
        n.METRIC_RESULTS, "{result}", "Check results, per contract, check and outcome."
    )
    counted = [
        meter.create_counter(name, unit, description)
        for name, unit, description in (
            (n.METRIC_INVARIANT_FAILURES, "{failure}", "Invariant failures (must-hold violated)."),
            (n.METRIC_TOLERATED_FAILURES, "{failure}", "Tolerated failures (within budget)."),
            (n.METRIC_BUDGETS_EXHAUSTED, "{budget}", "Tolerances used beyond their budget."),
            (n.METRIC_MISSING_EVIDENCE, "{result}", "Checks that lacked the evidence to judge."),
        )
    ]
    duration = meter.create_histogram(
        n.METRIC_DURATION,
        "s",
        "Time to grade one trace against one contract.",
        explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS_S),
    )
    buffered = meter.create_up_down_counter(
        n.METRIC_BUFFERED_TRACES, "{trace}", "Traces buffered awaiting completion."
    )
    late = meter.create_counter(
        n.METRIC_LATE_SPANS, "{span}", "Spans that arrived after their trace was graded."
    )
    evicted = meter.create_counter(
        n.METRIC_EVICTED_TRACES, "{trace}", "Traces evicted from the buffer for memory."
    )
    rejected = meter.create_counter(
        n.METRIC_REJECTED_REQUESTS, "{request}", "OTLP export requests the receiver refused."
    )

    def receive(method: str, args: tuple[Any, ...]) -> None:
        if method == "rejected_requests":
            error_type, transport, *count = args
            attributes = {n.ERROR_TYPE: error_type, n.TRANSPORT: transport}
            rejected.add(count[0] if count else 1, attributes)
        else:
            instrument = {
                "buffered_traces_changed": buffered,
                "late_spans": late,
                "evicted_traces": evicted,
            }[method]
            instrument.add(*args)

    out = []
    for batch, received in zip(batches, RECEIVED, strict=True):
        for method, args in received:
            receive(method, args)
        for verdict, trajectory in batch:
            agent = agent_label(verdict, trajectory)
            provider_name, model = generation_labels(trajectory)
            labels: dict[str, object] = {
                n.CONTRACT_ID: verdict.contract_id,
                n.CONTRACT_VERSION: verdict.contract_version,
            }
            version = trace_label(trajectory.resource.get("service.version"))
            for key, value in (
                (n.AGENT_NAME, agent),
                (n.PROVIDER_NAME, provider_name),
                (n.REQUEST_MODEL, model),
                (n.SUBJECT_SERVICE_VERSION, version),
            ):
                if value:
                    labels[key] = value
            traces.add(1, {**labels, n.VERDICT: verdict.verdict})
            c = verdict.counts
            numbers = (
                c.invariant_failures,
                c.tolerated_failures,
                c.budget_exhausted,
                c.missing_evidence,
            )
            for instrument, number in zip(counted, numbers, strict=True):
                if number:
                    instrument.add(number, labels)
            for r in verdict.results:
                results.add(
                    1,
                    {
                        **labels,
                        n.EVALUATION_NAME: r.name,
                        n.ORACLE_TYPE: r.oracle_type,
                        n.OUTCOME: r.outcome.value,
                    },
                )
            duration.record(verdict.duration_ns / 1e9, labels)
        out.append(reader.get_metrics_data())
    provider.shutdown()
    return out


def tally_recorded(
    batches: list[list[tuple[Verdict, Trajectory]]], delta: bool
) -> list[MetricsData | None]:
    """``sdk_recorded``, the verdicts counted by the core, the receiver's counts by
    ``GraderMetrics``, collected by the grader's reader."""
    kept = Kept(delta)
    collecting = Collecting(kept)
    out = []
    for batch, received in zip(batches, RECEIVED, strict=True):
        for method, args in received:
            getattr(collecting.metrics, method)(*args)
        tally = collecting.metrics.tally()
        tally.add_all(list(batch))
        tally.flush()
        out.append(collecting.collect(kept))
    collecting.reader.shutdown()
    return out


def shape(data: MetricsData | SdkMetricsData | None) -> dict[Any, Any]:
    """What a collection says, time stamps left out: per metric (name, unit, description,
    kind, temporality, monotonic), per sorted attribute set, the value or the histogram."""
    out: dict[Any, Any] = {}
    if data is None:
        return out
    for rm in data.resource_metrics:
        for sm in rm.scope_metrics:
            assert sm.scope.name == "test"
            for m in sm.metrics:
                d = m.data
                key = (
                    m.name,
                    m.unit,
                    m.description,
                    type(d).__name__,
                    d.aggregation_temporality,
                    getattr(d, "is_monotonic", None),
                )
                points = out.setdefault(key, {})
                for p in d.data_points:
                    attrs = tuple(sorted(dict(p.attributes or {}).items()))
                    assert not p.exemplars
                    assert p.start_time_unix_nano <= p.time_unix_nano
                    if hasattr(p, "bucket_counts"):
                        points[attrs] = (
                            p.count,
                            pytest.approx(p.sum),
                            tuple(p.bucket_counts),
                            tuple(p.explicit_bounds),
                            p.min,
                            p.max,
                        )
                    else:
                        points[attrs] = p.value
    return out


@pytest.mark.parametrize("delta", [False, True], ids=["cumulative", "delta"])
def test_collections_are_what_the_sdk_instruments_aggregate(delta: bool) -> None:
    pairs = verdicts()
    slow = make_verdict(pairs[0][1]).model_copy(update={"duration_ns": 7_000_000_000})
    batches = [pairs, [pairs[1], (slow, pairs[0][1])], []]
    expected = [shape(d) for d in sdk_recorded(batches, delta)]
    got = [shape(d) for d in tally_recorded(batches, delta)]
    assert got == expected
    assert expected[0] and expected[1]
    assert len(expected[0]) == 10, "six counters, the durations, three of the receiver's"
    assert n.METRIC_EVICTED_TRACES in {key[0] for key in expected[1]}
    last = {key[0] for key in expected[2]}
    if delta:
        assert last == {n.METRIC_BUFFERED_TRACES}, "delta: nothing new, only the up-down sum"
    else:
        assert len(last) == 11


class Supplied(MetricExporter):
    """An SDK exporter as a caller supplies it: keeps what its public ``export`` is given."""

    def __init__(self, result: MetricExportResult = MetricExportResult.SUCCESS) -> None:
        super().__init__()
        self.exported: list[SdkMetricsData] = []
        self.result = result
        self.shut_down = False

    def export(
        self, metrics_data: SdkMetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        self.exported.append(metrics_data)
        return self.result

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        self.shut_down = True


@pytest.mark.parametrize("preference", ["", "delta"])
def test_a_supplied_exporter_gets_the_verdict_metrics_in_the_preferred_temporality(
    preference: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TEMPORALITY_VARIABLE, preference)
    supplied = Supplied()
    adapter = SuppliedMetricExporter(supplied)
    failures: list[str] = []
    adapter.on_failure = failures.append
    collecting = Collecting(adapter)
    collecting.reader.collect()
    assert supplied.exported == [], "nothing collected: nothing exported"

    tally = collecting.metrics.tally()
    tally.add_all(verdicts())
    tally.flush()
    collecting.metrics.late_spans(2)
    collecting.reader.collect()
    (data,) = supplied.exported
    metrics = [m for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics]
    by_name = {m.name: m for m in metrics}
    assert len(by_name) == len(metrics) == 8, "six counters, the durations, the late spans"
    assert n.METRIC_LATE_SPANS in by_name
    assert [sm.scope.name for rm in data.resource_metrics for sm in rm.scope_metrics] == ["test"]
    wanted = AggregationTemporality.DELTA if preference else AggregationTemporality.CUMULATIVE
    assert by_name[n.METRIC_TRACES].data.aggregation_temporality is wanted
    assert by_name[n.METRIC_DURATION].data.aggregation_temporality is wanted
    assert by_name[n.METRIC_LATE_SPANS].data.aggregation_temporality is wanted
    assert not failures

    supplied.result = MetricExportResult.FAILURE
    collecting.metrics.late_spans(1)
    collecting.reader.collect()
    assert failures == ["SuppliedMetricExporter"]
    collecting.reader.shutdown()
    assert supplied.shut_down


def test_a_reader_collects_on_its_interval_and_once_more_at_shutdown() -> None:
    kept = Kept()
    metrics = GraderMetrics()
    reader = MetricReader(
        kept, metrics, Resource.create({}), InstrumentationScope("test"), interval_ms=20
    )
    metrics.late_spans(1)
    assert kept.arrived.wait(30), "the reader's thread collected on its interval"
    reader.shutdown()
    assert reader.exporter.shut_down
    (value,) = {
        p.value
        for d in kept.delivered
        for p in d.resource_metrics[0].scope_metrics[0].metrics[0].data.data_points
    }
    assert value == 1
    count = len(kept.delivered)
    metrics.late_spans(1)
    reader.shutdown()  # once only
    assert len(kept.delivered) == count


def test_an_infinite_interval_collects_at_shutdown_only() -> None:
    kept = Kept()
    collecting = Collecting(kept)
    collecting.metrics.evicted_traces(3)
    assert kept.delivered == []
    collecting.reader.shutdown()
    (data,) = kept.delivered
    (metric,) = data.resource_metrics[0].scope_metrics[0].metrics
    assert metric.name == n.METRIC_EVICTED_TRACES
    assert [p.value for p in metric.data.data_points] == [3]


def test_the_noop_metrics_take_no_reader() -> None:
    with pytest.raises(ValueError, match="no readers"):
        MetricReader(
            Kept(), GraderMetrics.noop(), Resource.create({}), InstrumentationScope("test")
        )


@pytest.mark.parametrize("value", ["0", "-5"])
def test_an_interval_of_zero_or_less_is_refused(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_METRIC_EXPORT_INTERVAL", value)
    with pytest.raises(ValueError, match="must be above 0"):
        MetricReader(Kept(), GraderMetrics(), Resource.create({}), InstrumentationScope("t"))
