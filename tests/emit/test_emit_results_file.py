"""``--results-out``: OTLP/JSON lines in the collector file exporter's format."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

from otel_oracles.emit import EmitResult, OtelEmitter, build_emitter
from otel_oracles.emit import _names as n
from tests.emit.conftest import ROOT_SPAN, TOOL_SPAN, TRACE_ID, make_trajectory, make_verdict
from tests.support.otlp_sink import OtlpSink

SIGNAL_OF = {"resourceSpans": "traces", "resourceLogs": "logs", "resourceMetrics": "metrics"}


def _write(tmp_path: Path) -> list[dict]:
    out = tmp_path / "results.jsonl"
    emitter = build_emitter(None, out)
    assert isinstance(emitter, OtelEmitter)
    trajectory = make_trajectory()
    assert emitter.export([(make_verdict(trajectory), trajectory)]) is EmitResult.SUCCESS
    emitter.shutdown()
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_results_file_has_one_otlp_json_object_per_line_for_each_signal(tmp_path: Path) -> None:
    lines = _write(tmp_path)
    keys = [next(iter(obj)) for obj in lines]
    assert all(len(obj) == 1 for obj in lines), "one top-level key per line"
    assert set(keys) == set(SIGNAL_OF), f"spans, logs and metrics expected, got {keys}"
    span = lines[keys.index("resourceSpans")]["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert span["traceId"] == TRACE_ID, "ids are hex in OTLP/JSON, not base64"
    assert span["parentSpanId"] == ROOT_SPAN
    assert span["kind"] == 1, "enums are integers"
    assert isinstance(span["startTimeUnixNano"], str), "64-bit integers are strings"
    logs = lines[keys.index("resourceLogs")]["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    assert {r["eventName"] for r in logs} == {n.EVALUATION_EVENT}
    assert TOOL_SPAN in {r["spanId"] for r in logs}


def test_results_file_lines_load_into_an_otlp_json_endpoint(tmp_path: Path) -> None:
    """What the collector's otlpjsonfile receiver would do: each line is a valid request."""
    lines = _write(tmp_path)
    with OtlpSink() as sink:
        for obj in lines:
            signal = SIGNAL_OF[next(iter(obj))]
            request = urllib.request.Request(
                f"{sink.http_endpoint}/v1/{signal}",
                data=json.dumps(obj).encode(),
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=5) as response:
                assert response.status == 200
        (span,) = sink.spans()
        assert span.trace_id == TRACE_ID and span.parent_span_id == ROOT_SPAN
        assert len(sink.log_records()) == 6
        assert sink.metrics(n.METRIC_TRACES)


def test_unwritable_results_file_is_a_user_error(tmp_path: Path) -> None:
    from otel_oracles.errors import InputError

    target = tmp_path / "missing-dir" / "r.jsonl"
    with pytest.raises(InputError) as info:
        build_emitter(None, target)
    assert info.value.source == str(target)


def _normalized(node: object) -> object:
    """Drop empty values (protobuf's JSON printer omits defaults) for a shape comparison."""
    if isinstance(node, dict):
        kept = {k: _normalized(v) for k, v in node.items()}
        return {k: v for k, v in kept.items() if v not in ({}, [], "", 0, None)}
    if isinstance(node, list):
        return [_normalized(v) for v in node]
    return node
