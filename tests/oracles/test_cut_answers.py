"""An answer the model did not finish is no answer: the token limit or a content filter.

The ``x_answer_*`` captures (tools/capture_traces, ``Scenario.cut``) hold a run whose search
worked and whose answering model call was cut off mid-sentence, each fake model API saying so
in its own wire format (``finish_reason: length`` / ``content_filter``, Responses' incomplete
response, Anthropic's ``max_tokens`` / ``refusal``, Gemini's ``MAX_TOKENS`` / ``SAFETY``). The
fragment cites what the search returned, so an answer check reading it would pass. No real
capture may yield it as the final answer; where the trace records how the call ended, the
reason given names the cut. The hand-built cases pin each vendor spelling and what the cut
does not cover.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from otel_oracles.grade.evidence import final_output
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.result import Outcome
from otel_oracles.model.step import StepKind
from otel_oracles.pipeline import holds_agent_run, read_traces
from tests.oracles.test_contracts_on_real_traces import CUT_UNRECORDED
from tests.oracles.trace_builders import check, gen, tool, traj

TRACES = Path(__file__).resolve().parents[1] / "testdata" / "traces"
CAPTURES = sorted(TRACES.glob("*/x_answer_*.otlp.json"))
FRAGMENTS = ("whose refund window is", "To request it, contact")
"""How the scripted fragments (``scenarios.TRUNCATED_ANSWER`` / ``FILTERED_ANSWER``) end."""
conventions = functools.cache(load_conventions)
DOCS = {"documents": [{"id": "doc-42"}]}
CUT = "Refunds within 30 days [doc-42], except for contracts signed before"


def _final(path: Path) -> tuple[str | None, str | None, list[str]]:
    logs = path.parent / (path.name.split(".otlp")[0] + ".logs.otlp.jsonl")
    files = [str(path)] + ([str(logs)] if logs.exists() else [])
    problems: list[object] = []
    runs = [map_trace(trace, conventions()) for trace in read_traces(files, problems)]
    [t] = [t for t in runs if holds_agent_run(t)]  # not a build-time trace (OpenLLMetry's)
    out = final_output(t)
    reasons = [r for g in t.generations() for r in g.finish_reasons or ()]
    return out.text, out.missing, reasons


def test_cut_answer_captures_exist() -> None:
    assert len({p.parent.name for p in CAPTURES}) >= 8


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_cut_answer_is_never_the_final_answer(path: Path) -> None:
    text, missing, reasons = _final(path)
    if path.parent.name in CUT_UNRECORDED and text is not None:
        assert not set(reasons) & {"length", "content_filter"}, "the cut is recorded: read it"
        assert text.endswith(FRAGMENTS), text  # the known limit, and only that
        return
    assert text is None, f"the fragment was read as the answer: {text!r}"
    assert missing, "no answer read, and no reason given"
    if any(r in ("length", "content_filter") for r in reasons):
        # the cut, or the error a framework raised on it (Strands' MaxTokensReachedException)
        assert "cut off" in missing or "the run ended in an error" in missing, missing


def _run(answer: str | None, finish: list[str]) -> object:
    return traj(
        gen(None, tool_calls=["search_docs"]),
        tool("search_docs", {"query": "refund"}, DOCS, status="ok"),
        gen(answer, finish=finish),
    )


@pytest.mark.parametrize(
    ("reason", "by"),
    [
        ("length", "the token limit"),
        ("max_tokens", "the token limit"),  # a spelling no vocabulary mapped
        ("MAX_TOKENS", "the token limit"),
        ("content_filter", "content filter"),
        ("SAFETY", "content filter"),
        ("refusal", "content filter"),
        ("guardrail_intervened", "content filter"),
    ],
)
def test_every_answer_check_is_missing_evidence_naming_the_cut(reason: str, by: str) -> None:
    t = _run(CUT, [reason])
    for spec in (
        {"type": "citations_grounded", "pattern": r"doc-\d+"},
        {"type": "citation_required", "pattern": r"doc-\d+"},
    ):
        res = check(spec, t)
        assert res.outcome == Outcome.MISSING_EVIDENCE, res.message
        assert "cut off" in res.message and by in res.message and "step 2" in res.message
    res = check({"field": "final_output"}, t, layer="evidence")
    assert res.outcome == Outcome.MISSING_EVIDENCE and "cut off" in res.message


def test_the_agent_output_is_not_read_in_place_of_a_cut_reply() -> None:
    """The framework passes the fragment on as its run's output: the same fragment."""
    said = [{"role": "assistant", "parts": [{"type": "text", "content": CUT}]}]
    t = traj(
        gen(None, tool_calls=["search_docs"]),
        tool("search_docs", {"query": "refund"}, DOCS, status="ok"),
        gen(CUT, finish=["length"]),
        {"kind": StepKind.AGENT, "agent_name": "support", "output_messages": said},
    )
    assert final_output(t).text is None
    assert final_output(_run(CUT, ["stop"])).text == CUT


def test_a_finished_reply_and_an_earlier_cut_one_do_not_count() -> None:
    assert final_output(_run(CUT + " 2024 [doc-42].", ["stop"])).text is not None
    early = traj(
        gen("Let me check [doc", finish=["length"]),
        gen(None, tool_calls=["search_docs"]),
        tool("search_docs", {"query": "refund"}, DOCS, status="ok"),
        gen("Refunds within 30 days [doc-42].", finish=["stop"]),
    )
    assert final_output(early).text == "Refunds within 30 days [doc-42]."
