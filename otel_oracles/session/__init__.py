"""The grading session: the one loop from decoded spans to verdicts.

It sits above the stages (``decode``, ``assemble``, ``mapping``, ``grade``) and below the
front ends (``cli``, ``server``, ``parallel``, ``testing``), which all grade through it:
``GradingSession.run`` over a stream of batches, ``GradingSession.grade`` for one subject
that is already assembled (``serve``'s workers).
"""

from otel_oracles.session._counts import (
    COVERAGE_NOTE_NAMES,
    SEEN_LABELS_MAX,
    GradeRun,
    add_label,
    add_unclassified,
    count_labels,
    coverage_note,
    subject_notes,
)
from otel_oracles.session._input import (
    DEFAULT_LIMITS,
    InputLimits,
    traces_from_batches,
    without_own_telemetry,
)
from otel_oracles.session._session import (
    FROM_START,
    WHOLE,
    Graded,
    GradedSubject,
    GradingSession,
    Resume,
    SessionSpec,
    Shard,
    shard_of,
)
from otel_oracles.session._subject import (
    NOT_AGENT_RUN,
    NotGraded,
    error_verdict,
    holds_agent_run,
    how_it_ended,
    mapped_agent_names,
)

__all__ = [
    "COVERAGE_NOTE_NAMES",
    "DEFAULT_LIMITS",
    "FROM_START",
    "NOT_AGENT_RUN",
    "SEEN_LABELS_MAX",
    "WHOLE",
    "GradeRun",
    "Graded",
    "GradedSubject",
    "GradingSession",
    "InputLimits",
    "NotGraded",
    "Resume",
    "SessionSpec",
    "Shard",
    "add_label",
    "add_unclassified",
    "count_labels",
    "coverage_note",
    "error_verdict",
    "holds_agent_run",
    "how_it_ended",
    "mapped_agent_names",
    "shard_of",
    "subject_notes",
    "traces_from_batches",
    "without_own_telemetry",
]
