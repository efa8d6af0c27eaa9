"""``otel-oracles watch``: coding agents' own telemetry, checked live against the watch
contract (docs/watch.md)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from pathlib import Path

import click

from otel_oracles.cli._watch_view import LiveView, PlainView, setup_text
from otel_oracles.decode import read_paths
from otel_oracles.errors import InputError
from otel_oracles.grade.oracles.coding_rule import SEVERITIES
from otel_oracles.model.result import InputProblem
from otel_oracles.report import terminal_safe
from otel_oracles.watch import (
    DEFAULT_CONTRACT,
    DEFAULT_GRPC_ENDPOINT,
    DEFAULT_HTTP_ENDPOINT,
    Watcher,
    WatchIngest,
    markdown_report,
    receive_until,
    receivers_settings,
)

TICK_S = 0.5
"""How often the live loop grades the sessions whose grading was deferred (``Watcher.tick``)."""


@click.command("watch")
@click.argument("files", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--once",
    is_flag=True,
    help="Check recorded telemetry FILES (OTLP files or directories) and exit.",
)
@click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=Path),
    help="Only sessions working in DIR; writes outside it are alerts.",
)
@click.option(
    "--fail-on",
    type=click.Choice(SEVERITIES),
    default="critical",
    show_default=True,
    help="Exit 1 when a violation is at least this severe.",
)
@click.option(
    "--report",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write a plain-English Markdown report of every session at exit.",
)
@click.option(
    "--sessions-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path(".otel-oracles/sessions"),
    show_default=True,
    help="Where each session is saved (trajectory JSON, raw telemetry, the contract).",
)
@click.option(
    "--contract",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=DEFAULT_CONTRACT,
    help="Rules to apply instead of the built-in watch contract.",
)
@click.option("--http", "http_endpoint", default=DEFAULT_HTTP_ENDPOINT, show_default=True,
              help="OTLP/HTTP receiver host:port.")  # fmt: skip
@click.option("--grpc", "grpc_endpoint", default=DEFAULT_GRPC_ENDPOINT, show_default=True,
              help="OTLP/gRPC receiver host:port.")  # fmt: skip
def watch_command(
    files: tuple[Path, ...],
    once: bool,
    project: Path | None,
    fail_on: str,
    report: Path | None,
    sessions_dir: Path,
    contract: Path,
    http_endpoint: str,
    grpc_endpoint: str,
) -> None:
    """Watch Claude Code, Codex CLI, Gemini CLI and Qwen Code sessions through their own
    telemetry.

    Listens for OTLP on 127.0.0.1 (printing the settings to paste into each agent), groups
    log events into sessions, and checks every session against the watch contract: network
    access, destructive commands, writes outside the project, edits to tests, CI config,
    lockfiles or .env, secrets in commands, package installs. Each session is saved as an
    AgentBench trajectory, which `otel-oracles run` grades again. Exit code: 1 when a
    violation reaches --fail-on or log records came from a service no coding-agent
    convention recognises (nothing of them was checked), 0 otherwise, 2 for usage or input
    errors.

    \b
    Examples:
      otel-oracles watch --project ~/src/app --report watch.md
      otel-oracles watch --once ./otlp-logs/ --fail-on high
      otel-oracles run .otel-oracles/sessions/watch-contract.yaml \\
          --trajectory .otel-oracles/sessions/claude-code-<id>.trajectory.json
    """
    if once != bool(files):
        raise click.UsageError("give FILES with --once, and FILES only with --once")
    root = str(project.resolve()) if project is not None else None
    watcher = Watcher(sessions_dir, project=root, contract=contract)
    if once:
        view = PlainView()
        problems: list[InputProblem] = []
        for batch in read_paths([str(f) for f in files], problems):
            watcher.offer_spans(batch.spans)
            view.update(watcher.offer(batch.logs))
        view.update(watcher.flush())
        _warn(problems)
    else:
        _listen(watcher, http_endpoint, grpc_endpoint)
    _finish(watcher, fail_on, report)


def _warn(problems: list[InputProblem]) -> None:
    """Input problems as warnings; metrics bodies (``metrics-N.pb``, as the capture driver
    names them) are counted, not listed: watch reads log events only."""
    metrics = [p for p in problems if Path(p.source.split("@")[0]).name.startswith("metrics")]
    for problem in problems:
        if problem not in metrics:
            click.echo(terminal_safe(f"warning: {problem.source}: {problem.message}"), err=True)
    if metrics:
        click.echo(f"note: skipped {len(metrics)} metrics body/bodies (watch reads log events)",
                   err=True)  # fmt: skip


def _listen(watcher: Watcher, http_endpoint: str, grpc_endpoint: str) -> None:
    view: LiveView | PlainView = LiveView(watcher) if sys.stdout.isatty() else PlainView()
    ingest = WatchIngest(watcher, view.update)

    async def pending_grades(stop: asyncio.Event) -> None:
        """Sessions that changed since their last grading (``Watcher.tick``), graded on the
        loop's thread between requests."""
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), TICK_S)
            view.update(watcher.tick())

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        settings = receivers_settings(http_endpoint, grpc_endpoint)
        ticking = asyncio.create_task(pending_grades(stop))
        try:
            await receive_until(ingest, settings, stop, lambda h, g: view.start(setup_text(h, g)))
        finally:
            stop.set()
            await ticking

    try:
        asyncio.run(main())
    except OSError as exc:
        raise InputError(f"cannot listen: {exc.strerror or exc}", "watch") from None
    finally:
        view.update(watcher.flush())


def _finish(watcher: Watcher, fail_on: str, report: Path | None) -> None:
    sessions = watcher.sessions()
    violations = watcher.violations()
    click.echo(
        f"{len(sessions)} session(s), {len(violations)} violation(s); saved in {watcher.save_dir}"
    )
    if report is not None:
        report.write_text(markdown_report(watcher), encoding="utf-8")
        click.echo(f"report: {report}")
    unchecked = _unrecognised(watcher) + _spans_only(watcher)
    threshold = next(s for s in SEVERITIES if s == fail_on)
    sys.exit(1 if watcher.fails(threshold) or unchecked else 0)


def _spans_only(watcher: Watcher) -> int:
    """Warn of spans from services none of whose log records were checked (an agent that
    exports traces only, as GitHub Copilot CLI does): watch reads log events, so those
    sessions were never seen and the run fails closed instead of reporting no violation.
    Returns their count."""
    counts = watcher.spans_unchecked()
    if counts:
        names = terminal_safe(
            ", ".join(f"{name or '(no service.name)'} x{n}" for name, n in sorted(counts.items()))
        )
        click.echo(
            f"warning: {sum(counts.values())} span(s) from service(s) that sent no log event "
            f"watch checks, not checked: {names} (watch reads log events; `otel-oracles "
            "grade` reads spans)",
            err=True,
        )
    return sum(counts.values())


def _unrecognised(watcher: Watcher) -> int:
    """Warn of log records from services no agent convention recognises (an agent watch does
    not know, or one whose ``service.name`` changed): they were not checked, so the run
    fails closed instead of reporting their sessions as clean. Returns their count."""
    counts = watcher.book.unrecognised
    if counts:
        names = terminal_safe(
            ", ".join(f"{name or '(no service.name)'} x{n}" for name, n in sorted(counts.items()))
        )
        click.echo(
            f"warning: {sum(counts.values())} log record(s) from service(s) no coding-agent "
            f"convention recognises, not checked: {names} (otel_oracles/watch/coding-agents.yaml)",
            err=True,
        )
    return sum(counts.values())
