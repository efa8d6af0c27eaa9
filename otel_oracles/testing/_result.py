"""What the ``grade_trace`` fixture returns: the verdicts for what a test recorded, with the
six outcome counts and the four numbers summed over them, for plain ``assert``s."""

from __future__ import annotations

from dataclasses import dataclass

from otel_oracles.emit import ExplainMode
from otel_oracles.model.result import OracleResult, Outcome, Verdict
from otel_oracles.model.step import Trajectory
from otel_oracles.testing._failure import describe_verdict


@dataclass(frozen=True, slots=True, repr=False)
class GradeResult:
    """Every verdict for the traces one test recorded (one per graded trace and contract).

    The properties sum over all of them, so a test that ran one agent reads
    ``result.passed`` and ``result.invariant_failures`` directly; ``check(name)`` finds one
    check's result. ``report()`` is the failure text the plug-in's test items show, so
    ``assert result.passed, result.report()`` explains itself (pytest cuts an assertion
    message that is not a string to one short line: ``repr`` is that line).
    """

    graded: tuple[tuple[Verdict, Trajectory], ...]
    explain: ExplainMode = "template"

    @property
    def verdicts(self) -> list[Verdict]:
        return [verdict for verdict, _ in self.graded]

    @property
    def trace_ids(self) -> list[str]:
        """The graded subjects, in the order the traces were recorded."""
        return list(dict.fromkeys(verdict.subject for verdict, _ in self.graded))

    @property
    def passed(self) -> bool:
        """Whether every verdict passed."""
        return all(verdict.passed for verdict, _ in self.graded)

    @property
    def outcomes(self) -> dict[str, int]:
        """Outcome value (``pass``, ``tolerated``, ``invariant_failure``,
        ``budget_exhausted``, ``missing_evidence``, ``error``) -> number of checks with it."""
        counts = {outcome.value: 0 for outcome in Outcome}
        for verdict, _ in self.graded:
            for result in verdict.results:
                counts[result.outcome.value] += 1
        return counts

    @property
    def invariant_failures(self) -> int:
        return sum(v.counts.invariant_failures for v, _ in self.graded)

    @property
    def tolerated_failures(self) -> int:
        return sum(v.counts.tolerated_failures for v, _ in self.graded)

    @property
    def budget_exhausted(self) -> int:
        return sum(v.counts.budget_exhausted for v, _ in self.graded)

    @property
    def missing_evidence(self) -> int:
        return sum(v.counts.missing_evidence for v, _ in self.graded)

    def check(self, name: str, trace_id: str | None = None) -> OracleResult:
        """The result of the check called ``name`` (its contract name, else its oracle type).

        Raises ``LookupError`` naming the checks there are when none is called so, and when
        several verdicts have one (several traces or contracts; pass ``trace_id``).
        """
        found = [
            result
            for verdict, _ in self.graded
            if trace_id is None or verdict.subject == trace_id
            for result in verdict.results
            if result.name == name
        ]
        if len(found) == 1:
            return found[0]
        if not found:
            names = sorted({r.name for v, _ in self.graded for r in v.results})
            raise LookupError(f"no check named {name!r}; the checks are: {', '.join(names)}")
        raise LookupError(
            f"{len(found)} checks are named {name!r} (one per graded trace and contract); "
            f"pass trace_id= one of {', '.join(self.trace_ids)}"
        )

    def report(self) -> str:
        """Every verdict as the plug-in's failing items show it: each check with its
        outcome and message, the offending steps of failing ones, through the reports'
        privacy boundary (``--oo-explain``)."""
        return "\n".join(describe_verdict(v, t, self.explain) for v, t in self.graded)

    def __str__(self) -> str:
        return self.report()

    def __repr__(self) -> str:
        verdicts = ", ".join(
            f"{v.contract_id}@{v.contract_version} on {v.subject}: {v.verdict}"
            for v, _ in self.graded
        )
        return f"<GradeResult {verdicts}>"
