"""The JavaScript tool loop's captures (``fw_openai_js.py``): its driver reports the versions
its lockfile installs, and the agents and the delegation each tracer records map as one run.

OpenInference's ``traceAgent`` names an AGENT span after the agent and writes no
``agent.name``; ``openinference.yaml`` reads that span name only on AGENT spans of an
application's own tracer, never on an instrumentation's (whose span names are methods or graph
nodes: ``support_agent.run``, ``agent``), which would turn a handoff check that cannot be judged
into a false failure. OpenLLMetry JS's ``withTool`` span holding a ``withAgent`` span is the
delegation to that agent, whatever the spans' end times say.
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

from fw_openai_js import versions_langfuse, versions_openinference, versions_openllmetry

TRACES = Path(__file__).resolve().parents[2] / "tests/testdata/traces"


def test_versions_are_the_lockfiles() -> None:
    openinference, langfuse, openllmetry = (
        versions_openinference(),
        versions_langfuse(),
        versions_openllmetry(),
    )
    assert openinference["@arizeai/openinference-instrumentation-openai"] == "4.2.7"
    assert langfuse["@langfuse/otel"] == "5.11.1"
    assert openllmetry["@traceloop/node-server-sdk"] == "0.27.0"
    for found in (openinference, langfuse, openllmetry):
        assert found["openai"] == "7.59.0"
        assert all(v != "not installed" for v in found.values()), found


def agents_and_handoffs(path: Path) -> tuple[list[str | None], list[tuple[str | None, str | None]]]:
    problems: list[object] = []
    (trace,) = read_traces([str(path)], problems)
    assert problems == []
    trajectory = map_trace(trace, load_conventions())
    agents = [s.agent_name for s in trajectory.steps if s.kind == StepKind.AGENT]
    handoffs = [(s.from_agent, s.to_agent) for s in trajectory.steps if s.kind == StepKind.HANDOFF]
    return agents, handoffs


def test_application_agents_are_named_by_their_span_and_the_transfer_is_a_handoff() -> None:
    path = TRACES / "openinference-openai-js" / "g_handoff.nocontent.otlp.json"
    agents, handoffs = agents_and_handoffs(path)
    assert agents == ["triage_agent", "research_agent"]
    assert handoffs == [("triage_agent", "research_agent")]


def test_an_instrumentations_agent_span_name_names_no_agent(tmp_path: Path) -> None:
    source = TRACES / "openinference-openai-js" / "g_handoff.nocontent.otlp.json"
    doc = json.loads(source.read_text())
    for resource_spans in doc["resourceSpans"]:
        for scope_spans in resource_spans["scopeSpans"]:
            scope_spans["scope"]["name"] = "openinference.instrumentation.other_framework"
    other = tmp_path / "other.otlp.json"
    other.write_text(json.dumps(doc))
    agents, handoffs = agents_and_handoffs(other)
    assert agents == [None, None]
    assert all(h == (None, None) for h in handoffs)


def test_openllmetry_tool_holding_an_agent_is_the_delegation() -> None:
    path = TRACES / "openllmetry-openai-js" / "g_handoff.nocontent.otlp.json"
    agents, handoffs = agents_and_handoffs(path)
    assert agents == ["triage_agent", "research_agent"]
    assert handoffs == [("triage_agent", "research_agent")]
