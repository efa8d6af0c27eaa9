"""The core's plan of a rule-table regex (``native/core/src/rule_regex.rs``) answers as
Python's engine does, the one meaning of a conventions regex: a plan that says "no match"
where ``regex`` finds one silently keeps a rule from matching. Checked through the compiled
``RuleTable`` itself (a span-name condition), against ``regex.search`` on the same text, for
patterns built at random from the syntax the plans model and the syntax next to it (a fixed
seed, so a failure replays). The 3 December campaign found one such difference this way, in
300,000 patterns: an escaped ``-`` opening a range in a class (``[\\--a]`` is ``-`` to ``a``
in Python, and the plan read it as the two characters ``-`` and ``a``)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import pytest
import regex

from otel_oracles._native import RuleTable

TOKENS = [
    *"ab-é\n.^$|?*+()[]z05_ \t&~,'",
    "ab", "??", "(?:", "(?=", "(?!", "[^", "\\-", "\\]", "\\[", "\\^", "\\n", "\\.", "\\$",
    "\\w", "\\b", "(?<=a)", "(?>", "\\\\", "\\t", "(?P<g>", "\\|", "\\?", "a-z", "0-9", "-a",
    "\\--", "[a-", "-]", "[\\-", "[-", "\\r", "\\/", "\\!", "A-Z",
]  # fmt: skip
ALPHABET = [*"ab-é\n5Zz0_ ][^$.\\\t,/A`~"]


@dataclass
class _Span:
    """What a rule table reads of a span for a span-name condition."""

    name: str
    scope_name: str = "s"
    kind: int = 1
    status_code: int = 0
    attributes: dict[str, Any] = field(default_factory=dict)
    span_id: bytes = b"x"


def _mismatches(pattern: str, texts: list[str]) -> list[tuple[str, bool, bool]]:
    """``(text, core, python)`` for each text on which the table's answer differs."""
    compiled = regex.compile(pattern)
    table = RuleTable(
        [([("span_name", 0, None)], [])],
        [],
        [],
        [pattern],
        lambda _, text: compiled.search(text) is not None,
    )
    spans: list[Any] = [_Span(t) for t in texts]  # read by attribute, as a SpanRecord is
    selected = table.select(spans, {})
    return [
        (text, got == 0, compiled.search(text) is not None)
        for text, got in zip(texts, selected, strict=True)
        if (got == 0) != (compiled.search(text) is not None)
    ]


@pytest.mark.parametrize(
    ("pattern", "texts"),
    [
        (r"[\--a]", ["5", "-", ".", "a", "b", ","]),
        (r"x[\--a]y", ["x5y", "x-y", "xby"]),
        (r"[\--\]\^-]", ["b5", ".", "]", "^", "_"]),
        (r"[a-c-e]", ["-", "e", "b", "d"]),
    ],
)
def test_an_escaped_dash_opens_a_range_as_in_python(pattern: str, texts: list[str]) -> None:
    assert _mismatches(pattern, texts) == []


def test_plans_answer_as_python_on_random_patterns() -> None:
    rng = random.Random(20261203)
    checked = 0
    for _ in range(4000):
        pattern = "".join(rng.choice(TOKENS) for _ in range(rng.randint(1, 8)))
        try:
            regex.compile(pattern)
        except regex.error:
            continue
        texts = ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 6))) for _ in range(8)]
        texts += [pattern, pattern.replace("\\", ""), "x" + pattern.replace("\\", "") + "\n"]
        assert _mismatches(pattern, texts) == [], pattern
        checked += 1
    assert checked > 1000
