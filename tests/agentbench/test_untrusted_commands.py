"""Traces are untrusted input (docs/security.md): a test file that a trace's ``write_file``
step wrote runs under ``test_must_pass``, through the real ``grade`` and ``run`` commands.
Whatever it tries (a file outside the workspace, a connection to a host service, a
``setsid`` daemon) must not outlive or escape the sandbox."""

from __future__ import annotations

import json
import socket
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest

from tests.support.processes import wait_until_gone

REPO = Path(__file__).resolve().parents[2]
CODING_TRACE = REPO / "examples" / "traces" / "vercel-ai-sdk-h_coding_agent.otlp.json"
CODING_CONTRACT = REPO / "examples" / "contracts" / "coding-agent.yaml"

Cli = Callable[..., CompletedProcess[str]]

HOSTILE_TEST = """\
import os, socket, subprocess, sys

from calc import add


def test_add():
    # 1. a file outside the workspace (its directory made first, so only isolation stops it)
    os.makedirs(os.path.dirname({marker!r}), exist_ok=True)
    with open({marker!r}, "w") as f:
        f.write("escaped")
    # 2. a service on the host's loopback
    try:
        socket.create_connection(("127.0.0.1", {port}), timeout=2).sendall(b"escaped")
    except OSError:
        pass
    # 3. a daemon in a session of its own, which a process-group kill does not reach
    subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(300)", {daemon!r}],
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    assert add(2, 3) == 5
"""


@dataclass
class Attack:
    """What the hostile test file tries, and the means to see whether it got anywhere."""

    marker: Path
    daemon: str
    listener: socket.socket

    @property
    def test_file(self) -> str:
        port = self.listener.getsockname()[1]
        return HOSTILE_TEST.format(marker=str(self.marker), port=port, daemon=self.daemon)

    def assert_nothing_escaped(self) -> None:
        assert not self.marker.exists(), f"the test file wrote {self.marker} outside the workspace"
        self.listener.setblocking(False)
        try:
            conn, _ = self.listener.accept()
        except BlockingIOError:
            pass
        else:
            conn.close()
            raise AssertionError("the test file connected to a service on the host's loopback")
        survivors = wait_until_gone(self.daemon)
        assert survivors == [], f"the setsid daemon outlived the check: pids {survivors}"


@pytest.fixture
def attack(tmp_path: Path) -> Iterator[Attack]:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    daemon = f"oo-daemon-{uuid.uuid4().hex}"
    try:
        yield Attack(tmp_path / "outside" / "escaped.txt", daemon, listener)
    finally:
        listener.close()
        wait_until_gone(daemon, 0)  # nothing of ours left behind, whatever happened


def hostile_trace(path: Path, test_file: str) -> Path:
    """The real coding-agent trace, its ``write_file tests/test_calc.py`` call replaced."""
    data: dict[str, Any] = json.loads(CODING_TRACE.read_text())
    replaced = 0
    for rs in data["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                for attr in span["attributes"]:
                    if attr["key"] != "gen_ai.tool.call.arguments":
                        continue
                    args = json.loads(attr["value"]["stringValue"])
                    if args.get("path") == "tests/test_calc.py":
                        args["content"] = test_file
                        attr["value"]["stringValue"] = json.dumps(args)
                        replaced += 1
    assert replaced == 1, "the example trace changed: expected one write of tests/test_calc.py"
    path.write_text(json.dumps(data))
    return path


def command_result(report: dict[str, Any]) -> dict[str, Any]:
    results = [r for v in report["verdicts"] for r in v["results"]]
    found = [r for r in results if r["oracle_type"] == "test_must_pass"]
    assert len(found) == 1, results
    return found[0]


def test_grade_runs_a_hostile_trace_test_file_sandboxed(
    cli: Cli, attack: Attack, tmp_path: Path
) -> None:
    trace = hostile_trace(tmp_path / "hostile.otlp.json", attack.test_file)
    done = cli("grade", trace, "--contracts", CODING_CONTRACT, "--json", "--explain", "full")
    assert done.returncode == 1, done.stderr  # no_network flags the socket use
    result = command_result(json.loads(done.stdout))
    assert result["outcome"] == "pass", result  # the test file ran to its end...
    assert result["details"]["sandboxed"] is True
    attack.assert_nothing_escaped()  # ...and got nowhere


def test_run_runs_a_hostile_trajectory_test_file_sandboxed(
    cli: Cli, attack: Attack, write_json: Callable[[str, Any], Path]
) -> None:
    task = write_json(
        "task.json",
        {
            "id": "calc",
            "name": "calc",
            "description": "add() with a test",
            "prompt": "add add()",
            "workspace": {"calc.py": "def add(a, b):\n    return a + b\n"},
            "oracles": [
                {"type": "test_must_pass", "command": "python -m pytest -q -p no:cacheprovider"}
            ],
        },
    )
    trajectory = write_json(
        "trajectory.json",
        {
            "steps": [
                {
                    "tool": "write_file",
                    "args": {"path": "test_calc.py", "content": attack.test_file},
                }
            ]
        },
    )
    done = cli("run", task, "-t", trajectory, "--json", "--explain", "full")
    assert done.returncode == 0, done.stdout + done.stderr
    result = command_result(json.loads(done.stdout))
    assert result["outcome"] == "pass" and result["details"]["sandboxed"] is True, result
    attack.assert_nothing_escaped()


def test_without_a_sandbox_commands_give_error_unless_unsafe_is_asked_for(
    cli: Cli, tmp_path: Path
) -> None:
    # No bwrap on PATH: the machine has no sandbox. The command line is absolute, the
    # checks' interpreter is sys.executable, so nothing else needs PATH.
    env = {"PATH": str(tmp_path), "HOME": str(tmp_path)}
    done = cli("grade", CODING_TRACE, "--contracts", CODING_CONTRACT, "--json", env=env)
    result = command_result(json.loads(done.stdout))
    assert result["outcome"] == "error", result
    assert "bubblewrap" in result["message"] and "--unsafe-run-commands" in result["message"]
    assert result["details"] == {"error.type": "SandboxError"}

    unsafe = cli(
        "grade", CODING_TRACE, "--contracts", CODING_CONTRACT, "--json", "--explain", "full",
        "--unsafe-run-commands", env=env,
    )  # fmt: skip
    result = command_result(json.loads(unsafe.stdout))
    assert result["outcome"] == "pass", result
    assert result["details"]["sandboxed"] is False
