"""``Explainer``: the explanation texts a report writer remembers are its own and bounded,
and equal to what ``explain`` renders."""

from __future__ import annotations

from otel_oracles.emit import Explainer, explain, shown_fields, shown_message
from otel_oracles.emit._explain import explain_key, scrub_details
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


def _result(name: str, outcome: Outcome, **fields: object) -> OracleResult:
    values: dict[str, object] = {
        "oracle_type": "tool_not_called",
        "name": name,
        "layer": "invariant",
        "outcome": outcome,
        "passed": outcome in (Outcome.PASS, Outcome.TOLERATED),
        "message": "delete_records called with alice@example.com",
        "contract_id": "c",
    }
    values.update(fields)
    return OracleResult.model_validate(values)


SHOWN_CASES = [
    _result("no-delete", Outcome.PASS),
    _result("no-delete", Outcome.PASS, step_indexes=[3]),
    _result("no-delete", Outcome.PASS, step_indexes=list(range(9)), used=2, budget=3),
    _result("no-delete", Outcome.PASS, details={"calls": 0, "tools": ["sk-abcdefghijklmnop"]}),
    # A name that looks like a secret: the template shows another name, so no prefix goes.
    _result("sk-live-0123456789abcdefgh", Outcome.PASS),
    _result("no-delete", Outcome.INVARIANT_FAILURE, details={"tool": "delete_records"}),
    _result(
        "tests",
        Outcome.ERROR,
        message="no sandbox: install bubblewrap",
        details={"error.type": "SandboxError"},
    ),
    _result("tests", Outcome.ERROR, details={"error.type": "ValueError", "x": float("nan")}),
    _result("odd", Outcome.MISSING_EVIDENCE, details={"not an identifier": "x", "n": 1}),
]


def test_shown_texts_equal_shown_message_and_are_remembered() -> None:
    """``Explainer.shown`` (what reports print) is ``shown_message`` without an explainer,
    on first sight and when remembered, for passes, failures, errors and odd details."""
    explainer = Explainer("template")
    expected = [shown_message(r, "template") for r in SHOWN_CASES]
    assert [explainer.shown(r) for r in SHOWN_CASES] == expected
    assert [explainer.shown(r) for r in SHOWN_CASES] == expected  # remembered now
    assert [shown_message(r, "template", explainer) for r in SHOWN_CASES] == expected
    assert all("alice@example.com" not in text for text in expected)


def test_shown_fields_in_one_call_equal_the_functions() -> None:
    for mode in ("template", "full"):
        explainer = Explainer(mode)  # type: ignore[arg-type]
        for result in SHOWN_CASES * 2:
            assert explainer.shown_fields(result) == shown_fields(result, mode)  # type: ignore[arg-type]


def test_scrub_details_remembers_no_key_it_dropped() -> None:
    """Keys it accepted are remembered; a secret-shaped or odd key is dropped every time."""
    details = {"calls": 2, "sk-abcdefghijklmnopqrstuv": 1, "user@example.com": 3, 4: 5}
    for _ in range(3):
        assert scrub_details(details) == {"calls": 2}
    assert scrub_details({"tool": "x"}) == {"tool": "x"}


def test_a_check_name_shaped_like_a_secret_is_never_shown() -> None:
    """The template names the check by its contract name only when that is an identifier
    without a secret's shape; otherwise (an identifier-shaped key, a longer text holding one)
    by its oracle type."""
    for name in ("sk-live-0123456789abcdefgh", "call sk-live-0123456789abcdefgh twice"):
        text = explain(_result(name, Outcome.INVARIANT_FAILURE, details={}))
        assert "0123456789" not in text
        assert text.startswith(f"{_result(name, Outcome.PASS).oracle_type}: violated"), text
    assert explain(_result("no-delete", Outcome.PASS)).startswith("no-delete: holds")
    spaced = explain(_result("no delete please", Outcome.PASS))
    assert spaced.startswith("no delete please: holds"), spaced


def test_shown_fields_of_passes_read_the_remembered_text_under_explain_keys_key() -> None:
    """The explainer looks a pass's text up under a key it makes of the field values: the
    same key ``explain_key`` makes, so every pass (new or remembered, whatever its count,
    budget, steps and details) shows what the functions show, and a pass is remembered once."""
    passes = [
        OracleResult(
            oracle_type="tool_retries",
            name=f"check-{i % 3}",
            layer="tolerance" if i % 2 else "invariant",
            outcome=Outcome.PASS,
            passed=True,
            message="fine; user alice@example.com",
            details=[{}, {"retries": 0}, {"tool": "search_docs", "calls": i}][i % 3],
            used=i % 2,
            budget=[None, 0, 2][i % 3],
            step_indexes=list(range(i % 8)),
            contract_id="c",
        )
        for i in range(48)
    ]
    explainer = Explainer("template")
    for result in passes * 2 + SHOWN_CASES * 2:
        assert explainer.shown_fields(result) == shown_fields(result, "template")
        assert explainer.remembers(result)
    keys = {explain_key(r) for r in passes}
    assert len(explainer) == len(keys) + len({explain_key(r) for r in SHOWN_CASES} - {None} - keys)
    # Empty details scrub to a dict of their own, never one shared between results.
    first, second = (explainer.shown_fields(passes[0])[1], explainer.shown_fields(passes[3])[1])
    assert first == second == {} and first is not second
