"""Regexes over untrusted trace content never stall grading.

The placeholder check is linear; a contract regex that backtracks without end is an
``error`` result of its own check while the other checks of the trace keep their outcomes;
a ``match`` regex that stalls errors only its contract's verdict.
"""

from __future__ import annotations

import random
import subprocess
import sys
import time

import pytest
import regex

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


def test_only_a_pattern_within_its_step_bound_runs_without_the_clock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A pattern in the plain subset over a text within its step bound (``UNTIMED_WORK``)
    runs untimed; every other pattern, and a plain one over a longer text, keeps the budget.
    With a budget nothing can meet, the timed operations raise and the untimed ones answer."""
    monkeypatch.setattr(safe_regex, "BUDGET_S", 1e-9)
    monkeypatch.setattr(safe_regex, "UNTIMED_WORK", 7 * 1_000)
    safe_regex._UNTIMED.clear()  # the bound is read when a pattern is first seen
    try:
        # A literal of m characters: (m + 1) steps per start, n + 1 starts for a search.
        near = "x" * 993 + "pytest"  # 1,000 starts x 7 steps
        assert safe_regex.search("pytest", near) is not None
        assert safe_regex.search(safe_regex.compile_pattern("run_pytest_2"), "x" * 500) is None
        assert safe_regex.match("pytest", "pytest -q") is not None
        assert safe_regex.fullmatch("pytest", "pytest") is not None
        assert safe_regex.search("pytest", "pytest", safe_regex.MULTILINE) is not None
        assert safe_regex.search("pytest", "PYTEST", safe_regex.IGNORECASE) is not None
        assert safe_regex.search("py.test", "py test") is not None
        assert safe_regex.match(r"^\s*(?:denied\b|rejected:)", "  rejected: no") is not None
        assert list(safe_regex.finditer(r"doc-\d+", "doc-1, doc-22")) != []
        assert safe_regex.match("[\\w-]", "a") is not None
        over = [
            ("pytest", near + "x", 0),  # the literal beyond its bound
            (r"x\s*y", " " * 100, 0),  # a repeat: quadratic for a search, beyond it
            (r"(?x)py test", "pytest", 0),  # verbose: other syntax
            ("pytest", "PYTEST", safe_regex.IGNORECASE | regex.FULLCASE),
            (CATASTROPHIC, "a" * 30, 0),  # a choice inside a repeat, however short the text
            (r"(\w+) \1", "a a", 0),  # a back-reference
        ]
        for pattern, text, flags in over:
            with pytest.raises(safe_regex.RegexBudgetExceeded):
                safe_regex.search(pattern, text, flags)
        with pytest.raises(safe_regex.RegexBudgetExceeded):
            list(safe_regex.finditer(r"doc-\d+", "doc-1 " * 100))
    finally:
        safe_regex._UNTIMED.clear()


OUTSIDE_THE_SUBSET = [
    CATASTROPHIC,
    "(a*)*b",
    "(?:a|a)*b",
    "(a+)+$",
    r"(\w+\s?)*$",
    r"(?:\s?\s?)*x",
    r"(\w+) \1",
    "a{2,}",
    "a{e<=1}",
    r"\p{L}+",
    "(?<=a)b",
    "(?>a+)b",
    "[[:alpha:]]+",
    "[a--b]",
    "(?V1)a",
    "(?x)a b",
    "(?r)a",
    "a(?i)b",
    "(?(1)a|b)",
    "(?#c)a",
    r"\L<words>",
    r"\Ga",
    r"a\Kb",
]


@pytest.mark.parametrize("pattern", OUTSIDE_THE_SUBSET)
def test_patterns_outside_the_subset_always_keep_the_budget(pattern: str) -> None:
    try:
        rx = safe_regex.compile_pattern(pattern)
    except safe_regex.RegexSyntaxError:
        return  # the engine refuses it anyway
    assert safe_regex._untimed_chars(rx) == (-1, -1)


def test_the_checks_patterns_run_untimed_on_the_texts_they_search() -> None:
    """The patterns the checks run most on data-2000 (docs/performance-history.md, "Regexes of the
    checks without the clock") are in the subset, within their bound on texts longer than
    those they search there."""
    from otel_oracles.grade.oracles import trace_answers

    cases = [
        (trace_answers.DEFAULT_CITATION_PATTERN, 1_000, 0),
        (trace_answers.DEFAULT_DISCLOSURE, 2_000, 0),
        (trace_answers.DEFAULT_UNCERTAINTY, 2_000, 0),
        (r"^tests/test_.*\.py$", 200, 0),
        ("[\\w-]", 1, 1),
    ]
    for pattern, chars, which in cases:
        assert safe_regex._untimed_chars(safe_regex.compile_pattern(pattern))[which] >= chars


def _subset_patterns(rng: random.Random, count: int) -> list[str]:
    """Random patterns of the subset's syntax, biased to many repeats and alternatives over
    the few characters of the hostile texts: the shapes that make a backtracking search
    slow."""
    atoms = ["a", "b", ".", r"\w", r"\s", r"\d", "[ab]", "[^b]", " ", r"\b", "^", "$"]
    patterns: list[str] = []

    def piece(depth: int) -> str:
        roll = rng.random()
        if depth < 2 and roll < 0.25:
            branches = [seq(depth + 1) for _ in range(rng.randint(2, 4))]
            return "(?:" + "|".join(branches) + ")" + rng.choice(["", "", "?"])
        if depth < 2 and roll < 0.32:
            return "(?" + rng.choice("=!") + seq(depth + 1) + ")"
        atom = rng.choice(atoms)
        if atom in (r"\b", "^", "$"):
            return atom
        return atom + rng.choice(["", "*", "+", "?", "*?", "+?", "*+"])

    def seq(depth: int) -> str:
        return "".join(piece(depth) for _ in range(rng.randint(1, 6)))

    while len(patterns) < count:
        pattern = seq(0)
        if safe_regex.syntax_error(pattern) is None:
            patterns.append(pattern)
    return patterns


def test_the_step_bound_holds_the_engine_far_inside_the_budget() -> None:
    """Every generated pattern the analysis lets run untimed, on hostile texts (runs of the
    characters it repeats, with and without a final mismatch) at the longest length its
    bound allows, finishes untimed in a small part of the budget it skipped: the bound is
    an upper bound of the engine's work, not a guess. 400 patterns, a fixed seed."""
    rng = random.Random(18)
    untimed = 0
    slowest = 0.0
    for pattern in _subset_patterns(rng, 400):
        rx = safe_regex.compile_pattern(pattern)
        search_chars, match_chars = safe_regex._untimed_chars(rx)
        for chars, operation in ((search_chars, rx.search), (match_chars, rx.match)):
            if chars < 0:
                continue
            untimed += 1
            chars = min(chars, 100_000)
            for unit in ("a", "ab", "a ", " ", "1a"):
                for tail in ("", "!"):
                    text = (unit * (chars // len(unit) + 1))[: max(chars - len(tail), 0)] + tail
                    started = time.process_time()
                    operation(text)
                    slowest = max(slowest, time.process_time() - started)
    assert untimed > 200  # the generator reaches the subset
    assert slowest < safe_regex.BUDGET_S / 4, slowest


def test_untimed_answers_are_the_engines() -> None:
    """The clock is all that differs: the same spans and groups as the timed engine."""
    texts = ["doc-1 and doc-22.", "  Tool call denied", "no results found", "", "x\n"]
    for pattern in [r"doc-(\d+)", r"^\s*(?:tool (call )?denied)", r"(?i)no (results?)\b", "$"]:
        rx = safe_regex.compile_pattern(pattern)
        for text in texts:
            for ours, theirs in (
                (safe_regex.search(rx, text), rx.search(text, timeout=1.0)),
                (safe_regex.match(rx, text), rx.match(text, timeout=1.0)),
                (safe_regex.fullmatch(rx, text), rx.fullmatch(text, timeout=1.0)),
            ):
                assert (ours and (ours.span(), ours.groups())) == (
                    theirs and (theirs.span(), theirs.groups())
                )
            assert [m.span() for m in safe_regex.finditer(rx, text)] == [
                m.span() for m in rx.finditer(text, timeout=1.0)
            ]
