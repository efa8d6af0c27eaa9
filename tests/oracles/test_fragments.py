"""A trace holding one model call of a longer run (its root span is the model call: nothing
encloses the run) cannot show what the run did: when that call requested tools nothing in the
trace runs, or its input was not captured, checks about the whole run never pass there and
tool-name checks are missing evidence. A trace with a root of its own holds the whole run:
the same unanswered request is where the run stopped, and the checks stay judged; a request
nothing answered shows no call that ran, so ``tool_called`` cannot count it (missing
evidence, never a pass)."""

from __future__ import annotations

from typing import Any

from otel_oracles.grade.evidence import fragment_gap
from otel_oracles.model.result import Outcome
from otel_oracles.model.step import Trajectory
from tests.oracles.trace_builders import check, gen, tool, traj

USER = [{"role": "user", "parts": [{"type": "text", "content": "q"}]}]
NOT_CALLED = {"type": "tool_not_called", "tool": "delete_records"}
STEPS = {"type": "max_steps", "max": 10, "kinds": ["generation"]}
"""Counts model calls only: needs no tool names, so a fragment reaches the check itself."""
CALLED = {"type": "tool_called", "tool": "search_docs"}


def _requesting(*, root: str | None, **gen_kw: Any) -> Trajectory:
    """A model call (span ``s0``) asking for ``search_docs``, the call synthesized from its
    output, and nothing that runs it."""
    gen_kw.setdefault("input_messages", USER)
    return traj(
        gen(tool_calls=["search_docs"], **gen_kw),
        tool("search_docs", synthesized=True),
        root_span_id=root,
    )


def test_a_root_model_call_whose_requested_tools_never_run_is_a_fragment() -> None:
    fragment = _requesting(root="s0")
    assert "no step of the trace runs or answers" in (fragment_gap(fragment) or "")
    for spec in (NOT_CALLED, STEPS, CALLED):
        result = check(spec, fragment)
        assert result.outcome == Outcome.MISSING_EVIDENCE, spec
        assert "only part of the run" in result.message


def test_the_same_request_under_a_root_of_its_own_is_where_the_run_stopped() -> None:
    whole = _requesting(root="app-root")
    assert fragment_gap(whole) is None
    for spec in (NOT_CALLED, STEPS):
        assert check(spec, whole).outcome == Outcome.PASS, spec
    asked = check(CALLED, whole)
    assert asked.outcome == Outcome.MISSING_EVIDENCE
    assert "nothing shows that they ran" in asked.message


def test_a_request_whose_result_the_next_call_holds_is_a_call_that_ran() -> None:
    answered = traj(
        gen(tool_calls=["search_docs"], input_messages=USER),
        tool("search_docs", synthesized=True, result="[doc-42]"),
        root_span_id="app-root",
    )
    assert check(CALLED, answered).outcome == Outcome.PASS
    failed = traj(
        gen(tool_calls=["search_docs"], input_messages=USER),
        tool("search_docs", synthesized=True, status="error", error_message="timed out"),
        root_span_id="app-root",
    )
    assert check(CALLED, failed).outcome == Outcome.PASS  # failed, but made
    hidden = traj(
        gen(tool_calls=["search_docs"], input_messages=USER),
        tool("search_docs", synthesized=True, redacted=("result",)),
        root_span_id="app-root",
    )
    assert check(CALLED, hidden).outcome == Outcome.MISSING_EVIDENCE  # a refusal reads alike
    at_most = {**CALLED, "min": 0, "max": 0}
    assert check(at_most, hidden).outcome == Outcome.INVARIANT_FAILURE  # a request counts


def test_a_root_model_call_whose_request_a_tool_span_runs_is_no_fragment() -> None:
    ran = traj(
        gen(tool_calls=["search_docs"], input_messages=USER),
        tool("search_docs", status="ok"),
        root_span_id="s0",
    )
    assert fragment_gap(ran) is None
    assert check(NOT_CALLED, ran).outcome == Outcome.PASS


def test_a_root_model_call_with_hidden_input_may_continue_a_run() -> None:
    answered = traj(gen("done", input_messages=None), root_span_id="s0")
    assert "input was not captured" in (fragment_gap(answered) or "")
    assert check(NOT_CALLED, answered).outcome == Outcome.MISSING_EVIDENCE
    assert check(STEPS, answered).outcome == Outcome.MISSING_EVIDENCE
    shown = traj(gen("done", input_messages=USER), root_span_id="s0")
    assert fragment_gap(shown) is None, "a one-call run from the user's prompt is whole"
    assert check(NOT_CALLED, shown).outcome == Outcome.PASS


def test_results_handed_back_for_calls_the_trace_did_not_make_mark_a_fragment() -> None:
    history = [
        *USER,
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "x"}]},
    ]
    later = traj(gen("done", input_messages=history), root_span_id="s0")
    assert "refers to 1 tool call(s) not in this trace (c1)" in (fragment_gap(later) or "")
    assert check(STEPS, later).outcome == Outcome.MISSING_EVIDENCE


def test_lenient_coverage_does_not_relax_a_fragment() -> None:
    fragment = _requesting(root="s0")
    lenient = check({**STEPS, "coverage": "lenient"}, fragment)
    assert lenient.outcome == Outcome.MISSING_EVIDENCE
    assert "(in this trace: 1 steps (at most 10))" in lenient.message


def test_a_count_over_its_bound_in_a_fragment_stays_a_failure() -> None:
    """The run holds at least the fragment's steps: too many there is too many."""
    fragment = _requesting(root="s0")
    assert check({**STEPS, "max": 0}, fragment).outcome == Outcome.INVARIANT_FAILURE
