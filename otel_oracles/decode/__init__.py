"""decode stage: OTLP bytes (protobuf or JSON, bodies or files) -> span and log records.

The server and the file reader share these decoders. ``decode`` handles one request body as
an OTLP/HTTP server receives it; ``read_paths`` streams files, directories, globs and stdin.
See ``docs/ingest.md`` for the accepted formats and the bad-input rules.
"""

from __future__ import annotations

from otel_oracles._native import WireSpan
from otel_oracles.decode._batch import DecodedBatch, decoded_batch
from otel_oracles.decode._compression import (
    CorruptCompression,
    DecompressedTooLarge,
    decompress_body,
)
from otel_oracles.decode._files import read_paths
from otel_oracles.decode._gc import bulk_ingest_gc
from otel_oracles.decode._json import InvalidJson, decode_json_native
from otel_oracles.decode._proto import Signal, decode_proto
from otel_oracles.decode._transfer import (
    BodyContents,
    BodyKind,
    RequestBody,
    WireLog,
    batch_for_transfer,
    body_batch,
    body_contents,
)
from otel_oracles.decode.config import DEFAULT_MAX_MESSAGE_BYTES
from otel_oracles.errors import InputError

PROTOBUF_CONTENT_TYPES = frozenset({"application/x-protobuf", "application/protobuf"})
JSON_CONTENT_TYPES = frozenset({"application/json"})


def decode(
    payload: bytes, content_type: str, *, signal: Signal = "traces", for_transfer: bool = False
) -> DecodedBatch:
    """Decode one OTLP request body.

    ``content_type`` is the HTTP header value (parameters such as ``; charset=utf-8`` are
    ignored). Protobuf bodies are read as ``signal`` (the URL path tells a server which);
    JSON bodies say their signal by key (``resourceSpans`` / ``resourceLogs`` /
    ``resourceMetrics``; metrics are counted in ``ignored``). Raises ``InputError`` when the
    body is not that format at all; problems inside a readable body are in
    ``batch.problems`` (the affected span is rejected or the field read as unspecified).
    Every attribute value is converted here: a malformed one reads as ``None`` and is in
    ``batch.problems`` when this returns.

    ``for_transfer``: the caller only assembles the spans and hands them to another
    process; they then come as lightweight ``WireSpan``s (see ``_transfer``), which that
    process turns back into these records from the body.
    """
    media_type = content_type.split(";", 1)[0].strip().lower()
    if media_type in PROTOBUF_CONTENT_TYPES:
        return decode_proto(payload, signal, for_transfer)
    if media_type in JSON_CONTENT_TYPES:
        try:
            native = decode_json_native(payload)
        except InvalidJson as exc:
            raise InputError(
                f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
            ) from None
        if for_transfer and (native.span_count or native.log_count):
            # Stand-ins for the records (the caller only assembles them).
            return batch_for_transfer(native, RequestBody(payload, "json"))
        return decoded_batch(native)
    raise InputError(
        f"unsupported content type {content_type!r}: expected application/x-protobuf "
        "or application/json"
    )


__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "BodyContents",
    "BodyKind",
    "CorruptCompression",
    "DecodedBatch",
    "DecompressedTooLarge",
    "InputError",
    "RequestBody",
    "Signal",
    "WireLog",
    "WireSpan",
    "body_batch",
    "body_contents",
    "bulk_ingest_gc",
    "decode",
    "decompress_body",
    "read_paths",
]
