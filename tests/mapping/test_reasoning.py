"""A model's reasoning (thinking) is never its answer, on every real capture that recorded one.

The ``v_reasoning`` captures (tools/capture_traces, ``Scenario.reasoning``) hold a model that
reasons before each turn, in each API's own format: the reasoning cites ``[doc-99]`` and speaks
of a failure, the answer does neither. Whatever an instrumentation did with the reasoning, the
final answer read from the trace is the answer or nothing (missing evidence), never text of the
reasoning. The id pairing that instrumentations' made-up call ids need is tested on its own.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from otel_oracles.grade.evidence import final_output
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.tool_name import OpenCalls
from otel_oracles.pipeline import read_traces

TRACES = Path(__file__).resolve().parents[1] / "testdata" / "traces"
REASONING_WORDS = ("old wiki", "not cite it", "I should search", "is about consumer plans")
"""Phrases of the scripted reasoning (``scenarios.REASONING_*``) that no answer holds."""
CAPTURES = sorted(TRACES.glob("*/v_reasoning*.otlp.json"))
conventions = functools.cache(load_conventions)


def _final_text(path: Path) -> tuple[str | None, str | None]:
    logs = path.parent / (path.name.split(".otlp")[0] + ".logs.otlp.jsonl")
    files = [str(path)] + ([str(logs)] if logs.exists() else [])
    problems: list[object] = []
    [trace] = list(read_traces(files, problems))
    out = final_output(map_trace(trace, conventions()))
    return out.text, out.missing


def test_reasoning_captures_exist() -> None:
    assert len({p.parent.name for p in CAPTURES}) >= 12


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_reasoning_is_never_the_final_answer(path: Path) -> None:
    text, missing = _final_text(path)
    if text is None:
        assert missing, "no answer read, and no reason given"
        return
    leaked = [w for w in REASONING_WORDS if w in text]
    assert leaked == [], f"the final answer holds the model's reasoning: {text!r}"
    assert "[doc-" in text, text  # the scripted answer, which cites a document


def test_thoughts_written_as_text_leave_the_answer_unknown() -> None:
    """Google ADK's GenAI writer turns a thought part into a text part (``thoughts_unmarked``):
    an answer of two text parts is no answer, and the reason says why."""
    text, missing = _final_text(TRACES / "google-adk" / "v_reasoning.otlp.json")
    assert text is None
    assert missing is not None and "thoughts_unmarked" in missing
    text, _ = _final_text(TRACES / "google-adk" / "a_happy.otlp.json")
    assert (
        text
        == "Enterprise customers can request a full refund within 30 days of purchase [doc-42]."
    )


@pytest.mark.parametrize(
    ("response_id", "calls", "want"),
    [
        # a thought part before the call shifted the call's number, not the result's
        ("search_docs_0", [("search_docs_1", "search_docs")], "search_docs_1"),
        # the earliest unanswered call of that tool, in call order
        (
            "search_docs_0",
            [("x_2", "x"), ("search_docs_2", "search_docs"), ("search_docs_3", "search_docs")],
            "search_docs_2",
        ),
        # another tool's numbered id is never taken
        ("search_docs_0", [("delete_records_1", "delete_records")], None),
        # ids an API issued match exactly or not at all
        ("call_abc", [("call_xyz", "call")], None),
        ("toolu_01A09q90", [("toolu_01B77x12", "search_docs")], None),
        ("search_docs_0", [("call_1", "search_docs")], None),
        ("search_docs_0", [("search_docs_1", None)], None),
    ],
)
def test_numbered_twin(
    response_id: str, calls: list[tuple[str, str | None]], want: str | None
) -> None:
    pending = OpenCalls()
    for call_id, name in calls:
        pending.open(call_id, name)
    assert pending.twin(response_id) == want
