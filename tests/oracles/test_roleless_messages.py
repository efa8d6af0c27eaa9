"""A message recorded without its role (a tracer writing less) could be any turn of the
conversation: results linked to the model's calls by position (tracers that record no call
ids: Mistral's OpenInference instrumentation, AgentOps) are then unknown, never another
call's result. Before, the assistant turn without its role shifted the count of the model's
turns, the failed search's error result went unlinked and ``search-retry`` passed (the
truth: a retry, tolerated) (DESIGN section 8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_oracles.model.result import Outcome
from tests.oracles.test_contracts_on_real_traces import TRACES, contract_named, grade_files
from tests.support.unknown_spans import without_attributes


@pytest.mark.parametrize(
    ("source", "key"),
    [
        ("mistral-openinference", "llm.input_messages.2.message.role"),
        ("agentops-crewai", "gen_ai.prompt.2.role"),
    ],
)
def test_a_turn_without_its_role_links_no_result_by_position(
    source: str, key: str, tmp_path: Path
) -> None:
    path = TRACES / source / "b_tool_retry.otlp.json"
    contract = contract_named("support-rag")
    verdict, _ = grade_files([path], contract)[0]
    assert {r.name: r.outcome for r in verdict.results}["search-retry"] == Outcome.TOLERATED
    derived = without_attributes(path, tmp_path / "role-less.jsonl", {key})
    verdict, _ = grade_files([derived], contract)[0]
    result = {r.name: r for r in verdict.results}["search-retry"]
    assert result.outcome == Outcome.MISSING_EVIDENCE, result.message
    assert "outcomes unknown" in result.message
