"""The BeeAI Framework for TypeScript capture (``fw_beeai_js.py``): its driver reports the
versions its lockfile installs, and ``beeai.yaml`` reads the name the model called from each
tool event's context, never the camel-cased name BeeAI's emitter gives the tool's spans.

Held out, every tool call was read by its span name (``tool.dynamic.deleteRecords.success-1``
as ``deleteRecords``, or not at all): ``no-destructive-tools`` passed over a deletion in
``d_forbidden_tool``, ``i_parallel_tools`` and ``s_delegated_forbidden``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.mapping.parsers.beeai import parse_beeai_tool_call
from otel_oracles.model.step import StepKind
from otel_oracles.pipeline import read_traces

# The capture tools are scripts next to each other, not a package: import them as capture.py does.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "capture_traces"))

from fw_beeai_js import versions

TRACES = Path(__file__).resolve().parents[2] / "tests/testdata/traces/beeai-js-openinference"


def test_versions_are_the_lockfiles() -> None:
    found = versions()
    assert found["beeai-framework"] == "0.1.13"
    assert found["@arizeai/openinference-instrumentation-beeai"] == "1.5.30"
    assert all(v != "not installed" for v in found.values()), found


def tool_calls(path: Path) -> list[tuple[str | None, str | None, str]]:
    problems: list[object] = []
    (trace,) = read_traces([str(path)], problems)
    assert problems == []
    trajectory = map_trace(trace, load_conventions())
    assert trajectory.unmapped_spans == {}
    return [(s.tool, s.call_id, s.status) for s in trajectory.steps if s.kind == StepKind.TOOL_CALL]


def test_a_deletion_is_read_by_the_name_the_model_called_content_off_too() -> None:
    calls = tool_calls(TRACES / "d_forbidden_tool.nocontent.otlp.json")
    assert [name for name, _, _ in calls] == ["search_docs", "delete_records", "final_answer"]
    assert all(call_id and status == "ok" for _, call_id, status in calls)


def test_one_step_per_call_and_a_failed_call_is_its_error_event() -> None:
    calls = tool_calls(TRACES / "b_tool_retry.nocontent.otlp.json")
    assert [(name, status) for name, _, status in calls] == [
        ("search_docs", "error"),
        ("search_docs", "ok"),
        ("final_answer", "ok"),
    ]


def test_a_span_without_the_call_in_its_context_names_no_tool(tmp_path: Path) -> None:
    doc = json.loads((TRACES / "d_forbidden_tool.nocontent.otlp.json").read_text())
    for resource_spans in doc["resourceSpans"]:
        for scope_spans in resource_spans["scopeSpans"]:
            for span in scope_spans["spans"]:
                span["attributes"] = [a for a in span["attributes"] if a["key"] != "metadata"]
    stripped = tmp_path / "stripped.otlp.json"
    stripped.write_text(json.dumps(doc))
    assert {name for name, _, _ in tool_calls(stripped)} == {None}


def test_parser_reads_only_a_tool_call_context() -> None:
    context = {"toolCallMsg": {"toolName": "delete_records", "toolCallId": "c1", "args": {}}}
    assert parse_beeai_tool_call(context) == {"name": "delete_records", "id": "c1", "arguments": {}}
    assert parse_beeai_tool_call({"state": {}}) is None
    assert parse_beeai_tool_call({"toolCallMsg": {"toolName": 3}}) is None
    assert parse_beeai_tool_call("text") is None
