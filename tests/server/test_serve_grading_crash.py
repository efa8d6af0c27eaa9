"""An acknowledged trace whose grading crashes still ends in a verdict: ``error``, exported
like any other (grade span, evaluation event, metrics), never only a log line and a count.

``serve`` runs as a real subprocess; the OpenTelemetry SDK's OTLP exporter sends the traces
and the results arrive at a real OTLP sink on 127.0.0.1. Two plug-in oracles, installed the
way any plug-in is (a distribution on the path with an ``otel_oracles.oracles`` entry
point), make grading fail for real:

- ``crash_test_exit`` raises ``SystemExit`` from its check, which escapes the per-check
  error handling (it catches ``Exception``) and so crashes the grading of the whole trace;
- ``crash_test_hold`` writes the pid of the process grading it to a file, then blocks on a
  FIFO nobody writes: the test learns which process is mid-grade and SIGKILLs it, as the
  OOM killer would.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter

from tests.server.agent_traces import send_agent_traces, wait_until
from tests.server.conftest import CONTRACTS
from tests.server.test_serve_process import ServeProcess, grade_spans
from tests.server.test_serve_worker_processes import worker_pids
from tests.support.otlp_sink import OtlpSink

PLUGIN = '''
"""Test plug-in oracles that make grading crash (see test_serve_grading_crash.py)."""

import os
from pathlib import Path

from otel_oracles import Finding, GradeContext, OracleCheck, OracleParams


class Exit(OracleCheck):
    oracle_type = "crash_test_exit"

    class Params(OracleParams):
        pass

    def check(self, ctx: GradeContext) -> Finding:
        raise SystemExit("plug-in called sys.exit")


class Hold(OracleCheck):
    oracle_type = "crash_test_hold"

    class Params(OracleParams):
        pid_file: str
        fifo: str

    def check(self, ctx: GradeContext) -> Finding:
        tmp = Path(self.params.pid_file + ".tmp")
        tmp.write_text(str(os.getpid()))
        tmp.rename(self.params.pid_file)
        with open(self.params.fifo) as f:  # blocks until a writer opens it: never
            f.read()
        return Finding.ok("released")
'''


def install_plugin(site: Path) -> dict[str, str]:
    """The plug-in as an installed distribution (module + dist-info with its entry points)
    in ``site``; the environment that puts it on the serve subprocess's path."""
    site.mkdir()
    (site / "crash_test_oracles.py").write_text(PLUGIN)
    info = site / "crash_test_oracles-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: crash-test-oracles\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text(
        "[otel_oracles.oracles]\n"
        "crash_test_exit = crash_test_oracles:Exit\n"
        "crash_test_hold = crash_test_oracles:Hold\n"
    )
    return {"PYTHONPATH": str(site)}


def config(tmp_path: Path, processes: int) -> tuple[Path, Path]:
    """serve.yaml with the test contracts plus one per crashing plug-in; the pid file."""
    pid_file = tmp_path / "holder.pid"
    fifo = tmp_path / "never-written"
    os.mkfifo(fifo)
    crash = tmp_path / "crash.yaml"
    crash.write_text(
        "id: crash\nmatch: {resource: {service.name: crash-agent}}\n"
        "invariants:\n  - {name: exits, type: crash_test_exit}\n"
    )
    hold = tmp_path / "hold.yaml"
    hold.write_text(
        "id: hold\nmatch: {resource: {service.name: hold-agent}}\ninvariants:\n"
        f"  - {{name: holds, type: crash_test_hold, pid_file: '{pid_file}', fifo: '{fifo}'}}\n"
    )
    contracts = [str(CONTRACTS), str(crash), str(hold)]
    path = tmp_path / "serve.yaml"
    path.write_text(
        "receivers:\n  grpc: {endpoint: '127.0.0.1:0'}\n  http: {endpoint: '127.0.0.1:0'}\n"
        "assembly: {decision_wait: 0.2s, sweep_interval: 20ms, join_window: 0s}\n"
        f"grading: {{contracts: {json.dumps(contracts)}, processes: {processes}, workers: 2}}\n"
        "shutdown_timeout: 5s\n"
    )
    return path, pid_file


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
    env = install_plugin(tmp_path / "site")
    serve = ServeProcess(config(tmp_path, processes)[0], sink, env=env)
    try:
        url = f"http://127.0.0.1:{serve.http_port}/v1/traces"
        (crashed,), _ = send_agent_traces(HttpExporter(endpoint=url), 1, service="crash-agent")
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
    env = install_plugin(tmp_path / "site")
    path, pid_file = config(tmp_path, processes)
    serve = ServeProcess(path, sink, env=env)
    try:
        url = f"http://127.0.0.1:{serve.http_port}/v1/traces"
        (held,), _ = send_agent_traces(HttpExporter(endpoint=url), 1, service="hold-agent")
        wait_until(pid_file.exists, timeout=30, what="the plug-in to be grading the trace")
        worker = int(pid_file.read_text())
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
        assert serve.stop() == 0
