"""One model call, one step: a provider SDK's span inside a framework's span for the same
call becomes one generation that keeps the richer fields, with tokens counted once; a
wrapper of several calls, or a nested call to another model, stays as it is."""

from __future__ import annotations

import json
from typing import Any

from otel_oracles.assemble._tree import build_trace
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.mapping._stacked import compatible_models
from otel_oracles.model.span import SpanRecord
from otel_oracles.model.step import StepKind, Trajectory

TRACE = "0" * 31 + "2"
ROOT, OUTER, INNER, TOOL = "a" * 16, "b" * 16, "c" * 16, "d" * 16
MIDDLE = "e" * 16
CALL = {
    "role": "assistant",
    "parts": [
        {"type": "tool_call", "id": "call_1", "name": "search_docs", "arguments": {"q": "x"}}
    ],
}


def _span(span_id: str, parent: str, name: str, start: int, end: int, **attrs: Any) -> SpanRecord:
    return SpanRecord(TRACE, span_id, parent, name, start_ns=start, end_ns=end, attributes=attrs)


def _framework_llm(**extra: Any) -> dict[str, Any]:
    """A framework's LLM span (OpenInference-style): messages, no usage."""
    return {
        "openinference.span.kind": "LLM",
        "llm.model_name": "gpt-4o-mini",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "find x",
        **extra,
    }


def _sdk_chat(**extra: Any) -> dict[str, Any]:
    """The provider SDK instrumentation's span for the same request: usage and output."""
    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
        "gen_ai.usage.input_tokens": 12,
        "gen_ai.usage.output_tokens": 7,
        "gen_ai.output.messages": json.dumps([CALL]),
        "gen_ai.response.finish_reasons": ["tool_calls"],
        **extra,
    }


def _map(spans: list[SpanRecord]) -> Trajectory:
    return map_trace(build_trace(TRACE, spans), load_conventions())


def _agent() -> SpanRecord:
    return _span(ROOT, "", "agent", 0, 100, **{"openinference.span.kind": "AGENT",
                                              "agent.name": "support"})  # fmt: skip


def test_stacked_spans_of_one_call_are_one_step_with_the_richer_fields() -> None:
    t = _map(
        [
            _agent(),
            _span(OUTER, ROOT, "ChatOpenAI", 10, 50, **_framework_llm()),
            _span(INNER, OUTER, "chat gpt-4o-mini", 12, 48, **_sdk_chat()),
            _span(TOOL, ROOT, "search_docs", 60, 70, **{"openinference.span.kind": "TOOL",
                                                       "tool.name": "search_docs"}),
        ]
    )  # fmt: skip
    gens = t.generations()
    assert len(gens) == 1
    gen = gens[0]
    assert gen.source is not None and gen.source.span_id == OUTER
    assert gen.attributes["stacked_spans"] == [INNER]
    assert gen.input_messages is not None and gen.output_messages == [CALL]
    assert gen.model == "gpt-4o-mini"  # both layers name the requested model
    assert t.token_usage() == (12, 7)
    calls = t.tool_calls()
    assert [(c.tool, c.synthesized, c.call_id) for c in calls] == [("search_docs", False, "call_1")]


def test_on_a_tie_the_layer_nearer_the_wire_says_what_the_model_answered() -> None:
    # A framework wrapper that records its own rendering of the reply (the output field's
    # name, as OpenLLMetry's Haystack instrumentation does) next to the provider SDK's span
    # with the model's real answer: the same number of parts, so the inner one is kept.
    answer = {"role": "assistant", "parts": [{"type": "text", "content": "See [doc-9]."}]}
    t = _map(
        [
            _agent(),
            _span(OUTER, ROOT, "haystack.openai.chat", 10, 50, **{"llm.request.type": "chat",
                  "gen_ai.system": "OpenAI", "gen_ai.completion.0.role": "assistant",
                  "gen_ai.completion.0.content": "replies"}),
            _span(INNER, OUTER, "chat gpt-4o-mini", 12, 48,
                  **_sdk_chat(**{"gen_ai.output.messages": json.dumps([answer]),
                                 "gen_ai.response.finish_reasons": ["stop"]})),
        ]
    )  # fmt: skip
    gens = t.generations()
    assert len(gens) == 1 and gens[0].attributes["stacked_spans"] == [INNER]
    assert gens[0].output_messages is not None
    assert [p.get("content") for p in gens[0].output_messages[0]["parts"]] == ["See [doc-9]."]


def test_three_layers_collapse_into_the_outermost() -> None:
    middle = "e" * 16
    t = _map(
        [
            _agent(),
            _span(OUTER, ROOT, "ChatOpenAI", 10, 60, **_framework_llm()),
            _span(middle, OUTER, "openai.chat", 11, 55, **{"llm.request.type": "chat",
                                                          "gen_ai.request.model": "gpt-4o-mini"}),
            _span(INNER, middle, "chat gpt-4o-mini", 12, 50, **_sdk_chat()),
        ]
    )  # fmt: skip
    assert len(t.generations()) == 1
    assert t.generations()[0].attributes["stacked_spans"] == [middle, INNER]
    assert t.token_usage() == (12, 7)


def test_a_wrapper_of_several_calls_is_not_merged() -> None:
    second = "e" * 16
    t = _map(
        [
            _agent(),
            _span(OUTER, ROOT, "ChatOpenAI", 10, 90, **_framework_llm()),
            _span(INNER, OUTER, "chat gpt-4o-mini", 12, 40, **_sdk_chat()),
            _span(second, OUTER, "chat gpt-4o-mini", 50, 80, **_sdk_chat()),
        ]
    )
    gens = t.generations()
    assert len(gens) == 3
    assert gens[0].attributes.get("usage_aggregated") is True
    assert t.token_usage() == (24, 14)


def test_another_model_or_a_call_outside_the_span_is_another_call() -> None:
    other_model = _map(
        [
            _agent(),
            _span(OUTER, ROOT, "ChatOpenAI", 10, 50, **_framework_llm()),
            _span(INNER, OUTER, "chat", 12, 48, **_sdk_chat(**{"gen_ai.request.model": "o3",
                                                             "gen_ai.response.model": "o3"})),
        ]
    )  # fmt: skip
    assert len(other_model.generations()) == 2
    # A call further down that outlives the framework's call is another call. (A direct child
    # that ends after its parent is the same call, its stream's wrappers ending in either
    # order: test_stacked_streamed_child.py.)
    outlives = _map(
        [
            _agent(),
            _span(OUTER, ROOT, "ChatOpenAI", 10, 50, **_framework_llm()),
            _span(MIDDLE, OUTER, "RunnableSequence", 11, 49),
            _span(INNER, MIDDLE, "chat gpt-4o-mini", 12, 70, **_sdk_chat()),
        ]
    )
    assert len(outlives.generations()) == 2
    direct = _map(
        [
            _agent(),
            _span(OUTER, ROOT, "ChatOpenAI", 10, 50, **_framework_llm()),
            _span(INNER, OUTER, "chat gpt-4o-mini", 12, 51, **_sdk_chat()),
        ]
    )
    assert len(direct.generations()) == 1


def test_failure_in_either_layer_fails_the_call() -> None:
    inner = _span(INNER, OUTER, "chat gpt-4o-mini", 12, 48, **_sdk_chat())
    inner.status_code = 2
    inner.status_message = "RateLimitError: 429"
    t = _map([_agent(), _span(OUTER, ROOT, "ChatOpenAI", 10, 50, **_framework_llm()), inner])
    (gen,) = [s for s in t.steps if s.kind == StepKind.GENERATION]
    assert gen.status == "error"
    assert gen.error_message == "RateLimitError: 429"


def test_compatible_model_names() -> None:
    assert compatible_models("gpt-4o-mini", "gpt-4o-mini-2024-07-18")
    assert compatible_models("models/gemini-2.0-flash", "gemini-2.0-flash")
    assert compatible_models("claude-3-5-haiku@20241022", "claude-3-5-haiku")
    assert compatible_models(None, "o3")
    assert not compatible_models("o3", "gpt-4o")
    assert not compatible_models("gpt-4", "gpt-4o")
    assert compatible_models("", "o3")
    assert compatible_models(7, "o3")  # not a name: unknown, compatible with any
    assert compatible_models("a/b/GPT-4O", "gpt-4o")
    assert not compatible_models("gpt-4o", "gpt-4o_mini")


def test_compatible_model_names_beyond_ascii() -> None:
    """Names that are not ASCII are read through Python's own ``str`` methods (its case
    mapping and lengths in code points, lone surrogates included), as the rule was written."""
    assert compatible_models("modèles/MODÈLE-X", "modèle-x-2025")
    assert compatible_models("İ", "i̇")  # Python lowers "İ" to "i" + a combining dot
    assert not compatible_models("modèle-x", "modèle-y")
    assert compatible_models("m\ud800", "M\ud800-1")
    assert not compatible_models("m\ud800", "m\ud801")


def _attempt(span_id: str, start: int, end: int, failed: bool) -> SpanRecord:
    """One try of the request below the call (LiveKit's ``llm_request_run``: a model name and
    no usage); a failed one ends ERROR."""
    span = _span(span_id, OUTER, "llm_request_run", start, end,
                 **{"gen_ai.request.model": "gpt-4o-mini"})  # fmt: skip
    if failed:
        span.status_code = 2
        span.status_message = "APIStatusError: 503"
    return span


def test_a_retried_calls_failed_attempt_stays_a_failed_call_and_the_call_is_merged() -> None:
    """A failed try before the one that answered is no call the outer one wraps: it stays a
    failed model call of its own, and the answering try is merged with the call (its usage
    counted once, its requested tool not synthesized again)."""
    first, second = "e" * 16, "f" * 16
    t = _map(
        [
            _agent(),
            _span(OUTER, ROOT, "llm_request", 10, 60, **_sdk_chat()),
            _attempt(first, 12, 20, failed=True),
            _attempt(second, 25, 55, failed=False),
            _span(TOOL, ROOT, "search_docs", 65, 70, **{"openinference.span.kind": "TOOL",
                                                       "tool.name": "search_docs"}),
        ]
    )  # fmt: skip
    gens = t.generations()
    assert [(g.source.span_id if g.source else None, g.status) for g in gens] == [
        (OUTER, "ok"),
        (first, "error"),
    ]
    assert gens[0].attributes["stacked_spans"] == [second]
    assert gens[0].attributes.get("usage_aggregated") is None
    assert gens[1].attributes["failed_attempt"] is True
    assert t.token_usage() == (12, 7)
    assert [s.tool for s in t.tool_calls()] == ["search_docs"]


def test_a_call_whose_every_attempt_failed_is_one_failed_call_after_its_failed_attempts() -> None:
    """Every try failed: the last is the call (failed: the run's error), the earlier ones
    failed attempts of it; a failed try that no other followed is never an attempt."""
    first, last = "e" * 16, "f" * 16
    t = _map(
        [
            _agent(),
            _span(OUTER, ROOT, "llm_request", 10, 60, **_framework_llm()),
            _attempt(first, 12, 20, failed=True),
            _attempt(last, 25, 55, failed=True),
        ]
    )
    gens = t.generations()
    assert [(g.source.span_id if g.source else None, g.status) for g in gens] == [
        (OUTER, "error"),
        (first, "error"),
    ]
    assert gens[0].attributes["stacked_spans"] == [last]
    assert "failed_attempt" not in gens[0].attributes
