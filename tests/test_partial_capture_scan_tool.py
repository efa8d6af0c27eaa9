"""``tools/partial_capture_scan.py`` leaves one attribute out of a real capture at a time: span
attributes, span-event attributes, and (for layouts that keep messages only in log records,
such as the GenAI ``EVENT_ONLY`` setting) log-record attributes and map-body keys. Each key it
lists must be one it can really leave out, and leaving it out must touch nothing else. It
scans every check whose truth (the real-trace matrix's expected outcome) is not a pass."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CAPTURE = ROOT / "tests" / "testdata" / "traces" / "openai-v2-events" / "d_forbidden_tool"


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "partial_capture_scan", ROOT / "tools" / "partial_capture_scan.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("partial_capture_scan", module)
    spec.loader.exec_module(module)
    return module


def _capture() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    doc = json.loads(CAPTURE.with_suffix(".otlp.json").read_text())
    lines = CAPTURE.with_name(CAPTURE.name + ".logs.otlp.jsonl").read_text().splitlines()
    return doc, [json.loads(line) for line in lines if line.strip()]


def _log_keys(tool: ModuleType, logs: list[dict[str, Any]]) -> set[str]:
    return {a["key"] for r in tool.log_records(logs) for a in r.get("attributes") or []}


def test_log_record_attributes_are_keys_and_leaving_one_out_touches_nothing_else() -> None:
    tool = _tool()
    doc, logs = _capture()
    keys = tool.keys_of(doc, logs)
    assert "log:gen_ai.input.messages" in keys and "log:gen_ai.output.messages" in keys
    span_keys = [k for k in keys if tool._where(k)[0] == ""]
    assert span_keys, "span attributes are listed too"

    doc_out, logs_out = tool.without(doc, logs, "log:gen_ai.output.messages")
    assert doc_out == doc  # spans untouched
    assert _log_keys(tool, logs_out) == _log_keys(tool, logs) - {"gen_ai.output.messages"}
    assert _log_keys(tool, logs) >= {"gen_ai.output.messages"}  # the input was not changed

    doc_out, logs_out = tool.without(doc, logs, span_keys[0])
    assert logs_out == logs
    assert span_keys[0] not in tool.keys_of(doc_out, [])


def test_a_span_attribute_with_a_colon_is_a_span_attribute() -> None:
    tool = _tool()
    assert tool._where("genkit:output") == ("", "genkit:output")
    assert tool._where("event:exception.message") == ("event", "exception.message")
    assert tool._where("log.body:content") == ("log.body", "content")


def test_the_capture_is_judged_on_its_log_records_and_fails_without_them() -> None:
    """The scan grades the capture with its log records: the forbidden call is seen only
    there, and leaving out the requested calls' messages leaves no pass behind."""
    tool = _tool()
    doc, logs = _capture()
    session = tool.GradingSession(
        [tool.matrix.contract_named("support-rag")], tool.load_conventions()
    )

    def outcome(spans: dict[str, Any], records: list[dict[str, Any]]) -> str:
        (verdict,) = tool.grade(spans, records, session)
        (result,) = [r for r in verdict.results if r.name == "no-destructive-tools"]
        return str(result.outcome.value)

    assert outcome(doc, logs) == "invariant_failure"
    assert outcome(*tool.without(doc, logs, "log:gen_ai.output.messages")) != "pass"
    assert outcome(doc, []) == "missing_evidence"


def test_every_truth_but_a_pass_is_scanned_from_the_real_trace_matrix() -> None:
    """The truths come from ``test_contracts_on_real_traces`` (``cases`` / ``expected``):
    a run that ended in an error has no answer (missing evidence), a retry within its budget
    is tolerated, and content off hides the answer; all of them are scanned, where the scan
    once took only the failing checks of the scenarios it listed."""
    tool = _tool()
    by_file = {path.name: truth for path, truth in tool.truths("mastra")}
    missing, tolerated, budget = (
        tool.Outcome.MISSING_EVIDENCE,
        tool.Outcome.TOLERATED,
        tool.Outcome.BUDGET_EXHAUSTED,
    )
    assert by_file["o_run_error.otlp.json"][("support-rag", "answer-captured")] == missing
    assert by_file["b_tool_retry.otlp.json"][("support-rag", "search-retry")] == tolerated
    assert by_file["c_retry_exhausted.otlp.json"][("support-rag", "search-retry")] == budget
    assert by_file["a_happy.nocontent.otlp.json"][("support-rag", "answer-captured")] == missing
    assert {missing, tolerated, budget, tool.Outcome.INVARIANT_FAILURE} == tool.NOT_PASSING
    # A capture the matrix grades apart (one trace per user turn) takes its graded outcomes.
    apart = {path.name: truth for path, truth in tool.truths("strands", ["p_second_turn"])}
    assert apart == {"p_second_turn.otlp.json": None, "p_second_turn.nocontent.otlp.json": None}


def test_a_tolerated_failure_that_turns_into_a_pass_is_listed() -> None:
    """Haystack's own tracer records a tool's failure only in ``haystack.tool.error`` (its
    only failure signal, so a trace without it cannot be judged: left as it is). Without it
    the tolerated retry of ``b_tool_retry`` passes: the scan of every truth lists it, the scan
    of failing truths alone did not look at that check."""
    tool = _tool()
    (truth,) = [
        t for p, t in tool.truths("haystack-native", ["b_tool_retry"]) if "nocontent" in p.name
    ]
    path = (
        ROOT
        / "tests"
        / "testdata"
        / "traces"
        / "haystack-native"
        / "b_tool_retry.nocontent.otlp.json"
    )
    conventions = tool.load_conventions()
    only = {"haystack.tool.error"}
    lines = tool.scan_capture(path, truth, conventions, tool.NOT_PASSING, only)
    assert lines == [
        "haystack-native b_tool_retry.nocontent [support-rag]: without 'haystack.tool.error', "
        "search-retry tolerated -> pass: no retries"
    ]
    assert tool.scan_capture(path, truth, conventions, tool.FAILING, only) == []
