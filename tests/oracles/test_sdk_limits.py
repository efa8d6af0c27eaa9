"""Traces cut by OpenTelemetry SDK limits never pass a check whose evidence was cut.

Production SDKs run with span limits (``OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT``,
``OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT``, ``OTEL_SPAN_EVENT_COUNT_LIMIT``) and collectors cut
values with ``truncate_all``: the trace then looks complete and is not (DESIGN section 8,
fail closed). ``tests/testdata/sdk-limits/<source>-limits/`` holds real runs of the matrix's
scenarios captured under small limits (``tools/capture_traces/capture.py``, ``SDK_LIMITS``:
16 attributes, values cut at 60 characters, 2 events); ``EXPECTED.md`` says what ran, the
same truth as the source's own captures. Their expected outcomes are the source's
(``test_contracts_on_real_traces.expected``) with what the limits cut made missing
evidence:

- every scenario's answer is longer than 60 characters and was cut: the checks that read it
  (``ANSWER_CHECKS``) are missing evidence, never judged on its first 60 characters
  (``e_fabricated_citation``'s ``[doc-99]`` is past the cut: read as it is, the answer
  cites nothing and ``grounded-citations`` passed);
- ``h_coding_agent``'s ``write_file`` arguments were cut (the file's content is past 60
  characters): the checks that replay or compare the calls' arguments are missing
  evidence; its ``curl`` command survived the cut, so ``no-network`` still fails;
- a source without tool spans (the raw client, ``NO_TOOL_SPANS``) whose model-call spans
  lost attributes to the count limit cannot show which tools the model asked for (the
  Python SDK evicts the oldest attributes, a requested call's among them): every check on
  tool names is missing evidence, but a forbidden call the trace still records fails;
- spans the count limit took the identifying attributes from are recognised by what
  survived (OpenLIT's ``chat <model>`` spans without ``gen_ai.operation.name``:
  ``openlit.yaml``'s ``evicted_chat*`` rules); a span that stays unrecognisable
  (``IDENTITY_EVICTED``) makes the checks that need every span missing evidence, as any
  unrecognised span does;
- otherwise the source's own truth, content on and off.

Derived cases (``truncated``) cut the matrix's own captures as a collector's ``truncate_all``
would, on several sources, to show the rule holds beyond these captures.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from otel_oracles.model.result import Outcome
from tests.oracles import test_contracts_on_real_traces as matrix
from tests.oracles.test_contracts_on_real_traces import (
    ANSWER_CHECKS,
    CONTRACTS_OF,
    TOOL_NAME_CHECKS,
    TRACES,
    contract_named,
    grade_file,
    grade_files,
)

P, TOL, INV, BUD, MIS = (
    Outcome.PASS,
    Outcome.TOLERATED,
    Outcome.INVARIANT_FAILURE,
    Outcome.BUDGET_EXHAUSTED,
    Outcome.MISSING_EVIDENCE,
)

LIMITS = TRACES.parent / "sdk-limits"

ARGUMENT_CHECKS = {
    "coding-agent": {
        "tests-pass",
        "test-asserts",
        "pytest-config-untouched",
        "write-then-run",
        "no-loops",
    }
}
"""Checks that replay or compare tool calls' arguments (``h_coding_agent``'s cut
``write_file`` content)."""

NO_TOOL_SPANS = ("openinference-openai-limits",)
"""A raw client traced with no tool spans: which tools ran shows only in the model calls'
output messages, flattened into attributes the count limit evicts."""

CODING_TOOL_NAME_CHECKS = {
    "no-network",
    "write-then-run",
    "no-loops",
    "bounded-effort",
    "flaky-tool",
}
"""The coding contract's checks on which tools ran (``TOOL_NAME_CHECKS`` has the others')."""

IDENTITY_EVICTED: tuple[str, ...] = ()
"""Captures where the count limit evicted the attributes that say what a span is and nothing
left recognises it (``unmapped_spans``): the checks that need every span
(``UNRECOGNISED_CHECKS``) cannot pass (or be tolerated) there; a failure they find stands.
None now: OpenLIT writes ``gen_ai.operation.name`` and ``gen_ai.provider.name`` first on its
``chat`` spans and the Python SDK evicts the oldest, but the span name, scope, usage and
messages survive and ``openlit.yaml``'s ``evicted_chat*`` rules read them
(``openlit-langgraph-limits``: graded before those rules, 14 of 14 verdicts and 31 of 112
checks were missing evidence where the truth is a pass or a tolerated retry)."""

UNRECOGNISED_CHECKS = {
    "support-rag": {
        "no-destructive-tools",
        "grounded-citations",
        "bounded-effort",
        "search-retry",
        "degraded-disclosed",
    },
    "coding-agent": {"no-network", "no-loops", "bounded-effort", "flaky-tool"},
    "multi-agent-handoff": {
        "triage-to-research",
        "no-destructive-tools",
        "grounded-citations",
        "bounded-steps",
        "search-retry",
    },
}
"""Checks whose pass (or tolerated failure) spans no convention recognised make missing
evidence: those that need complete visibility, and the counts (``docs/contracts.md``,
"Coverage")."""

FAILURE_STANDS = {"no-destructive-tools", "no-network"}
"""Checks whose recorded failure no missing evidence can undo (a forbidden call, a network
command the trace still shows)."""


def limits_expected(source: str, contract: str, scenario: str, content: bool) -> dict[str, Any]:
    """The outcomes a ``<parent>-limits`` capture must grade to (module docstring): the
    parent's, with the checks whose evidence the limits cut missing evidence, but for a
    failure the trace still shows."""
    want = matrix.expected(source.removesuffix("-limits"), contract, scenario, content)
    # Every answer is longer than the cut (with content off too, where a source records it).
    unseen = set(ANSWER_CHECKS[contract])
    if scenario == "h_coding_agent":
        unseen |= ARGUMENT_CHECKS.get(contract, set())
    if source in NO_TOOL_SPANS:
        unseen |= TOOL_NAME_CHECKS.get(contract, set()) | CODING_TOOL_NAME_CHECKS
        unseen |= matrix.OUTCOME_CHECKS.get(contract, set())
    # A pass is what unrecognised spans take away; a failure found still stands.
    covered = UNRECOGNISED_CHECKS[contract] if source in IDENTITY_EVICTED else set()
    return {
        name: MIS
        if (name in unseen and not (name in FAILURE_STANDS and outcome == INV))
        or (name in covered and outcome in (P, TOL))
        else outcome
        for name, outcome in want.items()
    }


def limit_cases() -> list[tuple[str, str, str, bool]]:
    out = []
    for folder in sorted(p for p in LIMITS.iterdir() if (p / "EXPECTED.md").exists()):
        for path in sorted(folder.glob("*.otlp.json")):
            scenario = path.name.split(".")[0]
            for contract in CONTRACTS_OF.get(scenario[0], ["support-rag"]):
                out.append((folder.name, scenario, contract, ".nocontent" not in path.name))
    return out


@pytest.mark.parametrize(
    ("source", "scenario", "contract", "content"),
    limit_cases(),
    ids=lambda v: v if isinstance(v, str) else ("on" if v else "off"),
)
def test_capture_under_sdk_limits_grades_to_what_survived(
    source: str, scenario: str, contract: str, content: bool
) -> None:
    stem = scenario + ("" if content else ".nocontent")
    graded = grade_file(LIMITS / source / f"{stem}.otlp.json", contract_named(contract))
    assert len(graded) == 1, "one trace per file"
    verdict, trajectory = graded[0]
    if source not in IDENTITY_EVICTED:
        assert trajectory.unmapped_spans == {}, "every capture is fully classified"
    got = {r.name: r.outcome for r in verdict.results}
    want = limits_expected(source, contract, scenario, content)
    diff = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
    messages = {r.name: r.message for r in verdict.results if r.name in diff}
    assert diff == {}, f"(got, want) per check: {diff}\n{messages}"


def test_the_captures_hit_the_limits() -> None:
    """The captures are what they claim: values cut at 60 characters, and the model calls'
    spans over 16 attributes reporting what they lost (the Python SDK, the JavaScript SDK)."""
    for folder in sorted(p for p in LIMITS.iterdir() if (p / "EXPECTED.md").exists()):
        doc = json.loads((folder / "a_happy.otlp.json").read_text())
        spans = [s for rs in doc["resourceSpans"] for sc in rs["scopeSpans"] for s in sc["spans"]]
        values = [a["value"].get("stringValue", "") for s in spans for a in s.get("attributes", [])]
        assert max(map(len, values)) == 60, folder.name
        assert all(len(s.get("attributes", [])) <= 16 for s in spans), folder.name


# ---- derived: the matrix's captures cut as a collector's truncate_all cuts them -------------


def truncated(source: Path, out: Path, limit: int) -> Path:
    """Write ``source`` to ``out`` with every string attribute value of its spans and span
    events (and every string in an array value) cut to ``limit`` characters, as an SDK's
    value length limit or a collector's ``transform`` processor with ``truncate_all`` cuts
    them."""
    doc = json.loads(source.read_text())

    def cut(value: dict[str, Any]) -> None:
        if "stringValue" in value:
            value["stringValue"] = value["stringValue"][:limit]
        for item in (value.get("arrayValue") or {}).get("values") or []:
            cut(item)

    for rs in doc["resourceSpans"]:
        for scope in rs["scopeSpans"]:
            for span in scope["spans"]:
                holders = [span, *(span.get("events") or [])]
                for holder in holders:
                    for attribute in holder.get("attributes") or []:
                        cut(attribute["value"])
    out.write_text(json.dumps(doc))
    return out


CUT_SOURCES = (
    "openinference-openai-agents",
    "langgraph-openinference",
    "langgraph-openllmetry",
    "openlit-langgraph",
    "strands",
    "pydantic-ai-openinference",
    "google-adk",
    "vercel-ai-sdk-5",
    "mastra",
    "spring-ai",
    "koog",
)
"""Sources across conventions and SDK languages whose ``e_fabricated_citation`` capture the
derived cases cut."""


@pytest.mark.parametrize("source", CUT_SOURCES)
def test_a_fabricated_citation_cut_off_the_answer_is_never_a_grounded_answer(
    source: str, tmp_path: Path
) -> None:
    """Cut at 60 characters, ``e_fabricated_citation``'s answer ends before its ``[doc-99]``:
    read as it is it cites nothing, and ``grounded-citations`` passed. Cut at 300, the
    answer survives whole and the check fails, or is missing evidence where a search
    result was cut (``doc-99`` may have been in the part cut off); never a pass."""
    path = TRACES / source / "e_fabricated_citation.otlp.json"
    contract = contract_named("support-rag")
    full = {r.name: r.outcome for r in grade_files([path], contract)[0][0].results}
    short = grade_files([truncated(path, tmp_path / "60.json", 60)], contract)[0][0]
    got = {r.name: r.outcome for r in short.results}
    for name in ANSWER_CHECKS["support-rag"]:
        assert got[name] == MIS, (name, got[name], full[name])
    assert got["no-destructive-tools"] == full["no-destructive-tools"]
    assert got["search-retry"] == full["search-retry"]
    long = grade_files([truncated(path, tmp_path / "300.json", 300)], contract)[0][0]
    assert {r.name: r.outcome for r in long.results}["grounded-citations"] in (INV, MIS)


@pytest.mark.parametrize(
    ("scenario", "limit", "check"),
    [
        ("j_undisclosed_failure", 100, "degraded-disclosed"),
        ("e_fabricated_citation", 300, "grounded-citations"),
    ],
)
def test_what_a_limit_left_whole_keeps_its_verdict(
    scenario: str, limit: int, check: str, tmp_path: Path
) -> None:
    """A limit that cuts only values no check needs (the history JSON of ``input.value``,
    the search results past 100 characters where the search failed) leaves the answer and
    the results a check reads whole: the failure stands as on the full capture."""
    path = TRACES / "openinference-openai-agents" / f"{scenario}.otlp.json"
    contract = contract_named("support-rag")
    verdict = grade_files([truncated(path, tmp_path / "cut.json", limit)], contract)[0][0]
    got = {r.name: r.outcome for r in verdict.results}
    assert got[check] == INV
    assert got["no-destructive-tools"] == P


# ---- derived: attributes a count limit evicted ---------------------------------------------


def evicted(source: Path, out: Path, drop: Any) -> Path:
    """Write ``source`` (OTLP/JSON lines) to ``out`` with the span attributes ``drop(span,
    key)`` picks left out and counted in the span's ``droppedAttributesCount``, as an SDK
    at its attribute count limit exports the span."""
    docs = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    for doc in docs:
        for rs in doc["resourceSpans"]:
            for scope in rs["scopeSpans"]:
                for span in scope["spans"]:
                    kept = [a for a in span.get("attributes", []) if not drop(span, a["key"])]
                    lost = len(span.get("attributes", [])) - len(kept)
                    if lost:
                        span["attributes"] = kept
                        span["droppedAttributesCount"] = lost
    out.write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    return out


def test_a_forbidden_call_evicted_from_a_model_call_is_never_a_call_not_made(
    tmp_path: Path,
) -> None:
    """A raw client (no tool spans) shows which tools ran only in its model calls' flattened
    messages. At the count limit the Python SDK evicts the oldest attributes: the history a
    later call's input repeats, and the tool call a call asked for. With ``delete_records``'
    request gone, the trace shows a search and an answer, and ``no-destructive-tools``
    passed; the spans' dropped counts say the lists are not whole."""
    path = TRACES / "openinference-openai" / "d_forbidden_tool.otlp.jsonl"
    contract = contract_named("support-rag")
    full = {r.name: r.outcome for r in grade_files([path], contract)[0][0].results}
    assert full["no-destructive-tools"] == INV

    def drop(span: dict[str, Any], key: str) -> bool:
        asks = any(
            a["key"].endswith("function.name") and a["value"].get("stringValue") == "delete_records"
            for a in span.get("attributes", [])
            if a["key"].startswith("llm.output_messages.")
        )
        history = key.startswith(("llm.input_messages.", "input."))
        return history or (asks and key.startswith(("llm.output_messages.", "output.")))

    derived = evicted(path, tmp_path / "evicted.jsonl", drop)
    got = {r.name: r.outcome for r in grade_files([derived], contract)[0][0].results}
    assert got["no-destructive-tools"] == MIS
    assert got["bounded-effort"] == MIS


def test_java_overwrites_counted_as_drops_are_no_loss() -> None:
    """The Java SDK counts an attribute set again under a key the span holds as dropped
    (Koog's spans report drops and lose nothing): only a span holding as many attributes as
    the most any span of its service holds can have met the limit."""
    from otel_oracles.mapping._limits import lost_attributes
    from otel_oracles.pipeline import read_traces

    problems: list[Any] = []
    path = TRACES / "koog" / "a_happy.otlp.json"
    (trace,) = read_traces([str(path)], problems)
    reporting = {s.span_id: s for s in trace.spans if s.dropped_attributes > 0}
    assert len(reporting) > 3, "Koog's spans report drops"
    lost = lost_attributes(trace.spans)
    most = max(len(s.attributes) for s in trace.spans)
    assert lost and set(lost) < set(reporting)
    assert all(len(reporting[span_id].attributes) == most for span_id in lost)


def test_inspect_says_what_the_limits_took() -> None:
    """``inspect`` names why a step's content is missing: the cut length, the attributes its
    span lost."""
    from otel_oracles.cli.inspect_cmd import render_trajectory
    from otel_oracles.mapping import map_trace
    from otel_oracles.pipeline import read_traces

    problems: list[Any] = []
    path = LIMITS / "openinference-openai-agents-limits" / "e_fabricated_citation.otlp.json"
    (trace,) = read_traces([str(path)], problems)
    text = render_trajectory(map_trace(trace, matrix.conventions()))
    assert "values cut at 60 chars" in text
    assert "span dropped 3 attributes" in text
