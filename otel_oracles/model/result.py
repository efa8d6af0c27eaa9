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


def _result_state() -> dict[str, Any] | None:
    """Pydantic's pickle state of a validated ``OracleResult`` holding every field (the
    template ``trusted_result`` builds from), or ``None`` where the state does not have the
    form ``trusted_result`` relies on (then it validates)."""
    given = OracleResult(oracle_type="x", name="x", outcome=Outcome.PASS, passed=True, message="")
    state = OracleResult.model_validate(given.model_dump()).__getstate__()  # every field given
    if not isinstance(state, dict) or set(state) != {
        "__dict__",
        "__pydantic_extra__",
        "__pydantic_fields_set__",
        "__pydantic_private__",
    }:
        return None
    if list(state["__dict__"]) != list(OracleResult.model_fields):
        return None
    if state["__pydantic_fields_set__"] != set(OracleResult.model_fields):
        return None
    if state["__pydantic_extra__"] is not None or state["__pydantic_private__"] is not None:
        return None
    return {**state, "__dict__": None, "__pydantic_fields_set__": None}


_STATE = _result_state()
_ALL_FIELDS = frozenset(OracleResult.model_fields)
_new_result = OracleResult.__pydantic_validator__.validate_python
_new_instance = OracleResult.__new__


def trusted_result(
    oracle_type: str,
    name: str,
    layer: Layer,
    outcome: Outcome,
    passed: bool,
    message: str,
    details: dict[str, Any],
    params: dict[str, Any],
    span_ids: list[str],
    step_indexes: list[int],
    used: int,
    budget: int | None,
    why: str | None,
    contract_id: str,
    contract_version: int,
    duration_ns: int,
    /,
) -> OracleResult:
    """An ``OracleResult`` of values the caller already knows are valid, without
    validating them: the evaluator's one result per check, whose per-check fields come
    from a validated contract and whose finding it has type-checked.

    Validating costs ~26 k instructions a result, more than half of what the evaluator
    spends on a check; ``model_construct`` (Python, a loop over the fields) and
    ``model_copy(update=...)`` of a template (Python, three ``copy`` calls) measured slower
    still. This goes through pydantic's own pickle protocol instead, as ``copy`` and
    ``pickle`` rebuild a model: a new instance given, by ``__setstate__``, the state
    ``__getstate__`` returns for a validated result, with the field values swapped in (in
    field order) and a fresh set of the fields given, which is every field, as validation
    of a full result leaves it. The result is the object validation makes: same type,
    field values and order, ``model_fields_set``, dumps and JSON. ``details`` and
    ``params`` are stored as given (validation would copy them): give dicts nothing else
    holds. Where pydantic's state has another form than this expects (checked once at
    import), each result is validated instead.
    """
    values = {
        "oracle_type": oracle_type,
        "name": name,
        "layer": layer,
        "outcome": outcome,
        "passed": passed,
        "message": message,
        "details": details,
        "params": params,
        "span_ids": span_ids,
        "step_indexes": step_indexes,
        "used": used,
        "budget": budget,
        "why": why,
        "contract_id": contract_id,
        "contract_version": contract_version,
        "duration_ns": duration_ns,
    }
    if _STATE is None:
        validated: OracleResult = _new_result(values)
        return validated
    result: OracleResult = _new_instance(OracleResult)
    result.__setstate__({**_STATE, "__dict__": values, "__pydantic_fields_set__": set(_ALL_FIELDS)})
    return result


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
