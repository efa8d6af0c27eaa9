"""OTLP receivers end to end, in-process: real SDK exporters and real sockets on 127.0.0.1.

Each test starts its own server (port 0, decision_wait 0.2 s) with an InMemoryEmitter, so
what was graded is exactly what the emitter was handed.
"""

from __future__ import annotations

import gzip
import http.client
import json
import random
import threading
import time
import urllib.error
import urllib.request

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http import Compression as HttpCompression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from tests.server.agent_traces import (
    fixture_request,
    rekeyed,
    send_agent_traces,
    single_span_requests,
    span_count,
    wait_until,
)

TRACE_METHOD = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


def post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def post_pb(bg, req: ExportTraceServiceRequest, **headers: str) -> tuple[int, dict, bytes]:
    return post(
        bg.http_url + "/v1/traces",
        req.SerializeToString(),
        {"Content-Type": "application/x-protobuf", **headers},
    )


def grpc_export(bg, body: bytes, metadata=()) -> ExportTraceServiceResponse:
    with grpc.insecure_channel(bg.grpc_endpoint) as channel:
        call = channel.unary_unary(
            TRACE_METHOD, response_deserializer=ExportTraceServiceResponse.FromString
        )
        return call(body, metadata=metadata, timeout=10)


def verdict_map(bg) -> dict[str, bool]:
    return {v.trace_id: v.passed for v in bg.emitter.verdicts}


@pytest.mark.parametrize("transport", ["grpc", "grpc+gzip", "http", "http+gzip"])
def test_python_sdk_exporters_get_every_agent_trace_graded(serve, transport: str) -> None:
    bg = serve()
    gz = transport.endswith("+gzip")
    exporter = (
        GrpcExporter(endpoint=bg.grpc_endpoint, insecure=True,
                     compression=grpc.Compression.Gzip if gz else None)
        if transport.startswith("grpc")
        else HttpExporter(endpoint=bg.http_url + "/v1/traces",
                          compression=HttpCompression.Gzip if gz else None)
    )  # fmt: skip
    ids, forbidden = send_agent_traces(exporter, 4)
    wait_until(lambda: len(bg.emitter.verdicts) >= 4, what="4 verdicts")
    got = verdict_map(bg)
    assert set(got) == set(ids)
    assert {t for t, ok in got.items() if not ok} == set(forbidden), (
        "exactly the traces that called delete_records must fail"
    )
    protocol = transport.split("+")[0]
    assert bg.stats()["received"] == {f"{protocol}.traces": 4 * 3 + 2 * 1}


def test_one_trace_split_across_requests_connections_and_protocols_out_of_order(serve) -> None:
    bg = serve(**{"assembly.decision_wait": "1s"})
    req, tid = rekeyed(fixture_request("d_forbidden_tool"))
    parts = single_span_requests(req)
    random.Random(7).shuffle(parts)
    # the root first: the worst case for a completion rule (its children are all still to come)
    parts.sort(key=lambda r: bool(r.resource_spans[0].scope_spans[0].spans[0].parent_span_id))
    for i, part in enumerate(parts):
        if i % 3 == 0:
            grpc_export(bg, part.SerializeToString())  # a new channel (connection) per request
        elif i % 3 == 1:
            status, _, _ = post_pb(bg, part)
            assert status == 200
        else:
            body = gzip.compress(part.SerializeToString())
            status, _, _ = (
                post_pb(bg, part)
                if False
                else post(
                    bg.http_url + "/v1/traces",
                    body,
                    {"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"},
                )
            )
            assert status == 200
    # Counted once the export call returned, just after the emitter saw the verdict.
    wait_until(lambda: bg.stats()["graded_traces"] == {"complete": 1}, what="one complete trace")
    (verdict,) = bg.emitter.verdicts
    assert verdict.trace_id == tid
    assert not verdict.passed, "d_forbidden_tool calls delete_records"
    (_, trajectory) = bg.emitter.results[0]
    assert not trajectory.incomplete
    assert len(parts) == span_count(req) == 6


def test_late_spans_after_grading_are_counted_not_regraded(serve) -> None:
    bg = serve()
    req, _tid = rekeyed(fixture_request("a_happy"))
    assert post_pb(bg, req)[0] == 200
    wait_until(lambda: len(bg.emitter.verdicts) == 1, what="the first verdict")
    late = single_span_requests(req)[0]
    status, _, body = post_pb(bg, late)
    assert status == 200
    resp = ExportTraceServiceResponse.FromString(body)
    assert resp.partial_success.rejected_spans == 0, "late spans are accepted and counted"
    assert "late" in resp.partial_success.error_message
    # Once the span is counted late it is out of the assembler: it can no longer regrade.
    wait_until(lambda: bg.stats()["late"] == 1, what="the late span counted")
    assert len(bg.emitter.verdicts) == 1, "a late span must not regrade its trace"
    assert bg.stats()["buffered_traces"] == 0


def test_trace_without_root_is_graded_incomplete_at_max_trace_age(serve) -> None:
    bg = serve(**{"assembly.max_trace_age": "0.6s"})
    req, _tid = rekeyed(fixture_request("a_happy"))
    children = [r for r in single_span_requests(req)
                if r.resource_spans[0].scope_spans[0].spans[0].parent_span_id]  # fmt: skip
    for part in children:
        assert post_pb(bg, part)[0] == 200
    time.sleep(0.4)
    assert bg.emitter.verdicts == [], "no root yet: must wait for max_trace_age"
    wait_until(lambda: len(bg.emitter.verdicts) == 1, what="the age-out verdict")
    (verdict,) = bg.emitter.verdicts
    assert not verdict.passed
    assert any("trace incomplete" in r.message for r in verdict.results), verdict.results
    # Counted once the export call returned, just after the emitter saw the verdict.
    wait_until(lambda: bg.stats()["graded_traces"] == {"max_age": 1}, what="counted as max_age")


GOOD = fixture_request("a_happy").SerializeToString()


@pytest.mark.parametrize(
    ("case", "headers", "body", "status"),
    [
        ("truncated protobuf", {"Content-Type": "application/x-protobuf"},
         GOOD[: len(GOOD) // 2], 400),
        ("invalid JSON", {"Content-Type": "application/json"}, b'{"resourceSpans": [', 400),
        ("wrong content type", {"Content-Type": "text/plain"}, GOOD, 415),
        ("oversized", {"Content-Type": "application/x-protobuf"}, b"\x0a" * 70_000, 413),
        ("bad gzip", {"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"},
         b"\x1f\x8b\x08\x00garbage", 400),
        ("gzip bomb", {"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"},
         gzip.compress(b"\x00" * 200_000), 413),
        ("unknown encoding", {"Content-Type": "application/x-protobuf", "Content-Encoding": "br"},
         GOOD, 400),
    ],
)  # fmt: skip
def test_malformed_http_body_gets_its_status_and_the_server_keeps_serving(
    serve, case: str, headers: dict[str, str], body: bytes, status: int
) -> None:
    bg = serve(**{"receivers.max_request_bytes": "64KiB"})
    got, resp_headers, resp_body = post(bg.http_url + "/v1/traces", body, headers)
    assert got == status, f"{case}: expected {status}, got {got} {resp_body[:200]!r}"
    assert "Retry-After" not in resp_headers, f"{case} must not invite a retry"
    if got == 400 and "json" in headers["Content-Type"]:
        assert json.loads(resp_body)["message"], "a JSON request gets a JSON google.rpc.Status"
    elif got == 400:
        assert status_pb2.Status.FromString(resp_body).message, "error body is a google.rpc.Status"
    req, tid = rekeyed(fixture_request("a_happy"))
    assert post_pb(bg, req)[0] == 200, "the server must keep serving after a bad request"
    wait_until(lambda: tid in verdict_map(bg), what="the good trace's verdict")
    assert bg.stats()["buffered_spans"] == 0


def test_json_error_body_is_json(serve) -> None:
    bg = serve()
    status, headers, body = post(
        bg.http_url + "/v1/traces", b"{nope", {"Content-Type": "application/json"}
    )
    assert status == 400 and headers["Content-Type"].startswith("application/json")
    assert "message" in json.loads(body)


def test_malformed_grpc_body_is_invalid_argument_and_oversized_is_resource_exhausted(
    serve,
) -> None:
    bg = serve(**{"receivers.max_request_bytes": "64KiB"})
    with pytest.raises(grpc.RpcError) as bad:
        grpc_export(bg, GOOD[: len(GOOD) // 2])
    assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as big:
        grpc_export(bg, b"\x0a" * 70_000)
    assert big.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "google.rpc.retryinfo-bin" not in dict(big.value.trailing_metadata() or ())
    req, tid = rekeyed(fixture_request("a_happy"))
    grpc_export(bg, req.SerializeToString())
    wait_until(lambda: tid in verdict_map(bg), what="the good trace's verdict")


def test_wrong_or_missing_token_is_refused_and_nothing_is_buffered(serve) -> None:
    bg = serve(**{"receivers.auth.bearer_token": "s3cret"})
    req, tid = rekeyed(fixture_request("a_happy"))
    assert post_pb(bg, req)[0] == 401
    assert post_pb(bg, req, Authorization="Bearer wrong")[0] == 401
    with pytest.raises(grpc.RpcError) as err:
        grpc_export(bg, req.SerializeToString(), metadata=(("authorization", "Bearer nope"),))
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
    stats = bg.stats()
    assert stats["buffered_spans"] == 0 and stats["received"] == {}
    assert stats["rejected"] == {"unauthenticated": 3}
    ids, _ = send_agent_traces(
        GrpcExporter(endpoint=bg.grpc_endpoint, insecure=True,
                     headers={"authorization": "Bearer s3cret"}), 1)  # fmt: skip
    assert post_pb(bg, req, Authorization="Bearer s3cret")[0] == 200
    wait_until(lambda: {tid, *ids} <= set(verdict_map(bg)), what="authorized traces graded")


def test_agent_spans_in_the_graders_scope_are_graded_not_skipped(serve) -> None:
    """The scope name the grader's emitter stamps on its output is a string any sender can
    write: spans of another shape under it are graded (the grader's real output, which is
    skipped, is sent back in test_serve_forged_own_telemetry.py)."""
    bg = serve()
    req, tid = rekeyed(fixture_request("a_happy"))
    for rs in req.resource_spans:
        for ss in rs.scope_spans:
            ss.scope.name = "otel_oracles"
    assert post_pb(bg, req)[0] == 200
    assert bg.stats().get("skipped_self_telemetry", 0) == 0, "skipped on receipt, if at all"
    wait_until(lambda: tid in verdict_map(bg), what="the trace graded")
    assert bg.stats()["received"]["http.traces"] == span_count(req)


def test_flood_beyond_the_buffer_is_pushed_back_and_nothing_is_lost(serve) -> None:
    """count in = graded + (rejected with a retryable status and re-sent)."""
    bg = serve(**{"assembly.max_traces": 4, "assembly.retry_after": "0.1s"})
    base = fixture_request("a_happy")
    bodies = [rekeyed(base) for _ in range(40)]
    refused = 0
    lock = threading.Lock()

    def sender(chunk: list[tuple[ExportTraceServiceRequest, str]]) -> None:
        nonlocal refused
        conn = http.client.HTTPConnection("127.0.0.1", bg.server.http_port, timeout=10)
        for req, _ in chunk:
            while True:
                conn.request("POST", "/v1/traces", req.SerializeToString(),
                             {"Content-Type": "application/x-protobuf"})  # fmt: skip
                resp = conn.getresponse()
                resp.read()
                if resp.status == 200:
                    break
                assert resp.status == 429, resp.status
                assert resp.getheader("Retry-After") == "1"
                with lock:
                    refused += span_count(req)
                time.sleep(0.05)
        conn.close()

    threads = [threading.Thread(target=sender, args=(bodies[i::4],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    wait_until(lambda: len(bg.emitter.verdicts) == 40, timeout=20, what="40 verdicts")
    assert refused > 0, "the flood should have hit the 4-trace buffer"
    assert sorted(verdict_map(bg)) == sorted(tid for _, tid in bodies)
    stats = bg.stats()
    assert stats["rejected"]["buffer_full"] == refused, "every refusal is counted, per span"
    assert stats["received"]["http.traces"] == 40 * span_count(base)
    assert len(bg.emitter.verdicts) == 40, "each trace graded exactly once"


def test_grpc_overload_carries_retry_info(serve) -> None:
    bg = serve(**{"assembly.max_traces": 1, "assembly.retry_after": "0.25s",
                  "assembly.decision_wait": "5s", "assembly.max_trace_age": "5s"})  # fmt: skip
    grpc_export(bg, rekeyed(fixture_request("a_happy"))[0].SerializeToString())
    with pytest.raises(grpc.RpcError) as err:
        grpc_export(bg, rekeyed(fixture_request("a_happy"))[0].SerializeToString())
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    trailers = dict(err.value.trailing_metadata())
    info = error_details_pb2.RetryInfo.FromString(trailers["google.rpc.retryinfo-bin"])
    assert info.retry_delay.ToMilliseconds() == 250
    detail = status_pb2.Status.FromString(trailers["grpc-status-details-bin"])
    assert detail.details[0].Is(error_details_pb2.RetryInfo.DESCRIPTOR)


def test_slow_grade_does_not_stall_other_traces(serve, tmp_path) -> None:
    slow = tmp_path / "slow.yaml"
    slow.write_text(
        "id: slow-tests\nname: slow\ndescription: a slow test_must_pass\n"
        "workspace: {README.md: x}\nmatch: {resource: {service.name: slow-agent}}\n"
        "invariants:\n  - {type: test_must_pass, command: 'sleep 3', timeout: 20}\n"
    )
    from tests.server.conftest import CONTRACTS

    bg = serve(
        **{
            "grading.contracts": [str(CONTRACTS), str(slow)],
            "grading.workers": 2,
            "grading.commands": "sandbox",  # off by default in serve
        }
    )
    exporter = HttpExporter(endpoint=bg.http_url + "/v1/traces")
    slow_ids, _ = send_agent_traces(exporter, 1, service="slow-agent")
    time.sleep(0.4)  # the slow trace is now grading
    t0 = time.monotonic()
    ids, _ = send_agent_traces(HttpExporter(endpoint=bg.http_url + "/v1/traces"), 4)
    wait_until(lambda: set(ids) <= set(verdict_map(bg)), timeout=10, what="fast verdicts")
    assert time.monotonic() - t0 < 2.5, "fast traces waited behind the slow test_must_pass"
    assert slow_ids[0] not in verdict_map(bg), "the slow one should still be grading"
    wait_until(lambda: slow_ids[0] in verdict_map(bg), timeout=15, what="slow verdict")


def test_spans_over_the_per_trace_limit_get_partial_success_and_an_incomplete_verdict(
    serve,
) -> None:
    bg = serve(**{"assembly.max_spans_per_trace": 4})
    req, tid = rekeyed(fixture_request("d_forbidden_tool"))
    status, _, body = post_pb(bg, req)
    assert status == 200
    partial = ExportTraceServiceResponse.FromString(body).partial_success
    assert partial.rejected_spans == span_count(req) - 4
    assert "max_spans_per_trace" in partial.error_message
    wait_until(lambda: tid in verdict_map(bg), what="the truncated trace's verdict")
    (verdict,) = bg.emitter.verdicts
    assert any("trace incomplete" in r.message for r in verdict.results), verdict.results
    assert bg.stats()["rejected"] == {"span_limit": span_count(req) - 4}
