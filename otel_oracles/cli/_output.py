"""Output options shared by every command that produces a ``RunReport`` (``run``, ``gate``,
``grade``): the console table by default, ``--json`` instead of it, and ``--junit`` /
``--html`` files in addition."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from otel_oracles.errors import InputError
from otel_oracles.model.result import RunReport
from otel_oracles.report import render_console, render_html, render_json, render_junit

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
) -> None:
    """Write the requested files, then print the table or the JSON to stdout.

    ``exit_code`` is what the command will exit with, when it is not ``report.exit_code()``.
    """
    if junit is not None:
        _write(junit, render_junit(report))
    if html is not None:
        _write(html, render_html(report).encode("utf-8"))
    if as_json:
        click.echo(render_json(report, exit_code), nl=False)
    else:
        click.echo(render_console(report, show_passing_details=verbose), nl=False)
