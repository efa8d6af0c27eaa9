"""Real traces from real instrumentations, graded by the real pipeline, emitted through the
real SDK exporters and the ``grade`` command (subprocess) into a real OTLP sink."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from otel_oracles.emit import EmitResult, build_emitter
from otel_oracles.emit import _names as n
from otel_oracles.grade.loader import load_contract
from otel_oracles.mapping import load_conventions
from otel_oracles.model.result import InputProblem
from otel_oracles.pipeline import grade_trace, read_traces
from tests.support.otlp_sink import OtlpSink

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO / "tests" / "testdata" / "traces"
CONTRACTS = Path(__file__).resolve().parent / "testdata" / "contracts"
FORBIDDEN = TRACES / "pydantic-ai" / "d_forbidden_tool.otlp.json"
RETRY = TRACES / "pydantic-ai" / "b_tool_retry.otlp.json"
FORBIDDEN_TRACE = "ffc2815233fff9df5cdf2f7cd60b28c5"
FORBIDDEN_ROOT = "b58796f8d743adc7"
DELETE_SPAN = "d92e6c7516081d27"

PROMPT = "What is the refund window for enterprise customers? Please cite your source."
EMAIL = "jane.doe@example-customer.com"
API_KEY = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
BODY = f"My email is {EMAIL} and my key is {API_KEY}; what is the refund window?"
ANSWER_TAIL = "I also deleted 12 stale refund requests."
CLI = Path(sys.executable).with_name("otel-oracles")
"""The installed console script, as users run it."""


def _contracts():
    return [load_contract(p) for p in sorted(CONTRACTS.glob("*.yaml"))]


def _otel_env(sink: OtlpSink, protocol: str) -> dict[str, str]:
    endpoint = sink.grpc_endpoint if protocol == "grpc" else sink.http_endpoint
    return {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": protocol}


def test_every_real_trace_gets_its_grade_spans_and_events_in_its_own_trace(
    monkeypatch: pytest.MonkeyPatch, sink: OtlpSink
) -> None:
    for key, value in _otel_env(sink, "http/protobuf").items():
        monkeypatch.setenv(key, value)
    files = sorted(str(p) for p in TRACES.glob("*/*.otlp.json"))
    assert len(files) >= 20, "the real-trace fixtures must be there"
    problems: list[InputProblem] = []
    emitter = build_emitter("otlp")
    contracts, conventions = _contracts(), load_conventions()
    expected: dict[str, tuple[str, set[str], int]] = {}
    n_verdicts = 0
    for trace in read_traces(files, problems):
        graded = grade_trace(trace, contracts, conventions)
        if not graded:
            continue
        assert trace.root is not None
        expected[trace.trace_id] = (trace.root.span_id, {s.span_id for s in trace.spans}, 0)
        n_verdicts += len(graded)
        assert emitter.export(graded) is EmitResult.SUCCESS
    emitter.shutdown()
    assert problems == []
    spans = sink.wait_for_spans(n_verdicts)
    assert len(spans) == n_verdicts, "one grade span per verdict"
    for span in spans:
        root, _, _ = expected[span.trace_id]
        assert span.parent_span_id == root, f"grade span in {span.trace_id} must hang off root"
    for log in sink.log_records():
        _, span_ids, _ = expected[log.trace_id]
        assert log.span_id in span_ids, "every evaluation event points at a span of its trace"
    forbidden = [
        log
        for log in sink.log_records()
        if log.trace_id == FORBIDDEN_TRACE and log.attributes[n.ORACLE_TYPE] == "tool_not_called"
    ]
    assert forbidden and all(log.span_id == DELETE_SPAN for log in forbidden), (
        "the delete_records violation must point at the delete_records tool span"
    )


def _run_grade(
    args: list[str], env: dict[str, str], tmp_path: Path
) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "OTEL_EXPORTER_OTLP_TIMEOUT": "2", **env}
    full_env.pop("OTEL_SERVICE_NAME", None)
    return subprocess.run(
        [str(CLI), "grade", *args, "-c", str(CONTRACTS)],
        cwd=tmp_path,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("protocol", ["grpc", "http/protobuf"])
def test_grade_export_otlp_sends_results_of_the_real_traces(
    sink: OtlpSink, protocol: str, tmp_path: Path
) -> None:
    proc = _run_grade(
        [str(FORBIDDEN), str(RETRY), "--export", "otlp"], _otel_env(sink, protocol), tmp_path
    )
    assert proc.returncode == 1, f"a failing verdict exits 1\n{proc.stdout}\n{proc.stderr}"
    assert "FAIL" in proc.stdout, proc.stdout
    assert "warning" not in proc.stderr, proc.stderr
    spans = sink.wait_for_spans(4)
    assert len(spans) == 4, "2 traces x 2 contracts"
    grade = next(
        s
        for s in spans
        if s.trace_id == FORBIDDEN_TRACE and s.attributes[n.CONTRACT_ID] == "support-answers"
    )
    assert grade.parent_span_id == FORBIDDEN_ROOT
    assert grade.attributes[n.VERDICT] == "fail"
    assert grade.attributes[n.INVARIANT_FAILURES] == 1
    assert grade.attributes[n.AGENT_NAME] == "support_agent"
    assert grade.resource["service.name"] == "otel-oracles"
    logs = sink.wait_for_logs(1)
    violation = [
        log
        for log in logs
        if log.attributes[n.EVALUATION_SCORE_LABEL] == "invariant_failure"
        and log.trace_id == FORBIDDEN_TRACE
    ]
    assert {log.span_id for log in violation} == {DELETE_SPAN}
    traces_metric = sink.wait_for_metric(n.METRIC_TRACES)
    points = {
        (a[n.CONTRACT_ID], a[n.VERDICT]): p.as_int for m in traces_metric for a, p in m.points()
    }
    assert points == {
        ("no-deletes", "fail"): 1,
        ("no-deletes", "pass"): 1,
        ("support-answers", "fail"): 1,
        ("support-answers", "pass"): 1,
    }


def _planted_trace(tmp_path: Path) -> Path:
    """The forbidden-tool trace with secrets planted in the prompt, tool arguments and
    answer (plain ASCII swaps, so the JSON stays valid)."""
    text = FORBIDDEN.read_text(encoding="utf-8")
    assert PROMPT in text and "status = 'stale'" in text and ANSWER_TAIL in text
    text = text.replace(PROMPT, BODY)
    text = text.replace("status = 'stale'", f"owner = '{EMAIL}' and token = '{API_KEY}'")
    out = tmp_path / "planted.otlp.json"
    out.write_text(text, encoding="utf-8")
    json.loads(text)
    return out


def test_grade_export_leaks_no_planted_secret_from_the_input_trace(
    sink: OtlpSink, tmp_path: Path
) -> None:
    planted = _planted_trace(tmp_path)
    results = tmp_path / "results.jsonl"
    proc = _run_grade(
        [str(planted), "--export", "otlp", "--results-out", str(results)],
        _otel_env(sink, "grpc"),
        tmp_path,
    )
    assert proc.returncode == 1, proc.stderr
    sink.wait_for_spans(2)
    sink.wait_for_metric(n.METRIC_TRACES)
    emitted = sink.all_bytes() + results.read_bytes()
    assert len(emitted) > 2000
    for secret in (EMAIL, API_KEY, BODY, ANSWER_TAIL, "refund_requests", "enterprise refund"):
        assert secret.encode() not in emitted, f"{secret!r} from the input trace leaked"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_endpoint_warns_keeps_exit_code_and_writes_local_results(
    tmp_path: Path,
) -> None:
    results = tmp_path / "results.jsonl"
    junit = tmp_path / "grade.xml"
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{_closed_port()}",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
    }
    args = [str(FORBIDDEN), "--export", "otlp", "--results-out", str(results)]
    proc = _run_grade([*args, "--junit", str(junit)], env, tmp_path)
    assert proc.returncode == 1, "export failure must not change the exit code (1: a fail)"
    assert "FAIL" in proc.stdout, "the local report is still printed"
    assert junit.exists(), "the local report files are still written"
    assert "resourceSpans" in results.read_text(), "--results-out still written"
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1, proc.stderr
    assert "not delivered" in warnings[0] and "2 grade spans" in warnings[0]
    assert "Traceback" not in proc.stderr


def test_invalid_protocol_is_a_usage_error(tmp_path: Path) -> None:
    proc = _run_grade(
        [str(FORBIDDEN), "--export", "otlp"], {"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, tmp_path
    )
    assert proc.returncode == 2
    assert "OTEL_EXPORTER_OTLP_PROTOCOL" in proc.stderr and "http/json" in proc.stderr
