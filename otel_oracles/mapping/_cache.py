"""Validated mapping files kept between runs, so a start does not parse every YAML file again.

Reading the 28 bundled files costs ``grade`` about 50 ms at every start (YAML composed, its
alias expansion counted and constructed in Python, then validated); the same files as the
JSON of their validated form load in about 10 ms (docs/performance-history.md, "Start-up"). So
``load_conventions`` may keep one entry per file in a cache directory:
``$OTEL_ORACLES_CONVENTIONS_CACHE`` (empty turns the cache off), else ``conventions/`` in the
project's cache root (``$OTEL_ORACLES_CACHE``, else ``$XDG_CACHE_HOME/otel-oracles``, else
``~/.cache/otel-oracles``, as for the collector build).

An entry is data only, never code: a line with the SHA-256 of the rest, then JSON holding a
key and the file's validated content. The key is a hash of the file's bytes, its path, the
schema's source (``config.py``), the pydantic version and the ``regex`` engine's version, so
an edited file, a moved one, a new schema or another engine never reads an old entry. An
entry is written only after its file passed every check, and read only when its digest
matches and the grader's own user (or root) owns it and no one else may write it (the digest
and the key are computed from public inputs: a cache in a directory others can write could
otherwise rewrite the mapping rules). Such an entry is the project's own, so its content is
validated again by the same model for its types and keys only: the checks written in Python
(a pattern's syntax, one subject per condition, one origin per source...) passed when it was
written and are not run again (``config.CHECKED``; they were about half of validating the
bundled entries). An entry whose digest does not match (damaged, or edited by hand) is
refused and written again; one forged by the grader's own user with a matching digest can
say what its YAML file could not (a condition with two subjects tests one), as that user
could edit the conventions it names, and one with a pattern the engine refuses fails where
that pattern is first used: the traces it is tried on get ``error`` verdicts (their grading
crashed), never a pass. An unreadable, truncated, foreign or invalid entry is ignored and
written again; a directory that cannot be written is left alone. A file whose validated form
does not survive the JSON round trip unchanged (YAML can hold values JSON cannot, such as
dates) is never cached.
"""

from pathlib import Path

import pydantic
from pydantic import BaseModel, ConfigDict, ValidationError

from otel_oracles import safe_regex
from otel_oracles._cache_dir import (
    CACHE_DIR_ENV,
    CACHE_ROOT_ENV,
    default_dir,
    read_entry,
    write_entry,
)
from otel_oracles._cache_dir import sha256 as _sha256
from otel_oracles.mapping import config as _schema
from otel_oracles.mapping.config import CHECKED, ConventionFile

__all__ = ["CACHE_DIR_ENV", "CACHE_ROOT_ENV", "ConventionCache", "default_dir"]

FORMAT = b"otel-oracles conventions cache 3"
"""Changes when the entry layout does (3: values equal to their defaults left out)."""


_WRITTEN_CHECKED = {CHECKED: True}
"""An entry passed every check when it was written, under the schema and engine in its key."""


class _Entry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    file: ConventionFile


class ConventionCache:
    """Validated mapping files in ``directory``, one entry per source path."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        schema = Path(_schema.__file__).read_bytes()
        versions = (pydantic.VERSION.encode(), safe_regex.ENGINE_VERSION.encode())
        self._salted = _sha256(_sha256(b"\0".join((FORMAT, *versions, schema))).digest())
        """The key's hash with the salt in it, copied for each file."""

    @classmethod
    def from_env(cls) -> "ConventionCache | None":
        """The cache in ``default_dir()``, or ``None`` when turned off."""
        directory = default_dir()
        return cls(directory) if directory is not None else None

    def key(self, name: str, source: str, data: bytes) -> str:
        """What an entry must carry to stand for this file: every input of its content."""
        digest = self._salted.copy()
        for part in (name.encode(), source.encode(), data):
            digest.update(len(part).to_bytes(8, "big"))
            digest.update(part)
        return digest.hexdigest()

    def _path(self, source: str) -> Path:
        return self.dir / (_sha256(source.encode()).hexdigest()[:32] + ".json")

    def get(self, key: str, source: str) -> ConventionFile | None:
        """The file validated again from its entry (types and keys; ``config.CHECKED``), or
        ``None`` when there is no usable one."""
        body = read_entry(self._path(source))
        if body is None:
            return None
        try:
            entry = _Entry.model_validate_json(body, context=_WRITTEN_CHECKED)
        except (ValidationError, ValueError):
            return None
        if entry.key != key or entry.file.source != source:
            return None
        return entry.file

    def put(self, key: str, conv: ConventionFile) -> None:
        """Keep ``conv`` under ``key`` when it survives the round trip; any failure to write
        is ignored (the next run reads the YAML again). Values equal to their defaults are
        left out, as a YAML file leaves them out: the entries are a third of the size, and a
        field validator runs only on a value that is there (with every default written out,
        each condition's three pattern checks ran on ``None``), which made validating an
        entry a third cheaper (docs/performance-history.md, "Start-up: smaller conventions
        entries")."""
        body = _Entry(key=key, file=conv).model_dump_json(exclude_defaults=True).encode()
        try:
            if _Entry.model_validate_json(body).file != conv:
                return
        except (ValidationError, ValueError):
            return
        write_entry(self.dir, self._path(conv.source), body)
