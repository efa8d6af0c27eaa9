"""A body of many unusable spans costs a bounded log and a bounded answer: the rejected
records are counted, the first few located, and OTLP partial success carries both. Before,
every rejected span made its own located message (~80 times the body's size), all of them
joined into the answer."""

from __future__ import annotations

import logging
import urllib.request
from collections.abc import Callable

import grpc
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

from otel_oracles.server._logging import JsonFormatter
from tests.server.agent_traces import fixture_request, rekeyed, wait_until
from tests.server.conftest import Running

EMPTY_SPANS = 20_000
BODIES = 3
LOG_BYTES_PER_BODY = 1024
"""Log bytes one such body may cost, whatever its number of spans."""


def empty_spans_body(n: int, valid: trace_service_pb2.ExportTraceServiceRequest) -> bytes:
    """``n`` spans without ids (each two bytes on the wire) next to the valid spans of ``valid``."""
    req = trace_service_pb2.ExportTraceServiceRequest()
    req.CopyFrom(valid)
    scope = req.resource_spans.add().scope_spans.add()
    for _ in range(n):
        scope.spans.add()
    return req.SerializeToString()


def post(url: str, body: bytes) -> trace_service_pb2.ExportTraceServiceResponse:
    req = urllib.request.Request(
        url, data=body, headers={"Content-Type": "application/x-protobuf"}, method="POST"
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        assert resp.status == 200
        return trace_service_pb2.ExportTraceServiceResponse.FromString(resp.read())


def export_grpc(endpoint: str, body: bytes) -> trace_service_pb2.ExportTraceServiceResponse:
    with grpc.insecure_channel(endpoint) as channel:
        stub = trace_service_pb2_grpc.TraceServiceStub(channel)
        request = trace_service_pb2.ExportTraceServiceRequest.FromString(body)
        response: trace_service_pb2.ExportTraceServiceResponse = stub.Export(request, timeout=30)
        return response


def log_bytes(records: list[logging.LogRecord]) -> int:
    """What the records cost in serve's JSON log format."""
    fmt = JsonFormatter()
    return sum(len(fmt.format(r)) + 1 for r in records)


@pytest.mark.parametrize("transport", ["http", "grpc"])
def test_many_rejected_spans_cost_one_bounded_log_line_and_answer(
    serve: Callable[..., Running], caplog: pytest.LogCaptureFixture, transport: str
) -> None:
    bg = serve()
    caplog.set_level(logging.INFO, logger="otel_oracles")
    valid_spans = 0
    for _ in range(BODIES):
        valid, _tid = rekeyed(fixture_request("d_forbidden_tool"))
        valid_spans += sum(len(ss.spans) for rs in valid.resource_spans for ss in rs.scope_spans)
        body = empty_spans_body(EMPTY_SPANS, valid)
        before = len(caplog.records)
        if transport == "http":
            resp = post(bg.http_url + "/v1/traces", body)
        else:
            resp = export_grpc(bg.grpc_endpoint, body)
        partial = resp.partial_success
        assert partial.rejected_spans == EMPTY_SPANS
        assert "span rejected" in partial.error_message
        assert f"(and {EMPTY_SPANS - 3} more)" in partial.error_message
        assert len(partial.error_message) < 1024, "the answer names three, counts the rest"
        cost = log_bytes(caplog.records[before:])
        assert cost <= LOG_BYTES_PER_BODY, f"{cost} log bytes for one body of {len(body)} bytes"

    rejected = [r for r in caplog.records if r.getMessage() == "records rejected"]
    assert len(rejected) == 1, "logged once (later bodies folded into the next line's count)"
    assert rejected[0].__dict__["rejected"] == EMPTY_SPANS
    wait_until(
        lambda: bg.stats()["rejected"].get("invalid_record") == BODIES * EMPTY_SPANS,
        what="every rejected span counted",
    )
    wait_until(
        lambda: sum(bg.stats()["received"].values()) == valid_spans,
        what="the valid spans of each body received",
    )
