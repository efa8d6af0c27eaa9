"""``tool_sequence`` grades the work the agent did: a final-answer tool call (smolagents'
``final_answer``, pydantic-ai's ``final_result``) is how the answer is delivered, so it is
left out of the actual sequence, unless the contract's ``expected`` names it."""

from __future__ import annotations

from otel_oracles.model.result import Outcome
from otel_oracles.model.step import Trajectory
from tests.oracles.trace_builders import check, gen, tool, traj


def _run(final_answer_tools: tuple[str, ...] = ("final_answer",)) -> Trajectory:
    return traj(
        gen(tool_calls=["search_docs"]),
        tool("search_docs", {"query": "refunds"}, {"documents": ["doc-42"]}),
        gen(tool_calls=["final_answer"]),
        tool("final_answer", {"answer": "30 days [doc-42]."}, "30 days [doc-42]."),
        final_answer_tools=final_answer_tools,
    )


def test_final_answer_call_is_not_part_of_an_exact_sequence() -> None:
    spec = {"type": "tool_sequence", "mode": "exact", "expected": ["search_docs"]}
    result = check(spec, _run())
    assert result.outcome == Outcome.PASS, result.message


def test_final_answer_call_counts_when_expected_names_it() -> None:
    spec = {"type": "tool_sequence", "mode": "exact", "expected": ["search_docs", "final_answer"]}
    assert check(spec, _run()).outcome == Outcome.PASS
    missing = {"type": "tool_sequence", "mode": "exact", "expected": ["final_answer"]}
    assert check(missing, _run()).outcome == Outcome.INVARIANT_FAILURE


def test_an_undeclared_final_answer_tool_is_an_ordinary_call() -> None:
    spec = {"type": "tool_sequence", "mode": "exact", "expected": ["search_docs"]}
    result = check(spec, _run(final_answer_tools=()))
    assert result.outcome == Outcome.INVARIANT_FAILURE
    assert "final_answer" in result.message
