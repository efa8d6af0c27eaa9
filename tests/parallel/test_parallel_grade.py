"""``grade --workers N`` must give exactly the verdicts of the sequential run."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from otel_oracles.grade.loader import load_contract
from otel_oracles.mapping import load_conventions
from otel_oracles.model.result import Verdict
from otel_oracles.parallel import grade_paths_parallel, shard_of
from otel_oracles.pipeline import grade_paths
from otel_oracles.session import GradeRun, GradingSession, SessionSpec
from tests.support.generated import generate_traces

REPO = Path(__file__).resolve().parent.parent.parent
EXAMPLE_TRACES = REPO / "examples" / "traces"
# The coding contract replays a workspace and runs pytest per trace: slow, and no different
# for the split. The other two exercise selectors, evidence, budgets and citations.
CONTRACTS = [
    REPO / "examples" / "contracts" / "support-rag.yaml",
    REPO / "examples" / "contracts" / "multi-agent-handoff.yaml",
]
SPEC = SessionSpec(tuple(CONTRACTS))


def _normalized(verdict: Verdict) -> dict[str, Any]:
    """A verdict without its timings (the only field allowed to differ between runs)."""
    data = verdict.model_dump(mode="json")
    data.pop("duration_ns", None)
    for result in data["results"]:
        result.pop("duration_ns", None)
    return data


def _key(data: dict[str, Any]) -> tuple[str, str]:
    return data["trace_id"] or "", data["contract_id"]


def _sequential(paths: list[str]) -> tuple[list[dict[str, Any]], GradeRun]:
    run = GradeRun()
    contracts = [load_contract(p) for p in CONTRACTS]
    report = grade_paths(paths, GradingSession(contracts, load_conventions([])), run=run)
    return sorted(map(_normalized, report.verdicts), key=_key), run


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """60 synthetic traces from the benchmark generator (interleaved, time-ordered export)."""
    return generate_traces(tmp_path_factory.mktemp("generated"), 60, 128, jsonl=False)


def test_two_workers_give_the_sequential_verdicts_on_real_traces() -> None:
    paths = [str(EXAMPLE_TRACES)]
    expected, run = _sequential(paths)
    assert expected, "the example traces must be selected by the example contracts"
    prun = GradeRun()
    report = grade_paths_parallel(paths, SPEC, workers=2, run=prun)
    assert sorted(map(_normalized, report.verdicts), key=_key) == expected
    assert (prun.traces, prun.spans, prun.traces_unselected) == (
        run.traces,
        run.spans,
        run.traces_unselected,
    ), "trace and span counts must add up over the workers"


@pytest.mark.parametrize("workers", [2, 3])
def test_interleaved_export_grades_the_same_with_any_worker_count(
    generated: Path, workers: int
) -> None:
    expected, _ = _sequential([str(generated)])
    report = grade_paths_parallel([str(generated)], SPEC, workers=workers)
    assert sorted(map(_normalized, report.verdicts), key=_key) == expected


def test_verdict_order_does_not_depend_on_the_worker_count(generated: Path) -> None:
    orders = [
        [
            (v.trace_id, v.contract_id)
            for v in grade_paths_parallel([str(generated)], SPEC, workers=n).verdicts
        ]
        for n in (2, 3)
    ]
    assert orders[0] == orders[1]


def test_an_unreadable_input_is_reported_once_not_once_per_worker(
    generated: Path, tmp_path: Path
) -> None:
    truncated = tmp_path / "truncated.binpb"
    truncated.write_bytes(generated.read_bytes()[:5000])
    good = tmp_path / "good.binpb"
    shutil.copy(generated, good)
    report = grade_paths_parallel([str(good), str(truncated)], SPEC, workers=2)
    sequential = grade_paths([str(good), str(truncated)], GradingSession.load(SPEC))
    assert len(report.input_errors) == len(sequential.input_errors) >= 1
    assert report.exit_code() == 2


def test_stdin_is_refused_with_several_workers() -> None:
    with pytest.raises(ValueError, match="stdin"):
        grade_paths_parallel(["-"], SPEC, workers=2)


def test_shards_split_random_trace_ids_evenly() -> None:
    import random

    rng = random.Random(1)
    counts = [0, 0]
    for _ in range(10_000):
        counts[shard_of(f"{rng.getrandbits(128):032x}", 2)] += 1
    assert 4_700 < counts[0] < 5_300, counts
    assert shard_of("", 4) == 0, "records without a trace id belong to worker 0"


def test_on_graded_receives_every_verdict_with_its_real_trajectory() -> None:
    received: list[tuple[Verdict, Any]] = []
    report = grade_paths_parallel([str(EXAMPLE_TRACES)], SPEC, workers=2, on_graded=received.extend)
    assert sorted(_key(_normalized(v)) for v, _ in received) == sorted(
        _key(_normalized(v)) for v in report.verdicts
    ), "every verdict must be handed over exactly once"
    assert all(t.steps and t.trace_id == v.trace_id for v, t in received), (
        "the emitter needs the mapped trajectory of the graded trace"
    )


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(Path(sys.executable).parent / "otel-oracles"), "grade", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )


def test_grade_workers_flag_gives_the_same_report_and_exit_code() -> None:
    base = [str(EXAMPLE_TRACES), *(a for c in CONTRACTS for a in ("-c", str(c))), "--json"]
    one, two = _cli(*base), _cli(*base, "--workers", "2")
    assert (one.returncode, two.returncode) == (1, 1), (one.stderr, two.stderr)
    reports = [json.loads(p.stdout) for p in (one, two)]
    verdicts = [
        sorted((_key(v), v["passed"], [r["outcome"] for r in v["results"]]) for v in r["verdicts"])
        for r in reports
    ]
    assert verdicts[0] == verdicts[1]
    assert reports[0]["notes"] == reports[1]["notes"]


def test_grade_workers_refuses_stdin_as_a_usage_error() -> None:
    proc = _cli("-", "-c", str(CONTRACTS[0]), "--workers", "2")
    assert proc.returncode == 2
    assert "stdin" in proc.stderr


def _emitted(path: Path) -> tuple[list[tuple[str, str]], int]:
    """(trace id, parent span id) of every grade span, and the log-record count, in a
    ``--results-out`` file."""
    spans, logs = [], 0
    for line in path.read_text().splitlines():
        data = json.loads(line)
        for rs in data.get("resourceSpans", []):
            for ss in rs["scopeSpans"]:
                spans += [(s["traceId"], s.get("parentSpanId", "")) for s in ss["spans"]]
        for rl in data.get("resourceLogs", []):
            logs += sum(len(sl["logRecords"]) for sl in rl["scopeLogs"])
    return sorted(spans), logs


def test_workers_emit_every_result_from_the_parent(tmp_path: Path) -> None:
    base = [str(EXAMPLE_TRACES), *(a for c in CONTRACTS for a in ("-c", str(c)))]
    one = _cli(*base, "--results-out", str(tmp_path / "one.jsonl"))
    two = _cli(*base, "--results-out", str(tmp_path / "two.jsonl"), "--workers", "2")
    assert (one.returncode, two.returncode) == (1, 1), (one.stderr, two.stderr)
    expected = _emitted(tmp_path / "one.jsonl")
    assert expected[0] and expected[1], "the sequential run must emit grade spans and events"
    assert _emitted(tmp_path / "two.jsonl") == expected, (
        "with workers, the same grade spans (same traces, same parents) and as many "
        "evaluation log records must be emitted"
    )
