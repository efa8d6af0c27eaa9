"""A grading worker process counts each trace's verdicts in a ``Tally``, merges a batch's
tallies into one, and sends it, pickled, to the receiving process, which merges it again and
records it (it owns the one meter provider). Whatever path the counts take, the recorded
points must be those of counting every verdict in one tally: same series, same values."""

from __future__ import annotations

import pickle
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from otel_oracles.emit import GraderMetrics
from otel_oracles.emit import _names as n
from otel_oracles.model.result import Outcome, Verdict
from otel_oracles.model.step import Trajectory
from tests.emit.conftest import make_results, make_trajectory, make_verdict


def recorded(count: Any) -> dict[tuple[str, tuple[tuple[str, Any], ...]], Any]:
    """Every point ``count(metrics)`` records: (metric, sorted attributes) -> value (a
    histogram's count and sum)."""
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    count(GraderMetrics(provider.get_meter("test")))
    data = reader.get_metrics_data()
    assert data is not None
    points: dict[tuple[str, tuple[tuple[str, Any], ...]], Any] = {}
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    key = (metric.name, tuple(sorted(dict(point.attributes or {}).items())))
                    value = getattr(point, "value", None)
                    points[key] = value if value is not None else (point.count, point.sum)
    provider.shutdown()
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
