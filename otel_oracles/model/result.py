"""Results: one ``OracleResult`` per check, one ``Verdict`` per (contract, trace or trajectory)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Outcome(StrEnum):
    """The six result classes. ``fails`` says whether the outcome fails its trace."""

    PASS = "pass"
    TOLERATED = "tolerated"
    INVARIANT_FAILURE = "invariant_failure"
    BUDGET_EXHAUSTED = "budget_exhausted"
    MISSING_EVIDENCE = "missing_evidence"
    ERROR = "error"

    @property
    def fails(self) -> bool:
        """Missing evidence fails by default; a contract may downgrade it (see Verdict)."""
        return self not in (Outcome.PASS, Outcome.TOLERATED)


Layer = Literal["evidence", "invariant", "tolerance"]


class OracleResult(BaseModel):
    """The result of one check on one trace or trajectory."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    oracle_type: str
    name: str
    """The check's name: the contract's ``name`` for it, else its oracle type."""
    layer: Layer = "invariant"
    outcome: Outcome
    passed: bool
    """Whether this result lets the trace pass (tolerated counts as passed; missing evidence
    passes only under ``on_missing_evidence: warn``)."""
    message: str
    details: dict[str, Any] = Field(default_factory=dict)
    params: dict[str, Any] = Field(default_factory=dict)
    """The validated params the check ran with, so the result can be reproduced."""
    span_ids: list[str] = Field(default_factory=list)
    """Spans that caused the result (e.g. the offending tool call); empty = whole trace."""
    step_indexes: list[int] = Field(default_factory=list)
    used: int = 0
    """Budgeted exceptions consumed (tolerances), e.g. the number of retries seen."""
    budget: int | None = None
    why: str | None = None
    """The contract's reason for this check (for a tolerance: why the exception is fine)."""
    contract_id: str = ""
    contract_version: int = 1
    duration_ns: int = 0


class Counts(BaseModel):
    """The four numbers (plus harness errors, which are not agent failures)."""

    model_config = ConfigDict(extra="forbid")

    invariant_failures: int = 0
    tolerated_failures: int = 0
    budget_exhausted: int = 0
    missing_evidence: int = 0
    errors: int = 0


class Verdict(BaseModel):
    """One contract judged against one trace (or AgentBench trajectory)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    contract_id: str
    contract_version: int = 1
    contract_hash: str = ""
    """sha256 of the contract file's bytes (first 16 hex digits)."""
    contract_name: str = ""
    subject: str
    """What was graded: the trace id, or the trajectory file."""
    trace_id: str | None = None
    root_span_id: str | None = None
    root_name: str | None = None
    agent_name: str | None = None
    passed: bool
    results: list[OracleResult]
    counts: Counts
    duration_ns: int = 0

    @property
    def verdict(self) -> str:
        """``pass`` / ``fail`` / ``error`` (a harness error with no agent failure)."""
        if self.passed:
            return "pass"
        c = self.counts
        agent_fail = c.invariant_failures or c.budget_exhausted or c.missing_evidence
        return "error" if c.errors and not agent_fail else "fail"


_COUNTED: dict[str, str] = {
    Outcome.INVARIANT_FAILURE: "invariant_failures",
    Outcome.TOLERATED: "tolerated_failures",
    Outcome.BUDGET_EXHAUSTED: "budget_exhausted",
    Outcome.MISSING_EVIDENCE: "missing_evidence",
    Outcome.ERROR: "errors",
}
"""Outcome -> the ``Counts`` field it adds to (``pass`` adds to none). Looked up by value:
reading an enum member off its class costs more than the whole tally of a small verdict."""


_new_counts = Counts.__pydantic_validator__.validate_python
"""``Counts(**tally)`` in one pydantic-core call, without ``BaseModel.__init__`` (a verdict
each)."""


def count_outcomes(results: list[OracleResult]) -> Counts:
    tally: dict[str, int] = {}
    for r in results:
        field = _COUNTED.get(r.outcome)
        if field is not None:
            tally[field] = tally.get(field, 0) + 1
    counts: Counts = _new_counts(tally)
    return counts


class InputProblem(BaseModel):
    """An input that could not be read (file, line/offset, what was expected). Reported in the
    summary and counted; the other inputs are still graded."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str
    """File, with line or byte offset where known (``export.jsonl:812``)."""
    message: str


class RunReport(BaseModel):
    """Everything one CLI invocation (``run``, ``gate``, ``grade``) produced."""

    model_config = ConfigDict(extra="forbid")

    verdicts: list[Verdict] = Field(default_factory=list)
    input_errors: list[InputProblem] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    """Human-readable remarks (e.g. which tasks a trajectory was scored against)."""

    @property
    def passed(self) -> bool:
        return all(v.passed for v in self.verdicts)

    def exit_code(self, keep_going: bool = False) -> int:
        """0 all passed, 1 any verdict failed, 2 an input was unreadable (unless keep_going)."""
        if self.input_errors and not keep_going:
            return 2
        return 0 if self.passed else 1
