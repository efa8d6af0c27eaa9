"""The final answer is one definition: a final-answer tool's arguments, else model text,
else an agent's output. Every answer check reads it (``grade/evidence.py`` ``final_output``)."""

from __future__ import annotations

from typing import Any

import pytest

from otel_oracles.grade.evidence import Evidence, final_answer_calls, final_output
from otel_oracles.mapping import load_conventions
from otel_oracles.model.result import Outcome
from otel_oracles.model.step import StepKind, Trajectory
from tests.oracles.test_contracts_on_real_traces import contract_named, grade_file, trace_file
from tests.oracles.trace_builders import MS, check, gen, tool, traj

ANSWER_TOOLS = ("final_answer", "final_result", "final_result_*")


def _answer_run(answer_args: dict[str, Any] | None, **kw: Any) -> Trajectory:
    """search_docs returns doc-17 and doc-42; the answer goes out through final_answer while
    the model's own text cites nothing."""
    return traj(
        gen(tool_calls=["search_docs"]),
        tool("search_docs", {"query": "refunds"}, {"documents": ["doc-17", "doc-42"]}),
        gen(tool_calls=["final_answer"]),
        tool("final_answer", answer_args, "delivered"),
        gen("Done."),
        final_answer_tools=kw.pop("final_answer_tools", ANSWER_TOOLS),
        **kw,
    )


def test_fabricated_citation_only_in_final_answer_arguments_fails_citations_grounded() -> None:
    t = _answer_run({"answer": "Refunds take 5 days [doc-99]."})
    result = check({"type": "citations_grounded"}, t)
    assert result.outcome == Outcome.INVARIANT_FAILURE, result.message
    assert "doc-99" in result.message
    assert list(result.span_ids) == ["s3"], "the result points at the final_answer call"


def test_grounded_citation_in_final_answer_arguments_passes() -> None:
    result = check({"type": "citations_grounded"}, _answer_run({"answer": "See [doc-42]."}))
    assert result.outcome == Outcome.PASS, result.message


def test_final_answer_tools_come_from_the_conventions() -> None:
    declared = load_conventions().final_answer_tools()
    assert {"final_answer", "final_result"} <= set(declared), declared
    # Without a declaration the same call is an ordinary tool and the model text is the answer.
    t = _answer_run({"answer": "Refunds take 5 days [doc-99]."}, final_answer_tools=())
    assert check({"type": "citations_grounded"}, t).outcome == Outcome.PASS


def test_qualified_final_answer_tool_name_is_recognised() -> None:
    t = traj(
        tool("search_docs", {"query": "q"}, "doc-17"),
        tool("functions.final_answer", {"answer": "per doc-99"}, None),
        final_answer_tools=ANSWER_TOOLS,
    )
    assert check({"type": "citations_grounded"}, t).outcome == Outcome.INVARIANT_FAILURE


def test_final_answer_result_echo_does_not_ground_its_own_citation() -> None:
    t = traj(
        tool("search_docs", {"query": "q"}, "doc-17"),
        tool("final_answer", {"answer": "per doc-99"}, "per doc-99"),
        final_answer_tools=ANSWER_TOOLS,
    )
    result = check({"type": "citations_grounded"}, t)
    assert result.outcome == Outcome.INVARIANT_FAILURE, result.message


def test_uncaptured_final_answer_arguments_are_missing_evidence_not_model_text() -> None:
    result = check({"type": "citations_grounded"}, _answer_run(None))
    assert result.outcome == Outcome.MISSING_EVIDENCE, result.message
    assert "final-answer tool call" in result.message


def test_every_answer_check_reads_the_final_answer_tool() -> None:
    answer = {"answer": "Search is degraded; I could not find [doc-99]."}
    t = _answer_run(answer)
    outcomes = {
        "final_output": check({"type": "final_output", "must_not_match": "doc-99"}, t),
        "citation_required": check({"type": "citation_required"}, t),
        "degraded_answer": check({"type": "degraded_answer"}, t),
    }
    got = {k: r.outcome for k, r in outcomes.items()}
    assert got == {
        "final_output": Outcome.INVARIANT_FAILURE,
        "citation_required": Outcome.PASS,
        # "degraded" is claimed in the answer, but no dependency degraded
        "degraded_answer": Outcome.INVARIANT_FAILURE,
    }, {k: r.message for k, r in outcomes.items()}


def test_schema_valid_validates_structured_output_tool_arguments() -> None:
    schema = {"type": "object", "required": ["answer", "sources"]}
    good = traj(
        gen(tool_calls=["final_result"]),
        tool("final_result", {"answer": "5 days", "sources": ["doc-42"]}, None),
        final_answer_tools=ANSWER_TOOLS,
    )
    result = check({"type": "schema_valid", "schema": schema}, good)
    assert result.outcome == Outcome.PASS, result.message
    bad = traj(
        gen(tool_calls=["final_result_Answer"]),
        tool("final_result_Answer", {"answer": "5 days"}, None),
        final_answer_tools=ANSWER_TOOLS,
    )
    result = check({"type": "schema_valid", "schema": schema}, bad)
    assert result.outcome == Outcome.INVARIANT_FAILURE, result.message
    assert "sources" in result.message


def test_max_tool_calls_leaves_out_the_final_answer_call_unless_named() -> None:
    """The answer's delivery is no tool work: a run that answers through a tool must not use
    up one more call of its budget than one answering in text (a false fail at the limit)."""
    t = _answer_run({"answer": "See [doc-42]."})
    at_limit = check({"type": "max_tool_calls", "max": 1}, t)
    assert at_limit.outcome == Outcome.PASS, at_limit.message
    assert at_limit.message.startswith("1 tool calls")
    named = check({"type": "max_tool_calls", "max": 0, "tools": ["final_answer"]}, t)
    assert named.outcome == Outcome.INVARIANT_FAILURE, named.message
    undeclared = _answer_run({"answer": "See [doc-42]."}, final_answer_tools=())
    result = check({"type": "max_tool_calls", "max": 1}, undeclared)
    assert result.outcome == Outcome.INVARIANT_FAILURE, "an ordinary tool call still counts"


@pytest.mark.parametrize(
    "source",
    ["smolagents-openinference", "smolagents-codeagent-openinference", "beeai-openinference"],
)
@pytest.mark.parametrize("content", [True, False], ids=["on", "off"])
def test_six_searches_answered_through_final_answer_count_six_tool_calls(
    source: str, content: bool
) -> None:
    """m_excess_calls on smolagents and BeeAI: six searches, then the answer through
    ``final_answer``. Held out, ``max_tool_calls`` counted seven, so a budget of six failed a
    run within it."""
    path = trace_file(source, "m_excess_calls", content)
    contract = contract_named("support-rag")
    budget = next(i for i in contract.invariants if i.name == "bounded-effort")
    for limit, want in ((6, Outcome.PASS), (5, Outcome.INVARIANT_FAILURE)):
        changed = budget.model_copy(update={"params": {**budget.params, "max": limit}})
        invariants = [changed if i is budget else i for i in contract.invariants]
        verdict, _ = grade_file(path, contract.model_copy(update={"invariants": invariants}))[0]
        result = next(r for r in verdict.results if r.name == "bounded-effort")
        assert result.outcome == want, result.message
        assert result.message.startswith("6 tool calls"), result.message


def test_calls_followed_while_open_are_found_as_the_pairwise_definition_finds_them() -> None:
    """The run's last model call (``Evidence.last_generation``, the core's
    ``StepView.last_generation``) is chosen among the calls no other call started strictly
    inside, found by binary search over the sorted starts (a trace of 10,000 model calls
    must not cost 10,000 squared comparisons): the same call as comparing every pair, on
    random timings with ties, equal starts, untimed calls and nested calls."""
    import random

    rng = random.Random(18)
    for _ in range(300):
        steps = []
        for _ in range(rng.randrange(1, 9)):
            start = rng.choice([None, rng.randrange(0, 20)])
            end = None if start is None or rng.random() < 0.1 else start + rng.randrange(0, 8)
            steps.append(gen("x", start_ns=start, end_ns=end))
        t = traj(*steps, timed=False)
        gens = t.generations()
        starts = [g.start_ns for g in gens if g.start_ns is not None]
        pairwise = [
            g
            for g in gens
            if g.start_ns is None
            or g.end_ns is None
            or not any(g.start_ns < s < g.end_ns for s in starts)
        ]
        last = sorted(
            pairwise or gens, key=lambda g: (-1 if g.end_ns is None else g.end_ns, g.index)
        )
        assert Evidence(t).last_generation() is last[-1]


def _state_answer_run(answer: dict[str, Any], requested: dict[str, Any]) -> Trajectory:
    """LangChain's ``create_agent`` tool strategy: the last model call asks for the output
    tool ``SupportAnswer`` (no span runs it, so it is a call seen only in that request), and
    the agent's output state holds the run's ``structured_response`` (``structured_output``)."""
    return traj(
        {"kind": StepKind.AGENT, "agent_name": "support", "status": "ok",
         "start_ns": 0, "end_ns": 100 * MS, "attributes": {"structured_output": answer}},
        gen(tool_calls=["search_docs"]),
        tool("search_docs", {"query": "refunds"}, {"documents": ["doc-17", "doc-42"]},
             status="ok"),
        gen(tool_calls=["SupportAnswer"]),
        tool("SupportAnswer", requested, None, synthesized=True, start_ns=None, end_ns=None),
        timed=False,
    )  # fmt: skip


def test_an_agents_structured_response_is_the_answer_and_its_requested_call_delivers_it() -> None:
    fabricated = {"answer": "Refunds take 45 days [doc-99].", "sources": ["doc-99"]}
    t = _state_answer_run(fabricated, dict(fabricated))
    assert [s.tool for s in final_answer_calls(t)] == ["SupportAnswer"]
    assert final_output(t).value == fabricated
    result = check({"type": "citations_grounded"}, t)
    assert result.outcome == Outcome.INVARIANT_FAILURE, result.message
    assert "doc-99" in result.message
    # The answer's delivery is no work: its unknown outcome leaves no dependency unknown.
    assert check({"type": "max_tool_calls", "max": 1}, t).outcome == Outcome.PASS
    grounded = {"answer": "Refunds take 30 days [doc-42].", "sources": ["doc-42"]}
    result = check({"type": "citations_grounded"}, _state_answer_run(grounded, dict(grounded)))
    assert result.outcome == Outcome.PASS, result.message


def test_a_requested_call_other_than_the_structured_response_stays_work() -> None:
    answer = {"answer": "Refunds take 30 days [doc-42].", "sources": ["doc-42"]}
    t = _state_answer_run(answer, {"answer": "something else"})
    assert final_answer_calls(t) == []
    assert final_output(t).value == answer  # the state's answer still wins over model text
    assert check({"type": "max_tool_calls", "max": 1}, t).outcome != Outcome.PASS
