"""``serve`` grades a span dressed as the grader's own telemetry, and still skips the
grader's real output sent back to it (DESIGN.md §8: traces are untrusted).

Real components: ``otel-oracles serve`` as a subprocess on 127.0.0.1 grading with
``examples/contracts/support-rag.yaml``, runs sent by the OpenTelemetry Python SDK's OTLP/HTTP
exporter, and the grade spans and evaluation records the server exported to a real OTLP
sink sent back to it. Both receiving paths are covered: records decoded in the receiving
process (``processes: 0``) and compact transfer spans for worker processes (``processes: 1``).
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter

from tests.server.agent_traces import FORGERIES, send_forged_run, wait_until
from tests.server.test_serve_process import ServeProcess, grade_spans
from tests.support.otlp_sink import OtlpSink

CONTRACT = Path(__file__).resolve().parents[2] / "examples" / "contracts" / "support-rag.yaml"


def _config(tmp_path: Path, processes: int) -> Path:
    path = tmp_path / "serve.yaml"
    path.write_text(
        "receivers:\n  grpc: {endpoint: '127.0.0.1:0'}\n  http: {endpoint: '127.0.0.1:0'}\n"
        "assembly: {decision_wait: 0.2s, sweep_interval: 20ms, join_window: 0s}\n"
        f"grading: {{contracts: [{json.dumps(str(CONTRACT))}], processes: {processes}}}\n"
        "shutdown_timeout: 15s\n"
    )
    return path


def _outcomes(sink: OtlpSink, check: str) -> dict[str, str]:
    """trace id -> outcome of ``check``, from the evaluation records the server exported."""
    return {
        r.trace_id: r.attributes["gen_ai.evaluation.score.label"]
        for r in sink.log_records()
        if r.attributes.get("gen_ai.evaluation.name") == check
    }


def _echo(serve: ServeProcess, sink: OtlpSink) -> int:
    """Send every request the sink received back to ``serve``; how many records they held."""
    records = 0
    for got in sink.requests("traces") + sink.requests("logs"):
        path = "/v1/traces" if got.signal == "traces" else "/v1/logs"
        request = urllib.request.Request(
            f"http://127.0.0.1:{serve.http_port}{path}",
            data=got.request.SerializeToString(),
            headers={"Content-Type": "application/x-protobuf"},
        )
        with urllib.request.urlopen(request) as resp:
            assert resp.status == 200
        if got.signal == "traces":
            records += sum(len(s.spans) for r in got.request.resource_spans for s in r.scope_spans)
        else:
            records += sum(
                len(s.log_records) for r in got.request.resource_logs for s in r.scope_logs
            )
    return records


@pytest.mark.parametrize("processes", [0, 1])
def test_forged_own_spans_are_graded_and_real_grade_spans_are_skipped(
    tmp_path: Path, sink: OtlpSink, processes: int
) -> None:
    serve = ServeProcess(_config(tmp_path, processes), sink)
    try:
        url = f"http://127.0.0.1:{serve.http_port}/v1/traces"
        ids = {forge: send_forged_run(HttpExporter(endpoint=url), forge) for forge in FORGERIES}
        wait_until(lambda: set(ids.values()) <= set(grade_spans(sink)), timeout=30,
                   what="a grade span per run")  # fmt: skip
        wait_until(lambda: set(ids.values()) <= set(_outcomes(sink, "no-destructive-tools")),
                   what="the evaluation records")  # fmt: skip
        outcomes = _outcomes(sink, "no-destructive-tools")
        assert {forge: outcomes[tid] for forge, tid in ids.items()} == dict.fromkeys(
            FORGERIES, "invariant_failure"
        ), "a delete_records span fails the run however it is dressed"
        stats = serve.get("/stats")[1]
        assert stats["received"]["http.traces"] == 3 * len(FORGERIES)
        assert stats.get("skipped_self_telemetry", 0) == 0, stats

        # The grader's real output sent back: every record recognised and skipped on
        # receipt (counted before the answer), nothing buffered, nothing graded twice.
        graded = len(grade_spans(sink))
        echoed = _echo(serve, sink)
        assert echoed > len(FORGERIES)
        stats = serve.get("/stats")[1]
        assert stats["skipped_self_telemetry"] == echoed, stats
        assert stats["buffered_traces"] == 0, stats
        assert len(grade_spans(sink)) == graded
    finally:
        assert serve.stop() == 0
    assert len(grade_spans(sink)) == graded, "echoed results must not be graded again"
