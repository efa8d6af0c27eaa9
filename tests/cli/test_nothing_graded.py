"""A run that graded nothing is not a pass: ``grade``, ``validate`` (and ``run``/``gate``
through the same helper) exit 2 with a reason on stderr unless ``--allow-empty`` says the
user means it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-c", "from otel_oracles.cli import main; main()"]
CONTRACTS = REPO / "tests" / "testdata" / "pipeline" / "contracts"
HAPPY = REPO / "tests" / "testdata" / "traces" / "pydantic-ai" / "a_happy.otlp.json"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120)


def test_an_empty_file_is_not_a_green_gate(tmp_path: Path) -> None:
    empty = tmp_path / "export.otlp.json"
    empty.write_bytes(b"")
    proc = run("grade", str(empty), "-c", str(CONTRACTS))
    assert proc.returncode == 2
    assert f"error: {empty}: nothing graded: no spans were read" in proc.stderr


def test_empty_resource_spans_exit_2_and_allow_empty_accepts_them(tmp_path: Path) -> None:
    doc = tmp_path / "export.otlp.json"
    doc.write_text('{"resourceSpans": []}')
    proc = run("grade", str(doc), "-c", str(CONTRACTS), "--json")
    assert proc.returncode == 2
    assert json.loads(proc.stdout)["exit_code"] == 2, "the JSON report agrees with the exit"
    allowed = run("grade", str(doc), "-c", str(CONTRACTS), "--allow-empty")
    assert allowed.returncode == 0, allowed.stderr
    assert "note:" in allowed.stderr and "nothing graded" in allowed.stderr


def test_contracts_that_select_no_trace_name_what_was_seen(tmp_path: Path) -> None:
    contract = tmp_path / "other-agent.yaml"
    contract.write_text(
        "id: other-agent\nversion: 1\nname: n\ndescription: d\n"
        "match:\n  span: {gen_ai.agent.name: billing_agent}\n"
        "invariants:\n  - {type: tool_not_called, tool: delete_records}\n"
    )
    proc = run("grade", str(HAPPY), "-c", str(contract))
    assert proc.returncode == 2
    line = next(x for x in proc.stderr.splitlines() if "nothing graded" in x)
    assert "no contract's match selected any of them" in line
    seen = json.loads(HAPPY.read_text())["resourceSpans"][0]["resource"]["attributes"]
    service = next(a["value"]["stringValue"] for a in seen if a["key"] == "service.name")
    assert f"service {service} (1)" in line


def test_validate_on_a_folder_without_files_is_an_error(tmp_path: Path) -> None:
    proc = run("validate", str(tmp_path))
    assert proc.returncode == 2
    assert f"error: {tmp_path}: nothing to validate" in proc.stderr
