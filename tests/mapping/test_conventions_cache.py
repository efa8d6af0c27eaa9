"""The validated-conventions cache (``mapping/_cache.py``): a warm start reads the same files
from it; a truncated, foreign, stale, damaged or ill-typed entry is ignored and written
again, one that is the project's own (its digest matches) is not checked again by the
schema's Python checks, and a directory that cannot be written is left alone."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from otel_oracles import safe_regex
from otel_oracles._entry_points import ENTRY_NAME as ENTRY_POINTS_ENTRY
from otel_oracles.decode import DecodedBatch
from otel_oracles.errors import ConventionError
from otel_oracles.grade.loader import parse_contract
from otel_oracles.mapping import ConventionCache, ConventionSet, builtin_dir, load_conventions
from otel_oracles.mapping._cache import CACHE_DIR_ENV, CACHE_ROOT_ENV, default_dir
from otel_oracles.mapping._loader import load_convention_file
from otel_oracles.model.span import SpanRecord
from otel_oracles.session import GradeRun, GradingSession

REPO = Path(__file__).resolve().parents[2]

USER_FILE = """\
name: my-agent
description: one rule of a user's own
rules:
  - id: tool
    match:
      all:
        - {attr: my.tool.name, exists: true}
    step: tool_call
    fields:
      tool: [{attr: my.tool.name}]
"""


def entries(directory: Path) -> dict[str, bytes]:
    """The files' entries (a compiled set's, ``set-*``, left out: test_compiled_set_cache;
    and the plug-ins' entry points, kept in the same directory: test_plugin_entry_points)."""
    return {
        p.name: p.read_bytes()
        for p in sorted(directory.glob("*.json"))
        if not p.name.startswith("set-") and p.name != ENTRY_POINTS_ENTRY
    }


@pytest.fixture
def user_dir(tmp_path: Path) -> Path:
    d = tmp_path / "mine"
    d.mkdir()
    (d / "my-agent.yaml").write_text(USER_FILE)
    return d


def test_a_warm_load_reads_the_same_files(tmp_path: Path, user_dir: Path) -> None:
    cache = ConventionCache(tmp_path / "cache")
    cold = load_conventions([user_dir])
    first = load_conventions([user_dir], cache)
    written = entries(tmp_path / "cache")
    bundled = len(list(builtin_dir().glob("*.yaml")))
    assert len(written) == bundled + 1  # every file survives the round trip
    warm = load_conventions([user_dir], cache)
    assert warm.files == first.files == cold.files
    assert entries(tmp_path / "cache") == written  # read, not written again


def read_entry(entry: Path) -> dict[str, Any]:
    """An entry's JSON (after the line with its digest)."""
    doc: dict[str, Any] = json.loads(entry.read_bytes().partition(b"\n")[2])
    return doc


def forge_entry(entry: Path, doc: dict[str, Any]) -> None:
    """Write ``doc`` as an entry with a digest that matches it (as only a deliberate forger,
    never a damaged file, would)."""
    body = json.dumps(doc).encode()
    entry.write_bytes(hashlib.sha256(body).hexdigest().encode() + b"\n" + body)


def test_an_entry_leaves_out_what_the_defaults_say(tmp_path: Path, user_dir: Path) -> None:
    """An entry holds what the file said, not every default written out: a field validator
    runs on each value that is there, so every condition's unset patterns cost three checks
    of ``None`` on each warm start. Loading it gives the file back whole."""
    cache = ConventionCache(tmp_path / "cache")
    path = user_dir / "my-agent.yaml"
    expected = load_convention_file(path)
    load_convention_file(path, cache=cache)
    (entry,) = (tmp_path / "cache").glob("*.json")
    rule = read_entry(entry)["file"]["rules"][0]
    assert rule["match"] == {"all": [{"attr": "my.tool.name", "exists": True}]}
    assert rule["fields"] == {"tool": [{"attr": "my.tool.name"}]}
    assert load_convention_file(path, cache=cache) == expected


def test_an_entry_is_used(tmp_path: Path, user_dir: Path) -> None:
    """A valid entry that carries the key and its digest stands for the file: proof the YAML
    is skipped."""
    cache = ConventionCache(tmp_path / "cache")
    path = user_dir / "my-agent.yaml"
    load_convention_file(path, cache=cache)
    (entry,) = (tmp_path / "cache").glob("*.json")
    doc = read_entry(entry)
    doc["file"]["description"] = "from the cache"
    forge_entry(entry, doc)
    assert load_convention_file(path, cache=cache).description == "from the cache"


def test_the_key_names_the_regex_engine_version(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, user_dir: Path
) -> None:
    """An entry's patterns are not compiled again when it is read (their syntax was checked
    when it was written), so an entry written under one ``regex`` version is never read
    under another: the other version checks the file's patterns itself."""
    path = user_dir / "my-agent.yaml"
    raw = path.read_bytes()
    load_convention_file(path, cache=ConventionCache(tmp_path / "cache"))
    (entry,) = (tmp_path / "cache").glob("*.json")
    doc = read_entry(entry)
    doc["file"]["description"] = "written by this engine version"
    forge_entry(entry, doc)
    written = ConventionCache(tmp_path / "cache").key(path.stem, str(path), raw)

    monkeypatch.setattr(safe_regex, "ENGINE_VERSION", "0.0.0-another")
    other = ConventionCache(tmp_path / "cache")
    assert other.key(path.stem, str(path), raw) != written
    assert load_convention_file(path, cache=other).description == "one rule of a user's own"
    assert read_entry(entry)["key"] == other.key(path.stem, str(path), raw)  # written again


def test_the_checks_run_when_an_entry_is_written_not_when_it_is_read(
    tmp_path: Path, user_dir: Path
) -> None:
    """An entry is written only after its file passed every check of the schema, and read
    only when its digest matches (``config.CHECKED``): the checks written in Python are not
    run again, pydantic still checks the types and keys. So an entry forged with its digest
    and a condition of two subjects is read as it says, while the same condition in YAML is
    refused; one forged with a value of the wrong type is refused and written again."""
    cache = ConventionCache(tmp_path / "cache")
    path = user_dir / "my-agent.yaml"
    expected = load_convention_file(path, cache=cache)
    (entry,) = (tmp_path / "cache").glob("*.json")
    good = entry.read_bytes()
    doc = read_entry(entry)
    two_subjects = {"attr": "my.tool.name", "exists": True, "span_name": "^tool$"}
    doc["file"]["rules"][0]["match"]["all"][0] = two_subjects
    forge_entry(entry, doc)
    read = load_convention_file(path, cache=cache).rules[0].match.all[0]
    assert (read.attr, read.span_name) == ("my.tool.name", "^tool$")

    from_yaml = tmp_path / "plain.yaml"
    from_yaml.write_text(
        USER_FILE.replace("{attr: my.tool.name, exists: true}", json.dumps(two_subjects))
    )
    with pytest.raises(ConventionError, match="exactly one of attr"):
        load_convention_file(from_yaml, cache=cache)

    doc["file"]["rules"][0]["match"]["all"][0] = {"attr": ["my.tool.name"], "exists": True}
    forge_entry(entry, doc)
    assert load_convention_file(path, cache=cache) == expected
    assert entry.read_bytes() == good


def crash_of_one_tool_span(conventions: ConventionSet) -> str:
    """Grade one span named ``tool`` with a ``my.tool.name`` attribute under ``conventions``:
    the verdict must be the ``error`` of a crashed grading (never a pass); its message."""
    contract = parse_contract(
        {"id": "c", "name": "c", "invariants": [{"type": "tool_not_called", "tool": "rm"}]},
        "c.yaml",
    )
    spans = [
        SpanRecord(
            trace_id="ab" * 16,
            span_id="cd" * 8,
            parent_span_id="",
            name="tool",
            attributes={"my.tool.name": "x"},
        )
    ]
    session = GradingSession([contract], conventions)
    graded = list(session.run([DecodedBatch(spans=spans)], GradeRun()))
    verdicts = [v for subject in graded for v, _ in subject.graded]
    assert [(v.verdict, [r.name for r in v.results]) for v in verdicts] == [
        ("error", ["grading_crash"])
    ]
    return verdicts[0].results[0].message


def test_a_forged_entry_with_a_bad_regex_fails_closed(tmp_path: Path, user_dir: Path) -> None:
    """An entry's regexes are compiled where they are first used, not when it is read. One
    forged with its digest and a pattern the engine refuses is therefore read, and the trace
    that pattern is first tried on gets an ``error`` verdict from every contract that
    selects it (its grading crashed), never a pass."""
    cache = ConventionCache(tmp_path / "cache")
    path = user_dir / "my-agent.yaml"
    load_convention_file(path, cache=cache)
    entry = next(e for e in (tmp_path / "cache").glob("*.json") if "my-agent" in e.read_text())
    doc = read_entry(entry)
    doc["file"]["rules"][0]["match"]["all"][0] = {"attr": "my.tool.name", "regex": "(unclosed"}
    forge_entry(entry, doc)
    assert "(RegexSyntaxError: " in crash_of_one_tool_span(load_conventions([user_dir], cache))


def test_a_forged_span_name_source_without_a_group_fails_closed(
    tmp_path: Path, user_dir: Path
) -> None:
    """A ``span_name`` source's capture group is checked when its file is validated from
    YAML, not when a cache entry is read (the entry was written only after that check), and
    its pattern is compiled on the first span name it reads. An entry forged with its
    digest and a group-less pattern is therefore read, and the trace it is first read on
    gets an ``error`` verdict from every contract that selects it, never a pass."""
    cache = ConventionCache(tmp_path / "cache")
    path = user_dir / "my-agent.yaml"
    load_convention_file(path, cache=cache)
    entry = next(e for e in (tmp_path / "cache").glob("*.json") if "my-agent" in e.read_text())
    doc = read_entry(entry)
    (source,) = doc["file"]["rules"][0]["fields"]["tool"]
    source.update(attr=None, span_name="^tool$")
    forge_entry(entry, doc)
    assert load_convention_file(path, cache=cache).rules[0].fields["tool"][0].span_name == (
        "^tool$"
    )
    from_yaml = tmp_path / "plain.yaml"
    from_yaml.write_text(USER_FILE.replace("[{attr: my.tool.name}]", "[{span_name: '^tool$'}]"))
    with pytest.raises(ConventionError, match="needs a capture group"):
        load_convention_file(from_yaml, cache=cache)
    assert "no such group" in crash_of_one_tool_span(load_conventions([user_dir], cache))


@pytest.mark.parametrize(
    "damage",
    ["truncated", "not json", "wrong key", "another file", "invalid regex", "digest", "extra"],
)
def test_a_bad_entry_is_ignored_and_written_again(
    tmp_path: Path, user_dir: Path, damage: str
) -> None:
    cache = ConventionCache(tmp_path / "cache")
    path = user_dir / "my-agent.yaml"
    expected = load_convention_file(path)
    load_convention_file(path, cache=cache)
    (entry,) = (tmp_path / "cache").glob("*.json")
    good = entry.read_bytes()
    doc = read_entry(entry)
    if damage == "truncated":
        entry.write_bytes(good[: len(good) // 2])
    elif damage == "not json":
        entry.write_bytes(b"\x00\x01 not json")
    elif damage == "wrong key":
        doc["key"] = "0" * 64
        doc["file"]["description"] = "stale"
        forge_entry(entry, doc)
    elif damage == "another file":
        doc["file"]["source"] = str(tmp_path / "elsewhere.yaml")
        forge_entry(entry, doc)
    elif damage == "invalid regex":  # edited without its digest: refused before reading
        doc["file"]["rules"][0]["match"]["all"][0] = {"attr": "x", "regex": "(unclosed"}
        entry.write_text(json.dumps(doc))
    elif damage == "digest":
        entry.write_bytes(b"0" * 64 + good[64:])
    else:
        doc["file"]["surprise"] = 1
        forge_entry(entry, doc)
    assert load_convention_file(path, cache=cache) == expected
    assert entry.read_bytes() == good


def test_an_edited_file_is_read_again(tmp_path: Path, user_dir: Path) -> None:
    cache = ConventionCache(tmp_path / "cache")
    path = user_dir / "my-agent.yaml"
    load_convention_file(path, cache=cache)
    path.write_text(USER_FILE.replace("one rule of a user's own", "edited"))
    assert load_convention_file(path, cache=cache).description == "edited"


def test_an_invalid_file_still_fails_with_its_location(tmp_path: Path, user_dir: Path) -> None:
    cache = ConventionCache(tmp_path / "cache")
    path = user_dir / "my-agent.yaml"
    path.write_text(USER_FILE.replace("step: tool_call", "step: tool_cal"))
    with pytest.raises(ConventionError, match=r"my-agent\.yaml: rules\[0\]\.step"):
        load_convention_file(path, cache=cache)
    assert entries(tmp_path / "cache") == {}


def test_a_cache_path_that_is_a_file_is_left_alone(tmp_path: Path, user_dir: Path) -> None:
    """The directory cannot be created (a refusal root gets too): grading goes on."""
    root = tmp_path / "cache"
    root.write_text("a file, not a directory")
    conv = load_convention_file(user_dir / "my-agent.yaml", cache=ConventionCache(root))
    assert conv.name == "my-agent"
    assert root.read_text() == "a file, not a directory"


def test_where_the_cache_lives(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "explicit"))
    assert default_dir() == tmp_path / "explicit"
    monkeypatch.setenv(CACHE_DIR_ENV, "")
    assert default_dir() is None
    assert ConventionCache.from_env() is None
    monkeypatch.delenv(CACHE_DIR_ENV)
    monkeypatch.setenv(CACHE_ROOT_ENV, str(tmp_path / "root"))
    assert default_dir() == tmp_path / "root" / "conventions"
    monkeypatch.delenv(CACHE_ROOT_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_dir() == tmp_path / "xdg" / "otel-oracles" / "conventions"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_dir() == tmp_path / "home" / ".cache" / "otel-oracles" / "conventions"


def without_durations(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_durations(v) for k, v in value.items() if k != "duration_ns"}
    if isinstance(value, list):
        return [without_durations(v) for v in value]
    return value


def test_grade_keeps_and_reuses_the_cache(tmp_path: Path) -> None:
    """The CLI through ``GradingSession.load``: the first run fills the cache, the second
    gives the same report."""
    env = dict(os.environ, **{CACHE_DIR_ENV: str(tmp_path / "cache")})
    trace = REPO / "tests" / "testdata" / "traces" / "openai-v2" / "a_happy.otlp.json"
    args = [sys.executable, "-c", "from otel_oracles.cli import main; main()", "grade"]
    args += [str(trace), "-c", str(REPO / "bench" / "contracts"), "--json"]
    first = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    filled = entries(tmp_path / "cache")
    second = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    assert len(filled) == len(list(builtin_dir().glob("*.yaml")))
    assert len(list((tmp_path / "cache").glob("set-*.json"))) == 1
    assert (tmp_path / "cache" / ENTRY_POINTS_ENTRY).is_file()
    assert first.returncode == second.returncode == 1
    assert without_durations(json.loads(first.stdout)) == without_durations(
        json.loads(second.stdout)
    )
