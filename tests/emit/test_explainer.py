"""``Explainer``: the explanation texts a report writer remembers are its own and bounded,
and equal to what ``explain`` renders."""

from __future__ import annotations

from otel_oracles.emit import Explainer, explain
from otel_oracles.model.result import OracleResult, Outcome


def _failed(name: str, calls: int) -> OracleResult:
    return OracleResult(
        oracle_type="tool_retries",
        name=name,
        layer="tolerance",
        outcome=Outcome.BUDGET_EXHAUSTED,
        passed=False,
        message=f"{calls} retries (search_docs x{calls}), budget 1; user alice@example.com",
        details={"retries": calls, "tool": "search_docs"},
        step_indexes=[1, 2],
        contract_id="c",
    )


def test_texts_equal_explain_and_are_remembered_per_explainer() -> None:
    explainer = Explainer("template")
    results = [_failed(f"check-{i % 3}", calls=2 + i % 2) for i in range(12)]
    texts = [explainer(r) for r in results]
    assert texts == [explain(r, "template") for r in results]
    assert "alice@example.com" not in "".join(texts)
    # Six distinct (name, details) keys: the explainer kept exactly those.
    assert len(explainer) == 6
    # A second explainer starts empty: nothing is shared through the module.
    assert len(Explainer("template")) == 0


def test_the_oldest_text_goes_first_when_full() -> None:
    explainer = Explainer("template", max_texts=2)
    first, second, third = (_failed(f"c{i}", 2) for i in range(3))
    for r in (first, second, third):
        explainer(r)
    assert len(explainer) == 2
    assert not explainer.remembers(first)
    assert explainer.remembers(second) and explainer.remembers(third)


def test_full_mode_is_the_message_and_is_not_remembered() -> None:
    explainer = Explainer("full")
    result = _failed("c", 2)
    assert explainer(result) == explain(result, "full")
    assert "alice@example.com" in explainer(result)
    assert len(explainer) == 0
