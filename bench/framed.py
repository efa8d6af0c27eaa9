"""The collector's length-framed protobuf files, read by the benchmarks that feed bodies one by
one (a 4-byte big-endian length, then the body; the ``file`` exporter's ``format: proto``)."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from itertools import islice
from pathlib import Path


def length_prefixed(path: Path) -> Iterator[bytes]:
    """The file's bodies in order; a cut length prefix at the end ends the file."""
    with open(path, "rb") as f:
        while len(header := f.read(4)) == 4:
            (size,) = struct.unpack(">I", header)
            yield f.read(size)


def first_bodies(path: Path, count: int) -> list[bytes]:
    """The file's first ``count`` bodies (fewer when it holds fewer)."""
    return list(islice(length_prefixed(path), count))
