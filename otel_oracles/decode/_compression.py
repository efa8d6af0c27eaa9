"""Compressed OTLP, decoded whole or refused.

A compressed body is several gzip members or zstd frames as often as one (a sender that
flushes, ``cat a.gz b.gz``, the collector's file exporter). Decoding only the first part and
answering success loses the rest silently, and ``zstandard``'s stream reader also ends
quietly on a truncated frame. So every gzip member and every zstd frame is decoded, a stream
that ends inside one is refused (``CorruptCompression``), and output never grows past the
caller's limit (``DecompressedTooLarge``), however small the input.

zstd truncation is found from the frame structure (RFC 8878: frame header, block headers
with sizes and a last-block bit, optional checksum), walked over the compressed bytes as they
pass; the decompressor itself only ever reads whole frames.
"""

from __future__ import annotations

import io
import sys
import zlib
from typing import IO, Any, cast

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_SKIPPABLE_LOW, _SKIPPABLE_HIGH = 0x184D2A50, 0x184D2A5F


class CorruptCompression(ValueError):
    """The compressed data is invalid, truncated, or followed by bytes that are not another
    member/frame."""


class DecompressedTooLarge(ValueError):
    """The data decompresses to more than the allowed number of bytes."""


def decompress_body(body: bytes, encoding: str, limit: int) -> bytes:
    """Every member (gzip) or frame (zstd) of ``body``, at most ``limit`` bytes of output.

    ``encoding`` is ``gzip``, ``deflate`` (zlib-wrapped, one stream) or ``zstd``."""
    if encoding == "zstd":
        return _zstd_body(body, limit)
    return _zlib_body(body, encoding, limit)


def _zlib_body(body: bytes, encoding: str, limit: int) -> bytes:
    wbits = 15 if encoding == "deflate" else 31
    out = bytearray()
    rest = body
    while True:
        d = zlib.decompressobj(wbits)
        try:
            out += d.decompress(rest, limit + 1 - len(out))
        except zlib.error as exc:
            raise CorruptCompression(f"not valid {encoding}: {exc}") from None
        if len(out) > limit or d.unconsumed_tail:
            raise DecompressedTooLarge(f"decompresses to more than {limit} bytes")
        if not d.eof:
            raise CorruptCompression(f"{encoding} stream is truncated")
        rest = d.unused_data
        if not rest:
            return bytes(out)
        if encoding == "deflate" or rest[:2] != GZIP_MAGIC:
            raise CorruptCompression(
                f"{len(rest)} byte(s) after the end of the {encoding} stream are not "
                "another gzip member"
            )


def _zstd_body(body: bytes, limit: int) -> bytes:
    walker = ZstdFrameWalker()
    walker.feed(body)
    walker.finish()
    import zstandard  # only a zstd body pays for it (see decompressor_errors)

    reader = zstandard.ZstdDecompressor().stream_reader(body, read_across_frames=True)
    try:
        out: bytes = reader.read(limit + 1)
    except zstandard.ZstdError as exc:
        raise CorruptCompression(f"not valid zstd: {exc}") from None
    if len(out) > limit:
        raise DecompressedTooLarge(f"decompresses to more than {limit} bytes")
    return out


class ZstdFrameWalker:
    """Follows zstd frame structure over bytes fed in any pieces; ``finish`` raises
    ``CorruptCompression`` when the data ended inside a frame. Costs a few header reads per
    128 KiB block, nothing per content byte."""

    __slots__ = ("_buf", "_checksum", "_need", "_skip", "_started", "_state")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._skip = 0
        self._state = "magic"
        self._need = 4
        self._checksum = False
        self._started = 0
        """Frames begun so far (a frame is complete once the walker is back at a magic)."""

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data)
        while view:
            if self._skip:
                n = min(self._skip, len(view))
                self._skip -= n
                view = view[n:]
                continue
            take = min(self._need - len(self._buf), len(view))
            self._buf += view[:take]
            view = view[take:]
            if len(self._buf) == self._need:
                self._step()

    def finish(self) -> None:
        if self._state != "magic" or self._buf or self._skip:
            raise CorruptCompression(
                f"zstd stream is truncated: it ends inside frame {self._started}"
            )
        if not self._started:
            raise CorruptCompression("zstd stream holds no frame")

    def _goto(self, state: str, need: int, skip: int = 0) -> None:
        self._buf.clear()
        self._state, self._need, self._skip = state, need, skip

    def _step(self) -> None:
        buf = self._buf
        state = self._state
        if state == "magic":
            magic = int.from_bytes(buf, "little")
            if bytes(buf) == ZSTD_MAGIC:
                self._goto("descriptor", 1)
            elif _SKIPPABLE_LOW <= magic <= _SKIPPABLE_HIGH:
                self._goto("skippable", 4)
            else:
                raise CorruptCompression(
                    f"bytes after zstd frame {self._started} are not another zstd frame"
                )
            self._started += 1
        elif state == "skippable":
            self._goto("magic", 4, int.from_bytes(buf, "little"))
        elif state == "descriptor":
            fhd = buf[0]
            fcs_flag, single, dict_flag = fhd >> 6, (fhd >> 5) & 1, fhd & 3
            self._checksum = bool((fhd >> 2) & 1)
            fcs = (1 if single else 0, 2, 4, 8)[fcs_flag]
            rest = (0 if single else 1) + (0, 1, 2, 4)[dict_flag] + fcs
            if rest:
                self._goto("header", rest)
            else:
                self._goto("block", 3)
        elif state == "header":
            self._goto("block", 3)
        elif state == "block":
            header = int.from_bytes(buf, "little")
            last, kind, size = header & 1, (header >> 1) & 3, header >> 3
            if kind == 3:
                raise CorruptCompression(f"zstd frame {self._started} has a reserved block")
            content = 1 if kind == 1 else size
            if not last:
                self._goto("block", 3, content)
            elif self._checksum:
                self._goto("checksum", 4, content)
            else:
                self._goto("magic", 4, content)
        elif state == "checksum":
            self._goto("magic", 4)


class _WalkedZstdSource(io.RawIOBase):
    """The compressed file as the decompressor reads it, walked on the way; at its end a
    stream that stopped inside a frame raises ``EOFError`` (what gzip raises too)."""

    def __init__(self, raw: Any) -> None:
        self._raw = raw
        self._walker = ZstdFrameWalker()
        self._done = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._raw.read(len(buffer))
        if data:
            self._walker.feed(data)
            n = len(data)
            buffer[:n] = data
            return n
        if not self._done:
            self._done = True
            try:
                self._walker.finish()
            except CorruptCompression as exc:
                raise EOFError(str(exc)) from None
        return 0


def zstd_stream(raw: Any) -> Any:
    """A reader of every frame of the zstd stream ``raw``; raises ``EOFError`` when it is
    truncated and ``zstandard.ZstdError`` when it is corrupt."""
    import zstandard  # only a zstd stream pays for it

    source = cast("IO[bytes]", _WalkedZstdSource(raw))
    return zstandard.ZstdDecompressor().stream_reader(source, read_across_frames=True)


def decompressor_errors(*others: type[Exception]) -> tuple[type[Exception], ...]:
    """``others`` and the error classes of ``gzip`` and ``zstandard`` that are loaded, for
    the ``except`` clauses around reads: ``except decompressor_errors(EOFError, ...)``.

    Both modules are imported only when a compressed input is met: ``zstandard`` alone is
    about 24 M instructions in a fresh interpreter, and most inputs are plain. An ``except``
    clause's expression is evaluated only when an exception is on its way, and an error of a
    module that was never imported cannot be that exception; so the clause names what is
    loaded and imports nothing (not even on a generator's ``GeneratorExit``)."""
    errors = list(others)
    gzip = sys.modules.get("gzip")
    if gzip is not None:
        errors.append(gzip.BadGzipFile)
    zstandard = sys.modules.get("zstandard")
    if zstandard is not None:
        errors.append(zstandard.ZstdError)
    return tuple(errors)


class LimitedReader(io.RawIOBase):
    """At most ``limit`` bytes of ``inner`` (a decompressed stream); one byte more raises
    ``DecompressedTooLarge`` instead of decompressing on without end."""

    def __init__(self, inner: Any, limit: int) -> None:
        self._inner = inner
        # read1: what is ready now, so a stream that fails later still hands over what it
        # decoded before the failure (lines before a truncation are kept).
        self._read = getattr(inner, "read1", inner.read)
        self._limit = limit
        self._seen = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._read(len(buffer))
        n = len(data)
        self._seen += n
        if self._seen > self._limit:
            raise DecompressedTooLarge(f"decompresses to more than {self._limit} bytes")
        buffer[:n] = data
        return n
