"""``schema``, ``validate``, ``explain`` and ``oracles`` know the coverage setting: the
``evidence: {require, coverage}`` form and the per-check ``coverage`` param."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

REPO = Path(__file__).resolve().parents[2]
LENIENT = """\
id: relaxed
evidence: {require: [tool_arguments], coverage: lenient}
invariants:
  - {type: tool_not_called, tool: delete_records, coverage: strict}
  - {type: no_network}
"""


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(Path(sys.executable).parent / "otel-oracles"), *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )


@pytest.fixture
def relaxed(tmp_path: Path) -> Path:
    path = tmp_path / "relaxed.yaml"
    path.write_text(LENIENT, encoding="utf-8")
    return path


def test_schema_accepts_both_evidence_forms_and_rejects_a_bad_coverage() -> None:
    proc = cli("schema")
    assert proc.returncode == 0, proc.stderr
    validator = jsonschema.Draft202012Validator(json.loads(proc.stdout))
    ok = [
        {"id": "x", "evidence": ["tool_arguments"]},
        {"id": "x", "evidence": {"coverage": "lenient"}},
        {"id": "x", "evidence": {"require": ["tool_arguments"], "coverage": "strict"}},
        {"id": "x", "invariants": [{"type": "handoff", "coverage": "lenient"}]},
    ]
    for doc in ok:
        assert list(validator.iter_errors(doc)) == [], doc
    bad = [
        {"id": "x", "evidence": {"coverage": "loose"}},
        {"id": "x", "coverage": "lenient"},
        {"id": "x", "invariants": [{"type": "tool_not_called", "tool": "x", "coverage": 1}]},
    ]
    for doc in bad:
        assert list(validator.iter_errors(doc)), doc


def test_validate_shows_a_relaxed_coverage(relaxed: Path) -> None:
    proc = cli("validate", str(relaxed))
    assert proc.returncode == 0, proc.stderr
    assert "contract relaxed@1: 3 check(s); coverage lenient" in proc.stdout


def test_validate_names_a_misplaced_coverage_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("id: bad\ncoverage: lenient\n", encoding="utf-8")
    proc = cli("validate", str(path))
    assert proc.returncode == 1
    assert "coverage: write it under evidence: {coverage: lenient}" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr


def test_explain_says_how_unrecognised_spans_are_treated(relaxed: Path) -> None:
    proc = cli("explain", str(relaxed))
    assert proc.returncode == 0, proc.stderr
    assert "Coverage is relaxed (evidence: {coverage: lenient})" in proc.stdout
    assert "(coverage strict)  (tool_not_called)" in proc.stdout
    strict = cli("explain", "examples/contracts/support-rag.yaml")
    assert "spans no convention recognised (coverage: strict)" in strict.stdout


def test_oracles_lists_the_coverage_param_of_the_checks_that_need_every_span() -> None:
    proc = cli("oracles", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    entries = data["oracles"] if isinstance(data, dict) else data
    params = {e["type"]: {p["name"] for p in e["params"]} for e in entries}
    needs_every_span = (
        "tool_not_called",
        "no_network",
        "file_not_modified",
        "citations_grounded",
        "handoff",
        "tool_called",
        "max_tool_calls",
        "tool_retries",
        "tool_errors",
        "loop_detected",
        "max_steps",
        "tokens",
    )
    for oracle in needs_every_span:
        assert "coverage" in params[oracle], oracle
    # Checks that unrecognised spans cannot change take no coverage param.
    for oracle in ("final_output", "latency", "schema_valid"):
        assert "coverage" not in params[oracle], oracle


UNRECOGNISED = REPO / "tests/testdata/unrecognised/unknown-sdk/b_tool_retry.otlp.json"
LANGFUSE_5_2 = REPO / "tests/testdata/langfuse-5.2/b_tool_retry.otlp.json"
"""The same real run: recorded by Langfuse (recognised by langfuse.yaml), and with the vendor
renamed so that no convention knows a single span."""
COUNTING = (
    "id: counting\nversion: 1\ninvariants:\n"
    "  - {type: tool_called, tool: search_docs, name: searched}\n"
    "  - {type: max_tool_calls, max: 5, name: bounded}\n"
    "  - {type: tokens, max_total_tokens: 100000, name: tokens}\n"
    "tolerances:\n"
    "  - {type: tool_retries, max: 1, name: retries, why: flaky}\n"
    "  - {type: max_tool_calls, max: 5, name: bounded-lenient, coverage: lenient}\n"
)


def test_counting_checks_fail_closed_on_unrecognised_spans(tmp_path: Path) -> None:
    """A real trace whose spans no convention knows (the run searched twice, one retry):
    checks that bound a count cannot pass, the calls may be among those spans; tool_called
    short of its minimum is missing evidence, not a violation; lenient coverage judges what
    was seen."""
    contract = tmp_path / "c.yaml"
    contract.write_text(COUNTING)
    proc = cli("grade", str(UNRECOGNISED), "--contracts", str(contract), "--json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    outcomes = {r["name"]: r["outcome"] for v in report["verdicts"] for r in v["results"]}
    assert outcomes == {
        "searched": "missing_evidence",
        "bounded": "missing_evidence",
        "tokens": "missing_evidence",
        "retries": "missing_evidence",
        "bounded-lenient": "pass",
    }, proc.stdout


def test_the_same_run_recorded_by_langfuse_is_judged(tmp_path: Path) -> None:
    """The Langfuse SDK's own spans (held out: captured before langfuse.yaml existed) are
    recognised: the two searches, the retry (its failure only in the returned error object)
    and the tokens are seen, so every counting check judges what happened."""
    contract = tmp_path / "c.yaml"
    contract.write_text(COUNTING)
    proc = cli("grade", str(LANGFUSE_5_2), "--contracts", str(contract), "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    outcomes = {r["name"]: r["outcome"] for v in report["verdicts"] for r in v["results"]}
    assert outcomes == {
        "searched": "pass",
        "bounded": "pass",
        "tokens": "pass",
        "retries": "tolerated",
        "bounded-lenient": "pass",
    }, proc.stdout
