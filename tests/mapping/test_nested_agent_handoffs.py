"""Delegation recorded only by nesting: with ``nested_agent_is_handoff`` on an agent rule, an
agent span inside another agent's span (no tool or handoff span between) is a handoff from
the enclosing agent, and the manager's requested call of the sub-agent links to it instead
of becoming a never-answered tool call. Without the option, or with a delegating tool span
between the agents, nothing is added."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from otel_oracles.assemble._tree import build_trace
from otel_oracles.mapping import ConventionSet, load_conventions, map_trace
from otel_oracles.model.span import SpanRecord
from otel_oracles.model.step import StepKind, Trajectory

TRACE = "0" * 31 + "7"
MANAGER, STEP, LLM, SUB, SUB_TOOL = "a" * 16, "b" * 16, "c" * 16, "d" * 16, "e" * 16

RULES = """
name: nesting-{flag}
priority: 50
rules:
  - id: agent
    step: agent
    match: {{all: [{{attr: kind, equals: agent}}]}}
    nested_agent_is_handoff: {flag}
    fields:
      agent_name: {{span_name: '^(.+)\\.run$'}}
  - id: step
    step: none
    match: {{all: [{{attr: kind, equals: step}}]}}
  - id: tool
    step: tool_call
    match: {{all: [{{attr: kind, equals: tool}}]}}
    fields:
      tool: {{attr: tool.name}}
  - id: llm
    step: generation
    match: {{all: [{{attr: kind, equals: llm}}]}}
    extends: openinference/llm
"""


def _conventions(tmp_path: Path, flag: bool) -> ConventionSet:
    folder = tmp_path / str(flag)
    folder.mkdir()
    (folder / "nesting.yaml").write_text(RULES.format(flag=str(flag).lower()))
    return load_conventions(extra_dirs=[folder])


def _span(span_id: str, parent: str, name: str, start: int, **attrs: Any) -> SpanRecord:
    return SpanRecord(
        TRACE, span_id, parent, name, start_ns=start, end_ns=start + 5, attributes=attrs
    )


def _manager_calls_sub(between: str = "step") -> list[SpanRecord]:
    """manager.run > [llm asking for research_agent, (step | tool) > research_agent.run > tool]."""
    call = "llm.output_messages.0.message.tool_calls.0.tool_call"
    return [
        _span(MANAGER, "", "triage_agent.run", 0, kind="agent"),
        _span(LLM, MANAGER, "generate", 1, kind="llm", **{
            "llm.output_messages.0.message.role": "assistant",
            f"{call}.id": "call_1",
            f"{call}.function.name": "research_agent",
            f"{call}.function.arguments": '{"task": "find x"}',
        }),
        _span(STEP, MANAGER, "Step 1", 8, kind=between, **{"tool.name": "research_agent"}),
        _span(SUB, STEP, "research_agent.run", 10, kind="agent"),
        _span(SUB_TOOL, SUB, "SimpleTool", 11, kind="tool", **{"tool.name": "search_docs"}),
    ]  # fmt: skip


def _map(spans: list[SpanRecord], conventions: ConventionSet) -> Trajectory:
    return map_trace(build_trace(TRACE, spans), conventions)


def test_nested_agent_becomes_a_handoff_that_answers_the_managers_call(tmp_path: Path) -> None:
    t = _map(_manager_calls_sub(), _conventions(tmp_path, True))
    handoffs = t.handoffs()
    assert [(h.from_agent, h.to_agent, h.tool) for h in handoffs] == [
        ("triage_agent", "research_agent", "research_agent")
    ]
    assert handoffs[0].call_id == "call_1" and handoffs[0].source is not None
    assert handoffs[0].source.span_id == SUB
    # The requested call is the handoff, not a synthesized tool call nobody answered.
    assert [s.tool for s in t.tool_calls()] == ["search_docs"]
    assert t.tool_calls()[0].agent_name == "research_agent"
    kinds = [s.kind for s in t.steps]
    assert kinds.index(StepKind.HANDOFF) == kinds.index(StepKind.AGENT, 1) - 1


def test_without_the_option_nesting_is_not_a_handoff(tmp_path: Path) -> None:
    t = _map(_manager_calls_sub(), _conventions(tmp_path, False))
    assert t.handoffs() == []
    synthesized = [s for s in t.tool_calls() if s.synthesized]
    assert [s.tool for s in synthesized] == ["research_agent"]


def test_a_tool_span_between_the_agents_already_records_the_delegation(tmp_path: Path) -> None:
    t = _map(_manager_calls_sub("tool"), _conventions(tmp_path, True))
    assert t.handoffs() == []
    assert [s.tool for s in t.tool_calls()] == ["research_agent", "search_docs"]


def test_top_level_agents_get_no_handoff(tmp_path: Path) -> None:
    spans = [s for s in _manager_calls_sub() if s.span_id != MANAGER]
    spans = [
        _span(s.span_id, "" if s.parent_span_id == MANAGER else s.parent_span_id, s.name,
              s.start_ns or 0, **dict(s.attributes))
        for s in spans
    ]  # fmt: skip
    t = _map(spans, _conventions(tmp_path, True))
    assert t.handoffs() == []


DELEGATION_RULES = """
name: delegation-{flag}
priority: 50
rules:
  - id: agent
    step: agent
    match: {{all: [{{attr: kind, equals: agent}}]}}
    fields:
      agent_name: {{span_name: '^(.+)\\.run$'}}
  - id: delegate
    step: handoff
    delegate_works_inside: {flag}
    match: {{all: [{{attr: kind, equals: delegate}}]}}
    fields:
      to_agent: {{attr: coworker}}
  - id: tool
    step: tool_call
    match: {{all: [{{attr: kind, equals: tool}}]}}
    fields:
      tool: {{attr: tool.name}}
"""


def _delegating(tmp_path: Path, flag: bool, **delegate: Any) -> Trajectory:
    folder = tmp_path / f"delegation-{flag}"
    folder.mkdir()
    (folder / "delegation.yaml").write_text(DELEGATION_RULES.format(flag=str(flag).lower()))
    spans = [
        _span(MANAGER, "", "triage_agent.run", 0, kind="agent"),
        _span(STEP, MANAGER, "Delegate work to coworker", 2, kind="delegate", **delegate),
        _span(SUB_TOOL, STEP, "search_docs.run", 3, kind="tool", **{"tool.name": "search_docs"}),
        _span(LLM, MANAGER, "own_tool.run", 9, kind="tool", **{"tool.name": "own_tool"}),
    ]
    return _map(spans, load_conventions(extra_dirs=[folder]))


def test_work_inside_a_delegation_belongs_to_its_target(tmp_path: Path) -> None:
    t = _delegating(tmp_path, True, coworker="research_agent")
    agents = {s.tool: s.agent_name for s in t.tool_calls()}
    assert agents == {"search_docs": "research_agent", "own_tool": "triage_agent"}
    (handoff,) = t.handoffs()
    assert (handoff.from_agent, handoff.to_agent) == ("triage_agent", "research_agent")


def test_without_the_option_or_the_target_the_work_stays_with_the_delegator(
    tmp_path: Path,
) -> None:
    plain = _delegating(tmp_path, False, coworker="research_agent")
    assert {s.agent_name for s in plain.tool_calls()} == {"triage_agent"}
    unknown = _delegating(tmp_path, True)  # the target was not captured
    assert {s.agent_name for s in unknown.tool_calls()} == {"triage_agent"}
