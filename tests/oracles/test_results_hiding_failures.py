"""Tool results that read the same whether the call failed never show it succeeded.

Mirascope hands the model a raised exception's bare message (``str(e)``) and records no error
flag, so in its traces a failed search's result reads like any text a tool returns.
``mirascope.yaml`` says so (``synthesize_tool_calls.results_show_failures: false``): each
call's outcome is unknown, and the checks that need outcomes, or need to know whether the
run was degraded, are missing evidence. With that setting switched back on (the default for
every other convention), the same capture passes the retry budget its three failed searches
exhausted and the disclosure check of an answer that hid its failed search: the false passes
the setting exists to prevent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_oracles.grade.loader import load_contract
from otel_oracles.mapping import load_conventions
from otel_oracles.model.result import Outcome
from otel_oracles.pipeline import grade_trace, read_traces

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO / "tests" / "testdata" / "traces" / "mirascope"
SUPPORT = load_contract(REPO / "examples" / "contracts" / "support-rag.yaml").model_copy(
    update={"match": None}
)


def outcomes(scenario: str, extra: list[Path]) -> dict[str, Outcome]:
    problems: list = []
    traces = list(read_traces([str(TRACES / f"{scenario}.otlp.json")], problems))
    assert problems == [] and len(traces) == 1
    conventions = load_conventions(extra)
    [(verdict, trajectory)] = grade_trace(traces[0], [SUPPORT], conventions)
    assert trajectory.unmapped_spans == {}
    return {r.name: r.outcome for r in verdict.results}


@pytest.fixture
def results_trusted(tmp_path: Path) -> list[Path]:
    """``mirascope.yaml`` with its results read as showing failures (the default)."""
    text = (REPO / "otel_oracles" / "conventions" / "mirascope.yaml").read_text()
    assert "results_show_failures: false" in text
    changed = tmp_path / "mirascope.yaml"
    changed.write_text(text.replace("results_show_failures: false", "results_show_failures: true"))
    return [changed]


@pytest.mark.parametrize(
    ("scenario", "check", "false_pass"),
    [
        ("c_retry_exhausted", "search-retry", Outcome.PASS),  # truth: budget exhausted
        ("j_undisclosed_failure", "degraded-disclosed", Outcome.PASS),  # truth: invariant
    ],
)
def test_unknown_outcomes_are_missing_evidence_not_passes(
    scenario: str, check: str, false_pass: Outcome, results_trusted: list[Path]
) -> None:
    assert outcomes(scenario, [])[check] == Outcome.MISSING_EVIDENCE
    assert outcomes(scenario, results_trusted)[check] == false_pass


def test_each_outcome_is_unknown_and_each_result_kept() -> None:
    """The failed search and the retry that worked read alike: both outcomes unknown, both
    results kept for the checks that read results (citations, documents)."""
    problems: list = []
    [trace] = read_traces([str(TRACES / "b_tool_retry.otlp.json")], problems)
    [(_, trajectory)] = grade_trace(trace, [SUPPORT], load_conventions())
    calls = trajectory.tool_calls()
    assert [c.status for c in calls] == ["unset", "unset"]
    assert all(c.attributes.get("outcome_unknown") for c in calls)
    assert "upstream search service timed out" in str(calls[0].result)
