"""One trace's spans and log records -> a ``Trace`` with its span tree (shared offline/online)."""

from __future__ import annotations

from collections.abc import Iterable
from operator import attrgetter

from otel_oracles.model.span import LogRecord, SpanRecord, Trace


def build_trace(trace_id: str, spans: list[SpanRecord], logs: Iterable[LogRecord] = ()) -> Trace:
    """Assemble the spans (and log records) of one trace; never raises on broken trees.

    - ``children[parent_id]`` lists a span's children by start time, ties in arrival order.
    - ``roots``: spans without a parent id, then orphans (parent id names no span here), then
      spans caught in a parent cycle (each treated as an orphan so nothing is lost), each group
      by start time.
    - ``spans``: every span once, by start time, ties in tree order (parent before child,
      siblings in ``children`` order), so a step list built from it is deterministic.
    - A span id seen twice keeps its first record (exporters retry whole batches); a log
      record equal to one already attached (same span, event name, time, body, attributes)
      is attached once.
    - Log records that name an event (``event_name`` or the legacy ``event.name`` attribute,
      already resolved by the decoders) and a span of this trace become ``EventRecord``s on
      that span, merged with its span events by time; all other log records are counted in
      ``unattached_logs``. Re-assembling with the same records is idempotent: log-based
      events attached earlier are replaced, not duplicated.
    """
    by_id = {span.span_id: span for span in spans}
    if len(by_id) == len(spans):
        unique = spans
    else:  # keep the first record of a repeated span id, in arrival order
        unique = _first_of_each(spans)
        by_id = {span.span_id: span for span in unique}

    children: dict[str, list[SpanRecord]] = {}
    top: list[SpanRecord] = []
    orphans: list[SpanRecord] = []
    for span in unique:
        parent = span.parent_span_id
        if not parent:
            top.append(span)
        elif parent in by_id and parent != span.span_id:
            kids = children.get(parent)
            if kids is None:
                children[parent] = [span]
            else:
                kids.append(span)
        else:
            orphans.append(span)
    for kids in children.values():
        if len(kids) > 1:
            kids.sort(key=_START)  # stable: ties keep arrival order
    top.sort(key=_START)
    orphans.sort(key=_START)

    ordered: list[SpanRecord] = []
    _walk(top, children, ordered)
    _walk(orphans, children, ordered)
    if len(ordered) < len(unique):
        # Only spans on a parent cycle are unreachable from a root or an orphan; keep them,
        # each cycle entered at its earliest span, as orphans.
        reached = {span.span_id for span in ordered}
        for span in sorted(unique, key=_START):
            if span.span_id not in reached:
                orphans.append(span)
                before = len(ordered)
                _walk([span], children, ordered, reached)
                reached.update(s.span_id for s in ordered[before:])
    ordered.sort(key=_START)  # stable: ties keep tree order

    unattached = _attach_logs(trace_id, by_id, children, logs)
    return Trace(
        trace_id=trace_id,
        spans=ordered,
        roots=top + orphans,
        children=children,
        orphans=orphans,
        unattached_logs=unattached,
    )


_START = attrgetter("start_ns")


def _first_of_each(spans: list[SpanRecord]) -> list[SpanRecord]:
    seen: set[str] = set()
    out = []
    for span in spans:
        if span.span_id not in seen:
            seen.add(span.span_id)
            out.append(span)
    return out


def _walk(
    starts: list[SpanRecord],
    children: dict[str, list[SpanRecord]],
    out: list[SpanRecord],
    stop: set[str] | None = None,
) -> None:
    """Pre-order depth-first walk, iterative (agent traces can nest deeply). Without parent
    cycles every span is reached once; ``stop`` guards the walk into a cycle."""
    stack = starts[::-1]
    pop = stack.pop
    push = stack.extend
    append = out.append
    get = children.get
    while stack:
        span = pop()
        if stop is not None:
            if span.span_id in stop:
                continue
            stop.add(span.span_id)
        append(span)
        kids = get(span.span_id)
        if kids:
            push(kids[::-1])


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
