"""``pytest --oo-contracts DIR --oo-traces PATH``: one item per graded (contract, trace) pair,
run by pytest's own ``pytester`` in a subprocess with the installed plug-in, and compared
with what ``otel-oracles grade`` prints for the same real captures."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
"""pytest's own ``pytester``: these tests run pytest on generated projects."""

REPO = Path(__file__).resolve().parents[2]
CONTRACTS = REPO / "examples" / "contracts"
CAPTURES = [
    REPO / "examples" / "traces",
    REPO / "tests" / "testdata" / "traces" / "strands",
    REPO / "tests" / "testdata" / "traces" / "langgraph-openinference",
]
"""Real exports: the bundled examples and two more instrumentations' captures."""

FORBIDDEN_TOOL_TRACE = "ffc2815233fff9df5cdf2f7cd60b28c5"
"""``examples/traces/pydantic-ai-d_forbidden_tool``: the agent called ``delete_records``."""


def oo_args(*traces: Path) -> list[str]:
    args = [f"--oo-contracts={CONTRACTS}"]
    args += [f"--oo-traces={t}" for t in traces]
    return args


def run_pytest(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """pytest in a subprocess rooted in the pytester directory (its own empty ini), so only
    the plug-in's items are collected."""
    pytester.makeini("[pytest]\n")
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "--rootdir", ".", *args)


def cli_verdicts(*traces: Path) -> dict[str, bool]:
    """``contract@version::subject`` -> passed, from ``otel-oracles grade --json``."""
    cli = str(Path(sys.executable).parent / "otel-oracles")
    done = subprocess.run(
        [cli, "grade", *map(str, traces), "-c", str(CONTRACTS), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    return {
        f"{v['contract_id']}@{v['contract_version']}::{v['subject']}": v["passed"]
        for v in report["verdicts"]
    }


_OUTCOME_LINE = re.compile(r"^(?P<nodeid>\S+@\d+::\S+) (?P<outcome>PASSED|FAILED)")


def test_items_and_outcomes_are_the_grade_commands_verdicts(pytester: pytest.Pytester) -> None:
    result = run_pytest(pytester, "-v", *oo_args(*CAPTURES))
    items = {
        m["nodeid"]: m["outcome"] == "PASSED"
        for line in result.outlines
        if (m := _OUTCOME_LINE.match(line))
    }
    expected = cli_verdicts(*CAPTURES)
    assert items == expected, "pytest items and their outcomes differ from `otel-oracles grade`"
    passed = sum(expected.values())
    result.assert_outcomes(passed=passed, failed=len(expected) - passed)
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_the_plugin_keeps_validated_conventions_between_sessions(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pytest session reads the conventions cache ``grade`` keeps (about 0.2 s of CPU less
    per session start when warm), and a second session grades the same from it."""
    cache = tmp_path / "conventions-cache"
    monkeypatch.setenv("OTEL_ORACLES_CONVENTIONS_CACHE", str(cache))
    trace = REPO / "examples" / "traces"
    first = run_pytest(pytester, "-v", *oo_args(trace))
    entries = sorted(p.name for p in cache.glob("*.json"))
    assert entries, "the plug-in wrote no conventions cache entry"
    second = run_pytest(pytester, "-v", *oo_args(trace))
    assert sorted(p.name for p in cache.glob("*.json")) == entries
    outcomes = [line for line in first.outlines if _OUTCOME_LINE.match(line)]
    assert outcomes
    assert [line for line in second.outlines if _OUTCOME_LINE.match(line)] == outcomes


def test_failure_output_names_the_failing_check_and_its_step(pytester: pytest.Pytester) -> None:
    trace = REPO / "examples" / "traces" / "pydantic-ai-d_forbidden_tool.otlp.json"
    result = run_pytest(pytester, *oo_args(trace))
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert f"support-rag@1::{FORBIDDEN_TOOL_TRACE}" in text
    # The FAILURES section (pytest repeats the message in its summary when CI is set).
    section = result.outlines[
        : next(
            (i for i, x in enumerate(result.outlines) if "short test summary info" in x),
            len(result.outlines),
        )
    ]
    failing = [line for line in section if "invariant_failure" in line]
    assert len(failing) == 1 and "no-destructive-tools: violated" in failing[0], text
    step = section[section.index(failing[0]) + 1]
    assert re.search(r"step \d+: tool_call delete_records, span [0-9a-f]{16}$", step), step
    assert re.search(r"ok pass\s+answer-captured: holds", text), "passing checks are listed too"


def test_failure_output_keeps_trace_text_out_unless_explain_full(
    pytester: pytest.Pytester,
) -> None:
    trace = REPO / "examples" / "traces" / "vercel-ai-sdk-e_fabricated_citation.otlp.json"
    templated = run_pytest(pytester, *oo_args(trace))
    full = run_pytest(pytester, "--oo-explain=full", *oo_args(trace))
    assert "doc-99" not in templated.stdout.str(), "a cited id from the trace leaked"
    line = next(x for x in templated.outlines if "grounded-citations:" in x)
    assert line.rstrip().endswith("grounded-citations: violated; steps=3"), line
    full_line = next(x for x in full.outlines if "grounded-citations:" in x)
    assert "not returned by any earlier tool or retrieval: doc-99" in full_line, full_line


def test_junitxml_holds_every_item_with_contract_trace_and_the_four_numbers(
    pytester: pytest.Pytester,
) -> None:
    xml = pytester.path / "junit.xml"
    run_pytest(pytester, f"--junitxml={xml}", *oo_args(CAPTURES[0]))
    cases = ET.parse(xml).getroot().iter("testcase")
    found = {}
    for case in cases:
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        found[f"{case.get('classname')}::{case.get('name')}"] = (props, case.find("failure"))
    expected = cli_verdicts(CAPTURES[0])
    assert set(found) == set(expected)
    props, failure = found[f"support-rag@1::{FORBIDDEN_TOOL_TRACE}"]
    assert props == {
        "contract": "support-rag",
        "contract_version": "1",
        "trace_id": FORBIDDEN_TOOL_TRACE,
        "verdict": "fail",
        "invariant_failures": "1",
        "tolerated_failures": "0",
        "budget_exhausted": "0",
        "missing_evidence": "0",
    }
    assert failure is not None and "no-destructive-tools" in (failure.text or "")
    assert all((f is None) == expected[name] for name, (_, f) in found.items())


def test_unreadable_trace_input_is_a_collection_error_naming_it(
    pytester: pytest.Pytester,
) -> None:
    broken = pytester.path / "broken.otlp.json"
    broken.write_text('{"resourceSpans": [', encoding="utf-8")
    result = run_pytest(pytester, *oo_args(broken))
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines([f"error: {broken}*"])
    assert "Traceback" not in result.stdout.str()


def test_an_invalid_contract_is_one_usage_line(pytester: pytest.Pytester) -> None:
    contract = pytester.path / "bad.yaml"
    contract.write_text("id: bad\nversion: one\n", encoding="utf-8")
    result = run_pytest(pytester, f"--oo-contracts={contract}", f"--oo-traces={CAPTURES[0]}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: otel-oracles: {contract}: *version*"])


def test_without_the_options_the_plugin_loads_no_grading_stage() -> None:
    """pytest imports the plug-in at every start-up of every project that installs
    otel-oracles: importing it loads no stage, no pydantic and no OpenTelemetry SDK."""
    heavy = (
        "otel_oracles.model",
        "otel_oracles.grade",
        "otel_oracles.pipeline",
        "otel_oracles.emit",
        "otel_oracles.testing._",
        "pydantic",
        "opentelemetry",
    )
    probe = (
        "import sys, otel_oracles.testing.plugin; "
        f"print(sorted(m for m in sys.modules if m.startswith({heavy!r})))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout


def test_the_oo_trace_mark_runs_the_trace_items_without_the_projects_tests(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_project="def test_unrelated():\n    assert True\n")
    trace = REPO / "examples" / "traces" / "pydantic-ai-a_happy.otlp.json"
    result = run_pytest(pytester, "--strict-markers", "-m", "oo_trace", "-v", *oo_args(trace))
    result.assert_outcomes(passed=1, deselected=1)
    result.stdout.fnmatch_lines(["support-rag@1::* PASSED*"])
