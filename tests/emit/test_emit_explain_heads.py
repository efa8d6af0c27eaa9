"""The privacy filter in the core keeps the heads of its template explanations (the outcome's
template with the check's name and budget) by the name's address, the outcome and the
numbers, and the JSON report's messages of passes without steps with them. A kept head must
be the one its own result gives: every input the head reads is part of the key, a name that
is not an identifier (whose head reads the check's type) is not kept, and a name built where
a freed one stood is shown as itself. The expected texts are spelled here from the templates'
definition, not asked of the filter."""

from __future__ import annotations

import json

from otel_oracles.emit import SHOWN_FILTER, explain
from otel_oracles.model.result import OracleResult, Outcome
from otel_oracles.report._json import _VERDICT_JSON
from tests.emit.conftest import SECRET_KEY
from tests.native.verdict_cases import verdict_of

_WORDS = {
    Outcome.PASS: "holds",
    Outcome.TOLERATED: "tolerated",
    Outcome.INVARIANT_FAILURE: "violated",
    Outcome.BUDGET_EXHAUSTED: "budget exhausted",
}
"""Each outcome's template after ``{name}: ``; tolerated and budget exhausted show the budget."""


def _spelled(name: str, outcome: Outcome, used: int, budget: int | None) -> str:
    """The explanation of a result without steps or details, by the templates' definition."""
    text = f"{name}: {_WORDS[outcome]}"
    if outcome in (Outcome.TOLERATED, Outcome.BUDGET_EXHAUSTED) and (budget is not None or used):
        text += f" (used {used} of {'?' if budget is None else budget})"
    return text


def _result(
    name: str, outcome: Outcome, used: int = 0, budget: int | None = None, **more: object
) -> OracleResult:
    return OracleResult(
        oracle_type="tool_retries",
        name=name,
        outcome=outcome,
        passed=outcome is Outcome.PASS,
        message="m",
        used=used,
        budget=budget,
        contract_id="c",
        **more,  # type: ignore[arg-type]
    )


def _messages(results: list[OracleResult]) -> list[str]:
    """The messages the JSON report's writer shows of ``results``."""
    written = json.loads(_VERDICT_JSON.write(verdict_of(results), SHOWN_FILTER))
    return [r["message"] for r in written["results"]]


def test_results_of_one_name_get_the_head_of_their_outcome_and_numbers() -> None:
    name = "".join(["heads-", "check"])  # one object for every result
    # Enough heads of one name that some share a slot of the filter's table.
    numbers = [(u, b) for u in (*range(12), 2**40, -1) for b in (None, *range(9))]
    results = [_result(name, o, u, b) for o in _WORDS for u, b in numbers]
    expected = [_spelled(name, r.outcome, r.used, r.budget) for r in results]
    for _ in range(2):  # the second round reads the kept heads
        assert [explain(r) for r in results] == expected
        assert _messages(results) == [e.removeprefix(f"{name}: ") for e in expected]


def test_a_pass_with_steps_is_not_shown_as_the_bare_pass_of_its_name() -> None:
    name = "".join(["stepped-", "check"])
    results = [_result(name, Outcome.PASS), _result(name, Outcome.PASS, step_indexes=[3, 5])]
    for _ in range(2):
        assert _messages(results) == ["holds", "holds; steps=3,5"]


def test_a_name_that_is_not_an_identifier_is_shown_by_each_result_s_type() -> None:
    name = "".join([SECRET_KEY])
    results = [
        _result(name, Outcome.PASS),
        _result(name, Outcome.PASS).model_copy(update={"oracle_type": "latency"}),
    ]
    for _ in range(2):
        assert [explain(r) for r in results] == ["tool_retries: holds", "latency: holds"]


def test_a_name_built_in_the_place_of_a_freed_one_is_shown_as_itself() -> None:
    """Without the filter holding the names it keeps, these 300 names take a handful of
    addresses."""
    for i in range(300):
        name = "".join(["freed-", str(i)])
        outcome = Outcome.TOLERATED if i % 2 else Outcome.PASS
        result = _result(name, outcome, used=i % 3, budget=2)
        assert explain(result) == _spelled(name, outcome, i % 3, 2)
        del result, name
