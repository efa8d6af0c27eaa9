"""Google ADK schema 1 writes its payload attributes (``gcp.vertex.agent.tool_call_args`` /
``tool_response`` / ``llm_request`` / ``llm_response``) as ``{}`` when content capture is off:
that is no evidence of what a tool was given or returned, never an empty argument list."""

from __future__ import annotations

import json
from typing import Any

import pytest

from otel_oracles.assemble._tree import build_trace
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.mapping.parsers import builtin_parsers
from otel_oracles.model.span import SpanRecord
from otel_oracles.model.step import Step

apply_parsers = builtin_parsers().apply

TRACE = "0" * 31 + "8"
AGENT, TOOL = "a" * 16, "b" * 16


def _tool_step(**payload: Any) -> Step:
    attrs = {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search_docs",
        "gen_ai.tool.call.id": "call_0", **payload,
    }  # fmt: skip
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support_agent"}
    spans = [
        SpanRecord(TRACE, AGENT, "", "invoke_agent support_agent", start_ns=0, end_ns=9,
                   attributes=agent, scope_name="gcp.vertex.agent"),
        SpanRecord(TRACE, TOOL, AGENT, "execute_tool search_docs", start_ns=1, end_ns=2,
                   attributes=attrs, scope_name="gcp.vertex.agent"),
    ]  # fmt: skip
    (step,) = map_trace(build_trace(TRACE, spans), load_conventions()).tool_calls()
    return step


def test_empty_payloads_are_not_evidence() -> None:
    step = _tool_step(**{"gcp.vertex.agent.tool_call_args": "{}",
                         "gcp.vertex.agent.tool_response": "{}"})  # fmt: skip
    assert step.tool == "search_docs"
    assert step.arguments is None and step.result is None


def test_captured_payloads_are_read() -> None:
    step = _tool_step(**{
        "gcp.vertex.agent.tool_call_args": json.dumps({"query": "refund"}),
        "gcp.vertex.agent.tool_response": json.dumps({"documents": []}),
    })  # fmt: skip
    assert step.arguments == {"query": "refund"}
    assert step.result == {"documents": []}


@pytest.mark.parametrize(
    ("value", "expected"),
    [("{}", None), ("[]", None), ('""', None), ('{"a": 0}', {"a": 0}), ("0", 0), ("x", "x")],
)
def test_non_empty(value: str, expected: object) -> None:
    assert apply_parsers(["json", "non_empty"], value) == expected
