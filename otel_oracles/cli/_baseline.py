"""``--baseline FILE`` with its margins, shared by ``grade`` and ``gate``, and the margin
options ``diff`` uses too: the run also fails when it regressed against a previous run's
``--json`` report (rules in ``otel_oracles.regression``; docs/regression.md)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from otel_oracles.model.result import Verdict

if TYPE_CHECKING:
    from otel_oracles.regression import Comparison, Margins, RunRecord

F = TypeVar("F", bound=Callable[..., Any])


def margin_options(func: F) -> F:
    """``--max-tolerated-rise N`` and ``--max-missing-rise N``."""
    options = [
        click.option(
            "--max-tolerated-rise",
            type=click.IntRange(min=0),
            default=0,
            show_default=True,
            metavar="N",
            help="Per contract, how many more tolerated failures (budgeted exceptions that "
            "still passed, summed over its traces) than the baseline are accepted.",
        ),
        click.option(
            "--max-missing-rise",
            type=click.IntRange(min=0),
            default=0,
            show_default=True,
            metavar="N",
            help="Per contract, how many more missing-evidence results (checks that could not "
            "be judged from the data, summed over its traces) than the baseline are accepted.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def baseline_options(func: F) -> F:
    """``--baseline FILE`` plus the margin options."""
    func = margin_options(func)
    return click.option(
        "--baseline",
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        metavar="FILE",
        help="A previous run's --json report: also fail (exit 1, one 'REGRESSION:' line each "
        "on stderr and in the report's notes) when a pair that passed there fails now, a "
        "pair graded there is not graded now, or a count rises beyond its margin. A "
        "contract whose version changed is reported, not compared. See docs/regression.md.",
    )(func)


# A plain class, not a dataclass: never compared or printed, and the methods
# ``dataclasses`` generates are compiled from source at every start (``otel_oracles._frozen``).
class BaselineCheck:
    """A loaded baseline and the record of the current run, filled as verdicts arrive."""

    __slots__ = ("baseline", "current", "margins")
    baseline: RunRecord
    margins: Margins
    current: RunRecord

    def __init__(self, baseline: RunRecord, margins: Margins, current: RunRecord) -> None:
        self.baseline = baseline
        self.margins = margins
        self.current = current

    @classmethod
    def load(
        cls, path: Path | None, max_tolerated_rise: int, max_missing_rise: int
    ) -> BaselineCheck | None:
        """``None`` without ``--baseline``; read before grading so a bad file costs nothing.
        The comparison (``regression``) is imported only then: a run without a baseline does
        not load it."""
        if path is None:
            return None
        from otel_oracles.regression import Margins, RunRecord, read_report

        report = read_report(path)
        return cls(
            RunRecord.of(report.verdicts),
            Margins(max_tolerated_rise, max_missing_rise),
            RunRecord(),
        )

    def add(self, verdict: Verdict) -> None:
        self.current.add(verdict)

    def judge(self, notes: list[str], exit_code: int) -> tuple[int, Comparison]:
        """Append what changed and what regressed to ``notes``; the exit code with
        regressions counted (a usage/input error, 2, stays)."""
        from otel_oracles.cli import EXIT_FAILED, EXIT_USAGE  # the package imports this module
        from otel_oracles.regression import REGRESSION_PREFIX, compare  # loaded by ``load``

        comparison = compare(self.baseline, self.current, self.margins)
        notes.extend(f"baseline: {n}" for n in comparison.notes)
        notes.extend(REGRESSION_PREFIX + r for r in comparison.regressions)
        if comparison.regressed and exit_code != EXIT_USAGE:
            exit_code = EXIT_FAILED
        return exit_code, comparison


def report_regressions(comparison: Comparison | None) -> None:
    """One stderr line per regression, after the report was printed."""
    if comparison is not None:
        from otel_oracles.regression import REGRESSION_PREFIX  # loaded by ``BaselineCheck.load``

        for line in comparison.regressions:
            click.echo(REGRESSION_PREFIX + line, err=True)
