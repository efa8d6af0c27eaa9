"""Linking a model call's requested tool calls to their results costs the same per call however
many calls one model output holds: a trace decides that number (60,000 fit in one 4 MiB
``serve`` request), and linking used to read the output's requests and the next input's
answers again per call, so an output of 8,000 calls took 23 s to map and 60,000 would hold a
worker's interpreter for many minutes. Built on a real raw-client capture
(``genai-anthropic``: a model call asking for one ``search_docs``, the next one answered),
its request multiplied; the results are linked exactly as before, by id and by position."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.mapping._mapper import Draft, _responses
from otel_oracles.model.step import Trajectory
from otel_oracles.pipeline import read_traces
from tests.support.cpu_cost import cpu_seconds

CAPTURE = (
    Path(__file__).resolve().parents[1]
    / "testdata" / "traces" / "genai-anthropic" / "a_happy.otlp.json"
)  # fmt: skip


def _attr(span: dict[str, Any], key: str) -> Any:
    return json.loads(
        next(a for a in span["attributes"] if a["key"] == key)["value"]["stringValue"]
    )


def _set(span: dict[str, Any], key: str, value: Any) -> None:
    for a in span["attributes"]:
        if a["key"] == key:
            a["value"] = {"stringValue": json.dumps(value)}


def many_calls_document(n: int, ids: bool, reverse: bool = False) -> dict[str, Any]:
    """The capture (OTLP/JSON) with its first model call asking for ``n`` searches (with or
    without call ids) and the second one's input answering them (``reverse``: last call
    first; only calls with ids can be answered out of order)."""
    doc: dict[str, Any] = json.loads(CAPTURE.read_text())
    first, second = (
        s for s in doc["resourceSpans"][0]["scopeSpans"][0]["spans"] if s["name"].startswith("chat")
    )
    (template,) = _attr(first, "gen_ai.output.messages")[0]["parts"]

    def call(i: int) -> dict[str, Any]:
        part = dict(template, arguments={"query": f"q{i}"})
        return part | {"id": f"toolu_{i}"} if ids else {k: v for k, v in part.items() if k != "id"}

    def answer(i: int) -> dict[str, Any]:
        part = {"type": "tool_call_response", "response": f"result {i}"}
        return part | {"id": f"toolu_{i}"} if ids else part

    asked = _attr(first, "gen_ai.output.messages")
    asked[0]["parts"] = [call(i) for i in range(n)]
    _set(first, "gen_ai.output.messages", asked)
    history = _attr(second, "gen_ai.input.messages")
    order = reversed(range(n)) if reverse else range(n)
    history[1:] = [asked[0], {"role": "tool", "parts": [answer(i) for i in order]}]
    _set(second, "gen_ai.input.messages", history)
    return doc


def _many_calls(n: int, ids: bool, tmp_path: Path, reverse: bool = False) -> Trajectory:
    """``many_calls_document`` read and mapped."""
    path = tmp_path / f"many_{n}_{ids}.otlp.json"
    path.write_text(json.dumps(many_calls_document(n, ids, reverse)))
    problems: list[Any] = []
    (trace,) = read_traces([str(path)], problems)
    assert problems == []
    return map_trace(trace, load_conventions())


@pytest.mark.parametrize(
    ("ids", "reverse"),
    [(True, False), (True, True), (False, False)],
    ids=["by-id", "by-id-reversed", "by-position"],
)
def test_every_requested_call_gets_its_own_result(ids: bool, reverse: bool, tmp_path: Path) -> None:
    calls = [s for s in _many_calls(300, ids, tmp_path, reverse).steps if s.tool == "search_docs"]
    assert [s.arguments for s in calls] == [{"query": f"q{i}"} for i in range(300)]
    assert [s.result for s in calls] == [f"result {i}" for i in range(300)]


@pytest.mark.parametrize("ids", [True, False], ids=["by-id", "by-position"])
def test_linking_cost_grows_with_the_calls_not_their_square(ids: bool, tmp_path: Path) -> None:
    """CPU time of mapping 8 times the calls, side by side: linear work is about 8 times
    (less, with the fixed cost of the rest: 3 to 4 here), quadratic 64; the bound leaves room
    for a loaded machine (``cpu_seconds``: the least of three runs, the collector paused).
    Before, 1,000 calls took 0.6 s of CPU and 8,000 about 40 s."""
    for n in (1000, 8000):
        traj = _many_calls(n, ids, tmp_path)
        assert sum(1 for s in traj.steps if s.result is not None) == n
    costs = [cpu_seconds(lambda n=n: _many_calls(n, ids, tmp_path)) for n in (1000, 8000)]
    assert costs[1] < 20 * costs[0], costs


def test_answers_out_of_order_cost_grows_with_the_answers() -> None:
    """``_responses`` over one input of 16,000 calls answered last first, against 2,000: the
    pending calls were a list searched and shortened per answer (quadratic). Each size's cost
    is ``cpu_seconds``' (the least of three runs after a warm-up, the collector paused), so
    neither a moment of load on a shared machine nor a collection of the suite's heap counts
    as growth (linear is ~8x, quadratic 64x)."""
    rule = next(iter(load_conventions().compiled().rules))

    def cost(n: int) -> float:
        calls = [{"type": "tool_call", "id": f"c{i}", "name": "t"} for i in range(n)]
        answers = [{"type": "tool_call_response", "id": f"c{i}"} for i in reversed(range(n))]
        draft = Draft(kind="generation", span=None, rule=rule)
        draft.fields["input_messages"] = [{"parts": calls}, {"parts": answers}]
        assert len(_responses(draft)) == n
        return cpu_seconds(lambda: _responses(draft))

    costs = [cost(n) for n in (2000, 16000)]
    assert costs[1] < 20 * costs[0], costs
