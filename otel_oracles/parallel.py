"""Offline grading on several processes: ``grade --workers N``.

Why processes, and why this split: grading is CPU-bound Python, so threads do not scale; and
traces are independent once grouped, so the work splits by trace id. Every worker reads the
whole input but keeps only the spans of its share of trace ids (a hash of the id, stable
across processes) before assembly, then maps and grades those traces exactly as
``pipeline.grade_paths`` does. Re-reading is cheap next to grading: decoding keeps
attributes lazy (a few µs per span), while mapping and grading cost two orders of magnitude
more. Only results cross process boundaries (verdicts, plus trajectories when the caller
emits them), streamed in small chunks: no span is pickled, and no coordinator holds traces.

Workers load the contracts and conventions from the same files the caller loaded (and
validated) them from, so the compiled convention rules never need pickling. On Linux the
workers are forked, inheriting the imported modules.

Verdicts come back in the order of each trace's first span in the input, whatever the
number of workers (the sequential path lists them in the order traces complete).
"""

from __future__ import annotations

import multiprocessing
import pickle
import tempfile
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from queue import Empty
from typing import Any

from otel_oracles.decode import DecodedBatch
from otel_oracles.lifeline import die_with_parent
from otel_oracles.model.result import InputProblem, RunReport, Verdict
from otel_oracles.model.step import Trajectory
from otel_oracles.pipeline import (
    DEFAULT_LIMITS,
    GradeRun,
    InputLimits,
    add_label,
    add_unclassified,
    count_labels,
    coverage_note,
    subject_notes,
)
from otel_oracles.sandbox import SANDBOXED, CommandPolicy

_PICKLE = pickle.HIGHEST_PROTOCOL
_SHARD_HEX_DIGITS = 8
"""Trace ids are random; their last 32 bits spread traces evenly over any worker count."""


def shard_of(trace_id: str, workers: int) -> int:
    """The worker that owns ``trace_id`` (records without a trace id go to worker 0)."""
    if not trace_id:
        return 0
    try:
        return int(trace_id[-_SHARD_HEX_DIGITS:], 16) % workers
    except ValueError:
        return 0


@dataclass(frozen=True, slots=True)
class _ShardJob:
    paths: tuple[str, ...]
    contract_files: tuple[Path, ...]
    convention_dirs: tuple[Path, ...]
    shard: int
    workers: int
    with_trajectories: bool
    pickled: bool = False
    """Send each trace's pairs as pickled bytes the parent can spool without loading."""
    commands: CommandPolicy = SANDBOXED
    """How checks that execute commands may run (the parent's choice, carried over)."""
    limits: InputLimits = DEFAULT_LIMITS
    """Decoder and assembler limits (the parent's flags, carried over)."""


_CHUNK_TRACES = 32
"""Traces per message from a worker: small enough to stream, large enough that queue
overhead stays far below grading cost."""


@dataclass(slots=True)
class _ShardStats:
    problems: list[InputProblem] = field(default_factory=list)
    traces: int = 0
    traces_unselected: int = 0
    spans: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    unselected_seen: dict[str, int] = field(default_factory=dict)
    traces_unclassified: int = 0
    unclassified: dict[str, int] = field(default_factory=dict)


Graded = list[tuple[Verdict, Trajectory]]
_Item = tuple[int, Graded | bytes]
"""(position of the trace's first span in the input, its graded pairs, pickled when the
job says so)."""


def _grade_shard(job: _ShardJob, queue: Any) -> None:
    """One worker: read everything, keep this shard's traces, grade them, stream results.

    Sends ``("items", [...])`` chunks, then ``("done", stats)``; or ``("error", text)``.
    Trajectories travel only when ``job.with_trajectories`` (the caller emits them).
    """
    die_with_parent()
    try:
        stats = _run_shard(job, queue)
    except BaseException:  # noqa: BLE001  (any crash must reach the parent, not hang it)
        queue.put(("error", traceback.format_exc()))
        return
    queue.put(("done", stats))


def _run_shard(job: _ShardJob, queue: Any) -> _ShardStats:
    from otel_oracles.mapping import load_conventions
    from otel_oracles.model.contract import load_contract
    from otel_oracles.pipeline import grade_trace, without_own_telemetry

    contracts = [load_contract(p) for p in job.contract_files]
    conventions = load_conventions(list(job.convention_dirs))
    stats = _ShardStats()
    first_seen: dict[str, int] = {}
    position = 0

    def mine() -> Iterator[DecodedBatch]:
        nonlocal position
        shard, workers = job.shard, job.workers
        for batch in without_own_telemetry(job.limits.read(job.paths, stats.problems)):
            kept = []
            for span in batch.spans:
                tid = span.trace_id
                if shard_of(tid, workers) == shard:
                    kept.append(span)
                    if tid not in first_seen:
                        first_seen[tid] = position
                position += 1
            batch.spans = kept
            batch.logs = [r for r in batch.logs if shard_of(r.trace_id, workers) == shard]
            yield batch

    chunk: list[_Item] = []
    for trace in job.limits.assemble(mine()):
        stats.traces += 1
        stats.spans += len(trace.spans)
        skips = sum(stats.skipped.values())
        graded = grade_trace(
            trace, contracts, conventions, commands=job.commands, skipped=stats.skipped
        )
        stats.traces_unclassified += add_unclassified(stats.unclassified, graded)
        if not graded:
            if sum(stats.skipped.values()) == skips:
                stats.traces_unselected += 1
                count_labels(stats.unselected_seen, trace)
            continue
        # A trace split by a late span has no first-seen entry left: it sorts as "now".
        order = first_seen.pop(trace.trace_id, position)
        if not job.with_trajectories:
            graded = [(v, _EMPTY_TRAJECTORY) for v, _ in graded]
        chunk.append((order, pickle.dumps(graded, _PICKLE) if job.pickled else graded))
        if len(chunk) >= _CHUNK_TRACES:
            queue.put(("items", chunk))
            chunk = []
    if chunk:
        queue.put(("items", chunk))
    return stats


_EMPTY_TRAJECTORY = Trajectory(steps=[])
"""Stands in for a trajectory nobody will read, so it is never pickled."""


def grade_paths_parallel(
    paths: Sequence[str],
    contract_files: Sequence[Path],
    convention_dirs: Sequence[Path],
    *,
    workers: int,
    run: GradeRun | None = None,
    on_graded: Callable[[Graded], object] | None = None,
    on_verdict: Callable[[Verdict], object] | None = None,
    commands: CommandPolicy = SANDBOXED,
    limits: InputLimits = DEFAULT_LIMITS,
) -> RunReport:
    """``pipeline.grade_paths`` over ``workers`` processes; same report, same notes.

    ``contract_files``/``convention_dirs`` must be the files the caller already loaded
    successfully (workers reload them; a file changed in between is the caller's race).
    ``paths`` must not contain ``-``: stdin cannot be read by several processes.
    ``on_graded`` is called in this process with each trace's (verdict, trajectory) pairs
    as workers deliver them (arrival order), so an emitter needs no change. Input problems
    found by every worker while reading are reported once. A worker that crashes (a bug,
    never bad input) raises ``RuntimeError`` here with its traceback.

    With ``on_verdict`` the report's ``verdicts`` stay empty: once every worker is done,
    each verdict is handed to ``on_verdict`` in the same order instead. Until then they
    wait on disk (an anonymous temporary file) as the pickled bytes the workers sent, so
    this process's memory does not grow with the number of traces (``grade`` streams its
    report this way).
    """
    if "-" in paths:
        raise ValueError("stdin ('-') cannot be graded with several workers")
    stats = run if run is not None else GradeRun()
    methods = multiprocessing.get_all_start_methods()
    context = (
        multiprocessing.get_context("fork")
        if "fork" in methods
        else multiprocessing.get_context("spawn")
    )
    queue = context.Queue()
    procs = [
        context.Process(
            target=_grade_shard,
            args=(
                _ShardJob(
                    tuple(paths),
                    tuple(contract_files),
                    tuple(convention_dirs),
                    k,
                    workers,
                    on_graded is not None,
                    on_verdict is not None,
                    commands,
                    limits,
                ),
                queue,
            ),
            name=f"otel-oracles-grade-{k}",
            daemon=True,
        )
        for k in range(workers)
    ]
    for proc in procs:
        proc.start()
    items: list[tuple[int, int, Verdict]] = []
    # Closed by the replay below, or in the finally when a worker failed.
    spool = tempfile.TemporaryFile() if on_verdict is not None else None  # noqa: SIM115
    spooled: list[tuple[int, int, int]] = []
    """(order, offset, length) of each trace's pickled pairs in ``spool``."""
    seen: set[tuple[str, str]] = set()
    pending = workers
    try:
        while pending:
            try:
                kind, payload = queue.get(timeout=1.0)
            except Empty:
                dead = [p for p in procs if p.exitcode not in (None, 0)]
                if dead:
                    raise RuntimeError(
                        f"grading worker {dead[0].name} died with exit code {dead[0].exitcode}"
                    ) from None
                continue
            if kind == "items":
                for order, graded in payload:
                    if isinstance(graded, bytes):
                        if spool is None:  # only jobs asked for pickled results send bytes
                            raise RuntimeError("grading worker sent unrequested bytes")
                        spooled.append((order, spool.tell(), len(graded)))
                        spool.write(graded)
                        if on_graded is not None:
                            on_graded(pickle.loads(graded))
                        continue
                    if on_graded is not None:
                        on_graded(graded)
                    items.extend((order, i, v) for i, (v, _) in enumerate(graded))
            elif kind == "done":
                pending -= 1
                shard: _ShardStats = payload
                stats.traces += shard.traces
                stats.traces_unselected += shard.traces_unselected
                for reason, n in shard.skipped.items():
                    stats.skipped[reason] = stats.skipped.get(reason, 0) + n
                for label, n in shard.unselected_seen.items():
                    add_label(stats.unselected_seen, label, n)
                stats.traces_unclassified += shard.traces_unclassified
                for name, n in shard.unclassified.items():
                    stats.unclassified[name] = stats.unclassified.get(name, 0) + n
                stats.spans += shard.spans
                for problem in shard.problems:
                    key = (problem.source, problem.message)
                    if key not in seen:
                        seen.add(key)
                        stats.problems.append(problem)
            else:
                raise RuntimeError(f"grading worker failed:\n{payload}")
    finally:
        for proc in procs:
            if proc.is_alive() and pending:
                proc.terminate()
            proc.join()
        if spool is not None and pending:
            spool.close()
    items.sort(key=_order)
    if spool is not None and on_verdict is not None:
        with spool:
            spooled.sort(key=lambda entry: entry[0])  # stable: ties keep arrival order
            for _, offset, length in spooled:
                spool.seek(offset)
                for verdict, _ in pickle.loads(spool.read(length)):
                    on_verdict(verdict)
    notes = [f"{stats.traces} trace(s), {stats.spans} span(s) read"]
    if stats.traces_unselected:
        notes.append(f"{stats.traces_unselected} trace(s) matched no contract's selector")
    notes.extend(subject_notes(stats.skipped))
    if (coverage := coverage_note(stats.traces_unclassified, stats.unclassified)) is not None:
        notes.append(coverage)
    return RunReport(
        verdicts=[v for _, _, v in items], input_errors=list(stats.problems), notes=notes
    )


def _order(item: tuple[int, int, Verdict]) -> tuple[int, int]:
    return item[0], item[1]
