"""The OpenAI Agents SDK for JavaScript capture: its driver reports the versions its lockfile
installs, and its agents are named only by OpenInference's ``graph.node.id``.

``@arizeai/openinference-instrumentation-openai-agents`` writes no ``agent.name`` on an AGENT
span; ``openinference.yaml`` reads ``graph.node.id`` for the OpenAI Agents SDK's instrumentors
alone, since other OpenInference instrumentors put opaque node ids there (Agno's are hex), and
an agent named by one would turn a handoff check that cannot be judged into a false failure.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.step import StepKind
from otel_oracles.pipeline import read_traces

# The capture tools are scripts next to each other, not a package: import them as capture.py does.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "capture_traces"))

from fw_openai_agents_js import versions

CAPTURE = (
    Path(__file__).resolve().parents[2]
    / "tests/testdata/traces/openai-agents-js/n_handback.nocontent.otlp.json"
)


def test_versions_are_the_lockfiles() -> None:
    found = versions()
    assert found["@openai/agents"] == "0.20.0"
    assert found["@arizeai/openinference-instrumentation-openai-agents"] == "0.2.15"
    assert all(v != "not installed" for v in found.values()), found


def agents_and_handoffs(path: Path) -> tuple[list[str | None], list[tuple[str | None, str | None]]]:
    problems: list[object] = []
    (trace,) = read_traces([str(path)], problems)
    assert problems == []
    trajectory = map_trace(trace, load_conventions())
    agents = [s.agent_name for s in trajectory.steps if s.kind == StepKind.AGENT]
    handoffs = [(s.from_agent, s.to_agent) for s in trajectory.steps if s.kind == StepKind.HANDOFF]
    return agents, handoffs


def test_agents_and_handoffs_are_named_by_graph_node_id() -> None:
    agents, handoffs = agents_and_handoffs(CAPTURE)
    assert sorted(a for a in agents if a) == ["research_agent", "triage_agent", "triage_agent"]
    assert handoffs == [("triage_agent", "research_agent"), ("research_agent", "triage_agent")]


def test_graph_node_id_names_no_agent_of_another_instrumentor(tmp_path: Path) -> None:
    doc = json.loads(CAPTURE.read_text())
    for resource_spans in doc["resourceSpans"]:
        for scope_spans in resource_spans["scopeSpans"]:
            scope_spans["scope"]["name"] = "openinference.instrumentation.other_framework"
    other = tmp_path / "other.otlp.json"
    other.write_text(json.dumps(doc))
    agents, handoffs = agents_and_handoffs(other)
    assert agents and all(a is None for a in agents)
    assert all(source is None for source, _ in handoffs)
