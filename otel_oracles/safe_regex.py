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

Patterns are compiled once per (pattern, flags) and kept in a bounded cache. Reading the clock
costs more than most searches the checks make, so a pattern whose backtracking this module
can bound (a small subset, ``_Parser``) runs without it on texts within that bound
(``UNTIMED_WORK``); the engine still answers.

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


UNTIMED_WORK = 10_000_000
"""Engine steps up to which an operation runs without the budget's clock. The engine's timeout
reads the process's CPU clock when an operation starts and when it ends, system calls that
cost several times the search itself on the short texts the checks usually search (~10 µs
against ~1.5 µs; docs/performance-history.md, "The checks stage, cheaper per verdict" and "Regexes
of the checks without the clock"). A pattern in a small subset (``_Parser``) has a
backtracking search whose steps on a text of n characters are bounded by a polynomial in n
(``_steps``, ``GUARD_SPAN``); where that bound is within this figure the operation ends
within milliseconds whatever the text, and nothing needs timing. Every other pattern, and
a pattern over a text longer than its bound allows, keeps the budget. The pattern still
means what the engine says: the analysis only decides whether the clock is read."""

_PLAIN_FLAGS = (
    _engine.UNICODE
    | _engine.ASCII
    | _engine.V0
    | _engine.MULTILINE
    | _engine.DOTALL
    | _engine.IGNORECASE
)
"""Flags that change no step count beyond a constant (``FULLCASE`` lets one character match
several, ``BESTMATCH``, ``POSIX``, ``VERBOSE``, ``V1`` and the like change the search or the
syntax: such a pattern keeps the budget)."""

_UNTIMED: dict[Pattern, tuple[int, int]] = {}
"""Compiled pattern -> the longest text a search (and ``finditer``) and a match (and
``fullmatch``) may run on without the clock (-1: none)."""

_UNTIMED_LIMIT = 4096


class _NotPlain(Exception):
    """A pattern outside the subset ``_Parser`` reads: it keeps the budget."""


# The parsed subset, as tuples:
#   ("eat", cost)           one character: a literal, ``.``, ``\w``-style class or a set
#                           (cost: its items, 1 for a single character)
#   ("at",)                 a zero-width test: ``^``, ``$``, ``\b``, ``\B``, ``\A``, ``\Z``
#   ("seq", [node, ...])    a concatenation; ("alt", [node, ...]) an alternation
#   ("look", node)          a lookahead, positive or negative
#   ("rep", node)           ``*`` or ``+`` over a fixed run of characters, greedy, lazy or
#                           possessive (``x?`` is read as the alternation ``x|``)
_Node = tuple[Any, ...]

_CLASS_ESCAPES = frozenset("dDwWsS")
_ZERO_WIDTH_ESCAPES = frozenset("bBAZ")
_CHAR_ESCAPES = frozenset("ntr")
_SET_REFUSED = frozenset("[&~|")
"""Inside a set: ``[`` opens a POSIX class or a nested set, and ``&&``, ``~~``, ``||``, ``--``
are set operations in version 1; refused rather than told apart."""


class _Parser:
    r"""A recursive descent over the subset: literal characters, escaped punctuation,
    ``\n`` ``\t`` ``\r``, ``\d \w \s`` and their negations, simple sets, ``.``, ``^``,
    ``$``, ``\b``, ``\B``, ``\A``, ``\Z``, groups (capturing, ``(?:``), lookaheads, ``|``,
    ``?`` over anything in the subset, and ``*`` ``+`` (lazy or possessive too) over a group or
    item that matches a fixed run of at least one character with no choice inside. Anything
    else (braces, other escapes, back-references, lookbehinds, atomic groups, inline flags
    past the start, conditionals, comments) raises ``_NotPlain``: it may mean something the
    step bound does not model, and the pattern keeps the budget."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.depth = 0

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def parse(self) -> _Node:
        flags = _engine.match(r"\(\?[ims]+\)", self.text)
        if flags is not None:
            self.pos = flags.end()
        node = self.alternation()
        if self.pos != len(self.text):
            raise _NotPlain
        return node

    def alternation(self) -> _Node:
        branches = [self.concat()]
        while self.peek() == "|":
            self.pos += 1
            branches.append(self.concat())
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def concat(self) -> _Node:
        items: list[_Node] = []
        while self.peek() not in ("", "|", ")"):
            item = self.atom()
            if self.peek() in ("*", "+", "?"):
                item = self.repeat(item)
            items.append(item)
        return ("seq", items)

    def repeat(self, item: _Node) -> _Node:
        optional = self.peek() == "?"
        self.pos += 1
        if self.peek() in ("?", "+"):  # lazy or possessive: no more steps than greedy
            self.pos += 1
        if self.peek() in ("*", "+", "?", "{"):
            raise _NotPlain
        if optional:  # x? is x|(nothing), whatever x holds
            return ("alt", [item, ("seq", [])])
        if _fixed_width(item) < 1:
            raise _NotPlain  # a choice inside a repeat, or an iteration that eats nothing
        return ("rep", item)

    def atom(self) -> _Node:
        c = self.peek()
        self.pos += 1
        if c == "(":
            return self.group()
        if c == "[":
            return self.charset()
        if c == "\\":
            return self.escape()
        if c in ("^", "$"):
            return ("at",)
        if c in ("*", "+", "?", "{", "}", "]"):
            raise _NotPlain
        return ("eat", 1)

    def group(self) -> _Node:
        look = False
        if self.peek() == "?":
            kind = self.text[self.pos + 1 : self.pos + 2]
            if kind not in (":", "=", "!"):
                raise _NotPlain
            look = kind != ":"
            self.pos += 2
        self.depth += 1
        if self.depth > 32:
            raise _NotPlain
        body = self.alternation()
        self.depth -= 1
        if self.peek() != ")":
            raise _NotPlain
        self.pos += 1
        return ("look", body) if look else body

    def escape(self) -> _Node:
        c = self.peek()
        self.pos += 1
        if c in _CLASS_ESCAPES or c in _CHAR_ESCAPES:
            return ("eat", 1)
        if c in _ZERO_WIDTH_ESCAPES:
            return ("at",)
        if c == "" or c.isalnum() or not c.isascii():
            raise _NotPlain  # back-references, \p{..}, \L<..>, \G, \K, \x.. and the like
        return ("eat", 1)

    def charset(self) -> _Node:
        if self.peek() == "^":
            self.pos += 1
        items = 0
        while True:
            c = self.peek()
            self.pos += 1
            if c == "" or c in _SET_REFUSED or (c == "]" and items == 0):
                raise _NotPlain
            if c == "]":
                return ("eat", items)
            if c == "-" and self.peek() == "-":
                raise _NotPlain
            if c == "\\":
                e = self.peek()
                self.pos += 1
                if e == "" or (e.isalnum() and e not in _CLASS_ESCAPES and e not in _CHAR_ESCAPES):
                    raise _NotPlain
                if not e.isascii():
                    raise _NotPlain
            items += 1


def _fixed_width(node: _Node) -> int:
    """Characters ``node`` always eats when it has no choice inside, else -1."""
    kind = node[0]
    if kind == "eat":
        return 1
    if kind == "seq":
        widths = [_fixed_width(n) for n in node[1]]
        return -1 if any(w < 0 for w in widths) else sum(widths)
    return -1  # a choice (alternation, repeat), or a zero-width test inside a repeat


def _cost(node: _Node) -> int:
    """Steps of one pass over a node with no choice inside."""
    if node[0] == "eat":
        return int(node[1])
    return sum(_cost(n) for n in node[1])


_Poly = tuple[int, ...]
"""A polynomial in the text's length n: its coefficients, lowest degree first."""


def _add(a: _Poly, b: _Poly) -> _Poly:
    if len(a) < len(b):
        a, b = b, a
    return tuple(x + (b[i] if i < len(b) else 0) for i, x in enumerate(a))


def _mul(a: _Poly, b: _Poly) -> _Poly:
    out = [0] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += x * y
    return tuple(out)


def _steps(node: _Node) -> tuple[_Poly, _Poly]:
    """(steps, paths out) of a backtracking walk of ``node`` from one position, entered by
    one path, as polynomials in the text's length n (both scale with the paths that enter).
    Every path re-runs what follows a choice, so a repeat multiplies the paths by the
    iterations it may take (at most n + 1) and an alternation (``x?`` included) adds its
    branches' paths; each path pays each item's cost once, a repeat's body once per
    iteration. A lookahead is charged its own walk per path and, as if it could be
    backtracked into, multiplies the paths by its own: an upper bound. Worked out once per
    pattern, so the longest untimed text is found by evaluating two polynomials."""
    kind = node[0]
    if kind == "eat":
        return (int(node[1]),), (1,)
    if kind == "at":
        return (1,), (1,)
    if kind == "seq":
        total: _Poly = (0,)
        ways: _Poly = (1,)
        for item in node[1]:
            steps, out = _steps(item)
            total = _add(total, _mul(ways, steps))
            ways = _mul(ways, out)
        return total, ways
    if kind == "alt":
        total, ways = (0,), (0,)
        for branch in node[1]:
            steps, out = _steps(branch)
            total = _add(total, _add((1,), steps))
            ways = _add(ways, out)
        return total, ways
    if kind == "look":
        steps, out = _steps(node[1])
        return _add((1,), steps), out
    # "rep": at most n iterations of a body that eats at least one character each
    return (1, _cost(node[1]) + 1), (1, 1)


GUARD_SPAN = 256
r"""A repeat's backtracking step may cost up to n / ``GUARD_SPAN`` steps more on a text of n
characters: the engine records the positions a repeat has tried in sorted lists of spans
(its repeat guards), and a text that keeps them from merging (``abab...``) makes each
insertion move the whole list. ``\w*a$`` matched against ``abab...b!`` is quadratic for this
reason although it backtracks linearly: 60 ms at 40,000 characters, 1.9 s at 200,000. 256 is
several times the ratio measured between one step and one moved guard entry."""


def _repeats(node: _Node) -> bool:
    """Whether ``node`` holds a ``*`` or ``+`` (the engine keeps guards for those only)."""
    if node[0] == "rep":
        return True
    if node[0] in ("seq", "alt"):
        return any(_repeats(n) for n in node[1])
    return node[0] == "look" and _repeats(node[1])


def _longest_untimed(steps: _Poly, guarded: bool, starts: bool) -> int:
    """The longest text on which a pattern's step bound from one position (``steps``, with
    the repeat guards' charge when ``guarded``), times the start positions a search tries
    (``starts``), stays within ``UNTIMED_WORK``; -1 when not even an empty one."""
    per_start = _add((1,), steps)  # + 1: a start that fails at once is a step too

    def work(n: int) -> int:
        steps = 0
        for coefficient in reversed(per_start):
            steps = steps * n + coefficient
        steps *= (n + 1) if starts else 1
        return steps + steps * n // GUARD_SPAN if guarded else steps

    if work(0) > UNTIMED_WORK:
        return -1
    low, high = 0, UNTIMED_WORK  # a search's work(n) > n; a match's may not grow
    while low < high:
        mid = (low + high + 1) // 2
        if work(mid) <= UNTIMED_WORK:
            low = mid
        else:
            high = mid - 1
    return low


def _untimed_chars(rx: Pattern) -> tuple[int, int]:
    """How long a text ``rx`` may search, and match, untimed (``UNTIMED_WORK``): -1 for
    each (not even an empty one) unless the pattern is in ``_Parser``'s subset with plain
    flags. Decided once per compiled pattern. Its callers read the table
    first (``_UNTIMED.get(rx) or ...``): a pattern decided already then costs no frame of
    this function (``search`` runs ~2,300 times a grade of data-2000)."""
    try:
        return _UNTIMED[rx]
    except KeyError:
        pass
    chars = (-1, -1)
    if isinstance(rx.pattern, str) and not rx.flags & ~_PLAIN_FLAGS:
        try:
            node = _Parser(rx.pattern).parse()
        except _NotPlain:
            pass
        else:
            steps, guarded = _steps(node)[0], _repeats(node)
            chars = (
                _longest_untimed(steps, guarded, True),
                _longest_untimed(steps, guarded, False),
            )
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
    if len(text) <= (_UNTIMED.get(rx) or _untimed_chars(rx))[0]:
        return rx.search(text, pos)
    try:
        return rx.search(text, pos, timeout=BUDGET_S)
    except TimeoutError:
        raise _over_budget(rx, text) from None


def match(pattern: str | Pattern, text: str, flags: int = 0) -> Match | None:
    """``re.match`` under the budget."""
    rx = compile_pattern(pattern, flags) if isinstance(pattern, str) else pattern
    if len(text) <= (_UNTIMED.get(rx) or _untimed_chars(rx))[1]:
        return rx.match(text)
    try:
        return rx.match(text, timeout=BUDGET_S)
    except TimeoutError:
        raise _over_budget(rx, text) from None


def fullmatch(pattern: str | Pattern, text: str, flags: int = 0) -> Match | None:
    """``re.fullmatch`` under the budget."""
    rx = compile_pattern(pattern, flags) if isinstance(pattern, str) else pattern
    if len(text) <= (_UNTIMED.get(rx) or _untimed_chars(rx))[1]:
        return rx.fullmatch(text)
    try:
        return rx.fullmatch(text, timeout=BUDGET_S)
    except TimeoutError:
        raise _over_budget(rx, text) from None


def finditer(pattern: str | Pattern, text: str | bytes, flags: int = 0) -> Iterator[Match]:
    """``re.finditer`` under one budget for the whole scan (``text`` may be bytes when the
    pattern is)."""
    rx = compile_pattern(pattern, flags) if isinstance(pattern, str) else pattern
    if isinstance(text, str) and len(text) <= (_UNTIMED.get(rx) or _untimed_chars(rx))[0]:
        yield from rx.finditer(text)
        return
    try:
        yield from rx.finditer(text, timeout=BUDGET_S)
    except TimeoutError:
        raise _over_budget(rx, text) from None


def escape(text: str) -> str:
    """``re.escape`` for this engine."""
    escaped: str = _engine.escape(text)
    return escaped
