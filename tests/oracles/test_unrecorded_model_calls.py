"""A trace that records agents and tools but no model call cannot pass a count of model calls:
autogen-core's own spans (the ``autogen-native`` capture) hold agent runs and tool calls only,
while OpenInference on the same AutoGen run (``autogen-openinference``) records each model
call. Held out on ``n_handback`` (four model calls, one search, two transfers), the multi-agent
contract's ``max_steps`` counted one step on autogen-core's spans and passed."""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_oracles.model.contract import Contract
from otel_oracles.model.result import Outcome
from otel_oracles.model.step import StepKind
from tests.support.one_check import grade_one_check
from tests.support.one_check import one_check_contract as contract


def grade(source: str, c: Contract) -> tuple[Outcome, str, list[StepKind]]:
    """The one check's outcome and message on ``n_handback``, and the trajectory's kinds."""
    # AutoGen writes each agent's creation as a trace of its own, which holds no run.
    outcome, message, kinds, _ = grade_one_check(source, "n_handback", c)
    return outcome, message, kinds


MODEL_AND_TOOL_CALLS = "{type: max_steps, max: 4, name: steps}"


def test_the_same_run_fails_where_its_model_calls_are_recorded(tmp_path: Path) -> None:
    """Four model calls and one tool call: over a budget of four."""
    outcome, message, kinds = grade(
        "autogen-openinference", contract(tmp_path, MODEL_AND_TOOL_CALLS)
    )
    assert kinds.count(StepKind.GENERATION) == 4
    assert outcome == Outcome.INVARIANT_FAILURE, message


def test_no_recorded_model_call_makes_the_count_missing_evidence_never_a_pass(
    tmp_path: Path,
) -> None:
    """One tool call is the only counted step: it would pass, but the model calls that asked
    for it, and handed the run between agents, are not in the trace."""
    outcome, message, kinds = grade("autogen-native", contract(tmp_path, MODEL_AND_TOOL_CALLS))
    assert StepKind.GENERATION not in kinds and kinds.count(StepKind.TOOL_CALL) == 1
    assert outcome == Outcome.MISSING_EVIDENCE, message
    assert "at least 1 steps" in message and "no model call was recorded" in message


@pytest.mark.parametrize(
    ("check", "want"),
    [
        ("{type: max_steps, max: 1, kinds: [tool_call], name: steps}", Outcome.MISSING_EVIDENCE),
        ("{type: max_steps, max: 0, name: steps}", Outcome.INVARIANT_FAILURE),
    ],
    ids=["tool-calls-only", "over-without-the-model-calls"],
)
def test_only_a_count_already_over_its_budget_stands(
    tmp_path: Path, check: str, want: Outcome
) -> None:
    """Counting tool calls only, the tool spans list every call, but nothing shows the run
    ended on the agent's own answer rather than at its framework's limit (no model call is
    recorded: ``stopped_short``), so the count is a lower bound: within budget it is missing
    evidence. A count already over the budget fails as it stands."""
    outcome, message, _ = grade("autogen-native", contract(tmp_path, check))
    assert outcome == want, message
    if want == Outcome.MISSING_EVIDENCE:
        assert "records no model call" in message, message
