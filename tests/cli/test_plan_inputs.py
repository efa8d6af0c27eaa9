"""What a contract or a trace hands the checks the core answers, taken as the Python bodies
took it. A contract number past every machine integer (``max: 10**30``) is an ``int`` the
params allow: read by the real CLI as a subprocess, each check judges with it, where taking
it as a machine integer made the check an error (``oracle raised OverflowError``). A tool
name holding a lone surrogate (a ``str`` an application built, ``surrogateescape``'s
decoding of a byte that is not UTF-8; no trace file carries one, the decoders refuse it) is
graded through the public ``grade``, over ``max_tool_calls``' max: its failure lists the
call by that name, where extracting the list into Rust's text raised
``UnicodeEncodeError``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from otel_oracles import grade
from otel_oracles.grade.loader import parse_contract
from otel_oracles.model.result import RunReport
from otel_oracles.report import render_json
from tests.oracles.trace_builders import gen, tool, traj
from tests.support.genai_otlp import agent_run

CLI = str(Path(sys.executable).with_name("otel-oracles"))
BIG = 10**30


def three_calls() -> dict[str, object]:
    """An agent run (otel-genai convention) of three ``search_docs`` calls."""
    return agent_run([("search_docs", json.dumps({"q": "same"}))] * 3)


def test_contract_numbers_past_machine_integers_are_judged(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    trace.write_text(json.dumps(three_calls()) + "\n", encoding="utf-8")
    contract = tmp_path / "big.yaml"
    contract.write_text(
        f"""\
id: big
version: 1
invariants:
  - {{type: max_tool_calls, max: {BIG}, name: calls}}
  - {{type: max_steps, max: {BIG}, name: steps}}
  - {{type: loop_detected, threshold: {BIG}, name: loops}}
  - {{type: tool_errors, max: {BIG}, name: errors}}
  - {{type: tool_retries, max: {BIG}, max_per_tool: {BIG}, name: retries}}
  - {{type: tool_called, tool: search_docs, min: 0, max: {BIG}, name: called}}
  - {{type: tool_called, tool: search_docs, min: {BIG}, name: called-often}}
""",
        encoding="utf-8",
    )
    done = subprocess.run(
        [CLI, "grade", str(trace), "-c", str(contract), "--json", "--explain", "full", "-q"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1, done.stderr
    (verdict,) = json.loads(done.stdout)["verdicts"]
    assert (verdict["verdict"], verdict["counts"]["errors"]) == ("fail", 0)
    results = {r["name"]: (r["outcome"], r["message"]) for r in verdict["results"]}
    # No model call recorded: nothing shows the run ended on the agent's answer, so the
    # counts are lower bounds (``stopped_short``), worded with the number as given.
    stopped = "but the run ended where its trace cannot show how"
    assert {name: outcome for name, (outcome, _) in results.items()} == {
        "calls": "missing_evidence",
        "steps": "missing_evidence",
        "loops": "missing_evidence",
        "errors": "pass",
        "retries": "pass",
        "called": "pass",
        "called-often": "invariant_failure",
    }, results
    assert results["calls"][1].startswith(
        f"at least 3 tool calls (at most {BIG} allowed), {stopped}"
    )
    assert results["steps"][1].startswith(f"at least 3 steps (at most {BIG} allowed), but ")
    assert results["loops"][1].startswith(f"no tool called {BIG}+ times with the same arguments")
    assert results["called"][1] == f"search_docs called 3 time(s) (at least 0 and at most {BIG})"
    assert results["called-often"][1] == f"search_docs called 3 time(s), expected at least {BIG}"


def test_a_tool_named_with_a_lone_surrogate_over_max_tool_calls_fails_the_run() -> None:
    name = "search_\udcff"
    trajectory = traj(
        gen(tool_calls=[name, name]),
        tool(name, {"q": "a"}, "ok"),
        tool(name, {"q": "b"}, "ok"),
        gen("done"),
    )
    contract = parse_contract(
        {"id": "c", "invariants": [{"type": "max_tool_calls", "max": 1, "name": "few"}]}, "c"
    )
    verdict = grade(contract, trajectory)
    (result,) = verdict.results
    assert (verdict.passed, result.outcome) == (False, "invariant_failure"), result.message
    assert (
        result.message
        == f"2 tool calls, at most 1 allowed; over the limit: step 2 ({name}, span s2)"
    )
    # The report writes the surrogate as its escape.
    assert "over the limit: step 2 (search_\\udcff, span s2)" in render_json(
        RunReport(verdicts=[verdict])
    )
