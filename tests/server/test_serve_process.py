"""``otel-oracles serve`` as a real subprocess: Python and Node SDKs send, the test OTLP sink
receives the grade spans, SIGTERM drains, bad settings exit 2."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter

from tests.server.agent_traces import (
    fixture_request,
    rekeyed,
    send_agent_traces,
    single_span_requests,
    wait_until,
)
from tests.server.conftest import CONTRACTS
from tests.support.otlp_sink import OtlpSink

NODE_DIR = Path(__file__).resolve().parent / "node"
SERVE = [sys.executable, "-c", "from otel_oracles.cli import main; main()", "serve"]


class ServeProcess:
    """A running ``serve`` subprocess; its stderr (JSON log lines) is collected on a thread."""

    def __init__(
        self,
        config: Path,
        sink: OtlpSink,
        *args: str,
        start_timeout: float = 30.0,
        env: dict[str, str] | None = None,
    ) -> None:
        """``env`` adds variables (e.g. a ``PYTHONPATH`` holding a plug-in)."""
        env = {
            "PATH": "/usr/bin:/bin",
            "XDG_STATE_HOME": os.environ["XDG_STATE_HOME"],  # the test's own spool
            "OTEL_EXPORTER_OTLP_ENDPOINT": sink.http_endpoint,
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_METRIC_EXPORT_INTERVAL": "500",
            **(env or {}),
        }
        self.proc = subprocess.Popen(
            [*SERVE, "-c", str(config), *args],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            env=env,
            text=True,
        )
        self.lines: list[str] = []
        self._line_added = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        wait_until(lambda: self.listening() is not None or self.proc.poll() is not None,
                   timeout=start_timeout, what="the 'listening' log line")  # fmt: skip
        info = self.listening()
        assert info is not None, f"serve did not start: {self.lines}"
        self.grpc_port, self.http_port = info["grpc_port"], info["http_port"]

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self._line_added:
                self.lines.append(line)
                self._line_added.notify_all()

    def wait_for_line(self, text: str, timeout: float) -> str:
        """The first log line containing ``text``, waiting (woken by each new line) up to
        ``timeout`` seconds for it; AssertionError naming the last lines otherwise."""
        with self._line_added:
            found = self._line_added.wait_for(
                lambda: next((x for x in self.lines if text in x), None), timeout
            )
        assert found, f"no log line with {text!r} after {timeout}s: {self.lines[-5:]}"
        return found

    def listening(self) -> dict[str, Any] | None:
        for line in list(self.lines):
            if line.startswith("{") and json.loads(line).get("msg") == "listening":
                return json.loads(line)
        return None

    def get(self, path: str) -> tuple[int, dict[str, Any]]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}{path}") as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read())

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(30)
        finally:
            self._reader.join(5)
            if self.proc.stderr is not None:
                self.proc.stderr.close()


def write_config(tmp_path: Path, **assembly: str) -> Path:
    # No joining: tests send copies of one capture (one conversation id) as distinct runs.
    settings = {"decision_wait": "0.2s", "sweep_interval": "20ms", "join_window": "0s", **assembly}
    text = (
        "receivers:\n  grpc: {endpoint: '127.0.0.1:0'}\n  http: {endpoint: '127.0.0.1:0'}\n"
        f"assembly: {json.dumps(settings)}\n"
        f"grading: {{contracts: [{json.dumps(str(CONTRACTS))}], workers: 2}}\n"
        "shutdown_timeout: 10s\n"
    )
    path = tmp_path / "serve.yaml"
    path.write_text(text)
    return path


def grade_spans(sink: OtlpSink) -> dict[str, dict[str, Any]]:
    """trace id -> attributes of the grade span the grader emitted in that trace."""
    return {s.trace_id: s.attributes for s in sink.spans() if s.span.name.startswith("grade ")}


def test_python_and_node_sdk_traces_are_graded_and_results_reach_the_sink(
    tmp_path: Path, sink: OtlpSink
) -> None:
    assert shutil.which("node"), "node is needed for the JS SDK client"
    assert (NODE_DIR / "node_modules").is_dir(), "run `npm ci` in tests/server/node first"
    serve = ServeProcess(write_config(tmp_path), sink)
    try:
        assert serve.get("/readyz")[0] == 200
        py_ids, py_bad = send_agent_traces(
            GrpcExporter(endpoint=f"127.0.0.1:{serve.grpc_port}", insecure=True), 2
        )
        node = subprocess.run(
            ["node", "send_agent_trace.js", f"http://127.0.0.1:{serve.http_port}/v1/traces", "4"],
            cwd=NODE_DIR, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert node.returncode == 0, node.stderr
        sent = json.loads(node.stdout)
        ids = set(py_ids) | set(sent["traceIds"])
        bad = set(py_bad) | set(sent["forbidden"])
        wait_until(lambda: ids <= set(grade_spans(sink)), timeout=20, what="6 grade spans")
        spans = grade_spans(sink)
        assert {t for t in ids if spans[t]["otel_oracles.verdict"] == "fail"} == bad
        assert serve.get("/stats")[1]["received"]["http.traces"] == 4 * 3 + 2
        assert sink.wait_for_metric("otel_oracles.grade.traces", timeout=10)

        # Loop safety: a pipeline that sends the grader's own output back must not loop.
        echoed = 0
        for got in sink.requests("traces") + sink.requests("logs"):
            path = "/v1/traces" if got.signal == "traces" else "/v1/logs"
            r = urllib.request.Request(
                f"http://127.0.0.1:{serve.http_port}{path}",
                data=got.request.SerializeToString(),
                headers={"Content-Type": "application/x-protobuf"},
            )
            with urllib.request.urlopen(r) as resp:
                assert resp.status == 200
            echoed += sum(
                len(getattr(s, "spans", None) or getattr(s, "log_records", None) or [])
                for rs in (got.request.resource_spans if got.signal == "traces"
                           else got.request.resource_logs)
                for s in (rs.scope_spans if got.signal == "traces" else rs.scope_logs)
            )  # fmt: skip
        assert echoed > 0
        time.sleep(0.5)
        stats = serve.get("/stats")[1]
        assert stats["skipped_self_telemetry"] == echoed, stats
        assert stats["late"] == 0 and stats["buffered_traces"] == 0
        assert len(grade_spans(sink)) == len(ids), "echoed results must not be graded again"

        # A refused request is logged as one structured line (rate-limited per kind).
        bad = urllib.request.Request(
            f"http://127.0.0.1:{serve.http_port}/v1/traces",
            data=b"{not json",
            headers={"Content-Type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(bad)
        wait_until(lambda: any('"request refused"' in x for x in serve.lines), what="log line")
        line = json.loads(next(x for x in serve.lines if '"request refused"' in x))
        assert (line["level"], line["kind"], line["transport"]) == ("warning", "malformed", "http")
    finally:
        assert serve.stop() == 0


def test_sigterm_grades_everything_buffered_marks_the_rest_incomplete_and_exits_0(
    tmp_path: Path, sink: OtlpSink
) -> None:
    serve = ServeProcess(write_config(tmp_path, decision_wait="30s", max_trace_age="60s"), sink)
    complete, complete_id = rekeyed(fixture_request("a_happy"))
    partial, partial_id = rekeyed(fixture_request("d_forbidden_tool"))
    rootless = [r for r in single_span_requests(partial)
                if r.resource_spans[0].scope_spans[0].spans[0].parent_span_id]  # fmt: skip
    for req in [complete, *rootless]:
        body = req.SerializeToString()
        r = urllib.request.Request(
            f"http://127.0.0.1:{serve.http_port}/v1/traces",
            data=body,
            headers={"Content-Type": "application/x-protobuf"},
        )
        with urllib.request.urlopen(r) as resp:
            assert resp.status == 200
    wait_until(lambda: serve.get("/stats")[1]["buffered_traces"] == 2, what="2 buffered")
    t0 = time.monotonic()
    code = serve.stop()
    assert code == 0, "".join(serve.lines[-5:])
    assert time.monotonic() - t0 < 15, "drain must finish within shutdown_timeout"
    spans = grade_spans(sink)
    assert {complete_id, partial_id} <= set(spans), "every buffered trace is graded on SIGTERM"
    assert spans[partial_id]["otel_oracles.missing_evidence"] >= 1, "incomplete is reported"
    stopped = [json.loads(x) for x in serve.lines if '"stopped"' in x]
    assert stopped and stopped[0]["released"] == 2


def test_bad_setting_exits_2_naming_the_key(tmp_path: Path) -> None:
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("assembly: {decision_wait: soon}\ngrading: {contracts: [.]}\n")
    proc = subprocess.run([*SERVE, "-c", str(cfg)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "assembly.decision_wait" in proc.stderr and "Traceback" not in proc.stderr


def test_port_in_use_is_a_clean_error(tmp_path: Path, sink: OtlpSink) -> None:
    port = sink.http_endpoint.rsplit(":", 1)[1]
    proc = subprocess.run(
        [*SERVE, "--contracts", str(CONTRACTS), "--http-endpoint", f"127.0.0.1:{port}",
         "--grpc-endpoint", "127.0.0.1:0"],
        capture_output=True, text=True, timeout=60,
        env={"PATH": "/usr/bin:/bin", "OTEL_EXPORTER_OTLP_ENDPOINT": sink.http_endpoint,
             "XDG_STATE_HOME": os.environ["XDG_STATE_HOME"]},
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "cannot listen" in proc.stderr and "Traceback" not in proc.stderr
