"""Worker processes die with their parent.

``grade --workers`` and ``serve`` start worker processes. ``daemon=True`` only stops them when
the parent exits normally; a parent killed by a signal (a CI timeout, an OOM kill, ``kill``)
would leave them grading on, orphaned, for as long as their input lasts (minutes on a
decompression bomb). On Linux the kernel can send a signal to a process when its parent dies
(``PR_SET_PDEATHSIG``); a worker asks for that first thing. Elsewhere this is a no-op and
``daemon=True`` is what remains.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import multiprocessing
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """In a ``multiprocessing`` child: have the kernel kill this process (SIGKILL) when its
    parent exits, and exit now if the parent is already gone (it may have died before the
    request took effect)."""
    parent = multiprocessing.parent_process()
    if parent is None or not sys.platform.startswith("linux"):
        return
    libc_name = ctypes.util.find_library("c")
    if libc_name is None:
        return
    libc = ctypes.CDLL(libc_name, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent.pid:
        os._exit(1)
