"""Rejected records are counted, and only the first few are described: a body of many
unusable spans costs memory in proportion to what it holds, not ~80 bytes of message per
two-byte span."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable

import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from otel_oracles.decode import decode
from otel_oracles.decode._batch import MAX_LISTED_PROBLEMS

SPANS = 100_000


def proto_body(n: int) -> bytes:
    req = trace_service_pb2.ExportTraceServiceRequest()
    scope = req.resource_spans.add().scope_spans.add()
    for _ in range(n):
        scope.spans.add()
    return req.SerializeToString()


def json_body(n: int) -> bytes:
    spans = [{"name": "x"}] * n
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode()


@pytest.mark.parametrize(
    ("n", "make", "content_type"),
    [(SPANS, proto_body, "application/x-protobuf"), (SPANS // 5, json_body, "application/json")],
    ids=["protobuf", "json"],
)
def test_every_rejected_span_is_counted_and_the_first_few_located(
    n: int, make: Callable[[int], bytes], content_type: str
) -> None:
    batch = decode(make(n), content_type)
    assert batch.spans == []
    assert batch.rejected == n
    assert len(batch.problems) == MAX_LISTED_PROBLEMS
    assert batch.problems.total == n
    assert batch.problems[0].startswith("resourceSpans[0].scopeSpans[0].spans[0]")
    assert batch.problems.summary().endswith(f"(and {n - 3} more)")


def test_a_body_of_empty_spans_costs_memory_in_proportion_to_its_size() -> None:
    body = proto_body(SPANS)
    tracemalloc.start()
    try:
        batch = decode(body, "application/x-protobuf")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert batch.rejected == SPANS
    # One located message per span was ~90 characters: 100,000 of them, ~15 MB of str
    # objects for a 200 KB body. The parsed message is the bound now.
    assert peak < len(body), f"{peak} bytes traced for a {len(body)}-byte body"
