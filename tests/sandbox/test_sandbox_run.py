"""The command sandbox itself (docs/security.md): bounded output, a minimal environment,
limits, and no command at all where the policy or the machine does not allow one."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import ClassVar

import pytest

from otel_oracles.errors import SandboxError
from otel_oracles.grade import grade
from otel_oracles.grade.loader import parse_contract
from otel_oracles.grade.oracles.base import Finding, GradeContext, OracleCheck
from otel_oracles.grade.registry import register_oracle
from otel_oracles.model.result import Outcome
from otel_oracles.model.step import Trajectory
from otel_oracles.sandbox import SANDBOXED, CommandPolicy, SandboxLimits, run_command

CAP = SandboxLimits().output_bytes
PY = shlex.quote(sys.executable)


def test_output_beyond_the_cap_is_counted_not_kept(tmp_path: Path) -> None:
    total = 10_000_000
    run = run_command(f"yes | head -c {total}", tmp_path, 60, SANDBOXED)
    assert run.exit_code == 0 and not run.timed_out
    assert run.stdout_bytes == total, "every byte is counted"
    omitted = total - 2 * CAP
    assert f"[... {omitted} bytes omitted ...]" in run.stdout
    assert len(run.stdout) <= 2 * CAP + 100, "only the first and last N KiB are kept"
    assert run.stdout.startswith("y\ny\n") and run.stdout.endswith("y\n")


def test_endless_output_until_the_timeout_costs_bounded_memory(tmp_path: Path) -> None:
    start = time.monotonic()
    run = run_command("yes", tmp_path, 2, SANDBOXED)
    assert run.timed_out and time.monotonic() - start < 20
    assert run.stdout_bytes > 4 * CAP, "yes wrote far more than the cap in 2 s"
    assert len(run.stdout) <= 2 * CAP + 100


def test_the_command_gets_a_minimal_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "grader-secret")
    run = run_command("env", tmp_path, 30, SANDBOXED)
    assert "grader-secret" not in run.stdout
    names = {line.split("=", 1)[0] for line in run.stdout.splitlines() if "=" in line}
    assert names <= {"PATH", "HOME", "TMPDIR", "LANG", "USER", "LOGNAME", "PWD", "SHLVL", "_"}


def test_the_workspace_is_the_only_writable_host_path(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    outside = tmp_path / "outside.txt"
    venv_file = Path(sys.prefix) / "oo-sandbox-probe"
    run = run_command(
        f"echo in > inside.txt; echo out > {outside} ; echo v > {venv_file} ; true",
        workspace,
        30,
        SANDBOXED,
    )
    assert run.exit_code == 0
    assert (workspace / "inside.txt").read_text() == "in\n"
    assert not outside.exists() and not venv_file.exists()


def test_limits_apply_inside_the_sandbox(tmp_path: Path) -> None:
    policy = CommandPolicy(limits=SandboxLimits(file_size_bytes=4096))
    run = run_command("head -c 100000 /dev/zero > big; echo $?", tmp_path, 30, policy)
    assert (tmp_path / "big").stat().st_size == 4096, "RLIMIT_FSIZE caps what a file can grow to"
    assert run.stdout.strip() != "0"


def test_python_is_the_interpreter_running_otel_oracles(tmp_path: Path) -> None:
    run = run_command(f"{PY} -c 'import sys; print(sys.executable)'", tmp_path, 30, SANDBOXED)
    assert run.stdout.strip() == sys.executable, run.stderr


def test_pytest_starts_in_the_sandbox_when_another_checkout_is_imported(tmp_path: Path) -> None:
    """The grader imports otel-oracles from ``PYTHONPATH`` (another checkout than the one
    the environment installed editable, as when working in a second git worktree): the
    sandbox bound the running package's checkout, but its interpreter starts without
    ``PYTHONPATH`` and loads the installed checkout's ``pytest11`` plug-in, which was not
    bound: every sandboxed pytest stopped with ``Error while loading plugin "pytest11"``
    (exit 3). Where the installed package lies under a bound prefix this passes either way."""
    import otel_oracles

    other = tmp_path / "other-checkout"
    shutil.copytree(
        Path(otel_oracles.__file__).parent,
        other / "otel_oracles",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    grader = (
        "import sys; from pathlib import Path; "
        "from otel_oracles.sandbox import SANDBOXED, run_command; "
        "run = run_command('python -m pytest -q -p no:cacheprovider', Path(sys.argv[1]), 120, "
        "SANDBOXED); print(run.exit_code); print(run.stdout[-2000:] + run.stderr[-2000:])"
    )
    done = subprocess.run(
        [sys.executable, "-c", grader, str(workspace)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        env={"PATH": os.environ.get("PATH", os.defpath), "PYTHONPATH": str(other)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    code, _, output = done.stdout.partition("\n")
    assert "pytest11" not in output, output
    assert code == "0" and "1 passed" in output, done.stdout


def test_an_off_policy_runs_nothing(tmp_path: Path) -> None:
    off = CommandPolicy(mode="off", off_reason="commands are off here")
    with pytest.raises(SandboxError, match="commands are off here"):
        run_command(f"touch {tmp_path / 'ran'}", tmp_path, 30, off)
    assert not (tmp_path / "ran").exists()


_CALLS: list[str] = []


@register_oracle
class _RunsSomething(OracleCheck):
    """A plug-in that marks itself as executing commands."""

    oracle_type = "test_sandbox_runs_something"
    runs_commands: ClassVar[bool] = True

    def check(self, ctx: GradeContext) -> Finding:
        _CALLS.append("called")
        return Finding.ok("ran")


def test_a_plugin_marked_as_executing_is_not_called_when_commands_may_not_run() -> None:
    contract = parse_contract(
        {
            "id": "p", "name": "p", "description": "d", "prompt": "p",
            "workspace": {"a.txt": "x"},
            "oracles": [{"type": "test_sandbox_runs_something"}],
        },
        "p.json",
    )  # fmt: skip
    off = CommandPolicy(mode="off", off_reason="commands are off here")
    verdict = grade(contract, Trajectory(steps=[]), commands=off)
    (result,) = verdict.results
    assert result.outcome == Outcome.ERROR and result.message == "commands are off here"
    assert _CALLS == [], "check() must not run when commands may not"
    assert grade(contract, Trajectory(steps=[])).results[0].outcome == Outcome.PASS
    assert _CALLS == ["called"]


def test_without_bubblewrap_a_sandboxed_command_is_an_error_never_run(tmp_path: Path) -> None:
    # A fresh interpreter whose PATH holds no bwrap: the probe is per process.
    code = (
        "import sys; from pathlib import Path; "
        "from otel_oracles.sandbox import SANDBOXED, run_command; "
        "from otel_oracles.errors import SandboxError\n"
        "try:\n"
        f"    run_command('touch ran', Path({str(tmp_path)!r}), 30, SANDBOXED)\n"
        "except SandboxError as exc:\n"
        "    print(exc.message)\n"
    )
    env = {"PATH": str(tmp_path), "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert "bubblewrap (bwrap) is not installed" in done.stdout, done.stderr
    assert "apt-get install bubblewrap" in done.stdout
    assert not (tmp_path / "ran").exists()
