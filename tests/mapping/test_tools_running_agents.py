"""A tool run that holds an agent's run is the delegation to that agent, but only when a
convention mapped the child to an agent (``agent_inside_is_delegation``, the LangSmith SDK's
tool rule): LangChain's subagent pattern calls the research agent's graph from a tool, and
the SDK types no span as a delegation. A chain the tool ran is no agent, so the tool stays a
tool call (else a forbidden tool could hide as a handoff)."""

from __future__ import annotations

from typing import Any

import pytest

from otel_oracles.assemble._tree import build_trace
from otel_oracles.mapping import ConventionSet, load_conventions, map_trace
from otel_oracles.model.span import SpanRecord, StatusCode
from otel_oracles.model.step import StepKind

TRACE = "0" * 31 + "7"


def span(span_id: str, parent: str, name: str, kind: str, **attrs: Any) -> SpanRecord:
    return SpanRecord(
        TRACE, span_id * 16, parent * 16 if parent else "", name, start_ns=int(span_id, 16),
        end_ns=100, attributes={"langsmith.span.kind": kind, **attrs}, scope_name="langsmith",
        status_code=StatusCode.OK,
    )  # fmt: skip


def graph(span_id: str, parent: str, agent: str) -> list[SpanRecord]:
    """A create_agent graph run with its model node (the agent, named by the graph)."""
    meta = {"langsmith.metadata.lc_agent_name": agent}
    return [
        span(span_id, parent, agent, "chain", **meta),
        span(chr(ord(span_id) + 1), span_id, "model", "chain",
             **meta, **{"langsmith.metadata.langgraph_node": "model"}),
    ]  # fmt: skip


def steps(spans: list[SpanRecord], conventions: ConventionSet) -> list[tuple[Any, ...]]:
    trajectory = map_trace(build_trace(TRACE, spans), conventions)
    return [(s.kind, s.tool, s.to_agent) for s in trajectory.steps if s.kind != StepKind.AGENT]


@pytest.fixture(scope="module")
def conventions() -> ConventionSet:
    return load_conventions()


def tool(parent: str) -> SpanRecord:
    return span("3", parent, "research_agent", "tool", **{"gen_ai.tool.name": "research_agent"})


def test_a_tool_holding_an_agent_run_is_the_delegation(conventions: ConventionSet) -> None:
    spans = [*graph("1", "", "triage_agent"), tool("1"), *graph("5", "3", "research_agent")]
    assert steps(spans, conventions) == [(StepKind.HANDOFF, "research_agent", "research_agent")]


def test_a_tool_holding_a_chain_stays_a_tool_call(conventions: ConventionSet) -> None:
    spans = [
        *graph("1", "", "triage_agent"),
        tool("1"),
        span("5", "3", "RunnableSequence", "chain",
             **{"langsmith.metadata.lc_agent_name": "triage_agent"}),
    ]  # fmt: skip
    assert steps(spans, conventions) == [(StepKind.TOOL_CALL, "research_agent", None)]
