"""Recording a test's telemetry in memory with the real OpenTelemetry SDK.

A fresh ``TracerProvider`` and ``LoggerProvider`` export every finished span and log record
to the SDK's own in-memory exporters through simple (synchronous) processors, so what the
agent ended is recorded by the time the test asks for a grade. While installed they are the
global providers: instrumentations and ``trace.get_tracer(...)`` calls made during the test
find them.

The OpenTelemetry API lets a process set its global providers once and offers no public
way back; swapping them for one test and restoring them after means resetting the API's
set-once guards, the same two module attributes per signal the SDK's own test utilities
(``opentelemetry.test.globals_test``) reset. Tracers obtained before the swap and already
used stay bound to the provider they first resolved to (the API caches it): an agent
under test should get its tracer during the run.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import opentelemetry._logs._internal as logs_api
import opentelemetry.trace as trace_api
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.util._once import Once

from otel_oracles.decode import DecodedBatch, decode
from otel_oracles.model.span import Trace
from otel_oracles.pipeline import traces_from_batches

PROTOBUF = "application/x-protobuf"


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
        """The providers as the global ones until the block ends; then the previous globals
        (set or not) are back and the providers are shut down."""
        saved: list[tuple[Any, str, Any]] = [
            (module, name, getattr(module, name))
            for module, names in (
                (trace_api, ("_TRACER_PROVIDER", "_TRACER_PROVIDER_SET_ONCE")),
                (logs_api, ("_LOGGER_PROVIDER", "_LOGGER_PROVIDER_SET_ONCE")),
            )
            for name in names
        ]
        trace_api._TRACER_PROVIDER_SET_ONCE = Once()
        trace_api._TRACER_PROVIDER = None
        logs_api._LOGGER_PROVIDER_SET_ONCE = Once()
        logs_api._LOGGER_PROVIDER = None
        trace_api.set_tracer_provider(self.tracer_provider)
        logs_api.set_logger_provider(self.logger_provider)
        try:
            yield self
        finally:
            for module, name, value in saved:
                setattr(module, name, value)
            self.tracer_provider.shutdown()
            self.logger_provider.shutdown()

    def traces(self) -> list[Trace]:
        """Every trace recorded so far (spans that ended, and log records), assembled and
        joined the way ``otel-oracles grade`` reads an export of them: the records go
        through the OTLP encoding the SDK's exporters send and the project's decoder."""
        batches: list[DecodedBatch] = []
        spans = self.span_exporter.get_finished_spans()
        if spans:
            batches.append(decode(encode_spans(spans).SerializeToString(), PROTOBUF))
        logs = self.log_exporter.get_finished_logs()
        if logs:
            body = encode_logs(logs).SerializeToString()
            batches.append(decode(body, PROTOBUF, signal="logs"))
        return list(traces_from_batches(batches))
