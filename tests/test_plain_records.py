"""Records written as plain slotted classes (``otel_oracles._frozen``) behave as the
dataclasses they replaced: a ``Value`` compares and shows itself by its fields and is
unhashable, copies and pickles keep every field, each instance gets fresh defaults, and a
subclass keeps its base's fields. A difference here would show in run summaries, in the
counts ``grade --workers`` sends between processes, or in a test's equality."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest

from otel_oracles._frozen import FrozenValue, Value, set_field
from otel_oracles.assemble import AssemblyStats, SessionStats
from otel_oracles.grade.evidence import FinalOutput
from otel_oracles.model.result import InputProblem
from otel_oracles.report._common import Tally
from otel_oracles.session import GradeRun


class _Pair(Value):
    __slots__ = ("a", "b")
    a: int
    b: list[int]

    def __init__(self, a: int = 0, b: list[int] | None = None) -> None:
        self.a = a
        self.b = [] if b is None else b


class _Triple(_Pair):
    __slots__ = ("c",)
    c: str

    def __init__(self, a: int = 0, b: list[int] | None = None, c: str = "") -> None:
        super().__init__(a, b)
        self.c = c


class _Plain(_Pair):
    """No slots of its own: its base's fields (and an instance dict)."""


def test_a_value_compares_and_shows_its_fields_as_a_dataclass_does() -> None:
    assert _Pair(1, [2]) == _Pair(1, [2])
    assert _Pair(1, [2]) != _Pair(1, [3])
    assert repr(_Pair(1, [2])) == "_Pair(a=1, b=[2])"
    # Of another class, equal fields or not: not equal (``NotImplemented`` both ways).
    assert _Pair(1) != _Plain(1) and _Plain(1) == _Plain(1)
    assert _Pair(1).__eq__((1, [])) is NotImplemented
    with pytest.raises(TypeError, match="unhashable"):
        hash(_Pair())


def test_a_subclass_adds_its_fields_after_its_bases() -> None:
    assert _Triple._fields == ("a", "b", "c")
    assert _Plain._fields == ("a", "b")
    assert repr(_Triple(1, [], "x")) == "_Triple(a=1, b=[], c='x')"
    assert _Triple(1, [], "x") != _Triple(1, [], "y")


def test_slots_that_are_not_annotated_fields_are_refused() -> None:
    with pytest.raises(TypeError, match="annotated field"):

        class _Unnamed(Value):
            __slots__ = ("a",)

    with pytest.raises(TypeError, match="annotated field"):

        class _Empty(FrozenValue):
            __slots__ = ()


def test_fresh_defaults_per_instance() -> None:
    one, two = GradeRun(), GradeRun()
    one.problems.append(InputProblem(source="x", message="bad"))
    one.skipped["r"] = 1
    one.assembly.late_trace_ids.append("t")
    one.assembly.joined.subjects += 1
    assert two == GradeRun() and one != two
    assert AssemblyStats().joined is not AssemblyStats().joined


def _round_trips(value: Any) -> None:
    for made in (copy.copy(value), copy.deepcopy(value), pickle.loads(pickle.dumps(value))):
        assert type(made) is type(value) and made == value and repr(made) == repr(value)


def test_the_run_counts_copy_and_pickle_whole() -> None:
    """``grade --workers`` sends a worker's ``GradeRun`` to the parent pickled."""
    run = GradeRun(traces=3, spans=7, skipped={"why": 2}, unclassified={"s": 1})
    run.assembly.late_trace_ids.append("a" * 32)
    run.assembly.joined.traces = 4
    run.problems.append(InputProblem(source="f", message="e"))
    _round_trips(run)
    _round_trips(Tally(3, 2, 1))
    _round_trips(FinalOutput("42", None, value={"answer": 42}))
    answer = FinalOutput("42", None, "why")  # hashable when its fields are
    assert (
        hash(pickle.loads(pickle.dumps(answer))) == hash(answer) == hash(("42", None, "why", None))
    )


def test_the_texts_are_the_dataclasses() -> None:
    assert repr(SessionStats()) == "SessionStats(subjects=0, traces=0)"
    assert repr(Tally()) == "Tally(verdicts=0, passed=0, errors=0)"
    assert repr(AssemblyStats()) == (
        "AssemblyStats(spans_read=0, logs_read=0, traces=0, late_spans=0, late_logs=0, "
        "late_trace_ids=[], evicted_traces=0, unattached_logs=0, buffered_spans=0, "
        "peak_buffered_spans=0, joined=SessionStats(subjects=0, traces=0))"
    )
    assert repr(GradeRun()) == (
        "GradeRun(traces=0, traces_unselected=0, spans=0, problems=[], assembly="
        f"{AssemblyStats()!r}, skipped={{}}, unselected_seen={{}}, traces_unclassified=0, "
        "unclassified={})"
    )
    assert repr(FinalOutput(None, None, "why")) == (
        "FinalOutput(text=None, step=None, missing='why', value=None)"
    )


class _One(FrozenValue):
    __slots__ = ("a",)
    a: int

    def __init__(self, a: int) -> None:
        set_field(self, "a", a)


def test_a_frozen_value_of_one_field_hashes_as_its_field() -> None:
    """One field is read as the value itself (``attrgetter`` of one name), not a 1-tuple."""
    assert _One(1) == _One(1) and hash(_One(1)) == hash(1) and repr(_One(1)) == "_One(a=1)"
