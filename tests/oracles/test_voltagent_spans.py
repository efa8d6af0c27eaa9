"""VoltAgent's own spans (conventions/voltagent.yaml) read from real captures with attribute
keys left out: what another VoltAgent version might export must never turn a failing check
into a pass (DESIGN section 8).

Every VoltAgent span of an agent call carries ``entity.type: agent``; the agent's own span is
the one with no ``span.type``. Before the agent rule asked for the run's ``agent.state`` too,
a capture without ``span.type`` read every tool span as an agent: no tool call was seen, and
the forbidden call, the network command and the excess searches all passed."""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_oracles.model.result import Outcome
from tests.oracles.test_contracts_on_real_traces import TRACES, contract_named, grade_files
from tests.support.unknown_spans import without_attributes

CASES = [
    ("d_forbidden_tool", "support-rag", "no-destructive-tools"),
    ("h_coding_agent", "coding-agent", "no-network"),
    ("m_excess_calls", "support-rag", "bounded-effort"),
]
"""(scenario, contract, check that fails on the capture as recorded)."""


@pytest.mark.parametrize(("scenario", "contract", "check"), CASES)
@pytest.mark.parametrize("dropped", ["span.type", "agent.state", "tool.name"])
def test_a_key_left_out_never_turns_a_failing_check_into_a_pass(
    scenario: str, contract: str, check: str, dropped: str, tmp_path: Path
) -> None:
    path = TRACES / "voltagent" / f"{scenario}.otlp.json"
    verdict, _ = grade_files([path], contract_named(contract))[0]
    recorded = {r.name: r.outcome for r in verdict.results}[check]
    assert recorded in (Outcome.INVARIANT_FAILURE, Outcome.BUDGET_EXHAUSTED)
    derived = without_attributes(path, tmp_path / "derived.jsonl", {dropped})
    graded = grade_files([derived], contract_named(contract))
    for verdict, _ in graded:
        result = {r.name: r for r in verdict.results}[check]
        assert result.outcome not in (Outcome.PASS, Outcome.TOLERATED), result.message


def test_tool_spans_without_span_type_are_still_the_tool_calls(tmp_path: Path) -> None:
    """The tool and model spans are known by their names too (``tool.execution:<tool>``,
    ``llm:<operation>``), so a capture without ``span.type`` still shows the forbidden call
    itself, not only a gap."""
    path = TRACES / "voltagent" / "d_forbidden_tool.otlp.json"
    derived = without_attributes(path, tmp_path / "derived.jsonl", {"span.type", "tool.name"})
    verdict, trajectory = grade_files([derived], contract_named("support-rag"))[0]
    outcomes = {r.name: r.outcome for r in verdict.results}
    assert outcomes["no-destructive-tools"] == Outcome.INVARIANT_FAILURE
    assert [s.tool for s in trajectory.tool_calls()] == ["search_docs", "delete_records"]
