"""Connection limits for the OTLP/HTTP receiver: how many, how slow, how long.

aiohttp reads a request's headers for as long as the client takes and keeps any number of
connections open. A thousand sockets that send a header byte now and then (or nothing) then
hold a thousand file descriptors: at the process's fd limit every new connection fails,
real exporters time out, and the accept loop logs a traceback per attempt. So every
connection passes through ``GuardedProtocol``, which

- holds at most ``max_connections`` connections (the cap stays ``FD_HEADROOM`` below the fd
  limit, sharing what is left with the gRPC receiver's own cap, so the process always has
  descriptors for worker pipes, files and outgoing exports). At the
  cap, a new connection takes the place of the one that has waited longest without sending
  a complete request (idle or slow headers: what an attacker holds, and what a real client
  loses least by); only when every connection is mid-request is it answered 503 and closed;
- closes a connection that has not finished a request's headers ``header_timeout`` after it
  opened, or after the first byte of a later request (a slow sender cannot extend it);
- closes a connection idle for ``keepalive_timeout`` between requests, and asks the client
  to reconnect (``Connection: close``) after ``max_requests_per_connection`` requests.

The request handler bounds the body (``body_timeout``) itself.
"""

from __future__ import annotations

import asyncio
import logging
import resource
from typing import Any

from aiohttp import web

from otel_oracles.server.config import ConnectionSettings, ReceiversSettings

logger = logging.getLogger(__name__)

FD_HEADROOM = 256
"""Descriptors kept free below the soft fd limit for everything that is not an HTTP
connection (gRPC connections, worker pipes, spool and config files, the listening sockets)."""

ACCEPT_BACKLOG = 128
"""The listen backlog, which is also how many connections asyncio accepts in one go before
any protocol code runs: the cap leaves room for two such bursts above it."""

_OVER_CAPACITY = (
    b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\n"
    b"Connection: close\r\n\r\n"
)


def open_receivers(rc: ReceiversSettings) -> int:
    """How many receivers (HTTP, gRPC) share the descriptors ``connection_cap`` hands out."""
    return max(1, int(rc.http.enabled) + int(rc.grpc.enabled))


def connection_cap(configured: int, receivers: int = 1) -> int:
    """``configured``, lowered so that the connections of ``receivers`` receivers, each at
    its cap, leave ``FD_HEADROOM`` descriptors and two accept bursts below the soft fd
    limit: each gets an equal share of the rest."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return configured
    return max(1, min(configured, (soft - FD_HEADROOM - 2 * ACCEPT_BACKLOG) // receivers))


class ConnectionGuard:
    """Shared by every connection of one receiver (event-loop thread only)."""

    def __init__(self, settings: ConnectionSettings, receivers: int = 1) -> None:
        self.settings = settings
        self.cap = connection_cap(settings.max_connections, receivers)
        self.open = 0
        self.refused = 0
        """Connections turned away at the cap."""
        self.timed_out = 0
        """Connections closed for slow headers or idleness."""
        self.evicted = 0
        """Waiting connections closed at the cap to admit a new one."""
        self._by_transport: dict[Any, GuardedProtocol] = {}

    def evict_one(self) -> bool:
        """Close the connection that has waited longest without a request in progress (the
        table keeps connections in the order they opened or last finished a request)."""
        for conn in self._by_transport.values():
            if conn.waiting:
                self.evicted += 1
                conn.close_now()
                logger.warning(
                    "HTTP connection closed to admit a new one: at the connection cap",
                    extra={"cap": self.cap, "evicted_total": self.evicted},
                )
                return True
        return False

    def protocol(self, inner: asyncio.Protocol) -> GuardedProtocol:
        return GuardedProtocol(inner, self)

    def request_started(self, request: web.Request) -> int:
        """The handler took a request: its connection's timers stop until it answers.
        Returns how many requests the connection has carried (this one included)."""
        conn = self._by_transport.get(request.transport)
        if conn is None:
            return 1
        return conn.busy()

    def request_finished(self, request: web.Request) -> None:
        transport = request.transport
        conn = self._by_transport.pop(transport, None)
        if conn is not None:
            self._by_transport[transport] = conn  # now the most recently active
            conn.idle()

    @web.middleware
    async def middleware(self, request: web.Request, handler: Any) -> web.StreamResponse:
        """Stops the header/idle timers while a request is handled; closes connections that
        carried ``max_requests_per_connection`` requests after this answer."""
        served = self.request_started(request)
        try:
            response: web.StreamResponse = await handler(request)
        finally:
            self.request_finished(request)
        if served >= self.settings.max_requests_per_connection:
            response.force_close()
        return response


class GuardedProtocol(asyncio.Protocol):
    """aiohttp's protocol for one connection, behind the guard's cap and timers."""

    def __init__(self, inner: asyncio.Protocol, guard: ConnectionGuard) -> None:
        self._inner = inner
        self._guard = guard
        self._transport: asyncio.Transport | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._waiting_for_request = True
        """No request being handled: the next bytes start one (headers due)."""
        self._requests = 0
        self._admitted = False

    # ---- asyncio.Protocol -----------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        guard = self._guard
        if guard.open >= guard.cap and not guard.evict_one():
            guard.refused += 1
            transport.write(_OVER_CAPACITY)
            transport.close()
            logger.warning(
                "HTTP connection refused: at the connection cap, every connection busy",
                extra={"cap": guard.cap, "refused_total": guard.refused},
            )
            return
        self._admitted = True
        guard.open += 1
        self._transport = transport
        guard._by_transport[transport] = self
        self._arm(guard.settings.header_timeout)
        self._inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if not self._admitted:
            return
        if self._waiting_for_request and self._timer is not None and self._idle_timer:
            # First byte of a new request after an idle keep-alive: headers are now due.
            self._arm(self._guard.settings.header_timeout)
        self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        if not self._admitted:
            return None
        return self._inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._admitted:
            return
        self._admitted = False
        guard = self._guard
        guard.open -= 1
        guard._by_transport.pop(self._transport, None)
        self._cancel()
        self._inner.connection_lost(exc)

    def pause_writing(self) -> None:
        if self._admitted:
            self._inner.pause_writing()

    def resume_writing(self) -> None:
        if self._admitted:
            self._inner.resume_writing()

    # ---- timers -----------------------------------------------------------------------------

    _idle_timer = False
    """Whether the running timer is the keep-alive idle one (not the header deadline)."""

    @property
    def waiting(self) -> bool:
        """Open, with no request being handled (idle, or its headers still arriving)."""
        return self._admitted and self._waiting_for_request

    def close_now(self) -> None:
        """Drop the connection (its descriptor is freed; nothing is owed to the client)."""
        self._waiting_for_request = False
        self._cancel()
        if self._transport is not None:
            self._transport.abort()

    def busy(self) -> int:
        self._waiting_for_request = False
        self._cancel()
        self._requests += 1
        return self._requests

    def idle(self) -> None:
        self._waiting_for_request = True
        self._arm(self._guard.settings.keepalive_timeout, idle=True)

    def _arm(self, seconds: float, *, idle: bool = False) -> None:
        self._cancel()
        self._idle_timer = idle
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(seconds, self._expire)

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expire(self) -> None:
        self._timer = None
        if not self._waiting_for_request or self._transport is None:
            return
        self._guard.timed_out += 1
        # abort(): nothing useful is queued for a client that never finished a request.
        self._transport.abort()
