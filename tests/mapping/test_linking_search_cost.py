"""Linking searches that a trace could make quadratic, each now indexed once per trace or
scope (found by doubling one hostile dimension of a trace, ``docs/security.md``, campaign of
3 December, second round):

- a model call asking for thousands of calls of a tool whose only steps ran before it: each
  request searched other scopes and walked the same rejected steps again (8,000: 8 s);
- thousands of model calls asking one such call each, whose inputs never carry the
  conversation on: each counted the turns of every later model call's input to find its
  results by position (4,000: 11 s);
- OpenInference tool steps whose results no later input of their scope holds: each looked
  for them in every later step of the trace (8,000: 2 s).

Each trace is real OTLP/JSON read by the decoder and mapped by the bundled conventions; CPU
time of 8 times the size, side by side, must stay near 8 times (quadratic work is 64)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.step import Trajectory
from otel_oracles.pipeline import read_traces
from tests.support.cpu_cost import cpu_seconds

TRACE_ID = "bbba9f14d6739aef446ce3cf55967c2f"
T0 = 1796209347683180919


def _text(value: str) -> dict[str, Any]:
    return {"stringValue": value}


def _attrs(**values: str) -> list[dict[str, Any]]:
    return [{"key": k.replace("__", "."), "value": _text(v)} for k, v in values.items()]


def _span(number: int, name: str, attrs: list[dict[str, Any]], start: int) -> dict[str, Any]:
    span = {
        "traceId": TRACE_ID,
        "spanId": f"{0x2000000000000000 + number:016x}",
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(T0 + start),
        "endTimeUnixNano": str(T0 + start + 5),
        "attributes": attrs,
    }
    if number:
        span["parentSpanId"] = f"{0x2000000000000000:016x}"
    return span


def _document(spans: list[dict[str, Any]]) -> dict[str, Any]:
    resource = {"attributes": [{"key": "service.name", "value": _text("s")}]}
    return {
        "resourceSpans": [
            {"resource": resource, "scopeSpans": [{"scope": {"name": "s"}, "spans": spans}]}
        ]
    }


def _genai_agent(end: int) -> dict[str, Any]:
    root = _span(0, "invoke_agent a", _attrs(gen_ai__operation__name="invoke_agent"), 0)
    root["attributes"] += _attrs(gen_ai__agent__name="support_agent")
    root["endTimeUnixNano"] = str(T0 + end)
    return root


def _genai_tool(number: int, start: int) -> dict[str, Any]:
    attrs = _attrs(gen_ai__operation__name="execute_tool", gen_ai__tool__name="search_docs")
    return _span(number, "execute_tool search_docs", attrs, start)


def _genai_chat(number: int, calls: int, start: int) -> dict[str, Any]:
    asked = [{"role": "assistant", "parts": [{"type": "tool_call", "name": "search_docs"}] * calls}]
    user = [{"role": "user", "parts": [{"type": "text", "content": "q"}]}]
    attrs = _attrs(
        gen_ai__operation__name="chat",
        gen_ai__input__messages=json.dumps(user),
        gen_ai__output__messages=json.dumps(asked),
    )
    return _span(number, "chat m", attrs, start)


def steps_before_one_call(n: int) -> dict[str, Any]:
    """``n`` search steps (no call ids), then one model call asking ``n`` searches."""
    tools = [_genai_tool(i + 1, 10 * i) for i in range(n)]
    return _document([_genai_agent(20 * n), *tools, _genai_chat(n + 1, n, 10 * n)])


def steps_before_many_calls(n: int) -> dict[str, Any]:
    """``n`` search steps, then ``n`` model calls asking one search each, none of whose
    inputs carries the conversation on."""
    tools = [_genai_tool(i + 1, 10 * i) for i in range(n)]
    chats = [_genai_chat(n + 1 + k, 1, 10 * n + k) for k in range(n)]
    return _document([_genai_agent(20 * n), *tools, *chats])


def results_nowhere(n: int) -> dict[str, Any]:
    """OpenInference: one model call asking ``n`` searches by id, ``n`` tool spans running
    them with no result recorded, and no later model call holding the results."""
    agent = _span(0, "agent", _attrs(openinference__span__kind="AGENT"), 0)
    agent["endTimeUnixNano"] = str(T0 + 20 * n)
    llm = _attrs(openinference__span__kind="LLM", llm__model_name="m")
    prefix = "llm.output_messages.0.message"
    llm += [{"key": f"{prefix}.role", "value": _text("assistant")}]
    for i in range(n):
        call = f"{prefix}.tool_calls.{i}.tool_call"
        llm += [
            {"key": f"{call}.id", "value": _text(f"c{i}")},
            {"key": f"{call}.function.name", "value": _text("search_docs")},
            {"key": f"{call}.function.arguments", "value": _text("{}")},
        ]
    tools = [
        _span(
            i + 2,
            "search_docs",
            _attrs(
                openinference__span__kind="TOOL", tool__name="search_docs", tool_call__id=f"c{i}"
            ),
            10 * (i + 1),
        )
        for i in range(n)
    ]
    return _document([agent, _span(1, "ChatCompletion", llm, 5), *tools])


def _mapped(document: dict[str, Any], path: Path) -> Trajectory:
    path.write_text(json.dumps(document))
    problems: list[Any] = []
    (trace,) = read_traces([str(path)], problems)
    assert problems == []
    return map_trace(trace, load_conventions())


def _searches(trajectory: Trajectory) -> list[Any]:
    return [s for s in trajectory.steps if s.tool == "search_docs"]


def test_what_the_searches_link(tmp_path: Path) -> None:
    """The traces map as before the indexes: no step that ran before a model call is its
    call (each request becomes a call of its own, seen only in the model's output), and a
    result no input holds stays unknown."""
    one = _searches(_mapped(steps_before_one_call(50), tmp_path / "one.json"))
    assert len(one) == 100 and sum(1 for s in one if s.synthesized) == 50
    many = _searches(_mapped(steps_before_many_calls(50), tmp_path / "many.json"))
    assert len(many) == 100 and sum(1 for s in many if s.synthesized) == 50
    nowhere = _searches(_mapped(results_nowhere(50), tmp_path / "nowhere.json"))
    assert [s.call_id for s in nowhere] == [f"c{i}" for i in range(50)]
    assert all(s.result is None for s in nowhere)


@pytest.mark.parametrize(
    ("build", "small", "factor"),
    [
        (steps_before_one_call, 2000, 8),
        (steps_before_many_calls, 500, 8),
        (results_nowhere, 2000, 16),
    ],
    ids=["steps-before-one-call", "steps-before-many-calls", "results-nowhere"],
)
def test_linking_cost_grows_with_the_trace_not_its_square(
    build: Callable[[int], dict[str, Any]], small: int, factor: int, tmp_path: Path
) -> None:
    """CPU time of mapping ``factor`` times the steps, side by side: linear work is at most
    about ``factor`` times (less, with the fixed cost of the rest), quadratic its square; the
    bound, 2.5 times the factor, leaves room for a loaded machine (the last search is cheap
    per step, so only 16 times the steps shows its square clearly). Before, 16,000, 4,000
    and 32,000 took 30, 11 and over 20 s."""
    costs = [
        cpu_seconds(lambda n=n: _mapped(build(n), tmp_path / f"{n}.json"))
        for n in (small, factor * small)
    ]
    assert costs[1] < 2.5 * factor * costs[0], costs
