"""Compiled contracts and per-trajectory evidence: params validated once at load, state held
by the objects that own it (the compiled contract, the trajectory's ``Evidence``), and a
data model that knows nothing of the grader."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import otel_oracles.model
from otel_oracles.errors import ContractError
from otel_oracles.grade import CompiledContract, Evidence, compile_contract, grade
from otel_oracles.grade.budget import parse_budget
from otel_oracles.grade.loader import load_contract, parse_contract
from otel_oracles.grade.oracles.trace_answers import CitationRequiredParams
from otel_oracles.grade.oracles.trace_tools import ToolRetries, ToolRetriesParams
from otel_oracles.model.contract import Contract
from otel_oracles.model.result import Verdict
from otel_oracles.model.step import Trajectory
from tests.oracles.trace_builders import gen, tool, traj

SUPPORT = Path(__file__).resolve().parents[2] / "examples" / "contracts" / "support-rag.yaml"

CONTRACT = """\
id: c
evidence: [tool_names]
invariants:
  - {type: tool_not_called, tool: delete_records}
tolerances:
  - {type: tool_retries, max: 1, why: one flaky call}
budget: {max_tool_errors: 2, require_citation: true}
"""


def _run() -> Trajectory:
    return traj(
        tool("search", {"q": "a"}, "error: timeout", status="error"),
        tool("search", {"q": "a"}, "doc-1"),
        gen("see doc-1"),
    )


def _comparable(verdict: Verdict) -> dict[str, Any]:
    data = verdict.model_dump(mode="json", exclude={"duration_ns"})
    for result in data["results"]:
        result.pop("duration_ns")
    return data


def test_model_imports_nothing_of_the_grader() -> None:
    """``otel_oracles.model`` is plain data: no import of ``grade``, at any level."""
    offenders = []
    for path in Path(otel_oracles.model.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            offenders += [f"{path.name}: {n}" for n in names if n.startswith("otel_oracles.grade")]
    assert offenders == []


def test_params_are_validated_once_when_a_file_is_compiled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("id: c\ntolerances: [{type: tool_retries, max: 1}]\n")
    calls: list[Any] = []
    original = ToolRetriesParams.model_validate.__func__  # type: ignore[attr-defined]

    def counting(cls: type[BaseModel], obj: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(obj)
        return original(cls, obj, *args, **kwargs)

    monkeypatch.setattr(ToolRetriesParams, "model_validate", classmethod(counting))
    compiled = compile_contract(path)
    assert calls == [{"max": 1}]
    (check,) = compiled.checks
    assert isinstance(check.oracle, ToolRetries)
    assert isinstance(check.oracle.params, ToolRetriesParams) and check.oracle.params.max == 1
    assert check.spec.params == check.oracle.params.model_dump(mode="json")
    assert check.budget == 1 and check.setup_error is None


def test_a_compiled_file_and_a_compiled_plain_contract_grade_alike(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(CONTRACT)
    from_file = compile_contract(path)
    from_data = compile_contract(load_contract(path))
    assert isinstance(from_file, CompiledContract) and from_file.contract == from_data.contract
    run = _run()
    expected = _comparable(grade(from_file, run))
    assert _comparable(grade(from_data, run)) == expected
    assert _comparable(grade(load_contract(path), run)) == expected
    assert [r.oracle_type for r in grade(from_file, run).results] == [
        "evidence",
        "tool_not_called",
        "citation_required",
        "tool_retries",
        "tool_errors",
    ]


def test_the_budget_shorthand_composes_typed_checks() -> None:
    block = {"max_tool_retries": 1, "citation_pattern": "KB-\\d+", "require_citation": True}
    budget = parse_budget(block, "c.yaml")
    checks = budget.checks()
    assert [(c.layer, c.oracle_type) for c in checks] == [
        ("tolerances", "tool_retries"),
        ("invariants", "citation_required"),
    ]
    assert checks[0].params == ToolRetriesParams(max=1)
    assert isinstance(checks[1].params, CitationRequiredParams)
    assert checks[1].params.pattern == "KB-\\d+"


def test_a_bad_budget_regex_names_the_budget_key() -> None:
    with pytest.raises(ContractError, match=r"c\.yaml: budget\.citation_pattern: .*regular"):
        parse_contract(
            {"id": "c", "budget": {"require_citation": True, "citation_pattern": "("}}, "c.yaml"
        )


def test_a_bad_selector_regex_fails_compilation_naming_the_field() -> None:
    contract = Contract(id="c", match={"root_name": "/(/"})
    with pytest.raises(ContractError, match=r"match\.root_name: invalid regex"):
        compile_contract(contract)


def test_validate_compiles_the_contract_and_names_a_bad_selector_regex(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("id: c\nmatch: {root_name: '/(/'}\n")
    cli = Path(sys.executable).parent / "otel-oracles"
    done = subprocess.run([cli, "validate", path], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{path}: match.root_name: invalid regex" in done.stderr
    assert "Traceback" not in done.stderr


def test_evidence_is_computed_once_per_trajectory_and_held_by_its_object() -> None:
    run = _run()
    compiled = compile_contract(parse_contract({"id": "c", "evidence": ["final_output"]}, "c"))
    evidence = Evidence(run)
    assert grade(compiled, run, evidence=evidence).passed
    first = evidence.final_output()
    assert evidence.final_output() is first  # kept on the object...
    assert Evidence(run).final_output() is not first  # ...and only there
    assert first == Evidence(run).final_output()


def test_step_values_are_kept_only_for_steps_of_the_trajectory() -> None:
    run = _run()
    evidence = Evidence(run)
    seen: list[int] = []

    def compute() -> int:
        seen.append(1)
        return len(seen)

    assert evidence.step_memoized(run.steps[0], "k", compute) == 1
    assert evidence.step_memoized(run.steps[0], "k", compute) == 1
    stranger = _run().steps[0]  # equal, but another trajectory's step
    assert evidence.step_memoized(stranger, "k", compute) == 2


def test_evidence_of_another_trajectory_is_refused() -> None:
    compiled = compile_contract(parse_contract({"id": "c"}, "c"))
    with pytest.raises(ValueError, match="another trajectory"):
        grade(compiled, _run(), evidence=Evidence(_run()))


def test_the_example_contract_compiles_from_its_file() -> None:
    compiled = compile_contract(SUPPORT)
    assert compiled.contract.source == str(SUPPORT)
    assert len(compiled.checks) == len(compiled.contract.checks())
    assert all(c.setup_error is None for c in compiled.checks)
