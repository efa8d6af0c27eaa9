"""any-agent's own spans (``conventions/any-agent.yaml``) and the two mapper rules they showed:
an agent run beside the tool that ran it (``agent_inside_is_delegation``: the one sibling tool
span whose time holds the run), and calls linked to one model call's requests by name and
order without call ids known as asked for together (``requested_in``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from otel_oracles.assemble._tree import build_trace
from otel_oracles.grade.loader import load_contract
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.mapping.parsers import builtin_parsers
from otel_oracles.model.result import Outcome
from otel_oracles.model.span import SpanRecord
from otel_oracles.model.step import Trajectory
from otel_oracles.pipeline import grade_trace, read_traces

REPO = Path(__file__).parents[2]
TRACES = REPO / "tests" / "testdata" / "traces"
PARSE = builtin_parsers()["any_agent_output"]
TRACE = "0" * 31 + "9"
TRIAGE, LLM, TOOL, OTHER_TOOL, RESEARCH, SEARCH = (c * 16 for c in "abcdef")


def test_a_reply_asking_for_tools_is_tool_calls_and_a_text_reply_is_text() -> None:
    asked = json.dumps(
        [
            {"tool.name": "search_docs", "tool.args": '{"query": "refund"}'},
            {"tool.name": "delete_records", "tool.args": '{"table": "t", "where": "1"}'},
        ]
    )
    (message,) = PARSE(asked)
    assert message["finish_reason"] == "tool_call"
    assert [(p["type"], p["name"], p["arguments"]) for p in message["parts"]] == [
        ("tool_call", "search_docs", {"query": "refund"}),
        ("tool_call", "delete_records", {"table": "t", "where": "1"}),
    ]
    answer = '{"answer": "30 days [doc-42]", "sources": ["doc-42"]}'  # a JSON answer is text
    assert PARSE(answer) == [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
    assert PARSE("[1, 2]") == [
        {"role": "assistant", "parts": [{"type": "text", "content": "[1, 2]"}]}
    ]


@pytest.mark.parametrize("value", [None, "", "  ", 3, ["x"], {"tool.name": "x"}])
def test_no_text_is_no_reply(value: Any) -> None:
    assert PARSE(value) is None


def _span(span_id: str, parent: str, name: str, start: int, end: int, **attrs: Any) -> SpanRecord:
    return SpanRecord(
        TRACE, span_id, parent, name, start_ns=start, end_ns=end, scope_name="any_agent",
        attributes=attrs,
    )  # fmt: skip


def _delegating_run(*, tool_window: tuple[int, int], second_tool: bool = False) -> Trajectory:
    """triage_agent asks for ``research_agent``, whose tool span runs over ``tool_window``;
    the research agent's run (20..80) is opened beside it, under triage_agent."""
    asked = json.dumps([{"tool.name": "research_agent", "tool.args": '{"question": "q"}'}])
    spans = [
        _span(TRIAGE, "", "invoke_agent [triage_agent]", 0, 100,
              **{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "triage_agent"}),
        _span(LLM, TRIAGE, "call_llm gpt-4o-mini", 1, 9,
              **{"gen_ai.operation.name": "call_llm", "gen_ai.output": asked}),
        _span(TOOL, TRIAGE, "execute_tool research_agent", *tool_window,
              **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "research_agent"}),
        _span(RESEARCH, TRIAGE, "invoke_agent [research_agent]", 20, 80,
              **{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "research_agent"}),
        _span(SEARCH, RESEARCH, "execute_tool search_docs", 30, 40,
              **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search_docs"}),
    ]  # fmt: skip
    if second_tool:
        spans.append(
            _span(OTHER_TOOL, TRIAGE, "execute_tool run_command", 11, 95,
                  **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "run_command"})
        )  # fmt: skip
    return map_trace(build_trace(TRACE, spans), load_conventions())


def test_the_tool_whose_time_holds_an_agent_run_beside_it_is_the_delegation() -> None:
    t = _delegating_run(tool_window=(10, 90))
    assert [(h.from_agent, h.to_agent, h.tool) for h in t.handoffs()] == [
        ("triage_agent", "research_agent", "research_agent")
    ]
    assert [(s.tool, s.agent_name) for s in t.tool_calls()] == [("search_docs", "research_agent")]


def test_a_tool_that_does_not_hold_the_run_or_two_that_do_are_no_delegation() -> None:
    ended_before = _delegating_run(tool_window=(10, 50))
    assert ended_before.handoffs() == []
    assert [s.tool for s in ended_before.tool_calls()] == ["research_agent", "search_docs"]
    side_by_side = _delegating_run(tool_window=(10, 90), second_tool=True)
    assert side_by_side.handoffs() == []


def _graded(source: str, scenario: str, contract: str) -> dict[str, Outcome]:
    (trace,) = read_traces([str(TRACES / source / f"{scenario}.otlp.json")], [])
    c = load_contract(REPO / "examples" / "contracts" / f"{contract}.yaml")
    graded = grade_trace(trace, [c.model_copy(update={"match": None})], load_conventions())
    ((verdict, _),) = graded
    return {r.name: r.outcome for r in verdict.results}


@pytest.mark.parametrize("source", ["any-agent", "agentscope-1"])
def test_an_agent_called_from_a_tool_beside_it_is_no_work_of_the_caller(source: str) -> None:
    """Both tracers open the called agent's run beside the tool's span: the research agent's
    search is the run's only work, and the transfer is seen (before, the tool call was one
    more tool in the sequence: ``research-searches`` failed)."""
    got = _graded(source, "g_handoff", "multi-agent-handoff")
    assert got["research-searches"] == Outcome.PASS
    assert got["triage-to-research"] == Outcome.PASS


def test_two_failed_calls_asked_for_in_one_turn_without_ids_are_no_retry() -> None:
    """any-agent's tool spans carry no call id: both searches of ``l_parallel_failures`` are
    linked by name and order to the one model call that asked for them, so the second is no
    retry of the first (the run's ``search-retry`` passes, its disclosure is tolerated)."""
    (trace,) = read_traces([str(TRACES / "any-agent" / "l_parallel_failures.otlp.json")], [])
    calls = map_trace(trace, load_conventions()).tool_calls()
    assert [(s.tool, s.status, s.call_id) for s in calls] == [("search_docs", "error", None)] * 2
    turns = {s.attributes.get("requested_in") for s in calls}
    assert len(turns) == 1 and None not in turns
    got = _graded("any-agent", "l_parallel_failures", "support-rag")
    assert got["search-retry"] == Outcome.PASS
    assert got["degraded-disclosed"] == Outcome.TOLERATED
    # One failed call, then the same call asked for again in the next turn: a retry.
    assert _graded("any-agent", "b_tool_retry", "support-rag")["search-retry"] == Outcome.TOLERATED
