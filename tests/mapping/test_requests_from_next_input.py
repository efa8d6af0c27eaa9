"""A model call whose recorded output lost the calls it asked for takes them from the next
model call's input, only where its rule says so (``requests_from_next_input``: MLflow's CrewAI
autolog writes LiteLLM's tool-call objects as ``{}``, while the next call is handed the
conversation with the assistant turn that asked and the results)."""

from __future__ import annotations

import json
from typing import Any

from otel_oracles.assemble._tree import build_trace
from otel_oracles.mapping import ConventionSet, load_conventions, map_trace
from otel_oracles.model.span import SpanRecord, StatusCode
from otel_oracles.model.step import StepKind, Trajectory

TRACE = "0" * 31 + "8"
MLFLOW = "mlflow.tracing.provider"
SYSTEM = {"role": "system", "content": "You are support_agent."}
USER = {"role": "user", "content": "What is the refund window?"}
ASKED = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "search_docs", "arguments": '{"query": "refund window"}'},
        }
    ],
}
RESULT = {
    "role": "tool",
    "tool_call_id": "call_1",
    "name": "search_docs",
    "content": '{"documents": []}',
}


def span(span_id: str, parent: str, name: str, **attrs: Any) -> SpanRecord:
    start = int(span_id, 16) * 10
    encoded = {k: json.dumps(v) for k, v in attrs.items()}
    return SpanRecord(
        TRACE, span_id * 16, parent * 16 if parent else "", name, start_ns=start,
        end_ns=start + 5 if parent else start + 1000, attributes=encoded, scope_name=MLFLOW,
        status_code=StatusCode.OK,
    )  # fmt: skip


def llm(span_id: str, messages: list[Any] | str, output: Any, message_format: str) -> SpanRecord:
    """A CrewAI ``LLM.call`` span (``messages`` a string: the masked placeholder)."""
    inputs = messages if isinstance(messages, str) else {"messages": messages}
    return span(
        span_id, "1", "openai/gpt-4o-mini",
        **{"mlflow.spanType": "LLM", "mlflow.message.format": message_format,
           "mlflow.llm.model": "openai/gpt-4o-mini",
           "mlflow.spanInputs": inputs, "mlflow.spanOutputs": output},
    )  # fmt: skip


def run(
    second_input: list[Any] | str, *, message_format: str = "crewai", first: Any = None
) -> Trajectory:
    """An agent whose first model call recorded ``[{}]`` (the tool call it asked for, lost)
    and whose second call was handed ``second_input`` and answered."""
    spans = [
        span("1", "", "support_agent",
             **{"mlflow.spanType": "AGENT", "entity_type": "agent", "role": "support_agent"}),
        llm("2", [SYSTEM, USER] if isinstance(second_input, list) else second_input,
            [{}] if first is None else first, message_format),
        llm("3", second_input, "Refunds take 30 days.", message_format),
    ]  # fmt: skip
    return map_trace(build_trace(TRACE, spans), conventions())


_CONVENTIONS: list[ConventionSet] = []


def conventions() -> ConventionSet:
    if not _CONVENTIONS:
        _CONVENTIONS.append(load_conventions())
    return _CONVENTIONS[0]


def test_the_call_asked_for_is_read_from_the_next_input_with_its_result() -> None:
    trajectory = run([SYSTEM, USER, ASKED, RESULT])
    (call,) = trajectory.tool_calls()
    assert (call.tool, call.call_id, call.arguments) == (
        "search_docs",
        "call_1",
        {"query": "refund window"},
    )
    assert call.result == {"documents": []} and call.synthesized
    assert [s.kind for s in trajectory.steps] == [
        StepKind.AGENT,
        StepKind.GENERATION,
        StepKind.TOOL_CALL,
        StepKind.GENERATION,
    ]


def test_a_next_input_that_does_not_continue_this_one_is_not_read() -> None:
    """Another conversation (the roles differ where this call's input was) shows nothing of
    what this call asked: the call stays one whose requests were not captured, never a named
    tool call."""
    for other in ([USER, SYSTEM, ASKED, RESULT], [SYSTEM, USER], [SYSTEM, USER, USER]):
        (call,) = run(other).tool_calls()
        assert call.tool is None and "tool" in call.redacted, other


def test_a_call_that_answered_in_text_keeps_its_output() -> None:
    """Its captured text is its output: nothing is borrowed from the next input. No tool step
    or structured request shows in the run, and the loop called the model again right after,
    so the text may have asked for a tool (as Langroid's default tool mode does): the call
    gets the unnamed placeholder, never a run shown to call no tool."""
    trajectory = run([SYSTEM, USER, ASKED, RESULT], first="Let me think.")
    (call,) = trajectory.tool_calls()
    assert call.tool is None and "tool" in call.redacted
    assert call.attributes.get("tool_calls_hidden") is True
    first = trajectory.generations()[0]
    assert first.output_messages == [
        {"role": "assistant", "parts": [{"type": "text", "content": "Let me think."}]}
    ]


def test_masked_inputs_show_no_call() -> None:
    """With content masked the next input is a placeholder: the call's requests stay unknown."""
    trajectory = run("[REDACTED]", first="[REDACTED]")
    (call,) = trajectory.tool_calls()
    assert call.tool is None


def test_rules_without_the_option_do_not_read_the_next_input() -> None:
    """The same spans as an MLflow model call of another format (the generic rule): nothing
    is borrowed from the next call."""
    (call,) = run([SYSTEM, USER, ASKED, RESULT], message_format="openai").tool_calls()
    assert call.tool is None


def asked(call_id: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """An assistant turn asking for one call (Pipecat stores each call of a reply so)."""
    function = {"name": tool, "arguments": json.dumps(arguments)}
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": call_id, "type": "function", "function": function}]}  # fmt: skip


def answered(call_id: str, content: Any) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": json.dumps(content)}


DELETE = {"table": "refund_requests", "where": "status = 'stale'"}


def test_every_call_of_one_reply_stored_as_turns_of_their_own_is_read() -> None:
    """Two calls of one reply kept as two assistant turns, each with its result (no model
    call between them): both are this call's requests, the forbidden one included. Reading
    only the first would hide the second call."""
    trajectory = run(
        [SYSTEM, USER, asked("c1", "search_docs", {"query": "refund window"}),
         answered("c1", {"documents": []}), asked("c2", "delete_records", DELETE),
         answered("c2", {"deleted": 12})]
    )  # fmt: skip
    calls = trajectory.tool_calls()
    assert [(c.tool, c.call_id) for c in calls] == [("search_docs", "c1"), ("delete_records", "c2")]
    assert calls[1].arguments == DELETE and calls[1].result == {"deleted": 12}


def test_turns_after_a_user_message_are_not_this_calls_requests() -> None:
    """A user message ends what this call asked for: a later assistant turn came from a model
    call between (not traced), so only the first turn is read."""
    trajectory = run(
        [SYSTEM, USER, asked("c1", "search_docs", {"query": "refund window"}),
         answered("c1", {"documents": []}), {"role": "user", "content": "Also clean up."},
         asked("c2", "delete_records", DELETE), answered("c2", {"deleted": 12})]
    )  # fmt: skip
    (call,) = trajectory.tool_calls()
    assert (call.tool, call.call_id) == ("search_docs", "c1")


OLLAMA = "opentelemetry.instrumentation.ollama"


def ollama_chat(
    span_id: str, prompt: list[dict[str, Any]], completion: dict[str, Any]
) -> SpanRecord:
    """An ``ollama.chat`` span of OpenLLMetry's Ollama instrumentation (0.62.4): the request
    and reply in the indexed ``gen_ai.prompt.N.*`` / ``gen_ai.completion.0.*`` keys."""
    attrs: dict[str, Any] = {"llm.request.type": "chat", "gen_ai.system": "Ollama",
                             "gen_ai.request.model": "llama3.1:8b"}  # fmt: skip
    for n, message in enumerate(prompt):
        for key, value in message.items():
            attrs[f"gen_ai.prompt.{n}.{key}"] = value
    for key, value in completion.items():
        attrs[f"gen_ai.completion.0.{key}"] = value
    start = int(span_id, 16) * 10
    return SpanRecord(
        TRACE, span_id * 16, "1" * 16, "ollama.chat", start_ns=start, end_ns=start + 5,
        attributes=attrs, scope_name=OLLAMA, status_code=StatusCode.OK,
    )  # fmt: skip


def ollama_run(second_prompt: list[dict[str, Any]]) -> Trajectory:
    """A tool loop on Ollama's client whose first reply asked for a search: the span records
    the reply's role alone (no text, no tool calls; Ollama says ``stop`` either way)."""
    first = [
        {"role": "system", "content": "Cite documents."},
        {"role": "user", "content": "Refunds?"},
    ]
    spans = [
        SpanRecord(TRACE, "1" * 16, "", "agent_run", start_ns=0, end_ns=1000,
                   status_code=StatusCode.OK),
        ollama_chat("2", first, {"role": "assistant"}),
        ollama_chat("3", second_prompt, {"role": "assistant", "content": "30 days [doc-42]."}),
    ]  # fmt: skip
    return map_trace(build_trace(TRACE, spans), conventions())


def test_a_reply_recorded_as_its_role_alone_takes_its_calls_from_the_next_prompt() -> None:
    """OpenLLMetry's Ollama spans flag the first reply's output as not captured (a message
    without parts); the next call's prompt holds the assistant turn the application handed
    back (no call id: Ollama gives none) and the tool's result after it. The call is read
    from there, its result linked, and the output no longer counts as not captured."""
    trajectory = ollama_run(
        [{"role": "system", "content": "Cite documents."}, {"role": "user", "content": "Refunds?"},
         {"role": "assistant", "tool_calls.0.name": "search_docs",
          "tool_calls.0.arguments": '{"query": "refund window"}'},
         {"role": "tool", "content": '{"documents": [{"id": "doc-42"}]}'}]
    )  # fmt: skip
    (call,) = trajectory.tool_calls()
    assert (call.tool, call.arguments) == ("search_docs", {"query": "refund window"})
    assert call.result == {"documents": [{"id": "doc-42"}]} and call.synthesized
    assert "output_messages" not in trajectory.generations()[0].redacted


def test_a_role_alone_stays_unknown_beside_an_unrelated_next_prompt() -> None:
    """A next prompt that does not continue this call's (another conversation) shows nothing
    of what the reply asked: its output stays not captured, never a named call."""
    trajectory = ollama_run([{"role": "user", "content": "Something else?"}])
    assert [c.tool for c in trajectory.tool_calls()] in ([], [None])
    assert "output_messages" in trajectory.generations()[0].redacted
