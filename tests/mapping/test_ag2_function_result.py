"""``ag2_function_result``: AG2 Classic's ``execute_function`` pair read back into the
function's own value, as OpenInference's AG2 instrumentor records it in ``output.value``
(``tests/testdata/traces/ag2-openinference``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.mapping.parsers import builtin_parsers
from otel_oracles.pipeline import read_traces

PARSE = builtin_parsers()["ag2_function_result"]
TRACES = Path(__file__).parents[1] / "testdata" / "traces" / "ag2-openinference"


def pair(ok: bool, content: Any) -> list[Any]:
    return [ok, {"name": "search_docs", "role": "function", "content": content}]


def test_a_returned_dict_is_read_back_from_its_python_repr() -> None:
    given = pair(True, "{'documents': [], 'status': 'degraded: index timeout, 0 results'}")
    assert PARSE(given) == {"documents": [], "status": "degraded: index timeout, 0 results"}


def test_json_and_plain_text_results_stay_what_they_are() -> None:
    assert PARSE(pair(True, '{"deleted": 12}')) == {"deleted": 12}
    assert PARSE(pair(True, "wrote 30 bytes to calc.py")) == "wrote 30 bytes to calc.py"


def test_a_failed_execution_is_an_error_whatever_its_text_says() -> None:
    assert PARSE(pair(False, "Error: upstream search service timed out")) == {
        "error": "Error: upstream search service timed out"
    }
    assert PARSE(pair(False, "it did not work")) == {"error": "it did not work"}


@pytest.mark.parametrize(
    "value",
    [
        None,
        "text",
        {"content": "x"},
        [True],
        [1, {"content": "x"}],  # no bool flag: not AG2's pair
        [True, "x"],
        [True, {"name": "search_docs"}],
        [True, {"content": None}],
        [True, {"content": "x"}, "extra"],
    ],
)
def test_anything_but_the_pair_is_no_value(value: Any) -> None:
    assert PARSE(value) is None


def test_captured_results_and_delegation_map_as_the_run_went() -> None:
    """The empty search of ``f_degraded`` is an empty document list (not AG2's pair), the
    failed search of ``b_tool_retry`` an error, and ``g_handoff``'s chat started from the
    triage agent's tool a delegation to the chat's recipient, the research agent, whose
    search is its own: never the executors that asked in either chat."""
    conventions = load_conventions()

    def trajectory(name: str) -> Any:
        (trace,) = read_traces([str(TRACES / f"{name}.otlp.json")], [])
        return map_trace(trace, conventions)

    (search,) = trajectory("f_degraded").tool_calls()
    assert search.result == {"documents": [], "status": "degraded: index timeout, 0 results"}
    failed, retried = trajectory("b_tool_retry").tool_calls()
    assert failed.status == "error" and "timed out" in json.dumps(failed.result)
    assert retried.status == "ok" and "doc-42" in json.dumps(retried.result)
    handoff = trajectory("g_handoff")
    agents = [s.agent_name for s in handoff.steps if s.kind == "agent"]
    assert agents == ["triage_agent", "research_agent"]
    (transfer,) = [s for s in handoff.steps if s.kind == "handoff"]
    assert (transfer.from_agent, transfer.to_agent) == ("triage_agent", "research_agent")
    (search,) = [s for s in handoff.tool_calls() if s.tool == "search_docs"]
    assert search.agent_name == "research_agent"
