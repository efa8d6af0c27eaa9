"""One contract check graded on one real capture: the shape of the tests that pin what a
single check decides on a tracer's layout (a step budget over merged or unrecorded model
calls), with the capture read as ``grade`` reads it and no input problem tolerated."""

from __future__ import annotations

from pathlib import Path

from otel_oracles.grade.loader import load_contract
from otel_oracles.mapping import load_conventions
from otel_oracles.model.contract import Contract
from otel_oracles.model.result import InputProblem, Outcome
from otel_oracles.model.step import StepKind
from otel_oracles.pipeline import grade_trace, read_traces

TRACES = Path(__file__).resolve().parents[1] / "testdata" / "traces"


def one_check_contract(tmp_path: Path, check: str) -> Contract:
    """A contract (written to ``tmp_path`` and loaded as a file) whose one invariant is
    ``check``, given as a YAML flow mapping."""
    path = tmp_path / "steps.yaml"
    path.write_text(f"id: steps\nversion: 1\nname: step budget\ninvariants:\n  - {check}\n")
    return load_contract(path)


def grade_one_check(
    source: str, scenario: str, c: Contract
) -> tuple[Outcome, str, list[StepKind], int]:
    """The one check's outcome and message on ``<source>/<scenario>.otlp.json``, the graded
    trajectory's step kinds, and how many traces the file held (exactly one of them is
    graded: a tracer may write, say, each agent's creation as a trace holding no run)."""
    problems: list[InputProblem] = []
    traces = list(read_traces([str(TRACES / source / f"{scenario}.otlp.json")], problems))
    assert problems == []
    graded = [vt for trace in traces for vt in grade_trace(trace, [c], load_conventions())]
    [(verdict, trajectory)] = graded
    [result] = verdict.results
    return result.outcome, result.message, [s.kind for s in trajectory.steps], len(traces)
