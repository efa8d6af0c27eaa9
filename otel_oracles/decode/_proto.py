"""OTLP protobuf request bodies -> span and log records, decoded by the native core.

The core (``native/core/src/otlp_proto.rs``) reads the bytes, checks ids and enums and
collects the located problems without the interpreter; this module turns its answer into
the stage's ``DecodedBatch`` and its refusals into ``InputError``.
"""

from __future__ import annotations

from typing import Literal

from otel_oracles._native import Batch
from otel_oracles._native import decode_proto as native_decode_proto
from otel_oracles.decode._batch import DecodedBatch, decoded_batch
from otel_oracles.decode._transfer import BodyKind, RequestBody, batch_for_transfer
from otel_oracles.errors import InputError

Signal = Literal["traces", "logs"]

_MESSAGE_NAMES: dict[Signal, str] = {
    "traces": "ExportTraceServiceRequest",
    "logs": "ExportLogsServiceRequest",
}


def decode_body(
    payload: bytes,
    signal: Signal,
    for_transfer: bool = False,
    *,
    start: int = 0,
    end: int | None = None,
) -> tuple[Batch, bool]:
    """Decode a request body read as ``signal``: the core's batch, and whether the body
    plausibly is that signal (traces and logs requests share their outer field numbers, so
    the other signal's bytes often decode; the first records tell). Raises ``InputError``
    when the bytes are not that message. ``for_transfer``: the batch is only read for its
    ``transfer_spans`` (``_native.decode_proto``). The body is ``payload[start:end]`` (all of
    it by default): a framed file's message where it lies in the block read."""
    end = len(payload) if end is None else end
    try:
        return native_decode_proto(payload, signal, for_transfer, start, end)
    except ValueError as exc:
        raise InputError(
            f"not a valid protobuf {_MESSAGE_NAMES[signal]} ({end - start} bytes): {exc} "
            "(truncated or not OTLP protobuf?)"
        ) from None


def decode_proto(
    payload: bytes, signal: Signal = "traces", for_transfer: bool = False
) -> DecodedBatch:
    """Decode one protobuf request body of the given signal (``for_transfer``: see
    ``WireSpan``)."""
    native, _ = decode_body(payload, signal, for_transfer)
    if not for_transfer or not (native.span_count or native.log_count):
        return decoded_batch(native)
    # Stand-ins for the records (the caller only assembles them); spans without ever
    # building their attribute dicts.
    # Cut per worker by position (``RequestBody.part``) when no record was rejected: then
    # the decoded positions are those of the record messages on the wire.
    kind: BodyKind = "proto-logs" if signal == "logs" else "proto-traces"
    body = RequestBody(payload, kind, cuttable=native.rejected == 0)
    return batch_for_transfer(native, body)
