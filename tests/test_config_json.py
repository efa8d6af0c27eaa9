"""Every way ``json.loads`` refuses a document is one located error where the project reads
JSON from a file: a decimal integer past Python's digit limit and nesting past the stack
raised ``ValueError`` and ``RecursionError`` past handlers that caught only
``JSONDecodeError``, tracebacks from ``grade``, ``run``, ``gate --manifest`` and ``compare``."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from otel_oracles.config_json import JsonDocumentError, load_json_document
from otel_oracles.errors import ContractError, InputError
from otel_oracles.grade.loader import load_contract
from otel_oracles.model.manifest import load_manifest
from otel_oracles.model.step import Trajectory
from otel_oracles.regression import read_report

CLI = str(Path(sys.executable).with_name("otel-oracles"))
HUGE = "1" + "0" * sys.get_int_max_str_digits()
DEEP = "[" * 200_000 + "]" * 200_000


@pytest.mark.parametrize(
    ("text", "problem", "where"),
    [
        (f'{{"max": {HUGE}}}', "an integer of more than", ""),
        (DEEP, "nested too deeply for the parser", ""),
        ('{"a": 1,\n "b": }', "Expecting value", " at line 2 column 7"),
    ],
)
def test_every_refusal_is_one_error(text: str, problem: str, where: str) -> None:
    with pytest.raises(JsonDocumentError) as caught:
        load_json_document(text)
    assert caught.value.problem.startswith(problem)
    assert caught.value.where == where


def test_long_integers_python_reads_still_load() -> None:
    digits = "9" * sys.get_int_max_str_digits()
    assert load_json_document(f'{{"n": {digits}, "h": "0x{"f" * 9000}"}}')["n"] == int(digits)


@pytest.mark.parametrize("body", [f'{{"id": "c", "max": {HUGE}}}', DEEP])
def test_a_json_contract_past_the_parser_is_a_contract_error(tmp_path: Path, body: str) -> None:
    contract = tmp_path / "contract.json"
    contract.write_text(body)
    with pytest.raises(ContractError, match="invalid JSON: "):
        load_contract(contract)
    done = subprocess.run(
        [CLI, "validate", str(contract)], capture_output=True, text=True, timeout=120
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "Traceback" not in output
    assert f"error: {contract}: invalid JSON: " in output


def test_a_trajectory_steps_arguments_past_the_parser_are_no_arguments(tmp_path: Path) -> None:
    path = tmp_path / "trajectory.json"
    step = {"tool": "write_file", "args": f'{{"path": "a.txt", "n": {HUGE}}}'}
    path.write_text(json.dumps({"steps": [step]}))
    trajectory = Trajectory.load(path)
    assert [s.tool for s in trajectory.steps] == ["write_file"]


INPUT_READERS: list[tuple[Callable[[Path], object], str, str]] = [
    (Trajectory.load, "steps", "invalid JSON: "),
    (load_manifest, "task_files", "invalid JSON: "),
    (read_report, "verdicts", "not JSON "),
]
"""Readers of JSON input files: each, the key its document starts with, what its error says."""


@pytest.mark.parametrize(("read", "key", "says"), INPUT_READERS)
@pytest.mark.parametrize("huge", [True, False], ids=["huge-integer", "deep"])
def test_an_input_file_past_the_parser_is_an_input_error(
    tmp_path: Path, read: Callable[[Path], object], key: str, says: str, huge: bool
) -> None:
    path = tmp_path / "input.json"
    path.write_text(f'{{"{key}": [], "n": {HUGE}}}' if huge else DEEP)
    with pytest.raises(InputError, match=says):
        read(path)


def test_a_contract_document_entry_nested_past_the_parser_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The contracts' document cache reads the YAML again for an entry it cannot use; one
    nested past the stack, forged digest and all (as the grader's own user could write it),
    raised ``RecursionError`` out of ``load_contract``."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("OTEL_ORACLES_CONVENTIONS_CACHE", str(cache))
    contract = tmp_path / "contract.yaml"
    contract.write_text("id: c\nversion: 1\ninvariants:\n  - type: max_steps\n    max: 5\n")
    assert load_contract(contract).id == "c"  # writes the entry
    (entry,) = (cache / "contracts").iterdir()
    entry.write_bytes(hashlib.sha256(DEEP.encode()).hexdigest().encode() + b"\n" + DEEP.encode())
    assert load_contract(contract).id == "c"
