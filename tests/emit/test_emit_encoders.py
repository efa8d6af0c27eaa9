"""One record model, one encoder per wire format: what the native OTLP protobuf encoder
puts on the wire and what its OTLP/JSON writer puts in the file must equal what the SDK's
own encoders make of the SDK objects the adapter builds from the same records (the objects
an exporter a user supplies receives): the protobuf byte for byte. If an SDK upgrade changes
the encoding, these fail instead of the telemetry silently changing."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_oracles._native import (
    encode_logs_json,
    encode_logs_proto,
    encode_spans_json,
    encode_spans_proto,
)
from otel_oracles.emit import EmitResult, EmitSettings, OtelEmitter
from otel_oracles.emit import _names as n
from otel_oracles.emit._records import Attrs, EventItem, ItemBatch, LogItem, Severity, SpanItem
from otel_oracles.emit._sdk_adapter import sdk_log_records, sdk_spans
from otel_oracles.model.result import OracleResult, Outcome
from tests.emit.conftest import (
    KeepingSink,
    make_results,
    make_trajectory,
    make_verdict,
    reference_otlp_json,
)
from tests.emit.test_emit_results_file import _normalized


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
    keep, spans, logs = KeepingSink(), InMemorySpanExporter(), InMemoryLogRecordExporter()
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
    for _ in range(2):  # the second pass reads the runs' cached bytes
        for batch in span_batches:
            expected = encode_spans(sdk_spans(batch))
            assert encode_spans_proto(batch) == expected.SerializeToString()
            assert _normalized(json.loads(encode_spans_json(batch))) == _normalized(
                json.loads(reference_otlp_json(expected))
            )
        for batch in log_batches:
            expected_logs = encode_logs(sdk_log_records(batch))
            assert encode_logs_proto(batch) == expected_logs.SerializeToString()
            assert _normalized(json.loads(encode_logs_json(batch))) == _normalized(
                json.loads(reference_otlp_json(expected_logs))
            )


def test_records_without_ids_point_at_no_span_on_every_route() -> None:
    keep, logs = KeepingSink(), InMemoryLogRecordExporter()
    emitter = OtelEmitter(sinks=[keep], log_exporters=[logs])
    no_ids = make_trajectory(trace_id=None)
    assert emitter.export([(make_verdict(no_ids), no_ids)]) is EmitResult.SUCCESS
    emitter.shutdown()
    records = logs.get_finished_logs()
    assert records and all(r.log_record.trace_id == 0 for r in records)
    assert all(int(r.log_record.trace_flags) == 0 for r in records)
    (batch,) = keep.batches["logs"]
    text = encode_logs_json(batch).decode()
    assert '"traceId"' not in text and '"flags"' not in text
    request = ExportLogsServiceRequest.FromString(encode_logs_proto(batch))
    wire = [r for rl in request.resource_logs for sl in rl.scope_logs for r in sl.log_records]
    assert wire and all(r.trace_id == b"" and r.flags == 0 for r in wire)


class _Unencodable:
    """No OTLP attribute value: the SDK's encoder logs and skips it, so must ours."""


_VALUES: dict[str, Any] = {
    "none": None,
    "false": False,
    "zero": 0,
    "negative": -(2**63),
    "largest": 2**63 - 1,
    "double": -0.5,
    "empty": "",
    "unicode": 'é☃\x00\n"\\',
    "long": "x" * 300,
    "bytes": b"\x00\xff",
    "ints": [0, 1, 127, 128, 300, 2**40, 2**63 - 1],
    "negatives": [-1, 2],
    "strings": ["", "a", "é☃", "x" * 200],
    "mixed": [1, "a", True, 1.5, None],
    "tuple": ("a", "b"),
    "no items": [],
    "nested": [[1, [2]], {"k": [b"v"]}],
    "mapping": {"a": 1, 2: "b"},
    "many": list(range(40)),
}


def _batches(values: dict[str, Any]) -> tuple[ItemBatch[SpanItem], ItemBatch[LogItem]]:
    """One span (with an event) and one log record carrying ``values`` in a shared run and
    as the record's own values, in a batch with the emitter's resource and scope."""
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope

    from otel_oracles.emit._resource import grader_record

    run = Attrs({f"run.{k}": v for k, v in values.items()})
    own = {f"own.{k}": v for k, v in values.items()}
    resource, scope = grader_record(), InstrumentationScope("s", "1", "https://schema")
    span = SpanItem(
        trace_id=2**128 - 1,
        span_id=1,
        parent_id=2**64 - 1,
        name="é",
        start=1,
        end=2**64 - 1,
        chunks=(run,),
        extra=own,
        events=[EventItem("ev", 3, (run,)), EventItem("", 0, ())],
        status_code=2,
        status_message="bad",
    )
    log = LogItem(4, 5, 6, Severity.WARN, "WARN", "ev", (run,), own)
    return ItemBatch([span], resource, scope), ItemBatch([log], resource, scope)


def test_attribute_values_of_every_kind_are_what_the_sdk_encodes() -> None:
    spans, logs = _batches(_VALUES)
    for _ in range(2):  # the second pass reads the runs' cached bytes
        expected = encode_spans(sdk_spans(spans))
        assert encode_spans_proto(spans) == expected.SerializeToString()
        assert _normalized(json.loads(encode_spans_json(spans))) == _normalized(
            json.loads(reference_otlp_json(expected))
        )
        expected_logs = encode_logs(sdk_log_records(logs))
        assert encode_logs_proto(logs) == expected_logs.SerializeToString()
        assert _normalized(json.loads(encode_logs_json(logs))) == _normalized(
            json.loads(reference_otlp_json(expected_logs))
        )


@pytest.mark.parametrize(
    "bad", [_Unencodable(), 2**63, -(2**63) - 1, [1, _Unencodable()]], ids=repr
)
def test_values_otlp_cannot_hold_are_left_out_with_a_warning(
    bad: Any, caplog: pytest.LogCaptureFixture
) -> None:
    spans, logs = _batches({"good": 1, "bad": bad})
    with caplog.at_level(logging.WARNING, logger="otel_oracles.emit"):
        request = ExportTraceServiceRequest.FromString(encode_spans_proto(spans))
        records = json.loads(encode_logs_json(logs))["resourceLogs"][0]["scopeLogs"][0]
    (span,) = request.resource_spans[0].scope_spans[0].spans
    assert [kv.key for kv in span.attributes] == ["run.good", "own.good"]
    (record,) = records["logRecords"]
    assert [a["key"] for a in record["attributes"]] == ["run.good", "own.good"]
    assert "run.bad" in caplog.text and "own.bad" in caplog.text


def test_values_nested_too_deep_are_left_out_not_a_crash(
    caplog: pytest.LogCaptureFixture,
) -> None:
    deep: list[Any] = []
    deep.append(deep)  # a list that holds itself: endless nesting
    spans, _ = _batches({"deep": deep})
    with caplog.at_level(logging.WARNING, logger="otel_oracles.emit"):
        request = ExportTraceServiceRequest.FromString(encode_spans_proto(spans))
    assert not request.resource_spans[0].scope_spans[0].spans[0].attributes
    assert "run.deep" in caplog.text


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("trace_id", -1, "SpanItem.trace_id: expected a trace id"),
        ("span_id", 2**64, "SpanItem.span_id: expected a span id"),
        ("start", "now", "SpanItem.start: expected nanoseconds"),
        ("name", 3, "SpanItem.name: expected a str"),
    ],
)
def test_a_malformed_record_is_named_in_one_line(field: str, value: Any, message: str) -> None:
    spans, _ = _batches({})
    setattr(spans[0], field, value)
    for encode in (encode_spans_proto, encode_spans_json):
        with pytest.raises(ValueError, match=message):
            encode(spans)


def test_empty_batches() -> None:
    spans, logs = _batches({})
    assert encode_spans_proto(ItemBatch([], spans.resource, spans.scope)) == b""
    assert encode_logs_proto(ItemBatch([], logs.resource, None)) == b""
    assert json.loads(encode_spans_json(ItemBatch([], spans.resource, None))) == {
        "resourceSpans": []
    }
    assert json.loads(encode_logs_json(ItemBatch([], logs.resource, None))) == {"resourceLogs": []}


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


@pytest.mark.parametrize("max_shared", [4096, 100])
@pytest.mark.parametrize("explain", ["template", "full"])
def test_many_checks_each_get_their_own_runs(
    monkeypatch: pytest.MonkeyPatch, explain: str, max_shared: int
) -> None:
    """The checks' shared runs are kept by their objects' addresses and their texts (keys
    meeting in a slot look further): many distinct checks, each met twice, also more than
    are kept at once (the runs cleared as they fill), must each carry the records a new
    emitter makes of it alone."""
    from otel_oracles.emit import _otel

    monkeypatch.setattr(_otel, "_MAX_SHARED", max_shared)
    trajectory = make_trajectory()
    settings = EmitSettings(explain=explain, metrics=False)

    def result(at: int) -> OracleResult:
        outcome = (Outcome.PASS, Outcome.INVARIANT_FAILURE, Outcome.ERROR)[at % 3]
        return OracleResult(
            contract_id="support-answers",
            contract_version=3,
            oracle_type="tool_not_called",
            name=f"check_{at}",
            outcome=outcome,
            passed=outcome is Outcome.PASS,
            message=f"message {at % 7}",
            details={"error.type": "KeyError", "tool": f"t{at % 5}"},
            step_indexes=[at % 4] if at % 2 else [],
        )

    def records(results: list[OracleResult], times: int) -> list[dict[str, Any]]:
        logs = InMemoryLogRecordExporter()
        emitter = OtelEmitter(log_exporters=[logs], settings=settings)
        for _ in range(times):
            verdict = make_verdict(trajectory, results)
            assert emitter.export([(verdict, trajectory)]) is EmitResult.SUCCESS
        emitter.shutdown()
        return [dict(r.log_record.attributes or {}) for r in logs.get_finished_logs()]

    results = [result(at) for at in range(1_200)]
    got = records(results, 2)
    alone = [records([r], 1)[0] for r in results]
    assert got == alone * 2
