"""Lifecycle (start/shutdown safe twice and before start) and TLS on both receivers."""

from __future__ import annotations

import asyncio
import http.client
import ssl
import subprocess
import urllib.request
from pathlib import Path

import grpc
import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter

from otel_oracles.emit import InMemoryEmitter
from otel_oracles.server import BackgroundServer, create_server, load_settings
from tests.server.agent_traces import fixture_request, rekeyed, send_agent_traces, wait_until
from tests.server.conftest import serve_overrides


def new_server(**over: object):
    emitter = InMemoryEmitter()
    settings = load_settings(overrides=serve_overrides(**over), environ={})
    return create_server(settings, emitter=emitter), emitter


def test_shutdown_before_start_and_twice_is_safe() -> None:
    server, _ = new_server()

    async def scenario() -> None:
        assert await server.shutdown() is True
        assert await server.shutdown() is True
        await server.start()  # after shutdown: stays stopped, binds nothing
        assert server.grpc_port is None and server.state == "stopped"

    asyncio.run(scenario())


def test_start_twice_then_shutdown_twice_is_safe() -> None:
    server, _ = new_server()

    async def scenario() -> None:
        await server.start()
        port = server.http_port
        await server.start()
        assert server.http_port == port, "a second start must not rebind"
        assert await server.shutdown(5) is True
        assert await server.shutdown(5) is True
        assert server.state == "stopped"

    asyncio.run(scenario())


def test_background_server_lifecycle_is_idempotent() -> None:
    server, _ = new_server()
    bg = BackgroundServer(server)
    assert bg.shutdown() is True, "shutdown before start"
    server2, _ = new_server()
    bg2 = BackgroundServer(server2).start()
    bg2.start()
    assert bg2.shutdown(5) is True
    assert bg2.shutdown(5) is True


def test_draining_server_refuses_new_data_with_a_retryable_status() -> None:
    server, _ = new_server()

    async def scenario() -> None:
        await server.start()
        server._state = "draining"  # the window between SIGTERM and receivers closing
        from otel_oracles.server._status import Draining, status_for

        with pytest.raises(Draining) as info:
            server.ingest(b"", "application/x-protobuf", "traces", "http")
        st = status_for(info.value)
        assert (st.http, st.grpc) == (503, grpc.StatusCode.UNAVAILABLE) and st.retry_after
        server._state = "running"
        await server.shutdown(5)

    asyncio.run(scenario())


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("tls")
    cert, key = d / "cert.pem", d / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost",
         "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def test_tls_on_both_receivers(serve, tls_files: tuple[Path, Path]) -> None:
    cert, key = tls_files
    bg = serve(**{"receivers.tls.cert_file": str(cert), "receivers.tls.key_file": str(key)})
    ctx = ssl.create_default_context(cafile=str(cert))
    req, tid = rekeyed(fixture_request("a_happy"))
    http_req = urllib.request.Request(
        f"https://127.0.0.1:{bg.server.http_port}/v1/traces",
        data=req.SerializeToString(),
        headers={"Content-Type": "application/x-protobuf"},
    )
    with urllib.request.urlopen(http_req, context=ctx, timeout=10) as resp:
        assert resp.status == 200
    creds = grpc.ssl_channel_credentials(cert.read_bytes())
    ids, _ = send_agent_traces(GrpcExporter(endpoint=bg.grpc_endpoint, credentials=creds), 1)
    wait_until(
        lambda: {tid, *ids} <= {v.trace_id for v in bg.emitter.verdicts}, what="TLS verdicts"
    )
    with pytest.raises((OSError, http.client.HTTPException)):
        urllib.request.urlopen(bg.http_url + "/healthz", timeout=5)  # plaintext is refused
