"""The evidence probes' per-trajectory work done by the core (``native/python/src/evidence.rs``):
``is_placeholder`` and ``group_steps`` give what the Python definitions they replaced gave.

``_reference_placeholder`` is that Python definition, kept here as the specification; the
inputs are made to reach every branch of it (every Python whitespace character and some
that look like one, the spellings in mixed case, stars, characters that lower-case
oddly, lone surrogates, subclasses of ``str``, ``dict`` and ``list``).
"""

from __future__ import annotations

import random
from collections import OrderedDict, UserDict
from typing import Any

import pytest

from otel_oracles.grade.evidence import Evidence, group_steps, is_placeholder
from otel_oracles.model.step import TOOLISH_KINDS, Step, StepKind, Trajectory

_WORDS = frozenset(
    {"__redacted__", "[redacted]", "<redacted>", "redacted", "[filtered]", "<omitted>", "<elided>"}
)


def _reference_placeholder(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, str):
        core = value.strip()
        return (
            not core or core.lower() in _WORDS or (len(core) >= 3 and core.count("*") == len(core))
        )
    if isinstance(value, dict) and value:
        return all(_reference_placeholder(v) for v in value.values())
    if isinstance(value, list) and value:
        return all(_reference_placeholder(v) for v in value)
    return False


_PIECES = [
    *(chr(c) for c in range(0x110000) if chr(c).isspace()),
    "\u200b", "\u180e", "\ufeff", "\x00", "\u212a", "\u0130", "\udc80", "\ud800",
    "*", "**", "***", "_", "[", "<", "r", "R", "x", "é",
    "__REDACTED__", "[ReDaCtEd]", "<redacted>", "REDACTED", "[filtered]", "<Omitted>",
    "<elided>", "redacte", "[redacted", "redacted]",
]  # fmt: skip


class _Text(str):
    def strip(self, chars: str | None = None) -> str:  # never called: the text is read
        raise AssertionError("the core reads a str subclass's characters, not its methods")


def test_placeholders_of_random_texts_are_the_reference_answers() -> None:
    rng = random.Random(18)
    for _ in range(40_000):
        text = "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 5)))
        assert is_placeholder(text) == _reference_placeholder(text), repr(text)
        assert is_placeholder(_Text(text)) == _reference_placeholder(text), repr(text)


def test_containers_and_other_values_are_decided_as_the_reference_decides() -> None:
    rng = random.Random(4)
    leaves: list[Any] = ["", " ", "[redacted]", "***", "x", None, 0, 0.0, False, b"", (), {}, []]

    def value(depth: int) -> Any:
        roll = rng.random()
        if depth > 3 or roll < 0.4:
            return rng.choice(leaves)
        items = [value(depth + 1) for _ in range(rng.randint(0, 3))]
        if roll < 0.6:
            return items
        if roll < 0.7:
            return tuple(items)  # a tuple is a value, never a container of placeholders
        mapping = {f"k{i}": item for i, item in enumerate(items)}
        return OrderedDict(mapping) if roll < 0.8 else mapping

    for _ in range(5_000):
        v = value(0)
        assert is_placeholder(v) == _reference_placeholder(v), v
    assert not is_placeholder(UserDict({"a": ""}))  # no dict: a value like any other


def test_nesting_is_read_to_a_thousand_levels_and_refused_past_them() -> None:
    def nested(levels: int) -> Any:
        value: Any = "[REDACTED]"
        for _ in range(levels):
            value = [value]
        return value

    assert is_placeholder(nested(1_000))
    with pytest.raises(RecursionError):
        is_placeholder(nested(1_001))
    cycle: list[Any] = []
    cycle.append(cycle)
    with pytest.raises(RecursionError):
        is_placeholder(cycle)
    assert not is_placeholder(["content", nested(2_000)]), "decided before the deep item"


def test_steps_whose_kind_is_the_plain_string_group_as_their_members_do() -> None:
    kinds = [k.value for k in StepKind] + list(StepKind)
    rng = random.Random(9)
    for _ in range(300):
        steps = []
        for i in range(rng.randint(0, 10)):
            kind = rng.choice(kinds)
            values = {"index": i, "kind": kind, "tool": rng.choice([None, " ", "search"])}
            if rng.random() < 0.2:
                values["raw"] = {"tool": "x"}
            values["synthesized"] = rng.random() < 0.5
            steps.append(Step.from_normalized(values))
        t = Trajectory(steps=steps)
        groups = group_steps(t.steps)
        assert list(groups.calls) == [s for s in steps if s.kind in TOOLISH_KINDS]
        assert list(groups.generations) == [s for s in steps if s.kind == StepKind.GENERATION]
        assert list(groups.agents) == [s for s in steps if s.kind == StepKind.AGENT]
        assert list(groups.handoffs) == [s for s in steps if s.kind == StepKind.HANDOFF]
        assert list(groups.nameless) == [
            s for s in groups.calls if s.raw is None and is_placeholder(s.tool)
        ]
        assert groups.tool_spans == any(not s.synthesized for s in groups.calls)
        assert groups.all_raw == (bool(steps) and all(s.raw is not None for s in steps))
        assert Evidence(t).groups == groups


def test_each_probe_runs_once_per_trajectory_whatever_the_checks_ask() -> None:
    t = Trajectory(steps=[Step.from_normalized({"index": 0, "kind": StepKind.TOOL_CALL})])
    ev = Evidence(t)
    first = ev.lacking(("tool_arguments", "tool_names"))
    assert [name for name, _ in first] == ["tool_arguments", "tool_names"]
    assert ev.lacking(("tool_names",)) == first[1:]
    assert ev.probed("tool_names") is ev.probed("tool_names")
    assert ev.probed("steps") is None
    assert ev.gaps(("steps", "tool_arguments")) == [first[0][1]]
