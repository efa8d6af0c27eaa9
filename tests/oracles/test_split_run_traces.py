"""Runs whose model calls are exported as traces of their own beside the run's trace.

Laminar's LiteLLM instrumentation starts each model call as a root span, so under a framework
that calls LiteLLM each call, with its messages, is a trace of its own, while the framework's
spans are one trace holding the run. Captured with ``tools/capture_traces/`` into
``tests/testdata/<source>/``, outside the matrix of ``tests/testdata/traces/`` because each
file holds several traces:

- ``laminar-google-adk``: ADK's own spans on Laminar's tracer provider hold the agents, the
  model calls (``generate_content``, no content: ADK's default) and the tools (names, call
  ids, outcomes by status; no arguments or results). Laminar stamps the first model call's
  messages on the agent's ``invoke_agent`` span (its ADK instrumentation enriches a
  ``call_llm`` span that ADK's telemetry schema 2 no longer writes); they are never taken for
  the answer, since the last model call's output is known to be missing.
- ``laminar-crewai``: OpenLLMetry's CrewAI instrumentation on Laminar's tracer provider (what
  Laminar's CrewAI instrument is) holds the crew, its agents and its ``.llm`` spans, as in
  ``crewai-openllmetry``.

``LMNR_TRACE_CONTENT=false`` reaches none of these instrumentations: the ``.nocontent`` files
hold the same content. So the run's trace grades as its framework's matrix source, and each
model call's trace is a fragment of the run, as for ``openlit-llamaindex``: no check about the
whole run passes there, and only the fragment holding the answer judges it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from otel_oracles.model.step import StepKind
from tests.oracles.test_contracts_on_real_traces import (
    contract_named,
    expected,
    fragment_expected,
    grade_file,
)

TESTDATA = Path(__file__).resolve().parents[1] / "testdata"
SPLIT_RUNS = {
    "laminar-google-adk": ("google-adk", False),
    "laminar-crewai": ("crewai-openllmetry", None),
}
"""Capture folder -> the matrix source whose outcomes the run's trace has, and the content mode
to grade it as (``None``: the file's own). Under ADK the run's trace holds no content in
either mode (ADK's default); under CrewAI it is OpenLLMetry's CrewAI instrumentation on
Laminar's provider, which records content whatever the switch (``crewai-openllmetry``)."""
CONTRACTS = {"g": ["support-rag", "multi-agent-handoff"], "h": ["coding-agent"]}


def _files(source: str, content: bool) -> list[Path]:
    return [
        p
        for p in sorted((TESTDATA / source).glob("*.otlp.json"))
        if (".nocontent." not in p.name) == content
    ]


def _answers(messages: list[dict[str, Any]] | None) -> bool:
    """Whether a model call's output is an answer: text and no tool call (the LiteLLM spans
    record no finish reason)."""
    parts = [p for m in messages or () for p in m.get("parts") or ()]
    kinds = {p.get("type") for p in parts}
    return "text" in kinds and "tool_call" not in kinds


@pytest.mark.parametrize("source", sorted(SPLIT_RUNS))
@pytest.mark.parametrize("content", [True, False], ids=["on", "off"])
def test_the_runs_trace_grades_as_its_framework_and_each_call_is_a_fragment(
    source: str, content: bool
) -> None:
    like, mode = SPLIT_RUNS[source]
    files = _files(source, content)
    assert len(files) == 8, "a_happy ... h_coding_agent"
    for path in files:
        scenario = path.name.split(".")[0]
        for contract in CONTRACTS.get(scenario[0], ["support-rag"]):
            graded = grade_file(path, contract_named(contract))
            runs = [vt for vt in graded if any(s.kind == StepKind.AGENT for s in vt[1].steps)]
            calls = [vt for vt in graded if vt not in runs]
            assert len(runs) == 1, (path.name, "one trace holds the agents")
            assert len(calls) >= 2, (path.name, "each model call is a trace of its own")
            verdict, trajectory = runs[0]
            assert trajectory.unmapped_spans == {}
            got = {r.name: r.outcome for r in verdict.results}
            want = expected(like, contract, scenario, content if mode is None else mode)
            assert got == want, (path.name, got)
            answered = 0
            for verdict, trajectory in calls:
                assert trajectory.unmapped_spans == {}
                assert trajectory.steps[0].kind == StepKind.GENERATION, "a model call's root"
                has_answer = any(_answers(g.output_messages) for g in trajectory.generations())
                answered += has_answer
                got = {r.name: r.outcome for r in verdict.results}
                want = fragment_expected(contract, scenario, has_answer, trajectory)
                assert got == want, (path.name, contract, trajectory.trace_id, got)
                assert not verdict.passed
            # the final answer is in one call's trace, either mode; a CrewAI coworker's answer
            # to its delegating agent is one more
            want_answers = 2 if source == "laminar-crewai" and scenario == "g_handoff" else 1
            assert answered == want_answers, (path.name, answered)
