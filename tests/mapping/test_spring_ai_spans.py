"""Spring AI's observations (``conventions/spring-ai.yaml``) on the real ``spring-ai`` captures:
a failed tool shows only in its result's form (the exception's message as plain text, where
every result a tool returns is JSON), and Spring's HTTP client observations are network access
unless they are a model call's own transport."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from otel_oracles.grade.loader import parse_contract
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.mapping.parsers.scalars import parse_error_unless_json
from otel_oracles.model.result import Outcome
from otel_oracles.pipeline import grade_trace, read_traces

TRACES = Path(__file__).resolve().parents[1] / "testdata" / "traces" / "spring-ai"


@pytest.mark.parametrize(
    ("value", "want"),
    [
        ("upstream search service timed out (attempt 1)", "error"),
        ("", "error"),
        ('"wrote 36 bytes to calc.py"', None),  # a String result, JSON-encoded
        ('{"documents": []}', None),
        ("12", None),
        ("null", None),
        ({"documents": []}, None),  # already structured: says nothing
        (None, None),
    ],
)
def test_a_text_that_is_no_json_is_an_error_outcome(value: Any, want: str | None) -> None:
    assert parse_error_unless_json(value) == want


def _trajectory(path: Path) -> Any:
    problems: list[Any] = []
    (trace,) = read_traces([str(path)], problems)
    assert problems == []
    return map_trace(trace, load_conventions())


def test_a_failed_call_reads_as_failed_only_where_its_result_was_recorded() -> None:
    on = _trajectory(TRACES / "b_tool_retry.otlp.json")
    assert [(s.tool, s.status) for s in on.tool_calls()] == [
        ("search_docs", "error"),
        ("search_docs", "ok"),
    ]
    assert "timed out" in (on.tool_calls()[0].error_message or on.tool_calls()[0].result)
    off = _trajectory(TRACES / "b_tool_retry.nocontent.otlp.json")
    # Both spans ended OK: without the results nothing shows which call failed.
    assert [(s.tool, s.status) for s in off.tool_calls()] == [
        ("search_docs", "unset"),
        ("search_docs", "unset"),
    ]


BOOT_3_TAGS = {"http.url": "https://api.example.com/x", "client.name": "api.example.com"}
BOOT_4_TAGS = {"target.host": "api.example.com", "target.port": "443", "target.scheme": "https"}
"""Where the request went, as Spring Framework 6 (Boot 3) and 7 (Boot 4) tag it."""


def _with_http_span(
    traces: Path, scenario: str, parent_name: str, where: dict[str, str], out: Path
) -> Path:
    """The capture with one Micrometer ``http.client.requests`` span (Spring's RestClient, as
    the bridge exports it) under the first span named ``parent_name``, inside its time span."""
    doc = json.loads((traces / f"{scenario}.otlp.json").read_text())
    scope, parent = next(
        (ss, span)
        for rs in doc["resourceSpans"]
        for ss in rs["scopeSpans"]
        for span in ss["spans"]
        if span["name"] == parent_name
    )
    start, end = int(parent["startTimeUnixNano"]), int(parent["endTimeUnixNano"])
    tags = {"method": "GET", **where, "uri": "/", "status": "200", "outcome": "SUCCESS"}
    scope["spans"].append(
        {
            "traceId": parent["traceId"],
            "spanId": os.urandom(8).hex(),
            "parentSpanId": parent["spanId"],
            "name": "http get",
            "kind": 3,
            "startTimeUnixNano": str(start + 1),
            "endTimeUnixNano": str(max(start + 2, end - 1)),
            "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in tags.items()],
        }
    )
    out.write_text(json.dumps(doc))
    return out


@pytest.mark.parametrize(
    ("source", "parent", "where", "outcome"),
    [
        # the tool reached the network
        ("spring-ai", "tool_call search_docs", BOOT_3_TAGS, Outcome.INVARIANT_FAILURE),
        ("spring-ai-2", "execute_tool search_docs", BOOT_4_TAGS, Outcome.INVARIANT_FAILURE),
        # a model call's own transport
        ("spring-ai", "chat gpt-4o-mini", BOOT_3_TAGS, Outcome.PASS),
        ("spring-ai-2", "chat gpt-4o-mini", BOOT_4_TAGS, Outcome.PASS),
    ],
)
def test_spring_http_client_spans_are_network_access_outside_model_calls(
    source: str, parent: str, where: dict[str, str], outcome: Outcome, tmp_path: Path
) -> None:
    traces = TRACES.parent / source
    path = _with_http_span(traces, "a_happy", parent, where, tmp_path / "t.json")
    contract = parse_contract({"id": "c", "invariants": [{"type": "no_network"}]}, "<test>")
    problems: list[Any] = []
    graded = [
        vt
        for trace in read_traces([str(path)], problems)
        for vt in grade_trace(trace, [contract], load_conventions())
    ]
    assert problems == [] and len(graded) == 1
    verdict, trajectory = graded[0]
    assert trajectory.unmapped_spans == {}
    (result,) = verdict.results
    assert result.outcome == outcome, result.message
    if outcome == Outcome.INVARIANT_FAILURE:
        assert "api.example.com" in result.message
