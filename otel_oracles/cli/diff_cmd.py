"""``otel-oracles diff``: what changed between two runs' ``--json`` reports."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from otel_oracles.cli import EXIT_FAILED, EXIT_OK
from otel_oracles.cli._baseline import margin_options
from otel_oracles.regression import (
    Margins,
    RunRecord,
    compare,
    read_report,
    render_json,
    render_markdown,
    render_text,
)

RENDERERS = {"text": render_text, "json": render_json, "markdown": render_markdown}


@click.command("diff")
@click.argument("baseline", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("candidate", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(list(RENDERERS)),
    default="text",
    show_default=True,
    help="text for a terminal, json for machines, markdown for a pull-request comment.",
)
@margin_options
def diff_command(
    baseline: Path,
    candidate: Path,
    fmt: str,
    max_tolerated_rise: int,
    max_missing_rise: int,
) -> None:
    """Compare two --json reports of grade, gate or run: BASELINE (e.g. from the main
    branch) and CANDIDATE (the change under review).

    Per contract: the pairs graded, the pass/fail/error verdict counts and the four numbers
    (invariant failures, tolerated failures, budget exhausted, missing evidence), before and
    after; then every check whose outcome flipped on a pair graded in both (pair, check,
    old -> new outcome), and the regressions. Pairs are keyed by contract id and subject (the
    trace id; for a trajectory, its file name). A regression is a pair that passed and no
    longer does, a pair that is no longer graded, or a tolerated-failure or missing-evidence
    count rising beyond its margin; a contract whose version changed is listed, not compared.
    Exit code: 0 no regression, 1 a regression, 2 an unreadable report.

    \b
    Examples:
      otel-oracles grade traces/ -c contracts/ --json > candidate.json
      otel-oracles diff main-results.json candidate.json
      otel-oracles diff main-results.json candidate.json --format markdown > comment.md
      otel-oracles diff base.json cand.json --format json --max-tolerated-rise 2
    """
    old = RunRecord.of(read_report(baseline).verdicts)
    new = RunRecord.of(read_report(candidate).verdicts)
    comparison = compare(old, new, Margins(max_tolerated_rise, max_missing_rise))
    click.echo(RENDERERS[fmt](comparison), nl=False)
    sys.exit(EXIT_FAILED if comparison.regressed else EXIT_OK)
