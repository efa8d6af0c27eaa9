"""The compiled set kept in the conventions cache (``_cache.ConventionCache.get_set``): a warm
start builds the core's objects from the set's blueprint instead of compiling its rules again,
and never from a blueprint of other files. An edited file, a damaged entry or one of another
shape all compile the set again, and the rules then in effect are the files' own; a file
entry whose content changed is never paired with the set."""

from __future__ import annotations

import gc
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from otel_oracles.assemble import build_trace
from otel_oracles.mapping import ConventionCache, ConventionSet, load_conventions, map_trace
from otel_oracles.mapping._compile import blueprint
from otel_oracles.mapping.config import ConventionFile
from otel_oracles.model.span import SpanRecord, StatusCode
from otel_oracles.pipeline import read_traces
from tests.mapping.test_conventions_cache import USER_FILE

TRACES = Path(__file__).resolve().parents[1] / "testdata" / "traces"


@pytest.fixture
def user_dir(tmp_path: Path) -> Path:
    d = tmp_path / "mine"
    d.mkdir()
    (d / "my-agent.yaml").write_text(USER_FILE)
    return d


def set_entry(cache_dir: Path) -> Path:
    (entry,) = cache_dir.glob("set-*.json")
    return entry


def body(entry: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(entry.read_bytes().partition(b"\n")[2])
    return doc


def untimed(raw: bytes) -> dict[str, Any]:
    """A set entry's body without the moment its inputs were looked at (``stated``)."""
    doc: dict[str, Any] = json.loads(raw.partition(b"\n")[2])
    del doc["stated"]
    return doc


def forge(entry: Path, doc: dict[str, Any]) -> None:
    """Write ``doc`` with a digest that matches it (only a deliberate forger would)."""
    raw = json.dumps(doc).encode()
    entry.write_bytes(hashlib.sha256(raw).hexdigest().encode() + b"\n" + raw)


def tool_of(conventions: ConventionSet, attr: str) -> list[tuple[str, str | None]]:
    """The steps (kind, tool) mapped from one span carrying ``attr: "x"``."""
    span = SpanRecord(
        trace_id="ab" * 16,
        span_id="cd" * 8,
        parent_span_id="",
        name="tool",
        start_ns=1,
        end_ns=2,
        status_code=StatusCode.UNSET,
        attributes={attr: "x"},
    )
    steps = map_trace(build_trace("ab" * 16, [span]), conventions).steps
    return [(s.kind, s.tool) for s in steps]


def mapped(conventions: ConventionSet) -> list[str]:
    """Every captured trace of a few frameworks, mapped (JSON)."""
    paths = sorted(p for p in TRACES.rglob("*") if p.suffix in (".json", ".jsonl"))[::25]
    assert len(paths) > 10
    return [
        map_trace(trace, conventions).model_dump_json()
        for path in paths
        for trace in read_traces([str(path)], [])
    ]


def test_a_warm_load_builds_the_set_from_its_entry(tmp_path: Path, user_dir: Path) -> None:
    """The first load writes the set's blueprint; the second builds from it (proof: a
    blueprint forged with its digest is what takes effect) the same rules as compiling."""
    cache = ConventionCache(tmp_path / "cache")
    cold = load_conventions([user_dir])
    first = load_conventions([user_dir], cache)
    entry = set_entry(tmp_path / "cache")
    written = entry.read_bytes()
    warm = load_conventions([user_dir], cache)
    # Read, not compiled again (written again only with its inputs' status, once settled:
    # a slow run may reach that).
    assert untimed(entry.read_bytes()) == untimed(written)
    assert body(entry)["compiled"] == json.loads(json.dumps(blueprint(cold)))
    assert mapped(warm) == mapped(first) == mapped(cold)
    assert tool_of(warm, "my.tool.name") == [("tool_call", "x")]

    doc = body(entry)
    (mine,) = (r for r in doc["compiled"]["rules"] if r[0] == "my-agent")
    mine[2] = "retrieval"  # its step (``_compile._compiled_rule``)
    forge(entry, doc)
    read = load_conventions([user_dir], cache).compiled()
    assert [r.step for r in read.rules if r.file == "my-agent"] == ["retrieval"]


@pytest.mark.parametrize(
    "value",
    [2**70, -(2**64), float("inf"), float("-inf"), [[[[1]]]] * 3, "\u00e9\u2028\U0001f600"],
    ids=["int past 64 bits", "negative past 64 bits", "inf", "-inf", "nested", "text"],
)
def test_an_entry_orjson_refuses_is_read_by_json(
    tmp_path: Path, user_dir: Path, value: Any
) -> None:
    """The set's entry is read by ``orjson`` when it can, else by ``json`` (what ``json.dumps``
    writes and ``orjson`` refuses: ``Infinity``, integers past 64 bits), so either way the
    entry takes effect (proof: its forged step) rather than the set being compiled again."""
    cache = ConventionCache(tmp_path / "cache")
    load_conventions([user_dir], cache)
    entry = set_entry(tmp_path / "cache")
    doc = body(entry)
    (mine,) = (r for r in doc["compiled"]["rules"] if r[0] == "my-agent")
    mine[2] = "retrieval"
    doc["extra"] = value
    forge(entry, doc)
    read = load_conventions([user_dir], cache).compiled()
    assert [r.step for r in read.rules if r.file == "my-agent"] == ["retrieval"]


@pytest.mark.parametrize(
    "text",
    [
        b'{"a": [1, -0, 0.1, 1e300, 5e-324, -0.0, 1.7976931348623157e308, 123456789012345678]}',
        b'["\\u00e9", "\\ud83d\\ude00", "\\"q\\" \\\\ \\/ \\b\\f\\n\\r\\t", "\xc3\xa9"]',
        b'{"k": 1, "k": 2, "": null, "t": true, "f": false}',
        b"[18446744073709551615, 18446744073709551616, -9223372036854775809, NaN, Infinity]",
        b"[" * 2000 + b"]" * 2000,
    ],
    ids=["numbers", "escapes", "repeated key", "past 64 bits", "deep"],
)
def test_the_set_entry_reader_gives_what_json_gives(text: bytes) -> None:
    """``_set_entry`` reads what ``json.loads`` reads into the same values (types, floats
    to the bit, a repeated key's last value), and refuses what it refuses."""
    from otel_oracles.mapping._cache import _set_entry

    try:
        expected: Any = json.loads(text)
    except RecursionError:
        with pytest.raises(RecursionError):
            _set_entry(text)
        return
    got = _set_entry(text)
    assert json.dumps(got) == json.dumps(expected)
    assert repr(got) == repr(expected)


def files_alive() -> int:
    """How many ``ConventionFile`` objects this process holds."""
    gc.collect()
    return sum(isinstance(o, ConventionFile) for o in gc.get_objects())


def test_a_warm_load_builds_no_file_until_one_is_asked_for(tmp_path: Path, user_dir: Path) -> None:
    """Grading needs only the compiled set: a warm load builds none of the files (validating
    the bundled files' entries was ~51 M instructions of every start), mapping builds none,
    and the files, their rules and what the set merges from them are the cold load's when
    asked for."""
    cache = ConventionCache(tmp_path / "cache")
    cold = load_conventions([user_dir])
    load_conventions([user_dir], cache)
    before = files_alive()
    warm = load_conventions([user_dir], cache)
    assert mapped(warm) == mapped(cold)
    assert tool_of(warm, "my.tool.name") == [("tool_call", "x")]
    assert (warm.tool_kinds(), warm.final_answer_tools()) == (
        cold.tool_kinds(),
        cold.final_answer_tools(),
    )
    assert warm.handoff_requests() == cold.handoff_requests()
    assert warm.model_status_errors() == cold.model_status_errors()
    assert files_alive() == before
    assert warm.rule("my-agent/tool") == cold.rule("my-agent/tool")
    assert warm.files == cold.files
    assert files_alive() == before + len(cold.files)


def test_an_edited_file_takes_effect(tmp_path: Path, user_dir: Path) -> None:
    """A file edited after its set was kept changes the set's key: the set is compiled
    again, the new rule takes effect and the entry is written over."""
    cache = ConventionCache(tmp_path / "cache")
    assert tool_of(load_conventions([user_dir], cache), "other.tool") == []
    before = set_entry(tmp_path / "cache").read_bytes()
    path = user_dir / "my-agent.yaml"
    path.write_text(USER_FILE.replace("my.tool.name", "other.tool"))
    edited = load_conventions([user_dir], cache)
    assert tool_of(edited, "other.tool") == [("tool_call", "x")]
    assert tool_of(edited, "my.tool.name") == []
    after = set_entry(tmp_path / "cache").read_bytes()
    assert after != before
    assert tool_of(load_conventions([user_dir], cache), "other.tool") == [("tool_call", "x")]
    assert untimed(set_entry(tmp_path / "cache").read_bytes()) == untimed(after)


def test_a_file_entry_that_changed_is_not_paired_with_the_set(
    tmp_path: Path, user_dir: Path
) -> None:
    """The set is keyed by its files' bytes and holds the digests of the file entries it
    was compiled from: a warm start reads no file entry, and a file entry whose content
    changed (forged with its digest) is never used, neither by the set nor by its files
    when asked for (validated from the YAML again, the entry written again): the set and
    its files stay the YAML's."""
    cache = ConventionCache(tmp_path / "cache")
    cold = load_conventions([user_dir])
    load_conventions([user_dir], cache)
    (file_entry,) = (
        e
        for e in (tmp_path / "cache").glob("*.json")
        if not e.name.startswith("set-") and "my-agent" in e.read_text()
    )
    good = file_entry.read_bytes()
    doc = body(file_entry)
    rule = doc["file"]["rules"][0]
    rule["match"]["all"][0]["attr"] = rule["fields"]["tool"][0]["attr"] = "forged.tool"
    forge(file_entry, doc)
    warm = load_conventions([user_dir], cache)
    assert tool_of(warm, "forged.tool") == []
    assert tool_of(warm, "my.tool.name") == [("tool_call", "x")]
    assert warm.rule("my-agent/tool") == cold.rule("my-agent/tool")
    assert warm.files == cold.files
    assert file_entry.read_bytes() == good  # validated from the YAML, written again


def test_a_warm_load_reads_no_file_entry(tmp_path: Path, user_dir: Path) -> None:
    """Only the set's entry is read by a warm start: with every file's entry gone, the set
    is still built from its blueprint (not compiled again: a forged blueprint takes
    effect), and the files, when asked for, come from their YAML."""
    cache = ConventionCache(tmp_path / "cache")
    cold = load_conventions([user_dir])
    load_conventions([user_dir], cache)
    entry = set_entry(tmp_path / "cache")
    doc = body(entry)
    (mine,) = (r for r in doc["compiled"]["rules"] if r[0] == "my-agent")
    mine[2] = "retrieval"
    forge(entry, doc)
    for file_entry in (tmp_path / "cache").glob("*.json"):
        if not file_entry.name.startswith("set-"):
            file_entry.unlink()
    warm = load_conventions([user_dir], cache)
    assert [r.step for r in warm.compiled().rules if r.file == "my-agent"] == ["retrieval"]
    assert warm.files == cold.files


def test_another_set_of_files_is_another_entry(tmp_path: Path, user_dir: Path) -> None:
    cache = ConventionCache(tmp_path / "cache")
    load_conventions([user_dir], cache)
    load_conventions([], cache)
    assert len(list((tmp_path / "cache").glob("set-*.json"))) == 2
    assert tool_of(load_conventions([], cache), "my.tool.name") == []
    assert tool_of(load_conventions([user_dir], cache), "my.tool.name") == [("tool_call", "x")]


@pytest.mark.parametrize(
    "damage",
    [
        "truncated",
        "not json",
        "digest",
        "stale key",
        "not a dict",
        "shape",
        "entries",
        "types",
        "source number",
        "parser name",
    ],
)
def test_a_bad_set_entry_is_compiled_again(tmp_path: Path, user_dir: Path, damage: str) -> None:
    cache = ConventionCache(tmp_path / "cache")
    cold = load_conventions([user_dir])
    load_conventions([user_dir], cache)
    entry = set_entry(tmp_path / "cache")
    good = entry.read_bytes()
    doc = body(entry)
    if damage == "truncated":
        entry.write_bytes(good[: len(good) // 2])
    elif damage == "not json":
        entry.write_bytes(b"\x00\x01 not json")
    elif damage == "digest":
        entry.write_bytes(b"0" * 64 + good[64:])
    elif damage == "stale key":  # another set's blueprint under this name
        doc["key"] = "0" * 64
        # Looked at when its inputs were not settled, so their status cannot stand for them
        # and the key is computed: files made more than SETTLED_NS before the first load (a
        # loaded machine) would otherwise be settled, and the status vouch for the set.
        doc["stated"] = 0
        doc["compiled"]["rules"][0][2] = "retrieval"
        forge(entry, doc)
    elif damage == "not a dict":
        forge(entry, doc["compiled"]["rules"])  # type: ignore[arg-type]
    elif damage == "shape":
        del doc["compiled"]["plans"]
        forge(entry, doc)
    elif damage == "entries":  # a digest short: the entries it was compiled from unknown
        doc["compiled"]["rules"][0][2] = "retrieval"
        doc["entries"] = doc["entries"][:-1]
        forge(entry, doc)
    elif damage == "source number":  # a field reading past the set's sources
        doc["compiled"]["rules"][0][2] = "retrieval"
        doc["compiled"]["plans"][0][0][2] = [len(doc["compiled"]["sources"])]
        forge(entry, doc)
    elif damage == "parser name":  # a source's parser that no one registers
        doc["compiled"]["rules"][0][2] = "retrieval"
        doc["compiled"]["sources"][-1][3] = ["no such parser"]
        forge(entry, doc)
    else:
        doc["compiled"]["table"]["rules"][0] = [[["exists", "not a number", True]], []]
        forge(entry, doc)
    warm = load_conventions([user_dir], cache)
    # Compiled again and written over (the moment its inputs were looked at is this load's).
    assert untimed(entry.read_bytes()) == untimed(good)
    assert [r.step for r in warm.compiled().rules] == [r.step for r in cold.compiled().rules]
    assert tool_of(warm, "my.tool.name") == [("tool_call", "x")]
