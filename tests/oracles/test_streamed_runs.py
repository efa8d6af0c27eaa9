"""Agent frameworks run in streaming mode (``<source>-stream`` captures) map as their
unstreamed runs do, and what a stream leaves out fails closed.

Chat products stream: the framework sends the model's tokens on as they come, and the
instrumentation records a call from what the stream assembled. The same scripted runs were
captured both ways (``tools/capture_traces/README.md``, "Streaming"), so the truth of each pair
is the same: every streamed run must map to the same model calls, tool requests, tool calls
and answer as its unstreamed twin (Google ADK's SSE mode records each partial chunk of a call
as an output message before the one they add up to: ``streamed_partials``). Where the stream
carries no usage (``ChatOpenAI`` streams without ``stream_usage``, the OpenAI Agents SDK's
chat-completions model without ``include_usage``), a token budget is missing evidence, never a
pass, also where the instrumentation wrote the missing usage as zeros.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from otel_oracles.grade.evidence import final_output
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.result import InputProblem, Outcome
from otel_oracles.model.step import Trajectory
from otel_oracles.pipeline import grade_trace, read_traces
from tests.oracles.test_contracts_on_real_traces import STATUS_SPREAD
from tests.support.one_check import TRACES, one_check_contract

USAGE_RECORDED = {
    "google-adk-stream": True,
    "langgraph-openinference-stream": False,
    "openinference-openai-agents-stream": False,
    "logfire-openai-agents-stream": False,
    "openlit-openai-agents-stream": False,
    "pydantic-ai-openinference-stream": True,
    "smolagents-openinference-stream": True,
    "strands-stream": True,
    "vercel-ai-sdk-5-stream": False,
    "vercel-ai-sdk-5-latest-stream": False,
    "mastra-stream": False,
    "langgraphjs-openinference-stream": True,
    "vercel-ai-sdk-openinference-stream": False,
    "openllmetry-js-stream": True,
}
"""The agent frameworks captured streaming, and whether their streamed model calls record
token usage: LangChain's ``ChatOpenAI`` asks for the usage chunk only with ``stream_usage``
(off by default on a ``base_url`` of one's own) and the Agents SDK's chat-completions model
only with ``ModelSettings(include_usage=True)`` (the SDK then fills the call's usage with
zeros, which Logfire writes as ``gen_ai.usage.*`` 0: no usage, not a call that cost nothing;
OpenLIT's openai instrumentor writes its own estimate, counted from the texts, as
``gen_ai.usage.*``: no usage either, ``openlit.yaml``'s ``streamed_chat_usage_estimated``);
pydantic-ai, Strands, smolagents' ``OpenAIModel.generate_stream`` and ADK's LiteLLM model have it
(``stream_options.include_usage``), as LangChain.js's ``ChatOpenAI`` does by default
(``streamUsage``); the AI SDK's OpenAI-compatible provider (Vercel AI SDK 5 and 6 ``streamText``,
Mastra's ``Agent.stream`` on it) asks for it only with ``includeUsage``, off by default."""

SCENARIOS = ("a_happy", "b_tool_retry", "d_forbidden_tool", "e_fabricated_citation", "g_handoff")


def _trajectories(path: Path) -> list[Trajectory]:
    problems: list[InputProblem] = []
    traces = list(read_traces([str(path)], problems))
    assert problems == []
    return [map_trace(trace, load_conventions()) for trace in traces]


def _shape(t: Trajectory) -> dict[str, Any]:
    """What a run did, as the checks read it: the tool calls with arguments and outcome, the
    tools each model call asked for, the agents and the answer. A request without arguments
    reads the same recorded as ``{}`` or not recorded (OpenInference's flattened attributes
    leave out a handoff's empty arguments, the streamed response body keeps them)."""
    requested = [
        [
            (p.get("name"), p.get("arguments") or None)
            for m in g.output_messages or []
            for p in m["parts"]
            if p.get("type") == "tool_call"
        ]
        for g in t.generations()
    ]
    return {
        "calls": [(s.tool, s.arguments, s.status) for s in t.tool_calls() if not s.synthesized],
        "requested": requested,
        "agents": sorted({s.agent_name for s in t.agents() if s.agent_name}),
        "answer": final_output(t).text,
    }


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("source", sorted(USAGE_RECORDED))
def test_a_streamed_run_maps_as_its_unstreamed_twin(source: str, scenario: str) -> None:
    streamed = TRACES / source / f"{scenario}.otlp.json"
    twin = TRACES / source.removesuffix("-stream") / f"{scenario}.otlp.json"
    [got] = _trajectories(streamed)
    [want] = _trajectories(twin)
    assert got.unmapped_spans == {}
    assert _shape(got) == _shape(want)
    # Where a failed tool call's status spreads to the model calls around it, the answer after
    # a failure is missing in both (the matrix's STATUS_SPREAD); every other run has one.
    failed_calls = any(status == "error" for _, _, status in _shape(want)["calls"])
    spread = failed_calls and source in STATUS_SPREAD
    assert (final_output(got).text is None) == spread


@pytest.mark.parametrize("content", [True, False])
@pytest.mark.parametrize("source", sorted(USAGE_RECORDED))
def test_a_token_budget_on_a_streamed_run(source: str, content: bool, tmp_path: Path) -> None:
    """Usage the stream did not carry is missing evidence, within the budget or over it
    (the tokens spent are not known); usage it carried is judged."""
    path = TRACES / source / f"a_happy{'' if content else '.nocontent'}.otlp.json"
    for budget, over in ((1_000_000_000, False), (1, True)):
        c = one_check_contract(tmp_path, f"{{type: tokens, max_total_tokens: {budget}}}")
        problems: list[InputProblem] = []
        [trace] = read_traces([str(path)], problems)
        [(verdict, _)] = grade_trace(trace, [c], load_conventions())
        [result] = verdict.results
        if not USAGE_RECORDED[source]:
            want = Outcome.MISSING_EVIDENCE
        else:
            want = Outcome.INVARIANT_FAILURE if over else Outcome.PASS
        assert result.outcome == want, result.message
