"""A single self-contained HTML page (inline CSS, no scripts, no external links): one summary
table and, per verdict, the results with their messages and details. Every piece of text
from a trace or trajectory is escaped."""

from __future__ import annotations

import json
from collections.abc import Iterator
from html import escape
from typing import IO

from otel_oracles.model.result import InputProblem, RunReport, Verdict
from otel_oracles.report._common import Tally, agent_label, contract_label, replay, spool

DETAILS_LIMIT = 4000
"""Characters of each result's details JSON shown (stderr of a test run can be long)."""

_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:.3em .6em;
text-align:left;vertical-align:top}th{background:#f3f3f3}td.n{text-align:right}
.pass{color:#17692b;font-weight:bold}.fail{color:#b00020;font-weight:bold}
.error{color:#a05a00;font-weight:bold}pre{white-space:pre-wrap;max-width:80em;margin:0}
details{margin:.5em 0}summary{cursor:pointer}
"""


def _verdict_cell(v: Verdict) -> str:
    return f'<td class="{v.verdict}">{escape(v.verdict)}</td>'


def _result_rows(v: Verdict) -> str:
    rows = []
    for r in v.results:
        detail = json.dumps(r.details, indent=2, ensure_ascii=False, default=str)
        if len(detail) > DETAILS_LIMIT:
            detail = detail[:DETAILS_LIMIT] + "\n…"
        css = "pass" if r.passed else ("error" if r.outcome.value == "error" else "fail")
        rows.append(
            "<tr>"
            f"<td>{escape(r.name)}</td><td>{escape(r.oracle_type)}</td><td>{escape(r.layer)}</td>"
            f'<td class="{css}">{escape(r.outcome.value)}</td>'
            f"<td><pre>{escape(r.message)}</pre></td>"
            f"<td><pre>{escape(detail) if r.details else ''}</pre></td>"
            "</tr>"
        )
    return "\n".join(rows)


class HtmlWriter:
    """Builds the page one verdict at a time, so ``grade`` need not keep every verdict: the
    summary rows and the per-verdict sections go to two spools (on disk past a megabyte)
    that ``chunks()`` places in the page. Same text as ``render_html`` of the whole report."""

    def __init__(self) -> None:
        self._summary = spool()
        self._sections = spool()
        self.tally = Tally()

    def add(self, v: Verdict) -> None:
        i = self.tally.verdicts
        c = v.counts
        self._summary.write(
            "<tr>"
            f'<td><a href="#v{i}">{escape(v.subject)}</a></td>'
            f"<td>{escape(agent_label(v))}</td><td>{escape(contract_label(v))}</td>"
            f"{_verdict_cell(v)}"
            + "".join(
                f'<td class="n">{n}</td>'
                for n in (
                    c.invariant_failures,
                    c.tolerated_failures,
                    c.budget_exhausted,
                    c.missing_evidence,
                )
            )
            + "</tr>"
        )
        self._sections.write(
            f'<details id="v{i}"{"" if v.passed else " open"}><summary>'
            f"{escape(contract_label(v))} on {escape(v.subject)}: "
            f'<span class="{v.verdict}">{escape(v.verdict)}</span></summary>\n'
            "<table><tr><th>check</th><th>type</th><th>layer</th><th>outcome</th>"
            "<th>message</th><th>details</th></tr>\n"
            f"{_result_rows(v)}\n</table></details>"
        )
        self.tally.add(v)

    def close(self) -> None:
        """Drop the spooled text (``lines``/``chunks`` do it when they finish)."""
        self._summary.close()
        self._sections.close()

    def chunks(
        self,
        input_errors: list[InputProblem],
        notes: list[str],
        title: str = "otel-oracles report",
    ) -> Iterator[str]:
        """The page in pieces."""
        try:
            yield from self._chunks(input_errors, notes, title)
        finally:
            self._summary.close()
            self._sections.close()

    def _chunks(
        self, input_errors: list[InputProblem], notes: list[str], title: str
    ) -> Iterator[str]:
        notes_html = "".join(f"<li>{escape(n)}</li>" for n in notes)
        problems = "".join(
            f"<li>{escape(p.source)}: {escape(p.message)}</li>" for p in input_errors
        )
        yield f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>
<style>{_CSS}</style></head><body>
<h1>{escape(title)}</h1>
<p>{self.tally.verdicts} verdict(s), {self.tally.passed} passed.</p>
<table><tr><th>subject</th><th>agent</th><th>contract</th><th>verdict</th>
<th title="invariant failures">invariant</th><th title="tolerated failures">tolerated</th>
<th title="exhausted budgets">exhausted</th><th title="missing evidence">missing</th></tr>
"""
        yield from _blocks(self._summary)
        yield f"""
</table>
{f"<h2>Notes</h2><ul>{notes_html}</ul>" if notes_html else ""}
{f"<h2>Input errors</h2><ul>{problems}</ul>" if problems else ""}
<h2>Results</h2>
"""
        yield from _blocks(self._sections)
        yield """
</body></html>
"""


def _blocks(buffer: IO[str]) -> Iterator[str]:
    replay(buffer)
    while block := buffer.read(1 << 16):
        yield block


def render_html(report: RunReport, title: str = "otel-oracles report") -> str:
    """The whole page as a string (UTF-8 when written)."""
    writer = HtmlWriter()
    for v in report.verdicts:
        writer.add(v)
    return "".join(writer.chunks(report.input_errors, report.notes, title))
