"""``otel-oracles serve``: an OTLP receiver that grades live agent traces as they complete.

Interface: ``load_settings`` (config file + env + flags -> validated ``ServeSettings``),
``create_server`` (wires decode, online assembly, mapping, grading and an emitter into a
``GradingServer``), and ``BackgroundServer`` (runs one on its own event-loop thread, for
tests, benchmarks and embedding). See docs/serve.md.
"""

from __future__ import annotations

from otel_oracles.emit import is_own_telemetry
from otel_oracles.server._runner import BackgroundServer
from otel_oracles.server._service import GradingServer
from otel_oracles.server._wiring import create_server
from otel_oracles.server.config import ConfigError, ServeSettings, load_settings

__all__ = [
    "BackgroundServer",
    "ConfigError",
    "GradingServer",
    "ServeSettings",
    "create_server",
    "is_own_telemetry",
    "load_settings",
]
