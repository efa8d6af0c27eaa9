"""Runs split over several traces, assembled into one subject (offline).

An agent run is normally one trace, but not always: a framework that starts a sub-agent or a
background job in a new trace points back to the span that started it with a span link, and
a conversation whose turns are traced separately shares a ``gen_ai.conversation.id`` (or
OpenInference's ``session.id``). A contract grades the run, so such traces are joined into one
``Trace`` before mapping: all their spans, with a linked trace's root hung under the span it
links to (so the sub-run sits where it was started, as if the context had propagated), other
roots side by side in time order.

Offline input is a stream, and the trace a later one links to may already have passed, so
every trace waits in a first-in, first-out window of ``window_spans`` spans before it is
released; traces that share a link target or a session id on the way are released together,
at the position of the earliest one. Memory stays bounded by the window; traces of one run
farther apart in the input than the window are graded separately.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from otel_oracles.assemble._tree import build_trace
from otel_oracles.model.span import SESSION_ATTRIBUTES, SpanRecord, Trace

DEFAULT_WINDOW_SPANS = 20_000
"""Spans the join window holds (a few tens of MB; see docs/ingest.md)."""


@dataclass(slots=True)
class SessionStats:
    """What joining did, for the run summary."""

    subjects: int = 0
    """Subjects assembled from more than one trace."""
    traces: int = 0
    """Traces that went into them."""

    def summary(self) -> str:
        if not self.subjects:
            return ""
        return (
            f"{self.traces} traces joined into {self.subjects} run(s) by span links or a "
            "shared conversation/session id"
        )


def join_keys(trace_id: str, spans: Iterable[SpanRecord]) -> set[str]:
    """What may tie the trace ``trace_id`` (of ``spans``) to others: its own id, the traces
    its spans link to, and its session ids (``SESSION_ATTRIBUTES``)."""
    keys = {"trace:" + trace_id}
    for span in spans:
        for link in span.links:
            if link.trace_id and link.trace_id != trace_id:
                keys.add("trace:" + link.trace_id)
        attrs = span.attributes
        for key in SESSION_ATTRIBUTES:
            if key in attrs:
                value = attrs[key]
                if isinstance(value, str) and value:
                    keys.add(f"{key}:{value}")
    return keys


@dataclass(slots=True)
class _Group:
    traces: list[Trace]
    keys: set[str]
    spans: int
    alive: bool = True


@dataclass(slots=True)
class SessionJoiner:
    """The window: ``add`` a trace, get the traces (joined or not) that leave the window."""

    window_spans: int = DEFAULT_WINDOW_SPANS
    stats: SessionStats = field(default_factory=SessionStats)
    _order: deque[_Group] = field(default_factory=deque)
    _owner: dict[str, _Group] = field(default_factory=dict)
    _held: int = 0

    def add(self, trace: Trace) -> list[Trace]:
        keys = join_keys(trace.trace_id, trace.spans)
        found: list[_Group] = []
        for key in keys:
            group = self._owner.get(key)
            if group is not None and all(group is not g for g in found):
                found.append(group)
        if found:
            # The earliest group keeps its place in the window; the others fold into it.
            target = found[0] if len(found) == 1 else min(found, key=self._order.index)
            for other in found:
                if other is not target:
                    target.traces.extend(other.traces)
                    target.keys |= other.keys
                    target.spans += other.spans
                    other.alive = False
            target.traces.append(trace)
            target.keys |= keys
            target.spans += len(trace.spans)
        else:
            target = _Group([trace], keys, len(trace.spans))
            self._order.append(target)
        for key in target.keys:
            self._owner[key] = target
        self._held += len(trace.spans)
        released: list[Trace] = []
        while self._held > self.window_spans and self._order:
            released.extend(self._release_first())
        return released

    def flush(self) -> list[Trace]:
        released: list[Trace] = []
        while self._order:
            released.extend(self._release_first())
        return released

    def _release_first(self) -> list[Trace]:
        group = self._order.popleft()
        if not group.alive:
            return []
        group.alive = False
        for key in group.keys:
            if self._owner.get(key) is group:
                del self._owner[key]
        self._held -= group.spans
        if len(group.traces) > 1:
            self.stats.subjects += 1
            self.stats.traces += len(group.traces)
        return [merge_traces(group.traces)]


def join_sessions(
    traces: Iterable[Trace],
    *,
    window_spans: int = DEFAULT_WINDOW_SPANS,
    stats: SessionStats | None = None,
) -> Iterator[Trace]:
    """``traces`` with every run split over several of them joined into one (see the
    module docstring); order otherwise kept."""
    joiner = SessionJoiner(window_spans, stats if stats is not None else SessionStats())
    for trace in traces:
        yield from joiner.add(trace)
    yield from joiner.flush()


def merge_traces(traces: list[Trace]) -> Trace:
    """One ``Trace`` of several: identified by the earliest one; a root span that links to a
    span of another member becomes that span's child."""
    if len(traces) == 1:
        return traces[0]
    ordered = sorted(traces, key=lambda t: first_start(t.spans))
    span_ids = {s.span_id for t in ordered for s in t.spans}
    spans: list[SpanRecord] = []
    for t in ordered:
        for span in t.spans:
            if not span.parent_span_id:
                link = next(
                    (
                        ln
                        for ln in span.links
                        if ln.trace_id != span.trace_id and ln.span_id in span_ids
                    ),
                    None,
                )
                if link is not None:
                    span = dataclasses.replace(span, parent_span_id=link.span_id)
            spans.append(span)
    joined = build_trace(ordered[0].trace_id, spans)
    joined.incomplete = any(t.incomplete for t in ordered)
    joined.unattached_logs = sum(t.unattached_logs for t in ordered)
    return joined


def first_start(spans: Iterable[SpanRecord]) -> int:
    """When the earliest of ``spans`` started: joined traces are ordered by it, and the
    subject is named by the first."""
    return min((s.start_ns for s in spans), default=0)
