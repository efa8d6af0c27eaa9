"""Offline grading on several processes: ``grade --workers N``.

Why processes, and why this split: grading is CPU-bound Python, so threads do not scale; and
subjects are independent once grouped, so the work splits by subject. Every worker builds
the same ``GradingSession`` from a ``SessionSpec`` and runs its loop over the whole input:
it reads, assembles and joins every span exactly as one process would (so when a trace is
complete, which spans are late and which traces form one run never depend on the number of
workers), then maps and grades only the subjects it owns (``shard_of`` the subject's trace
id). Reading and assembling everything is cheap next to what is split: decoding keeps
attributes lazy and assembly is a few µs per span, while mapping and grading cost two orders
of magnitude more. Only results cross process boundaries (verdicts, plus trajectories when
the caller emits them), streamed in small chunks: no span is pickled, and no coordinator
holds traces.

Counts: each worker counts the subjects it graded (they add up); the stream-wide ones
(input problems, late spans, joins), which every worker sees alike, come from worker 0 only.
Verdicts are put back in the order one process lists them (the order subjects complete),
so the report does not depend on the number of workers.
"""

from __future__ import annotations

import multiprocessing
import pickle
import tempfile
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from queue import Empty
from typing import Any

from otel_oracles.lifeline import die_with_parent
from otel_oracles.model.result import RunReport, Verdict
from otel_oracles.model.step import Trajectory
from otel_oracles.session import Graded, GradeRun, GradingSession, SessionSpec, Shard, shard_of

__all__ = ["grade_paths_parallel", "shard_of"]

_PICKLE = pickle.HIGHEST_PROTOCOL


@dataclass(frozen=True, slots=True)
class _ShardJob:
    paths: tuple[str, ...]
    spec: SessionSpec
    shard: Shard
    with_trajectories: bool
    pickled: bool = False
    """Send each subject's pairs as pickled bytes the parent can spool without loading."""


_CHUNK_TRACES = 32
"""Subjects per message from a worker: small enough to stream, large enough that queue
overhead stays far below grading cost."""

_Item = tuple[int, Graded | bytes]
"""(the subject's order, its graded pairs, pickled when the job says so)."""


def _grade_shard(job: _ShardJob, queue: Any) -> None:
    """One worker: run the session over everything, grade this shard's subjects, stream
    results.

    Sends ``("items", [...])`` chunks, then ``("done", counts)``; or ``("error", text)``.
    Trajectories travel only when ``job.with_trajectories`` (the caller emits them).
    """
    die_with_parent()
    try:
        counts = _run_shard(job, queue)
    except BaseException:  # noqa: BLE001  (any crash must reach the parent, not hang it)
        queue.put(("error", traceback.format_exc()))
        return
    queue.put(("done", job.shard.index, counts))


def _run_shard(job: _ShardJob, queue: Any) -> GradeRun:
    session = GradingSession.load(job.spec)
    counts = GradeRun()
    chunk: list[_Item] = []
    batches = session.limits.read(job.paths, counts.problems)
    for order, graded in session.run(batches, counts, shard=job.shard):
        if not job.with_trajectories:
            graded = [(v, _EMPTY_TRAJECTORY) for v, _ in graded]
        chunk.append((order, pickle.dumps(graded, _PICKLE) if job.pickled else graded))
        if len(chunk) >= _CHUNK_TRACES:
            queue.put(("items", chunk))
            chunk = []
    if chunk:
        queue.put(("items", chunk))
    return counts


_EMPTY_TRAJECTORY = Trajectory(steps=[])
"""Stands in for a trajectory nobody will read, so it is never pickled."""


def grade_paths_parallel(
    paths: Sequence[str],
    spec: SessionSpec,
    *,
    workers: int,
    run: GradeRun | None = None,
    on_graded: Callable[[Graded], object] | None = None,
    on_verdict: Callable[[Verdict], object] | None = None,
) -> RunReport:
    """``pipeline.grade_paths`` over ``workers`` processes; same verdicts in the same order,
    same notes.

    ``spec`` names files the caller already loaded successfully (``GradingSession.load``;
    workers load them again, and a file changed in between is the caller's race).
    ``paths`` must not contain ``-``: stdin cannot be read by several processes.
    ``on_graded`` is called in this process with each subject's (verdict, trajectory) pairs
    as workers deliver them (arrival order), so an emitter needs no change. A worker that
    crashes (a bug, never bad input) raises ``RuntimeError`` here with its traceback.

    With ``on_verdict`` the report's ``verdicts`` stay empty: once every worker is done,
    each verdict is handed to ``on_verdict`` in order instead. Until then they wait on disk
    (an anonymous temporary file) as the pickled bytes the workers sent, so this process's
    memory does not grow with the number of subjects (``grade`` streams its report this way).
    """
    if "-" in paths:
        raise ValueError("stdin ('-') cannot be graded with several workers")
    counts = run if run is not None else GradeRun()
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
                    spec,
                    Shard(k, workers),
                    on_graded is not None,
                    on_verdict is not None,
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
    """(order, offset, length) of each subject's pickled pairs in ``spool``."""
    pending = workers
    try:
        while pending:
            try:
                message = queue.get(timeout=1.0)
            except Empty:
                dead = [p for p in procs if p.exitcode not in (None, 0)]
                if dead:
                    raise RuntimeError(
                        f"grading worker {dead[0].name} died with exit code {dead[0].exitcode}"
                    ) from None
                continue
            kind = message[0]
            if kind == "items":
                for order, graded in message[1]:
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
                counts.add_shard(message[2], stream_wide=message[1] == 0)
            else:
                raise RuntimeError(f"grading worker failed:\n{message[1]}")
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
            spooled.sort(key=lambda entry: entry[0])
            for _, offset, length in spooled:
                spool.seek(offset)
                for verdict, _ in pickle.loads(spool.read(length)):
                    on_verdict(verdict)
    return RunReport(
        verdicts=[v for _, _, v in items], input_errors=list(counts.problems), notes=counts.notes()
    )


def _order(item: tuple[int, int, Verdict]) -> tuple[int, int]:
    return item[0], item[1]
