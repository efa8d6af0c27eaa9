"""Lend the workspace to the unprivileged uid a root grader's sandbox runs as.

bubblewrap started as ``HOST_UID_WHEN_ROOT`` (so that the process-count limit holds) can
write only what that uid owns, and the command must write in its workspace (pytest's caches,
files a test creates). So the tree is handed to that uid for the run and back afterwards.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def lent_to(workspace: Path, uid: int | None) -> Iterator[None]:
    """Own ``workspace`` (every entry, symlinks themselves) as ``uid``:``uid`` inside the
    block, then as the owner of the workspace directory before it. ``uid`` None: no change.

    Safe over a tree hostile code wrote: symlinks are never followed (``lchown``), the walk
    is iterative (no recursion limit for deep trees), entries it cannot reach (a path
    longer than ``PATH_MAX``) are skipped, and nothing is running as ``uid`` when it walks
    back (the sandbox's PID namespace ended with the command). Hard links to files outside
    the workspace cannot exist: inside the sandbox the workspace is its own mount.
    """
    if uid is None:
        yield
        return
    before = os.lstat(workspace)
    _chown_tree(workspace, uid, uid)
    try:
        yield
    finally:
        _chown_tree(workspace, before.st_uid, before.st_gid)


def _chown_tree(root: Path, uid: int, gid: int) -> None:
    os.chown(root, uid, gid, follow_symlinks=False)
    pending = [str(root)]
    while pending:
        directory = pending.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            with contextlib.suppress(OSError):
                os.chown(entry.path, uid, gid, follow_symlinks=False)
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
