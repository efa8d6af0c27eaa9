"""``pytest --oo-contracts DIR --oo-traces PATH``: one test item per (contract, trace) pair.

The traces are graded at collection by ``grade_paths``, the offline ``grade`` command's own
run: the items are the verdicts ``otel-oracles grade`` prints for the same inputs (only
pairs a contract's ``match`` selects; traces with no agent run are no items), and running an
item reports its verdict. Items are named ``<contract id>@<version>::<trace id>``, so
``-k``, ``--deselect`` and JUnit's classname/name work on contracts and traces.

An unreadable input is a collection error listing each problem on one line, as the command
line exits 2 for one: a gate that skipped part of its input has not checked it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from otel_oracles.emit import ExplainMode
from otel_oracles.model.result import InputProblem, Verdict
from otel_oracles.model.step import Trajectory
from otel_oracles.pipeline import grade_paths, nothing_graded_reason
from otel_oracles.session import GradeRun, GradingSession
from otel_oracles.testing._failure import describe_verdict
from otel_oracles.testing._settings import Settings

MARKER = "oo_trace"
"""The mark on every trace item: ``-m oo_trace`` runs them without the project's own tests."""


class UnreadableTraces(Exception):
    """Some ``--oo-traces`` input could not be read; the message has one line per problem."""

    def __init__(self, problems: Iterable[InputProblem]) -> None:
        super().__init__("\n".join(f"error: {p.source}: {p.message}" for p in problems))


class VerdictFailed(Exception):
    """Raised by a test item whose verdict failed; ``repr_failure`` shows the verdict."""


class TraceGradingPlugin:
    """Registered for a run given ``--oo-traces``: adds the graded pairs to the collected
    items and says after collection what was read."""

    NAME = "otel-oracles-traces"

    def __init__(self, settings: Settings, trace_paths: list[str]) -> None:
        self.settings = settings
        self.trace_paths = trace_paths
        self.notes: list[str] = []

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, items: list[Any]) -> None:
        # First among the item hooks, so -k, -m and --deselect see these items too.
        collector = GradedTraces.from_parent(
            session, name="otel-oracles", nodeid="otel-oracles", plugin=self
        )
        items.extend(session.genitems(collector))

    def pytest_report_collectionfinish(self) -> list[str]:
        return [f"otel-oracles: {note}" for note in self.notes]


class GradedTraces(pytest.Collector):
    """The ``--oo-traces`` inputs graded against the ``--oo-contracts``."""

    def __init__(self, *, plugin: TraceGradingPlugin, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.plugin = plugin

    def collect(self) -> Iterator[TraceVerdictItem]:
        settings = self.plugin.settings
        run = GradeRun()
        graded: list[tuple[Verdict, Trajectory | None]] = []

        def keep(pairs: list[tuple[Verdict, Trajectory]]) -> None:
            # Only a failure shows steps: passing verdicts need not keep their trajectory.
            graded.extend((v, None if v.passed else t) for v, t in pairs)

        report = grade_paths(
            self.plugin.trace_paths,
            GradingSession(settings.contracts, settings.conventions),
            run=run,
            on_graded=keep,
            keep_verdicts=False,
        )
        if report.input_errors:
            raise UnreadableTraces(report.input_errors)
        self.plugin.notes = list(report.notes)
        if not graded:
            reason = nothing_graded_reason(run.traces, run.spans, run.unselected_seen)
            self.plugin.notes.append(f"nothing graded: {reason}")
        for verdict, trajectory in graded:
            name = f"{verdict.contract_id}@{verdict.contract_version}::{verdict.subject}"
            yield TraceVerdictItem.from_parent(
                self,
                name=name,
                nodeid=name,
                verdict=verdict,
                trajectory=trajectory,
                explain=settings.explain,
            )

    def repr_failure(  # type: ignore[override]  # pytest's own signature, narrowed to str
        self, excinfo: pytest.ExceptionInfo[BaseException]
    ) -> str:
        if isinstance(excinfo.value, UnreadableTraces):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))


class TraceVerdictItem(pytest.Item):
    """One contract's verdict on one trace; fails when the verdict does."""

    def __init__(
        self,
        *,
        verdict: Verdict,
        trajectory: Trajectory | None,
        explain: ExplainMode,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.verdict = verdict
        self.trajectory = trajectory
        self.explain = explain
        self.add_marker(MARKER)
        c = verdict.counts
        self.user_properties.extend(
            [
                ("contract", verdict.contract_id),
                ("contract_version", str(verdict.contract_version)),
                ("trace_id", verdict.subject),
                ("verdict", verdict.verdict),
                ("invariant_failures", str(c.invariant_failures)),
                ("tolerated_failures", str(c.tolerated_failures)),
                ("budget_exhausted", str(c.budget_exhausted)),
                ("missing_evidence", str(c.missing_evidence)),
            ]
        )

    def runtest(self) -> None:
        if not self.verdict.passed:
            raise VerdictFailed

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> str:
        if isinstance(excinfo.value, VerdictFailed):
            return describe_verdict(self.verdict, self.trajectory, self.explain)
        return str(super().repr_failure(excinfo, style))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.name
