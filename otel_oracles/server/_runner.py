"""Run a ``GradingServer`` on its own event-loop thread, driven from synchronous code.

Tests, the benchmark and embedding programs use it; ``otel-oracles serve`` runs the server
on the main thread's loop instead (so signals reach it).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, Self

from otel_oracles.server._service import GradingServer


class BackgroundServer:
    """``start()`` blocks until both receivers are bound (or raises what binding raised);
    ``shutdown()`` drains like SIGTERM. Both are safe to call twice and in any order."""

    def __init__(self, server: GradingServer) -> None:
        self.server = server
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopped = False

    def _call(self, coro: Coroutine[Any, Any, Any], timeout: float | None = None) -> Any:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def start(self) -> Self:
        if self._thread is not None or self._stopped:
            return self
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="oo-serve", daemon=True)
        self._thread.start()
        try:
            self._call(self.server.start())
        except BaseException:
            self._stop_loop()
            raise
        return self

    def shutdown(self, timeout: float | None = None) -> bool:
        if self._stopped:
            return True
        self._stopped = True
        if self._loop is None:
            return True
        try:
            return bool(self._call(self.server.shutdown(timeout)))
        finally:
            self._stop_loop()

    def _stop_loop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
        self._loop = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    @property
    def grpc_endpoint(self) -> str:
        return f"127.0.0.1:{self.server.grpc_port}"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.server.http_port}"
