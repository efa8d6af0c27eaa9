"""Wire the stages into a ``GradingServer``: decode -> online assembly -> map -> grade -> emit.

The server module itself only knows callables; this is the one place that names the
other stages, so the server stays testable and the stages stay swappable.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from otel_oracles.assemble.online import ReadyTrace
from otel_oracles.emit import own_telemetry_check
from otel_oracles.sandbox import CommandPolicy
from otel_oracles.server._service import GradingServer, ResultsEmitter, Signal, decoded_parts
from otel_oracles.server._spool import spool_for
from otel_oracles.server.config import ConfigError, ServeSettings, grading_processes
from otel_oracles.session import GradingSession, NotGraded

logger = logging.getLogger(__name__)


def _decode(
    payload: bytes, content_type: str, signal: Signal, for_transfer: bool = False
) -> tuple[Any, Any, int, list[str]]:
    from otel_oracles.decode import decode

    return decoded_parts(decode(payload, content_type, signal=signal, for_transfer=for_transfer))


def load_grading(settings: ServeSettings) -> tuple[list[Any], Any]:
    """Contracts and conventions, validated before anything listens (serve refuses to start
    on any error)."""
    from otel_oracles.grade.loader import load_contract
    from otel_oracles.mapping import ConventionCache, load_conventions
    from otel_oracles.model.contract import discover_contract_files

    if not settings.grading.contracts:
        raise ConfigError("no contracts given", source="grading.contracts")
    files = discover_contract_files(list(settings.grading.contracts))
    if not files:
        raise ConfigError(
            f"no contract files found under {[str(p) for p in settings.grading.contracts]}",
            source="grading.contracts",
        )
    contracts = [load_contract(f) for f in files]
    conventions = load_conventions(list(settings.grading.conventions), ConventionCache.from_env())
    return contracts, conventions


def ready_grader(contracts: list[Any], conventions: Any, commands: CommandPolicy) -> ReadyGrader:
    """ReadyTrace -> [(Verdict, Trajectory)]: the trace built from its buffered spans and
    logs (marked incomplete when it was released early), graded against every contract;
    ``commands`` from ``grading.commands`` (off unless the config turns them on)."""
    return ReadyGrader(contracts, conventions, commands)


class ReadyGrader:
    """Grades a released trace through a ``GradingSession`` (the one the offline loop uses);
    and says what a trace that ran out of time gets (``error`` verdicts from ``timed_out``,
    for ``grading.trace_timeout``), or one whose grading crashed (``not_graded``)."""

    def __init__(self, contracts: list[Any], conventions: Any, commands: CommandPolicy) -> None:
        self.session = GradingSession(contracts, conventions, commands=commands)

    def _trace(self, ready: ReadyTrace) -> Any:
        from otel_oracles.assemble.online_join import subject_trace

        return subject_trace(ready)

    def __call__(self, ready: ReadyTrace) -> list[Any]:
        return self.session.grade(self._trace(ready))

    def timed_out(self, ready: ReadyTrace, seconds: float) -> list[Any]:
        return self.session.timed_out(self._trace(ready), seconds)

    def not_graded(self, ready: ReadyTrace, failure: NotGraded) -> list[Any]:
        """``error`` verdicts for a trace whose grading raised or whose worker process died
        (``failure`` says which), from every contract that selects it."""
        return self.session.not_graded(
            self._trace(ready), failure.stage, failure.message, failure.error_type
        )


def create_server(settings: ServeSettings, emitter: ResultsEmitter | None = None) -> GradingServer:
    """A ready-to-start server; ``emitter`` defaults to the OTel emitter (standard
    ``OTEL_EXPORTER_OTLP_*`` variables).

    With ``grading.processes`` > 0 (the default ``auto`` on a multi-core machine) the worker
    processes grade and export through their own OTLP emitters, and this process's emitter
    records only the metrics. A caller's own ``emitter`` must receive every result, so it
    gets threads (``auto``) or a ConfigError (an explicit process count).
    """
    contracts, conventions = load_grading(settings)
    processes = grading_processes(settings.grading)
    if emitter is not None and processes and settings.grading.processes != "auto":
        raise ConfigError(
            "a custom emitter needs grading.processes: 0 (worker processes emit through "
            "their own OTLP exporters)",
            source="grading.processes",
        )
    if emitter is not None:
        processes = 0
    if emitter is None:
        from otel_oracles.emit import build_emitter

        emitter = build_emitter(export="otlp")
    is_own = own_telemetry_check(settings.self_telemetry.skip_service_names)
    backend = None
    if processes:
        backend = functools.partial(_process_backend, processes=processes)
    server = GradingServer(
        settings,
        grade=None
        if backend
        else ready_grader(contracts, conventions, settings.grading.command_policy()),
        emitter=emitter,
        # Worker processes build the full span records; this one only assembles.
        decode=functools.partial(_decode, for_transfer=bool(processes)),
        is_own=is_own,
        backend=backend,
        spool=spool_for(settings),
    )
    logger.info(
        "loaded",
        extra={"contracts": [c.id for c in contracts], "grading_processes": processes},
    )
    return server


def _process_backend(server: GradingServer, processes: int) -> Any:
    from otel_oracles.server._processes import ProcessGrading

    g = server.settings.grading
    threads = g.workers or 2
    # Per worker: its threads busy plus as many queued, enough to keep it fed between
    # sweeps without holding traces the assembly buffer could push back for.
    capacity = threads + max(g.queue_size // processes, threads)
    return ProcessGrading(
        server.settings,
        processes,
        threads,
        capacity,
        on_graded=server.record_graded,
        on_crash=server.record_crash,
        metrics=server.metrics,
    )
