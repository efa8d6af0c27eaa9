"""The records of released traces share their repeated parts: one resource dict per distinct
resource (across traces and across batches), one string per attribute key and scope name.
Sharing is only sound while no reader changes a record's resource or attributes, so grading
is pinned to leave them exactly as released."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest

from otel_oracles.assemble import assemble_offline
from otel_oracles.decode import decode
from otel_oracles.grade.loader import load_contract
from otel_oracles.mapping import load_conventions
from otel_oracles.model.span import Trace
from otel_oracles.pipeline import read_traces
from otel_oracles.session import GradingSession
from tests.support.generated import generate_traces

REPO = Path(__file__).resolve().parent.parent.parent


def _value(value: object) -> dict[str, object]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": value}


def _body(resources: list[tuple[dict[str, object], list[int]]]) -> bytes:
    """OTLP/JSON: per resource, one root span of each trace number listed (scope "agent")."""
    groups = []
    for attributes, traces in resources:
        spans = [
            {
                "traceId": f"{t:032x}",
                "spanId": f"{t:016x}",
                "name": "invoke_agent",
                "startTimeUnixNano": "1",
                "endTimeUnixNano": "2",
                "attributes": [{"key": "gen_ai.operation.name", "value": _value("invoke_agent")}],
            }
            for t in traces
        ]
        groups.append(
            {
                "resource": {
                    "attributes": [{"key": k, "value": _value(v)} for k, v in attributes.items()]
                },
                "scopeSpans": [{"scope": {"name": "agent", "version": "1.0"}, "spans": spans}],
            }
        )
    return json.dumps({"resourceSpans": groups}).encode()


def _released(*bodies: bytes) -> list[Trace]:
    return list(assemble_offline(decode(body, "application/json") for body in bodies))


def test_spans_of_one_resource_share_one_dict_across_traces_and_batches() -> None:
    agent = {"service.name": "agent", "ratio": 0.5}
    other = {"service.name": "other"}
    traces = _released(
        _body([(agent, [1, 2])]),
        _body([(agent, [3]), (other, [4])]),
    )
    spans = {int(t.trace_id, 16): t.spans[0] for t in traces}
    assert sorted(spans) == [1, 2, 3, 4]
    # Traces 1-2 and 3 come from different batches (two decoded resources of equal content).
    assert spans[1].resource is spans[2].resource is spans[3].resource
    assert spans[1].resource == agent
    assert spans[4].resource == other and spans[4].resource is not spans[1].resource
    keys = [next(iter(span.attributes)) for span in spans.values()]
    assert all(key is keys[0] for key in keys), "one string per attribute key"
    assert all(span.scope_name is spans[1].scope_name for span in spans.values())
    assert all(span.scope_version is spans[1].scope_version for span in spans.values())


def test_resources_equal_but_not_identical_stay_apart() -> None:
    # 0.0 == -0.0 and 1 == 1.0 in Python, but each resource must keep its own values.
    variants: list[dict[str, object]] = [
        {"service.name": "agent", "x": 0.0},
        {"service.name": "agent", "x": -0.0},
        {"service.name": "agent", "x": 1},
        {"service.name": "agent", "x": 1.0},
        {"service.name": "agent", "x": True},
    ]
    traces = _released(*(_body([(v, [n + 1])]) for n, v in enumerate(variants)))
    by_trace = {int(t.trace_id, 16): t.spans[0].resource for t in traces}
    for n, expected in enumerate(variants):
        got = by_trace[n + 1]["x"]
        assert type(got) is type(expected["x"]) and repr(got) == repr(expected["x"])
    assert math.copysign(1.0, by_trace[2]["x"]) == -1.0
    assert len({id(r) for r in by_trace.values()}) == len(variants)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """60 synthetic traces from the benchmark generator, many batches (JSON lines)."""
    return generate_traces(tmp_path_factory.mktemp("generated"), 60, 128)


def test_grading_leaves_shared_resources_and_attributes_as_released(generated: Path) -> None:
    traces = list(read_traces([str(generated)], []))
    spans = [span for trace in traces for span in trace.spans]
    resources = {id(span.resource): span.resource for span in spans}
    distinct = {json.dumps(r, sort_keys=True) for r in resources.values()}
    assert len(traces) == 60 and len(resources) == len(distinct) < len(traces)
    before: list[tuple[Any, Any]] = copy.deepcopy(
        [(span.resource, span.attributes) for span in spans]
    )
    contracts = [load_contract(p) for p in sorted((REPO / "bench" / "contracts").glob("*.yaml"))]
    session = GradingSession(contracts, load_conventions([]))
    graded = [verdict for trace in traces for verdict, _ in session.grade(trace)]
    assert graded, "the benchmark contracts must select the synthetic traces"
    for verdict in graded:
        verdict.model_dump_json()
    after = [(span.resource, span.attributes) for span in spans]
    assert after == before
