"""A run whose model calls are exported as traces of their own beside the run's trace.

``tests/testdata/laminar-google-adk/`` (captured with ``tools/capture_traces/``, outside the
matrix of ``tests/testdata/traces/`` because each file holds several traces): Google ADK agents
traced by ADK's own spans on Laminar's tracer provider, with Laminar's LiteLLM
instrumentation. ADK's spans are one trace holding the whole run: the agents, the model calls
(``generate_content``, no content: ADK's default) and the tools (names, call ids, outcomes by
status; no arguments or results). Laminar's LiteLLM instrumentation starts each model call as
a root span, so each call, with its messages, is a trace of its own. Laminar stamps the first
model call's messages on the agent's ``invoke_agent`` span (its ADK instrumentation enriches a
``call_llm`` span that ADK's telemetry schema 2 no longer writes). ``LMNR_TRACE_CONTENT=false``
reaches neither instrumentation: the ``.nocontent`` files hold the same content.

So the run's trace grades as ``google-adk`` with content off (the messages on the agent span
are never taken for the answer: the last model call's output is known to be missing), and
each model call's trace is a fragment of the run, as for ``openlit-llamaindex``: no check
about the whole run passes there, and only the fragment holding the answer judges it.
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

CAPTURES = Path(__file__).resolve().parents[1] / "testdata" / "laminar-google-adk"
CONTRACTS = {"g": ["support-rag", "multi-agent-handoff"], "h": ["coding-agent"]}


def _files(content: bool) -> list[Path]:
    return [
        p for p in sorted(CAPTURES.glob("*.otlp.json")) if (".nocontent." not in p.name) == content
    ]


def _answers(messages: list[dict[str, Any]] | None) -> bool:
    """Whether a model call's output is an answer: text and no tool call (the LiteLLM spans
    record no finish reason)."""
    parts = [p for m in messages or () for p in m.get("parts") or ()]
    kinds = {p.get("type") for p in parts}
    return "text" in kinds and "tool_call" not in kinds


@pytest.mark.parametrize("content", [True, False], ids=["on", "off"])
def test_the_runs_trace_grades_as_adk_without_content_and_each_call_is_a_fragment(
    content: bool,
) -> None:
    files = _files(content)
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
            assert got == expected("google-adk", contract, scenario, False), (path.name, got)
            answered = 0
            for verdict, trajectory in calls:
                assert trajectory.unmapped_spans == {}
                assert trajectory.steps[0].kind == StepKind.GENERATION, "a model call's root"
                has_answer = any(_answers(g.output_messages) for g in trajectory.generations())
                answered += has_answer
                got = {r.name: r.outcome for r in verdict.results}
                want = fragment_expected(contract, scenario, has_answer)
                assert got == want, (path.name, contract, trajectory.trace_id, got)
                assert not verdict.passed
            assert answered == 1, (path.name, "the answer is in one call's trace, either mode")
