"""A client that hangs up in the middle of its request body is the sender's doing: ``serve``
counts it (``rejected.client_disconnected``) and logs one plain warning, not an ``internal``
error with a traceback, and keeps serving."""

from __future__ import annotations

import logging
import socket

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

from tests.server.agent_traces import send_agent_traces, wait_until


def test_a_client_hanging_up_mid_body_is_a_one_line_warning(
    serve, caplog: pytest.LogCaptureFixture
) -> None:
    bg = serve()
    port = int(bg.http_url.rsplit(":", 1)[1])
    caplog.set_level(logging.INFO, logger="otel_oracles")
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(
            b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
            b"Content-Length: 1000\r\n\r\n" + b"\x0a" * 10
        )
    wait_until(
        lambda: bg.stats().get("rejected", {}).get("client_disconnected") == 1,
        what="the hang-up to be counted",
    )
    mine = [r for r in caplog.records if r.name.startswith("otel_oracles")]
    assert not [r for r in mine if r.levelno >= logging.ERROR or r.exc_info], [
        (r.name, r.getMessage()) for r in mine
    ]
    (warning,) = [r for r in mine if getattr(r, "kind", None) == "client_disconnected"]
    assert warning.levelno == logging.WARNING
    # Still serving.
    ids, _ = send_agent_traces(OTLPSpanExporter(endpoint=bg.http_url + "/v1/traces"), 1)
    wait_until(lambda: {v.trace_id for v in bg.emitter.verdicts} >= set(ids), what="a verdict")
