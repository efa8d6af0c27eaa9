"""A run whose trace shows neither a model call nor a tool call never passes a tool check.

``tests/testdata/haystack-openinference-latest``: the haystack-openinference agents on
haystack-ai 3.4.1 traced by openinference-instrumentation-haystack 0.1.46, the top agent run as
the one component of a ``Pipeline`` (a standalone ``Agent.run`` exports no span at all on
Haystack 3). Haystack 3's ``Agent`` runs its chat generator and ``ToolInvoker`` outside the
pipeline the instrumentation wraps, so each trace is a ``Pipeline.run`` span and an
``Agent.run`` span, both recognised (``openinference.yaml``), with nothing of the model or tool
calls under them. Held out, before ``tool_names`` knew this case, every trace read as a run that
called no tool: ``no-destructive-tools`` passed on ``d_forbidden_tool`` (the forbidden
``delete_records`` ran), ``no-network`` on ``h_coding_agent`` (``curl`` ran), ``bounded-effort``
and ``search-retry`` everywhere: nothing in the trace shows which tools ran, so every check
that needs to know is missing evidence (DESIGN section 8).
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

from otel_oracles.grade.evidence import final_output
from otel_oracles.grade.loader import load_contract
from otel_oracles.mapping import load_conventions
from otel_oracles.model.contract import Contract
from otel_oracles.model.result import Outcome
from otel_oracles.pipeline import grade_trace, read_traces

REPO = Path(__file__).resolve().parents[2]
CAPTURE = REPO / "tests" / "testdata" / "haystack-openinference-latest"
CONTRACTS = REPO / "examples" / "contracts"

TOOL_CHECKS = {
    "support-rag": {"no-destructive-tools", "searched-the-index", "bounded-effort", "search-retry"},
    "multi-agent-handoff": {"research-searches", "no-destructive-tools", "search-retry"},
    "coding-agent": {
        "tests-pass",
        "test-asserts",
        "pytest-config-untouched",
        "no-network",
        "write-then-run",
        "no-loops",
        "bounded-effort",
        "flaky-tool",
    },
}
"""The example contracts' checks that stand on which tools ran (their names, inputs or
outcomes)."""


@functools.cache
def contract_named(name: str) -> Contract:
    """The example contract without its ``match`` (the capture's service name is its own)."""
    return load_contract(CONTRACTS / f"{name}.yaml").model_copy(update={"match": None})


def cases() -> list[tuple[str, str]]:
    """(file name, contract) for every capture: the coding scenario against the coding
    contract, ``g_handoff`` against both support and handoff contracts."""
    out = []
    for path in sorted(CAPTURE.glob("*.otlp.json")):
        scenario = path.name.split(".")[0]
        if scenario == "h_coding_agent":
            out.append((path.name, "coding-agent"))
            continue
        out.append((path.name, "support-rag"))
        if scenario == "g_handoff":
            out.append((path.name, "multi-agent-handoff"))
    return out


def test_the_capture_holds_every_scenario_in_both_variants() -> None:
    assert len(cases()) == 18


@pytest.mark.parametrize(("name", "contract"), cases())
def test_tool_checks_are_missing_evidence_never_a_pass(name: str, contract: str) -> None:
    problems: list = []
    traces = read_traces([str(CAPTURE / name)], problems)
    assert problems == []
    graded = [
        vt for t in traces for vt in grade_trace(t, [contract_named(contract)], load_conventions())
    ]
    assert len(graded) == 1
    verdict, trajectory = graded[0]
    assert trajectory.unmapped_spans == {}, "both spans are recognised: no coverage gap hides it"
    assert not any(s.is_tool for s in trajectory.steps)
    got = {r.name: r.outcome for r in verdict.results}
    for check in TOOL_CHECKS[contract]:
        assert got[check] == Outcome.MISSING_EVIDENCE, (check, got[check])
    assert not verdict.passed


def _final_answers() -> dict[str, str]:
    """EXPECTED.md's final answer per scenario (the ``**Final answer:** '...'`` lines)."""
    text = (CAPTURE / "EXPECTED.md").read_text(encoding="utf-8")
    found: dict[str, str] = {}
    for section in text.split("\n## ")[1:]:
        scenario = section.split("\n", 1)[0].strip()
        m = re.search(r"^- \*\*Final answer:\*\* (.+)$", section, re.MULTILINE)
        if m:
            found[scenario] = ast.literal_eval(m.group(1))
    return found


@pytest.mark.parametrize(("name", "contract"), [c for c in cases() if ".nocontent." not in c[0]])
def test_the_answer_is_the_last_reply_and_its_citations_cannot_be_judged(
    name: str, contract: str
) -> None:
    """With content on, the ``Agent.run`` span's output is the run's whole conversation: the
    answer is its last assistant message (``haystack_agent_reply``), never the dump, whose
    system prompt and tool results hold ids the answer did not cite. Nothing shows what the
    run's tools returned, so a cited id is neither grounded nor fabricated as far as the
    trace shows: ``grounded-citations`` is missing evidence, never a failure (held out it
    failed every citing answer: "ids returned: none")."""
    problems: list = []
    traces = read_traces([str(CAPTURE / name)], problems)
    graded = [
        vt for t in traces for vt in grade_trace(t, [contract_named(contract)], load_conventions())
    ]
    verdict, trajectory = graded[0]
    answer = final_output(trajectory)
    assert answer.text == _final_answers()[name.split(".")[0]]
    got = {r.name: r for r in verdict.results}
    if "grounded-citations" in got:
        result = got["grounded-citations"]
        cites = re.search(r"\[doc-\d+\]", answer.text) is not None
        want = Outcome.MISSING_EVIDENCE if cites else Outcome.PASS
        assert result.outcome == want, result.message
