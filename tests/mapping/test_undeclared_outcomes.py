"""A tool's own status value that no convention declares (``tool_outcomes``) is an unknown
outcome, never a success; a ``status`` written inside the tool's result payload is free text
where only declared values mean anything (``Source.undeclared``).

Before, any value in neither list left the call looking successful when its span ended OK
or unset: a tracer writing ``gen_ai.tool.status: timeout`` (or ``cancelled``, ``500``...)
on a failed call graded ``tool_errors`` a pass.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from otel_oracles.assemble._tree import build_trace
from otel_oracles.errors import ConventionError
from otel_oracles.grade.evidence import Evidence, find_gaps
from otel_oracles.mapping import ConventionSet, load_conventions, map_trace
from otel_oracles.model.result import InputProblem, Outcome
from otel_oracles.model.span import SpanRecord, StatusCode, Trace
from otel_oracles.model.step import Step
from otel_oracles.pipeline import grade_trace, read_traces
from tests.support.one_check import TRACES, one_check_contract

TRACE = "0" * 31 + "7"
AGENT, TOOL = "a" * 16, "c" * 16
UNDECLARED = ["timeout", "cancelled", "rejected", "partial", "ERROR_TIMEOUT", "aborted", "500"]


def _span(span_id: str, parent: str, name: str, status: StatusCode, **attrs: Any) -> SpanRecord:
    return SpanRecord(TRACE, span_id, parent, name, start_ns=1, end_ns=9, attributes=attrs,
                      status_code=status)  # fmt: skip


def _agent() -> SpanRecord:
    """The agent span every trace here runs its one tool under (a new record each call)."""
    return _span(AGENT, "", "invoke_agent a", StatusCode.UNSET,
                 **{"gen_ai.operation.name": "invoke_agent"})  # fmt: skip


def _trace(status: StatusCode = StatusCode.UNSET, **tool_attrs: Any) -> Trace:
    attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search_docs",
             "gen_ai.tool.call.result": '{"documents": ["doc-1"]}', **tool_attrs}  # fmt: skip
    spans = [
        _agent(),
        _span(TOOL, AGENT, "execute_tool search_docs", status, **attrs),
    ]  # fmt: skip
    return build_trace(TRACE, spans)


def _call(trace: Trace, conventions: ConventionSet | None = None) -> Step:
    [call] = map_trace(trace, conventions or load_conventions()).tool_calls()
    return call


def _tool_errors(trace: Trace, tmp_path: Path) -> tuple[Outcome, str]:
    c = one_check_contract(tmp_path, "{type: tool_errors, max: 0}")
    [(verdict, _)] = grade_trace(trace, [c], load_conventions())
    [result] = verdict.results
    return result.outcome, result.message


# ---- a status attribute of the tool's own -----------------------------------------------------


@pytest.mark.parametrize("value", [*UNDECLARED, 500])
@pytest.mark.parametrize("span_status", [StatusCode.UNSET, StatusCode.OK])
@pytest.mark.parametrize("key", ["gen_ai.tool.status", "gen_ai.tool.call.outcome"])
def test_an_undeclared_status_value_is_an_unknown_outcome(
    value: Any, span_status: StatusCode, key: str
) -> None:
    call = _call(_trace(span_status, **{key: value}))
    assert call.status == "unset"
    assert call.attributes["outcome_unknown"] is True
    assert call.attributes["outcome_undeclared"] == str(value)


@pytest.mark.parametrize("value", UNDECLARED)
def test_tool_errors_is_missing_evidence_naming_the_value(value: str, tmp_path: Path) -> None:
    outcome, message = _tool_errors(_trace(**{"gen_ai.tool.status": value}), tmp_path)
    assert outcome == Outcome.MISSING_EVIDENCE, message
    assert f"status value(s) {value!r}" in message


@pytest.mark.parametrize(
    ("value", "status"),
    [("success", "ok"), ("Completed", "ok"), ("error", "error"), ("FAILED", "error"),
     ("denied", "error"), ("skipped", "error")],
)  # fmt: skip
def test_declared_values_keep_their_meaning(value: str, status: str) -> None:
    call = _call(_trace(**{"gen_ai.tool.status": value}))
    assert call.status == status
    assert "outcome_unknown" not in call.attributes


def test_a_failed_span_stays_failed_whatever_its_status_value() -> None:
    call = _call(_trace(StatusCode.ERROR, **{"gen_ai.tool.status": "timeout"}))
    assert call.status == "error"
    assert "outcome_unknown" not in call.attributes


def test_an_error_shaped_result_still_fails_the_call() -> None:
    trace = _trace(**{"gen_ai.tool.status": "timeout", "gen_ai.tool.call.result": '{"error": "x"}'})
    assert _call(trace).status == "error"


def test_without_a_status_value_the_span_decides() -> None:
    call = _call(_trace())
    assert call.status == "ok"
    assert "outcome_unknown" not in call.attributes


def _read(source: str, scenario: str) -> Trace:
    problems: list[InputProblem] = []
    [trace] = read_traces([str(TRACES / source / f"{scenario}.otlp.json")], problems)
    assert problems == []
    return trace


def _with_status(trace: Trace, key: str, old: str, new: str) -> Trace:
    """Every span's ``key`` of value ``old`` rewritten to ``new``, and the span status and
    exception events of those spans dropped: a tracer whose only failure signal is a
    status value the conventions do not know."""
    spans = [
        dataclasses.replace(
            s,
            attributes={**s.attributes, key: new},
            status_code=StatusCode.UNSET,
            status_message="",
            events=[],
        )
        if s.attributes.get(key) == old
        else s
        for s in trace.spans
    ]
    return build_trace(trace.trace_id, spans)


@pytest.mark.parametrize(
    ("source", "key", "old"),
    [
        ("strands", "gen_ai.tool.status", "error"),
        ("strands-js", "gen_ai.tool.status", "error"),
    ],
)
def test_a_real_failure_under_an_unknown_status_value_is_no_pass(
    source: str, key: str, old: str, tmp_path: Path
) -> None:
    """``b_tool_retry``'s first search failed. Written as ``timeout`` with nothing else to
    show it, the call's outcome is unknown: ``tool_errors`` is missing evidence naming the
    value, where it passed before."""
    trace = _with_status(_read(source, "b_tool_retry"), key, old, "timeout")
    calls = map_trace(trace, load_conventions()).tool_calls("search_docs")
    assert [c.status for c in calls] == ["unset", "ok"]
    outcome, message = _tool_errors(trace, tmp_path)
    assert outcome == Outcome.MISSING_EVIDENCE, message
    assert "'timeout'" in message


def test_a_real_agentops_status_the_vocabulary_lacks_is_unknown(tmp_path: Path) -> None:
    """AgentOps writes ``tool.status: succeeded``; any other word is no success."""
    trace = _with_status(_read("agentops-openai-agents", "a_happy"), "tool.status",
                         "succeeded", "rejected")  # fmt: skip
    [call] = map_trace(trace, load_conventions()).tool_calls("search_docs")
    assert call.status == "unset" and call.attributes["outcome_undeclared"] == "rejected"
    gaps = find_gaps(["tool_outcomes"], map_trace(trace, load_conventions()))
    assert gaps and "'rejected'" in gaps[0]


def test_a_real_langfuse_level_default_is_no_failure() -> None:
    """Langfuse writes ``langfuse.observation.level``: DEFAULT on a tool that ran, ERROR on
    one that raised (both declared); WARNING is neither."""
    trace = _read("langfuse-openai", "b_tool_retry")
    failed = [s for s in trace.spans if s.attributes.get("langfuse.observation.level") == "ERROR"]
    assert failed
    levels = {"DEFAULT": "ok", "DEBUG": "ok", "WARNING": "unset"}
    for level, status in levels.items():
        rewritten = _with_status(trace, "langfuse.observation.level", "ERROR", level)
        t = map_trace(rewritten, load_conventions())
        first = t.tool_calls("search_docs")[0]
        assert first.status == status, level


# ---- a status inside the result payload --------------------------------------------------------


def _adk_trace(response: Any) -> Trace:
    attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search_docs",
             "gcp.vertex.agent.tool_response": json.dumps(response)}  # fmt: skip
    spans = [
        _agent(),
        _span(TOOL, AGENT, "execute_tool search_docs", StatusCode.OK, **attrs),
    ]  # fmt: skip
    for s in spans:
        s.scope_name = "gcp.vertex.agent"
    return build_trace(TRACE, spans)


@pytest.mark.parametrize(
    ("response", "status"),
    [
        ({"status": "found 3 documents", "documents": ["doc-1"]}, "ok"),
        ({"status": "degraded: index timeout", "documents": ["doc-1"]}, "ok"),
        ({"status": "error", "error_message": "index down"}, "error"),
    ],
)
def test_a_status_inside_the_payload_is_free_text(response: Any, status: str) -> None:
    """Google ADK documents a tool's ``status`` key as how it reports its outcome, but the
    tool's author writes it: only a declared value (``error``) says anything."""
    call = _call(_adk_trace(response))
    assert call.status == status
    assert "outcome_unknown" not in call.attributes


def test_real_adk_degraded_searches_keep_their_reading() -> None:
    """ADK's ``f_degraded`` search answers ``{"status": "degraded: ..."}``: a call that ran,
    its result empty (the degraded dependency ``degraded_answer`` judges)."""
    for source in ("google-adk", "adk-java"):
        t = map_trace(_read(source, "f_degraded"), load_conventions())
        last = t.tool_calls("search_docs")[-1]
        assert last.status == "ok", source
        assert last.attributes.get("result_empty") is True, source


# ---- the choice written in the rule --------------------------------------------------------------


def _custom(tmp_path: Path, outcome: str) -> ConventionSet:
    (tmp_path / "custom.yaml").write_text(
        "name: custom\npriority: 90\nrules:\n"
        "  - id: tool\n    step: tool_call\n"
        "    match: {all: [{attr: custom.kind, equals: tool}]}\n"
        "    fields:\n      tool: {attr: custom.tool}\n"
        f"      outcome: {outcome}\n"
    )
    return load_conventions([tmp_path / "custom.yaml"])


def _custom_trace(**attrs: Any) -> Trace:
    spans = [
        _agent(),
        _span(TOOL, AGENT, "tool", StatusCode.OK,
              **{"custom.kind": "tool", "custom.tool": "search_docs", **attrs}),
    ]  # fmt: skip
    return build_trace(TRACE, spans)


@pytest.mark.parametrize(
    ("outcome", "attrs", "status"),
    [
        ("{attr: custom.status}", {"custom.status": "timeout"}, "unset"),
        ("{attr: custom.status, undeclared: ignored}", {"custom.status": "timeout"}, "ok"),
        ("{attr: custom.out, parse: json, key: state}", {"custom.out": '{"state": "x"}'}, "ok"),
        ("{attr: custom.out, parse: json, key: state, undeclared: unknown}",
         {"custom.out": '{"state": "x"}'}, "unset"),
        ("{attr: custom.out, parse: json, key: state, undeclared: unknown}",
         {"custom.out": '{"state": "error"}'}, "error"),
    ],
)  # fmt: skip
def test_undeclared_defaults_by_key_and_can_be_written(
    outcome: str, attrs: dict[str, Any], status: str, tmp_path: Path
) -> None:
    assert _call(_custom_trace(**attrs), _custom(tmp_path, outcome)).status == status


def test_the_first_source_with_a_value_decides_across_readings(tmp_path: Path) -> None:
    """Sources read alike are one plan field each run: the order of the list still decides."""
    sources = "[{attr: custom.out, parse: json, key: state}, {attr: custom.status}]"
    conventions = _custom(tmp_path, sources)
    both = _custom_trace(**{"custom.out": '{"state": "x"}', "custom.status": "timeout"})
    assert _call(both, conventions).status == "ok"  # the payload's free text came first
    alone = _custom_trace(**{"custom.status": "timeout"})
    assert _call(alone, conventions).status == "unset"


def test_undeclared_is_for_outcome_sources_only(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(
        "name: bad\nrules:\n  - id: tool\n    step: tool_call\n"
        "    match: {all: [{attr: custom.kind, equals: tool}]}\n"
        "    fields:\n      tool: {attr: custom.tool, undeclared: unknown}\n"
    )
    with pytest.raises(ConventionError, match="undeclared applies to outcome sources only"):
        load_conventions([tmp_path / "bad.yaml"])


def test_evidence_probe_names_the_undeclared_values() -> None:
    t = map_trace(_trace(**{"gen_ai.tool.status": "cancelled"}), load_conventions())
    [gap] = find_gaps(["tool_outcomes"], t)
    assert "'cancelled'" in gap and "tool_outcomes" in gap
    assert Evidence(t).nameless_calls() == ()
