"""The grader's own telemetry, recognised in one place.

What otel-oracles emits (grade spans and ``gen_ai.evaluation.result`` log records) carries
its instrumentation scope and one of its ``service.name``s, and often the trace id of the run
it graded. Graded again it would loop forever in a pipeline that sends everything back to
``serve``, and offline it would add spans no convention recognises to the agent's trace
(making checks that need every span report missing evidence). So ``serve`` skips it on
receipt, and offline ``grade`` and ``inspect`` leave it out when reading files, both through
``own_telemetry_check``.

Traces are untrusted: the scope name and ``service.name`` are strings any sender can write.
A marker alone would let a sender put its ``delete_records`` tool span in scope
``otel_oracles`` and have it skipped, the run then passing on the spans that are left. So a
record is skipped only when it is marked *and* has the shape the emitter writes
(``OWN_SHAPE``): a span named ``grade {contract id}`` carrying the grade attributes and
nothing else, whose events are evaluation results; a log record that is a body-less
evaluation result with only evaluation attributes. Such a record can say nothing about what
the agent did, so skipping it hides nothing. Anything else under the markers is graded like
any record (a convention may recognise it; if none does, checks that need every span report
it as unrecognised, never as a pass).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from otel_oracles._frozen import FrozenValue, set_field
from otel_oracles.emit import _names as n
from otel_oracles.emit._names import INSTRUMENTATION_SCOPE
from otel_oracles.emit._names import SERVICE_NAME as DEFAULT_SERVICE_NAME
from otel_oracles.model.span import LogRecord, SpanRecord


# A plain class, not a dataclass: the methods ``dataclasses`` generates are compiled from
# source at every start (``otel_oracles._frozen``).
class OwnShape(FrozenValue):
    """What a grade span and an evaluation log record hold, as ``emit._otel`` writes them:
    the keys every one carries (``*_required``) and every key one may carry (``*_allowed``).
    Handed to the core as ``as_tuple()`` so both sides check one definition."""

    __slots__ = (
        "event_allowed",
        "event_name",
        "log_allowed",
        "log_required",
        "span_allowed",
        "span_prefix",
        "span_required",
    )
    span_prefix: str
    span_required: tuple[str, ...]
    span_allowed: frozenset[str]
    event_name: str
    event_allowed: frozenset[str]
    log_required: tuple[str, ...]
    log_allowed: frozenset[str]

    def __init__(
        self,
        span_prefix: str,
        span_required: tuple[str, ...],
        span_allowed: frozenset[str],
        event_name: str,
        event_allowed: frozenset[str],
        log_required: tuple[str, ...],
        log_allowed: frozenset[str],
    ) -> None:
        set_field(self, "span_prefix", span_prefix)
        set_field(self, "span_required", span_required)
        set_field(self, "span_allowed", span_allowed)
        set_field(self, "event_name", event_name)
        set_field(self, "event_allowed", event_allowed)
        set_field(self, "log_required", log_required)
        set_field(self, "log_allowed", log_allowed)

    def as_tuple(
        self,
    ) -> tuple[str, list[str], set[str], str, set[str], list[str], set[str]]:
        """The fields in order, as the core's ``Batch.without_own`` takes them."""
        return (
            self.span_prefix,
            list(self.span_required),
            set(self.span_allowed),
            self.event_name,
            set(self.event_allowed),
            list(self.log_required),
            set(self.log_allowed),
        )


_CONTRACT = (n.CONTRACT_ID, n.CONTRACT_VERSION)
_EVENT = frozenset(
    {
        n.EVALUATION_NAME,
        n.EVALUATION_SCORE_VALUE,
        n.EVALUATION_SCORE_LABEL,
        n.EVALUATION_EXPLANATION,
        n.ERROR_TYPE,
    }
)
OWN_SHAPE = OwnShape(
    span_prefix=f"{n.GRADE_SPAN_PREFIX} ",
    # The contract id first: the span's name must be the prefix followed by it.
    span_required=(*_CONTRACT, n.VERDICT, n.CHECKS),
    span_allowed=frozenset(
        {
            *_CONTRACT,
            n.CONTRACT_HASH,
            n.VERDICT,
            n.CHECKS,
            n.INVARIANT_FAILURES,
            n.TOLERATED_FAILURES,
            n.BUDGET_EXHAUSTED,
            n.MISSING_EVIDENCE,
            n.ERRORS,
            n.AGENT_NAME,
            n.PROVIDER_NAME,
            n.REQUEST_MODEL,
            n.SUBJECT,
        }
    ),
    event_name=n.EVALUATION_EVENT,
    event_allowed=_EVENT,
    log_required=(n.EVALUATION_NAME, *_CONTRACT, n.OUTCOME),
    log_allowed=_EVENT
    | {
        *_CONTRACT,
        n.CONTRACT_HASH,
        n.ORACLE_TYPE,
        n.LAYER,
        n.OUTCOME,
        n.PASSED,
        n.BUDGET_USED,
        n.BUDGET_LIMIT,
        n.STEP_INDEXES,
        n.EVALUATED_SPAN_IDS,
    },
)
"""The shape of the grader's own records (see the module docstring)."""


SERVICE_NAME_ENV: tuple[str, ...] = (
    "OTEL_SERVICE_NAME",
    "OTEL_RESOURCE_ATTRIBUTES",
    "OTEL_EXPERIMENTAL_RESOURCE_DETECTORS",
)
"""What the SDK's ``Resource.create`` reads a service name from: the two variables its
default (``otel``) detector reads, and the list of further detectors to run. With none of
them set, ``service.name`` is ``unknown_service:...`` and the emitter uses the default."""


def own_markers() -> tuple[str, frozenset[str]]:
    """The emitter's instrumentation scope and the ``service.name``s it may use (the default
    and the one ``OTEL_SERVICE_NAME`` / ``OTEL_RESOURCE_ATTRIBUTES`` give it now).

    Offline ``grade`` asks on every run, so when no variable of ``SERVICE_NAME_ENV`` is set
    the answer is the default alone, without the SDK's ``resources`` (its import, a thread
    pool for its detectors and an entry-point scan were ~2% of a one-trace ``grade``). Were
    a detector to name the service otherwise, the grader's spans under that name would be
    graded as unrecognised spans: missing evidence, never a pass."""
    if not any(os.environ.get(name) for name in SERVICE_NAME_ENV):
        return INSTRUMENTATION_SCOPE, frozenset({DEFAULT_SERVICE_NAME})
    from otel_oracles.emit._resource import grader_record

    current = str(grader_record().attributes.get("service.name", DEFAULT_SERVICE_NAME))
    return INSTRUMENTATION_SCOPE, frozenset({current, DEFAULT_SERVICE_NAME})


def is_marked_own(
    record: SpanRecord | LogRecord,
    scope: str = INSTRUMENTATION_SCOPE,
    services: Collection[str] = (),
) -> bool:
    """The grader's markers: its instrumentation scope, or a resource ``service.name`` it
    uses. Necessary, never sufficient (any sender can write them): see ``has_own_shape``."""
    if record.scope_name == scope:
        return True
    return record.resource.get("service.name") in services


def _keys_fit(attrs: Mapping[str, Any], required: Iterable[str], allowed: Collection[str]) -> bool:
    return all(k in attrs for k in required) and all(k in allowed for k in attrs)


def has_own_shape(record: SpanRecord | LogRecord, shape: OwnShape = OWN_SHAPE) -> bool:
    """True when ``record`` is a grade span or an evaluation log record in content, so
    leaving it out cannot hide anything an agent did (see the module docstring)."""
    attrs = record.attributes
    if isinstance(record, LogRecord):
        return (
            record.event_name == shape.event_name
            and record.body in (None, "")
            and _keys_fit(attrs, shape.log_required, shape.log_allowed)
        )
    contract = attrs.get(shape.span_required[0])
    return (
        isinstance(contract, str)
        and record.name == shape.span_prefix + contract
        and not record.links
        and _keys_fit(attrs, shape.span_required, shape.span_allowed)
        and all(
            e.name == shape.event_name and all(k in shape.event_allowed for k in e.attributes)
            for e in record.events
        )
    )


def is_own_telemetry(
    record: SpanRecord | LogRecord,
    scope: str = INSTRUMENTATION_SCOPE,
    services: Collection[str] = (),
) -> bool:
    """True for what the grader itself emitted: marked as its own (``is_marked_own``) and
    shaped as its own (``has_own_shape``). A marked record of any other shape is not."""
    return is_marked_own(record, scope, services) and has_own_shape(record)


class OwnTelemetryCheck:
    """``is_own_telemetry`` bound to the grader's markers. ``marked`` is the cheap half, the
    same for every record of one resource and scope, so a receiver can decide it once per
    ``ScopeSpans`` and look at the shape of only the records it marks."""

    __slots__ = ("scope", "services")

    def __init__(self, scope: str, services: Collection[str]) -> None:
        self.scope = scope
        self.services = frozenset(services)

    def marked(self, record: SpanRecord | LogRecord) -> bool:
        """``is_marked_own`` with these markers."""
        return is_marked_own(record, self.scope, self.services)

    @staticmethod
    def shaped(record: SpanRecord | LogRecord) -> bool:
        """``has_own_shape``: the other half, for a record already known to be marked."""
        return has_own_shape(record)

    def __call__(self, record: SpanRecord | LogRecord) -> bool:
        return self.marked(record) and has_own_shape(record)


def own_telemetry_check(extra_services: Iterable[str] = ()) -> OwnTelemetryCheck:
    """``is_own_telemetry`` bound to the grader's markers, plus ``extra_services`` (serve's
    ``self_telemetry.skip_service_names``)."""
    scope, services = own_markers()
    return OwnTelemetryCheck(scope, services | frozenset(extra_services))
