"""One trace's spans and log records -> a ``Trace`` with its span tree (shared offline/online)."""

from __future__ import annotations

from collections.abc import Iterable

from otel_oracles._native import span_tree
from otel_oracles.model.span import LogRecord, SpanRecord, Trace


def build_trace(trace_id: str, spans: list[SpanRecord], logs: Iterable[LogRecord] = ()) -> Trace:
    """Assemble the spans (and log records) of one trace; never raises on broken trees.

    The tree and the log-based events are the compiled core's (``native/core/src/span_tree.rs``
    and ``log_events.rs``, whose doc comments hold every rule; the offline assembler builds
    both in the call that releases a trace):

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
      the span they were emitted in (the linked span, or the one child of it, then
      grandchild ..., running at the record's time: some instrumentations emit a model
      call's events under the enclosing span), merged with its span events by time; all
      other log records are counted in ``unattached_logs``. Re-assembling with the same
      records is idempotent: log-based events attached earlier are replaced, not
      duplicated.
    """
    return span_tree(trace_id, spans if type(spans) is list else list(spans), logs)
