"""GitHub Copilot CLI 1.0 (tests/testdata/traces/copilot-cli-1.0) and OpenCode 1.18
(opencode-1.18), captured by tools/capture_traces/coding_agents.py and graded held out with the
example coding-agent contract (its ``match`` removed, as every real-trace test does).

What the held-out grading showed, and what these tests keep from coming back:

- Copilot's own file tools (``create``, ``edit``) read as plain tool calls, so the replayed
  workspace never changed: ``tests-pass`` and ``test-asserts`` failed on a run whose tests
  passed, and with content off ``pytest-config-untouched`` passed over edit calls whose paths
  were not captured (nothing showed which files they changed). Now they are file edits
  (``conventions/github-copilot.yaml``, ``file_edit_tools``) whose content is not a whole
  file, so the workspace checks report missing evidence; the edits that cannot be replayed no
  longer turn the whole verdict into a replay error that hid ``no-network``'s failure.
- Copilot's shell tool spans end UNSET whatever the command did; only ``process.exit.code``
  says a command failed. Read now (``otel-genai.yaml``), with content on or off.
- ``watch`` read Copilot's export (spans only, no log events) as "0 session(s), 0
  violation(s)" with exit 0; a run holding spans of a service watch never saw a log event
  from now fails closed.
- OpenCode: no false pass before or after; its Effect service spans stay unrecognised, so
  only ``no-network`` answers. Its ``bash`` spans end OK whatever the command did; the exit
  code is in the tool's result (``metadata.exit``), read now (``result_exit_code_outcome``):
  held out, both ``curl`` commands (exit 6) read as successful calls.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from otel_oracles.model.result import Outcome, Verdict
from otel_oracles.model.step import StepKind, Trajectory
from tests.oracles.test_contracts_on_real_traces import TRACES, contract_named, grade_files

COPILOT = TRACES / "copilot-cli-1.0"
OPENCODE = TRACES / "opencode-1.18"
SESSIONS = ("clean_fix", "curl", "test_edit", "rm_outside", "h_coding_agent")
NETWORK = {"curl", "h_coding_agent"}
"""Sessions whose script runs curl."""
WORKSPACE_CHECKS = ("tests-pass", "test-asserts", "pytest-config-untouched")
MISSING = Outcome.MISSING_EVIDENCE


def graded(folder: Path, variant: str) -> list[tuple[Verdict, Trajectory]]:
    files = sorted((folder / f"{variant}.raw").glob("traces-*"))
    assert files, folder / variant
    return grade_files(files, contract_named("coding-agent"))


def outcomes(verdict: Verdict) -> dict[str, Outcome]:
    return {r.name: r.outcome for r in verdict.results}


@pytest.mark.parametrize("details", [True, False], ids=["details", "nodetails"])
@pytest.mark.parametrize("session", SESSIONS)
def test_copilot_verdicts_hold_only_what_the_trace_shows(session: str, details: bool) -> None:
    ((verdict, trajectory),) = graded(COPILOT, session + ("" if details else ".nodetails"))
    got = outcomes(verdict)
    assert not verdict.passed
    for check in WORKSPACE_CHECKS:
        assert got[check] == MISSING, (check, got)
    if not details:
        expected = MISSING  # the commands were not captured
    elif session in NETWORK:
        expected = Outcome.INVARIANT_FAILURE
    else:
        expected = Outcome.PASS
    assert got["no-network"] == expected, got
    edits = [s for s in trajectory.steps if s.kind == StepKind.FILE_EDIT]
    assert edits and {s.tool for s in edits} <= {"create", "edit"}
    assert all(s.content is None for s in edits)


@pytest.mark.parametrize("details", [True, False], ids=["details", "nodetails"])
def test_copilot_failed_command_is_a_failed_call(details: bool) -> None:
    """curl (no network in the sandbox) exits 6; its span ends UNSET either way."""
    ((_, trajectory),) = graded(COPILOT, "curl" + ("" if details else ".nodetails"))
    commands = [s for s in trajectory.steps if s.kind == StepKind.COMMAND]
    assert [s.status for s in commands] == ["error"]


@pytest.mark.parametrize("session", SESSIONS)
def test_opencode_no_trace_of_a_run_passes(session: str) -> None:
    """OpenCode exports each run as many traces (its Effect services' start-up, HTTP
    handlers, the session); none passes, and the one with the model and tool calls fails
    no-network exactly when curl ran."""
    results = graded(OPENCODE, session)
    assert results and not any(v.passed for v, _ in results)
    ((verdict, trajectory),) = [(v, t) for v, t in results if t.tool_calls()]
    got = outcomes(verdict)
    for check in WORKSPACE_CHECKS:
        assert got[check] == MISSING, (check, got)
    expected = Outcome.INVARIANT_FAILURE if session in NETWORK else MISSING
    assert got["no-network"] == expected, got
    if session == "h_coding_agent":
        kinds = [(s.kind, s.tool) for s in trajectory.steps if s.is_tool]
        assert kinds.count((StepKind.FILE_EDIT, "write")) == 2
        assert kinds.count((StepKind.COMMAND, "bash")) == 2


@pytest.mark.parametrize("session", SESSIONS)
def test_opencode_failed_command_is_a_failed_call(session: str) -> None:
    """curl (no network in the sandbox) exits 6 and OpenCode ends its span OK: the exit
    code its result reports makes it a failed call; every other command exited 0."""
    steps = [s for _, t in graded(OPENCODE, session) for s in t.steps]
    commands = [s for s in steps if s.kind == StepKind.COMMAND]
    assert commands
    for step in commands:
        assert step.command is not None
        want = "error" if step.command.startswith("curl ") else "ok"
        assert step.status == want, step.command


def test_watch_fails_closed_on_an_agent_that_exports_only_spans(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", "from otel_oracles.cli import main; main()", "watch", "--once",
         str(COPILOT / "curl.raw"), "--sessions-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert "0 session(s)" in proc.stdout
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "not checked: github-copilot x8" in proc.stderr
