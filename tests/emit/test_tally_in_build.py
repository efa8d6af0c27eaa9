"""The records' builder counts the verdict metrics as it builds (``VerdictRecords.build``
with a tally): the emitter no longer counts its verdicts in a second pass over them
(``GradeTally.add``), which read every verdict, result and label again.

Counting while building must count what the second pass counted: the same label sets in the
same order, the same verdicts, failure counts, results per (check, oracle type, outcome) and
durations, whichever record forms are on (a result is then read from the check the builder
made, or on its own when no form makes one), in either build form (items or protobuf
requests), across the several calls a small batch takes (each verdict counted once), and
with a tally whose label rules are not the builder's (it then applies its own)."""

from __future__ import annotations

from typing import Any

import pytest

from otel_oracles._native import GradeTally, ProtoRequest
from otel_oracles.emit import EmitSettings, GraderMetrics, OtelEmitter
from otel_oracles.model.result import Verdict
from otel_oracles.model.step import Trajectory
from tests.emit.conftest import KeepingSink, make_results, make_trajectory, make_verdict
from tests.emit.test_label_rules import _TRAJECTORIES


def _pairs() -> list[tuple[Verdict, Trajectory | None]]:
    """Runs of one trajectory and contract, contracts alternating on one trajectory,
    trajectories with odd labels, none at all, a verdict naming its own agent, and a
    verdict without results."""
    named = make_trajectory()
    bare = make_trajectory("b" * 32).model_copy(update={"steps": [], "agent_name": None})
    own_agent = make_verdict(named).model_copy(update={"agent_name": "verdict-agent"})
    pairs: list[tuple[Verdict, Trajectory | None]] = [
        (make_verdict(named), named),
        (make_verdict(named), named),
        (make_verdict(named, contract_id="other"), named),
        (make_verdict(named), named),
        (own_agent, named),
        (make_verdict(bare, make_results()[:2]), bare),
        (make_verdict(named, []), named),
        (make_verdict(named), None),
    ]
    pairs += [(make_verdict(make_trajectory()), t) for t in _TRAJECTORIES.values()]
    return pairs


def _built(settings: EmitSettings, tally: GradeTally, proto: bool, batch: int) -> int:
    """Builds the records of ``_pairs()`` as the emitter does (a call per ``batch`` records,
    the requests or lists emptied between calls), counting in ``tally``; the calls made."""
    emitter = OtelEmitter(sinks=[KeepingSink()], settings=settings)
    pairs = _pairs()
    spans: list[Any] | ProtoRequest
    logs: list[Any] | ProtoRequest
    if proto:
        spans, logs = ProtoRequest(batch), ProtoRequest(batch)
    else:
        spans, logs = [], []
    at = calls = 0
    while at < len(pairs):
        at = emitter._builder.build(pairs, at, spans, logs, batch, tally)
        calls += 1
        for pending in (spans, logs):
            if isinstance(pending, ProtoRequest):
                pending.take(emitter.resource, emitter._scope)
            else:
                pending.clear()
    return calls


_FORMS = [
    (True, True, True),
    (True, False, True),
    (True, True, False),
    (False, False, True),
    (True, False, False),
    (False, False, False),
]
"""(grade span, span events, log events): the last two make no check records."""


@pytest.mark.parametrize("forms", _FORMS)
@pytest.mark.parametrize("proto", [False, True])
@pytest.mark.parametrize("batch", [3, 512])
def test_counted_while_building_is_what_a_second_pass_counts(
    forms: tuple[bool, bool, bool], proto: bool, batch: int
) -> None:
    grade_span, span_events, log_events = forms
    settings = EmitSettings(grade_span=grade_span, span_events=span_events, log_events=log_events)
    tally = GraderMetrics.noop().tally()
    calls = _built(settings, tally.core, proto, batch)
    second = GraderMetrics.noop().tally()
    second.add_all(_pairs())
    assert tally.state() == second.state()
    assert len(tally.state()) > 5
    # A small batch took several calls, each counting only the verdicts it built.
    assert (calls > 1) == (batch == 3 and (grade_span or log_events))


def test_a_tally_with_other_rules_applies_its_own() -> None:
    """A tally whose labels are not the builder's rules is handed no labels: it asks its own
    (here a Python function, which sees each run's verdict and trajectory)."""
    asked: list[tuple[Any, Any]] = []

    def labels(verdict: Any, trajectory: Any) -> tuple[tuple[str, Any], ...]:
        asked.append((verdict, trajectory))
        return (("contract", verdict.contract_id), ("own", trajectory is not None))

    tally = GradeTally(labels, [0.001, 1.0])
    _built(EmitSettings(), tally, True, 512)
    second = GradeTally(labels, [0.001, 1.0])
    second.add(_pairs())
    assert tally.state() == second.state()
    assert [label for label, *_ in tally.state()] == [
        (("contract", "support-answers"), ("own", True)),
        (("contract", "other"), ("own", True)),
        (("contract", "support-answers"), ("own", False)),
    ]
    # Asked once per run of one trajectory, contract and agent, in both passes alike.
    assert len(asked) % 2 == 0
    assert asked[: len(asked) // 2] == asked[len(asked) // 2 :]
