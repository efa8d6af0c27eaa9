"""Every command reports a user mistake the same way: one ``error: <source>: <message>`` line
on stderr, nothing about it on stdout, exit code 2 (``docs/cli.md``), and no traceback.

Each command runs as a real subprocess on a real bad input of the kind it reads.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-c", "from otel_oracles.cli import main; main()"]
EXAMPLES = REPO / "examples"


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.fixture
def bad_inputs(tmp_path: Path) -> Path:
    (tmp_path / "broken.json").write_text('{"id": "x",\n  "name": ')
    (tmp_path / "broken.yaml").write_text("receivers: [\n")
    (tmp_path / "trace.otlp.json").write_text('{"resourceSpans": [ {"scopeSpans": \n')
    return tmp_path


CASES: dict[str, tuple[list[str], str]] = {
    "grade": (["grade", "trace.otlp.json", "-c", str(EXAMPLES / "contracts")], "trace.otlp.json"),
    "grade-usage": (["grade", "trace.otlp.json", "-c", "no-such-dir"], "otel-oracles grade"),
    "inspect": (["inspect", "trace.otlp.json"], "trace.otlp.json"),
    "run": (
        ["run", "broken.json", "-t", str(EXAMPLES / "trajectories" / "honest_fix.json")],
        "broken.json",
    ),
    "gate": (["gate", "--manifest", "broken.json"], "broken.json"),
    "validate": (["validate", "broken.json"], "broken.json"),
    "explain": (["explain", "broken.json"], "broken.json"),
    "schema": (["schema", "--no-such-flag"], "otel-oracles schema"),
    "oracles": (["oracles", "no_such_oracle_type"], "otel-oracles oracles"),
    "serve": (["serve", "--config", "broken.yaml", "--check-config"], "broken.yaml"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_user_error_is_one_stderr_line_naming_its_source(bad_inputs: Path, case: str) -> None:
    args, source = CASES[case]
    proc = run(*args, cwd=bad_inputs)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert errors, f"no 'error:' line on stderr: {proc.stderr!r}"
    assert errors[0].startswith(f"error: {source}"), errors[0]
    assert "Traceback" not in proc.stderr
    assert not any(line.startswith(("error", "input error")) for line in proc.stdout.splitlines())
    # validate reports invalid files with exit 1 (its documented contract); the rest exit 2.
    assert proc.returncode == (1 if case == "validate" else 2), proc.stderr
    for line in proc.stderr.splitlines():
        assert line.startswith(("error: ", "note: ", "warning: ")), f"stray stderr line {line!r}"
