"""Spans decoded to be handed to another process: request bodies travel once, spans by position.

Why: ``serve``'s receiving process assembles traces and hands complete ones to grading worker
processes. It never reads a span's attributes, events or links, yet building full records
cost it more than parsing the request, and pickling them (every lazy attribute view turned
into a dict, or every protobuf span serialized again) about as much again. So it decodes
spans as ``WireSpan``s: just what assembly reads (ids, end time, the resource's
``service.name``, the scope name) plus the request body and the span's position in it. A
worker is sent each body once, decodes it with the same decoder (``spans_in_body``) and takes
the spans it is given by position (``record_in_body``). The receiving process keeps only the
raw body and a small object per buffered span.

Positions: in a protobuf body, every span in order (rejected ones included, so the index is
known before the checks); in an OTLP/JSON body, the accepted records in order (the decoder
is deterministic, so the worker's decode yields the same list).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any, Literal

from otel_oracles.model.span import EMPTY, SpanRecord

BodyKind = Literal["proto", "json"]


class RequestBody:
    """One request body, shared by the ``WireSpan``s decoded from it; ``id`` names it
    between processes (a grading worker receives each body once)."""

    __slots__ = ("__weakref__", "id", "kind", "payload", "shipped")
    _ids = itertools.count()

    def __init__(self, payload: bytes, kind: BodyKind = "proto") -> None:
        self.id = next(RequestBody._ids)
        self.kind: BodyKind = kind
        self.payload = payload
        self.shipped = False


class WireSpan:
    """What assembly reads of a span, and where the rest is (see the module docstring).
    Pickled on its own it becomes the full ``SpanRecord`` (``span_in_body``)."""

    __slots__ = (
        "body",
        "end_ns",
        "index",
        "parent_span_id",
        "resource",
        "scope_name",
        "span_id",
        "trace_id",
    )

    def __init__(
        self,
        body: RequestBody,
        index: int,
        trace_id: str,
        span_id: str,
        parent: str,
        end_ns: int,
        resource: Mapping[str, Any],
        scope_name: str,
    ) -> None:
        self.body = body
        self.index = index
        self.trace_id = trace_id
        self.span_id = span_id
        self.parent_span_id = parent
        self.end_ns = end_ns
        self.resource = resource
        self.scope_name = scope_name

    def __reduce__(self) -> tuple[Any, ...]:
        return (span_in_body, (self.body.kind, self.body.payload, self.index))


def service_only(resource: Mapping[str, Any]) -> Mapping[str, Any]:
    """The part of a resource a ``WireSpan`` keeps: its ``service.name``."""
    service = resource.get("service.name")
    return EMPTY if service is None else {"service.name": service}


BodySpan = tuple[Any, Any, str, str] | SpanRecord
"""One span of a body as a worker keeps it: (upb span, resource attributes, scope name,
scope version) for protobuf, the decoded record for OTLP/JSON."""


def spans_in_body(kind: BodyKind, payload: bytes) -> list[BodySpan]:
    """Every span of a (previously accepted) request body, by ``WireSpan.index``."""
    from otel_oracles.decode._json_fast import decode_json_bytes
    from otel_oracles.decode._proto import parse
    from otel_oracles.decode._values import PbAttributes

    if kind == "json":
        return list(decode_json_bytes(payload).spans)
    message = parse(payload, "traces")
    out: list[BodySpan] = []
    for rs in message.resource_spans:
        resource = PbAttributes(rs.resource.attributes) if rs.resource.attributes else EMPTY
        for ss in rs.scope_spans:
            name, version = ss.scope.name, ss.scope.version
            out.extend((span, resource, name, version) for span in ss.spans)
    return out


def record_in_body(entry: BodySpan) -> SpanRecord:
    """The record the decoder made of that span when it accepted the body."""
    if isinstance(entry, SpanRecord):
        return entry
    from otel_oracles.decode._proto import record_of

    return record_of(*entry)


def span_in_body(kind: BodyKind, payload: bytes, index: int) -> SpanRecord:
    """One span of a body as a full record (``WireSpan.__reduce__``; the grading workers
    keep each body's ``spans_in_body`` instead of decoding it per span)."""
    return record_in_body(spans_in_body(kind, payload)[index])


def json_for_transfer(spans: list[SpanRecord], payload: bytes) -> list[WireSpan]:
    """``WireSpan``s for the records an OTLP/JSON body decoded to (positions = list order)."""
    body = RequestBody(payload, "json")
    services: dict[int, Mapping[str, Any]] = {}
    out = []
    for index, s in enumerate(spans):
        resource = services.get(id(s.resource))
        if resource is None:
            resource = services[id(s.resource)] = service_only(s.resource)
        wire = WireSpan(body, index, s.trace_id, s.span_id, s.parent_span_id, s.end_ns,
                        resource, s.scope_name)  # fmt: skip
        out.append(wire)
    return out
