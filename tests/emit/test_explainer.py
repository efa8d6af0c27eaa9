"""The privacy filter's texts: template explanations, the messages reports show and the
scrubbed details, each held to what it promises, spelled out here in Python."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from otel_oracles.emit import SHOWN_FILTER, explain, looks_secret, shown_message
from otel_oracles.emit._explain import (
    IDENTIFIER_DETAIL_KEYS,
    MAX_EXPLANATION_CHARS,
    MAX_LIST_ITEMS,
    MAX_VALUE_CHARS,
    REDACTED,
    SHOWN_ERROR_TYPES,
    safe_identifier,
    scrub_details,
)
from otel_oracles.model.result import OracleResult, Outcome


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


def test_shown_messages_are_explanations_without_the_name() -> None:
    """``shown_message`` (what the table, JUnit, HTML and JSON reports print) is the template
    explanation with ``name: `` taken off its front when it starts so, the first time and
    again when a pass's head is kept; ``full`` is the oracle's own message."""
    expected = [explain(r).removeprefix(f"{r.name}: ") for r in SHOWN_CASES]
    assert expected[0] == "holds" and expected[4].startswith("tool_not_called: holds")
    for _ in range(2):
        assert [shown_message(r, "template") for r in SHOWN_CASES] == expected
        assert [SHOWN_FILTER.shown_message(r) for r in SHOWN_CASES] == expected
    assert all("alice@example.com" not in text for text in expected)
    assert shown_message(SHOWN_CASES[0], "full") == SHOWN_CASES[0].message


def test_scrub_details_remembers_no_key_it_dropped() -> None:
    """Keys it accepted are remembered; a secret-shaped or odd key is dropped every time."""
    details = {"calls": 2, "sk-abcdefghijklmnopqrstuv": 1, "user@example.com": 3, 4: 5}
    for _ in range(3):
        assert scrub_details(details) == {"calls": 2}
    assert scrub_details({"tool": "x"}) == {"tool": "x"}


def _scrubbed_as_specified(details: Mapping[Any, Any]) -> dict[Any, Any]:
    """What ``scrub_details`` promises, spelled out item by item in Python: the core's
    filter (``ShownFilter``) is held to it."""
    out: dict[Any, Any] = {}
    for key, value in details.items():
        if safe_identifier(key) is None:
            continue
        if isinstance(value, (bool, int, float)):
            out[key] = value
        elif key in IDENTIFIER_DETAIL_KEYS:
            if isinstance(value, str):
                out[key] = safe_identifier(value) or REDACTED
            elif isinstance(value, (list, tuple)):
                out[key] = [safe_identifier(v) or REDACTED for v in value[:MAX_LIST_ITEMS]]
            elif isinstance(value, dict):
                out[key] = {
                    safe_identifier(k) or REDACTED: n
                    for k, n in list(value.items())[:MAX_LIST_ITEMS]
                    if isinstance(n, int)
                }
    return out


class _Name(str):
    """A ``str`` subclass: kept as itself when it is an identifier."""


class _Details(dict[Any, Any]):
    """A ``dict`` subclass: read through its ``items()``."""


SCRUB_CASES: list[Mapping[Any, Any]] = [
    {},
    {"calls": 0, "tools": []},
    {"model_calls": 7, "input_tokens": 13938, "total_tokens": 15840, "ok": True},
    {"duration_ms": 17728.0, "nan": float("nan"), "neg": -0.0, "big": 1 << 80},
    {"retries": 1, "per_tool": {"get_invoice": 1}, "retried_after": [{"retry_step": 9}]},
    {"failed": [{"step": 8, "tool": "get_invoice", "why": "status ERROR (Reset)"}]},
    {"cited": ["doc-384"], "grounded": {"doc-384": 4}, "ungrounded": []},
    {"degraded": [], "disclosed": None, "uncertainty": "maybe"},
    {"tool": "sk-proj-abcdef0123456789abcdef", "tools": ["ok_tool", "a@b.io", 3, None]},
    {"tools": ("a", "b", "c", "d", "e", "f", "g"), "kind": "x" * 64, "field": "x" * 66},
    {"tool": "line\n", "agent": "two words", "status": "", "error.type": "ValueError"},
    {"unclassified_spans": {"GET /a": 2, "db.query": 3, "ok": "3", "b": True, "c": 1.5}},
    {"unclassified_spans": {"x y": 1, "a@b.io": 2, "c": 3, "d": 4, "e": 5, "f": 6}},
    {"evidence": object(), "tool": b"bytes", "status": 3, "finish_reason": ["stop"]},
    {4: 5, None: 1, ("t",): 2, "sk-abcdefghijklmnopqrstuv": 1, "user@example.com": 3},
    {_Name("tool"): _Name("search_docs"), "agent": _Name("x y")},
    _Details({"calls": 2, "tool": "t", "query": "secret text"}),
    {"tools": [f"tool_{i}" for i in range(5000)]},
]


def test_scrub_details_is_what_it_promises_item_by_item() -> None:
    """Every case twice (the second time the accepted strings are remembered): equal to the
    specification, value and type of every key and value, and in the same order."""
    for details in SCRUB_CASES * 2:
        got = scrub_details(details)  # type: ignore[arg-type]
        want = _scrubbed_as_specified(details)
        assert type(got) is dict
        assert list(got) == list(want)
        for (gk, gv), (wk, wv) in zip(got.items(), want.items(), strict=True):
            assert gk is wk or (gk == wk and type(gk) is type(wk))
            assert type(gv) is type(wv)
            assert repr(gv) == repr(wv)


def test_scrub_details_raises_what_safe_identifier_raises() -> None:
    """A key whose length cannot be read stops the scrub, as it would in Python."""

    class Odd(str):
        def __len__(self) -> int:
            raise RuntimeError("no length")

    with pytest.raises(RuntimeError, match="no length"):
        scrub_details({Odd("calls"): 1})


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


def _capped(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _shown_value(key: str, value: Any) -> str | None:
    """One detail value as a template shows it, or None to leave it out."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if key not in IDENTIFIER_DETAIL_KEYS:
        return None
    if isinstance(value, str):
        return safe_identifier(value) or REDACTED
    if isinstance(value, (list, tuple)):
        items = [safe_identifier(v) or REDACTED for v in value[:MAX_LIST_ITEMS]]
        return "[" + ", ".join(items) + (", \u2026" if len(value) > MAX_LIST_ITEMS else "") + "]"
    if isinstance(value, dict):
        pairs = list(value.items())[:MAX_LIST_ITEMS]
        items = [f"{safe_identifier(k) or REDACTED} x{n}" for k, n in pairs if isinstance(n, int)]
        return "{" + ", ".join(items) + (", \u2026" if len(value) > MAX_LIST_ITEMS else "") + "}"
    return None


_SPECIFIED_TEMPLATES = {
    Outcome.PASS: "{name}: holds",
    Outcome.TOLERATED: "{name}: tolerated{budget}",
    Outcome.INVARIANT_FAILURE: "{name}: violated",
    Outcome.BUDGET_EXHAUSTED: "{name}: budget exhausted{budget}",
    Outcome.MISSING_EVIDENCE: "{name}: evidence needed to judge is missing",
    Outcome.ERROR: "{name}: the check itself failed",
}


def _explained_as_specified(result: OracleResult) -> str:
    """What a template explanation promises (the module's text, DESIGN §8), spelled out in
    Python: the core's filter (``ShownFilter.explain``) is held to it."""
    name = safe_identifier(result.name)
    if name is None:
        name = _capped(result.name, MAX_VALUE_CHARS)
        if looks_secret(name):
            name = result.oracle_type if safe_identifier(result.oracle_type) else "check"
    budget = ""
    if result.budget is not None or result.used:
        limit = "?" if result.budget is None else str(result.budget)
        budget = f" (used {result.used} of {limit})"
    parts = [_SPECIFIED_TEMPLATES[result.outcome].format(name=name, budget=budget)]
    if result.outcome == Outcome.ERROR:
        error_type = safe_identifier(result.details.get("error.type")) or "_OTHER"
        parts.append(f"error.type={error_type}")
        if error_type in SHOWN_ERROR_TYPES:
            parts.append(result.message)
    if result.step_indexes:
        steps = ",".join(str(i) for i in result.step_indexes[:MAX_LIST_ITEMS])
        more = ",\u2026" if len(result.step_indexes) > MAX_LIST_ITEMS else ""
        parts.append(f"steps={steps}{more}")
    if result.outcome != Outcome.PASS:
        for key in sorted(result.details):
            if safe_identifier(key) is None:
                continue
            shown = _shown_value(key, result.details[key])
            if shown is not None and key != "error.type":  # the error's part says it
                parts.append(f"{key}={_capped(shown, MAX_VALUE_CHARS)}")
    return _capped("; ".join(parts), MAX_EXPLANATION_CHARS)


_NAMES = [
    "no-delete",
    "no delete please",
    "sk-live-0123456789abcdefgh",
    "call sk-live-0123456789abcdefgh twice",
    "line\n",
    "x" * 64,
    "y" * 90,
    "naïve é 日本 \u202e",
    "{name} {budget}",
]


def test_template_explanations_are_what_they_promise() -> None:
    """Every outcome, for names that are identifiers, secret-shaped, too long or odd, with
    and without budgets and steps, over every kind of details the scrubbing cases hold (and
    errors with a shown and a plain type): equal to the specification, twice (the second
    time the accepted strings are remembered); the message never leaks."""
    results = []
    for i, (name, outcome, details) in enumerate(
        (name, outcome, details)
        for name in _NAMES
        for outcome in Outcome
        for details in [
            *(dict(d) for d in SCRUB_CASES if all(isinstance(k, str) for k in d)),
            {"error.type": "SandboxError", "calls": 2, "error.typed": 1},
            {"error.type": "sk-abcdefghijklmnopqrstuv"},
        ]
    ):
        results.append(
            OracleResult.model_construct(
                oracle_type=["tool_not_called", "sk-abcdefghijklmnopqrstuv"][i % 2],
                name=name,
                outcome=outcome,
                passed=outcome is Outcome.PASS,
                message=f"message {i} about alice@example.com",
                details=details,
                step_indexes=[[], [3], list(range(9)), [1 << 70]][i % 4],
                used=[0, 2, 1 << 70][i % 3],
                budget=[None, 3, 0, -1, None][i % 5],
            )
        )
    for result in results * 2:
        want = _explained_as_specified(result)
        assert explain(result) == want, (result, want)
        if not (result.outcome is Outcome.ERROR and "SandboxError" in want):
            assert "alice@example.com" not in want


def test_a_failures_details_are_shown_in_the_order_sorted_gives() -> None:
    """The core puts an exact dict's ``str`` keys in order by their UTF-8 bytes (the code
    point order ``sorted`` gives); keys it cannot read so (a surrogate, a ``str`` subclass)
    go through ``sorted`` itself. Given in reverse, both come out as specified."""
    keys = ["a", "a-b", "a.b", "a_b", "a0", "aB", "ab", "Z", "_", "é", "\U0001f600", "\uffff"]
    keys.reverse()

    class _Key(str):
        pass

    for extra in [[], ["\udcff"], [_Key("a1")]]:
        details = {key: i for i, key in enumerate([*keys, *extra])}
        result = OracleResult.model_construct(
            oracle_type="tool_not_called",
            name="no-delete",
            outcome=Outcome.INVARIANT_FAILURE,
            passed=False,
            message="m",
            details=details,
        )
        want = _explained_as_specified(result)
        assert explain(result) == want
        assert want.index("; Z=") < want.index("; a=") < want.index("; a-b=")
        assert want.index("; a.b=") < want.index("; a0=") < want.index("; aB=")


def test_numbers_are_spelled_as_str_spells_them() -> None:
    """The core spells a step number, a budget and a detail's count itself when it is an
    exact ``int`` within 64 bits (else ``str`` or ``repr`` does): the extremes of that
    range, negatives, zero and just beyond it, as the specification spells them."""
    low, high = -(1 << 63), (1 << 63) - 1
    details = {"low": low, "high": high, "neg": -7, "zero": 0, "above": high + 1, "below": low - 1}
    for outcome in [Outcome.INVARIANT_FAILURE, Outcome.BUDGET_EXHAUSTED]:
        for steps, used, budget in [([low, -1, 0, high], high, low), ([high + 1, 5], low, None)]:
            result = OracleResult.model_construct(
                oracle_type="tool_retries",
                name="retries",
                outcome=outcome,
                passed=False,
                message="m",
                details={**details, "flag": False},
                step_indexes=steps,
                used=used,
                budget=budget,
            )
            want = _explained_as_specified(result)
            assert explain(result) == want
            assert SHOWN_FILTER.shown_message(result) == want.removeprefix("retries: ")
