"""Replay: materialize a task workspace in a fresh temporary directory and apply a
trajectory's file edits in order. Recorded commands are never executed here.

Every path is checked before anything is written: absolute paths (POSIX, ``C:\\`` drive and
``\\\\server`` UNC forms), ``..`` segments and paths that reach a symlink are refused with
``ReplayError``, and nothing is ever written outside the directory. Writes walk the path one
component at a time without following symlinks and open the file with ``O_NOFOLLOW``, so a
symlink planted by anything (an earlier step, a test command, a race) cannot redirect a
write. The directory is removed on exit.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from otel_oracles._native import InMemoryReplay
from otel_oracles.errors import ReplayError
from otel_oracles.model.step import FILE_EDIT, Trajectory, normalize_path

_DRIVE = re.compile(r"^[A-Za-z]:")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

MAX_PATH_PARTS = 64
"""Deepest directory a replayed file may be written in. A trajectory is data, and each
directory of a written path is created and checked for links by its path from the
workspace root: the work grows with the square of the depth (3.9 s for one file 1,000
directories deep), and removing the replay afterwards recursed once per level (Python's
``shutil.rmtree``: ``RecursionError``, the workspace left behind). Source trees are far
shallower than this."""

MAX_CREATED_ENTRIES = 10_000
"""Most files and directories a trajectory's edits may create in the replayed workspace
(the task's own files and directories not counted; rewriting a file counts once). Depth and
bytes are bounded, their number was not: 64 MiB of trajectory holds a million writes of a
tiny file, each made on disk at a few milliseconds apiece (3,000 writes took 11 s to
grade here): an hour of one grader and a million inodes of the temporary directory. The
step that passes it is a replay error, raised before that step is written."""


class CreatedEntries:
    """Counts the files and directories a trajectory's edits create, against
    ``MAX_CREATED_ENTRIES``, for the on-disk replay. The in-memory replay (``_InMemory``)
    counts the same entries in step order without it, so both refuse the same trajectory at
    the same step with the same message (``too_many``)."""

    def __init__(self, workspace: Mapping[str, str]) -> None:
        self._known: set[str] = set()
        for rel in workspace:
            self._known.update(self.entries(checked_parts(rel, f"workspace[{rel!r}]")))
        self._created = 0

    @staticmethod
    def entries(parts: tuple[str, ...]) -> list[str]:
        """The entries writing the file ``parts`` names needs: each directory, then the file."""
        return ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]

    @staticmethod
    def too_many(what: str) -> str:
        """The refusal of the step ``what`` that passes ``MAX_CREATED_ENTRIES``."""
        return (
            f"{what}: the trajectory creates more than {MAX_CREATED_ENTRIES} files and "
            "directories in the workspace; refusing to replay it"
        )

    def add(self, parts: tuple[str, ...], what: str) -> None:
        """Count what writing ``parts`` creates; ``ReplayError`` past the limit."""
        for entry in self.entries(parts):
            if entry not in self._known:
                self._known.add(entry)
                self._created += 1
        if self._created > MAX_CREATED_ENTRIES:
            raise ReplayError(self.too_many(what))


_CHECKED: dict[str, tuple[str, ...]] = {}
"""Path -> its components, for paths ``checked_parts`` accepted: a replay checks each path
of the workspace and of the edits more than once (counting what it creates, then writing
it), the checks ask again for the files they read, and every trajectory graded by a
contract repeats its workspace's paths. Kept to a few thousand paths."""


def checked_parts(rel: str, what: str) -> tuple[str, ...]:
    """The components of ``rel`` inside a workspace, or the ``ReplayError`` ``safe_target``
    raises for it before looking at the disk (NUL, empty, absolute, ``..``). An accepted
    path's components are remembered (``_CHECKED``); a refused one is checked again, its
    message naming ``what``."""
    try:
        return _CHECKED[rel]
    except KeyError:
        pass
    parts = _checked_parts(rel, what)
    if len(_CHECKED) >= 4096:
        _CHECKED.clear()
    _CHECKED[rel] = parts
    return parts


def _checked_parts(rel: str, what: str) -> tuple[str, ...]:
    """``checked_parts`` without the memo. ``normalize_path`` leaves a relative path without
    empty or ``.`` components, so its components are its ``/``-separated pieces, as
    ``PurePosixPath(norm).parts`` reads them (at a fraction of its cost). A path without a
    backslash whose pieces are none of them empty, ``.`` or ``..`` (a relative path: an
    absolute one's first piece is empty) is its own normal form (``posixpath.normpath``
    keeps every such piece and joins them back): most paths a trajectory writes are, and
    ``normpath`` is interpreted on Python 3.11 (a loop over the pieces, a list, a join),
    while most of the paths a grade replays are seen once."""
    if "\x00" in rel:
        raise ReplayError(f"{what}: path {rel!r} contains a NUL byte")
    pieces = rel.split("/")
    if "\\" in rel or "" in pieces or "." in pieces or ".." in pieces:
        norm = normalize_path(rel)
        if not norm:
            raise ReplayError(f"{what}: path {rel!r} does not name a file in the workspace")
        pieces = norm.split("/")
    else:
        norm = rel
    if norm.startswith("/") or rel.startswith(("/", "\\")) or _DRIVE.match(norm):
        raise ReplayError(
            f"{what}: path {rel!r} is absolute; only workspace-relative paths are allowed"
        )
    parts = tuple(pieces)
    if ".." in parts:
        raise ReplayError(f"{what}: path {rel!r} escapes the workspace through '..'")
    if len(parts) > MAX_PATH_PARTS + 1:
        raise ReplayError(
            f"{what}: path {rel[:200]!r}... is nested deeper than {MAX_PATH_PARTS} directories"
        )
    return parts


def safe_target(root: Path, rel: str, what: str) -> Path:
    """The path for ``rel`` inside ``root``, or ``ReplayError`` when it could reach outside.

    ``what`` names the source of the path (``steps[3]``) for the message.
    """
    target = root.joinpath(*checked_parts(rel, what))
    if not target.resolve().is_relative_to(root.resolve()):
        raise ReplayError(f"{what}: path {rel!r} escapes the workspace through a symlink")
    return target


def _refuse_symlink(path: Path, root: Path, rel: str, what: str) -> None:
    if path.is_symlink():
        where = (
            "escapes the workspace through"
            if not path.resolve().is_relative_to(root.resolve())
            else "goes through"
        )
        raise ReplayError(f"{what}: path {rel!r} {where} a symlink; refusing to write")


def write_inside(root: Path, rel: str, content: str, what: str) -> None:
    """Write ``content`` (UTF-8) to ``rel`` inside ``root``, creating parent directories.

    Raises ``ReplayError`` for escaping paths, symlinks anywhere on the path, and paths that
    collide with an existing file or directory (``a`` is a file, ``a/b`` is written).
    """
    target = safe_target(root, rel, what)
    parts = target.relative_to(root).parts
    current = root
    try:
        for part in parts[:-1]:
            current = current / part
            _refuse_symlink(current, root, rel, what)
            if current.exists() and not current.is_dir():
                raise ReplayError(
                    f"{what}: path {rel!r} needs directory {current.relative_to(root)} "
                    "but that is a file"
                )
            current.mkdir(exist_ok=True)
        _refuse_symlink(target, root, rel, what)
        if target.is_dir():
            raise ReplayError(f"{what}: path {rel!r} is a directory, not a file")
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(content.encode("utf-8"))
    except OSError as exc:
        raise ReplayError(f"{what}: cannot write {rel!r}: {exc.strerror or exc}") from None


REPLAY_PREFIX = "otel-oracles-replay-"
"""Replay directories are named ``otel-oracles-replay-<pid>-<random>``: the pid of the process
that owns them, so a later process can tell which ones a killed grader left behind."""

_swept = threading.Event()


def sweep_orphaned_replays(directory: Path | None = None) -> int:
    """Remove replay directories whose owning process is gone (a grading worker killed by a
    signal never runs its cleanup). Returns how many were removed."""
    where = Path(directory or tempfile.gettempdir())
    removed = 0
    try:
        entries = list(os.scandir(where))
    except OSError:
        return 0
    for entry in entries:
        if not entry.name.startswith(REPLAY_PREFIX):
            continue
        owner = entry.name[len(REPLAY_PREFIX) :].split("-", 1)[0]
        if not owner.isdigit() or _alive(int(owner)):
            continue
        remove_tree(entry.path)
        removed += 1
    return removed


def remove_tree(path: str) -> None:
    """Remove the directory ``path`` and everything in it, whatever its depth, never
    raising. ``shutil.rmtree`` (which never follows a link out of the tree) recurses once
    per level: a tree about a thousand directories deep ends it in ``RecursionError``, and
    a replay left behind that deep stopped every later run at its sweep. Such a tree is
    removed by ``rm -rf``, which walks without recursing and never follows links either."""
    try:
        shutil.rmtree(path, ignore_errors=True)
    except RecursionError:
        rm = shutil.which("rm")
        if rm is not None:
            import subprocess  # only here: a grade that runs no command never loads it

            subprocess.run(
                [rm, "-rf", "--one-file-system", "--", path],
                check=False,
                capture_output=True,
                timeout=300,
            )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextmanager
def replayed_workspace(workspace: Mapping[str, str], trajectory: Trajectory) -> Iterator[Path]:
    """Yield a temporary directory holding ``workspace`` with the trajectory's edits applied.

    Edits are applied in step order; a later edit of the same path replaces the earlier one.
    The first replay of a process also removes what killed graders left behind.
    """
    if not _swept.is_set():
        _swept.set()
        sweep_orphaned_replays()
    # A test command may leave files that resist removal; that must not fail the grading.
    with tempfile.TemporaryDirectory(
        prefix=f"{REPLAY_PREFIX}{os.getpid()}-", ignore_cleanup_errors=True
    ) as tmp:
        root = Path(tmp).resolve()
        created = CreatedEntries(workspace)
        for rel, content in workspace.items():
            write_inside(root, rel, content, f"workspace[{rel!r}]")
        for index, path, content in trajectory.file_edits():
            what = f"steps[{index}]"
            created.add(checked_parts(path, what), what)
            write_inside(root, path, content, what)
        yield root


NAME_MAX = 255
"""Longest file name (bytes) assumed writable; longer names are left to the real replay."""

PATH_SOFT_MAX = 2048
"""Longest relative path (bytes) the in-memory replay vouches for (PATH_MAX is 4096 with the
temporary directory's own prefix)."""


_PLANS: dict[str, tuple[str, tuple[str, ...]] | None] = {}
"""Path -> ``_plan`` of it, for paths ``checked_parts`` accepted: the file's key and its
directories, or None when only the disk can tell. Every trajectory a contract grades writes
its files through the same few paths; kept to a few thousand paths, as ``_CHECKED``."""

_UNPLANNED: tuple[str, tuple[str, ...]] = ("", ())
"""``_PLANS.get``'s default: a path not planned yet (no plan has an empty key)."""


def _plan(rel: str, what: str) -> tuple[str, tuple[str, ...]] | None:
    """``rel``'s key in the in-memory replay (its components joined by ``/``) and the
    directories writing it needs (each ``/``-joined prefix), or None when only the disk can
    tell (a component longer than ``NAME_MAX`` bytes, a path over ``PATH_SOFT_MAX``, a path
    not encodable as UTF-8); ``checked_parts``' ``ReplayError`` for a refused path. An
    accepted path's plan is remembered (``_PLANS``)."""
    parts = checked_parts(rel, what)
    key = "/".join(parts)
    plan: tuple[str, tuple[str, ...]] | None = None
    try:
        sizes = list(map(len, parts)) if key.isascii() else [len(p.encode()) for p in parts]
    except UnicodeError:
        pass
    else:
        if max(sizes) <= NAME_MAX and sum(sizes) <= PATH_SOFT_MAX:
            plan = key, tuple("/".join(parts[:i]) for i in range(1, len(parts)))
    if len(_PLANS) >= 4096:
        _PLANS.clear()
    _PLANS[rel] = plan
    return plan


def _what(label: str | int) -> str:
    """What a message names: ``label`` itself, or ``steps[label]`` for a step's index (made
    only for a message: most edits never need it)."""
    return label if isinstance(label, str) else f"steps[{label}]"


class _InMemory:
    """The in-memory replay so far (``replayed_files``): the files written (path -> bytes)
    and the directories they need, and ``limit``, the most entries (files and directories)
    it may hold before the trajectory has created more than ``MAX_CREATED_ENTRIES``.

    Files and directories never share a name (a write that would make them is refused), and
    every entry a write counts as created is one it adds: so the entries ``CreatedEntries``
    would know are exactly ``files`` and ``dirs``, and its count is how many more of them
    there are than the workspace's own. The count is that difference, not a set of its own
    copied for each trajectory and filled for each write."""

    __slots__ = ("dirs", "files", "limit")

    def __init__(self, files: dict[str, bytes], dirs: set[str], limit: int) -> None:
        self.files = files
        self.dirs = dirs
        self.limit = limit

    def copy(self) -> _InMemory:
        return _InMemory(dict(self.files), set(self.dirs), self.limit)

    def write(self, rel: str, content: str, label: str | int) -> bool:
        """Count and write ``content`` to ``rel`` (``label``: what a message names, an int
        for ``steps[label]``); False when only the disk can tell (over-long names, text that
        cannot be encoded), ``ReplayError`` as the disk replay raises it for the same step:
        a refused path, then the count over ``MAX_CREATED_ENTRIES``, then a file where a
        directory is needed or a directory where the file goes."""
        files, dirs = self.files, self.dirs
        plan = _PLANS.get(rel, _UNPLANNED)
        if plan is _UNPLANNED:
            plan = _plan(rel, _what(label))
        if plan is not None:
            key, needed = plan
            for prefix in needed:
                if prefix in files:
                    break
                dirs.add(prefix)
            else:
                if key not in dirs:
                    try:
                        data = content.encode("utf-8")
                    except UnicodeError:
                        pass
                    else:
                        files[key] = data
                        if len(files) + len(dirs) <= self.limit:
                            return True
        # Off the usual path: a refusal, or only the disk can tell. Decided in the disk
        # replay's order: what the step creates is counted first (the directories added
        # above are entries of this step, counted anyway; the replay ends here).
        what = _what(label)
        entries = CreatedEntries.entries(checked_parts(rel, what))
        if len(files.keys() | dirs | set(entries)) > self.limit:
            raise ReplayError(CreatedEntries.too_many(what))
        if plan is None:
            return False
        key, needed = plan
        try:
            content.encode("utf-8")
        except UnicodeError:
            return False
        for prefix in needed:
            if prefix in files:
                raise ReplayError(
                    f"{what}: path {rel!r} needs directory {prefix} but that is a file"
                )
        raise ReplayError(f"{what}: path {rel!r} is a directory, not a file")


def _written_workspace(workspace: Mapping[str, str]) -> _InMemory | None:
    """The in-memory replay of ``workspace``'s own files (None when only the disk can tell),
    or the ``ReplayError`` they make. Every path is checked before any is written, as the
    disk replay's ``CreatedEntries`` checks them; the workspace's own entries are not
    counted against ``MAX_CREATED_ENTRIES``."""
    for rel in workspace:
        checked_parts(rel, f"workspace[{rel!r}]")
    replay = _InMemory({}, set(), sys.maxsize)
    for rel, content in workspace.items():
        if not replay.write(rel, content, f"workspace[{rel!r}]"):
            return None
    replay.limit = len(replay.files) + len(replay.dirs) + MAX_CREATED_ENTRIES
    return replay


class WorkspaceReplay:
    """A workspace replayed in memory, made once for the trajectories graded against it
    (``CompiledContract.workspace``): its own files are written once (``_written_workspace``)
    and each trajectory's edits replayed over a copy of them (``replayed_files``).

    ``workspace`` is a copy of the files as given: what every replay of this object starts
    from, on disk as in memory, whatever becomes of the mapping it was made from. The files
    written are made on first use (a refused workspace is refused again on every use, with
    the same ``ReplayError``), with the core's ``InMemoryReplay`` of them: it walks a
    trajectory's steps and writes its edits as the usual path of ``_InMemory.write`` does,
    and answers ``None`` at the first edit off that path, which is then replayed here again
    from the start (every refusal is decided and worded here)."""

    __slots__ = ("_base", "_core", "_disk_only", "workspace")

    def __init__(self, workspace: Mapping[str, str]) -> None:
        self.workspace: dict[str, str] = dict(workspace)
        self._base: _InMemory | None = None
        self._core: InMemoryReplay | None = None
        self._disk_only = False

    def _written(self) -> tuple[_InMemory, InMemoryReplay] | None:
        """The workspace's own files written (in Python and in the core), or None when only
        the disk can tell; the ``ReplayError`` of a refused workspace. Two threads making
        them at once make the same files, and either's are kept. A workspace only the disk
        can tell is found so once, not again for every trajectory."""
        if self._disk_only:
            return None
        base, core = self._base, self._core
        if base is None or core is None:
            base = _written_workspace(self.workspace)
            if base is None:
                self._disk_only = True
                return None
            core = InMemoryReplay(
                base.files,
                base.dirs,
                base.limit,
                FILE_EDIT,
                MAX_PATH_PARTS + 1,
                NAME_MAX,
                PATH_SOFT_MAX,
            )
            self._base, self._core = base, core
        return base, core

    def replayed_files(self, trajectory: Trajectory) -> dict[str, bytes] | None:
        """``replayed_files(self.workspace, trajectory)``."""
        written = self._written()
        if written is None:
            return None
        base, core = written
        files = core.replay(trajectory.steps)
        if files is not None:
            return files
        replay = base.copy()
        write = replay.write
        for index, path, content in trajectory.file_edits():
            if not write(path, content, index):
                return None
        return replay.files


_WORKSPACES: dict[tuple[tuple[str, str], ...], WorkspaceReplay] = {}
"""A workspace's items -> its ``WorkspaceReplay``, for callers without a compiled contract:
every trajectory a contract grades starts from the same files. Kept to a few dozen
workspaces."""


def workspace_replay(workspace: Mapping[str, str]) -> WorkspaceReplay:
    """The ``WorkspaceReplay`` of ``workspace``, made once per workspace's items (a
    workspace whose items are not hashable, made each time)."""
    try:
        key = tuple(workspace.items())
        return _WORKSPACES[key]
    except TypeError:  # not plain text: no key
        return WorkspaceReplay(workspace)
    except KeyError:
        made = WorkspaceReplay(workspace)
        if len(_WORKSPACES) >= 64:
            _WORKSPACES.clear()
        _WORKSPACES[key] = made
        return made


def replayed_files(workspace: Mapping[str, str], trajectory: Trajectory) -> dict[str, bytes] | None:
    """The files ``replayed_workspace`` would hold, computed in memory: ``{"a/b.py": bytes}``.

    Raises the same ``ReplayError`` (same message) that ``replayed_workspace`` raises for the
    same input, so a contract whose checks only read files needs no temporary directory (its
    creation and removal cost milliseconds per trace on some filesystems). Returns ``None``
    when the outcome depends on the filesystem (over-long names, text that cannot be encoded):
    the caller must then replay on disk, which decides. The workspace's own files are
    written once per workspace (``workspace_replay``; a compiled contract keeps its own).
    """
    return workspace_replay(workspace).replayed_files(trajectory)
