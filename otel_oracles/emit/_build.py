"""Wiring emitters from CLI options and the environment."""

from __future__ import annotations

import os
from pathlib import Path

from opentelemetry.sdk.environment_variables import (
    OTEL_EXPORTER_OTLP_LOGS_PROTOCOL,
    OTEL_EXPORTER_OTLP_METRICS_PROTOCOL,
    OTEL_EXPORTER_OTLP_PROTOCOL,
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL,
)

from otel_oracles.emit._base import Emitter, InMemoryEmitter
from otel_oracles.emit._metric_export import OtlpMetricExporter, OwnMetricExporter
from otel_oracles.emit._otel import OtelEmitter
from otel_oracles.emit._otlp_json import JsonLinesMetricExporter, JsonLinesSink, OtlpJsonLinesFile
from otel_oracles.emit._resource import grader_version
from otel_oracles.emit._sinks import RECORD_SIGNALS, OtlpSink, Sink
from otel_oracles.emit._transport import OtlpTarget, Sender, Signal, sender_for
from otel_oracles.emit.config import DEFAULT_PROTOCOL, EmitSettings, OtlpProtocol
from otel_oracles.errors import InputError, OtelOraclesError

EXPORT_CHOICES: tuple[str, ...] = ("otlp", "none")
"""Values of ``grade --export``."""

_PROTOCOLS: tuple[OtlpProtocol, ...] = ("grpc", "http/protobuf")
_SIGNAL_ENV = {
    "traces": OTEL_EXPORTER_OTLP_TRACES_PROTOCOL,
    "logs": OTEL_EXPORTER_OTLP_LOGS_PROTOCOL,
    "metrics": OTEL_EXPORTER_OTLP_METRICS_PROTOCOL,
}


def otlp_protocol(signal: str, explicit: str | None = None) -> OtlpProtocol:
    """The protocol for ``signal``: explicit, else the per-signal variable, else
    ``OTEL_EXPORTER_OTLP_PROTOCOL``, else http/protobuf. ``http/json`` is refused by name:
    the grader sends OTLP protobuf only."""
    source = "protocol"
    value = explicit
    if not value:
        for var in (_SIGNAL_ENV[signal], OTEL_EXPORTER_OTLP_PROTOCOL):
            if os.environ.get(var, "").strip():
                source, value = var, os.environ[var].strip()
                break
    value = value or DEFAULT_PROTOCOL
    for known in _PROTOCOLS:
        if value == known:
            return known
    raise OtelOraclesError(
        f"unsupported OTLP protocol {value!r}; use one of {', '.join(_PROTOCOLS)}"
        + (" (OTLP/JSON goes to a file: --results-out)" if value == "http/json" else ""),
        source,
    )


def otlp_sender(
    signal: Signal, protocol: str | None = None, timeout_s: float | None = None
) -> Sender:
    """The sender for ``signal`` (endpoint, headers, timeout, TLS, compression from the
    standard ``OTEL_EXPORTER_OTLP_*`` variables, as the SDK's exporters read them).
    ``timeout_s`` bounds each request, retries included; ``None`` leaves
    ``OTEL_EXPORTER_OTLP_TIMEOUT`` (default 10 s)."""
    target = OtlpTarget.from_env(signal, otlp_protocol(signal, protocol), timeout_s)
    return sender_for(target, user_agent=f"otel-oracles/{grader_version()}")


def otlp_destinations(
    protocol: str | None = None, timeout_s: float | None = None
) -> tuple[OtlpSink, OtlpMetricExporter, str]:
    """The OTLP sink for spans and logs, the OTLP metric exporter, and a description of
    where they send (for messages)."""
    senders = {signal: otlp_sender(signal, protocol, timeout_s) for signal in RECORD_SIGNALS}
    metrics = OtlpMetricExporter(otlp_sender("metrics", protocol, timeout_s))
    return OtlpSink(senders), metrics, senders["traces"].description


def build_emitter(
    export: str | None = None,
    results_out: Path | None = None,
    explain: str | None = None,
    *,
    protocol: str | None = None,
    settings: EmitSettings | None = None,
    timeout_s: float | None = None,
    pause_collector: bool = False,
) -> Emitter:
    """The emitter for ``grade --export otlp`` / ``--results-out FILE`` / ``--explain``.

    One ``OtelEmitter`` feeds every destination (OTLP and the file share the same spans,
    logs and metrics, built once). With neither destination it returns an
    ``InMemoryEmitter`` so callers need no special case. Raises ``OtelOraclesError`` for a
    bad ``export``/``explain``/protocol value and ``InputError`` for an unwritable file.
    ``pause_collector`` is ``OtelEmitter``'s (for a program that owns its collector).
    """
    if export not in (None, *EXPORT_CHOICES):
        raise OtelOraclesError(
            f"unknown export {export!r}; use one of {', '.join(EXPORT_CHOICES)}", "--export"
        )
    try:
        resolved = settings or EmitSettings.from_env(explain=explain)
    except ValueError as exc:
        raise OtelOraclesError(f"invalid emit setting: {exc}", "--explain") from None
    sinks: list[Sink] = []
    metrics: list[OwnMetricExporter] = []
    where: list[str] = []
    if export == "otlp":
        sink, metric_exporter, destination = otlp_destinations(protocol, timeout_s)
        sinks.append(sink)
        metrics.append(metric_exporter)
        where.append(destination)
    if results_out is not None:
        try:
            out = OtlpJsonLinesFile(results_out)
        except OSError as exc:
            raise InputError(f"cannot write results: {exc.strerror}", str(results_out)) from None
        sinks.append(JsonLinesSink(out))
        metrics.append(JsonLinesMetricExporter(out))
        where.append(f"file {results_out}")
    if not where:
        return InMemoryEmitter()
    return OtelEmitter(
        sinks=sinks,
        metric_exporters=metrics,
        settings=resolved,
        destination=" and ".join(where),
        pause_collector=pause_collector,
    )
