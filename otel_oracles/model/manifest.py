"""AgentBench gate manifests: which tasks (and, as an extension, which trajectories) a gate
run covers.

The classic format must keep working exactly as it is: a JSON object with ``task_files`` (a
non-empty list of task file names in the tasks directory) or ``task_subset`` (a path,
relative to the manifest, to another manifest, followed recursively). ``description``,
``trajectory``, ``recorded_for`` and ``note`` are informational.

Our extension adds two optional keys, read from the top-level manifest only:

- ``tasks_dir``: the tasks directory, relative to the manifest (default: ``--tasks``, else
  the manifest's own directory);
- ``trajectories``: trajectory path (relative to the manifest) -> entry, where an entry is a
  list of task file names (shorthand) or ``{"tasks": [...], "expect": "pass"|"fail",
  "why": "..."}``. ``tasks`` scopes the trajectory to those tasks (default: every task of the
  manifest); ``expect`` turns a known-bad trajectory into a regression check of the grader.

Unknown keys are not errors (old manifests may carry anything informational) but are
reported, so a typo such as ``task_file`` does not go unnoticed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from otel_oracles.config_json import JsonDocumentError, load_json_document
from otel_oracles.errors import InputError
from otel_oracles.model.contract import describe_validation_error

INFORMATIONAL_KEYS: frozenset[str] = frozenset(
    {"description", "trajectory", "recorded_for", "note"}
)
"""Classic keys that carry information for people only."""

SELECTION_KEYS: frozenset[str] = frozenset({"task_files", "task_subset"})
EXTENSION_KEYS: frozenset[str] = frozenset({"tasks_dir", "trajectories"})


class TrajectoryEntry(BaseModel):
    """How the manifest pairs one trajectory with tasks."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tasks: list[str] | None = Field(default=None, min_length=1)
    """Task file names this trajectory was recorded for; ``None`` = every task."""
    expect: Literal["pass", "fail"] | None = None
    """The verdict the trajectory must get on each of its tasks (gate fails otherwise)."""
    why: str | None = None
    """Why this trajectory is here (e.g. which cheat it demonstrates)."""


@dataclass(frozen=True)
class Manifest:
    """A loaded manifest with ``task_subset`` chains already followed."""

    path: Path
    task_files: list[str]
    """Task file names (relative to the tasks directory), in order, without duplicates."""
    tasks_dir: Path | None = None
    trajectories: dict[Path, TrajectoryEntry] = field(default_factory=dict)
    """Resolved trajectory path -> entry (extension)."""
    info: dict[str, Any] = field(default_factory=dict)
    """Informational keys of the top-level manifest."""
    unknown_keys: list[str] = field(default_factory=list)
    chain: list[Path] = field(default_factory=list)
    """The manifests read, top-level first (for messages)."""


def _read(path: Path) -> dict[str, Any]:
    try:
        data = load_json_document(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read manifest: {exc.strerror}", str(path)) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"invalid JSON: {exc}", str(path)) from None
    except JsonDocumentError as exc:
        raise InputError(f"invalid JSON{exc.where}: {exc.problem}", str(path)) from None
    if not isinstance(data, dict):
        raise InputError("expected a JSON object with 'task_files' or 'task_subset'", str(path))
    return data


def _task_files(path: Path, seen: list[Path]) -> tuple[list[str], list[str]]:
    """Task names of ``path`` and everything its ``task_subset`` chain adds, plus unknown keys."""
    resolved = path.resolve()
    if resolved in seen:
        cycle = " -> ".join(str(p) for p in [*seen, resolved])
        raise InputError(f"task_subset cycle: {cycle}", str(path))
    seen.append(resolved)
    data = _read(path)
    if not SELECTION_KEYS & data.keys():
        raise InputError("expected 'task_files' or 'task_subset'", str(path))
    names: list[str] = []
    if "task_files" in data:
        files = data["task_files"]
        if not isinstance(files, list) or not files:
            raise InputError("task_files: expected a non-empty list of task file names", str(path))
        for i, name in enumerate(files):
            if not isinstance(name, str) or not name:
                raise InputError(f"task_files[{i}]: expected a task file name", str(path))
            names.append(name)
    unknown = [
        f"{path}: {k}"
        for k in data
        if k
        not in SELECTION_KEYS | INFORMATIONAL_KEYS | (EXTENSION_KEYS if len(seen) == 1 else set())
    ]
    if "task_subset" in data:
        subset = data["task_subset"]
        if not isinstance(subset, str) or not subset:
            raise InputError("task_subset: expected a path to another manifest", str(path))
        more, more_unknown = _task_files(path.parent / subset, seen)
        names.extend(more)
        unknown.extend(more_unknown)
    return names, unknown


def load_manifest(path: str | Path) -> Manifest:
    """Load and validate a manifest, following ``task_subset`` (cycles are an ``InputError``)."""
    p = Path(path)
    data = _read(p)
    chain: list[Path] = []
    names, unknown = _task_files(p, chain)
    tasks_dir = data.get("tasks_dir")
    if tasks_dir is not None and (not isinstance(tasks_dir, str) or not tasks_dir):
        raise InputError("tasks_dir: expected a directory path relative to the manifest", str(p))
    raw_map = data.get("trajectories", {})
    if not isinstance(raw_map, dict):
        raise InputError("trajectories: expected a map of trajectory path -> entry", str(p))
    entries: dict[Path, TrajectoryEntry] = {}
    for key, value in raw_map.items():
        item = {"tasks": value} if isinstance(value, list) else value
        try:
            entry = TrajectoryEntry.model_validate(item if item is not None else {})
        except ValidationError as exc:
            raise InputError(
                describe_validation_error(exc, ("trajectories", key)), str(p)
            ) from None
        entries[(p.parent / key).resolve()] = entry
    return Manifest(
        path=p,
        task_files=list(dict.fromkeys(names)),
        tasks_dir=(p.parent / tasks_dir) if tasks_dir else None,
        trajectories=entries,
        info={k: v for k, v in data.items() if k in INFORMATIONAL_KEYS},
        unknown_keys=unknown,
        chain=chain,
    )
