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
