"""Wire the stages into a ``GradingServer``: decode -> online assembly -> map -> grade -> emit.

The server module itself only knows callables; this is the one place that names the
other stages, so the server stays testable and the stages stay swappable.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Collection
from typing import Any

from otel_oracles.model.span import LogRecord, SpanRecord
from otel_oracles.server._service import GradingServer, ResultsEmitter, Signal, decoded_parts
from otel_oracles.server.config import ConfigError, ServeSettings

logger = logging.getLogger(__name__)

GRADER_SERVICE_NAME = "otel-oracles"
"""``service.name`` the grader's own providers use unless ``OTEL_SERVICE_NAME`` says otherwise."""


def _own_markers() -> tuple[str, frozenset[str]]:
    """The emitter's instrumentation scope and the ``service.name``s it may use."""
    from otel_oracles.emit import grader_resource
    from otel_oracles.emit._names import INSTRUMENTATION_SCOPE

    current = str(grader_resource().attributes.get("service.name", GRADER_SERVICE_NAME))
    return INSTRUMENTATION_SCOPE, frozenset({current, GRADER_SERVICE_NAME})


def is_own_telemetry(
    record: SpanRecord | LogRecord, scope: str = "otel_oracles", services: Collection[str] = ()
) -> bool:
    """True for what the grader itself emitted (its instrumentation scope, or a resource
    ``service.name`` it uses): grading that again would loop forever in a pipeline that
    sends everything back to the grader."""
    if record.scope_name == scope:
        return True
    return record.resource.get("service.name") in services


def _decode(payload: bytes, content_type: str, signal: Signal) -> tuple[Any, Any, int, list[str]]:
    from otel_oracles.decode import decode

    return decoded_parts(decode(payload, content_type, signal=signal))


def load_grading(settings: ServeSettings) -> tuple[list[Any], Any]:
    """Contracts and conventions, validated before anything listens (serve refuses to start
    on any error)."""
    from otel_oracles.mapping import load_conventions
    from otel_oracles.model.contract import discover_contract_files, load_contract

    if not settings.grading.contracts:
        raise ConfigError("no contracts given", source="grading.contracts")
    files = discover_contract_files(list(settings.grading.contracts))
    if not files:
        raise ConfigError(
            f"no contract files found under {[str(p) for p in settings.grading.contracts]}",
            source="grading.contracts",
        )
    contracts = [load_contract(f) for f in files]
    conventions = load_conventions(list(settings.grading.conventions))
    return contracts, conventions


def create_server(settings: ServeSettings, emitter: ResultsEmitter | None = None) -> GradingServer:
    """A ready-to-start server; ``emitter`` defaults to the OTel emitter (standard
    ``OTEL_EXPORTER_OTLP_*`` variables)."""
    from otel_oracles.assemble import build_trace
    from otel_oracles.pipeline import grade_trace

    contracts, conventions = load_grading(settings)
    if emitter is None:
        from otel_oracles.emit import build_emitter

        emitter = build_emitter(export="otlp")
    scope, services = _own_markers()
    services = services | frozenset(settings.self_telemetry.skip_service_names)
    server = GradingServer(
        settings,
        grade=functools.partial(grade_trace, contracts=contracts, conventions=conventions),
        emitter=emitter,
        build_trace=build_trace,
        decode=_decode,
        is_own=functools.partial(is_own_telemetry, scope=scope, services=services),
    )
    logger.info("loaded", extra={"contracts": [c.id for c in contracts]})
    return server
