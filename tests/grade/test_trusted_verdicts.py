"""The evaluator builds each ``Verdict`` without validating it (``model.result.VERDICTS``)
when the values it copies are of their fields' exact types: the verdict must be the very object
validation makes of the same values, and anything it cannot vouch for (a ``str`` subclass, a
wrong type in a ``Trajectory`` built by ``from_normalized``, a contract built by
``model_construct``, a result of another class) must still be validated, converted or refused
as before."""

from __future__ import annotations

import inspect
import pickle
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from otel_oracles._native import ModelFill, Verdicts
from otel_oracles.grade import evaluator, grade
from otel_oracles.grade.completeness import trace_complete
from otel_oracles.grade.evidence import Evidence
from otel_oracles.grade.loader import compile_contract, load_contract
from otel_oracles.grade.oracles.base import GradeContext
from otel_oracles.mapping import load_conventions
from otel_oracles.model import result as result_module
from otel_oracles.model.result import (
    Counts,
    OracleResult,
    Outcome,
    Verdict,
    count_outcomes,
    verdict_tally,
)
from otel_oracles.model.step import Trajectory
from otel_oracles.pipeline import grade_paths
from otel_oracles.session import GradingSession
from tests.oracles.trace_builders import contract, gen, tool, traj

REPO = Path(__file__).resolve().parent.parent.parent
FIELDS = tuple(Verdict.model_fields)


class _Str(str):
    pass


def _result(outcome: Outcome = Outcome.PASS, passed: bool = True) -> OracleResult:
    return OracleResult(oracle_type="x", name="x", outcome=outcome, passed=passed, message="m")


def validated(values: dict[str, Any]) -> Verdict:
    """What the evaluator built before: the values validated by the model."""
    return Verdict.model_validate(values)


def assert_same_verdict(got: Verdict, want: Verdict) -> None:
    """Equal as pydantic compares models, and alike in everything a writer could read."""
    assert type(got) is Verdict
    assert got == want
    assert list(got.__dict__) == list(want.__dict__) == list(FIELDS)
    assert got.model_fields_set == want.model_fields_set
    assert got.model_extra == want.model_extra
    assert got.__pydantic_private__ == want.__pydantic_private__
    assert got.model_dump() == want.model_dump()
    assert got.model_dump_json() == want.model_dump_json()
    # ``True == 1`` and a ``str`` subclass equals its text: the reprs and types tell them apart.
    assert repr(got.__dict__) == repr(want.__dict__)
    assert {k: type(v) for k, v in got.__dict__.items()} == {
        k: type(v) for k, v in want.__dict__.items()
    }
    assert [type(r) for r in got.results] == [type(r) for r in want.results]
    assert got.verdict == want.verdict


def _values_of(verdict: Verdict) -> dict[str, Any]:
    """Every field of ``verdict`` as validation would be given it (results as they are)."""
    return {name: getattr(verdict, name) for name in FIELDS}


def test_pydantic_keeps_models_as_the_trusted_constructors_build_them() -> None:
    # Another pydantic, keeping a model otherwise, would silently validate every result and
    # verdict: correct, but the cost these constructors exist to save would be back.
    assert result_module.RESULTS_TRUSTED and result_module._VERDICT_TRUSTED


def trusted_verdict(*values: Any) -> Verdict:
    """The core's trusted verdict (what ``CheckRunner.verdict`` builds each verdict with)."""
    verdict: Verdict = result_module.VERDICTS.trusted(*values)
    return verdict


def test_the_trusted_verdict_takes_every_field_in_declaration_order() -> None:
    # The core takes the values by position: its parameters are the model's fields in order.
    parameters = inspect.signature(result_module.VERDICTS.trusted).parameters
    assert tuple(parameters) == FIELDS
    assert all(p.kind is inspect.Parameter.POSITIONAL_ONLY for p in parameters.values())


def test_the_core_refuses_a_model_whose_fields_it_does_not_place() -> None:
    # The values go in by position: a model of other fields (or another order) is refused
    # when the builder is made, not filled with values under the wrong names.
    counts = ModelFill(Counts, True)
    with pytest.raises(ValueError, match="has fields other than"):
        Verdicts(counts, counts, result_module._COUNTED, Outcome.PASS, OracleResult)


def test_a_trusted_verdict_is_the_object_validation_makes() -> None:
    results = [_result(), _result(Outcome.TOLERATED), _result(Outcome.ERROR, passed=False)]
    values: dict[str, Any] = {
        "contract_id": "support",
        "contract_version": 3,
        "contract_hash": "0123456789abcdef",
        "contract_name": "Support …",
        "subject": "4bf92f3577b34da6a3ce929d0e0e4736",
        "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736",
        "root_span_id": "00f067aa0ba902b7",
        "root_name": "invoke_agent support",
        "agent_name": None,
        "passed": False,
        "results": results,
        "counts": count_outcomes(results),
        "duration_ns": 12345,
    }
    got = trusted_verdict(*values.values())
    want = validated(values)
    assert_same_verdict(got, want)
    assert got.results is results and want.results is not results  # the caller's own list
    assert all(a is b for a, b in zip(got.results, want.results, strict=True))
    assert pickle.loads(pickle.dumps(got)) == want
    assert got.model_copy(update={"passed": True}).passed and not got.passed
    assert got.model_fields_set is not trusted_verdict(*values.values()).model_fields_set
    with pytest.raises(ValidationError):
        got.passed = True  # type: ignore[misc]  # frozen as a validated verdict is


def test_the_verdict_tally_is_the_pass_test_and_the_counts_validation_makes() -> None:
    outcomes = [*Outcome, Outcome.ERROR, Outcome.TOLERATED, Outcome.PASS]
    for n in range(len(outcomes) + 1):
        results = [_result(o, passed=o in (Outcome.PASS, Outcome.TOLERATED)) for o in outcomes[:n]]
        results += [_result(Outcome.MISSING_EVIDENCE, passed=True)]  # ``warn``: it passes
        passed, counts = verdict_tally(results)
        tally: dict[str, int] = {}
        for r in results:
            field = result_module._COUNTED.get(r.outcome)
            if field is not None:
                tally[field] = tally.get(field, 0) + 1
        want = Counts.model_validate(tally)
        assert passed is all(r.passed for r in results)
        assert counts == want and counts.model_fields_set == want.model_fields_set
        assert count_outcomes(results) == want
    assert verdict_tally([]) == (True, Counts())
    # A result built without validation, its outcome a plain string, counts as before.
    odd = OracleResult.model_construct(outcome="tolerated", passed=1)
    assert verdict_tally([odd]) == (True, Counts(tolerated_failures=1))


def _validating_tally(counted: dict[Any, Any]) -> tuple[Verdicts, list[dict[Any, int]]]:
    """A ``Verdicts`` whose ``Counts`` are validated, not filled, and the tallies it validates."""
    seen: list[dict[Any, int]] = []

    def validate(tally: dict[Any, int]) -> Counts:
        seen.append(dict(tally))
        return Counts.model_validate(tally)

    verdicts = Verdicts(
        ModelFill(Verdict, result_module._VERDICT_TRUSTED),
        ModelFill(Counts, False, validate),
        counted,
        Outcome.PASS,
        OracleResult,
    )
    return verdicts, seen


def test_a_tally_validated_counts_as_the_filled_one() -> None:
    # Where ``Counts`` is not kept as filling builds it, the tally is a dict validated: each
    # outcome adds to the field ``_COUNTED`` names (pass to none), in the order first met,
    # whether the outcome is found by identity or only by value (a plain string).
    verdicts, seen = _validating_tally(result_module._COUNTED)
    odd = OracleResult.model_construct(outcome="errors", passed=0)
    odd_tolerated = OracleResult.model_construct(outcome="tolerated", passed=1)
    results = [
        _result(Outcome.PASS),
        _result(Outcome.ERROR, passed=False),
        odd_tolerated,
        _result(Outcome.PASS),
        _result(Outcome.ERROR, passed=False),
        _result(Outcome.TOLERATED),
    ]
    passed, counts = verdicts.tally(results)
    assert seen == [{"errors": 2, "tolerated_failures": 2}]
    assert list(seen[0]) == ["errors", "tolerated_failures"]
    assert (
        (passed, counts)
        == verdict_tally(results)
        == (False, Counts(errors=2, tolerated_failures=2))
    )
    assert counts.model_fields_set == {"errors", "tolerated_failures"}
    assert verdicts.tally([_result(), odd_tolerated]) == (True, Counts(tolerated_failures=1))
    # ``errors`` is no outcome: a result of it adds to no count, and fails the trace.
    assert verdicts.tally([odd]) == (False, Counts())
    assert seen[-1] == {}


def test_a_tally_of_a_field_counts_lacks_is_refused_as_validation_refuses_it() -> None:
    # An outcome counted under a name ``Counts`` does not have: the tally is validated (a
    # filled one could not hold it), and refused; a ``str`` subclass naming a field counts.
    counted = {**result_module._COUNTED, Outcome.ERROR: "harness_errors"}
    verdicts, seen = _validating_tally(counted)
    assert verdicts.tally([_result(Outcome.TOLERATED)]) == (True, Counts(tolerated_failures=1))
    with pytest.raises(ValidationError, match="harness_errors"):
        verdicts.tally([_result(Outcome.TOLERATED), _result(Outcome.ERROR, passed=False)])
    assert seen[-1] == {"tolerated_failures": 1, "harness_errors": 1}
    subclass = {**result_module._COUNTED, Outcome.ERROR: _Str("errors")}
    verdicts, seen = _validating_tally(subclass)
    assert verdicts.tally([_result(Outcome.ERROR, passed=False)]) == (False, Counts(errors=1))
    assert [type(key) for key in seen[-1]] == [_Str]


def _grade_both(trajectory: Trajectory, graded_contract: Any = None) -> tuple[Verdict, Verdict]:
    """``grade``'s verdict, and the one validation makes of the same values."""
    if graded_contract is None:
        graded_contract = contract(invariants=[{"type": "max_steps", "max": 5}])
    got = grade(graded_contract, trajectory)
    return got, validated({**_values_of(got), "results": list(got.results)})


def test_a_trajectory_of_exact_types_gives_the_verdict_validation_gives() -> None:
    for trajectory in (
        traj(gen("hi")),
        Trajectory(steps=traj(gen("hi")).steps, source="run.json"),
        Trajectory(steps=[], root_span_id="r", root_name="agent run", agent_name="support"),
    ):
        got, want = _grade_both(trajectory)
        assert_same_verdict(got, want)


def test_odd_trajectory_values_are_validated_as_before() -> None:
    base = traj(gen("hi"))
    # ``from_normalized`` takes values as they are: a ``str`` subclass reaches the verdict.
    subclassed = Trajectory.from_normalized(
        {**vars(base), "trace_id": _Str("t1"), "root_name": _Str("agent run")}
    )
    got, want = _grade_both(subclassed)
    assert type(got.trace_id) is str and type(got.subject) is str and type(got.root_name) is str
    assert_same_verdict(got, want)
    converted = Trajectory.from_normalized({**vars(base), "agent_name": b"support"})
    got, want = _grade_both(converted)
    assert got.agent_name == "support"
    assert_same_verdict(got, want)
    for field, value in (("trace_id", 7), ("agent_name", 3.5), ("root_span_id", ["s"])):
        odd = Trajectory.from_normalized({**vars(base), field: value})
        with pytest.raises(ValidationError):
            grade(contract(invariants=[{"type": "max_steps", "max": 5}]), odd)


def test_odd_contract_values_are_validated_as_before() -> None:
    # A contract built by ``model_construct`` holds what it was given: its results and its
    # verdict are validated (converted, or refused), as they always were.
    valid = contract(invariants=[{"type": "max_steps", "max": 5}])
    odd = {"id": _Str("c"), "name": _Str("n"), "version": "2", "content_hash": _Str("h")}
    constructed = type(valid).model_construct(**{**dict(valid), **odd})
    got, want = _grade_both(traj(gen("hi")), constructed)
    assert (got.contract_id, got.contract_name, got.contract_version) == ("c", "n", 2)
    assert type(got.contract_id) is str and type(got.contract_name) is str
    assert type(got.contract_hash) is str
    for r in got.results:
        assert type(r.contract_id) is str and type(r.contract_version) is int
    assert_same_verdict(got, want)
    for field, value in (("version", "two"), ("id", 3), ("name", None)):
        refused = type(valid).model_construct(**{**dict(valid), field: value})
        with pytest.raises(ValidationError):
            grade(refused, traj(gen("hi")))


def test_a_result_of_another_class_is_validated_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    class _Result(OracleResult):
        pass

    extra = _Result(oracle_type="y", name="y", outcome=Outcome.PASS, passed=True, message="m")
    # The core asks ``trace_complete`` only of a trajectory with orphan spans.
    monkeypatch.setattr(evaluator, "_RUNNER", evaluator._runner(lambda contract, t: [extra]))
    orphaned = Trajectory.from_normalized({**vars(traj(gen("hi"))), "orphan_spans": ["s9"]})
    got, want = _grade_both(orphaned)
    assert got.results[-1] is extra  # validation keeps an instance as it is, subclass or not
    assert_same_verdict(got, want)
    plain, _ = _grade_both(traj(gen("hi")))
    assert extra not in plain.results  # no orphan spans: nothing asked, nothing added


def test_a_trajectory_with_orphan_spans_gets_the_trace_complete_result() -> None:
    orphaned = Trajectory.from_normalized({**vars(traj(gen("hi"))), "orphan_spans": ["s9"]})
    got, want = _grade_both(orphaned)
    assert got.results[-1].oracle_type == "trace_complete" and not got.passed
    assert got.counts == count_outcomes(got.results) and got.counts.missing_evidence >= 1
    assert_same_verdict(got, want)


def test_the_verdict_goes_on_from_the_tally_the_runner_counted() -> None:
    # ``CheckRunner.run`` counts each result as it makes it and the verdict reads only the
    # results added after (``trace_complete``'s): the same pass test and counts as reading
    # every result, whatever follows the runner's results.
    compiled = compile_contract(
        contract(
            on_missing_evidence="warn",
            evidence=["token_usage"],
            invariants=[
                {"type": "max_steps", "max": 5},
                {"type": "max_steps", "max": 0},
                {"type": "tool_called", "tool": "absent"},
            ],
            tolerances=[
                {"type": "tool_errors", "max": 0},
                {"type": "tool_errors", "max": 1},
                {"type": "max_tool_calls", "max": 5},
            ],
        )
    )
    trajectory = traj(gen("hi", tokens=(None, None)), tool("lookup", status="error"))
    ctx = GradeContext(
        trajectory=trajectory,
        contract=compiled.contract,
        initial_workspace={},
        evidence=Evidence(trajectory),
    )
    results, tally = evaluator._RUNNER.run(compiled.checks, ctx, False, False)
    assert len({r.outcome for r in results}) >= 4
    error = _result(Outcome.ERROR, passed=False)
    for extra in ([], [error], [_result(), error, _result(Outcome.TOLERATED)]):
        listed = [*results, *extra]
        got = evaluator._RUNNER.verdict(compiled, trajectory, listed, 0, tally)
        want = evaluator._RUNNER.verdict(compiled, trajectory, [*listed], 0)
        assert got.counts == want.counts == count_outcomes(listed)
        assert got.counts.model_fields_set == want.counts.model_fields_set
        assert got.passed is want.passed is all(r.passed for r in listed)
    # A tally of more results than the verdict is given counts only what it is given.
    fewer = evaluator._RUNNER.verdict(compiled, trajectory, results[:1], 0, tally)
    assert fewer.counts == count_outcomes(results[:1]) and fewer.passed is results[0].passed


def test_the_verdict_shortcut_is_active(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(values: Any) -> Verdict:
        raise AssertionError("a verdict of exact types was validated")

    def refuse_counts(values: Any) -> Counts:
        raise AssertionError("a tally was validated")

    verdicts = Verdicts(
        ModelFill(Verdict, result_module._VERDICT_TRUSTED, refuse),
        ModelFill(Counts, True, refuse_counts),
        result_module._COUNTED,
        Outcome.PASS,
        OracleResult,
    )
    monkeypatch.setattr(result_module, "VERDICTS", verdicts)
    monkeypatch.setattr(evaluator, "VERDICTS", verdicts)
    monkeypatch.setattr(evaluator, "_RUNNER", evaluator._runner(trace_complete))
    verdict = grade(contract(invariants=[{"type": "max_steps", "max": 5}]), traj(gen("hi")))
    assert verdict.passed and verdict.counts == Counts()
    with pytest.raises(AssertionError, match="was validated"):
        # A contract whose values are not of their fields' exact types: validated.
        valid = contract(invariants=[{"type": "max_steps", "max": 5}])
        odd = type(valid).model_construct(**{**dict(valid), "name": _Str("n")})
        grade(odd, traj(gen("hi")))


def test_graded_traces_hold_exactly_the_verdicts_validation_would() -> None:
    contracts = [load_contract(p) for p in sorted((REPO / "examples" / "contracts").iterdir())]
    session = GradingSession(contracts, load_conventions([]))
    report = grade_paths([str(REPO / "examples" / "traces")], session)
    assert len(report.verdicts) > 5
    assert {v.verdict for v in report.verdicts} >= {"pass", "fail"}
    for v in report.verdicts:
        assert_same_verdict(v, validated({**_values_of(v), "results": list(v.results)}))
        assert_same_verdict(v, validated(v.model_dump()))

    steps = traj(tool("lookup", {"q": 1}, {"ok": True}), tool("lookup", {"q": 1}, None), gen("x"))
    verdict = grade(
        contract(
            invariants=[{"type": "tool_not_called", "tool": "lookup"}],
            tolerances=[{"type": "tool_retries", "tools": ["lookup"], "max": 1}],
        ),
        steps,
    )
    assert not verdict.passed and verdict.counts.invariant_failures == 1
    assert_same_verdict(verdict, validated(verdict.model_dump()))
