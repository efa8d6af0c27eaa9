"""Tool requests a model wrote as text in its reply (``mapping/_text_requests.py``), on the
real captures of the two frameworks that ask for tools so, and the parse failing closed.

Qwen-Agent's default ``nous`` prompt: ``<tool_call>{"name": ..., "arguments": ...}</tool_call>``
blocks, run as ``execute_tool`` spans; Langroid's default tool mode: ``{"request": ...}``
objects, run with no span at all."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from otel_oracles.grade.loader import load_contract
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.mapping._text_requests import MAX_REQUESTS, MAX_TEXT, parse_requests
from otel_oracles.model.result import Outcome
from otel_oracles.model.step import Step, Trajectory
from otel_oracles.pipeline import grade_trace, read_traces

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO / "tests" / "testdata" / "traces"
QWEN = TRACES / "qwen-agent-otel-genai"
LANGROID = TRACES / "langroid-text-tools-openinference"


def trajectory(path: Path) -> Trajectory:
    problems: list[Any] = []
    (trace,) = read_traces([str(path)], problems)
    assert problems == []
    return map_trace(trace, load_conventions())


def outcomes(path: Path, contract: str = "support-rag") -> dict[str, Outcome]:
    problems: list[Any] = []
    traces = read_traces([str(path)], problems)
    rules = load_contract(REPO / "examples" / "contracts" / f"{contract}.yaml")
    rules = rules.model_copy(update={"match": None})
    ((verdict, _),) = [vt for t in traces for vt in grade_trace(t, [rules], load_conventions())]
    return {r.name: r.outcome for r in verdict.results}


def calls(traj: Trajectory) -> list[Step]:
    return [s for s in traj.steps if s.kind in ("tool_call", "file_edit", "command")]


def test_tool_call_blocks_are_the_requests_of_the_execute_tool_spans() -> None:
    """Qwen-Agent: the model call asked for both searches of ``l_parallel_failures`` in one
    reply, so the second failed search is no retry of the first (before, the blocks were
    text: ``search-retry`` read ``tolerated``)."""
    traj = trajectory(QWEN / "l_parallel_failures.otlp.json")
    first = traj.generations()[0]
    parts = [p for m in first.output_messages or [] for p in m["parts"]]
    assert [(p["type"], p["name"], p["arguments"]) for p in parts] == [
        ("tool_call", "search_docs", {"query": "enterprise refund window"}),
        ("tool_call", "search_docs", {"query": "enterprise refund policy"}),
    ]
    ran = calls(traj)
    assert [(s.tool, s.synthesized, s.status) for s in ran] == [
        ("search_docs", False, "error"),
        ("search_docs", False, "error"),
    ]
    assert [p.get("id") for p in parts] == [s.call_id for s in ran]  # each linked to its span
    assert outcomes(QWEN / "l_parallel_failures.otlp.json")["search-retry"] == Outcome.PASS


def test_request_objects_are_synthesized_calls_of_unknown_outcome() -> None:
    """Langroid runs the requests with no span: each is a named call no span ran, with its
    arguments, no result and no outcome (a request written is not a call made), so the
    forbidden deletion fails the run (before: a hidden-call placeholder, missing evidence)
    and nothing reads as a success."""
    traj = trajectory(LANGROID / "d_forbidden_tool.otlp.json")
    made = calls(traj)
    assert [(s.tool, s.arguments) for s in made] == [
        ("search_docs", {"query": "enterprise refund window"}),
        ("delete_records", {"table": "refund_requests", "where": "status = 'stale'"}),
    ]
    for step in made:
        assert step.synthesized and step.attributes.get("requested_in_text")
        assert step.status == "unset" and step.result is None
        assert not step.attributes.get("tool_calls_hidden")
    got = outcomes(LANGROID / "d_forbidden_tool.otlp.json")
    assert got["no-destructive-tools"] == Outcome.INVARIANT_FAILURE
    assert got["searched-the-index"] == Outcome.MISSING_EVIDENCE  # not shown to have run
    assert got["search-retry"] == Outcome.MISSING_EVIDENCE


@pytest.mark.parametrize("source", [QWEN, LANGROID])
def test_content_off_is_unchanged(source: Path) -> None:
    """No text, nothing read: Langroid's replies stay placeholders of hidden calls."""
    traj = trajectory(source / "d_forbidden_tool.nocontent.otlp.json")
    assert not any(s.attributes.get("requested_in_text") for s in traj.steps)
    if source == LANGROID:
        assert all(s.tool is None and s.attributes.get("tool_calls_hidden") for s in calls(traj))
        assert (
            outcomes(source / "d_forbidden_tool.nocontent.otlp.json")["no-destructive-tools"]
            == Outcome.MISSING_EVIDENCE
        )


def test_a_tool_the_model_was_not_told_of_is_no_certain_request(tmp_path: Path) -> None:
    """The same capture with ``delete_records`` taken out of every model call's input: the
    reply that names it is not read (a JSON object that happens to have a ``request`` key is
    no certain request), and the turn stays a hidden-call placeholder: missing evidence,
    never a pass."""
    doc = json.loads((LANGROID / "d_forbidden_tool.otlp.json").read_text())
    for resource in doc["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for attr in span.get("attributes", []):
                    value = attr["value"]
                    if attr["key"].startswith(("llm.input_messages", "input.value")) and (
                        "stringValue" in value
                    ):
                        value["stringValue"] = value["stringValue"].replace(
                            "delete_records", "remove_rows"
                        )
    path = tmp_path / "d_forbidden_tool.otlp.json"
    path.write_text(json.dumps(doc))
    made = calls(trajectory(path))
    assert [s.tool for s in made] == ["search_docs", None]
    assert made[1].attributes.get("tool_calls_hidden")
    assert outcomes(path)["no-destructive-tools"] == Outcome.MISSING_EVIDENCE


def test_parse_reads_whole_replies_of_requests() -> None:
    assert parse_requests(
        'Let me look.\n<tool_call>\n{"name": "a", "arguments": {"x": 1}}\n</tool_call>\n'
        '<tool_call>{"name": "b", "arguments": "{\\"y\\": 2}"}</tool_call>\n'
    ) == ("Let me look.", [("a", {"x": 1}), ("b", {"y": 2})])
    assert parse_requests('{"request": "a", "q": 1}\n{\n "request": "b"\n}') == (
        "",
        [("a", {"q": 1}), ("b", {})],
    )


@pytest.mark.parametrize(
    "text",
    [
        "The refund window is 30 days [doc-42].",
        '<tool_call>{"name": "a", "arguments": {}}</tool_call> and then I answer.',
        '<tool_call>{"name": "a", "arguments": {}}',  # never closed
        '<tool_call>{"name": "a", "arguments": {}, "id": 1}</tool_call>',  # other keys
        '<tool_call>{"name": "a"}</tool_call>',  # no arguments
        '<tool_call>{"name": "", "arguments": {}}</tool_call>',
        '<tool_call>{"name": "a", "arguments": [1]}</tool_call>',
        '<tool_call>{"name": "a", "arguments": {}</tool_call>',  # broken JSON
        '<tool_call>["a", {}]</tool_call>',
        '{"request": "a"} and some words',
        '{"request": "a"}\n{"answer": "b"}',  # one object is no request
        '{"request": 3}',
        '[{"request": "a"}]',
        "Here it is: " + '{"request": "a"}',
        '{"request": "a", "q": ' + "[" * 100_000 + "]" * 100_000 + "}",  # too deep, too long
        '{"request": "a", "q": "' + "x" * MAX_TEXT + '"}',
        '<tool_call>{"name": "a", "arguments": {}}</tool_call>' * (MAX_REQUESTS + 1),
        '{"request": "a"}' * (MAX_REQUESTS + 1),  # each looked for in the whole input
    ],
)
def test_parse_fails_closed(text: str) -> None:
    assert parse_requests(text) is None
