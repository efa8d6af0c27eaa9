"""Contracts' YAML documents kept in the cache directory (``grade/_documents.py``): a warm
load reads no YAML, gives the same contract, and validates the kept document again, so an
entry can say nothing the file did not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from otel_oracles._cache_dir import sha256
from otel_oracles.errors import ContractError
from otel_oracles.grade import load_contract

CONTRACT = """\
id: docs
match: {root_name: /agent.*/}
invariants:
  - {type: max_steps, max: 5, why: a short run}
  - {type: tool_not_called, tool: [rm, "drop_*"]}
"""


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "cache"
    monkeypatch.setenv("OTEL_ORACLES_CONVENTIONS_CACHE", str(directory))
    return directory


def _entry(cache: Path) -> Path:
    (entry,) = cache.glob("contracts/*.json")
    return entry


def _rewrite(entry: Path, document: object) -> None:
    """The entry holding ``document``, its digest made to match (a forged entry)."""
    body = json.loads(entry.read_bytes().partition(b"\n")[2])
    body["document"] = document
    raw = json.dumps(body).encode()
    entry.write_bytes(sha256(raw).hexdigest().encode() + b"\n" + raw)


def test_a_warm_load_gives_the_same_contract(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(CONTRACT)
    cold = load_contract(path)
    assert len(list(cache.glob("contracts/*.json"))) == 1
    assert load_contract(path) == cold
    monkeypatch.setenv("OTEL_ORACLES_CONVENTIONS_CACHE", "")  # off: the YAML, the same one
    assert load_contract(path) == cold


def test_a_forged_entry_is_validated_again(tmp_path: Path, cache: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(CONTRACT)
    load_contract(path)
    _rewrite(_entry(cache), {"id": "docs", "invariants": [{"type": "max_steps", "max": "x"}]})
    with pytest.raises(ContractError, match=r"invariants\[0\]\.max"):
        load_contract(path)


def test_an_entry_that_fails_its_digest_or_is_writable_by_others_is_ignored(
    tmp_path: Path, cache: Path
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(CONTRACT)
    cold = load_contract(path)
    entry = _entry(cache)
    entry.write_bytes(entry.read_bytes().replace(b'"max": 5', b'"max": 500'))
    assert load_contract(path) == cold  # read from the YAML again, and kept again
    _rewrite(_entry(cache), {"id": "docs"})
    entry.chmod(0o664)
    assert load_contract(path) == cold


def test_a_document_json_cannot_hold_is_not_kept(tmp_path: Path, cache: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(CONTRACT + "tags: [2026-12-04]\n")  # a date
    with pytest.raises(ContractError, match="tags"):
        load_contract(path)
    assert list(cache.glob("contracts/*.json")) == []
