"""Exceptions a framework raises to steer its own run are no failures: LangGraph's handoff
tools jump to the next agent by raising ``ParentCommand`` through the handing-off agent's
spans, which OpenInference records as an ``exception`` event on an OK span and OpenLLMetry as
an ERROR status with ``error.type: ParentCommand`` (``control_flow_exceptions`` in
conventions/langgraph.yaml)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from otel_oracles.assemble._tree import build_trace
from otel_oracles.mapping import ConventionSet, load_conventions, map_trace
from otel_oracles.model.span import EventRecord, SpanRecord, StatusCode
from otel_oracles.model.step import StepKind
from otel_oracles.pipeline import read_traces

TRACE = "0" * 31 + "9"
TRACES = Path(__file__).resolve().parent.parent / "testdata" / "traces"
PARENT_COMMAND = "langgraph.errors.ParentCommand"


def exception(exc_type: str) -> EventRecord:
    return EventRecord("exception", 5, {"exception.type": exc_type, "exception.message": "x"})


def agent_status(conventions: ConventionSet, status: int, *types: str, **attrs: Any) -> str:
    """The mapped status of one OpenInference AGENT span with these exception events."""
    span = SpanRecord(
        TRACE, "a" * 16, "", "triage_agent", start_ns=1, end_ns=10,
        attributes={"openinference.span.kind": "AGENT", **attrs},
        scope_name="openinference.instrumentation.langchain", status_code=status,
        events=[exception(t) for t in types],
    )  # fmt: skip
    steps = map_trace(build_trace(TRACE, [span]), conventions).steps
    assert [s.kind for s in steps] == [StepKind.AGENT]
    return steps[0].status


@pytest.fixture(scope="module")
def conventions() -> ConventionSet:
    return load_conventions()


@pytest.mark.parametrize(
    ("status", "types", "attrs"),
    [
        (StatusCode.OK, [PARENT_COMMAND], {}),
        (StatusCode.ERROR, [PARENT_COMMAND], {"error.type": "ParentCommand"}),
        (StatusCode.UNSET, [], {"error.type": "GraphBubbleUp"}),
    ],
    ids=["event-on-ok-span", "error-status-for-it", "error-type-only"],
)
def test_control_flow_exception_is_no_failure(
    conventions: ConventionSet, status: int, types: list[str], attrs: dict[str, Any]
) -> None:
    assert agent_status(conventions, status, *types, **attrs) == "ok"


@pytest.mark.parametrize(
    ("status", "types", "attrs"),
    [
        (StatusCode.ERROR, [], {}),
        (StatusCode.OK, [PARENT_COMMAND, "ValueError"], {}),
        (StatusCode.ERROR, [PARENT_COMMAND], {"error.type": "TimeoutError"}),
        (StatusCode.OK, ["mypkg.NotParentCommand"], {}),
    ],
    ids=["bare-error-status", "another-exception-too", "another-error-type", "other-name"],
)
def test_any_other_error_signal_is_still_a_failure(
    conventions: ConventionSet, status: int, types: list[str], attrs: dict[str, Any]
) -> None:
    assert agent_status(conventions, status, *types, **attrs) == "error"


def test_a_user_file_declares_its_own_control_flow_exceptions(tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text(
        "control_flow_exceptions: [Handoff]\n"
        "rules: [{id: a, step: none, match: {all: [{attr: mine.kind, exists: true}]}}]\n"
    )
    assert agent_status(load_conventions(), StatusCode.OK, "mypkg.Handoff") == "error"
    assert agent_status(load_conventions([tmp_path]), StatusCode.OK, "mypkg.Handoff") == "ok"


@pytest.mark.parametrize("source", ["langgraph-openinference", "langgraph-openllmetry"])
@pytest.mark.parametrize("variant", ["g_handoff", "g_handoff.nocontent"])
def test_the_handing_off_agent_did_not_fail_in_the_real_captures(
    conventions: ConventionSet, source: str, variant: str
) -> None:
    problems: list[Any] = []
    traces = list(read_traces([str(TRACES / source / f"{variant}.otlp.json")], problems))
    raised = {
        s.span_id
        for t in traces
        for s in t.spans
        if any(e.attributes.get("exception.type") == PARENT_COMMAND for e in s.events)
    }
    agents = [
        step
        for t in traces
        for step in map_trace(t, conventions).agents()
        if step.source is not None and step.source.span_id in raised
    ]
    assert agents and {a.agent_name for a in agents} == {"triage_agent"}
    assert all(a.status == "ok" for a in agents)


def langsmith_tool_status(conventions: ConventionSet, *messages: str) -> tuple[str, Any]:
    """The mapped status and error type of one LangSmith SDK tool span whose exception
    events (type ``Exception``, as the SDK writes every run error) carry these messages."""
    span = SpanRecord(
        TRACE, "b" * 16, "", "search_docs", start_ns=1, end_ns=10,
        attributes={
            "langsmith.span.kind": "tool", "gen_ai.tool.name": "search_docs",
            "gen_ai.completion": '{"output": {"content": "done", "type": "tool", '
                                 '"additional_kwargs": {}}}',
        },
        scope_name="langsmith", status_code=StatusCode.ERROR,
        events=[
            EventRecord("exception", 5, {"exception.type": "Exception", "exception.message": m})
            for m in messages
        ],
    )  # fmt: skip
    steps = map_trace(build_trace(TRACE, [span]), conventions).steps
    assert [s.kind for s in steps] == [StepKind.TOOL_CALL]
    return steps[0].status, steps[0].error_type


def test_langsmith_run_error_names_its_type_in_the_message(conventions: ConventionSet) -> None:
    """The LangSmith SDK writes ``Exception`` as every run error's type and the original
    exception's repr (then the traceback) as its message: the type read from there decides,
    so a ParentCommand is control flow and anything else a failure of that type."""
    handoff = "ParentCommand(Command(graph='__parent__', goto='research_agent'))Traceback ..."
    assert langsmith_tool_status(conventions, handoff) == ("ok", None)
    failed = "SearchBackendError('upstream search service timed out')Traceback ..."
    assert langsmith_tool_status(conventions, failed) == ("error", "SearchBackendError")
    # A second exception on the same span is judged by its own (generic) type: a failure.
    assert langsmith_tool_status(conventions, handoff, failed)[0] == "error"
    # Text that names no type leaves the generic one: a failure.
    assert langsmith_tool_status(conventions, "timed out") == ("error", "Exception")


JS_SCOPE = "@arizeai/openinference-instrumentation-langchain"
JS_PARENT_COMMAND = "\n\nParentCommand\n    at RunnableCallable._controlBranch (state.js:775:47)\n"


def js_agent_status(conventions: ConventionSet, *messages: str) -> tuple[str, Any]:
    """The mapped status and error type of one LangGraph.js ReAct agent run (a CHAIN span
    holding its ``agent`` node) as OpenInference's JavaScript tracer records it: ERROR, and
    an ``exception`` event per error with the message and stack only (no type)."""
    agent = SpanRecord(
        TRACE, "c" * 16, "", "triage_agent", start_ns=1, end_ns=10,
        attributes={"openinference.span.kind": "CHAIN"},
        scope_name=JS_SCOPE, status_code=StatusCode.ERROR,
        events=[EventRecord("exception", 5, {"exception.message": m}) for m in messages],
    )  # fmt: skip
    node = SpanRecord(
        TRACE, "d" * 16, "c" * 16, "agent", start_ns=2, end_ns=3,
        attributes={"openinference.span.kind": "CHAIN",
                    "metadata": '{"langgraph_step":1,"langgraph_node":"agent"}'},
        scope_name=JS_SCOPE, status_code=StatusCode.OK,
    )  # fmt: skip
    steps = map_trace(build_trace(TRACE, [agent, node]), conventions).steps
    assert [s.kind for s in steps] == [StepKind.AGENT]
    return steps[0].status, steps[0].error_type


def test_langgraph_js_parent_command_is_read_from_the_stack(conventions: ConventionSet) -> None:
    """LangGraph.js's handoff raises ParentCommand through the handing-off agent's run; the
    JavaScript tracer writes no exception type, so the name at the head of the stack decides:
    ParentCommand is control flow, anything else (or text naming nothing) a failure."""
    assert js_agent_status(conventions, JS_PARENT_COMMAND) == ("ok", None)
    failed = "timed out\n\nSearchBackendError: timed out\n    at run (langgraphjs.mjs:54:19)"
    assert js_agent_status(conventions, failed) == ("error", "SearchBackendError")
    assert js_agent_status(conventions, JS_PARENT_COMMAND, failed)[0] == "error"
    assert js_agent_status(conventions, "timed out") == ("error", None)
    assert js_agent_status(conventions) == ("error", None)


@pytest.mark.parametrize("variant", ["g_handoff", "g_handoff.nocontent"])
def test_the_handing_off_agent_did_not_fail_in_the_langgraph_js_captures(
    conventions: ConventionSet, variant: str
) -> None:
    path = TRACES / "langgraphjs-openinference" / f"{variant}.otlp.json"
    problems: list[Any] = []
    traces = list(read_traces([str(path)], problems))
    agents = [step for t in traces for step in map_trace(t, conventions).agents()]
    assert [(a.agent_name, a.status) for a in agents] == [
        ("triage_agent", "ok"),
        ("research_agent", "ok"),
    ]
