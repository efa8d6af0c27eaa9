"""``otel-oracles watch --once`` on the real captures: the expected alerts, exit codes by
``--fail-on``, ``--project``, the report, and saved sessions that ``otel-oracles run``
grades to the same verdicts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.watch.captures import CAPTURES, SESSIONS, VIOLATIONS, capture

CLI = [sys.executable, "-c", "from otel_oracles.cli import main; main()"]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120)


def alerts(stdout: str) -> set[str]:
    """Rules named on ``ALERT`` lines."""
    return {line.split()[4] for line in stdout.splitlines() if line.startswith("ALERT ")}


@pytest.mark.parametrize("agent", sorted(CAPTURES))
@pytest.mark.parametrize("session", SESSIONS)
def test_once_alerts_on_exactly_the_rules_the_session_broke(
    agent: str, session: str, tmp_path: Path
) -> None:
    proc = run("watch", "--once", str(capture(agent, session)), "--sessions-dir", str(tmp_path))
    expected = set(VIOLATIONS[session])
    if agent == "codex" and session == "rm_outside":
        expected.add("write_outside_root")  # Codex exports its working directory
    assert alerts(proc.stdout) == expected, proc.stdout
    critical = "destructive_command" in expected
    assert proc.returncode == (1 if critical else 0), proc.stderr


def test_fail_on_high_fails_the_curl_session_and_default_critical_does_not(tmp_path: Path) -> None:
    curl = str(capture("claude-code", "curl"))
    assert run("watch", "--once", curl, "--sessions-dir", str(tmp_path / "a")).returncode == 0
    high = run("watch", "--once", curl, "--fail-on", "high", "--sessions-dir", str(tmp_path))
    assert high.returncode == 1, high.stdout


def test_project_judges_writes_outside_it(tmp_path: Path) -> None:
    raw = capture("claude-code", "rm_outside")
    record = next(json.loads(line) for line in run_saved(raw, tmp_path / "probe"))
    command = record["steps"][0]["args"]["command"]
    workspace = command.split()[-1].rsplit("/outside/", 1)[0] + "/ws"
    proc = run("watch", "--once", str(raw), "--project", workspace,
               "--sessions-dir", str(tmp_path / "p"))  # fmt: skip
    assert alerts(proc.stdout) == {"destructive_command", "write_outside_root"}, proc.stdout
    codex = capture("codex", "rm_outside")  # exports its working directory
    elsewhere = run("watch", "--once", str(codex), "--project", str(tmp_path),
                    "--sessions-dir", str(tmp_path / "q"))  # fmt: skip
    assert "0 session(s)" in elsewhere.stdout and elsewhere.returncode == 0, elsewhere.stdout


def run_saved(raw: Path, sessions: Path) -> list[str]:
    """Watch ``raw`` once and return the saved trajectory files' contents."""
    run("watch", "--once", str(raw), "--sessions-dir", str(sessions))
    return [p.read_text() for p in sorted(sessions.glob("*.trajectory.json"))]


def test_details_off_is_noted_as_unjudged_not_passed(tmp_path: Path) -> None:
    proc = run("watch", "--once", str(capture("claude-code", "rm_outside", details=False)),
               "--sessions-dir", str(tmp_path))  # fmt: skip
    assert alerts(proc.stdout) == set()
    notes = [line for line in proc.stdout.splitlines() if line.startswith("note ")]
    assert any("destructive_command" in n and "OTEL_LOG_TOOL_DETAILS=1" in n for n in notes)


@pytest.mark.parametrize("agent", sorted(CAPTURES))
def test_saved_session_replays_through_run_with_the_same_verdicts(
    agent: str, tmp_path: Path
) -> None:
    report = tmp_path / "watch.md"
    watched = run("watch", "--once", str(capture(agent, "test_edit")), "--sessions-dir",
                  str(tmp_path), "--report", str(report))  # fmt: skip
    (trajectory,) = tmp_path.glob("*.trajectory.json")
    replay = run("run", str(tmp_path / "watch-contract.yaml"), "--trajectory", str(trajectory),
                 "--json")  # fmt: skip
    assert replay.returncode == 1, replay.stderr
    results = json.loads(replay.stdout)["verdicts"][0]["results"]
    failed = {r["name"] for r in results if r["outcome"] == "invariant_failure"}
    assert failed == alerts(watched.stdout) == {"protected_path_edit"}
    text = report.read_text()
    assert "HIGH protected_path_edit at step 1" in text and str(trajectory) in text


def test_gate_grades_a_saved_session_like_any_trajectory(tmp_path: Path) -> None:
    sessions, tasks = tmp_path / "sessions", tmp_path / "tasks"
    run("watch", "--once", str(capture("gemini-cli", "rm_outside")), "--sessions-dir",
        str(sessions))  # fmt: skip
    tasks.mkdir()
    (tasks / "watch.yaml").write_text((sessions / "watch-contract.yaml").read_text())
    (trajectory,) = sessions.glob("*.trajectory.json")
    gate = run("gate", "--tasks", str(tasks), "--trajectory", str(trajectory))
    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert "destructive_command" in gate.stdout


def test_files_without_once_is_a_usage_error(tmp_path: Path) -> None:
    proc = run("watch", str(capture("codex", "curl")), "--sessions-dir", str(tmp_path))
    assert proc.returncode == 2
    assert "--once" in proc.stderr
