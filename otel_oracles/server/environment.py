"""Environment variables ``otel-oracles serve`` reads, one documented constant each.

They sit between the config file and the command-line flags in precedence. Standard
``OTEL_*`` variables (exporter endpoint, headers, resource attributes) are read by the
OpenTelemetry SDK inside the emitter, never re-parsed here.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping

OTEL_ORACLES_SERVE_CONFIG = "OTEL_ORACLES_SERVE_CONFIG"
"""Path of the YAML config file (same as ``--config``)."""

OTEL_ORACLES_SERVE_GRPC_ENDPOINT = "OTEL_ORACLES_SERVE_GRPC_ENDPOINT"
"""``receivers.grpc.endpoint``: host:port of the OTLP/gRPC receiver (default 127.0.0.1:4327)."""

OTEL_ORACLES_SERVE_HTTP_ENDPOINT = "OTEL_ORACLES_SERVE_HTTP_ENDPOINT"
"""``receivers.http.endpoint``: host:port of the OTLP/HTTP receiver (default 127.0.0.1:4328)."""

OTEL_ORACLES_SERVE_BEARER_TOKEN = "OTEL_ORACLES_SERVE_BEARER_TOKEN"
"""``receivers.auth.bearer_token``: token clients must send; keeps it out of files."""

OTEL_ORACLES_SERVE_CONTRACTS = "OTEL_ORACLES_SERVE_CONTRACTS"
"""``grading.contracts``: contract files or folders, separated by ``os.pathsep`` (``:``)."""

OTEL_ORACLES_SERVE_DECISION_WAIT = "OTEL_ORACLES_SERVE_DECISION_WAIT"
"""``assembly.decision_wait``: e.g. ``10s``."""

OTEL_ORACLES_SERVE_MAX_TRACE_AGE = "OTEL_ORACLES_SERVE_MAX_TRACE_AGE"
"""``assembly.max_trace_age``: e.g. ``5m``."""

OTEL_ORACLES_SERVE_MAX_TRACES = "OTEL_ORACLES_SERVE_MAX_TRACES"
"""``assembly.max_traces``: traces held in memory before pushing back."""

OTEL_ORACLES_SERVE_WORKERS = "OTEL_ORACLES_SERVE_WORKERS"
"""``grading.workers``: grading threads per process (0 = sized to the machine)."""

OTEL_ORACLES_SERVE_PROCESSES = "OTEL_ORACLES_SERVE_PROCESSES"
"""``grading.processes``: grading worker processes (``auto`` = one per CPU; 0 = threads)."""

OTEL_ORACLES_SERVE_SPOOL_PATH = "OTEL_ORACLES_SERVE_SPOOL_PATH"
"""``spool.path``: the write-ahead spool's directory (one per ``serve``)."""

OTEL_ORACLES_SERVE_LOG_LEVEL = "OTEL_ORACLES_SERVE_LOG_LEVEL"
"""``log_level``: debug, info, warning or error."""

_MAPPING: dict[str, str] = {
    OTEL_ORACLES_SERVE_GRPC_ENDPOINT: "receivers.grpc.endpoint",
    OTEL_ORACLES_SERVE_HTTP_ENDPOINT: "receivers.http.endpoint",
    OTEL_ORACLES_SERVE_BEARER_TOKEN: "receivers.auth.bearer_token",
    OTEL_ORACLES_SERVE_DECISION_WAIT: "assembly.decision_wait",
    OTEL_ORACLES_SERVE_MAX_TRACE_AGE: "assembly.max_trace_age",
    OTEL_ORACLES_SERVE_MAX_TRACES: "assembly.max_traces",
    OTEL_ORACLES_SERVE_WORKERS: "grading.workers",
    OTEL_ORACLES_SERVE_PROCESSES: "grading.processes",
    OTEL_ORACLES_SERVE_SPOOL_PATH: "spool.path",
    OTEL_ORACLES_SERVE_LOG_LEVEL: "log_level",
}


def settings_from_environment(environ: Mapping[str, str]) -> Iterator[tuple[str, object]]:
    """(dotted settings key, raw value) for every set variable; validation happens later."""
    for name, dotted in _MAPPING.items():
        value = environ.get(name)
        if value:
            yield dotted, value
    contracts = environ.get(OTEL_ORACLES_SERVE_CONTRACTS)
    if contracts:
        yield "grading.contracts", [p for p in contracts.split(os.pathsep) if p]
