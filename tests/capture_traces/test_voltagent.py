"""The VoltAgent capture driver scripts the supervisor's delegation VoltAgent makes and reports
the versions its lockfile installs.

A VoltAgent supervisor delegates through its built-in ``delegate_task`` tool, naming the
sub-agent in ``targetAgents``; the sub-agent then runs from its own history, so the script
answers in call order: the delegation, the research agent's turns, then the supervisor's
answer again.
"""

from __future__ import annotations

import sys
from pathlib import Path

# The capture tools are scripts next to each other, not a package: import them as capture.py does.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "capture_traces"))

from capture import is_model_call
from fw_voltagent import script, versions
from scenarios import QUESTION, SCENARIOS


def test_handoff_is_a_delegate_task_call_then_the_research_agents_turns() -> None:
    scenario = SCENARIOS["g_handoff"]
    turns = script(scenario).turns
    assert turns[0] == [("delegate_task", {"task": QUESTION, "targetAgents": ["research_agent"]})]
    assert turns[1:-1] == scenario.turns[1:]
    assert turns[-1] == scenario.turns[-1]


def test_turns_without_a_handoff_are_the_scenarios() -> None:
    scenario = SCENARIOS["b_tool_retry"]
    assert script(scenario).turns == scenario.turns


def test_voltagent_llm_span_is_a_model_call() -> None:
    assert is_model_call({"span.type": "llm", "llm.model": "gpt-4o-mini"})
    assert not is_model_call({"span.type": "tool", "tool.name": "search_docs"})


def test_versions_are_the_lockfiles() -> None:
    found = versions()
    assert found["@voltagent/core"] == "2.10.0"
    assert all(v != "not installed" for v in found.values()), found
