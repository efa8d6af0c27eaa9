"""OTLP/HTTP receiver on aiohttp: ``POST /v1/traces``, ``POST /v1/logs``, ``GET /healthz``,
``GET /readyz``, ``GET /stats``.

aiohttp rather than a hand-written server: it is maintained, already a dependency of the
OTel ecosystem here, runs on the same asyncio loop as ``grpc.aio`` (one process, one loop,
no locks on the receive path), and measured as fast as the alternatives (bench/, issue 6).
Its automatic request decompression is switched off so that this module bounds the
decompressed size itself (a gzip bomb is a 413, not an out-of-memory).
"""

from __future__ import annotations

import asyncio
import json
import logging
import ssl
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from aiohttp import web
from google.protobuf import json_format
from google.protobuf.message import Message
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from otel_oracles.decode import (
    CorruptCompression,
    DecompressedTooLarge,
    decompress_body,
)
from otel_oracles.server._connections import ACCEPT_BACKLOG, ConnectionGuard, open_receivers
from otel_oracles.server._status import (
    BadEncoding,
    InflightFull,
    TooLarge,
    UnsupportedMediaType,
    status_for,
)
from otel_oracles.server.config import ReceiversSettings

if TYPE_CHECKING:
    from otel_oracles.server._receiving import ReceiverOwner
    from otel_oracles.server._service import Signal

logger = logging.getLogger(__name__)

PROTOBUF = "application/x-protobuf"
JSON = "application/json"


def media_type(header: str | None) -> str:
    """``application/json; charset=utf-8`` -> ``application/json``; raise 415 otherwise."""
    mt = (header or "").split(";", 1)[0].strip().lower()
    if mt == "application/protobuf":
        return PROTOBUF
    if mt not in (PROTOBUF, JSON):
        raise UnsupportedMediaType(
            f"unsupported Content-Type {header!r}; OTLP/HTTP takes {PROTOBUF} or {JSON}"
        )
    return mt


def decompress(body: bytes, encoding: str | None, limit: int) -> bytes:
    """Undo ``Content-Encoding`` (gzip, deflate, zstd), never producing more than ``limit``.

    The whole body is decoded (every gzip member, every zstd frame) or refused: answering
    success for part of a body would lose the rest, since the sender forgets what was
    acknowledged."""
    enc = (encoding or "identity").strip().lower()
    if enc in ("", "identity"):
        return body
    if enc not in ("gzip", "x-gzip", "deflate", "zstd"):
        raise BadEncoding(f"unsupported Content-Encoding {encoding!r} (gzip, deflate, zstd)")
    try:
        return decompress_body(body, "gzip" if enc == "x-gzip" else enc, limit)
    except DecompressedTooLarge:
        raise TooLarge(f"decompressed body exceeds {limit} bytes") from None
    except CorruptCompression as exc:
        raise BadEncoding(f"body is not valid {enc}: {exc}") from None


def _encode(msg: Message, mt: str) -> tuple[bytes, str]:
    if mt == JSON:
        return json_format.MessageToJson(msg, indent=None).encode(), JSON
    return msg.SerializeToString(), PROTOBUF


def _success(signal: Signal, rejected: int, message: str, mt: str) -> web.Response:
    resp: Message
    if signal == "traces":
        resp = trace_service_pb2.ExportTraceServiceResponse()
        if rejected or message:
            resp.partial_success.rejected_spans = rejected
            resp.partial_success.error_message = message
    else:
        resp = logs_service_pb2.ExportLogsServiceResponse()
        if rejected or message:
            resp.partial_success.rejected_log_records = rejected
            resp.partial_success.error_message = message
    body, ct = _encode(resp, mt)
    return web.Response(body=body, content_type=ct)


class InflightBudget:
    """Request bytes still arriving, across every HTTP connection (event-loop thread only).

    A request body is held whole until its last byte, so slow senders made ``serve`` hold
    connections x ``max_request_bytes`` (200 of them, 870 MB for ``body_timeout``). Each
    request reserves its ``Content-Length`` (or the size limit) before its body is read; a
    request that would pass the budget is refused, retryable, unless nothing else is
    arriving (so one request larger than the budget still gets in)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0

    def take(self, size: int) -> bool:
        if self.held and self.held + size > self.limit:
            return False
        self.held += size
        return True

    def give(self, size: int) -> None:
        self.held -= size


def _handler(
    server: ReceiverOwner,
    signal: Signal,
    limit: int,
    body_timeout: float,
    budget: InflightBudget,
) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    async def export(request: web.Request) -> web.StreamResponse:
        mt = PROTOBUF
        reserved = 0
        unread = False
        try:
            server.check_auth(request.headers.get("Authorization"))
            mt = media_type(request.headers.get("Content-Type"))
            if request.content_length is not None and request.content_length > limit:
                raise TooLarge(f"body of {request.content_length} bytes exceeds {limit}")
            size = limit if request.content_length is None else request.content_length
            if not budget.take(size):
                unread = True
                raise InflightFull(
                    f"{budget.held} bytes of request bodies are still arriving "
                    f"(receivers.max_inflight_bytes={budget.limit})",
                    1.0,
                )
            reserved = size
            try:
                raw = await asyncio.wait_for(request.read(), body_timeout)
            except web.HTTPRequestEntityTooLarge:
                raise TooLarge(f"body exceeds {limit} bytes") from None
            except TimeoutError:
                server.count_rejection("body_timeout", "deadline_exceeded", "http", "slow body")
                response = web.Response(
                    status=408, text=f"request body not received within {body_timeout:g} s"
                )
                response.force_close()
                return response
            except ConnectionError:
                # The client hung up before its body arrived: nothing was accepted, so it
                # was told nothing. A sender's doing, not a bug here: a folded one-line
                # warning, not an "internal" error with a traceback.
                server.count_rejection(
                    "client_disconnected", "cancelled", "http",
                    "client closed the connection before its body arrived",
                )  # fmt: skip
                response = web.Response(status=400, text="connection lost")
                response.force_close()
                return response
            budget.give(reserved)
            reserved = 0
            body = decompress(raw, request.headers.get("Content-Encoding"), limit)
            server.stats.add("requests", f"http.{signal}")
            accepted = server.ingest(body, mt, signal, "http")
            return _success(signal, accepted.rejected, accepted.message, mt)
        except Exception as exc:
            st = status_for(exc)
            if st.kind == "internal":
                logger.exception("OTLP/HTTP %s request failed", signal)
            server.count_rejection(st.kind, st.grpc.name.lower(), "http", st.message)
            body, ct = _encode(st.rpc_status(), mt)
            headers = {"Retry-After": st.retry_after_header()} if st.retry_after else {}
            refused = web.Response(status=st.http, body=body, content_type=ct, headers=headers)
            if st.kind == "unauthenticated" or unread:
                # A client without the token, or refused before its body was read, holds no
                # connection.
                refused.force_close()
            return refused
        finally:
            budget.give(reserved)

    return export


def build_app(
    server: ReceiverOwner, rc: ReceiversSettings, guard: ConnectionGuard | None = None
) -> web.Application:
    limit = rc.max_request_bytes
    body_timeout = rc.connections.body_timeout
    # client_max_size bounds what aiohttp reads; we also check Content-Length up front.
    middlewares = [guard.middleware] if guard is not None else []
    app = web.Application(client_max_size=limit, middlewares=middlewares)

    async def healthz(_: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def readyz(_: web.Request) -> web.Response:
        ok = server.ready
        return web.json_response(
            {"status": "ready" if ok else "not ready", "state": server.state},
            status=200 if ok else 503,
        )

    async def stats(_: web.Request) -> web.Response:
        return web.Response(text=json.dumps(server.stats_snapshot()), content_type=JSON)

    budget = InflightBudget(rc.max_inflight_bytes)
    app.router.add_post("/v1/traces", _handler(server, "traces", limit, body_timeout, budget))
    app.router.add_post("/v1/logs", _handler(server, "logs", limit, body_timeout, budget))
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/stats", stats)
    return app


class _GuardedSite(web.TCPSite):
    """``TCPSite`` whose connections pass through a ``ConnectionGuard`` (cap and timers)."""

    __slots__ = ("_guard",)

    def __init__(
        self, runner: web.AppRunner, host: str, port: int, guard: ConnectionGuard, **kw: Any
    ) -> None:
        super().__init__(runner, host, port, **kw)
        self._guard = guard

    async def start(self) -> None:
        await web.BaseSite.start(self)  # registers the site with its runner
        server = self._runner.server
        assert server is not None
        guard = self._guard
        self._server = await asyncio.get_running_loop().create_server(
            lambda: guard.protocol(server()),
            self._host,
            self._port,
            ssl=self._ssl_context,
            backlog=self._backlog,
        )


def ssl_context(rc: ReceiversSettings) -> ssl.SSLContext | None:
    if rc.tls is None:
        return None
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(rc.tls.cert_file, rc.tls.key_file)
    if rc.tls.client_ca_file is not None:
        ctx.load_verify_locations(rc.tls.client_ca_file)
        ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx


async def start_http(server: ReceiverOwner, rc: ReceiversSettings) -> tuple[web.AppRunner, int]:
    """Bind and start; returns the runner (``cleanup()`` stops it) and the bound port."""
    host, _, port = rc.http.endpoint.rpartition(":")
    guard = ConnectionGuard(rc.connections, open_receivers(rc))
    # In-flight requests get a moment to finish at shutdown; the drain budget covers the rest.
    runner = web.AppRunner(
        build_app(server, rc, guard),
        auto_decompress=False,
        access_log=None,
        shutdown_timeout=2.0,
        keepalive_timeout=rc.connections.keepalive_timeout,
        # After an early answer (401, 408, 413) the rest of a body is read and dropped for
        # at most this long before the connection closes (aiohttp's default is 10 s).
        lingering_time=2.0,
    )
    await runner.setup()
    site = _GuardedSite(
        runner, host, int(port), guard, ssl_context=ssl_context(rc), backlog=ACCEPT_BACKLOG
    )
    try:
        await site.start()
    except OSError:
        await runner.cleanup()
        raise
    bound = runner.addresses[0][1]
    return runner, int(bound)
