"""Labels a sender chooses (agent name, provider, model, service version) cannot stop the
grader's telemetry: ``serve`` runs as a subprocess, a real OTel SDK exporter sends traces
naming their model with megabytes, and the grader's metrics and grade spans still reach the
test's OTLP sink, every label cut to ``MAX_LABEL_CHARS``.

Before the cap, each distinct value was a cumulative metric series held for the life of the
process and sent again with every data point on every export: eight such traces made an
export larger than the transport's 64 MiB request limit, which it drops, so no metric left
the grader again until a restart.
"""

from __future__ import annotations

from pathlib import Path

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind

from otel_oracles.emit._metrics import MAX_LABEL_CHARS
from tests.server.agent_traces import wait_until
from tests.server.test_serve_process import ServeProcess, grade_spans, write_config
from tests.support.otlp_sink import OtlpSink

HOSTILE_TRACES = 8
LABEL_BYTES = 3_000_000  # one span of it fits the 4 MiB request limit


def send_trace(endpoint: str, agent: str, model: str, version: str) -> str:
    """One agent run through the SDK (an agent span and a model call), its trace id."""
    provider = TracerProvider(
        resource=Resource.create({"service.name": "labels-agent", "service.version": version})
    )
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    tracer = provider.get_tracer("agent-test", "1.0")
    with (
        tracer.start_as_current_span(
            f"invoke_agent {agent[:20]}",
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent},
        ) as root,
        tracer.start_as_current_span(
            "chat",
            kind=SpanKind.CLIENT,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "openai",
                "gen_ai.request.model": model,
            },
        ),
    ):
        pass
    provider.shutdown()
    return format(root.get_span_context().trace_id, "032x")


def graded_total(sink: OtlpSink) -> int:
    """The latest cumulative ``otel_oracles.grade.traces`` over all its series."""
    items = sink.metrics("otel_oracles.grade.traces")
    return int(sum(p.as_int for _, p in items[-1].points())) if items else 0


def test_megabyte_labels_are_cut_and_metrics_keep_flowing(tmp_path: Path, sink: OtlpSink) -> None:
    serve = ServeProcess(write_config(tmp_path), sink)
    endpoint = f"http://127.0.0.1:{serve.http_port}/v1/traces"
    try:
        ids = [
            send_trace(endpoint, f"agent-{i}" + "a" * 1000, f"m{i}" + "m" * LABEL_BYTES, "v1")
            for i in range(HOSTILE_TRACES)
        ]
        ids.append(send_trace(endpoint, "support", "gpt-4o-mini", "2.0." + "9" * 500))
        wait_until(lambda: set(ids) <= set(grade_spans(sink)), timeout=60, what="grade spans")
        # Metrics are exported every 0.5 s (ServeProcess): the series of every graded trace
        # arrive, in requests the transport did not have to drop.
        assert sink.wait_for(lambda s: graded_total(s) == len(ids), timeout=30), (
            graded_total(sink),
            [line for line in serve.lines if "dropping" in line][:3],
        )
        assert not [line for line in serve.lines if "dropping" in line]
        spans = grade_spans(sink)
        for tid in ids:
            for key in ("gen_ai.agent.name", "gen_ai.request.model"):
                assert len(spans[tid][key]) <= MAX_LABEL_CHARS, (tid, key)
        assert spans[ids[-1]]["gen_ai.request.model"] == "gpt-4o-mini", "short labels stay"
        assert spans[ids[0]]["gen_ai.request.model"].startswith("m0mmm")
        for item in sink.metrics():
            for attributes, _ in item.points():
                for key, value in attributes.items():
                    assert not isinstance(value, str) or len(value) <= MAX_LABEL_CHARS, key
    finally:
        assert serve.stop() == 0, "".join(serve.lines[-5:])
