"""A single self-contained HTML page (inline CSS, no scripts, no external links): one summary
table and, per verdict, the results with their messages and details. Every piece of text
from a trace or trajectory is escaped."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from otel_oracles._native import markup_text
from otel_oracles.model.result import InputProblem, RunReport, Verdict
from otel_oracles.report._common import Tally, blocks, byte_spool
from otel_oracles.report._markup import MARK, MARKUP

if TYPE_CHECKING:
    from otel_oracles._native import ShownFilter


def escape(text: str) -> str:
    """``text`` as HTML text (``html.escape``), with the characters ``terminal_safe`` shows
    as escapes shown so here too: a browser ignores ESC, but it lays text out by the
    bidirectional overrides and isolates, so a name a trace chose could read reversed in
    the report. The core's, as every text of a verdict's row is written."""
    return markup_text(text, "html")


# Each outcome has its own colour and marker, so a tolerated failure never reads as a plain
# pass: the four numbers are the point of the report.
_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:110em}
table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:.3em .6em;
text-align:left;vertical-align:top}th{background:#f3f3f3}td.n{text-align:right}
td.n.zero{color:#999}
.pass{color:#17692b;font-weight:bold}.fail{color:#b00020;font-weight:bold}
.error{color:#a05a00;font-weight:bold}
.o-pass{color:#17692b}.o-tolerated{color:#6b4c00;background:#fff2c2;font-weight:bold}
.o-invariant_failure,.o-budget_exhausted{color:#fff;background:#b00020;font-weight:bold}
.o-missing_evidence{color:#fff;background:#6a3d9a;font-weight:bold}
.o-error{color:#fff;background:#a05a00;font-weight:bold}
td.n.inv,td.n.exh{background:#fbe3e6;color:#b00020;font-weight:bold}
td.n.tol{background:#fff2c2;color:#6b4c00;font-weight:bold}
td.n.miss{background:#ece3f5;color:#6a3d9a;font-weight:bold}
.verdict-tolerated{color:#6b4c00;font-weight:bold}
pre{white-space:pre-wrap;overflow-wrap:anywhere;max-width:60em;margin:0;font-size:.9em}
dl.details{margin:0;display:grid;grid-template-columns:max-content 1fr;gap:.1em .8em;
font-size:.9em}dl.details dt{font-weight:bold;color:#555}dl.details dd{margin:0;
overflow-wrap:anywhere;max-width:60em;white-space:pre-wrap}
details{margin:.5em 0}summary{cursor:pointer}.legend span{margin-right:1.2em}
"""

_LEGEND = " ".join(f'<span class="o-{o}">{MARK[o]} {o}</span>' for o in MARK)


class HtmlWriter:
    """Builds the page one verdict at a time, so ``grade`` need not keep every verdict: the
    summary rows and the per-verdict sections, written as UTF-8 by the core (``MARKUP``),
    go to two spools (on disk past a megabyte) that ``chunks()`` places in the page. Same
    bytes as ``render_html`` of the whole report. ``tally`` as for ``JsonWriter``: given,
    its owner counts each verdict after ``add``."""

    def __init__(self, tally: Tally | None = None) -> None:
        self._summary = byte_spool()
        self._sections = byte_spool()
        self._counts = tally is None
        self.tally = Tally() if tally is None else tally

    def add(self, v: Verdict, shown: ShownFilter | None = None) -> None:
        """Lay out ``v``'s summary row and section; with ``shown`` (the privacy filter,
        ``emit.SHOWN_FILTER``) each result's message and details are what it shows, asked
        of it in the core as the row is written: no scrubbed copy of the verdict is built."""
        self.put(*MARKUP.html(v, self.tally.verdicts, shown))
        if self._counts:
            self.tally.add(v)

    def put(self, row: bytes, section: bytes) -> None:
        """Place a verdict's summary row and section as the core wrote them (``add``'s, or
        ``VerdictReports.write``'s for a run writing several reports), the verdict numbered
        ``tally.verdicts``; its owner counts it after."""
        self._summary.write(row)
        self._sections.write(section)

    def close(self) -> None:
        """Drop the spooled text (``lines``/``chunks`` do it when they finish)."""
        self._summary.close()
        self._sections.close()

    def chunks(
        self,
        input_errors: list[InputProblem],
        notes: list[str],
        title: str = "otel-oracles report",
    ) -> Iterator[bytes]:
        """The page in pieces, UTF-8."""
        try:
            yield from self._chunks(input_errors, notes, title)
        finally:
            self._summary.close()
            self._sections.close()

    def _chunks(
        self, input_errors: list[InputProblem], notes: list[str], title: str
    ) -> Iterator[bytes]:
        notes_html = "".join(f"<li>{escape(n)}</li>" for n in notes)
        problems = "".join(
            f"<li>{escape(p.source)}: {escape(p.message)}</li>" for p in input_errors
        )
        yield f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>
<style>{_CSS}</style></head><body>
<h1>{escape(title)}</h1>
<p>{self.tally.verdicts} verdict(s), {self.tally.passed} passed.</p>
<p class="legend">{_LEGEND}</p>
<table><tr><th>subject</th><th>agent</th><th>contract</th><th>verdict</th>
<th title="invariant failures">invariant</th><th title="tolerated failures">tolerated</th>
<th title="exhausted budgets">exhausted</th><th title="missing evidence">missing</th></tr>
""".encode()
        yield from blocks(self._summary)
        yield f"""
</table>
{f"<h2>Notes</h2><ul>{notes_html}</ul>" if notes_html else ""}
{f"<h2>Input errors</h2><ul>{problems}</ul>" if problems else ""}
<h2>Results</h2>
""".encode()
        yield from blocks(self._sections)
        yield b"""
</body></html>
"""


def render_html(
    report: RunReport, title: str = "otel-oracles report", shown: ShownFilter | None = None
) -> str:
    """The whole page as a string (UTF-8 when written); ``shown`` as for ``add``."""
    writer = HtmlWriter()
    for v in report.verdicts:
        writer.add(v, shown)
    return b"".join(writer.chunks(report.input_errors, report.notes, title)).decode("utf-8")
