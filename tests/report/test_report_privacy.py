"""Reports respect the same privacy boundary as emitted telemetry (docs/security.md): an
e-mail address and an API key that a trace put in a tool's arguments reach no console, JSON,
JUnit or HTML report by default, and every one of them with ``--explain full``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

CLI = [sys.executable, "-c", "from otel_oracles.cli import main; main()"]

EMAIL = "alice.customer@example.com"
API_KEY = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"

TASK = {
    "id": "notes",
    "name": "notes",
    "description": "the agent writes notes; the check prints them when it fails",
    "prompt": "write notes",
    "workspace": {"README.md": "notes task\n"},
    "oracles": [
        # Fails quoting the trace-written file: its first stderr line is the message.
        {"type": "test_must_pass", "command": "cat notes.txt >&2; exit 1", "name": "notes-ok"},
        {"type": "assertion_exists", "path": "notes.txt", "pattern": "^never-there$"},
    ],
}
TRAJECTORY = {
    "steps": [
        {
            "tool": "write_file",
            "args": {"path": "notes.txt", "content": f"contact {EMAIL} key {API_KEY}\n"},
        },
        {"tool": "send_email", "args": {"to": EMAIL, "api_key": API_KEY}},
    ]
}


def run_reports(tmp_path: Path, *extra: str) -> dict[str, str]:
    """Every report of one ``run`` of the task, as text by format."""
    task, trajectory = tmp_path / "task.json", tmp_path / "trajectory.json"
    task.write_text(json.dumps(TASK))
    trajectory.write_text(json.dumps(TRAJECTORY))
    junit, html = tmp_path / "r.xml", tmp_path / "r.html"
    common = [*CLI, "run", str(task), "-t", str(trajectory), "--verbose", *extra]
    table = subprocess.run(common, capture_output=True, text=True, timeout=120)
    as_json = subprocess.run(
        [*common, "--json", "--junit", str(junit), "--html", str(html)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert table.returncode == 1 and as_json.returncode == 1, table.stderr + as_json.stderr
    return {
        "console": table.stdout,
        "json": as_json.stdout,
        "junit": junit.read_text(encoding="utf-8"),
        "html": html.read_text(encoding="utf-8"),
    }


@pytest.fixture(scope="module")
def default_reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return run_reports(tmp_path_factory.mktemp("default"))


@pytest.mark.parametrize("fmt", ["console", "json", "junit", "html"])
def test_reports_do_not_quote_argument_values_by_default(
    default_reports: dict[str, str], fmt: str
) -> None:
    text = default_reports[fmt]
    assert EMAIL not in text and "alice.customer" not in text, f"{fmt} quotes the e-mail"
    assert API_KEY not in text and "4f9a8b7c6d5e" not in text, f"{fmt} quotes the API key"
    assert "notes-ok" in text, f"{fmt} must still name the failing check"


def test_default_json_keeps_ids_outcomes_and_counts(default_reports: dict[str, str]) -> None:
    (verdict,) = json.loads(default_reports["json"])["verdicts"]
    by_type = {r["oracle_type"]: r for r in verdict["results"]}
    tests = by_type["test_must_pass"]
    assert tests["outcome"] == "invariant_failure"
    assert tests["message"].startswith("violated; exit_code=1"), tests["message"]
    assert tests["details"]["exit_code"] == 1 and tests["details"]["sandboxed"] is True
    assert tests["details"]["stderr_bytes"] > 0, "lengths are kept"
    assert "stderr" not in tests["details"], "command output is trace content"


def test_explain_full_shows_the_checks_own_messages(tmp_path: Path) -> None:
    reports = run_reports(tmp_path, "--explain", "full")
    for fmt, text in reports.items():
        assert EMAIL in text and API_KEY in text, f"--explain full: {fmt} shows the message"
