"""OTLP logs (log-based GenAI events) join their trace, whichever transport and order."""

from __future__ import annotations

import urllib.request

import grpc
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse

from tests.server.agent_traces import TESTDATA, wait_until

LOGS_METHOD = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"


def test_tool_calls_only_in_log_records_are_graded_when_logs_arrive_first_over_grpc(
    serve,
) -> None:
    bg = serve()
    logs = (TESTDATA / "openai-v2" / "d_forbidden_tool.logs.pb").read_bytes()
    spans = (TESTDATA / "openai-v2" / "d_forbidden_tool.pb").read_bytes()
    with grpc.insecure_channel(bg.grpc_endpoint) as channel:
        export = channel.unary_unary(
            LOGS_METHOD, response_deserializer=ExportLogsServiceResponse.FromString
        )
        resp = export(logs, timeout=10)
    assert resp.partial_success.rejected_log_records == 0
    req = urllib.request.Request(
        bg.http_url + "/v1/traces", data=spans, headers={"Content-Type": "application/x-protobuf"}
    )
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.status == 200
    wait_until(lambda: len(bg.emitter.verdicts) == 1, what="the verdict")
    (verdict,) = bg.emitter.verdicts
    assert not verdict.passed, "delete_records is called in the log-based events only"
    failed = [(r.oracle_type, r.outcome.value) for r in verdict.results if not r.passed]
    assert failed == [("tool_not_called", "invariant_failure")], failed
    stats = bg.stats()
    assert stats["received"]["grpc.logs"] > 0 and stats["late"] == 0
