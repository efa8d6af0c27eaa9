"""The ADK for TypeScript capture driver scripts the transfers ADK JS can make and reports the
versions its lockfile installs.

ADK JS names ``transfer_to_agent``'s argument ``agentName``: a scripted ``agent_name`` fails
the tool's schema, the transfer never happens and the run is not the scenario's. The versions
EXPECTED.md lists are the ones ``npm ci`` installs, read from the committed lockfile.
"""

from __future__ import annotations

import sys
from pathlib import Path

# The capture tools are scripts next to each other, not a package: import them as capture.py does.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "capture_traces"))

from fw_adk_js import script, versions
from scenarios import SCENARIOS


def test_each_transfer_names_its_target_in_adk_js_argument() -> None:
    scenario = SCENARIOS["n_handback"]
    transfers = [
        args
        for turn in script(scenario).turns
        if not isinstance(turn, str)
        for name, args in turn
        if name == "transfer_to_agent"
    ]
    assert transfers == [{"agentName": "research_agent"}, {"agentName": "triage_agent"}]
    assert [to for _, to in scenario.handoffs] == ["research_agent", "triage_agent"]


def test_turns_without_a_transfer_are_the_scenarios() -> None:
    scenario = SCENARIOS["b_tool_retry"]
    assert script(scenario).turns == scenario.turns


def test_versions_are_the_lockfiles() -> None:
    found = versions()
    assert found["@google/adk"] == "2.0.0"
    assert all(v != "not installed" for v in found.values()), found
