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

Beside the files' entries, ``load_conventions`` keeps one entry per set of files: the set's
``_compile.blueprint`` (what compiling its rules works out, and what its files say besides
them, as plain data), keyed by every file read (its key) and the compiler's code
(``set_key``), with the digest of each file's entry it was compiled from, so a warm start
builds the compiled set from it instead of compiling the rules again, and neither reads nor
validates a file's entry unless the files are asked for; then only the very entries the set
was compiled from are used (docs/performance-history.md, "Start-up: the compiled set kept in
the conventions cache", "Start-up: the conventions' files built when asked for", "Start-up:
the compiled set keyed by the files alone"). The set's entry also records the status of its
inputs (``ConventionCache.inputs``: each file's and the compiler code's device, inode, size
and times); a start that finds them all unchanged, every time in them more than
``SETTLED_NS`` older than the moment the entry looked at them, takes the set without
computing its key, so it hashes no file (git's "racy" rule; docs/security.md says what this
status vouches for, and docs/performance-history.md, "Start-up: the conventions' files by
their status").
"""

import hashlib
import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import pydantic
from pydantic import ValidationError

from otel_oracles import safe_regex
from otel_oracles._cache_dir import (
    CACHE_DIR_ENV,
    CACHE_ROOT_ENV,
    default_dir,
    read_digested,
    read_entry,
    write_entry,
)
from otel_oracles._cache_dir import sha256 as _sha256
from otel_oracles._frozen import Frozen, set_field

if TYPE_CHECKING:
    # The schema's models: a warm start never reads a file's entry and does not import them
    # (``_entry``, ``mapping/__init__``).
    from otel_oracles.mapping.config import ConventionFile

__all__ = ["CACHE_DIR_ENV", "CACHE_ROOT_ENV", "ConventionCache", "default_dir"]

FORMAT = b"otel-oracles conventions cache 3"
"""Changes when the entry layout does (3: values equal to their defaults left out)."""

SET_FORMAT = b"otel-oracles compiled conventions 4"
"""Changes when the layout of a compiled set's entry does (2: keyed by every file read, with
what the set says besides its rules, so a warm start builds no file; 3: keyed by the files'
keys alone, with the digests of the files' entries it was compiled from; 4: with the status
of its inputs, ``ConventionCache.inputs``)."""

SETTLED_NS = 2_000_000_000
"""How much older than the moment a set's inputs were looked at (the entry's ``stated``) a
file's modification and status change must be for its status to stand for its bytes (git's
"racy" rule). Two writes within one tick of the file system's clock (a few milliseconds;
one or two seconds on some file systems) leave the same times, so a file changed just
before it was read may change again without its status showing it; a change made after
``stated`` leaves times later than the recorded ones by more than this."""

COMPILER = ("_compile.py", "_loader.py")
"""The modules (beside ``config.py``) whose code makes a set's ``blueprint``: their source
is in a set entry's key, so an entry written by other code is never read."""

_VERSIONS = [FORMAT.decode(), SET_FORMAT.decode(), pydantic.VERSION, safe_regex.ENGINE_VERSION]
"""What a key names besides code and files, as a set entry's ``inputs`` hold it."""


def _status(info: os.stat_result) -> list[int]:
    """What a set entry records of a file's status: device, inode, size, modification and
    status-change times (nanoseconds)."""
    return [info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns]


def settled(inputs: list[Any], stated: int) -> bool:
    """Whether every status in ``inputs`` (``ConventionCache.inputs``) was modified and
    changed more than ``SETTLED_NS`` before ``stated``, so that no later change can leave
    the same times."""
    limit = stated - SETTLED_NS
    return all(status[3] < limit and status[4] < limit for status in (*inputs[1], *inputs[2]))


# A plain class, not a ``NamedTuple``: ``collections.namedtuple`` compiles the source of its
# ``__new__`` at every start (``otel_oracles._frozen``), and the entry is only read.
class KeptSet(Frozen):
    """A compiled set's entry, read (``ConventionCache.get_set``)."""

    __slots__ = ("compiled", "entries", "parsers", "stood")
    compiled: Any
    """The blueprint (``_compile.blueprint``), as JSON reads it."""
    parsers: Any
    """The ``parse:`` names of every file read."""
    entries: list[str]
    """The digests of the files' entries it was compiled from, load order."""
    stood: bool
    """Whether its inputs' status stood for them (``inputs``: the key was not computed);
    else the key was, and matched."""

    def __init__(self, compiled: Any, parsers: Any, entries: list[str], stood: bool) -> None:
        set_field(self, "compiled", compiled)
        set_field(self, "parsers", parsers)
        set_field(self, "entries", entries)
        set_field(self, "stood", stood)


class ConventionCache:
    """Validated mapping files in ``directory``, one entry per source path."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self._salt: hashlib._Hash | None = None
        self._salt_read = 0
        """When the schema's code in the salt was read (``time.time_ns``, before it)."""

    @property
    def _salted(self) -> "hashlib._Hash":
        """The key's hash with the salt in it, copied for each file; made when a key is
        first asked for (a warm start whose set's inputs stand asks for none:
        ``inputs``)."""
        if self._salt is None:
            self._salt_read = time.time_ns()
            from otel_oracles.mapping import config as schema

            source = Path(schema.__file__).read_bytes()
            versions = (pydantic.VERSION.encode(), safe_regex.ENGINE_VERSION.encode())
            self._salt = _sha256(_sha256(b"\0".join((FORMAT, *versions, source))).digest())
        return self._salt

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

    def get(self, key: str, source: str) -> "tuple[ConventionFile, str] | None":
        """The file validated again from its entry (types and keys; ``config.CHECKED``) and
        the entry's digest, or ``None`` when there is no usable one."""
        found = self.entry(source)
        if found is None:
            return None
        conv = self.file_of(found[0], key, source)
        return None if conv is None else (conv, found[1])

    def entry(self, source: str) -> tuple[bytes, str] | None:
        """The body of the entry kept for ``source`` and its digest, not validated (a warm
        start whose set is kept never validates it: ``load_conventions``), or ``None``."""
        return read_digested(self._path(source))

    def file_of(self, body: bytes, key: str, source: str) -> "ConventionFile | None":
        """The file of an entry's ``body`` validated again (types and keys), or ``None``
        when it is not the entry of this very file (``key``, ``source``)."""
        from otel_oracles.mapping._entry import WRITTEN_CHECKED, Entry

        try:
            entry = Entry.model_validate_json(body, context=WRITTEN_CHECKED)
        except (ValidationError, ValueError):
            return None
        if entry.key != key or entry.file.source != source:
            return None
        return entry.file

    def put(self, key: str, conv: "ConventionFile") -> str | None:
        """Keep ``conv`` under ``key`` when it survives the round trip; any failure to write
        is ignored (the next run reads the YAML again). The entry's digest, ``None`` when
        ``conv`` is not kept. Values equal to their defaults are left out, as a YAML file
        leaves them out: the entries are a third of the size, and a field validator runs
        only on a value that is there (with every default written out, each condition's
        three pattern checks ran on ``None``), which made validating an entry a third
        cheaper (docs/performance-history.md, "Start-up: smaller conventions entries")."""
        from otel_oracles.mapping._entry import Entry

        body = Entry(key=key, file=conv).model_dump_json(exclude_defaults=True).encode()
        try:
            if Entry.model_validate_json(body).file != conv:
                return None
        except (ValidationError, ValueError):
            return None
        return write_entry(self.dir, self._path(conv.source), body)

    # ---- compiled sets ------------------------------------------------------------------
    #
    # A set's entry holds its ``_compile.blueprint``: what compiling the set works out from
    # its rules and what its files say besides them, as plain data (~90 M instructions of
    # every start when made again; with it, a warm start builds no ``ConventionFile`` at
    # all: ``ConventionSet.files`` is read from the files' entries only when asked for). It
    # is named after every file read (their paths, in load order) and keyed by each one's
    # key (its bytes, path, the schema and the engine), with the code that makes a
    # blueprint. So a changed file, one added or left out, another load order or another
    # compiler never reads an old set: its key differs, and the set is compiled again and
    # written over the old entry. It holds the digest of each file's entry whose validated
    # content it was compiled from, in load order: a warm start does not read the files'
    # entries (reading and hashing them was ~12 M instructions of every start), and when
    # the files are asked for, an entry is used only if its digest is the one recorded, so
    # the files are the very content the set was compiled from; a changed entry (damaged,
    # or forged by the grader's own user) is not read, its file is validated from its YAML
    # again (same bytes as the key says) and its entry written again. Read as every entry is
    # (``read_entry``: the grader's own, its digest matching); a blueprint of another shape
    # is compiled again (``load_conventions``).

    def inputs(self, stats: Sequence[os.stat_result]) -> list[Any]:
        """A set's inputs without their bytes: the versions its key names (``_VERSIONS``),
        the status (``_status``) of the code its key hashes (``config.py``, ``COMPILER``)
        and that of each file read (``stats``, load order, each taken once its bytes were
        read: ``config_bytes.read_config_file``). A set entry recording the same inputs,
        every time in them settled before it looked at them (``settled``), is the set of
        the very bytes its key would hash: a warm start then computes no key (hashing the
        files and the code was ~15 M instructions of every start). Raises ``OSError`` when
        the code cannot be looked at (as ``set_key`` would)."""
        here = Path(__file__).parent  # beside this module: ``config.py`` and ``COMPILER``
        code = [_status(os.stat(here / name)) for name in ("config.py", *COMPILER)]
        return [_VERSIONS, code, [_status(info) for info in stats]]

    def set_key(self, keys: Sequence[str]) -> str:
        """The key of the set read from the files of ``keys`` (each one's ``key``), in load
        order."""
        digest = self._salted.copy()
        here = Path(__file__).parent  # beside this module: ``COMPILER``
        digest.update(SET_FORMAT)
        for name in COMPILER:
            code = (here / name).read_bytes()
            digest.update(len(code).to_bytes(8, "big"))
            digest.update(code)
        for key in keys:
            digest.update(key.encode())
        return digest.hexdigest()

    def _set_path(self, sources: Sequence[str]) -> Path:
        named = _sha256("\0".join(sources).encode()).hexdigest()[:32]
        return self.dir / f"set-{named}.json"

    def get_set(
        self, sources: Sequence[str], inputs: list[Any], key: Callable[[], str]
    ) -> KeptSet | None:
        """The set kept for the files read from ``sources`` (load order), or ``None``. It is
        theirs when it records these ``inputs`` (``inputs``), settled before it looked at
        them (``settled``); else when its key is ``key()`` (the files and the code hashed)."""
        body = read_entry(self._set_path(sources))
        if body is None:
            return None
        try:
            entry = _set_entry(body)
        except (ValueError, RecursionError):
            return None
        if not isinstance(entry, dict):
            return None
        stated = entry.get("stated")
        stood = type(stated) is int and entry.get("inputs") == inputs and settled(inputs, stated)
        if not stood and entry.get("key") != key():
            return None
        entries = entry.get("entries")
        if not (
            isinstance(entries, list)
            and len(entries) == len(sources)
            and all(isinstance(digest, str) for digest in entries)
        ):
            return None
        return KeptSet(entry.get("compiled"), entry.get("parsers"), entries, stood)

    def put_set(
        self,
        key: str,
        sources: Sequence[str],
        blueprint: dict[str, Any],
        parsers: list[str],
        entries: list[str],
        inputs: list[Any],
        stated: int,
    ) -> None:
        """Keep ``blueprint``, ``parsers`` (the ``parse:`` names of every file read, the
        files a set leaves out included: a start checks them against the parsers then
        installed) and ``entries`` (the digests of the files' entries it was compiled from,
        load order) under ``key``, with its ``inputs`` and when they were looked at
        (``stated``: before any of them was read), when JSON gives the blueprint back
        unchanged (``tuples`` read as lists; a value JSON cannot hold, as a date, or a
        mapping with keys other than texts, is never kept). The schema's code in ``key``
        read earlier (this cache's salt, made for an earlier set) makes ``stated`` that
        moment (a key not made by this cache: 0, its inputs never standing)."""
        stated = min(stated, self._salt_read)
        try:
            entry = {
                "key": key,
                "compiled": blueprint,
                "parsers": parsers,
                "entries": entries,
                "inputs": inputs,
                "stated": stated,
            }
            body = json.dumps(entry, ensure_ascii=False).encode()
            if _set_entry(body)["compiled"] != _listed(blueprint):
                return
        except (TypeError, ValueError, RecursionError):
            return
        write_entry(self.dir, self._set_path(sources), body)


def _listed(value: Any) -> Any:
    """``value`` with its tuples as lists, as JSON reads them back."""
    if isinstance(value, (list, tuple)):
        return [_listed(v) for v in value]
    if isinstance(value, dict):
        return {k: _listed(v) for k, v in value.items()}
    return value


def _set_entry(body: bytes) -> Any:
    """The value of a compiled set's entry ``body``: read by ``orjson``, and by ``json`` when
    ``orjson`` refuses it. The values are those ``json.loads`` gives (the same types, texts and
    numbers: both read a JSON number's digits to the nearest float), while ``orjson`` makes
    the bundled set's ~190 KB about 5 M instructions cheaper at every start
    (docs/performance-history.md, "Start-up: the compiled set's entry read by orjson").
    What ``orjson`` refuses and ``json`` reads (``NaN`` and ``Infinity``, which ``json.dumps``
    writes, integers past 64 bits, nesting past 1,024 levels) is read by ``json`` as before,
    so an entry means the same either way; ``ValueError`` or ``RecursionError`` when neither
    reads it."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return json.loads(body)
