"""The human-readable verdict table printed by ``run``, ``gate`` and ``grade``."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

from otel_oracles._native import one_line
from otel_oracles.model.result import InputProblem, OracleResult, RunReport, Verdict
from otel_oracles.report._common import (
    SPOOL_WRITE_CHARS,
    Tally,
    agent_label,
    contract_label,
    replay,
    spool,
    terminal_safe,
)

COLUMNS_NUMBERS = ("INV", "TOL", "EXH", "MISS")
"""Invariant failures, tolerated failures, exhausted budgets, missing evidence."""

_AGENT = 1
"""Index of the agent cell in a stored row (dropped when no verdict has an agent)."""


class ConsoleWriter:
    """Builds the table one verdict at a time, so ``grade`` need not keep every verdict.

    Column widths depend on every row, so each row's cells and result lines are spooled
    (one JSON line per verdict, on disk past a megabyte) and laid out in ``lines()``.
    ``tally`` as for ``JsonWriter``: given, its owner counts each verdict after ``add``.
    """

    def __init__(self, *, show_passing_details: bool = False, tally: Tally | None = None) -> None:
        self._details = show_passing_details
        self._rows = spool()
        self._pending: list[str] = []
        self._pending_chars = 0
        self._widths = [0] * (4 + len(COLUMNS_NUMBERS))
        self._with_agent = False
        self._counts = tally is None
        self.tally = Tally() if tally is None else tally

    def add(self, v: Verdict, message: Callable[[OracleResult], str] | None = None) -> None:
        """Lay out ``v``'s row; with ``message``, each listed result's message is what it
        gives for the result (``emit.shown_message``; asked for the listed results only)."""
        c = v.counts
        agent = agent_label(v)
        self._with_agent = self._with_agent or bool(agent)
        cells = [
            terminal_safe(v.subject),
            terminal_safe(agent) if agent else "-",
            terminal_safe(contract_label(v)),
            v.verdict.upper() if not v.passed else v.verdict,
        ]
        cells += [
            str(n)
            for n in (
                c.invariant_failures,
                c.tolerated_failures,
                c.budget_exhausted,
                c.missing_evidence,
            )
        ]
        widths = self._widths
        for i, cell in enumerate(cells):
            if len(cell) > widths[i]:
                widths[i] = len(cell)
        # Passing results are listed with --verbose only. --verbose shows
        # each message whole (continuation lines indented under it); the default table keeps
        # one capped line per result.
        text = _whole if self._details else one_line
        extra = [
            terminal_safe(
                f"    {'ok' if r.passed else 'x'} {r.outcome.value} {r.name}: "
                + text(r.message if message is None else message(r))
            )
            for r in v.results
            if self._details or not r.passed
        ]
        row = json.dumps([cells, extra], ensure_ascii=False)
        self._pending.append(row)
        self._pending_chars += len(row)
        if self._pending_chars >= SPOOL_WRITE_CHARS:
            self._flush()
        if self._counts:
            self.tally.add(v)

    def _flush(self) -> None:
        if self._pending:
            self._rows.write("\n".join(self._pending) + "\n")
        self._pending = []
        self._pending_chars = 0

    def close(self) -> None:
        """Drop the spooled text (``lines``/``chunks`` do it when they finish)."""
        self._pending = []
        self._rows.close()

    def lines(self, input_errors: list[InputProblem], notes: list[str]) -> Iterator[str]:
        """The table, summary and notes, each line ending in a newline."""
        try:
            yield from self._lines(input_errors, notes)
        finally:
            self._rows.close()

    def _lines(self, input_errors: list[InputProblem], notes: list[str]) -> Iterator[str]:
        keep = [i for i in range(len(self._widths)) if self._with_agent or i != _AGENT]
        header = ["SUBJECT"] + (["AGENT"] if self._with_agent else []) + ["CONTRACT", "VERDICT"]
        header += list(COLUMNS_NUMBERS)
        widths = [max(len(h), self._widths[i]) for h, i in zip(header, keep, strict=True)]
        numeric_from = len(header) - len(COLUMNS_NUMBERS)

        def fmt(cells: list[str]) -> str:
            out = []
            for i, cell in enumerate(cells):
                out.append(cell.rjust(widths[i]) if i >= numeric_from else cell.ljust(widths[i]))
            return "  ".join(out).rstrip() + "\n"

        t = self.tally
        self._flush()
        if t.verdicts:
            yield fmt(header)
            for line in replay(self._rows):
                cells, extra = json.loads(line)
                yield fmt([cells[i] for i in keep])
                for text in extra:
                    yield text + "\n"
            yield "\n"
        failed = t.verdicts - t.passed - t.errors
        summary = f"{t.verdicts} verdict(s): {t.passed} passed, {failed} failed"
        if t.errors:
            summary += f", {t.errors} harness error(s)"
        if input_errors:
            summary += f", {len(input_errors)} input error(s)"
        yield summary + "\n"
        for n in notes:
            yield f"note: {terminal_safe(n)}\n"
        # Each unreadable input itself is a user error: the CLI prints it on stderr
        # (``error: <source>: <message>``); the table counts them in the summary only.


def _whole(message: str) -> str:
    return "\n      ".join(line.rstrip() for line in message.strip().splitlines())


def render_console(report: RunReport, *, show_passing_details: bool = False) -> str:
    """A table with one row per verdict and, under each failing row, one line per failing
    result (``outcome name: message``). Notes and the input-error count follow the table.

    ``show_passing_details`` also lists the results of passing verdicts (``--verbose``).
    """
    writer = ConsoleWriter(show_passing_details=show_passing_details)
    for v in report.verdicts:
        writer.add(v)
    return "".join(writer.lines(report.input_errors, report.notes))
