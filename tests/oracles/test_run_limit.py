"""A run its framework's own turn limit ended is not a run the agent finished: its effort
counts are lower bounds, never a pass (``Evidence.stopped_short``).

The limit shows in a trace in two ways: the run ends in an error the conventions declare a
limit error (``run_limit_errors``: the OpenAI Agents SDK's ``MaxTurnsExceeded``, pydantic-ai's
``UsageLimitExceeded``, ADK's ``LlmCallsLimitExceededError``), or it ends in the middle of its
work: a tool it had been using was asked for or ran after the last model call, and no model
call read the result (LangGraph's prebuilt agent answering its own text in place of the last
request, LangChain's ``AgentExecutor`` its own after the last tool ran). The ``q_turn_limit``
captures hold both; a run that failed otherwise (``o_run_error``) or finished is not stopped
short.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_oracles.assemble._tree import build_trace
from otel_oracles.grade.evidence import Evidence
from otel_oracles.grade.loader import load_contract
from otel_oracles.mapping import ConventionSet, load_conventions, map_trace
from otel_oracles.model.contract import Contract
from otel_oracles.model.result import Outcome
from otel_oracles.model.span import EventRecord, SpanRecord, StatusCode
from otel_oracles.model.step import Trajectory
from otel_oracles.pipeline import grade_trace, holds_agent_run, read_traces

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO / "tests" / "testdata" / "traces"
TRACE = "0" * 31 + "7"


@pytest.fixture(scope="module")
def conventions() -> ConventionSet:
    return load_conventions()


def support_rag() -> Contract:
    contract = load_contract(REPO / "examples" / "contracts" / "support-rag.yaml")
    return contract.model_copy(update={"match": None})


def mapped(path: Path, conventions: ConventionSet) -> Trajectory:
    """The file's one agent run (a trace that holds none, such as a tracer's own setup
    trace beside it, is no subject)."""
    runs = [map_trace(t, conventions) for t in read_traces([str(path)], [])]
    runs = [t for t in runs if holds_agent_run(t)]
    assert len(runs) == 1
    return runs[0]


def bounded_effort(path: Path, conventions: ConventionSet) -> tuple[Outcome, str]:
    traces = list(read_traces([str(path)], []))
    verdict, _ = grade_trace(traces[0], [support_rag()], conventions)[0]
    result = next(r for r in verdict.results if r.name == "bounded-effort")
    return result.outcome, result.message


def agent_span(status: int, message: str = "", exc_type: str | None = None) -> SpanRecord:
    events = []
    if exc_type is not None:
        attrs = {"exception.type": exc_type, "exception.message": message}
        events.append(EventRecord("exception", 5, attrs))
    return SpanRecord(
        TRACE, "b" * 16, "", "support_agent", start_ns=1, end_ns=10,
        attributes={"openinference.span.kind": "AGENT", "agent.name": "support_agent"},
        scope_name="openinference.instrumentation.openai_agents", status_code=status,
        status_message=message, events=events,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("message", "exc_type", "limit"),
    [
        ("Max turns exceeded: {'max_turns': 4}", None, "Max turns exceeded"),
        ("", "agents.exceptions.MaxTurnsExceeded", "MaxTurnsExceeded"),
        ("Error code: 500", "openai.InternalServerError", None),
    ],
    ids=["message-only", "exception-type", "other-error"],
)
def test_a_declared_limit_error_marks_the_failed_step(
    conventions: ConventionSet, message: str, exc_type: str | None, limit: str | None
) -> None:
    steps = map_trace(build_trace(TRACE, [agent_span(StatusCode.ERROR, message, exc_type)]),
                      conventions).steps  # fmt: skip
    assert [s.status for s in steps] == ["error"]
    assert steps[0].attributes.get("run_limit") == limit


@pytest.mark.parametrize(
    ("source", "limit"),
    [
        ("openinference-openai-agents", "Max turns exceeded"),
        ("openllmetry-openai-agents", "Max turns exceeded"),
        ("google-adk", "LlmCallsLimitExceededError"),
        ("logfire-pydantic-ai", "UsageLimitExceeded"),
    ],
)
def test_a_run_its_limit_error_ended_leaves_the_effort_budget_unjudged(
    source: str, limit: str, conventions: ConventionSet
) -> None:
    path = TRACES / source / "q_turn_limit.otlp.json"
    outcome, message = bounded_effort(path, conventions)
    assert outcome == Outcome.MISSING_EVIDENCE
    assert "at least 4 tool calls" in message and limit in message
    # Without the declaration the error is an ordinary failure: four calls within a budget
    # of five pass, the silent pass the declaration closes.
    bare = ConventionSet(
        files=[f.model_copy(update={"run_limit_errors": []}) for f in conventions.files]
    )
    assert bounded_effort(path, bare)[0] == Outcome.PASS


@pytest.mark.parametrize(
    "source",
    [
        "langgraph-openinference",
        "openlit-langgraph",
        "mlflow-langgraph",
        # AgentExecutor's own text after the fourth search ran: no model read its result.
        "langchain-agents-openinference",
        # AutoGen's summary of the fourth search's result, read by no model call.
        "autogen-openinference",
    ],
)
def test_a_run_ended_in_the_middle_of_its_work_is_stopped_short(
    source: str, conventions: ConventionSet
) -> None:
    why = Evidence(mapped(TRACES / source / "q_turn_limit.otlp.json", conventions)).stopped_short()
    assert why is not None and "middle of its work" in why and "search_docs" in why


@pytest.mark.parametrize(
    ("source", "scenario"),
    [
        ("langgraph-openinference", "a_happy"),
        ("langgraph-openinference", "m_excess_calls"),
        ("openinference-openai-agents", "o_run_error"),
        ("google-adk", "o_run_error"),
        # The last call asks for smolagents' final_answer tool: the answer, not pending work.
        ("smolagents-openinference", "a_happy"),
        ("logfire-pydantic-ai", "a_happy"),
        ("langchain-agents-openinference", "a_happy"),
        ("langchain-agents-openinference", "d_forbidden_tool"),
    ],
)
def test_a_finished_or_otherwise_failed_run_is_not_stopped_short(
    source: str, scenario: str, conventions: ConventionSet
) -> None:
    path = TRACES / source / f"{scenario}.otlp.json"
    assert Evidence(mapped(path, conventions)).stopped_short() is None


def test_every_effort_bound_is_unjudged_on_a_stopped_run(
    tmp_path: Path, conventions: ConventionSet
) -> None:
    """``max_steps`` and ``loop_detected`` count what the limit let through, as
    ``max_tool_calls`` does: a lower bound, never a pass; a budget already exceeded by the
    calls the trace shows still fails."""
    contract_file = tmp_path / "effort.yaml"
    contract_file.write_text(
        "id: effort\nversion: 1\nname: effort\ninvariants:\n"
        "  - {type: max_steps, max: 50, name: steps}\n"
        "  - {type: loop_detected, threshold: 2, name: loops}\n"
        "  - {type: max_tool_calls, max: 2, name: over}\n",
        encoding="utf-8",
    )
    contract = load_contract(contract_file)
    path = TRACES / "openinference-openai-agents" / "q_turn_limit.otlp.json"
    traces = list(read_traces([str(path)], []))
    verdict, _ = grade_trace(traces[0], [contract], conventions)[0]
    got = {r.name: r.outcome for r in verdict.results}
    assert got == {
        "steps": Outcome.MISSING_EVIDENCE,
        "loops": Outcome.MISSING_EVIDENCE,
        "over": Outcome.INVARIANT_FAILURE,
    }


@pytest.mark.parametrize(
    ("source", "prompt"),
    [
        ("smolagents-openinference", "An agent tried to answer a user query but it got stuck"),
        ("crewai-openinference", "Now it's time you MUST give your absolute best final answer"),
    ],
)
def test_a_final_answer_the_framework_forced_at_its_limit_leaves_the_budget_unjudged(
    source: str, prompt: str, conventions: ConventionSet
) -> None:
    """Past its limit the framework raises nothing: it asks the model for a final answer
    itself (``run_limit_prompts``). The request in the last model call's input is the mark
    (for smolagents also the call's place, ``run_limit_call``, which marks it without
    content); without the declarations the run reads as one that answered after four
    searches."""
    path = TRACES / source / "q_turn_limit.otlp.json"
    run = mapped(path, conventions)
    assert [s.attributes.get("run_limit") is not None for s in run.generations()] == [
        False, False, False, False, True,
    ]  # fmt: skip
    outcome, message = bounded_effort(path, conventions)
    assert outcome == Outcome.MISSING_EVIDENCE
    assert "at least 4 tool calls" in message and prompt in message
    bare = ConventionSet(
        files=[
            f.model_copy(
                update={
                    "run_limit_prompts": [],
                    "rules": [r.model_copy(update={"run_limit_call": None}) for r in f.rules],
                }
            )
            for f in conventions.files
        ]
    )
    assert bounded_effort(path, bare)[0] == Outcome.PASS
    # The same frameworks' finished runs hold no such request.
    assert (
        Evidence(mapped(TRACES / source / "a_happy.otlp.json", conventions)).stopped_short() is None
    )


@pytest.mark.parametrize("scenario", ["a_happy", "q_turn_limit"])
def test_a_trace_without_model_calls_cannot_show_the_run_ended_on_its_answer(
    scenario: str, conventions: ConventionSet
) -> None:
    """autogen-core's own spans hold the run and its tool calls only: ``a_happy`` and the run
    ``max_tool_iterations`` stopped after four searches read alike, so the tool count is a
    lower bound in both. The Claude Agent SDK records no model call either, but its query span
    keeps the model's last finish reason (``end_turn``): that run ended on an answer."""
    why = Evidence(
        mapped(TRACES / "autogen-native" / f"{scenario}.otlp.json", conventions)
    ).stopped_short()
    assert why is not None and "records no model call" in why
    for content in ("", ".nocontent"):
        claude = TRACES / "claude-agent-sdk" / f"a_happy{content}.otlp.json"
        assert Evidence(mapped(claude, conventions)).stopped_short() is None
