"""Grading a subject leaves no reference cycles behind: everything it allocates is freed by
reference counting. ``cli.StartUpGc`` sets the collector's youngest generation to a million
allocations on the strength of this (a young collection while a trace is graded scans the
trace's live objects and frees nothing); a change that makes grading leave cycles fails
here, and then the threshold needs another look (docs/performance-history.md, "The
collector's young generation")."""

from __future__ import annotations

import gc
from pathlib import Path

from otel_oracles.grade.loader import load_contract
from otel_oracles.mapping import load_conventions
from otel_oracles.model.result import InputProblem
from otel_oracles.pipeline import read_traces
from otel_oracles.session import GradingSession

REPO = Path(__file__).resolve().parent.parent.parent
EXAMPLES = REPO / "examples" / "traces"
CONTRACTS = sorted((REPO / "bench" / "contracts").glob("*.yaml")) + sorted(
    (REPO / "tests" / "testdata" / "pipeline" / "contracts").glob("*.yaml")
)


def test_grading_the_examples_leaves_no_garbage_for_the_collector() -> None:
    problems: list[InputProblem] = []
    traces = list(read_traces([str(EXAMPLES)], problems))
    assert not problems and len(traces) >= 8
    session = GradingSession([load_contract(path) for path in CONTRACTS], load_conventions())
    graded = [session.grade(trace) for trace in traces]  # first use: caches filled
    assert sum(len(pairs) for pairs in graded) >= len(traces)
    assert any(not verdict.passed for pairs in graded for verdict, _ in pairs)
    del graded
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        for trace in traces:
            pairs = session.grade(trace)
            assert pairs
            del pairs
        left = gc.collect()
    finally:
        if enabled:
            gc.enable()
    assert left == 0, f"grading left {left} objects in reference cycles"
