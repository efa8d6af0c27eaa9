"""Calls whose tool name was not recorded count in the budgets that stand on gaps, unless
they are shown to be a named call's twin (``trace_common.nameless_twins``).

A nameless call makes ``tool_names`` missing evidence, so ``tool_errors``, ``max_tool_calls``
and ``max_steps`` are ``missing_evidence`` on such a trace unless the failure the trace
records stands whatever the missing names would add (``failure_stands_on_gaps``). Leaving
every nameless call out of that count lost true failures: Griptape's tool spans never
record a name, nor does OpenLLMetry-JS's span of a tool that threw, and a run whose failed
calls are all nameless read "no failed tool calls" (a pass with ``on_missing_evidence:
warn``). A nameless record of a call the model requested by name (LlamaIndex without
``tool.name``) is still counted once with its named twin.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from otel_oracles.assemble._tree import build_trace
from otel_oracles.grade.evidence import Evidence
from otel_oracles.grade.oracles.trace_common import nameless_twins
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.contract import Contract
from otel_oracles.model.result import InputProblem, Outcome
from otel_oracles.model.span import SpanRecord, StatusCode, Trace
from otel_oracles.pipeline import grade_trace, read_traces
from tests.support.one_check import TRACES, grade_one_check, one_check_contract
from tests.support.unknown_spans import without_attributes


def _outcome(path: Path, c: Contract) -> tuple[Outcome, str]:
    problems: list[InputProblem] = []
    traces = list(read_traces([str(path)], problems))
    assert problems == []
    [(verdict, _)] = [vt for t in traces for vt in grade_trace(t, [c], load_conventions())]
    [result] = verdict.results
    return result.outcome, result.message


# ---- nameless calls without a twin count ------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "scenario", "failed"),
    [
        ("griptape", "c_retry_exhausted", 3),
        ("griptape", "b_tool_retry", 1),
        ("griptape", "l_parallel_failures", 2),
        ("openllmetry-js", "c_retry_exhausted", 3),
        ("openllmetry-js", "b_tool_retry", 1),
        ("openllmetry-js", "j_undisclosed_failure", 1),
    ],
)
def test_failed_calls_without_a_recorded_name_are_failures(
    source: str, scenario: str, failed: int, tmp_path: Path
) -> None:
    """Every failed call of these captures is a tool span without a tool name (Griptape
    never records one; OpenLLMetry-JS's span of a tool that threw holds none): the failures
    are over a budget of none, whatever the missing names would add."""
    c = one_check_contract(tmp_path, "{type: tool_errors, max: 0}")
    outcome, message, _, _ = grade_one_check(source, scenario, c)
    assert outcome == Outcome.INVARIANT_FAILURE, message
    assert message.startswith(f"{failed} failed tool call(s)"), message
    assert "other evidence missing: tool names not captured" in message


def test_failed_nameless_calls_within_budget_stay_missing_evidence(tmp_path: Path) -> None:
    c = one_check_contract(tmp_path, "{type: tool_errors, max: 3}")
    outcome, message, _, _ = grade_one_check("griptape", "c_retry_exhausted", c)
    assert outcome == Outcome.MISSING_EVIDENCE, message


@pytest.mark.parametrize(
    ("source", "scenario"),
    [("griptape", "m_excess_calls"), ("openllmetry-openai-events", "m_excess_calls")],
)
def test_nameless_calls_over_the_call_budget_fail(
    source: str, scenario: str, tmp_path: Path
) -> None:
    """Six calls none of whose names were recorded (Griptape's spans; OpenLLMetry's model
    calls asking for tools with content off, each a placeholder call) exceed five."""
    c = one_check_contract(tmp_path, "{type: max_tool_calls, max: 5}")
    outcome, message, _, _ = grade_one_check(source, scenario, c)
    assert outcome == Outcome.INVARIANT_FAILURE, message
    assert message.startswith("6 tool calls"), message


def test_nameless_calls_count_as_steps(tmp_path: Path) -> None:
    c = one_check_contract(tmp_path, "{type: max_steps, max: 3, kinds: [tool_call]}")
    outcome, message, _, _ = grade_one_check("griptape", "m_excess_calls", c)
    assert outcome == Outcome.INVARIANT_FAILURE, message


# ---- a nameless twin of a named call counts once ----------------------------------------------


def test_a_nameless_span_of_a_requested_call_is_its_twin(tmp_path: Path) -> None:
    """LlamaIndex's tool spans without ``tool.name``: each model request is a synthesized
    named call, each tool span a nameless record of it, paired in order."""
    source = TRACES / "llamaindex-openinference" / "i_parallel_tools.otlp.json"
    derived = without_attributes(source, tmp_path / "no-tool-name.jsonl", {"tool.name"})
    problems: list[InputProblem] = []
    [trace] = read_traces([str(derived)], problems)
    ev = Evidence(map_trace(trace, load_conventions()))
    nameless = ev.nameless_calls()
    twins = nameless_twins(ev)
    assert len(nameless) == 2
    assert twins.twinned == {id(s) for s in nameless}
    assert [twins.twin_of[id(s)] for s in ev.calls_of(("search_docs", "delete_records"))] == list(
        nameless
    )


@pytest.mark.parametrize(("limit", "want"), [(0, Outcome.INVARIANT_FAILURE), (1, None)])
def test_a_nameless_twins_failure_is_its_named_calls_failure(
    limit: int, want: Outcome | None, tmp_path: Path
) -> None:
    """LlamaIndex without ``tool.name``: the first search's span ended ERROR but holds no
    name, while the model's request for it (named) was answered with the error's bare text.
    The pair is one failed call: over a budget of none it fails; within one it stays
    missing evidence (the second search's pair did not fail)."""
    source = TRACES / "llamaindex-openinference" / "b_tool_retry.otlp.json"
    derived = without_attributes(source, tmp_path / "no-tool-name.jsonl", {"tool.name"})
    c = one_check_contract(tmp_path, f"{{type: tool_errors, max: {limit}}}")
    outcome, message = _outcome(derived, c)
    assert outcome == (want or Outcome.MISSING_EVIDENCE), message
    if want is not None:
        assert message.startswith("1 failed tool call(s)"), message
        assert "which holds no tool name" in message


def test_a_scoped_count_sees_the_failure_of_a_named_calls_twin(tmp_path: Path) -> None:
    source = TRACES / "llamaindex-openinference" / "c_retry_exhausted.otlp.json"
    derived = without_attributes(source, tmp_path / "no-tool-name.jsonl", {"tool.name"})
    c = one_check_contract(tmp_path, "{type: tool_errors, max: 2, tools: [search_docs]}")
    outcome, message = _outcome(derived, c)
    assert outcome == Outcome.INVARIANT_FAILURE, message
    assert message.startswith("3 failed tool call(s)"), message


# ---- what makes a twin ------------------------------------------------------------------------

TRACE = "0" * 31 + "5"
AGENT, GEN, GEN2, TOOL, TOOL2 = "a" * 16, "b" * 16, "d" * 16, "c" * 16, "e" * 16


def _span(
    span_id: str,
    parent: str,
    name: str,
    start: int,
    status: StatusCode = StatusCode.UNSET,
    **attrs: Any,
) -> SpanRecord:
    return SpanRecord(TRACE, span_id, parent, name, start_ns=start, end_ns=start + 5,
                      attributes=attrs, status_code=status)  # fmt: skip


def _gen(span_id: str, start: int, *call_ids: str) -> SpanRecord:
    parts = [
        {"type": "tool_call", "id": i, "name": "search_docs", "arguments": {"q": "x"}}
        for i in call_ids
    ]
    out = [{"role": "assistant", "parts": parts}] if parts else []
    return _span(span_id, AGENT, "chat m", start, **{"gen_ai.operation.name": "chat",
                 "gen_ai.output.messages": json.dumps(out)})  # fmt: skip


def _nameless_tool(span_id: str, start: int, **attrs: Any) -> SpanRecord:
    """A GenAI ``execute_tool`` span without ``gen_ai.tool.name``: a call of an unnamed tool."""
    return _span(span_id, AGENT, "execute_tool", start,
                 **{"gen_ai.operation.name": "execute_tool", **attrs})  # fmt: skip


def _trace(*spans: SpanRecord) -> Trace:
    root = _span(AGENT, "", "invoke_agent a", 0, **{"gen_ai.operation.name": "invoke_agent",
                 "gen_ai.agent.name": "a"})  # fmt: skip
    return build_trace(TRACE, [root, *spans])


def _twinned(trace: Trace) -> tuple[int, int]:
    """(nameless calls, of them twinned)."""
    ev = Evidence(map_trace(trace, load_conventions()))
    return len(ev.nameless_calls()), len(nameless_twins(ev).twinned)


def test_a_nameless_span_after_the_request_is_its_twin() -> None:
    trace = _trace(_gen(GEN, 1, "c1"), _nameless_tool(TOOL, 10), _gen(GEN2, 20))
    assert _twinned(trace) == (1, 1)


def test_a_nameless_span_after_the_agents_next_model_call_is_a_call_of_its_own() -> None:
    """The request's window closed with the next model call: a tool that ran after it is
    not the requested call."""
    trace = _trace(_gen(GEN, 1, "c1"), _gen(GEN2, 10), _nameless_tool(TOOL, 20))
    assert _twinned(trace) == (1, 0)


def test_more_nameless_spans_than_requests_leave_the_extra_one_counted() -> None:
    trace = _trace(_gen(GEN, 1, "c1"), _nameless_tool(TOOL, 10), _nameless_tool(TOOL2, 12))
    assert _twinned(trace) == (2, 1)


def test_a_nameless_span_with_another_call_id_is_not_the_requests_twin() -> None:
    trace = _trace(_gen(GEN, 1, "c1"), _nameless_tool(TOOL, 10, **{"gen_ai.tool.call.id": "c9"}))
    calls = Evidence(map_trace(trace, load_conventions())).calls_of(())
    assert sorted((c.tool or "", c.call_id) for c in calls) == [("", "c9"), ("search_docs", "c1")]
    assert _twinned(trace) == (1, 0)


@pytest.mark.parametrize("asked", [(), ("c1",)])
def test_a_failed_nameless_call_counts_once(asked: tuple[str, ...], tmp_path: Path) -> None:
    """A failed nameless span is a failure, once: on its own when the model asked for
    nothing by name, as its named twin's failure when the model's request is a step too;
    two failures over a budget of one would fail the run twice over."""
    trace = _trace(_gen(GEN, 1, *asked), _nameless_tool(TOOL, 10, status=StatusCode.ERROR))
    c = one_check_contract(tmp_path, "{type: tool_errors, max: 0}")
    [(verdict, _)] = grade_trace(trace, [c], load_conventions())
    [result] = verdict.results
    assert result.outcome == Outcome.INVARIANT_FAILURE, result.message
    assert result.message.startswith("1 failed tool call(s)"), result.message
    budget = one_check_contract(tmp_path, "{type: tool_errors, max: 1}")
    [(verdict, _)] = grade_trace(trace, [budget], load_conventions())
    assert verdict.results[0].outcome == Outcome.MISSING_EVIDENCE, verdict.results[0].message
