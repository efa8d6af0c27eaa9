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

The compiled core does the mechanics (``native/core/src/session_join.rs``): reading each
trace's join keys, agent root and tool calls in one walk over its spans, whether records
(``join_keys``, ``join_facts``) or, for a trace the offline assembler released from natively
decoded spans, those spans at release (``JoinFacts``, handed over by
``OfflineAssembly.released`` to ``join_released``); the window and its groups
(``SessionJoiner``); and which agent roots hang under which calls in a joined run
(``delegations``); and merging each group that leaves the window into one ``Trace``
(``merge_traces``, ``native/python/src/log_events.rs``: the traces ordered by their earliest
span's start, ``log_events::merge_order``, the first naming the run; a root hung under the
tool call that ran its agent, else under the first span of another member it links to, as
a copy of its record; incomplete when any member was). Here each group is counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from otel_oracles._frozen import Value
from otel_oracles._native import JoinFacts
from otel_oracles._native import SessionJoiner as CoreJoiner
from otel_oracles._native import first_start as first_start  # serve's joiner orders by it
from otel_oracles._native import join_keys as join_keys  # serve's joiner reads the same keys
from otel_oracles._native import merge_traces as merge_traces
from otel_oracles.model.span import Trace

DEFAULT_WINDOW_SPANS = 20_000
"""Spans the join window holds (a few tens of MB; see docs/ingest.md)."""

ReleasedTrace = tuple[Trace, JoinFacts | None]
"""A trace as the offline assembler releases it (``OfflineAssembly.released``), with what the
join reads of it worked out from its decoded spans, or ``None`` when records built in Python
are among them (the join then reads its records)."""


# A plain class, not a dataclass: the methods ``dataclasses`` generates are compiled from
# source at every start (``otel_oracles._frozen``).
class SessionStats(Value):
    """What joining did, for the run summary."""

    __slots__ = ("subjects", "traces")
    subjects: int
    """Subjects assembled from more than one trace."""
    traces: int
    """Traces that went into them."""

    def __init__(self, subjects: int = 0, traces: int = 0) -> None:
        self.subjects = subjects
        self.traces = traces

    def summary(self) -> str:
        if not self.subjects:
            return ""
        return (
            f"{self.traces} traces joined into {self.subjects} run(s) by span links, a "
            "shared conversation/session id or a tool call that ran an agent"
        )


class SessionJoiner:
    """The window: ``add`` a trace, get the traces (joined or not) that leave the window.

    The core's window (``CoreJoiner``) holds the traces and hands back each group that
    leaves it; a group of several is one run, merged (the core's ``merge_traces``) and
    counted in ``stats``."""

    def __init__(
        self, window_spans: int = DEFAULT_WINDOW_SPANS, stats: SessionStats | None = None
    ) -> None:
        self._core = CoreJoiner(window_spans)
        self.stats = stats if stats is not None else SessionStats()

    @property
    def waiting(self) -> int:
        """Agent roots and tool calls in the window waiting for a partner: they leave with
        their trace, so this stays bounded by the window."""
        return self._core.waiting

    def add(self, trace: Trace, facts: JoinFacts | None = None) -> list[Trace]:
        """Let ``trace`` in (with its ``JoinFacts`` from its release, when known); the
        traces that leave the window."""
        return [self._subject(group) for group in self._core.add(trace, facts)]

    def flush(self) -> list[Trace]:
        return [self._subject(group) for group in self._core.flush()]

    def stream(self, released: Iterable[ReleasedTrace]) -> Iterator[Trace]:
        """``add`` of every trace, then ``flush``, as one stream of the traces that leave
        the window: the loop every trace of an offline run goes through, so a lone trace
        (nearly every group) is yielded as it is, without a Python call."""
        add, subject = self._core.add, self._subject
        for trace, facts in released:
            for group in add(trace, facts):
                yield group[0] if len(group) == 1 else subject(group)
        for group in self._core.flush():
            yield subject(group)

    def _subject(self, group: list[Trace]) -> Trace:
        """A group that leaves the window: a lone trace as it is, several merged into one
        run (``merge_traces``) and counted."""
        if len(group) == 1:
            return group[0]
        self.stats.subjects += 1
        self.stats.traces += len(group)
        return merge_traces(group)


def join_sessions(
    traces: Iterable[Trace],
    *,
    window_spans: int = DEFAULT_WINDOW_SPANS,
    stats: SessionStats | None = None,
) -> Iterator[Trace]:
    """``traces`` with every run split over several of them joined into one (see the
    module docstring); order otherwise kept. What ties each trace to others is read from
    its records."""
    return join_released(
        ((trace, None) for trace in traces), window_spans=window_spans, stats=stats
    )


def join_released(
    released: Iterable[ReleasedTrace],
    *,
    window_spans: int = DEFAULT_WINDOW_SPANS,
    stats: SessionStats | None = None,
) -> Iterator[Trace]:
    """``join_sessions`` of traces handed over with their ``JoinFacts`` where known (the
    offline assembly's ``released()``): those traces' records are not read back."""
    return SessionJoiner(window_spans, stats).stream(released)
