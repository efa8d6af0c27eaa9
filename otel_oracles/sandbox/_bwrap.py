"""The bubblewrap command line that isolates one command.

The sandbox gets fresh user, PID, mount, network, IPC and UTS namespaces. Its file system
is a new root holding read-only binds of the system directories and of the running
interpreter's prefixes (so ``python`` is the interpreter running otel-oracles, DESIGN.md
section 5), a private ``/proc``, a minimal ``/dev``, a size-capped private ``/tmp``, and
the workspace: the only writable host path. The network namespace has nothing but its own
loopback, which reaches no host service. The command sees uid/gid 65534 and an
environment built from scratch. ``--die-with-parent`` and the PID namespace tie every
process to bubblewrap: when it ends (the command exited, or it was killed on timeout), the
kernel kills everything left inside, daemons that called ``setsid`` included.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

SANDBOX_UID = 65534
"""``nobody``: the command runs as no one in particular inside its user namespace."""

INSTALL_HINT = (
    "install it (apt-get install bubblewrap), or pass --unsafe-run-commands to run "
    "trace-written code unsandboxed"
)

_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/alternatives",
    "/etc/localtime",
    "/etc/nsswitch.conf",
)
"""What dynamic linking and the C library read; no passwd, shadow, hosts or credentials."""


@functools.cache
def bwrap_path() -> str | None:
    """The bubblewrap executable on ``PATH``, or None."""
    return shutil.which("bwrap")


@functools.cache
def sandbox_problem() -> str | None:
    """Why the sandbox cannot run here (one sentence naming the fix), or None when it can.

    Probed once per process by starting a sandbox that runs ``true``: bubblewrap may be
    installed and still refused user namespaces by the kernel or a container runtime.
    """
    exe = bwrap_path()
    if exe is None:
        return f"no sandbox: bubblewrap (bwrap) is not installed; {INSTALL_HINT}"
    probe = sandbox_argv(exe, Path("/"), {"PATH": "/usr/bin:/bin"}, tmp_bytes=1024 * 1024)
    try:
        done = subprocess.run(
            [*probe, "true"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"no sandbox: bubblewrap failed ({exc}); {INSTALL_HINT}"
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
        detail = why[0] if why else f"exit code {done.returncode}"
        return f"no sandbox: bubblewrap failed ({detail[:80]}); {INSTALL_HINT}"
    return None


@functools.cache
def _supports(option: str) -> bool:
    """Whether this bubblewrap knows ``option`` (``--size`` and ``--disable-userns`` are
    newer than some distributions' packages)."""
    exe = bwrap_path()
    if exe is None:
        return False
    done = subprocess.run([exe, "--help"], capture_output=True, check=False, timeout=30)
    return option.encode() in done.stdout


def interpreter_dirs() -> list[str]:
    """Directories the running interpreter needs, outside the system directories: its
    prefixes (a venv and the Python it was made from), where its executable resolves, and
    the directory holding the ``otel_oracles`` package. The last matters for an editable
    install, whose package lives outside the prefix while its metadata is inside: pytest
    in the sandbox loads otel-oracles' ``pytest11`` plug-in and stops (exit 3) when it
    cannot import it."""
    found: list[str] = []
    candidates = (
        sys.prefix,
        sys.exec_prefix,
        sys.base_prefix,
        sys.base_exec_prefix,
        str(Path(os.path.realpath(sys.executable)).parent.parent),
        str(Path(__file__).resolve().parent.parent.parent),
    )
    for raw in candidates:
        path = os.path.realpath(raw)
        if any(path == d or path.startswith(d + "/") for d in ("/usr", *found)):
            continue
        if os.path.isdir(path) and path != "/":
            found.append(path)
    return found


def _system_binds() -> list[str]:
    args: list[str] = []
    for d in _SYSTEM_DIRS:
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
    for f in _ETC_FILES:
        args += ["--ro-bind-try", f, f]
    return args


def sandbox_argv(exe: str, workspace: Path, env: dict[str, str], *, tmp_bytes: int) -> list[str]:
    """bubblewrap's argv up to (not including) the command, for ``workspace`` and ``env``."""
    args = [
        exe,
        "--unshare-user",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--uid",
        str(SANDBOX_UID),
        "--gid",
        str(SANDBOX_UID),
        "--hostname",
        "sandbox",
        "--die-with-parent",
        "--new-session",
    ]
    if _supports("--disable-userns"):
        args.append("--disable-userns")
    args += _system_binds()
    args += ["--proc", "/proc", "--dev", "/dev"]
    if _supports("--size"):
        args += ["--size", str(tmp_bytes)]
    args += ["--tmpfs", "/tmp"]
    for d in interpreter_dirs():
        args += ["--ro-bind", d, d]
    ws = str(workspace)
    if ws != "/":
        args += ["--bind", ws, ws]
    # Everything outside the workspace and /tmp is read-only, the new root included.
    args += ["--remount-ro", "/", "--chdir", ws, "--clearenv"]
    for key, value in env.items():
        args += ["--setenv", key, value]
    return args
