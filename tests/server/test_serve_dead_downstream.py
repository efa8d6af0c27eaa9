"""A downstream collector that accepts connections and never answers cannot keep ``serve``
past its SIGTERM budget, and costs no acknowledged trace.

``serve`` runs as a subprocess whose ``OTEL_EXPORTER_OTLP_ENDPOINT`` is a real TCP listener
on 127.0.0.1 that accepts every connection and never writes a byte (a hung collector, or one
behind a stalled proxy). Found on 3 December 2026 (docs/security.md, "serve again"): with
``shutdown_timeout: 5s`` the process took 20.4 s to exit (27.6 s with 10 s), because the
drain's metric flush waited for a periodic metric export already in flight, and the flush's
own export and the meter provider's last one each waited the exporter's full 10 s timeout
after the budget was spent. A supervisor that allows
``shutdown_timeout`` before SIGKILL then killed a process that had promised to be gone.
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

from tests.server.agent_traces import send_agent_traces, wait_until
from tests.server.conftest import CONTRACTS
from tests.server.test_serve_process import ServeProcess, grade_spans
from tests.support.otlp_sink import OtlpSink

BUDGET = 5.0


class Silent:
    """A TCP listener on 127.0.0.1 that accepts and holds every connection, answering
    nothing; ``http_endpoint`` as ``OtlpSink`` names it, for ``ServeProcess``."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.held: list[socket.socket] = []
        self.http_endpoint = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                self.held.append(self.sock.accept()[0])

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


@pytest.fixture
def silent() -> Iterator[Silent]:
    s = Silent()
    yield s
    s.close()


def config(tmp_path: Path) -> Path:
    path = tmp_path / "serve.yaml"
    assembly = {"decision_wait": "0.2s", "sweep_interval": "20ms", "join_window": "0s"}
    path.write_text(
        "receivers:\n  grpc: {endpoint: '127.0.0.1:0'}\n  http: {endpoint: '127.0.0.1:0'}\n"
        f"assembly: {json.dumps(assembly)}\n"
        f"grading: {{contracts: [{json.dumps(str(CONTRACTS))}], workers: 2}}\n"
        f"shutdown_timeout: {BUDGET:g}s\n"
    )
    return path


def test_sigterm_with_a_silent_collector_exits_within_the_budget_and_loses_nothing(
    tmp_path: Path, silent: Silent
) -> None:
    cfg = config(tmp_path)
    serve = ServeProcess(cfg, silent, start_timeout=120)  # type: ignore[arg-type]  # only http_endpoint is read
    try:
        endpoint = f"http://127.0.0.1:{serve.http_port}/v1/traces"
        ids, _ = send_agent_traces(OTLPSpanExporter(endpoint=endpoint), 3)
        # Every trace acknowledged, graded, and now stuck exporting to the silent collector.
        wait_until(lambda: serve.get("/stats")[1].get("grading_inflight") == 3,
                   timeout=30, what="three traces grading or exporting")  # fmt: skip
        started = time.monotonic()
        serve.proc.send_signal(signal.SIGTERM)
        code = serve.proc.wait(60)
        took = time.monotonic() - started
    finally:
        serve.stop()
    assert code == 1, "the budget ran out with results not exported"
    assert took < BUDGET + 4, (
        f"exited {took:.1f} s after SIGTERM, budget {BUDGET} s: {serve.lines[-12:]}"
    )
    # What was acknowledged and not exported is graded at the next start.
    with OtlpSink() as sink:
        again = ServeProcess(cfg, sink, start_timeout=120)
        try:
            wait_until(lambda: set(ids) <= set(grade_spans(sink)), timeout=60,
                       what="the acknowledged traces graded after the restart")  # fmt: skip
        finally:
            assert again.stop() == 0
