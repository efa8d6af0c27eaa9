"""A kept set's inputs by their status (``_cache.ConventionCache.inputs``): a warm start
whose files and compiler code have the status the set's entry recorded, settled before the
entry looked at them, computes no key (hashes no file); any other status, or one changed
within the racy window (``SETTLED_NS``), has the files hashed and the key compared as
before, so an edit is never missed because its file kept its size and times."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from otel_oracles.mapping import ConventionCache, load_conventions
from otel_oracles.mapping._cache import SETTLED_NS, settled
from tests.mapping.test_compiled_set_cache import body, forge, set_entry, tool_of
from tests.mapping.test_conventions_cache import USER_FILE


@pytest.fixture
def user_dir(tmp_path: Path) -> Path:
    d = tmp_path / "mine"
    d.mkdir()
    (d / "my-agent.yaml").write_text(USER_FILE)
    return d


def status(path: Path) -> list[int]:
    info = path.stat()
    return [info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns]


def retrieval(doc: dict[str, Any]) -> None:
    """The user rule's step, ``tool_call``, made ``retrieval`` in a kept blueprint: it
    takes effect only if the blueprint is used."""
    (mine,) = (r for r in doc["compiled"]["rules"] if r[0] == "my-agent")
    mine[2] = "retrieval"


def test_inputs_that_stand_are_not_hashed(tmp_path: Path, user_dir: Path) -> None:
    """The entry's inputs are the files' and the code's status now, all settled before it
    looked at them: the set is taken without its key (proof: a blueprint forged under a
    key no file gives takes effect). One of them other, and the key is computed again."""
    cache = ConventionCache(tmp_path / "cache")
    load_conventions([user_dir], cache)
    entry = set_entry(tmp_path / "cache")
    doc = body(entry)
    assert doc["inputs"][2][-1] == status(user_dir / "my-agent.yaml")
    doc["key"] = "0" * 64
    doc["stated"] = time.time_ns() + 10 * SETTLED_NS  # every time in it settled before
    retrieval(doc)
    forge(entry, doc)
    assert tool_of(load_conventions([user_dir], cache), "my.tool.name") == [("retrieval", "x")]

    doc["inputs"][1][0][3] -= 1  # the schema's code: another modification time
    forge(entry, doc)
    assert tool_of(load_conventions([user_dir], cache), "my.tool.name") == [("tool_call", "x")]


def same_size_edit(path: Path) -> None:
    """``path`` edited to another rule of the same size, its modification time put back."""
    before = path.stat()
    edited = USER_FILE.replace("my.tool.name", "my.tool.kind")
    assert len(edited) == len(USER_FILE)
    path.write_text(edited)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def test_a_same_size_edit_with_its_time_put_back_is_read(tmp_path: Path, user_dir: Path) -> None:
    """An edit that keeps the file's size and modification time still changes its status
    change time: the settled entry does not stand for it and the edit takes effect."""
    cache = ConventionCache(tmp_path / "cache")
    load_conventions([user_dir], cache)
    entry = set_entry(tmp_path / "cache")
    doc = body(entry)
    doc["stated"] = time.time_ns() + 10 * SETTLED_NS
    forge(entry, doc)
    same_size_edit(user_dir / "my-agent.yaml")
    warm = load_conventions([user_dir], cache)
    assert tool_of(warm, "my.tool.kind") == [("tool_call", "x")]
    assert tool_of(warm, "my.tool.name") == []


def test_an_edit_within_the_racy_window_is_read(tmp_path: Path, user_dir: Path) -> None:
    """Two writes within one tick of the file system's clock can leave the very same
    status (size, times, inode). An entry whose inputs changed less than ``SETTLED_NS``
    before it looked at them is never taken on their status: here the entry records the
    edited file's status exactly (as such a second write would leave it), and the files
    are still hashed, the key compared and the edit read."""
    cache = ConventionCache(tmp_path / "cache")
    load_conventions([user_dir], cache)
    entry = set_entry(tmp_path / "cache")
    doc = body(entry)
    path = user_dir / "my-agent.yaml"
    same_size_edit(path)
    doc["inputs"][2][-1] = status(path)
    assert not settled(doc["inputs"], doc["stated"])  # written just now: in the window
    forge(entry, doc)
    warm = load_conventions([user_dir], cache)
    assert tool_of(warm, "my.tool.kind") == [("tool_call", "x")]
    assert tool_of(warm, "my.tool.name") == []


def test_the_racy_rule() -> None:
    now = time.time_ns()
    old = now - 3 * SETTLED_NS
    inputs: list[Any] = [[], [[1, 2, 3, old, old]], [[1, 4, 5, old, old]]]
    assert settled(inputs, now)
    for where, time_index in ((1, 3), (1, 4), (2, 3), (2, 4)):
        racy = json.loads(json.dumps(inputs))
        racy[where][0][time_index] = now - SETTLED_NS // 2
        assert not settled(racy, now)
    assert not settled(inputs, old + SETTLED_NS)  # exactly the window: not settled


def test_a_set_found_by_its_key_is_kept_with_its_inputs_now(tmp_path: Path) -> None:
    """A set whose key matched though its inputs' status did not stand (a file touched
    and put back) is written again with the status now, once settled, so the next start
    hashes nothing. The bundled files (installed, or checked out, seconds ago at least)."""
    cache = ConventionCache(tmp_path / "cache")
    load_conventions([], cache)
    entry = set_entry(tmp_path / "cache")
    doc = body(entry)
    if not settled(doc["inputs"], doc["stated"]):
        pytest.skip("the bundled files changed less than two seconds ago")
    recorded = doc["inputs"]
    touched = json.loads(json.dumps(recorded))
    touched[2][0][3] -= 1
    doc["inputs"] = touched
    forge(entry, doc)
    load_conventions([], cache)
    again = body(entry)
    assert again["inputs"] == recorded
    assert again["stated"] > doc["stated"]
    assert again["compiled"] == doc["compiled"]
    raw = entry.read_bytes()
    assert raw.partition(b"\n")[0] == hashlib.sha256(raw.partition(b"\n")[2]).hexdigest().encode()
