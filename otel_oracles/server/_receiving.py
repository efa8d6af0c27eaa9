"""What the OTLP receivers (``_http``, ``_grpc``) need of the object behind them.

``serve``'s ``GradingServer`` is one; ``watch``'s ``WatchIngest`` (``otel_oracles.watch``)
is another. Every member is called on the event loop's thread; ``ingest`` raises what
``_status.status_for`` maps to an OTLP status (``InputError`` is permanent, ``BufferFull``
retryable).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from otel_oracles.server._service import Accepted, Signal
    from otel_oracles.server._stats import ServeStats


class ReceiverOwner(Protocol):
    @property
    def stats(self) -> ServeStats: ...

    @property
    def ready(self) -> bool:
        """Whether ``GET /readyz`` answers ready."""
        ...

    @property
    def state(self) -> str: ...

    def check_auth(self, authorization: str | None) -> None:
        """Raise ``Unauthenticated`` unless the ``Authorization`` header is acceptable."""

    def count_rejection(self, kind: str, error_type: str, transport: str, message: str) -> None:
        """Count (and log) one refused request."""

    def ingest(self, body: bytes, content_type: str, signal: Signal, protocol: str) -> Accepted:
        """Take one decoded-on-demand request body, all or nothing."""
        ...

    def stats_snapshot(self) -> dict[str, Any]:
        """The counters ``GET /stats`` returns."""
        ...
