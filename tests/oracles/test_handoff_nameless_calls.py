"""A required transfer that no step shows, in a run holding tool calls whose tool the trace
did not name: a native handoff is a tool call (LlamaIndex.TS's ``handOff``, a swarm's
``transfer_to_*``), so any of those calls may be the transfer. The rule can be neither
confirmed nor refuted: missing evidence, never a failure (and never a pass)."""

from __future__ import annotations

from pathlib import Path

from otel_oracles.model.result import Outcome
from otel_oracles.model.step import StepKind
from tests.oracles.test_contracts_on_real_traces import contract_named, grade_file
from tests.oracles.trace_builders import check, traj

REQUIRED = {"type": "handoff", "required": ["triage_agent -> research_agent"]}
TRACES = Path(__file__).resolve().parents[1] / "testdata" / "traces"


def agent(name: str) -> dict[str, object]:
    return {"kind": StepKind.AGENT, "agent_name": name}


def call(tool: str | None) -> dict[str, object]:
    return {"kind": StepKind.TOOL_CALL, "tool": tool, "synthesized": True}


def test_required_transfer_beside_a_nameless_call_is_missing_evidence() -> None:
    res = check(REQUIRED, traj(agent("triage_agent"), call(None), call("search_docs")))
    assert res.outcome == Outcome.MISSING_EVIDENCE
    assert "triage_agent -> research_agent" in res.message
    assert "without a recorded tool name" in res.message and res.span_ids == ["s1"]


def test_required_transfer_with_every_call_named_still_fails() -> None:
    res = check(REQUIRED, traj(agent("triage_agent"), call("search_docs")))
    assert res.outcome == Outcome.INVARIANT_FAILURE and "did not happen" in res.message


def test_forbidden_transfer_seen_fails_beside_a_nameless_call() -> None:
    rules = {**REQUIRED, "forbidden": ["research_agent -> triage_agent"]}
    back = {"kind": StepKind.HANDOFF, "tool": "handoff", "from_agent": "research_agent",
            "to_agent": "triage_agent"}  # fmt: skip
    res = check(rules, traj(agent("triage_agent"), call(None), back))
    assert res.outcome == Outcome.INVARIANT_FAILURE and "forbidden" in res.message


def test_llamaindex_ts_handoff_under_openllmetry_js_is_missing_evidence() -> None:
    """LlamaIndex.TS's ``multiAgent`` under OpenLLMetry JS: the ``handOff`` request shows only
    as the first model call's finish reason, content on or off (held out, the transfer was
    reported as not happening)."""
    for stem in ("g_handoff", "g_handoff.nocontent", "s_delegated_forbidden"):
        path = TRACES / "llamaindex-js-openllmetry" / f"{stem}.otlp.json"
        ((verdict, _),) = grade_file(path, contract_named("multi-agent-handoff"))
        result = next(r for r in verdict.results if r.name == "triage-to-research")
        assert result.outcome == Outcome.MISSING_EVIDENCE, (stem, result.message)
        assert not verdict.passed
