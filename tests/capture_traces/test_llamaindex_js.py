"""The LlamaIndex.TS capture (``fw_llamaindex_js.py``): its driver reports the versions its
lockfile installs, and scripts the workflow's own ``handOff`` call where a scenario transfers
to the research agent, every other turn as the scenario has it."""

from __future__ import annotations

import sys
from pathlib import Path

# The capture tools are scripts next to each other, not a package: import them as capture.py does.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "capture_traces"))

from fw_adk_go import scripted_calls
from fw_llamaindex_js import HANDOFF, script, versions
from scenarios import SCENARIOS


def test_versions_are_the_lockfiles() -> None:
    found = versions()
    assert found["llamaindex"] == "0.12.1"
    assert found["@llamaindex/workflow"] == "1.1.25"
    assert found["@traceloop/node-server-sdk"] == "0.27.0"
    assert all(v != "not installed" for v in found.values()), found


def test_the_transfer_is_the_workflows_handoff_tool() -> None:
    scenario = SCENARIOS["s_delegated_forbidden"]
    scripted = script(scenario)
    assert scripted.turns[0] == [HANDOFF]
    assert scripted.turns[1:] == scenario.turns[1:]
    # The program's tools run the scenario's calls only: the handoff is the framework's.
    assert [c["tool"] for c in scripted_calls(scenario)] == ["search_docs", "delete_records"]


def test_a_single_agent_run_is_the_scenarios() -> None:
    scenario = SCENARIOS["b_tool_retry"]
    assert script(scenario).turns == scenario.turns
