"""Grading in worker processes: the receiving process assembles, N processes grade and emit.

Why processes: mapping, checking and emitting are CPU-bound Python, about 95% of what a
trace costs. On threads of the receiving process they share its GIL, so ``serve`` graded on
about one core whatever the machine had, and grading competed with receiving for it. Each
worker process loads the contracts and conventions once, builds traces from the spans it is
sent, grades them on a few threads (so a slow ``test_must_pass`` holds one thread, not the
worker) and exports the results through its own OTLP span and log exporters: events and
grade spans need no coordination between processes.

Metrics do: two processes exporting cumulative counters under the same resource would
overwrite each other's series. So workers count their verdicts (``Tally.state()``, plain
data) and the receiving process, which owns the metrics and their readers, records them.

Protocol, one duplex pipe per worker (``multiprocessing`` connections, pickled tuples)::

    parent -> worker  ("grade", [(token, trace_id, spans, logs, reason, members)], parts)
                      | ("fail", [same items], NotGraded, parts) | ("stop", timeout)
    worker -> parent  ("ready",) | ("graded", [(token, [verdict])], tally, exported)
                      | ("errored", token) | ("crashed", token)
                      | ("stopped",)

Spans are ``decode.WireSpan``s in the receiving process. A message carries, for each request
body its traces have spans or log records in, a part of it (``RequestBody.part``: a protobuf
body cut down by the core to those records, copied without being decoded; a JSON body
whole, with its id, so a worker decodes it once for the messages it keeps it for:
``_WholeBodies``), read back from the spool, which holds the body while any of its traces is
outstanding; each item's spans and log records travel as references into those parts (two
numbers a record, packed in bytes: ``_parts``), so the message pickles in C, with no Python
call per record on either side. So the receiving process never decodes, serializes or
converts a span again, and a worker decodes its own traces' spans only: the spans of one
body belong to traces spread over every worker, and when each worker was sent whole bodies
(once, kept until the parent dropped them) every worker decoded the whole stream, ~18% of a
worker's busy time with two workers and more with more. A worker builds the records of the
references it is sent (``_build_records``, one call into the core a message:
``RecordBuilder.place``). Log records travel the same way (``WireLog``).
Results are reported per exported batch, not per request, so a slow trace never holds back
the others sent with it. A trace whose grading raises gets ``error`` verdicts from its worker
("errored" counts it, its verdicts follow as "graded"). A worker that dies (killed, out of
memory) is replaced, and the traces it held are counted as grading errors and sent to a live
worker as "fail": it exports their ``error`` verdicts without grading them (so the parent
keeps each trace's spans until its verdicts are in). A trace lost a second time that way is
only counted. A worker whose parent dies sees its pipe close and exits.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import pickle
import queue
import signal
import threading
import time
from array import array
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from otel_oracles._native import wire_references
from otel_oracles.assemble.online import ReadyTrace
from otel_oracles.decode import BodyKind, RequestBody, body_batch
from otel_oracles.session import NotGraded

if TYPE_CHECKING:
    from otel_oracles._native import Batch, RecordBuilder
    from otel_oracles.emit import GraderMetrics
    from otel_oracles.server._grading import VerdictLine
    from otel_oracles.server.config import ServeSettings

logger = logging.getLogger(__name__)

_METRICS_EVERY_S = 1.0
_WORKER_EXPORT_BACKLOG = 64
_START_TIMEOUT_S = 120.0
"""Loading contracts and conventions in a fresh process takes a second or two; a cold
import on a loaded machine much longer."""
_PAYLOADS_KEPT = 16
"""Request bodies read back from the spool kept for the next messages (~0.8 MB each): the
traces released together come from the last few requests received, so consecutive messages
to the workers mostly need the same few bodies, and reading one back is a query returning
a chain of overflow pages."""
_WHOLE_KEPT = 8
"""Whole bodies a worker keeps decoded for its next messages (``_WholeBodies``)."""
_Part = tuple[BodyKind, bytes, int | None, bytes | None]
"""A body's part in a message: its kind, its bytes, the body's id when the part is the
whole body (a JSON body, or a protobuf body the decoder rejected a record of), so the
worker decodes it once for all the messages that need it (``_WholeBodies``), else the
body positions it was cut to, sorted (``_U32``s): where the records referred to are in it."""
_Records = tuple[bytes, list[Any]]
"""A span or log-record list in a message: one (slot, position) pair of native-order
``u32``s a record (``RecordBuilder.place`` reads them; the worker runs on the same machine),
in the list's order, naming the record by the message's part of its body (slot) and its
position in the body; the slot 0xFFFFFFFF names the list's second member's record at that
index, sent as itself (a record that is not a ``WireSpan`` or ``WireLog``)."""
_U32 = "I"
"""The ``array`` type code of a part's positions (native-order ``u32``s, as the references)."""
assert array(_U32).itemsize == 4


@dataclass
class _Worker:
    """The parent's handle on one worker process."""

    index: int
    process: Any
    conn: Connection
    outbox: queue.SimpleQueue[tuple[Any, ...] | None] = field(default_factory=queue.SimpleQueue)
    inflight: dict[int, ReadyTrace] = field(default_factory=dict)
    alive: bool = True
    ready: threading.Event = field(default_factory=threading.Event)
    stopped: threading.Event = field(default_factory=threading.Event)
    failure: str = ""


class ProcessGrading:
    """Parent side of the worker processes; the same interface as ``ThreadGrading``.

    ``capacity`` bounds the traces each worker holds (grading or queued); beyond it the
    sweeper leaves complete traces in the assembly buffer, which pushes back on senders.
    """

    def __init__(
        self,
        settings: ServeSettings,
        processes: int,
        threads: int,
        capacity: int,
        on_graded: Callable[[list[tuple[ReadyTrace, list[VerdictLine]]], bool], None],
        on_crash: Callable[[ReadyTrace, bool], None],
        metrics: GraderMetrics | None,
    ) -> None:
        self._settings = settings
        self.processes = processes
        self._threads = threads
        self._capacity = max(capacity, threads)
        self._on_graded = on_graded
        self._on_crash = on_crash
        self._metrics = metrics
        self._ctx = multiprocessing.get_context("spawn")
        self._lock = threading.Condition()
        self._workers: list[_Worker] = []
        self._next_token = 0
        self._failing: set[int] = set()
        """Tokens of traces sent as "fail" (their first worker died): lost again, only counted."""
        self._stopping = False
        self.restarts = 0
        # Workers' metric counts, recorded at most every _METRICS_EVERY_S: each SDK
        # instrument call hashes its attributes, and per batch that was a third of this
        # process's CPU under load (the export interval is much longer anyway).
        self._tally = metrics.tally() if metrics is not None else None
        self._tally_lock = threading.Lock()
        self._tally_flushed = time.monotonic()
        # Bodies read back for recent messages (``_payload``), shared by the send threads.
        self._payloads: OrderedDict[int, bytes] = OrderedDict()
        self._payloads_lock = threading.Lock()

    # ---- lifecycle ------------------------------------------------------------------------

    def start(self) -> None:
        """Start every worker and wait until each has loaded the contracts."""
        workers = [self._spawn(i) for i in range(self.processes)]
        deadline = time.monotonic() + _START_TIMEOUT_S
        for w in workers:
            w.ready.wait(max(deadline - time.monotonic(), 0.0))
        failed = [w for w in workers if not w.ready.is_set() or not w.alive]
        if failed:
            from otel_oracles.server.config import ConfigError

            self._workers = workers
            self.stop(1.0)
            reason = failed[0].failure or "did not start in time"
            raise ConfigError(
                f"grading worker process {failed[0].index} failed to start: {reason} "
                "(grading.processes: 0 grades in this process instead)",
                source="grading.processes",
            )
        self._workers = workers

    def _spawn(self, index: int) -> _Worker:
        parent_end, child_end = self._ctx.Pipe(duplex=True)
        env = {k: v for k, v in os.environ.items() if k.startswith(("OTEL_", "OTEL_ORACLES_"))}
        proc = self._ctx.Process(
            target=worker_main,
            args=(child_end, self._settings, self._threads, env),
            name=f"otel-oracles-grade-{index}",
            daemon=True,
        )
        proc.start()
        child_end.close()
        w = _Worker(index, proc, parent_end)
        threading.Thread(target=self._send_loop, args=(w,), name=f"oo-send-{index}",
                         daemon=True).start()  # fmt: skip
        threading.Thread(target=self._receive_loop, args=(w,), name=f"oo-recv-{index}",
                         daemon=True).start()  # fmt: skip
        return w

    def stop(self, timeout: float) -> None:
        """Ask every worker to finish what it holds, flush its exporters and exit; kill
        those still running at the deadline."""
        deadline = time.monotonic() + timeout
        with self._lock:
            self._stopping = True
            workers = list(self._workers)
        for w in workers:
            if w.alive:
                w.outbox.put(("stop", max(timeout - 0.5, 0.1)))
        for w in workers:
            w.stopped.wait(max(deadline - time.monotonic(), 0.0))
            w.process.join(max(deadline - time.monotonic(), 0.1))
            if w.process.is_alive():
                logger.error("grading worker %d did not stop in time; killing it", w.index)
                w.process.kill()
                w.process.join(1.0)
            w.outbox.put(None)
        self._flush_metrics()

    # ---- the interface the server uses ----------------------------------------------------

    @property
    def inflight(self) -> int:
        with self._lock:
            return sum(len(w.inflight) for w in self._workers)

    def free_slots(self) -> int:
        with self._lock:
            return sum(self._capacity - len(w.inflight) for w in self._workers if w.alive)

    def submit(self, traces: list[ReadyTrace]) -> None:
        """Hand traces to the least busy workers, one message per worker. Never blocks."""
        if not traces:
            return
        with self._lock:
            live = [w for w in self._workers if w.alive]
            if not live:
                for ready in traces:
                    self._on_crash(ready, False)
                return
            batches: dict[int, list[tuple[Any, ...]]] = {}
            for ready in traces:
                w = min(live, key=lambda x: len(x.inflight))
                batches.setdefault(w.index, []).append(self._hand(w, ready))
            by_index = {w.index: w for w in live}
        for index, items in batches.items():
            by_index[index].outbox.put(("grade", items))

    def _hand(self, w: _Worker, ready: ReadyTrace) -> tuple[Any, ...]:
        """Give ``ready`` a token in ``w``'s hands (under the lock); the item sent for it.
        Kept with its spans: should the worker die, another one reports it (``_lost``)."""
        token = self._next_token
        self._next_token += 1
        w.inflight[token] = ready
        return (token, ready.trace_id, ready.spans, ready.logs, ready.reason, ready.members)

    def wait_idle(self, timeout: float) -> bool:
        """Every submitted trace graded and exported (or its worker lost); False on timeout."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while any(w.inflight for w in self._workers):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(left)
        self._flush_metrics()
        return True

    def tick(self) -> None:
        """Every sweep: record the workers' counts once they are ``_METRICS_EVERY_S`` old,
        so a quiet period after a burst does not leave them unrecorded."""
        self._flush_metrics(only_if_due=True)

    def _flush_metrics(self, only_if_due: bool = False) -> None:
        """Record the counts received so far (all of them, or only once they are due)."""
        if self._tally is None:
            return
        with self._tally_lock:
            if only_if_due and time.monotonic() - self._tally_flushed < _METRICS_EVERY_S:
                return
            self._tally.flush()
            self._tally_flushed = time.monotonic()

    # ---- per-worker threads ---------------------------------------------------------------

    def _send_loop(self, w: _Worker) -> None:
        """Cutting bodies, pickling and writing happen here, off the event loop: a large
        batch takes a while to go through a pipe, and this thread waits in ``write`` (and
        the core cuts bodies) without the GIL."""
        while True:
            msg = w.outbox.get()
            if msg is None:
                return
            try:
                if msg[0] in ("grade", "fail"):
                    w.conn.send_bytes(_message(msg, self._payload))
                else:
                    w.conn.send(msg)
            except (OSError, ValueError):
                return  # the receive loop sees the worker gone and accounts for it
            del msg

    def _payload(self, body: RequestBody) -> bytes:
        """``body``'s bytes, read back from the spool at most once while recent messages
        need it (``_PAYLOADS_KEPT``); raises ``LookupError`` when it is not spooled."""
        with self._payloads_lock:
            payload = self._payloads.get(body.id)
            if payload is not None:
                self._payloads.move_to_end(body.id)
                return payload
        payload = body.payload  # may read it from the spool
        with self._payloads_lock:
            self._payloads[body.id] = payload
            if len(self._payloads) > _PAYLOADS_KEPT:
                self._payloads.popitem(last=False)
        return payload

    def _receive_loop(self, w: _Worker) -> None:
        try:
            while True:
                msg = w.conn.recv()
                kind = msg[0]
                if kind == "graded":
                    self._graded(w, msg[1], msg[2], msg[3])
                elif kind == "crashed":
                    with self._lock:
                        ready = w.inflight.pop(msg[1], None)
                        self._failing.discard(msg[1])
                        self._lock.notify_all()
                    if ready is not None:
                        self._on_crash(ready, False)
                elif kind == "errored":  # counted now; its error verdicts follow
                    with self._lock:
                        ready = w.inflight.get(msg[1])
                    if ready is not None:
                        self._on_crash(ready, True)
                elif kind == "ready":
                    w.ready.set()
                elif kind == "failed":
                    w.failure = str(msg[1])
                    logger.error("grading worker %d failed to start: %s", w.index, msg[1])
                elif kind == "stopped":
                    w.stopped.set()
        except (EOFError, OSError):
            pass
        self._lost(w)

    def _graded(
        self, w: _Worker, items: list[tuple[int, list[VerdictLine]]], tally: Any, exported: bool
    ) -> None:
        done: list[tuple[ReadyTrace, list[VerdictLine]]] = []
        with self._lock:
            for token, verdicts in items:
                self._failing.discard(token)
                ready = w.inflight.pop(token, None)
                if ready is not None:
                    done.append((ready, verdicts))
            self._lock.notify_all()
        if self._tally is not None and tally is not None:
            with self._tally_lock:
                self._tally.merge(tally)
            self._flush_metrics(only_if_due=True)
        if done:
            self._on_graded(done, exported)

    def _lost(self, w: _Worker) -> None:
        """The worker's pipe closed: count what it held as grading errors, replace it unless
        we are stopping, and have a live worker export those traces' ``error`` verdicts
        (``_report_lost``)."""
        was_ready = w.ready.is_set()
        with self._lock:
            w.alive = False
            lost = list(w.inflight.values())
            # Sent as "fail" already: their second loss; they are only counted.
            again: list[ReadyTrace] = []
            first: list[ReadyTrace] = []
            for token, ready in w.inflight.items():
                (again if token in self._failing else first).append(ready)
            self._failing.difference_update(w.inflight)
            w.inflight.clear()
            stopping = self._stopping
            self._lock.notify_all()
        w.stopped.set()
        w.ready.set()
        w.outbox.put(None)
        w.process.join(5.0)  # reap it: a dead worker must not linger as a zombie
        with contextlib.suppress(OSError):
            w.conn.close()
        if lost:
            logger.error(
                "grading worker %d exited with %d traces in hand (exit code %s); "
                "reported as error",
                w.index, len(lost), w.process.exitcode,
            )  # fmt: skip
        for ready in again:
            self._on_crash(ready, False)
        if not (stopping or not was_ready or w.failure):
            # (A worker that never started would fail again: start() reports it instead.)
            self.restarts += 1
            replacement = self._spawn(w.index)
            with self._lock:
                if self._stopping:
                    replacement.outbox.put(("stop", 1.0))
                self._workers[self._workers.index(w)] = replacement
        self._report_lost(first, NotGraded.worker_died(w.process.exitcode))

    def _report_lost(self, lost: list[ReadyTrace], failure: NotGraded) -> None:
        """Send traces a dead worker held to the least busy live one as "fail": it exports
        their ``error`` verdicts without grading them (grading may be what killed the
        worker), and they count as grading errors. While stopping, or with no live worker,
        they are only counted (and, during the drain, stay spooled for the next start)."""
        if not lost:
            return
        items: list[tuple[Any, ...]] = []
        target: _Worker | None = None
        with self._lock:
            live = [x for x in self._workers if x.alive]
            if not self._stopping and live:
                target = min(live, key=lambda x: len(x.inflight))
                for ready in lost:
                    item = self._hand(target, ready)
                    self._failing.add(item[0])
                    items.append(item)
        if target is not None:
            target.outbox.put(("fail", items, failure))
            return
        for ready in lost:
            self._on_crash(ready, False)


def _message(msg: tuple[Any, ...], payload_of: Callable[[RequestBody], bytes]) -> bytes:
    """A "grade" or "fail" message as a worker is sent it, pickled: its items' records as
    references (``_Records``) into the parts of their bodies appended (``_parts``)."""
    parts, items = _parts(msg[1], payload_of)
    return pickle.dumps((msg[0], items, *msg[2:], parts), protocol=pickle.HIGHEST_PROTOCOL)


def _parts(
    items: list[tuple[Any, ...]], payload_of: Callable[[RequestBody], bytes]
) -> tuple[list[_Part | None], list[tuple[Any, ...]]]:
    """The parts (``_Part``) of the bodies the spans and log records of ``items`` live in
    (each body's bytes from ``payload_of``), a body's slot its place in that list (``None``
    when it could not be sent), and ``items`` with their span and log lists as references
    to them (``_Records``): made by the core in one call (``wire_references``), which
    reads a ``WireSpan``'s body and position without a Python call."""
    bodies, positions, lists = wire_references([x for item in items for x in item[2:4]])
    sent = [
        (token, trace_id, lists[2 * i], lists[2 * i + 1], reason, members)
        for i, (token, trace_id, _, _, reason, members) in enumerate(items)
    ]
    parts = [_part(body, at, payload_of) for body, at in zip(bodies, positions, strict=True)]
    return parts, sent


def _part(
    body: RequestBody, positions: list[int], payload_of: Callable[[RequestBody], bytes]
) -> _Part | None:
    """``body``'s part for the records at ``positions``; ``None`` when it cannot be had.
    Without a part, the worker cannot build these records: it fails on them and is
    replaced, so their traces count as grading errors."""
    try:
        payload = payload_of(body)
    except LookupError:  # not spooled any more (its traces were all settled)
        logger.error("request body %d is no longer in the spool", body.id)
        return None
    try:
        payload, order = body.part(payload, positions)
    except (IndexError, ValueError):  # not what it decoded to when it was received
        logger.exception("request body %d could not be cut to its records", body.id)
        return None
    if order is None:
        return (body.kind, payload, body.id, None)
    return (body.kind, payload, None, array(_U32, order).tobytes())


# ---- the worker process -------------------------------------------------------------------


class _WholeBodies:
    """The last ``_WHOLE_KEPT`` whole bodies a worker decoded, by the receiving process's
    body id. A body that cannot be cut (JSON) is sent whole with every message holding
    records of it, and the traces of one request are released over several sweeps: without
    this, a worker decoded such a body whole once per message rather than once."""

    def __init__(self, kept: int = _WHOLE_KEPT) -> None:
        self._kept = kept
        self._batches: OrderedDict[int, Batch] = OrderedDict()
        self.decoded = 0
        """How many whole bodies were decoded (the rest came from here)."""

    def batch(self, kind: BodyKind, payload: bytes, body_id: int | None) -> Batch:
        """The decoded ``payload``: a whole body's from here when it was decoded lately."""
        if body_id is None:
            return body_batch(kind, payload)
        batches = self._batches
        found = batches.get(body_id)
        if found is not None:
            batches.move_to_end(body_id)
            return found
        found = batches[body_id] = body_batch(kind, payload)
        self.decoded += 1
        if len(batches) > self._kept:
            batches.popitem(last=False)
        return found


def _build_records(
    items: list[tuple[Any, ...]],
    parts: list[_Part | None],
    builder: RecordBuilder,
    whole: _WholeBodies,
) -> list[tuple[Any, ...]]:
    """``items`` (grade or fail items, as unpickled) with records for the references in
    their span and log lists (``_Records``), built in one call into the core
    (``RecordBuilder.place``) from the message's ``parts`` (each decoded once, a whole body
    once for the messages ``whole`` remembers it for). A record of a body the parent could
    not send (its part ``None``) raises ``IndexError``: the worker then fails and is
    replaced, and its traces count as grading errors."""
    batches = [None if part is None else whole.batch(*part[:3]) for part in parts]
    orders = [None if part is None else part[3] for part in parts]
    spans, logs = builder.place(batches, orders, [i[2] for i in items], [i[3] for i in items])
    return [
        (item[0], item[1], item_spans, item_logs, item[4], item[5])
        for item, item_spans, item_logs in zip(items, spans, logs, strict=True)
    ]


def worker_main(
    conn: Connection, settings: ServeSettings, threads: int, environ: dict[str, str]
) -> None:
    """Entry point of a worker process (see the module docstring for the protocol)."""
    # The parent drives shutdown (its SIGTERM drain sends "stop"); a Ctrl-C or a SIGTERM to
    # the process group must not kill results in hand. A dead parent closes the pipe.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    os.environ.update(environ)
    from otel_oracles.server._logging import configure_logging

    configure_logging(settings.log_level, settings.log_format)
    send_lock = threading.Lock()

    def send(msg: tuple[Any, ...]) -> None:
        with send_lock:
            conn.send(msg)

    try:
        backend, emitter = _worker_backend(settings, threads, send)
    except Exception as exc:
        logger.exception("grading worker failed to start")
        send(("failed", f"{type(exc).__name__}: {exc}"))
        return
    from otel_oracles._native import RecordBuilder

    builder = RecordBuilder()
    whole = _WholeBodies()
    _settle_collector()
    send(("ready",))
    stop_timeout = settings.shutdown_timeout
    try:
        while True:
            try:
                msg = conn.recv()
            except (EOFError, OSError):
                break
            if msg[0] in ("grade", "fail"):
                traces = [
                    _WorkerTrace(trace_id, spans, logs, reason, 0.0, members=members, token=token)
                    for token, trace_id, spans, logs, reason, members in _build_records(
                        msg[1], msg[-1], builder, whole
                    )
                ]
                if msg[0] == "grade":
                    backend.submit(traces)
                else:  # another worker died holding them: error verdicts, not grading
                    for ready in traces:
                        backend.report_failure(ready, msg[2])
            elif msg[0] == "stop":
                stop_timeout = float(msg[1])
                break
    finally:
        backend.wait_idle(stop_timeout)
        backend.stop(1.0)
        emitter.shutdown()
        with contextlib.suppress(OSError):
            send(("stopped",))
        conn.close()


def _settle_collector() -> None:
    """The garbage collector as ``otel-oracles``' own ``main`` leaves it for a command
    (``cli.StartUpGc``): what the worker allocated to start (modules, contracts, conventions,
    the emitter) frozen out of the collector's scans, and a young generation of a million
    allocations instead of 700. A worker is a spawned process: it does not start through
    ``main``, so it kept CPython's defaults, and its collector walked the trace being graded
    and rescanned start-up's objects at every full collection: ~5% of a worker's grading CPU
    was time inside the collector, peak RSS unchanged (docs/performance-history.md, "The checks
    stage and serve's workers, cheaper per verdict"). The collector stays on: reference
    cycles are still freed, only later."""
    from otel_oracles.cli import StartUpGc  # the one place the thresholds are chosen

    StartUpGc.settle()


@dataclass(slots=True)
class _WorkerTrace(ReadyTrace):
    """A trace in a worker: the parent's token for it, and its metric counts."""

    token: int = 0
    tally: Any = None


def _recycle() -> None:
    """More stuck grading threads than this worker has: exit, so the parent starts a fresh
    process (the traces in hand are then counted as grading errors)."""
    logger.error("grading worker has too many stuck grading threads; exiting to be replaced")
    os._exit(70)


def _worker_backend(
    settings: ServeSettings, threads: int, send: Callable[[tuple[Any, ...]], None]
) -> tuple[Any, Any]:
    from otel_oracles.emit import GraderMetrics, build_emitter
    from otel_oracles.emit.config import EmitSettings
    from otel_oracles.server._grader import load_grading, ready_grader
    from otel_oracles.server._grading import ThreadGrading
    from otel_oracles.server._spool import ExportOutcome

    contracts, conventions = load_grading(settings)
    emitter = build_emitter(export="otlp", settings=EmitSettings.from_env(metrics=False))
    grade = ready_grader(contracts, conventions, settings.grading.command_policy())
    counter = GraderMetrics.noop()
    # Whether each batch's export succeeded rides to the parent with it (its spool keeps
    # the traces of a failed export for the next start).
    outcome = ExportOutcome()

    def counted(ready: ReadyTrace, results: list[Any]) -> list[Any]:
        assert isinstance(ready, _WorkerTrace)
        tally = counter.tally()
        for verdict, trajectory in results:
            tally.add(verdict, trajectory)
        # The counts ride with the results to the exporter thread, which reports both.
        ready.tally = tally.state()
        return results

    class _Counted:
        """The grader, counting verdicts (for graded and for timed-out traces alike)."""

        def __call__(self, ready: ReadyTrace) -> list[Any]:
            return counted(ready, grade(ready))

        def timed_out(self, ready: ReadyTrace, seconds: float) -> list[Any]:
            return counted(ready, grade.timed_out(ready, seconds))

        def not_graded(self, ready: ReadyTrace, failure: NotGraded) -> list[Any]:
            return counted(ready, grade.not_graded(ready, failure))

    graded_and_counted = _Counted()

    def graded(batch: list[tuple[ReadyTrace, list[VerdictLine]]]) -> None:
        tally = counter.tally()
        items = []
        for ready, verdicts in batch:
            assert isinstance(ready, _WorkerTrace)
            items.append((ready.token, verdicts))
            if ready.tally is not None:
                tally.merge(ready.tally)
        send(("graded", items, tally.state(), outcome.last_ok()))

    def crashed(ready: ReadyTrace, verdicts_follow: bool) -> None:
        assert isinstance(ready, _WorkerTrace)
        send(("errored" if verdicts_follow else "crashed", ready.token))

    # A deeper export backlog than on the receiving process's threads: here the exporter
    # thread competes with a couple of grading threads only, and under load each export
    # call (one POST for spans, one for logs, ~2 ms of CPU each in the SDK's transport)
    # then carries up to 64 traces' results instead of 16.
    backend = ThreadGrading(threads, 1, graded_and_counted, outcome.wrap(emitter.export),
                            graded, crashed,
                            max_backlog=_WORKER_EXPORT_BACKLOG,
                            trace_timeout=settings.grading.trace_timeout,
                            on_stuck_limit=_recycle)  # fmt: skip
    backend.start()
    return backend, emitter
