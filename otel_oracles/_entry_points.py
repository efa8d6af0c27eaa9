"""The plug-ins' entry points, read once per process and kept between runs.

``importlib.metadata.entry_points`` reads and parses the metadata of every installed
distribution on each call, whatever the group asked for (~12 M instructions with the 68
distributions of the development environment). The oracle registry and the parser registry each
look for their plug-ins once a ``grade``; they share one read (docs/performance-history.md,
"Start-up: one entry-point scan, field annotations as objects"), and the command line reads
pydantic's group from the same read (``cli.pydantic_plugins_off``: pydantic would scan them all
again at its first model). The entries of these groups are kept in the conventions cache
(``_cache_dir``), keyed by what decides them: the path searched (``sys.path``, in order) and, in
each of its directories, every distribution's metadata directory (its name) and its
``entry_points.txt`` (its ``stat``). A distribution installed, removed, upgraded or edited
changes the key (its metadata directory comes or goes, or its file is made again or written), so
the next start scans again; listing the directories and ``stat``-ing one file a distribution is
a small part of reading them all (docs/performance-history.md, "Start-up: the plug-ins' entry
points kept between runs"). A finder that lists distributions from elsewhere than the path (on
``sys.meta_path``) turns the cache off: its distributions are not in the key. A distribution
installed while a process runs is seen by the next process, as a plug-in module imported by an
earlier look-up always was.
"""

from __future__ import annotations

import functools
import importlib.machinery
import json
import operator
import os
import sys
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

from otel_oracles._cache_dir import default_dir, read_entry, sha256, write_entry
from otel_oracles._frozen import Frozen, set_field

ORACLE_GROUP = "otel_oracles.oracles"
PARSER_GROUP = "otel_oracles.parsers"
PYDANTIC_GROUP = "pydantic"
"""pydantic's own plug-ins: the command line asks whether there are any before it builds a
model (``cli.pydantic_plugins_off``)."""
GROUPS = (ORACLE_GROUP, PARSER_GROUP, PYDANTIC_GROUP)
"""The groups kept: the two the project reads plug-ins from, and pydantic's."""

FORMAT = b"otel-oracles entry points 2"
"""Changes when an entry's layout does."""

ENTRY_NAME = "entry-points.json"


class PlugIn(Frozen):
    """One entry point of a plug-in group: what ``importlib.metadata.EntryPoint`` says of it
    that the registries use, as plain values (so it is kept as JSON)."""

    __slots__ = ("distribution", "group", "name", "value")
    name: str
    value: str
    group: str
    distribution: str
    """The name of the distribution that declares it (its ``value`` when unknown)."""

    def __init__(self, name: str, value: str, group: str, distribution: str) -> None:
        set_field(self, "name", name)
        set_field(self, "value", value)
        set_field(self, "group", group)
        set_field(self, "distribution", distribution)

    def load(self) -> Any:
        """The object the entry point names, imported as ``EntryPoint.load`` does."""
        return EntryPoint(self.name, self.value, self.group).load()


def entry_point_group(group: str) -> tuple[PlugIn, ...]:
    """The entry points of ``group`` (one of ``GROUPS``), in the order
    ``entry_points(group=group)`` gives them."""
    return _installed()[group]


@functools.cache
def _installed() -> dict[str, tuple[PlugIn, ...]]:
    directory = default_dir()
    key = _key() if directory is not None else None
    if directory is None or key is None:
        return _scanned()
    path = directory / ENTRY_NAME
    kept = _read(path, key)
    if kept is not None:
        return kept
    found = _scanned()
    listed = {g: [[p.name, p.value, p.distribution] for p in eps] for g, eps in found.items()}
    write_entry(directory, path, json.dumps({"key": key, "groups": listed}).encode())
    return found


def _scanned() -> dict[str, tuple[PlugIn, ...]]:
    """Every distribution's metadata read (``importlib.metadata``)."""
    every = entry_points()
    found: dict[str, tuple[PlugIn, ...]] = {}
    for group in GROUPS:
        found[group] = tuple(
            PlugIn(
                name=ep.name,
                value=ep.value,
                group=group,
                distribution=ep.dist.name if ep.dist is not None else ep.value,
            )
            for ep in every.select(group=group)
        )
    return found


def _read(path: Path, key: str) -> dict[str, tuple[PlugIn, ...]] | None:
    """The groups kept at ``path`` under ``key``, or ``None`` (no entry, another key, or
    one of another shape: the caller scans and writes it again)."""
    body = read_entry(path)
    if body is None:
        return None
    try:
        entry = json.loads(body)
        if entry["key"] != key:
            return None
        found: dict[str, tuple[PlugIn, ...]] = {}
        for group in GROUPS:
            found[group] = tuple(
                PlugIn(name=name, value=value, group=group, distribution=dist)
                for name, value, dist in entry["groups"][group]
                if isinstance(name, str) and isinstance(value, str) and isinstance(dist, str)
            )
            if len(found[group]) != len(entry["groups"][group]):
                return None
    except (ValueError, TypeError, KeyError, RecursionError):
        return None
    return found


_ENDS_IN_O = operator.methodcaller("endswith", ("o", "O"))
"""Whether a name may be a distribution's metadata (``.dist-info``, ``.egg-info``, an egg's
``EGG-INFO``: ``importlib.metadata`` compares them in lower case); ``filter`` calls it in C,
and listing the path's ~500 names one by one in Python, or searching each with a pattern,
was most of the key."""

_METADATA = (".dist-info", "egg-info")


def _key() -> str | None:
    """What decides the plug-in groups' entries (see the module's doc), hashed; ``None``
    when a finder lists distributions from elsewhere than the path."""
    for finder in sys.meta_path:
        if hasattr(finder, "find_distributions") and finder is not importlib.machinery.PathFinder:
            return None
    parts: list[object] = [sys.version, sys.path]
    for entry in sys.path:
        root = entry or "."
        try:
            odd = filter(_ENDS_IN_O, os.listdir(root))
            names = sorted(n for n in odd if n.lower().endswith(_METADATA))
        except NotADirectoryError:
            parts.append(_stat(root))  # a zip or egg file: its contents change its stat
            continue
        except OSError:
            parts.append(None)
            continue
        parts.append(names)
        parts.extend([_stat(f"{root}/{name}/entry_points.txt") for name in names])
    digest = sha256(FORMAT)
    digest.update(repr(parts).encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def _stat(path: str) -> tuple[int, int, int, int] | None:
    """What changes when ``path`` is made again or written (``None`` when there is none)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns
