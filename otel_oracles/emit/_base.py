"""The Emitter seam: where graded results leave the grader.

Modelled on the OpenTelemetry SDK's exporter seam (``export`` returns a two-value result
instead of raising, ``force_flush(timeout_millis) -> bool``, ``shutdown()``):

- ``export(results)`` hands over a batch of ``(Verdict, Trajectory)`` pairs. It runs on the
  caller's thread, never raises for delivery problems (it logs them and returns
  ``EmitResult.FAILURE``) and returns only when the batch has been handed to every
  destination, so nothing waits in a queue that could drop it.
- ``force_flush(timeout_millis)`` pushes out anything aggregated (metrics); False on timeout.
- ``shutdown()`` flushes and releases connections. It is idempotent; ``export`` after
  shutdown does nothing, is counted, and returns FAILURE.
"""

from __future__ import annotations

import enum
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence

from otel_oracles.emit._metrics import GraderMetrics, labels_only
from otel_oracles.model.result import Verdict
from otel_oracles.model.step import Trajectory

GradedPair = tuple[Verdict, Trajectory]


class EmitResult(enum.Enum):
    SUCCESS = 0
    FAILURE = 1


class Emitter(ABC):
    """A destination for graded results (see module docstring for the contract)."""

    @abstractmethod
    def export(self, results: Sequence[GradedPair]) -> EmitResult:
        """Emit every pair; SUCCESS only if every destination accepted all of them."""

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Push out buffered or aggregated data; False when ``timeout_millis`` passed first."""
        return True

    @abstractmethod
    def shutdown(self) -> None:
        """Flush and release resources. Safe to call twice."""

    @property
    def metrics(self) -> GraderMetrics:
        """Instruments the live receiver feeds (buffered traces, late spans, ...). Emitters
        without metrics return a no-op instance, so callers never need to check."""
        return GraderMetrics.noop()

    def delivery_warning(self, detail: str = "") -> str | None:
        """One line saying what was not delivered and where, or None when everything was
        (the default: an emitter that does not track delivery has nothing to report)."""
        return None

    @property
    def reads_labels_only(self) -> bool:
        """True when ``export`` reads no more of a trajectory than ``labels_only`` keeps (its
        agent name, service version, first generation's provider and model), so a caller
        holding pairs may hold that instead (``BatchingEmitter``). False by default: an
        emitter may read anything of the trajectories it is given."""
        return False

    def __enter__(self) -> Emitter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()


class InMemoryEmitter(Emitter):
    """Keeps every exported pair in a list: the test double that ships with the package.
    Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._results: list[GradedPair] = []
        self._shutdown = False
        self.rejected_after_shutdown = 0
        """Pairs handed to ``export`` after ``shutdown`` (returned FAILURE, not stored)."""

    def export(self, results: Sequence[GradedPair]) -> EmitResult:
        with self._lock:
            if self._shutdown:
                self.rejected_after_shutdown += len(results)
                return EmitResult.FAILURE
            self._results.extend(results)
        return EmitResult.SUCCESS

    @property
    def results(self) -> list[GradedPair]:
        """A snapshot of everything exported so far, in order."""
        with self._lock:
            return list(self._results)

    @property
    def verdicts(self) -> list[Verdict]:
        return [v for v, _ in self.results]

    def clear(self) -> None:
        with self._lock:
            self._results.clear()

    def shutdown(self) -> None:
        with self._lock:
            self._shutdown = True


class FanOutEmitter(Emitter):
    """Sends every batch to each child in order. ``force_flush`` gives the children one
    shared deadline (a slow first child leaves less time to the next), like the SDK's
    ``SynchronousMultiSpanProcessor``."""

    def __init__(self, children: Sequence[Emitter]) -> None:
        self._children = tuple(children)
        self._shutdown = False
        self._lock = threading.Lock()

    @property
    def children(self) -> tuple[Emitter, ...]:
        return self._children

    def export(self, results: Sequence[GradedPair]) -> EmitResult:
        if self._shutdown:
            return EmitResult.FAILURE
        outcome = EmitResult.SUCCESS
        for child in self._children:
            if child.export(results) is EmitResult.FAILURE:
                outcome = EmitResult.FAILURE
        return outcome

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        deadline = time.monotonic() + timeout_millis / 1000
        for child in self._children:
            remaining_ms = int((deadline - time.monotonic()) * 1000)
            if remaining_ms <= 0 or not child.force_flush(remaining_ms):
                return False
        return True

    def shutdown(self) -> None:
        with self._lock:
            if self._shutdown:
                return
            self._shutdown = True
        for child in self._children:
            child.shutdown()

    @property
    def reads_labels_only(self) -> bool:
        return all(child.reads_labels_only for child in self._children)

    @property
    def metrics(self) -> GraderMetrics:
        """The first child's real instruments, if any child has them."""
        for child in self._children:
            found = child.metrics
            if not found.is_noop:
                return found
        return GraderMetrics.noop()


class BatchingEmitter(Emitter):
    """Collects pairs and forwards them to ``inner`` in batches of ``batch_size``.

    For callers that produce one trace at a time (offline ``grade``): one export call per
    trace would mean one network request per trace. Forwarding happens on the caller's
    thread when a batch fills, and in ``force_flush``/``shutdown`` for the rest, so at most
    ``batch_size`` pairs wait and none is dropped. ``export`` returns the forwarded batch's
    result, or SUCCESS when the pairs were only buffered.

    When ``inner`` reads only a trajectory's labels (``reads_labels_only``), a waiting pair
    holds ``labels_only(trajectory)``, so the graded trajectory is freed with its trace
    rather than kept, and rescanned by the collector, until the batch fills.
    """

    def __init__(self, inner: Emitter, batch_size: int = 256) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.inner = inner
        self._batch_size = batch_size
        self._pending: list[GradedPair] = []
        self._lock = threading.Lock()
        self._shutdown = False
        self.last_result = EmitResult.SUCCESS
        """The result of the most recent forwarded batch."""
        self.failed_batches = 0
        self._labels_only = inner.reads_labels_only

    def export(self, results: Sequence[GradedPair]) -> EmitResult:
        with self._lock:
            if self._shutdown:
                return EmitResult.FAILURE
            if self._labels_only:
                self._pending.extend(_with_labels_only(results))
            else:
                self._pending.extend(results)
            if len(self._pending) < self._batch_size:
                return EmitResult.SUCCESS
            return self._forward()

    def _forward(self) -> EmitResult:
        """Forward everything pending; the caller holds the lock."""
        outcome = EmitResult.SUCCESS
        while self._pending:
            batch = self._pending[: self._batch_size]
            del self._pending[: self._batch_size]
            if self.inner.export(batch) is EmitResult.FAILURE:
                outcome = EmitResult.FAILURE
                self.failed_batches += 1
        self.last_result = outcome
        return outcome

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        deadline = time.monotonic() + timeout_millis / 1000
        with self._lock:
            self._forward()
        remaining_ms = int((deadline - time.monotonic()) * 1000)
        return remaining_ms > 0 and self.inner.force_flush(remaining_ms)

    def shutdown(self) -> None:
        with self._lock:
            if self._shutdown:
                return
            self._forward()
            self._shutdown = True
        self.inner.shutdown()

    @property
    def reads_labels_only(self) -> bool:
        return self.inner.reads_labels_only

    @property
    def metrics(self) -> GraderMetrics:
        return self.inner.metrics


def _with_labels_only(results: Sequence[GradedPair]) -> list[GradedPair]:
    """``results`` with each trajectory replaced by ``labels_only`` of it, one per
    trajectory: a trace's verdicts share theirs, and the emitter reads a trajectory's labels
    once for a run of verdicts holding the same one."""
    out: list[GradedPair] = []
    last: Trajectory | None = None
    kept: Trajectory | None = None
    for verdict, trajectory in results:
        if trajectory is not last or kept is None:
            last, kept = trajectory, labels_only(trajectory)
        out.append((verdict, kept))
    return out
