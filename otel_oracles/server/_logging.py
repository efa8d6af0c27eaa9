"""Structured logs for ``serve``: one JSON object per line on stderr, or one text line.

A log pipeline (or the collector's filelog receiver) can parse the JSON without regexes; the
``extra=`` fields passed at call sites become top-level keys. The text format carries the same
fields as ``key=value`` after the message, so a person reading a terminal loses nothing
(bound ports, reasons, counts).
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


def extra_fields(record: logging.LogRecord) -> dict[str, object]:
    """The ``extra=`` fields a call site attached to ``record``."""
    return {
        key: value
        for key, value in record.__dict__.items()
        if key not in _STANDARD and not key.startswith("_")
    }


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
        out.update(extra_fields(record))
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)


class TextFormatter(logging.Formatter):
    """``<time> <level> <logger>: <msg> key=value ...``: the JSON format's fields, one line."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        fields = extra_fields(record)
        if fields:
            line += " " + " ".join(f"{k}={_text_value(v)}" for k, v in fields.items())
        return line


def _text_value(value: object) -> str:
    """Strings as they are (quoted when empty or holding spaces), the rest as compact JSON."""
    if not isinstance(value, str):
        return json.dumps(value, default=str, separators=(",", ":"))
    return json.dumps(value) if (not value or any(c.isspace() for c in value)) else value


def configure_logging(level: str, fmt: str) -> None:
    """Route the ``otel_oracles`` loggers to stderr in the chosen format."""
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(TextFormatter())
    limit_repeats(handler)
    root = logging.getLogger("otel_oracles")
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    root.propagate = False
