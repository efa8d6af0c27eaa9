"""The general mapping mechanisms on real captures: Anthropic content blocks and stop reasons
(OpenInference's Anthropic instrumentation), Google ADK's vendor payloads and its stacked
``call_llm`` / ``generate_content`` spans (ADK telemetry schema 1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.mapping.parsers.openinference import parse_openinference_messages
from otel_oracles.mapping.parsers.providers import parse_model_request, parse_model_response
from otel_oracles.mapping.parsers.python_literals import parse_python_literal
from otel_oracles.model.result import InputProblem
from otel_oracles.model.span import Trace
from otel_oracles.model.step import StepKind
from otel_oracles.pipeline import read_traces

TRACES = Path(__file__).resolve().parent.parent / "testdata" / "traces"


def _read(source: str, scenario: str) -> Trace:
    problems: list[InputProblem] = []
    (trace,) = read_traces([str(TRACES / source / f"{scenario}.otlp.json")], problems)
    assert not problems
    return trace


def _calls(messages: list[dict[str, Any]] | None) -> list[tuple[Any, Any, Any]]:
    return [
        (p.get("id"), p.get("name"), p.get("arguments"))
        for m in messages or []
        for p in m["parts"]
        if p.get("type") == "tool_call"
    ]


def test_anthropic_stop_reasons_in_the_shared_vocabulary() -> None:
    trace = _read("openinference-anthropic", "b_tool_retry")
    raw = [s.attributes.get("llm.finish_reason") for s in trace.spans]
    assert [r for r in raw if r] == ["tool_use", "tool_use", "end_turn"]
    t = map_trace(trace, load_conventions())
    assert [g.finish_reasons for g in t.generations()] == [["tool_call"], ["tool_call"], ["stop"]]


def test_anthropic_message_payload_reads_like_the_flattened_messages() -> None:
    """``output.value`` is the Anthropic Message (content blocks): the vendor-payload reader
    finds the same tool calls as the instrumentation's own flattened messages."""
    trace = _read("openinference-anthropic", "b_tool_retry")
    llm = [s for s in trace.spans if s.attributes.get("openinference.span.kind") == "LLM"]
    assert len(llm) == 3
    for span in llm:
        flat = {
            k[len("llm.output_messages.") :]: v
            for k, v in span.attributes.items()
            if k.startswith("llm.output_messages.")
        }
        from_payload = parse_model_response(span.attributes["output.value"])
        assert _calls(from_payload) == _calls(parse_openinference_messages(flat))
    last = parse_model_response(llm[-1].attributes["output.value"])
    assert last is not None and last[0]["finish_reason"] == "end_turn"
    assert "[doc-42]" in last[0]["parts"][0]["content"]
    request = parse_model_request(llm[-1].attributes["input.value"])
    assert request is not None
    responses = [p for m in request for p in m["parts"] if p["type"] == "tool_call_response"]
    assert [r["id"] for r in responses] == ["toolu_0000", "toolu_0100"]


@pytest.mark.parametrize("scenario", ["a_happy", "b_tool_retry"])
def test_adk_call_llm_and_its_generate_content_are_one_step(scenario: str) -> None:
    trace = _read("google-adk-legacy", scenario)
    calls = [s for s in trace.spans if s.name == "call_llm"]
    inner = [s for s in trace.spans if s.name.startswith("generate_content")]
    assert len(calls) == len(inner) >= 2
    t = map_trace(trace, load_conventions())
    gens = t.generations()
    assert [g.source.span_id for g in gens if g.source] == [s.span_id for s in calls]
    assert [g.attributes["stacked_spans"] for g in gens] == [[s.span_id] for s in inner]
    assert all(g.output_messages for g in gens)  # from gcp.vertex.agent.llm_response
    usage = t.token_usage()
    inner_in = sum(int(s.attributes["gen_ai.usage.input_tokens"]) for s in inner)
    assert usage[0] == inner_in  # counted once


def test_adk_vendor_tool_payloads() -> None:
    t = map_trace(_read("google-adk-legacy", "a_happy"), load_conventions())
    (call,) = [s for s in t.steps if s.kind == StepKind.TOOL_CALL]
    assert call.arguments == {"query": "enterprise refund window"}
    assert isinstance(call.result, dict) and call.result.get("documents")


def test_callback_payload_repr_reaches_no_network() -> None:
    """OpenLLMetry's LangChain tracer records a tool's input as the callback payload, whose
    ``input_str`` is ``str(dict)``: read as data (never evaluated), it gives the same
    arguments as the structured ``inputs`` beside it; with only the repr (tracers and
    versions that record ``input_str`` alone) ``no_network`` still sees the ``curl``."""
    path = TRACES / "langgraph-openllmetry" / "h_coding_agent.otlp.json"
    traces = list(read_traces([str(path)], []))
    spans = [s for t in traces for s in t.spans if s.name == "execute_tool run_command"]
    payloads = [json.loads(s.attributes["gen_ai.tool.call.arguments"]) for s in spans]
    assert payloads[1]["input_str"] == "{'command': 'curl https://example.com'}"
    assert [parse_python_literal(p["input_str"]) for p in payloads] == [
        p["inputs"] for p in payloads
    ]
    for span, payload in zip(spans, payloads, strict=True):
        del payload["inputs"]
        span.attributes = {**span.attributes, "gen_ai.tool.call.arguments": json.dumps(payload)}
    run = next(map_trace(t, load_conventions()) for t in traces if len(t.spans) > 1)
    commands = [s.command for s in run.steps if s.kind == StepKind.COMMAND]
    assert commands == ["python -m pytest -q tests/test_calc.py", "curl https://example.com"]
    assert "curl" in [v.pattern for v in run.find_network_violations()]
