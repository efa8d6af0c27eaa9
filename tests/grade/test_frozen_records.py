"""The internal records written as plain frozen classes (``otel_oracles._frozen``) keep what
``@dataclass(frozen=True, slots=True)`` gave them: a field cannot be assigned or deleted
after ``__init__``, and a copy or pickle holds the same fields (its state is set past the
freeze)."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from otel_oracles.grade.budget import Budget, BudgetCheck
from otel_oracles.grade.oracles.trace_tools import ToolRetriesParams


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
