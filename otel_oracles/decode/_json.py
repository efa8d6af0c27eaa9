"""OTLP/JSON request bodies, decoded by the compiled core (``native/core/src/otlp_json.rs``).

The core holds every rule (camelCase or snake_case keys, enum names or numbers, 64-bit
integers as strings or numbers, hex or base64 ids, located problems) and converts every
attribute value while decoding, so a malformed one is in ``batch.problems`` when this
returns. Here the results become the stage's types: a ``DecodedBatch``, ``InvalidJson`` for
text that is not JSON (with the line and column the callers word their messages with) and
``InputError`` for JSON that is not an OTLP request or nests too deeply.
"""

from __future__ import annotations

from collections.abc import Iterator

from otel_oracles._native import Batch, JsonSyntaxError, decode_json, decode_json_many
from otel_oracles.decode._batch import DecodedBatch, decoded_batch
from otel_oracles.errors import InputError


class InvalidJson(ValueError):
    """The body is not JSON: ``msg`` says why, at 1-based ``lineno`` and ``colno``."""

    def __init__(self, msg: str, lineno: int, colno: int) -> None:
        super().__init__(f"{msg} at line {lineno} column {colno}")
        self.msg = msg
        self.lineno = lineno
        self.colno = colno


def decode_json_body(data: bytes, start: int = 0, end: int | None = None) -> DecodedBatch:
    """Decode one OTLP/JSON request (traces, logs or metrics, told apart by key):
    ``data[start:end]``, read in place (a file's lines are places in the block read).

    Raises ``InvalidJson`` for text that is not JSON and ``InputError`` for JSON that is not
    an OTLP request."""
    return decoded_batch(decode_json_native(data, start, end))


def decode_json_native(data: bytes, start: int = 0, end: int | None = None) -> Batch:
    """``decode_json_body`` without building the Python records (the core's ``Batch``)."""
    try:
        return decode_json(data, start, end)
    except JsonSyntaxError as exc:
        raise _invalid(exc) from None
    except ValueError as exc:
        raise InputError(str(exc)) from None


def decode_json_requests(
    data: bytes, start: int = 0, end: int | None = None
) -> Iterator[DecodedBatch | InputError]:
    """The requests of a JSON array of them (some tools dump a list of export bodies),
    ``data[start:end]`` read in place, in order: each a ``DecodedBatch``, or the
    ``InputError`` saying why that item is not one. Raises ``InvalidJson`` when the range is
    not JSON at all."""
    try:
        items = decode_json_many(data, start, end)
    except JsonSyntaxError as exc:
        raise _invalid(exc) from None
    except ValueError as exc:
        raise InputError(str(exc)) from None
    for item in items:
        yield InputError(item) if isinstance(item, str) else decoded_batch(item)


def _invalid(exc: JsonSyntaxError) -> InvalidJson:
    msg, lineno, colno = exc.args
    return InvalidJson(str(msg), int(lineno), int(colno))
