"""SDK spans and log records as the grader reads them: through the OTLP encoding the SDK's
exporters send and the project's own decoder, so a trace graded in-process (the
``GradingSpanProcessor``, the pytest ``grade_trace`` fixture) is graded exactly as
``otel-oracles grade`` would grade an export of the same run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import InstrumentationScope, KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord, ResourceLogs, ScopeLogs
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.sdk._logs import ReadableLogRecord, ReadWriteLogRecord
from opentelemetry.sdk.trace import ReadableSpan

from otel_oracles.decode import DecodedBatch, decode
from otel_oracles.emit import any_value
from otel_oracles.model.span import Trace
from otel_oracles.pipeline import traces_from_batches

PROTOBUF = "application/x-protobuf"

SdkLogRecord = ReadableLogRecord | ReadWriteLogRecord
"""What an exporter receives (readable) or a log processor's ``on_emit`` (read-write): the
same fields."""


def sdk_traces(spans: Sequence[ReadableSpan], logs: Sequence[SdkLogRecord] = ()) -> list[Trace]:
    """The traces ``spans`` and ``logs`` make, assembled and joined as an export of them
    would be by ``otel-oracles grade``."""
    batches: list[DecodedBatch] = []
    if spans:
        batches.append(decode(encode_spans(spans).SerializeToString(), PROTOBUF))
    if logs:
        body = logs_request(logs).SerializeToString()
        batches.append(decode(body, PROTOBUF, signal="logs"))
    return list(traces_from_batches(batches))


def logs_request(records: Sequence[SdkLogRecord]) -> ExportLogsServiceRequest:
    """The OTLP request for SDK log records (the SDK's log encoder is not public API)."""
    request = ExportLogsServiceRequest()
    for readable in records:
        record = readable.log_record
        scope = readable.instrumentation_scope
        resource = readable.resource
        resource_logs = ResourceLogs(
            resource=Resource(attributes=_attributes(resource.attributes if resource else {}))
        )
        scope_logs = ScopeLogs(
            scope=InstrumentationScope(name=scope.name, version=scope.version or "")
            if scope is not None
            else None
        )
        scope_logs.log_records.append(
            LogRecord(
                time_unix_nano=record.timestamp or 0,
                observed_time_unix_nano=record.observed_timestamp or 0,
                severity_number=record.severity_number.value if record.severity_number else 0,  # type: ignore[arg-type]
                severity_text=record.severity_text or "",
                body=any_value(record.body) if record.body is not None else None,
                attributes=_attributes(record.attributes),
                dropped_attributes_count=readable.dropped_attributes,
                flags=int(record.trace_flags or 0),
                trace_id=record.trace_id.to_bytes(16, "big") if record.trace_id else b"",
                span_id=record.span_id.to_bytes(8, "big") if record.span_id else b"",
                event_name=record.event_name or "",
            )
        )
        resource_logs.scope_logs.append(scope_logs)
        request.resource_logs.append(resource_logs)
    return request


def _attributes(attributes: Any) -> list[KeyValue]:
    return [KeyValue(key=k, value=any_value(v)) for k, v in (attributes or {}).items()]
