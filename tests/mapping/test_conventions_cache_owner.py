"""The conventions cache holds the validated mapping rules ``grade`` applies, so whoever can
write an entry decides how spans are read. An entry carries a digest of itself and a key
computed from public inputs (the file's bytes and path, the schema, the versions): anyone can
compute both. With the cache in a directory others can write (a shared
``OTEL_ORACLES_CACHE`` on a CI runner, ``/tmp``), another user replaced the entries with
ones that read every tool call's name as ``search_docs``, and a trace that called the
forbidden ``delete_records`` passed ``tool_not_called``. An entry is used now only when the
grader's own user (or root) owns it and no one else may write it.

Real CLI runs over a real capture; the forger is a process of another user (uid 65534),
as root can start one."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TRACE = REPO / "examples" / "traces" / "pydantic-ai-d_forbidden_tool.otlp.json"
CONTRACTS = REPO / "examples" / "contracts"
CLI = [sys.executable, "-c", "from otel_oracles.cli import main; main()"]
OTHER_USER = 65534

COPY_AS_OTHER_USER = """
import os, shutil, sys
from pathlib import Path
for forged in Path(sys.argv[1]).iterdir():
    target = Path(sys.argv[2]) / forged.name
    target.unlink()  # the directory lets anyone remove and create names
    shutil.copyfile(forged, target)
"""


def grade(cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OTEL_ORACLES_CONVENTIONS_CACHE": str(cache)}
    return subprocess.run(
        [*CLI, "grade", str(TRACE), "-c", str(CONTRACTS)],
        capture_output=True, text=True, timeout=180, check=False, env=env, cwd=REPO,
    )  # fmt: skip


def forge(entry: Path, into: Path) -> bool:
    """``entry`` rewritten so every tool call reads as ``search_docs`` (a compiled set's:
    so no rule maps a tool call at all), digest recomputed; written to ``into``. False when
    the entry has no tool-call rule (or is a set's)."""
    _, _, body = entry.read_bytes().partition(b"\n")
    data = json.loads(body)
    changed = False
    for compiled_rule in data.get("compiled", {}).get("rules", []):
        compiled_rule[2] = "other"  # its step (``_compile._compiled_rule``)
    for rule in data.get("file", {}).get("rules", []):
        fields = rule.get("fields") or {}
        if rule["step"] == "tool_call" and "tool" in fields:
            source = {k: None for k in fields["tool"][0]}
            source.update(body=False, status_message=False, parse=[], const="search_docs")
            fields["tool"] = [source]
            changed = True
    body = json.dumps(data, separators=(",", ":")).encode()
    (into / entry.name).write_bytes(hashlib.sha256(body).hexdigest().encode() + b"\n" + body)
    return changed


@pytest.mark.skipif(os.geteuid() != 0, reason="starting another user's process needs root")
def test_entries_another_user_wrote_are_not_used() -> None:
    # pytest's own temporary directories are private to their user: the other user needs
    # to reach the shared one.
    tmp_path = Path(tempfile.mkdtemp(prefix="oo-shared-cache-"))
    try:
        _forged_by_another_user(tmp_path)
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)


def _forged_by_another_user(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    cache = tmp_path / "shared-cache"
    cache.mkdir()
    cache.chmod(0o777)  # a cache directory others can write
    first = grade(cache)
    assert first.returncode == 1 and "no-destructive-tools" in first.stdout, first.stdout
    forged = tmp_path / "forged"
    forged.mkdir(mode=0o755)
    assert sum(forge(e, forged) for e in sorted(cache.glob("*.json"))) > 0
    for f in forged.iterdir():
        f.chmod(0o644)
    subprocess.run(
        ["/usr/bin/python3", "-I", "-c", COPY_AS_OTHER_USER, str(forged), str(cache)],
        check=True, timeout=60, user=OTHER_USER, group=OTHER_USER, extra_groups=[],
    )  # fmt: skip
    assert {e.stat().st_uid for e in cache.glob("*.json")} == {OTHER_USER}
    second = grade(cache)
    assert second.returncode == 1, second.stdout  # the forbidden call still fails the run
    assert "invariant_failure no-destructive-tools" in second.stdout, second.stdout
    assert "tools=[delete_records]" in second.stdout, second.stdout
    # and the grader wrote its own entries again in their place
    assert {e.stat().st_uid for e in cache.glob("*.json")} == {os.geteuid()}


def test_an_entry_others_may_write_is_not_used(tmp_path: Path) -> None:
    """The same forgery in a file the grader's user owns but that is writable by group or
    others (copied in with loose permissions, a umask of 0): not used either."""
    cache = tmp_path / "cache"
    first = grade(cache)
    assert first.returncode == 1, first.stdout
    forged = tmp_path / "forged"
    forged.mkdir()
    assert sum(forge(e, forged) for e in sorted(cache.glob("*.json"))) > 0
    for f in forged.iterdir():
        shutil.copyfile(f, cache / f.name)
        (cache / f.name).chmod(0o666)
    second = grade(cache)
    assert second.returncode == 1, second.stdout
    assert "tools=[delete_records]" in second.stdout, second.stdout
