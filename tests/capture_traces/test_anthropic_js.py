"""The JavaScript Anthropic tool loop's captures (``fw_anthropic_js.py``): its driver reports
the versions its lockfile installs; the Anthropic TypeScript SDK's own
``anthropic.messages.create`` span inside each instrumentation's model-call span is the same
call, not a second one; and OpenLLMetry JS's tool spans, which ``traceContent: false`` empties
while its Anthropic instrumentation keeps the messages, take the result the model was handed
from the next call's input (``result_from_messages``), and nothing where that input is absent.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.step import Step, StepKind
from otel_oracles.pipeline import read_traces

# The capture tools are scripts next to each other, not a package: import them as capture.py does.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "capture_traces"))

from fw_anthropic_js import versions_openinference, versions_openllmetry

TRACES = Path(__file__).resolve().parents[2] / "tests/testdata/traces"


def steps_of(path: Path) -> list[Step]:
    problems: list[object] = []
    (trace,) = read_traces([str(path)], problems)
    assert problems == []
    return list(map_trace(trace, load_conventions()).steps)


def test_versions_are_the_lockfiles() -> None:
    openinference, openllmetry = versions_openinference(), versions_openllmetry()
    assert openinference["@arizeai/openinference-instrumentation-anthropic"] == "0.2.8"
    assert openinference["@anthropic-ai/sdk"] == "1.16.0"
    assert openllmetry["@traceloop/instrumentation-anthropic"] == "0.27.0"
    assert openllmetry["anthropic-sdk-0"] == "0.137.0"
    for found in (openinference, openllmetry):
        assert all(v != "not installed" for v in found.values()), found


def test_the_sdks_own_span_is_the_same_model_call() -> None:
    for source in ("openinference-anthropic-js", "openllmetry-anthropic-js"):
        for variant in ("m_excess_calls", "m_excess_calls.nocontent"):
            path = TRACES / source / f"{variant}.otlp.json"
            doc = json.loads(path.read_text())
            sdk_spans = [
                span
                for rs in doc["resourceSpans"]
                for ss in rs["scopeSpans"]
                if ss["scope"]["name"] == "com.anthropic.sdk.typescript"
                for span in ss["spans"]
            ]
            assert len(sdk_spans) == 7, (source, variant)  # six searches, then the answer
            calls = [s for s in steps_of(path) if s.kind == StepKind.GENERATION]
            assert len(calls) == 7, (source, variant)


def test_an_emptied_tool_span_takes_the_result_the_model_was_handed(tmp_path: Path) -> None:
    path = TRACES / "openllmetry-anthropic-js" / "a_happy.nocontent.otlp.json"
    (search,) = [s for s in steps_of(path) if s.kind == StepKind.TOOL_CALL]
    assert "doc-42" in json.dumps(search.result)

    doc = json.loads(path.read_text())
    for rs in doc["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                span["attributes"] = [
                    a for a in span.get("attributes", []) if a["key"] != "gen_ai.input.messages"
                ]
    stripped = tmp_path / "no_inputs.otlp.json"
    stripped.write_text(json.dumps(doc))
    (search,) = [s for s in steps_of(stripped) if s.kind == StepKind.TOOL_CALL]
    assert search.result is None
