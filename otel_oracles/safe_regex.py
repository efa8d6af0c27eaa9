"""Run a regex on untrusted text: the one place that does it.

Traces are untrusted input (DESIGN.md section 8), but the patterns applied to them come from
contracts and conventions, which anybody may write. ``re`` backtracks without limit: a pattern
such as ``(a|aa)+b`` or a quadratic one on a 50 KB tool result stalls grading for minutes.
Every regex over trace content therefore goes through this module, which runs it with the
``regex`` engine under a time budget. ``regex`` (version 0 mode, its default) keeps Python
``re`` syntax and semantics (lookarounds, back-references, inline flags, ``MULTILINE``), which
contracts and AgentBench ``assertion_exists`` rely on and a linear engine such as RE2 would
refuse; it also rejects the common catastrophic shapes quickly on its own. What it cannot make
fast stops at the budget and raises ``RegexBudgetExceeded``, which the evaluator reports as an
``error`` result of the one check that asked, while the other checks carry on.

Patterns are compiled once per (pattern, flags) and kept in a bounded cache.

The one exception is the conventions' rule table: the compiled core answers a rule's regex
itself where its analysis of the pattern proves this engine's answer (a literal, ``^``/``$``
anchors, alternations of them; or "no match" for a text lacking a literal every match needs,
see ``native/core/src/rule_regex.rs``), and calls ``search`` here for every other text. The
meaning of a pattern stays this engine's.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import regex as _engine

from otel_oracles.errors import OtelOraclesError

ENGINE_VERSION: str = _engine.__version__
"""The engine's version: a pattern compiles, and means, what this version says. Whatever
remembers that a pattern compiled (the conventions cache, ``mapping/_cache.py``) keys it by
this, so another version checks it again."""

IGNORECASE: int = _engine.IGNORECASE
MULTILINE: int = _engine.MULTILINE
DOTALL: int = _engine.DOTALL

BUDGET_S = 1.0
"""Seconds one regex operation may take on one text. Ordinary patterns on ordinary traces take
microseconds; a second is far beyond any honest match and short enough that a hostile trace
costs a worker one second per check, not minutes."""

Pattern = Any
"""A compiled ``regex`` pattern (the engine ships no type information)."""

Match = Any
"""A ``regex`` match object."""


class RegexBudgetExceeded(OtelOraclesError):
    """A regex did not finish within ``BUDGET_S`` on the text it was given."""


class RegexSyntaxError(ValueError):
    """A pattern the engine refuses; the message says why."""


@functools.lru_cache(maxsize=1024)
def compile_pattern(pattern: str, flags: int = 0) -> Pattern:
    """The compiled pattern (cached). Raises ``RegexSyntaxError`` for an invalid pattern, so
    contracts and conventions are checked at load time with the engine that will run them."""
    try:
        return _engine.compile(pattern, flags)
    except _engine.error as exc:
        raise RegexSyntaxError(str(exc)) from None


def syntax_error(pattern: str, flags: int = 0) -> str | None:
    """Why ``pattern`` does not compile, or ``None`` when it does."""
    try:
        compile_pattern(pattern, flags)
    except RegexSyntaxError as exc:
        return str(exc)
    return None


LITERAL_WORK = 10_000_000
"""Text length times pattern length up to which a literal pattern runs without the budget's
clock. The engine's timeout reads the process's CPU clock when an operation starts and when
it ends, two system calls (~1.5 µs of CPU, several times that on a loaded machine) against
well under a microsecond for the search itself on the short texts checks usually search
(docs/performance.md, "The checks stage, cheaper per verdict"). A literal (letters, digits
and ``_`` only, no flag that changes how it compares) cannot backtrack: the engine's search
for it compares at most every pattern character at every text position, so under this bound
it ends within milliseconds whatever the text, and nothing needs timing. Every other
pattern, and a literal over a longer text, keeps the budget."""

_PLAIN_FLAGS = _engine.UNICODE | _engine.ASCII | _engine.V0 | _engine.MULTILINE | _engine.DOTALL
"""Flags that leave a literal's comparisons as they are (``IGNORECASE``, ``FULLCASE``,
``BESTMATCH``, ``POSIX`` and the like do not)."""

_UNTIMED: dict[Pattern, int] = {}
"""Compiled pattern -> the longest text it may run on without the clock (-1: none)."""

_UNTIMED_LIMIT = 4096


def _untimed_chars(rx: Pattern) -> int:
    """How long a text ``rx`` may search untimed (``LITERAL_WORK``): -1 (not even an empty
    one) unless it is a literal. Decided once per compiled pattern."""
    try:
        return _UNTIMED[rx]
    except KeyError:
        pass
    text = rx.pattern
    literal = (
        isinstance(text, str)
        and text.isascii()
        and text.replace("_", "").isalnum()
        and not rx.flags & ~_PLAIN_FLAGS
    )
    chars = LITERAL_WORK // len(text) if literal else -1
    if len(_UNTIMED) >= _UNTIMED_LIMIT:
        _UNTIMED.clear()  # patterns made at run time: keep the table bounded
    _UNTIMED[rx] = chars
    return chars


def _over_budget(pattern: Pattern, text: str | bytes) -> RegexBudgetExceeded:
    return RegexBudgetExceeded(
        f"regex /{pattern.pattern}/ did not finish within its {BUDGET_S:g} s budget "
        f"on {len(text):,} characters"
    )


def search(pattern: str | Pattern, text: str, flags: int = 0, pos: int = 0) -> Match | None:
    """``re.search`` under the budget."""
    rx = compile_pattern(pattern, flags) if isinstance(pattern, str) else pattern
    if len(text) <= _untimed_chars(rx):
        return rx.search(text, pos)
    try:
        return rx.search(text, pos, timeout=BUDGET_S)
    except TimeoutError:
        raise _over_budget(rx, text) from None


def match(pattern: str | Pattern, text: str, flags: int = 0) -> Match | None:
    """``re.match`` under the budget."""
    rx = compile_pattern(pattern, flags) if isinstance(pattern, str) else pattern
    if len(text) <= _untimed_chars(rx):
        return rx.match(text)
    try:
        return rx.match(text, timeout=BUDGET_S)
    except TimeoutError:
        raise _over_budget(rx, text) from None


def fullmatch(pattern: str | Pattern, text: str, flags: int = 0) -> Match | None:
    """``re.fullmatch`` under the budget."""
    rx = compile_pattern(pattern, flags) if isinstance(pattern, str) else pattern
    if len(text) <= _untimed_chars(rx):
        return rx.fullmatch(text)
    try:
        return rx.fullmatch(text, timeout=BUDGET_S)
    except TimeoutError:
        raise _over_budget(rx, text) from None


def finditer(pattern: str | Pattern, text: str | bytes, flags: int = 0) -> Iterator[Match]:
    """``re.finditer`` under one budget for the whole scan (``text`` may be bytes when the
    pattern is)."""
    rx = compile_pattern(pattern, flags) if isinstance(pattern, str) else pattern
    try:
        yield from rx.finditer(text, timeout=BUDGET_S)
    except TimeoutError:
        raise _over_budget(rx, text) from None


def escape(text: str) -> str:
    """``re.escape`` for this engine."""
    escaped: str = _engine.escape(text)
    return escaped
