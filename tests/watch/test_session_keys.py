"""``watch`` names what it saves for a session (``<key>.trajectory.json``,
``<key>.telemetry.jsonl``) and files its alerts by a key made from the agent and the session
id, which a coding agent's telemetry sets: whoever can send to ``watch`` chooses it. The key
kept only ``[A-Za-z0-9._-]`` and replaced the rest, so two sessions whose ids differ only
there shared one key: one session's files were appended to and overwritten by the other's,
and its alerts replaced. Keys are injective now (an id that needed replacing gets a hash of
the whole id), and an id that is already safe keeps the name it always had.

Real captures of Claude Code (tests/testdata/traces/claude-code-2.1), their session ids
rewritten, through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from tests.watch.captures import capture
from tests.watch.test_watch_once import alerts, run


def with_session_id(session: str, new_id: str, into: Path, prefix: str) -> None:
    """Copy the Claude Code capture ``session``'s log bodies into ``into``, every
    ``session.id`` set to ``new_id``."""
    into.mkdir(exist_ok=True)
    for body in sorted(capture("claude-code", session).glob("logs-*.pb")):
        request = ExportLogsServiceRequest()
        request.ParseFromString(body.read_bytes())
        for resource in request.resource_logs:
            for scope in resource.scope_logs:
                for record in scope.log_records:
                    for attribute in record.attributes:
                        if attribute.key == "session.id":
                            attribute.value.string_value = new_id
        (into / f"{prefix}-{body.name}").write_bytes(request.SerializeToString())


def saved(sessions: Path) -> dict[str, str]:
    """session id -> the key its saved trajectory file is named by."""
    out = {}
    for path in sessions.glob("*.trajectory.json"):
        out[json.loads(path.read_text())["session_id"]] = path.name.removesuffix(".trajectory.json")
    return out


def test_ids_differing_only_in_unsafe_characters_keep_their_own_files(tmp_path: Path) -> None:
    raw = tmp_path / "two.raw"
    with_session_id("clean_fix", "team/alpha", raw, "a")
    with_session_id("rm_outside", "team?alpha", raw, "b")
    proc = run("watch", "--once", str(raw), "--sessions-dir", str(tmp_path / "sessions"))
    assert "destructive_command" in alerts(proc.stdout), proc.stdout
    keys = saved(tmp_path / "sessions")
    assert set(keys) == {"team/alpha", "team?alpha"}, keys  # one file each
    assert keys["team/alpha"] != keys["team?alpha"]
    assert len(list((tmp_path / "sessions").glob("*.telemetry.jsonl"))) == 2


def test_a_safe_id_keeps_its_name_and_a_long_one_fits_a_file_name(tmp_path: Path) -> None:
    """A UUID (what the agents send) is named as before; an id of 300 characters makes a
    name the file system takes (255 bytes at most), not an error."""
    raw = tmp_path / "two.raw"
    with_session_id("clean_fix", "b4178e6c-6e5b-4af9-8795-bbc2569a5ecf", raw, "a")
    with_session_id("rm_outside", "s" * 300, raw, "b")
    proc = run("watch", "--once", str(raw), "--sessions-dir", str(tmp_path / "sessions"))
    assert proc.returncode == 1 and "destructive_command" in alerts(proc.stdout), proc.stderr
    keys = saved(tmp_path / "sessions")
    assert keys["b4178e6c-6e5b-4af9-8795-bbc2569a5ecf"] == (
        "claude-code-b4178e6c-6e5b-4af9-8795-bbc2569a5ecf"
    )
    assert len(keys["s" * 300]) < 200, keys
