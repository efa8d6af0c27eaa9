"""``serve --no-grpc`` / ``--no-http`` run with one receiver; the text log keeps the fields the
JSON log has (bound ports with port 0) and says each verdict in one line, so a user without a
collector sees results. Real subprocess, real SDK exporters on 127.0.0.1."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter

from tests.server.agent_traces import send_agent_traces, wait_until
from tests.server.conftest import CONTRACTS
from tests.support.otlp_sink import OtlpSink

SERVE = [sys.executable, "-c", "from otel_oracles.cli import main; main()", "serve"]


class TextServe:
    """``serve --log-format text`` with one receiver; stderr lines collected on a thread."""

    def __init__(self, sink: OtlpSink, state: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            [*SERVE, "--contracts", str(CONTRACTS), "--log-format", "text", "--processes", "0",
             "--decision-wait", "0.2s", "--grpc-endpoint", "127.0.0.1:0",
             "--http-endpoint", "127.0.0.1:0", *args],
            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
            env={"PATH": "/usr/bin:/bin", "OTEL_EXPORTER_OTLP_ENDPOINT": sink.http_endpoint,
                 "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
                 "XDG_STATE_HOME": str(state)},
        )  # fmt: skip
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        wait_until(lambda: self.field("listening") is not None or self.proc.poll() is not None,
                   timeout=30, what="the listening line")  # fmt: skip
        assert self.proc.poll() is None, self.lines

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))

    def field(self, message: str) -> str | None:
        return next((x for x in list(self.lines) if f": {message} " in x), None)

    def port(self, name: str) -> str:
        line = self.field("listening")
        assert line is not None
        found = re.search(rf"\b{name}=(\S+)", line)
        assert found is not None, line
        return found.group(1)

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(30)
        finally:
            self._reader.join(5)
            if self.proc.stderr is not None:
                self.proc.stderr.close()


def test_no_grpc_serves_http_and_logs_each_verdict_as_text(sink: OtlpSink, tmp_path: Path) -> None:
    serve = TextServe(sink, tmp_path, "--no-grpc")
    try:
        assert serve.port("grpc_port") == "null", "no gRPC receiver was opened"
        http_port = int(serve.port("http_port"))
        assert http_port > 0, "port 0 is logged as the port really bound"
        exporter = HttpExporter(endpoint=f"http://127.0.0.1:{http_port}/v1/traces")
        ids, forbidden = send_agent_traces(exporter, 2)
        wait_until(
            lambda: all(any(f"trace_id={t}" in x for x in serve.lines) for t in ids),
            timeout=30, what="one verdict line per trace",
        )  # fmt: skip
        for tid in ids:
            line = next(x for x in serve.lines if f"trace_id={tid}" in x and ": verdict " in x)
            assert " INFO " in line
            verdict = "fail" if tid in forbidden else "pass"
            assert f"verdict={verdict}" in line, line
            for key in ("contract=", "invariant_failures=", "tolerated_failures=",
                        "budget_exhausted=", "missing_evidence="):  # fmt: skip
                assert key in line, line
    finally:
        assert serve.stop() in (0, 1)


def test_no_http_serves_grpc(sink: OtlpSink, tmp_path: Path) -> None:
    serve = TextServe(sink, tmp_path, "--no-http")
    try:
        assert serve.port("http_port") == "null"
        grpc_port = int(serve.port("grpc_port"))
        ids, _ = send_agent_traces(
            GrpcExporter(endpoint=f"127.0.0.1:{grpc_port}", insecure=True), 1
        )
        wait_until(lambda: any(f"trace_id={ids[0]}" in x for x in serve.lines), timeout=30,
                   what="the verdict line")  # fmt: skip
    finally:
        assert serve.stop() in (0, 1)
