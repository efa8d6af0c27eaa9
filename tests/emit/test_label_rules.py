"""The label rules (``VerdictLabels``, in the core) against their plain statement.

The grade span's agent, provider and model and the metrics' label sets come from one object
in the core (``emit._metrics.LABELS``): these are the rules ``docs/telemetry.md`` states,
written out here in Python (the form they had before the core read them) and compared over
values a trace can carry, including the odd ones (empty, long, not a ``str``, a ``str``
subclass, a lone surrogate, a generation naming only one of the two)."""

from __future__ import annotations

from typing import Any

import pytest

from otel_oracles.emit import _names as n
from otel_oracles.emit._metrics import (
    LABELS,
    MAX_LABEL_CHARS,
    agent_label,
    generation_labels,
    trace_label,
)
from otel_oracles.model.step import GENERATION, Step, StepKind, Trajectory
from tests.emit.conftest import make_trajectory, make_verdict


def _label(value: object) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    if len(value) <= MAX_LABEL_CHARS:
        return value
    return value[: MAX_LABEL_CHARS - 1] + "\u2026"


def _agent(verdict: Any, trajectory: Trajectory | None) -> str | None:
    return _label(verdict.agent_name or (trajectory.agent_name if trajectory else None))


def _generation(trajectory: Trajectory | None) -> tuple[str | None, str | None]:
    if trajectory is None:
        return None, None
    provider = model = None
    for step in trajectory.steps:
        if step.kind != GENERATION:
            continue
        provider = provider or step.provider
        model = model or step.model
        if provider and model:
            break
    return _label(provider), _label(model)


def _labels(verdict: Any, trajectory: Trajectory | None) -> tuple[tuple[str, Any], ...]:
    agent = _agent(verdict, trajectory)
    provider, model = _generation(trajectory)
    version = _label(trajectory.resource.get("service.version") if trajectory else None)
    found: list[tuple[str, Any]] = [
        (n.CONTRACT_ID, verdict.contract_id),
        (n.CONTRACT_VERSION, verdict.contract_version),
    ]
    for key, value in (
        (n.AGENT_NAME, agent),
        (n.PROVIDER_NAME, provider),
        (n.REQUEST_MODEL, model),
        (n.SUBJECT_SERVICE_VERSION, version),
    ):
        if value:
            found.append((key, value))
    return tuple(found)


class _Name(str):
    """A ``str`` subclass, as a caller's own string type would be."""


_AT_LIMIT = "a" * MAX_LABEL_CHARS
_VALUES: list[object] = [
    None,
    "",
    "x",
    _AT_LIMIT,
    _AT_LIMIT + "b",
    "\u00e9" * (MAX_LABEL_CHARS * 2),
    "\ud800" + "s" * MAX_LABEL_CHARS,
    _Name("sub"),
    _Name("n" * (MAX_LABEL_CHARS + 5)),
    7,
    b"bytes",
]


@pytest.mark.parametrize("value", _VALUES, ids=repr)
def test_a_label_is_a_non_empty_str_cut_to_the_limit(value: object) -> None:
    got = trace_label(value)
    assert got == _label(value)
    assert type(got) is type(_label(value))
    if isinstance(value, str) and 0 < len(value) <= MAX_LABEL_CHARS:
        assert got is value, "a short label is the value itself, not a copy"


def _generations(*pairs: tuple[str | None, str | None]) -> list[Step]:
    return [
        Step(index=i, kind=StepKind.GENERATION, provider=provider, model=model)
        for i, (provider, model) in enumerate(pairs)
    ]


_TRAJECTORIES: dict[str, Trajectory | None] = {
    "none": None,
    "named": make_trajectory(),
    "no-steps": make_trajectory().model_copy(
        update={"steps": [], "agent_name": None, "resource": {}}
    ),
    "only-tools": make_trajectory().model_copy(
        update={
            "steps": [Step(index=0, kind=StepKind.TOOL_CALL, tool="t", provider="p", model="m")]
        }
    ),
    "provider-then-model": make_trajectory().model_copy(
        update={
            "steps": [
                Step(index=0, kind=StepKind.TOOL_CALL, tool="t", provider="tool-p"),
                *_generations((None, None), ("anthropic", ""), ("openai", "claude-x"), ("o", "g")),
            ]
        }
    ),
    "model-never-named": make_trajectory().model_copy(
        update={"steps": _generations(("p1", None), ("p2", None))}
    ),
    "long-values": make_trajectory().model_copy(
        update={
            "steps": _generations(("p" * 300, "m" * 300)),
            "agent_name": "a" * 300,
            "resource": {"service.version": "v" * 300},
        }
    ),
    "odd-resource": make_trajectory().model_copy(
        update={"agent_name": "", "resource": {"service.version": 3}}
    ),
}


@pytest.mark.parametrize("name", list(_TRAJECTORIES))
@pytest.mark.parametrize("verdict_agent", [None, "", "verdict-agent", "v" * 200])
def test_the_labels_follow_the_rules(name: str, verdict_agent: str | None) -> None:
    trajectory = _TRAJECTORIES[name]
    verdict = make_verdict(make_trajectory()).model_copy(update={"agent_name": verdict_agent})
    assert agent_label(verdict, trajectory) == _agent(verdict, trajectory)
    assert generation_labels(trajectory) == _generation(trajectory)
    assert LABELS(verdict, trajectory) == _labels(verdict, trajectory)


def test_the_tally_counts_under_the_same_labels() -> None:
    """``GradeTally`` asks the rules in the core for a whole run's label set."""
    from otel_oracles.emit import GraderMetrics

    trajectory = _TRAJECTORIES["provider-then-model"]
    verdict = make_verdict(make_trajectory())
    tally = GraderMetrics.noop().tally()
    tally.add_all([(verdict, trajectory), (verdict, None)])
    assert [group[0] for group in tally.state()] == [
        _labels(verdict, trajectory),
        _labels(verdict, None),
    ]
