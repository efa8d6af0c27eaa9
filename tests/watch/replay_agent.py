"""Replay a capture's log records over OTLP with the real OpenTelemetry SDK exporter, as the
agent that recorded them would send them: one ``LoggerProvider`` per resource (so
``service.name`` and the other resource attributes arrive as exported), each record emitted
with its time, body, attributes and event name, flushed on shutdown.

    python tests/watch/replay_agent.py CAPTURE_DIR http://127.0.0.1:PORT/v1/logs
    python tests/watch/replay_agent.py CAPTURE_DIR grpc://127.0.0.1:PORT
"""

from __future__ import annotations

import sys
from typing import Any

from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogs
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpLogs
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource

from otel_oracles.decode import read_paths
from otel_oracles.model.result import InputProblem
from otel_oracles.model.span import LogRecord


def _plain(value: Any) -> Any:
    """Decoded attribute values as the SDK takes them (sequences as tuples)."""
    return tuple(value) if isinstance(value, list) else value


def replay(capture: str, endpoint: str) -> int:
    """Send every log record of ``capture``; returns how many were sent."""
    problems: list[InputProblem] = []
    records: list[LogRecord] = [r for batch in read_paths([capture], problems) for r in batch.logs]
    providers: dict[tuple[tuple[str, Any], ...], LoggerProvider] = {}
    for record in records:
        key = tuple(sorted((k, repr(v)) for k, v in record.resource.items()))
        provider = providers.get(key)
        if provider is None:
            resource = Resource({k: _plain(v) for k, v in record.resource.items()})
            provider = LoggerProvider(resource=resource)
            if endpoint.startswith("grpc://"):
                exporter: Any = GrpcLogs(endpoint=endpoint[len("grpc://") :], insecure=True)
            else:
                exporter = HttpLogs(endpoint=endpoint)
            provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
            providers[key] = provider
        attributes = {k: _plain(v) for k, v in record.attributes.items() if v is not None}
        provider.get_logger(record.scope_name or "replay").emit(
            timestamp=record.time_ns or None,
            body=record.body,
            attributes=attributes,
            event_name=record.event_name or None,
        )
    for provider in providers.values():
        provider.shutdown()
    return len(records)


if __name__ == "__main__":
    print(replay(sys.argv[1], sys.argv[2]))
