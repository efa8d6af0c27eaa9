"""The grading worker pool: complete traces in, verdicts exported, never on the receive path.

Threads, not processes: a trace's spans are already decoded Python objects in this process
(moving them to another process would cost a pickle round trip per span), and the slow
oracle, ``test_must_pass``, spends its time waiting on a subprocess with the GIL released.
The pool is bounded: ``free_slots`` tells the sweeper how many traces it may hand over, so
complete traces wait in the (bounded, backpressured) assembly buffer instead of in an
unbounded queue.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from otel_oracles.assemble.online import ReadyTrace
from otel_oracles.session import NotGraded

logger = logging.getLogger(__name__)


class GradingPool:
    """Runs ``grade_one(ready)`` on worker threads; ``grade_one`` must not raise (it is
    wrapped anyway: a crash, even a ``BaseException`` such as a plug-in's ``SystemExit``, is
    logged and handed to ``on_crash``, so the thread and the trace's slot survive it).

    With a ``trace_timeout``, a watchdog gives up on a trace that has been grading longer:
    ``on_timeout(ready, seconds)`` reports it (an ``error`` verdict), its slot is free again
    and a fresh thread takes the stuck one's place, so one hostile trace never holds back
    the others. Python cannot stop a thread, so the stuck one runs on until its trace is
    done and then exits (its result is dropped: ``abandoned(ready)`` tells the caller).
    At most ``workers`` stuck threads are replaced; beyond that ``on_stuck_limit`` runs (a
    worker process exits there, and its parent starts a fresh one).
    """

    def __init__(
        self,
        workers: int,
        queue_size: int,
        grade_one: Callable[[ReadyTrace], None],
        on_crash: Callable[[ReadyTrace, BaseException], None],
        trace_timeout: float | None = None,
        on_timeout: Callable[[ReadyTrace, float], None] | None = None,
        on_stuck_limit: Callable[[], None] | None = None,
    ) -> None:
        self.workers = workers
        self.capacity = workers + queue_size
        self._grade_one = grade_one
        self._on_crash = on_crash
        self._trace_timeout = trace_timeout or None
        self._on_timeout = on_timeout
        self._on_stuck_limit = on_stuck_limit
        self._lock = threading.Lock()
        self._inflight = 0
        self._idle = threading.Condition(self._lock)
        self._queue: queue.SimpleQueue[ReadyTrace | None] = queue.SimpleQueue()
        self._running: dict[int, _Running] = {}
        """Thread id -> what that thread is grading."""
        self._abandoned: set[int] = set()
        """``id()`` of the traces given up on (their threads still run)."""
        self.stuck = 0
        """Threads still busy with a trace given up on."""
        self._started = False
        self._stopping = threading.Event()

    def start(self) -> None:
        if self._started:
            return
        self._started = True
        for _ in range(self.workers):
            self._spawn()
        if self._trace_timeout is not None:
            threading.Thread(target=self._watch, name="oo-grade-watchdog", daemon=True).start()

    def _spawn(self) -> None:
        threading.Thread(target=self._work, name="oo-grade", daemon=True).start()

    @property
    def inflight(self) -> int:
        return self._inflight

    def free_slots(self) -> int:
        return max(self.capacity - self._inflight, 0)

    def submit(self, ready: ReadyTrace) -> None:
        """Queue one trace; never blocks (callers respect ``free_slots``; at shutdown they
        may exceed it, which is bounded by the assembly buffer)."""
        if not self._started or self._stopping.is_set():
            raise RuntimeError("grading pool not started")
        with self._lock:
            self._inflight += 1
        self._queue.put(ready)

    def abandoned(self, ready: ReadyTrace) -> bool:
        """Whether the watchdog gave up on ``ready`` (its result must not be used)."""
        with self._lock:
            return id(ready) in self._abandoned

    def _work(self) -> None:
        me = threading.get_ident()
        while not self._stopping.is_set():
            ready = self._queue.get()
            if ready is None:
                return
            with self._lock:
                self._running[me] = _Running(ready, time.monotonic())
            try:
                self._grade_one(ready)
            except BaseException as exc:  # a dead thread would leak the trace and its slot
                logger.exception("grading trace %s crashed; reported as error", ready.trace_id)
                self._on_crash(ready, exc)
            with self._lock:
                del self._running[me]
                if id(ready) in self._abandoned:
                    # Given up on: the slot was freed then, and a fresh thread has taken
                    # this one's place.
                    self._abandoned.discard(id(ready))
                    self.stuck -= 1
                    return
                self._inflight -= 1
                if self._inflight == 0:
                    self._idle.notify_all()

    def _watch(self) -> None:
        timeout = self._trace_timeout
        assert timeout is not None
        while not self._stopping.wait(min(timeout / 4, 0.5)):
            now = time.monotonic()
            overdue: list[tuple[ReadyTrace, float]] = []
            with self._lock:
                for running in self._running.values():
                    key = id(running.ready)
                    if now - running.started >= timeout and key not in self._abandoned:
                        self._abandoned.add(key)
                        self.stuck += 1
                        self._inflight -= 1
                        overdue.append((running.ready, now - running.started))
                if overdue and self._inflight == 0:
                    self._idle.notify_all()
                over_limit = self.stuck > self.workers
            for ready, seconds in overdue:
                logger.error(
                    "grading a trace exceeded grading.trace_timeout; reported as error",
                    extra={"trace_id": ready.trace_id, "seconds": round(seconds, 1)},
                )
                if not over_limit:
                    self._spawn()
                if self._on_timeout is not None:
                    self._on_timeout(ready, timeout)
                else:
                    self._on_crash(ready, TimeoutError(f"grading took over {timeout:g} s"))
            if over_limit and self._on_stuck_limit is not None:
                self._on_stuck_limit()

    def wait_idle(self, timeout: float) -> bool:
        """Block until nothing is queued or running; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._inflight:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def shutdown(self) -> None:
        """Stop the threads after the trace each is on (call ``wait_idle`` first to bound
        it); what is still queued is abandoned."""
        if not self._started:
            return
        self._stopping.set()
        for _ in range(self.workers + self.stuck):
            self._queue.put(None)


@dataclass(frozen=True, slots=True)
class _Running:
    ready: ReadyTrace
    started: float


class ResultExporter:
    """One thread that hands graded results to the emitter in batches.

    Why: an OTLP emitter exports synchronously (nothing waits in a queue that could drop
    it), so one export per trace would make every grading worker wait a network round trip
    per trace. Batching whatever has accumulated (up to ``max_batch`` traces) into one
    ``export`` call keeps the round trips per second constant under load.
    ``on_exported(items)`` runs after each batch (stats, latency). ``backlog`` counts items
    not yet exported, so the sweeper can stop releasing traces while exports lag.

    ``put`` blocks while ``max_backlog`` results wait: emitting costs about a third of a
    trace's CPU, and with every grading thread runnable this one thread would get only its
    1/(workers+1) share of the GIL, so results piled up here and the completion->verdict
    latency grew with the pile (measured: median 0.2-1.5 s spent waiting to be exported at
    half load). A grading thread blocked in ``put`` releases the GIL to the exporter.
    """

    def __init__(
        self,
        export: Callable[[list[Any]], object],
        on_exported: Callable[[list[tuple[ReadyTrace, list[Any]]]], None],
        max_batch: int = 256,
        max_backlog: int = 16,
    ) -> None:
        self._export = export
        self._on_exported = on_exported
        self._max_batch = max_batch
        self._max_backlog = max_backlog
        self._items: deque[tuple[ReadyTrace, list[Any]]] = deque()
        self._cond = threading.Condition()
        self._busy = 0
        self._stop = False
        self._thread: threading.Thread | None = None

    @property
    def backlog(self) -> int:
        return len(self._items) + self._busy

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="oo-export", daemon=True)
            self._thread.start()

    def put(self, ready: ReadyTrace, results: list[Any]) -> None:
        with self._cond:
            # Bounded wait (and none once stopping or if the thread died): blocking is flow
            # control, never a way to lose or hang a result.
            while (
                len(self._items) >= self._max_backlog
                and not self._stop
                and self._thread is not None
                and self._thread.is_alive()
            ):
                self._cond.wait(0.5)
            self._items.append((ready, results))
            self._cond.notify_all()

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._items and not self._stop:
                    self._cond.wait()
                if not self._items:
                    return
                n = min(len(self._items), self._max_batch)
                batch = [self._items.popleft() for _ in range(n)]
                self._busy = n
            pairs = [pair for _, results in batch for pair in results]
            try:
                if pairs:
                    self._export(pairs)
            except Exception:
                logger.exception("exporting %d results failed", len(pairs))
            try:
                self._on_exported(batch)
            finally:
                with self._cond:
                    self._busy = 0
                    self._cond.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._items or self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def stop(self) -> None:
        """Export what is queued, then end the thread (call ``wait_idle`` first to bound it)."""
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None


class VerdictLine(NamedTuple):
    """One verdict as the receiving process counts and logs it (plain, picklable: it crosses
    from grading worker processes): ``contract`` is ``id@version``."""

    contract: str
    verdict: str
    invariant_failures: int = 0
    tolerated_failures: int = 0
    budget_exhausted: int = 0
    missing_evidence: int = 0


def verdict_line(verdict: Any) -> VerdictLine:
    """The ``VerdictLine`` of a ``Verdict`` (anything else counts as ``unknown``)."""
    counts = getattr(verdict, "counts", None)
    if counts is None:
        return VerdictLine("?", str(getattr(verdict, "verdict", "unknown")))
    return VerdictLine(
        f"{verdict.contract_id}@{verdict.contract_version}",
        verdict.verdict,
        counts.invariant_failures,
        counts.tolerated_failures,
        counts.budget_exhausted,
        counts.missing_evidence,
    )


GradeReady = Callable[[ReadyTrace], list[Any]]
"""ReadyTrace -> [(Verdict, Trajectory)]: build the trace, grade it against every contract."""
OnGraded = Callable[[list[tuple[ReadyTrace, list[VerdictLine]]]], None]
"""Called after each export batch with its traces and their verdicts."""


class ThreadGrading:
    """Grading on threads of the receiving process: a ``GradingPool`` whose workers hand
    results to one ``ResultExporter``.

    The choice for ``grading.processes: 0``: no process start-up, and any ``Emitter`` works
    (tests use an in-memory one), but grading shares the receiving process's GIL, so it
    uses about one core whatever the machine has (see ``ProcessGrading``).
    """

    def __init__(
        self,
        workers: int,
        queue_size: int,
        grade: GradeReady,
        export: Callable[[list[Any]], object],
        on_graded: OnGraded,
        on_crash: Callable[[ReadyTrace, bool], None],
        max_backlog: int = 16,
        trace_timeout: float | None = None,
        on_stuck_limit: Callable[[], None] | None = None,
    ) -> None:
        self.processes = 0
        self.restarts = 0
        self._grade = grade
        self._on_graded = on_graded
        # A grader that can say what a trace it ran out of time on gets (error verdicts:
        # ``_grader.ReadyGrader.timed_out``); otherwise such a trace is a grading error.
        self._timed_out: Callable[[ReadyTrace, float], list[Any]] | None = getattr(
            grade, "timed_out", None
        )
        # Likewise for a trace whose grading raised (``ReadyGrader.not_graded``).
        self._not_graded: Callable[[ReadyTrace, NotGraded], list[Any]] | None = getattr(
            grade, "not_graded", None
        )
        self._on_crash = on_crash
        self.pool = GradingPool(
            workers,
            queue_size,
            self._grade_one,
            self._crashed,
            trace_timeout=trace_timeout,
            on_timeout=self._give_up if self._timed_out is not None else None,
            on_stuck_limit=on_stuck_limit,
        )
        self.exporter = ResultExporter(export, self._exported, max_backlog=max_backlog)

    def start(self) -> None:
        self.pool.start()
        self.exporter.start()

    @property
    def inflight(self) -> int:
        return self.pool.inflight + self.exporter.backlog

    def free_slots(self) -> int:
        # Exports lagging behind count against the pool, so a slow destination pushes back
        # (through the assembly buffer) instead of growing a queue.
        return max(self.pool.free_slots() - self.exporter.backlog, 0)

    def submit(self, traces: list[ReadyTrace]) -> None:
        for ready in traces:
            self.pool.submit(ready)

    def tick(self) -> None:
        """Nothing to do periodically: the emitter records metrics as it exports."""

    def _grade_one(self, ready: ReadyTrace) -> None:
        results = self._grade(ready)
        if not self.pool.abandoned(ready):  # else its error verdicts went out already
            self.exporter.put(ready, results)

    def _crashed(self, ready: ReadyTrace, exc: BaseException) -> None:
        if self.pool.abandoned(ready):
            return  # given up on before it crashed: its timeout verdicts went out then
        self.report_failure(ready, NotGraded.crashed(exc))

    def report_failure(self, ready: ReadyTrace, failure: NotGraded) -> None:
        """A trace that could not be graded (it raised, or the worker process holding it
        died) still ends in verdicts: ``error`` from every contract that selects it, exported
        like any result. ``on_crash(ready, True)`` counts it first. Only when not even those
        can be made (the grader has no ``not_graded``, or it raised too) is the trace just
        counted and logged: ``on_crash(ready, False)``."""
        results: list[Any] | None = None
        if self._not_graded is not None:
            try:
                results = self._not_graded(ready, failure)
            except Exception:
                logger.exception("no error verdicts for trace %s either", ready.trace_id)
        self._on_crash(ready, results is not None)
        if results is not None:
            self.exporter.put(ready, results)

    def _give_up(self, ready: ReadyTrace, seconds: float) -> None:
        assert self._timed_out is not None
        self.exporter.put(ready, self._timed_out(ready, seconds))

    def _exported(self, batch: list[tuple[ReadyTrace, list[Any]]]) -> None:
        self._on_graded(
            [(ready, [verdict_line(v) for v, *_ in results]) for ready, results in batch]
        )

    def wait_idle(self, timeout: float) -> bool:
        """Every submitted trace graded and its results exported; False on timeout."""
        deadline = time.monotonic() + timeout
        if not self.pool.wait_idle(timeout):
            return False
        return self.exporter.wait_idle(max(deadline - time.monotonic(), 0.0))

    def stop(self, timeout: float) -> None:
        """Stop the threads (after ``wait_idle``; what is still queued is abandoned)."""
        self.pool.shutdown()
        self.exporter.stop()
