"""The bubblewrap command line that isolates one command.

The sandbox gets fresh user, PID, mount, network, IPC and UTS namespaces. Its file system
is a new root holding read-only binds of the system directories and of the running
interpreter's prefixes (so ``python`` is the interpreter running otel-oracles, DESIGN.md
section 5), a private ``/proc``, a minimal ``/dev``, a size-capped private ``/tmp``, and
the workspace: the only writable host path. The network namespace has nothing but its own
loopback, which reaches no host service. The command sees uid/gid 65534 and an
environment built from scratch.

The kernel does not apply the process-count limit (``RLIMIT_NPROC``) to processes that are
root on the host, and in a user namespace made by a root grader the sandbox's user *is* host
root. So when otel-oracles runs as root, bubblewrap makes no user namespace: the sandbox
keeps only ``CAP_SETUID``/``CAP_SETGID`` (and ``no_new_privs``), and the launcher
(``_run._LAUNCHER``) switches to an unused host uid (``host_uid_for_run``) before the
command starts, so the limit counts that uid's processes: the sandbox's own.

``--die-with-parent`` and the PID namespace tie every process to bubblewrap: when it ends
(the command exited, or it was killed on timeout), the kernel kills everything left inside,
daemons that called ``setsid`` included.
"""

from __future__ import annotations

import functools
import itertools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

SANDBOX_UID = 65534
"""``nobody``: the command runs as no one in particular inside its user namespace."""
HOST_UID_BASE = 1_879_048_192
"""Start of the host uids a root grader's commands run as, one per run: systemd leaves
1879048192-2147483647 unassigned, so no account or service shares their process counts."""
HOST_UID_SPAN = 1 << 24
_RUNS = itertools.count()

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


@dataclass(frozen=True, slots=True)
class Launch:
    """How bubblewrap is started on this host."""

    as_root: bool
    """Started as root without a user namespace; the launcher switches to
    ``host_uid_for_run()`` (the only way ``RLIMIT_NPROC`` holds for a root grader)."""
    process_limit_problem: str | None = None
    """Why ``RLIMIT_NPROC`` does not hold for the command, or None when it does."""


def host_uid_for_run() -> int:
    """A host uid (and gid) for one command of a root grader: unused by accounts, and
    different for concurrent runs (per process and per call), so each sandbox's processes
    are counted apart."""
    return HOST_UID_BASE + (os.getpid() * 4096 + next(_RUNS)) % HOST_UID_SPAN


def sandbox_problem() -> str | None:
    """Why the sandbox cannot run here (one sentence naming the fix), or None when it can."""
    return _probe()[0]


def sandbox_launch() -> Launch:
    """How to start bubblewrap here (meaningful when ``sandbox_problem()`` is None)."""
    return _probe()[1]


@functools.cache
def _probe() -> tuple[str | None, Launch]:
    """Probed once per process by starting a sandbox that runs ``true``: bubblewrap may be
    installed and still refused namespaces by the kernel or a container runtime. As root,
    first without a user namespace; when only the user-namespace form works, the sandbox
    runs that way and every command's result says that the process-count limit does not
    hold."""
    exe = bwrap_path()
    unprivileged = Launch(as_root=False)
    if exe is None:
        return f"no sandbox: bubblewrap (bwrap) is not installed; {INSTALL_HINT}", unprivileged
    if os.geteuid() == 0:
        failed_as_root = (
            _probe_as(exe, as_root=True)
            if _supports("--perms")
            else "this bubblewrap has no --perms"
        )
        if failed_as_root is None:
            return None, Launch(as_root=True)
    failed = _probe_as(exe, as_root=False)
    if failed is not None:
        return f"no sandbox: bubblewrap failed ({failed}); {INSTALL_HINT}", unprivileged
    if os.geteuid() != 0:
        return None, unprivileged
    why = (
        "not enforced: otel-oracles runs as root, which the kernel exempts from RLIMIT_NPROC, "
        f"and bubblewrap failed without a user namespace ({failed_as_root}); the sandbox "
        "still ends every process when the command ends"
    )
    return None, Launch(as_root=False, process_limit_problem=why)


def _probe_as(exe: str, *, as_root: bool) -> str | None:
    """Why a sandbox running ``true`` fails, or None when it works."""
    probe = sandbox_argv(
        exe, Path("/"), {"PATH": "/usr/bin:/bin"}, tmp_bytes=1024 * 1024, as_root=as_root
    )
    try:
        done = subprocess.run(
            [*probe, "true"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)[:80]
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
        return (why[0] if why else f"exit code {done.returncode}")[:80]
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
    prefixes (a venv and the Python it was made from), where its executable resolves, the
    directory holding the running ``otel_oracles`` package, and every directory on the path
    the interpreter starts with in the sandbox's clean environment (``_startup_path``). The
    last two matter for an editable install, whose package lives outside the prefix while
    its metadata is inside: pytest in the sandbox loads otel-oracles' ``pytest11`` plug-in
    and stops (exit 3, ``Error while loading plugin "pytest11"``) when it cannot import it.
    With ``PYTHONPATH`` naming another checkout than the installed one, the running package
    was bound and the installed one, which the sandbox's interpreter imports, was not."""
    found: list[str] = []
    candidates = (
        sys.prefix,
        sys.exec_prefix,
        sys.base_prefix,
        sys.base_exec_prefix,
        str(Path(os.path.realpath(sys.executable)).parent.parent),
        str(Path(__file__).resolve().parent.parent.parent),
        *_startup_path(),
    )
    for raw in candidates:
        path = os.path.realpath(raw)
        if any(path == d or path.startswith(d + "/") for d in ("/usr", *found)):
            continue
        if os.path.isdir(path) and path != "/":
            found = [d for d in found if not d.startswith(path + "/")]  # one bind holds both
            found.append(path)
    return found


@functools.cache
def _startup_path() -> tuple[str, ...]:
    """``sys.path`` of this interpreter started as the sandbox starts it: environment
    cleared (``-I``: no ``PYTHONPATH``, no user site), so what remains are its own
    directories and those its ``.pth`` files add (an editable install's checkout). Asked of
    the interpreter itself: the ``.pth`` files are its site module's to read. Empty when it
    cannot say (the sandbox then binds what it bound before)."""
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-c", "import sys; print('\\0'.join(sys.path))"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=30,
            check=False,
            env={"PATH": os.defpath, "HOME": "/tmp", "LANG": "C.UTF-8"},
        )
    except (OSError, subprocess.TimeoutExpired):
        return ()
    if done.returncode != 0:
        return ()
    text = done.stdout.decode("utf-8", errors="surrogateescape").rstrip("\n")
    return tuple(p for p in text.split("\0") if p.startswith("/"))


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


def _parents(path: str, made: set[str]) -> list[str]:
    """``--dir`` (mode 0755) for each ancestor of ``path`` not made yet: bubblewrap run as
    root creates a bind's missing parents mode 0700, which the command's uid cannot enter."""
    args: list[str] = []
    parts = Path(path).parts[1:-1]
    for i in range(len(parts)):
        parent = "/" + "/".join(parts[: i + 1])
        if parent not in made:
            made.add(parent)
            args += ["--perms", "0755", "--dir", parent]
    return args


def sandbox_argv(
    exe: str, workspace: Path, env: dict[str, str], *, tmp_bytes: int, as_root: bool = False
) -> list[str]:
    """bubblewrap's argv up to (not including) the command, for ``workspace`` and ``env``.

    ``as_root``: for bubblewrap started as root, no user namespace; the sandbox keeps only
    the capabilities the launcher needs to switch to its host uid."""
    args = [exe]
    if as_root:
        args += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        args += ["--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
        if _supports("--disable-userns"):
            args.append("--disable-userns")
    args += [
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--hostname",
        "sandbox",
        "--die-with-parent",
        "--new-session",
    ]
    args += _system_binds()
    args += ["--proc", "/proc", "--dev", "/dev"]
    if _supports("--size"):
        args += ["--size", str(tmp_bytes)]
    if _supports("--perms"):
        args += ["--perms", "1777"]
    args += ["--tmpfs", "/tmp"]
    made = {"/proc", "/dev", "/tmp", *_SYSTEM_DIRS}
    ws = str(workspace)
    for d in [*interpreter_dirs(), *([ws] if ws != "/" else [])]:
        if as_root:
            args += _parents(d, made)
        made.add(d)
        args += ["--bind" if d == ws else "--ro-bind", d, d]
    # Everything outside the workspace and /tmp is read-only, the new root included.
    args += ["--remount-ro", "/", "--clearenv"]
    for key, value in env.items():
        args += ["--setenv", key, value]
    return args
