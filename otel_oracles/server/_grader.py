"""What grades a released trace: the contracts and conventions loaded, and the grader.

Its own module, apart from ``_wiring``, because a grading worker process needs these and
nothing of the server: ``_wiring`` builds the ``GradingServer`` (its asyncio service and its
OTLP status mapping, which imports gRPC), and a worker that imported it paid for all of that
at start (docs/performance-history.md, "serve's workers start without the receivers").
"""

from __future__ import annotations

from typing import Any

from otel_oracles.assemble.online import ReadyTrace
from otel_oracles.assemble.online_join import subject_trace
from otel_oracles.sandbox import CommandPolicy
from otel_oracles.server.config import ConfigError, ServeSettings
from otel_oracles.session import GradingSession, NotGraded


def load_grading(settings: ServeSettings) -> tuple[list[Any], Any]:
    """Contracts and conventions, validated before anything listens (serve refuses to start
    on any error)."""
    from otel_oracles.grade.loader import load_contract
    from otel_oracles.mapping import ConventionCache, load_conventions
    from otel_oracles.model.contract import discover_contract_files

    if not settings.grading.contracts:
        raise ConfigError("no contracts given", source="grading.contracts")
    files = discover_contract_files(list(settings.grading.contracts))
    if not files:
        raise ConfigError(
            f"no contract files found under {[str(p) for p in settings.grading.contracts]}",
            source="grading.contracts",
        )
    contracts = [load_contract(f) for f in files]
    conventions = load_conventions(list(settings.grading.conventions), ConventionCache.from_env())
    return contracts, conventions


def ready_grader(contracts: list[Any], conventions: Any, commands: CommandPolicy) -> ReadyGrader:
    """ReadyTrace -> [(Verdict, Trajectory)]: the trace built from its buffered spans and
    logs (marked incomplete when it was released early), graded against every contract;
    ``commands`` from ``grading.commands`` (off unless the config turns them on)."""
    return ReadyGrader(contracts, conventions, commands)


class ReadyGrader:
    """Grades a released trace through a ``GradingSession`` (the one the offline loop uses);
    and says what a trace that ran out of time gets (``error`` verdicts from ``timed_out``,
    for ``grading.trace_timeout``), or one whose grading crashed (``not_graded``)."""

    def __init__(self, contracts: list[Any], conventions: Any, commands: CommandPolicy) -> None:
        self.session = GradingSession(contracts, conventions, commands=commands)

    def _trace(self, ready: ReadyTrace) -> Any:
        return subject_trace(ready)

    def __call__(self, ready: ReadyTrace) -> list[Any]:
        return self.session.grade(self._trace(ready))

    def timed_out(self, ready: ReadyTrace, seconds: float) -> list[Any]:
        return self.session.timed_out(self._trace(ready), seconds)

    def not_graded(self, ready: ReadyTrace, failure: NotGraded) -> list[Any]:
        """``error`` verdicts for a trace whose grading raised or whose worker process died
        (``failure`` says which), from every contract that selects it."""
        return self.session.not_graded(
            self._trace(ready), failure.stage, failure.message, failure.error_type
        )
