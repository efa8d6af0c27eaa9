"""The compiled core answers a tool-result pattern itself only where that answer is Python's.

``ResultRules`` analyses each declared pattern once (``otel_oracles_core::rule_regex::
MatchPlan``): an exact pattern is answered for every text, a text that starts with none of the
literals every match starts with (after the whitespace a leading ``^\\s*`` takes; in either
ASCII case under a leading ``(?i)``, for ASCII texts only; ``.`` taking ``\\n`` under a leading
``(?s)``; a set holding a class escape, ``[\\w.]``, opaque) or lacks one every match holds is
"no match", and the rest is asked of ``safe_regex.match``. Here every result pattern of the
bundled conventions, the ones ``test_result_rules_core`` uses and a set of adversarial ones run
as a ``denied_pattern`` over the texts of the captured traces plus generated variants, with a
``match`` that lies (answers the opposite of the engine): a text the core answered itself must
get the engine's answer, one it asked must get the lie, so a wrong native answer and a native
answer given where Python was to be asked both show.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from otel_oracles import safe_regex
from otel_oracles._native import ResultRules
from otel_oracles.decode import read_paths
from otel_oracles.mapping import load_conventions
from otel_oracles.mapping._tool_results import PATTERN_WINDOW, structured
from otel_oracles.mapping.parsers.scalars import parse_string

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO / "tests" / "testdata" / "traces"

ADVERSARIAL = [
    # Leading whitespace: `\s` takes "\v" and non-ASCII spaces, not "\x1c".."\x1f".
    r"^\s*no",
    r"\s*no",
    r"^\s+no",
    r"^\s*?no",
    r"^\s*+no",
    r"^\s*(?: no|\tyes)",
    r"^\s*(?:\s|x)y",
    r"^\s*$",
    r"^\s*",
    # Case: under `(?i)` U+017F (long s) is "s", U+212A (Kelvin) "k", U+0130 and U+0131 "i".
    r"(?i)^\s*(?:no (?:results?|documents?)(?: (?:were|was))?(?: found)?|nothing (?:was )?found)\b",
    r"(?i)kiss",
    r"(?i)^\s*SKIP",
    r"(?i)é",
    r"(?i)\w+",
    r"(?i)(?s)x",
    # DOTALL: `.` takes "\n" too; other flags stay the engine's.
    r"(?s)^.*\n\nFix",
    r"(?s)a.b",
    r"(?si)^\s*A.B",
    r"(?s)(?i)x.",
    r"(?m)^x$",
    # Class escapes inside a set: opaque, Unicode letters and digits included.
    r"^\s*[\w.]*(?:Error|Exception)\b\s*:",
    r"[^\W\d]+Error",
    r"[\s,]+no",
    r"[\w-]+x",
    r"[\D]",
    # Optional and repeated leads, alternations of anchored and unanchored branches.
    r"(?:Error: )?Tool (?:call|run) failed",
    r"^Error executing tool\b|^Tool not found$",
    r"Tool \S+ does not exist\.$|An error",
    r"(?:ab)+c",
    r"a?b?c?d?e?f?g?h?i?j?k",
    r"(a|aa)+c",
    r"x^y",
    r".*?(?:rejected|denied)\b",
    r"$",
    r"",
    r"[Ee]rror",
    r"(?=Err)Error|(?!x)y",
]


def _convention_patterns() -> list[str]:
    seen: dict[str, None] = {}
    for conv in load_conventions().files:
        declared = conv.tool_results
        for pattern in (declared.error_pattern, declared.empty_pattern, declared.denied_pattern):
            if pattern:
                seen.setdefault(pattern)
    return list(seen)


@functools.cache
def _captured() -> frozenset[str]:
    """Every distinct string attribute value of the captured traces."""
    texts: set[str] = set()
    for batch in read_paths([str(TRACES)], []):
        for span in batch.spans:
            for value in span.attributes.values():
                if isinstance(value, str):
                    texts.add(value)
    return frozenset(texts)


@functools.cache
def _texts() -> list[str]:
    """The captured texts (``_captured``, in a fixed order), and variants of short texts made
    of the patterns' literal parts: leading whitespace of every kind, case changes, folding
    characters, a long tail past the window."""
    texts: dict[str, None] = dict.fromkeys(sorted(_captured()))
    seeds = [
        "No results found",
        "nothing was found",
        "Tool execution was not approved.",
        "Error: Tool call failed",
        "Tool call invocation was rejected by user.",
        "Error executing tool x",
        "Tool not found",
        "Tool x does not exist.",
        "KeyError: boom",
        "kiss",
        "skip",
        "abababc",
        "aaaac",
        "yes",
        "no",
        "y",
        "é",
        "a\nb",
        "axb",
        "A\nB",
        "bad\n\nFix the errors and try again.",
        "Unknown tool name: 'x'",
        "ValueError: x",
        "a.b_c.KeyError  :",
        "x\nValueError: y",
        "",
    ]
    for pattern in (*_convention_patterns(), *ADVERSARIAL):
        plain = "".join(c for c in pattern if c not in "^$()?*+[]{}|\\:=!")
        seeds.extend([plain, *pattern.split("|")])
    for seed in seeds:
        for lead in ("", " ", "\t\n", "\v", "\x1c", "\u00a0", "\u2003", " \u3000 "):
            for text in (seed, seed.upper(), seed.swapcase(), seed[1:]):
                texts.setdefault(lead + text)
                texts.setdefault(lead + text + "\n")
        for odd in ("\u017f", "\u212a", "\u0130", "\u0131"):
            texts.setdefault(seed.replace("s", odd).replace("k", odd).replace("i", odd))
        texts.setdefault(seed + "x" * (PATTERN_WINDOW + 10))
        texts.setdefault("x" * (PATTERN_WINDOW - 2) + seed)
    return list(texts)


class Lie:
    """``safe_regex.match`` answering the opposite of the engine, noting what it was asked."""

    def __init__(self) -> None:
        self.asked: set[str] = set()

    def __call__(self, pattern: Any, head: str) -> bool:
        self.asked.add(head)
        return safe_regex.match(pattern, head) is None


def _native_answers(pattern: str) -> tuple[int, int]:
    """Runs ``pattern`` as the one denied pattern over every text with a lying ``match``;
    fails on any text whose answer is not what it must be. Returns how many of the captured
    texts were judged and how many of them were asked of ``match`` (the generated ones are
    made to be hard, and are asked far more often)."""
    lie = Lie()
    rules = ResultRules([], [], [], [pattern], lie, parse_string)
    rx = safe_regex.compile_pattern(pattern)
    wrong = []
    total = 0
    captured_heads: set[str] = set()
    for text in _texts():
        if structured(text) is not text:
            continue  # JSON text: what is judged is the value read from it
        head = text[:PATTERN_WINDOW]
        if text in _captured():
            total += 1
            captured_heads.add(head)
        truth = safe_regex.match(rx, head) is not None
        said = rules.judge(text, True)
        denied = said is not None and said[0] == "denied"
        expected = (not truth) if head in lie.asked else truth
        if denied != expected:
            wrong.append(text)
    assert not wrong, f"/{pattern}/ answered wrongly on {[t[:80] for t in wrong[:5]]!r}"
    return total, len(lie.asked & captured_heads)


@pytest.mark.parametrize("pattern", ADVERSARIAL)
def test_adversarial_patterns(pattern: str) -> None:
    _native_answers(pattern)


def test_every_convention_result_pattern_on_captured_and_generated_texts() -> None:
    for pattern in _convention_patterns():
        texts, asked = _native_answers(pattern)
        # The point of the analysis: almost every real text is answered without Python
        # (pydantic-ai's `(?s)` pattern and otel-genai's error pattern with `[\w.]` included).
        assert asked < texts // 20, (pattern, asked, texts)


@pytest.mark.parametrize(
    ("pattern", "text", "asked"),
    [
        (r"(?i)^\s*no results\b", " \tThe search found 3 results", False),
        (r"(?i)^\s*no results\b", "NO RESULTS.", True),
        # A non-ASCII text under `(?i)`: U+017F (long s) folds to "s".
        (r"(?i)^\s*no results\b", "no re\u017fults", True),
        (r"^\s*Tool execution was not approved\.", "\u00a0Tool execution was not approved.", True),
        (r"^\s*Tool execution was not approved\.", "Tool executed", False),
        (r"^Tool execution failed:", "Tool execution failed: x", False),
        (r"(?s)^.*\n\nFix the errors and try again\.", "anything", False),
        (r"(?s)^.*\n\nFix the errors and try again\.", "x\n\nFix the errors and try again.", True),
        (r"^\s*[\w.]*(?:Error|Exception)\b\s*:", "all went well", False),
        (r"^\s*[\w.]*(?:Error|Exception)\b\s*:", "KeyError: x", True),
        # `\w` takes letters and digits of every script: the engine's answer.
        (r"^\s*[\w.]*(?:Error|Exception)\b\s*:", "\u00e9Error : x", True),
        (r"^\s*[\w.]*(?:Error|Exception)\b\s*:", "\u0663Error:", True),
    ],
)
def test_which_texts_python_still_answers(pattern: str, text: str, asked: bool) -> None:
    lie = Lie()
    ResultRules([], [], [], [pattern], lie, parse_string).judge(text, True)
    assert bool(lie.asked) == asked
