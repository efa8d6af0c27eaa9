"""The ``grade_trace`` fixture: a test runs a small agent loop instrumented with the real
OpenTelemetry SDK (spans written by hand after the GenAI conventions, as
``tests/server/agent_traces.py`` does) and grades what it recorded. Run by ``pytester`` in a
subprocess, so the plug-in is loaded from its entry point as any project would load it."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
"""pytest's own ``pytester``: these tests run pytest on generated projects."""

REPO = Path(__file__).resolve().parents[2]

CONTRACT = """\
id: support-test
version: 2
invariants:
  - {type: tool_not_called, tool: delete_records, name: no-destructive-tools}
tolerances:
  - type: tool_retries
    name: search-retry
    max: 1
    tools: [search_docs]
    why: the index times out now and then
"""

AGENT = '''
import json

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode


def run_agent(tools, fail_first_search=False):
    """A support agent: one model call, then the tools it chose, then the answer."""
    tracer = trace.get_tracer("support-agent", "1.0")
    with tracer.start_as_current_span(
        "invoke_agent support",
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"},
    ):
        with tracer.start_as_current_span(
            "chat gpt-4o-mini",
            kind=SpanKind.CLIENT,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "openai",
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.usage.input_tokens": 120,
                "gen_ai.usage.output_tokens": 30,
            },
        ):
            pass
        calls = (["search_docs"] if fail_first_search else []) + list(tools)
        for i, tool in enumerate(calls):
            with tracer.start_as_current_span(
                f"execute_tool {tool}",
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": tool,
                    "gen_ai.tool.call.id": f"call_{i}",
                    "gen_ai.tool.call.arguments": json.dumps({"query": "refund policy"}),
                },
            ) as span:
                if fail_first_search and i == 0:
                    span.set_status(Status(StatusCode.ERROR, "timeout"))
                    span.set_attribute("error.type", "TimeoutError")
'''

TESTS = """
from agent import run_agent


def test_clean_run_passes(grade_trace):
    run_agent(["search_docs"])
    result = grade_trace("contracts/support.yaml")
    assert result.passed, result.report()
    assert result.outcomes["invariant_failure"] == 0
    assert result.check("no-destructive-tools").outcome == "pass"
    assert len(result.verdicts) == 1 and result.verdicts[0].contract_version == 2


def test_retried_search_is_tolerated(grade_trace):
    run_agent(["search_docs"], fail_first_search=True)
    result = grade_trace("contracts/support.yaml")
    assert result.passed, result.report()
    assert result.tolerated_failures == 1
    assert result.check("search-retry").outcome == "tolerated"


def test_forbidden_tool_fails(grade_trace):
    run_agent(["search_docs", "delete_records"])
    result = grade_trace("contracts/support.yaml")
    assert not result.passed
    assert result.invariant_failures == 1
    assert result.outcomes["invariant_failure"] == 1
    assert result.check("no-destructive-tools").outcome == "invariant_failure"
    assert "step 3: tool_call delete_records, span" in result.report()
    assert repr(result).endswith(": fail>")


def test_two_runs_are_two_verdicts(grade_trace):
    run_agent(["search_docs"])
    run_agent(["delete_records"])
    result = grade_trace("contracts/support.yaml")
    assert len(result.trace_ids) == 2
    assert [v.passed for v in result.verdicts] == [True, False]


def test_assert_on_a_failing_run_shows_the_verdict(grade_trace):
    run_agent(["delete_records"])
    result = grade_trace("contracts/support.yaml")
    assert result.passed, result.report()
"""


def write_project(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\n")
    (pytester.path / "contracts").mkdir()
    (pytester.path / "contracts" / "support.yaml").write_text(CONTRACT, encoding="utf-8")
    pytester.makepyfile(agent=AGENT, test_agent=TESTS)


def test_grade_trace_grades_what_the_test_recorded(pytester: pytest.Pytester) -> None:
    write_project(pytester)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--rootdir", ".", "-v")
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(["*test_assert_on_a_failing_run_shows_the_verdict FAILED*"])
    result.stdout.fnmatch_lines(
        [
            "*support-test@2 on * FAIL (invariant failures 1, *",
            "*x  invariant_failure  no-destructive-tools: violated*",
            "*step 2: tool_call delete_records, span *",
        ]
    )


def test_each_test_records_its_own_spans_through_the_global_providers(
    pytester: pytest.Pytester,
) -> None:
    """The plug-in sets the global providers once (public API) to forwarders: a tracer got
    at import time records into the running test's recording, nothing records between
    tests, and one test never sees another's spans."""
    write_project(pytester)
    pytester.makepyfile(
        test_forwarding="""
from opentelemetry import trace
from agent import run_agent

early = trace.get_tracer("early")  # before any fixture ran


def names(grade_trace):
    return [s.name for s in grade_trace.recording.span_exporter.get_finished_spans()]


def test_a_grading(grade_trace):
    with early.start_as_current_span("early span"):
        pass
    run_agent(["search_docs"])
    assert "early span" in names(grade_trace)


def test_b_between():
    span = early.start_span("outside")
    assert not span.is_recording(), "no test is recording"
    span.end()


def test_c_next(grade_trace):
    run_agent(["search_docs"])
    assert "early span" not in names(grade_trace), "test_a's spans stayed with test_a"
    assert names(grade_trace).count("invoke_agent support") == 1
    assert grade_trace("contracts/support.yaml").passed
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "test_forwarding.py")
    result.assert_outcomes(passed=3)


def test_a_test_that_recorded_nothing_fails_saying_so(pytester: pytest.Pytester) -> None:
    write_project(pytester)
    pytester.makepyfile(
        test_empty="""
def test_nothing(grade_trace):
    grade_trace("contracts/support.yaml")
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "test_empty.py")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*grade_trace: nothing graded: the test recorded no span*"])
