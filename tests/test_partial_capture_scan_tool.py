"""``tools/partial_capture_scan.py`` leaves one attribute out of a real capture at a time: span
attributes, span-event attributes, and (for layouts that keep messages only in log records,
such as the GenAI ``EVENT_ONLY`` setting) log-record attributes and map-body keys. Each key it
lists must be one it can really leave out, and leaving it out must touch nothing else."""

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
    graded_by = tool.contract("support-rag")
    conventions = tool.load_conventions()

    def outcome(spans: dict[str, Any], records: list[dict[str, Any]]) -> str:
        (verdict,) = tool.grade(spans, records, graded_by, conventions)
        (result,) = [r for r in verdict.results if r.name == "no-destructive-tools"]
        return str(result.outcome.value)

    assert outcome(doc, logs) == "invariant_failure"
    assert outcome(*tool.without(doc, logs, "log:gen_ai.output.messages")) != "pass"
    assert outcome(doc, []) == "missing_evidence"
