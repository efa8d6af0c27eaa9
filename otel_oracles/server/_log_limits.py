"""One log line per repeated problem, with a count, instead of one per occurrence.

Under abuse the same error repeats as fast as the event loop turns: asyncio logs a traceback
for every failed ``accept()`` at the fd limit, and a misbehaving sender repeats the same bad
request. Unlimited, that filled 132 MB of log in 25 s. ``RepeatFilter`` lets the first record
of a kind through, then at most one per ``interval`` carrying ``repeated``: how many were
suppressed since the last one shown.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

REPEAT_INTERVAL_S = 10.0
"""At most one line per kind of record this often."""

_MAX_KINDS = 1024
"""Kinds remembered; past it the table starts over (a flood of distinct messages is still
bounded by the handler, just not summarized)."""

THIRD_PARTY_LOGGERS = ("asyncio", "aiohttp", "grpc")
"""Libraries whose errors under abuse (accept failures, protocol errors) go through the same
handler and filter as serve's own."""


class RepeatFilter(logging.Filter):
    """Pass a warning or error unless one of the same kind (logger, level, message template,
    exception type) passed less than ``interval`` seconds ago; the next one that passes says
    how many were held back (``repeated``). Info and debug lines always pass."""

    def __init__(
        self, interval: float = REPEAT_INTERVAL_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__()
        self.interval = interval
        self._clock = clock
        self._lock = threading.Lock()
        self._kinds: dict[tuple[str, int, str, str], list[float]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True  # progress and results (one line per verdict) are never summarized
        exc_type = record.exc_info[0].__name__ if record.exc_info and record.exc_info[0] else ""
        kind = (record.name, record.levelno, str(record.msg), exc_type)
        now = self._clock()
        with self._lock:
            entry = self._kinds.get(kind)
            if entry is not None and now - entry[0] < self.interval:
                entry[1] += 1
                return False
            if entry is None and len(self._kinds) >= _MAX_KINDS:
                self._kinds.clear()
            held_back = int(entry[1]) if entry is not None else 0
            self._kinds[kind] = [now, 0]
        if held_back:
            record.repeated = held_back
        return True


def limit_repeats(handler: logging.Handler) -> None:
    """Put a ``RepeatFilter`` on ``handler`` and route the third-party loggers that log
    under abuse through it too."""
    handler.addFilter(RepeatFilter())
    for name in THIRD_PARTY_LOGGERS:
        lib = logging.getLogger(name)
        lib.handlers[:] = [handler]
        lib.propagate = False
