"""Latency, tokens, the contract-level evidence oracle and the budget: shorthand."""

from __future__ import annotations

import pytest

from otel_oracles.errors import ContractError
from otel_oracles.model.result import Outcome
from otel_oracles.model.step import StepKind
from tests.oracles.trace_builders import MS, check, contract, gen, tool, traj


def test_latency_whole_trace_per_tool_and_per_generation() -> None:
    t = traj(
        gen(None, tool_calls=["search_docs"], start_ns=0, end_ns=100 * MS),
        tool("search_docs", {}, "r", start_ns=100 * MS, end_ns=900 * MS),
        gen("done", start_ns=900 * MS, end_ns=1000 * MS),
    )
    assert check({"type": "latency", "max_ms": 1000}, t).outcome == Outcome.PASS
    whole = check({"type": "latency", "max_ms": 999}, t)
    assert whole.outcome == Outcome.INVARIANT_FAILURE and "1000.0 ms" in whole.message
    slow = check({"type": "latency", "scope": "tool", "max_ms": 500}, t)
    assert slow.outcome == Outcome.INVARIANT_FAILURE and slow.span_ids == ["s1"]
    tolerated = check(
        {"type": "latency", "scope": "tool", "max_ms": 500, "max": 1}, t, layer="tolerances"
    )
    assert tolerated.outcome == Outcome.TOLERATED
    assert (
        check({"type": "latency", "scope": "generation", "max_ms": 100}, t).outcome == Outcome.PASS
    )


def test_latency_per_tool_is_missing_for_calls_seen_only_in_messages() -> None:
    t = traj(
        gen(None, tool_calls=["a"]),
        tool("a", {}, "r", synthesized=True, start_ns=None, end_ns=None),
        gen("x"),
    )
    assert (
        check({"type": "latency", "scope": "tool", "max_ms": 5}, t).outcome
        == Outcome.MISSING_EVIDENCE
    )


def test_tokens_sum_leaf_model_calls_only() -> None:
    t = traj(
        gen(None, tokens=(1000, 500), start_ns=0, end_ns=100 * MS),  # wrapper: contains the next
        gen("x", tokens=(600, 300), start_ns=10 * MS, end_ns=50 * MS),
        gen("y", tokens=(400, 200), start_ns=60 * MS, end_ns=90 * MS),
        timed=False,
    )
    res = check({"type": "tokens", "max_total_tokens": 1500}, t)
    assert res.outcome == Outcome.PASS and res.details["total_tokens"] == 1500, res.message
    over = check({"type": "tokens", "max_output_tokens": 499}, t)
    assert over.outcome == Outcome.INVARIANT_FAILURE and "output 500 > 499" in over.message


def test_tokens_missing_when_usage_not_recorded() -> None:
    t = traj(gen("x", tokens=(None, None)))
    assert check({"type": "tokens", "max_total_tokens": 5}, t).outcome == Outcome.MISSING_EVIDENCE
    with pytest.raises(ContractError, match="at least one of"):
        contract(invariants=[{"type": "tokens"}])


def test_evidence_entries_short_forms() -> None:
    c = contract(
        evidence=[
            "tool_arguments",
            {"field": "tool_results", "tool": "search_*"},
            {"attribute": "retrieval.snapshot_id"},
            {"type": "output_messages"},
        ]
    )
    assert [(s.type, s.params) for s in c.evidence] == [
        ("evidence", {"field": "tool_arguments", "attribute": None, "tool": None}),
        ("evidence", {"field": "tool_results", "attribute": None, "tool": "search_*"}),
        ("evidence", {"field": None, "attribute": "retrieval.snapshot_id", "tool": None}),
        ("evidence", {"field": "output_messages", "attribute": None, "tool": None}),
    ]
    with pytest.raises(ContractError, match=r"evidence\[0\].*unknown evidence 'tool_args'"):
        contract(evidence=["tool_args"])


def test_evidence_attribute_present_or_missing() -> None:
    with_snapshot = traj(
        tool(
            "kb",
            None,
            None,
            kind=StepKind.RETRIEVAL,
            documents=[],
            attributes={"retrieval.snapshot_id": "s-9"},
        )
    )
    spec = {"attribute": "retrieval.snapshot_id"}
    assert check(spec, with_snapshot, layer="evidence").outcome == Outcome.PASS
    res = check(spec, traj(gen("x")), layer="evidence")
    assert res.outcome == Outcome.MISSING_EVIDENCE and "retrieval.snapshot_id" in res.message
    redacted = traj(gen("x"), root_attributes={"retrieval.snapshot_id": "[REDACTED]"})
    assert check(spec, redacted, layer="evidence").outcome == Outcome.MISSING_EVIDENCE


def test_evidence_field_names_where_it_is_missing() -> None:
    t = traj(tool("search_docs", {"q": 1}, "r"), tool("search_docs", None, "r"))
    res = check("tool_arguments", t, layer="evidence")
    assert res.outcome == Outcome.MISSING_EVIDENCE
    assert "1 of 2 tool call(s): step 1 (search_docs, span s1)" in res.message
    assert check("output_messages", traj(gen("x")), layer="evidence").outcome == Outcome.PASS


def test_missing_evidence_can_be_downgraded_to_warn() -> None:
    c = contract(on_missing_evidence="warn", evidence=["token_usage"])
    from otel_oracles.grade import grade

    verdict = grade(c, traj(gen("x", tokens=(None, 1))))
    assert verdict.results[0].outcome == Outcome.MISSING_EVIDENCE
    assert verdict.passed and verdict.counts.missing_evidence == 1


@pytest.mark.parametrize(
    ("budget", "message"),
    [
        ({"max_retries": 1}, r"budget\.max_retries: unknown budget key"),
        ({"max_tool_retries": "one"}, r"budget\.max_tool_retries: expected int"),
        ({"allow_degraded_answer": 1}, r"budget\.allow_degraded_answer: expected bool"),
        ({"citation_pattern": "x"}, r"only meaningful with require_citation"),
    ],
)
def test_budget_shorthand_errors_name_the_key(budget: dict, message: str) -> None:
    with pytest.raises(ContractError, match=message):
        contract(budget=budget)


def test_budget_shorthand_keeps_the_contracts_own_layers() -> None:
    c = contract(
        tolerances=[{"type": "tool_errors", "max": 2, "why": "flaky backend"}],
        budget={
            "degraded_disclosure": "(?i)partial",
            "require_citation": True,
            "citation_pattern": "KB-\\d+",
        },
    )
    assert [s.type for s in c.tolerances] == ["tool_errors", "degraded_answer"]
    assert c.tolerances[1].params["must_disclose"] == "(?i)partial"
    assert c.invariants[0].params["pattern"] == "KB-\\d+"
