"""Nothing acknowledged is lost: ``serve`` is killed with SIGKILL while the traces it answered
success for wait out their decision wait, and a restart on the same spool grades every one of
them exactly once (grade spans counted at a real OTLP sink); results it could not export at
drain wait in the spool for the next start.

Real parts only: ``otel-oracles serve`` subprocesses (worker processes, the default), the
OpenTelemetry SDK's OTLP gRPC and HTTP span exporters as senders, ``tests.support.otlp_sink``
as the destination.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.server.agent_traces import send_agent_traces, wait_until
from tests.server.conftest import CONTRACTS
from tests.server.test_serve_process import ServeProcess
from tests.support.otlp_sink import OtlpSink


class AckRecorder(SpanExporter):
    """A real OTLP exporter, recording which spans its ``export`` reported as delivered: a
    trace is acknowledged when every one of its spans was (what the sender then forgets)."""

    def __init__(self, inner: SpanExporter) -> None:
        self.inner = inner
        self.acked: Counter[str] = Counter()
        self.failed: Counter[str] = Counter()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        result = self.inner.export(spans)
        into = self.acked if result is SpanExportResult.SUCCESS else self.failed
        for span in spans:
            into[format(span.context.trace_id, "032x")] += 1
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def acknowledged(self) -> set[str]:
        return set(self.acked) - set(self.failed)


def write_config(tmp_path: Path, spool: Path, decision_wait: str, processes: str = "auto") -> Path:
    path = tmp_path / f"serve-{decision_wait}.yaml"
    path.write_text(
        "receivers:\n  grpc: {endpoint: '127.0.0.1:0'}\n  http: {endpoint: '127.0.0.1:0'}\n"
        f"assembly: {{decision_wait: {decision_wait}, max_trace_age: 10m, sweep_interval: 20ms}}\n"
        f"grading: {{contracts: [{json.dumps(str(CONTRACTS))}], workers: 2, "
        f"processes: {processes}}}\n"
        f"spool: {{path: {json.dumps(str(spool))}}}\n"
        "shutdown_timeout: 10s\n"
    )
    return path


def grade_span_traces(sink: OtlpSink) -> list[str]:
    """Trace id of every grade span the sink received (one per trace and contract)."""
    return [s.trace_id for s in sink.spans() if s.span.name.startswith("grade ")]


def kill_9(serve: ServeProcess) -> None:
    serve.proc.kill()
    serve.proc.wait(30)
    serve._reader.join(5)
    if serve.proc.stderr is not None:
        serve.proc.stderr.close()


def stats(serve: ServeProcess) -> dict[str, object]:
    return serve.get("/stats")[1]


def two_traces_in_one_request() -> tuple[list[ReadableSpan], ReadableSpan, str, str]:
    """Spans of trace X (complete) and of trace Y without its root, for one export call, and
    Y's root (sent later); X's and Y's trace ids."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "py-support-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("agent-test", "1.0")
    ids = []
    for _ in range(2):
        with tracer.start_as_current_span(
            "invoke_agent support",
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"},
        ) as root, tracer.start_as_current_span(
            "execute_tool search_docs",
            attributes={"gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": "search_docs"},
        ):  # fmt: skip
            pass
        ids.append(format(root.get_span_context().trace_id, "032x"))
    provider.shutdown()
    spans = list(memory.get_finished_spans())
    x, y = ids
    y_root = next(s for s in spans if s.parent is None and format(s.context.trace_id, "032x") == y)
    return [s for s in spans if s is not y_root], y_root, x, y


def test_kill_9_loses_no_acknowledged_trace_and_grades_none_twice(
    tmp_path: Path, sink: OtlpSink
) -> None:
    spool = tmp_path / "spool"
    waiting = write_config(tmp_path, spool, "60s")  # nothing is due before the kill
    quick = write_config(tmp_path, spool, "300ms")

    # 1. Acknowledged, still in their decision wait, then SIGKILL.
    serve = ServeProcess(waiting, sink)
    grpc = AckRecorder(GrpcExporter(endpoint=f"127.0.0.1:{serve.grpc_port}", insecure=True))
    http = AckRecorder(HttpExporter(endpoint=f"http://127.0.0.1:{serve.http_port}/v1/traces"))
    ids = send_agent_traces(grpc, 12)[0] + send_agent_traces(http, 12)[0]
    mixed, y_root, x, y = two_traces_in_one_request()
    # (send_agent_traces shut its exporter down with its provider: a fresh one, one call)
    both = AckRecorder(GrpcExporter(endpoint=f"127.0.0.1:{serve.grpc_port}", insecure=True))
    assert both.export(mixed) is SpanExportResult.SUCCESS
    acknowledged = grpc.acknowledged() | http.acknowledged() | both.acknowledged()
    assert acknowledged == {*ids, x, y}, "every export call returned SUCCESS"
    wait_until(lambda: stats(serve)["buffered_traces"] == len(acknowledged), what="all buffered")
    assert grade_span_traces(sink) == [], "nothing graded yet: all in their decision wait"
    kill_9(serve)

    # 2. Restart on the same spool: every acknowledged trace is graded, except Y (no root yet).
    # Its request also carried X, so it stays spooled with X exported: SIGKILL again there.
    serve = ServeProcess(quick, sink)
    done = acknowledged - {y}
    wait_until(lambda: done <= set(grade_span_traces(sink)), timeout=60, what="grades")
    wait_until(lambda: stats(serve)["spool_requests"] == 1, what="only the mixed request left")
    assert stats(serve)["buffered_traces"] == 1, "Y waits for its root"
    kill_9(serve)

    # 3. Restart again: X is not replayed (exported), Y is; its root completes it.
    serve = ServeProcess(quick, sink)
    try:
        assert stats(serve)["buffered_traces"] == 1, "only Y came back from the spool"
        late = AckRecorder(GrpcExporter(endpoint=f"127.0.0.1:{serve.grpc_port}", insecure=True))
        assert late.export([y_root]) is SpanExportResult.SUCCESS
        wait_until(lambda: y in grade_span_traces(sink), timeout=30, what="Y graded")
        wait_until(lambda: stats(serve)["spool_requests"] == 0, what="spool emptied")
        graded = Counter(grade_span_traces(sink))
        duplicates = {t: n for t, n in graded.items() if n > 1}
        print(f"acknowledged={len(acknowledged)} graded={len(graded)} duplicates={len(duplicates)}")
        assert set(graded) == acknowledged and not duplicates, duplicates
        wait_until(lambda: bool(stats(serve)["graded_traces"]), what="Y counted")
        assert sum(stats(serve)["graded_traces"].values()) == 1, "only Y graded after restart"
    finally:
        assert serve.stop() == 0


@pytest.mark.parametrize("processes", ["auto", "0"], ids=["worker-processes", "threads"])
def test_results_not_exported_at_drain_are_graded_at_the_next_start(
    tmp_path: Path, sink: OtlpSink, processes: str
) -> None:
    spool = tmp_path / "spool"
    down = OtlpSink().start()
    down.stop()  # its ports are closed: the destination is down
    serve = ServeProcess(write_config(tmp_path, spool, "60s", processes), down)
    grpc = AckRecorder(GrpcExporter(endpoint=f"127.0.0.1:{serve.grpc_port}", insecure=True))
    ids = set(send_agent_traces(grpc, 5)[0])
    assert grpc.acknowledged() == ids
    wait_until(lambda: stats(serve)["buffered_traces"] == len(ids), what="all buffered")
    # SIGTERM: graded, but the export fails (or the drain budget runs out first); the exit
    # code says the drain was incomplete.
    assert serve.stop() != 0
    assert grade_span_traces(down) == [] and grade_span_traces(sink) == []

    serve = ServeProcess(write_config(tmp_path, spool, "300ms", processes), sink)
    try:
        wait_until(lambda: ids <= set(grade_span_traces(sink)), timeout=60, what="grades")
        wait_until(lambda: stats(serve)["spool_requests"] == 0, what="spool emptied")
        assert sorted(grade_span_traces(sink)) == sorted(ids), "each exactly once"
    finally:
        assert serve.stop() == 0
