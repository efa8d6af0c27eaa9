"""The write-ahead spool of ``serve``: what it acknowledged, kept on disk until graded.

Why: an OTLP sender forgets what a receiver answered success for, so traces waiting out their
decision wait in memory would die with the process (``kill -9``, OOM, a power cut). Every
accepted request is written here, durably, *before* the success answer; its record goes once
every trace it contributed to is graded and its results exported. On start, ``serve`` replays
what is left (decoded again, assembled and graded as usual).

SQLite in WAL mode with ``synchronous=FULL``: each commit is fsync'd to the WAL before it
returns, so a committed request survives a process kill and an OS crash or power loss alike.

Bookkeeping, explicit and small (three tables):

- ``requests``: the raw body as received (after auth, size checks and decompression), its
  signal and content type.
- ``parts``: request id -> trace ids it contributed spans or logs to; ``outstanding`` until that
  trace is graded and exported. A request whose parts are all settled is deleted.
- ``exported``: (trace id, contracts hash) of traces whose results were exported, written in
  the same transaction that settles them. A replay skips those traces, so a request that also
  fed traces still outstanding (it stays spooled) never grades or exports a trace twice. The
  contracts hash is part of the key: a trace is "done" for the contracts it was graded
  against. Rows go with the last request that mentions their trace.

``parts`` and ``exported`` are ``WITHOUT ROWID`` tables: each row lives in its primary
key's b-tree alone, not in a rowid table and a key index as well, so a transaction writes
one page fewer for each (a 64 KiB page, checksummed into the WAL). A spool created by an
earlier version keeps its tables as they are; the statements read both alike.

One ``serve`` per spool: an exclusive ``flock`` on ``serve.lock`` in the spool directory makes
a second one fail at start instead of replaying (and grading) the same requests again.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from otel_oracles.server.config import ConfigError, ServeSettings

SPOOL_FILE = "spool.sqlite3"
LOCK_FILE = "serve.lock"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS requests (
    id INTEGER PRIMARY KEY,
    signal TEXT NOT NULL,
    content_type TEXT NOT NULL,
    body BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS parts (
    request_id INTEGER NOT NULL,
    trace_id TEXT NOT NULL,
    outstanding INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (request_id, trace_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS parts_by_trace ON parts (trace_id);
CREATE TABLE IF NOT EXISTS exported (
    trace_id TEXT NOT NULL,
    contracts TEXT NOT NULL,
    PRIMARY KEY (trace_id, contracts)
) WITHOUT ROWID;
"""


@dataclass(frozen=True, slots=True)
class SpooledRequest:
    """One request to replay: its body and the traces of it still outstanding."""

    id: int
    signal: Literal["traces", "logs"]
    content_type: str
    body: bytes
    outstanding: frozenset[str]


def contracts_hash(files: Iterable[Path]) -> str:
    """SHA-256 over the contract files' names and bytes, in path order: the identity of what
    a trace was graded against."""
    h = hashlib.sha256()
    for path in sorted(files):
        h.update(str(path).encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


class Spool:
    """A spool directory for one ``serve``: ``open`` (at start) locks and opens it, ``close``
    (at the end of the drain) releases it; thread-safe in between.

    ``bytes_held`` counts the raw request bytes spooled (what ``spool.max_bytes`` bounds;
    SQLite adds a few percent of pages and indexes on disk).
    """

    def __init__(self, directory: Path, max_bytes: int, contracts: str) -> None:
        self.directory = directory
        self.max_bytes = max_bytes
        self.contracts = contracts
        self._mutex = threading.Lock()
        self._lock_file: IO[str] | None = None
        self._conn: sqlite3.Connection | None = None
        self.bytes_held = 0
        self.requests_held = 0

    @property
    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError("spool not open")
        return self._conn

    def open(self) -> None:
        """Create the directory (0700) if needed, lock it and open the database; ConfigError
        naming ``spool.path`` when it cannot be created, opened or is in use."""
        if self._conn is not None:
            return
        directory = self.directory
        try:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chmod(directory, 0o700)
            self._lock_file = _lock(directory)
            self._conn = sqlite3.connect(
                directory / SPOOL_FILE, check_same_thread=False, isolation_level=None
            )
            self._prepare()
        except (OSError, sqlite3.Error) as exc:
            self.close()
            raise ConfigError(
                f"cannot open the spool in {directory}: {exc}", source="spool.path"
            ) from None
        except ConfigError:
            self.close()
            raise

    def _prepare(self) -> None:
        directory = self.directory
        os.chmod(directory / SPOOL_FILE, 0o600)
        db = self._db
        # Before anything is written (a spool created by an older version keeps its 4 KiB
        # pages): a request body is ~0.5-1 MB, which SQLite stores as a chain of overflow
        # pages written to the WAL, copied by each checkpoint, read back page by page for
        # the workers and walked again to free it. 64 KiB pages make that chain 16 times
        # shorter: about a third less CPU per span for append, read-back and settle.
        db.execute("PRAGMA page_size=65536")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        # A deleted body's pages are freed, not zeroed: SQLite built with SECURE_DELETE (as
        # Debian's is) wrote every freed page of zeros to the WAL again. Its bytes stay in
        # the file until a later request reuses the pages, as they stay in the WAL's frames
        # anyway (docs/security.md). FAST still clears what lies in the tables' own pages.
        db.execute("PRAGMA secure_delete=FAST")
        # A body is written into zero-filled pages (``append``): spilled to the WAL while
        # the transaction is open, they were checksummed and written twice. A request's
        # pages stay in memory until its commit instead (its body is there already).
        db.execute("PRAGMA cache_spill=OFF")
        db.executescript(_SCHEMA)
        for suffix in ("-wal", "-shm"):
            side = directory / (SPOOL_FILE + suffix)
            if side.exists():
                os.chmod(side, 0o600)
        row = db.execute("SELECT COALESCE(SUM(LENGTH(body)), 0), COUNT(*) FROM requests").fetchone()
        self.bytes_held = int(row[0])
        self.requests_held = int(row[1])

    def has_room(self, size: int) -> bool:
        """Whether a request of ``size`` bytes fits under ``max_bytes``; an empty spool takes
        any request, so one larger than the limit cannot livelock its sender."""
        return self.requests_held == 0 or self.bytes_held + size <= self.max_bytes

    def append(self, signal: str, content_type: str, body: bytes, traces: Iterable[str]) -> int:
        """Write one accepted request and the traces it fed, durably (fsync'd when this
        returns); its id. A request that fed no trace is not kept (nothing to grade)."""
        trace_ids = sorted(set(traces))
        if not trace_ids:
            return 0
        with self._mutex, self._transaction() as db:
            cur = db.execute(
                "INSERT INTO requests (signal, content_type, body) VALUES (?, ?, zeroblob(?))",
                (signal, content_type, len(body)),
            )
            request_id = int(cur.lastrowid or 0)
            # The body written into the row's pages from where it lies: bound as a parameter
            # it was copied twice more (the binding's own copy, then the record's) first.
            with db.blobopen("requests", "body", request_id) as blob:
                blob.write(body)
            db.executemany(
                "INSERT INTO parts (request_id, trace_id) VALUES (?, ?)",
                [(request_id, t) for t in trace_ids],
            )
            self.bytes_held += len(body)
            self.requests_held += 1
        return request_id

    def body(self, request_id: int) -> bytes:
        """The body of a spooled request (any thread). ``serve``'s receiving process keeps no
        copy of what it spooled: a grading worker's copy is read back from here when the
        first trace needing it is handed over, while that trace still holds the request in
        the spool. Raises ``LookupError`` for a request no longer spooled."""
        with self._mutex:
            db = self._db
            try:
                # Read from its pages straight into the bytes returned: a SELECT copies the
                # value once more on its way out.
                with db.blobopen("requests", "body", request_id, readonly=True) as blob:
                    return blob.read()
            except sqlite3.OperationalError:
                # "no such rowid" has no error code of its own: tell it from an I/O error.
                if db.execute("SELECT 1 FROM requests WHERE id = ?", (request_id,)).fetchone():
                    raise
        raise LookupError(f"request {request_id} is not in the spool")

    def settle(self, trace_ids: Iterable[str], *, exported: bool) -> int:
        """Traces graded: with ``exported``, their results are out (recorded, so no replay
        grades them again); without, their grading crashed (nothing to retry). Requests
        left with no outstanding trace are deleted. Returns how many were."""
        ids = sorted(set(trace_ids))
        if not ids:
            return 0
        with self._mutex, self._transaction() as db:
            db.execute("CREATE TEMP TABLE IF NOT EXISTS settled (trace_id TEXT PRIMARY KEY)")
            db.execute("DELETE FROM settled")
            db.executemany("INSERT OR IGNORE INTO settled VALUES (?)", [(t,) for t in ids])
            if exported:
                db.execute(
                    "INSERT OR IGNORE INTO exported SELECT trace_id, ? FROM settled",
                    (self.contracts,),
                )
            db.execute(
                "UPDATE parts SET outstanding = 0 WHERE trace_id IN (SELECT trace_id FROM settled)"
            )
            # Driven from the settled traces (CROSS JOIN fixes the order: without statistics
            # SQLite scanned every part and ran the subquery on each, O(parts) per call).
            done = [
                int(r[0])
                for r in db.execute(
                    "SELECT r.request_id FROM (SELECT DISTINCT p.request_id FROM settled s "
                    "CROSS JOIN parts p ON p.trace_id = s.trace_id) r "
                    "WHERE NOT EXISTS (SELECT 1 FROM parts q "
                    "WHERE q.request_id = r.request_id AND q.outstanding)"
                )
            ]
            freed = 0
            for request_id in done:
                row = db.execute(
                    "SELECT LENGTH(body) FROM requests WHERE id = ?", (request_id,)
                ).fetchone()
                freed += int(row[0]) if row else 0
                db.execute("DELETE FROM requests WHERE id = ?", (request_id,))
                db.execute("DELETE FROM parts WHERE request_id = ?", (request_id,))
            db.execute(
                "DELETE FROM exported WHERE trace_id IN (SELECT trace_id FROM settled) "
                "AND trace_id NOT IN (SELECT trace_id FROM parts)"
            )
            self.bytes_held -= freed
            self.requests_held -= len(done)
        return len(done)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, committed (and fsync'd) on success, rolled back on error."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def pending(self) -> Iterator[SpooledRequest]:
        """The spooled requests in arrival order, each with its traces still outstanding and
        not yet exported against the current contracts.

        Parts outstanding for a trace already exported (spans that arrived for it after a
        restart had forgotten it was graded) are settled first: nothing would settle them
        later, and their requests would stay forever."""
        with self._mutex:
            done = [
                str(r[0])
                for r in self._db.execute(
                    "SELECT DISTINCT trace_id FROM parts WHERE outstanding AND trace_id IN "
                    "(SELECT trace_id FROM exported WHERE contracts = ?)",
                    (self.contracts,),
                )
            ]
        self.settle(done, exported=True)
        with self._mutex:
            ids = [int(r[0]) for r in self._db.execute("SELECT id FROM requests ORDER BY id")]
        for request_id in ids:
            with self._mutex:
                row = self._db.execute(
                    "SELECT signal, content_type, body FROM requests WHERE id = ?", (request_id,)
                ).fetchone()
                traces = frozenset(
                    str(r[0])
                    for r in self._db.execute(
                        "SELECT trace_id FROM parts WHERE request_id = ? AND outstanding "
                        "AND trace_id NOT IN (SELECT trace_id FROM exported WHERE contracts = ?)",
                        (request_id, self.contracts),
                    )
                )
            if row is not None:
                signal: Literal["traces", "logs"] = "logs" if row[0] == "logs" else "traces"
                yield SpooledRequest(request_id, signal, str(row[1]), bytes(row[2]), traces)

    def close(self) -> None:
        """Checkpoint the WAL into the database file and release the directory lock (safe
        twice, and when never opened)."""
        with self._mutex:
            conn, self._conn = self._conn, None
            if conn is not None:
                # A checkpoint is an optimisation: the WAL is replayed on open anyway.
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                conn.close()
            lock, self._lock_file = self._lock_file, None
            if lock is not None:
                lock.close()


def _lock(directory: Path) -> IO[str]:
    """Hold an exclusive lock on the spool directory for this process's lifetime (released
    by the kernel when the process dies, however it dies)."""
    fd = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    handle = os.fdopen(fd, "r+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise ConfigError(
            f"spool directory {directory} is in use by {holder}; give each serve its own "
            "spool.path",
            source="spool.path",
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"serve pid {os.getpid()}\n")
    handle.flush()
    return handle


def default_spool_dir() -> Path:
    """``$XDG_STATE_HOME/otel-oracles/spool`` (``~/.local/state/...`` by default): per user,
    never inside the work tree."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "otel-oracles" / "spool"


class ExportOutcome:
    """Whether the last ``export`` call made on the current thread succeeded.

    The grading backends call ``export(pairs)`` and then their "graded" callback on the same
    thread, for the same batch; wrapping ``export`` lets that callback tell the spool whether
    the results really left (a destination that is down keeps them spooled for the next
    start) without widening every callback in between.
    """

    def __init__(self) -> None:
        self._local = threading.local()

    def wrap(self, export: Callable[[Any], object]) -> Callable[[Any], object]:
        def tracked(results: Any) -> object:
            self._local.ok = False
            outcome = export(results)
            self._local.ok = getattr(outcome, "name", "SUCCESS") != "FAILURE"
            return outcome

        return tracked

    def last_ok(self) -> bool:
        """True unless the last export on this thread failed or raised (a batch with no
        results to export, which skips the call, counts as exported)."""
        ok = getattr(self._local, "ok", True)
        self._local.ok = True
        return bool(ok)


def spool_for(settings: ServeSettings) -> Spool | None:
    """The spool ``settings.spool`` asks for (None when disabled), keyed to the contract
    files ``grading.contracts`` names; ``GradingServer.start`` opens it."""
    from otel_oracles.model.contract import discover_contract_files

    conf = settings.spool
    if not conf.enabled:
        return None
    files = discover_contract_files(list(settings.grading.contracts))
    directory = conf.path if conf.path is not None else default_spool_dir()
    return Spool(directory, conf.max_bytes, contracts_hash(files))
