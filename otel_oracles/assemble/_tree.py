"""One trace's spans and log records -> a ``Trace`` with its span tree (shared offline/online)."""

from __future__ import annotations

from collections.abc import Iterable
from operator import attrgetter

from otel_oracles.model.span import LogRecord, SpanRecord, Trace


def build_trace(trace_id: str, spans: list[SpanRecord], logs: Iterable[LogRecord] = ()) -> Trace:
    """Assemble the spans (and log records) of one trace; never raises on broken trees.

    - ``children[parent_id]`` lists a span's children by start time, ties in arrival order
      within one instrumentation scope and by end time across scopes (``_order_ties``).
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
        elif span.parent_is_remote and parent != span.span_id:
            top.append(span)
        else:
            orphans.append(span)
    for kids in children.values():
        if len(kids) > 1:
            kids.sort(key=_START)  # stable: ties keep arrival order
            _order_ties(kids)
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
_UNENDED = 1 << 64


def _order_ties(kids: list[SpanRecord]) -> None:
    """Reorder, in place, siblings sorted by start time whose start times are equal.

    OpenTelemetry's JavaScript SDKs keep a span's start time to the millisecond, so a tool
    span and the model call the loop makes right after it often start at the same time. An
    exporter sends spans as they end, but OTLP groups each batch by instrumentation scope
    (every model call of one scope, then every tool of another), so arrival order is the
    order the spans ended within one scope only. Ties are therefore merged: each scope's
    spans keep their arrival order, and between scopes the span that ended first goes first
    (of two siblings that ran one after the other, the first ended before the second
    started). Siblings that really ran at once have no order to keep; a span with no end
    (or one before its start) ends last."""
    for first in range(len(kids) - 1):
        if kids[first].start_ns == kids[first + 1].start_ns:
            break
    else:
        return
    i = first
    while i < len(kids):
        j = i + 1
        while j < len(kids) and kids[j].start_ns == kids[i].start_ns:
            j += 1
        if j - i > 1:
            kids[i:j] = _merge_by_scope(kids[i:j])
        i = j


def _merge_by_scope(tied: list[SpanRecord]) -> list[SpanRecord]:
    """``tied`` (equal start times, in arrival order) merged per ``_order_ties``."""
    queues: dict[str, list[SpanRecord]] = {}
    for span in tied:
        queues.setdefault(span.scope_name, []).append(span)
    if len(queues) == 1:
        return tied
    heads = list(queues.values())
    out: list[SpanRecord] = []
    while heads:
        best = min(range(len(heads)), key=lambda q: _end(heads[q][0]))  # first on ties
        out.append(heads[best].pop(0))
        if not heads[best]:
            del heads[best]
    return out


def _end(span: SpanRecord) -> int:
    end = span.end_ns
    return end if end and end >= span.start_ns else _UNENDED


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
