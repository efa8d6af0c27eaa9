"""Slow HTTP bodies cannot make ``serve`` hold more than ``receivers.max_inflight_bytes``.

``serve`` runs as a subprocess; the attacker opens forty connections that each announce a
4 MB body and send all of it but the last byte (the body timeout then ends each one). A body
is held whole until its last byte, so before the budget the forty held 160 MB (200 of them,
870 MB) and more connections held more. Now requests past the budget are answered 429 with
``Retry-After`` from their headers, the connection closed; a real OTel SDK exporter retries
and is served.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
from pathlib import Path

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

from tests.server.agent_traces import send_agent_traces, wait_until
from tests.server.conftest import CONTRACTS
from tests.server.test_serve_grpc_streams import rss_mb
from tests.server.test_serve_process import ServeProcess, grade_spans
from tests.support.otlp_sink import OtlpSink

SLOW = 40
BODY = 4_000_000
BUDGET_MIB = 16


def config(tmp_path: Path) -> Path:
    text = (
        "receivers:\n  grpc: {endpoint: '127.0.0.1:0'}\n  http: {endpoint: '127.0.0.1:0'}\n"
        f"  max_inflight_bytes: {BUDGET_MIB}MiB\n  connections: {{body_timeout: 3s}}\n"
        "assembly: {decision_wait: 0.2s, sweep_interval: 20ms, join_window: 0s}\n"
        f"grading: {{contracts: [{json.dumps(str(CONTRACTS))}], workers: 2}}\n"
        "shutdown_timeout: 10s\n"
    )
    path = tmp_path / "serve.yaml"
    path.write_text(text)
    return path


def slow_body(port: int) -> socket.socket:
    """A connection that sent a request for a BODY-byte body, all but its last byte."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    head = (
        b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
        b"Content-Length: %d\r\n\r\n" % BODY
    )
    # Refused from its headers, the connection may close while the body is on its way.
    with contextlib.suppress(OSError):
        sock.sendall(head + b"\x0a" * (BODY - 1))
    return sock


def answer(sock: socket.socket) -> bytes:
    sock.settimeout(0.2)
    try:
        return sock.recv(200)
    except (TimeoutError, ConnectionResetError):
        return b""


def test_slow_bodies_past_the_budget_are_refused_from_their_headers(
    tmp_path: Path, sink: OtlpSink
) -> None:
    serve = ServeProcess(config(tmp_path), sink)
    try:
        before = rss_mb(serve.proc.pid)
        socks = [slow_body(serve.http_port) for _ in range(SLOW)]
        grown = rss_mb(serve.proc.pid) - before
        answers = [answer(s) for s in socks]
        refused = [a for a in answers if a.startswith(b"HTTP/1.1 429 ")]
        assert len(refused) >= SLOW - BUDGET_MIB * 1024 * 1024 // BODY, answers[:3]
        assert all(b"Retry-After" in a or len(a) == 200 for a in refused)
        assert grown < 60, f"{SLOW} slow 4 MB bodies grew serve by {grown} MB"
        # A real exporter retries the 429 until the slow bodies time out, and is served.
        started = time.monotonic()
        ids, _ = send_agent_traces(
            OTLPSpanExporter(endpoint=f"http://127.0.0.1:{serve.http_port}/v1/traces"), 1
        )
        wait_until(lambda: ids[0] in grade_spans(sink), timeout=30, what="the real verdict")
        assert time.monotonic() - started < 30
        # The admitted slow bodies end at body_timeout (408); only then do they hang up.
        wait_until(
            lambda: (
                serve.get("/stats")[1]["rejected"].get("body_timeout", 0) >= SLOW - len(refused)
            ),
            timeout=20,
            what="the admitted slow bodies' timeout",
        )
        for s in socks:
            s.close()
        rejected = serve.get("/stats")[1]["rejected"]
        assert rejected.get("inflight_full", 0) == len(refused), rejected
        assert "internal" not in rejected, rejected
    finally:
        assert serve.stop() == 0, "".join(serve.lines[-5:])
