"""Wire the stages into a ``GradingServer``: decode -> online assembly -> map -> grade -> emit.

The server module itself only knows callables; this is the one place that names the
other stages, so the server stays testable and the stages stay swappable.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from otel_oracles.emit import own_telemetry_check
from otel_oracles.server._grader import load_grading, ready_grader
from otel_oracles.server._service import GradingServer, ResultsEmitter, Signal, decoded_parts
from otel_oracles.server._spool import spool_for
from otel_oracles.server.config import ConfigError, ServeSettings, grading_processes

logger = logging.getLogger(__name__)


def _decode(
    payload: bytes, content_type: str, signal: Signal, for_transfer: bool = False
) -> tuple[Any, Any, int, list[str]]:
    from otel_oracles.decode import decode

    return decoded_parts(decode(payload, content_type, signal=signal, for_transfer=for_transfer))


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
