"""Qwen Code (tests/testdata/traces/qwen-code-0.24, written by
tools/capture_traces/coding_agents.py), graded held out by ``watch``: before
coding-agents.yaml knew it, every session read as "0 session(s), 0 violation(s)" with exit 0.
Now each session alerts on the rules its script broke, and records of an agent no convention
recognises fail the run instead of passing it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.watch.captures import SESSIONS, TRACES, VIOLATIONS, only_session, watch_files

CLI = [sys.executable, "-c", "from otel_oracles.cli import main; main()"]
QWEN = TRACES / "qwen-code-0.24"
H_VIOLATIONS = {"protected_path_edit", "network_access"}
"""``h_coding_agent`` rewrites tests/test_calc.py and runs curl."""


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120)


def alerts(stdout: str) -> set[str]:
    return {line.split()[4] for line in stdout.splitlines() if line.startswith("ALERT ")}


@pytest.mark.parametrize("details", [True, False], ids=["details", "nodetails"])
@pytest.mark.parametrize("session", [*SESSIONS, "h_coding_agent"])
def test_each_session_alerts_on_the_rules_it_broke(
    session: str, details: bool, tmp_path: Path
) -> None:
    """Qwen Code exports tool arguments whatever ``logPrompts`` says, so both variants are
    judged alike."""
    raw = QWEN / f"{session}{'' if details else '.nodetails'}.raw"
    proc = run("watch", "--once", str(raw), "--sessions-dir", str(tmp_path))
    expected = H_VIOLATIONS if session == "h_coding_agent" else VIOLATIONS[session]
    assert alerts(proc.stdout) == expected, proc.stdout
    assert proc.returncode == (1 if "destructive_command" in expected else 0), proc.stderr
    assert "not checked" not in proc.stderr


def test_steps_read_as_command_read_and_edit_with_their_call_ids() -> None:
    session = only_session(watch_files(QWEN / "curl.raw"))
    assert session.agent == "qwen-code" and session.version == "0.24.4"
    kinds = [s.get("action") for s in session.steps]
    assert kinds == ["command", "file_read", "file_edit"], session.steps
    assert [s.get("call_id") for s in session.steps] == ["call_00", "call_01", "call_02"]
    assert session.steps[0]["args"]["command"].startswith("curl ")
    assert session.steps[0]["status"] == "error"  # no network in the sandbox


def test_prompt_without_log_prompts_is_missing_not_empty() -> None:
    session = only_session(watch_files(QWEN / "clean_fix.nodetails.raw"))
    prompt = next(e for e in session.events if e["kind"] == "prompt")
    assert "logPrompts" in prompt["missing"]


def _renamed(src: Path, dst: Path, service: str) -> Path:
    """``src``'s bodies with every resource's ``service.name`` replaced."""
    dst.mkdir()
    for body in src.glob("logs-*.json"):
        doc = json.loads(body.read_text())
        for resource_logs in doc["resourceLogs"]:
            for attr in resource_logs["resource"]["attributes"]:
                if attr["key"] == "service.name":
                    attr["value"] = {"stringValue": service}
        (dst / body.name).write_text(json.dumps(doc))
    return dst


def test_records_of_an_agent_no_convention_knows_fail_the_run(tmp_path: Path) -> None:
    """What the held-out run showed: an unknown agent's curl session read as clean. Now the
    records are counted, named on stderr and the exit code is 1 (nothing was checked)."""
    raw = _renamed(QWEN / "curl.raw", tmp_path / "raw", "some-new-agent")
    proc = run("watch", "--once", str(raw), "--sessions-dir", str(tmp_path / "s"))
    assert "0 session(s)" in proc.stdout
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "not checked: some-new-agent x" in proc.stderr
