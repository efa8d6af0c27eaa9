"""The offline ``grade`` and ``inspect`` commands and the pipeline functions they wire,
run as real subprocesses on real exported traces."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from otel_oracles.grade.loader import load_contract
from otel_oracles.mapping import load_conventions
from otel_oracles.model.result import InputProblem, Outcome
from otel_oracles.pipeline import grade_paths, grade_trace, read_traces
from otel_oracles.session import GradingSession

REPO = Path(__file__).resolve().parent.parent.parent
TRACES = REPO / "tests" / "testdata" / "traces"
CONTRACTS = REPO / "tests" / "testdata" / "pipeline" / "contracts"
EXAMPLES = REPO / "examples" / "traces"
CLI = [sys.executable, "-c", "from otel_oracles.cli import main; main()"]

HAPPY = "a154b36fa4bf2d3f308db66e83a68dee"  # pydantic-ai a_happy
RETRY = "45f5c226790f08488c4624b4cb8cd4e1"  # pydantic-ai b_tool_retry
FORBIDDEN = "ffc2815233fff9df5cdf2f7cd60b28c5"  # pydantic-ai d_forbidden_tool
FABRICATED = "78e99d71643ea3550a175a2d0be3f0cb"  # vercel e_fabricated_citation
HIDDEN_TOOLS = "8c110287df4e1fabaad196980be7190a"  # openinference c_retry nocontent


def run(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def verdicts_by(data: dict[str, object]) -> dict[tuple[str, str], dict[str, object]]:
    return {(v["trace_id"], v["contract_id"]): v for v in data["verdicts"]}  # type: ignore[index,union-attr]


def test_grade_selects_contracts_per_trace_and_exits_1_on_a_failing_verdict() -> None:
    proc = run("grade", str(EXAMPLES), "--contracts", str(CONTRACTS), "--json")
    assert proc.returncode == 1, proc.stderr
    by = verdicts_by(json.loads(proc.stdout))
    # no-deletes has no match: every trace; support-answers only the support agent's traces.
    assert sum(1 for _, c in by if c == "no-deletes") == 8
    assert {t for t, c in by if c == "support-answers"} == {HAPPY, RETRY, FORBIDDEN, FABRICATED}
    assert by[(HAPPY, "support-answers")]["passed"] is True
    retry = by[(RETRY, "support-answers")]
    assert retry["passed"] is True and retry["counts"]["tolerated_failures"] == 1  # type: ignore[index]
    assert by[(FORBIDDEN, "no-deletes")]["passed"] is False
    assert by[(FABRICATED, "support-answers")]["passed"] is False
    # Tool names not captured: missing evidence, not a pass.
    hidden = by[(HIDDEN_TOOLS, "no-deletes")]
    assert hidden["passed"] is False and hidden["counts"]["missing_evidence"] == 1  # type: ignore[index]


def test_grade_exits_0_when_every_verdict_passes_and_prints_a_table() -> None:
    proc = run("grade", str(EXAMPLES / "pydantic-ai-a_happy.otlp.json"), "-c", str(CONTRACTS))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "support-answers@3" in proc.stdout and HAPPY in proc.stdout
    assert "2 verdict(s): 2 passed, 0 failed" in proc.stdout


def test_unreadable_input_exits_2_and_the_rest_is_still_graded(tmp_path: Path) -> None:
    bad = tmp_path / "broken.jsonl"
    good_line = (EXAMPLES / "openinference-c_retry_exhausted.nocontent.otlp.jsonl").read_text()
    lines = good_line.splitlines()
    bad.write_text("\n".join([lines[0], '{"resourceSpans": [', *lines[1:]]) + "\n")
    happy = str(EXAMPLES / "pydantic-ai-a_happy.otlp.json")
    proc = run("grade", happy, str(bad), "-c", str(CONTRACTS / "no-deletes.yaml"), "--json")
    assert proc.returncode == 2, proc.stderr
    data = json.loads(proc.stdout)
    assert [e["source"] for e in data["input_errors"]] == [f"{bad}:2"]
    assert (HAPPY, "no-deletes") in verdicts_by(data)

    kept = run("grade", happy, str(bad), "-c", str(CONTRACTS / "no-deletes.yaml"), "--keep-going")
    assert kept.returncode == 1, "with --keep-going the verdicts decide (one fails)"
    assert f"error: {bad}:2: " in kept.stderr
    assert str(bad) not in kept.stdout, "user errors go to stderr only"


def test_grade_writes_junit_and_html(tmp_path: Path) -> None:
    junit, html = tmp_path / "grade.xml", tmp_path / "grade.html"
    proc = run(
        "grade",
        str(EXAMPLES / "pydantic-ai-d_forbidden_tool.otlp.json"),
        "-c",
        str(CONTRACTS),
        "--junit",
        str(junit),
        "--html",
        str(html),
        "--quiet",
    )
    assert proc.returncode == 1
    assert b"<testsuite" in junit.read_bytes() and FORBIDDEN.encode() in junit.read_bytes()
    assert FORBIDDEN in html.read_text()


def test_missing_contracts_option_is_a_usage_error() -> None:
    proc = run("grade", str(EXAMPLES))
    assert proc.returncode == 2
    assert "--contracts" in proc.stderr


def test_inspect_shows_steps_and_a_coverage_line() -> None:
    proc = run(
        "inspect",
        str(TRACES / "openai-v2" / "b_tool_retry.otlp.json"),
        str(TRACES / "openai-v2" / "b_tool_retry.logs.otlp.jsonl"),
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "tool_call   search_docs  error" in out
    assert "from model messages" in out
    assert "coverage: (run wrapper) 1, otel-genai 3; unrecognised 0" in out


def test_inspect_json_is_the_trajectory_model() -> None:
    proc = run("inspect", str(EXAMPLES / "openai-agents-g_handoff.otlp.json"), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    (traj,) = data["trajectories"]
    kinds = [s["kind"] for s in traj["steps"]]
    assert kinds.count("handoff") == 1 and traj["agent_name"] == "triage_agent"
    assert traj["conventions"] == {"openai-agents": 10, "handoffs": 1, "otel-genai": 1}


def test_user_conventions_directory_maps_an_unrecognised_span(tmp_path: Path) -> None:
    """A new mapping file, no code change: the app's root span becomes an agent step."""
    (tmp_path / "heldout-app.yaml").write_text(
        "name: heldout-app\n"
        "description: the corpus generator's app span\n"
        "priority: 50\n"
        "rules:\n"
        "  - id: app_root\n"
        "    step: agent\n"
        "    match: {all: [{scope: '^heldout\\.app$'}, {span_name: '^agent_run$'}]}\n"
        "    fields:\n"
        "      agent_name: {const: raw-loop}\n"
    )
    proc = run(
        "inspect",
        str(EXAMPLES / "openai-v2-f_degraded.otlp.json"),
        "--conventions",
        str(tmp_path),
    )
    assert proc.returncode == 0, proc.stderr
    assert "agent raw-loop" in proc.stdout
    assert "heldout-app 1" in proc.stdout and "unrecognised 0" in proc.stdout


def test_bad_conventions_file_is_one_error_line_naming_file_and_key(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(
        "rules:\n  - id: x\n    step: tool_call\n    match: {all: [{attr: a, exists: true}]}\n"
        "    fields:\n      tool: {attr: a, parse: jsn}\n"
    )
    proc = run("inspect", str(EXAMPLES), "--conventions", str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: {tmp_path / 'bad.yaml'}: rules[0].fields.tool[0].parse")
    assert "Traceback" not in proc.stderr


def test_orphan_spans_are_reported_as_missing_evidence(tmp_path: Path) -> None:
    """A trace whose root span never arrived: graded, with a trace_complete gap, and as a
    fragment of its run: the missing part may hold the deletion the contract forbids, so
    ``tool_not_called`` is missing evidence too, never a pass."""
    doc = json.loads((TRACES / "pydantic-ai" / "a_happy.otlp.json").read_text())
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"] = [s for s in spans if s.get("parentSpanId")]
    path = tmp_path / "no-root.otlp.json"
    path.write_text(json.dumps(doc))
    conventions = load_conventions()
    problems: list[InputProblem] = []
    (trace,) = list(read_traces([str(path)], problems))
    contract = load_contract(CONTRACTS / "no-deletes.yaml")
    ((verdict, trajectory),) = grade_trace(trace, [contract], conventions)
    assert len(trajectory.orphan_spans) == 3
    gap = [r for r in verdict.results if r.oracle_type == "trace_complete"]
    assert [r.outcome for r in gap] == [Outcome.MISSING_EVIDENCE]
    forbidden = [r for r in verdict.results if r.oracle_type == "tool_not_called"]
    assert [r.outcome for r in forbidden] == [Outcome.MISSING_EVIDENCE]
    assert "never arrived" in forbidden[0].message
    assert verdict.passed is False and verdict.counts.missing_evidence == 2


def test_grade_trace_maps_only_when_a_contract_selects_the_trace() -> None:
    conventions = load_conventions()
    problems: list[InputProblem] = []
    traces = list(read_traces([str(EXAMPLES / "openai-agents-g_handoff.otlp.json")], problems))
    support = load_contract(CONTRACTS / "support-answers.yaml")
    assert grade_trace(traces[0], [support], conventions) == []


@pytest.mark.parametrize("keep_going", [False, True])
def test_grade_paths_reports_unknown_paths_as_input_errors(keep_going: bool) -> None:
    report = grade_paths(
        [str(EXAMPLES / "nope.json")],
        GradingSession([load_contract(CONTRACTS / "no-deletes.yaml")], load_conventions()),
    )
    assert [p.source for p in report.input_errors] == [str(EXAMPLES / "nope.json")]
    assert report.exit_code(keep_going) == (0 if keep_going else 2)


def test_progress_reports_every_input_byte_and_advances_within_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big JSON-lines export (built from real request lines) gets several progress updates
    that add up to its size, and a second file is counted too. The position advances a block
    of lines at a time (a regular file's blocks are read straight from it, the first one
    too), so the file is a little over two blocks long."""
    import otel_oracles.pipeline as pipeline
    from otel_oracles.decode._files import _LINE_BLOCK_BYTES

    monkeypatch.setattr(pipeline, "PROGRESS_INTERVAL_S", 0.0)
    lines = (TRACES / "openinference-openai" / "a_happy.otlp.jsonl").read_text().splitlines()
    big = tmp_path / "export.jsonl"
    with big.open("w") as f:
        while f.tell() < 2 * _LINE_BLOCK_BYTES + 1:
            f.write("\n".join(lines) + "\n")
    small = TRACES / "pydantic-ai" / "a_happy.otlp.json"
    seen: list[int] = []
    problems: list[InputProblem] = []
    traces = list(read_traces([str(big), str(small)], problems, progress=seen.append))
    assert problems == [] and len(traces) == 2
    assert sum(seen) == big.stat().st_size + small.stat().st_size
    assert len(seen) >= 3, f"expected updates within the big file, got {seen}"
