"""Export-failure logs of the senders and the OpenTelemetry SDK, gathered instead of printed.

An unreachable ``--export otlp`` endpoint makes the senders (``_transport``) log a line per
retry and per signal ("transient error ...", "failed to export ..."), and the SDK's metric
reader its own: about ten raw lines before the one warning ``grade`` prints anyway. A
command that owns its terminal gathers them here and names only the first in its warning;
a service (``serve``) keeps its normal log routing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

GATHERED_LOGGERS = ("opentelemetry", "otel_oracles.emit._transport")
"""The OpenTelemetry SDK's parent logger and the senders' logger."""

FIRST_ERROR_CHARS = 240
"""How much of the first SDK error a warning quotes."""


@dataclass(slots=True)
class SdkLogs:
    """What the SDK logged at warning level or above while gathered."""

    count: int = 0
    first: str | None = None

    def summary(self) -> str:
        """``first error: ...`` (one line, capped), or "" when nothing was logged."""
        if self.first is None:
            return ""
        text = " ".join(self.first.split())
        if len(text) > FIRST_ERROR_CHARS:
            text = text[: FIRST_ERROR_CHARS - 1] + "…"
        more = f" ({self.count - 1} more SDK message(s))" if self.count > 1 else ""
        return f"first error: {text}{more}"


class _Gather(logging.Handler):
    def __init__(self, into: SdkLogs) -> None:
        super().__init__(logging.WARNING)
        self._into = into

    def emit(self, record: logging.LogRecord) -> None:
        self._into.count += 1
        if self._into.first is None:
            self._into.first = record.getMessage()


@contextmanager
def gathered_sdk_logs() -> Iterator[SdkLogs]:
    """Inside the block, export warnings and errors are counted, not printed."""
    logs = SdkLogs()
    gather = _Gather(logs)
    loggers = [logging.getLogger(name) for name in GATHERED_LOGGERS]
    saved = [(lg.handlers[:], lg.propagate) for lg in loggers]
    for lg in loggers:
        lg.handlers[:] = [gather]
        lg.propagate = False
    try:
        yield logs
    finally:
        for lg, (handlers, propagate) in zip(loggers, saved, strict=True):
            lg.handlers[:], lg.propagate = handlers, propagate
