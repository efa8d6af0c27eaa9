"""Grading inside the agent's own process: an OpenTelemetry SDK span processor that grades
each trace when its root span ends (with the trace's log records, through
``GradingLogProcessor``) and emits the results as ``otel-oracles grade --export
otlp`` does (docs/in-process.md)."""

from otel_oracles.inprocess._processor import (
    COMMANDS_OFF,
    GradingLogProcessor,
    GradingSpanProcessor,
    ProcessorStats,
)
from otel_oracles.inprocess._sdk_records import sdk_traces
from otel_oracles.inprocess.config import ProcessorLimits

__all__ = [
    "COMMANDS_OFF",
    "GradingLogProcessor",
    "GradingSpanProcessor",
    "ProcessorLimits",
    "ProcessorStats",
    "sdk_traces",
]
