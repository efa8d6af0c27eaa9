"""Entries kept between runs in the project's cache directory, so a start does not parse the
same configuration files again (docs/performance-history.md, "Start-up").

Three kinds live there: validated mapping files (``mapping/_cache.py``), contracts' YAML
documents (``grade/_documents.py``) and the plug-in groups' entry points
(``_entry_points.py``). What they share is here: where the directory is, which entry may be
read at all, and an entry's layout (a line with the SHA-256 of the rest, then the JSON
body). Nothing in an entry is trusted: each kind validates its content again as it
validates the file it stands for (an entry point names what ``entry_points.txt`` would).

The directory is ``$OTEL_ORACLES_CONVENTIONS_CACHE`` (empty turns the cache off), else
``conventions/`` in the project's cache root (``$OTEL_ORACLES_CACHE``, else
``$XDG_CACHE_HOME/otel-oracles``, else ``~/.cache/otel-oracles``, as for the collector build).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import tempfile
from pathlib import Path

CACHE_DIR_ENV = "OTEL_ORACLES_CONVENTIONS_CACHE"
"""The directory of the entries; empty turns the cache off."""

CACHE_ROOT_ENV = "OTEL_ORACLES_CACHE"
"""The project's cache root (``tests/collector/build.sh`` keeps the collector there too)."""

MAX_ENTRY_BYTES = 16 * 1024 * 1024
"""Largest entry read (4 MiB of YAML, the limit for a configuration file, is far less as
JSON; a larger one is neither written nor read)."""

_SHA256 = hashlib.sha256()
"""An empty SHA-256 to ``copy()``: each ``hashlib.sha256()`` has OpenSSL look the algorithm
up by name (CPython 3.11 keeps no fetched digest), ~115 k instructions, and the cache hashed
three times per file (key, entry path, entry digest): ~20 M instructions of a one-trace
``grade`` (docs/performance-history.md, "Start-up: the conventions' patterns and the cache's
hashing")."""


def sha256(data: bytes = b"") -> hashlib._Hash:
    """``hashlib.sha256(data)``, the same digest, without the look-up."""
    digest = _SHA256.copy()
    digest.update(data)
    return digest


def default_dir() -> Path | None:
    """The entries' directory the environment names (``None``: turned off)."""
    explicit = os.environ.get(CACHE_DIR_ENV)
    if explicit is not None:
        return Path(explicit) if explicit else None
    root = os.environ.get(CACHE_ROOT_ENV)
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        root = str(Path(base) / "otel-oracles")
    return Path(root) / "conventions"


def own_regular(info: os.stat_result) -> bool:
    """Whether an entry (its open descriptor's ``fstat``) may be used: a regular file that
    the grader's user (or root) owns and no one else may write. The digest and the key are
    computed from public inputs, so anyone able to put a file in the directory (a cache
    shared on a CI runner, one in ``/tmp``) could forge an entry that reads every tool call
    as a harmless one, or a contract without its checks; such a file is ignored and written
    again."""
    return (
        stat.S_ISREG(info.st_mode)
        and info.st_uid in (os.geteuid(), 0)
        and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    )


def read_entry(path: Path) -> bytes | None:
    """The body of the entry at ``path``: ``None`` when there is none, or it may not be used
    (``own_regular``), is too large, or does not match the digest it starts with."""
    found = read_digested(path)
    return found[0] if found is not None else None


def read_digested(path: Path) -> tuple[bytes, str] | None:
    """``read_entry``, with the body's digest (hex): what the body says, in 64 characters."""
    try:
        # Non-blocking, and regular files only: a FIFO put in place of an entry made
        # ``open`` wait for a writer forever, stalling every start-up (the cache is data).
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with open(fd, "rb") as handle:
            if not own_regular(os.fstat(fd)):
                return None
            raw = handle.read(MAX_ENTRY_BYTES + 1)
    except OSError:
        return None
    if len(raw) > MAX_ENTRY_BYTES:
        return None
    digest, _, body = raw.partition(b"\n")
    found = sha256(body).hexdigest()
    if digest != found.encode():
        return None
    return body, found


def write_entry(directory: Path, path: Path, body: bytes) -> str:
    """Keep ``body`` at ``path`` (in ``directory``, created ``0700``), after its digest line,
    replaced atomically; any failure to write is ignored (the next run parses again). The
    body's digest (hex), written or not."""
    digest = sha256(body).hexdigest()
    if len(body) >= MAX_ENTRY_BYTES - 65:
        return digest
    raw = digest.encode() + b"\n" + body
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".entry-", suffix=".tmp")
    except OSError:
        return digest
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    return digest
