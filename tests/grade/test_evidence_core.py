"""The evidence probes' per-trajectory work done by the core (``native/python/src/evidence.rs``):
``is_placeholder``, ``group_steps`` and the facts of its typed view (``StepView``) give what
the Python definitions they replaced gave.

``_reference_placeholder`` is that Python definition, kept here as the specification; the
inputs are made to reach every branch of it (every Python whitespace character and some
that look like one, the spellings in mixed case, stars, characters that lower-case
oddly, lone surrogates, subclasses of ``str``, ``dict`` and ``list``).
"""

from __future__ import annotations

import bisect
import random
from collections import OrderedDict, UserDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from otel_oracles.grade.evidence import Evidence, group_steps, is_placeholder
from otel_oracles.grade.loader import compile_contract
from otel_oracles.grade.oracles.trace_common import nameless_twins
from otel_oracles.model.step import TOOLISH_KINDS, SpanRef, Step, StepKind, Trajectory
from otel_oracles.model.tool_name import first_match

ROOT = Path(__file__).resolve().parents[2]

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


def test_the_groups_are_the_views_own_read_only_tuples() -> None:
    """``Evidence.groups`` is the core's view itself, made once, its groups read as members
    (the same tuple at every read, no setter): no Python record copies them."""
    steps = [
        Step.from_normalized({"index": 0, "kind": StepKind.GENERATION}),
        Step.from_normalized({"index": 1, "kind": StepKind.TOOL_CALL, "tool": "search"}),
    ]
    ev = Evidence(Trajectory(steps=steps))
    view = ev.groups
    assert type(view).__name__ == "StepView" and ev.groups is view
    assert view.calls is view.calls and list(view.calls) == [steps[1]]
    assert ev.calls_of(()) is view.calls
    for name in ("calls", "generations", "agents", "handoffs", "nameless"):
        # A struct member, read as a slot is (a getter would be a call through PyO3's
        # trampoline at each of the ~46,000 reads of a grade).
        assert type(vars(type(view))[name]).__name__ == "member_descriptor"
        with pytest.raises(AttributeError):
            setattr(view, name, ())
    twins = nameless_twins(ev)  # every name recorded: nothing twinned
    assert not twins.twinned and not twins.twin_of


def test_steps_given_as_a_list_a_tuple_or_any_iterable_group_alike() -> None:
    """A list or tuple of steps is read in place, any other iterable through its iterator:
    the same groups."""
    steps = [
        Step.from_normalized({"index": 0, "kind": StepKind.GENERATION}),
        Step.from_normalized({"index": 1, "kind": StepKind.TOOL_CALL, "tool": "search"}),
        Step.from_normalized({"index": 2, "kind": StepKind.AGENT, "agent_name": "a"}),
    ]
    names = ("calls", "generations", "agents", "handoffs", "nameless")
    want = [getattr(group_steps(steps), name) for name in names]
    assert want[0] == (steps[1],) and want[1] == (steps[0],) and want[2] == (steps[2],)
    for given in (tuple(steps), (step for step in steps)):
        view = group_steps(given)  # type: ignore[arg-type]
        assert [getattr(view, name) for name in names] == want


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
        made = Evidence(t).groups  # the same view, made on first use
        assert (made.calls, made.generations, made.agents, made.handoffs, made.nameless) == (
            groups.calls,
            groups.generations,
            groups.agents,
            groups.handoffs,
            groups.nameless,
        )
        assert (made.tool_spans, made.all_raw) == (groups.tool_spans, groups.all_raw)


def _rekeyed(step: Step, order: str) -> Step:
    """``step`` with its ``__dict__`` rebuilt: its fields in reverse order, or keyed by
    texts equal to the field names but not the interned names themselves."""
    values = dict(step.__dict__)
    if order == "reversed":
        rebuilt = dict(reversed(list(values.items())))
    else:
        rebuilt = {"".join(list(name)): value for name, value in values.items()}
    object.__setattr__(step, "__dict__", rebuilt)
    return step


def test_fields_are_read_by_their_names_whatever_the_records_dict_order() -> None:
    """The core reads a record's field at the entry where records of its type keep it
    (``pydict.rs`` ``placed``), learned from the first record it reads: a record whose
    ``__dict__`` holds the fields in another order, or under keys equal to the names but
    not the same objects, is read by name all the same, before and after the others."""
    rng = random.Random(18)
    kinds = list(StepKind)
    for _ in range(200):
        steps = []
        for i in range(rng.randint(1, 8)):
            values = {
                "index": i,
                "kind": rng.choice(kinds),
                "tool": rng.choice([None, " ", "search", "fetch"]),
                "synthesized": rng.random() < 0.5,
                "status": rng.choice(["ok", "error", "unset"]),
            }
            step = Step.from_normalized(values)
            shape = rng.choice(["plain", "plain", "reversed", "copied"])
            steps.append(step if shape == "plain" else _rekeyed(step, shape))
        groups = group_steps(steps)
        assert list(groups.calls) == [s for s in steps if s.kind in TOOLISH_KINDS]
        assert list(groups.generations) == [s for s in steps if s.kind == StepKind.GENERATION]
        assert list(groups.agents) == [s for s in steps if s.kind == StepKind.AGENT]
        assert list(groups.nameless) == [
            s for s in groups.calls if s.raw is None and is_placeholder(s.tool)
        ]
        assert groups.tool_spans == any(not s.synthesized for s in groups.calls)
        t = Trajectory(steps=steps)
        assert all(a is b for a, b in zip(t.steps, steps, strict=True))
        ev = Evidence(t)
        lacking = dict(ev.lacking(("tool_arguments", "tool_outcomes")))
        assert ("tool_arguments" in lacking) == any(s.arguments is None for s in groups.calls)


def test_each_probe_runs_once_per_trajectory_whatever_the_checks_ask() -> None:
    t = Trajectory(steps=[Step.from_normalized({"index": 0, "kind": StepKind.TOOL_CALL})])
    ev = Evidence(t)
    first = ev.lacking(("tool_arguments", "tool_names"))
    assert [name for name, _ in first] == ["tool_arguments", "tool_names"]
    assert ev.lacking(("tool_names",)) == first[1:]
    assert ev.probed("tool_names") is ev.probed("tool_names")
    assert ev.probed("steps") is None
    assert ev.gaps(("steps", "tool_arguments")) == [first[0][1]]


def test_a_compiled_contract_and_its_checks_carry_their_plans() -> None:
    """The plan of a compiled contract's (and each check's) evidence names is made with it
    and kept on it: ``Evidence.lacking_of`` answers it as ``lacking`` answers the names, and
    keeps the answer per plan."""
    compiled = compile_contract(ROOT / "bench" / "contracts" / "any-agent.yaml")
    t = Trajectory(steps=[Step.from_normalized({"index": 0, "kind": StepKind.TOOL_CALL})])
    ev = Evidence(t)
    assert compiled.plan.names == compiled.evidence
    assert ev.lacking_of(compiled.plan) is ev.lacking_of(compiled.plan)
    assert ev.lacking_of(compiled.plan) == Evidence(t).lacking(compiled.evidence) != ()
    for check in compiled.checks:
        assert check.plan.names == check.evidence
        assert ev.lacking_of(check.plan) == Evidence(t).lacking(check.evidence)


# ---- the typed view's facts (``native/python/src/evidence/view.rs``) ---------------------------
#
# The Python definitions ``StepView`` replaced in ``grade/evidence.py``, kept here as its
# specification (their reasons are in ``Evidence.last_generation``, ``_run_error`` and
# ``_final_output_of``): ``_last_generation`` with ``_not_followed_while_open``,
# ``_run_error_step``, ``_last_run_agents``, the unread work of ``_stopped_short`` and
# ``_final_answer_calls`` with ``_structured_answers`` and ``_structured_objects``.


def _spec_order_key(step: Step) -> tuple[int, int]:
    return (step.end_ns if step.end_ns is not None else -1, step.index)


def _spec_not_followed_while_open(gens: Sequence[Step]) -> Sequence[Step]:
    starts = sorted(g.start_ns for g in gens if g.start_ns is not None)
    count = len(starts)
    kept: list[Step] = []
    for g in gens:
        start, end = g.start_ns, g.end_ns
        if start is not None and end is not None:
            after = bisect.bisect_right(starts, start)
            if after < count and starts[after] < end:
                continue
        kept.append(g)
    return kept or gens


def _spec_last_generation(gens: Sequence[Step]) -> Step | None:
    ordered = sorted(_spec_not_followed_while_open(gens), key=_spec_order_key)
    return ordered[-1] if ordered else None


def _spec_run_error_step(last: Step | None, agents: Sequence[Step]) -> Step | None:
    if last is not None and (last.status == "error" or "error" in (last.finish_reasons or ())):
        return last
    after = last.end_ns if last is not None and last.end_ns is not None else None
    ending = [a for a in agents if after is None or (a.end_ns is not None and a.end_ns >= after)]
    named = [a for a in ending if a.agent_name] or ending
    if not named:
        return None
    run = min(named, key=lambda a: (a.start_ns or 0, -(a.end_ns or 0), a.index))
    return run if run.status == "error" else None


def _spec_last_run_agents(agents: Sequence[Step]) -> list[Step]:
    ordered = sorted(agents, key=lambda s: (s.start_ns or 0, s.index))
    ended = [a for a in ordered if a.end_ns is not None]
    if not ended:
        return ordered
    last = max(ended, key=lambda a: (a.end_ns or 0, -(a.start_ns or 0)))
    return [a for a in ordered if (a.start_ns or 0) >= (last.start_ns or 0)]


def _spec_unread_work(calls: Sequence[Step], last: Step, answering: frozenset[int]) -> list[Step]:
    assert last.source is not None and last.end_ns is not None
    after = last.end_ns
    earlier = {
        s.tool
        for s in calls
        if not s.synthesized and s.tool is not None and s.end_ns is not None and s.end_ns <= after
    }
    return [
        s
        for s in calls
        if s.tool in earlier
        and id(s) not in answering
        and (
            (s.synthesized and s.source is not None and s.source.span_id == last.source.span_id)
            or (not s.synthesized and s.start_ns is not None and s.start_ns >= after)
        )
    ]


def _spec_final_answer_calls(
    steps: Sequence[Step], names: tuple[str, ...], calls: Sequence[Step], agents: Sequence[Step]
) -> list[Step]:
    delivered = []
    for agent in agents:
        answer = agent.attributes.get("structured_output")
        if agent.status != "error" and isinstance(answer, dict):
            delivered.append(answer)
    for step in steps:
        if step.kind is not StepKind.OTHER or step.status == "error":
            continue
        answer = step.attributes.get("structured_output")
        if isinstance(answer, dict):
            delivered.append(answer)
    found = [
        s
        for s in calls
        if s.attributes.get("delivers_answer")
        or (names and first_match(s.tool, names) is not None)
        or (delivered and s.synthesized and s.arguments is not None and s.arguments in delivered)
    ]
    return sorted(found, key=_spec_order_key)


class _Name(str):
    """A tool name of a ``str`` subclass: hashed and compared as ``str`` does."""


def _random_steps(rng: random.Random) -> list[Step]:
    kinds = [StepKind.GENERATION, StepKind.AGENT, StepKind.TOOL_CALL, StepKind.COMMAND]
    kinds += [StepKind.HANDOFF, StepKind.OTHER, "llm", "tool_call", "other"]
    big = 2**64 - 1  # an OTLP time past i64
    answers: list[Any] = [
        {"answer": "x"},
        {"answer": "y"},
        {},
        "text",
        [1],
        OrderedDict(answer="x"),
    ]

    def time() -> int | None:
        roll = rng.random()
        if roll < 0.15:
            return None
        if roll < 0.2:
            return rng.choice([0, -3, big, big - 1, 2**63, 2**63 - 1])
        return rng.randrange(0, 12)

    steps = []
    for i in range(rng.randint(0, 12)):
        start, end = time(), time()
        if start is not None and end is not None and rng.random() < 0.7 and start < 2**62:
            end = start + rng.randrange(0, 6)
        tool = rng.choice([None, "a", "b", "", _Name("a"), "c"])
        values: dict[str, Any] = {
            "index": i if rng.random() < 0.9 else rng.randrange(0, 12),
            "kind": rng.choice(kinds),
            "tool": tool,
            "start_ns": start,
            "end_ns": end,
            "status": rng.choice(["ok", "error", "unset", "unset"]),
            "finish_reasons": rng.choice([None, [], ["stop"], ["error"], ["tool_calls", "error"]]),
            "agent_name": rng.choice([None, "", "planner", "writer"]),
            "synthesized": rng.random() < 0.4,
            "source": rng.choice(
                [None, SpanRef(trace_id="t", span_id="s1"), SpanRef(trace_id="t", span_id="s2")]
            ),
        }
        if rng.random() < 0.1:
            values["raw"] = {"tool": "x"}
        attributes: dict[str, Any] = {}
        if rng.random() < 0.3:
            attributes["structured_output"] = rng.choice(answers)
        if rng.random() < 0.1:
            attributes["delivers_answer"] = rng.choice([True, 1, "", 0])
        values["attributes"] = attributes
        values["arguments"] = rng.choice([None, *answers])
        steps.append(Step.from_normalized(values))
    return steps


def test_the_views_facts_are_the_python_definitions_they_replaced() -> None:
    """``StepView``'s facts give what the Python definitions give, on random runs: times
    missing, tied, negative and past 64 bits signed, indexes repeated, kinds as plain
    strings, agents named and not, statuses and finish reasons saying ``error``, tool names
    of a ``str`` subclass, calls synthesized from one span or another, structured answers
    equal across ``dict`` types, and each model call (and ``None``) as the run's last."""
    rng = random.Random(1218)
    checked = answered = 0
    for _ in range(3_000):
        steps = _random_steps(rng)
        view = group_steps(steps)
        gens, agents, calls = view.generations, view.agents, view.calls
        assert view.last_generation() is _spec_last_generation(gens)
        assert view.last_run_agents() == _spec_last_run_agents(agents)
        for names in [(), ("a",), ("c", "final_*")]:
            got_answers = view.final_answer_calls(names, first_match)
            want_answers = _spec_final_answer_calls(steps, names, calls, agents)
            assert [id(s) for s in got_answers] == [id(s) for s in want_answers]
            answered += bool(want_answers)
        for last in [None, *gens, *calls[:1]]:
            assert view.run_error_step(last) is _spec_run_error_step(last, agents)
            if last is None or last.source is None or last.end_ns is None:
                continue
            answering = frozenset(id(s) for s in calls if rng.random() < 0.2)
            got = view.unread_work(last, answering)
            want = _spec_unread_work(calls, last, answering)
            assert len(got) == len(want) and all(g is w for g, w in zip(got, want, strict=True))
            checked += bool(want)
    assert checked > 100, "random runs must leave work unread often enough to test it"
    assert answered > 300, "random runs must deliver answers often enough to test it"


def test_a_time_that_is_no_integer_is_refused() -> None:
    step = Step.from_normalized({"index": 0, "kind": StepKind.GENERATION, "start_ns": "5"})
    with pytest.raises(TypeError):
        group_steps([step])
