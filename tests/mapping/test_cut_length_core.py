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


def test_more_rule_and_key_pairs_than_the_memo_holds_are_each_read_by_their_rule() -> None:
    """The core keeps each rule's answer per key for the call in a table of fixed size
    (1,024 entries), so pairs push each other out: every answer must still be its own rule's.
    Each rule reads a third of 3,000 keys the spans share (by key or by prefix); a value read
    is a text of 100 characters, one not read a longer one, so any key answered for another
    rule, or for another key, changes the cut."""
    keys = [f"k{i}" for i in range(1500)] + [f"p.{i}" for i in range(1500)]
    rules = [
        Sources(frozenset(k for i, k in enumerate(keys) if i % 3 == 0), (), ()),
        Sources(frozenset(), ("p.",), ()),
        Sources(frozenset(k for i, k in enumerate(keys) if i % 3 == 1), ("k1",), ()),
    ]
    pairs = []
    for n in range(12):
        sources = rules[n % 3]
        reads = set(spec_values(sources, Span({k: k for k in keys})))
        values = {
            k: f"{'read' if k in reads else 'left out'} {n} {k} ".ljust(
                100 if k in reads else 150, "x"
            )
            for k in keys
        }
        pairs.append((Span(values), sources))
    assert spec_cut(pairs) == 100
    scans = [sources.scan() for sources in rules]  # one per rule, as a compiled set has
    shared = [
        SimpleNamespace(
            span=span, synthesized=False, rule=SimpleNamespace(source_scan=scans[n % 3])
        )
        for n, (span, _) in enumerate(pairs)
    ]
    assert cut_length(shared, MIN_CUT_VALUES, MIN_CUT_LENGTH) == 100


def test_a_key_whose_startswith_asks_for_a_cut_length_gets_its_own_answer() -> None:
    """A key the core cannot read as UTF-8 is matched by its own ``startswith``, which may
    run anything, a ``cut_length`` included: that inner call keeps its answers apart from
    the outer call's (the core's table of answers is in use) and both answers are right."""
    inner_scan = Sources(frozenset({"a", "b"}), (), ())
    inner = [(Span({"a": "one text with a space", "b": "two text with a space"}), inner_scan)]
    answers: list[int | None] = []

    class Key(str):
        def startswith(self, *args: Any) -> bool:
            answers.append(cut_length(drafts(inner), MIN_CUT_VALUES, MIN_CUT_LENGTH))
            return True

    outer_scan = Sources(frozenset({"x"}), ("p",), ())
    outer = Span({"x": "a long text, with spaces", Key("\ud800k"): "the other long text, yes"})
    assert cut_length(drafts([(outer, outer_scan)]), MIN_CUT_VALUES, MIN_CUT_LENGTH) == 24
    assert answers == [21]


@pytest.mark.parametrize("prefixes", [(), ("p.",)])
def test_a_str_subclass_key_and_values_among_numbers_are_read(
    prefixes: tuple[str, ...],
) -> None:
    """The value under a key equal to a source is read when the key is a ``str`` subclass
    (``key in keys`` finds it; the walk takes its slower path for such a dict), with or
    without prefixes; texts are found among numbers and ``None`` in nested containers (the
    core keeps one stack for them from value to value), and nothing under other keys is."""
    scan = Sources(frozenset({"a", "b"}), prefixes, ())
    texts = {
        Text("a"): "one text of twenty-six, aa",
        "b": [3, None, ("two text of twenty-six, bb", {"k": 2.5})],
        "c": "a text not read, longer than the others",
    }
    pairs = [(Span(texts), scan)]
    assert spec_cut(pairs) == 26
    assert cut_length(drafts(pairs), MIN_CUT_VALUES, MIN_CUT_LENGTH) == 26
    # The same values again, for a rule reading many keys, the stack used in between.
    many = Sources(frozenset({"a", "b", *(f"k{i}" for i in range(10))}), prefixes, ())
    few = [(Span({"a": texts[Text("a")], "b": texts["b"]}), many)]
    assert cut_length(drafts(few), MIN_CUT_VALUES, MIN_CUT_LENGTH) == spec_cut(few) == 26
