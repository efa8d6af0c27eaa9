"""Spans decoded to be handed to another process: spans travel as positions in their body.

Why: ``serve``'s receiving process assembles traces and hands complete ones to grading worker
processes. It never reads a span's attributes, events or links, yet building full records
cost it more than parsing the request, and pickling them (every lazy attribute view turned
into a dict, or every protobuf span serialized again) about as much again. So it decodes
spans as ``WireSpan``s: just what assembly reads (ids, end time, the resource's
``service.name``, the scope name) plus the request body and the span's position in it. The
receiving process keeps only the raw body and a compact native entry per buffered span: the
core decodes a body for transfer to ``TransferSpans`` (``Batch.transfer_spans``), which the
online assembler buffers without a Python object per span and turns into ``WireSpan``s when
the trace is released (``_native.WireSpan``: the compact entry itself, its fields read on
access).

A worker is sent, per message, a part of each body its traces have spans in
(``RequestBody.part``): a protobuf body cut down to those spans by the core
(``_native.select_proto``, which copies their bytes under their resource and scope without
decoding them), else the whole body. It decodes the part with the same decoder
(``body_batch``) and builds the records of its positions. The spans of one body belong to
traces spread over every worker; sending each worker whole bodies made every worker decode
the whole stream.

Log records take the same route as ``WireLog``s (what assembly reads of them: trace and
span id, time, origin). Positions are the decoded records' order (the decoders are
deterministic, so a part decodes to the records at the positions it was cut to).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, cast

from otel_oracles.decode._batch import DecodedBatch, decoded_batch
from otel_oracles.model.span import EMPTY, LogRecord, SpanRecord

if TYPE_CHECKING:
    from otel_oracles._native import Batch

BodyKind = Literal["proto-traces", "proto-logs", "json"]


class RequestBody:
    """One request body, shared by the ``WireSpan``s decoded from it; ``id`` names it
    within the receiving process. ``cuttable``: a protobuf body the decoder rejected no
    record of, so its records' positions are those of every record message on the wire and
    ``part`` can cut it down to some of them.

    Its bytes are the largest part of what ``serve`` holds per buffered span (about 1.5 KB
    a span on the wire), and ``serve``'s spool already has them on disk: once a request is
    spooled, ``spill`` drops them from memory and ``payload`` reads them back from there
    (when a worker is sent spans of the body)."""

    __slots__ = ("_payload", "_reader", "cuttable", "id", "kind")
    _ids = itertools.count()

    def __init__(self, payload: bytes, kind: BodyKind, cuttable: bool = False) -> None:
        self.id = next(RequestBody._ids)
        self.kind: BodyKind = kind
        self.cuttable = cuttable
        self._payload: bytes | None = payload
        self._reader: Callable[[], bytes] | None = None

    @property
    def payload(self) -> bytes:
        """The body's bytes: held, or read back through the ``spill`` reader."""
        payload = self._payload
        if payload is not None:
            return payload
        assert self._reader is not None, "spilled without a reader"
        return self._reader()

    def part(self, payload: bytes, positions: list[int]) -> tuple[bytes, list[int] | None]:
        """What a worker is sent for the records of this body at ``positions`` (of
        ``payload``, this body's bytes; ascending, without repeats, as
        ``_native.wire_references`` gives them): a cuttable body cut down to those records,
        with ``positions`` (the cut keeps them in position order: a position's place in that
        list is its record's in the part); any other body whole (``None``: positions
        unchanged)."""
        if not self.cuttable:
            return payload, None
        from otel_oracles._native import select_proto

        return select_proto(payload, positions), positions

    def spill(self, reader: Callable[[], bytes]) -> None:
        """Drop the bytes held in memory; ``reader`` gives them back (a durable copy must
        outlive every span of this body that is still to be sent)."""
        self._reader = reader
        self._payload = None


class WireLog:
    """What assembly reads of a log record, and where the rest is (see the module
    docstring). Never pickled: a worker is sent a reference (``_native.wire_references``)."""

    __slots__ = ("body", "index", "resource", "scope_name", "span_id", "time_ns", "trace_id")

    def __init__(self, body: RequestBody, index: int, record: LogRecord,
                 resource: Mapping[str, Any]) -> None:  # fmt: skip
        self.body = body
        self.index = index
        self.trace_id = record.trace_id
        self.span_id = record.span_id
        self.time_ns = record.time_ns
        self.resource = resource
        self.scope_name = record.scope_name


def service_only(resource: Mapping[str, Any]) -> Mapping[str, Any]:
    """The part of a resource a ``WireSpan`` keeps: its ``service.name``."""
    service = resource.get("service.name")
    return EMPTY if service is None else {"service.name": service}


BodyContents = tuple[list[SpanRecord], list[LogRecord]]
"""A body's spans (by ``WireSpan.index``) and log records (by ``WireLog.index``)."""


def body_contents(kind: BodyKind, payload: bytes) -> BodyContents:
    """Decode a (previously accepted) request body again, every record built."""
    return body_batch(kind, payload).records()


def body_batch(kind: BodyKind, payload: bytes) -> Batch:
    """Decode a (previously accepted) request body again, in another process, to the core's
    batch: a grading worker builds the records of the positions it is given from it
    (``_native.RecordBuilder``), not the whole body's."""
    # Imported here: the decoders import this module (it defines what they return).
    from otel_oracles.decode._json import decode_json_native
    from otel_oracles.decode._proto import decode_body

    if kind == "json":
        return decode_json_native(payload)
    native, _ = decode_body(payload, "logs" if kind == "proto-logs" else "traces")
    return native


def batch_for_transfer(native: Batch, body: RequestBody) -> DecodedBatch:
    """The ``DecodedBatch`` of stand-ins for a body the core decoded (any format): spans as
    the core's ``TransferSpans`` (compact entries read as ``WireSpan``s, never their
    attribute dicts), log records as ``WireLog``s, positions in list order."""
    # A sequence of WireSpans; serve's assembler buffers it without building them.
    spans = cast(list[SpanRecord], native.transfer_spans(body))
    logs = native.records()[1] if native.log_count else []
    return decoded_batch(native, (spans, cast(list[LogRecord], logs_for_transfer(logs, body))))


def logs_for_transfer(logs: list[LogRecord], body: RequestBody) -> list[WireLog]:
    """``WireLog``s for the log records a body decoded to (positions = list order)."""
    service_of = _service_memo()
    return [WireLog(body, i, r, service_of(r.resource)) for i, r in enumerate(logs)]


def _service_memo() -> Callable[[Mapping[str, Any]], Mapping[str, Any]]:
    """``service_only`` once per resource mapping (the records of one resource share it)."""
    seen: dict[int, Mapping[str, Any]] = {}

    def service_of(resource: Mapping[str, Any]) -> Mapping[str, Any]:
        found = seen.get(id(resource))
        if found is None:
            found = seen[id(resource)] = service_only(resource)
        return found

    return service_of
