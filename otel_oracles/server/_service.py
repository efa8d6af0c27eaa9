"""``GradingServer``: receivers + online assembly + grading pool + emitter, one lifecycle.

Threads and blocking: everything on the receive path (both receivers, decoding, assembly,
the sweeper) runs on one asyncio event loop and never waits on grading or exporting;
grading and exporting run on the pool's worker threads.

Lifecycle (as the collector's components): ``start`` and ``shutdown`` are coroutines, both
idempotent; ``shutdown`` is safe before ``start`` and drains: stop accepting (new requests
get the retryable "unavailable"), release every buffered trace (complete ones as complete,
the rest marked incomplete), grade them, flush the emitter, all within ``shutdown_timeout``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hmac
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from otel_oracles._native import TransferSpans
from otel_oracles.assemble.online import BufferFull, OnlineAssembler, ReadyTrace, SpanInput
from otel_oracles.assemble.online_join import OnlineJoiner
from otel_oracles.decode import BodyContents, WireLog, WireSpan, body_contents
from otel_oracles.model.span import LogRecord, SpanRecord
from otel_oracles.server._grading import ThreadGrading, VerdictLine
from otel_oracles.server._spool import ExportOutcome, Spool
from otel_oracles.server._stats import ServeStats
from otel_oracles.server._status import Draining, TooManyTraces, Unauthenticated
from otel_oracles.server.config import ServeSettings

if TYPE_CHECKING:
    from otel_oracles.emit import OwnTelemetryCheck

logger = logging.getLogger(__name__)

Signal = Literal["traces", "logs"]

_LOG_EVERY_S = 10.0


class ResultsEmitter(Protocol):
    """What the server needs of an ``otel_oracles.emit`` emitter."""

    def export(self, results: Any) -> Any: ...
    def force_flush(self, timeout_millis: int = ...) -> bool: ...
    def shutdown(self) -> Any: ...


GradeFn = Callable[[ReadyTrace], list[Any]]
"""Released trace -> [(Verdict, Trajectory)]: ``_grader.ready_grader`` (build the trace,
``otel_oracles.pipeline.grade_trace`` against the loaded contracts and conventions)."""


class GradingBackend(Protocol):
    """Where released traces are graded and their results exported: ``ThreadGrading``
    (threads of this process) or ``_processes.ProcessGrading`` (worker processes)."""

    processes: int
    """Worker processes grading (0: threads of this process)."""
    restarts: int
    """Worker processes replaced after they died."""

    @property
    def inflight(self) -> int: ...
    def start(self) -> None: ...
    def free_slots(self) -> int: ...
    def submit(self, traces: list[ReadyTrace]) -> None: ...
    def tick(self) -> None: ...
    def wait_idle(self, timeout: float) -> bool: ...
    def stop(self, timeout: float) -> None: ...


@dataclass(frozen=True, slots=True)
class Accepted:
    """A request that was taken (possibly in part): what OTLP partial success reports."""

    rejected: int = 0
    message: str = ""


def default_workers() -> int:
    """2 x CPUs (at least 2): threads mostly wait on ``test_must_pass`` subprocesses."""
    return max(2, 2 * (os.cpu_count() or 1))


BackendFactory = Callable[["GradingServer"], GradingBackend]
"""Builds the grading backend once the server exists (it reports back to the server)."""


class GradingServer:
    """See the module docstring. ``is_own`` recognises the grader's own telemetry (loop
    safety): marked as the grader's *and* shaped as a grade span or evaluation record, so a
    sender's span put in the grader's scope is graded, not skipped. Grading happens in
    ``backend(self)`` when given, else on threads running ``grade``."""

    def __init__(
        self,
        settings: ServeSettings,
        *,
        grade: GradeFn | None,
        emitter: ResultsEmitter,
        decode: Callable[[bytes, str, Signal], tuple[SpanInput, list[LogRecord], int, list[str]]],
        is_own: OwnTelemetryCheck,
        backend: BackendFactory | None = None,
        spool: Spool | None = None,
    ) -> None:
        self.settings = settings
        self.spool = spool
        """Accepted requests on disk until graded (None: ``spool.enabled: false``)."""
        self.export_outcome = ExportOutcome()
        a = settings.assembly
        self.assembler = OnlineAssembler(
            decision_wait=a.decision_wait,
            max_trace_age=a.max_trace_age,
            max_traces=a.max_traces,
            max_buffered_spans=a.max_buffered_spans,
            max_spans_per_trace=a.max_spans_per_trace,
            decision_cache_size=a.decision_cache_size,
            retry_after=a.retry_after,
            overflow_traces=a.overflow_traces,
        )
        self.joiner: OnlineJoiner | None = None
        """Runs split over traces joined into one subject (None: ``join_window`` 0)."""
        if a.join_window > 0:
            self.joiner = OnlineJoiner(
                window=a.join_window,
                max_traces=a.join_max_traces,
                max_spans=a.join_max_spans,
                max_age=a.max_trace_age,
                is_open=self.assembler.holds,
            )
        self.stats = ServeStats()
        self._emitter = emitter
        self._decode = decode
        self._is_own = is_own
        self.metrics = getattr(emitter, "metrics", None)
        """The emitter's self-metrics recorder (``GraderMetrics``; None without one): worker
        processes report their counts to it through the grading backend."""
        if backend is not None:
            self.backend: GradingBackend = backend(self)
        elif grade is not None:
            workers = settings.grading.workers or default_workers()
            self.backend = ThreadGrading(
                workers,
                settings.grading.queue_size,
                grade,
                self.export_outcome.wrap(emitter.export),
                self.record_graded,
                self.record_crash,
                trace_timeout=settings.grading.trace_timeout,
            )
        else:
            raise ValueError("give grade (threads) or backend")
        self._token = settings.receivers.auth.token()
        self._state: Literal["new", "running", "draining", "stopped"] = "new"
        self._sweeper: asyncio.Task[None] | None = None
        self._receivers: list[Any] = []
        self.grpc_port: int | None = None
        self.http_port: int | None = None
        self._shutdown_lock = asyncio.Lock()
        self._published_buffered = 0
        self._last_logged: dict[str, tuple[float, int]] = {}

    # ---- receive path (event-loop thread) -------------------------------------------------

    @property
    def ready(self) -> bool:
        return self._state == "running"

    @property
    def state(self) -> str:
        """``new``, ``running``, ``draining`` or ``stopped``."""
        return self._state

    def check_auth(self, authorization: str | None) -> None:
        """Raise Unauthenticated unless auth is off or the header carries the token. The
        scheme is case-insensitive (RFC 9110 section 11.1: ``bearer`` is ``Bearer``)."""
        if self._token is None:
            return
        scheme, _, credentials = (authorization or "").strip().partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            credentials.strip().encode(), self._token.encode()
        ):
            raise Unauthenticated("missing or wrong bearer token")

    def count_rejection(self, kind: str, error_type: str, transport: str, message: str) -> None:
        """Count one refused request (``buffer_full`` spans are counted in ``ingest``) and
        log it, at most once per kind every ``_LOG_EVERY_S`` so a misbehaving sender (or a
        long overload) cannot flood the log; the log line carries how many were suppressed."""
        if kind != "buffer_full":
            self.stats.add("rejected", kind)
        if self.metrics is not None:
            self.metrics.rejected_requests(error_type, transport)
        self._warn_folded("request refused", kind, transport=transport, reason=message)

    def _warn_folded(self, msg: str, kind: str, **fields: object) -> None:
        """Log ``msg`` at most once per ``kind`` every ``_LOG_EVERY_S``, with how many were
        suppressed since the last line."""
        now = time.monotonic()
        last, suppressed = self._last_logged.get(kind, (0.0, 0))
        if now - last < _LOG_EVERY_S:
            self._last_logged[kind] = (last, suppressed + 1)
            return
        self._last_logged[kind] = (now, 0)
        logger.warning(msg, extra={"kind": kind, **fields, "suppressed_since_last": suppressed})

    def ingest(self, body: bytes, content_type: str, signal: Signal, protocol: str) -> Accepted:
        """Decode and buffer one request body, all or nothing.

        Raises Draining, InputError (malformed) or BufferFull (retryable, nothing kept).
        """
        if self._state != "running":
            what = "starting" if self._state == "new" else "shutting down"
            raise Draining(f"server is {what}", self.settings.assembly.retry_after)
        spans, logs, ignored, problems = self._decode(body, content_type, signal)
        is_own = self._own_checker()
        own = 0
        if isinstance(spans, TransferSpans):
            # Markers asked once per resource and scope, the shape per marked span.
            own += spans.drop_own(self._is_own.marked, is_own)
        elif any(map(is_own, spans)):
            kept = [s for s in spans if not is_own(s)]
            own += len(spans) - len(kept)
            spans = kept
        if logs and any(map(is_own, logs)):
            kept_logs = [r for r in logs if not is_own(r)]
            own += len(logs) - len(kept_logs)
            logs = kept_logs
        stats = self.stats
        n = len(spans) + len(logs)
        _check_trace_count(spans, logs, self.settings.receivers.max_traces_per_request)
        spool = self.spool
        if spool is not None and not spool.has_room(len(body)):
            stats.add("rejected", "spool_full", n)
            raise BufferFull(
                f"spool full ({spool.bytes_held} of spool.max_bytes={spool.max_bytes} bytes "
                "waiting to be graded)",
                self.settings.assembly.retry_after,
            )
        try:
            adm = self.assembler.offer(spans, logs)
        except Exception:
            stats.add("rejected", "buffer_full", n)
            raise
        if spool is not None:
            # Durable before the success answer: the sender forgets what it is acked for.
            request_id = spool.append(signal, content_type, body, adm.traces)
            if request_id:
                _spill(spans, spool, request_id)
        stats.add("received", f"{protocol}.{signal}", n + own)
        if own:
            stats.incr("skipped_self", own)
        if adm.late:
            stats.incr("late", adm.late)
            if self.metrics is not None:
                self.metrics.late_spans(adm.late)
        if adm.overflow:
            stats.incr("overflow_admitted")
        if adm.unattached_logs:
            stats.incr("unattached_logs", adm.unattached_logs)
        if adm.rejected:
            stats.add("rejected", "span_limit", adm.rejected)
        if ignored:
            stats.add("rejected", "invalid_record", ignored)
            # One line per request at most (folded under a flood), never one per record.
            self._warn_folded(
                "records rejected",
                "invalid_record",
                transport=protocol,
                rejected=ignored,
                reason=problems[0] if problems else "",
            )
        messages = [m for m in (adm.message,) if m]
        if problems:
            more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
            messages.append("; ".join(problems[:3]) + more)
        if adm.late:
            messages.append(
                f"{adm.late} records arrived after their trace was graded (counted as late, "
                "not regraded); raise assembly.decision_wait if this is frequent"
            )
        return Accepted(rejected=adm.rejected + ignored, message="; ".join(messages))

    def _own_checker(self) -> Callable[[SpanRecord | LogRecord], bool]:
        """``is_own`` for the records of one request, with its markers decided once per
        (resource, scope): the records of one ``ResourceSpans`` share their resource
        mapping, and reading ``service.name`` from it for every span was ~5% of the
        receiving process's CPU. The shape is asked of each marked record, as a full record:
        the markers alone prove nothing (a sender can write them), and one scope may hold a
        grade span and a forged tool span. A stand-in (``WireSpan``/``WireLog``, which keep
        neither name nor attributes) is read back from its body, decoded once per request:
        only marked records pay for it."""
        is_own = self._is_own
        seen: dict[tuple[int, str], bool] = {}
        bodies: dict[int, BodyContents] = {}

        def full(record: Any) -> SpanRecord | LogRecord:
            if not isinstance(record, (WireSpan, WireLog)):
                return record  # type: ignore[no-any-return]
            body = record.body
            contents = bodies.get(id(body))
            if contents is None:
                contents = bodies[id(body)] = body_contents(body.kind, body.payload)
            return contents[0 if isinstance(record, WireSpan) else 1][record.index]

        def check(record: SpanRecord | LogRecord) -> bool:
            key = (id(record.resource), record.scope_name)
            marked = seen.get(key)
            if marked is None:
                marked = seen[key] = is_own.marked(record)
            return marked and is_own.shaped(full(record))  # full: same markers, decided

        return check

    async def _sweep_forever(self) -> None:
        interval = self.settings.assembly.sweep_interval
        while True:
            try:
                self._sweep_once()
            except Exception:
                logger.exception("sweep failed")
            await asyncio.sleep(interval)

    def _sweep_once(self) -> None:
        # The backend's free slots count traces queued, grading and exporting: a slow
        # grader or destination pushes back (through the assembly buffer) instead of
        # growing a queue.
        free = self.backend.free_slots()
        joiner = self.joiner
        if joiner is None:
            if free > 0:
                self.backend.submit(self.assembler.due(limit=free))
        else:
            room = joiner.room(free)
            if room > 0:
                joiner.add(self.assembler.due(limit=room))
            if free > 0:
                self.backend.submit(joiner.due(limit=free))
        self.backend.tick()
        self._publish_gauges()

    def stats_snapshot(self) -> dict[str, Any]:
        """Counters with the gauges refreshed now (event-loop thread; ``GET /stats``), and
        what the spool holds (``spool_requests``, ``spool_bytes``; absent when it is off)."""
        self._publish_gauges()
        snapshot = self.stats.snapshot()
        if self.spool is not None:
            snapshot["spool_requests"] = self.spool.requests_held
            snapshot["spool_bytes"] = self.spool.bytes_held
        if self.joiner is not None:
            j = self.joiner
            snapshot["joining"] = {
                "subjects": j.stats.subjects,
                "traces": j.stats.traces,
                "released_early": j.stats.released_early,
                "waiting_traces": j.waiting_traces,
                "waiting_spans": j.waiting_spans,
                "ready_subjects": j.ready_subjects,
            }
        return snapshot

    def _publish_gauges(self) -> None:
        s = self.stats
        s.buffered_traces = self.assembler.buffered_traces
        s.buffered_spans = self.assembler.buffered_items
        s.grading_inflight = self.backend.inflight
        s.grading_processes = self.backend.processes
        s.worker_restarts = self.backend.restarts
        if self.metrics is not None and s.buffered_traces != self._published_buffered:
            self.metrics.buffered_traces_changed(s.buffered_traces - self._published_buffered)
            self._published_buffered = s.buffered_traces

    # ---- grading results (the backend's threads) ------------------------------------------

    def record_graded(
        self, batch: list[tuple[ReadyTrace, list[VerdictLine]]], exported: bool | None = None
    ) -> None:
        """After one export batch: the verdicts are out; count them, and log one line per
        verdict so a user without a collector sees results. ``exported`` says whether the
        export succeeded (None: ask ``export_outcome``, same thread); the spool lets go of
        the traces only if it did, else they are graded again on the next start."""
        if exported is None:
            exported = self.export_outcome.last_ok()
        if self.spool is not None and exported:
            self.spool.settle([t for ready, _ in batch for t in ready.trace_ids], exported=True)
        now = time.monotonic()
        for ready, lines in batch:
            latency = now - ready.due_at
            self.stats.graded(ready.reason, [line.verdict for line in lines], latency)
            if self.metrics is not None and ready.reason in ("max_age", "evicted", "shutdown"):
                self.metrics.evicted_traces(1)
            for line in lines:
                logger.info(
                    "verdict",
                    extra={
                        "trace_id": ready.trace_id,
                        **({"member_trace_ids": list(ready.members)} if ready.members else {}),
                        "contract": line.contract,
                        "verdict": line.verdict,
                        "invariant_failures": line.invariant_failures,
                        "tolerated_failures": line.tolerated_failures,
                        "budget_exhausted": line.budget_exhausted,
                        "missing_evidence": line.missing_evidence,
                        "reason": ready.reason,
                        "latency_ms": round(latency * 1000, 3),
                    },
                )

    def record_crash(self, ready: ReadyTrace, verdicts_follow: bool = False) -> None:
        """A trace whose grading crashed (or whose worker process died) is counted. Its
        ``error`` verdicts normally follow (``verdicts_follow``) and settle it in the spool
        once exported, like any result. Without them, while running it leaves the spool:
        the next start would only crash on it again. During the drain a "crash" is the
        shutdown budget cutting grading off; those traces stay spooled for the next start."""
        self.stats.incr("grading_errors")
        if verdicts_follow:
            return
        if self.spool is not None and self._state == "running":
            self.spool.settle(ready.trace_ids, exported=False)

    # ---- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        """Bind the receivers and start the sweeper; a second call does nothing."""
        if self._state != "new":
            return
        from otel_oracles.server._grpc import start_grpc
        from otel_oracles.server._http import start_http

        loop = asyncio.get_running_loop()
        rc = self.settings.receivers
        try:
            if self.spool is not None:
                self.spool.open()  # first: a spool in use by another serve binds nothing
            # Receivers first, so a taken port fails fast; until the backend is up they
            # answer "unavailable" (retryable) and /readyz says not ready.
            if rc.grpc.enabled:
                server, self.grpc_port = await start_grpc(self, rc)
                self._receivers.append(server)
            if rc.http.enabled:
                runner, self.http_port = await start_http(self, rc)
                self._receivers.append(runner)
            await loop.run_in_executor(None, self.backend.start)
            self._sweeper = asyncio.get_running_loop().create_task(self._sweep_forever())
            # Before "running": what was acknowledged before a crash goes first.
            await self._replay_spool()
        except BaseException:
            await self._stop_receivers()
            if self._sweeper is not None:
                self._sweeper.cancel()
            await loop.run_in_executor(None, self.backend.stop, 1.0)
            self._state = "stopped"
            self._emitter.shutdown()
            if self.spool is not None:
                self.spool.close()
            raise
        self._state = "running"
        logger.info(
            "listening",
            extra={
                "grpc_port": self.grpc_port,
                "http_port": self.http_port,
                "contracts_dir": [str(p) for p in self.settings.grading.contracts],
            },
        )

    async def _replay_spool(self) -> None:
        """Offer the spooled requests' outstanding traces to the assembler again, in arrival
        order. A request the buffer cannot take yet waits for the sweeper to release traces
        (the receivers answer "unavailable" meanwhile, so senders retry later)."""
        if self.spool is None:
            return
        replayed = 0
        for request in self.spool.pending():
            try:
                spans, logs, _ignored, _problems = self._decode(
                    request.body, request.content_type, request.signal
                )
            except Exception:
                # It decoded when it was accepted; a spool this version cannot read must not
                # keep serve from starting. Counted and logged, like a crashed grading.
                logger.exception("spooled request %d cannot be decoded; dropped", request.id)
                self.stats.incr("grading_errors", len(request.outstanding))
                self.spool.settle(request.outstanding, exported=False)
                continue
            keep = request.outstanding
            if isinstance(spans, TransferSpans):
                spans.keep_traces(keep)
            else:
                spans = [s for s in spans if s.trace_id in keep]
            logs = [r for r in logs if r.trace_id in keep]
            found = _trace_ids(spans) | {r.trace_id for r in logs}
            if keep - found:  # nothing to grade them from: they would pin the request
                self.spool.settle(keep - found, exported=False)
            while True:
                try:
                    self.assembler.offer(spans, logs)
                    break
                except BufferFull:
                    await asyncio.sleep(self.settings.assembly.sweep_interval)
            _spill(spans, self.spool, request.id)
            replayed += 1
        if replayed:
            logger.info(
                "replayed spooled requests",
                extra={"requests": replayed, "spool_bytes": self.spool.bytes_held},
            )

    async def _stop_receivers(self) -> None:
        receivers, self._receivers = self._receivers, []
        for r in receivers:
            if hasattr(r, "cleanup"):
                await r.cleanup()
            else:
                await r.stop(grace=1.0)

    async def shutdown(self, timeout: float | None = None) -> bool:
        """Drain and stop (see module doc). Returns False when the deadline cut the drain
        short (the traces not graded by then are logged and counted as grading errors)."""
        async with self._shutdown_lock:
            if self._state == "stopped":
                return True
            if self._state == "new":
                self._state = "stopped"
                self._emitter.shutdown()
                return True
            budget = self.settings.shutdown_timeout if timeout is None else timeout
            deadline = time.monotonic() + budget
            self._state = "draining"
            # Receivers first: nothing new can arrive while we drain (in-flight requests
            # finish or are answered "unavailable", which senders retry elsewhere or later).
            await self._stop_receivers()
            if self._sweeper is not None:
                self._sweeper.cancel()
                await asyncio.gather(self._sweeper, return_exceptions=True)
            released = self.assembler.drain()
            if self.joiner is not None:
                self.joiner.add(released)
                released = self.joiner.drain()
            self.backend.submit(released)
            self._publish_gauges()
            loop = asyncio.get_running_loop()
            left = max(deadline - time.monotonic(), 0.0)
            drained = await loop.run_in_executor(None, self.backend.wait_idle, left)
            if not drained:
                inflight = self.backend.inflight
                logger.error(
                    "shutdown deadline reached with traces still grading or exporting",
                    extra={"inflight": inflight},
                )
                self.stats.incr("grading_errors", inflight)
            left = max(deadline - time.monotonic(), 0.5)
            await loop.run_in_executor(None, self.backend.stop, left)
            # The emitter's last steps run on daemon threads awaited until the deadline: a
            # metric export already in flight to a silent collector holds the reader's lock
            # for the sender's whole timeout, and an executor thread would also hold the
            # interpreter's exit until it returned.
            left = max(deadline - time.monotonic(), 0.1)
            flushed = await _within(left, self._emitter.force_flush, int(left * 1000))
            await _within(max(deadline - time.monotonic(), 0.1), self._emitter.shutdown)
            if self.spool is not None:
                # What was not graded and exported by now stays for the next start.
                self.spool.close()
            self._publish_gauges()
            self._state = "stopped"
            logger.info(
                "stopped", extra={"released": len(released), "stats": self.stats.snapshot()}
            )
            return drained and bool(flushed)


async def _within(seconds: float, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` on a daemon thread, awaited at most ``seconds``; None past that (the
    thread is left to end by itself, and cannot hold the process's exit)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()

    def settle(result: Any, error: BaseException | None) -> None:
        if done.done():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(result)

    def run() -> None:
        result: Any = None
        error: BaseException | None = None
        try:
            result = fn(*args)
        except BaseException as exc:  # noqa: BLE001  # handed to the awaiting coroutine
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=run, name="serve-drain", daemon=True).start()
    try:
        return await asyncio.wait_for(asyncio.shield(done), seconds)
    except TimeoutError:
        logger.error("shutdown deadline reached while flushing results and metrics")
        return None


def _spill(spans: SpanInput, spool: Spool, request_id: int) -> None:
    """The request's body is spooled: its buffered spans (and log records) read it back from
    there when a grading worker needs it, instead of keeping its bytes in memory. Spans that
    are records (grading on threads) hold no body."""
    if isinstance(spans, TransferSpans):
        spans.body.spill(functools.partial(spool.body, request_id))


def _trace_ids(spans: SpanInput) -> set[str]:
    """The trace ids of a request's spans."""
    if isinstance(spans, TransferSpans):
        return spans.trace_ids()
    return {s.trace_id for s in spans}


def _check_trace_count(spans: SpanInput, logs: list[LogRecord], limit: int) -> None:
    """Raise ``TooManyTraces`` when the request holds more than ``limit`` trace ids, before
    anything is buffered: each costs entries in the assembler and a row in the spool."""
    if len(spans) + len(logs) <= limit:
        return  # fewer records than the limit: fewer traces too
    traces = _trace_ids(spans)
    traces.update(r.trace_id for r in logs if r.trace_id)
    if len(traces) > limit:
        raise TooManyTraces(
            f"request holds {len(traces)} traces, more than "
            f"receivers.max_traces_per_request={limit}; send smaller batches"
        )


def decoded_parts(batch: Any) -> tuple[SpanInput, list[LogRecord], int, list[str]]:
    """Adapt ``otel_oracles.decode``'s DecodedBatch to (spans, logs, records rejected by the
    decoder, problem messages). The messages are one line: a request's first three problems
    and how many more (``Problems.summary``), whatever the number of records it holds."""
    problems = batch.problems
    return batch.spans, batch.logs, batch.rejected, [problems.summary()] if problems else []
