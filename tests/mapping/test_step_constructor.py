"""Steps and trajectories that the mapping builds without validation (``from_normalized``)
are exactly what validation builds from the same values: on every captured real trace, and
for the default-factory fields that must never be shared between two steps."""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.step import Step, StepKind, Trajectory
from otel_oracles.pipeline import read_traces

TRACES = Path(__file__).resolve().parents[1] / "testdata" / "traces"
FILES = sorted(TRACES.glob("*/*.otlp.json"))


def _given(model: Step | Trajectory) -> dict[str, object]:
    return {name: getattr(model, name) for name in model.model_fields_set}


@pytest.fixture(scope="module")
def trajectories() -> list[Trajectory]:
    conventions = load_conventions()
    return [map_trace(t, conventions) for t in read_traces([str(f) for f in FILES], [])]


def test_every_mapped_step_equals_its_validated_twin(trajectories: list[Trajectory]) -> None:
    steps = [s for t in trajectories for s in t.steps]
    assert len(steps) > 1000, "the captured traces map to many steps"
    for step in steps:
        twin = Step(**_given(step))
        assert step == twin, f"step {step.index} of {step.source}: differs once validated"
        assert step.model_fields_set == twin.model_fields_set
        assert list(step.model_dump()) == list(twin.model_dump()), "fields in declared order"


def test_every_mapped_trajectory_equals_its_validated_twin(
    trajectories: list[Trajectory],
) -> None:
    for trajectory in trajectories:
        twin = Trajectory(**_given(trajectory))
        assert trajectory == twin, f"trace {trajectory.trace_id}: differs once validated"
        assert trajectory.model_fields_set == twin.model_fields_set


def test_normalized_steps_keep_defaults_and_share_no_mutable_default() -> None:
    first = Step.from_normalized({"index": 0, "kind": StepKind.TOOL_CALL, "tool": "search"})
    second = Step.from_normalized({"index": 1, "kind": StepKind.GENERATION})
    assert first == Step(index=0, kind=StepKind.TOOL_CALL, tool="search")
    assert (first.status, first.redacted, first.synthesized) == ("unset", (), False)
    assert first.attributes == {} and first.attributes is not second.attributes
    empty = [Trajectory.from_normalized({"steps": []}) for _ in range(2)]
    assert empty[0].orphan_spans is not empty[1].orphan_spans
    assert empty[0].unmapped_spans is not empty[1].unmapped_spans


def test_normalized_steps_stay_frozen() -> None:
    step = Step.from_normalized({"index": 0, "kind": StepKind.OTHER})
    with pytest.raises(ValueError, match="frozen"):
        step.index = 1  # type: ignore[misc]
