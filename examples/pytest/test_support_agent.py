"""The support agent's failure budget, proven: each test runs the real pydantic-ai agent
(its own OpenTelemetry instrumentation on), makes its search dependency fail the way it
really fails, and grades the recorded trace against contracts/support.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_ai import Agent
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.models.test import TestModel
from support_agent import agent, answer

CONTRACT = Path(__file__).parent / "contracts" / "support.yaml"
DOCS = {"results": [{"id": "doc-42", "text": "Enterprise customers get a refund within 30 days."}]}
QUESTION = "What is the refund window for enterprise customers?"


@pytest.fixture(autouse=True)
def instrumented():
    """pydantic-ai's own instrumentation, on the global providers grade_trace records."""
    Agent.instrument_all(InstrumentationSettings())
    yield
    Agent.instrument_all(False)


@pytest.fixture
def search(http_faults):
    """The search service, as a real HTTP server the test can make fail."""
    http_faults.respond("/search", DOCS)
    return http_faults.url


def test_answers_from_the_docs(search, grade_trace):
    assert "[doc-42]" in answer(QUESTION, search)
    result = grade_trace(CONTRACT)
    assert result.passed, result.report()
    assert result.tolerated_failures == 0


def test_one_search_timeout_costs_one_tolerated_retry(http_faults, search, grade_trace):
    http_faults.inject("timeout", path="/search")
    assert "[doc-42]" in answer(QUESTION, search)
    assert [r.fault for r in http_faults.requests] == ["timeout", None]
    result = grade_trace(CONTRACT)
    assert result.passed, result.report()
    assert result.check("search-retry").outcome == "tolerated"
    assert result.tolerated_failures == 1


def test_search_down_gives_a_disclosed_degraded_answer(http_faults, search, grade_trace):
    http_faults.inject("timeout", path="/search", times=None)
    assert "unavailable" in answer(QUESTION, search)
    result = grade_trace(CONTRACT)
    assert result.passed, result.report()
    assert result.check("search-retry").outcome == "tolerated"
    assert result.check("degraded-disclosed").outcome == "tolerated"


def test_empty_search_is_disclosed_not_invented(http_faults, search, grade_trace):
    http_faults.inject("empty", path="/search")
    assert "unavailable" in answer(QUESTION, search)
    result = grade_trace(CONTRACT)
    assert result.passed, result.report()
    assert result.check("degraded-disclosed").outcome == "tolerated"


def test_the_contract_fails_a_run_that_never_searched(search, grade_trace):
    """pydantic-ai's TestModel, told to call no tool, answers at once. The model call's
    captured output is a plain answer that asks for no tool, so the trace shows that the
    index was never searched: the contract fails the run as a violation, and nothing
    destructive ran either."""
    with agent.override(model=TestModel(call_tools=[])):
        answer(QUESTION, search)
    result = grade_trace(CONTRACT)
    assert not result.passed, result.report()
    assert result.check("searched-the-index").outcome == "invariant_failure"
    assert result.check("cites-a-source").outcome == "invariant_failure"
    assert result.check("no-destructive-tools").outcome == "pass"
