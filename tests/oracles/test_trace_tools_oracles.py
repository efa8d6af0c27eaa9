"""Tool oracles on hand-built trajectories: counts, argument matching, sequences, retries,
loops, errors, and the span ids each result points at."""

from __future__ import annotations

import pytest

from otel_oracles.errors import ContractError
from otel_oracles.model.result import Outcome
from tests.oracles.trace_builders import MS, check, contract, gen, tool, traj

SEARCH_OK = {"documents": [{"id": "doc-42"}]}


def test_tool_called_counts_only_calls_whose_arguments_match() -> None:
    t = traj(tool("search_docs", {"query": "refund window", "k": 3}, SEARCH_OK))
    ok = check({"type": "tool_called", "tool": "search_*", "args": {"k": 3}}, t)
    assert ok.outcome == Outcome.PASS, ok.message
    assert ok.span_ids == ["s0"]
    bad = check(
        {"type": "tool_called", "tool": "search_docs", "args_regex": {"query": "^billing"}}, t
    )
    assert bad.outcome == Outcome.INVARIANT_FAILURE
    assert "does not match /^billing/" in bad.message


def test_tool_called_exact_args_and_json_schema() -> None:
    t = traj(tool("search_docs", {"query": "x", "k": 3}, SEARCH_OK))
    exact = {
        "type": "tool_called",
        "tool": "search_docs",
        "args": {"query": "x"},
        "args_mode": "exact",
    }
    assert check(exact, t).outcome == Outcome.INVARIANT_FAILURE
    schema = {"type": "object", "required": ["query"], "properties": {"k": {"maximum": 2}}}
    res = check({"type": "tool_called", "tool": "search_docs", "args_schema": schema}, t)
    assert res.outcome == Outcome.INVARIANT_FAILURE
    assert "k" in res.message and "maximum" in res.message


def test_tool_called_max_points_at_the_extra_calls() -> None:
    t = traj(tool("search_docs", {}, SEARCH_OK), tool("search_docs", {}, SEARCH_OK))
    res = check({"type": "tool_called", "tool": "search_docs", "max": 1}, t)
    assert res.outcome == Outcome.INVARIANT_FAILURE
    assert res.span_ids == ["s1"]


def test_tool_called_needs_arguments_when_it_matches_them() -> None:
    t = traj(tool("search_docs", None, SEARCH_OK))
    res = check({"type": "tool_called", "tool": "search_docs", "args": {"query": "x"}}, t)
    assert res.outcome == Outcome.MISSING_EVIDENCE
    assert "tool arguments not captured" in res.message and "span s0" in res.message
    plain = check({"type": "tool_called", "tool": "search_docs"}, t)
    assert plain.outcome == Outcome.PASS


def test_tool_not_called_matches_globs_and_names_the_offending_span() -> None:
    t = traj(
        tool("search_docs", {}, SEARCH_OK), tool("delete_records", {"table": "x"}, {"deleted": 1})
    )
    res = check({"type": "tool_not_called", "tool": ["drop_*", "delete_*"]}, t)
    assert res.outcome == Outcome.INVARIANT_FAILURE
    assert res.span_ids == ["s1"] and "delete_records" in res.message


def test_tool_not_called_is_missing_evidence_when_raw_client_hid_the_tool_names() -> None:
    # No tool spans, model asked for tools, output messages not captured: nobody can say
    # which tool ran, so "not called" cannot be a pass.
    t = traj(
        gen(None, finish=["tool_calls"], output_messages=None),
        gen(None, finish=["stop"], output_messages=None),
    )
    res = check({"type": "tool_not_called", "tool": "delete_records"}, t)
    assert res.outcome == Outcome.MISSING_EVIDENCE
    assert "tool names unknown" in res.message and "span s0" in res.message


def test_tool_not_called_passes_on_raw_client_trace_whose_messages_show_the_tools() -> None:
    t = traj(
        gen(None, tool_calls=["search_docs"]),
        tool("search_docs", {"query": "x"}, SEARCH_OK, synthesized=True),
        gen("answer [doc-42]"),
    )
    assert check({"type": "tool_not_called", "tool": "delete_records"}, t).outcome == Outcome.PASS


def test_tool_not_called_as_tolerance_counts_the_calls_within_max() -> None:
    t = traj(tool("escalate", {}, "ok"))
    res = check({"type": "tool_not_called", "tool": "escalate", "max": 1}, t, layer="tolerances")
    assert res.outcome == Outcome.TOLERATED and res.used == 1 and res.budget == 1


@pytest.mark.parametrize(
    ("mode", "actual", "expected_outcome"),
    [
        ("exact", ["a", "b", "c"], Outcome.PASS),
        ("exact", ["a", "c", "b"], Outcome.INVARIANT_FAILURE),
        ("in_order", ["a", "x", "b", "y", "c"], Outcome.PASS),
        ("in_order", ["a", "c", "b"], Outcome.INVARIANT_FAILURE),
        ("any_order", ["c", "a", "b"], Outcome.PASS),
        ("any_order", ["c", "a", "b", "b"], Outcome.INVARIANT_FAILURE),
        ("superset", ["c", "x", "a", "b"], Outcome.PASS),
        ("superset", ["c", "a"], Outcome.INVARIANT_FAILURE),
        ("subset", ["c", "a"], Outcome.PASS),
        ("subset", ["c", "a", "x"], Outcome.INVARIANT_FAILURE),
    ],
)
def test_tool_sequence_modes(mode: str, actual: list[str], expected_outcome: Outcome) -> None:
    t = traj(*(tool(n, {}, "ok") for n in actual))
    res = check({"type": "tool_sequence", "mode": mode, "expected": ["a", "b", "c"]}, t)
    assert res.outcome == expected_outcome, res.message


def test_tool_sequence_assignment_is_optimal_not_greedy() -> None:
    # Expected: any search, then a search for "billing". Greedy first-match would give the
    # billing call to the glob item and leave the specific item unmatched.
    t = traj(
        tool("search_docs", {"query": "billing"}, "r"), tool("search_web", {"query": "x"}, "r")
    )
    spec = {
        "type": "tool_sequence",
        "mode": "any_order",
        "expected": ["search_*", {"tool": "search_docs", "args": {"query": "billing"}}],
    }
    res = check(spec, t)
    assert res.outcome == Outcome.PASS, res.message


def test_tool_sequence_failure_has_a_structured_diff() -> None:
    t = traj(tool("search_docs", {"query": "a"}, "r"), tool("send_email", {}, "ok"))
    spec = {
        "type": "tool_sequence",
        "mode": "exact",
        "expected": [{"tool": "search_docs", "args": {"query": "b"}}, "summarize"],
    }
    res = check(spec, t)
    assert res.outcome == Outcome.INVARIANT_FAILURE
    ops = [d["op"] for d in res.details["diff"]]
    assert ops == ["args_mismatch", "missing", "unexpected"], res.details["diff"]
    assert "~ search_docs" in res.message and "- summarize" in res.message and "+" in res.message
    assert set(res.span_ids) == {"s0", "s1"}


def test_tool_sequence_ignore_drops_plumbing_calls() -> None:
    t = traj(tool("transfer_to_research", {}, "ok"), tool("search_docs", {}, "r"))
    spec = {
        "type": "tool_sequence",
        "mode": "exact",
        "expected": ["search_docs"],
        "ignore": ["transfer_to_*"],
    }
    assert check(spec, t).outcome == Outcome.PASS


def test_tool_retries_counts_calls_after_a_failed_call_in_the_same_agent() -> None:
    t = traj(
        tool("search_docs", {"q": 1}, None, status="error", error_type="SearchBackendError"),
        tool("search_docs", {"q": 1}, SEARCH_OK),
        tool("search_docs", {"q": 2}, SEARCH_OK),  # after a success: not a retry
        tool("search_docs", {"q": 1}, SEARCH_OK, agent="research"),  # other agent
    )
    res = check({"type": "tool_retries", "max": 1}, t, layer="tolerances")
    assert res.outcome == Outcome.TOLERATED and res.used == 1, res.message
    assert res.span_ids == ["s1"]
    assert (
        check({"type": "tool_retries", "max": 0}, t, layer="tolerances").outcome
        == Outcome.BUDGET_EXHAUSTED
    )


def test_tool_retries_a_call_that_ran_beside_the_failed_one_repeats_nothing() -> None:
    """Two searches asked for in one turn run side by side: the second started before the
    first failed, so it is no retry of it (nothing was known to have failed yet). A search
    started after both ended is one; without times the order of the steps decides."""
    failed = {"status": "error", "error_type": "SearchBackendError"}
    side_by_side = traj(
        tool("search_docs", {"q": 1}, None, start_ns=0, end_ns=8 * MS, **failed),
        tool("search_docs", {"q": 2}, None, start_ns=1 * MS, end_ns=9 * MS, **failed),
    )
    res = check({"type": "tool_retries", "max": 0}, side_by_side, layer="tolerances")
    assert res.outcome == Outcome.PASS and res.used == 0, res.message
    then_again = traj(
        *[dict(s.model_dump(exclude={"index", "source"})) for s in side_by_side.steps],
        tool("search_docs", {"q": 1}, SEARCH_OK, start_ns=20 * MS, end_ns=25 * MS),
    )
    res = check({"type": "tool_retries", "max": 0}, then_again, layer="tolerances")
    assert res.outcome == Outcome.BUDGET_EXHAUSTED and res.used == 1, res.message
    assert res.span_ids == ["s2"]
    untimed = traj(
        tool("search_docs", {"q": 1}, None, **failed),
        tool("search_docs", {"q": 2}, None, **failed),
        timed=False,
    )
    res = check({"type": "tool_retries", "max": 0}, untimed, layer="tolerances")
    assert res.outcome == Outcome.BUDGET_EXHAUSTED and res.used == 1, res.message


@pytest.mark.parametrize(
    "failed",
    [
        tool("search_docs", {}, None, status="error"),
        tool("search_docs", {}, None, error_type="TimeoutError"),
        tool("search_docs", {}, None, error_message="boom"),
        tool("search_docs", {}, '{"error": "SearchBackendError: timed out"}', synthesized=True),
    ],
    ids=["status", "error_type", "exception", "error_result"],
)
def test_tool_retries_recognises_every_failure_signal(failed: dict) -> None:
    t = traj(failed, tool("search_docs", {}, SEARCH_OK, synthesized=failed["synthesized"]))
    res = check({"type": "tool_retries", "max": 0}, t)
    assert res.outcome == Outcome.INVARIANT_FAILURE, res.message
    assert res.used == 1


def test_tool_retries_custom_error_pattern() -> None:
    t = traj(tool("search_docs", {}, "FAILED: upstream"), tool("search_docs", {}, SEARCH_OK))
    assert check({"type": "tool_retries"}, t).outcome == Outcome.PASS
    res = check({"type": "tool_retries", "error_pattern": "^FAILED"}, t)
    assert res.outcome == Outcome.INVARIANT_FAILURE


def test_tool_retries_per_tool_budget() -> None:
    t = traj(
        tool("a", {}, None, status="error"),
        tool("a", {}, None, status="error"),
        tool("a", {}, "ok"),
    )
    res = check({"type": "tool_retries", "max": 5, "max_per_tool": 1}, t, layer="tolerances")
    assert res.outcome == Outcome.BUDGET_EXHAUSTED and "per-tool" in res.message


def test_tool_retries_missing_when_a_synthesized_call_has_no_result() -> None:
    t = traj(
        gen(None, tool_calls=["search_docs"]),
        tool("search_docs", {}, None, synthesized=True),
        gen("x"),
    )
    res = check({"type": "tool_retries", "max": 1}, t)
    assert res.outcome == Outcome.MISSING_EVIDENCE and "tool outcomes unknown" in res.message


def test_loop_detected_uses_normalized_arguments() -> None:
    # The run's closing answer: without any model call nothing shows the run ended on it, and
    # a count of its calls is a lower bound (``stopped_short``), never a pass.
    t = traj(
        tool("search_docs", {"query": "Refund  window", "k": 3}, "r"),
        tool("search_docs", {"k": 3, "query": "refund window"}, "r"),
        tool("search_docs", {"query": "refund window ", "k": 3}, "r"),
        gen("The refund window is 30 days."),
    )
    res = check({"type": "loop_detected", "threshold": 3}, t)
    assert res.outcome == Outcome.INVARIANT_FAILURE and res.span_ids == ["s0", "s1", "s2"]
    assert check({"type": "loop_detected", "threshold": 4}, t).outcome == Outcome.PASS


def test_tool_errors_budget() -> None:
    t = traj(tool("a", {}, None, status="error"), tool("b", {}, "ok"))
    assert (
        check({"type": "tool_errors", "max": 1}, t, layer="tolerances").outcome == Outcome.TOLERATED
    )
    res = check({"type": "tool_errors"}, t)
    assert res.outcome == Outcome.INVARIANT_FAILURE and res.span_ids == ["s0"]


def test_max_tool_calls_and_max_steps() -> None:
    t = traj(gen(None, tool_calls=["a"]), tool("a", {}, "ok"), tool("a", {}, "ok"), gen("done"))
    assert check({"type": "max_tool_calls", "max": 2}, t).outcome == Outcome.PASS
    res = check({"type": "max_tool_calls", "max": 1}, t)
    assert res.outcome == Outcome.INVARIANT_FAILURE and res.span_ids == ["s2"]
    assert check({"type": "max_steps", "max": 4}, t).outcome == Outcome.PASS
    assert (
        check({"type": "max_steps", "max": 1, "kinds": ["generation"]}, t).outcome
        == Outcome.INVARIANT_FAILURE
    )


def test_bad_params_are_contract_errors_naming_the_field() -> None:
    with pytest.raises(
        ContractError, match=r"invariants\[0\]\.args_regex\.query: .*invalid regular expression"
    ):
        contract(invariants=[{"type": "tool_called", "tool": "x", "args_regex": {"query": "("}}])
    with pytest.raises(ContractError, match=r"mode"):
        contract(invariants=[{"type": "tool_sequence", "expected": ["a"], "mode": "sorted"}])
    with pytest.raises(ContractError, match=r"invalid JSON Schema"):
        contract(invariants=[{"type": "tool_called", "tool": "x", "args_schema": {"type": 5}}])


def test_tool_oracles_read_agentbench_steps_written_flat() -> None:
    from otel_oracles.model.step import Trajectory

    t = Trajectory.from_agentbench(
        {
            "steps": [
                {"tool": "write_file", "path": "a.py", "content": "x"},
                {"tool": "write_file", "path": "b.py", "content": "y"},
                {"tool": "run_command", "command": "pytest"},
            ]
        }
    )
    called = check({"type": "tool_called", "tool": "write_file", "args": {"path": "b.py"}}, t)
    assert called.outcome == Outcome.PASS, called.message
    assert check({"type": "loop_detected", "threshold": 2}, t).outcome == Outcome.PASS
    seq = {
        "type": "tool_sequence",
        "mode": "exact",
        "expected": ["write_file", "write_file", "run_command"],
    }
    assert check(seq, t).outcome == Outcome.PASS
