"""A run whose framework asked for its final answer past its limit is stopped short even
where the request's text is not shown (``grade/evidence.py``, ``_forced_answer``): its last
model call offered no tools (``Step.tools_offered == ()``), right after a tool ran, where the
agent's call before it offered some. Real captures, content off; the final calls frameworks
make by design (a structured-output call after the agent answered) are not such a request.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_oracles.grade.evidence import Evidence
from otel_oracles.grade.loader import load_contract
from otel_oracles.mapping import ConventionSet, load_conventions, map_trace
from otel_oracles.model.result import Outcome
from otel_oracles.model.step import StepKind, Trajectory
from otel_oracles.pipeline import grade_trace, holds_agent_run, read_traces

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO / "tests" / "testdata" / "traces"


@pytest.fixture(scope="module")
def conventions() -> ConventionSet:
    return load_conventions()


def mapped(path: Path, conventions: ConventionSet) -> Trajectory:
    runs = [map_trace(t, conventions) for t in read_traces([str(path)], [])]
    runs = [t for t in runs if holds_agent_run(t)]
    assert len(runs) == 1
    return runs[0]


def test_crewai_forced_answer_without_content_is_stopped_short(
    conventions: ConventionSet,
) -> None:
    path = TRACES / "crewai-openinference" / "q_turn_limit.nocontent.otlp.json"
    why = Evidence(mapped(path, conventions)).stopped_short()
    assert why is not None and "offered no tools" in why
    contract = load_contract(REPO / "examples" / "contracts" / "support-rag.yaml")
    contract = contract.model_copy(update={"match": None})
    traces = list(read_traces([str(path)], []))
    verdict, _ = grade_trace(traces[0], [contract], conventions)[0]
    result = next(r for r in verdict.results if r.name == "bounded-effort")
    assert result.outcome == Outcome.MISSING_EVIDENCE, result.message


@pytest.mark.parametrize(
    ("source", "scenario"),
    [
        ("crewai-openinference", "a_happy"),
        ("crewai-openinference", "m_excess_calls"),
        # LangGraph's structured response: a call offering no tools after the agent answered
        ("langgraph-openinference", "r_structured_answer"),
        ("langgraph-openinference", "r_structured_fabricated"),
    ],
)
def test_a_final_call_by_design_is_no_forced_answer(
    source: str, scenario: str, conventions: ConventionSet
) -> None:
    path = TRACES / source / f"{scenario}.nocontent.otlp.json"
    assert Evidence(mapped(path, conventions)).stopped_short() is None


def test_a_shown_request_is_left_to_the_limit_prompts(conventions: ConventionSet) -> None:
    """With content on the request's text decides (``run_limit_prompts``): the structural
    mark alone never marks a call whose request is shown."""
    path = TRACES / "langgraph-openinference" / "r_structured_answer.otlp.json"
    run = mapped(path, conventions)
    last = [s for s in run.steps if s.kind == StepKind.GENERATION][-1]
    assert last.tools_offered == () and last.input_messages
    assert Evidence(run).stopped_short() is None


def test_unknown_tools_decide_nothing(conventions: ConventionSet) -> None:
    """A forced last call whose tools the trace does not record (``None``) is not read as
    one: the call offered nothing the trace shows."""
    path = TRACES / "crewai-openinference" / "q_turn_limit.nocontent.otlp.json"
    run = mapped(path, conventions)
    steps = [
        s.model_copy(update={"tools_offered": None}) if s.kind == StepKind.GENERATION else s
        for s in run.steps
    ]
    assert Evidence(run.model_copy(update={"steps": steps})).stopped_short() is None
