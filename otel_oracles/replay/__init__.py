"""Replay: materialize a task workspace in a fresh temporary directory and apply a
trajectory's file edits in order. Recorded commands are never executed here.

Every path is resolved before anything is written: absolute paths, ``..`` segments and
paths that resolve through a symlink to outside the directory raise ``ReplayError`` and
nothing is written outside. The directory is removed on exit.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from otel_oracles.errors import ReplayError
from otel_oracles.model.step import Trajectory, normalize_path


def safe_target(root: Path, rel: str, what: str) -> Path:
    """The absolute path for ``rel`` inside ``root``, or ``ReplayError``."""
    norm = normalize_path(rel)
    pure = PurePosixPath(norm)
    if (
        not norm
        or pure.is_absolute()
        or rel.startswith(("/", "\\"))
        or (len(rel) > 1 and rel[1] == ":")
    ):
        raise ReplayError(
            f"{what}: path {rel!r} is absolute; only workspace-relative paths are allowed"
        )
    if ".." in pure.parts:
        raise ReplayError(f"{what}: path {rel!r} escapes the workspace through '..'")
    target = root.joinpath(*pure.parts)
    resolved = target.resolve()
    if not resolved.is_relative_to(root.resolve()):
        raise ReplayError(f"{what}: path {rel!r} escapes the workspace through a symlink")
    return target


def write_inside(root: Path, rel: str, content: str, what: str) -> None:
    target = safe_target(root, rel, what)
    target.parent.mkdir(parents=True, exist_ok=True)
    # Re-check after creating parents: a parent created earlier could be a symlink.
    if not target.parent.resolve().is_relative_to(root.resolve()):
        raise ReplayError(f"{what}: path {rel!r} escapes the workspace through a symlink")
    if target.is_symlink():
        raise ReplayError(f"{what}: path {rel!r} is a symlink; refusing to write through it")
    target.write_text(content, encoding="utf-8")


@contextmanager
def replayed_workspace(workspace: Mapping[str, str], trajectory: Trajectory) -> Iterator[Path]:
    """Yield a temporary directory holding ``workspace`` with the trajectory's edits applied."""
    with tempfile.TemporaryDirectory(prefix="otel-oracles-replay-") as tmp:
        root = Path(tmp)
        for rel, content in workspace.items():
            write_inside(root, rel, content, f"workspace[{rel!r}]")
        for index, path, content in trajectory.file_edits():
            write_inside(root, path, content, f"steps[{index}]")
        yield root
