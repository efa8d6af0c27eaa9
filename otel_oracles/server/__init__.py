"""``otel-oracles serve``: an OTLP receiver that grades live agent traces as they complete.

Interface: ``load_settings`` (config file + env + flags -> validated ``ServeSettings``),
``create_server`` (wires decode, online assembly, mapping, grading and an emitter into a
``GradingServer``), and ``BackgroundServer`` (runs one on its own event-loop thread, for
tests, benchmarks and embedding). See docs/serve.md.

The names are resolved on first use (``_LAZY``): a grading worker process imports
``server._processes``, which runs this file first, and it grades and exports without the
receivers. Importing them here (aiohttp, whose import builds two TLS contexts from the
system's CA certificates, and gRPC) cost each worker ~0.9 G instructions at start and the
memory of both (docs/performance-history.md, "serve's workers start without the receivers").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from otel_oracles._lazy_names import lazy_names

if TYPE_CHECKING:
    from otel_oracles.emit import is_own_telemetry
    from otel_oracles.server._grader import load_grading
    from otel_oracles.server._grpc import start_grpc
    from otel_oracles.server._http import start_http
    from otel_oracles.server._logging import configure_logging
    from otel_oracles.server._runner import BackgroundServer
    from otel_oracles.server._service import Accepted, GradingServer, Signal
    from otel_oracles.server._stats import ServeStats
    from otel_oracles.server._wiring import create_server
    from otel_oracles.server.config import ConfigError, ServeSettings, load_settings

_LAZY: dict[str, str] = {
    "is_own_telemetry": "otel_oracles.emit",
    "start_grpc": "otel_oracles.server._grpc",
    "start_http": "otel_oracles.server._http",
    "configure_logging": "otel_oracles.server._logging",
    "BackgroundServer": "otel_oracles.server._runner",
    **dict.fromkeys(("Accepted", "GradingServer", "Signal"), "otel_oracles.server._service"),
    "ServeStats": "otel_oracles.server._stats",
    "create_server": "otel_oracles.server._wiring",
    "load_grading": "otel_oracles.server._grader",
    **dict.fromkeys(
        ("ConfigError", "ServeSettings", "load_settings"), "otel_oracles.server.config"
    ),
}
"""Each public name's module, imported when the name is first read."""

__getattr__ = lazy_names(__name__, _LAZY)

__all__ = [
    "Accepted",
    "BackgroundServer",
    "ConfigError",
    "GradingServer",
    "ServeSettings",
    "ServeStats",
    "Signal",
    "configure_logging",
    "create_server",
    "is_own_telemetry",
    "load_grading",
    "load_settings",
    "start_grpc",
    "start_http",
]
