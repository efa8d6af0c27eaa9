"""The cut length's longest-text scan is the core's (``native/python/src/limits.rs``): held
to the Python definition it replaced, kept here as the specification, on random spans built
to hit its corners (texts of equal length differing only in digits, words longer than the
texts, nesting in dicts, lists and tuples, ``str`` subclasses, lone surrogates, prefixes
matched as ``str.startswith`` matches, event attributes, log-based events)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from otel_oracles._native import SourceScan, cut_length
from otel_oracles.mapping._limits import MIN_CUT_LENGTH, MIN_CUT_VALUES

_NO_DIGITS = str.maketrans("", "", "0123456789")


@dataclass
class Event:
    name: str
    attributes: dict[str, Any]
    from_log: bool = False


@dataclass
class Span:
    attributes: dict[str, Any]
    events: list[Event] = field(default_factory=list)


@dataclass
class Sources:
    keys: frozenset[str]
    prefixes: tuple[str, ...]
    events: tuple[tuple[frozenset[str], str | None], ...]

    def scan(self) -> SourceScan:
        return SourceScan(self.keys, list(self.prefixes), [(sorted(n), k) for n, k in self.events])


def spec_values(sources: Sources, span: Span) -> list[Any]:
    """``_limits._source_values`` as it was."""
    attributes = span.attributes
    if sources.prefixes:
        values = [
            attributes[k] for k in attributes if k in sources.keys or k.startswith(sources.prefixes)
        ]
    else:
        values = [attributes[k] for k in attributes if k in sources.keys]
    for names, key in sources.events:
        for event in span.events:
            if event.name in names and not event.from_log:
                if key is None:
                    values.extend(event.attributes.values())
                else:
                    values.append(event.attributes.get(key))
    return values


def spec_cut(pairs: list[tuple[Span, Sources]]) -> int | None:
    """``_limits._Longest`` as it was: every ``str`` (exact type) in the values, nested in
    exact dicts' values, lists and tuples."""
    longest = longest_word = 0
    at_longest: set[str] = set()
    stack: list[Any] = [v for span, sources in pairs for v in spec_values(sources, span)]
    while stack:
        item = stack.pop()
        kind = item.__class__
        if kind is str:
            size = len(item)
            if size < longest:
                continue
            if " " not in item:
                longest_word = max(longest_word, size)
            elif size > longest:
                longest, at_longest = size, {item.translate(_NO_DIGITS)}
            elif len(at_longest) < MIN_CUT_VALUES:
                at_longest.add(item.translate(_NO_DIGITS))
        elif kind is dict:
            stack.extend(item.values())
        elif kind is list or kind is tuple:
            stack.extend(item)
    if longest >= MIN_CUT_LENGTH and len(at_longest) >= MIN_CUT_VALUES and longest_word <= longest:
        return longest
    return None


class Text(str):
    """A ``str`` subclass: not a text the scan reads."""


def random_text(rng: random.Random, length: int) -> str:
    alphabet = "ab c1 2\u00e9\u4e2d\ud800" if rng.random() < 0.2 else "ab c12"
    return "".join(rng.choice(alphabet) for _ in range(length))


def random_value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    length = rng.choice([0, 5, 15, 16, 17, 20, 20, 20, 24])
    if roll < 0.45 or depth > 2:
        text = random_text(rng, length)
        if rng.random() < 0.3:  # one text of a fixed length, counters aside
            text = ("retry after timeout " + str(rng.randint(0, 9)))[:length] or text
        return Text(text) if rng.random() < 0.05 else text
    if roll < 0.6:
        return rng.choice([None, 3, 2.5, True, b"bytes with space 123"])
    if roll < 0.75:
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if roll < 0.85:
        return tuple(random_value(rng, depth + 1) for _ in range(rng.randint(0, 3)))
    return {random_text(rng, 3): random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))}


KEYS = ("a", "b", "llm.x", "llm.xy", "gen", "gen.1", "other", "\ud800k", "llm.\ud800")


def drafts(pairs: list[tuple[Span, Sources]], rng: random.Random | None = None) -> list[Any]:
    """The pairs as the mapper's drafts, and a few drafts the scan leaves out: a call seen
    only in a model's messages (no span) and a synthesized one."""
    out: list[Any] = [
        SimpleNamespace(span=span, synthesized=False, rule=SimpleNamespace(source_scan=s.scan()))
        for span, s in pairs
    ]
    if rng is not None and pairs:
        span, s = rng.choice(pairs)
        loud = Span({k: "x y " * 40 for k in span.attributes}, span.events)
        rule = SimpleNamespace(source_scan=s.scan())
        out.append(SimpleNamespace(span=loud, synthesized=True, rule=rule))
        out.append(SimpleNamespace(span=None, synthesized=False, rule=rule))
    return out


def random_case(rng: random.Random) -> list[tuple[Span, Sources]]:
    pairs = []
    for _ in range(rng.randint(1, 4)):
        sources = Sources(
            frozenset(rng.sample(["a", "b", "gen", "missing"], rng.randint(0, 3))),
            tuple(rng.sample(["llm.x", "gen.", "\ud800"], rng.randint(0, 2))),
            tuple(
                (frozenset(rng.sample(["e1", "e2"], rng.randint(1, 2))), rng.choice([None, "a"]))
                for _ in range(rng.randint(0, 2))
            ),
        )
        span = Span(
            {k: random_value(rng) for k in rng.sample(KEYS, rng.randint(0, len(KEYS)))},
            [
                Event(
                    rng.choice(["e1", "e2", "e3"]),
                    {k: random_value(rng) for k in rng.sample(["a", "b"], rng.randint(0, 2))},
                    from_log=rng.random() < 0.3,
                )
                for _ in range(rng.randint(0, 3))
            ],
        )
        pairs.append((span, sources))
    return pairs


@pytest.mark.parametrize("seed", range(8))
def test_the_core_scan_is_the_python_definition(seed: int) -> None:
    rng = random.Random(seed)
    cuts = 0
    for _ in range(1500):
        pairs = random_case(rng)
        want = spec_cut(pairs)
        got = cut_length(drafts(pairs, rng), MIN_CUT_VALUES, MIN_CUT_LENGTH)
        assert got == want, pairs
        cuts += want is not None
    assert cuts > 20  # the cases reach the cut, not only its absence


def test_texts_differing_only_in_digits_are_one_text() -> None:
    scan = Sources(frozenset({"a", "b", "c"}), (), ())
    one = Span({"a": "timed out (attempt 1) now", "b": "timed out (attempt 2) now"})
    assert cut_length(drafts([(one, scan)]), MIN_CUT_VALUES, MIN_CUT_LENGTH) is None
    two = Span({"a": "timed out (attempt 1) now", "b": "timed out (attempx 2) now"})
    assert cut_length(drafts([(two, scan)]), MIN_CUT_VALUES, MIN_CUT_LENGTH) == 25
    longer_word = Span({**two.attributes, "c": "x" * 26})
    assert cut_length(drafts([(longer_word, scan)]), MIN_CUT_VALUES, MIN_CUT_LENGTH) is None
