"""gRPC requests whose message framing is wrong get a definite answer, and never an OK for
data that was not read. ``serve`` runs in-process; the sender writes raw HTTP/2 frames (the
preface, a HEADERS frame for the OTLP Export method, DATA frames holding gRPC's 5-byte
length-prefixed messages) on 127.0.0.1, as a broken or hostile client would.

Found on 3 December 2026 (docs/security.md, "serve again"): with a unary handler grpcio
read the first message of the stream and dropped the rest, so a stream of two Export
messages was answered OK while the second's spans were never buffered (acknowledged, then
lost); and a stream that ended inside a message (a length prefix claiming more than was
sent, or fewer than five bytes of prefix) was never answered at all: the call stayed open,
holding a stream slot, until the connection's maximum age (30 minutes by default).
"""

from __future__ import annotations

import re
import socket
import struct
import time
from collections.abc import Callable
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

from tests.server.agent_traces import (
    fixture_request,
    rekeyed,
    send_agent_traces,
    span_count,
    wait_until,
)
from tests.server.test_serve_grpc_streams import EXPORT, HEADERS, RST_STREAM, frame, frames, header

DATA, SETTINGS = 0x0, 0x4
END_STREAM, END_HEADERS = 0x1, 0x4
INVALID_ARGUMENT = 3


def message(payload: bytes, claimed: int | None = None) -> bytes:
    """One gRPC length-prefixed message (uncompressed), its length optionally misstated."""
    return b"\x00" + struct.pack(">I", len(payload) if claimed is None else claimed) + payload


def export_raw(port: int, body: bytes, timeout: float = 10.0) -> int | None:
    """Send ``body`` as the whole DATA of one Export call on a fresh connection, with
    END_STREAM; the call's ``grpc-status``, or None when no status came within ``timeout``
    (a bound for a hang, not a synchronisation point: a working server answers in
    milliseconds)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        request = b"".join(
            header(n, v)
            for n, v in [(":method", "POST"), (":scheme", "http"), (":path", EXPORT),
                         (":authority", "x"), ("content-type", "application/grpc"),
                         ("te", "trailers")]
        )  # fmt: skip
        assert len(body) < 65_535, "stays inside HTTP/2's initial flow-control window"
        sock.sendall(
            b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
            + frame(SETTINGS, 0, 0, b"")
            + frame(HEADERS, END_HEADERS, 1, request)
            + b"".join(
                frame(DATA, END_STREAM if i + 16_384 >= len(body) else 0, 1, body[i : i + 16_384])
                for i in range(0, len(body), 16_384)
            )
        )
        received = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                part = sock.recv(1 << 16)
            except TimeoutError:
                break
            if not part:
                break
            received += part
            for kind, payload in frames(received):
                if kind == RST_STREAM:
                    return None
                if kind == HEADERS and (status := re.search(rb"grpc-status.(\d+)", payload)):
                    return int(status.group(1))
        return None


def stats(bg: Any) -> dict[str, Any]:
    result: dict[str, Any] = bg.stats()
    return result


def test_two_messages_in_one_unary_call_are_refused_whole(serve: Callable[..., Any]) -> None:
    bg = serve()
    first, _ = rekeyed(fixture_request("a_happy"))
    second, _ = rekeyed(fixture_request("a_happy"))
    body = message(first.SerializeToString()) + message(second.SerializeToString())
    assert export_raw(bg.server.grpc_port, body) == INVALID_ARGUMENT
    assert stats(bg)["received"] == {}, "nothing of a refused request is buffered"
    assert stats(bg)["rejected"] == {"malformed": 1}


@pytest.mark.parametrize(
    "body",
    [
        message(b"\x0a" * 10, claimed=3_000_000),  # the prefix claims 3 MB, 10 bytes came
        b"\x00\x00\x00",  # three bytes of a five-byte prefix
    ],
    ids=["short-message", "short-prefix"],
)
def test_a_call_ending_inside_its_message_is_answered_at_once(
    serve: Callable[..., Any], body: bytes
) -> None:
    bg = serve()
    started = time.monotonic()
    assert export_raw(bg.server.grpc_port, body) == INVALID_ARGUMENT
    assert time.monotonic() - started < 5
    assert stats(bg)["received"] == {}


def test_the_receiver_keeps_serving_real_exporters_after_bad_framing(
    serve: Callable[..., Any],
) -> None:
    bg = serve()
    one, _ = rekeyed(fixture_request("a_happy"))
    for _ in range(3):
        export_raw(bg.server.grpc_port, message(one.SerializeToString()) * 2, timeout=5)
        export_raw(bg.server.grpc_port, b"\x00\x00", timeout=5)
    ok, tid = rekeyed(fixture_request("a_happy"))
    assert export_raw(bg.server.grpc_port, message(ok.SerializeToString())) == 0
    ids, _ = send_agent_traces(OTLPSpanExporter(endpoint=bg.grpc_endpoint, insecure=True), 2)
    graded = lambda: {v.trace_id for v in bg.emitter.verdicts}  # noqa: E731
    wait_until(lambda: {tid, *ids} <= graded(), what="the well-framed traces graded")
    assert stats(bg)["received"]["grpc.traces"] >= span_count(ok)
