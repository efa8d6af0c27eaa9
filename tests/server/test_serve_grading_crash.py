"""An acknowledged trace whose grading crashes still ends in a verdict: ``error``, exported
like any other (grade span, evaluation event, metrics), never only a log line and a count.

``serve`` runs as a real subprocess; the OpenTelemetry SDK's OTLP exporter sends the traces
and the results arrive at a real OTLP sink on 127.0.0.1. Plug-ins installed the way any
plug-in is (a distribution on the path with entry points, ``tests/parallel/crash_plugins``)
make grading fail for real:

- the ``crash_test_exit`` parser raises ``SystemExit`` while the trace is mapped, outside
  any check (a check's own ``SystemExit`` is only that check's ``error`` result), and so
  crashes the grading of the whole trace;
- the ``crash_test_hold`` oracle writes the pid of the process grading it into a FIFO the
  test reads, then blocks on a FIFO nobody writes: the test learns which process is
  mid-grade and SIGKILLs it, as the OOM killer would.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter
from opentelemetry.trace import SpanKind

from tests.parallel.crash_plugins import CRASH_CONVENTION, install_plugins, read_pid
from tests.server.agent_traces import send_agent_traces, wait_until
from tests.server.conftest import CONTRACTS
from tests.server.test_serve_process import ServeProcess, grade_spans
from tests.server.test_serve_worker_processes import worker_pids
from tests.support.otlp_sink import OtlpSink


def send_crashing_trace(exporter: SpanExporter) -> str:
    """One agent run whose chat span carries ``crash.parse`` (mapping it calls the parser
    plug-in that raises ``SystemExit``); its trace id."""
    provider = TracerProvider(resource=Resource.create({"service.name": "crash-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("agent-test", "1.0")
    with (
        tracer.start_as_current_span(
            "invoke_agent support",
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"},
        ) as root,
        tracer.start_as_current_span(
            "chat gpt-4o-mini",
            kind=SpanKind.CLIENT,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "openai",
                "gen_ai.request.model": "gpt-4o-mini",
                "crash.parse": "exit",
            },
        ),
    ):
        pass
    provider.shutdown()
    return format(root.get_span_context().trace_id, "032x")


def config(tmp_path: Path, processes: int) -> tuple[Path, Path]:
    """serve.yaml with the test contracts plus one per crashing plug-in, and the mapping
    file naming the crashing parser; the FIFO the hold check writes its pid into."""
    ready = tmp_path / "holder.pid"
    release = tmp_path / "never-written"
    os.mkfifo(ready)
    os.mkfifo(release)
    crash = tmp_path / "crash.yaml"
    crash.write_text(
        "id: crash\nmatch: {resource: {service.name: crash-agent}}\n"
        "invariants:\n  - {type: tool_not_called, tool: delete_records}\n"
    )
    hold = tmp_path / "hold.yaml"
    hold.write_text(
        "id: hold\nmatch: {resource: {service.name: hold-agent}}\ninvariants:\n"
        f"  - {{name: holds, type: crash_test_hold, ready: '{ready}', release: '{release}'}}\n"
    )
    convention = tmp_path / "crash-convention.yaml"
    convention.write_text(CRASH_CONVENTION)
    contracts = [str(CONTRACTS), str(crash), str(hold)]
    path = tmp_path / "serve.yaml"
    path.write_text(
        "receivers:\n  grpc: {endpoint: '127.0.0.1:0'}\n  http: {endpoint: '127.0.0.1:0'}\n"
        "assembly: {decision_wait: 0.2s, sweep_interval: 20ms, join_window: 0s}\n"
        f"grading: {{contracts: {json.dumps(contracts)}, "
        f"conventions: {json.dumps([str(convention)])}, processes: {processes}, workers: 2}}\n"
        "shutdown_timeout: 5s\n"
    )
    return path, ready


def error_events(sink: OtlpSink, trace_id: str) -> dict[object, dict[str, object]]:
    """Contract id -> the ``error`` evaluation event exported in ``trace_id``."""
    return {
        r.attributes.get("otel_oracles.contract.id"): r.attributes
        for r in sink.log_records()
        if r.trace_id == trace_id and r.attributes.get("otel_oracles.outcome") == "error"
    }


@pytest.mark.parametrize("processes", [0, 1], ids=["threads", "worker-process"])
def test_a_crashing_plugin_gives_an_error_verdict(
    tmp_path: Path, sink: OtlpSink, processes: int
) -> None:
    env = install_plugins(tmp_path / "site")
    serve = ServeProcess(config(tmp_path, processes)[0], sink, env=env)
    try:
        url = f"http://127.0.0.1:{serve.http_port}/v1/traces"
        crashed = send_crashing_trace(HttpExporter(endpoint=url))
        ids, bad = send_agent_traces(HttpExporter(endpoint=url), 2)
        wait_until(lambda: {crashed, *ids} <= set(grade_spans(sink)), timeout=30,
                   what="every verdict, the crashed trace's too")  # fmt: skip
        spans = grade_spans(sink)
        assert spans[crashed]["otel_oracles.verdict"] == "error", spans[crashed]
        assert {t for t in ids if spans[t]["otel_oracles.verdict"] == "fail"} == set(bad)
        # Every contract selecting it: the crash ended the grading of the whole trace.
        wait_until(lambda: len(error_events(sink, crashed)) == 2, what="the error events")
        event = error_events(sink, crashed)["crash"]
        assert event["otel_oracles.oracle.type"] == "grading_crash", event
        assert event["error.type"] == "SystemExit", event
        stats = serve.get("/stats")[1]
        assert stats["grading_errors"] == 1, stats
        # Settled in the spool once its verdicts were exported, like any graded trace.
        wait_until(lambda: serve.get("/stats")[1]["spool_requests"] == 0, what="settled")
    finally:
        assert serve.stop() == 0


@pytest.mark.parametrize("processes", [1, 2])
def test_a_worker_killed_mid_grade_gives_an_error_verdict(
    tmp_path: Path, sink: OtlpSink, processes: int
) -> None:
    env = install_plugins(tmp_path / "site")
    path, ready = config(tmp_path, processes)
    serve = ServeProcess(path, sink, env=env)
    fifo = os.open(ready, os.O_RDONLY | os.O_NONBLOCK)
    try:
        url = f"http://127.0.0.1:{serve.http_port}/v1/traces"
        (held,), _ = send_agent_traces(HttpExporter(endpoint=url), 1, service="hold-agent")
        worker = read_pid(fifo, timeout=60)
        assert worker in worker_pids(serve.proc.pid), "the plug-in runs in a grading worker"
        os.kill(worker, signal.SIGKILL)  # mid-grade, as the OOM killer would
        wait_until(lambda: held in grade_spans(sink), timeout=60, what="the lost trace's verdict")
        assert grade_spans(sink)[held]["otel_oracles.verdict"] == "error"
        wait_until(lambda: len(error_events(sink, held)) == 2, what="the error events")
        event = error_events(sink, held)["hold"]
        assert event["otel_oracles.oracle.type"] == "worker_died", event
        assert event["error.type"] == "WorkerProcessDied", event
        assert any("exit code -9" in line for line in serve.lines), serve.lines[-5:]
        stats = serve.get("/stats")[1]
        assert stats["grading_errors"] == 1 and stats["worker_restarts"] == 1, stats
        ids, bad = send_agent_traces(HttpExporter(endpoint=url), 2)
        wait_until(lambda: set(ids) <= set(grade_spans(sink)), timeout=30, what="graded after")
        assert {t for t in ids if grade_spans(sink)[t]["otel_oracles.verdict"] == "fail"} == set(
            bad
        )
        wait_until(lambda: serve.get("/stats")[1]["spool_requests"] == 0, what="settled")
    finally:
        os.close(fifo)
        assert serve.stop() == 0
