"""``otel-oracles grade``: grade exported OTLP traces against contracts, offline."""

from __future__ import annotations

import os
import sys
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

import click

from otel_oracles.cli import EXIT_FAILED, EXIT_USAGE, StartUpGc
from otel_oracles.cli._baseline import BaselineCheck, baseline_options, report_regressions
from otel_oracles.cli._output import (
    ReportStream,
    allow_empty_option,
    input_limit_options,
    input_limits,
    nothing_graded,
    report_input_problems,
    report_options,
)
from otel_oracles.cli._trust import (
    command_policy,
    explain_option,
    resolve_explain,
    unsafe_commands_option,
)
from otel_oracles.model.contract import discover_contract_files
from otel_oracles.model.result import Verdict
from otel_oracles.model.step import Trajectory
from otel_oracles.pipeline import grade_paths, input_files, nothing_graded_reason
from otel_oracles.session import GradeRun, GradingSession, SessionSpec

if TYPE_CHECKING:
    from otel_oracles.emit import Emitter, SdkLogs

DEFAULT_EXPORT_TIMEOUT_S = 5.0
"""A CI run should not wait the SDK's 10 s per signal on an endpoint that is not there."""

PROGRESS_MIN_BYTES = 4 * 1024 * 1024
"""Inputs at least this large get a progress bar on stderr (when it is a terminal)."""


@click.command("grade")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "-c",
    "--contracts",
    "contract_paths",
    multiple=True,
    required=True,
    type=click.Path(exists=True, path_type=Path),
    help="Contract file, or directory of them (.yaml/.yml/.json); repeat for several.",
)
@click.option(
    "--conventions",
    "convention_dirs",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="Extra mapping file or directory, added to the bundled conventions/; repeat for "
    "several. A file with a bundled file's name replaces it.",
)
@click.option(
    "--keep-going",
    is_flag=True,
    help="Exit 0/1 from the verdicts even when some inputs were unreadable (they are still "
    "reported).",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
@click.option(
    "-j",
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    metavar="N",
    help="Grade on N processes (traces split by trace id; see docs/performance.md). "
    "Verdicts are then listed in order of each trace's first span; no progress bar; "
    "not with stdin.",
)
@click.option(
    "--export",
    type=click.Choice(["otlp", "none"]),
    default="none",
    show_default=True,
    help="Send grade spans, gen_ai.evaluation.result events and metrics over OTLP "
    "(standard OTEL_EXPORTER_OTLP_* variables; see docs/telemetry.md). A failed export "
    "is a stderr warning and never changes the exit code.",
)
@click.option(
    "--export-timeout",
    type=click.FloatRange(min=0.1),
    default=None,
    metavar="SECONDS",
    help="Time budget for delivering results over OTLP (spans, logs and metrics, retries "
    "included), after which a warning says what was not delivered [5; with "
    "OTEL_EXPORTER_OTLP_TIMEOUT set, that per signal].",
)
@click.option(
    "--results-out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the emitted telemetry to FILE as OTLP/JSON lines (collector file "
    "exporter format).",
)
@explain_option
@unsafe_commands_option
@allow_empty_option
@input_limit_options
@baseline_options
@report_options
def grade_command(
    paths: tuple[str, ...],
    contract_paths: tuple[Path, ...],
    convention_dirs: tuple[Path, ...],
    keep_going: bool,
    quiet: bool,
    workers: int,
    export: str,
    export_timeout: float | None,
    results_out: Path | None,
    explain: str | None,
    unsafe_commands: bool,
    allow_empty: bool,
    max_message_bytes: int | None,
    max_decompressed_bytes: int | None,
    idle_spans: int | None,
    max_buffered_spans: int | None,
    baseline: Path | None,
    max_tolerated_rise: int,
    max_missing_rise: int,
    as_json: bool,
    junit: Path | None,
    html: Path | None,
    verbose: bool,
) -> None:
    """Grade the traces in PATHS against the contracts that select them.

    PATHS are OTLP files (protobuf or JSON, one request or JSON lines as the collector's file
    exporter writes them, optionally gzip/zstd compressed), directories, globs, or - for
    stdin. Spans are grouped into traces, mapped to steps through conventions/, and each
    trace is graded against every contract whose match selects it (no match = all traces).

    Unreadable inputs (a truncated protobuf, invalid JSON on one line) are reported with file
    and line or byte offset; the rest is still graded. Exit code: 0 every verdict passed,
    1 any verdict failed, 2 usage error, any input unreadable (use --keep-going to exit
    0/1 from the verdicts alone) or nothing graded (no spans, or no trace selected by any
    contract; --allow-empty accepts that). With --baseline, 1 also when the run regressed
    against that earlier report (docs/regression.md).

    \b
    Examples:
      otel-oracles grade examples/traces --contracts examples/contracts
      otel-oracles grade export.jsonl.zst -c contracts/ --junit grade.xml --keep-going
      otel-oracles grade traces/ -c support.yaml --conventions my-conventions/ --json
      otel-oracles grade traces/ -c contracts/ --export otlp
      otel-oracles grade traces/ -c contracts/ --results-out results.jsonl
      otel-oracles grade big-export.binpb -c contracts/ --workers 4
      otel-oracles grade traces/ -c contracts/ --baseline main-results.json
    """
    if workers > 1 and "-" in paths:
        raise click.UsageError("--workers needs files: stdin (-) can be read by one process")
    files = discover_contract_files(list(contract_paths))
    if not files:
        raise click.UsageError("no contract files (.json/.yaml/.yml) found in --contracts")
    spec = SessionSpec(
        tuple(files),
        tuple(convention_dirs),
        input_limits(max_message_bytes, max_decompressed_bytes, idle_spans, max_buffered_spans),
        command_policy(unsafe_commands),
    )
    session = GradingSession.load(spec)
    StartUpGc.loaded()
    regression = BaselineCheck.load(baseline, max_tolerated_rise, max_missing_rise)
    sizes = input_files(paths)
    total = sum(size for _, size in sizes)
    run = GradeRun()
    emitter: Emitter | None = None
    batching: Emitter | None = None
    # Without an emitter nothing exports and nothing logs: ``logging`` is not even imported.
    gathering: AbstractContextManager[SdkLogs | None] = nullcontext(None)
    if export_timeout is None and "OTEL_EXPORTER_OTLP_TIMEOUT" not in os.environ:
        export_timeout = DEFAULT_EXPORT_TIMEOUT_S
    if export == "otlp" or results_out is not None:
        # the OTel SDK, only now
        from otel_oracles.emit import BatchingEmitter, build_emitter, gathered_sdk_logs

        # The three signals are exported one after the other: each gets a third.
        per_signal = export_timeout / 3 if export_timeout is not None else None
        # The command owns the process's collector (``StartUpGc``): each export's records,
        # all freed when it returns, are built and shipped without collections.
        emitter = build_emitter(
            export, results_out, explain, timeout_s=per_signal, pause_collector=True
        )
        # One export request per batch of verdicts, not per trace; flushed at shutdown.
        batching = BatchingEmitter(emitter)
        # The SDK exporters log every retry; the one warning below says what was lost instead.
        gathering = gathered_sdk_logs()
    export_graded = batching.export if batching is not None else None
    # Verdicts are rendered as they are graded and not kept, so memory does not grow with
    # the input (docs/performance-history.md, G3). --workers spools them to disk and hands them over
    # in input order at the end.
    stream = ReportStream(
        as_json=as_json, junit=junit, html=html, verbose=verbose, explain=resolve_explain(explain)
    )

    add = stream.add

    def on_verdict(verdict: Verdict) -> None:
        add(verdict)
        if regression is not None:
            regression.add(verdict)

    if regression is None and export_graded is None:
        # The usual run (no baseline, no export): each verdict straight to the report, not
        # through ``on_verdict`` (a Python call a verdict; thousands a grade).

        def on_graded(graded: list[tuple[Verdict, Trajectory]]) -> None:
            for verdict, _ in graded:
                add(verdict)

    else:

        def on_graded(graded: list[tuple[Verdict, Trajectory]]) -> None:
            for verdict, _ in graded:
                on_verdict(verdict)
            if export_graded is not None:
                export_graded(graded)

    with gathering as sdk_logs:
        try:
            show_bar = not quiet and total >= PROGRESS_MIN_BYTES and sys.stderr.isatty()
            stopped: str | None = None
            if workers > 1:
                # Worker processes (multiprocessing, the parent-death lifeline) only now.
                from otel_oracles.parallel import ShareNotGraded, grade_paths_parallel

                try:
                    report = grade_paths_parallel(
                        paths,
                        spec,
                        workers=workers,
                        run=run,
                        on_graded=export_graded,
                        on_verdict=on_verdict,
                    )
                except ShareNotGraded as exc:
                    # A share's workers kept dying: what was delivered is reported, the
                    # stop is one line below it, and the run is not a pass (exit 1 at
                    # least, as for a trace whose worker died).
                    report, stopped = exc.report, str(exc)
            elif show_bar:
                with click.progressbar(
                    length=total, label="grading", file=sys.stderr, show_pos=False
                ) as bar:
                    report = grade_paths(
                        paths,
                        session,
                        progress=bar.update,
                        run=run,
                        on_graded=on_graded,
                        keep_verdicts=False,
                    )
            else:
                report = grade_paths(
                    paths,
                    session,
                    run=run,
                    on_graded=on_graded,
                    keep_verdicts=False,
                )
            code = stream.exit_code(report.input_errors, keep_going)
            empty = stream.tally.verdicts == 0 and stopped is None
            if empty and not allow_empty:
                code = EXIT_USAGE
            if stopped is not None:
                code = max(code, EXIT_FAILED)
            comparison = None
            if regression is not None:
                code, comparison = regression.judge(report.notes, code)
            stream.finish(report.input_errors, report.notes, code)
            report_input_problems(report.input_errors)
            report_regressions(comparison)
            if stopped is not None:
                click.echo(f"error: {', '.join(paths)}: {stopped}", err=True)
            if empty:
                reason = nothing_graded_reason(
                    run.traces, run.spans, run.unselected_seen, unreadable=len(report.input_errors)
                )
                nothing_graded(", ".join(paths), reason, allow_empty)
        finally:
            stream.close()
            if batching is not None:
                batching.shutdown()
        if emitter is not None and sdk_logs is not None:
            warning = emitter.delivery_warning(sdk_logs.summary())
            if warning:
                click.echo(f"warning: {warning}", err=True)
    sys.exit(code)
