"""The compiled core answers a rule-table regex itself only where that answer is Python's.

The rule table analyses each pattern once (``otel_oracles_core::rule_regex``): a pattern in
the subset it models exactly is answered natively for every text; for the others a text
lacking a literal every match needs is answered "no match" natively, and the rest is asked of
Python (``safe_regex.search``). Here every regex of the bundled conventions and a set of
adversarial patterns run through the real table on every text of the captured traces plus
generated variants, with a ``search`` that lies (answers the opposite of the engine): a text
the core answered itself must get the engine's answer, one it asked must get the lie, so a
wrong native answer and a native answer given where Python was asked both show.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from otel_oracles import safe_regex
from otel_oracles._native import RuleTable
from otel_oracles.assemble import build_trace
from otel_oracles.decode import read_paths
from otel_oracles.mapping import load_conventions
from otel_oracles.mapping.config import Match
from otel_oracles.model.span import SpanRecord, Trace

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO / "tests" / "testdata" / "traces"
TRACE_ID = "0af7651916cd43dd8448eb211c80319c"

ADVERSARIAL = [
    # Anchors: `$` is the end or before one final newline; `^` the start only.
    "^agent$",
    "agent$",
    "^$",
    "$",
    "",
    "a$\n",
    "^\n$",
    "x^y",
    "^^agent",
    "agent$$",
    # `.`: anything but "\n" (not "\r", "\u2028", "\x85").
    "^.$",
    "a.b",
    "^transfer_to_.",
    "é.é",
    # Classes: ranges, negation (which takes "\n"), escaped punctuation, "-" at the ends.
    "[,}]$",
    "[^a-z]x",
    "^[a-cx-z]+$",
    "[\\]\\\\]",
    "[-a]",
    "[a-]",
    "[^\n]",
    "[é-ü]",
    "[a|b]",
    # Alternation, optional parts, groups of every spelling.
    "^(invoke_agent|agent run)( |$)",
    "^a(b|c)?d?$",
    "(?:ab|a)c",
    "(?P<n>x)y",
    "(?<n>x)y",
    "a|",
    "|a",
    "a??b",
    "a?+b",
    # Lookaheads, nested and at the end.
    "^(?!agent$)",
    "^(?!Runnable)",
    "^invoke_agent (?!agent$)",
    "a(?=b$)",
    "(?!a)(?=.)",
    "^(?!x(?!y))",
    # Escapes the subset keeps, and ones it leaves to Python.
    "\\n",
    "a\\tb",
    "\\.\\*\\?\\+\\(\\)\\[\\{\\|\\^\\$\\-\\_\\#\\ ",
    "\\w+Runtime",
    # A set holding a class escape: opaque, read to its `]`; one starting a range is refused.
    "^[\\w-]+\\.(before|after)_agent$",
    "[\\w.$]*[.$]Runtime",
    "[^\\W\\d]+_agent",
    "[\\]\\s]agent",
    "[\\S]+$",
    "[\\w-z]agent",
    # Filters with a literal before `$`: the text ends with it, or with it and one newline.
    "\\w+Runtime$",
    "^\\w+\\.a?call$",
    "^ab$\\w*",
    "\\d\n$",
    "\\bagent\\b",
    "\\x41",
    "\\u00e9",
    "\\N{LATIN SMALL LETTER E WITH ACUTE}",
    "\\p{Lu}gent",
    "(a)\\1",
    "\\Aagent\\Z",
    # Flags and repetition the subset refuses (Python answers).
    "(?i)^AGENT",
    "(?s)a.b",
    "(?m)^b$",
    "(?x)a b",
    "a{2}",
    "a{,2}",
    "}",
    "]",
    "[[:alpha:]]",
    "[a&&b]",
    "(?>a+)b",
    "(?<=a)b",
    "(?<!a)b",
    "(a|aa)+c",
    "(ab|cd)+x\\w",
    "a*?b",
    "(?#note)a",
    "^(?:a?){6}b",
    # Case: no folding without a flag.
    "Agent",
    "ÉTAT",
    "straße",
]


def _convention_patterns() -> list[str]:
    seen: dict[str, None] = {}

    def walk(match: Match) -> None:
        for cond in (*match.all, *match.any):
            for pattern in (cond.regex, cond.span_name, cond.scope):
                if pattern is not None:
                    seen.setdefault(pattern)
            if cond.child is not None:
                walk(cond.child)

    for conv in load_conventions().files:
        for rule in conv.rules:
            walk(rule.match)
    return list(seen)


@functools.cache
def _real_texts() -> tuple[list[str], list[str]]:
    """Every distinct text of the captured traces (span and scope names, string attribute
    values), and the short ones (names, identifiers) that get generated variants."""
    texts: dict[str, None] = {}
    names: dict[str, None] = {}
    for batch in read_paths([str(TRACES)], []):
        for span in batch.spans:
            names.setdefault(span.name)
            names.setdefault(span.scope_name)
            for value in span.attributes.values():
                if isinstance(value, str):
                    texts.setdefault(value)
    texts.update(names)
    return list(texts), [n for n in names if len(n) <= 200]


def _fragments(pattern: str) -> list[str]:
    """Texts made of a pattern's literal parts, so that generated texts also match."""
    unescaped = pattern.replace("\\n", "\n").replace("\\t", "\t")
    plain = "".join(c for c in unescaped if c not in "^$()?*+[]{}|\\")
    pieces = [plain, *("".join(c for c in p if c not in "^$()?*+[]{}\\") for p in plain.split("|"))]
    for branch in unescaped.split("|"):
        pieces.append("".join(c for c in branch if c not in "^$()?*+[]{}\\"))
    return pieces


def _variants(text: str) -> list[str]:
    return [
        text,
        text + "\n",
        text + "\n\n",
        text + "\r\n",
        text + "\r",
        "\n" + text,
        "x" + text,
        text + "x",
        " " + text,
        text + " ",
        text + "\u2028",
        text + "\x85",
        "é" + text + "ü",
        text.upper(),
        text.lower(),
        text.swapcase(),
        text[:-1],
        text[1:],
        text.replace(" ", "\n"),
        text + text,
    ]


@functools.cache
def _generated_texts() -> list[str]:
    texts: dict[str, None] = {}
    _, names = _real_texts()
    for pattern in (*_convention_patterns(), *ADVERSARIAL):
        for fragment in _fragments(pattern):
            texts.update(dict.fromkeys(_variants(fragment)))
    for name in names:
        texts.update(dict.fromkeys(_variants(name)))
    texts.update(
        dict.fromkeys(
            [
                *["", "\n", "\n\n", "\r\n", "a", "ab", "aab", "aaab", "b", "x\ny", "\nx", "-x"],
                *["-", "]", "\\", "|", "é", "éaé", "a😀b", "😀", "Agent\n", "AGENT", "STRASSE"],
            ]
        )
    )
    return list(texts)


@functools.cache
def _trace() -> Trace:
    """One span per text, the text as attribute ``k``."""
    real, _ = _real_texts()
    texts = list(dict.fromkeys([*real, *_generated_texts()]))
    spans = [
        SpanRecord(
            trace_id=TRACE_ID,
            span_id=f"{i + 1:016x}",
            parent_span_id="",
            name="op",
            attributes={"k": text},
        )
        for i, text in enumerate(texts)
    ]
    return build_trace(TRACE_ID, spans)


def _native_answers(pattern: str) -> tuple[int, int]:
    """Runs ``pattern`` over every text through the core's table with a lying ``search``;
    fails on any text whose selection is not what it must be. Returns (texts, asked)."""
    trace = _trace()
    rx = safe_regex.compile_pattern(pattern)
    asked: set[str] = set()

    def lie(index: int, text: str) -> bool:
        assert index == 0
        asked.add(text)
        return safe_regex.search(rx, text) is None

    table = RuleTable([([("regex", 0, 0)], [])], ["k"], [], [pattern], lie)
    selected = table.select(trace.spans, trace.children)
    wrong = []
    for span, index in zip(trace.spans, selected, strict=True):
        text = span.attributes["k"]
        truth = safe_regex.search(rx, text) is not None
        expected = (not truth) if text in asked else truth
        if (index == 0) != expected:
            wrong.append(text)
    assert not wrong, f"/{pattern}/ answered wrongly on {[t[:80] for t in wrong[:5]]!r}"
    return len(trace.spans), len(asked)


@pytest.mark.parametrize("pattern", ADVERSARIAL)
def test_adversarial_patterns(pattern: str) -> None:
    _native_answers(pattern)


def test_every_convention_regex_on_captured_and_generated_texts() -> None:
    total = asked = 0
    for pattern in _convention_patterns():
        texts, host = _native_answers(pattern)
        total += texts
        asked += host
    # The point of the analysis: almost every text is answered without Python.
    assert asked < total // 50, (asked, total)


@pytest.mark.parametrize(
    ("pattern", "asked"),
    [
        ("^invoke_agent( |$)", False),
        ("^ai\\.(generateText|streamText|generateObject|streamObject)$", False),
        ('"langgraph_node": "agent"[,}]', False),
        ("^(?!agent$)", False),
        ("^[a-cx-z]?é.$", False),
        # A part the subset does not model: the texts with the literals go to Python.
        ("^autogen \\w*Runtime$", True),
        ("(?i)agent", True),
    ],
)
def test_which_patterns_python_still_answers(pattern: str, asked: bool) -> None:
    texts = ["autogen SingleThreadedRuntime", "invoke_agent x", "agent", "AGENT", "éa"]
    spans = [
        SpanRecord(
            trace_id=TRACE_ID,
            span_id=f"{i + 1:016x}",
            parent_span_id="",
            name=t,
            attributes={"k": t},
        )
        for i, t in enumerate(texts)
    ]
    trace = build_trace(TRACE_ID, spans)
    table = RuleTable(
        [([("regex", 0, 0)], [])],
        ["k"],
        [],
        [pattern],
        lambda _index, text: safe_regex.search(pattern, text) is not None,
    )
    table.select(trace.spans, trace.children)
    assert (table.host_searches > 0) == asked
