"""A ``span`` selector on ``gen_ai.agent.name`` selects an agent whatever attribute its
instrumentation used, through the agent names conventions map (real captures whose spans do
not carry ``gen_ai.agent.name``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_oracles.grade.loader import parse_contract
from otel_oracles.mapping import load_conventions
from otel_oracles.pipeline import grade_trace, read_traces

TRACES = Path(__file__).resolve().parents[1] / "testdata" / "traces"


def _contract(name: str) -> object:
    return parse_contract(
        {
            "id": "by-agent",
            "match": {"span": {"gen_ai.agent.name": name}},
            "invariants": [{"type": "tool_not_called", "tool": "delete_records"}],
        },
        "inline",
    )


@pytest.mark.parametrize(
    "source", ["crewai-openinference", "smolagents-openinference", "langgraph-openinference"]
)
def test_mapped_agent_name_selects_across_instrumentations(source: str) -> None:
    path = next(p for p in (TRACES / source).glob("d_forbidden_tool.otlp.json*"))
    problems: list[object] = []
    (trace,) = [t for t in read_traces([str(path)], problems) if len(t.spans) > 1]
    assert all("gen_ai.agent.name" not in s.attributes for s in trace.spans), "the premise"
    conventions = load_conventions()
    graded = grade_trace(trace, [_contract("support_agent")], conventions)
    assert len(graded) == 1
    assert not graded[0][0].passed, "selected, and the forbidden call is seen"
    assert grade_trace(trace, [_contract("billing_agent")], conventions) == []
    assert grade_trace(trace, [_contract("/^support_/")], conventions) != []
