"""The native protobuf decoder against the upb-based Python one it replaces: equal records,
problems, rejected counts, plausibility and refusals on every protobuf body the project
holds, on mutations of them and on the wire format's corner cases."""

from __future__ import annotations

import random
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from otel_oracles import _native
from otel_oracles.decode import _proto
from otel_oracles.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
ROOTS = [ROOT / "tests" / "testdata", ROOT / "examples", Path("/work/shared/traces")]
MUTATIONS_PER_BODY = 4


def _norm(value: Any) -> Any:
    if isinstance(value, float):
        return ("float", struct.pack("<d", value))  # NaN equals itself bit for bit
    if isinstance(value, list):
        return [_norm(v) for v in value]
    if hasattr(value, "items"):
        return {k: _norm(v) for k, v in value.items()}
    return value


def _span(s: Any) -> tuple[Any, ...]:
    return (
        s.trace_id, s.span_id, s.parent_span_id, s.name, s.kind, s.start_ns, s.end_ns,
        s.status_code, s.status_message, _norm(s.attributes),
        [(e.name, e.time_ns, _norm(e.attributes), e.body, e.from_log) for e in s.events],
        [(ln.trace_id, ln.span_id, _norm(ln.attributes)) for ln in s.links],
        _norm(s.resource), s.scope_name, s.scope_version,
    )  # fmt: skip


def _log(r: Any) -> tuple[Any, ...]:
    return (
        r.trace_id, r.span_id, r.event_name, r.time_ns, _norm(r.attributes), _norm(r.body),
        r.severity_number, _norm(r.resource), r.scope_name,
    )  # fmt: skip


def _old(payload: bytes, signal: _proto.Signal) -> tuple[Any, ...]:
    try:
        message = _proto.parse(payload, signal)
    except InputError as exc:
        return ("refused", exc.message)
    batch = _proto.logs_batch(message) if signal == "logs" else _proto.traces_batch(message)
    return (
        _proto.looks_like(message, signal),
        [_span(s) for s in batch.spans],
        [_log(r) for r in batch.logs],
        list(batch.problems),
        batch.problems.omitted,
        batch.rejected,
    )


def _new(payload: bytes, signal: _proto.Signal) -> tuple[Any, ...]:
    try:
        batch, plausible = _native.decode_proto(payload, signal)
    except ValueError as exc:
        kind = "ExportLogsServiceRequest" if signal == "logs" else "ExportTraceServiceRequest"
        return (
            "refused",
            f"not a valid protobuf {kind} ({len(payload)} bytes): {exc} "
            "(truncated or not OTLP protobuf?)",
        )
    spans, logs = batch.records()
    return (
        plausible,
        [_span(s) for s in spans],
        [_log(r) for r in logs],
        batch.problems,
        batch.problems_omitted,
        batch.rejected,
    )


def _bodies() -> list[Path]:
    found: set[Path] = set()
    for root in ROOTS:
        if root.is_dir():
            found.update(p for p in root.rglob("*.pb") if p.is_file())
    return sorted(found)


def _mutate(data: bytes, rnd: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rnd.randint(1, 4)):
        if not out:
            break
        i = rnd.randrange(len(out))
        op = rnd.randrange(4)
        if op == 0:
            out[i] = rnd.randrange(256)
        elif op == 1:
            del out[i : i + rnd.randint(1, 8)]
        elif op == 2:
            out[i:i] = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 4)))
        else:
            del out[i:]
    return bytes(out)


def _ld(number: int, payload: bytes) -> bytes:
    size, length = len(payload), bytearray()
    while True:
        byte, size = size & 0x7F, size >> 7
        length.append(byte | (0x80 if size else 0))
        if not size:
            break
    return bytes([number << 3 | 2]) + bytes(length) + payload


def _with_value(value: bytes, entry_extra: bytes = b"") -> bytes:
    entry = _ld(1, b"k") + _ld(2, value) + entry_extra
    span = _ld(1, b"\x01" * 16) + _ld(2, b"\x02" * 8) + _ld(9, entry)
    return _ld(1, _ld(2, _ld(2, span)))


def _nested(levels: int, inner: bytes) -> bytes:
    for _ in range(levels):
        inner = _ld(5, _ld(1, inner))
    return inner


def _corner_cases() -> Iterator[bytes]:
    string = _ld(1, b"x")
    yield from (_with_value(_nested(n, string)) for n in (46, 47, 48))
    yield _with_value(_nested(47, _ld(5, b"")))
    yield from (_with_value(_nested(47, b"\x7b" * g + b"\x7c" * g)) for g in (1, 2))
    yield from (b"\x7b" * g + b"\x7c" * g for g in (100, 101))
    yield _with_value(string + b"\x18\x05")  # a later variant replaces the string
    yield _with_value(_ld(5, _ld(1, string)) + _ld(5, _ld(1, string)))  # arrays merge
    yield _with_value(b"\x40\x07")  # string_value_strindex
    yield _with_value(string, b"\x18\x01")  # an entry with key_strindex
    yield _with_value(string, b"\x1a\x00")
    yield bytes([0x88, 0x80, 0x80, 0x80, 0x80, 0x00, 0x01])  # a 6-byte tag
    yield bytes([0x12, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00])  # a 6-byte length
    yield b"\x08" + b"\xff" * 9 + b"\x01"
    yield b"\x08" + b"\xff" * 10 + b"\x01"
    yield _ld(1, b"\x1a\x05ab") + b"\xff" * 8  # a string running past its message
    yield _ld(1, b"\x1a\x05ab") + b"abcdefgh"
    yield b"\x0c"
    yield b"\x0e"


def _inputs() -> Iterator[tuple[str, bytes]]:
    rnd = random.Random(18)
    for path in _bodies():
        data = path.read_bytes()
        yield str(path.relative_to(path.anchor)), data
        for k in range(MUTATIONS_PER_BODY if len(data) < 100_000 else 0):
            yield f"{path.name}#mutation{k}", _mutate(data, rnd)
    for k, case in enumerate(_corner_cases()):
        yield f"corner case {k}", case


def test_there_are_protobuf_bodies_to_compare() -> None:
    assert len(_bodies()) > 500


@pytest.mark.parametrize("signal", ["traces", "logs"])
def test_native_decoder_equals_the_upb_decoder(signal: _proto.Signal) -> None:
    differ = []
    compared = 0
    for label, data in _inputs():
        compared += 1
        if _old(data, signal) != _new(data, signal):
            differ.append(label)
    assert compared > 2000
    assert differ == []
