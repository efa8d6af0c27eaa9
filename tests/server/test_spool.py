"""The write-ahead spool on its own: bookkeeping, replay filter, bounds, permissions, lock."""

from __future__ import annotations

import stat
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from otel_oracles.server._spool import SPOOL_FILE, Spool
from otel_oracles.server.config import ConfigError
from tests.server.agent_traces import fixture_request, rekeyed

_OPENED: list[Spool] = []


def opened(path: Path, max_bytes: int = 1 << 20, contracts: str = "c1") -> Spool:
    spool = Spool(path, max_bytes, contracts)
    spool.open()
    _OPENED.append(spool)
    return spool


@pytest.fixture(autouse=True)
def _close_spools() -> Iterator[None]:
    yield
    while _OPENED:
        _OPENED.pop().close()


def test_a_request_stays_until_every_trace_it_fed_is_settled(tmp_path: Path) -> None:
    spool = opened(tmp_path / "spool")
    r1 = spool.append("traces", "application/x-protobuf", b"one", ["a", "b"])
    spool.append("logs", "application/json", b"two!", ["b"])
    assert (spool.requests_held, spool.bytes_held) == (2, 7)

    assert spool.settle(["a"], exported=True) == 0, "b is still outstanding in both"
    left = list(spool.pending())
    assert (left[0].id, left[0].outstanding) == (r1, frozenset({"b"}))
    assert [r.signal for r in left] == ["traces", "logs"]

    assert spool.settle(["b"], exported=True) == 2
    assert (spool.requests_held, spool.bytes_held, list(spool.pending())) == (0, 0, [])


def test_a_spooled_body_is_read_back_while_one_of_its_traces_is_outstanding(
    tmp_path: Path,
) -> None:
    """serve keeps no copy of a spooled request's bytes: its buffered spans read them back
    from the spool (``RequestBody.spill``) when a grading worker is first sent the body."""
    from otel_oracles.decode import decode

    spool = opened(tmp_path / "spool")
    body, content_type = fixture_request("a_happy").SerializeToString(), "application/x-protobuf"
    spans = decode(body, content_type, for_transfer=True).spans
    request = spans[0].body
    traces = {s.trace_id for s in spans}
    request_id = spool.append("traces", content_type, body, traces)
    request.spill(lambda: spool.body(request_id))
    assert request._payload is None, "the bytes are not held in memory any more"
    assert request.payload == body and spans[-1].body.payload == body
    spool.settle(traces, exported=True)
    with pytest.raises(LookupError, match=f"request {request_id} is not in the spool"):
        spool.body(request_id)


def test_what_survives_a_reopen_and_exported_traces_are_not_replayed(tmp_path: Path) -> None:
    spool = opened(tmp_path)
    spool.append("traces", "application/x-protobuf", b"body", ["a", "b"])
    spool.settle(["a"], exported=True)
    spool.close()  # as after a kill: the lock goes with the process, the rows stay

    again = opened(tmp_path)
    (request,) = list(again.pending())
    assert (request.body, request.outstanding) == (b"body", frozenset({"b"}))
    assert again.bytes_held == 4
    again.close()

    # Graded against other contracts, trace a is outstanding again for them.
    other = opened(tmp_path, contracts="c2")
    assert next(other.pending()).outstanding == frozenset({"b"}), "a was settled for good"
    other.close()


def test_parts_for_an_already_exported_trace_do_not_pin_their_request(tmp_path: Path) -> None:
    spool = opened(tmp_path)
    spool.append("traces", "application/x-protobuf", b"first", ["a", "b"])
    spool.settle(["a"], exported=True)
    # After a restart (which forgot that a was graded), late spans of a were spooled again.
    spool.append("traces", "application/x-protobuf", b"late", ["a"])
    assert [r.body for r in spool.pending()] == [b"first"], "the late request is settled"
    assert spool.requests_held == 1


def test_a_crashed_trace_leaves_without_an_exported_record(tmp_path: Path) -> None:
    spool = opened(tmp_path)
    spool.append("traces", "application/x-protobuf", b"x", ["a"])
    assert spool.settle(["a"], exported=False) == 1
    assert spool.requests_held == 0


def _settle_steps(spool: Spool, trace_id: str) -> int:
    """SQLite virtual-machine instructions one ``settle`` of ``trace_id`` executes."""
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    spool._db.set_progress_handler(count, 1)
    try:
        spool.settle([trace_id], exported=True)
    finally:
        spool._db.set_progress_handler(None, 1)
    return steps


def test_settling_a_trace_costs_the_same_however_many_other_traces_are_spooled(
    tmp_path: Path,
) -> None:
    """serve settles each batch of results in one transaction while thousands of traces are
    spooled: finding the requests a settle frees must start from the settled traces, not
    scan every trace of every spooled request (as it did: 14x the work at 10x the parts)."""
    costs = []
    for n, directory in ((40, "small"), (400, "large")):
        spool = opened(tmp_path / directory)
        for r in range(n // 20):
            spool.append("traces", "application/x-protobuf", b"x", [f"t{r}-{i}" for i in range(20)])
        costs.append(_settle_steps(spool, "t0-0"))
        assert spool.requests_held == n // 20, "its request still feeds 19 traces"
    assert costs[1] < 2 * costs[0], costs


def test_a_new_spool_has_64_kib_pages_and_an_older_one_keeps_its_own(tmp_path: Path) -> None:
    """Request bodies are stored in fewer, larger pages; a spool written by an earlier
    version (4 KiB pages) opens and works as it is."""
    spool = opened(tmp_path / "new")
    assert spool._db.execute("PRAGMA page_size").fetchone()[0] == 65536

    import sqlite3

    old_dir = tmp_path / "old"
    old_dir.mkdir(mode=0o700)
    db = sqlite3.connect(old_dir / SPOOL_FILE)
    db.execute("PRAGMA page_size=4096")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE kept (x)")
    db.close()
    old = opened(old_dir)
    assert old._db.execute("PRAGMA page_size").fetchone()[0] == 4096
    old.append("traces", "application/x-protobuf", b"body" * 50_000, ["a"])
    assert old.settle(["a"], exported=True) == 1 and old.requests_held == 0


def test_a_settled_body_is_not_written_again(tmp_path: Path) -> None:
    """A large body is read back whole, and settling it frees its pages without writing
    them again: SQLite built with SECURE_DELETE (Debian's) zeroed every freed page and
    wrote it to the WAL, as many pages as the body had."""
    spool = opened(tmp_path / "spool", max_bytes=1 << 30)
    wal = tmp_path / "spool" / (SPOOL_FILE + "-wal")
    body = bytes(range(256)) * 8192  # 2 MiB: 32 pages of 64 KiB
    request_id = spool.append("traces", "application/x-protobuf", body, ["a"])
    assert spool.body(request_id) == body
    before = wal.stat().st_size
    assert spool.settle(["a"], exported=True) == 1
    frames = (wal.stat().st_size - before) // (65536 + 24)
    # The tables' and indexes' pages, the header and the free list's trunk: 8 here, 39 with
    # the body's 32 pages written again.
    assert frames < 16, f"settling wrote {frames} pages to the WAL, expected the tables' few"


OLDER_SCHEMA = """
CREATE TABLE requests (id INTEGER PRIMARY KEY, signal TEXT NOT NULL,
    content_type TEXT NOT NULL, body BLOB NOT NULL);
CREATE TABLE parts (request_id INTEGER NOT NULL, trace_id TEXT NOT NULL,
    outstanding INTEGER NOT NULL DEFAULT 1, PRIMARY KEY (request_id, trace_id));
CREATE INDEX parts_by_trace ON parts (trace_id);
CREATE TABLE exported (trace_id TEXT NOT NULL, contracts TEXT NOT NULL,
    PRIMARY KEY (trace_id, contracts));
"""
"""The tables as spools were created before ``parts`` and ``exported`` lost their rowids."""


def test_a_new_spool_keeps_its_bookkeeping_without_rowids_and_an_older_one_works_as_it_is(
    tmp_path: Path,
) -> None:
    """``parts`` and ``exported`` rows live in their key's b-tree alone (one page fewer
    written a transaction each); a spool holding the earlier tables, with a request
    accepted by the earlier version, replays, settles and records exports the same."""
    import sqlite3

    new = opened(tmp_path / "new")
    tables = dict(new._db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'"))
    assert all(tables[t].endswith("WITHOUT ROWID") for t in ("parts", "exported")), tables

    old_dir = tmp_path / "old"
    old_dir.mkdir(mode=0o700)
    db = sqlite3.connect(old_dir / SPOOL_FILE)
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript(OLDER_SCHEMA)
    db.execute("INSERT INTO requests VALUES (7, 'traces', 'application/x-protobuf', x'01')")
    db.executemany("INSERT INTO parts (request_id, trace_id) VALUES (7, ?)", [("a",), ("b",)])
    db.commit()
    db.close()
    old = opened(old_dir)
    assert [(r.id, r.body, r.outstanding) for r in old.pending()] == [
        (7, b"\x01", frozenset({"a", "b"}))
    ]
    assert old.settle(["a"], exported=True) == 0, "b is still outstanding"
    later = old.append("traces", "application/x-protobuf", b"two", ["b", "c"])
    assert old.body(later) == b"two"
    assert old.settle(["b"], exported=True) == 1
    assert [(r.id, r.outstanding) for r in old.pending()] == [(later, frozenset({"c"}))]


def test_room_is_bounded_but_an_empty_spool_takes_any_request(tmp_path: Path) -> None:
    spool = opened(tmp_path, max_bytes=10)
    assert spool.has_room(1000), "empty: never livelock a sender"
    spool.append("traces", "application/x-protobuf", b"12345678", ["a"])
    assert spool.has_room(2) and not spool.has_room(3)


def test_a_request_that_fed_no_trace_is_not_kept(tmp_path: Path) -> None:
    spool = opened(tmp_path)
    assert spool.append("logs", "application/json", b"late or unattached", []) == 0
    assert spool.requests_held == 0


def test_directory_0700_files_0600(tmp_path: Path) -> None:
    directory = tmp_path / "state" / "spool"
    spool = opened(directory)
    spool.append("traces", "application/x-protobuf", b"secret prompt", ["a"])
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    for f in directory.iterdir():
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f.name
    assert (directory / SPOOL_FILE).exists()


def test_one_serve_per_spool(tmp_path: Path) -> None:
    first = opened(tmp_path)
    with pytest.raises(ConfigError, match=r"spool\.path.*in use by serve pid"):
        opened(tmp_path)
    first.close()
    opened(tmp_path).close()  # released with the first


def test_a_full_spool_answers_429_with_retry_after(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bg = serve(**{"spool.path": str(tmp_path / "spool"), "spool.max_bytes": 1,
                  "assembly.decision_wait": "60s", "assembly.max_trace_age": "120s"})  # fmt: skip

    def post(body: bytes) -> urllib.request.Request:
        return urllib.request.Request(
            bg.http_url + "/v1/traces", data=body,
            headers={"Content-Type": "application/x-protobuf"},
        )  # fmt: skip

    first, _ = rekeyed(fixture_request("a_happy"))
    with urllib.request.urlopen(post(first.SerializeToString())) as resp:
        assert resp.status == 200
    second, _ = rekeyed(fixture_request("a_happy"))
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(post(second.SerializeToString()))
    refused.value.close()
    assert refused.value.code == 429 and refused.value.headers["Retry-After"] == "1"
    stats = bg.stats()
    assert stats["rejected"]["spool_full"] > 0 and stats["spool_requests"] == 1


def test_a_spooled_request_that_no_longer_decodes_does_not_stop_serve(  # type: ignore[no-untyped-def]
    serve, tmp_path: Path
) -> None:
    directory = tmp_path / "spool"
    spool = Spool(directory, 1 << 20, "any")
    spool.open()
    spool.append("traces", "application/x-protobuf", b"\xff\xffnot protobuf", ["t1"])
    spool.close()
    bg = serve(**{"spool.path": str(directory)})
    stats = bg.stats()
    assert (stats["spool_requests"], stats["grading_errors"]) == (0, 1)
