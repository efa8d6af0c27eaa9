"""``otel-oracles watch`` driven in a real terminal (tmux) as a person would: started in a
pane, real captured telemetry replayed to it over OTLP/HTTP and OTLP/gRPC by the SDK's own
exporters, the screen read with capture-pane, stopped with Ctrl-C."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.ports import free_port
from tests.watch.captures import capture

REPO = Path(__file__).resolve().parents[2]
REPLAY = REPO / "tests" / "watch" / "replay_agent.py"
WAIT_S = 60.0

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")


class Pane:
    """One detached tmux session running a shell command in a 160x50 terminal."""

    def __init__(self, command: str) -> None:
        self.name = f"watch-test-{uuid.uuid4().hex[:8]}"
        subprocess.run(
            ["tmux", "new-session", "-d", "-s", self.name, "-x", "160", "-y", "50", command],
            check=True,
        )

    def screen(self) -> str:
        return subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", self.name], capture_output=True, text=True
        ).stdout

    def keys(self, *keys: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True)

    def wait_for(self, done: Callable[[str], bool], what: str) -> str:
        """Poll the screen until ``done`` holds (the pane is the only signal a person has)."""
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            text = self.screen()
            if done(text):
                return text
            time.sleep(0.2)
        raise AssertionError(f"screen never showed {what}:\n{self.screen()}")

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True)


@pytest.fixture
def watch_pane(tmp_path: Path) -> Iterator[tuple[Pane, int, int, Path]]:
    http, grpc = free_port(), free_port()
    cli = [sys.executable, "-c", "from otel_oracles.cli import main; main()"]
    sessions, report = str(tmp_path / "sessions"), str(tmp_path / "r.md")
    args = ["watch", "--http", f"127.0.0.1:{http}", "--grpc", f"127.0.0.1:{grpc}",
            "--sessions-dir", sessions, "--report", report]  # fmt: skip
    command = " ".join(shlex.quote(a) for a in [*cli, *args])
    pane = Pane(f"cd {shlex.quote(str(REPO))} && {command}; echo watch-exit=$?; sleep 600")
    try:
        yield pane, http, grpc, tmp_path
    finally:
        pane.close()


def send(capture_dir: Path, endpoint: str) -> None:
    subprocess.run(
        [sys.executable, str(REPLAY), str(capture_dir), endpoint],
        check=True, capture_output=True, timeout=60, cwd=REPO,
    )  # fmt: skip


def test_watch_screen_shows_sessions_steps_and_alerts_as_telemetry_arrives(
    watch_pane: tuple[Pane, int, int, Path],
) -> None:
    pane, http, grpc, tmp = watch_pane
    setup = pane.wait_for(lambda s: "Watching." in s, "the setup banner")
    assert f"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:{http}" in setup
    assert f'endpoint = "http://127.0.0.1:{http}/v1/logs"' in setup

    send(capture("claude-code", "rm_outside"), f"http://127.0.0.1:{http}/v1/logs")
    screen = pane.wait_for(lambda s: "destructive_command" in s, "the destructive alert")
    assert "SESSIONS" in screen and "claude-code" in screen
    assert "0: $ rm -rf /work/capture-tree/" in screen
    assert "CRITICAL destructive_command at step 0" in screen

    send(capture("codex", "test_edit"), f"grpc://127.0.0.1:{grpc}")
    screen = pane.wait_for(lambda s: "protected_path_edit" in s, "the protected-path alert")
    assert "codex" in screen and "HIGH protected_path_edit at step 1" in screen
    assert "2: $ python3 -c" in screen, "the session's latest steps are listed"

    pane.keys("C-c")
    end = pane.wait_for(lambda s: "watch-exit=" in s, "watch exiting")
    assert "2 session(s), 2 violation(s)" in end
    assert "watch-exit=1" in end, "a critical violation fails the default --fail-on"
    report = (tmp / "r.md").read_text()
    assert "CRITICAL destructive_command" in report and "HIGH protected_path_edit" in report
    assert len(list((tmp / "sessions").glob("*.trajectory.json"))) == 2
