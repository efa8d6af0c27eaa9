"""A check's finding that no result can be built of (the result model refuses its values: a
plug-in returning ``details=None``, a message that is no ``str``, an ``int`` span id) is that
check's ``error`` result (``_unwritable`` in ``otel_oracles/grade/evaluator.py``, called by the
core's check loop): before, the refusal escaped the loop and the whole trace's verdict was a
grading crash, losing every other check's result."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest

from otel_oracles.grade import Finding, GradeContext, OracleCheck, grade, register_oracle
from otel_oracles.model.result import Outcome
from tests.oracles.trace_builders import contract, gen, traj

REPO = Path(__file__).resolve().parents[2]
TRACE = REPO / "tests" / "testdata" / "traces" / "pydantic-ai" / "a_happy.otlp.json"

SECRET = "sk-live-7f3a9c1e5b2d4f6a8c0e"
"""A value a plug-in put where the model wants something else: never in the message."""

_FINDING: list[Finding] = []


@register_oracle
class _Unwritable(OracleCheck):
    """Returns whatever the test put in ``_FINDING``, as a plug-in could."""

    oracle_type: ClassVar[str] = "unwritable_finding_test_returns"

    def check(self, ctx: GradeContext) -> Finding:
        return _FINDING[0]


def _results(finding: Finding) -> list[Any]:
    _FINDING[:] = [finding]
    checks = [
        {"type": "max_steps", "max": 5},
        {"type": "unwritable_finding_test_returns"},
        {"type": "max_steps", "max": 0},
    ]
    return grade(contract(invariants=checks), traj(gen("hi"))).results


@pytest.mark.parametrize(
    ("finding", "field"),
    [
        (Finding("pass", "ok", details=None), "details"),  # type: ignore[arg-type]
        (Finding("fail", 12345), "message"),  # type: ignore[arg-type]
        (Finding("pass", "ok", span_ids=(SECRET, 7)), "span_ids.1"),  # type: ignore[arg-type]
        (Finding("pass", "ok", used=SECRET), "used"),  # type: ignore[arg-type]
    ],
    ids=["details-none", "int-message", "int-span-id", "text-count"],
)
def test_the_check_errs_and_the_others_keep_their_results(finding: Finding, field: str) -> None:
    before, found, after = _results(finding)
    assert before.outcome == Outcome.PASS
    assert after.outcome == Outcome.INVARIANT_FAILURE  # max 0 steps: its own verdict, kept
    assert found.outcome == Outcome.ERROR and not found.passed
    assert found.oracle_type == "unwritable_finding_test_returns"
    assert found.details == {"error.type": "ValidationError"}
    assert found.message.startswith(f"the oracle's finding cannot be a result ({field}: ")
    # The fields and what they should be, not the values (they may be trace content).
    assert SECRET not in found.message and "12345" not in found.message


def test_a_finding_that_is_no_finding_is_the_checks_error() -> None:
    before, found, after = _results(object())  # type: ignore[arg-type]
    assert found.outcome == Outcome.ERROR and found.message.startswith("oracle raised ")
    assert (before.outcome, after.outcome) == (Outcome.PASS, Outcome.INVARIANT_FAILURE)


PLUGIN = """
import sys
from typing import ClassVar
from otel_oracles.grade import Finding, OracleCheck, register_oracle
from otel_oracles.cli import main

class Unwritable(OracleCheck):
    oracle_type: ClassVar[str] = "unwritable_finding"

    def check(self, ctx):
        return Finding("pass", "ok", details=None)

register_oracle(Unwritable)
sys.argv = ["otel-oracles", *sys.argv[1:]]
main()
"""


def test_grade_writes_every_report_with_the_checks_error(tmp_path: Path) -> None:
    """Through the CLI: the trace keeps its verdict (no grading crash) and its other check's
    result, and every report is written."""
    contract_path = tmp_path / "c.yaml"
    contract_path.write_text(
        "id: unwritable\ninvariants:\n"
        "  - type: unwritable_finding\n  - type: max_steps\n    max: 500\n"
    )
    html, junit = tmp_path / "r.html", tmp_path / "r.xml"
    proc = subprocess.run(
        [sys.executable, "-c", PLUGIN, "grade", str(TRACE), "-c", str(contract_path), "--json",
         "--explain", "full", "--html", str(html), "--junit", str(junit)],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert "Traceback" not in proc.stderr, proc.stderr
    (verdict,) = json.loads(proc.stdout)["verdicts"]
    found, other = verdict["results"]
    assert (found["oracle_type"], found["outcome"]) == ("unwritable_finding", "error")
    assert found["message"].startswith("the oracle's finding cannot be a result (details: ")
    assert (other["oracle_type"], other["outcome"]) == ("max_steps", "pass")
    assert proc.returncode == 1
    assert "unwritable_finding" in html.read_text() and "unwritable_finding" in junit.read_text()
