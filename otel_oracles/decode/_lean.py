"""Protobuf message classes for OTLP whose ``attributes`` fields are maps.

Why: with the stock generated classes every ``KeyValue`` read from Python costs two wrapper
objects (the ``KeyValue`` and its ``AnyValue``), about 1 µs per attribute; a span with a dozen
attributes costs more to *look at* than to parse. A ``map<string, AnyValue>`` entry has exactly
the wire format of ``KeyValue`` (key = field 1, value = field 2), so we parse the same bytes
with a copy of the OTLP descriptors in which every ``repeated KeyValue attributes`` field is
declared as a map. upb then answers ``key in attrs`` and ``attrs.get(key)`` from a C hash table
and creates Python objects only for the attributes somebody actually reads.

Differences from the stock classes, both harmless for reading: duplicate keys keep the last
value (OTLP forbids duplicates anyway), and the nested ``KeyValueList`` of ``AnyValue`` is left
as it is (it is converted whole when read, order preserved).

The descriptors live in a private ``DescriptorPool`` so they never clash with the generated
classes other code (the OTel SDK exporters, our server) uses.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.logs.v1 import logs_pb2
from opentelemetry.proto.resource.v1 import resource_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

_ANY_VALUE = ".opentelemetry.proto.common.v1.AnyValue"

# (file, dotted message path inside the file) whose `attributes` field becomes a map.
_MAP_FIELDS: dict[str, list[str]] = {
    resource_pb2.DESCRIPTOR.name: ["Resource"],
    trace_pb2.DESCRIPTOR.name: ["Span", "Span.Event", "Span.Link"],
    logs_pb2.DESCRIPTOR.name: ["LogRecord"],
}


def _find(file_proto: descriptor_pb2.FileDescriptorProto, path: str) -> Any:
    names = path.split(".")
    msg = next(m for m in file_proto.message_type if m.name == names[0])
    for name in names[1:]:
        msg = next(m for m in msg.nested_type if m.name == name)
    return msg


def _mapify(file_proto: descriptor_pb2.FileDescriptorProto, path: str) -> None:
    msg = _find(file_proto, path)
    field = next(f for f in msg.field if f.name == "attributes")
    entry = msg.nested_type.add()
    entry.name = "AttributesEntry"
    entry.options.map_entry = True
    key = entry.field.add(
        name="key", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING
    )
    key.label = descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
    value = entry.field.add(
        name="value",
        number=2,
        type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
        type_name=_ANY_VALUE,
    )
    value.label = descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
    field.type_name = f".{file_proto.package}.{path}.AttributesEntry"


def _build() -> tuple[Any, Any]:
    pool = descriptor_pool.DescriptorPool()
    # Dependency order: each file only after the files it imports.
    for module in (
        common_pb2,
        resource_pb2,
        trace_pb2,
        logs_pb2,
        trace_service_pb2,
        logs_service_pb2,
    ):
        file_proto = descriptor_pb2.FileDescriptorProto()
        module.DESCRIPTOR.CopyToProto(file_proto)
        for path in _MAP_FIELDS.get(file_proto.name, []):
            _mapify(file_proto, path)
        pool.Add(file_proto)
    traces = message_factory.GetMessageClass(
        pool.FindMessageTypeByName(
            "opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest"
        )
    )
    logs = message_factory.GetMessageClass(
        pool.FindMessageTypeByName("opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest")
    )
    return traces, logs


# Same wire format as ExportTraceServiceRequest / TracesData (both: repeated ResourceSpans = 1).
LeanTracesRequest, LeanLogsRequest = _build()
