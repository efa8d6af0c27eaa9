"""The emitter hands its own exporters (fast OTLP, OTLP/JSON lines) its own records
(emit/_records.py) and any other exporter the SDK's objects built from them. Both routes
must say the same thing: here one emitter feeds both kinds at once, and what ours put on
the wire / in the file must equal what the SDK's encoder (and our SDK-object encoders)
make of the SDK objects the foreign exporter received."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from otel_oracles.emit import EmitResult, EmitSettings, OtelEmitter
from otel_oracles.emit import _fast_http as fast_http
from otel_oracles.emit._fast_grpc import FastGrpcLogExporter, FastGrpcSpanExporter
from otel_oracles.emit._fast_otlp import Encoder, _list_field, _value
from otel_oracles.emit._otlp_json import (
    JsonLinesLogExporter,
    JsonLinesSpanExporter,
    OtlpJsonLinesFile,
    logs_json,
    spans_json,
)
from otel_oracles.emit._records import accepts_items
from otel_oracles.model.result import OracleResult, Outcome
from tests.emit.conftest import make_results, make_trajectory, make_verdict


class _Foreign(SpanExporter, LogRecordExporter):
    """An exporter that is not ours: it gets SDK objects."""

    def __init__(self) -> None:
        self.spans: list[Any] = []
        self.logs: list[Any] = []

    def export(self, batch):  # type: ignore[no-untyped-def,override]
        if batch and hasattr(batch[0], "log_record"):
            self.logs.append(list(batch))
            return LogRecordExportResult.SUCCESS
        self.spans.append(list(batch))
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:  # type: ignore[override]
        pass


class _GrpcSpans(FastGrpcSpanExporter):
    """The real translate step; the RPC itself is replaced by keeping the request."""

    def __init__(self) -> None:
        super().__init__(endpoint="http://127.0.0.1:9", insecure=True)
        self.requests: list[Any] = []

    def _export(self, data):  # type: ignore[no-untyped-def,override]
        self.requests.append(self._translate_data(data))
        return SpanExportResult.SUCCESS


class _GrpcLogs(FastGrpcLogExporter):
    def __init__(self) -> None:
        super().__init__(endpoint="http://127.0.0.1:9", insecure=True)
        self.requests: list[Any] = []

    def _export(self, data):  # type: ignore[no-untyped-def,override]
        self.requests.append(self._translate_data(data))
        return LogRecordExportResult.SUCCESS


def _pairs() -> list[tuple[Any, Any]]:
    pairs = []
    for contract in ("support-answers", "no-deletes"):
        trajectory = make_trajectory()
        pairs.append((make_verdict(trajectory, make_results(contract), contract), trajectory))
    no_ids = make_trajectory(trace_id=None)
    pairs.append((make_verdict(no_ids), no_ids))
    many = make_trajectory()
    wide = OracleResult(
        contract_id="support-answers",
        contract_version=3,
        oracle_type="tool_retries",
        name="wide",
        layer="tolerance",
        outcome=Outcome.TOLERATED,
        passed=True,
        message="many",
        used=0,
        budget=300,
        step_indexes=list(range(0, 300, 7)),
        span_ids=["b7ad6b7169203331", "not-a-span-id", "00f067aa0ba902b7"],
    )
    pairs.append((make_verdict(many, [wide, *make_results()]), many))
    return pairs


@pytest.mark.parametrize("explain", ["template", "full"])
@pytest.mark.parametrize(
    "settings",
    [{}, {"span_events": False}, {"grade_span": False}, {"log_events": False}],
    ids=["all", "no-span-events", "no-grade-span", "no-logs"],
)
def test_own_exporters_say_what_the_sdk_objects_say(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, explain: str, settings: dict[str, Any]
) -> None:
    posted: list[bytes] = []

    def keep_payload(exporter: Any, payload: bytes, count: int, what: str) -> bool:
        posted.append(payload)
        return True

    monkeypatch.setattr(fast_http, "_http_export", keep_payload)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    http_spans, http_logs = fast_http.FastHttpSpanExporter(), fast_http.FastHttpLogExporter()
    grpc_spans, grpc_logs = _GrpcSpans(), _GrpcLogs()
    out = OtlpJsonLinesFile(tmp_path / "results.jsonl")
    json_spans, json_logs = JsonLinesSpanExporter(out), JsonLinesLogExporter(out)
    foreign = _Foreign()
    ours = [http_spans, http_logs, grpc_spans, grpc_logs, json_spans, json_logs]
    assert all(accepts_items(e) for e in ours) and not accepts_items(foreign)
    emitter = OtelEmitter(
        span_exporters=[http_spans, grpc_spans, json_spans, foreign],
        log_exporters=[http_logs, grpc_logs, json_logs, foreign],
        settings=EmitSettings(explain=explain, max_export_batch_size=5, metrics=False, **settings),
    )
    pairs = _pairs()
    assert emitter.export(pairs * 2) is EmitResult.SUCCESS
    emitter.shutdown()

    span_batches, log_batches = foreign.spans, foreign.logs
    assert len(span_batches) + len(log_batches) == len(posted) > 1
    if settings.get("grade_span", True):
        assert sum(map(len, span_batches)) == 2 * len(pairs)
    if settings.get("log_events", True):
        assert sum(map(len, log_batches)) == 2 * sum(len(v.results) for v, _ in pairs)
    encoder = Encoder()
    expected_wire = [encoder.spans_bytes(b) for b in span_batches] + [
        encoder.logs_bytes(b) for b in log_batches
    ]
    # Posted in shipping order; compare as multisets of requests per signal.
    assert sorted(posted) == sorted(expected_wire)
    # The gRPC stub takes the encoded request as it is (no parse and re-serialize).
    assert grpc_spans.bytes_in and grpc_logs.bytes_in
    assert [type(encode_spans([])).FromString(r) for r in grpc_spans.requests] == [
        encode_spans(b) for b in span_batches
    ]
    assert [type(encode_logs([])).FromString(r) for r in grpc_logs.requests] == [
        encode_logs(b) for b in log_batches
    ]
    lines = (tmp_path / "results.jsonl").read_bytes().splitlines()
    expected_lines = [spans_json(b) for b in span_batches] + [logs_json(b) for b in log_batches]
    assert sorted(lines) == sorted(expected_lines)


def test_records_without_ids_point_at_no_span_on_every_route(tmp_path: Path) -> None:
    out = OtlpJsonLinesFile(tmp_path / "r.jsonl")
    foreign = _Foreign()
    emitter = OtelEmitter(
        span_exporters=[foreign], log_exporters=[JsonLinesLogExporter(out), foreign]
    )
    no_ids = make_trajectory(trace_id=None)
    assert emitter.export([(make_verdict(no_ids), no_ids)]) is EmitResult.SUCCESS
    emitter.shutdown()
    (logs,) = foreign.logs
    assert all(r.log_record.trace_id == 0 and int(r.log_record.trace_flags) == 0 for r in logs)
    text = (tmp_path / "r.jsonl").read_text()
    assert '"traceId"' not in text and '"flags"' not in text


@pytest.mark.parametrize(
    "values",
    [[0], [1, 127, 128, 300, 2**40, 2**63 - 1], ["", "a", "é☃", "x" * 200], list(range(40))],
)
def test_direct_list_attributes_are_what_upb_writes(values: list[Any]) -> None:
    tag = b"\x32"
    kv = KeyValue(key="k", value=_value(values)).SerializeToString()
    expected = tag + bytes([len(kv)]) if len(kv) < 128 else None
    got = _list_field(tag, "k", values)
    assert got is not None
    # Parse back: the field wraps exactly the KeyValue upb writes.
    assert KeyValue.FromString(got[len(got) - len(kv) :]) == KeyValue.FromString(kv)
    assert got.endswith(kv)
    if expected is not None:
        assert got == expected + kv


@pytest.mark.parametrize("values", [[-1, 2], [1, "a"], [True, 1], ["a", 1], [1.5]])
def test_direct_list_attributes_leave_other_lists_to_upb(values: list[Any]) -> None:
    assert _list_field(b"\x32", "k", values) is None


@pytest.mark.parametrize("explain", ["template", "full"])
def test_results_differing_only_in_what_they_say_emit_their_own_values(
    monkeypatch: pytest.MonkeyPatch, explain: str
) -> None:
    """The shared attribute runs are keyed by everything they hold: same check, same
    message, different error type or shown detail must not borrow each other's run, also
    when the caches are cleared as they fill."""
    from otel_oracles.emit import _names as n
    from otel_oracles.emit import _otel

    monkeypatch.setattr(_otel, "_MAX_SHARED", 2)

    def errored(error: str, tool: str) -> OracleResult:
        return OracleResult(
            contract_id="c",
            contract_version=1,
            oracle_type="tool_not_called",
            name="n",
            outcome=Outcome.ERROR,
            passed=False,
            message="the same message",
            details={"error.type": error, "tool": tool},
        )

    foreign = _Foreign()
    emitter = OtelEmitter(
        span_exporters=[foreign],
        log_exporters=[foreign],
        settings=EmitSettings(explain=explain, metrics=False),
    )
    trajectory = make_trajectory()
    variants = [("KeyError", "a"), ("ValueError", "a"), ("KeyError", "b")] * 2
    results = [errored(e, t) for e, t in variants]
    assert emitter.export([(make_verdict(trajectory, results), trajectory)]) is EmitResult.SUCCESS
    emitter.shutdown()
    (logs,) = foreign.logs
    got = [(r.log_record.attributes[n.ERROR_TYPE], r.log_record.attributes) for r in logs]
    assert [g[0] for g in got] == [e for e, _ in variants]
    if explain == "template":
        texts = [a[n.EVALUATION_EXPLANATION] for _, a in got]
        assert ["tool=a" in t for t in texts] == [t == "a" for _, t in variants]


def test_grpc_stub_takes_bytes_after_a_reconnect_and_falls_back_without_internals(
    monkeypatch: pytest.MonkeyPatch, sink: Any
) -> None:
    from otel_oracles.emit._fast_grpc import _take_bytes

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", sink.grpc_endpoint)
    foreign = _Foreign()
    emitter = OtelEmitter(span_exporters=[foreign], settings=EmitSettings(metrics=False))
    trajectory = make_trajectory()
    assert emitter.export([(make_verdict(trajectory), trajectory)]) is EmitResult.SUCCESS
    (spans,) = foreign.spans
    exporter = FastGrpcSpanExporter()
    exporter._initialize_channel_and_stub()  # what the SDK does on UNAVAILABLE
    assert exporter.export(spans) is SpanExportResult.SUCCESS
    exporter.shutdown()
    (received,) = sink.requests("traces")
    assert received.request == encode_spans(spans)
    # Without the SDK internals the stub stays the SDK's, fed a message.
    assert not _take_bytes(object(), "/x", object())
    exporter.bytes_in = False
    assert exporter._translate_data(spans) == encode_spans(spans)
