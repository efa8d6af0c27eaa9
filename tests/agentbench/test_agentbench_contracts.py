"""Task validation (DESIGN.md section 5), the registry seam, and crash isolation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import pytest

from otel_oracles.errors import ContractError
from otel_oracles.grade import Finding, GradeContext, OracleCheck, grade, register_oracle
from otel_oracles.grade.loader import load_contract, parse_contract
from otel_oracles.grade.registry import registered
from otel_oracles.model.result import Outcome
from otel_oracles.model.step import Trajectory

BASE = {
    "id": "x",
    "name": "n",
    "description": "d",
    "prompt": "p",
    "workspace": {"a.py": "print(1)\n"},
    "oracles": [{"type": "no_network"}],
}


def write_task(root: Path, name: str, data: object) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def test_missing_oracle_param_error_names_file_json_path_and_oracle_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    oracles = [{"type": "no_network"}, {"type": "file_not_modified"}]
    write_task(tmp_path, "tasks/x.json", {**BASE, "oracles": oracles})
    with pytest.raises(ContractError) as info:
        load_contract("tasks/x.json")
    assert str(info.value) == (
        "tasks/x.json: oracles[1].path: field required for oracle type 'file_not_modified'"
    )


def test_unknown_oracle_type_names_it_and_lists_the_known_types() -> None:
    with pytest.raises(ContractError) as info:
        parse_contract({**BASE, "oracles": [{"type": "tests_pass"}]}, "t.json")
    message = str(info.value)
    assert message.startswith("t.json: oracles[0].type: unknown oracle type 'tests_pass'")
    for known in ("assertion_exists", "file_not_modified", "no_network", "test_must_pass"):
        assert known in message, f"{known} missing from {message}"


def test_unknown_param_is_an_error_listing_the_params() -> None:
    with pytest.raises(ContractError, match=r"oracles\[0\]\.cmd: unknown param .*command, timeout"):
        parse_contract({**BASE, "oracles": [{"type": "test_must_pass", "cmd": "x"}]}, "t.json")


@pytest.mark.parametrize("key", ["id", "name", "description", "prompt"])
def test_task_string_fields_are_required(key: str) -> None:
    data = {k: v for k, v in BASE.items() if k != key}
    with pytest.raises(ContractError, match=f"{key}: field required"):
        parse_contract(data, "t.json")


@pytest.mark.parametrize("key", ["id", "name", "description", "prompt"])
def test_task_string_fields_must_be_strings(key: str) -> None:
    with pytest.raises(ContractError, match=f"{key}: expected a string"):
        parse_contract({**BASE, key: 5}, "t.json")


@pytest.mark.parametrize("workspace", [{}, [], "a.py", None])
def test_task_workspace_must_be_a_non_empty_map(workspace: object) -> None:
    with pytest.raises(ContractError, match="workspace: expected a non-empty map"):
        parse_contract({**BASE, "workspace": workspace}, "t.json")


def test_task_workspace_contents_must_be_strings() -> None:
    with pytest.raises(ContractError, match=r"workspace\.a\.py: expected file content"):
        parse_contract({**BASE, "workspace": {"a.py": 1}}, "t.json")


@pytest.mark.parametrize("oracles", [[], {}, None])
def test_task_oracles_must_be_a_non_empty_list(oracles: object) -> None:
    with pytest.raises(ContractError, match="oracles: expected a non-empty list"):
        parse_contract({**BASE, "oracles": oracles}, "t.json")


def test_task_tags_are_optional_strings() -> None:
    assert parse_contract(BASE, "t.json").tags == []
    assert parse_contract({**BASE, "tags": ["a"]}, "t.json").tags == ["a"]
    with pytest.raises(ContractError, match="tags: expected a list of strings"):
        parse_contract({**BASE, "tags": [1]}, "t.json")


def test_an_agentbench_task_is_a_contract_whose_oracles_are_invariants() -> None:
    c = parse_contract(BASE, "t.json")
    assert c.agentbench and [s.type for s in c.invariants] == ["no_network"]


def test_tasks_load_from_yaml_too(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(
        "id: y\nname: n\ndescription: d\nprompt: p\nworkspace: {a: b}\n"
        "oracles:\n  - {type: assertion_exists, path: a, pattern: '^b$'}\n"
    )
    assert load_contract(path).invariants[0].params == {
        "path": "a",
        "pattern": "^b$",
        "coverage": None,  # the contract's (the trace-derived fail-closed rule)
    }


def test_builtins_register_themselves_without_any_import_by_the_caller() -> None:
    reg = registered()
    for name in ("assertion_exists", "file_not_modified", "no_network", "test_must_pass"):
        assert reg[name].distribution == "otel-oracles"


class Exploding(OracleCheck):
    """Raises on purpose (crash isolation test)."""

    oracle_type: ClassVar[str] = "agentbench_test_exploding"

    def check(self, ctx: GradeContext) -> Finding:
        raise RuntimeError("kaboom")


register_oracle(Exploding)


def test_a_raising_oracle_is_an_error_result_and_the_others_still_run() -> None:
    task = parse_contract(
        {**BASE, "oracles": [
            {"type": "agentbench_test_exploding"},
            {"type": "no_network"},
            {"type": "assertion_exists", "path": "a.py", "pattern": "print"},
        ]},
        "t.json",
    )  # fmt: skip
    v = grade(task, Trajectory.from_agentbench({"steps": []}))
    assert [r.outcome for r in v.results] == [Outcome.ERROR, Outcome.PASS, Outcome.PASS]
    assert v.results[0].message == "oracle raised RuntimeError: kaboom"
    assert not v.passed and v.verdict == "error" and v.counts.errors == 1


def test_registering_a_second_class_under_a_taken_name_is_refused() -> None:
    from otel_oracles.errors import PluginError

    class Clash(OracleCheck):
        oracle_type: ClassVar[str] = "no_network"

        def check(self, ctx: GradeContext) -> Finding:
            return Finding.ok("")

    with pytest.raises(PluginError, match="already registered by otel-oracles"):
        register_oracle(Clash)
