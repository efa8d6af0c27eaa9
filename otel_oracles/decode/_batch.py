"""What every decoder returns for one OTLP request body."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from otel_oracles.model.span import LogRecord, SpanRecord

if TYPE_CHECKING:
    from otel_oracles._native import Batch

MAX_LISTED_PROBLEMS = 10
"""Problem messages kept per request; the rest are counted. A body of 10,000 empty spans is
20 KB and made 10,000 located messages (~1.6 MB, 80 times its size) before: now 10."""


class Problems(list[str]):
    """The located problem messages of one request, bounded: the first
    ``MAX_LISTED_PROBLEMS`` are kept, the rest counted in ``omitted``. A list, so every
    decoder (and the lazy ``report`` callbacks that read attributes later) appends to it as
    before."""

    def __init__(self) -> None:
        super().__init__()
        self.omitted = 0

    def append(self, message: str) -> None:
        if len(self) < MAX_LISTED_PROBLEMS:
            super().append(message)
        else:
            self.omitted += 1

    @property
    def total(self) -> int:
        """Problems found, listed or not."""
        return len(self) + self.omitted

    def summary(self, listed: int = 3) -> str:
        """The first ``listed`` messages and how many more there were, as one line."""
        more = self.total - min(listed, len(self))
        return "; ".join(self[:listed]) + (f" (and {more} more)" if more > 0 else "")


@dataclass(slots=True)
class DecodedBatch:
    """The spans and log records of one request body (one file, one JSON line or one frame).

    ``ignored`` counts records of signals we do not grade (metrics data points, or a whole
    metrics line). ``problems`` holds what was wrong *inside* an otherwise readable request
    (a span with a bad id was rejected, an unknown enum was read as unspecified), each message
    naming its place in the request (``resourceSpans[0].scopeSpans[0].spans[3].kind``), the
    first few only (``Problems``); ``rejected`` counts the spans and log records the decoder
    dropped (what OTLP partial success reports). ``read_paths`` turns the problems into
    ``InputProblem``s with the file and line. ``source`` is ``file:line`` or ``file@offset``
    for batches read from files, ``""`` otherwise.
    """

    spans: list[SpanRecord] = field(default_factory=list)
    logs: list[LogRecord] = field(default_factory=list)
    ignored: int = 0
    problems: Problems = field(default_factory=Problems)
    rejected: int = 0
    source: str = ""


def decoded_batch(
    native: Batch, records: tuple[list[SpanRecord], list[LogRecord]] | None = None
) -> DecodedBatch:
    """The ``DecodedBatch`` of a batch the compiled core decoded: its records built as
    Python records (or ``records``, stand-ins the caller built instead), its problems
    listed and counted as ``Problems`` does."""
    spans, logs = native.records() if records is None else records
    batch = DecodedBatch(spans, logs, native.ignored, rejected=native.rejected)
    for message in native.problems:
        batch.problems.append(message)
    batch.problems.omitted += native.problems_omitted
    return batch
