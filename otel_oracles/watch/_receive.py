"""OTLP receivers for ``watch``: the server's own OTLP/HTTP and OTLP/gRPC receivers
(``server._http``, ``server._grpc``), in front of a ``Watcher`` instead of a grading server.

The receivers ask their owner for what ``server._receiving.ReceiverOwner`` lists;
``WatchIngest`` provides it. Everything runs on the event loop's thread, so the watcher
needs no lock. Log records are read; spans and metrics are acknowledged and not used
(``/v1/metrics`` is not served: tell agents to send no metrics, docs/watch.md).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from otel_oracles.decode import decode
from otel_oracles.server import Accepted, ServeStats, start_grpc, start_http
from otel_oracles.server.config import ReceiverSettings, ReceiversSettings
from otel_oracles.watch._watcher import Update, Watcher

if TYPE_CHECKING:
    from otel_oracles.server import Signal

logger = logging.getLogger(__name__)

DEFAULT_GRPC_ENDPOINT = "127.0.0.1:4337"
DEFAULT_HTTP_ENDPOINT = "127.0.0.1:4338"
"""Watch's defaults: loopback, and clear of a local collector (4317/4318) and of
``serve`` (4327/4328)."""


class WatchIngest:
    """The receivers' owner for ``watch``: decode a body, hand its log records to the
    watcher, pass what changed to ``on_update`` (the terminal view)."""

    def __init__(self, watcher: Watcher, on_update: Callable[[Update], None]) -> None:
        self.watcher = watcher
        self.on_update = on_update
        self.stats = ServeStats()
        self.ready = True
        self.state = "running"

    def check_auth(self, authorization: str | None) -> None:
        """No token: watch listens on loopback only."""

    def count_rejection(self, kind: str, error_type: str, transport: str, message: str) -> None:
        self.stats.add("rejected", kind)
        logger.warning("refused an OTLP request (%s, %s): %s", transport, kind, message)

    def ingest(self, body: bytes, content_type: str, signal: Signal, protocol: str) -> Accepted:
        batch = decode(body, content_type, signal=signal)
        self.watcher.offer_spans(batch.spans)
        self.on_update(self.watcher.offer(batch.logs))
        return Accepted()

    def stats_snapshot(self) -> dict[str, Any]:
        return self.stats.snapshot()


def receivers_settings(http: str, grpc: str) -> ReceiversSettings:
    return ReceiversSettings(
        http=ReceiverSettings(endpoint=http), grpc=ReceiverSettings(endpoint=grpc)
    )


async def receive_until(
    ingest: WatchIngest,
    settings: ReceiversSettings,
    stop: asyncio.Event,
    on_listening: Callable[[int, int], None],
) -> None:
    """Serve both receivers until ``stop`` is set; ``on_listening(http_port, grpc_port)``
    once both are bound. Raises ``OSError`` when an endpoint cannot be bound."""
    runner, http_port = await start_http(ingest, settings)
    try:
        grpc_server, grpc_port = await start_grpc(ingest, settings)
    except BaseException:
        await runner.cleanup()
        raise
    try:
        on_listening(http_port, grpc_port)
        await stop.wait()
    finally:
        await grpc_server.stop(1.0)
        await runner.cleanup()
