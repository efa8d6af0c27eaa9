"""The OTLP/gRPC receiver under connection abuse, at the fd limit of 1024 the HTTP abuse test
uses: a thousand sockets on the gRPC port (half of them send the HTTP/2 preface, half send
nothing) must not take the descriptors the process needs for everything else.

gRPC had no connection cap: every socket held a descriptor until ``grpc_max_connection_idle``
(5 minutes), and a socket that never sent the preface for gRPC's own handshake timeout (2
minutes). 1,100 of them took all 1,024, so a real OTel SDK exporter over HTTP timed out as
well, for minutes. The attacker runs in a child process (its sockets use its descriptors);
the server runs in this process with its soft fd limit lowered to 1024 for the test.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter

from tests.server.agent_traces import send_agent_traces, wait_until
from tests.server.test_serve_connection_abuse import FD_LIMIT, fd_limit_1024  # noqa: F401

ATTACKERS = 1100
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"

ATTACK = r"""
import resource, socket, sys, time
host, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
preface = bytes.fromhex(sys.argv[4])
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the test lowered the soft limit
socks = []
for i in range(count):
    s = socket.create_connection((host, port))
    if i % 2:  # an HTTP/2 client that then never starts an RPC
        s.sendall(preface)
    socks.append(s)
print("connected", len(socks), flush=True)
time.sleep(3600)
"""


@contextlib.contextmanager
def attack(grpc_endpoint: str) -> Iterator[subprocess.Popen[str]]:
    host, _, port = grpc_endpoint.rpartition(":")
    proc = subprocess.Popen(
        [sys.executable, "-c", ATTACK, host, port, str(ATTACKERS), PREFACE.hex()],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # once every socket is connected (or refused)
        assert line.split() == ["connected", str(ATTACKERS)], line
        yield proc
    finally:
        proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_thousand_grpc_sockets_leave_descriptors_for_http_exporters(
    serve,
    fd_limit_1024: None,  # noqa: F811
) -> None:
    bg = serve(**{"receivers.connections.header_timeout": "1s"})
    with attack(bg.grpc_endpoint):
        # The server accepts in the background; give it the whole burst before measuring.
        time.sleep(1.0)
        assert open_fds() < FD_LIMIT - 128, f"{open_fds()} descriptors open at a limit of 1024"
        ids, _ = send_agent_traces(HttpExporter(endpoint=bg.http_url + "/v1/traces", timeout=10), 2)
        wait_until(
            lambda: set(ids) <= {v.trace_id for v in bg.emitter.verdicts},
            timeout=30,
            what="verdicts for the HTTP exporter's traces",
        )
        # A socket that never sends the preface is closed at header_timeout (1 s here),
        # not at gRPC's own handshake timeout of two minutes.
        host, _, port = bg.grpc_endpoint.rpartition(":")
        with socket.create_connection((host, int(port)), timeout=30) as probe:
            started = time.monotonic()
            with contextlib.suppress(ConnectionResetError):
                while probe.recv(4096):
                    pass
            assert time.monotonic() - started < 10
    # Once the attacker is gone, gRPC exporters are served again.
    ids, _ = send_agent_traces(
        GrpcExporter(endpoint=bg.grpc_endpoint, insecure=True, timeout=10), 1
    )
    wait_until(
        lambda: ids[0] in {v.trace_id for v in bg.emitter.verdicts},
        timeout=30,
        what="the gRPC exporter's verdict",
    )
