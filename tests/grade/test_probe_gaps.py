"""The evidence probes' step filters done by the core (``_native.EvidencePlan``,
``native/python/src/evidence/probes.rs``) find the steps the Python comprehensions they
replaced found, in the same order, and read as many.

The ``_spec_*`` functions are those comprehensions, kept here as the specification; the
random steps reach every branch of them (fields ``None``, placeholders, listed in
``redacted``; AgentBench steps; failed, unset and ok calls; outcomes declared unknown;
kinds as members and as their plain strings; tool names that a scope names, does not
name, or of a ``str`` subclass).
"""

from __future__ import annotations

import gc
import random
import weakref
from typing import Any

import pytest

from otel_oracles._native import EvidencePlan
from otel_oracles.grade.evidence import (
    Evidence,
    absent,
    group_steps,
    is_placeholder,
)
from otel_oracles.model.step import Step, StepKind, Trajectory
from otel_oracles.model.tool_name import tool_matches

CALL_NAMES = ("tool_arguments", "tool_results", "tool_outcomes", "tool_inputs")
"""The evidence names probed over the tool calls."""


def _plan(asks: list[tuple[str, str | None]]) -> EvidencePlan:
    return EvidencePlan(
        [(pos, probe, scope) for pos, (probe, scope) in enumerate(asks)],
        tool_matches,
        StepKind.FILE_EDIT,
    )


def probe_gaps_of(
    asks: list[tuple[str, str | None]],
    steps: list[Step],
    answering: frozenset[int] | None = frozenset(),
) -> list[tuple[int | None, list[Step]]]:
    """``(read, gaps)`` of each ``(probe, scope)`` of ``asks`` in order, asked of ``steps``
    in one plan: ``read`` is ``None`` where the plan found nothing lacking (it answers only
    the names lacking)."""
    found = {
        pos: (read, gaps)
        for pos, read, gaps in _plan(asks).lacking(group_steps(steps), steps, answering)
    }
    return [
        (found[pos][0], found[pos][1] or []) if pos in found else (None, [])
        for pos in range(len(asks))
    ]


def probe_gaps(
    probe: str,
    steps: list[Step],
    scope: str | None = None,
    answering: frozenset[int] | None = frozenset(),
) -> tuple[int | None, list[Step]]:
    """``probe_gaps_of`` of one ``(probe, scope)``."""
    return probe_gaps_of([(probe, scope)], steps, answering)[0]


def _spec_matches(tool: str | None, scope: str | None) -> bool:
    return scope is None or (tool is not None and tool_matches(scope, tool, True))


def _spec_raw_arguments_captured(step: Step) -> bool:
    raw = step.arguments_raw
    return bool(raw) and "arguments" not in step.redacted and not is_placeholder(raw)


def _spec_field(calls: list[Step], field: str) -> list[Step]:
    gaps = [s for s in calls if s.raw is None and absent(s, field)]
    if field == "result":
        gaps = [s for s in gaps if s.status != "error"]
    if field == "arguments":
        gaps = [s for s in gaps if not _spec_raw_arguments_captured(s)]
    return gaps


def _spec_outcomes(calls: list[Step], answering: frozenset[int]) -> list[Step]:
    return [
        s
        for s in calls
        if s.status == "unset"
        and id(s) not in answering
        and (absent(s, "result") or s.attributes.get("outcome_unknown"))
        and not (s.error_type or s.error_message or s.documents is not None)
    ]


def _spec_inputs(calls: list[Step]) -> list[Step]:
    def captured(s: Step) -> bool:
        if s.raw is not None:
            return True
        if not absent(s, "arguments") or _spec_raw_arguments_captured(s):
            return True
        return not absent(s, "command") or not absent(s, "path")

    return [s for s in calls if not captured(s)]


def _spec_file_edits(steps: list[Step]) -> list[Step]:
    return [
        s
        for s in steps
        if s.kind == StepKind.FILE_EDIT
        and s.raw is None
        and (absent(s, "path") or s.content is None)
    ]


def _spec_tokens(gens: list[Step]) -> list[Step]:
    return [s for s in gens if s.input_tokens is None or s.output_tokens is None]


class _Name(str):
    """A tool name of a ``str`` subclass: hashed and compared as ``str`` does."""


_VALUES: list[Any] = [None, "", "  ", "[REDACTED]", "***", "x", {}, {"a": "[REDACTED]"}, {"a": 1}]
_KINDS: list[Any] = [
    StepKind.TOOL_CALL,
    StepKind.FILE_EDIT,
    StepKind.COMMAND,
    StepKind.RETRIEVAL,
    StepKind.GENERATION,
    "file_edit",
    "tool_call",
]


def _random_steps(rng: random.Random) -> list[Step]:
    steps = []
    for i in range(rng.randint(0, 10)):
        redacted = tuple(
            f for f in ("arguments", "result", "command", "path") if rng.random() < 0.12
        )
        attributes: dict[str, Any] = {}
        if rng.random() < 0.25:
            attributes["outcome_unknown"] = rng.choice([True, 1, "", 0, None])
        values: dict[str, Any] = {
            "index": i,
            "kind": rng.choice(_KINDS),
            "tool": rng.choice([None, "search_docs", "run_command", "", _Name("run_command")]),
            "status": rng.choice(["ok", "error", "unset", "unset"]),
            "arguments": rng.choice(_VALUES),
            "arguments_raw": rng.choice([None, "", "[REDACTED]", "f(x=1)"]),
            "result": rng.choice(_VALUES),
            "error_type": rng.choice([None, None, "", "TimeoutError"]),
            "error_message": rng.choice([None, None, "", "boom"]),
            "documents": rng.choice([None, None, None, [], [{"id": 1}]]),
            "command": rng.choice([None, "", "ls"]),
            "path": rng.choice([None, "", "[REDACTED]", "a.txt"]),
            "content": rng.choice([None, "", "text"]),
            "input_tokens": rng.choice([None, 0, 12]),
            "output_tokens": rng.choice([None, 0, 3]),
            "redacted": redacted,
            "attributes": attributes,
        }
        if rng.random() < 0.1:
            values["raw"] = {"tool": "x"}
        steps.append(Step.from_normalized(values))
    return steps


def _same(got: list[Step], want: list[Step]) -> bool:
    return len(got) == len(want) and all(g is w for g, w in zip(got, want, strict=True))


def test_the_core_finds_the_steps_the_python_probes_found() -> None:
    rng = random.Random(2318)
    found: dict[str, int] = dict.fromkeys(
        ("arguments", "result", "outcomes", "inputs", "tokens", "file_edits"), 0
    )
    for _ in range(3_000):
        steps = _random_steps(rng)
        groups = group_steps(steps)
        calls = list(groups.calls)
        answering = frozenset(id(s) for s in calls if rng.random() < 0.2)
        for scope in (None, "run_command", "search_*", "nothing"):
            scoped = [s for s in calls if _spec_matches(s.tool, scope)]
            for field in ("arguments", "result"):
                read, gaps = probe_gaps(field, steps, scope)
                assert read == (len(scoped) if gaps else None)
                assert _same(gaps, _spec_field(scoped, field))
                found[field] += bool(gaps)
            _, gaps = probe_gaps("outcomes", steps, scope, answering)
            assert _same(gaps, _spec_outcomes(scoped, answering))
            found["outcomes"] += bool(gaps)
            _, gaps = probe_gaps("inputs", steps, scope)
            assert _same(gaps, _spec_inputs(scoped))
            found["inputs"] += bool(gaps)
        gens = list(groups.generations)
        read, gaps = probe_gaps("tokens", steps)
        # Without model calls the probe lacks them all: found, having read none.
        assert read == (len(gens) if gaps or not gens else None)
        assert _same(gaps, _spec_tokens(gens))
        found["tokens"] += bool(gaps)
        _, gaps = probe_gaps("file_edits", steps)
        assert _same(gaps, _spec_file_edits(steps))
        found["file_edits"] += bool(gaps)
    for probe, hits in found.items():
        assert hits > 300, f"random runs must lack {probe} often enough to test it"


def test_probes_asked_together_find_what_each_finds_alone() -> None:
    """A plan of several probes (one walk over the calls) answers each ``(probe, scope)`` as
    a plan of it alone answers it, in the order asked; ``Evidence.lacking`` of several
    tool-call names (probed together) words the messages each name's own probe words."""
    rng = random.Random(2611)
    asks = [
        (probe, scope)
        for probe in ("arguments", "result", "outcomes", "inputs")
        for scope in (None, "run_command", "search_*")
    ]
    names = tuple(
        sorted(
            f"{base}:{scope}" if scope else base
            for base in CALL_NAMES
            for scope in (None, "run_command", "search_*")
        )
    )
    lacked = 0
    for _ in range(1_500):
        steps = _random_steps(rng)
        calls = group_steps(steps).calls
        answering = frozenset(id(s) for s in calls if rng.random() < 0.2)
        chosen = rng.sample(asks, rng.randint(1, len(asks)))
        together = probe_gaps_of(chosen, steps, answering)
        assert len(together) == len(chosen)
        for (probe, scope), (read, gaps) in zip(chosen, together, strict=True):
            alone_read, alone = probe_gaps(probe, steps, scope, answering)
            assert read == alone_read
            assert _same(gaps, alone)
        # Messages name each step by its kind's value: kinds as members here.
        trajectory = Trajectory(
            steps=[Step.from_normalized({**vars(s), "kind": StepKind(s.kind)}) for s in steps]
        )
        asked = tuple(sorted(rng.sample(names, rng.randint(2, len(names)))))
        found = Evidence(trajectory).lacking(asked)
        alone_found = [(n, m) for n in asked if (m := Evidence(trajectory).probed(n))]
        assert list(found) == alone_found
        lacked += bool(found)
    assert lacked > 300, "random runs must lack tool-call evidence often enough to test it"


class _Unreadable(dict[str, Any]):
    """Attributes whose ``get`` fails: the outcome probe (which finds the final-answer
    calls, reading ``delivers_answer``, and reads ``outcome_unknown`` of a call with status
    ``unset`` and no result) raises on them; the argument and result probes read none."""

    def get(self, key: str, default: Any = None) -> Any:
        raise LookupError(f"unreadable attribute {key!r}")


def test_a_probe_that_raises_leaves_the_names_asked_with_it_answered() -> None:
    """A contract's tool-call names are probed in one walk; when one of them raises, the
    error is that probe's own, and the names asked with it answer as if asked alone."""
    steps = [
        Step.from_normalized(
            {
                "index": 0,
                "kind": StepKind.TOOL_CALL,
                "tool": "search_docs",
                "status": "unset",
                "attributes": _Unreadable(),
            }
        )
    ]
    ev = Evidence(Trajectory(steps=steps))
    with pytest.raises(LookupError, match="unreadable attribute"):
        ev.lacking(("tool_arguments", "tool_outcomes"))
    named = "for 1 of 1 tool call(s): step 0 (search_docs)"
    assert ev.lacking(("tool_arguments", "tool_results")) == (
        ("tool_arguments", f"tool arguments not captured {named}"),
        ("tool_results", f"tool results not captured {named}"),
    )


def test_a_probe_finds_the_gap_a_message_names() -> None:
    """The probes word the core's steps as before: a call without arguments is named, one
    whose arguments were kept as raw text is not, and a scope counts only its calls."""
    steps = [
        Step.from_normalized({"index": 0, "kind": StepKind.TOOL_CALL, "tool": "search_docs"}),
        Step.from_normalized(
            {"index": 1, "kind": StepKind.TOOL_CALL, "tool": "run_command", "arguments_raw": "x"}
        ),
        Step.from_normalized({"index": 2, "kind": StepKind.TOOL_CALL, "tool": "run_command"}),
    ]
    ev = Evidence(Trajectory(steps=steps))
    assert ev.probed("tool_arguments") == (
        "tool arguments not captured for 2 of 3 tool call(s): step 0 (search_docs), "
        "step 2 (run_command)"
    )
    assert ev.probed("tool_arguments:run_command") == (
        "tool arguments not captured for 1 of 2 tool call(s): step 2 (run_command)"
    )
    assert ev.probed("tool_arguments:write_file") is None


def test_evidence_facts_are_made_once_and_hold_no_cycle() -> None:
    """``Evidence``'s facts are computed on the first ask and kept in its ``memo`` (under
    ``"Evidence.<method>"``, where the core's plans read them), and nothing kept refers back
    to the ``Evidence``: it goes with its last reference, no collector needed."""
    steps = [Step.from_normalized({"index": 0, "kind": StepKind.TOOL_CALL, "tool": "final_answer"})]
    ev = Evidence(Trajectory(steps=steps, final_answer_tools=("final_answer",)))
    assert ev.final_output() is ev.final_output()
    assert ev.answering() is ev.answering() == frozenset({id(steps[0])})
    assert ev.fragment_gap() is None and ev.stopped_short() is ev.stopped_short()
    assert ev.memo["Evidence.answering"] is ev.answering()
    gone = weakref.ref(ev)
    gc.disable()
    try:
        del ev
        assert gone() is None
    finally:
        gc.enable()


def test_an_unknown_probe_or_outcomes_without_the_answering_calls_is_refused() -> None:
    with pytest.raises(ValueError, match="no probe"):
        _plan([("arguments", None), ("nothing", None)])
    with pytest.raises(ValueError, match="answering"):
        probe_gaps("outcomes", [], answering=None)
    assert probe_gaps("arguments", [], answering=None) == (None, [])


def test_a_walk_answer_is_kept_in_the_view_for_the_next_plan() -> None:
    """Each walk's answer is kept in the trajectory's view per probe and scope: a second
    plan asking a name the first asked reads the first's gaps (the same list), a scope is
    answered on its own, and an answer read against another ``answering`` set or another
    step list is walked again, not taken from the view."""
    steps = [
        Step.from_normalized(
            {"index": 0, "kind": StepKind.TOOL_CALL, "tool": "search_docs", "status": "unset"}
        ),
        Step.from_normalized(
            {"index": 1, "kind": StepKind.TOOL_CALL, "tool": "run_command", "status": "unset"}
        ),
        Step.from_normalized({"index": 2, "kind": StepKind.GENERATION, "start_ns": 1}),
    ]
    view = group_steps(steps)
    answering: frozenset[int] = frozenset()
    first = _plan([("arguments", None), ("outcomes", None)]).lacking(view, steps, answering)
    second = _plan([("outcomes", None), ("arguments", "run_*"), ("timing", None)]).lacking(
        view, steps, answering
    )
    assert second[0][2] is first[1][2] == list(steps[:2])  # outcomes: the kept list
    assert second[1][1:] == (1, [steps[1]])  # the scoped name: its own walk
    assert second[2][1:] == (3, steps)  # timing: no step has both its times
    fresh = group_steps(steps)
    assert second == _plan([("outcomes", None), ("arguments", "run_*"), ("timing", None)]).lacking(
        fresh, steps, answering
    )
    # Another answering set (the first call delivers the answer) is walked again.
    delivered = _plan([("outcomes", None)]).lacking(view, steps, frozenset({id(steps[0])}))
    assert delivered == ((0, 2, [steps[1]]),)
    # So is another step list, for the probes that walk the steps themselves.
    assert _plan([("timing", None)]).lacking(view, steps[:2], answering) == ((0, 2, steps[:2]),)


def test_tool_names_is_answered_by_the_view_where_it_can_be() -> None:
    """``names`` (``tool_names``) lacks with the nameless calls when there are any; else it
    lacks, for Python to word, on a fragment or without tool spans; with tool spans listing
    every call it does not lack."""
    named = Step.from_normalized({"index": 0, "kind": StepKind.TOOL_CALL, "tool": "search"})
    nameless = Step.from_normalized({"index": 1, "kind": StepKind.TOOL_CALL, "tool": ""})
    seen = Step.from_normalized(
        {"index": 0, "kind": StepKind.TOOL_CALL, "tool": "search", "synthesized": True}
    )
    plan = _plan([("names", None)])
    both = [named, nameless]
    assert plan.lacking(group_steps(both), both, None) == ((0, 1, [nameless]),)
    assert plan.lacking(group_steps(both), both, None, True) == ((0, 1, [nameless]),)
    assert plan.lacking(group_steps([named]), [named], None) == ()
    assert plan.lacking(group_steps([named]), [named], None, True) == ((0, 0, None),)
    assert plan.lacking(group_steps([seen]), [seen], None) == ((0, 0, None),)
