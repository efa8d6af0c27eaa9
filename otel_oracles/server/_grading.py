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
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from otel_oracles.assemble.online import ReadyTrace

logger = logging.getLogger(__name__)


class GradingPool:
    """Runs ``grade_one(ready)`` on worker threads; ``grade_one`` must not raise (it is
    wrapped anyway: a crash is logged and counted through ``on_crash``)."""

    def __init__(
        self,
        workers: int,
        queue_size: int,
        grade_one: Callable[[ReadyTrace], None],
        on_crash: Callable[[ReadyTrace, BaseException], None],
    ) -> None:
        self.workers = workers
        self.capacity = workers + queue_size
        self._grade_one = grade_one
        self._on_crash = on_crash
        self._lock = threading.Lock()
        self._inflight = 0
        self._idle = threading.Condition(self._lock)
        self._executor: ThreadPoolExecutor | None = None

    def start(self) -> None:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="oo-grade")

    @property
    def inflight(self) -> int:
        return self._inflight

    def free_slots(self) -> int:
        return max(self.capacity - self._inflight, 0)

    def submit(self, ready: ReadyTrace) -> None:
        """Queue one trace; never blocks (callers respect ``free_slots``; at shutdown they
        may exceed it, which is bounded by the assembly buffer)."""
        if self._executor is None:
            raise RuntimeError("grading pool not started")
        with self._lock:
            self._inflight += 1
        fut = self._executor.submit(self._run, ready)
        fut.add_done_callback(self._done)

    def _run(self, ready: ReadyTrace) -> None:
        try:
            self._grade_one(ready)
        except Exception as exc:
            logger.exception("grading trace %s crashed", ready.trace_id)
            self._on_crash(ready, exc)

    def _done(self, _fut: Future[None]) -> None:
        with self._lock:
            self._inflight -= 1
            if self._inflight == 0:
                self._idle.notify_all()

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
        """Stop the threads after the queued work (call ``wait_idle`` first to bound it)."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
