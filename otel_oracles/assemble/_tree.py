"""One trace's spans and log records -> a ``Trace`` with its span tree (shared offline/online)."""

from __future__ import annotations

from collections.abc import Iterable

from otel_oracles._native import span_tree
from otel_oracles.model.span import LogRecord, SpanRecord, Trace


def build_trace(trace_id: str, spans: list[SpanRecord], logs: Iterable[LogRecord] = ()) -> Trace:
    """Assemble the spans (and log records) of one trace; never raises on broken trees.

    The tree is the compiled core's (``native/core/src/span_tree.rs``, whose doc comment
    holds every rule; the offline assembler builds it in the call that releases a trace):

    - ``children[parent_id]`` lists a span's children by start time, ties in arrival order
      within one instrumentation scope and by end time across scopes (OpenTelemetry's
      JavaScript SDKs keep start times to the millisecond, and OTLP groups a batch by
      scope, so arrival order is the order spans ended within one scope only).
    - ``roots``: spans without a parent id or whose missing parent is another process's
      (``parent_is_remote``: where this service's part of a distributed trace begins), then
      orphans (parent id names no span here, and nothing says it is remote: the parent may
      be lost or still open), then spans caught in a parent cycle (each treated as an
      orphan so nothing is lost), each group by start time.
    - ``spans``: every span once, by start time, ties in tree order (parent before child,
      siblings in ``children`` order), so a step list built from it is deterministic.
    - A span id seen twice keeps its first record (exporters retry whole batches); a log
      record equal to one already attached (same span, event name, time, body, attributes)
      is attached once.
    - Log records that name an event (``event_name`` or the legacy ``event.name`` attribute,
      already resolved by the decoders) and a span of this trace become ``EventRecord``s on
      that span, merged with its span events by time (``attach_logs``); all other log
      records are counted in ``unattached_logs``. Re-assembling with the same records is
      idempotent: log-based events attached earlier are replaced, not duplicated.
    """
    trace = span_tree(trace_id, spans if type(spans) is list else list(spans))
    if logs:
        attach_logs(trace, logs)
    return trace


def attach_logs(trace: Trace, logs: Iterable[LogRecord]) -> None:
    """Attach ``logs`` to the spans of ``trace`` (built without them) as ``build_trace``
    says, and count the rest in ``trace.unattached_logs``."""
    by_id = {span.span_id: span for span in trace.spans}
    trace.unattached_logs += _attach_logs(trace.trace_id, by_id, trace.children, logs)


def _attach_logs(
    trace_id: str,
    by_id: dict[str, SpanRecord],
    children: dict[str, list[SpanRecord]],
    logs: Iterable[LogRecord],
) -> int:
    unattached = 0
    per_span: dict[str, list[LogRecord]] = {}
    seen: dict[tuple[str, str, int], list[LogRecord]] = {}
    for log in logs:
        if not (log.event_name and log.trace_id == trace_id and log.span_id in by_id):
            unattached += 1
            continue
        span_id = _emitting_span(log.span_id, log.time_ns, children)
        # The same record twice (a retried export, or a file set holding both the raw bodies
        # and the canonical JSON of one run) is one event; equal content decides, not identity.
        key = (span_id, log.event_name, log.time_ns)
        twins = seen.setdefault(key, [])
        if any(_same_log(log, twin) for twin in twins):
            continue
        twins.append(log)
        per_span.setdefault(span_id, []).append(log)
    for span_id, records in per_span.items():
        span = by_id[span_id]
        events = [e for e in span.events if not e.from_log]
        events.extend(r.as_event() for r in records)
        events.sort(key=lambda e: e.time_ns)
        span.events = events
    return unattached


def _emitting_span(span_id: str, time_ns: int, children: dict[str, list[SpanRecord]]) -> str:
    """The span a log-based event was emitted in: the linked span, or the one child of it
    (then grandchild ...) that was running at the record's time.

    Some instrumentations start their model-call span without making it current, so the events
    they emit for that call carry the enclosing span's id (OpenLLMetry's Anthropic events mode
    links every message event to the application span around the calls). A record emitted
    while exactly one child was open belongs to that child; when none or several children were
    open (concurrent calls) the link is kept as recorded."""
    while True:  # a child without an end time (0) has no known window: never "open"
        open_now = [
            kid for kid in children.get(span_id, ()) if kid.start_ns <= time_ns <= kid.end_ns
        ]
        if len(open_now) != 1:
            return span_id
        span_id = open_now[0].span_id


def _same_log(a: LogRecord, b: LogRecord) -> bool:
    return a.body == b.body and dict(a.attributes) == dict(b.attributes)
