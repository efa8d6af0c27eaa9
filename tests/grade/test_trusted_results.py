"""The evaluator builds each check's ``OracleResult`` without validating it
(``model.result._filled``, in the core's loop over a contract's checks) when it knows the
values are valid: the result must be the
very object validation makes of the same values, and any finding whose values it cannot vouch
for (as a plug-in may return) must still be validated, converted or refused as before."""

from __future__ import annotations

import pickle
import sys
from collections import OrderedDict
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import ValidationError

from otel_oracles.grade import Finding, GradeContext, OracleCheck, grade, register_oracle
from otel_oracles.grade.compiled import CompiledContract
from otel_oracles.grade.loader import compile_contract, load_contract
from otel_oracles.mapping import load_conventions
from otel_oracles.model import result as result_module
from otel_oracles.model.result import OracleResult, Outcome
from otel_oracles.pipeline import grade_paths
from otel_oracles.session import GradingSession
from tests.oracles.trace_builders import contract, gen, tool, traj

REPO = Path(__file__).resolve().parent.parent.parent
FIELDS = tuple(OracleResult.model_fields)


def validated(values: dict[str, Any]) -> OracleResult:
    """What the evaluator built before: the values validated by the model."""
    return OracleResult.model_validate(values)


def assert_same_object(got: OracleResult, want: OracleResult) -> None:
    """Equal as pydantic compares models, and alike in everything a writer could read."""
    assert type(got) is OracleResult
    assert got == want
    assert list(got.__dict__) == list(want.__dict__) == list(FIELDS)
    assert got.model_fields_set == want.model_fields_set
    assert got.model_extra == want.model_extra
    # All four of pydantic's slots (``__dict__``, fields set, extra, private), as pickling
    # reads them: the core stores three of them in the instance's memory.
    assert got.__getstate__() == want.__getstate__()
    assert got.model_dump() == want.model_dump()
    assert got.model_dump_json() == want.model_dump_json()
    # Equal is not alike: ``True == 1`` and a ``StrEnum`` member equals its value, but the
    # JSON report writes the values as they are held. The reprs tell them apart.
    assert repr(got.__dict__) == repr(want.__dict__)
    assert {k: type(v) for k, v in got.__dict__.items()} == {
        k: type(v) for k, v in want.__dict__.items()
    }


def test_the_state_the_trusted_constructor_relies_on_is_pydantics() -> None:
    # A pydantic whose pickle state had another form would silently validate every result:
    # correct, but the cost this constructor exists to save would be back.
    assert result_module.RESULTS_TRUSTED


def test_the_evaluator_fills_every_field_in_declaration_order() -> None:
    # A field added to the model must be added to the core's loop too
    # (``native/python/src/checks.rs``), where the result's ``__dict__`` takes its order from.
    assert tuple(_graded(Finding.ok("x")).__dict__) == FIELDS


def trusted_result(*values: Any) -> OracleResult:
    """What the evaluator builds of ``values`` (every field, in order), unvalidated."""
    return result_module._filled(
        OracleResult, dict(zip(FIELDS, values, strict=True)), frozenset(FIELDS)
    )


def test_a_trusted_result_is_the_object_validation_makes() -> None:
    values: dict[str, Any] = {
        "oracle_type": "tool_not_called",
        "name": "no-delete",
        "layer": "tolerance",
        "outcome": Outcome.BUDGET_EXHAUSTED,
        "passed": False,
        "message": "called 3 times …",
        "details": {"calls": [1, 2.5, None, {"x": "y"}], "nested": {"a": [True]}},
        "params": {"tool": "delete_records", "max": 2},
        "span_ids": ["a1", "b2"],
        "step_indexes": [3, 4],
        "used": 3,
        "budget": 2,
        "why": "one retry is fine",
        "contract_id": "support",
        "contract_version": 7,
        "duration_ns": 12345,
    }
    got = trusted_result(*values.values())
    want = validated(values)
    assert_same_object(got, want)
    assert pickle.loads(pickle.dumps(got)) == want
    assert got.model_copy(update={"used": 4}).used == 4 and got.used == 3
    assert got.model_fields_set is not trusted_result(*values.values()).model_fields_set
    with pytest.raises(ValidationError):
        got.used = 5  # type: ignore[misc]  # frozen as a validated result is


class _Kind(StrEnum):
    X = "x"


class _Str(str):
    pass


_FINDING: list[Finding] = []


@register_oracle
class _Returns(OracleCheck):
    """Returns whatever the test put in ``_FINDING``, as a plug-in could."""

    oracle_type: ClassVar[str] = "trusted_results_test_returns"

    def check(self, ctx: GradeContext) -> Finding:
        return _FINDING[0]


def _graded(finding: Finding, layer: str = "invariants") -> OracleResult:
    _FINDING[:] = [finding]
    spec = {"type": "trusted_results_test_returns", "why": "w"}
    verdict = grade(contract(**{layer: [spec]}), traj(gen("hi")))
    return verdict.results[0]


def _expected(finding: Finding, got: OracleResult) -> dict[str, Any]:
    """The fields validation was given for ``finding`` (the check's own fields and the
    duration taken from the result under test)."""
    return {
        "oracle_type": "trusted_results_test_returns",
        "name": "trusted_results_test_returns",
        "layer": got.layer,
        "outcome": got.outcome,
        "passed": got.passed,
        "message": finding.message,
        "details": finding.details,
        "params": got.params,
        "span_ids": finding.span_ids,
        "step_indexes": finding.step_indexes,
        "used": finding.used,
        "budget": None,
        "why": "w",
        "contract_id": "c",
        "contract_version": 1,
        "duration_ns": got.duration_ns,
    }


FINDINGS = [
    Finding.ok("plain"),
    Finding.fail("plain", details={"k": [1, 2]}, span_ids=("s0",), step_indexes=(0,), used=1),
    Finding("pass", "as a list", span_ids=["s0"], step_indexes=[0]),  # type: ignore[arg-type]
    Finding("pass", "a bool index", step_indexes=(True, 2)),  # type: ignore[arg-type]
    Finding("pass", "a bool count", used=True),
    Finding("fail", _Kind.X),  # type: ignore[arg-type]
    Finding("pass", _Str("subclass"), span_ids=(_Str("s0"),)),
    Finding("pass", "ordered", details=OrderedDict(b=1, a=2)),
    Finding("pass", "enum key", details={_Kind.X: 1}),  # type: ignore[dict-item]
]


@pytest.mark.parametrize("finding", FINDINGS, ids=lambda f: str(f.message))
@pytest.mark.parametrize("layer", ["invariants", "tolerances"])
def test_every_finding_gives_the_result_validation_gives(finding: Finding, layer: str) -> None:
    got = _graded(finding, layer)
    assert_same_object(got, validated(_expected(finding, got)))


@pytest.mark.parametrize(
    "finding",
    [
        Finding("pass", "no details", details=None),  # type: ignore[arg-type]
        Finding("pass", "an int key", details={1: "x"}),  # type: ignore[dict-item]
        Finding("pass", 3),  # type: ignore[arg-type]
        Finding("pass", "an int span id", span_ids=(3,)),  # type: ignore[arg-type]
        Finding("pass", "a text count", used="2x"),  # type: ignore[arg-type]
    ],
    ids=lambda f: str(f.message),
)
def test_a_finding_validation_refuses_is_that_checks_error(finding: Finding) -> None:
    """Refused as before, but as the check's own ``error`` result: the verdict and the
    contract's other checks stand (``tests/grade/test_unwritable_finding.py``)."""
    with pytest.raises(ValidationError):
        validated(_expected(finding, OracleResult(
            oracle_type="x", name="x", outcome=Outcome.PASS, passed=True, message="m"
        )))  # fmt: skip
    got = _graded(finding)
    assert got.outcome == Outcome.ERROR and not got.passed
    assert got.message.startswith("the oracle's finding cannot be a result (")
    assert got.details == {"error.type": "ValidationError"}


def test_results_share_no_container_with_the_finding_the_spec_or_each_other() -> None:
    finding = Finding.fail("x", details={"k": 1}, span_ids=("s0",), step_indexes=(0,))
    _FINDING[:] = [finding]
    compiled = contract(invariants=[{"type": "trusted_results_test_returns"}] * 2)
    first, second = grade(compiled, traj(gen("hi"))).results
    assert first.details == finding.details and first.details is not finding.details
    assert first.details is not second.details
    assert first.params == second.params and first.params is not second.params
    assert first.params is not compiled.invariants[0].params
    # The finding's tuples are each result's own lists (made slot by slot in the core),
    # empty ones too.
    for got in first, second:
        assert type(got.span_ids) is list and type(got.step_indexes) is list
    assert (first.span_ids, first.step_indexes) == (["s0"], [0])
    assert first.span_ids is not second.span_ids
    assert first.step_indexes is not second.step_indexes
    _FINDING[:] = [Finding.ok("x")]
    first, second = grade(compiled, traj(gen("hi"))).results
    assert first.span_ids == first.step_indexes == [] == second.span_ids
    assert type(first.span_ids) is list and type(first.step_indexes) is list
    assert first.span_ids is not second.span_ids
    assert first.step_indexes is not second.step_indexes
    assert first.span_ids is not first.step_indexes


_DETAILS: list[dict[str, Any]] = []
_GIVEN: list[int] = []
"""The ``id`` of each details dict ``_Fresh`` gave (the dict alive while its id is compared:
a copy is made while the finding's is held, so it cannot have the same address)."""


@register_oracle
class _Fresh(OracleCheck):
    """Returns a new finding each time, its details a new dict or, when the test put one
    in ``_DETAILS``, that one (held by the test too), as a plug-in could."""

    oracle_type: ClassVar[str] = "trusted_results_test_fresh"

    def check(self, ctx: GradeContext) -> Finding:
        details = _DETAILS[0] if _DETAILS else {"k": [1], "n": 2}
        _GIVEN.append(id(details))
        return Finding.fail("fresh", details=details, span_ids=("s0",))


@pytest.mark.parametrize("held", [False, True], ids=["new details", "details held elsewhere"])
def test_details_only_a_new_finding_holds_are_the_results_and_no_others(held: bool) -> None:
    """The core takes a finding's details as the result's when the finding is new and only
    it holds them (nothing else can reach them); details anything else holds are copied."""
    shared = {"k": [1], "n": 2}
    _DETAILS[:] = [shared] if held else []
    _GIVEN.clear()
    try:
        compiled = contract(invariants=[{"type": "trusted_results_test_fresh"}] * 2)
        first, second = grade(compiled, traj(gen("hi"))).results
    finally:
        _DETAILS.clear()
    taken = [id(first.details), id(second.details)] == _GIVEN
    assert taken is not held
    assert first.details == second.details == shared
    assert first.details is not second.details
    assert first.details is not shared and second.details is not shared
    first.details["n"] = 3
    assert second.details["n"] == 2 and shared["n"] == 2
    for got in (second, _graded(Finding.ok("x"))):
        assert_same_object(got, validated(got.model_dump()))


_HELD: list[dict[str, Any]] = [{"k": [1], "n": 2}]


class _HeldFinding:
    """A finding of a plug-in's own class whose ``details`` is a property answering a dict
    the test holds: new for each check, its details counted once besides the reader's, as a
    new ``Finding``'s are, but not held by the finding."""

    status, message, breach, unseen = "fail", "held", "budget", False
    span_ids: tuple[str, ...] = ()
    step_indexes: tuple[int, ...] = ()
    used = 0

    @property
    def details(self) -> dict[str, Any]:
        return _HELD[0]


@register_oracle
class _ReturnsHeld(OracleCheck):
    oracle_type: ClassVar[str] = "trusted_results_test_held"

    def check(self, ctx: GradeContext) -> Any:
        return _HeldFinding()


def test_details_another_class_of_finding_answers_are_copied() -> None:
    """Only an exact ``Finding``'s details are taken by reference counts (the finding's own
    slot holds one of them); a finding of any other class reads them by name, and what it
    answers is copied, whatever its count."""
    compiled = contract(invariants=[{"type": "trusted_results_test_held"}])
    (got,) = grade(compiled, traj(gen("hi"))).results
    assert got.details == _HELD[0] and got.details is not _HELD[0]
    got.details["n"] = 3
    assert _HELD[0]["n"] == 2


def test_a_results_fields_set_has_its_names_frozensets_table() -> None:
    """The core makes a result's fields set as a copy of a frozenset of all names but the
    last, the last added (``ModelFill::fields_set``), which pays while CPython sizes that
    copy's table as the frozenset's own and a copy of all the names twice as large (16
    names). Fails when that sizing, or the number of fields, changes: the split then saves
    nothing and should go."""
    got = _graded(Finding.ok("x")).model_fields_set
    assert got == set(FIELDS)
    whole = set(frozenset(FIELDS))
    assert sys.getsizeof(got) == sys.getsizeof(frozenset(FIELDS)) < sys.getsizeof(whole)


def test_each_result_has_a_fields_set_of_its_own() -> None:
    # The core makes every result's fields set from one frozenset of the names it keeps:
    # a result's set is its own, and changing one (as assigning a field through pydantic
    # would) reaches no other result, made before or after.
    first, second = _graded(Finding.ok("x")), _graded(Finding.ok("y"))
    assert first.model_fields_set == second.model_fields_set == set(FIELDS)
    assert first.model_fields_set is not second.model_fields_set
    first.model_fields_set.discard("why")
    assert second.model_fields_set == _graded(Finding.ok("z")).model_fields_set == set(FIELDS)
    assert type(second.model_fields_set) is set
    # A copy made with changes has a fields set of its own as well (pydantic's).
    copied = second.model_copy(update={"why": "w"})
    assert copied.why == "w" and copied.model_fields_set == set(FIELDS)
    assert copied.model_fields_set is not second.model_fields_set


def test_each_result_has_a_dict_of_its_own() -> None:
    # The core starts every result's ``__dict__`` as a copy of one its check keeps (the
    # check's own fields and its contract's already in): a change to one result's reaches
    # neither the results graded after it nor that kept dict.
    compiled = compile_contract(contract(invariants=[{"type": "max_steps", "max": 5, "why": "w"}]))
    first = grade(compiled, traj(gen("hi"))).results[0]
    first.__dict__["why"] = "changed"
    first.__dict__["outcome"] = Outcome.ERROR
    second = grade(compiled, traj(gen("hi"))).results[0]
    assert first.__dict__ is not second.__dict__
    assert (second.why, second.budget, second.outcome) == ("w", 5, Outcome.PASS)
    assert_same_object(second, validated(second.model_dump()))


def test_a_results_dict_shares_its_keys_with_the_models_instances() -> None:
    """The core copies every result's ``__dict__`` from a template keyed as the model's
    instances share their keys (``shared_template`` in ``native/python/src/checks.rs``): a
    copy of it takes the shared keys, not a table of its own. Fails when CPython stops
    making such a dict the smaller (then the template saves nothing and should go)."""
    first, second = _graded(Finding.ok("x")), _graded(Finding.ok("y"))
    assert tuple(first.__dict__) == FIELDS
    assert sys.getsizeof(first.__dict__) < sys.getsizeof(dict(first.__dict__))
    # A key added to one result's dict (its table then its own) reaches no other.
    first.__dict__["extra"] = 1
    assert tuple(second.__dict__) == FIELDS == tuple(_graded(Finding.ok("z")).__dict__)
    assert_same_object(second, validated(second.model_dump()))


def test_a_check_graded_for_another_contract_carries_that_contracts_id_and_version() -> None:
    # The dict a check keeps holds the id and version of the contract it was first graded
    # for; a compiled check given to another contract's loop (the same checks under a copy of
    # the contract, as code may build one) must carry that contract's, and the first
    # contract's results theirs again after it.
    first = compile_contract(contract(invariants=[{"type": "max_steps", "max": 5}]))
    other = CompiledContract(
        first.contract.model_copy(update={"id": "other", "version": 7}),
        first.checks,
        first.selector,
    )
    for compiled, want in [(first, ("c", 1)), (other, ("other", 7)), (first, ("c", 1))]:
        (got,) = grade(compiled, traj(gen("hi"))).results
        assert (got.contract_id, got.contract_version) == want
        assert_same_object(got, validated(got.model_dump()))


def test_a_checks_results_carry_the_outcome_each_was_judged_with() -> None:
    # A check keeps one dict per outcome with the outcome and ``passed`` already in; the
    # same compiled check judged in turn to every outcome, and back, must give each result
    # its own, and ``passed`` of missing evidence as the contract grading it says (a copy
    # of the contract that warns holds the same id and version objects as the first).
    tolerances = compile_contract(contract(tolerances=[{"type": "trusted_results_test_returns"}]))
    invariants = compile_contract(contract(invariants=[{"type": "trusted_results_test_returns"}]))
    warns = CompiledContract(
        invariants.contract.model_copy(update={"on_missing_evidence": "warn"}),
        invariants.checks,
        invariants.selector,
    )
    cases = [
        (invariants, Finding.ok("a"), Outcome.PASS, True),
        (invariants, Finding.fail("b"), Outcome.INVARIANT_FAILURE, False),
        (invariants, Finding.missing("c"), Outcome.MISSING_EVIDENCE, False),
        (warns, Finding.missing("d"), Outcome.MISSING_EVIDENCE, True),
        (invariants, Finding.missing("e"), Outcome.MISSING_EVIDENCE, False),
        (tolerances, Finding.ok("f", used=1), Outcome.TOLERATED, True),
        (tolerances, Finding.fail("g", used=2), Outcome.BUDGET_EXHAUSTED, False),
        (tolerances, Finding.fail("h", breach="rule"), Outcome.INVARIANT_FAILURE, False),
        (tolerances, Finding.ok("i"), Outcome.PASS, True),
        (invariants, Finding.ok("j"), Outcome.PASS, True),
        (warns, Finding.fail("k"), Outcome.INVARIANT_FAILURE, False),
    ]
    for _ in range(2):
        for compiled, finding, outcome, passed in cases:
            _FINDING[:] = [finding]
            (got,) = grade(compiled, traj(gen("hi"))).results
            # ``used`` too: a check's kept dict holds its first result's, which a result of
            # another ``used`` must not keep.
            want = (finding.message, outcome, passed, finding.used)
            assert (got.message, got.outcome, got.passed, got.used) == want, f"expected {want}"
            assert_same_object(got, validated(got.model_dump()))


def test_graded_traces_hold_exactly_what_validation_would() -> None:
    contracts = [load_contract(p) for p in sorted((REPO / "examples" / "contracts").iterdir())]
    session = GradingSession(contracts, load_conventions([]))
    report = grade_paths([str(REPO / "examples" / "traces")], session)
    results = [r for v in report.verdicts for r in v.results]
    assert len(results) > 20
    assert {r.outcome for r in results} >= {Outcome.PASS, Outcome.INVARIANT_FAILURE}
    for r in results:
        assert_same_object(r, validated(r.model_dump()))

    steps = traj(tool("lookup", {"q": 1}, {"ok": True}), tool("lookup", {"q": 1}, None), gen("x"))
    verdict = grade(
        contract(
            invariants=[{"type": "tool_not_called", "tool": "lookup"}],
            tolerances=[{"type": "tool_retries", "tools": ["lookup"], "max": 1}],
        ),
        steps,
    )
    assert any(r.span_ids for r in verdict.results)
    for r in verdict.results:
        assert type(r.span_ids) is list and type(r.step_indexes) is list
        assert_same_object(r, validated(r.model_dump()))


def test_each_verdict_carries_its_own_contracts_values() -> None:
    # The core keeps, per compiled contract, the verdict's dict with the contract's id,
    # version, hash and name in (``VerdictHead``): verdicts of compiled contracts graded in
    # turn carry each their own, and a failing result's message its own, not the one its
    # check's kept dict holds (the first result's of that outcome).
    first = compile_contract(contract(invariants=[{"type": "max_tool_calls", "max": 0}]))
    renamed = contract(invariants=[{"type": "max_tool_calls", "max": 0}]).model_copy(
        update={"id": "other", "version": 3, "name": "Other", "content_hash": "h"}
    )
    other = compile_contract(renamed)
    for calls in (1, 2, 1):
        trajectory = traj(*(tool("t") for _ in range(calls)))
        a, b = grade(first, trajectory), grade(other, trajectory)
        assert (a.contract_id, a.contract_version, a.contract_name) == ("c", 1, "")
        assert (b.contract_id, b.contract_version, b.contract_name) == ("other", 3, "Other")
        assert b.contract_hash == "h" and a.contract_hash == first.contract.content_hash
        for verdict in (a, b):
            (result,) = verdict.results
            assert not result.passed and str(calls) in result.message
            assert verdict.counts.invariant_failures == 1
            assert verdict.counts.model_fields_set == {"invariant_failures"}


def test_verdicts_of_more_compiled_contracts_than_the_core_keeps_carry_their_own() -> None:
    # The core keeps the verdict values of a bounded number of compiled contracts (a server
    # reloading its contracts compiles new ones) and lets them all go past it: graded in
    # turn, more of them than it keeps, and again, each verdict still carries its own
    # contract's values, and one the core has let go is kept afresh. A contract built by
    # ``model_construct`` with a value of another type is never copied unvalidated.
    compiled = [
        compile_contract(
            contract().model_copy(
                update={"id": f"c{n}", "version": n + 1, "name": f"N{n}", "content_hash": f"h{n}"}
            )
        )
        for n in range(40)
    ]
    loose = CompiledContract(
        compiled[0].contract.model_copy(update={"version": True}),
        compiled[0].checks,
        compiled[0].selector,
    )
    assert not loose.plain
    for _ in range(2):
        for n, each in enumerate([*compiled, loose]):
            verdict = grade(each, traj(gen("hi")))
            values = (
                verdict.contract_id,
                verdict.contract_version,
                verdict.contract_name,
                verdict.contract_hash,
            )
            if each is loose:
                # Validated: ``True`` made the ``int`` its field holds.
                assert values == ("c0", 1, "N0", "h0")
                assert type(verdict.contract_version) is int
            else:
                assert values == (f"c{n}", n + 1, f"N{n}", f"h{n}")
            assert verdict.model_fields_set == set(type(verdict).model_fields)
