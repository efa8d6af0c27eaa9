"""Online joining: a run split over several traces becomes one subject in ``serve``.

A contract grades an agent run, and a run is not always one trace: a sub-agent or job started
in a new trace links back to the span that started it, and the turns of a conversation traced
apart share a ``gen_ai.conversation.id`` (or ``session.id``). Offline, such traces meet in a
window of spans (``_sessions``). In ``serve`` traces leave the ``OnlineAssembler`` one by
one, as each completes, so here each released trace waits ``window`` seconds for others that
share a join key with it (the offline keys: its own id, the trace ids its spans link to, its
session ids). Traces that meet form a group; a group leaves as one subject once nothing has
joined it for ``window``. A group whose traces link to a trace still being assembled (still
in the assembler's buffer: ``is_open``) waits on for it, since a sub-run usually ends, and
is released, before the run that started it; the assembler's ``max_trace_age`` bounds that
wait. A trace released *before* a trace linking to it arrives waits only ``window``.

Bounds: at most ``max_traces`` traces and ``max_spans`` spans and log records wait; past
either cap the group quiet longest leaves at once (counted in ``JoinStats.released_early``),
never dropped. No group waits much past ``max_age`` after its first trace arrived (checked
when a trace joins it, and once per window while it waits on an open trace; a
session id shared by every trace, or a link target that never completes, would otherwise
hold a group for as long as traffic lasts): it leaves then, also counted as early, and a
trace arriving for it later starts a new group. Subjects that left wait in a ready queue
for a grading slot, and the sweeper takes traces from the assembler only while that queue is
shorter than the free slots (``room``): a slow grader still pushes back on senders through
the assembler's buffer.
``drain`` releases everything (shutdown).

A subject of several traces is one ``ReadyTrace`` holding every member's spans and log
records, named by the member that started first (as offline: ``merge_traces`` orders them
the same way) and listing all of them in ``members``; ``subject_trace`` builds its ``Trace``.

Not thread-safe by design, like the assembler: the server calls it from its event-loop
thread only.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from otel_oracles.assemble._sessions import first_start, join_keys, merge_traces
from otel_oracles.assemble._tree import build_trace
from otel_oracles.assemble.online import ReadyTrace, Reason
from otel_oracles.model.span import LogRecord, SpanRecord, Trace


@dataclass(slots=True)
class JoinStats:
    """What joining did since start (``serve``'s ``/stats``, key ``joining``)."""

    subjects: int = 0
    """Subjects released that were joined from more than one trace."""
    traces: int = 0
    """Traces that went into them."""
    released_early: int = 0
    """Groups released before their window ended: a cap was reached, or ``max_age``."""


@dataclass(slots=True, eq=False)
class _Group:
    members: list[ReadyTrace]
    keys: set[str]
    size: int
    """Spans and log records of all members."""
    last: float
    """When the last member joined (monotonic seconds)."""
    first: float
    """When the first member arrived."""


class OnlineJoiner:
    """Released traces in (``add``), subjects out (``due``, ``drain``); see the module
    docstring. ``clock`` returns monotonic seconds (injectable, so the policy is testable
    without sleeps); ``is_open(trace_id)`` says whether a trace is still being assembled."""

    def __init__(
        self,
        *,
        window: float,
        max_traces: int,
        max_spans: int,
        max_age: float,
        is_open: Callable[[str], bool] = lambda _trace_id: False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if window <= 0:
            raise ValueError("window must be > 0 (0 turns joining off: use no joiner)")
        self.window = window
        self.max_traces = max_traces
        self.max_spans = max_spans
        self.max_age = max_age
        self.stats = JoinStats()
        self._is_open = is_open
        self._clock = clock
        # Waiting groups, the one quiet longest first.
        self._waiting: OrderedDict[int, _Group] = OrderedDict()
        self._owner: dict[str, _Group] = {}
        self._ready: deque[ReadyTrace] = deque()
        self.waiting_traces = 0
        self.waiting_spans = 0

    @property
    def waiting_groups(self) -> int:
        return len(self._waiting)

    @property
    def ready_subjects(self) -> int:
        """Subjects that left their window and wait for a grading slot."""
        return len(self._ready)

    def room(self, free_slots: int) -> int:
        """How many traces the caller may take from the assembler now, given the grading
        slots free: none while the subjects already waiting for a slot would fill them."""
        return max(free_slots - len(self._ready), 0)

    def add(self, traces: Iterable[ReadyTrace]) -> None:
        """Let released traces wait for the others of their run; past a cap, the groups
        quiet longest leave at once."""
        now = self._clock()
        for ready in traces:
            self._join(ready, now)
        while (
            self.waiting_traces > self.max_traces or self.waiting_spans > self.max_spans
        ) and self._waiting:
            self._leave(next(iter(self._waiting.values())), now)
            self.stats.released_early += 1

    def _join(self, ready: ReadyTrace, now: float) -> None:
        keys = join_keys(ready.trace_id, ready.spans)
        found: list[_Group] = []
        for key in keys:
            group = self._owner.get(key)
            if group is not None and all(group is not g for g in found):
                if group.first + self.max_age <= now:
                    self._leave(group, now)
                    self.stats.released_early += 1
                    continue
                found.append(group)
        size = len(ready.spans) + len(ready.logs)
        if found:
            target = found[0]
            for other in found[1:]:
                del self._waiting[id(other)]
                target.members.extend(other.members)
                target.keys |= other.keys
                target.size += other.size
                target.first = min(target.first, other.first)
            target.members.append(ready)
            target.keys |= keys
            target.size += size
            target.last = now
            self._waiting.move_to_end(id(target))
        else:
            target = _Group([ready], keys, size, now, now)
            self._waiting[id(target)] = target
        for key in target.keys:
            self._owner[key] = target
        self.waiting_traces += 1
        self.waiting_spans += size

    def due(self, now: float | None = None, limit: int | None = None) -> list[ReadyTrace]:
        """Pop the subjects gradable at ``now`` (at most ``limit``): those released early or
        left over from an earlier call first, then the groups quiet for ``window``."""
        now = self._clock() if now is None else now
        window = self.window
        for group in list(self._waiting.values()):
            if group.last + window > now:
                break
            if self._waits_for_open_trace(group):
                if group.first + self.max_age > now:
                    group.last = now
                    self._waiting.move_to_end(id(group))
                    continue
                self.stats.released_early += 1
            self._leave(group, group.last + window)
        out: list[ReadyTrace] = []
        ready = self._ready
        while ready and (limit is None or len(out) < limit):
            out.append(ready.popleft())
        return out

    def drain(self) -> list[ReadyTrace]:
        """Release everything (shutdown)."""
        now = self._clock()
        for group in list(self._waiting.values()):
            self._leave(group, now)
        out = list(self._ready)
        self._ready.clear()
        return out

    def _waits_for_open_trace(self, group: _Group) -> bool:
        members = {m.trace_id for m in group.members}
        for key in group.keys:
            if key.startswith("trace:"):
                trace_id = key[6:]
                if trace_id not in members and self._is_open(trace_id):
                    return True
        return False

    def _leave(self, group: _Group, due_at: float) -> None:
        del self._waiting[id(group)]
        for key in group.keys:
            if self._owner.get(key) is group:
                del self._owner[key]
        self.waiting_traces -= len(group.members)
        self.waiting_spans -= group.size
        if len(group.members) > 1:
            self.stats.subjects += 1
            self.stats.traces += len(group.members)
        self._ready.append(joined_subject(group.members, due_at))


def joined_subject(members: list[ReadyTrace], due_at: float) -> ReadyTrace:
    """One ``ReadyTrace`` of the traces of a run, gradable from ``due_at`` (the end of its
    join window): named by the member that started first, the others in ``members`` in
    start order; released early or incomplete when any member was."""
    if len(members) == 1:
        return replace(members[0], due_at=due_at)
    ordered = sorted(members, key=lambda r: first_start(r.spans))
    spans: list[SpanRecord] = [s for r in ordered for s in r.spans]
    logs: list[LogRecord] = [rec for r in ordered for rec in r.logs]
    reason: Reason = next((r.reason for r in ordered if r.reason != "complete"), "complete")
    return ReadyTrace(
        ordered[0].trace_id,
        spans,
        logs,
        reason,
        due_at,
        sum(r.dropped_spans for r in ordered),
        tuple(r.trace_id for r in ordered),
    )


def subject_trace(ready: ReadyTrace) -> Trace:
    """The ``Trace`` a released subject is graded as: its trace, or its member traces each
    assembled and then joined (``merge_traces``, as offline); marked incomplete when it was
    released early, unless its age limit released a trace whose tree is whole (``_whole``)."""
    if not ready.members:
        trace = build_trace(ready.trace_id, ready.spans, ready.logs)
    else:
        spans: dict[str, list[SpanRecord]] = {tid: [] for tid in ready.members}
        logs: dict[str, list[LogRecord]] = {tid: [] for tid in ready.members}
        for span in ready.spans:
            spans[span.trace_id].append(span)
        for record in ready.logs:
            logs[record.trace_id].append(record)
        trace = merge_traces([build_trace(tid, spans[tid], logs[tid]) for tid in ready.members])
    if ready.incomplete and not (ready.reason == "max_age" and _whole(trace)):
        trace.incomplete = True
    return trace


def _whole(trace: Trace) -> bool:
    """Whether a trace released at its age limit holds the whole of its part of the run: no
    orphan, and every root ended, at least one of them a span whose parent is another
    process's (``SpanRecord.parent_is_remote``). Such a trace never completes by the root
    rule (a parentless root that ends): an agent served behind an instrumented endpoint
    continues its caller's trace, and the caller's spans are exported elsewhere or not at
    all. Its own root has ended and nothing of it is missing, so it is graded as complete,
    only later. A run still going when the age limit comes has a span open above the ones
    that arrived (an orphan), and stays incomplete."""
    roots = trace.roots
    return (
        not trace.orphans
        and bool(roots)
        and all(root.end_ns for root in roots)
        and any(root.parent_is_remote for root in roots)
    )
