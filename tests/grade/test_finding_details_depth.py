"""A check's finding whose ``details`` nest deeper than any report can write is that check's
``error`` result (``MAX_DETAILS_DEPTH`` in ``native/python/src/checks.rs``), refused where the
finding leaves the check: before the limit, ``grade --explain full`` stopped with a traceback
in whichever writer met the details first (pydantic's dump in the JSON report from 255
levels, ``json.dumps`` in the HTML report near the recursion limit). Only a plug-in can
return such details: the content parsers stop at 128 levels of nesting."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest

from otel_oracles.grade import Finding, GradeContext, OracleCheck, grade, register_oracle
from otel_oracles.grade.loader import compile_contract
from otel_oracles.model.result import Outcome
from tests.oracles.trace_builders import contract, gen, traj

REPO = Path(__file__).resolve().parents[2]
TRACE = REPO / "tests" / "testdata" / "traces" / "pydantic-ai" / "a_happy.otlp.json"

LIMIT = 200
"""``MAX_DETAILS_DEPTH``: the details themselves are level 1."""


def nested(levels: int) -> dict[str, Any]:
    """Details ``levels`` dicts deep (``{"d": {"d": ... {}}}``)."""
    details: dict[str, Any] = {}
    for _ in range(levels - 1):
        details = {"d": details}
    return details


def depth(value: object) -> int:
    """How many containers deep ``value`` is (the test's own count of the limit's unit)."""
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    if isinstance(value, list | tuple | set | frozenset):
        return 1 + max((depth(v) for v in value), default=0)
    return 0


_DETAILS: list[dict[str, Any]] = []


@register_oracle
class _ReturnsDetails(OracleCheck):
    """Fails with whatever details the test put in ``_DETAILS``, as a plug-in could."""

    oracle_type: ClassVar[str] = "details_depth_test_returns"

    def check(self, ctx: GradeContext) -> Finding:
        return Finding.fail("found", details=_DETAILS[0])


def _results(details: dict[str, Any]) -> list[Any]:
    _DETAILS[:] = [details]
    checks = [{"type": "details_depth_test_returns"}, {"type": "max_steps", "max": 5}]
    return grade(contract(invariants=checks), traj(gen("hi"))).results


def test_details_at_the_limit_are_the_checks_own_result() -> None:
    details = nested(LIMIT)
    assert depth(details) == LIMIT
    found, other = _results(details)
    assert found.outcome == Outcome.INVARIANT_FAILURE
    assert found.message == "found" and found.details == details
    assert other.outcome == Outcome.PASS


@pytest.mark.parametrize(
    "details",
    [
        nested(LIMIT + 1),
        {"a": [1, (2, [{"b": nested(LIMIT - 4)}])]},  # lists and tuples count as levels
        {"s": frozenset({(((),),)})} | {"t": [nested(LIMIT - 1)]},
    ],
    ids=["dicts", "mixed", "frozenset-beside"],
)
def test_details_past_the_limit_are_the_checks_error_and_no_other_checks(
    details: dict[str, Any],
) -> None:
    assert depth(details) == LIMIT + 1
    found, other = _results(details)
    assert found.outcome == Outcome.ERROR
    assert found.message == (
        f"oracle raised ValueError: the finding's details nest deeper than {LIMIT} levels, "
        "more than a report can write"
    )
    assert found.details == {"error.type": "ValueError"}
    assert other.outcome == Outcome.PASS


def test_only_the_findings_of_classes_outside_the_builtin_modules_are_walked() -> None:
    """The built-ins' details are shallow by construction (and walking every one cost ~0.2%
    of a whole grade): the core walks the findings of ``foreign`` checks only."""
    compiled = contract(
        invariants=[{"type": "details_depth_test_returns"}, {"type": "max_steps", "max": 5}]
    )
    assert [check.foreign for check in compile_contract(compiled).checks] == [True, False]


def test_details_holding_themselves_are_refused_not_walked_forever() -> None:
    details: dict[str, Any] = {}
    details["self"] = [details]
    found, other = _results(details)
    assert found.outcome == Outcome.ERROR
    assert "deeper than" in found.message
    assert other.outcome == Outcome.PASS


PLUGIN = """
import sys
from typing import ClassVar
from otel_oracles.grade import Finding, OracleCheck, register_oracle
from otel_oracles.cli import main

LEVELS = int(sys.argv[1])

class Deep(OracleCheck):
    oracle_type: ClassVar[str] = "deep_details"

    def check(self, ctx):
        details = {}
        for _ in range(LEVELS - 1):
            details = {"d": details}
        return Finding.fail("found", details=details)

register_oracle(Deep)
sys.argv = ["otel-oracles", *sys.argv[2:]]
main()
"""


@pytest.mark.parametrize("levels", [LIMIT, LIMIT + 1, 600])
def test_grade_explain_full_writes_every_report_whatever_a_plugin_returns(
    levels: int, tmp_path: Path
) -> None:
    """The failure this guards against: ``grade --explain full`` with a plug-in whose details
    nest 600 levels ended in a traceback (JSON and HTML report) and no report at all."""
    contract_path = tmp_path / "c.yaml"
    contract_path.write_text("id: deep\ninvariants:\n  - type: deep_details\n")
    html = tmp_path / "r.html"
    proc = subprocess.run(
        [sys.executable, "-c", PLUGIN, str(levels), "grade", str(TRACE), "-c", str(contract_path),
         "--json", "--explain", "full", "--html", str(html)],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert "Traceback" not in proc.stderr, proc.stderr
    (result,) = (r for v in json.loads(proc.stdout)["verdicts"] for r in v["results"])
    if levels <= LIMIT:
        assert (proc.returncode, result["outcome"]) == (1, "invariant_failure")
        assert depth(result["details"]) == levels
    else:
        assert (proc.returncode, result["outcome"]) == (1, "error")
        assert "deeper than 200 levels" in result["message"]
    assert "deep_details" in html.read_text()
