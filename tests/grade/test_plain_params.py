"""The built-in checks read their params from a plain copy made once per compiled check.

A pydantic model defines ``__getattr__``, so each read of one of its fields pays the type's
``__getattr__`` hook; ``OracleCheck.given`` (``plain_params``) holds the same values on plain
slots. These tests hold the copy to the model it stands for (every field, nested models,
methods, ``str``/``repr``, equality), and grade real traces with every check's pydantic
``params`` made unreadable: the verdicts stay those of a normal grade only while no built-in
check reads the model. A plug-in's ``self.params`` stays the validated model.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel

from otel_oracles.grade import CompiledContract, Evidence, compile_contract, grade
from otel_oracles.grade.loader import load_contract
from otel_oracles.grade.oracles.base import (
    Finding,
    GradeContext,
    OracleCheck,
    OracleParams,
    PlainParams,
    plain_params,
)
from otel_oracles.grade.oracles.trace_answers import HandoffParams
from otel_oracles.grade.oracles.trace_tools import ToolSequenceParams
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.contract import Contract
from otel_oracles.pipeline import read_traces

REPO = Path(__file__).resolve().parents[2]
CONTRACT_FILES = sorted((REPO / "examples" / "contracts").glob("*.yaml")) + sorted(
    (REPO / "bench" / "contracts").glob("*.yaml")
)
TRACE_FILES = sorted((REPO / "examples" / "traces").glob("*.otlp.json*"))


def _contracts() -> list[Contract]:
    return [load_contract(path) for path in CONTRACT_FILES]


def _same(plain: Any, model: Any) -> None:
    """``plain`` holds what ``model`` holds, params models compared field by field."""
    if isinstance(model, BaseModel):
        assert isinstance(plain, PlainParams) and not isinstance(plain, BaseModel)
        assert type(plain).__name__ == type(model).__name__
        assert plain._fields == tuple(type(model).model_fields)
        for name in plain._fields:
            _same(getattr(plain, name), getattr(model, name))
        assert repr(plain) == repr(model)
        assert str(plain) == str(model) or type(model).__str__ is BaseModel.__str__
    elif isinstance(model, list | tuple):
        assert type(plain) is type(model) and len(plain) == len(model)
        for a, b in zip(plain, model, strict=True):
            _same(a, b)
    else:
        assert plain is model


def test_every_checks_copy_reads_as_its_params() -> None:
    seen: set[str] = set()
    for contract in _contracts():
        for check in compile_contract(contract).checks:
            oracle = check.oracle
            assert oracle is not None, check.head.name
            assert isinstance(oracle.params, OracleParams)
            _same(oracle.given, oracle.params)
            seen.add(oracle.oracle_type)
    # the example and bench contracts use most built-in oracle types; a few are enough to
    # mean the loop above ran over nested models (tool_sequence, handoff) and methods
    assert {"tool_sequence", "handoff", "tool_called", "max_tool_calls"} <= seen


def test_methods_and_str_come_along() -> None:
    params = ToolSequenceParams.model_validate(
        {"expected": ["a", {"tool": "b", "args": {"x": 1}}], "mode": "exact"}
    )
    plain = plain_params(params)
    assert [i.constrains_args() for i in plain.expected] == [False, True]
    transfers = plain_params(HandoffParams.model_validate({"required": ["a -> b"]}))
    assert str(transfers.required[0]) == "a -> b" == f"{transfers.required[0]}"


def test_equal_and_hashed_by_value_as_the_frozen_model() -> None:
    params = HandoffParams.model_validate(
        {"required": ["a -> b"], "forbidden": ["a -> b", "c -> d"]}
    )
    plain = plain_params(params)
    model_answers = [r in params.forbidden for r in params.required]
    assert [r in plain.forbidden for r in plain.required] == model_answers == [True]
    assert plain.required[0] != plain.forbidden[1]
    assert hash(plain.required[0]) == hash(plain.forbidden[0])
    assert plain.required[0] != params.required[0]  # a copy is not the model


def test_read_only() -> None:
    plain = plain_params(ToolSequenceParams.model_validate({"expected": ["a"]}))
    with pytest.raises(AttributeError, match="read-only"):
        plain.mode = "exact"  # type: ignore[misc]
    with pytest.raises(AttributeError, match="read-only"):
        del plain.mode
    assert copy.copy(plain) is plain and copy.deepcopy(plain) is plain


class _Unreadable:
    """Stands where a check's pydantic params were: any read of it is a test failure."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"a built-in check read params.{name}")


def _graded(contracts: list[CompiledContract]) -> list[dict[str, Any]]:
    conventions = load_conventions()
    out: list[dict[str, Any]] = []
    for trace in read_traces([str(p) for p in TRACE_FILES], []):
        trajectory = map_trace(trace, conventions)
        evidence = Evidence(trajectory)
        for compiled in contracts:
            verdict = grade(compiled, trajectory, evidence=evidence)
            out.append(
                verdict.model_dump(
                    mode="json",
                    exclude={"duration_ns": True, "results": {"__all__": {"duration_ns"}}},
                )
            )
    return out


def test_checks_read_only_their_copy() -> None:
    assert TRACE_FILES
    contracts = [compile_contract(c) for c in _contracts() if c.workspace is None]
    expected = _graded(contracts)
    for compiled in contracts:
        for check in compiled.checks:
            assert check.oracle is not None
            object.__setattr__(check.oracle, "params", _Unreadable())
    assert _graded(contracts) == expected
    outcomes = {r["outcome"] for v in expected for r in v["results"]}
    assert "error" not in outcomes and len(outcomes) > 2


class _PluginParams(OracleParams):
    word: str = "x"


class _Plugin(OracleCheck):
    """A plug-in as the docs show one: it reads ``self.params``."""

    oracle_type: ClassVar[str] = "plain_params_plugin"
    Params = _PluginParams

    def check(self, ctx: GradeContext) -> Finding:
        params = self.params
        assert isinstance(params, _PluginParams)
        return Finding.ok(params.word)


def test_a_plugins_params_stay_the_model() -> None:
    params = _PluginParams(word="y")
    oracle = _Plugin(params)
    assert oracle.params is params
    assert oracle.given.word == "y"  # type: ignore[attr-defined]
    assert not isinstance(oracle.given, BaseModel)
