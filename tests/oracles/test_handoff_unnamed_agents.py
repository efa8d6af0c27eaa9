"""Handoffs whose agents were not recorded (LlamaIndex's OpenInference spans never name the
running agent; content off hides the target too): a rule such a transfer may satisfy or
break is missing evidence, never a pass and never a failure."""

from __future__ import annotations

from otel_oracles.model.result import Outcome
from otel_oracles.model.step import StepKind
from tests.oracles.trace_builders import check, traj

REQUIRED = {"type": "handoff", "required": ["triage_agent -> research_agent"]}


def handoff(from_agent: str | None, to_agent: str | None) -> dict[str, object]:
    return {"kind": StepKind.HANDOFF, "tool": "handoff", "from_agent": from_agent,
            "to_agent": to_agent}  # fmt: skip


def test_required_transfer_with_unrecorded_source_is_missing_evidence() -> None:
    res = check(REQUIRED, traj(handoff(None, "research_agent")))
    assert res.outcome == Outcome.MISSING_EVIDENCE
    assert "triage_agent -> research_agent" in res.message and res.span_ids == ["s0"]


def test_required_transfer_with_no_agent_recorded_is_missing_evidence() -> None:
    assert check(REQUIRED, traj(handoff(None, None))).outcome == Outcome.MISSING_EVIDENCE


def test_an_unnamed_transfer_that_cannot_be_the_required_one_still_fails() -> None:
    res = check(REQUIRED, traj(handoff(None, "billing_agent")))
    assert res.outcome == Outcome.INVARIANT_FAILURE and "did not happen" in res.message


def test_a_named_transfer_decides_even_beside_an_unnamed_one() -> None:
    both = traj(handoff("triage_agent", "research_agent"), handoff(None, None))
    assert check(REQUIRED, both).outcome == Outcome.PASS
    forbidden = {"type": "handoff", "forbidden": ["research_agent -> triage_agent"]}
    bad = traj(handoff("research_agent", "triage_agent"), handoff(None, None))
    assert check(forbidden, bad).outcome == Outcome.INVARIANT_FAILURE


def test_forbidden_transfer_an_unnamed_one_may_be_is_missing_evidence() -> None:
    forbidden = {"type": "handoff", "forbidden": ["research_agent -> triage_agent"]}
    res = check(forbidden, traj(handoff(None, "triage_agent")))
    assert res.outcome == Outcome.MISSING_EVIDENCE
    assert check(forbidden, traj(handoff(None, "billing_agent"))).outcome == Outcome.PASS
