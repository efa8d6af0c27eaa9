"""The failure-injection fixtures ``http_faults`` and ``tool_faults``, used the way a project
uses them: a generated project (run by ``pytester`` in a subprocess, the plug-in loaded from
its entry point) has a support agent that searches over HTTP with ``requests`` against the
fault server, or calls a wrapped Python tool, records GenAI spans with the real SDK, and its
tests assert what the contract's budgets make of each fault."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]
"""pytest's own ``pytester``: these tests run pytest on a generated project."""

CONTRACT = r"""
id: support-faults
version: 1
evidence:
  - {field: final_output, name: answer-captured}
invariants:
  - {type: tool_called, tool: search_docs, min: 1, name: searched}
tolerances:
  - {type: tool_retries, name: search-retry, max: 1, tools: [search_docs], why: flaky index}
  - type: degraded_answer
    name: degraded-disclosed
    dependencies: [search_docs]
    allowed: true
    must_disclose: '(?i)\b(degraded|unavailable)\b'
    why: search outages happen; the user must be told
"""

AGENT = '''
import json
import time

import requests
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode


def http_search(base_url):
    """The search tool as the product has it: the index's HTTP API through requests."""

    def search_docs(query):
        response = requests.post(f"{base_url}/search", json={"query": query}, timeout=0.3)
        if response.status_code == 429:
            time.sleep(float(response.headers["Retry-After"]))
            raise RuntimeError(f"rate limited; Retry-After {response.headers['Retry-After']}")
        response.raise_for_status()
        return response.json()["results"]

    return search_docs


def run_agent(search_docs, question="How do I get a refund?"):
    """Search with one retry, then answer: from the documents, or saying search is degraded.
    Returns the answer and the exceptions the searches raised."""
    tracer = trace.get_tracer("support-agent", "1.0")
    errors, results = [], None
    with tracer.start_as_current_span(
        "invoke_agent support",
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"},
    ):
        for attempt in range(2):
            with tracer.start_as_current_span(
                "execute_tool search_docs",
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "search_docs",
                    "gen_ai.tool.call.id": f"call_{attempt}",
                    "gen_ai.tool.call.arguments": json.dumps({"query": question}),
                },
            ) as span:
                try:
                    results = search_docs(question)
                    span.set_attribute("gen_ai.tool.call.result", json.dumps(results))
                except Exception as exc:
                    errors.append(exc)
                    results = None
                    span.record_exception(exc)
                    span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
                    span.set_attribute("error.type", type(exc).__qualname__)
                    continue
            if results:
                break
        if results and isinstance(results, list):
            answer = f"Refunds are issued within 5 days [{results[0]['id']}]."
        else:
            answer = "Search is unavailable right now (degraded), so I cannot cite the policy."
        with tracer.start_as_current_span(
            "chat gpt-4o-mini",
            kind=SpanKind.CLIENT,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "openai",
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.output.messages": json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
                ),
            },
        ):
            pass
    return answer, errors
'''

TESTS = """
import asyncio

import pytest
import requests

from agent import http_search, run_agent

DOCS = {"results": [{"id": "doc-7", "title": "Refund policy"}]}


@pytest.fixture
def search(http_faults):
    http_faults.respond("/search", DOCS)
    return http_search(http_faults.url)


def test_one_timeout_is_one_tolerated_retry(http_faults, search, grade_trace):
    http_faults.inject("timeout", path="/search")
    answer, errors = run_agent(search)
    assert [type(e) for e in errors] == [requests.exceptions.ReadTimeout]
    assert "doc-7" in answer
    assert [r.fault for r in http_faults.requests] == ["timeout", None]
    result = grade_trace("contracts/support.yaml")
    assert result.passed, result.report()
    assert result.tolerated_failures == 1
    assert result.check("search-retry").outcome == "tolerated"
    assert result.check("degraded-disclosed").outcome == "pass"


def test_search_down_gives_a_disclosed_degraded_answer(http_faults, search, grade_trace):
    http_faults.inject("timeout", path="/search", times=None)
    answer, errors = run_agent(search)
    assert len(errors) == 2 and "degraded" in answer
    result = grade_trace("contracts/support.yaml")
    assert result.passed, result.report()
    assert result.check("search-retry").outcome == "tolerated"
    assert result.check("degraded-disclosed").outcome == "tolerated"
    assert result.tolerated_failures == 2


def test_rate_limit_sends_retry_after(http_faults, search, grade_trace):
    http_faults.inject("rate_limited", retry_after=0)
    answer, errors = run_agent(search)
    assert str(errors[0]) == "rate limited; Retry-After 0"
    assert "doc-7" in answer
    assert grade_trace("contracts/support.yaml").tolerated_failures == 1


def test_empty_malformed_and_reshaped_answers(http_faults, search, grade_trace):
    http_faults.inject("malformed_json")
    http_faults.inject("schema_invalid")
    answer, errors = run_agent(search)
    assert isinstance(errors[0], requests.exceptions.JSONDecodeError)
    assert isinstance(errors[1], KeyError) and errors[1].args == ("results",)
    assert http_faults.faults_served() == ["malformed_json", "schema_invalid"]
    http_faults.inject("empty", times=None)
    answer, errors = run_agent(search)
    assert errors == [] and "degraded" in answer
    result = grade_trace("contracts/support.yaml")
    assert [v.passed for v in result.verdicts] == [True, True]
    assert result.check("degraded-disclosed", result.trace_ids[1]).outcome == "tolerated"


def test_wrapped_tool_raises_the_client_library_timeout(tool_faults, grade_trace):
    def search_docs(query):
        '''Search the support index.'''
        return [{"id": "doc-7"}]

    flaky = tool_faults.wrap(search_docs, "timeout", library="requests")
    assert flaky.__name__ == "search_docs" and flaky.__doc__ == "Search the support index."
    answer, errors = run_agent(flaky)
    assert [type(e) for e in errors] == [requests.exceptions.ReadTimeout]
    assert [c.fault for c in tool_faults.calls_of("search_docs")] == ["timeout", None]
    result = grade_trace("contracts/support.yaml")
    assert result.passed and result.check("search-retry").outcome == "tolerated"


def test_wrapped_async_tool_fails_every_call(tool_faults):
    async def search_docs(query):
        return {"results": ["doc-1"], "total": 1}

    broken = tool_faults.wrap(search_docs, "empty", times=None)
    assert asyncio.run(broken("q")) == {"results": [], "total": 1}
    assert asyncio.run(broken("q")) == {"results": [], "total": 1}
    limited = tool_faults.wrap(search_docs, "rate_limited", retry_after=2)
    with pytest.raises(Exception, match=r"retry after 2s") as caught:
        asyncio.run(limited("q"))
    assert caught.value.retry_after == 2


def test_a_mistaken_fault_is_one_clear_line(tool_faults):
    tool_faults.wrap(len, "explode")
"""


def test_faults_reach_the_agent_as_the_real_failures_would(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\n")
    (pytester.path / "contracts").mkdir()
    (pytester.path / "contracts" / "support.yaml").write_text(CONTRACT, encoding="utf-8")
    pytester.makepyfile(agent=AGENT, test_agent=TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--rootdir", ".", "-v")
    result.assert_outcomes(passed=6, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_a_mistaken_fault_is_one_clear_line FAILED*",
            "*FaultUsageError: fault: unknown kind 'explode'; known: timeout, empty, "
            "malformed_json, rate_limited, schema_invalid",
        ]
    )
