"""Machine output: the report's own models dumped as JSON, so the schema follows the code."""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from functools import partial
from typing import Any

from pydantic import TypeAdapter

from otel_oracles._native import ShownFilter, VerdictJson, VerdictReports, report_text
from otel_oracles.model.result import Counts, InputProblem, OracleResult, RunReport, Verdict
from otel_oracles.report._common import SPOOL_WRITE_CHARS, Tally, byte_spool

_DETAILS = TypeAdapter(dict[str, Any])
"""The type of ``OracleResult.details`` and ``params``: the core has it dump a value that is
not plain JSON data as ``model_dump`` dumps the field."""

_VERDICT_FIELDS = tuple(Verdict.model_fields)
_RESULT_FIELDS = tuple(OracleResult.model_fields)
_COUNTS_FIELDS = tuple(Counts.model_fields)
"""Each model's fields in declaration order: the keys, in order, of its ``model_dump``."""

_VERDICT_LEVEL = 2
"""How deep each verdict sits in the document: in the report object's ``verdicts`` list."""

_VERDICT_JSON = VerdictJson(
    _VERDICT_FIELDS,
    _RESULT_FIELDS,
    _COUNTS_FIELDS,
    _VERDICT_LEVEL,
    partial(_DETAILS.dump_python, mode="json"),
)
"""Writes each verdict's text in the core, straight from its models' field values:
``json.dumps`` of its ``model_dump(mode="json")`` plus ``verdict``, with the report's
indent and ``json_safe``, as UTF-8. The report's only writer of verdicts: a model held
otherwise than validation leaves it is read through its ``model_dump``, details or params
that are not plain JSON data through ``_DETAILS``, and a value ``json.dumps`` refuses is
refused with its error."""


def verdict_reports(*, json: bool, junit: bool, html: bool) -> VerdictReports:
    """The core's writer of each verdict's text in every report a run asks for, in one
    call (``ReportStream``): its JSON text (``_VERDICT_JSON``'s), testcase and page row and
    section (``_markup.MARKUP``'s), with each verdict's fields read once for them all."""
    markup = None
    if junit or html:
        from otel_oracles.report._markup import MARKUP  # only for a run writing markup

        markup = MARKUP
    return VerdictReports(_VERDICT_JSON if json else None, markup, junit, html)


_FIRST = b"    "
_NEXT = b",\n    "
"""What precedes a verdict's text in the document: its indent (and, after the first, a comma
ending the one before)."""

SPOOL_READ_BYTES = 1 << 20
"""The spooled verdicts are read back (and printed) in blocks of this size."""


def report_data(report: RunReport, exit_code: int | None = None) -> dict[str, Any]:
    """``model_dump(mode="json")`` of the report, plus the derived values a consumer should
    not have to recompute: ``passed``, ``exit_code`` and each verdict's ``verdict``.

    ``exit_code`` overrides ``report.exit_code()`` when the command decides it otherwise
    (``gate`` with manifest expectations)."""
    data = report.model_dump(mode="json")
    data["passed"] = report.passed
    data["exit_code"] = report.exit_code() if exit_code is None else exit_code
    for dumped, verdict in zip(data["verdicts"], report.verdicts, strict=True):
        dumped["verdict"] = verdict.verdict
    return data


class JsonWriter:
    """Writes the same document as ``render_json`` one verdict at a time.

    ``json.dumps`` with an indent lays out a nested value exactly as it would alone, shifted
    by its depth, so each verdict is dumped as it arrives (spooled, on disk past a megabyte)
    and the document is stitched together in ``chunks()``; byte-identical to dumping the
    whole report at once (a test holds them equal). The spool holds the text encoded as
    UTF-8 once, and ``byte_chunks()`` gives the document as those bytes, so a writer to a
    UTF-8 stream prints them as they are.

    With ``tally``, the writer reads the count of the verdicts before each one from it and
    whoever passed it counts each verdict after ``add`` (``cli.ReportStream``: one count for
    every writer); without, the writer counts for itself.
    """

    def __init__(self, tally: Tally | None = None) -> None:
        self._verdicts = byte_spool()
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._counts = tally is None
        self.tally = Tally() if tally is None else tally

    def add(self, v: Verdict, shown: ShownFilter | None = None) -> None:
        """Dump ``v``; with ``shown`` (the privacy filter, ``emit.SHOWN_FILTER``), each
        result's message and details pass through it as the core writes them: the same text
        as adding ``v`` with every result's message and details replaced by what the filter
        shows of them (``shown_message``, ``scrub``), without building a copy of the verdict,
        nor a call back into Python per result.

        The core writes the text as UTF-8 bytes straight from the models (``VerdictJson``),
        so no ``str`` of it is built, scanned and encoded; it raises, adding nothing, for a
        value ``json.dumps`` refuses. A surrogate (no UTF-8 text) is written as its JSON
        escape, ``\\udcff``, as ``json.dumps`` writes it by default."""
        self.put(_VERDICT_JSON.write(v, shown))
        if self._counts:
            self.tally.add(v)

    def put(self, text: bytes) -> None:
        """Place a verdict's text as the core wrote it (``add``'s, or
        ``VerdictReports.write``'s for a run writing several reports), after the
        ``tally.verdicts`` before it; its owner counts it after."""
        self._pending.append(_FIRST if not self.tally.verdicts else _NEXT)
        self._pending.append(text)
        self._pending_bytes += len(text)
        if self._pending_bytes >= SPOOL_WRITE_CHARS:
            self._flush()

    def _flush(self) -> None:
        self._verdicts.write(b"".join(self._pending))
        self._pending = []
        self._pending_bytes = 0

    def close(self) -> None:
        """Drop the spooled text (``lines``/``chunks`` do it when they finish)."""
        self._pending = []
        self._verdicts.close()

    def chunks(
        self, input_errors: list[InputProblem], notes: list[str], exit_code: int | None = None
    ) -> Iterator[str]:
        """The document in pieces; ``exit_code`` as in ``report_data``."""
        decoder = codecs.getincrementaldecoder("utf-8")()  # a block may end inside a character
        for block in self.byte_chunks(input_errors, notes, exit_code):
            if text := decoder.decode(block):
                yield text
        decoder.decode(b"", final=True)  # nothing is left: every block came from whole texts

    def byte_chunks(
        self, input_errors: list[InputProblem], notes: list[str], exit_code: int | None = None
    ) -> Iterator[bytes]:
        """``chunks()`` encoded as UTF-8: the spooled verdicts as they were written."""
        try:
            tail = RunReport(input_errors=input_errors, notes=notes).model_dump(mode="json")
            del tail["verdicts"]
            tail["passed"] = self.tally.all_passed
            tail["exit_code"] = (
                self.tally.exit_code(input_errors) if exit_code is None else exit_code
            )
            rest = report_text(tail)[1:]  # "{" removed: the tail continues the verdicts' object
            if not self.tally.verdicts:
                yield b'{\n  "verdicts": [],' + rest + b"\n"
                return
            yield b'{\n  "verdicts": [\n'
            self._flush()
            buffer = self._verdicts
            buffer.seek(0)
            while block := buffer.read(SPOOL_READ_BYTES):
                yield block
            yield b"\n  ]," + rest + b"\n"
        finally:
            self._verdicts.close()


def render_json(
    report: RunReport, exit_code: int | None = None, shown: ShownFilter | None = None
) -> str:
    """The whole document as a string; ``exit_code`` as in ``report_data``, ``shown`` as
    for ``JsonWriter.add``."""
    writer = JsonWriter()
    for v in report.verdicts:
        writer.add(v, shown)
    return b"".join(writer.byte_chunks(report.input_errors, report.notes, exit_code)).decode()
