"""Grouping never depends on the worker count: with ``--workers N`` every worker reads,
assembles and joins the whole input as one process does, and grades only its share of the
subjects. So a late span is late with any number of workers (and reported once), and a run
split over several traces is one subject even when its traces' ids fall to different
workers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from otel_oracles.model.result import Verdict
from otel_oracles.parallel import grade_paths_parallel
from otel_oracles.pipeline import grade_paths
from otel_oracles.session import GradeRun, GradingSession, SessionSpec, shard_of

REPO = Path(__file__).resolve().parent.parent.parent
CAPTURES = REPO / "tests" / "testdata" / "traces" / "pydantic-ai"
HANDOFF = CAPTURES / "g_handoff.otlp.json"
SUB_AGENT = "68de3ca6badaa895"  # invoke_agent research_agent
DELEGATION = "df0cc05a33451614"  # execute_tool delegate_to_research_agent
NO_DELETES = REPO / "tests" / "testdata" / "pipeline" / "contracts" / "no-deletes.yaml"
SPEC = SessionSpec((NO_DELETES,))
IDLE_SPANS = 8
"""Small enough that the first capture is released long before the straggler arrives."""


def _spans(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [sp for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for sp in ss["spans"]]


def _timeless(verdict: Verdict) -> dict[str, Any]:
    data = verdict.model_dump(mode="json")
    data.pop("duration_ns", None)
    for result in data["results"]:
        result.pop("duration_ns", None)
    return data


def _with_late_span(tmp_path: Path) -> tuple[Path, str]:
    """Every real pydantic-ai capture (16 traces, one file each), then one more span of the
    first trace, exported after all the others: the trace it belongs to was released by
    then. Returns the directory and that trace's id."""
    folder = tmp_path / "late"
    folder.mkdir()
    captures = sorted(CAPTURES.glob("*.otlp.json"))
    for i, capture in enumerate(captures):
        (folder / f"{i:02d}.otlp.json").write_text(capture.read_text())
    doc = json.loads(captures[0].read_text())
    spans = _spans(doc)
    root = next(s for s in spans if not s.get("parentSpanId"))
    straggler = {**spans[0], "spanId": "5" * 16, "parentSpanId": root["spanId"]}
    doc["resourceSpans"] = doc["resourceSpans"][:1]
    doc["resourceSpans"][0]["scopeSpans"] = doc["resourceSpans"][0]["scopeSpans"][:1]
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"] = [straggler]
    (folder / "99_straggler.otlp.json").write_text(json.dumps(doc))
    return folder, root["traceId"]


def _cli_report(*args: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", "from otel_oracles.cli import main; main()", "grade", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert proc.returncode in (0, 1), proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


def test_a_late_span_is_reported_the_same_with_one_and_two_workers(tmp_path: Path) -> None:
    folder, late_trace = _with_late_span(tmp_path)
    base = [str(folder), "-c", str(NO_DELETES), "--idle-spans", str(IDLE_SPANS), "--json"]
    one = _cli_report(*base)
    two = _cli_report(*base, "--workers", "2")
    late = [n for n in one["notes"] if "late spans" in n]
    assert late and late[0].startswith("1 late spans and 0 late log records"), one["notes"]
    assert late_trace in late[0]
    assert two["notes"] == one["notes"], "the late span must be counted once, as with one process"
    for report in (one, two):
        for verdict in report["verdicts"]:
            verdict.pop("duration_ns", None)
            for result in verdict["results"]:
                result.pop("duration_ns", None)
    assert two["verdicts"] == one["verdicts"]
    assert len(one["verdicts"]) == 16


def _split_runs(tmp_path: Path, runs: int) -> Path:
    """``runs`` copies of the real g_handoff capture, each cut into two traces the way a
    framework without context propagation exports a sub-agent (its subtree in a trace of its
    own, its root linking to the delegating span), with trace ids chosen so that the two
    halves of a run belong to different workers for two and for three workers."""
    folder = tmp_path / "split"
    folder.mkdir()
    for k in range(1, runs + 1):
        doc = json.loads(HANDOFF.read_text())
        spans = _spans(doc)
        moved = {SUB_AGENT}
        while more := {s["spanId"] for s in spans if s.get("parentSpanId") in moved} - moved:
            moved |= more
        original, sub_run = f"{k:032x}", f"{k + 1001:032x}"
        for span in spans:
            span["traceId"] = sub_run if span["spanId"] in moved else original
            for attribute in span.get("attributes", []):
                if attribute["key"] == "gen_ai.conversation.id":  # one conversation per copy
                    attribute["value"]["stringValue"] += f"-{k}"
            if span["spanId"] == SUB_AGENT:
                del span["parentSpanId"]
                span["links"] = [{"traceId": original, "spanId": DELEGATION}]
        (folder / f"run{k}.otlp.json").write_text(json.dumps(doc))
    return folder


def test_a_run_split_over_traces_is_one_subject_with_any_worker_count(tmp_path: Path) -> None:
    folder = _split_runs(tmp_path, runs=6)
    for k in range(1, 7):
        original, sub_run = f"{k:032x}", f"{k + 1001:032x}"
        assert shard_of(original, 2) != shard_of(sub_run, 2)
        assert shard_of(original, 3) != shard_of(sub_run, 3)
    counts = GradeRun()
    one = grade_paths([str(folder)], GradingSession.load(SPEC), run=counts)
    assert [v.trace_id for v in one.verdicts] == [f"{k:032x}" for k in range(1, 7)]
    assert counts.assembly.joined.subjects == 6 and counts.assembly.joined.traces == 12
    assert any("12 traces joined into 6 run(s)" in n for n in one.notes), one.notes
    for workers in (2, 3):
        several = grade_paths_parallel([str(folder)], SPEC, workers=workers)
        assert [_timeless(v) for v in several.verdicts] == [_timeless(v) for v in one.verdicts]
        assert several.notes == one.notes


def test_every_captured_trace_grades_the_same_with_one_and_two_workers() -> None:
    """The whole capture matrix (every source, content on and off, with its log files; not
    the raw exports beside them): the same verdicts in the same order, and the same notes."""
    spec = SessionSpec(
        (
            REPO / "examples" / "contracts" / "support-rag.yaml",
            REPO / "examples" / "contracts" / "multi-agent-handoff.yaml",
        )
    )
    paths = sorted(str(p) for p in (REPO / "tests" / "testdata" / "traces").rglob("*.otlp.json*"))
    one = grade_paths(paths, GradingSession.load(spec))
    assert len(one.verdicts) > 300 and not one.input_errors
    two = grade_paths_parallel(paths, spec, workers=2)
    assert [_timeless(v) for v in two.verdicts] == [_timeless(v) for v in one.verdicts]
    assert two.notes == one.notes
