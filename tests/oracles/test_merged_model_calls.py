"""A span that recorded several model calls, each over the last, cannot pass a count of
model calls: OpenInference's Google ADK instrumentor writes every call of an agent run onto
ADK's one ``invoke_agent`` span (``merged_model_calls`` in conventions/google-adk.yaml), so
the real ``openinference-google-adk`` capture shows one generation where ADK's own tracing
(``google-adk``, the same run) shows each call."""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_oracles.model.contract import Contract
from otel_oracles.model.result import Outcome
from otel_oracles.model.step import StepKind
from tests.support.one_check import grade_one_check
from tests.support.one_check import one_check_contract as contract


def grade(source: str, c: Contract) -> tuple[Outcome, str, list[StepKind]]:
    """The one check's outcome and message on ``b_tool_retry`` (two searches, three model
    calls in the run), and the trajectory's step kinds."""
    outcome, message, kinds, traces = grade_one_check(source, "b_tool_retry", c)
    assert traces == 1
    return outcome, message, kinds


MODEL_AND_TOOL_CALLS = "{type: max_steps, max: 4, name: steps}"


def test_the_same_run_fails_through_adk_tracing(tmp_path: Path) -> None:
    """Three model calls and two tool calls: over a budget of four."""
    outcome, message, kinds = grade("google-adk", contract(tmp_path, MODEL_AND_TOOL_CALLS))
    assert kinds.count(StepKind.GENERATION) == 3
    assert outcome == Outcome.INVARIANT_FAILURE, message


def test_merged_calls_make_the_count_missing_evidence_never_a_pass(tmp_path: Path) -> None:
    """One generation and two tool calls are mapped: three steps would pass, but the
    generation may stand for any number of calls."""
    outcome, message, kinds = grade(
        "openinference-google-adk", contract(tmp_path, MODEL_AND_TOOL_CALLS)
    )
    assert kinds.count(StepKind.GENERATION) == 1
    assert outcome == Outcome.MISSING_EVIDENCE
    assert "at least 3 steps" in message and "several model calls" in message


@pytest.mark.parametrize(
    ("check", "want"),
    [
        ("{type: max_steps, max: 4, kinds: [tool_call], name: steps}", Outcome.PASS),
        ("{type: max_steps, max: 1, name: steps}", Outcome.INVARIANT_FAILURE),
    ],
    ids=["tool-calls-only", "over-even-counted-once"],
)
def test_only_a_pass_that_counts_the_merged_calls_is_withheld(
    tmp_path: Path, check: str, want: Outcome
) -> None:
    """Counting tool calls only, the merged span does not matter; a count already over the
    budget with each merged step counted once fails as it stands."""
    outcome, message, _ = grade("openinference-google-adk", contract(tmp_path, check))
    assert outcome == want, message
