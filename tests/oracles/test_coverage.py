"""Fail closed on coverage: checks that need to see every span (``tool_not_called``,
``no_network``, ``citations_grounded``, ``handoff``) cannot pass on a trace with spans no
convention recognised, unless the contract or the check relaxes coverage explicitly.

Real-source cases add spans to real captures, as another instrumentation running in the same
process would have exported them (an unknown framework's span, an httpx request, a database
call), and grade the result.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from otel_oracles.errors import ContractError
from otel_oracles.grade.loader import parse_contract
from otel_oracles.mapping import load_conventions
from otel_oracles.model.contract import Contract
from otel_oracles.model.result import Outcome, Verdict
from otel_oracles.model.step import Trajectory
from otel_oracles.pipeline import grade_trace, read_traces
from tests.oracles.trace_builders import check, gen, tool, traj

TRACES = Path(__file__).resolve().parents[1] / "testdata" / "traces"

SAFETY = [
    {"type": "tool_not_called", "tool": "delete_records", "name": "no-delete"},
    {"type": "no_network", "name": "no-network"},
    {"type": "citations_grounded", "name": "grounded"},
    {"type": "handoff", "forbidden": ["* -> billing"], "name": "no-billing"},
]


def _contract(**extra: Any) -> Contract:
    return parse_contract({"id": "c", "invariants": copy.deepcopy(SAFETY), **extra}, "<test>")


def _clean_run(**kw: Any) -> Trajectory:
    return traj(
        {"kind": "agent", "agent_name": "support", "start_ns": 0, "end_ns": 100_000_000},
        gen(tool_calls=["search_docs"]),
        tool("search_docs", {"query": "refunds"}, "doc-42: refunds take 5 days"),
        gen("Refunds take 5 days [doc-42]."),
        **kw,
    )


def _outcomes(verdict: Verdict) -> dict[str, Outcome]:
    return {r.name: r.outcome for r in verdict.results}


def test_unclassified_spans_turn_a_pass_into_missing_evidence_naming_them() -> None:
    from otel_oracles.grade import grade

    t = _clean_run(unmapped_spans={"langgraph.node": 3, "agent_run": 1})
    verdict = grade(_contract(), t)
    assert set(_outcomes(verdict).values()) == {Outcome.MISSING_EVIDENCE}, verdict.results
    for r in verdict.results:
        assert "'langgraph.node' x3, 'agent_run' x1" in r.message, r.message
        assert r.details["unclassified_spans"] == {"langgraph.node": 3, "agent_run": 1}
    assert set(_outcomes(grade(_contract(), _clean_run())).values()) == {Outcome.PASS}


def test_an_observed_violation_stays_a_failure_whatever_else_the_trace_holds() -> None:
    t = traj(
        gen(tool_calls=["delete_records"]),
        tool("delete_records", {"id": 7}, "deleted"),
        unmapped_spans={"mystery": 1},
    )
    result = check(SAFETY[0], t)
    assert result.outcome == Outcome.INVARIANT_FAILURE, result.message


def test_a_required_handoff_not_seen_beside_unknown_spans_is_missing_evidence() -> None:
    """The transfer may be among the spans no convention recognised (an unmapped handoff
    span); a forbidden transfer that was seen stays a failure."""
    run = (
        {"kind": "agent", "agent_name": "triage"},
        {"kind": "agent", "agent_name": "research"},
    )
    required = {"type": "handoff", "required": ["triage -> research"]}
    unseen = check(required, traj(*run, unmapped_spans={"Handoff": 1}))
    assert unseen.outcome == Outcome.MISSING_EVIDENCE, unseen.message
    assert "'Handoff' x1" in unseen.message and "did not happen" in unseen.message
    assert check(required, traj(*run)).outcome == Outcome.INVARIANT_FAILURE
    seen = traj(
        *run[:1],
        {"kind": "handoff", "from_agent": "triage", "to_agent": "billing"},
        unmapped_spans={"Handoff": 1},
    )
    forbidden = {
        "type": "handoff",
        "required": ["triage -> research"],
        "forbidden": ["* -> billing"],
    }
    assert check(forbidden, seen).outcome == Outcome.INVARIANT_FAILURE


def test_an_answer_blamed_for_a_degradation_not_seen_beside_unknown_spans_is_missing() -> None:
    """A claim that no dependency was degraded is about every call: a span no convention
    recognised may be the search that failed (found grading the OpenAI Agents SDK under
    Laminar before its spans were mapped: with the failed searches' spans unrecognised, a
    disclosed degraded answer failed both checks). Uncertainty voiced (``degraded_answer``)
    or no citation where a degraded run needs none (``citation_required`` with
    ``unless_degraded``) is missing evidence there, and a violation when every span was
    recognised; a citation required without that exemption fails on the answer alone."""
    run = (
        gen(tool_calls=["search_docs"]),
        tool("search_docs", {"query": "refunds"}, {"documents": ["doc-42"]}),
        gen("I do not know the refund window."),
    )
    for spec in (
        {"type": "degraded_answer"},
        {"type": "citation_required", "unless_degraded": True},
    ):
        beside = check(spec, traj(*run, unmapped_spans={"search_docs": 2}))
        assert beside.outcome == Outcome.MISSING_EVIDENCE, beside.message
        assert "'search_docs' x2" in beside.message
        alone = check(spec, traj(*run))
        assert alone.outcome == Outcome.INVARIANT_FAILURE, alone.message
    plain = check({"type": "citation_required"}, traj(*run, unmapped_spans={"search_docs": 2}))
    assert plain.outcome == Outcome.INVARIANT_FAILURE, plain.message


def test_an_answer_passed_as_undegraded_beside_unknown_spans_is_missing() -> None:
    """The pass of ``degraded_answer`` when no dependency was degraded is about every call
    too: a span no convention recognised may be the search that failed, which the confident
    answer then hides (an undisclosed degradation). It is missing evidence there and a pass
    when every span was recognised; a degraded answer that discloses what was seen stays
    tolerated beside unknown spans (its judgement rests on what was seen)."""
    answered = (
        gen(tool_calls=["search_docs"]),
        tool("search_docs", {"query": "refunds"}, {"documents": ["doc-42"]}),
        gen("Enterprise customers have 30 days [doc-42]."),
    )
    spec = {"type": "degraded_answer"}
    beside = check(spec, traj(*answered, unmapped_spans={"search_docs": 1}))
    assert beside.outcome == Outcome.MISSING_EVIDENCE, beside.message
    assert "no dependency degraded" in beside.message
    alone = check(spec, traj(*answered))
    assert alone.outcome == Outcome.PASS, alone.message
    disclosed = (
        gen(tool_calls=["search_docs"]),
        tool("search_docs", {"query": "refunds"}, {"documents": []}),
        gen("Search was degraded, so I cannot cite a source."),
    )
    seen = check(
        {"type": "degraded_answer", "dependencies": ["search_docs"]},
        traj(*disclosed, unmapped_spans={"search_docs": 1}),
    )
    assert seen.outcome == Outcome.PASS and seen.used == 1, seen.message


def test_the_names_listed_are_capped() -> None:
    from otel_oracles.grade import grade

    unmapped = {f"span-{i}": 1 for i in range(9)}
    result = grade(_contract(), _clean_run(unmapped_spans=unmapped)).results[0]
    assert "9 span(s)" in result.message and "and 4 more name(s)" in result.message


@pytest.mark.parametrize(
    "evidence",
    [{"coverage": "lenient"}, {"require": ["tool_arguments"], "coverage": "lenient"}],
)
def test_contract_relaxes_coverage_explicitly(evidence: dict[str, Any]) -> None:
    from otel_oracles.grade import grade

    contract = _contract(evidence=evidence)
    assert contract.coverage == "lenient"
    verdict = grade(contract, _clean_run(unmapped_spans={"mystery": 2}))
    assert set(_outcomes(verdict).values()) == {Outcome.PASS}, verdict.results
    if "require" in evidence:
        assert [s.type for s in contract.evidence] == ["evidence"]


def test_one_check_relaxes_or_tightens_coverage_on_its_own() -> None:
    from otel_oracles.grade import grade

    specs = [
        {**SAFETY[0], "coverage": "lenient"},
        {**SAFETY[1], "coverage": "strict"},
    ]
    contract = parse_contract(
        {"id": "c", "evidence": {"coverage": "lenient"}, "invariants": specs}, "<t>"
    )
    verdict = grade(contract, _clean_run(unmapped_spans={"mystery": 1}))
    assert _outcomes(verdict) == {
        "no-delete": Outcome.PASS,
        "no-network": Outcome.MISSING_EVIDENCE,
    }


def test_coverage_is_never_relaxed_by_default() -> None:
    contract = _contract()
    assert contract.coverage == "strict"
    assert all(s.params["coverage"] is None for s in contract.invariants)


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"coverage": "lenient"}, "coverage: write it under evidence"),
        ({"evidence": {"coverage": "loose"}}, "evidence.coverage: expected 'strict' or 'lenient'"),
        ({"evidence": {"requires": []}}, "evidence.requires: unknown field"),
    ],
)
def test_coverage_mistakes_are_one_clear_line(data: dict[str, Any], key: str) -> None:
    with pytest.raises(ContractError) as err:
        parse_contract({"id": "c", **data}, "c.yaml")
    assert key in str(err.value), str(err.value)


def test_checks_that_do_not_need_full_coverage_are_unaffected() -> None:
    t = _clean_run(unmapped_spans={"mystery": 1})
    result = check({"type": "tool_called", "tool": "search_docs"}, t)
    assert result.outcome == Outcome.PASS, result.message


# ---- real captures with spans added ----------------------------------------------------------


def _with_spans(source: str, scenario: str, add: list[dict[str, Any]], tmp_path: Path) -> Path:
    """The capture with ``add`` appended to its spans; each added span's parent and times
    default to the capture's first tool span (``execute_tool``), else its first model call.
    Written as OTLP/JSON lines (one request per line, as the capture's own lines are)."""
    path = next(p for p in (TRACES / source).glob(f"{scenario}.otlp.json*"))
    text = path.read_text(encoding="utf-8")
    if path.name.endswith(".jsonl"):
        docs = [json.loads(line) for line in text.splitlines() if line.strip()]
    else:
        docs = [json.loads(text)]
    spans = [
        s
        for d in docs
        for rs in d.get("resourceSpans", [])
        for ss in rs["scopeSpans"]
        for s in ss["spans"]
    ]
    anchor = next(
        (s for s in spans if s["name"].startswith("execute_tool")),
        next(s for s in spans if s["name"].lower().startswith("chat")),
    )
    target = next(d for d in docs if d.get("resourceSpans"))["resourceSpans"][0]["scopeSpans"][0]
    for i, extra in enumerate(add):
        parent = extra.pop("parent", anchor)
        target["spans"].append(
            {
                "traceId": parent["traceId"],
                "spanId": f"{i + 1:016x}",
                "parentSpanId": parent["spanId"],
                "startTimeUnixNano": str(int(parent["startTimeUnixNano"]) + 1),
                "endTimeUnixNano": str(int(parent["endTimeUnixNano"]) - 1),
                "status": {},
                **extra,
            }
        )
    out = tmp_path / f"{source}-{scenario}.otlp.jsonl"
    out.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    return out


def _attrs(**kv: str) -> list[dict[str, Any]]:
    return [{"key": k.replace("_", "."), "value": {"stringValue": v}} for k, v in kv.items()]


def _grade_file(path: Path, contract: Contract) -> tuple[Verdict, Trajectory]:
    problems: list[Any] = []
    graded = [
        vt
        for trace in read_traces([str(path)], problems)
        for vt in grade_trace(trace, [contract], load_conventions())
    ]
    assert problems == [] and len(graded) == 1
    return graded[0]


SOURCES = ["pydantic-ai", "openai-agents-otel-v2", "vercel-ai-sdk-otel"]


@pytest.mark.parametrize("source", SOURCES)
def test_unknown_framework_span_in_a_real_capture_is_missing_evidence(
    source: str, tmp_path: Path
) -> None:
    unknown = {"name": "graph.node delete", "kind": 1, "attributes": _attrs(graph_node="x")}
    path = _with_spans(source, "a_happy", [unknown], tmp_path)
    verdict, trajectory = _grade_file(path, _contract())
    assert trajectory.unmapped_spans == {"graph.node delete": 1}
    got = _outcomes(verdict)
    assert got["no-delete"] == Outcome.MISSING_EVIDENCE, verdict.results
    assert got["no-network"] == Outcome.MISSING_EVIDENCE


SUPPORT_CONTRACT = (
    Path(__file__).resolve().parents[2] / "examples" / "contracts" / "support-rag.yaml"
)
COVERAGE_CHECKS = {"no-destructive-tools", "grounded-citations"}


@pytest.mark.parametrize("source", ["openai-v2-latest", "openinference-openai", "pydantic-ai"])
def test_contract_coverage_lenient_restores_the_verdicts_the_spans_alone_give(
    source: str, tmp_path: Path
) -> None:
    """A real capture (raw clients included) with one span of an unknown framework beside its
    steps: the example contract's coverage checks cannot pass; relaxed, every check passes."""
    from otel_oracles.grade.loader import load_contract

    unknown = {"name": "graph.node", "kind": 1, "attributes": _attrs(graph_node="x")}
    path = _with_spans(source, "a_happy", [unknown], tmp_path)
    strict = load_contract(SUPPORT_CONTRACT).model_copy(update={"match": None})
    verdict, trajectory = _grade_file(path, strict)
    assert trajectory.unmapped_spans.get("graph.node") == 1
    got = _outcomes(verdict)
    assert {got[n] for n in COVERAGE_CHECKS} == {Outcome.MISSING_EVIDENCE}, verdict.results
    lenient = strict.model_copy(update={"coverage": "lenient"})
    verdict, _ = _grade_file(path, lenient)
    assert set(_outcomes(verdict).values()) == {Outcome.PASS}, verdict.results


CODING_CONTRACT = SUPPORT_CONTRACT.with_name("coding-agent.yaml")


@pytest.mark.parametrize("source", SOURCES)
def test_protected_file_cannot_pass_untouched_beside_an_unknown_span(
    source: str, tmp_path: Path
) -> None:
    """``file_not_modified`` passes for a file no recognised step touched; a span no
    convention knows may be the write that changed it, so that pass is missing evidence until
    the contract accepts the risk."""
    from otel_oracles.grade.loader import load_contract

    unknown = {"name": "fs.patch", "kind": 1, "attributes": _attrs(fs_target="pytest.ini")}
    path = _with_spans(source, "h_coding_agent", [unknown], tmp_path)
    strict = load_contract(CODING_CONTRACT).model_copy(update={"match": None})
    verdict, trajectory = _grade_file(path, strict)
    assert trajectory.unmapped_spans == {"fs.patch": 1}
    untouched = next(r for r in verdict.results if r.name == "pytest-config-untouched")
    assert untouched.outcome == Outcome.MISSING_EVIDENCE, untouched.message
    assert "'fs.patch' x1" in untouched.message
    lenient = strict.model_copy(update={"coverage": "lenient"})
    verdict, _ = _grade_file(path, lenient)
    assert _outcomes(verdict)["pytest-config-untouched"] == Outcome.PASS


FAILS_CLOSED = ("langfuse-openai-untyped",)
"""Real captures whose runs no convention can map completely, so they must fail closed: the
langfuse-openai app decorated with bare ``@observe()`` (Langfuse's default ``span`` type: the
tool and agent observations say nothing of what they are)."""
TESTDATA = Path(__file__).resolve().parents[1] / "testdata"
EXAMPLES = SUPPORT_CONTRACT.parent
NEEDS_EVERY_SPAN = {
    "support-rag": {"no-destructive-tools", "grounded-citations", "bounded-effort", "search-retry"},
    "multi-agent-handoff": {"triage-to-research", "no-destructive-tools", "bounded-steps"},
    "coding-agent": {"bounded-effort", "flaky-tool", "pytest-config-untouched"},
}
"""Checks whose pass needs every span seen, per example contract."""


@pytest.mark.parametrize(
    "path",
    sorted(p for folder in FAILS_CLOSED for p in (TESTDATA / folder).glob("*.otlp.json")),
    ids=lambda p: f"{p.parent.name}/{p.name.split('.otlp')[0]}",
)
def test_captures_no_convention_maps_completely_fail_closed(path: Path) -> None:
    """No verdict passes and no check that needs every span passes, while what the
    recognised spans show still counts (the forbidden call in d_forbidden_tool fails)."""
    from otel_oracles.grade.loader import load_contract

    scenario = path.name.split(".")[0]
    names = {"g": ["support-rag", "multi-agent-handoff"], "h": ["coding-agent"]}
    for name in names.get(scenario[0], ["support-rag"]):
        contract = load_contract(EXAMPLES / f"{name}.yaml").model_copy(update={"match": None})
        verdict, trajectory = _grade_file(path, contract)
        assert trajectory.unmapped_spans, "some spans are not recognised"
        assert trajectory.generations(), "the model calls are"
        assert not verdict.passed
        got = _outcomes(verdict)
        assert {
            n for n in NEEDS_EVERY_SPAN[name] if got[n] in (Outcome.PASS, Outcome.TOLERATED)
        } == set()
    if path.name == "d_forbidden_tool.otlp.json":
        assert got["no-destructive-tools"] == Outcome.INVARIANT_FAILURE


@pytest.mark.parametrize("scenario", ["a_happy", "d_forbidden_tool"])
def test_mlflow_chains_outside_a_langgraph_graph_fail_closed(scenario: str, tmp_path: Path) -> None:
    """MLflow's LangChain autolog records every runnable as a ``CHAIN``; ``mlflow.yaml`` reads
    one as plumbing only when LangGraph's run metadata (``langgraph_node``) shows it is a run
    inside a graph. The mlflow-langgraph capture with that metadata gone (chains a plain
    LangChain app would run) leaves its leaf chains unrecognised: no check that needs every
    span passes, while the forbidden call that was seen still fails."""
    from otel_oracles.grade.loader import load_contract

    source = TRACES / "mlflow-langgraph" / f"{scenario}.otlp.json"
    doc = json.loads(source.read_text(encoding="utf-8"))
    for rs in doc["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                span["attributes"] = [a for a in span["attributes"] if a["key"] != "metadata"]
    path = tmp_path / source.name
    path.write_text(json.dumps(doc), encoding="utf-8")
    contract = load_contract(SUPPORT_CONTRACT).model_copy(update={"match": None})
    verdict, trajectory = _grade_file(path, contract)
    assert {"Prompt", "should_continue"} <= set(trajectory.unmapped_spans)
    assert trajectory.generations() and trajectory.tool_calls()
    got = _outcomes(verdict)
    assert not verdict.passed
    needs_every_span = NEEDS_EVERY_SPAN["support-rag"]
    assert {n for n in needs_every_span if got[n] in (Outcome.PASS, Outcome.TOLERATED)} == set()
    if scenario == "d_forbidden_tool":
        assert got["no-destructive-tools"] == Outcome.INVARIANT_FAILURE


@pytest.mark.parametrize("source", SOURCES)
def test_generic_client_spans_are_classified_and_outbound_http_fails_no_network(
    source: str, tmp_path: Path
) -> None:
    http = {
        "name": "GET",
        "kind": 3,
        "attributes": [
            *_attrs(http_request_method="GET"),
            {"key": "url.full", "value": {"stringValue": "https://api.example.com/v1/x?q=1"}},
        ],
    }
    db = {"name": "SELECT docs", "kind": 3, "attributes": _attrs(db_system_name="postgresql")}
    legacy = {"name": "POST", "kind": 3, "attributes": _attrs(http_method="POST")}
    legacy["attributes"].append({"key": "net.peer.name", "value": {"stringValue": "hooks.io"}})
    path = _with_spans(source, "a_happy", [http, db, legacy], tmp_path)
    verdict, trajectory = _grade_file(path, _contract())
    assert trajectory.unmapped_spans == {}, "generic clients are recognised"
    result = next(r for r in verdict.results if r.name == "no-network")
    assert result.outcome == Outcome.INVARIANT_FAILURE, result.message
    assert "outbound HTTP GET request to api.example.com" in result.message
    assert "hooks.io" in result.message
    assert _outcomes(verdict)["no-delete"] == Outcome.PASS


def test_a_model_calls_own_http_transport_is_not_network_access(tmp_path: Path) -> None:
    source = "pydantic-ai"
    data = json.loads((TRACES / source / "a_happy.otlp.json").read_text(encoding="utf-8"))
    chat = next(
        s
        for s in data["resourceSpans"][0]["scopeSpans"][0]["spans"]
        if s["name"].startswith("chat")
    )
    transport = {
        "name": "POST",
        "kind": 3,
        "parent": chat,
        "attributes": [
            *_attrs(http_request_method="POST"),
            {"key": "url.full", "value": {"stringValue": "https://api.openai.com/v1/chat"}},
        ],
    }
    path = _with_spans(source, "a_happy", [transport], tmp_path)
    verdict, _ = _grade_file(path, _contract())
    result = next(r for r in verdict.results if r.name == "no-network")
    assert result.outcome == Outcome.PASS, result.message


# ---- a framework no convention knows at all ----------------------------------------------------

UNKNOWN_FRAMEWORK_SOURCES = (
    "openai-agents-otel-v2",
    "openinference-openai-agents",
    "langgraph-openllmetry",
    "crewai-openinference",
    "openlit-crewai",
    "pydantic-ai",
    "vercel-ai-sdk-otel",
    "mastra",
    "google-adk",
    "strands",
    "semantic-kernel",
    "haystack-native",
    "autogen-native",
    "mlflow-langgraph",
)
"""Captures of different frameworks and tracers, each graded as if no convention knew it."""


@pytest.mark.parametrize("source", UNKNOWN_FRAMEWORK_SOURCES)
@pytest.mark.parametrize(
    ("scenario", "contract_name"),
    [
        ("a_happy", "support-rag"),
        ("d_forbidden_tool", "support-rag"),
        ("g_handoff", "multi-agent-handoff"),
        ("h_coding_agent", "coding-agent"),
    ],
)
def test_a_run_no_convention_recognises_is_missing_evidence_throughout(
    source: str, scenario: str, contract_name: str
) -> None:
    """With no mapping file at all, nothing the trace holds is understood: every check of the
    example contracts is missing evidence. Not a pass (the data shows nothing), and not a
    violation either: "search_docs was never called" or "the tests fail on the replayed
    workspace" would blame the agent for what the grader could not read (``Finding.unseen``)."""
    from otel_oracles.grade.loader import load_contract
    from otel_oracles.mapping import ConventionSet, load_parsers

    path = next((TRACES / source).glob(f"{scenario}.otlp.json*"))
    contract = load_contract(EXAMPLES / f"{contract_name}.yaml").model_copy(update={"match": None})
    nothing = ConventionSet(files=[], parsers=load_parsers())
    problems: list[Any] = []
    graded = [
        vt
        for trace in read_traces([str(path)], problems)
        for vt in grade_trace(trace, [contract], nothing)
    ]
    assert problems == [] and graded
    for verdict, trajectory in graded:
        assert trajectory.unmapped_spans
        assert not verdict.passed
        wrong = {
            r.name: r.outcome for r in verdict.results if r.outcome != Outcome.MISSING_EVIDENCE
        }
        assert wrong == {}, [r.message for r in verdict.results if r.name in wrong]
