"""``grade``/``gate --baseline`` and ``diff``: a run fails when it regressed against an
earlier run's ``--json`` report. Real CLI subprocesses on real pydantic-ai captures, the
example support contract (and a stricter copy of it), the example task and trajectories."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-c", "from otel_oracles.cli import main; main()"]
TRACES = REPO / "tests" / "testdata" / "traces" / "pydantic-ai"
HAPPY = TRACES / "a_happy.otlp.json"  # passes support-rag, nothing tolerated
RETRY = TRACES / "b_tool_retry.otlp.json"  # passes with one tolerated search retry
DEGRADED = TRACES / "f_degraded.otlp.json"  # passes with one tolerated degraded answer
HAPPY_NOCONTENT = TRACES / "a_happy.nocontent.otlp.json"  # content off: missing evidence
RETRY_TRACE = "45f5c226790f08488c4624b4cb8cd4e1"
SUPPORT = REPO / "examples" / "contracts" / "support-rag.yaml"
TASKS = REPO / "examples" / "tasks"
TRAJECTORIES = REPO / "examples" / "trajectories"


def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *map(str, args)], capture_output=True, text=True, timeout=300, cwd=cwd
    )


def report(proc: subprocess.CompletedProcess[str], path: Path) -> Path:
    """Save a ``--json`` run's stdout as a report file."""
    path.write_text(proc.stdout)
    return path


def support_copy(tmp: Path, *, retry_budget: int, version: int | None = None) -> Path:
    """The example support contract with a different search-retry budget (and version)."""
    data: dict[str, Any] = yaml.safe_load(SUPPORT.read_text())
    retry = next(t for t in data["tolerances"] if t.get("name") == "search-retry")
    retry["max"] = retry_budget
    if version is not None:
        data["version"] = version
    out = tmp / f"support-rag-{retry_budget}-{version}.yaml"
    out.write_text(yaml.safe_dump(data))
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Reports shared by the tests: the baseline passes; the candidate graded the same two
    traces with a stricter copy of the contract (same id and version), so the retry trace
    that passed now exhausts its budget."""
    tmp = tmp_path_factory.mktemp("runs")
    base = run("grade", HAPPY, RETRY, "-c", SUPPORT, "--json")
    assert base.returncode == 0, base.stdout + base.stderr
    strict = support_copy(tmp, retry_budget=0)
    cand = run("grade", HAPPY, RETRY, "-c", strict, "--json")
    assert cand.returncode == 1, cand.stderr
    return {
        "base": report(base, tmp / "base.json"),
        "cand": report(cand, tmp / "cand.json"),
        "strict": strict,
    }


def regression_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("REGRESSION: ")]


def test_grade_fails_naming_the_pair_that_passed_in_the_baseline(runs: dict[str, Path]) -> None:
    proc = run("grade", HAPPY, RETRY, "-c", runs["strict"], "--baseline", runs["base"], "--json")
    assert proc.returncode == 1, proc.stderr
    expected = (
        f"REGRESSION: support-rag@1 on {RETRY_TRACE}: passed in the baseline, now fail "
        "(search-retry: tolerated -> budget_exhausted)"
    )
    assert regression_lines(proc.stderr) == [expected]
    data = json.loads(proc.stdout)
    assert expected in data["notes"], "the report says it too"
    assert data["exit_code"] == 1
    workers = run(
        "grade", HAPPY, RETRY, "-c", runs["strict"], "--baseline", runs["base"], "--workers", "2"
    )  # fmt: skip
    assert workers.returncode == 1, "verdicts from worker processes are compared too"
    assert regression_lines(workers.stderr) == [expected]


def test_tolerated_rise_beyond_the_margin_fails_and_within_passes(
    runs: dict[str, Path],
) -> None:
    """Every verdict passes, but two more exceptions were tolerated than in the baseline."""
    proc = run("grade", HAPPY, RETRY, DEGRADED, "-c", SUPPORT, "--baseline", runs["base"])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert regression_lines(proc.stderr) == [
        "REGRESSION: support-rag@1: tolerated failures rose from 1 to 2 "
        "(+1; --max-tolerated-rise 0)"
    ]
    within = run(
        "grade", HAPPY, RETRY, DEGRADED, "-c", SUPPORT, "--baseline", runs["base"],
        "--max-tolerated-rise", "1",
    )  # fmt: skip
    assert within.returncode == 0, within.stdout + within.stderr
    assert regression_lines(within.stderr) == []


def test_a_pair_no_longer_graded_is_a_regression(runs: dict[str, Path]) -> None:
    proc = run("grade", HAPPY, "-c", SUPPORT, "--baseline", runs["base"])
    assert proc.returncode == 1, "every verdict passed, but a baseline trace went ungraded"
    assert regression_lines(proc.stderr) == [
        f"REGRESSION: support-rag@1 on {RETRY_TRACE}: graded in the baseline (pass), "
        "missing from this run"
    ]


def test_diff_missing_evidence_margin(runs: dict[str, Path], tmp_path: Path) -> None:
    """Content capture turned off for a new run: missing evidence rises by 4."""
    cand = report(
        run("grade", HAPPY, RETRY, HAPPY_NOCONTENT, "-c", SUPPORT, "--json"), tmp_path / "c.json"
    )
    beyond = run("diff", runs["base"], cand, "--max-missing-rise", "3")
    assert beyond.returncode == 1, beyond.stdout + beyond.stderr
    assert (
        "REGRESSION: support-rag@1: missing evidence rose from 0 to 4 (+4; --max-missing-rise 3)"
        in beyond.stdout.splitlines()
    )
    within = run("diff", runs["base"], cand, "--max-missing-rise", "4")
    assert within.returncode == 0, within.stdout
    assert within.stdout.splitlines()[-1] == "no regression"
    assert "note: support-rag@1: 1 pair(s) graded that the baseline did not have" in within.stdout


def test_diff_text(runs: dict[str, Path]) -> None:
    proc = run("diff", runs["base"], runs["cand"])
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.splitlines() == [
        "support-rag@1: pairs 2",
        "  verdicts: pass 2 -> 1 (-1), fail 0 -> 1 (+1), error 0",
        "  counts:   invariant 0, tolerated 1 -> 0 (-1), budget exhausted 0 -> 1 (+1), "
        "missing evidence 0",
        "flipped checks:",
        f"  support-rag@1 on {RETRY_TRACE}: search-retry: tolerated -> budget_exhausted",
        f"REGRESSION: support-rag@1 on {RETRY_TRACE}: passed in the baseline, now fail "
        "(search-retry: tolerated -> budget_exhausted)",
        "1 regression(s)",
    ]


def test_diff_json(runs: dict[str, Path]) -> None:
    proc = run("diff", runs["base"], runs["cand"], "--format", "json")
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert data["regressed"] is True
    assert data["flips"] == [
        {
            "contract_id": "support-rag",
            "contract_version": 1,
            "subject": RETRY_TRACE,
            "check": "search-retry",
            "old": "tolerated",
            "new": "budget_exhausted",
        }
    ]
    (contract,) = data["contracts"]
    assert contract["compared"] is True
    assert contract["baseline"]["verdicts"] == {"pass": 2, "fail": 0, "error": 0}
    assert contract["candidate"]["verdicts"] == {"pass": 1, "fail": 1, "error": 0}
    assert contract["baseline"]["counts"]["tolerated_failures"] == 1
    assert contract["candidate"]["counts"]["budget_exhausted"] == 1
    assert len(data["regressions"]) == 1


def test_diff_markdown(runs: dict[str, Path]) -> None:
    proc = run("diff", runs["base"], runs["cand"], "--format", "markdown")
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "### otel-oracles: **1 regression(s)**"
    assert (
        "| contract | pairs | pass | fail | error | invariant | tolerated | budget exhausted "
        "| missing evidence |" in lines
    )
    assert (
        "| `support-rag@1` | 2 | 2 → 1 (-1) | 0 → 1 (+1) | 0 | 0 | 1 → 0 (-1) | 0 → 1 (+1) | 0 |"
        in lines
    )
    assert (
        f"| `support-rag@1` on `{RETRY_TRACE}` | search-retry | tolerated | budget_exhausted |"
        in lines
    )


def test_a_new_contract_version_is_reported_not_compared(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    v2 = support_copy(tmp_path, retry_budget=0, version=2)
    cand = report(run("grade", HAPPY, RETRY, "-c", v2, "--json"), tmp_path / "v2.json")
    proc = run("diff", runs["base"], cand)
    assert proc.returncode == 0, proc.stdout
    assert (
        "note: changed: support-rag@1 -> @2: not compared with the baseline "
        "(a new version is a new promise)" in proc.stdout.splitlines()
    )
    assert "flipped checks:" not in proc.stdout


def test_gate_baseline_keys_by_task_and_trajectory_file_name(tmp_path: Path) -> None:
    """The same trajectory file name in a new checkout, now holding a run that deletes the
    test's assertion: the pair that passed fails."""
    before, after = tmp_path / "before", tmp_path / "after"
    before.mkdir()
    after.mkdir()
    shutil.copy(TRAJECTORIES / "honest_fix.json", before / "calculator.json")
    shutil.copy(TRAJECTORIES / "deletes_assertion.json", after / "calculator.json")
    base = run("gate", "--tasks", TASKS, "-t", before / "calculator.json", "--json")
    assert base.returncode == 0, base.stdout + base.stderr
    baseline = report(base, tmp_path / "gate.json")
    proc = run("gate", "--tasks", TASKS, "-t", after / "calculator.json", "--baseline", baseline)
    assert proc.returncode == 1
    (line,) = regression_lines(proc.stderr)
    assert line.startswith(
        "REGRESSION: calculator-fix@1 on calculator.json: passed in the baseline, now fail ("
    )
    same = run("gate", "--tasks", TASKS, "-t", before / "calculator.json", "--baseline", baseline)
    assert same.returncode == 0, same.stdout + same.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("id: support-rag\nversion: 1\n", "not JSON (Expecting value at line 1 column 1)"),
        ('{"id": "support-rag", "version": 1}', "no 'verdicts' list"),
        ('{"verdicts": [{"subject": "x"}]}', "verdicts.0.contract_id: Field required"),
    ],
)
def test_a_bad_baseline_is_one_error_line(tmp_path: Path, content: str, message: str) -> None:
    bad = tmp_path / "results.json"
    bad.write_text(content)
    for args in (
        ("grade", HAPPY, "-c", SUPPORT, "--baseline", bad),
        ("diff", bad, HAPPY),
    ):
        proc = run(*args)
        assert proc.returncode == 2, proc.stderr
        (line,) = proc.stderr.splitlines()
        assert line.startswith(f"error: {bad}: {message}"), line
        assert line.endswith("expected the --json report of 'otel-oracles grade', 'gate' or 'run'")


def test_a_contract_that_graded_nothing_is_a_regression(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    handoff = REPO / "examples" / "contracts" / "multi-agent-handoff.yaml"
    other = run("grade", TRACES / "g_handoff.otlp.json", "-c", handoff, "--json")
    cand = report(other, tmp_path / "other.json")
    proc = run("diff", runs["base"], cand)
    assert proc.returncode == 1, proc.stdout
    lines = proc.stdout.splitlines()
    assert "REGRESSION: support-rag@1: graded 2 pair(s) in the baseline, none in this run" in lines
    assert any(x.startswith("note: new: multi-agent-handoff@") for x in lines), lines
