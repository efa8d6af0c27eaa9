"""A batch holds a trajectory's labels, not the trajectory: ``BatchingEmitter`` over an
emitter that reads only labels (``reads_labels_only``) keeps ``labels_only(trajectory)``
for each waiting pair, so a graded trajectory is freed with its trace. The grade spans and
the metrics must come out as they would from the whole trajectory."""

from __future__ import annotations

import weakref
from typing import Any

import pytest

from otel_oracles.emit import (
    BatchingEmitter,
    EmitResult,
    EmitSettings,
    FanOutEmitter,
    GraderMetrics,
    InMemoryEmitter,
    OtelEmitter,
)
from otel_oracles.emit._metrics import MAX_LABEL_CHARS, labels_only
from otel_oracles.emit._records import ItemBatch, SpanItem, merged
from otel_oracles.emit._sinks import Sink
from otel_oracles.model.result import Verdict
from otel_oracles.model.step import Step, StepKind, Trajectory
from tests.emit.conftest import make_trajectory, make_verdict
from tests.emit.test_metric_tally import recorded


def _generation(index: int, provider: str | None, model: str | None) -> Step:
    return Step(index=index, kind=StepKind.GENERATION, provider=provider, model=model)


def _variants() -> dict[str, Trajectory]:
    """Trajectories whose labels come from different places (or nowhere)."""
    named = make_trajectory()
    long = "m" * (MAX_LABEL_CHARS * 3)
    return {
        "named": named,
        "provider-and-model-from-two-generations": named.model_copy(
            update={
                "steps": [
                    Step(index=0, kind=StepKind.TOOL_CALL, tool="search", provider="not-a-gen"),
                    _generation(1, None, None),
                    _generation(2, "anthropic", None),
                    _generation(3, "openai", "claude-x"),
                    _generation(4, "openai", "gpt-4o"),
                ]
            }
        ),
        "long-values-cut": named.model_copy(
            update={
                "steps": [_generation(0, long, long)],
                "agent_name": long,
                "resource": {"service.version": long, "service.name": "svc"},
            }
        ),
        "no-labels": make_trajectory("c" * 32).model_copy(
            update={"steps": [_generation(0, None, None)], "agent_name": None, "resource": {}}
        ),
        "version-not-a-string": named.model_copy(
            update={"resource": {"service.version": 7}, "steps": []}
        ),
    }


def _unnamed_verdict(trajectory: Trajectory) -> Verdict:
    """A verdict without an agent name of its own: the trajectory's is the label."""
    return make_verdict(trajectory).model_copy(update={"agent_name": None})


@pytest.mark.parametrize("kind", list(_variants()))
def test_labels_only_gives_the_metrics_of_the_whole_trajectory(kind: str) -> None:
    trajectory = _variants()[kind]
    kept = labels_only(trajectory)
    assert len(kept.steps) <= 1
    verdict = _unnamed_verdict(trajectory)

    def tally_of(t: Trajectory) -> Any:
        def count(metrics: GraderMetrics) -> None:
            tally = metrics.tally()
            tally.add(verdict, t)
            tally.flush()

        return count

    assert recorded(tally_of(kept)) == recorded(tally_of(trajectory))


class _Spans(Sink):
    """Keeps the attributes of every grade span it is handed."""

    name = "spans"

    def __init__(self) -> None:
        self.attributes: list[dict[str, Any]] = []

    def accepts(self, signal: Any) -> bool:
        return bool(signal == "traces")

    def export(self, signal: Any, batch: ItemBatch[Any]) -> bool:
        for span in batch:
            assert isinstance(span, SpanItem)
            self.attributes.append(merged(span.chunks, span.extra))
        return True

    def shutdown(self) -> None:
        pass


@pytest.mark.parametrize("kind", list(_variants()))
def test_labels_only_gives_the_grade_span_of_the_whole_trajectory(kind: str) -> None:
    trajectory = _variants()[kind]
    verdict = _unnamed_verdict(trajectory)
    spans = []
    for t in (trajectory, labels_only(trajectory)):
        sink = _Spans()
        emitter = OtelEmitter(sinks=[sink], settings=EmitSettings(metrics=False))
        assert emitter.export([(verdict, t)]) is EmitResult.SUCCESS
        emitter.shutdown()
        spans.append(sink.attributes)
    assert spans[0] == spans[1]
    assert len(spans[0]) == 1


def test_a_batch_waiting_for_more_verdicts_does_not_hold_the_trajectory() -> None:
    sink = _Spans()
    otel = OtelEmitter(sinks=[sink], settings=EmitSettings(metrics=False))
    batching = BatchingEmitter(otel, batch_size=100)
    assert otel.reads_labels_only and batching.reads_labels_only
    trajectory = make_trajectory()
    held = weakref.ref(trajectory)
    batching.export(
        [(make_verdict(trajectory), trajectory), (make_verdict(trajectory), trajectory)]
    )
    del trajectory
    assert held() is None, "the waiting pairs keep the whole trajectory alive"
    assert sink.attributes == []
    batching.shutdown()
    assert len(sink.attributes) == 2
    assert sink.attributes[0]["gen_ai.request.model"] == "gpt-4o-mini"


def test_an_emitter_that_may_read_the_whole_trajectory_gets_it() -> None:
    """Only an emitter that says it reads labels only is handed ``labels_only``; any other
    (a caller's own), alone or beside one that does, gets the trajectory itself."""
    otel = OtelEmitter(settings=EmitSettings(metrics=False))
    for inner in (InMemoryEmitter(), FanOutEmitter([otel, InMemoryEmitter()])):
        assert not inner.reads_labels_only
        batching = BatchingEmitter(inner, batch_size=100)
        trajectory = make_trajectory()
        batching.export([(make_verdict(trajectory), trajectory)])
        batching.shutdown()
        memory = inner if isinstance(inner, InMemoryEmitter) else inner.children[1]
        assert isinstance(memory, InMemoryEmitter)
        assert memory.results[0][1] is trajectory
