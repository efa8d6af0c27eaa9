"""Read OTLP files, directories, globs and stdin as a stream of decoded batches.

What a file holds is decided from its bytes, with the name only as a tie-breaker:
gzip (``1f 8b``) and zstd (``28 b5 2f fd``) are unwrapped by magic number; then a first byte
below ``0x08`` (a protobuf message never starts with field number 0) means the collector
file exporter's length-prefixed frames (4-byte big-endian size before each message); a
``{`` means OTLP/JSON (one object per line, or one document when the first line is not a
complete object); anything else is a single protobuf message. The signal of a protobuf body
(traces or logs, whose outer wire layout is identical) comes from the name when it says
``logs``, else from a plausibility check of the parsed records; a body that is neither but a
valid metrics request is counted as ignored (metrics are not graded), as OTLP/JSON's are.

Bad input never stops the stream: each problem becomes an ``InputProblem`` naming the file
and line (``export.jsonl:812``) or byte offset (``export.binpb@1048580``) and reading goes on
with the next line, frame or file. Everything yielded before a problem stays valid.
"""

from __future__ import annotations

import io
import os
import stat
import sys
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from otel_oracles.decode import _proto
from otel_oracles.decode._batch import DecodedBatch, decoded_batch
from otel_oracles.decode._compression import (
    GZIP_MAGIC,
    ZSTD_MAGIC,
    CorruptCompression,
    DecompressedTooLarge,
    LimitedReader,
    decompress_body,
    decompressor_errors,
    zstd_stream,
)
from otel_oracles.decode._json import (
    InvalidJson,
    decode_json_body,
    decode_json_requests,
)
from otel_oracles.decode.config import (
    DEFAULT_MAX_DECOMPRESSED_BYTES,
    DEFAULT_MAX_MESSAGE_BYTES,
    FILE_BUFFER_BYTES,
    MAX_PROBLEMS_PER_FILE,
    READ_CHUNK_BYTES,
)
from otel_oracles.errors import InputError
from otel_oracles.model.result import InputProblem

_JSON_WS = b" \t\r\n"
_UTF8_BOM = b"\xef\xbb\xbf"
_GLOB_CHARS = frozenset("*?[")
_MESSAGE_NAMES = {"traces": "ExportTraceServiceRequest", "logs": "ExportLogsServiceRequest"}

#: File names a directory walk picks up (explicitly named files are read whatever their name).
OTLP_SUFFIXES = (".json", ".jsonl", ".ndjson", ".pb", ".binpb", ".proto", ".otlp")
COMPRESSION_SUFFIXES = (".gz", ".gzip", ".zst", ".zstd")

_JSON_LINE_SUFFIXES = (".jsonl", ".ndjson")
_PROTO_SUFFIXES = (".pb", ".binpb", ".proto")


def read_paths(
    paths: Sequence[str],
    problems: list[InputProblem],
    *,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
) -> Iterator[DecodedBatch]:
    """Yield one ``DecodedBatch`` per request found in ``paths``, in order.

    ``paths`` are files, directories (read recursively, sorted, only OTLP-looking names),
    glob patterns, or ``-`` for stdin. Problems are appended to ``problems`` as they are
    found (each batch's, malformed attribute values included, before it is yielded); this
    function never raises for bad input. Memory is bounded by ``max_message_bytes`` per
    line/message plus what the caller keeps. A compressed file (or stdin) that decompresses
    to more than ``max_decompressed_bytes`` is read up to there and reported.
    """
    limits = (max_message_bytes, max_decompressed_bytes)
    for arg in paths:
        if arg == "-":
            yield from _read_capped(sys.stdin.buffer, "<stdin>", problems, *limits)
            continue
        found, walked = _expand(arg, problems)
        for path in found:
            try:
                handle = _open(path, problems, named=not walked)
                if handle is None:
                    continue
                with handle:
                    yield from _read_capped(handle, str(path), problems, *limits)
            except OSError as exc:
                problems.append(
                    InputProblem(source=str(path), message=f"cannot read: {exc.strerror or exc}")
                )


def _open(path: Path, problems: list[InputProblem], *, named: bool) -> IO[bytes] | None:
    """``path`` opened for reading; a file a walk or pattern found must still be regular
    when it is opened. ``_regular_files`` checked every path before the first was read, but
    a path can be swapped for a FIFO (whose ``open`` waits for a writer forever) or a link
    to a device between that check and this open: so it is opened without waiting
    (``O_NONBLOCK``) and the descriptor itself is checked (``fstat``), which no later swap
    changes. A file named on its own is opened as it is (``grade <(zcat x.gz)``)."""
    if named:
        return open(path, "rb", buffering=FILE_BUFFER_BYTES)  # closed by the caller's with
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISREG(mode):
            os.set_blocking(fd, True)
            return os.fdopen(fd, "rb", buffering=FILE_BUFFER_BYTES)
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)
    problems.append(_not_regular(path, mode))
    return None


def _expand(arg: str, problems: list[InputProblem]) -> tuple[list[Path], bool]:
    """The files ``arg`` stands for, and whether a directory walk or a pattern found them
    (then they are read only while regular files) rather than ``arg`` naming the one file."""
    path = Path(arg)
    if path.is_dir():
        found = _walk(path)
        if not found:
            problems.append(
                InputProblem(
                    source=arg,
                    message="directory holds no OTLP files ("
                    + ", ".join(OTLP_SUFFIXES)
                    + ", optionally compressed)",
                )
            )
        return _regular_files(found, problems), True
    if path.exists():
        return [path], False
    if _GLOB_CHARS & set(arg):
        import glob  # only a pattern pays for it

        matches = sorted(glob.glob(arg, recursive=True))
        out: list[Path] = []
        for match in matches:
            m = Path(match)
            out.extend(_walk(m) if m.is_dir() else [m])
        if not out:
            problems.append(InputProblem(source=arg, message="no file matches this pattern"))
        return _regular_files(out, problems), True
    problems.append(InputProblem(source=arg, message="no such file or directory"))
    return [], False


def _walk(root: Path) -> list[Path]:
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if not name.startswith(".") and _looks_like_otlp_name(name):
                found.append(Path(dirpath) / name)
    return sorted(found, key=lambda p: p.parts)


_SPECIAL_KINDS = (
    (stat.S_ISFIFO, "FIFO"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
    (stat.S_ISSOCK, "socket"),
)


def _regular_files(found: list[Path], problems: list[InputProblem]) -> list[Path]:
    """``found`` (what a directory walk or a pattern matched) without the files that are not
    regular files, each of those named as a problem.

    A trace directory is data, like the traces in it: a FIFO there blocks ``open`` until
    someone writes it (forever, as nobody does), and a symbolic link to ``/dev/zero`` reads
    without end (no decompression limit applies to plain bytes). A file named on its own is
    still read whatever it is: ``grade <(zcat export.gz)`` hands a pipe on purpose. A path
    that cannot be looked at (a broken link) stays, for the reader to report."""
    out = []
    for path in found:
        try:
            mode = os.stat(path).st_mode
        except OSError:
            out.append(path)
            continue
        if stat.S_ISREG(mode):
            out.append(path)
            continue
        problems.append(_not_regular(path, mode))
    return out


def _not_regular(path: Path, mode: int) -> InputProblem:
    kind = next((name for test, name in _SPECIAL_KINDS if test(mode)), "special file")
    return InputProblem(
        source=str(path),
        message=f"not a regular file ({kind}); skipped: a directory or pattern reads "
        "regular files only (name it on its own to read it)",
    )


def _looks_like_otlp_name(name: str) -> bool:
    lower = name.lower()
    for suffix in COMPRESSION_SUFFIXES:
        if lower.endswith(suffix):
            lower = lower[: -len(suffix)]
            break
    return lower.endswith(OTLP_SUFFIXES)


class _Cursor:
    """Where the reader is, so an error from deep inside a decompressor can name the spot."""

    __slots__ = ("line", "name", "offset", "unit")

    def __init__(self, name: str) -> None:
        self.name = name
        self.unit = ""  # "line" or "offset" once known
        self.line = 0
        self.offset = 0

    def here(self) -> str:
        if self.unit == "line":
            return f"{self.name}:{max(self.line, 1)}"
        if self.unit == "offset":
            return f"{self.name}@{self.offset}"
        return self.name


class _FileProblems:
    """The problems of one file, on their way to the caller's list: the first
    ``MAX_PROBLEMS_PER_FILE`` go there, the rest are counted and named in one problem when the
    file is done. Skipped input holds no memory but its problem: a file of ``[1,1,...]`` or of
    ``{}`` lines cost ~350 bytes of problems per byte read, gigabytes for one 64 MiB document."""

    __slots__ = ("_left", "_out", "_source", "dropped")

    def __init__(self, out: list[InputProblem], source: str) -> None:
        self._out = out
        self._source = source
        self._left = MAX_PROBLEMS_PER_FILE
        self.dropped = 0

    def append(self, problem: InputProblem) -> None:
        if self._left > 0:
            self._left -= 1
            self._out.append(problem)
        else:
            self.dropped += 1

    def take(self, batch: DecodedBatch) -> None:
        """The problems of ``batch`` (read from ``batch.source``), counting the ones its
        request did not list."""
        for message in batch.problems:
            self.append(InputProblem(source=batch.source, message=message))
        self.dropped += batch.problems.omitted

    def close(self) -> None:
        if self.dropped:
            self._out.append(
                InputProblem(
                    source=self._source,
                    message=f"{self.dropped} more problems in this file are not listed "
                    f"(the first {MAX_PROBLEMS_PER_FILE} are)",
                )
            )


def _read_capped(
    raw: IO[bytes], name: str, problems: list[InputProblem], limit: int, unpacked_limit: int
) -> Iterator[DecodedBatch]:
    sink = _FileProblems(problems, name)
    try:
        yield from _read_source(raw, name, sink, limit, unpacked_limit)
    finally:
        sink.close()


def _read_source(
    raw: IO[bytes], name: str, problems: _FileProblems, limit: int, unpacked_limit: int
) -> Iterator[DecodedBatch]:
    cursor = _Cursor(name)
    try:
        stream = _unwrap(raw, unpacked_limit)
        head = _head(stream, 64)
        if head.startswith(_UTF8_BOM):  # Windows tools write one before JSON
            stream.read(len(_UTF8_BOM))
            head = _head(stream, 64)
        if not head:
            return
        lower = name.lower()
        stripped = head.lstrip(_JSON_WS)
        if head[0] < 0x08:
            yield from _read_frames(stream, cursor, problems, limit)
        elif (stripped[:1] in (b"{", b"[") or not stripped) and not _is_proto_name(lower):
            yield from _read_json(stream, cursor, problems, limit, lines=_is_lines_name(lower))
        else:
            cursor.unit = "offset"
            body = stream.read(limit + 1)
            if len(body) > limit:
                problems.append(
                    InputProblem(
                        source=name,
                        message=f"protobuf message is larger than the {limit}-byte limit; skipped",
                    )
                )
                return
            yield from _decode_proto_body(body, cursor, problems, name_says_logs=_says_logs(name))
    except DecompressedTooLarge:
        problems.append(
            InputProblem(
                source=cursor.here(),
                message=f"file decompresses to more than {unpacked_limit} bytes "
                "(grade --max-decompressed-bytes raises the limit); rest of file skipped",
            )
        )
    except decompressor_errors(  # and gzip.BadGzipFile, zstandard.ZstdError when loaded
        EOFError,
        zlib.error,
        CorruptCompression,  # the zstd frame walker, on bytes that are no (further) frame
    ) as exc:
        problems.append(
            InputProblem(
                source=cursor.here(),
                message=f"compressed stream is corrupt or truncated: {exc}; rest of file skipped",
            )
        )
    except OSError as exc:
        problems.append(
            InputProblem(
                source=cursor.here(),
                message=f"read error: {exc.strerror or exc}; rest of file skipped",
            )
        )


def _is_proto_name(lower: str) -> bool:
    return _strip_compression(lower).endswith(_PROTO_SUFFIXES)


def _is_lines_name(lower: str) -> bool:
    return _strip_compression(lower).endswith(_JSON_LINE_SUFFIXES)


def _strip_compression(lower: str) -> str:
    for suffix in COMPRESSION_SUFFIXES:
        if lower.endswith(suffix):
            return lower[: -len(suffix)]
    return lower


def _says_logs(name: str) -> bool:
    path = Path(name)
    return "logs" in path.name.lower() or "logs" in path.parent.name.lower()


def _unwrap(raw: IO[bytes], unpacked_limit: int) -> Any:
    """A peekable, decompressed view of ``raw`` (gzip/zstd recognised by magic number): every
    member or frame, ``EOFError`` when the stream stops inside one, ``DecompressedTooLarge``
    past ``unpacked_limit`` bytes."""
    # stdin or a pipe may lack peek(); a BufferedReader adds it.
    stream: Any = raw if hasattr(raw, "peek") else io.BufferedReader(raw, READ_CHUNK_BYTES)
    magic = _head(stream, 4)
    if magic[:2] == GZIP_MAGIC:
        import gzip  # only a gzip input pays for it

        inner: Any = gzip.GzipFile(fileobj=stream, mode="rb")
    elif magic == ZSTD_MAGIC:
        inner = zstd_stream(stream)
    else:
        return stream
    return io.BufferedReader(LimitedReader(inner, unpacked_limit), READ_CHUNK_BYTES)


def _head(stream: Any, size: int) -> bytes:
    """The next ``size`` bytes of ``stream`` (fewer at its end), left unread.

    Why not ``peek`` alone: it fills the stream's buffer (4 MiB for a file) and returns a
    copy of all that is buffered, and the reader copies the buffer out again. A captured
    file of one pretty-printed document is all in that first fill, so each look at its
    first bytes copied the whole file. A file that seeks is looked at where it lies
    (``os.pread``, nothing read from the stream), its buffer left empty, and the reader's
    first block is read from the file straight into its ``bytes``."""
    if stream.seekable():
        try:
            return os.pread(stream.fileno(), size, stream.tell())
        except (OSError, ValueError):  # no descriptor of its own (io.UnsupportedOperation)
            pass
    peeked: bytes = stream.peek(size)[:size]
    return peeked


def _decompress_frame(data: bytes, start: int, end: int, limit: int) -> tuple[bytes, int, int]:
    """Unwrap one compressed frame body, ``data[start:end]`` (the collector compresses each
    message), as ``(data, start, end)``: all of it or an ``InputError``. A body that is not
    compressed is handed back where it lies."""
    magic = data[start : min(end, start + 4)]
    if magic[:2] == GZIP_MAGIC:
        encoding = "gzip"
    elif magic == ZSTD_MAGIC:
        encoding = "zstd"
    else:
        return data, start, end
    try:
        body = decompress_body(data[start:end], encoding, limit)
        return body, 0, len(body)
    except DecompressedTooLarge:
        raise InputError(
            f"decompressed message is larger than the {limit}-byte limit; skipped"
        ) from None
    except CorruptCompression as exc:
        raise InputError(f"compressed message is corrupt or truncated: {exc}; skipped") from None


# -- JSON ----------------------------------------------------------------------------------


def _read_json(
    stream: Any, cursor: _Cursor, problems: _FileProblems, limit: int, *, lines: bool
) -> Iterator[DecodedBatch]:
    cursor.unit = "line"
    name = cursor.name
    first = True
    reader = _Lines(stream)
    while True:
        data, start, end = reader.line(limit + 1)
        if start == end:
            return
        cursor.line += 1
        lineno = cursor.line
        if end - start > limit and data[end - 1] != _NEWLINE:
            skipped = end - start + reader.skip_line()
            problems.append(
                InputProblem(
                    source=f"{name}:{lineno}",
                    message=f"line is longer than the {limit}-byte limit ({skipped} bytes); "
                    "skipped",
                )
            )
            first = False
            continue
        if _is_blank(data, start, end):
            cursor.line += reader.skip_blank_run()
            continue
        source = f"{name}:{lineno}"
        if _first_byte(data, start, end) == b"[" and _last_byte(data, start, end) == b"]":
            first = False
            yield from _json_array(data, start, end, source, problems)
            continue
        try:
            batch = decode_json_body(data, start, end)
        except InvalidJson as exc:
            if first and not lines:
                # Not one object per line: a pretty-printed single document.
                document = reader.document(data, start, end, limit + 1)
                yield from _read_json_document(*document, cursor.name, problems, limit)
                return
            problems.append(
                InputProblem(
                    source=source,
                    message=f"invalid JSON at column {exc.colno}: {exc.msg}; line skipped",
                )
            )
            first = False
            continue
        except InputError as exc:
            problems.append(InputProblem(source=source, message=f"{exc.message}; skipped"))
            first = False
            continue
        first = False
        yield _accepted(batch, source, problems)


_NEWLINE = ord("\n")

_LINE_BLOCK_BYTES = 4 * FILE_BUFFER_BYTES
"""How much of a stream ``_Lines`` asks for at once. ``read1`` reads a regular file straight
into the block's ``bytes`` (the format probe leaves its buffer empty, ``_head``; a pipe's
first block is what the probe's ``peek`` buffered), so a block is as large as memory
comfortably allows beside a line: the fewer blocks, the fewer lines cross a block's end and
are gathered."""


class _Blocks:
    """A stream read in blocks of ``block_bytes`` (``read1``: one read of the underlying
    file, straight into the block), with a position in the current one: what ``_Lines``
    and ``_Frames`` hand their pieces out of."""

    def __init__(self, stream: Any, block_bytes: int = _LINE_BLOCK_BYTES) -> None:
        self._stream = stream
        self._block_bytes = block_bytes
        self._block = b""
        self._pos = 0

    def _next_block(self) -> bytes:
        """The stream's next block (``b""`` at its end), now the current one."""
        self._block = self._stream.read1(self._block_bytes)
        self._pos = 0
        return self._block


class _Lines(_Blocks):
    """The lines of a JSON stream, found in large blocks read from it: each line is handed on
    as ``(block, start, end)``, its place in the block, and decoded there.

    Why not ``readline``: a file of megabyte-long lines (a collector's export) was copied
    line by line out of the stream's buffer, and a line that crossed the buffer's end was
    copied again in pieces and joined; that was ~7% of decoding data-2000. Here a block is
    read once (``read1``: one read of the underlying file, straight into the block) and only
    a line that crosses a block's end is gathered into a ``bytes`` of its own. ``read1``
    also keeps a pipe's lines coming as they arrive, as ``readline`` did.
    """

    def line(self, most: int) -> tuple[bytes, int, int]:
        """The next line, through its newline, of at most ``most`` bytes (what
        ``readline(most)`` returns) as ``(data, start, end)``; ``start == end`` at the end."""
        block, pos = self._block, self._pos
        newline = block.find(b"\n", pos, pos + most)
        if newline >= 0 or len(block) - pos >= most:
            end = newline + 1 if newline >= 0 else pos + most
            self._pos = end
            return block, pos, end
        parts = [block[pos:]] if pos < len(block) else []
        have = len(block) - pos
        while True:
            block = self._next_block()
            if not block:
                whole = b"".join(parts)
                return whole, 0, len(whole)
            want = most - have
            newline = block.find(b"\n", 0, want)
            if newline >= 0 or len(block) >= want:
                end = newline + 1 if newline >= 0 else want
                self._pos = end
                if not parts:
                    return block, 0, end
                parts.append(block[:end])
                whole = b"".join(parts)
                return whole, 0, len(whole)
            parts.append(block)
            have += len(block)

    def skip_line(self) -> int:
        """Discard the rest of an oversize line without holding it; return the bytes skipped."""
        skipped = 0
        block, pos = self._block, self._pos
        while True:
            newline = block.find(b"\n", pos)
            if newline >= 0:
                self._pos = newline + 1
                return skipped + newline + 1 - pos
            skipped += len(block) - pos
            block, pos = self._next_block(), 0
            if not block:
                return skipped

    def skip_blank_run(self) -> int:
        """Consume the whitespace that follows, in bulk, and return how many newlines it held.

        Line by line, a compressed file of a billion blank lines (a few KB of zstd) would take
        minutes of Python per gigabyte; this takes one ``lstrip`` per chunk."""
        newlines = 0
        while True:
            if self._pos == len(self._block) and not self._next_block():
                return newlines
            pos = self._pos
            chunk = self._block[pos : pos + READ_CHUNK_BYTES]
            # translate() is several times faster than lstrip() over a set: the common case
            # of a chunk that is whitespace throughout takes the fast test.
            all_blank = not chunk.translate(None, _JSON_WS)
            blank = len(chunk) if all_blank else len(chunk) - len(chunk.lstrip(_JSON_WS))
            newlines += chunk.count(b"\n", 0, blank)
            self._pos = pos + blank
            if not all_blank:
                return newlines

    def document(self, data: bytes, start: int, end: int, most: int) -> tuple[bytes, int, int]:
        """The line ``data[start:end]`` that ``line`` just returned and the rest of the
        stream after it, up to ``most`` bytes in all, as ``(data, start, end)``: the block
        itself when it holds all of that (a captured file's document, read in the first
        block), else one ``bytes`` gathered from the pieces.

        Why: a pretty-printed document's first line is not a request, so the document is
        the file from that line on. Sliced off the block, joined to the line, the stream's
        rest appended, it was copied three times: ~750 M instructions of ``memcpy`` in
        reading the 78 pretty-printed documents of data-2000, a fifth of decoding them."""
        block, pos = self._block, self._pos
        pieces = [(data, start, end)] if data is not block else []
        first = start if data is block else pos
        if len(block) > first:
            pieces.append((block, first, len(block)))
        have = sum(stop - at for _, at, stop in pieces)
        self._block, self._pos = b"", 0
        if have < most:
            more: bytes = self._stream.read(most - have)
            if more:
                pieces.append((more, 0, len(more)))
        if len(pieces) == 1:
            whole, at, stop = pieces[0]
            return whole, at, min(stop, at + most)
        joined = b"".join(memoryview(piece)[at:stop] for piece, at, stop in pieces)
        return joined, 0, min(len(joined), most)


def _is_blank(data: bytes, start: int, end: int) -> bool:
    """``data[start:end].isspace()``, the whitespace ``strip()`` removes, without copying a
    line that starts otherwise (every line but a blank one)."""
    probe = data[start : min(end, start + _EDGE_PROBE_BYTES)]
    return probe.isspace() and (end - start <= len(probe) or data[start:end].isspace())


_EDGE_PROBE_BYTES = 64
"""How much of a body's start or end ``_first_byte``/``_last_byte`` look at first."""


def _first_byte(data: bytes, start: int = 0, end: int | None = None) -> bytes:
    """``data[start:end].lstrip(_JSON_WS)[:1]`` without copying ``data``: the strip runs
    over a short head, longer ones only while the head is whitespace throughout (lines and
    messages are megabytes; a copy of each to read one byte showed in profiles)."""
    end = len(data) if end is None else end
    probe = _EDGE_PROBE_BYTES
    while True:
        head = data[start : min(end, start + probe)].lstrip(_JSON_WS)
        if head or probe >= end - start:
            return head[:1]
        probe *= 8


def _last_byte(data: bytes, start: int = 0, end: int | None = None) -> bytes:
    """``data[start:end].rstrip(_JSON_WS)[-1:]`` without copying ``data`` (see
    ``_first_byte``)."""
    end = len(data) if end is None else end
    probe = _EDGE_PROBE_BYTES
    while True:
        tail = data[max(start, end - probe) : end].rstrip(_JSON_WS)
        if tail or probe >= end - start:
            return tail[-1:]
        probe *= 8


def _read_json_document(
    data: bytes, start: int, end: int, name: str, problems: _FileProblems, limit: int
) -> Iterator[DecodedBatch]:
    """The document ``data[start:end]`` (the whole file from its first non-blank line),
    decoded where it lies."""
    if end - start > limit:
        problems.append(
            InputProblem(
                source=name,
                message=f"JSON document is larger than the {limit}-byte limit and is not one "
                "request per line; skipped",
            )
        )
        return
    if _first_byte(data, start, end) == b"[":
        yield from _json_array(data, start, end, name, problems)
        return
    try:
        batch = decode_json_body(data, start, end)
    except InvalidJson as exc:
        problems.append(_invalid_document(name, exc))
        return
    except InputError as exc:
        problems.append(InputProblem(source=name, message=f"{exc.message}; skipped"))
        return
    yield _accepted(batch, name, problems)


def _json_array(
    data: bytes, start: int, end: int, name: str, problems: _FileProblems
) -> Iterator[DecodedBatch]:
    """A JSON array of requests (some tools dump a list of export bodies),
    ``data[start:end]``."""
    try:
        items = decode_json_requests(data, start, end)
        for i, item in enumerate(items):
            source = f"{name}[{i}]"
            if isinstance(item, InputError):
                problems.append(InputProblem(source=source, message=f"{item.message}; skipped"))
                continue
            yield _accepted(item, source, problems)
    except InvalidJson as exc:
        problems.append(_invalid_document(name, exc))
    except InputError as exc:
        problems.append(InputProblem(source=name, message=f"{exc.message}; skipped"))


def _invalid_document(name: str, exc: InvalidJson) -> InputProblem:
    return InputProblem(
        source=f"{name}:{exc.lineno}",
        message=f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}; file skipped",
    )


def _accepted(batch: DecodedBatch, source: str, problems: _FileProblems) -> DecodedBatch:
    batch.source = source
    problems.take(batch)
    return batch


# -- protobuf ------------------------------------------------------------------------------


def _read_frames(
    stream: Any, cursor: _Cursor, problems: _FileProblems, limit: int
) -> Iterator[DecodedBatch]:
    """The collector file exporter's ``format: proto`` (and compressed) files: each message
    is preceded by its length as 4 big-endian bytes. Each message is decoded where it lies
    in the block read (``_Frames``)."""
    cursor.unit = "offset"
    name = cursor.name
    says_logs = _says_logs(name)
    frames = _Frames(stream)
    while True:
        start = cursor.offset
        data, at, stop = frames.take(4)
        if at == stop:
            return
        if stop - at < 4:
            problems.append(
                InputProblem(
                    source=f"{name}@{start}",
                    message=f"truncated length prefix ({stop - at} of 4 bytes); "
                    "rest of file skipped",
                )
            )
            return
        size = int.from_bytes(data[at:stop], "big")
        cursor.offset += 4
        if size == 0:  # an empty message: nothing to decode
            cursor.offset += frames.skip_zero_frames()
            continue
        if size > limit:
            skipped = frames.skip(size)
            cursor.offset += skipped
            problems.append(
                InputProblem(
                    source=f"{name}@{start}",
                    message=f"message of {size} bytes is larger than the {limit}-byte limit; "
                    "skipped",
                )
            )
            if skipped < size:
                return
            continue
        data, at, stop = frames.take(size)
        cursor.offset += stop - at
        if stop - at < size:
            problems.append(
                InputProblem(
                    source=f"{name}@{start}",
                    message=f"truncated message: length prefix says {size} bytes, file ends after "
                    f"{stop - at}; skipped",
                )
            )
            return
        frame = _Cursor(name)
        frame.unit, frame.offset = "offset", start
        try:
            data, at, stop = _decompress_frame(data, at, stop, limit)
        except decompressor_errors(InputError, OSError, EOFError, zlib.error) as exc:
            problems.append(InputProblem(source=f"{name}@{start}", message=f"{exc}"))
            continue
        if _first_byte(data, at, stop) == b"{":
            source = f"{name}@{start}"
            try:
                batch = decode_json_body(data, at, stop)
            except InvalidJson as exc:
                problems.append(
                    InputProblem(
                        source=source, message=f"invalid JSON in frame: {exc.msg}; skipped"
                    )
                )
                continue
            except InputError as exc:
                problems.append(InputProblem(source=source, message=f"{exc.message}; skipped"))
                continue
            yield _accepted(batch, source, problems)
        else:
            yield from _decode_proto_body(
                data, frame, problems, name_says_logs=says_logs, start=at, end=stop
            )


class _Frames(_Blocks):
    """The bytes of a framed protobuf stream, read in large blocks (``read1``, as ``_Lines``
    reads lines): each message is handed on as ``(block, start, end)``, its place in the
    block, and decoded there.

    Why: read with ``read`` out of the stream's 4 MiB buffer, each message was copied into
    a ``bytes`` of its own, ~50 M instructions of ``memcpy`` in reading data-2000's 60 MB
    of protobuf (~75 messages of 800 KB). Only a message that crosses a block's end is
    gathered into a ``bytes`` of its own (one larger than a block is read straight into
    it)."""

    def take(self, size: int) -> tuple[bytes, int, int]:
        """The next ``size`` bytes (fewer at the stream's end; none: ``start == end``) as
        ``(data, start, end)``."""
        block, pos = self._block, self._pos
        if len(block) - pos >= size:
            self._pos = pos + size
            return block, pos, pos + size
        parts: list[bytes | memoryview] = [memoryview(block)[pos:]] if pos < len(block) else []
        have = len(block) - pos
        self._block, self._pos = b"", 0
        while have < size:
            want = size - have
            if want >= self._block_bytes:
                more: bytes = self._stream.read(want)
                if not more:
                    break
                parts.append(more)
                have += len(more)
                continue
            block = self._next_block()
            if not block:
                break
            if len(block) >= want:
                self._pos = want
                if not parts:
                    return block, 0, want
                parts.append(memoryview(block)[:want])
                have = size
                break
            parts.append(block)
            have += len(block)
            self._pos = len(block)
        only = parts[0] if len(parts) == 1 else None
        if isinstance(only, bytes):
            return only, 0, len(only)
        whole = b"".join(parts)
        return whole, 0, len(whole)

    def skip(self, size: int) -> int:
        """Discard the next ``size`` bytes without holding them; return how many there were
        (fewer at the stream's end)."""
        skipped = min(size, len(self._block) - self._pos)
        self._pos += skipped
        while skipped < size:
            block = self._next_block()
            if not block:
                break
            self._pos = min(len(block), size - skipped)
            skipped += self._pos
        return skipped

    def skip_zero_frames(self) -> int:
        """Consume the empty frames (zero length prefixes) that follow, in bulk; return the
        bytes skipped. They hold nothing, and one by one a run of them costs Python per 4
        bytes. A run that reaches a block's end with fewer than 4 zeros in it stops there:
        the next prefix is read across the blocks (and, zero, comes back here)."""
        skipped = 0
        while True:
            block, pos = self._block, self._pos
            if pos == len(block):
                if not self._next_block():
                    return skipped
                continue
            if block[pos : pos + 4] != b"\0\0\0\0":
                return skipped
            chunk = block[pos : pos + READ_CHUNK_BYTES]
            all_zero = chunk.count(0) == len(chunk)
            zeros = len(chunk) if all_zero else len(chunk) - len(chunk.lstrip(b"\0"))
            zeros -= zeros % 4
            self._pos = pos + zeros
            skipped += zeros
            if not all_zero or zeros < len(chunk):
                return skipped


def _decode_proto_body(
    body: bytes,
    cursor: _Cursor,
    problems: _FileProblems,
    *,
    name_says_logs: bool,
    start: int = 0,
    end: int | None = None,
) -> Iterator[DecodedBatch]:
    """The batch of the protobuf request ``body[start:end]`` (all of it by default), read as
    the signal its name suggests first."""
    source = cursor.here()
    order: tuple[_proto.Signal, _proto.Signal] = (
        ("logs", "traces") if name_says_logs else ("traces", "logs")
    )
    first_error: InputError | None = None
    for signal in order:
        try:
            native, plausible = _proto.decode_body(body, signal, start=start, end=end)
        except InputError as exc:
            first_error = first_error or exc
            continue
        if not plausible:
            first_error = first_error or InputError(
                f"protobuf body does not look like an {_MESSAGE_NAMES[signal]} "
                "(ids of the wrong size)"
            )
            continue
        batch = decoded_batch(native)
        batch.source = source
        problems.take(batch)
        yield batch
        return
    assert first_error is not None
    metrics = _metrics_count(body[start:end])
    if metrics is not None:
        # A metrics export beside the traces (an SDK's or a collector's file exporter writes
        # all its signals into one folder): valid OTLP the grader does not grade, counted
        # as ignored, as a metrics line of OTLP/JSON is; never a problem that fails the run.
        yield DecodedBatch(ignored=metrics, source=source)
        return
    problems.append(InputProblem(source=source, message=f"{first_error.message}; skipped"))


def _metrics_count(body: bytes) -> int | None:
    """The metrics in ``body`` when it is an OTLP ``ExportMetricsServiceRequest`` (asked only
    of a body that is neither traces nor logs), else ``None``. Protobuf parses almost any
    bytes as some message, so the body counts as metrics only when it holds at least one
    metric and every metric has a name and a data point kind."""
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
        ExportMetricsServiceRequest,
    )

    request = ExportMetricsServiceRequest()
    try:
        request.ParseFromString(body)
    except (DecodeError, ValueError):
        return None
    metrics = [m for rm in request.resource_metrics for sm in rm.scope_metrics for m in sm.metrics]
    if not metrics or not all(m.name and m.WhichOneof("data") for m in metrics):
        return None
    return len(metrics)
