"""The privacy filter keeps the heads of explanations it wrote (the outcome's template with
the check's name and budget) and a pass's shown message; keeping must never change the
text: results that differ only in a shown detail or step get their own text, and a text
written from a kept head equals one written first."""

from __future__ import annotations

from otel_oracles.emit import explain, shown_message
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


def test_kept_explanations_equal_fresh_ones_and_keep_detail_differences() -> None:
    results = _variants()
    first = [explain(r, "template") for r in results]
    again = [explain(r, "template") for r in results]  # from the kept heads
    assert first == again
    assert "tool=delete_records" in first[-2] and "tool=drop_table" in first[-1]
    assert all(SECRET_KEY not in text for text in first)
    assert len(set(first)) > len({r.name for r in results})
    shown = [shown_message(r, "template") for r in results]
    assert shown == [t.removeprefix(f"{r.name}: ") for r, t in zip(results, first, strict=True)]
    assert shown == [shown_message(r, "template") for r in results]


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
    texts = [explain(r, "template") for r in variants]
    assert texts == [explain(r, "template") for r in variants]
    assert "seconds=0.0" in texts[0] and "seconds=-0.0" in texts[1] and "seconds=nan" in texts[2]
