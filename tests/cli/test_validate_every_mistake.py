"""``validate`` reports every mistake in a file at once, with "did you mean" hints, and a
file given in the wrong place says what it is."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-c", "from otel_oracles.cli import main; main()"]
TRACE = REPO / "tests" / "testdata" / "traces" / "pydantic-ai" / "a_happy.otlp.json"
CONTRACT = REPO / "examples" / "contracts" / "support-rag.yaml"
TRAJECTORY = REPO / "examples" / "trajectories" / "honest_fix.json"

MISTAKES = """\
id: c
versoin: 2
nmae: Support
description: d
invariants:
  - {type: tool_not_caled, tool: x}
  - {type: tool_retries, tools: [a], maxx: 1}
  - {type: citations_grounded, pattern: '('}
  - {type: max_steps}
tags: notalist
"""


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120)


def test_every_mistake_is_reported_with_hints(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(MISTAKES)
    proc = run("validate", str(path))
    assert proc.returncode == 1
    lines = [x for x in proc.stderr.splitlines() if x.startswith(f"error: {path}: ")]
    found = {x.removeprefix(f"error: {path}: ").split(":")[0] for x in lines}
    assert found == {
        "versoin", "nmae", "tags", "invariants[0].type", "invariants[1].maxx",
        "invariants[2].pattern", "invariants[3].max",
    }, lines  # fmt: skip
    text = "\n".join(lines)
    assert "nmae: unknown field (did you mean 'name'?)" in text
    assert "versoin: unknown field (did you mean 'version'?)" in text
    assert "'tool_not_caled' (did you mean 'tool_not_called'?)" in text
    assert "maxx: unknown param for oracle type 'tool_retries' (did you mean 'max'?)" in text


def test_a_trace_given_as_contracts_says_so() -> None:
    proc = run("grade", str(TRACE), "-c", str(TRACE))
    assert proc.returncode == 2
    assert f"error: {TRACE}: this is OTLP trace data, not a contract" in proc.stderr


def test_a_contract_or_trajectory_given_as_a_trace_says_so() -> None:
    proc = run("grade", str(CONTRACT), str(TRAJECTORY), "-c", str(CONTRACT))
    assert proc.returncode == 2
    assert "looks like a contract or task: give it with --contracts" in proc.stderr
    assert "looks like an AgentBench trajectory" in proc.stderr
