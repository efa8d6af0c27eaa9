"""Tool outcomes from everything the trace says: the tool's own status attribute, error-shaped
results on spans that end OK, empty results marked for ``degraded_answer``, and tool spans
without call ids linked to the model's requests across agent scopes."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from otel_oracles.assemble._tree import build_trace
from otel_oracles.grade.evidence import Evidence
from otel_oracles.grade.oracles.trace_answers import DegradationParams, find_degradation
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.result import InputProblem
from otel_oracles.model.span import SpanRecord, StatusCode, Trace
from otel_oracles.model.step import Trajectory
from otel_oracles.pipeline import read_traces

TRACES = Path(__file__).resolve().parent.parent / "testdata" / "traces"
TRACE = "0" * 31 + "3"
AGENT, GEN, TOOL, NODE = "a" * 16, "b" * 16, "c" * 16, "e" * 16


def _read(source: str, scenario: str) -> Trace:
    problems: list[InputProblem] = []
    (trace,) = read_traces([str(TRACES / source / f"{scenario}.otlp.json")], problems)
    assert not problems
    return trace


def _span(span_id: str, parent: str, name: str, start: int, **attrs: Any) -> SpanRecord:
    return SpanRecord(TRACE, span_id, parent, name, start_ns=start, end_ns=start + 5,
                      attributes=attrs)  # fmt: skip


def _request(call_id: str) -> list[dict[str, Any]]:
    part = {"type": "tool_call", "id": call_id, "name": "search_docs", "arguments": {"q": "x"}}
    return [{"role": "assistant", "parts": [part]}]


def _tool_trace(result: Any, **extra: Any) -> Trajectory:
    attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search_docs",
             "gen_ai.tool.call.result": result, **extra}  # fmt: skip
    spans = [
        _span(AGENT, "", "invoke_agent a", 0, **{"gen_ai.operation.name": "invoke_agent"}),
        _span(TOOL, AGENT, "execute_tool search_docs", 1, **attrs),
    ]
    return map_trace(build_trace(TRACE, spans), load_conventions())


# ---- the tool's own status attribute ----------------------------------------------------------


def test_tool_status_attribute_decides_when_the_span_status_says_nothing() -> None:
    assert (
        _tool_trace('{"docs": [1]}', **{"gen_ai.tool.status": "FAILED"}).steps[1].status == "error"
    )


def test_real_strands_tool_status_alone_shows_the_failure() -> None:
    """Strands sets gen_ai.tool.status and the span status; with the span status and the
    exception events removed, the first (failed) call is still an error."""
    trace = _read("strands", "b_tool_retry")
    blind = [
        dataclasses.replace(s, status_code=StatusCode.UNSET, status_message="", events=[])
        if s.name.startswith("execute_tool")
        else s
        for s in trace.spans
    ]
    t = map_trace(build_trace(trace.trace_id, blind), load_conventions())
    assert [c.status for c in t.tool_calls("search_docs")] == ["error", "ok"]


def test_undeclared_status_values_leave_the_outcome_unknown() -> None:
    """A status the vocabulary does not declare is no success (test_undeclared_outcomes)."""
    call = _tool_trace('{"docs": [1]}', **{"gen_ai.tool.status": "pending"}).steps[1]
    assert call.status == "unset" and call.attributes["outcome_unknown"] is True


# ---- error-shaped and empty results ----------------------------------------------------------


@pytest.mark.parametrize(
    ("result", "error_type"),
    [
        ("Error: SearchBackendError: upstream timed out", "SearchBackendError"),
        ("ToolException: index unavailable", "ToolException"),
        ('{"error": "quota exceeded"}', None),
    ],
)
def test_error_shaped_result_fails_a_call_whose_span_ended_ok(
    result: str, error_type: str | None
) -> None:
    call = _tool_trace(result).steps[1]
    assert call.status == "error"
    assert call.error_type == error_type
    assert call.error_message is not None


@pytest.mark.parametrize("result", ["Errors were corrected in 3 documents", "no error", "[]"])
def test_results_that_only_mention_errors_are_not_failures(result: str) -> None:
    assert _tool_trace(result).steps[1].status == "ok"


@pytest.mark.parametrize(
    "result",
    ["[]", "{}", '{"documents": [], "status": "degraded"}', "No results found.",
     "no documents were found for 'x'", "Nothing found"],
)  # fmt: skip
def test_empty_results_are_a_degraded_dependency(result: str) -> None:
    t = _tool_trace(result)
    assert t.steps[1].attributes.get("result_empty") is True
    deg = find_degradation(Evidence(t), DegradationParams())
    assert [why for _, why in deg.degraded] == ["returned empty"]


def test_a_null_result_is_empty_not_uncaptured() -> None:
    """A tool that returned None: the attribute holds JSON ``null``."""
    t = _tool_trace("null")
    assert t.steps[1].result is None
    assert t.steps[1].attributes.get("result_empty") is True
    deg = find_degradation(Evidence(t), DegradationParams())
    assert [why for _, why in deg.degraded] == ["returned empty"] and not deg.unknown


def test_an_uncaptured_result_stays_unknown() -> None:
    spans = [
        _span(AGENT, "", "invoke_agent a", 0, **{"gen_ai.operation.name": "invoke_agent"}),
        _span(TOOL, AGENT, "execute_tool search_docs", 1, **{
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search_docs"}),
    ]  # fmt: skip
    t = map_trace(build_trace(TRACE, spans), load_conventions())
    assert "result_empty" not in t.steps[1].attributes
    assert find_degradation(Evidence(t), DegradationParams()).unknown == [t.steps[1]]


@pytest.mark.parametrize("result", ['{"documents": ["doc-1"]}', "3 results: doc-1, doc-2", "0"])
def test_results_with_content_are_not_empty(result: str) -> None:
    assert "result_empty" not in _tool_trace(result).steps[1].attributes


@pytest.mark.parametrize(
    "source",
    [
        "pydantic-ai", "vercel-ai-sdk-otel", "vercel-ai-sdk-legacy", "openai-v2-latest",
        "openllmetry-openai-legacy", "openai-agents-otel-v2", "openinference-openai-agents",
        "traceloop-sdk", "strands", "strands-latest", "smolagents-openinference",
        "langgraph-openinference", "agno-openinference", "bedrock-openllmetry",
    ],
)  # fmt: skip
def test_real_degraded_search_is_marked_empty(source: str) -> None:
    t = map_trace(_read(source, "f_degraded"), load_conventions())
    last = t.tool_calls("search_docs")[-1]
    assert last.attributes.get("result_empty") is True


def test_python_repr_results_are_judged_by_their_structure() -> None:
    """Instrumentations that record ``str(result)`` (Agno's, LangChain callbacks) write a
    Python repr: its empty lists and error keys count as JSON's would."""
    empty = _tool_trace("{'documents': [], 'status': 'degraded: index timeout'}")
    assert empty.steps[1].attributes.get("result_empty") is True
    failed = _tool_trace("{'error': 'SearchBackendError: upstream timed out'}").steps[1]
    assert failed.status == "error"
    assert failed.error_type == "SearchBackendError"


@pytest.mark.parametrize("result", ["{'documents': ['doc-1']}", "[doc-1] refund policy", "{oops"])
def test_repr_results_with_content_or_no_literal_are_not_empty(result: str) -> None:
    step = _tool_trace(result).steps[1]
    assert "result_empty" not in step.attributes
    assert step.status == "ok"


def test_real_agno_repr_result_is_mapped_as_data() -> None:
    """Agno's tool spans hold the tool's return value as a repr; the mapped result is the
    value itself (what citations and argument checks read)."""
    t = map_trace(_read("agno-openinference", "a_happy"), load_conventions())
    (search,) = t.tool_calls("search_docs")
    assert isinstance(search.result, dict)
    assert [d["id"] for d in search.result["documents"]] == ["doc-17", "doc-42"]


def test_real_happy_search_is_not_marked_empty() -> None:
    t = map_trace(_read("pydantic-ai", "a_happy"), load_conventions())
    assert all("result_empty" not in c.attributes for c in t.tool_calls())


def test_synthesized_call_answered_with_error_text_failed() -> None:
    request = _request("c1")
    response = {"type": "tool_call_response", "id": "c1", "response": "Error: backend down"}
    answer = [{"role": "tool", "parts": [response]}]
    spans = [
        _span(GEN, "", "chat m", 0, **{"gen_ai.operation.name": "chat",
                                       "gen_ai.output.messages": json.dumps(request)}),
        _span(TOOL, "", "chat m", 10, **{"gen_ai.operation.name": "chat",
                                         "gen_ai.input.messages": json.dumps(answer)}),
    ]  # fmt: skip
    t = map_trace(build_trace(TRACE, spans), load_conventions())
    (call,) = t.tool_calls()
    assert call.synthesized and call.status == "error"
    assert call.error_message == "Error: backend down"


# ---- results recorded as one content block ------------------------------------------------------


@pytest.mark.parametrize(
    "result",
    ['[{"json": {"error": "SearchBackendError: timed out"}}]',
     '[{"type": "text", "text": "Error: SearchBackendError: timed out"}]',
     '[{"text": "{\\"error\\": \\"SearchBackendError: timed out\\"}"}]'],
)  # fmt: skip
def test_an_error_in_one_content_block_fails_the_call(result: str) -> None:
    call = _tool_trace(result).steps[1]
    assert call.status == "error"
    assert call.error_type == "SearchBackendError"


@pytest.mark.parametrize(
    "result",
    ['[{"json": {"documents": [], "status": "degraded"}}]', '[{"text": "No results found."}]',
     '[{"type": "text", "text": "[]"}]'],
)  # fmt: skip
def test_an_empty_value_in_one_content_block_is_a_degraded_dependency(result: str) -> None:
    assert _tool_trace(result).steps[1].attributes.get("result_empty") is True


@pytest.mark.parametrize(
    "result",
    ['[{"id": "doc-1", "text": "Error: not an error, a document"}]',
     '[{"json": {}}, {"text": "x"}]', '[{"text": ""}, {"text": ""}]'],
)  # fmt: skip
def test_a_tools_own_list_is_not_a_content_block(result: str) -> None:
    step = _tool_trace(result).steps[1]
    assert step.status == "ok"
    assert "result_empty" not in step.attributes


def test_synthesized_call_result_is_the_value_of_its_content_block() -> None:
    """OpenLLMetry's Bedrock instrumentation records a Converse ``toolResult``'s content
    list as the response: the step's result is what the tool returned."""
    request = _request("c1")
    content = [{"json": {"documents": [{"id": "doc-42"}]}}]
    response = {"type": "tool_call_response", "id": "c1", "response": json.dumps(content)}
    answer = [{"role": "user", "parts": [response]}]
    spans = [
        _span(GEN, "", "chat m", 0, **{"gen_ai.operation.name": "chat",
                                       "gen_ai.output.messages": json.dumps(request)}),
        _span(TOOL, "", "chat m", 10, **{"gen_ai.operation.name": "chat",
                                         "gen_ai.input.messages": json.dumps(answer)}),
    ]  # fmt: skip
    (call,) = map_trace(build_trace(TRACE, spans), load_conventions()).tool_calls()
    assert call.result == {"documents": [{"id": "doc-42"}]}
    assert call.status == "ok"


def test_real_bedrock_converse_error_block_fails_each_search() -> None:
    t = map_trace(_read("bedrock-openllmetry", "c_retry_exhausted"), load_conventions())
    searches = t.tool_calls("search_docs")
    assert [c.status for c in searches] == ["error", "error", "error"]
    assert {c.error_type for c in searches} == {"SearchBackendError"}


# ---- linking across agent scopes -----------------------------------------------------------------


def test_tool_span_without_call_id_in_another_node_is_linked_not_duplicated() -> None:
    """A graph's model node and tool node recorded as two agents (OpenInference marks
    LangGraph nodes AGENT): the tool span answers the model's request."""
    request = _request("call_7")
    spans = [
        _span(AGENT, "", "agent", 0, **{"openinference.span.kind": "AGENT", "agent.name": "model"}),
        _span(GEN, AGENT, "chat m", 1, **{"gen_ai.operation.name": "chat",
                                          "gen_ai.output.messages": json.dumps(request)}),
        _span(NODE, "", "tools", 10, **{"openinference.span.kind": "AGENT", "agent.name": "tools"}),
        _span(TOOL, NODE, "search_docs", 11, **{"openinference.span.kind": "TOOL",
                                               "tool.name": "search_docs",
                                               "output.value": "No results found"}),
    ]  # fmt: skip
    t = map_trace(build_trace(TRACE, spans), load_conventions())
    (call,) = t.tool_calls()
    assert not call.synthesized
    assert call.call_id == "call_7" and call.arguments == {"q": "x"}
    assert call.attributes.get("result_empty") is True


def test_a_tool_span_before_the_request_is_not_its_answer() -> None:
    request = _request("call_7")
    spans = [
        _span(NODE, "", "tools", 0, **{"openinference.span.kind": "AGENT", "agent.name": "t"}),
        _span(TOOL, NODE, "search_docs", 1, **{"openinference.span.kind": "TOOL",
                                              "tool.name": "search_docs"}),
        _span(AGENT, "", "agent", 10, **{"openinference.span.kind": "AGENT", "agent.name": "m"}),
        _span(GEN, AGENT, "chat m", 11, **{"gen_ai.operation.name": "chat",
                                           "gen_ai.output.messages": json.dumps(request)}),
    ]  # fmt: skip
    t = map_trace(build_trace(TRACE, spans), load_conventions())
    assert sorted(c.synthesized for c in t.tool_calls()) == [False, True]
