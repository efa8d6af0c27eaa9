"""Structured logs for ``serve``: one JSON object per line on stderr.

A log pipeline (or the collector's filelog receiver) can parse them without regexes; the
``extra=`` fields passed at call sites become top-level keys.
"""

from __future__ import annotations

import json
import logging
import sys
import time

from otel_oracles.server._log_limits import limit_repeats

_STANDARD = frozenset(
    logging.LogRecord("", 0, "", 0, "", None, None).__dict__.keys() | {"message", "asctime"}
)


class JsonFormatter(logging.Formatter):
    """``{"time": ..., "level": ..., "logger": ..., "msg": ..., <extra fields>}``."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, object] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                out[key] = value
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)


def configure_logging(level: str, fmt: str) -> None:
    """Route the ``otel_oracles`` loggers to stderr in the chosen format."""
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    limit_repeats(handler)
    root = logging.getLogger("otel_oracles")
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    root.propagate = False
