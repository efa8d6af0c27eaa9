"""The package's own OTLP senders (emit/_transport.py) against a real receiver on
127.0.0.1: the standard variables (headers, compression, per-signal endpoints) and the
SDK exporters' delivery rules (a retryable refusal is retried after a back-off within the
timeout, a non-retryable one is not)."""

from __future__ import annotations

import time

import pytest

from otel_oracles.emit import EmitResult, EmitSettings, build_emitter
from otel_oracles.emit._transport import OtlpTarget, sender_for
from tests.emit.conftest import make_trajectory, make_verdict
from tests.support.otlp_sink import OtlpSink

PROTOCOLS = ["grpc", "http/protobuf"]


def _env(monkeypatch: pytest.MonkeyPatch, sink: OtlpSink, protocol: str) -> None:
    endpoint = sink.grpc_endpoint if protocol == "grpc" else sink.http_endpoint
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_headers_and_gzip_from_the_standard_variables(
    monkeypatch: pytest.MonkeyPatch, sink: OtlpSink, protocol: str
) -> None:
    _env(monkeypatch, sink, protocol)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Bearer%20t0ken,x-tenant=a")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip")
    emitter = build_emitter("otlp", settings=EmitSettings(metrics=False))
    trajectory = make_trajectory()
    assert emitter.export([(make_verdict(trajectory), trajectory)]) is EmitResult.SUCCESS
    emitter.shutdown()
    assert len(sink.wait_for_spans(1)) == 1 and len(sink.wait_for_logs(6)) == 6
    for received in sink.requests():
        assert received.headers["authorization"] == "Bearer t0ken"
        assert received.headers["x-tenant"] == "a"
        if protocol != "grpc":  # grpc takes its encoding header off the metadata it shows
            assert received.headers.get("content-encoding") == "gzip", "sent uncompressed"
    assert OtlpTarget.from_env("traces", protocol).compression == "gzip"  # type: ignore[arg-type]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_retryable_refusal_is_retried_after_a_backoff(
    monkeypatch: pytest.MonkeyPatch, sink: OtlpSink, protocol: str
) -> None:
    _env(monkeypatch, sink, protocol)
    sender = sender_for(OtlpTarget.from_env("traces", protocol, timeout_s=5))  # type: ignore[arg-type]
    sink.reject_next(1)
    start = time.monotonic()
    assert sender.send(b""), "an empty request is a valid ExportTraceServiceRequest"
    elapsed = time.monotonic() - start
    sender.shutdown()
    assert len(sink.requests("traces")) == 1, "delivered on the second attempt"
    assert 0.7 < elapsed < 3, f"one back-off of ~1 s (+/-20%) expected, took {elapsed:.2f}s"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_backoff_never_runs_past_the_timeout(
    monkeypatch: pytest.MonkeyPatch, sink: OtlpSink, protocol: str
) -> None:
    _env(monkeypatch, sink, protocol)
    sender = sender_for(OtlpTarget.from_env("logs", protocol, timeout_s=0.5))  # type: ignore[arg-type]
    sink.reject_next(100)
    start = time.monotonic()
    assert not sender.send(b"")
    elapsed = time.monotonic() - start
    sender.shutdown()
    assert elapsed < 0.5, "a 1 s back-off does not fit a 0.5 s timeout: give up at once"
    assert not sender.send(b""), "a shut-down sender sends nothing"


def test_per_signal_endpoints_win_over_the_base(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://base:4318/")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "https://logs.example/ingest")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "3")
    traces = OtlpTarget.from_env("traces", "http/protobuf")
    logs = OtlpTarget.from_env("logs", "http/protobuf")
    assert (traces.endpoint, traces.tls, traces.timeout_s) == (
        "http://base:4318/v1/traces",
        False,
        3,
    )
    assert (logs.endpoint, logs.tls, logs.timeout_s) == ("https://logs.example/ingest", True, 10)
    grpc = OtlpTarget.from_env("metrics", "grpc")
    assert (grpc.endpoint, grpc.tls) == ("base:4318", False)
