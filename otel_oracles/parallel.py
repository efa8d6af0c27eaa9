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

A worker that dies (SIGKILL, the OOM killer, a crash in native code) does not end the run
and loses no trace. Each worker has its own pipe (a worker killed mid-message truncates only
its own stream, where a shared queue's lock would stay held) and a shared cell saying which
subject it is grading. Each delivery carries the worker's counts so far and the order of the
last subject it covers, so the parent always knows what was delivered. When the pipe ends
without ``done``, a fresh worker takes over the same shard from there (``Resume``): it reads
and groups the whole input again, as every worker does, grades what was not delivered, and
gives the subject that was in hand ``worker_died`` verdicts instead of grading it again
(grading it may be what killed the worker; the same verdicts ``serve`` gives). When two
workers of one shard in a row die having neither delivered nor started grading anything,
the run stops there rather than start the same death again (``ShareNotGraded``, which
carries what was delivered, so the caller reports it with a one-line error).
"""

from __future__ import annotations

import pickle
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from multiprocessing import get_all_start_methods, get_context
from multiprocessing.connection import Connection, wait
from multiprocessing.context import BaseContext
from tempfile import TemporaryFile
from typing import IO, Any

from otel_oracles.lifeline import die_with_parent
from otel_oracles.model.result import RunReport, Verdict
from otel_oracles.model.step import Trajectory
from otel_oracles.session import (
    FROM_START,
    Graded,
    GradeRun,
    GradingSession,
    NotGraded,
    Resume,
    SessionSpec,
    Shard,
    how_it_ended,
    shard_of,
)

__all__ = ["ShareNotGraded", "grade_paths_parallel", "shard_of"]

_PICKLE = pickle.HIGHEST_PROTOCOL


@dataclass(frozen=True, slots=True)
class _ShardJob:
    paths: tuple[str, ...]
    spec: SessionSpec
    shard: Shard
    with_trajectories: bool
    pickled: bool = False
    """Send each subject's pairs as pickled bytes the parent can spool without loading."""
    resume: Resume = FROM_START
    """Where a worker that died stopped (a fresh worker's job)."""
    counts: GradeRun | None = None
    """The per-subject counts delivered before ``resume.after``."""
    fruitless: int = 0
    """How many of this shard's workers in a row died without progress."""


_CHUNK_TRACES = 32
"""Subjects per message from a worker: small enough to stream, large enough that pipe
overhead stays far below grading cost."""

_Item = tuple[int, Graded | bytes]
"""(the subject's order, its graded pairs, pickled when the job says so)."""


def _grade_shard(job: _ShardJob, conn: Connection, in_hand: Any) -> None:
    """One worker: run the session over everything, grade this shard's subjects, stream
    results.

    Sends ``("items", last order, counts so far, [...])`` chunks, then ``("done", counts)``;
    or ``("error", text)``. ``in_hand.value`` is the order of the subject being graded, -1
    between subjects. Trajectories travel only when ``job.with_trajectories``.
    """
    die_with_parent()
    try:
        counts = _run_shard(job, conn, in_hand)
    except BaseException:  # noqa: BLE001  (any crash must reach the parent, not hang it)
        conn.send(("error", traceback.format_exc()))
        return
    conn.send(("done", counts))


def _run_shard(job: _ShardJob, conn: Connection, in_hand: Any) -> GradeRun:
    session = GradingSession.load(job.spec)
    counts = job.counts.subject_part() if job.counts is not None else GradeRun()
    chunk: list[_Item] = []
    batches = session.limits.read(job.paths, counts.problems)

    def hold(order: int) -> None:
        in_hand.value = order

    subjects = session.run(batches, counts, shard=job.shard, resume=job.resume, in_hand=hold)
    for order, graded in subjects:
        if not job.with_trajectories:
            graded = [(v, _EMPTY_TRAJECTORY) for v, _ in graded]
        chunk.append((order, pickle.dumps(graded, _PICKLE) if job.pickled else graded))
        if len(chunk) >= _CHUNK_TRACES:
            conn.send(("items", order, counts.subject_part(), chunk))
            chunk = []
    if chunk:
        conn.send(("items", chunk[-1][0], counts.subject_part(), chunk))
    return counts


_EMPTY_TRAJECTORY = Trajectory(steps=[])
"""Stands in for a trajectory nobody will read, so it is never pickled."""


@dataclass(slots=True)
class _Worker:
    """A worker process as the parent follows it."""

    job: _ShardJob
    process: Any
    conn: Connection
    in_hand: Any
    """Shared cell: the order of the subject being graded, -1 between subjects."""
    delivered: int
    """Order of the last subject covered by what the worker delivered."""
    counts: GradeRun | None
    """The per-subject counts that came with that delivery."""


def _start(context: BaseContext, job: _ShardJob) -> _Worker:
    reader, writer = context.Pipe(duplex=False)
    in_hand = context.RawValue("q", -1)
    process = context.Process(  # type: ignore[attr-defined]
        target=_grade_shard,
        args=(job, writer, in_hand),
        name=f"otel-oracles-grade-{job.shard.index}",
        daemon=True,
    )
    process.start()
    # Only the worker holds the writing end now: its death ends the pipe (EOF), and a
    # worker forked later does not inherit it.
    writer.close()
    return _Worker(job, process, reader, in_hand, job.resume.after, job.counts)


_FRUITLESS_DEATHS = 2
"""Workers of one shard that may die in a row without progress (nothing graded or
delivered: killed while reading, say) before the run stops: once may be the OOM killer
choosing a victim, twice is the same death again."""


class ShareNotGraded(RuntimeError):
    """The run stopped because one shard's workers kept dying before they graded or
    delivered anything: that share of the subjects was not graded. ``report`` holds what the
    other workers (and this shard's, before) delivered, in order (handed to ``on_verdict``
    first when the caller streams), so a caller reports them with the error instead of
    losing them; the message is one line naming the worker and its share."""

    def __init__(self, message: str, report: RunReport) -> None:
        super().__init__(message)
        self.report = report


class _Fruitless(Exception):
    """A shard's workers died ``_FRUITLESS_DEATHS`` times in a row without progress."""


def _resumed(worker: _Worker) -> tuple[_ShardJob, str]:
    """The job that takes over a dead worker's shard, and the run's note about it; raises
    ``_Fruitless`` when the shard's workers keep dying without progress."""
    worker.process.join()
    exitcode = worker.process.exitcode
    in_hand = int(worker.in_hand.value)
    job = worker.job
    progress = in_hand >= 0 or worker.delivered > job.resume.after
    fruitless = 0 if progress else job.fruitless + 1
    if fruitless >= _FRUITLESS_DEATHS:
        shard = job.shard
        raise _Fruitless(
            f"grading worker {shard.index} died ({how_it_ended(exitcode)}), {fruitless} times "
            f"in a row before it graded or delivered anything: its share ({shard.index + 1} of "
            f"{shard.count}) of the traces was not graded and the run stopped"
        )
    lost = {order: why for order, why in job.resume.lost.items() if order > worker.delivered}
    if in_hand >= 0:
        lost[in_hand] = NotGraded.worker_died(exitcode)
    resumed = replace(
        job, resume=Resume(worker.delivered, lost), counts=worker.counts, fruitless=fruitless
    )
    held = (
        "1 trace in hand: reported as error (worker_died)" if in_hand >= 0 else "no trace in hand"
    )
    note = (
        f"grading worker {job.shard.index} died ({how_it_ended(exitcode)}) with {held}; "
        "a fresh worker graded the rest of its share"
    )
    return resumed, note


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
    dies mid-run is replaced (see the module docstring): the subject it was grading gets
    ``worker_died`` verdicts and a note says so. A shard whose workers die twice in a row
    before any progress stops the run: ``ShareNotGraded``, carrying the report of what was
    delivered. A worker that raises outside grading (a bug, never bad input) raises
    ``RuntimeError`` here.

    With ``on_verdict`` the report's ``verdicts`` stay empty: once every worker is done,
    each verdict is handed to ``on_verdict`` in order instead. Until then they wait on disk
    (an anonymous temporary file) as the pickled bytes the workers sent, so this process's
    memory does not grow with the number of subjects (``grade`` streams its report this way).
    """
    if "-" in paths:
        raise ValueError("stdin ('-') cannot be graded with several workers")
    counts = run if run is not None else GradeRun()
    context = get_context("fork" if "fork" in get_all_start_methods() else "spawn")
    jobs = [
        _ShardJob(
            tuple(paths), spec, Shard(k, workers), on_graded is not None, on_verdict is not None
        )
        for k in range(workers)
    ]
    live: dict[Connection, _Worker] = {}
    items: list[tuple[int, int, Verdict]] = []
    # Closed by the replay below, or in the finally when a worker failed.
    spool = TemporaryFile() if on_verdict is not None else None  # noqa: SIM115
    spooled: list[tuple[int, int, int]] = []
    """(order, offset, length) of each subject's pickled pairs in ``spool``."""
    deaths: list[str] = []
    stopped: str | None = None
    finished = False
    try:
        for job in jobs:
            worker = _start(context, job)
            live[worker.conn] = worker
        while live and stopped is None:
            for conn in wait(list(live)):
                assert isinstance(conn, Connection)
                worker = live[conn]
                try:
                    message = conn.recv()
                except (EOFError, OSError):  # died (a message cut short ends it too)
                    del live[conn]
                    conn.close()
                    try:
                        job, note = _resumed(worker)
                    except _Fruitless as exc:
                        stopped = str(exc)  # the other workers are stopped below
                        # Its earlier death's note said a fresh worker graded the rest.
                        name = f"grading worker {worker.job.shard.index} "
                        deaths = [note for note in deaths if not note.startswith(name)]
                        break
                    deaths.append(note)
                    replacement = _start(context, job)
                    live[replacement.conn] = replacement
                    continue
                kind = message[0]
                if kind == "items":
                    worker.delivered, worker.counts = message[1], message[2]
                    _take(message[3], items, spool, spooled, on_graded)
                elif kind == "done":
                    del live[conn]
                    conn.close()
                    counts.add_shard(message[1], stream_wide=worker.job.shard.index == 0)
                    worker.process.join()
                else:
                    raise RuntimeError(f"grading worker failed:\n{message[1]}")
        finished = True
    finally:
        for worker in live.values():
            if worker.process.is_alive():
                worker.process.terminate()
            worker.process.join()
            worker.conn.close()
        if spool is not None and not finished:
            spool.close()
    items.sort(key=_order)
    if spool is not None and on_verdict is not None:
        with spool:
            spooled.sort(key=lambda entry: entry[0])
            for _, offset, length in spooled:
                spool.seek(offset)
                for verdict, _ in pickle.loads(spool.read(length)):
                    on_verdict(verdict)
    report = RunReport(
        verdicts=[v for _, _, v in items],
        input_errors=list(counts.problems),
        notes=counts.notes() + deaths,
    )
    if stopped is not None:
        raise ShareNotGraded(stopped, report)
    return report


def _take(
    chunk: list[_Item],
    items: list[tuple[int, int, Verdict]],
    spool: IO[bytes] | None,
    spooled: list[tuple[int, int, int]],
    on_graded: Callable[[Graded], object] | None,
) -> None:
    """Keep one delivered chunk: pickled pairs go to ``spool``, others to ``items``."""
    for order, graded in chunk:
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


def _order(item: tuple[int, int, Verdict]) -> tuple[int, int]:
    return item[0], item[1]
