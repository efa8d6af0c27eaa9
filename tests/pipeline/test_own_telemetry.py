"""The grader's own telemetry is never graded: offline ``grade`` and ``inspect`` leave out what
otel-oracles emitted (its grade spans and evaluation events, which carry the graded run's
trace id), recognised by the same definition ``serve`` uses.

The export is produced for real: ``otel-oracles grade --results-out`` writes the telemetry it
emits for a real capture, and the capture plus that file are graded together.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from otel_oracles import server
from otel_oracles.decode import read_paths
from otel_oracles.emit import is_own_telemetry
from otel_oracles.model.result import InputProblem
from otel_oracles.pipeline import without_own_telemetry

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO / "tests" / "testdata" / "traces"
CONTRACT = REPO / "examples" / "contracts" / "support-rag.yaml"
CLI = [sys.executable, "-c", "from otel_oracles.cli import main; main()"]
"""The real command line, in a subprocess (the one in this interpreter's environment)."""


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )


def _verdicts(report: str) -> list[Any]:
    """Each verdict's results as compared: name, outcome, message and details (a grade span
    read as a model call changes the answer, or the step counts in details)."""
    return [
        (
            v["contract_id"],
            v["trace_id"],
            [(r["name"], r["outcome"], r["message"], r["details"]) for r in v["results"]],
        )
        for v in json.loads(report)["verdicts"]
    ]


@pytest.fixture(scope="module", params=["openai-v2-latest", "pydantic-ai"])
def graded_export(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """(capture, results.jsonl the grader emitted for it, report of the capture alone)."""
    work = tmp_path_factory.mktemp(request.param)
    capture = TRACES / request.param / "e_fabricated_citation.otlp.json"
    done = _cli(
        "grade",
        str(capture),
        "-c",
        str(CONTRACT),
        "--results-out",
        "results.jsonl",
        "--json",
        cwd=work,
    )
    assert done.returncode == 1, done.stderr  # the fabricated citation fails
    return capture, work / "results.jsonl", done.stdout


def test_the_results_file_holds_spans_and_events_in_the_graded_trace(graded_export) -> None:  # type: ignore[no-untyped-def]
    capture, results, _ = graded_export
    problems: list[InputProblem] = []
    batches = list(read_paths([str(results)], problems))
    spans = [s for b in batches for s in b.spans]
    logs = [r for b in batches for r in b.logs]
    agent_trace = {s.trace_id for b in read_paths([str(capture)], problems) for s in b.spans}
    assert spans and logs and problems == []
    assert {s.trace_id for s in spans} <= agent_trace, "grade spans join the agent's trace"
    assert all(map(is_own_telemetry, [*spans, *logs]))
    kept = list(without_own_telemetry(read_paths([str(results)], problems)))
    assert [s for b in kept for s in b.spans] == [] and [r for b in kept for r in b.logs] == []


def test_grading_the_agent_spans_with_the_graders_own_gives_the_same_verdicts(
    graded_export,
) -> None:  # type: ignore[no-untyped-def]
    capture, results, alone = graded_export
    done = _cli(
        "grade", str(capture), str(results), "-c", str(CONTRACT), "--json", cwd=results.parent
    )
    assert done.returncode == 1, done.stderr
    assert _verdicts(done.stdout) == _verdicts(alone)


def test_inspect_leaves_the_graders_own_spans_out(graded_export) -> None:  # type: ignore[no-untyped-def]
    capture, results, _ = graded_export
    alone = _cli("inspect", str(capture), "--json", cwd=results.parent)
    both = _cli("inspect", str(capture), str(results), "--json", cwd=results.parent)
    assert alone.returncode == both.returncode == 0, both.stderr
    assert json.loads(both.stdout) == json.loads(alone.stdout)


def test_serve_and_offline_reading_share_one_definition() -> None:
    assert server.is_own_telemetry is is_own_telemetry
