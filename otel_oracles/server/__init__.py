"""``otel-oracles serve``: an OTLP receiver that grades live agent traces as they complete.

Interface: ``load_settings`` (config file + env + flags -> validated ``ServeSettings``),
``create_server`` (wires decode, online assembly, mapping, grading and an emitter into a
``GradingServer``), and ``BackgroundServer`` (runs one on its own event-loop thread, for
tests, benchmarks and embedding). See docs/serve.md.
"""

from __future__ import annotations

from otel_oracles.emit import is_own_telemetry
from otel_oracles.server._grpc import start_grpc
from otel_oracles.server._http import start_http
from otel_oracles.server._logging import configure_logging
from otel_oracles.server._runner import BackgroundServer
from otel_oracles.server._service import Accepted, GradingServer, Signal
from otel_oracles.server._stats import ServeStats
from otel_oracles.server._wiring import create_server, load_grading
from otel_oracles.server.config import ConfigError, ServeSettings, load_settings

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
