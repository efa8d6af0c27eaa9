"""Google ADK for Java's spans on the real ``adk-java`` captures (``conventions/adk-java.yaml``
beside ``google-adk.yaml``): a tool that threw shows only in the ``status`` of its response,
ADK's own transfer and merged-response spans are no tool calls, and the final answer is the last
model call's although ADK ends each ``call_llm`` span after the steps that follow it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from otel_oracles.grade.evidence import final_output
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.pipeline import read_traces

TRACES = Path(__file__).resolve().parents[1] / "testdata" / "traces" / "adk-java"


def _trajectory(name: str) -> Any:
    problems: list[Any] = []
    (trace,) = read_traces([str(TRACES / f"{name}.otlp.json")], problems)
    assert problems == []
    return map_trace(trace, load_conventions())


def test_a_call_that_threw_fails_where_its_response_was_recorded() -> None:
    on = _trajectory("b_tool_retry")
    assert [(s.tool, s.status) for s in on.tool_calls()] == [
        ("search_docs", "error"),
        ("search_docs", "ok"),
    ]
    assert on.tool_calls()[0].result == {
        "status": "error",
        "message": "An internal error occurred.",
    }
    assert [s.call_id for s in on.tool_calls()] == ["call_0_0", "call_1_0"]
    off = _trajectory("b_tool_retry.nocontent")
    assert [(s.tool, s.status) for s in off.tool_calls()] == [
        ("search_docs", "unset"),
        ("search_docs", "unset"),
    ]


def test_transfer_and_merged_response_spans_are_no_tool_calls() -> None:
    handoff = _trajectory("g_handoff")
    assert [s.tool for s in handoff.tool_calls()] == ["search_docs"]
    assert [(h.from_agent, h.to_agent) for h in handoff.handoffs()] == [
        ("triage_agent", "research_agent")
    ]
    parallel = _trajectory("i_parallel_tools")
    assert sorted(s.tool for s in parallel.tool_calls()) == ["delete_records", "search_docs"]


def test_the_answer_is_the_last_calls_though_an_earlier_call_ended_later() -> None:
    t = _trajectory("h_coding_agent")
    gens = sorted(t.generations(), key=lambda g: g.start_ns)
    assert max(gens, key=lambda g: g.end_ns) is not gens[-1], "the capture shows the overlap"
    assert final_output(t).text == (
        "Added add(a, b) to calc.py and a test in tests/test_calc.py; `pytest` reports 1 passed."
    )
