"""Regexes over untrusted trace content never stall grading.

The placeholder check is linear; a contract regex that backtracks without end is an
``error`` result of its own check while the other checks of the trace keep their outcomes;
a ``match`` regex that stalls errors only its contract's verdict.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from otel_oracles import safe_regex
from otel_oracles.assemble._tree import build_trace
from otel_oracles.grade import grade
from otel_oracles.grade.loader import parse_contract
from otel_oracles.mapping import load_conventions
from otel_oracles.model.result import Outcome
from otel_oracles.model.span import SpanRecord
from otel_oracles.pipeline import grade_trace
from tests.oracles.trace_builders import by_type, contract, gen, tool, traj

CATASTROPHIC = "(a|aa)+b"
"""Exponential for a backtracking engine on a run of ``a`` with no ``b``, and one the
``regex`` engine cannot shortcut either."""

HOSTILE_ANSWER = "Your token is " + "a" * 40 + "; the refund was approved."


@pytest.fixture
def short_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(safe_regex, "BUDGET_S", 0.2)


def test_placeholder_check_is_linear_on_long_whitespace() -> None:
    # The regex this replaced took ~25 s on 50 KB of spaces plus one letter (quadratic);
    # 400 KB would take hours. Run it in a child so a regression fails instead of hanging.
    code = (
        "from otel_oracles.grade.evidence import is_placeholder\n"
        "assert not is_placeholder(' ' * 400_000 + 'x')\n"
        "assert is_placeholder(' ' * 400_000 + '[REDACTED]' + '\\t' * 400_000)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], timeout=60, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()


def test_a_catastrophic_contract_regex_is_an_error_and_the_other_checks_carry_on(
    short_budget: None,
) -> None:
    trajectory = traj(tool("refund", {"order": "4411"}, {"ok": True}), gen(HOSTILE_ANSWER))
    c = contract(
        invariants=[
            {"name": "stalls", "type": "final_output", "must_match": CATASTROPHIC},
            {"name": "approved", "type": "final_output", "must_match": "refund was approved"},
            {"name": "not_denied", "type": "final_output", "must_not_match": "denied"},
            {"name": "refunded", "type": "tool_called", "tool": "refund"},
            {"name": "no_wipe", "type": "tool_not_called", "tool": "wipe"},
        ]
    )
    results = by_type(grade(c, trajectory))
    stalled = results["stalls"]
    assert stalled.outcome == Outcome.ERROR
    assert f"/{CATASTROPHIC}/" in stalled.message and "budget" in stalled.message
    assert stalled.details["error.type"] == "RegexBudgetExceeded"
    for name in ("approved", "not_denied", "refunded", "no_wipe"):
        assert results[name].outcome == Outcome.PASS, results[name].message


def test_a_stalling_match_regex_errors_its_contract_only(short_budget: None) -> None:
    root = SpanRecord(
        trace_id="0af7651916cd43dd8448eb211c80319c",
        span_id="b7ad6b7169203331",
        parent_span_id="",
        name="a" * 40,
        start_ns=1,
        end_ns=2,
        # An agent span: a trace with no agent run in it is not graded at all.
        attributes={"gen_ai.operation.name": "invoke_agent"},
    )
    trace = build_trace(root.trace_id, [root])
    hostile = parse_contract({"id": "hostile", "match": {"root_name": f"/{CATASTROPHIC}/"}}, "<t>")
    plain = parse_contract({"id": "plain", "match": {"root_name": "/^a+$/"}}, "<t>")
    graded = grade_trace(trace, [hostile, plain], load_conventions())
    verdicts = {v.contract_id: v for v, _ in graded}
    assert set(verdicts) == {"hostile", "plain"}
    assert verdicts["hostile"].verdict == "error"
    assert verdicts["hostile"].results[0].name == "match"
    assert f"/{CATASTROPHIC}/" in verdicts["hostile"].results[0].message
    assert Outcome.ERROR not in {r.outcome for r in verdicts["plain"].results}


def test_contract_regexes_keep_python_semantics() -> None:
    # Lookarounds, back-references and MULTILINE anchors: what RE2 would refuse.
    assert safe_regex.search(r"(?<![\w-])doc-4(?![\w-])", "see doc-4.") is not None
    assert safe_regex.search(r"(?<![\w-])doc-4(?![\w-])", "see doc-42") is None
    assert safe_regex.search(r"(\w+) \1", "it is is") is not None
    match = safe_regex.search(r"^def main\(", "import x\ndef main():\n", safe_regex.MULTILINE)
    assert match is not None and match.start() == 9
    assert safe_regex.syntax_error("(unclosed") is not None


def test_only_a_literal_within_its_work_bound_runs_without_the_clock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A literal over a text within ``LITERAL_WORK`` runs untimed (its search cannot
    backtrack); every other pattern, and the literal over a longer text, keeps the budget.
    With a budget nothing can meet, the timed operations raise and the untimed ones answer."""
    monkeypatch.setattr(safe_regex, "BUDGET_S", 1e-9)
    monkeypatch.setattr(safe_regex, "LITERAL_WORK", 6 * 1_000)
    safe_regex._UNTIMED.clear()  # the bound is read when a pattern is first seen
    try:
        near = "x" * 980 + "pytest"
        assert safe_regex.search("pytest", near) is not None
        assert safe_regex.search(safe_regex.compile_pattern("run_pytest_2"), "x" * 500) is None
        assert safe_regex.match("pytest", "pytest -q") is not None
        assert safe_regex.fullmatch("pytest", "pytest") is not None
        assert safe_regex.search("pytest", "pytest", safe_regex.MULTILINE) is not None
        over = [
            ("pytest", near + "x" * 100, 0),  # the literal beyond its bound
            ("py.test", "py.test", 0),  # a metacharacter
            ("py test", "py test", 0),  # not letters, digits and _ only
            ("pytest", "PYTEST", safe_regex.IGNORECASE),  # compares otherwise
            ("(?i)pytest", "pytest", 0),
            (CATASTROPHIC, "a" * 30, 0),  # any other pattern, however short the text
        ]
        for pattern, text, flags in over:
            with pytest.raises(safe_regex.RegexBudgetExceeded):
                safe_regex.search(pattern, text, flags)
        with pytest.raises(safe_regex.RegexBudgetExceeded):
            safe_regex.match("[\\w-]", "a")
    finally:
        safe_regex._UNTIMED.clear()
