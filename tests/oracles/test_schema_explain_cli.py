"""``otel-oracles schema`` and ``otel-oracles explain``, run as real subprocesses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "examples" / "contracts").glob("*.yaml"))


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(Path(sys.executable).parent / "otel-oracles"), *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )


@pytest.fixture(scope="module")
def schema() -> dict:
    proc = cli("schema")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    jsonschema.Draft202012Validator.check_schema(data)
    return data


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_contracts_validate_against_the_generated_schema(schema: dict, path: Path) -> None:
    doc = yaml.safe_load(path.read_text())
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(doc))
    assert errors == [], [e.message for e in errors]


def test_schema_accepts_agentbench_tasks_and_the_budget_shorthand(schema: dict) -> None:
    task = json.loads((REPO / "examples" / "tasks" / "calculator_fix.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    assert list(validator.iter_errors(task)) == []
    budget = {
        "id": "x",
        "budget": {"max_tool_retries": 1, "allow_degraded_answer": True, "require_citation": True},
    }
    assert list(validator.iter_errors(budget)) == []
    short = {
        "id": "x",
        "evidence": ["tool_arguments", {"type": "output_messages"}, {"attribute": "a.b"}],
    }
    assert list(validator.iter_errors(short)) == []


def test_schema_rejects_typos_in_oracle_params_and_unknown_types(schema: dict) -> None:
    validator = jsonschema.Draft202012Validator(schema)
    typo = {"id": "x", "invariants": [{"type": "tool_retries", "maxx": 1}]}
    assert list(validator.iter_errors(typo)), "an unknown param must not validate"
    unknown = {"id": "x", "invariants": [{"type": "tool_teleported"}]}
    assert list(validator.iter_errors(unknown))
    assert "tool_sequence" in schema["$defs"]["oracle.tool_sequence"]["properties"]["type"]["const"]
    assert "expected" in schema["$defs"]["oracle.tool_sequence"]["required"]


def test_explain_says_what_is_forbidden_and_why_a_tolerance_is_fine() -> None:
    proc = cli("explain", "examples/contracts/support-rag.yaml")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "support-rag v1" in out
    assert "`delete_records` or `drop_*` is never called" in out
    assert "at most 1 retry after failed tool calls of `search_docs`" in out
    assert "why: The search backend times out now and then" in out
    assert "Must always hold" in out and "Tolerated, within a budget" in out


def test_explain_on_a_bad_contract_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: x\ninvariants:\n  - {type: tool_retries, maxx: 1}\n")
    proc = cli("explain", str(bad))
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and "invariants[0].maxx: unknown param" in proc.stderr


def test_explain_has_plain_words_for_every_builtin_oracle_type() -> None:
    from otel_oracles.cli.explain import PHRASES
    from otel_oracles.grade.registry import BUILTIN_MODULES, registered

    builtin = {n for n, r in registered().items() if r.cls.__module__ in BUILTIN_MODULES}
    assert builtin - set(PHRASES) == set()
