"""The reference failure budget from the issue, as a test.

Budget ``{max_tool_retries: 1, allow_degraded_answer: true, require_citation: true}`` plus
a schema and grounded citations. The reference run (retrieval degraded, one retry, one
citation, valid schema) passes with one tolerated retry and one tolerated degraded answer;
each failure rule has a run that trips exactly that rule and nothing else.
"""

from __future__ import annotations

import json
from typing import Any

from otel_oracles.grade import grade
from otel_oracles.model.result import Outcome
from otel_oracles.model.step import StepKind, Trajectory
from tests.oracles.trace_builders import by_type, contract, gen, tool, traj

ANSWER_SCHEMA = {
    "type": "object",
    "required": ["answer", "citations"],
    "properties": {"answer": {"type": "string"}, "citations": {"type": "array"}},
}
DISCLOSED = (
    "Note: the policy index was degraded, so this may be incomplete. "
    "Refunds within 30 days [doc-42]."
)


def reference_contract(allow_degraded: bool = True) -> Any:
    return contract(
        budget={
            "max_tool_retries": 1,
            "allow_degraded_answer": allow_degraded,
            "require_citation": True,
        },
        invariants=[
            {"type": "schema_valid", "target": "final_output", "schema": ANSWER_SCHEMA},
            {"type": "citations_grounded", "pattern": r"doc-\d+"},
        ],
    )


def run(
    *,
    failures: int = 1,
    kb_documents: list[dict[str, Any]] | None = None,
    answer: dict[str, Any] | None = None,
) -> Trajectory:
    steps = [gen(None, tool_calls=["search_docs"])]
    steps += [
        tool(
            "search_docs",
            {"query": "refund"},
            None,
            status="error",
            error_type="SearchBackendError",
        )
        for _ in range(failures)
    ]
    steps.append(tool("search_docs", {"query": "refund"}, {"documents": [{"id": "doc-42"}]}))
    steps.append(
        tool(
            "kb_lookup",
            None,
            None,
            kind=StepKind.RETRIEVAL,
            documents=kb_documents or [],
            query="refund",
        )
    )
    body = answer if answer is not None else {"answer": DISCLOSED, "citations": ["doc-42"]}
    steps.append(gen(json.dumps(body)))
    return traj(*steps)


def outcomes(verdict: Any) -> dict[str, Outcome]:
    return {name: r.outcome for name, r in by_type(verdict).items()}


NON_PASS = {
    Outcome.INVARIANT_FAILURE,
    Outcome.BUDGET_EXHAUSTED,
    Outcome.MISSING_EVIDENCE,
    Outcome.ERROR,
}


def broken(verdict: Any) -> dict[str, Outcome]:
    return {n: o for n, o in outcomes(verdict).items() if o in NON_PASS}


def test_reference_run_passes_with_one_tolerated_retry_and_one_tolerated_degraded_answer() -> None:
    verdict = grade(reference_contract(), run())
    assert verdict.passed, [r.message for r in verdict.results]
    assert outcomes(verdict) == {
        "tool_retries": Outcome.TOLERATED,
        "degraded_answer": Outcome.TOLERATED,
        "citation_required": Outcome.PASS,
        "schema_valid": Outcome.PASS,
        "citations_grounded": Outcome.PASS,
    }
    c = verdict.counts
    assert (c.invariant_failures, c.tolerated_failures, c.budget_exhausted, c.missing_evidence) == (
        0,
        2,
        0,
        0,
    )
    retry = by_type(verdict)["tool_retries"]
    assert retry.used == 1 and retry.budget == 1 and retry.span_ids == ["s2"]
    assert by_type(verdict)["degraded_answer"].why == "budget: allow_degraded_answer true"


def test_invalid_schema_trips_only_schema_valid() -> None:
    verdict = grade(reference_contract(), run(answer={"answer": DISCLOSED}))
    assert broken(verdict) == {"schema_valid": Outcome.INVARIANT_FAILURE}
    assert "'citations' is a required property" in by_type(verdict)["schema_valid"].message


def test_retries_over_budget_trip_only_tool_retries() -> None:
    verdict = grade(reference_contract(), run(failures=2))
    assert broken(verdict) == {"tool_retries": Outcome.BUDGET_EXHAUSTED}
    assert by_type(verdict)["tool_retries"].message.startswith("2 retries")


def test_degraded_answer_when_not_allowed_trips_only_degraded_answer() -> None:
    verdict = grade(reference_contract(allow_degraded=False), run())
    assert broken(verdict) == {"degraded_answer": Outcome.BUDGET_EXHAUSTED}
    assert "kb_lookup" in by_type(verdict)["degraded_answer"].message


def test_missing_citation_trips_only_citation_required() -> None:
    uncited = {
        "answer": "Note: the policy index was degraded. Refunds within 30 days.",
        "citations": [],
    }
    verdict = grade(reference_contract(), run(answer=uncited))
    assert broken(verdict) == {"citation_required": Outcome.INVARIANT_FAILURE}


def test_uncertainty_not_tied_to_degraded_evidence_trips_only_degraded_answer() -> None:
    unsure = {
        "answer": "I do not know the exact window; refunds within 30 days [doc-42].",
        "citations": ["doc-42"],
    }
    verdict = grade(reference_contract(), run(kb_documents=[{"id": "doc-7"}], answer=unsure))
    assert broken(verdict) == {"degraded_answer": Outcome.INVARIANT_FAILURE}
    assert (
        "uncertainty not tied to degraded evidence" in by_type(verdict)["degraded_answer"].message
    )
    assert verdict.counts.tolerated_failures == 1  # the retry is still a tolerated exception


def test_budget_shorthand_expands_into_documented_tolerances() -> None:
    c = reference_contract()
    assert [(s.type, s.params.get("max"), s.why) for s in c.tolerances] == [
        ("tool_retries", 1, "budget: max_tool_retries 1"),
        ("degraded_answer", None, "budget: allow_degraded_answer true"),
    ]
    assert [s.type for s in c.invariants] == [
        "schema_valid",
        "citations_grounded",
        "citation_required",
    ]
