"""``_native.SlotClass`` makes an instance of a class in its memory (``object.__new__`` and a
slot word a field) only where that is what the class's ``__init__`` would make: the emitter's
and decoders' records, a check's ``Finding`` and an answer's ``FinalOutput`` are built this
way, so a class it filled wrongly, or one it should have called, would change verdicts."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, fields
from typing import Any

import pytest

from otel_oracles._frozen import Frozen, set_field
from otel_oracles._native import SlotClass
from otel_oracles.grade.evidence import FinalOutput, _output
from otel_oracles.grade.oracles.base import Finding


def _names(cls: type[Any]) -> list[str]:
    return [f.name for f in fields(cls)]


def test_a_finding_is_made_in_memory_and_equals_the_dataclass_made_one() -> None:
    assert SlotClass(Finding, _names(Finding)).filled
    made = Finding.fail("too many", span_ids=("a" * 16,), used=2, breach="rule")
    called = Finding("fail", "too many", {}, ("a" * 16,), (), 2, "rule", False)
    assert type(made) is Finding
    assert made == called
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.message = "changed"  # type: ignore[misc]
    assert Finding.ok("fine").details == {}
    assert Finding.ok("fine").details is not Finding.ok("fine").details


def test_a_final_output_is_made_in_memory() -> None:
    # A ``FrozenValue``: its slots sorted, so named rather than in field order.
    assert FinalOutput._fields == ("text", "step", "missing", "value")
    assert not SlotClass(FinalOutput, FinalOutput._fields).filled
    assert SlotClass(FinalOutput, FinalOutput._fields, keywords=True).filled
    made = _output("the answer", None, value={"a": 1})
    assert type(made) is FinalOutput
    assert made == FinalOutput("the answer", None, None, {"a": 1})
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.text = "other"  # type: ignore[misc]


@dataclass(frozen=True, slots=True)
class _Checked:
    a: int
    b: str

    def __post_init__(self) -> None:
        if self.a < 0:
            raise ValueError("negative")


@dataclass(slots=True)
class _Plain:
    a: int
    b: str


class _Doubling:
    """Attribute access of its own: what its ``__init__`` stores is not what it was given."""

    __slots__ = ("a", "b")

    def __init__(self, a: int, b: str) -> None:
        self.a = a
        self.b = b

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value * 2)


class _Named:
    __slots__ = ("a", "b")

    def __init__(self, *, a: int, b: str) -> None:
        self.a = a
        self.b = b


class _Shown:
    __slots__ = ("_b", "a")

    def __init__(self, *, a: int, b: str) -> None:
        self.a = a
        self._b = b

    @property
    def b(self) -> str:
        return self._b


def test_a_class_with_a_post_init_is_called() -> None:
    checked = SlotClass(_Checked, ["a", "b"])
    assert not checked.filled
    assert checked.make(1, "x") == _Checked(1, "x")
    with pytest.raises(ValueError, match="negative"):
        checked.make(-1, "x")


def test_a_class_with_attribute_access_of_its_own_is_called() -> None:
    assert SlotClass(_Plain, ["a", "b"]).filled
    doubling = SlotClass(_Doubling, ["a", "b"])
    assert not doubling.filled
    made = doubling.make(1, "x")
    assert (made.a, made.b) == (2, "xx")


class _Record(Frozen):
    """A frozen record of the project's own: ``Frozen``'s refusals, fields set in order."""

    __slots__ = ("a", "b")

    def __init__(self, a: int, b: str) -> None:
        set_field(self, "a", a)
        set_field(self, "b", b)


class _Refusing(Frozen):
    """A ``Frozen`` subclass whose attribute access is its own again."""

    __slots__ = ("a", "b")

    def __init__(self, a: int, b: str) -> None:
        set_field(self, "a", a)
        set_field(self, "b", b)

    def __setattr__(self, name: str, value: Any) -> None:
        set_field(self, name, value * 2)


def test_a_frozen_record_is_made_in_memory_and_stays_frozen() -> None:
    # ``Frozen``'s ``__setattr__`` and ``__delattr__`` only refuse, as a frozen dataclass's:
    # its slots are found (and read by offset: the evaluator's ``CompiledCheck.head``).
    record = SlotClass(_Record, ["a", "b"])
    assert record.filled
    made = record.make(1, "x")
    assert (type(made), made.a, made.b) == (_Record, 1, "x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.a = 2  # type: ignore[misc]
    refusing = SlotClass(_Refusing, ["a", "b"])
    assert not refusing.filled
    assert refusing.make(1, "x").b == "x"


def test_positional_needs_the_slots_in_field_order_and_keywords_do_not() -> None:
    assert not SlotClass(_Named, ["b", "a"]).filled
    named = SlotClass(_Named, ["b", "a"], keywords=True)
    assert named.filled
    made = named.make("x", 1)
    assert (type(made), made.a, made.b) == (_Named, 1, "x")


def test_a_name_that_is_no_slot_is_called_by_name() -> None:
    shown = SlotClass(_Shown, ["a", "b"], keywords=True)
    assert not shown.filled
    made = shown.make(1, "x")
    assert (type(made), made.a, made.b) == (_Shown, 1, "x")


@pytest.mark.parametrize("cls", [_Plain, _Checked, _Shown])
def test_the_wrong_number_of_values_is_refused(cls: type[Any]) -> None:
    made = SlotClass(cls, ["a", "b"], keywords=cls is _Shown)
    with pytest.raises(RuntimeError, match="3 values"):
        made.make(1, "x", None)
