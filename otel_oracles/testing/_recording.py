"""Recording a test's telemetry in memory with the real OpenTelemetry SDK.

A fresh ``TracerProvider`` and ``LoggerProvider`` per test export every finished span and log
record to the SDK's own in-memory exporters through simple (synchronous) processors, so what
the agent ended is recorded by the time the test asks for a grade.

How a test's spans reach them through public API only: the OpenTelemetry API lets a process
set its global providers once, so the plug-in sets them once per process to forwarding
providers it owns (``set_tracer_provider`` / ``set_logger_provider``), and each test points
the forwarders at its own providers while it runs. Tracers and loggers got from the globals
at any time (before the test, at import) forward to the recording of the test running now,
and record nothing between tests. When something else set the global providers first, the
plug-in cannot take them over: it warns once, and a test still gets its providers from
``grade_trace.recording``.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry import _logs as logs_api
from opentelemetry import trace as trace_api
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_oracles.inprocess import sdk_traces
from otel_oracles.model.span import Trace


class Recording:
    """In-memory span and log exporters on fresh providers (resource from the standard
    ``OTEL_*`` variables, as any SDK setup would read them)."""

    def __init__(self) -> None:
        self.span_exporter = InMemorySpanExporter()
        # The SDK leaves this constructor unannotated.
        self.log_exporter = InMemoryLogRecordExporter()  # type: ignore[no-untyped-call]
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.span_exporter))
        self.logger_provider = LoggerProvider()
        self.logger_provider.add_log_record_processor(SimpleLogRecordProcessor(self.log_exporter))

    @contextmanager
    def installed(self) -> Iterator[Recording]:
        """What the global providers give goes to this recording until the block ends; then
        the providers are shut down."""
        _FORWARDER.install()
        _FORWARDER.point_at(self)
        try:
            yield self
        finally:
            _FORWARDER.point_at(None)
            self.tracer_provider.shutdown()
            self.logger_provider.shutdown()

    def traces(self) -> list[Trace]:
        """Every trace recorded so far (spans that ended, and log records), assembled and
        joined the way ``otel-oracles grade`` reads an export of them: the records go
        through the OTLP encoding and the project's decoder."""
        return sdk_traces(
            self.span_exporter.get_finished_spans(), self.log_exporter.get_finished_logs()
        )


class _Forwarder:
    """The process's global providers, once: each forwards to the running test's recording
    (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._installed = False
        self.recording: Recording | None = None

    def install(self) -> None:
        with self._lock:
            if self._installed:
                return
            self._installed = True
            tracers, loggers = _TracerProvider(self), _LoggerProvider(self)
            trace_api.set_tracer_provider(tracers)
            logs_api.set_logger_provider(loggers)
        if trace_api.get_tracer_provider() is not tracers:
            warnings.warn(
                "grade_trace: the global TracerProvider was set before the plug-in could set "
                "its own; spans from trace.get_tracer() are not recorded: use "
                "grade_trace.recording.tracer_provider",
                stacklevel=2,
            )

    def point_at(self, recording: Recording | None) -> None:
        self.recording = recording


class _TracerProvider(trace_api.TracerProvider):
    def __init__(self, forwarder: _Forwarder) -> None:
        self._forwarder = forwarder

    def get_tracer(self, *args: Any, **kwargs: Any) -> trace_api.Tracer:
        return _Tracer(self._forwarder, args, kwargs)


class _Tracer(trace_api.Tracer):
    """Resolves the running test's tracer on every span it starts."""

    def __init__(self, forwarder: _Forwarder, args: Any, kwargs: Any) -> None:
        self._forwarder = forwarder
        self._args, self._kwargs = args, kwargs
        self._resolved: tuple[Recording | None, trace_api.Tracer] | None = None

    def _target(self) -> trace_api.Tracer:
        recording = self._forwarder.recording
        resolved = self._resolved
        if resolved is None or resolved[0] is not recording:
            tracer = (
                trace_api.NoOpTracer()
                if recording is None
                else recording.tracer_provider.get_tracer(*self._args, **self._kwargs)
            )
            resolved = self._resolved = (recording, tracer)
        return resolved[1]

    def start_span(self, *args: Any, **kwargs: Any) -> trace_api.Span:
        return self._target().start_span(*args, **kwargs)

    def start_as_current_span(self, *args: Any, **kwargs: Any) -> Any:
        return self._target().start_as_current_span(*args, **kwargs)


class _LoggerProvider(logs_api.LoggerProvider):
    def __init__(self, forwarder: _Forwarder) -> None:
        self._forwarder = forwarder

    def get_logger(self, *args: Any, **kwargs: Any) -> logs_api.Logger:
        return _Logger(self._forwarder, args, kwargs)


class _Logger(logs_api.Logger):
    """Resolves the running test's logger on every record it emits."""

    def __init__(self, forwarder: _Forwarder, args: Any, kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._forwarder = forwarder
        self._args, self._kwargs = args, kwargs

    def _target(self) -> logs_api.Logger:
        recording = self._forwarder.recording
        if recording is None:
            return logs_api.NoOpLogger(*self._args, **self._kwargs)
        return recording.logger_provider.get_logger(*self._args, **self._kwargs)

    def emit(self, *args: Any, **kwargs: Any) -> None:
        self._target().emit(*args, **kwargs)

    def enabled(self, **kwargs: Any) -> bool:
        return self._target().enabled(**kwargs)


_FORWARDER = _Forwarder()
