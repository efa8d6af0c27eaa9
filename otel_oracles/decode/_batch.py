"""What every decoder returns for one OTLP request body."""

from __future__ import annotations

from dataclasses import dataclass, field

from otel_oracles.model.span import LogRecord, SpanRecord


@dataclass(slots=True)
class DecodedBatch:
    """The spans and log records of one request body (one file, one JSON line or one frame).

    ``ignored`` counts records of signals we do not grade (metrics data points, or a whole
    metrics line). ``problems`` holds what was wrong *inside* an otherwise readable request
    (a span with a bad id was rejected, an unknown enum was read as unspecified), each message
    naming its place in the request (``resourceSpans[0].scopeSpans[0].spans[3].kind``);
    ``read_paths`` turns them into ``InputProblem``s with the file and line. ``source`` is
    ``file:line`` or ``file@offset`` for batches read from files, ``""`` otherwise.
    """

    spans: list[SpanRecord] = field(default_factory=list)
    logs: list[LogRecord] = field(default_factory=list)
    ignored: int = 0
    problems: list[str] = field(default_factory=list)
    source: str = ""
