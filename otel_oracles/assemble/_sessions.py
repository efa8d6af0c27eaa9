"""Runs split over several traces, assembled into one subject (offline).

An agent run is normally one trace, but not always: a framework that starts a sub-agent or a
background job in a new trace points back to the span that started it with a span link, and
a conversation whose turns are traced separately shares a ``gen_ai.conversation.id`` (or
OpenInference's ``session.id``). A contract grades the run, so such traces are joined into one
``Trace`` before mapping: all their spans, with a linked trace's root hung under the span it
links to (so the sub-run sits where it was started, as if the context had propagated), other
roots side by side in time order.

Some frameworks start an agent called from a tool in a trace of its own with no link back
(Koog starts every agent's ``create_agent`` span as a root, and its conversation id is the
agent's own): the delegating trace shows a plain tool call, and the agent's calls are in a
trace nothing ties to it. Such a trace is joined too when exactly one tool call fits it
(``delegations``): a GenAI ``execute_tool`` span named after the agent (``gen_ai.tool.name``
equal to the root's ``gen_ai.agent.name`` or ``gen_ai.agent.id``), of the same service, whose
time holds the agent trace's whole root span; the agent's root is hung under that call. Where
two calls fit one agent trace, or two agent traces one call (concurrent runs of one service),
nothing is joined: a wrong join could move one run's calls into another's verdict. ``serve``
does not join this way (its lightweight spans keep no tool or agent names), so there such a
run is graded as two subjects.

Offline input is a stream, and the trace a later one links to may already have passed, so
every trace waits in a first-in, first-out window of ``window_spans`` spans before it is
released; traces that share a link target or a session id on the way (or a delegation) are
released together, at the position of the earliest one. Memory stays bounded by the window;
traces of one run farther apart in the input than the window are graded separately.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from otel_oracles._native import join_facts
from otel_oracles.assemble._tree import build_trace
from otel_oracles.decode import WireSpan
from otel_oracles.model.span import SpanRecord, Trace

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
            f"{self.traces} traces joined into {self.subjects} run(s) by span links, a "
            "shared conversation/session id or a tool call that ran an agent"
        )


def join_keys(trace_id: str, spans: Iterable[SpanRecord | WireSpan]) -> set[str]:
    """What may tie the trace ``trace_id`` (of ``spans``) to others: its own id, the traces
    its spans link to, and its session ids (``SESSION_ATTRIBUTES``)."""
    return join_facts(trace_id, spans)[0]


AGENT_NAME_ATTRIBUTES: tuple[str, ...] = ("gen_ai.agent.name", "gen_ai.agent.id")
"""Where a root span names the agent whose run its trace is."""
AGENT_OPERATIONS = frozenset({"invoke_agent", "create_agent"})


class AgentRoot(NamedTuple):
    """A trace that is one agent's run started as a root of its own (``delegations``).

    A named tuple, as ``ToolCallSpan``: immutable, and built at a third of what a frozen
    dataclass costs (whose ``__init__`` sets each field through ``object.__setattr__``),
    for every tool call of every trace that passes the window."""

    trace_id: str
    span_id: str
    service: str
    name: str
    start_ns: int
    end_ns: int


class ToolCallSpan(NamedTuple):
    """A GenAI ``execute_tool`` span that may have run an agent traced apart."""

    trace_id: str
    span_id: str
    service: str
    name: str
    start_ns: int
    end_ns: int

    def holds(self, agent: AgentRoot) -> bool:
        """Whether ``agent``'s trace may be the run this call started: another trace of the
        same service, the agent named as the tool is, its root within the call's time."""
        return (
            agent.trace_id != self.trace_id
            and agent.service == self.service
            and agent.name == self.name
            and self.start_ns <= agent.start_ns
            and 0 < agent.end_ns <= self.end_ns
        )


def _service(span: SpanRecord) -> str:
    value = span.resource.get("service.name")
    return value if isinstance(value, str) else ""


def agent_root(trace: Trace) -> AgentRoot | None:
    """``trace`` as an agent's run started as a root: its one root span (linking nowhere,
    since links join already) is a GenAI agent span naming its agent."""
    return _root_agent(trace.trace_id, [s for s in trace.spans if not s.parent_span_id])


def _root_agent(trace_id: str, roots: list[SpanRecord]) -> AgentRoot | None:
    """``agent_root`` of the trace ``trace_id`` whose root spans are ``roots``."""
    if len(roots) != 1 or roots[0].links:
        return None
    root = roots[0]
    attrs = root.attributes
    if attrs.get("gen_ai.operation.name") not in AGENT_OPERATIONS:
        return None
    name = next(
        (v for k in AGENT_NAME_ATTRIBUTES if isinstance(v := attrs.get(k), str) and v), None
    )
    if name is None:
        return None
    return AgentRoot(trace_id, root.span_id, _service(root), name, root.start_ns, root.end_ns)


def tool_call_spans(trace: Trace) -> list[ToolCallSpan]:
    """The GenAI ``execute_tool`` spans of ``trace`` that name their tool."""
    trace_id = trace.trace_id
    return [_tool_call(trace_id, key, span) for key, span in join_facts(trace_id, trace.spans)[2]]


_CallKey = tuple[str, str]
"""(service, tool or agent name): where a tool call and the agent trace it may have run meet."""
_PendingCall = tuple[_CallKey, SpanRecord]
"""A tool call of ``tool_call_spans`` not built yet: its key and its span."""


def arrival(trace: Trace) -> tuple[set[str], AgentRoot | None, list[_PendingCall]]:
    """``join_keys``, ``agent_root`` and the ``tool_call_spans`` of ``trace`` from one walk
    over its spans in the compiled core (``join_facts``): what the window asks of every
    trace that arrives. A call comes as its key and span (``_tool_call`` builds it): most
    calls only wait in the window and leave unclaimed, so building each as a
    ``ToolCallSpan`` is left to the few that meet an agent trace of their name."""
    trace_id = trace.trace_id
    keys, roots, calls = join_facts(trace_id, trace.spans)
    return keys, _root_agent(trace_id, roots), calls


def _tool_call(trace_id: str, key: _CallKey, span: SpanRecord) -> ToolCallSpan:
    """The ``ToolCallSpan`` of a call ``arrival`` found in the trace ``trace_id``."""
    return ToolCallSpan(trace_id, span.span_id, key[0], key[1], span.start_ns, span.end_ns)


def delegations(traces: list[Trace]) -> dict[str, str]:
    """Root span id of an agent trace -> span id of the tool call that ran it, among
    ``traces``, for every agent trace exactly one call fits and that call no other agent
    trace (see the module docstring)."""
    agents = [a for a in map(agent_root, traces) if a is not None]
    if not agents:
        return {}
    calls = [c for t in traces for c in tool_call_spans(t)]
    fits = {a.span_id: [c for c in calls if c.holds(a)] for a in agents}
    taken: dict[str, int] = {}
    for found in fits.values():
        for call in found:
            taken[call.span_id] = taken.get(call.span_id, 0) + 1
    return {
        root: found[0].span_id
        for root, found in fits.items()
        if len(found) == 1 and taken[found[0].span_id] == 1
    }


_Waiting = tuple[bool, _CallKey, str]
"""A waiting entry: (an agent root rather than a call, (service, name), trace or span id)."""


@dataclass(slots=True)
class _Group:
    traces: list[Trace]
    keys: set[str]
    spans: int
    alive: bool = True
    waiting: list[_Waiting] = field(default_factory=list)
    """The agent roots and tool calls of its traces left waiting for a partner, so that they
    leave the window with the group without scanning its spans again."""


@dataclass(slots=True)
class SessionJoiner:
    """The window: ``add`` a trace, get the traces (joined or not) that leave the window."""

    window_spans: int = DEFAULT_WINDOW_SPANS
    stats: SessionStats = field(default_factory=SessionStats)
    _order: deque[_Group] = field(default_factory=deque)
    _owner: dict[str, _Group] = field(default_factory=dict)
    _held: int = 0
    _agents: dict[tuple[str, str], dict[str, AgentRoot]] = field(default_factory=dict)
    """Agent traces in the window no tool call has claimed: (service, agent name) -> trace
    id -> root."""
    _calls: dict[_CallKey, dict[str, tuple[str, SpanRecord]]] = field(default_factory=dict)
    """Tool calls in the window that claimed no agent trace: (service, tool name) -> span id
    -> (trace id, span), built as a ``ToolCallSpan`` only when an agent trace of that name
    arrives. Both leave with their trace (``_release_first``), so memory stays bounded by
    the window."""

    def add(self, trace: Trace) -> list[Trace]:
        keys, root, calls = arrival(trace)
        found: list[_Group] = []
        for key in keys:
            group = self._owner.get(key)
            if group is not None and all(group is not g for g in found):
                found.append(group)
        partners, waiting = self._delegation_partners(trace.trace_id, root, calls)
        for trace_id in partners:
            group = self._owner.get("trace:" + trace_id)
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
                    target.waiting += other.waiting
                    other.alive = False
            target.traces.append(trace)
            target.keys |= keys
            target.spans += len(trace.spans)
            target.waiting += waiting
        else:
            target = _Group([trace], keys, len(trace.spans), waiting=waiting)
            self._order.append(target)
        for key in target.keys:
            self._owner[key] = target
        self._held += len(trace.spans)
        released: list[Trace] = []
        while self._held > self.window_spans and self._order:
            released.extend(self._release_first())
        return released

    def _delegation_partners(
        self, trace_id: str, root: AgentRoot | None, calls: list[_PendingCall]
    ) -> tuple[list[str], list[_Waiting]]:
        """The traces in the window that the arriving trace (its ``agent_root`` and
        ``tool_call_spans``) delegated to or was delegated by (an agent trace and the one
        tool call that fits it, neither claimed yet; ambiguous fits join nothing), and the
        entries it left waiting: unmatched agent roots and calls wait in the window for a
        partner."""
        partners: list[str] = []
        left: list[_Waiting] = []
        if root is not None:
            key = (root.service, root.name)
            claimable = self._calls.get(key, {})
            fits = [
                c
                for c in (_tool_call(t, key, span) for t, span in claimable.values())
                if c.holds(root)
            ]
            if len(fits) == 1:
                del claimable[fits[0].span_id]
                partners.append(fits[0].trace_id)
            elif not fits:
                self._agents.setdefault(key, {})[root.trace_id] = root
                left.append((True, key, root.trace_id))
        agents, calls_waiting = self._agents, self._calls
        for key, span in calls:
            waiting = agents.get(key)
            if waiting:  # (most calls: no agent trace of their tool's name is waiting)
                call = _tool_call(trace_id, key, span)
                held = [a for a in waiting.values() if call.holds(a)]
                if len(held) == 1:
                    del waiting[held[0].trace_id]
                    partners.append(held[0].trace_id)
                    continue
                if held:
                    continue
            entries = calls_waiting.get(key)
            if entries is None:
                entries = calls_waiting[key] = {}
            span_id = span.span_id
            entries[span_id] = (trace_id, span)
            left.append((False, key, span_id))
        return partners, left

    def _forget_delegations(self, group: _Group) -> None:
        """Drop the waiting agent roots and calls of ``group``, which leaves the window (an
        entry a partner claimed meanwhile is gone already)."""
        agents: dict[tuple[str, str], dict[str, Any]] = self._agents
        calls: dict[tuple[str, str], dict[str, Any]] = self._calls
        for is_agent, key, id_ in group.waiting:
            index = agents if is_agent else calls
            entries = index.get(key)
            if entries is not None:
                entries.pop(id_, None)
                if not entries:
                    del index[key]
        group.waiting = []

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
        self._forget_delegations(group)
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
    span of another member becomes that span's child, and so does the root of an agent trace
    that one tool call of another member ran (``delegations``)."""
    if len(traces) == 1:
        return traces[0]
    ordered = sorted(traces, key=lambda t: first_start(t.spans))
    span_ids = {s.span_id for t in ordered for s in t.spans}
    adopted = delegations(ordered)
    spans: list[SpanRecord] = []
    for t in ordered:
        for span in t.spans:
            caller = adopted.get(span.span_id) if not span.parent_span_id else None
            if caller is not None:
                span = dataclasses.replace(span, parent_span_id=caller)
            elif not span.parent_span_id:
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
