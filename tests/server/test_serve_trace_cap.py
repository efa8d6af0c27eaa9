"""One request cannot make ``serve`` build unbounded per-trace state: more distinct trace
ids than ``receivers.max_traces_per_request`` is 413 / RESOURCE_EXHAUSTED (final, no
RetryInfo) with a message naming the setting, and nothing of the request is buffered."""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from collections.abc import Callable

import grpc
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

from tests.server.conftest import Running

CAP = 50


def traces_body(n: int) -> trace_service_pb2.ExportTraceServiceRequest:
    """``n`` one-span traces (ended roots)."""
    req = trace_service_pb2.ExportTraceServiceRequest()
    scope = req.resource_spans.add().scope_spans.add()
    for i in range(n):
        span = scope.spans.add()
        span.trace_id = os.urandom(16)
        span.span_id = os.urandom(8)
        span.name = "chat"
        span.start_time_unix_nano = 1_700_000_000_000_000_000 + i
        span.end_time_unix_nano = span.start_time_unix_nano + 1000
    return req


def post(url: str, body: bytes) -> tuple[int, bytes]:
    req = urllib.request.Request(
        url, data=body, headers={"Content-Type": "application/x-protobuf"}, method="POST"
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


@pytest.fixture
def capped(serve: Callable[..., Running]) -> Running:
    return serve(**{"receivers.max_traces_per_request": CAP, "assembly.decision_wait": "60s"})


def test_http_refuses_a_body_over_the_trace_cap_with_413(capped: Running) -> None:
    status, raw = post(capped.http_url + "/v1/traces", traces_body(CAP + 1).SerializeToString())
    assert status == 413
    assert b"request holds 51 traces" in raw
    assert b"receivers.max_traces_per_request=50" in raw
    stats = capped.stats()
    assert stats["rejected"].get("too_many_traces") == 1
    assert stats["buffered_traces"] == 0, "nothing of a refused request is buffered"

    status, _ = post(capped.http_url + "/v1/traces", traces_body(CAP).SerializeToString())
    assert status == 200, "at the cap a request is taken"
    assert capped.stats()["buffered_traces"] == CAP


def test_grpc_refuses_it_with_resource_exhausted_and_no_retry_info(capped: Running) -> None:
    with grpc.insecure_channel(capped.grpc_endpoint) as channel:
        stub = trace_service_pb2_grpc.TraceServiceStub(channel)
        with pytest.raises(grpc.RpcError) as refused:
            stub.Export(traces_body(CAP + 1), timeout=30)
    err = refused.value
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "receivers.max_traces_per_request=50" in (err.details() or "")
    trailers = dict(err.trailing_metadata() or ())
    assert "google.rpc.retryinfo-bin" not in trailers, "final: a retry cannot help"
    assert capped.stats()["buffered_traces"] == 0
