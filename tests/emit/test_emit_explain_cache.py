"""Template explanations are remembered by an ``Explainer`` (report cost); remembering must
never change the text: every input the template reads is part of the key, so results that
differ only in a shown detail get their own text, and a remembered text equals a fresh one."""

from __future__ import annotations

from otel_oracles.emit import Explainer, explain
from otel_oracles.model.result import OracleResult, Outcome
from tests.emit.conftest import SECRET_KEY, make_results


def _variants() -> list[OracleResult]:
    base = make_results()
    out = list(base)
    for r in base:
        out.append(r.model_copy(update={"details": {**r.details, "tool": "search"}}))
        out.append(r.model_copy(update={"details": {**r.details, "tools": ["a", SECRET_KEY]}}))
        out.append(r.model_copy(update={"details": {**r.details, "calls": 2, "flag": True}}))
        out.append(r.model_copy(update={"details": {**r.details, "status": "x" * 65}}))
        out.append(r.model_copy(update={"step_indexes": [1, 2, 3, 4, 5, 6]}))
    failing = OracleResult(
        oracle_type="tool_not_called",
        name="never-delete",
        outcome=Outcome.INVARIANT_FAILURE,
        passed=False,
        message="called",
        details={"tool": "delete_records"},
        contract_id="c",
    )
    out += [failing, failing.model_copy(update={"details": {"tool": "drop_table"}})]
    return out


def test_cached_explanations_equal_fresh_ones_and_keep_detail_differences() -> None:
    explainer = Explainer("template")
    results = _variants()
    first = [explainer(r) for r in results]
    assert all(explainer.remembers(r) for r in results)
    again = [explainer(r) for r in results]  # remembered
    fresh = [explain(r, "template") for r in results]
    assert first == again == fresh
    assert "tool=delete_records" in first[-2] and "tool=drop_table" in first[-1]
    assert all(SECRET_KEY not in text for text in first)
    assert len(explainer) > len(make_results())


def test_signed_zero_and_nan_details_get_their_own_text() -> None:
    """Floats equal as values but spelled differently (0.0 and -0.0) must not share a
    remembered text, and a NaN detail (never equal to itself) still renders."""
    base = OracleResult(
        oracle_type="latency",
        name="fast-enough",
        outcome=Outcome.INVARIANT_FAILURE,
        passed=False,
        message="slow",
        details={"seconds": 0.0},
        contract_id="c",
    )
    variants = [
        base,
        base.model_copy(update={"details": {"seconds": -0.0}}),
        base.model_copy(update={"details": {"seconds": float("nan")}}),
        base.model_copy(update={"details": {"seconds": -0.0}}),
    ]
    explainer = Explainer("template")
    texts = [explainer(r) for r in variants]
    assert texts == [explain(r, "template") for r in variants]
    assert "seconds=0.0" in texts[0] and "seconds=-0.0" in texts[1] and "seconds=nan" in texts[2]
