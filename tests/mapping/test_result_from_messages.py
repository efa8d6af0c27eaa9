"""A tool span that never records its result takes the one the model was handed, by call id,
only where its rule says so (``result_from_messages``: Google ADK's own tool spans, whose
results are written only with ADK's content capture on, while another instrumentation records
the model calls' messages, as under ``openlit.init()``)."""

from __future__ import annotations

import json
from typing import Any

from otel_oracles.assemble._tree import build_trace
from otel_oracles.mapping import ConventionSet, load_conventions, map_trace
from otel_oracles.model.span import SpanRecord, StatusCode
from otel_oracles.model.step import Step

TRACE = "0" * 31 + "9"
ADK = "gcp.vertex.agent"


def span(span_id: str, name: str, scope: str, **attrs: Any) -> SpanRecord:
    start = int(span_id, 16) * 10
    return SpanRecord(
        TRACE, span_id * 16, "1" * 16 if span_id != "1" else "", name, start_ns=start,
        end_ns=start + 5, attributes=attrs, scope_name=scope, status_code=StatusCode.OK,
    )  # fmt: skip


def call(span_id: str, scope: str, inputs: list[Any], outputs: list[Any]) -> SpanRecord:
    return span(
        span_id, "generate_content gpt-4o-mini", scope,
        **{"gen_ai.operation.name": "generate_content", "gen_ai.request.model": "gpt-4o-mini",
           "gen_ai.input.messages": json.dumps(inputs),
           "gen_ai.output.messages": json.dumps(outputs)},
    )  # fmt: skip


def run(scope: str, response: dict[str, Any]) -> Step:
    """An agent whose model asks for ``search_docs`` (id ``c1``), a tool span with no result,
    and the next model call handed ``response`` for ``c1``."""
    request = {"type": "tool_call", "id": "c1", "name": "search_docs",
               "arguments": {"query": "refunds"}}  # fmt: skip
    user = {"role": "user", "parts": [{"type": "text", "content": "refund window?"}]}
    asked = {"role": "assistant", "parts": [request]}
    answer = {"role": "assistant", "parts": [{"type": "text", "content": "30 days"}]}
    spans = [
        span("1", "invoke_agent support_agent", scope,
             **{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support_agent"}),
        call("2", scope, [user], [asked]),
        span("3", "execute_tool search_docs", scope,
             **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search_docs",
                "gen_ai.tool.call.id": "c1"}),
        call("4", scope, [user, asked, {"role": "tool", "parts": [response]}], [answer]),
    ]  # fmt: skip
    trajectory = map_trace(build_trace(TRACE, spans), conventions())
    (step,) = trajectory.tool_calls()
    return step


_CONVENTIONS: list[ConventionSet] = []


def conventions() -> ConventionSet:
    if not _CONVENTIONS:
        _CONVENTIONS.append(load_conventions())
    return _CONVENTIONS[0]


def test_the_result_the_model_was_handed_is_the_tool_result() -> None:
    handed = {"type": "tool_call_response", "id": "c1", "response": {"documents": []}}
    step = run(ADK, handed)
    assert step.result == {"documents": []}
    assert step.attributes.get("result_empty") is True  # judged like a recorded result


def test_an_error_object_handed_back_fails_the_call() -> None:
    handed = {"type": "tool_call_response", "id": "c1",
              "response": {"error": "SearchBackendError: timed out"}}  # fmt: skip
    step = run(ADK, handed)
    assert step.status == "error" and "timed out" in (step.error_message or "")


def test_a_hidden_response_stays_hidden() -> None:
    step = run(ADK, {"type": "tool_call_response", "id": "c1"})
    assert step.result is None and "result" in step.redacted


def test_a_response_to_another_call_id_is_not_the_result() -> None:
    handed = {"type": "tool_call_response", "id": "c2", "response": {"documents": ["x"]}}
    assert run(ADK, handed).result is None


def test_a_response_without_an_id_answers_the_call_before_it() -> None:
    """As for synthesized calls: chat APIs put results in the order of the calls, so a
    response with no id (some tracers drop it) answers the earliest unanswered call."""
    handed = {"type": "tool_call_response", "response": {"documents": ["x"]}}
    assert run(ADK, handed).result == {"documents": ["x"]}


def test_rules_without_the_option_leave_the_result_unknown() -> None:
    handed = {"type": "tool_call_response", "id": "c1", "response": {"documents": []}}
    assert run("some.other.instrumentation", handed).result is None


SEARCH = {"type": "tool_call", "name": "search_docs", "arguments": {"query": "refunds"}}
"""A request without a call id (the Gemini API numbers none; ADK removes its own ids from
what it sends the model)."""


def thrown(handed: list[Any] | None, asked_again: dict[str, Any] | None = None) -> Step:
    """An ADK for TypeScript agent whose model asks for ``search_docs`` (``SEARCH``) and whose
    tool threw: its span holds the name alone, status unset (ADK writes a tool span's
    attributes only after the tool returned). The next model call is shown the first turn
    again (``asked_again``: as recorded there, by default the same request) and the parts
    ``handed`` after it; ``None``: no next model call recorded."""
    user = {"role": "user", "parts": [{"type": "text", "content": "refund window?"}]}
    asked = {"role": "assistant", "parts": [SEARCH]}
    answer = {"role": "assistant", "parts": [{"type": "text", "content": "30 days"}]}
    shown = [user, asked_again or asked, {"role": "user", "parts": handed or []}]
    spans = [
        span("1", "invoke_agent support_agent", ADK,
             **{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support_agent"}),
        call("2", ADK, [user], [asked]),
        SpanRecord(TRACE, "3" * 16, "1" * 16, "execute_tool search_docs", start_ns=30,
                   end_ns=35, attributes={}, scope_name=ADK, status_code=StatusCode.UNSET),
        *([call("4", ADK, shown, [answer])] if handed is not None else []),
    ]  # fmt: skip
    (step,) = map_trace(build_trace(TRACE, spans), conventions()).tool_calls()
    return step


ERROR = {
    "type": "tool_call_response",
    "name": "search_docs",
    "response": {"error": "Error in tool 'search_docs': SearchBackendError: down"},
}


def test_a_tool_span_left_blank_shows_no_outcome() -> None:
    """Nothing but its span recorded the call: unknown, never a success."""
    step = thrown(None)
    assert step.tool == "search_docs" and step.status == "unset" and step.result is None


def test_a_call_without_an_id_takes_its_result_by_position() -> None:
    """The error ADK handed the model, right after the turn that asked for the call."""
    step = thrown([ERROR])
    assert step.status == "error" and "SearchBackendError" in (step.error_message or "")


def test_a_result_by_position_needs_the_same_calls_asked() -> None:
    """Where the next input's turn asks for another tool, the result stays unknown."""
    other = {"role": "assistant", "parts": [{**SEARCH, "name": "delete_records"}]}
    step = thrown([ERROR], asked_again=other)
    assert step.status == "unset" and step.result is None
