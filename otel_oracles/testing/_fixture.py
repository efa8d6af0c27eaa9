"""The ``grade_trace`` fixture's object: records what a test's agent does, grades it on call.

``grade_trace("contracts/support.yaml")`` grades every trace the test recorded so far against
the contracts at those paths (files or directories; relative to pytest's root directory;
none given = ``--oo-contracts``), through the same ``grade_trace`` pipeline stage ``serve``
and ``grade`` use, and returns a ``GradeResult``. A test that recorded nothing a contract
grades fails with the reason, as ``otel-oracles grade`` exits 2 when it graded nothing: a
check that graded nothing has checked nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_oracles.errors import OtelOraclesError
from otel_oracles.model.result import Verdict
from otel_oracles.model.span import Trace
from otel_oracles.model.step import Trajectory
from otel_oracles.pipeline import count_labels, grade_trace, nothing_graded_reason, subject_notes
from otel_oracles.testing._recording import Recording
from otel_oracles.testing._result import GradeResult
from otel_oracles.testing._settings import Settings, load_contracts


class TraceGrader:
    """Callable the fixture yields; ``recording`` holds the providers it installed."""

    def __init__(self, settings: Settings, recording: Recording) -> None:
        self.settings = settings
        self.recording = recording

    def __call__(self, *contracts: str | Path) -> GradeResult:
        settings = self.settings
        problem = None
        try:
            chosen = (
                load_contracts([settings.resolve(c) for c in contracts])
                if contracts
                else settings.contracts
            )
        except OtelOraclesError as exc:
            problem = str(exc)
        if problem is not None:  # failed outside the handler: one line, no exception chain
            pytest.fail(f"grade_trace: {problem}", pytrace=False)
        if not chosen:
            pytest.fail(
                "grade_trace: no contract given: pass contract paths, or run pytest with "
                "--oo-contracts",
                pytrace=False,
            )
        traces = self.recording.traces()
        graded: list[tuple[Verdict, Trajectory]] = []
        seen: dict[str, int] = {}
        skipped: dict[str, int] = {}
        for trace in traces:
            found = grade_trace(trace, chosen, settings.conventions, skipped=skipped)
            if not found:
                count_labels(seen, trace)
            graded.extend(found)
        if not graded:
            pytest.fail(
                f"grade_trace: nothing graded: {_why_nothing(traces, seen, skipped)}", pytrace=False
            )
        return GradeResult(tuple(graded), settings.explain)


def _why_nothing(traces: list[Trace], seen: dict[str, int], skipped: dict[str, int]) -> str:
    if not traces:
        return (
            "the test recorded no span (spans are recorded once they end, from tracers got "
            "from the global provider during the test)"
        )
    reason = nothing_graded_reason(len(traces), sum(len(t.spans) for t in traces), seen)
    return "; ".join([reason, *subject_notes(skipped)])
