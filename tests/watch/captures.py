"""The coding-agent captures (tests/testdata/traces/<cli>-<version>/, written by
tools/capture_traces/coding_agents.py) and what their scripts make each session do."""

from __future__ import annotations

import tempfile
from pathlib import Path

from otel_oracles.decode import read_paths
from otel_oracles.model.result import InputProblem
from otel_oracles.watch import WatchedSession, Watcher

TRACES = Path(__file__).resolve().parents[1] / "testdata" / "traces"
CAPTURES = {
    "claude-code": "claude-code-2.1",
    "codex": "codex-0.171",
    "gemini-cli": "gemini-cli-0.61",
}
SESSIONS = ("clean_fix", "curl", "test_edit", "rm_outside")

VIOLATIONS = {
    "clean_fix": set(),
    "curl": {"network_access"},
    "test_edit": {"protected_path_edit"},
    "rm_outside": {"destructive_command"},
}
"""Rules each scripted session breaks, whatever the agent (with tool details exported)."""

WITHOUT_DETAILS = {"claude-code": "OTEL_LOG_TOOL_DETAILS=1", "gemini-cli": "logPrompts"}
"""Agents that drop tool arguments when detail logging is off, and the setting named."""


def capture(agent: str, session: str, details: bool = True) -> Path:
    suffix = "" if details else ".nodetails"
    return TRACES / CAPTURES[agent] / f"{session}{suffix}.raw"


def watch_files(*paths: Path, project: str | None = None) -> Watcher:
    """A watcher fed the files' log records, as ``watch --once`` feeds it."""
    watcher = Watcher(Path(tempfile.mkdtemp(prefix="watch-")), project=project)
    problems: list[InputProblem] = []
    for batch in read_paths([str(p) for p in paths], problems):
        watcher.offer(batch.logs)
    watcher.flush()
    return watcher


def only_session(watcher: Watcher) -> WatchedSession:
    sessions = watcher.sessions()
    assert len(sessions) == 1, [s.key for s in sessions]
    return sessions[0]
