"""The human-readable verdict table printed by ``run``, ``gate`` and ``grade``."""

from __future__ import annotations

from otel_oracles.model.result import RunReport, Verdict
from otel_oracles.report._common import agent_label, contract_label, failing, one_line

COLUMNS_NUMBERS = ("INV", "TOL", "EXH", "MISS")
"""Invariant failures, tolerated failures, exhausted budgets, missing evidence."""


def _row(v: Verdict, with_agent: bool) -> list[str]:
    c = v.counts
    row = [v.subject]
    if with_agent:
        row.append(agent_label(v) or "-")
    row += [contract_label(v), v.verdict.upper() if not v.passed else v.verdict]
    row += [
        str(n)
        for n in (
            c.invariant_failures,
            c.tolerated_failures,
            c.budget_exhausted,
            c.missing_evidence,
        )
    ]
    return row


def render_console(report: RunReport, *, show_passing_details: bool = False) -> str:
    """A table with one row per verdict and, under each failing row, one line per failing
    result (``outcome name: message``). Notes and input errors follow the table.

    ``show_passing_details`` also lists the results of passing verdicts (``--verbose``).
    """
    lines: list[str] = []
    verdicts = report.verdicts
    with_agent = any(agent_label(v) for v in verdicts)
    header = ["SUBJECT"] + (["AGENT"] if with_agent else []) + ["CONTRACT", "VERDICT"]
    header += list(COLUMNS_NUMBERS)
    rows = [_row(v, with_agent) for v in verdicts]
    numeric_from = len(header) - len(COLUMNS_NUMBERS)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def fmt(cells: list[str]) -> str:
        out = []
        for i, cell in enumerate(cells):
            out.append(cell.rjust(widths[i]) if i >= numeric_from else cell.ljust(widths[i]))
        return "  ".join(out).rstrip()

    if verdicts:
        lines.append(fmt(header))
        for v, row in zip(verdicts, rows, strict=True):
            lines.append(fmt(row))
            shown = v.results if show_passing_details else failing(v)
            for r in shown:
                mark = "ok" if r.passed else "x"
                lines.append(f"    {mark} {r.outcome.value} {r.name}: {one_line(r.message)}")
        lines.append("")
    passed = sum(1 for v in verdicts if v.passed)
    errors = sum(1 for v in verdicts if v.verdict == "error")
    failed = len(verdicts) - passed - errors
    summary = f"{len(verdicts)} verdict(s): {passed} passed, {failed} failed"
    if errors:
        summary += f", {errors} harness error(s)"
    if report.input_errors:
        summary += f", {len(report.input_errors)} input error(s)"
    lines.append(summary)
    lines.extend(f"note: {n}" for n in report.notes)
    lines.extend(f"input error: {p.source}: {p.message}" for p in report.input_errors)
    return "\n".join(lines) + "\n"
