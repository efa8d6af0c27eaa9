"""One record model, one encoder per wire format: what the OTLP protobuf encoder puts on
the wire and what the OTLP/JSON writer puts in the file must equal what the SDK's own
encoders make of the SDK objects the adapter builds from the same records (the objects an
exporter a user supplies receives). If an SDK upgrade changes the encoding, these fail
instead of the telemetry silently changing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_oracles.emit import EmitResult, EmitSettings, OtelEmitter, Sink, any_value
from otel_oracles.emit import _names as n
from otel_oracles.emit._otlp_json import log_items_json, otlp_json, span_items_json
from otel_oracles.emit._otlp_proto import Encoder, _list_field
from otel_oracles.emit._records import ItemBatch
from otel_oracles.emit._sdk_adapter import sdk_log_records, sdk_spans
from otel_oracles.model.result import OracleResult, Outcome
from tests.emit.conftest import make_results, make_trajectory, make_verdict
from tests.emit.test_emit_results_file import _normalized


class _Keep(Sink):
    """Keeps every batch it is handed, as the emitter hands it to every sink."""

    name = "keep"

    def __init__(self) -> None:
        self.batches: dict[str, list[ItemBatch[Any]]] = {"traces": [], "logs": []}

    def export(self, signal: Any, batch: ItemBatch[Any]) -> bool:
        self.batches[signal].append(batch)
        return True

    def shutdown(self) -> None:
        pass


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
def test_each_wire_format_says_what_the_sdk_objects_say(
    explain: str, settings: dict[str, bool]
) -> None:
    keep, spans, logs = _Keep(), InMemorySpanExporter(), InMemoryLogRecordExporter()
    emitter = OtelEmitter(
        sinks=[keep],
        span_exporters=[spans],
        log_exporters=[logs],
        settings=EmitSettings(explain=explain, max_export_batch_size=5, **settings),
    )
    assert emitter.export(_pairs() * 2) is EmitResult.SUCCESS
    emitter.shutdown()
    span_batches, log_batches = keep.batches["traces"], keep.batches["logs"]
    assert len(spans.get_finished_spans()) == sum(map(len, span_batches))
    assert len(logs.get_finished_logs()) == sum(map(len, log_batches))
    assert bool(span_batches) == settings.get("grade_span", True)
    assert bool(log_batches) == settings.get("log_events", True)
    encoder = Encoder()
    for _ in range(2):  # the second pass is served from the caches
        for batch in span_batches:
            expected = encode_spans(sdk_spans(batch))
            assert ExportTraceServiceRequest.FromString(encoder.span_items_bytes(batch)) == (
                expected
            )
            assert _normalized(json.loads(span_items_json(batch))) == _normalized(
                json.loads(otlp_json(expected))
            )
        for batch in log_batches:
            expected_logs = encode_logs(sdk_log_records(batch))
            assert ExportLogsServiceRequest.FromString(encoder.log_items_bytes(batch)) == (
                expected_logs
            )
            assert _normalized(json.loads(log_items_json(batch))) == _normalized(
                json.loads(otlp_json(expected_logs))
            )


def test_records_without_ids_point_at_no_span_on_every_route() -> None:
    keep, logs = _Keep(), InMemoryLogRecordExporter()
    emitter = OtelEmitter(sinks=[keep], log_exporters=[logs])
    no_ids = make_trajectory(trace_id=None)
    assert emitter.export([(make_verdict(no_ids), no_ids)]) is EmitResult.SUCCESS
    emitter.shutdown()
    records = logs.get_finished_logs()
    assert records and all(r.log_record.trace_id == 0 for r in records)
    assert all(int(r.log_record.trace_flags) == 0 for r in records)
    (batch,) = keep.batches["logs"]
    text = log_items_json(batch).decode()
    assert '"traceId"' not in text and '"flags"' not in text
    request = ExportLogsServiceRequest.FromString(Encoder().log_items_bytes(batch))
    wire = [r for rl in request.resource_logs for sl in rl.scope_logs for r in sl.log_records]
    assert wire and all(r.trace_id == b"" and r.flags == 0 for r in wire)


@pytest.mark.parametrize(
    "values",
    [[0], [1, 127, 128, 300, 2**40, 2**63 - 1], ["", "a", "é☃", "x" * 200], list(range(40))],
)
def test_direct_list_attributes_are_what_upb_writes(values: list[Any]) -> None:
    tag = b"\x32"
    kv = KeyValue(key="k", value=any_value(values)).SerializeToString()
    expected = tag + bytes([len(kv)]) if len(kv) < 128 else None
    got = _list_field(tag, "k", values)
    assert got is not None
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

    logs = InMemoryLogRecordExporter()
    emitter = OtelEmitter(
        log_exporters=[logs], settings=EmitSettings(explain=explain, metrics=False)
    )
    trajectory = make_trajectory()
    variants = [("KeyError", "a"), ("ValueError", "a"), ("KeyError", "b")] * 2
    results = [errored(e, t) for e, t in variants]
    assert emitter.export([(make_verdict(trajectory, results), trajectory)]) is EmitResult.SUCCESS
    emitter.shutdown()
    got = [r.log_record.attributes for r in logs.get_finished_logs()]
    assert [a[n.ERROR_TYPE] for a in got] == [e for e, _ in variants]
    if explain == "template":
        texts = [a[n.EVALUATION_EXPLANATION] for a in got]
        assert ["tool=a" in t for t in texts] == [t == "a" for _, t in variants]
