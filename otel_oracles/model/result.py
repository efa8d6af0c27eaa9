"""Results: one ``OracleResult`` per check, one ``Verdict`` per (contract, trace or trajectory)."""

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from otel_oracles._native import ModelFill, Verdicts, fill_model
from otel_oracles.model.defaults import new_dict, new_list


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
    passes only under ``on_missing_evidence: warn``, and ``trace_complete``'s never)."""
    message: str
    details: dict[str, Any] = Field(default_factory=new_dict)
    params: dict[str, Any] = Field(default_factory=new_dict)
    """The validated params the check ran with, so the result can be reproduced."""
    span_ids: list[str] = Field(default_factory=new_list)
    """Spans that caused the result (e.g. the offending tool call); empty = whole trace."""
    step_indexes: list[int] = Field(default_factory=new_list)
    used: int = 0
    """Budgeted exceptions consumed (tolerances), e.g. the number of retries seen."""
    budget: int | None = None
    why: str | None = None
    """The contract's reason for this check (for a tolerance: why the exception is fine)."""
    contract_id: str = ""
    contract_version: int = 1
    duration_ns: int = 0


_SLOTS = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")
"""What pydantic keeps of a model instance: ``BaseModel``'s slots, which its pickle state
(``__getstate__``/``__setstate__``) holds, as the trusted constructors below fill them."""

_filled = fill_model
"""``_filled(model, values, fields)``: an instance of ``model`` holding ``values`` as
validation leaves them (``fields``: the names validation was given, its fields set), the one
trusted construction (in the core, which the evaluator builds each result, verdict and
tally's ``Counts`` with), checked against validation at import by ``_builds_as_validation``
and ``_tallies_as_validation``."""


def _builds_as_validation(sample: BaseModel) -> bool:
    """Whether the trusted constructors build ``sample``'s model as validation does: pydantic
    keeps an instance in exactly ``_SLOTS`` (its pickle state names them all), validation of
    every field leaves the field values in field order, every field in the fields set and
    no extra or private values, and an instance given those four (as ``__setstate__`` and
    ``model_construct`` give them, by ``object.__setattr__``) is equal to the validated one
    in all four. Checked once per model at import; where it does not hold (another pydantic
    version), the constructors validate."""
    model = type(sample)
    valid = model.model_validate(sample.model_dump())  # every field given
    state = valid.__getstate__()
    if BaseModel.__slots__ != _SLOTS or not isinstance(state, dict) or set(state) != set(_SLOTS):
        return False
    if list(state["__dict__"]) != list(model.model_fields):
        return False
    if state["__pydantic_fields_set__"] != set(model.model_fields):
        return False
    if state["__pydantic_extra__"] is not None or state["__pydantic_private__"] is not None:
        return False
    built = _filled(model, dict(valid.__dict__), frozenset(model.model_fields))
    return built == valid and built.__getstate__() == state


RESULTS_TRUSTED = _builds_as_validation(
    OracleResult(oracle_type="x", name="x", outcome=Outcome.PASS, passed=True, message="")
)
"""Whether an ``OracleResult`` of values the caller knows are valid may be built without
validation (``_filled``): the evaluator's results, built in the core
(``grade.evaluator.run_checks``), whose per-check fields come from a validated contract and
whose finding it has type-checked. Validating costs ~26 k instructions a result, more than
the evaluator spends on a check otherwise. Where pydantic keeps a model otherwise than
``_filled`` expects (another pydantic version), each result is validated instead."""

RESULTS = ModelFill(OracleResult, RESULTS_TRUSTED)
"""How the core's loop over a contract's checks builds each ``OracleResult``."""


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

_VERDICT_TRUSTED = _builds_as_validation(
    Verdict(contract_id="x", subject="x", passed=True, results=[], counts=Counts())
)


def _tallies_as_validation() -> bool:
    """Whether ``Counts`` of a tally (the counted fields given, the others at their
    default) is built as validating the tally builds it: the values in field order, only the
    counted fields in the fields set. Checked once at import, as ``_builds_as_validation``."""
    if not _builds_as_validation(Counts(errors=1)):
        return False
    tally = {"budget_exhausted": 2, "invariant_failures": 1}
    valid = Counts.model_validate(tally)
    built = _filled(Counts, {**Counts().__dict__, **tally}, tally)
    return built == valid and built.__getstate__() == valid.__getstate__()


VERDICTS = Verdicts(
    ModelFill(Verdict, _VERDICT_TRUSTED),
    ModelFill(Counts, _tallies_as_validation()),
    _COUNTED,
    Outcome.PASS,
    OracleResult,
)
"""The verdict's epilogue, in the core (``native/python/src/checks.rs``): the results' tally
(its ``Counts`` filled, not validated: ~6.6 k instructions a verdict) and the verdict built
unvalidated where pydantic keeps the model as ``_filled`` builds it (validating a verdict
costs ~21 k instructions). The evaluator's ``CheckRunner.verdict`` uses it directly;
``verdict_tally`` is its Python face, and the tests build verdicts with its ``trusted``."""


def verdict_tally(results: list[OracleResult]) -> tuple[bool, Counts]:
    """Whether every result lets its trace pass, and the results' ``Counts`` (``pass`` adds
    to none; the counts validated from the tally, so only the fields counted are set)."""
    tally: tuple[bool, Counts] = VERDICTS.tally(results)
    return tally


def count_outcomes(results: list[OracleResult]) -> Counts:
    """The ``Counts`` of ``results`` (``pass`` adds to none)."""
    return verdict_tally(results)[1]


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

    verdicts: list[Verdict] = Field(default_factory=new_list)
    input_errors: list[InputProblem] = Field(default_factory=new_list)
    notes: list[str] = Field(default_factory=new_list)
    """Human-readable remarks (e.g. which tasks a trajectory was scored against)."""

    @property
    def passed(self) -> bool:
        return all(v.passed for v in self.verdicts)

    def exit_code(self, keep_going: bool = False) -> int:
        """0 all passed, 1 any verdict failed, 2 an input was unreadable (unless keep_going)."""
        if self.input_errors and not keep_going:
            return 2
        return 0 if self.passed else 1
