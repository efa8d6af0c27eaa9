"""Output options shared by every command that produces a ``RunReport`` (``run``, ``gate``,
``grade``): the console table by default, ``--json`` instead of it, and ``--junit`` /
``--html`` files in addition."""

from __future__ import annotations

import codecs
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from otel_oracles.emit import SHOWN_FILTER, ExplainMode
from otel_oracles.errors import InputError
from otel_oracles.model.result import InputProblem, OracleResult, RunReport, Verdict
from otel_oracles.report import (
    ConsoleWriter,
    JsonWriter,
    Tally,
    terminal_safe,
    verdict_reports,
)
from otel_oracles.session import InputLimits

if TYPE_CHECKING:
    # Imported where a run asks for them (--junit, --html): most runs never load them.
    from otel_oracles.report import HtmlWriter, JUnitWriter, ShownFilter

F = TypeVar("F", bound=Callable[..., Any])


def report_options(func: F) -> F:
    """Add ``--json``, ``--junit FILE``, ``--html FILE`` and ``--verbose``."""
    options = [
        click.option(
            "--json", "as_json", is_flag=True, help="Print the report as JSON instead of a table."
        ),
        click.option(
            "--junit",
            type=click.Path(dir_okay=False, path_type=Path),
            help="Also write JUnit XML (one testcase per contract x subject) to FILE.",
        ),
        click.option(
            "--html",
            type=click.Path(dir_okay=False, path_type=Path),
            help="Also write a self-contained HTML report to FILE.",
        ),
        click.option(
            "-v", "--verbose", is_flag=True, help="List every result, not only the failing ones."
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


class SizeParam(click.ParamType):  # type: ignore[type-arg]  # generic from click 8.5 on
    """A byte size on the command line: ``64MiB``, ``1GiB`` or a number of bytes."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        from otel_oracles.server.config import parse_size  # the config files' own size syntax

        if isinstance(value, int):
            return value
        try:
            size = parse_size(value.strip() if isinstance(value, str) else value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)
        if size <= 0:
            self.fail(f"expected a positive size, got {value!r}", param, ctx)
        return size


def input_limit_options(func: F) -> F:
    """``--max-message-bytes``, ``--max-decompressed-bytes``, ``--idle-spans`` and
    ``--max-buffered-spans``: the limits docs/ingest.md tells users to raise."""
    options = [
        click.option(
            "--max-message-bytes",
            type=SizeParam(),
            default=None,
            metavar="SIZE",
            help="Longest JSON line or protobuf message read; longer ones are reported and "
            "skipped [64MiB].",
        ),
        click.option(
            "--max-decompressed-bytes",
            type=SizeParam(),
            default=None,
            metavar="SIZE",
            help="Most bytes a compressed file (or stdin) may expand to; beyond it the rest "
            "is reported, never read [1GiB].",
        ),
        click.option(
            "--idle-spans",
            type=click.IntRange(min=1),
            default=None,
            metavar="N",
            help="Release a trace once N more spans were read with none for it (its root "
            "seen; 4x without); raise it for inputs not sorted by time [20000].",
        ),
        click.option(
            "--max-buffered-spans",
            type=click.IntRange(min=1),
            default=None,
            metavar="N",
            help="Memory cap: over N buffered spans the least recently active traces are "
            "graded early, marked incomplete [no cap].",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def input_limits(
    max_message_bytes: int | None,
    max_decompressed_bytes: int | None,
    idle_spans: int | None,
    max_buffered_spans: int | None,
) -> InputLimits:
    """The ``InputLimits`` the options ask for (defaults where not given)."""
    given = {
        "max_message_bytes": max_message_bytes,
        "max_decompressed_bytes": max_decompressed_bytes,
        "idle_spans": idle_spans,
        "max_buffered_spans": max_buffered_spans,
    }
    return InputLimits(**{k: v for k, v in given.items() if v is not None})


def allow_empty_option(func: F) -> F:
    """``--allow-empty``: a run that grades nothing exits 0 instead of 2."""
    return click.option(
        "--allow-empty",
        is_flag=True,
        help="Exit 0 when nothing was graded (no trace or trajectory selected). By default "
        "grading nothing is an error (exit 2): a gate that graded nothing has checked nothing.",
    )(func)


def nothing_graded(source: str, reason: str, allow_empty: bool) -> None:
    """Say on stderr that a run produced no verdict: an ``error:`` line (the command exits 2),
    or a ``note:`` when ``--allow-empty`` accepts it."""
    source, reason = terminal_safe(source), terminal_safe(reason)
    if allow_empty:
        click.echo(f"note: {source}: nothing graded: {reason}", err=True)
    else:
        click.echo(
            f"error: {source}: nothing graded: {reason} (--allow-empty accepts this)", err=True
        )


def report_input_problems(problems: Iterable[InputProblem]) -> None:
    """Each unreadable input as one ``error: <source>: <message>`` line on stderr, with a
    hint when the file is a contract, task, trajectory or manifest given as a trace."""
    for p in problems:
        line = f"error: {p.source}: {p.message}{_wrong_place_hint(p.source)}"
        click.echo(terminal_safe(line), err=True)


def _wrong_place_hint(source: str) -> str:
    from otel_oracles.cli._kinds import looks_like  # YAML, read only for an unreadable input

    name = re.sub(r"(@\d+|:\d+)$", "", source)
    what = looks_like(Path(name))
    return f" (this file looks like {what})" if what else ""


def _write(path: Path, data: bytes) -> None:
    try:
        path.write_bytes(data)
    except OSError as exc:
        raise InputError(f"cannot write report: {exc.strerror}", str(path)) from None


def emit_report(
    report: RunReport,
    *,
    as_json: bool,
    junit: Path | None,
    html: Path | None,
    verbose: bool,
    exit_code: int | None = None,
    explain: ExplainMode = "template",
) -> None:
    """Write the requested files, then print the table or the JSON to stdout.

    ``exit_code`` is what the command will exit with, when it is not ``report.exit_code()``.
    Results are shown through the privacy boundary unless ``explain`` is ``full``. The
    verdicts go through ``ReportStream``, so a whole report and a stream of verdicts are
    rendered by one path (the same bytes either way).
    """
    stream = ReportStream(as_json=as_json, junit=junit, html=html, verbose=verbose, explain=explain)
    try:
        for verdict in report.verdicts:
            stream.add(verdict)
        code = report.exit_code() if exit_code is None else exit_code
        stream.finish(report.input_errors, report.notes, code)
    finally:
        stream.close()


def _write_chunks(path: Path, chunks: Iterable[bytes]) -> None:
    try:
        with path.open("wb") as out:
            for chunk in chunks:
                out.write(chunk)
    except OSError as exc:
        raise InputError(f"cannot write report: {exc.strerror}", str(path)) from None


class ReportStream:
    """``emit_report`` for verdicts that arrive one at a time and are not kept.

    Only the writers the options ask for exist; each spools what it rendered (memory up to
    a megabyte, then an anonymous temporary file), so memory does not grow with the number
    of verdicts. ``finish`` writes the same files and stdout as ``emit_report`` would for a
    ``RunReport`` holding every verdict added, in the same order.
    """

    def __init__(
        self,
        *,
        as_json: bool,
        junit: Path | None,
        html: Path | None,
        verbose: bool,
        explain: ExplainMode = "template",
    ) -> None:
        self.tally = Tally()
        self._junit_path = junit
        self._html_path = html
        self._junit: JUnitWriter | None = None
        self._html: HtmlWriter | None = None
        if junit is not None:
            from otel_oracles.report import JUnitWriter

            self._junit = JUnitWriter()
        if html is not None:
            from otel_oracles.report import HtmlWriter

            self._html = HtmlWriter(self.tally)
        # The writers read the stream's tally, counted once here (after they rendered).
        self._json = JsonWriter(self.tally) if as_json else None
        # One core call per verdict writes its text in every report asked for.
        self._reports = verdict_reports(
            json=as_json, junit=junit is not None, html=html is not None
        )
        self._console = (
            None if as_json else ConsoleWriter(show_passing_details=verbose, tally=self.tally)
        )
        # The privacy filter each writer applies as it renders (the JSON writer in the
        # core), and what the table asks of each failing result's shown text (neither under
        # ``full``), bound once.
        self._shown_filter: ShownFilter | None = None if explain == "full" else SHOWN_FILTER
        self._shown_text: Callable[[OracleResult], str] | None = (
            None if explain == "full" else SHOWN_FILTER.shown_message
        )

    def add(self, verdict: Verdict) -> None:
        """Count ``verdict`` and render it through the privacy boundary.

        The JSON, JUnit and HTML texts are written by one core call (``VerdictReports``):
        the verdict's fields read once and each result's shown message (the privacy filter,
        ``SHOWN_FILTER``) rendered once for all of them, HTML's details scrubbed as they are
        written; the table applies the filter to the failing results' messages only. No
        scrubbed copy of the verdict is built. The stream's tally counts ``verdict`` once,
        after every writer placed it (they number verdicts by it), by the ``verdict`` the
        JSON text derived when there is one."""
        text, testcase, page, derived = self._reports.write(
            verdict, self.tally.verdicts, self._shown_filter
        )
        if self._json is not None and text is not None:
            self._json.put(text)
        if self._console is not None:
            self._console.add(verdict, self._shown_text)
        if self._junit is not None and testcase is not None:
            self._junit.put(testcase)
        if self._html is not None and page is not None:
            self._html.put(*page)
        self.tally.add(verdict, derived)

    def close(self) -> None:
        """Drop whatever was spooled (after ``finish``, or when grading failed)."""
        for writer in (self._junit, self._html, self._json, self._console):
            if writer is not None:
                writer.close()

    def exit_code(self, input_errors: list[InputProblem], keep_going: bool = False) -> int:
        """``RunReport.exit_code`` over every verdict added."""
        return self.tally.exit_code(input_errors, keep_going)

    def finish(self, input_errors: list[InputProblem], notes: list[str], exit_code: int) -> None:
        """Write ``--junit``/``--html`` files, then print the table or the JSON."""
        if self._junit is not None and self._junit_path is not None:
            _write_chunks(self._junit_path, self._junit.chunks(input_errors))
        if self._html is not None and self._html_path is not None:
            _write_chunks(self._html_path, self._html.chunks(input_errors, notes))
        if self._json is not None:
            if _prints_utf8():
                for block in self._json.byte_chunks(input_errors, notes, exit_code):
                    click.echo(block, nl=False)
            else:
                for text in _batched(self._json.chunks(input_errors, notes, exit_code)):
                    click.echo(text, nl=False)
        if self._console is not None:
            for text in _batched(self._console.lines(input_errors, notes)):
                click.echo(text, nl=False)


def _prints_utf8() -> bool:
    """Whether text ``click.echo`` prints to stdout comes out as its UTF-8 bytes, newlines
    untranslated: then the JSON report's spooled bytes are printed as they are instead of
    decoded to be encoded again (on a 21 MB report, tens of milliseconds)."""
    if os.linesep != "\n":
        return False
    # click prints to ``sys.stdout`` itself unless its encoding is ASCII (then it re-wraps it
    # as UTF-8, and this says no: the text path is right there too, only slower).
    encoding = getattr(sys.stdout, "encoding", None)
    if not isinstance(encoding, str):
        return False
    try:
        return codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        return False


ECHO_BATCH_CHARS = 1 << 16
"""``click.echo`` flushes every call: print the table in blocks, not a call per line."""


def _batched(chunks: Iterable[str]) -> Iterator[str]:
    pending: list[str] = []
    size = 0
    for chunk in chunks:
        pending.append(chunk)
        size += len(chunk)
        if size >= ECHO_BATCH_CHARS:
            yield "".join(pending)
            pending, size = [], 0
    if pending:
        yield "".join(pending)
