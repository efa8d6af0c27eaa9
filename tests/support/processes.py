"""Find processes by a marker in their command line, and wait for them to end.

A sandboxed command runs in its own PID namespace, so the pids it can see are not the
host's: tests start processes with a unique marker in their argv and look for it in
``/proc/<pid>/cmdline`` from the outside instead.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path


def pids_with_marker(marker: str) -> list[int]:
    """Live (not zombie) host pids whose command line contains ``marker``."""
    found = []
    needle = marker.encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        if needle in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def wait_until_gone(marker: str, seconds: float = 10.0) -> list[int]:
    """Poll until no process carries ``marker`` or ``seconds`` pass; the survivors (killed
    before returning, so a failing test leaves nothing behind)."""
    deadline = time.monotonic() + seconds
    while True:
        alive = pids_with_marker(marker)
        if not alive or time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    for pid in alive:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return alive
