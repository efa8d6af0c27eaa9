"""Grading files: the offline front of a ``GradingSession`` (paths, progress, the report).

``grade_paths`` is the offline ``grade`` command's whole run over files with one process
(``parallel.grade_paths_parallel`` is the same over several); ``read_traces`` is what
``inspect`` and tests read subjects with; ``grade_trace`` grades one assembled trace without
holding a session. None of them prints or exits: they return verdicts and a ``RunReport``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from otel_oracles.assemble import AssemblyStats
from otel_oracles.decode import DecodedBatch
from otel_oracles.mapping import ConventionSet
from otel_oracles.model.contract import Contract
from otel_oracles.model.result import InputProblem, RunReport, Verdict
from otel_oracles.model.span import Trace
from otel_oracles.model.step import Trajectory
from otel_oracles.sandbox import SANDBOXED, CommandPolicy
from otel_oracles.session import (
    DEFAULT_LIMITS,
    NOT_AGENT_RUN,
    Graded,
    GradeRun,
    GradingSession,
    InputLimits,
    count_labels,
    holds_agent_run,
    subject_notes,
    traces_from_batches,
    without_own_telemetry,
)

# Also the session's names that callers of this module have long imported from here.
__all__ = [
    "DEFAULT_LIMITS",
    "NOT_AGENT_RUN",
    "PROGRESS_INTERVAL_S",
    "GradeRun",
    "InputLimits",
    "ProgressCallback",
    "count_labels",
    "grade_paths",
    "grade_trace",
    "holds_agent_run",
    "input_files",
    "nothing_graded_reason",
    "read_traces",
    "subject_notes",
    "traces_from_batches",
    "without_own_telemetry",
]

ProgressCallback = Callable[[int], None]
"""Called with the number of input bytes just finished (per file)."""


def grade_trace(
    trace: Trace,
    contracts: Sequence[Contract],
    conventions: ConventionSet,
    *,
    commands: CommandPolicy = SANDBOXED,
    skipped: dict[str, int] | None = None,
) -> Graded:
    """``GradingSession.grade`` for one trace, for callers that grade a trace or two (tests,
    the pytest fixture): it compiles the contracts' selectors on every call, so anything
    that grades many traces holds a ``GradingSession`` instead."""
    return GradingSession(contracts, conventions, commands=commands).grade(trace, skipped)


def grade_paths(
    paths: Sequence[str],
    session: GradingSession,
    *,
    progress: ProgressCallback | None = None,
    run: GradeRun | None = None,
    on_graded: Callable[[list[tuple[Verdict, Trajectory]]], object] | None = None,
    keep_verdicts: bool = True,
) -> RunReport:
    """Grade every subject found in ``paths`` with ``session`` (its contracts, conventions,
    command policy and input limits), in one process.

    ``on_graded`` receives each subject's (verdict, trajectory) pairs as they are graded
    (e.g. an emitter's ``export``), so trajectories need not be kept for the whole run.
    With ``keep_verdicts=False`` the report's ``verdicts`` stay empty: the caller streams
    them from ``on_graded`` (``grade`` does, so its memory does not grow with the input).

    Unreadable inputs never stop the run: each becomes an ``InputProblem`` in
    ``report.input_errors`` (the CLI turns any into exit code 2 unless ``--keep-going``).
    """
    counts = run if run is not None else GradeRun()
    limits = session.limits
    batches = (
        limits.read(paths, counts.problems)
        if progress is None
        else _with_progress(paths, counts.problems, progress, limits)
    )
    verdicts: list[Verdict] = []
    for subject in session.run(batches, counts):
        if on_graded is not None:
            on_graded(subject.graded)
        if keep_verdicts:
            verdicts.extend(v for v, _ in subject.graded)
    return RunReport(verdicts=verdicts, input_errors=list(counts.problems), notes=counts.notes())


def read_traces(
    paths: Sequence[str],
    problems: list[InputProblem],
    progress: ProgressCallback | None = None,
    stats: AssemblyStats | None = None,
    limits: InputLimits = DEFAULT_LIMITS,
) -> Iterator[Trace]:
    """Decode and assemble every trace in ``paths`` (files, directories, globs, ``-``).

    Streaming: a trace is yielded once the assembler judges it complete (see
    ``assemble_offline``), so memory follows the traces in flight, not the input size; what
    the assembler did (late or evicted spans) accrues in ``stats``. ``progress`` is called
    with input bytes read since its last call: within a file where the OS tells the read
    position (Linux ``/proc``), else once per file. Traces of one run (span links, a
    shared conversation/session id) come out joined into one (``join_sessions``; traces
    wait in its window of ``DEFAULT_WINDOW_SPANS`` spans for that).
    """
    batches = (
        limits.read(paths, problems)
        if progress is None
        else _with_progress(paths, problems, progress, limits)
    )
    yield from traces_from_batches(batches, stats, limits)


def nothing_graded_reason(
    traces: int, spans: int, seen: dict[str, int], *, unreadable: int = 0
) -> str:
    """Why a run produced no verdict, in words a user can act on."""
    if spans == 0 and unreadable:
        return f"no spans were read: {unreadable} input(s) unreadable (see the errors above)"
    if spans == 0:
        return (
            "no spans were read: the input holds no trace data (empty file, empty "
            "resourceSpans, or only logs/metrics)"
        )
    shown = ", ".join(f"{label} ({n})" for label, n in sorted(seen.items())) or "no names"
    return (
        f"{traces} trace(s) with {spans} span(s) were read, but no contract's match "
        f"selected any of them; seen: {shown}"
    )


def input_files(paths: Sequence[str]) -> list[tuple[str, int]]:
    """(path, size in bytes) for progress reporting; directories are walked like the
    decoder walks them, ``-`` and unreadable paths count 0 (the decoder reports them)."""
    out: list[tuple[str, int]] = []
    for arg in paths:
        p = Path(arg)
        if p.is_dir():
            for dirpath, dirnames, filenames in os.walk(p):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                for name in sorted(filenames):
                    if not name.startswith("."):
                        f = Path(dirpath) / name
                        out.append((str(f), _size(f)))
        elif p.is_file():
            out.append((arg, _size(p)))
        else:
            out.append((arg, 0))
    return out


def _size(path: Path) -> int:
    """``path``'s size, 0 when it cannot be looked at (a broken link, a file removed since
    the walk): the reader reports it, progress must not end the run in a traceback."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


PROGRESS_INTERVAL_S = 0.25
"""How often the read position is sampled for the progress callback."""


def _with_progress(
    paths: Sequence[str],
    problems: list[InputProblem],
    progress: ProgressCallback,
    limits: InputLimits = DEFAULT_LIMITS,
) -> Iterator[DecodedBatch]:
    reported = 0
    for arg in paths:
        files = input_files([arg])
        starts: dict[str, int] = {}
        offset = reported
        for name, size in files:
            starts[name] = offset
            offset += size
        last = time.monotonic()
        for batch in limits.read([arg], problems):
            yield batch
            now = time.monotonic()
            if now - last < PROGRESS_INTERVAL_S:
                continue
            last = now
            current = next((n for n in starts if batch.source.startswith(n)), None)
            position = _read_position(current) if current is not None else None
            if current is not None and position is not None:
                done = starts[current] + position
                if done > reported:
                    progress(done - reported)
                    reported = done
        if offset > reported:
            progress(offset - reported)
            reported = offset


def _read_position(path: str) -> int | None:
    """Where this process is reading ``path``, from Linux's ``/proc/self/fdinfo`` (the
    decoder opens the file itself); ``None`` elsewhere or when it is not open."""
    fd_dir = Path("/proc/self/fd")
    try:
        target = os.path.realpath(path)
        for fd in os.listdir(fd_dir):
            try:
                if os.readlink(fd_dir / fd) != target:
                    continue
                for line in (Path("/proc/self/fdinfo") / fd).read_text().splitlines():
                    if line.startswith("pos:"):
                        return int(line.split()[1])
            except OSError:
                continue
    except OSError:
        return None
    return None
