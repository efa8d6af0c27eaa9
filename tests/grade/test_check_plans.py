"""The built-in checks' usual answers computed by the core (``CheckPlan``, asked by the
evaluator's loop instead of the oracle's ``check``) are the findings their whole Python
bodies gave (``tests/support/check_reference.py``), byte for byte, over the captured traces
of real instrumentations and hand-built edge cases (no steps, unknown, qualified and
nameless tool names, answering calls, failed and retried calls, loops, a run a framework's
limit ended); and a result the loop builds from a plan is the one it builds from ``check``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from otel_oracles.grade.compiled import CompiledCheck, compile_check
from otel_oracles.grade.evaluator import run_compiled
from otel_oracles.grade.evidence import Evidence
from otel_oracles.grade.loader import parse_contract
from otel_oracles.grade.oracles.base import Finding, GradeContext, OracleCheck
from otel_oracles.model.contract import OracleSpec
from otel_oracles.model.step import SpanRef, Step, Trajectory
from tests.oracles.trace_builders import MS, gen, tool, traj
from tests.support.captured import captured_trajectories
from tests.support.check_reference import REFERENCE

SCENARIOS = (
    "a_happy",
    "b_tool_retry",
    "d_forbidden_tool",
    "f_degraded",
    "h_coding_agent",
    "m_excess_calls",
    "q_turn_limit",
)
"""The scenarios read from each captured source (with content and without): a plain run,
a retried and a forbidden call, a degraded run, file edits, too many calls, a run a
framework's turn limit ended (``stopped_short``)."""

PARAMS: dict[str, list[dict[str, Any]]] = {
    "tool_not_called": [
        {"tool": ["delete_records"]},
        {"tool": ["delete_records", "drop_*"]},
        {"tool": ["search_docs"]},
        {"tool": ["search_docs"], "max": 1},
        {"tool": ["docs.search_docs"]},
        {"tool": ["*"], "max": 2},
        {"tool": ["no_such_tool"]},
    ],
    "tool_errors": [
        {},
        {"max": 2},
        {"tools": ["search_*"]},
        {"error_pattern": None},
        {"error_pattern": "(?i)timeout|unavailable"},
    ],
    "tool_retries": [
        {"max": 1},
        {"max": 0, "tools": ["search_docs"]},
        {"max": 3, "max_per_tool": 0},
        {"error_pattern": None},
    ],
    "loop_detected": [
        {"threshold": 2},
        {"threshold": 3},
        {"threshold": 4, "max": 1},
        {"threshold": 2, "tools": ["search_*"]},
        {"threshold": 2, "tools": ["no_such_tool"]},
    ],
    "max_tool_calls": [
        {"max": 0},
        {"max": 1},
        {"max": 8},
        {"max": 40},
        {"max": 1, "tools": ["search_docs"]},
        {"max": 0, "tools": ["final_answer", "final_result"]},
        {"max": 0, "tools": ["no_such_tool"]},
    ],
    "tokens": [
        {"max_total_tokens": 200000},
        {"max_input_tokens": 10},
        {"max_output_tokens": 0, "max_total_tokens": 5},
        {"max_input_tokens": 10**30},
    ],
    "max_steps": [
        {"max": 60},
        {"max": 2},
        {"max": 0},
        {"max": 5, "kinds": ["tool_call"]},
        {"max": 5, "kinds": ["generation", "agent"]},
    ],
    "latency": [
        {"max_ms": 120000},
        {"max_ms": 0.001},
        {"max_ms": 12.5, "max": 1},
        {"max_ms": 1e-7},
        {"max_ms": 35.0000001},
    ],
}


def _oracles() -> list[OracleCheck]:
    built: list[OracleCheck] = []
    for oracle_type, variants in PARAMS.items():
        for params in variants:
            check = compile_check("invariant", OracleSpec(type=oracle_type, params=params))
            assert check.oracle is not None, check.setup_error
            assert check.oracle.native_plan is not None
            assert check.head is not None
            built.append(check.oracle)
    return built


def _edge_cases() -> Iterator[tuple[str, Trajectory]]:
    yield "no steps", traj()
    yield "model calls only", traj(gen("hi"), gen("done"))
    yield (
        "qualified and unknown names",
        traj(
            gen(tool_calls=["docs.search_docs"]),
            tool("docs.search_docs", {"q": "a"}),
            tool("mcp__docs__search_docs", {"q": "a"}),
            tool("search_docs", {"q": "a"}),
            tool("drop_table", {"name": "t"}),
            gen("done"),
        ),
    )
    yield (
        "failed, retried and denied calls",
        traj(
            gen(tool_calls=["search_docs"]),
            tool("search_docs", {"q": "a"}, "error: timeout", status="error"),
            tool("search_docs", {"q": "a"}, "ok"),
            tool("delete_records", {"id": 1}, attributes={"denied": True}),
            tool("search_docs", {"q": "b"}, {"error": "unavailable"}),
            tool("search_docs", {"q": "b"}, "ok"),
            gen("done"),
        ),
    )
    yield (
        "a loop",
        traj(*(tool("search_docs", {"q": " same "}) for _ in range(4)), gen("done")),
    )
    yield (
        "candidates that differ once normalized",
        traj(
            tool("search_docs", {"q": "a", "page": 1}),
            tool("search_docs", {"q": "a", "page": 2}),
            tool("search_docs", {"q": "a", "page": 3}),
            gen("done"),
        ),
    )
    yield (
        "nameless calls",
        traj(
            gen(tool_calls=["search_docs"]),
            tool("search_docs", {"q": "a"}, synthesized=True),
            tool("", None, "ok"),
            gen("done"),
        ),
    )
    yield (
        "ends unset, before starts, or missing",
        traj(
            gen("a", start_ns=5 * MS, end_ns=0),
            tool("search_docs", {"q": "a"}, "ok", start_ns=40 * MS, end_ns=20 * MS),
            gen("b", start_ns=None, end_ns=None),
        ),
    )
    yield (
        "an end before its start, a duration that rounds",
        traj(
            gen("a", start_ns=1_700_000_000_000_000_000, end_ns=1_700_000_000_012_345_450),
            tool("search_docs", {"q": "a"}, "ok", start_ns=1_700_000_000_000_000_300, end_ns=7),
            gen("b", start_ns=1_700_000_000_000_000_001, end_ns=1_700_000_000_000_250_001),
        ),
    )
    yield ("no times", traj(gen("a"), tool("search_docs", {"q": "a"}, "ok"), timed=False))
    yield (
        "a run of over 104 days",
        traj(gen("a", start_ns=0, end_ns=2**53 + 1), gen("b", start_ns=1, end_ns=2)),
    )
    yield "calls sharing spans, one without", _calls_sharing_spans()
    yield (
        "an answering call",
        traj(
            gen(tool_calls=["search_docs"]),
            tool("search_docs", {"q": "a"}, "ok"),
            gen(tool_calls=["final_answer"]),
            tool("final_answer", {"answer": "done"}, "done"),
        ),
    )


def _calls_sharing_spans() -> Trajectory:
    """Seven calls (more than a failure lists), two pairs recorded by one span each and one
    call with no source span: what ``max_tool_calls``' failure points at, without repeats."""
    spans = ["a", "a", "b", None, "c", "c", "d"]
    steps = [
        Step(
            index=i,
            source=None if span is None else SpanRef(trace_id="t1", span_id=span),
            **tool("search_docs", {"q": str(i)}, "ok"),
        )
        for i, span in enumerate(spans)
    ]
    return Trajectory(steps=steps, trace_id="t1")


def _findings_agree(trajectories: Iterator[tuple[str, Trajectory]]) -> dict[str, int]:
    """Every oracle's ``check`` and its plan against the reference on each trajectory (each
    asked of a fresh ``Evidence`` too, so no answer leans on another's memo); how often
    each check's plan answered, and how many trajectories a framework's limit stopped, held
    an answering call, held a nameless call (the paths the plans leave or word apart)."""
    oracles = _oracles()
    contract = parse_contract(
        {"id": "plans", "invariants": [{"type": "max_steps", "max": 1}]}, "plans"
    )
    answered: dict[str, int] = dict.fromkeys(
        [*PARAMS, "stopped", "answering", "nameless", "calls over max"], 0
    )
    seen = 0
    for where, trajectory in trajectories:
        seen += 1
        shared = GradeContext(trajectory, contract)
        ev = shared.evidence
        answered["stopped"] += ev.stopped_short() is not None
        answered["answering"] += bool(ev.answering())
        answered["nameless"] += bool(ev.nameless_calls())
        for oracle in oracles:
            fresh = GradeContext(trajectory, contract, evidence=Evidence(trajectory))
            want = REFERENCE[oracle.oracle_type](oracle, fresh)
            got = oracle.check(shared)
            assert repr(got) == repr(want), (where, oracle.oracle_type, oracle.given)
            assert got == want
            plan = oracle.native_plan
            assert plan is not None
            planned = plan.finding(GradeContext(trajectory, contract))
            if planned is not None:
                answered[oracle.oracle_type] += 1
                if oracle.oracle_type == "max_tool_calls" and planned.status == "fail":
                    answered["calls over max"] += 1
                assert type(planned) is Finding
                assert repr(planned) == repr(want), (where, oracle.oracle_type, oracle.given)
                assert type(planned.details) is dict and type(planned.message) is str
    assert seen
    return answered


def test_plans_answer_as_the_python_checks_did_on_captured_traces() -> None:
    answered = _findings_agree(captured_trajectories(SCENARIOS))
    # The plans answer the usual paths (every check's plan answered some trajectory), and
    # the captures reach the paths they leave to Python or word apart.
    assert all(answered.values()), answered


def test_plans_answer_as_the_python_checks_did_on_edge_cases() -> None:
    answered = _findings_agree(_edge_cases())
    assert all(answered[oracle_type] for oracle_type in PARAMS), answered
    assert answered["nameless"], answered
    assert answered["calls over max"], answered


def _without_plan(check: CompiledCheck) -> CompiledCheck:
    """``check`` as the loop sees a plug-in's (``foreign``): asked through ``check``."""
    return CompiledCheck(
        check.layer,
        check.spec,
        check.oracle,
        check.evidence,
        check.setup_error,
        check.budget,
        foreign=True,
    )


@pytest.mark.parametrize("layer", ["invariant", "tolerance"])
def test_the_loop_builds_the_same_result_from_a_plan(layer: str) -> None:
    contract = parse_contract(
        {"id": "plans", "invariants": [{"type": "max_steps", "max": 1}]}, "plans"
    )
    for _, trajectory in _edge_cases():
        for oracle_type, variants in PARAMS.items():
            for params in variants:
                spec = OracleSpec(type=oracle_type, params=params, why="w")
                check = compile_check(layer, spec)  # type: ignore[arg-type]
                for clear, gapless in ((True, True), (False, False)):
                    ctx = GradeContext(trajectory, contract)
                    got = run_compiled(check, ctx, clear, gapless)
                    ctx = GradeContext(trajectory, contract)
                    want = run_compiled(_without_plan(check), ctx, clear, gapless)
                    assert got.model_dump(exclude={"duration_ns"}) == want.model_dump(
                        exclude={"duration_ns"}
                    ), (oracle_type, params, clear, gapless)
