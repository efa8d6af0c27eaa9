"""HTTP/2 streams a gRPC client opens and never finishes cannot grow ``serve`` without
bound. ``serve`` runs as a subprocess; the attacker speaks raw HTTP/2 over one connection
(frames written here: the preface, then per stream a HEADERS frame for the OTLP Export
method and a DATA frame holding the start of a message that claims 4 MB), and a real OTel
SDK exporter must still be served.

Before ``receivers.connections.grpc_max_concurrent_streams`` a connection could open any
number of streams: each left half sent held about 7 KB, 20,000 on one connection grew the
receiving process by ~140 MB and 80,000 on each of four by ~550 MB.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import time
from pathlib import Path

from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

from tests.server.agent_traces import send_agent_traces, wait_until
from tests.server.test_serve_process import ServeProcess, grade_spans, write_config
from tests.support.otlp_sink import OtlpSink

STREAMS = 20_000
MAX_STREAMS = 100  # the default of receivers.connections.grpc_max_concurrent_streams
SETTINGS, HEADERS, DATA, RST_STREAM = 0x4, 0x1, 0x0, 0x3
SETTINGS_MAX_CONCURRENT_STREAMS = 0x3
EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


def frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    return (
        len(payload).to_bytes(3, "big") + bytes([kind, flags]) + struct.pack(">I", stream) + payload
    )


def header(name: str, value: str) -> bytes:
    """An HPACK literal header field without indexing (names and values under 127 bytes)."""
    return b"\x00" + bytes([len(name)]) + name.encode() + bytes([len(value)]) + value.encode()


def frames(data: bytes) -> list[tuple[int, bytes]]:
    """(type, payload) of each complete frame in ``data``."""
    out, i = [], 0
    while i + 9 <= len(data):
        length = int.from_bytes(data[i : i + 3], "big")
        out.append((data[i + 3], data[i + 9 : i + 9 + length]))
        i += 9 + length
    return out


def rss_mb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    raise AssertionError("no VmRSS")


def half_sent_streams(port: int, count: int) -> tuple[bytes, socket.socket]:
    """Open ``count`` Export streams on one connection, each with 100 bytes of a message
    that claims 4 MB; what the server answered so far, and the open socket."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(SETTINGS, 0, 0, b""))
    request = b"".join(
        header(n, v)
        for n, v in [(":method", "POST"), (":scheme", "http"), (":path", EXPORT),
                     (":authority", "x"), ("content-type", "application/grpc"), ("te", "trailers")]
    )  # fmt: skip
    chunk = bytearray()
    for i in range(count):
        stream = 2 * i + 1
        chunk += frame(HEADERS, 0x4, stream, request)  # END_HEADERS, no END_STREAM
        chunk += frame(DATA, 0, stream, b"\x00" + struct.pack(">I", 4_000_000) + b"x" * 100)
        if len(chunk) > 1 << 20 or i == count - 1:
            with contextlib.suppress(OSError):  # the server may close the connection
                sock.sendall(chunk)
            chunk = bytearray()
    time.sleep(1.0)  # let the server read what was sent; a bound, not a sync point
    sock.setblocking(False)
    answer = b""
    with contextlib.suppress(BlockingIOError, ConnectionResetError):
        while part := sock.recv(1 << 20):
            answer += part
    return answer, sock


def test_half_sent_streams_are_refused_past_the_limit_and_cost_little(
    tmp_path: Path, sink: OtlpSink
) -> None:
    serve = ServeProcess(write_config(tmp_path), sink)
    try:
        before = rss_mb(serve.proc.pid)
        answer, sock = half_sent_streams(serve.grpc_port, STREAMS)
        with sock:
            grown = rss_mb(serve.proc.pid) - before
            received = frames(answer)
            settings = b"".join(p for kind, p in received if kind == SETTINGS)
            announced = {
                int.from_bytes(settings[i : i + 2], "big"): int.from_bytes(
                    settings[i + 2 : i + 6], "big"
                )
                for i in range(0, len(settings) - 5, 6)
            }
            assert announced.get(SETTINGS_MAX_CONCURRENT_STREAMS) == MAX_STREAMS, announced
            assert sum(kind == RST_STREAM for kind, _ in received) > 0, "streams refused"
            assert grown < 50, f"{STREAMS} half-sent streams grew serve by {grown} MB"
            ids, _ = send_agent_traces(
                OTLPSpanExporter(endpoint=f"127.0.0.1:{serve.grpc_port}", insecure=True), 1
            )
            wait_until(lambda: ids[0] in grade_spans(sink), timeout=20, what="a real verdict")
    finally:
        assert serve.stop() == 0, "".join(serve.lines[-5:])
