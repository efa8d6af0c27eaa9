"""What a contract grades is an agent run: a trace with no model call, tool call or agent step
in it (a graph compiled at start-up) gets no verdict, neither failing nor passing, and the
run summary counts it; sequential and ``--workers`` runs say the same. A trace with spans no
convention recognised is graded (fail closed): it may be a run of an unknown framework."""

from __future__ import annotations

import json
from pathlib import Path

from otel_oracles.grade.loader import load_contract
from otel_oracles.mapping import load_conventions
from otel_oracles.model.step import Step, StepKind, Trajectory
from otel_oracles.parallel import grade_paths_parallel
from otel_oracles.pipeline import grade_paths
from otel_oracles.session import NOT_AGENT_RUN, GradingSession, SessionSpec, holds_agent_run

REPO = Path(__file__).resolve().parent.parent.parent
HAPPY_FILE = REPO / "tests" / "testdata" / "traces" / "pydantic-ai" / "a_happy.otlp.json"
HAPPY = "a154b36fa4bf2d3f308db66e83a68dee"
UNKNOWN = "2" * 32
NO_DELETES = REPO / "tests" / "testdata" / "pipeline" / "contracts" / "no-deletes.yaml"


def _otlp(trace_id: str, spans: list[tuple[str, str, dict[str, str]]]) -> str:
    """An OTLP/JSON export of ``(span id, name, string attributes)`` root spans."""
    return json.dumps(
        {
            "resourceSpans": [
                {
                    "resource": {"attributes": []},
                    "scopeSpans": [
                        {
                            "scope": {"name": "openinference.instrumentation.langchain"},
                            "spans": [
                                {
                                    "traceId": trace_id,
                                    "spanId": span_id,
                                    "name": name,
                                    "kind": 1,
                                    "startTimeUnixNano": "1000",
                                    "endTimeUnixNano": "2000",
                                    "attributes": [
                                        {"key": k, "value": {"stringValue": v}}
                                        for k, v in attrs.items()
                                    ],
                                }
                                for span_id, name, attrs in spans
                            ],
                        }
                    ],
                }
            ]
        }
    )


def _inputs(tmp_path: Path) -> list[str]:
    build = tmp_path / "build.otlp.json"
    build.write_text(
        _otlp(
            "1" * 32,
            [("1" * 16, "LangGraph", {"openinference.span.kind": "CHAIN"})],
        )
    )
    unknown = tmp_path / "unknown.otlp.json"
    unknown.write_text(_otlp(UNKNOWN, [("2" * 16, "MyAgent.step", {"my.tool": "search"})]))
    return [str(HAPPY_FILE), str(build), str(unknown)]


def test_traces_without_an_agent_run_are_counted_not_graded(tmp_path: Path) -> None:
    report = grade_paths(
        _inputs(tmp_path), GradingSession([load_contract(NO_DELETES)], load_conventions())
    )
    assert [v.trace_id for v in report.verdicts] == [HAPPY, UNKNOWN]
    assert f"1 trace(s) {NOT_AGENT_RUN}" in report.notes
    assert not any("matched no contract" in n for n in report.notes)


def test_workers_report_the_same(tmp_path: Path) -> None:
    inputs = _inputs(tmp_path)
    sequential = grade_paths(
        inputs, GradingSession([load_contract(NO_DELETES)], load_conventions())
    )
    parallel = grade_paths_parallel(inputs, SessionSpec((NO_DELETES,)), workers=2)
    assert {v.trace_id for v in parallel.verdicts} == {HAPPY, UNKNOWN}
    assert parallel.notes == sequential.notes


def test_an_agent_run_is_any_step_but_other() -> None:
    def traj(*kinds: StepKind) -> Trajectory:
        return Trajectory(steps=[Step(index=i, kind=k) for i, k in enumerate(kinds)])

    assert not holds_agent_run(traj())
    assert not holds_agent_run(traj(StepKind.OTHER, StepKind.OTHER))
    for kind in (StepKind.GENERATION, StepKind.TOOL_CALL, StepKind.AGENT, StepKind.COMMAND):
        assert holds_agent_run(traj(StepKind.OTHER, kind))
    unknown = Trajectory(steps=[], unmapped_spans={"MyAgent.step": 1})
    assert holds_agent_run(unknown)


def test_real_graph_build_trace_is_not_a_subject() -> None:
    """OpenLLMetry's LangChain tracer exports the ReAct agent's construction (one
    ``create_agent`` span) as a trace of its own, beside the run's trace."""
    path = REPO / "tests" / "testdata" / "traces" / "langgraph-openllmetry" / "a_happy.otlp.json"
    report = grade_paths(
        [str(path)], GradingSession([load_contract(NO_DELETES)], load_conventions())
    )
    assert len(report.verdicts) == 1
    assert report.verdicts[0].passed
    assert f"1 trace(s) {NOT_AGENT_RUN}" in report.notes
