"""What a grading run counts besides its verdicts, and the summary lines it becomes.

``GradeRun`` separates two kinds of count, because ``grade --workers`` adds up one
``GradeRun`` per worker: counts of the subjects a worker graded (each subject is graded by
exactly one worker, so these add up), and stream-wide counts (input problems, what assembly
and joining did), which every worker sees alike and only one reports (``add_shard``).
"""

from __future__ import annotations

from otel_oracles._frozen import Value
from otel_oracles.assemble import AssemblyStats
from otel_oracles.grade.evidence import counted_names
from otel_oracles.model.result import InputProblem, Verdict
from otel_oracles.model.span import Trace
from otel_oracles.model.step import Trajectory

COVERAGE_NOTE_NAMES = 5
"""Span names a coverage note lists before it stops."""

SEEN_LABELS_MAX = 20
"""How many distinct service/agent labels a run remembers for its "nothing graded" message."""


# A plain class, not a dataclass: the methods ``dataclasses`` generates are compiled from
# source at every start (``otel_oracles._frozen``).
class GradeRun(Value):
    """What one run saw besides the verdicts (for summaries and ``inspect``)."""

    __slots__ = (
        "assembly",
        "problems",
        "skipped",
        "spans",
        "traces",
        "traces_unclassified",
        "traces_unselected",
        "unclassified",
        "unselected_seen",
    )
    traces: int
    """Subjects read (a run joined from several traces counts once)."""
    traces_unselected: int
    spans: int
    problems: list[InputProblem]
    """Stream-wide: inputs that could not be read."""
    assembly: AssemblyStats
    """Stream-wide: late, evicted and unattached records, joined runs."""
    skipped: dict[str, int]
    """Subjects not graded, by reason (``GradingSession.grade``'s ``skipped``)."""
    unselected_seen: dict[str, int]
    """``service``/``agent`` labels of traces no contract selected (bounded), so a run that
    graded nothing can say what it did see."""

    traces_unclassified: int
    """Graded traces holding spans no convention recognised."""
    unclassified: dict[str, int]
    """Span name -> count of such spans over those traces."""

    def __init__(
        self,
        traces: int = 0,
        traces_unselected: int = 0,
        spans: int = 0,
        problems: list[InputProblem] | None = None,
        assembly: AssemblyStats | None = None,
        skipped: dict[str, int] | None = None,
        unselected_seen: dict[str, int] | None = None,
        traces_unclassified: int = 0,
        unclassified: dict[str, int] | None = None,
    ) -> None:
        self.traces = traces
        self.traces_unselected = traces_unselected
        self.spans = spans
        self.problems = [] if problems is None else problems
        self.assembly = AssemblyStats() if assembly is None else assembly
        self.skipped = {} if skipped is None else skipped
        self.unselected_seen = {} if unselected_seen is None else unselected_seen
        self.traces_unclassified = traces_unclassified
        self.unclassified = {} if unclassified is None else unclassified

    def note_unselected(self, trace: Trace) -> None:
        self.traces_unselected += 1
        count_labels(self.unselected_seen, trace)

    def add_shard(self, shard: GradeRun, *, stream_wide: bool) -> None:
        """Add one worker's counts; its stream-wide counts only when ``stream_wide`` (one
        worker's, since every worker reads the whole input)."""
        self.traces += shard.traces
        self.spans += shard.spans
        self.traces_unselected += shard.traces_unselected
        for reason, n in shard.skipped.items():
            self.skipped[reason] = self.skipped.get(reason, 0) + n
        for label, n in shard.unselected_seen.items():
            add_label(self.unselected_seen, label, n)
        self.traces_unclassified += shard.traces_unclassified
        for name, n in shard.unclassified.items():
            self.unclassified[name] = self.unclassified.get(name, 0) + n
        if stream_wide:
            self.problems.extend(shard.problems)
            self.assembly = shard.assembly

    def subject_part(self) -> GradeRun:
        """A copy of the per-subject counts alone (stream-wide ones left empty): what a
        ``grade --workers`` worker reports with each delivery, so the process that resumes
        a dead worker's shard starts from exactly what was delivered."""
        return GradeRun(
            traces=self.traces,
            traces_unselected=self.traces_unselected,
            spans=self.spans,
            skipped=dict(self.skipped),
            unselected_seen=dict(self.unselected_seen),
            traces_unclassified=self.traces_unclassified,
            unclassified=dict(self.unclassified),
        )

    def notes(self) -> list[str]:
        """The run summary's lines."""
        notes = [f"{self.traces} trace(s), {self.spans} span(s) read"]
        if self.traces_unselected:
            notes.append(f"{self.traces_unselected} trace(s) matched no contract's selector")
        notes.extend(subject_notes(self.skipped))
        if (coverage := coverage_note(self.traces_unclassified, self.unclassified)) is not None:
            notes.append(coverage)
        if assembled := self.assembly.summary():
            notes.append(assembled)
        return notes


def subject_notes(skipped: dict[str, int]) -> list[str]:
    """The run-summary lines for traces that were not graded as subjects."""
    return [f"{n} trace(s) {reason}" for reason, n in sorted(skipped.items())]


def add_unclassified(unclassified: dict[str, int], graded: list[tuple[Verdict, Trajectory]]) -> int:
    """Add a graded trace's unrecognised spans (name -> count) to ``unclassified``; 1 when it
    had any, else 0 (for the run's coverage note)."""
    if not graded or not graded[0][1].unmapped_spans:
        return 0
    for name, n in graded[0][1].unmapped_spans.items():
        unclassified[name] = unclassified.get(name, 0) + n
    return 1


def coverage_note(traces: int, unclassified: dict[str, int]) -> str | None:
    """The run-summary line when graded traces held spans no convention recognised: checks
    that need every span reported missing evidence there, and ``inspect`` shows them."""
    if not traces:
        return None
    shown = counted_names(unclassified, COVERAGE_NOTE_NAMES)
    return (
        f"coverage: {traces} graded trace(s) hold {sum(unclassified.values())} span(s) no "
        f"convention recognised ({shown}); checks that need every span report missing "
        "evidence there (see otel-oracles inspect)"
    )


def count_labels(seen: dict[str, int], trace: Trace) -> None:
    """Count ``service <name>`` and ``agent <name>`` for one trace into ``seen`` (bounded)."""
    labels: list[str] = []
    root = trace.root if trace.root is not None else (trace.spans[0] if trace.spans else None)
    service = root.resource.get("service.name") if root is not None else None
    if isinstance(service, str) and service:
        labels.append(f"service {service}")
    for span in trace.spans:
        agent = span.attributes.get("gen_ai.agent.name")
        if isinstance(agent, str) and agent:
            labels.append(f"agent {agent}")
            break
    for label in labels:
        add_label(seen, label)


def add_label(seen: dict[str, int], label: str, count: int = 1) -> None:
    """Count ``label``; past ``SEEN_LABELS_MAX`` distinct labels new ones are not kept."""
    if label in seen or len(seen) < SEEN_LABELS_MAX:
        seen[label] = seen.get(label, 0) + count
