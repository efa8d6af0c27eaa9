"""Wiring emitters from CLI options and the environment."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from opentelemetry.sdk._logs.export import LogRecordExporter
from opentelemetry.sdk.environment_variables import (
    OTEL_EXPORTER_OTLP_LOGS_PROTOCOL,
    OTEL_EXPORTER_OTLP_METRICS_PROTOCOL,
    OTEL_EXPORTER_OTLP_PROTOCOL,
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL,
)
from opentelemetry.sdk.metrics.export import MetricExporter
from opentelemetry.sdk.trace.export import SpanExporter

from otel_oracles.emit._base import Emitter, InMemoryEmitter
from otel_oracles.emit._otel import OtelEmitter, otlp_destination
from otel_oracles.emit._otlp_json import (
    JsonLinesLogExporter,
    JsonLinesMetricExporter,
    JsonLinesSpanExporter,
    OtlpJsonLinesFile,
)
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
    ``OTEL_EXPORTER_OTLP_PROTOCOL``, else http/protobuf. ``http/json`` is refused by name
    because the Python SDK has no OTLP/JSON HTTP exporter."""
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
        + (" (the Python SDK has no OTLP/JSON exporter)" if value == "http/json" else ""),
        source,
    )


def otlp_exporters(
    protocol: str | None = None, timeout_s: float | None = None
) -> tuple[SpanExporter, LogRecordExporter, MetricExporter, str]:
    """The SDK's OTLP exporters (endpoint, headers, timeout, TLS, compression from the
    standard ``OTEL_EXPORTER_OTLP_*`` variables) and a description for messages. Spans and
    logs use subclasses that only swap in a caching encoder (``_fast_otlp``); imported
    here, when an export is configured, so ``grade`` without one starts no slower.

    ``timeout_s`` bounds each export call, retries included (the SDK retries within it);
    ``None`` leaves the SDK's own setting (``OTEL_EXPORTER_OTLP_TIMEOUT``, default 10 s)."""
    kw: dict[str, Any] = {} if timeout_s is None else {"timeout": timeout_s}
    span_exporter: SpanExporter
    log_exporter: LogRecordExporter
    metric_exporter: MetricExporter
    if otlp_protocol("traces", protocol) == "grpc":
        from otel_oracles.emit._fast_grpc import FastGrpcSpanExporter

        span_exporter = FastGrpcSpanExporter(**kw)
    else:
        from otel_oracles.emit._fast_http import FastHttpSpanExporter

        span_exporter = FastHttpSpanExporter(**kw)
    if otlp_protocol("logs", protocol) == "grpc":
        from otel_oracles.emit._fast_grpc import FastGrpcLogExporter

        log_exporter = FastGrpcLogExporter(**kw)
    else:
        from otel_oracles.emit._fast_http import FastHttpLogExporter

        log_exporter = FastHttpLogExporter(**kw)
    if otlp_protocol("metrics", protocol) == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter

        metric_exporter = OTLPMetricExporter(**kw)
    else:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import (
            OTLPMetricExporter as HttpMetricExporter,
        )

        metric_exporter = HttpMetricExporter(**kw)
    return (
        span_exporter,
        log_exporter,
        metric_exporter,
        otlp_destination(otlp_protocol("traces", protocol)),
    )


def build_emitter(
    export: str | None = None,
    results_out: Path | None = None,
    explain: str | None = None,
    *,
    protocol: str | None = None,
    settings: EmitSettings | None = None,
    timeout_s: float | None = None,
) -> Emitter:
    """The emitter for ``grade --export otlp`` / ``--results-out FILE`` / ``--explain``.

    One ``OtelEmitter`` feeds every destination (OTLP and the file share the same spans,
    logs and metrics, built once). With neither destination it returns an
    ``InMemoryEmitter`` so callers need no special case. Raises ``OtelOraclesError`` for a
    bad ``export``/``explain``/protocol value and ``InputError`` for an unwritable file.
    """
    if export not in (None, *EXPORT_CHOICES):
        raise OtelOraclesError(
            f"unknown export {export!r}; use one of {', '.join(EXPORT_CHOICES)}", "--export"
        )
    try:
        resolved = settings or EmitSettings.from_env(explain=explain)
    except ValueError as exc:
        raise OtelOraclesError(f"invalid emit setting: {exc}", "--explain") from None
    spans: list[SpanExporter] = []
    logs: list[LogRecordExporter] = []
    metrics: list[MetricExporter] = []
    where: list[str] = []
    if export == "otlp":
        span_exporter, log_exporter, metric_exporter, destination = otlp_exporters(
            protocol, timeout_s
        )
        spans.append(span_exporter)
        logs.append(log_exporter)
        metrics.append(metric_exporter)
        where.append(destination)
    if results_out is not None:
        try:
            out = OtlpJsonLinesFile(results_out)
        except OSError as exc:
            raise InputError(f"cannot write results: {exc.strerror}", str(results_out)) from None
        spans.append(JsonLinesSpanExporter(out))
        logs.append(JsonLinesLogExporter(out))
        metrics.append(JsonLinesMetricExporter(out))
        where.append(f"file {results_out}")
    if not where:
        return InMemoryEmitter()
    return OtelEmitter(
        span_exporters=spans,
        log_exporters=logs,
        metric_exporters=metrics,
        settings=resolved,
        destination=" and ".join(where),
    )
