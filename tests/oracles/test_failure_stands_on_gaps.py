"""A failure the missing evidence cannot overturn stands (``failure_stands_on_gaps``).

Where a trace has gaps (a fragment of a run, tool names not recorded, a trace graded
incomplete on timeout) a check is ``missing_evidence``, which a contract with
``on_missing_evidence: warn`` accepts. For the checks whose recorded violation more steps
can never undo (a count already over its budget, a network command run, time or tokens
already spent) the failure stands; a count within budget stays ``missing_evidence``, never a
pass. Each case is a real capture, and each would read ``missing_evidence`` without the flag.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_oracles.mapping import load_conventions
from otel_oracles.model.contract import Contract
from otel_oracles.model.result import InputProblem, Outcome
from otel_oracles.pipeline import grade_trace, read_traces
from tests.support.one_check import TRACES, one_check_contract
from tests.support.unknown_spans import without_attributes


def _outcomes(path: Path, c: Contract, incomplete: bool = False) -> list[tuple[Outcome, str]]:
    """The one check's outcome and message on every trajectory of ``path`` (a trace per
    fragment or per turn), in file order; with ``incomplete`` each trace is graded as the
    server grades one released on ``max_trace_age``."""
    problems: list[InputProblem] = []
    traces = list(read_traces([str(path)], problems))
    assert problems == []
    out: list[tuple[Outcome, str]] = []
    for trace in traces:
        trace.incomplete = incomplete
        for verdict, _ in grade_trace(trace, [c], load_conventions()):
            [result] = verdict.results
            out.append((result.outcome, result.message))
    return out


@pytest.mark.parametrize("check", ["{type: max_tool_calls, max: 0}", "{type: max_steps, max: 1}"])
def test_a_count_over_budget_on_a_later_turns_fragment_fails(check: str, tmp_path: Path) -> None:
    """Strands' second conversation turn, traced apart with the first turn's tool calls
    handed back in its model input, is a fragment: tool names are missing evidence for the
    whole run. Its recorded ``delete_records`` call (and the model calls around it) are
    already over the budget, and the rest of the run could only add to them."""
    c = one_check_contract(tmp_path, check)
    path = TRACES / "strands" / "p_second_turn.otlp.json"
    [(first, _), (second, message)] = _outcomes(path, c)
    assert first == Outcome.INVARIANT_FAILURE  # the first turn's trace, whole and over budget
    assert second == Outcome.INVARIANT_FAILURE, message
    assert "other evidence missing" in message


def test_a_count_within_budget_on_a_fragment_stays_missing_evidence(tmp_path: Path) -> None:
    """The same fragment within budget is not a pass: the rest of the run may exceed it."""
    c = one_check_contract(tmp_path, "{type: max_tool_calls, max: 5}")
    path = TRACES / "strands" / "p_second_turn.otlp.json"
    [_, (second, message)] = _outcomes(path, c)
    assert second == Outcome.MISSING_EVIDENCE, message


def test_a_network_command_on_a_fragment_fails(tmp_path: Path) -> None:
    """OpenLIT's LlamaIndex instrumentation writes each model call as a trace of its own
    (fragments): the one whose model asked for a ``curl`` command records a network
    access, which no missing part of the run can take back."""
    c = one_check_contract(tmp_path, "{type: no_network}")
    path = TRACES / "openlit-llamaindex" / "h_coding_agent.otlp.json"
    outcomes = [o for o, _ in _outcomes(path, c)]
    assert Outcome.INVARIANT_FAILURE in outcomes
    assert Outcome.PASS not in outcomes


@pytest.mark.parametrize(
    ("check", "scenario"),
    [
        ("{type: tool_not_called, tool: [delete_records]}", "d_forbidden_tool"),
        ("{type: max_tool_calls, max: 0}", "a_happy"),
        ("{type: max_steps, max: 1}", "a_happy"),
        ("{type: tool_errors, max: 0}", "c_retry_exhausted"),
        ("{type: tokens, max_total_tokens: 1}", "a_happy"),
        ("{type: latency, max_ms: 0.001}", "a_happy"),
    ],
)
def test_a_violation_recorded_before_the_timeout_fails_an_incomplete_trace(
    check: str, scenario: str, tmp_path: Path
) -> None:
    """A trace graded incomplete (its root not ended by ``max_trace_age``) holds some of its
    spans: what they record already over a limit stays over it whatever arrives later."""
    c = one_check_contract(tmp_path, check)
    path = TRACES / "google-adk" / f"{scenario}.otlp.json"
    [(outcome, message)] = _outcomes(path, c, incomplete=True)
    assert outcome == Outcome.INVARIANT_FAILURE, message
    assert "trace incomplete" in message


@pytest.mark.parametrize(
    "check",
    [
        "{type: tool_not_called, tool: [delete_records]}",
        "{type: max_tool_calls, max: 50}",
        "{type: tokens, max_total_tokens: 1000000000}",
        "{type: latency, max_ms: 1000000000}",
    ],
)
def test_an_incomplete_trace_within_its_limits_is_missing_evidence(
    check: str, tmp_path: Path
) -> None:
    """No violation recorded yet is no pass: the spans still to come may hold one."""
    c = one_check_contract(tmp_path, check)
    path = TRACES / "google-adk" / "a_happy.otlp.json"
    [(outcome, message)] = _outcomes(path, c, incomplete=True)
    assert outcome == Outcome.MISSING_EVIDENCE, message


@pytest.mark.parametrize(("limit", "want"), [(1, Outcome.INVARIANT_FAILURE), (3, None)])
def test_an_unnamed_call_and_its_named_request_count_once(
    limit: int, want: Outcome | None, tmp_path: Path
) -> None:
    """Without ``tool.name`` a LlamaIndex tool span is an unnamed call, and the model's
    request for it is a named call of its own: two steps for one call. Over a budget the
    two real calls exceed, the failure stands; a budget only the double count would exceed
    stays missing evidence (counting both would fail a run within it)."""
    c = one_check_contract(tmp_path, f"{{type: max_tool_calls, max: {limit}}}")
    source = TRACES / "llamaindex-openinference" / "d_forbidden_tool.otlp.json"
    derived = without_attributes(source, tmp_path / "no-tool-name.jsonl", {"tool.name"})
    [(outcome, message)] = _outcomes(derived, c)
    assert outcome == (want or Outcome.MISSING_EVIDENCE), message
