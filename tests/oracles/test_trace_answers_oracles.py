"""Answer oracles on hand-built trajectories: grounding, citations, degradation,
final-output patterns, schemas, handoffs, and missing evidence when content is off."""

from __future__ import annotations

import json

import pytest

from otel_oracles.grade.oracles import trace_common
from otel_oracles.model.result import Outcome
from otel_oracles.model.step import StepKind
from tests.oracles.trace_builders import check, gen, tool, traj

DOCS = {"documents": [{"id": "doc-17"}, {"id": "doc-42"}]}
EMPTY = {"documents": [], "status": "degraded: index timeout, 0 results"}


def support_run(answer: str | None, result: object = DOCS, **tool_kw: object) -> object:
    return traj(
        gen(None, tool_calls=["search_docs"]),
        tool("search_docs", {"query": "refund"}, result, **tool_kw),
        gen(answer),
    )


def test_citations_grounded_passes_when_every_id_came_from_a_tool() -> None:
    res = check({"type": "citations_grounded"}, support_run("Refund within 30 days [doc-42]."))
    assert res.outcome == Outcome.PASS, res.message
    assert res.details["grounded"] == {"doc-42": 1}
    assert set(res.span_ids) == {"s1", "s2"}


def test_citations_grounded_fails_on_a_fabricated_id_and_points_at_the_answer() -> None:
    res = check({"type": "citations_grounded"}, support_run("Refund within 45 days [doc-99]."))
    assert res.outcome == Outcome.INVARIANT_FAILURE
    assert "doc-99" in res.message and "doc-17, doc-42" in res.message
    assert res.span_ids == ["s2"]


def test_citations_grounded_matches_whole_ids_only() -> None:
    res = check(
        {"type": "citations_grounded"},
        support_run("See [doc-4].", result={"documents": [{"id": "doc-42"}]}),
    )
    assert res.outcome == Outcome.INVARIANT_FAILURE


def test_citations_grounded_uses_retrieval_documents_and_regex_groups() -> None:
    t = traj(
        tool("kb", None, None, kind=StepKind.RETRIEVAL, documents=[{"id": "KB-7"}]),
        gen("per source:KB-7"),
    )
    res = check({"type": "citations_grounded", "pattern": r"source:(KB-\d+)"}, t)
    assert res.outcome == Outcome.PASS and res.details["cited"] == ["KB-7"]


def test_citations_grounded_is_missing_when_results_were_not_captured() -> None:
    res = check({"type": "citations_grounded"}, support_run("[doc-42]", result="__REDACTED__"))
    assert res.outcome == Outcome.MISSING_EVIDENCE
    assert "results not captured" in res.message


def test_citations_grounded_ignores_results_produced_after_the_answer() -> None:
    t = traj(gen("[doc-42]"), tool("search_docs", {}, DOCS))
    assert check({"type": "citations_grounded"}, t).outcome == Outcome.INVARIANT_FAILURE


def _handed(result: str) -> list[dict[str, object]]:
    """A model call's input holding one tool result (its call made outside the trace)."""
    return [
        {"role": "user", "parts": [{"type": "text", "content": "refunds?"}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": result}]},
    ]


def test_citations_grounded_reads_results_handed_to_the_model_after_the_calls() -> None:
    # doc-7 is in no call's result, only in what the answering model call was handed: the
    # model calls are read once the calls' results are searched through.
    t = traj(
        tool("search_docs", {"query": "refund"}, DOCS),
        gen("Per [doc-7] and [doc-42].", input_messages=_handed("see doc-7")),
    )
    res = check({"type": "citations_grounded"}, t)
    assert res.outcome == Outcome.PASS, res.message
    assert res.details["grounded"] == {"doc-42": 0, "doc-7": 1}


def test_citations_grounded_ignores_results_handed_to_a_later_model_call() -> None:
    # The answer is delivered by a final-answer tool; a model call that ended after it was
    # handed doc-7 too late to ground it.
    t = traj(
        tool("search_docs", {"query": "refund"}, DOCS),
        tool("final_answer", {"answer": "Per [doc-7]."}, None),
        gen("done", input_messages=_handed("see doc-7")),
        final_answer_tools=("final_answer",),
    )
    res = check({"type": "citations_grounded"}, t)
    assert res.outcome == Outcome.INVARIANT_FAILURE, res.message
    assert res.details["ungrounded"] == ["doc-7"]


def test_citations_grounded_without_times_goes_by_step_order() -> None:
    # No step records a time: a result is earlier than the answer by step order only, and
    # the answer's own step or a later call grounds nothing.
    before = traj(
        tool("search_docs", {}, DOCS), gen("[doc-42]"), tool("x", {}, "doc-7"), timed=False
    )
    assert check({"type": "citations_grounded"}, before).outcome == Outcome.PASS
    after = traj(gen("[doc-7]"), tool("search_docs", {}, "doc-7"), timed=False)
    assert check({"type": "citations_grounded"}, after).outcome == Outcome.INVARIANT_FAILURE


def test_citations_grounded_lists_each_returned_id_once_across_repeated_results() -> None:
    # The same result handed to two model calls, and one call's own: the ids returned are
    # listed once each, sorted, whatever text they came from.
    t = traj(
        tool("search_docs", {"query": "refund"}, DOCS),
        gen(None, input_messages=_handed("see doc-7 and doc-42")),
        gen("Per [doc-99].", input_messages=_handed("see doc-7 and doc-42")),
    )
    res = check({"type": "citations_grounded"}, t)
    assert res.outcome == Outcome.INVARIANT_FAILURE, res.message
    assert res.details["returned"] == ["doc-17", "doc-42", "doc-7"]
    assert "(ids returned: doc-17, doc-42, doc-7)" in res.message


class _CountingEncoder(json.JSONEncoder):
    """``result_text``'s encoder, counting the structured results it writes."""

    written = 0

    def encode(self, o: object) -> str:
        type(self).written += 1
        return super().encode(o)


def test_a_failures_returned_ids_of_structured_results_are_listed_by_the_core(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # ``doc-\d+`` finds the same ids in the indented JSON the search stands in with as in
    # the compact JSON ``result_text`` writes: the failure lists them without Python's
    # encoder. ``\[(\d+)`` does not (``[1`` is ``[`` and a newline before ``1`` indented),
    # so its listing is read from the compact text.
    monkeypatch.setattr(_CountingEncoder, "written", 0)
    monkeypatch.setattr(
        trace_common, "_RESULT_ENCODER", _CountingEncoder(ensure_ascii=False, default=str)
    )
    result = {"ids": ["doc-17", "doc-42"], "n": [1, 2], "pages": [[7, 8]]}
    res = check({"type": "citations_grounded"}, support_run("Per [doc-99].", result=result))
    assert res.outcome == Outcome.INVARIANT_FAILURE, res.message
    assert res.details["returned"] == ["doc-17", "doc-42"]
    assert _CountingEncoder.written == 0
    listed = check(
        {"type": "citations_grounded", "pattern": r"\[(\d+)"},
        support_run("Per [7] and [9].", result=result),
    )
    assert listed.outcome == Outcome.INVARIANT_FAILURE, listed.message
    assert listed.details["ungrounded"] == ["9"]
    assert listed.details["returned"] == ["1", "7"]
    assert "(ids returned: 1, 7)" in listed.message
    assert _CountingEncoder.written > 0


def test_content_off_answer_is_missing_evidence_for_content_checks() -> None:
    # Structure-only messages (pydantic-ai with include_content=False): a text part, no text.
    off = traj(
        gen(None, tool_calls=["search_docs"]),
        tool("search_docs", None, None),
        gen(None, output_messages=[{"role": "assistant", "parts": [{"type": "text"}]}]),
    )
    for spec in (
        {"type": "citations_grounded"},
        {"type": "citation_required"},
        {"type": "degraded_answer"},
        {"type": "final_output", "must_match": "doc"},
        {"type": "schema_valid", "schema": {"type": "object"}},
    ):
        res = check(spec, off)
        assert res.outcome == Outcome.MISSING_EVIDENCE, (spec, res.message)
        assert "final output not captured" in res.message and "span s2" in res.message
    # Structural checks still judge normally.
    assert check({"type": "tool_not_called", "tool": "delete_records"}, off).outcome == Outcome.PASS
    assert check({"type": "max_tool_calls", "max": 1}, off).outcome == Outcome.PASS


@pytest.mark.parametrize("placeholder", ["__REDACTED__", "[REDACTED]", ""])
def test_redaction_placeholders_are_absence_not_content(placeholder: str) -> None:
    t = support_run(placeholder)
    assert (
        check({"type": "final_output", "must_not_match": "x"}, t).outcome
        == Outcome.MISSING_EVIDENCE
    )


def test_citation_required_and_its_degraded_exemption() -> None:
    uncited = support_run("Retrieval was degraded; I cannot cite a source.", result=EMPTY)
    assert check({"type": "citation_required"}, uncited).outcome == Outcome.INVARIANT_FAILURE
    exempt = check({"type": "citation_required", "unless_degraded": True}, uncited)
    assert exempt.outcome == Outcome.PASS and "degraded" in exempt.message
    # The exemption needs real degradation, not an answer that merely claims it.
    claimed = support_run("Retrieval was degraded; I cannot cite a source.")
    assert (
        check({"type": "citation_required", "unless_degraded": True}, claimed).outcome
        == Outcome.INVARIANT_FAILURE
    )
    two = check({"type": "citation_required", "min": 2}, support_run("[doc-42] and [doc-17]"))
    assert two.outcome == Outcome.PASS


def test_degraded_answer_disclosed_is_tolerated() -> None:
    t = support_run("Note: retrieval was degraded, so I cannot cite a source.", result=EMPTY)
    res = check({"type": "degraded_answer"}, t, layer="tolerances")
    assert res.outcome == Outcome.TOLERATED and res.used == 1, res.message
    assert "s1" in res.span_ids


def test_degraded_answer_without_disclosure_is_a_rule_breach_even_as_a_tolerance() -> None:
    t = support_run("Refunds are within 30 days.", result=EMPTY)
    res = check({"type": "degraded_answer"}, t, layer="tolerances")
    assert res.outcome == Outcome.INVARIANT_FAILURE
    assert "does not disclose" in res.message


def test_degraded_answer_custom_disclosure_and_declared_attribute() -> None:
    t = traj(
        tool("search_docs", {}, DOCS, attributes={"retrieval.degraded": True}),
        gen("Results may be partial (stale index). Refund within 30 days [doc-42]."),
    )
    spec = {
        "type": "degraded_answer",
        "degraded_attribute": "retrieval.degraded",
        "must_disclose": "(?i)partial",
    }
    res = check(spec, t, layer="tolerances")
    assert res.outcome == Outcome.TOLERATED and "retrieval.degraded" in res.message


def test_degraded_answer_timeout_and_error_results() -> None:
    timed_out = support_run(
        "The search timed out, I cannot answer.",
        result=None,
        status="error",
        error_type="TimeoutError",
    )
    res = check({"type": "degraded_answer"}, timed_out)
    assert res.outcome == Outcome.PASS and "timed out" in res.message
    err = support_run(
        "I do not know: the search failed.",
        result='{"error": "SearchBackendError"}',
        synthesized=True,
    )
    assert check({"type": "degraded_answer"}, err).outcome == Outcome.PASS


def test_recovered_failure_is_a_retry_not_a_degradation() -> None:
    t = traj(
        tool("search_docs", {}, None, status="error"),
        tool("search_docs", {}, DOCS),
        gen("Refund within 30 days [doc-42]."),
    )
    res = check({"type": "degraded_answer"}, t, layer="tolerances")
    assert res.outcome == Outcome.PASS and res.used == 0


def test_uncertainty_without_degradation_fails() -> None:
    res = check({"type": "degraded_answer"}, support_run("I do not know."))
    assert res.outcome == Outcome.INVARIANT_FAILURE
    assert "uncertainty not tied to degraded evidence" in res.message
    custom = {"type": "degraded_answer", "uncertainty_pattern": "(?i)no idea"}
    assert check(custom, support_run("No idea, sorry.")).outcome == Outcome.INVARIANT_FAILURE


def test_degraded_answer_only_watches_named_dependencies() -> None:
    t = traj(
        tool("audit_log", {}, []),
        tool("search_docs", {}, DOCS),
        gen("Refund within 30 days [doc-42]."),
    )
    assert (
        check({"type": "degraded_answer"}, t).outcome == Outcome.INVARIANT_FAILURE
    )  # audit_log empty
    scoped = {"type": "degraded_answer", "dependencies": ["search_*"]}
    assert check(scoped, t).outcome == Outcome.PASS


def test_degraded_answer_missing_when_a_dependency_result_is_unknown() -> None:
    res = check({"type": "degraded_answer"}, support_run("Refund within 30 days.", result=None))
    assert res.outcome == Outcome.MISSING_EVIDENCE and "search_docs" in res.message


def test_final_output_must_and_must_not_match() -> None:
    t = support_run("Refund within 30 days [doc-42].")
    assert (
        check(
            {"type": "final_output", "must_match": [r"\d+ days"], "must_not_match": "deleted"}, t
        ).outcome
        == Outcome.PASS
    )
    res = check({"type": "final_output", "must_not_match": [r"\[doc-\d+\]"]}, t)
    assert res.outcome == Outcome.INVARIANT_FAILURE and "[doc-42]" in res.message


def test_schema_valid_targets() -> None:
    t = traj(
        tool("search_docs", {"query": "x"}, '{"documents": []}'),
        gen('```json\n{"answer": "a"}\n```'),
    )
    obj = {"type": "object", "required": ["answer"]}
    assert check({"type": "schema_valid", "schema": obj}, t).outcome == Outcome.PASS
    args = {
        "type": "schema_valid",
        "target": "tool_arguments",
        "tools": ["search_*"],
        "schema": {"required": ["query", "k"]},
    }
    res = check(args, t)
    assert (
        res.outcome == Outcome.INVARIANT_FAILURE
        and res.span_ids == ["s0"]
        and "'k' is a required property" in res.message
    )
    results = {
        "type": "schema_valid",
        "target": "tool_results",
        "schema": {"required": ["documents"]},
    }
    assert check(results, t).outcome == Outcome.PASS
    prose = check({"type": "schema_valid", "schema": obj}, support_run("plain text"))
    assert prose.outcome == Outcome.INVARIANT_FAILURE and "not JSON" in prose.message


def test_handoff_via_handoff_span_and_via_nested_agent() -> None:
    native = traj(
        {"kind": StepKind.AGENT, "agent_name": "triage_agent"},
        {"kind": StepKind.HANDOFF, "from_agent": "triage_agent", "to_agent": "research_agent"},
        {"kind": StepKind.AGENT, "agent_name": "research_agent"},
    )
    ok = check({"type": "handoff", "required": ["triage_agent -> research_agent"]}, native)
    assert ok.outcome == Outcome.PASS and ok.span_ids == ["s1"]
    nested = traj(
        {"kind": StepKind.AGENT, "agent_name": "triage_agent", "start_ns": 0, "end_ns": 100},
        tool("delegate_to_research_agent", {}, "ok", start_ns=10, end_ns=90),
        {"kind": StepKind.AGENT, "agent_name": "research_agent", "start_ns": 20, "end_ns": 80},
        timed=False,
    )
    res = check(
        {"type": "handoff", "required": [{"from": "triage*", "to": "research_agent"}]}, nested
    )
    assert res.outcome == Outcome.PASS and res.details["transfers"][0]["via"] == "delegation"
    bad = check({"type": "handoff", "forbidden": ["* -> research_agent"]}, nested)
    assert bad.outcome == Outcome.INVARIANT_FAILURE and bad.span_ids == ["s2"]
    none = check(
        {"type": "handoff", "required": ["a -> b"]},
        traj({"kind": StepKind.AGENT, "agent_name": "a"}),
    )
    assert none.outcome == Outcome.INVARIANT_FAILURE and "did not happen" in none.message


def test_handoff_is_missing_evidence_without_agent_spans() -> None:
    res = check({"type": "handoff", "required": ["a -> b"]}, support_run("x"))
    assert res.outcome == Outcome.MISSING_EVIDENCE


ANSWER_CHECKS = (
    {"type": "evidence", "field": "final_output"},
    {"type": "citations_grounded"},
    {"type": "citation_required", "unless_degraded": True},
    {"type": "degraded_answer", "dependencies": ["search_docs"]},
    {"type": "final_output", "must_not_match": "x"},
)


def _ended_in_error(*last: dict[str, object]) -> object:
    """The search worked, then the run ended in an error (o_run_error): ``last`` are the
    steps after the search, the run's agent span (status ERROR) closing it."""
    return traj(
        gen(None, tool_calls=["search_docs"]),
        tool("search_docs", {"query": "refund"}, DOCS, status="ok"),
        *last,
        {"kind": StepKind.AGENT, "agent_name": "support", "status": "error",
         "error_type": "InternalServerError", "start_ns": 0, "end_ns": 90 * 1_000_000,
         "result": "Error code: 500 - The server had an error"},
    )  # fmt: skip


@pytest.mark.parametrize(
    ("last", "said"),
    [
        # The failed call recorded with status ERROR (most instrumentations).
        ([gen(None, status="error", error_type="InternalServerError", finish=[])], "failed"),
        # An OK span whose finish reason is GenAI's ``error`` (Mastra), its text empty.
        ([gen("", finish=["error"])], "failed"),
        # No span for the failed call: only the agent span shows the run ended in an error,
        # and its output is the error's text, which is no answer.
        ([], "the run ended in an error at step 2"),
        # The run raised after a call that gave text (an output guardrail, a crash after the
        # reply; or the failed call unrecorded and the one before it read as text): the run
        # returned nothing, so that text is no answer.
        ([gen("Within 30 days [doc-42].")], "the run ended in an error at step 3"),
    ],
    ids=["status-error", "finish-reason-error", "agent-span-only", "error-after-text"],
)
def test_a_run_that_ended_in_an_error_has_no_answer_to_pass(
    last: list[dict[str, object]], said: str
) -> None:
    """No answer check passes on a run that died before answering (not vacuously on an
    answer citing nothing, not on the error's text), and the message says the run failed
    rather than blaming content capture; the checks on what the run did still judge it, and
    a failed model call is no failed tool call."""
    t = _ended_in_error(*last)
    for spec in ANSWER_CHECKS:
        res = check(spec, t)
        assert res.outcome == Outcome.MISSING_EVIDENCE, (spec, res.outcome, res.message)
        assert "no final answer" in res.message and said in res.message, res.message
    assert check({"type": "tool_not_called", "tool": "delete_records"}, t).outcome == Outcome.PASS
    assert check({"type": "max_tool_calls", "max": 5}, t).outcome == Outcome.PASS
    assert check({"type": "tool_errors", "max": 0}, t).outcome == Outcome.PASS
    assert check({"type": "tool_retries", "max": 0}, t).outcome == Outcome.PASS


def test_an_agent_that_failed_and_was_recovered_from_does_not_end_the_run() -> None:
    """A helper agent whose span ended with an error before the run's last model call (the
    run went on and answered) leaves the answer as it is: only a failure at the run's end
    means the run returned nothing."""
    t = traj(
        gen(None, tool_calls=["search_docs"]),
        {"kind": StepKind.AGENT, "agent_name": "helper", "status": "error"},
        tool("search_docs", {"query": "refund"}, DOCS, status="ok"),
        gen("Within 30 days [doc-42]."),
    )
    assert check({"type": "citations_grounded"}, t).outcome == Outcome.PASS
    assert check({"type": "final_output", "must_match": "30 days"}, t).outcome == Outcome.PASS


def test_an_inner_agent_error_inside_a_run_that_ended_ok_keeps_the_answer() -> None:
    """AutoGen's inner run span ends with ``CancelledError`` after the reply, inside the
    agent span that ended OK: the run's own (outermost named) agent span says how it ended."""
    t = traj(
        {"kind": StepKind.AGENT, "agent_name": "support", "status": "ok", "start_ns": 0,
         "end_ns": 100 * 1_000_000},
        {"kind": StepKind.AGENT, "agent_name": "support", "status": "error", "start_ns": 1,
         "end_ns": 99 * 1_000_000, "error_type": "asyncio.exceptions.CancelledError"},
        gen(None, tool_calls=["search_docs"]),
        tool("search_docs", {"query": "refund"}, DOCS, status="ok"),
        gen("Within 30 days [doc-42]."),
    )  # fmt: skip
    assert check({"type": "final_output", "must_match": "30 days"}, t).outcome == Outcome.PASS
