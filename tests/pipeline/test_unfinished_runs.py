"""Runs that died part-way are never a silent pass: real killed captures (``z_killed_*``).

A killed run's agent or root span never ends, so it is never exported: a contract whose
``match`` keys on that span (``gen_ai.agent.name``, ``root_name``) cannot see the run as its
own. Such a trace is graded against every contract whose selector the missing part could
satisfy, and fails closed; ``on_missing_evidence: warn`` does not pass it. These tests fail on
a grader that leaves such traces unselected (a CI gate then exits 0 over a run that died) or
lets ``warn`` pass them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from otel_oracles.grade.loader import load_contract
from otel_oracles.mapping import ConventionSet, load_conventions, map_trace
from otel_oracles.model.contract import Contract, MatchSpec
from otel_oracles.model.result import InputProblem, Outcome, Verdict
from otel_oracles.model.span import Trace
from otel_oracles.pipeline import grade_trace, read_traces
from otel_oracles.session import GradingSession
from otel_oracles.session._subject import mapped_agent_names

REPO = Path(__file__).resolve().parent.parent.parent
TRACES = REPO / "tests" / "testdata" / "traces"
EXAMPLE_CONTRACTS = REPO / "examples" / "contracts"
CLI = [sys.executable, "-c", "from otel_oracles.cli import main; main()"]

EVERY_KILLED = sorted(TRACES.glob("*/z_killed_*.otlp.json"))
"""Every killed-run capture: Python, JavaScript, Java and Go sources, three scenarios,
content on and off."""

HTTP_ONLY = ("openai-go-otelhttp",)
"""Sources traced by generic HTTP client instrumentation alone: even their finished runs
show no model call, tool call or agent step, so no contract grades any of their traces
(``test_http_client_spans_alone_are_never_graded``) and a killed one is no different."""

KILLED = [p for p in EVERY_KILLED if p.parent.name not in HTTP_ONLY]
"""The killed runs a contract can grade: those of sources whose finished runs are graded."""


@pytest.fixture(scope="module")
def conventions() -> ConventionSet:
    return load_conventions()


@pytest.fixture(scope="module")
def examples() -> list[Contract]:
    return [load_contract(p) for p in sorted(EXAMPLE_CONTRACTS.glob("*.yaml"))]


def one_trace(path: Path) -> Trace:
    problems: list[InputProblem] = []
    (trace,) = list(read_traces([str(path)], problems))
    assert not problems
    return trace


def trace_complete(verdict: Verdict) -> list[tuple[Outcome, bool, bool]]:
    return [
        (r.outcome, r.passed, bool(r.details.get("possibly_its_run")))
        for r in verdict.results
        if r.oracle_type == "trace_complete"
    ]


def test_the_captures_are_killed_runs_without_their_root() -> None:
    assert len(KILLED) >= 54
    for path in EVERY_KILLED:
        trace = one_trace(path)
        assert trace.orphans, path
        assert all(s.parent_span_id for s in trace.spans), f"{path}: a root arrived"


@pytest.mark.parametrize("path", KILLED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_example_contract_that_may_be_the_runs_grades_it_and_fails(
    path: Path, examples: list[Contract], conventions: ConventionSet
) -> None:
    """The example contracts select by ``gen_ai.agent.name`` (and ``root_name``): the span
    that carries it never arrived, so each may be the run's contract. Each grades it, none
    passes, and the verdicts of those the arrived spans do not show to be the run's say so."""
    trace = one_trace(path)
    graded = grade_trace(trace, examples, conventions)
    assert {v.contract_id for v, _ in graded} == {c.id for c in examples}
    for verdict, _ in graded:
        assert verdict.passed is False, (path, verdict.contract_id)
        ((outcome, passed, _possibly),) = trace_complete(verdict)
        assert outcome is Outcome.MISSING_EVIDENCE and not passed
    session = GradingSession(examples, conventions)
    chosen, _ = session.select(trace, lambda: mapped_agent_names(map_trace(trace, conventions)))
    selected = {c.contract.id for c in chosen}
    for verdict, _ in graded:
        possibly = trace_complete(verdict)[0][2]
        assert possibly is (verdict.contract_id not in selected), verdict.contract_id


@pytest.mark.parametrize("path", KILLED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_warn_never_passes_a_run_that_did_not_finish(
    path: Path, examples: list[Contract], conventions: ConventionSet
) -> None:
    """Under ``warn`` every check a killed run cannot answer is accepted: ``trace_complete``
    still fails it (held out, 37 of the 54 Python captures and 4 of the 6 JavaScript ones
    passed a no-``match`` support-rag under warn)."""
    support = next(c for c in examples if c.id == "support-rag")
    lenient = support.model_copy(update={"match": None, "on_missing_evidence": "warn"})
    ((verdict, _),) = grade_trace(one_trace(path), [lenient], conventions)
    assert verdict.passed is False
    assert trace_complete(verdict) == [(Outcome.MISSING_EVIDENCE, False, False)]


def _contract(match: MatchSpec | list[MatchSpec], cid: str = "c") -> Contract:
    """``no-deletes`` (``tool_not_called: delete_records``) with ``match``."""
    no_deletes = load_contract(
        REPO / "tests" / "testdata" / "pipeline" / "contracts" / "no-deletes.yaml"
    )
    return no_deletes.model_copy(update={"id": cid, "match": match})


def test_what_arrived_still_rules_contracts_out(conventions: ConventionSet) -> None:
    """A ``resource`` part is decided by the spans that arrived (one process, one resource):
    a contract for another service does not grade the killed run; one for its service does,
    as selected (no "possibly")."""
    path = TRACES / "openinference-openai-agents" / "z_killed_mid_run.otlp.json"
    trace = one_trace(path)
    service = trace.resource["service.name"]
    other = _contract(
        MatchSpec(resource={"service.name": "another-service"}, span={"gen_ai.agent.name": "x"})
    )
    assert grade_trace(trace, [other], conventions) == []
    own = _contract(MatchSpec(resource={"service.name": service}), "own")
    ((verdict, _),) = grade_trace(trace, [own], conventions)
    assert verdict.passed is False
    assert trace_complete(verdict) == [(Outcome.MISSING_EVIDENCE, False, False)]
    by_root = _contract(MatchSpec(root_name="agent_run"), "by-root")
    ((verdict, _),) = grade_trace(trace, [by_root], conventions)
    assert trace_complete(verdict)[0][2] is True, "the root never arrived: it may be agent_run"


def _edited(tmp_path: Path, edit: dict[str, str], drop_root: bool = False) -> Trace:
    """pydantic-ai's a_happy with parents re-pointed (span name -> parent id) and the root
    kept or dropped."""
    doc = json.loads((TRACES / "pydantic-ai" / "a_happy.otlp.json").read_text())
    scope = doc["resourceSpans"][0]["scopeSpans"][0]
    for span in scope["spans"]:
        if span["name"] in edit:
            span["parentSpanId"] = edit[span["name"]]
    if drop_root:
        scope["spans"] = [s for s in scope["spans"] if s.get("parentSpanId")]
    path = tmp_path / "edited.otlp.json"
    path.write_text(json.dumps(doc))
    return one_trace(path)


def test_a_root_that_arrived_decides_root_name_but_not_span_attributes(
    tmp_path: Path, conventions: ConventionSet
) -> None:
    """A lost span below an arrived root: ``root_name`` is decided by the root; a ``span``
    selector may still be satisfied by the span that never arrived."""
    trace = _edited(tmp_path, {"execute_tool search_docs": "ffffffffffffffff"})
    assert trace.orphans and trace.root is not None and not trace.root.parent_span_id
    wrong_root = _contract(MatchSpec(root_name="agent_run"), "wrong-root")
    assert grade_trace(trace, [wrong_root], conventions) == []
    other_agent = _contract(MatchSpec(span={"gen_ai.agent.name": "billing_agent"}), "billing")
    ((verdict, _),) = grade_trace(trace, [other_agent], conventions)
    assert verdict.passed is False and trace_complete(verdict)[0][2] is True
    either = _contract(
        [MatchSpec(root_name="agent_run"), MatchSpec(span={"gen_ai.agent.name": "billing"})],
        "either",
    )
    assert [v.contract_id for v, _ in grade_trace(trace, [either], conventions)] == ["either"]


def test_a_complete_trace_a_selector_rejects_stays_ungraded(
    tmp_path: Path, conventions: ConventionSet
) -> None:
    trace = _edited(tmp_path, {})
    assert not trace.orphans
    other_agent = _contract(MatchSpec(span={"gen_ai.agent.name": "billing_agent"}), "billing")
    assert grade_trace(trace, [other_agent], conventions) == []


def test_orphans_showing_no_agent_work_are_not_graded_as_possibly_a_run(
    tmp_path: Path, conventions: ConventionSet
) -> None:
    """A web request whose parent is in a caller that does not flag it as remote, a lost batch
    of a service that is no agent: spans no convention recognised alone are no run a selector
    keyed on the agent was meant for."""
    span = {
        "traceId": "0af7651916cd43dd8448eb211c80319c",
        "spanId": "b7ad6b7169203331",
        "parentSpanId": "00f067aa0ba902b7",
        "name": "GET /health",
        "kind": 2,
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000000100000000",
        "attributes": [{"key": "http.request.method", "value": {"stringValue": "GET"}}],
    }
    doc = {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "web"}}]
                },
                "scopeSpans": [{"scope": {"name": "http"}, "spans": [span]}],
            }
        ]
    }
    path = tmp_path / "web.otlp.json"
    path.write_text(json.dumps(doc))
    trace = one_trace(path)
    assert trace.orphans
    agent = _contract(MatchSpec(span={"gen_ai.agent.name": "support_agent"}), "support")
    assert grade_trace(trace, [agent], conventions) == []


def test_grade_exits_1_over_killed_runs_beside_a_passing_one(tmp_path: Path) -> None:
    """The CI gate, end to end: a happy run and the three killed runs of one source, the
    example contracts. Held out, the gate printed one pass, noted 6 traces "matched no
    contract's selector" and exited 0; each killed run now fails in the report and the
    JUnit file."""
    source = TRACES / "openinference-openai-agents"
    paths = [source / "a_happy.otlp.json", *sorted(source.glob("z_killed_*.otlp.json"))]
    junit = tmp_path / "report.xml"
    done = subprocess.run(
        [
            *CLI,
            "grade",
            *map(str, paths),
            "-c",
            str(EXAMPLE_CONTRACTS),
            "--json",
            "--junit",
            str(junit),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    killed = {one_trace(p).trace_id for p in paths[1:]}
    assert len(killed) == 6
    failed = {v["trace_id"] for v in report["verdicts"] if not v["passed"]}
    assert failed == killed
    assert not any("matched no contract" in n for n in report["notes"])
    xml = junit.read_text()
    assert all(trace_id in xml for trace_id in killed)


@pytest.mark.parametrize(
    "path",
    [p for p in EVERY_KILLED if p.parent.name in HTTP_ONLY],
    ids=lambda p: f"{p.parent.name}/{p.stem}",
)
def test_a_killed_run_no_contract_can_grade_fails_the_gate(path: Path) -> None:
    """A killed run of an HTTP-only source holds no agent run: no verdict, and the CI gate
    does not exit 0 over it ("nothing graded" exits 2 unless ``--allow-empty``)."""
    done = subprocess.run(
        [*CLI, "grade", str(path), "-c", str(EXAMPLE_CONTRACTS), "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    assert json.loads(done.stdout)["verdicts"] == []
    assert "nothing graded" in done.stderr
