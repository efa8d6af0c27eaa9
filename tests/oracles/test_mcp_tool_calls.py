"""Tool calls made through a real MCP server are graded like local tools.

``openinference-mcp`` captures an OpenAI Agents SDK agent whose tools live on an MCP server
subprocess (stdio); the agent and the server export to one collector, the server's spans
joined to the agent's trace by the context the client sends in each request's ``_meta``.
One call is recorded three times (the SDK's TOOL span, the ``mcp`` SDK's client span inside
it, the server's span inside that): it must be one step, with the arguments the model sent,
failed when the tool raised on the server side, content on or off. Without the server's
spans, the client's OK is no proof of success: the outcome is unknown unless the result
shows it (fail closed, DESIGN section 8).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from otel_oracles.mapping import map_trace
from otel_oracles.model.step import Trajectory
from otel_oracles.pipeline import read_traces
from tests.oracles.test_contracts_on_real_traces import (
    BUD,
    MIS,
    TOL,
    TRACES,
    contract_named,
    conventions,
    grade_files,
    trace_file,
)

SOURCE = "openinference-mcp"
SERVER = "capture-mcp-tools"
"""The MCP server process's ``service.name``."""
SEARCH_ARGS = {"query": "enterprise refund window"}


def trajectories(path: Path) -> list[Trajectory]:
    problems: list = []
    out = [map_trace(trace, conventions()) for trace in read_traces([str(path)], problems)]
    assert problems == []
    return out


def run_of(path: Path) -> Trajectory:
    """The trajectory holding the agent run (the file also holds the connection's own
    ``server/discover`` trace, made before the run starts)."""
    runs = [t for t in trajectories(path) if t.tool_calls()]
    assert len(runs) == 1
    return runs[0]


@pytest.mark.parametrize("path", sorted((TRACES / SOURCE).glob("*.otlp.json")), ids=str)
def test_server_spans_join_the_agent_trace_and_each_call_is_one_step(path: Path) -> None:
    problems: list = []
    traces = list(read_traces([str(path)], problems))
    by_trace = {t.trace_id: {s.resource.get("service.name") for s in t.spans} for t in traces}
    server_calls = [
        s for t in traces for s in t.spans
        if s.resource.get("service.name") == SERVER and s.name.startswith("tools/call ")
    ]  # fmt: skip
    assert server_calls, "the server traced its tool calls"
    assert all(by_trace[s.trace_id] >= {SERVER, "capture-mcp-agent"} for s in server_calls)
    assert all(not t.orphans for t in traces)
    run = run_of(path)
    assert run.unmapped_spans == {}
    calls = run.tool_calls()
    assert len(calls) == len(server_calls), "client, MCP client and server spans: one step"
    for step in calls:
        assert len(step.attributes.get("stacked_spans", [])) == 2


def test_the_connection_trace_is_no_subject() -> None:
    """The ``server/discover`` exchange when the client connects is a trace of MCP protocol
    spans only: recognised, no agent run, so no contract grades it."""
    path = trace_file(SOURCE, "a_happy", True)
    graded = grade_files([path], contract_named("support-rag"))
    assert len(trajectories(path)) == 2 and len(graded) == 1


@pytest.mark.parametrize("content", [True, False], ids=["on", "off"])
def test_a_tool_that_raised_on_the_server_is_a_failed_call(content: bool) -> None:
    calls = run_of(trace_file(SOURCE, "b_tool_retry", content)).tool_calls()
    assert [(s.tool, s.status) for s in calls] == [("search_docs", "error"), ("search_docs", "ok")]
    if content:
        assert [s.arguments for s in calls] == [SEARCH_ARGS, SEARCH_ARGS]
        assert calls[0].error_type == "tool_error"
    verdict, _ = grade_files([trace_file(SOURCE, "b_tool_retry", content)],
                             contract_named("support-rag"))[0]  # fmt: skip
    assert {r.name: r.outcome for r in verdict.results}["search-retry"] == TOL


def without_server(path: Path, out: Path) -> Path:
    """The capture as a collector would hold it had the MCP server not been traced."""
    doc = json.loads(path.read_text())
    doc["resourceSpans"] = [
        rs for rs in doc["resourceSpans"]
        if {"key": "service.name", "value": {"stringValue": SERVER}}
        not in rs["resource"]["attributes"]
    ]  # fmt: skip
    out.write_text(json.dumps(doc))
    return out


@pytest.mark.parametrize("content", [True, False], ids=["on", "off"])
def test_without_the_server_spans_an_ok_client_is_no_proof(content: bool, tmp_path: Path) -> None:
    """The agent SDK's span and the MCP client's both end OK when the server answers a raised
    tool with an ``isError`` result. Content on, the error text the model was handed shows
    the failures; content off, nothing does: the outcome is unknown, and the exhausted retry
    budget is missing evidence, never a pass."""
    path = without_server(trace_file(SOURCE, "c_retry_exhausted", content), tmp_path / "c.json")
    calls = run_of(path).tool_calls()
    assert [s.status for s in calls] == (["error"] * 3 if content else ["unset"] * 3)
    verdict, _ = grade_files([path], contract_named("support-rag"))[0]
    assert {r.name: r.outcome for r in verdict.results}["search-retry"] == (BUD if content else MIS)
