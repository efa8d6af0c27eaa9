"""What every decoder returns for one OTLP request body."""

from __future__ import annotations

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

    A batch the compiled core decoded keeps it as ``native`` and builds ``spans`` and
    ``logs`` (Python records) only when they are first read: offline assembly reads the
    native batch instead and builds records for a trace's spans when it releases the trace,
    so spans waiting for their trace (or never graded: late, the grader's own) never become
    Python objects. Assigning ``spans`` or ``logs`` makes the records the batch's content.
    """

    __slots__ = ("_logs", "_spans", "ignored", "native", "problems", "rejected", "source")

    def __init__(
        self,
        spans: list[SpanRecord] | None = None,
        logs: list[LogRecord] | None = None,
        ignored: int = 0,
        problems: Problems | None = None,
        rejected: int = 0,
        source: str = "",
        *,
        native: Batch | None = None,
    ) -> None:
        if native is None or spans is not None or logs is not None:
            spans = [] if spans is None else spans
            logs = [] if logs is None else logs
            native = None
        self._spans = spans
        self._logs = logs
        self.native = native
        """The core's batch while the records are not built (``None`` after, or for a batch
        of records built in Python)."""
        self.ignored = ignored
        self.problems = Problems() if problems is None else problems
        self.rejected = rejected
        self.source = source

    def _records(self) -> tuple[list[SpanRecord], list[LogRecord]]:
        if self._spans is None or self._logs is None:
            assert self.native is not None
            self._spans, self._logs = self.native.records()
            self.native = None
        return self._spans, self._logs

    @property
    def spans(self) -> list[SpanRecord]:
        return self._records()[0]

    @spans.setter
    def spans(self, spans: list[SpanRecord]) -> None:
        self._logs = self._records()[1]
        self._spans = spans

    @property
    def logs(self) -> list[LogRecord]:
        return self._records()[1]

    @logs.setter
    def logs(self, logs: list[LogRecord]) -> None:
        self._spans = self._records()[0]
        self._logs = logs

    @property
    def span_count(self) -> int:
        """Spans in the batch, without building records."""
        return self.native.span_count if self.native is not None else len(self.spans)

    @property
    def log_count(self) -> int:
        """Log records in the batch, without building records."""
        return self.native.log_count if self.native is not None else len(self.logs)

    def __repr__(self) -> str:
        return (
            f"DecodedBatch(spans={self.span_count}, logs={self.log_count}, "
            f"ignored={self.ignored}, rejected={self.rejected}, "
            f"problems={self.problems.total}, source={self.source!r})"
        )


def decoded_batch(
    native: Batch, records: tuple[list[SpanRecord], list[LogRecord]] | None = None
) -> DecodedBatch:
    """The ``DecodedBatch`` of a batch the compiled core decoded: its records built when
    first read (or ``records``, stand-ins the caller built instead), its problems listed and
    counted as ``Problems`` does."""
    if records is None:
        batch = DecodedBatch(ignored=native.ignored, rejected=native.rejected, native=native)
    else:
        batch = DecodedBatch(*records, native.ignored, rejected=native.rejected)
    for message in native.problems:
        batch.problems.append(message)
    batch.problems.omitted += native.problems_omitted
    return batch
