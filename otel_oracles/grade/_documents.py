"""Contracts' YAML documents kept between runs, so a start imports no YAML library.

``import yaml`` alone is ~90 M instructions, over 5% of a one-trace ``grade``: it compiles
the pure-Python reader's pattern of non-printable characters, which ``re`` builds range by
range (docs/performance-history.md, "Start-up: contracts without YAML"). The mapping files already
come from their cache, so the contracts were what still needed it. A contract's YAML
document (the plain data ``yaml.safe_load`` gives, before any validation) is kept as JSON
in ``contracts/`` of the cache directory of ``_cache_dir``, keyed by the file's bytes, the
YAML library's source and ``config_yaml``'s (its limits), and validated again, every check
included, exactly as the document read from YAML is: an entry can hold nothing the file
could not say. The same reading rules as the conventions' entries apply (``_cache_dir.read_entry``:
owner, digest, size). A document that does not survive the JSON round trip unchanged (a
date, a key that is no string) is never kept.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any, Final

from otel_oracles._cache_dir import default_dir, read_entry, sha256, write_entry

FORMAT = b"otel-oracles contract documents 1"
"""Changes when the entry layout does."""

SUBDIR = "contracts"
"""The entries' folder in the cache directory (the conventions' entries are at its top)."""

MISSING: Final = object()
"""``DocumentCache.get``'s answer when there is no usable entry (``None`` is a document)."""

_salted: Any = None
"""The key's hash with the salt in it (built on first use), copied for each file."""


def _salt() -> Any:
    """What else makes a document: the YAML library and the limits it is loaded under, by
    their source files (found without importing them)."""
    global _salted
    if _salted is None:
        parts = [FORMAT]
        for module in ("yaml", "otel_oracles.config_yaml"):
            spec = importlib.util.find_spec(module)
            origin = spec.origin if spec is not None else None
            parts.append(Path(origin).read_bytes() if origin else b"")
        _salted = sha256(sha256(b"\0".join(parts)).digest())
    return _salted


class DocumentCache:
    """Contracts' YAML documents in ``directory``, one entry per file content."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory

    @classmethod
    def from_env(cls) -> DocumentCache | None:
        """The cache in ``_cache_dir.default_dir()``'s ``contracts/``, or ``None`` when turned
        off."""
        directory = default_dir()
        return cls(directory / SUBDIR) if directory is not None else None

    @staticmethod
    def key(raw: bytes) -> str:
        """What an entry must carry to stand for a file of these bytes."""
        digest = _salt().copy()
        digest.update(raw)
        return str(digest.hexdigest())

    def _path(self, key: str) -> Path:
        return self.dir / f"{key[:32]}.json"

    def get(self, key: str) -> Any:
        """The document kept under ``key``, or ``MISSING``."""
        body = read_entry(self._path(key))
        if body is None:
            return MISSING
        try:
            entry = json.loads(body)
        except (ValueError, RecursionError):
            return MISSING
        if not isinstance(entry, dict) or entry.get("key") != key or "document" not in entry:
            return MISSING
        return entry["document"]

    def put(self, key: str, document: Any) -> None:
        """Keep ``document`` under ``key`` when JSON holds it unchanged; any failure to
        write is ignored (the next run reads the YAML again)."""
        try:
            body = json.dumps({"key": key, "document": document}, ensure_ascii=False).encode()
            if json.loads(body)["document"] != document:
                return
        except (TypeError, ValueError, RecursionError):
            return
        write_entry(self.dir, self._path(key), body)
