"""Delegation two levels deep (``s_nested_*``): the scripts the drivers serve and the ground
truth ``EXPECTED.md`` states.

A framework whose agents call other agents as tools is served its model turns in call order
(``Scenario.through_agent_tool``): each transfer becomes the call that runs the next agent and
each delegating agent answers after it. A script that dropped a level, or a ground truth that
named the deepest agent's answer as the run's where the triage agent answered otherwise, would
make the real-trace tests check something other than what ran.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "capture_traces"))

import capture
from scenarios import DISCLOSED_FAILURE_ANSWER, SCENARIOS, UNDISCLOSED_ANSWER

RESEARCH = ("research_agent", {"question": "q"})
RECORDS = ("records_agent", {"question": "r"})


def test_nested_delegation_runs_each_agent_from_the_one_above() -> None:
    scenario = SCENARIOS["s_nested_forbidden"]
    assert scenario.nested
    assert scenario.handoffs == [
        ("triage_agent", "research_agent"),
        ("research_agent", "records_agent"),
    ]
    turns = scenario.through_agent_tool(RESEARCH, nested=RECORDS).turns
    answer = scenario.turns[-1]
    assert turns[0] == [RESEARCH] and turns[2] == [RECORDS]
    assert turns[-3:] == [answer, answer, answer], "each level answers once"
    assert capture.scripted_tools("strands", scenario) == ["search_docs", "delete_records"]


def test_one_level_delegation_is_unchanged() -> None:
    scenario = SCENARIOS["s_delegated_forbidden"]
    assert not scenario.nested
    turns = scenario.through_agent_tool(RESEARCH).turns
    assert turns == [[RESEARCH], *scenario.turns[1:], scenario.turns[-1]]


def test_a_driver_without_the_records_agent_cannot_serve_the_script() -> None:
    with pytest.raises(ValueError, match="no call runs the records agent"):
        SCENARIOS["s_nested_failure"].through_agent_tool(RESEARCH)


def test_rewritten_answer_is_the_triage_agents_not_the_deepest() -> None:
    scenario = SCENARIOS["s_nested_rewritten"]
    turns = scenario.through_agent_tool(RESEARCH, nested=RECORDS).turns
    assert turns[-3:] == [DISCLOSED_FAILURE_ANSWER, UNDISCLOSED_ANSWER, UNDISCLOSED_ANSWER]
    text = capture.expected_md("strands", {"s_nested_rewritten": {}})
    assert f"- **Final answer:** '{UNDISCLOSED_ANSWER}'" in text
    assert f"the records agent answered '{DISCLOSED_FAILURE_ANSWER}'" in text
