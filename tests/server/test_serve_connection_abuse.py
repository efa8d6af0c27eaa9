"""Receivers under connection abuse: idle and slow-header sockets by the thousand, at the
fd limit the issue hit (1024), do not stop real OTel SDK exporters from being served.

The attacker runs in a child process (its sockets use its descriptors); the server runs in
this process with its soft fd limit lowered to 1024 for the test, so the server's own
descriptors are what runs out without the connection cap.
"""

from __future__ import annotations

import contextlib
import resource
import socket
import subprocess
import sys
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter

from tests.server.agent_traces import send_agent_traces, wait_until

FD_LIMIT = 1024
ATTACKERS = 1000

ATTACK = r"""
import socket, sys, time
host, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
socks = []
for i in range(count):
    s = socket.create_connection((host, port))
    if i % 2:  # slow headers: a request line, then a header byte now and then
        s.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    socks.append(s)
print("connected", len(socks), flush=True)
while True:
    for s in socks[1::2]:
        try:
            s.send(b"a")
        except OSError:
            pass
    time.sleep(0.5)
"""


@pytest.fixture
def fd_limit_1024() -> Iterator[None]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < FD_LIMIT:
        pytest.fail(f"hard fd limit {hard} is below the {FD_LIMIT} this test needs")
    resource.setrlimit(resource.RLIMIT_NOFILE, (FD_LIMIT, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def attack(http_url: str) -> subprocess.Popen[str]:
    parts = urlsplit(http_url)
    proc = subprocess.Popen(
        [sys.executable, "-c", ATTACK, str(parts.hostname), str(parts.port), str(ATTACKERS)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()  # returns once every attacking socket is connected
    assert line.split() == ["connected", str(ATTACKERS)], line
    return proc


def test_a_thousand_idle_and_slow_header_sockets_do_not_stop_real_exporters(
    serve, fd_limit_1024: None
) -> None:
    # Long header/idle timeouts: only the connection cap can keep the server serving here.
    bg = serve(
        **{
            "receivers.connections.header_timeout": "120s",
            "receivers.connections.keepalive_timeout": "120s",
        }
    )
    attacker = attack(bg.http_url)
    try:
        http_ids, _ = send_agent_traces(
            HttpExporter(endpoint=bg.http_url + "/v1/traces", timeout=10), 4
        )
        grpc_ids, _ = send_agent_traces(
            GrpcExporter(endpoint=bg.grpc_endpoint, insecure=True, timeout=10), 4
        )
        wanted = set(http_ids) | set(grpc_ids)
        wait_until(
            lambda: wanted <= {v.trace_id for v in bg.emitter.verdicts},
            timeout=30,
            what="verdicts for every exported trace",
        )
        assert bg.stats()["received"] == {"http.traces": 4 * 3 + 2 * 1, "grpc.traces": 14}
    finally:
        attacker.kill()
        attacker.wait()
        assert attacker.stdout is not None
        attacker.stdout.close()


def test_a_slow_header_connection_is_closed_at_the_header_timeout(serve) -> None:
    bg = serve(**{"receivers.connections.header_timeout": "300ms"})
    parts = urlsplit(bg.http_url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as s:
        s.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nX-Slow: a")
        # The server closes the connection: recv sees end of stream or a reset, well
        # before this socket's own 10 s timeout.
        with contextlib.suppress(ConnectionResetError):
            assert s.recv(1024) == b""
    # The receiver still serves real clients afterwards.
    ids, _ = send_agent_traces(HttpExporter(endpoint=bg.http_url + "/v1/traces"), 1)
    wait_until(lambda: ids[0] in {v.trace_id for v in bg.emitter.verdicts}, what="verdict")


def test_a_slow_body_is_answered_408_and_the_connection_closed(serve) -> None:
    bg = serve(**{"receivers.connections.body_timeout": "300ms"})
    parts = urlsplit(bg.http_url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as s:
        s.sendall(
            b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
            b"Content-Length: 100\r\n\r\n0123456789"
        )
        answer = s.makefile("rb").read()  # to end of stream: the server closes
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert bg.stats()["rejected"] == {"body_timeout": 1}


def test_a_wrong_token_is_refused_and_its_connection_not_kept(serve) -> None:
    bg = serve(**{"receivers.auth.bearer_token": "s3cret"})
    parts = urlsplit(bg.http_url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as s:
        s.sendall(
            b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer nope\r\n"
            b"Content-Type: application/x-protobuf\r\nContent-Length: 1000000\r\n\r\n"
        )
        # Answered from the headers alone (no body sent), and closed.
        answer = s.makefile("rb").read()
    assert answer.startswith(b"HTTP/1.1 401 ")
    assert b"Connection: close" in answer


def test_a_repeated_log_record_passes_once_then_once_per_interval_with_a_count() -> None:
    import logging

    from otel_oracles.server._log_limits import RepeatFilter

    now = [100.0]
    limit = RepeatFilter(interval=10.0, clock=lambda: now[0])

    def record(msg: str) -> logging.LogRecord:
        return logging.LogRecord("asyncio", logging.ERROR, __file__, 1, msg, None, None)

    passed = [limit.filter(record("socket.accept() out of system resource")) for _ in range(1000)]
    assert passed.count(True) == 1
    assert limit.filter(record("another problem")), "a different message is its own kind"
    now[0] += 10.0
    again = record("socket.accept() out of system resource")
    assert limit.filter(again)
    assert again.repeated == 999  # type: ignore[attr-defined]
