"""The grader's own telemetry, recognised in one place.

What otel-oracles emits (grade spans, ``gen_ai.evaluation.result`` events, its log records)
carries its instrumentation scope and one of its ``service.name``s, and often the trace id of
the run it graded. Graded again it would loop forever in a pipeline that sends everything
back to ``serve``, and offline it would add spans no convention recognises to the agent's
trace (making checks that need every span report missing evidence). So ``serve`` skips it on
receipt, and offline ``grade`` and ``inspect`` leave it out when reading files, both through
``own_telemetry_check``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable

from otel_oracles.emit._names import INSTRUMENTATION_SCOPE
from otel_oracles.emit._names import SERVICE_NAME as DEFAULT_SERVICE_NAME
from otel_oracles.emit._resource import grader_resource
from otel_oracles.model.span import LogRecord, SpanRecord


def own_markers() -> tuple[str, frozenset[str]]:
    """The emitter's instrumentation scope and the ``service.name``s it may use (the default
    and the one ``OTEL_SERVICE_NAME`` / ``OTEL_RESOURCE_ATTRIBUTES`` give it now)."""
    current = str(grader_resource().attributes.get("service.name", DEFAULT_SERVICE_NAME))
    return INSTRUMENTATION_SCOPE, frozenset({current, DEFAULT_SERVICE_NAME})


def is_own_telemetry(
    record: SpanRecord | LogRecord,
    scope: str = INSTRUMENTATION_SCOPE,
    services: Collection[str] = (),
) -> bool:
    """True for what the grader itself emitted: its instrumentation scope, or a resource
    ``service.name`` it uses."""
    if record.scope_name == scope:
        return True
    return record.resource.get("service.name") in services


def own_telemetry_check(
    extra_services: Iterable[str] = (),
) -> Callable[[SpanRecord | LogRecord], bool]:
    """``is_own_telemetry`` bound to the grader's markers, plus ``extra_services`` (serve's
    ``self_telemetry.skip_service_names``)."""
    scope, services = own_markers()
    return functools.partial(
        is_own_telemetry, scope=scope, services=services | frozenset(extra_services)
    )
