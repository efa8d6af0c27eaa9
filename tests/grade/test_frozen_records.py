"""The internal records written as plain frozen classes (``otel_oracles._frozen``) keep what
``@dataclass(frozen=True, slots=True)`` gave them: a field cannot be assigned or deleted
after ``__init__``, and a copy or pickle holds the same fields (its state is set past the
freeze). Frozen values (``FrozenValue``) also compare, hash and show as the dataclass did."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from otel_oracles._frozen import FrozenValue
from otel_oracles.grade.budget import Budget, BudgetCheck
from otel_oracles.grade.oracles.trace_tools import ToolRetriesParams
from otel_oracles.model.step import NetworkViolation
from otel_oracles.model.tool_name import ToolName
from otel_oracles.session._input import InputLimits
from otel_oracles.session._session import SessionSpec, Shard


def test_a_frozen_record_refuses_assignment_and_deletion() -> None:
    budget = Budget(max_tool_retries=1, source="c.yaml")
    with pytest.raises(dataclasses.FrozenInstanceError):
        budget.max_tool_retries = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del budget.source  # type: ignore[misc]
    assert (budget.max_tool_retries, budget.source) == (1, "c.yaml")
    with pytest.raises(AttributeError):  # slotted: no field the class does not declare
        object.__setattr__(budget, "other", 1)


def test_defaults_and_keywords_are_the_dataclass_s() -> None:
    budget = Budget(source="c.yaml")
    assert budget.max_tool_retries is None and budget.require_citation is None
    assert Budget(None, 2).max_tool_errors == 2


@pytest.mark.parametrize(
    "clone", [copy.copy, copy.deepcopy, lambda r: pickle.loads(pickle.dumps(r))]
)
def test_a_copy_keeps_every_field(clone: object) -> None:
    check = BudgetCheck("tolerances", "tool_retries", ToolRetriesParams(max=1), "why")
    cloned = clone(check)  # type: ignore[operator]
    assert type(cloned) is BudgetCheck and cloned is not check
    assert (cloned.layer, cloned.oracle_type, cloned.params.max, cloned.why) == (
        "tolerances",
        "tool_retries",
        1,
        "why",
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        cloned.why = "other"  # type: ignore[misc]


# ---- frozen values: compared, hashed and shown as the frozen dataclasses were ----------------


@dataclasses.dataclass(frozen=True, slots=True)
class _Limits:
    """What ``InputLimits`` was: the generated methods the written-once ones must match."""

    max_message_bytes: int = 1
    max_decompressed_bytes: int = 2
    idle_spans: int = 3
    max_buffered_spans: int | None = None


def test_a_frozen_value_is_compared_hashed_and_shown_as_its_dataclass_was() -> None:
    limits = InputLimits(10, 20, 30, None)
    twin = _Limits(10, 20, 30, None)
    # Fields in declaration order, not the sorted order of its slots.
    assert repr(limits) == repr(twin).replace("_Limits", "InputLimits")
    assert limits == InputLimits(10, 20, 30) and hash(limits) == hash(InputLimits(10, 20, 30))
    assert limits != InputLimits(10, 20, 31)
    assert limits != twin and (limits == twin) is False  # another class: never equal
    assert len({Shard(0, 2), Shard(0, 2), Shard(1, 2)}) == 2
    assert ToolName(("a",), "b") == ToolName(("a",), "b") != ToolName((), "b")
    assert repr(NetworkViolation(1, None, "curl")) == (
        "NetworkViolation(step_index=1, tool=None, pattern='curl')"
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        limits.idle_spans = 1  # type: ignore[misc]
    cloned = pickle.loads(pickle.dumps(SessionSpec((), limits=limits)))
    assert cloned == SessionSpec((), limits=limits) and cloned.limits is not limits


def test_a_frozen_value_must_annotate_each_of_its_slots() -> None:
    """Its fields are its annotated slots, in annotation order: a slot it does not annotate
    would be left out of equality and text, so the class is refused."""
    with pytest.raises(TypeError, match="annotated field"):

        class _Unnamed(FrozenValue):
            __slots__ = ("a", "b")
            a: int
