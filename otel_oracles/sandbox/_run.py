"""Run one shell command from a check: sandboxed (or, when the operator said so, directly),
under resource limits, with bounded output and a whole-tree kill on timeout."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from otel_oracles.errors import SandboxError
from otel_oracles.sandbox._bwrap import (
    Launch,
    bwrap_path,
    host_uid_for_run,
    sandbox_argv,
    sandbox_launch,
    sandbox_problem,
)
from otel_oracles.sandbox._capture import CappedStream, drain
from otel_oracles.sandbox._owner import lent_to
from otel_oracles.sandbox.config import CommandPolicy

KILL_GRACE_SECONDS = 5.0
"""How long to wait for the pipes to close once everything was killed."""

_LAUNCHER = """\
import os, resource, sys
mem, fsize, nproc, cpu, uid = (int(v) for v in sys.argv[1:6])
cwd, command = sys.argv[6:8]
for limit, value in ((resource.RLIMIT_AS, mem), (resource.RLIMIT_FSIZE, fsize),
                     (resource.RLIMIT_NPROC, nproc), (resource.RLIMIT_CPU, cpu),
                     (resource.RLIMIT_CORE, 0)):
    resource.setrlimit(limit, (value, value))
if uid >= 0:
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
os.chdir(cwd)
os.execv("/bin/sh", ["sh", "-c", command])
"""
"""Runs first inside the sandbox: set the limits on itself, switch to the host uid a root
grader's command runs as (``uid`` -1: stay), enter the workspace as that uid (root without
capabilities may not enter a directory lent to it), then become ``sh -c command`` (limits
are inherited by everything the command starts; after ``setuid`` no capability is left).
Run with ``-I -S``, so nothing from the workspace or the environment is imported before the
limits hold."""


@dataclass(frozen=True, slots=True)
class CommandRun:
    """What running one command produced."""

    exit_code: int
    """The exit status (negative: killed by that signal, as after a timeout)."""
    timed_out: bool
    stdout: str
    """Kept stdout (head and tail, with a marker where bytes were left out)."""
    stderr: str
    stdout_bytes: int
    """Every byte written to stdout, kept or not."""
    stderr_bytes: int
    sandboxed: bool
    process_limit_problem: str | None = None
    """Why the process-count limit did not hold for this command, or None when it did."""


ROOT_UNSANDBOXED = (
    "not enforced: the command ran unsandboxed as root, which the kernel exempts from RLIMIT_NPROC"
)


def minimal_environment() -> dict[str, str]:
    """The whole environment a command gets: nothing inherited, so no secret in the grader's
    environment (tokens, cloud credentials) reaches code a trace wrote."""
    bindir = str(Path(sys.executable).parent)
    return {
        "PATH": f"{bindir}:/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "USER": "sandbox",
        "LOGNAME": "sandbox",
    }


def _kill_tree(proc: subprocess.Popen[bytes], sandboxed: bool) -> None:
    """Sandboxed: killing bubblewrap ends its PID namespace, so every process inside dies.
    Unsafe: kill the command's process group (a ``setsid`` daemon escapes it)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if sandboxed:
            proc.kill()
        else:
            os.killpg(proc.pid, signal.SIGKILL)


def run_command(command: str, workspace: Path, timeout: float, policy: CommandPolicy) -> CommandRun:
    """Run ``command`` with ``/bin/sh`` in ``workspace`` under ``policy``.

    Blocks until the command and everything it started ended, or ``timeout`` seconds
    passed (then all of it is killed). Raises ``SandboxError`` when the policy forbids
    running or the sandbox is unavailable; runs a command outside the sandbox only when the
    sandbox is unavailable and ``policy.mode`` is ``unsafe``.
    """
    if policy.mode == "off":
        raise SandboxError(policy.off_reason)
    problem = sandbox_problem()
    if problem is not None and policy.mode == "sandbox":
        raise SandboxError(problem)
    sandboxed = problem is None
    launch_as = sandbox_launch() if sandboxed else None
    uid = host_uid_for_run() if launch_as is not None and launch_as.as_root else None
    if launch_as is not None:
        process_limit_problem = launch_as.process_limit_problem
    else:
        process_limit_problem = ROOT_UNSANDBOXED if os.geteuid() == 0 else None
    limits = policy.limits
    env = minimal_environment()
    cpu = max(1, int(timeout) + 1)
    launch = [
        sys.executable,
        "-I",
        "-S",
        "-c",
        _LAUNCHER,
        str(limits.memory_bytes),
        str(limits.file_size_bytes),
        str(limits.processes),
        str(cpu),
        str(-1 if uid is None else uid),
        str(workspace),
        command,
    ]
    with lent_to(workspace, uid):
        out, err, timed_out, proc = _run(launch, workspace, env, timeout, policy, launch_as)
    return CommandRun(
        exit_code=proc.returncode,
        timed_out=timed_out,
        stdout=out.text(),
        stderr=err.text(),
        stdout_bytes=out.total,
        stderr_bytes=err.total,
        sandboxed=sandboxed,
        process_limit_problem=process_limit_problem,
    )


def _run(
    launch: list[str],
    workspace: Path,
    env: dict[str, str],
    timeout: float,
    policy: CommandPolicy,
    launch_as: Launch | None,
) -> tuple[CappedStream, CappedStream, bool, subprocess.Popen[bytes]]:
    """Start ``launch`` (in the sandbox unless ``launch_as`` is None), read its capped
    output until it ended or ``timeout`` passed, then end everything it started."""
    exe = bwrap_path()
    sandboxed = launch_as is not None and exe is not None
    if launch_as is not None and exe is not None:
        sandbox = sandbox_argv(
            exe, workspace, env, tmp_bytes=policy.limits.tmp_bytes, as_root=launch_as.as_root
        )
        proc = subprocess.Popen(
            [*sandbox, *launch],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    else:
        proc = subprocess.Popen(
            launch,
            cwd=workspace,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    assert proc.stdout is not None and proc.stderr is not None
    out, err = CappedStream(policy.limits.output_bytes), CappedStream(policy.limits.output_bytes)
    streams = {proc.stdout: out, proc.stderr: err}
    timed_out = False
    deadline = time.monotonic() + timeout
    try:
        finished = drain(streams, deadline)
        if finished:
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                finished = False
        timed_out = not finished
    finally:
        _kill_tree(proc, sandboxed)
        if timed_out:
            # Whatever still holds the pipes was killed with the tree; a daemon that left
            # the process group (unsafe mode only) may keep them open: stop waiting then.
            drain(streams, time.monotonic() + KILL_GRACE_SECONDS)
        proc.stdout.close()
        proc.stderr.close()
        proc.wait()
    return out, err, timed_out, proc
