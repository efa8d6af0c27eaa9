"""A single self-contained HTML page (inline CSS, no scripts, no external links): one summary
table and, per verdict, the results with their messages and details. Every piece of text
from a trace or trajectory is escaped."""

from __future__ import annotations

import json
from html import escape

from otel_oracles.model.result import RunReport, Verdict
from otel_oracles.report._common import agent_label, contract_label

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


def render_html(report: RunReport, title: str = "otel-oracles report") -> str:
    """The whole page as a string (UTF-8 when written)."""
    summary_rows = []
    sections = []
    for i, v in enumerate(report.verdicts):
        c = v.counts
        summary_rows.append(
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
        sections.append(
            f'<details id="v{i}"{"" if v.passed else " open"}><summary>'
            f"{escape(contract_label(v))} on {escape(v.subject)}: "
            f'<span class="{v.verdict}">{escape(v.verdict)}</span></summary>\n'
            "<table><tr><th>check</th><th>type</th><th>layer</th><th>outcome</th>"
            "<th>message</th><th>details</th></tr>\n"
            f"{_result_rows(v)}\n</table></details>"
        )
    notes = "".join(f"<li>{escape(n)}</li>" for n in report.notes)
    problems = "".join(
        f"<li>{escape(p.source)}: {escape(p.message)}</li>" for p in report.input_errors
    )
    passed = sum(1 for v in report.verdicts if v.passed)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>
<style>{_CSS}</style></head><body>
<h1>{escape(title)}</h1>
<p>{len(report.verdicts)} verdict(s), {passed} passed.</p>
<table><tr><th>subject</th><th>agent</th><th>contract</th><th>verdict</th>
<th title="invariant failures">invariant</th><th title="tolerated failures">tolerated</th>
<th title="exhausted budgets">exhausted</th><th title="missing evidence">missing</th></tr>
{"".join(summary_rows)}
</table>
{f"<h2>Notes</h2><ul>{notes}</ul>" if notes else ""}
{f"<h2>Input errors</h2><ul>{problems}</ul>" if problems else ""}
<h2>Results</h2>
{"".join(sections)}
</body></html>
"""
