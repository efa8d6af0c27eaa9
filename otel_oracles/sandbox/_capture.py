"""Bounded capture of a command's output: the first and last N bytes of a stream are kept,
the middle only counted, so a command printing gigabytes costs a fixed amount of memory."""

from __future__ import annotations

import os
import selectors
import time
from typing import IO

READ_CHUNK = 64 * 1024


class CappedStream:
    """The head and tail of one byte stream, plus how many bytes fell between them."""

    __slots__ = ("_cap", "_head", "_tail", "total")

    def __init__(self, cap: int) -> None:
        self._cap = cap
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0
        """Every byte the stream carried, kept or not."""

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self._cap - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data:
            self._tail += data
            if len(self._tail) > 2 * self._cap:  # trim in batches, not on every chunk
                del self._tail[: len(self._tail) - self._cap]

    @property
    def omitted(self) -> int:
        """Bytes counted but not kept."""
        return max(0, self.total - len(self._head) - min(len(self._tail), self._cap))

    def text(self) -> str:
        """What was kept, decoded; a marker line stands where bytes were left out."""
        tail = bytes(self._tail[-self._cap :]) if self._tail else b""
        head = bytes(self._head).decode("utf-8", errors="replace")
        if not self.omitted:
            return head + tail.decode("utf-8", errors="replace")
        marker = f"\n[... {self.omitted} bytes omitted ...]\n"
        return head + marker + tail.decode("utf-8", errors="replace")


def drain(streams: dict[IO[bytes], CappedStream], deadline: float | None) -> bool:
    """Read every stream to end of file, or until ``deadline`` (a ``time.monotonic()``
    value; None waits for EOF). Returns True when every stream reached EOF."""
    with selectors.DefaultSelector() as sel:
        for pipe, sink in streams.items():
            os.set_blocking(pipe.fileno(), False)
            sel.register(pipe, selectors.EVENT_READ, sink)
        while sel.get_map():
            timeout = None if deadline is None else deadline - time.monotonic()
            if timeout is not None and timeout <= 0:
                return False
            for key, _ in sel.select(timeout):
                try:
                    data = os.read(key.fd, READ_CHUNK)
                except BlockingIOError:
                    continue
                if data:
                    key.data.feed(data)
                else:
                    sel.unregister(key.fileobj)
    return True
