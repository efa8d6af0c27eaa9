"""emit stage: graded results back into OpenTelemetry (and other destinations).

``Emitter`` is the seam (``export`` / ``force_flush`` / ``shutdown``); ``OtelEmitter`` turns
verdicts into grade spans, ``gen_ai.evaluation.result`` events and metrics and hands them to
``Sink``s (OTLP over gRPC or HTTP, an OTLP/JSON lines file) or to SDK exporters a caller
supplies; ``build_emitter`` wires one from CLI options. What is emitted, and the privacy rules for
explanations, are documented in docs/telemetry.md and declared in
conventions/registry/otel-oracles.yaml.

The package's names are resolved on first use (``_LAZY``): offline ``grade`` reads the
explanation and own-telemetry helpers on every run but builds an exporter only when asked
to, and the OpenTelemetry SDK and protobuf modules behind the exporters cost a fifth of a
second to import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from otel_oracles._lazy_names import lazy_names

if TYPE_CHECKING:
    from otel_oracles.emit._any_value import any_value
    from otel_oracles.emit._base import (
        BatchingEmitter,
        EmitResult,
        Emitter,
        FanOutEmitter,
        GradedPair,
        InMemoryEmitter,
    )
    from otel_oracles.emit._build import (
        build_emitter,
        otlp_destinations,
        otlp_protocol,
        otlp_sender,
    )
    from otel_oracles.emit._explain import (
        REDACTED,
        SHOWN_FILTER,
        ExplainMode,
        explain,
        explain_from_env,
        explain_mode,
        looks_secret,
        replace_secrets,
        safe_identifier,
        shown_message,
    )
    from otel_oracles.emit._metrics import GraderMetrics
    from otel_oracles.emit._otel import EmitStats, OtelEmitter
    from otel_oracles.emit._otlp_json import (
        JsonLinesMetricExporter,
        JsonLinesSink,
        OtlpJsonLinesFile,
    )
    from otel_oracles.emit._own import (
        OWN_SHAPE,
        OwnShape,
        OwnTelemetryCheck,
        has_own_shape,
        is_marked_own,
        is_own_telemetry,
        own_markers,
        own_telemetry_check,
    )
    from otel_oracles.emit._resource import grader_resource
    from otel_oracles.emit._sdk_log import SdkLogs, gathered_sdk_logs
    from otel_oracles.emit._sinks import OtlpSink, Sink
    from otel_oracles.emit.config import EmitSettings

_LAZY: dict[str, str] = {
    **dict.fromkeys(["any_value"], "otel_oracles.emit._any_value"),
    **dict.fromkeys(
        [
            "BatchingEmitter",
            "EmitResult",
            "Emitter",
            "FanOutEmitter",
            "GradedPair",
            "InMemoryEmitter",
        ],
        "otel_oracles.emit._base",
    ),
    **dict.fromkeys(
        ["build_emitter", "otlp_destinations", "otlp_protocol", "otlp_sender"],
        "otel_oracles.emit._build",
    ),
    **dict.fromkeys(
        [
            "REDACTED",
            "SHOWN_FILTER",
            "ExplainMode",
            "explain",
            "explain_from_env",
            "explain_mode",
            "looks_secret",
            "replace_secrets",
            "safe_identifier",
            "shown_message",
        ],
        "otel_oracles.emit._explain",
    ),
    **dict.fromkeys(["GraderMetrics"], "otel_oracles.emit._metrics"),
    **dict.fromkeys(["EmitStats", "OtelEmitter"], "otel_oracles.emit._otel"),
    **dict.fromkeys(["grader_resource"], "otel_oracles.emit._resource"),
    **dict.fromkeys(
        ["JsonLinesMetricExporter", "JsonLinesSink", "OtlpJsonLinesFile"],
        "otel_oracles.emit._otlp_json",
    ),
    **dict.fromkeys(
        [
            "OWN_SHAPE",
            "OwnShape",
            "OwnTelemetryCheck",
            "has_own_shape",
            "is_marked_own",
            "is_own_telemetry",
            "own_markers",
            "own_telemetry_check",
        ],
        "otel_oracles.emit._own",
    ),
    **dict.fromkeys(["SdkLogs", "gathered_sdk_logs"], "otel_oracles.emit._sdk_log"),
    **dict.fromkeys(["OtlpSink", "Sink"], "otel_oracles.emit._sinks"),
    **dict.fromkeys(["EmitSettings"], "otel_oracles.emit.config"),
}
"""Public name -> the submodule that defines it."""


__getattr__ = lazy_names(__name__, _LAZY)


__all__ = [
    "OWN_SHAPE",
    "REDACTED",
    "SHOWN_FILTER",
    "BatchingEmitter",
    "EmitResult",
    "EmitSettings",
    "EmitStats",
    "Emitter",
    "ExplainMode",
    "FanOutEmitter",
    "GradedPair",
    "GraderMetrics",
    "InMemoryEmitter",
    "JsonLinesMetricExporter",
    "JsonLinesSink",
    "OtelEmitter",
    "OtlpJsonLinesFile",
    "OtlpSink",
    "OwnShape",
    "OwnTelemetryCheck",
    "SdkLogs",
    "Sink",
    "any_value",
    "build_emitter",
    "explain",
    "explain_from_env",
    "explain_mode",
    "gathered_sdk_logs",
    "grader_resource",
    "has_own_shape",
    "is_marked_own",
    "is_own_telemetry",
    "looks_secret",
    "otlp_destinations",
    "otlp_protocol",
    "otlp_sender",
    "own_markers",
    "own_telemetry_check",
    "replace_secrets",
    "safe_identifier",
    "shown_message",
]
