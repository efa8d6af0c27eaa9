"""A single self-contained HTML page (inline CSS, no scripts, no external links): one summary
table and, per verdict, the results with their messages and details. Every piece of text
from a trace or trajectory is escaped."""

from __future__ import annotations

import json
from collections.abc import Iterator
from html import escape as _html_escape
from typing import TYPE_CHECKING

from otel_oracles.model.result import InputProblem, RunReport, Verdict
from otel_oracles.report._common import (
    Tally,
    agent_label,
    blocks,
    byte_spool,
    contract_label,
    terminal_safe,
)

if TYPE_CHECKING:
    from otel_oracles._native import ShownFilter


def escape(text: str) -> str:
    """``text`` as HTML text, with the characters ``terminal_safe`` shows as escapes shown
    so here too: a browser ignores ESC, but it lays text out by the bidirectional overrides
    and isolates, so a name a trace chose could read reversed in the report."""
    return _html_escape(terminal_safe(text))


DETAILS_LIMIT = 4000
"""Characters of each result's details JSON shown (stderr of a test run can be long)."""

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

_MARK = {
    "pass": "✓",
    "tolerated": "◐",
    "invariant_failure": "✗",
    "budget_exhausted": "✗",
    "missing_evidence": "?",
    "error": "!",
}
"""A marker per outcome besides its colour (readable in print and for colour-blind eyes)."""

DETAIL_VALUE_LIMIT = 600
"""Characters of one details value shown inline; the rest is cut with an ellipsis."""


def _verdict_cell(v: Verdict) -> str:
    tolerated = v.counts.tolerated_failures
    if v.passed and tolerated:
        return f'<td class="verdict-tolerated">pass, {tolerated} tolerated</td>'
    return f'<td class="{v.verdict}">{escape(v.verdict)}</td>'


def _count_cells(v: Verdict) -> str:
    c = v.counts
    cells = []
    for n, css in (
        (c.invariant_failures, "inv"),
        (c.tolerated_failures, "tol"),
        (c.budget_exhausted, "exh"),
        (c.missing_evidence, "miss"),
    ):
        cells.append(f'<td class="n {css if n else "zero"}">{n}</td>')
    return "".join(cells)


_DETAIL_JSON = json.JSONEncoder(ensure_ascii=False, default=str).encode
"""``json.dumps(value, ensure_ascii=False, default=str)`` without building an encoder per
value (``dumps`` builds one whenever it is given options)."""

_ESCAPED_MAX = 4096
"""Escaped texts a writer remembers (each at most ``_ESCAPED_TEXT_MAX`` characters)."""

_ESCAPED_TEXT_MAX = 256


def _starts_open(v: Verdict) -> bool:
    """Failing verdicts, and passing ones that used a budget or lack evidence, start expanded:
    those are the verdicts a reader has to look at."""
    c = v.counts
    return not v.passed or bool(c.tolerated_failures or c.missing_evidence)


_LEGEND = " ".join(f'<span class="o-{o}">{_MARK[o]} {o}</span>' for o in _MARK)


def _outcome_cell(outcome: str) -> bytes:
    """A result's outcome cell, its marker and name, as UTF-8."""
    return (
        f'<td class="outcome o-{outcome}">{_MARK.get(outcome, "")} {escape(outcome)}</td>'.encode()
    )


_OUTCOME_CELLS = {outcome: _outcome_cell(outcome) for outcome in _MARK}
"""The outcome cells, encoded once: their markers are the page's only non-ASCII template
text, and a row holding one was a UCS-2 string encoded character by character."""


class HtmlWriter:
    """Builds the page one verdict at a time, so ``grade`` need not keep every verdict: the
    summary rows and the per-verdict sections go, as UTF-8, to two spools (on disk past a
    megabyte) that ``chunks()`` places in the page. Same bytes as ``render_html`` of the
    whole report. ``tally`` as for ``JsonWriter``: given, its owner counts each verdict after
    ``add``.

    The text of a section is ASCII but for the outcome markers, so it is encoded in the
    pieces between them (each a copy) and the markers' cells are written as encoded once.
    The writer remembers what it escaped of short texts, and each result row's start (check,
    type, layer, outcome): a report repeats its check names, types, layers, messages and
    detail keys and values on every verdict. Each memory holds up to ``_ESCAPED_MAX``
    entries, so a long stream's memory stays bounded."""

    def __init__(self, tally: Tally | None = None) -> None:
        self._summary = byte_spool()
        self._sections = byte_spool()
        self._counts = tally is None
        self.tally = Tally() if tally is None else tally
        self._escaped: dict[str, str] = {}
        self._heads: dict[tuple[str, str, str, str], bytes] = {}

    def _escape(self, text: str) -> str:
        """``escape(text)``, remembered for short texts (up to ``_ESCAPED_MAX`` of them)."""
        if len(text) > _ESCAPED_TEXT_MAX:
            return escape(text)
        done = self._escaped.get(text)
        if done is None:
            done = escape(text)
            if len(self._escaped) < _ESCAPED_MAX:
                self._escaped[text] = done
        return done

    def add(self, v: Verdict, shown: ShownFilter | None = None) -> None:
        """Lay out ``v``'s summary row and section; with ``shown`` (the privacy filter,
        ``emit.SHOWN_FILTER``) each result's message and details are what it shows, asked
        of it as the row is written: no scrubbed copy of the verdict is built."""
        esc = self._escape
        i = self.tally.verdicts
        subject = esc(v.subject)
        contract = esc(contract_label(v))
        self._summary.write(
            (
                "<tr>"
                f'<td><a href="#v{i}">{subject}</a></td>'
                f"<td>{esc(agent_label(v))}</td><td>{contract}</td>"
                f"{_verdict_cell(v)}{_count_cells(v)}</tr>"
            ).encode()
        )
        text = (
            f'<details id="v{i}"{" open" if _starts_open(v) else ""}><summary>'
            f"{contract} on {subject}: "
            f'<span class="{v.verdict}">{esc(v.verdict)}</span></summary>\n'
            "<table><tr><th>check</th><th>type</th><th>layer</th><th>outcome</th>"
            "<th>message</th><th>details</th></tr>\n"
        )
        # A row per result; its message and details are what ``shown`` (the privacy
        # filter) shows of them, or its own without one.
        pieces: list[bytes] = []
        heads = self._heads
        for k, r in enumerate(v.results):
            # the value (a StrEnum's ``str``; ``.value`` is a Python-level property)
            outcome = str(r.outcome)
            key = (outcome, r.name, r.oracle_type, r.layer)
            head = heads.get(key)
            if head is None:
                head = self._head(*key)
                if len(heads) < _ESCAPED_MAX:
                    heads[key] = head
            if shown is None:
                message, details = r.message, r.details
            else:
                message, details = shown.shown_message(r), shown.scrub(r.details)
            pieces.append((text + "\n" if k else text).encode())
            pieces.append(head)
            text = f"<td><pre>{esc(message)}</pre></td><td>{self._details(details)}</td></tr>"
        pieces.append(f"{text}\n</table></details>".encode())
        self._sections.write(b"".join(pieces))
        if self._counts:
            self.tally.add(v)

    def _head(self, outcome: str, name: str, oracle_type: str, layer: str) -> bytes:
        """A result row's start, up to its message: check, type, layer and outcome cells."""
        esc = self._escape
        cell = _OUTCOME_CELLS.get(outcome)
        text = (
            f'<tr class="result o-row-{outcome}">'
            f"<td>{esc(name)}</td><td>{esc(oracle_type)}</td><td>{esc(layer)}</td>"
        )
        return text.encode() + (_outcome_cell(outcome) if cell is None else cell)

    def _details(self, details: dict[str, object]) -> str:
        """Details as a two-column list (key, value): nested values as compact JSON, long
        values cut, so the column stays readable beside the message."""
        if not details:
            return ""
        esc = self._escape
        rows = []
        budget = DETAILS_LIMIT
        for key, value in details.items():
            # an int (not a bool) as JSON writes it, and its digits need no escaping
            whole = type(value) is int
            if whole:
                text = str(value)
            elif isinstance(value, str):
                text = value
            else:
                text = _DETAIL_JSON(value)
            if len(text) > DETAIL_VALUE_LIMIT:
                text = text[:DETAIL_VALUE_LIMIT] + "…"
            shown = text if whole else esc(text)
            budget -= len(text)
            rows.append(f"<dt>{esc(str(key))}</dt><dd>{shown}</dd>")
            if budget <= 0:
                rows.append("<dt>…</dt><dd>(more details in the JSON report)</dd>")
                break
        return '<dl class="details">' + "".join(rows) + "</dl>"

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
