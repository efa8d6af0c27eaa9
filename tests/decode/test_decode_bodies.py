"""decode(): one OTLP request body, protobuf or JSON, into span and log records.

Fixtures are real exports (tests/testdata/traces/, copied from the shared corpus): the same
run is stored both as the exporter's raw request bodies and as canonical OTLP/JSON, so the
two decoders must agree record for record.
"""

from __future__ import annotations

import base64
import copy
import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from otel_oracles.decode import DecodedBatch, decode, read_paths
from otel_oracles.errors import InputError
from otel_oracles.model.span import LogRecord, SpanRecord

TRACES = Path(__file__).resolve().parents[1] / "testdata" / "traces"


def span_key(span: SpanRecord) -> tuple[Any, ...]:
    return (
        span.trace_id,
        span.span_id,
        span.parent_span_id,
        span.name,
        int(span.kind),
        span.start_ns,
        span.end_ns,
        int(span.status_code),
        span.status_message,
        dict(span.attributes),
        [(e.name, e.time_ns, dict(e.attributes)) for e in span.events],
        [(lk.trace_id, lk.span_id, dict(lk.attributes)) for lk in span.links],
        dict(span.resource),
        span.scope_name,
        span.scope_version,
    )


def log_key(log: LogRecord) -> tuple[Any, ...]:
    return (
        log.trace_id,
        log.span_id,
        log.event_name,
        log.time_ns,
        dict(log.attributes),
        log.body,
        log.severity_number,
        dict(log.resource),
        log.scope_name,
    )


def span_key_counted(span: SpanRecord) -> tuple[Any, ...]:
    """``span_key`` (the fields the golden records of test_json_rules hold) and OTLP's
    dropped counts of the span, its events and its links."""
    counts = (
        span.dropped_attributes,
        span.dropped_events,
        span.dropped_links,
        [e.dropped_attributes for e in span.events],
        [lk.dropped_attributes for lk in span.links],
    )
    return (*span_key(span), counts)


def log_key_counted(log: LogRecord) -> tuple[Any, ...]:
    """``log_key`` and the record's dropped attribute count."""
    return (*log_key(log), log.dropped_attributes)


def read_all(*paths: Path) -> tuple[list[SpanRecord], list[LogRecord]]:
    problems: list[Any] = []
    spans: list[SpanRecord] = []
    logs: list[LogRecord] = []
    for batch in read_paths([str(p) for p in paths], problems):
        spans.extend(batch.spans)
        logs.extend(batch.logs)
    assert problems == [], f"real fixtures must decode cleanly, got {problems}"
    return spans, logs


SAME_RUN = [
    ("pydantic-ai", "h_coding_agent.raw", "h_coding_agent.otlp.json"),
    ("pydantic-ai", "g_handoff.raw", "g_handoff.otlp.json"),
    ("openai-agents-otel-v2", "g_handoff.raw", "g_handoff.otlp.json"),
    ("openai-v2-latest", "d_forbidden_tool.raw", "d_forbidden_tool.otlp.json"),
    ("openinference-openai", "c_retry_exhausted.raw", "c_retry_exhausted.otlp.jsonl"),
    ("vercel-ai-sdk-otel", "g_handoff.raw", "g_handoff.otlp.json"),
    ("openai-v2", "d_forbidden_tool.raw/1.pb", "d_forbidden_tool.otlp.json"),
    # Koog's spans carry droppedAttributesCount: the counts must agree too.
    ("koog", "a_happy.raw", "a_happy.otlp.json"),
]


@pytest.mark.parametrize(("source", "raw", "canonical"), SAME_RUN)
def test_raw_bodies_and_canonical_json_decode_to_identical_span_records(
    source: str, raw: str, canonical: str
) -> None:
    raw_spans, _ = read_all(TRACES / source / raw)
    json_spans, _ = read_all(TRACES / source / canonical)
    assert raw_spans, "fixture must hold spans"
    by_id = sorted(map(span_key_counted, raw_spans))
    assert by_id == sorted(map(span_key_counted, json_spans)), (
        f"{source}: {raw} and {canonical} must give the same records"
    )


def test_log_records_from_protobuf_and_json_lines_are_identical() -> None:
    _, pb_logs = read_all(TRACES / "openai-v2" / "d_forbidden_tool.raw" / "logs-1.pb")
    _, json_logs = read_all(TRACES / "openai-v2" / "d_forbidden_tool.logs.otlp.jsonl")
    assert len(pb_logs) > 5
    assert sorted(map(log_key_counted, pb_logs), key=repr) == sorted(
        map(log_key_counted, json_logs), key=repr
    )


def test_log_records_carry_event_name_body_and_span_context() -> None:
    _, logs = read_all(TRACES / "openai-v2" / "d_forbidden_tool.logs.otlp.jsonl")
    choice = next(log for log in logs if log.event_name == "gen_ai.choice")
    assert len(choice.trace_id) == 32 and len(choice.span_id) == 16
    assert choice.time_ns > 0, "observedTimeUnixNano stands in when timeUnixNano is absent"
    calls = choice.body["message"]["tool_calls"]
    assert calls[0]["function"]["name"] == "search_docs"


def test_decode_protobuf_body_by_content_type() -> None:
    payload = (TRACES / "pydantic-ai" / "g_handoff.raw" / "1.pb").read_bytes()
    batch = decode(payload, "application/x-protobuf")
    assert isinstance(batch, DecodedBatch)
    assert {s.name for s in batch.spans} >= {"invoke_agent research_agent"}
    assert batch.problems == []


def test_decode_protobuf_logs_body_when_signal_is_logs() -> None:
    payload = (TRACES / "openai-v2" / "d_forbidden_tool.raw" / "logs-1.pb").read_bytes()
    batch = decode(payload, "application/x-protobuf", signal="logs")
    assert batch.spans == [] and len(batch.logs) > 5
    assert {log.event_name for log in batch.logs} >= {"gen_ai.user.message", "gen_ai.choice"}


def test_decode_json_body_ignores_content_type_parameters() -> None:
    payload = (TRACES / "vercel-ai-sdk-otel" / "g_handoff.raw" / "1.json").read_bytes()
    batch = decode(payload, "application/json; charset=utf-8")
    assert len(batch.spans) > 3


def test_unsupported_content_type_is_an_input_error() -> None:
    with pytest.raises(InputError, match="unsupported content type 'text/plain'"):
        decode(b"{}", "text/plain")


def test_truncated_protobuf_body_is_an_input_error_not_a_traceback() -> None:
    payload = (TRACES / "pydantic-ai" / "g_handoff.raw" / "1.pb").read_bytes()
    with pytest.raises(InputError, match="not a valid protobuf ExportTraceServiceRequest"):
        decode(payload[: len(payload) // 2], "application/x-protobuf")


def test_invalid_json_body_names_line_and_column() -> None:
    with pytest.raises(InputError, match=r"invalid JSON at line 2 column \d+"):
        decode(b'{"resourceSpans": [\n  {,}]}', "application/json")


def test_json_object_that_is_not_otlp_is_an_input_error() -> None:
    with pytest.raises(InputError, match="expected a resourceSpans, resourceLogs or"):
        decode(b'{"spans": []}', "application/json")


def _canonical(source: str, name: str) -> dict[str, Any]:
    obj: dict[str, Any] = orjson.loads((TRACES / source / name).read_bytes())
    return obj


def _to_snake(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {re.sub(r"(?<!^)([A-Z])", r"_\1", k).lower(): _to_snake(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_to_snake(v) for v in obj]
    return obj


def test_snake_case_keys_decode_like_camel_case() -> None:
    obj = _canonical("pydantic-ai", "d_forbidden_tool.otlp.json")
    camel = decode(orjson.dumps(obj), "application/json")
    snake = decode(orjson.dumps(_to_snake(obj)), "application/json")
    assert camel.problems == [] and snake.problems == []
    assert [span_key_counted(s) for s in camel.spans] == [span_key_counted(s) for s in snake.spans]


def _spans_of(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return [sp for rs in obj["resourceSpans"] for ss in rs["scopeSpans"] for sp in ss["spans"]]


def test_enum_names_numeric_int64_and_base64_ids_are_tolerated() -> None:
    obj = _canonical("pydantic-ai", "d_forbidden_tool.otlp.json")
    variant = copy.deepcopy(obj)
    names = {1: "SPAN_KIND_INTERNAL", 3: "SPAN_KIND_CLIENT"}
    for sp in _spans_of(variant):
        sp["kind"] = names[sp["kind"]]
        sp["startTimeUnixNano"] = int(sp["startTimeUnixNano"])
        sp["traceId"] = base64.b64encode(bytes.fromhex(sp["traceId"])).decode()
        sp["spanId"] = base64.b64encode(bytes.fromhex(sp["spanId"])).decode()
        if sp.get("status", {}).get("code") == 2:
            sp["status"]["code"] = "STATUS_CODE_ERROR"
    want = decode(orjson.dumps(obj), "application/json")
    got = decode(orjson.dumps(variant), "application/json")
    assert got.problems == []
    assert [span_key_counted(s) for s in got.spans] == [span_key_counted(s) for s in want.spans]


def _one_span_request(**span: Any) -> bytes:
    base = {
        "traceId": "5b8efff798038103d269b633813fc60c",
        "spanId": "eee19b7ec3c1b174",
        "name": "chat",
        "kind": 3,
        "startTimeUnixNano": "1544712660000000000",
        "endTimeUnixNano": "1544712661000000000",
    }
    base.update(span)
    return orjson.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [base]}]}]})


def test_every_anyvalue_variant_converts_to_its_python_value() -> None:
    attributes = [
        {"key": "s", "value": {"stringValue": "x"}},
        {"key": "b", "value": {"boolValue": True}},
        {"key": "i", "value": {"intValue": "9007199254740993"}},
        {"key": "i_num", "value": {"intValue": 7}},
        {"key": "d", "value": {"doubleValue": 0.5}},
        {"key": "nan", "value": {"doubleValue": "NaN"}},
        {"key": "bytes", "value": {"bytesValue": base64.b64encode(b"\x00\xff").decode()}},
        {"key": "empty", "value": {}},
        {
            "key": "nested",
            "value": {
                "arrayValue": {
                    "values": [
                        {"stringValue": "a"},
                        {"kvlistValue": {"values": [{"key": "k", "value": {"intValue": "1"}}]}},
                        {"arrayValue": {}},
                    ]
                }
            },
        },
    ]
    batch = decode(_one_span_request(attributes=attributes), "application/json")
    attrs = batch.spans[0].attributes
    assert attrs["s"] == "x" and attrs["b"] is True
    assert attrs["i"] == 9007199254740993, "64-bit ints must not lose precision"
    assert attrs["i_num"] == 7 and attrs["d"] == 0.5 and attrs["nan"] != attrs["nan"]
    assert attrs["bytes"] == b"\x00\xff" and attrs["empty"] is None
    assert attrs["nested"] == ["a", {"k": 1}, []]
    assert batch.problems == []


def test_wrong_typed_attribute_reads_as_null_and_is_reported_with_its_key() -> None:
    attributes = [
        {"key": "good", "value": {"stringValue": "ok"}},
        {"key": "bad", "value": {"intValue": "twelve"}},
    ]
    batch = decode(_one_span_request(attributes=attributes), "application/json")
    attrs = batch.spans[0].attributes
    assert attrs["good"] == "ok"
    assert attrs["bad"] is None
    assert attrs["bad"] is None  # reported once, not on every read
    assert batch.problems == [
        "resourceSpans[0].scopeSpans[0].spans[0]: attribute 'bad': intValue must be a decimal "
        "integer, got 'twelve'; read as null"
    ]


def test_unknown_span_kind_keeps_the_span_and_reports_the_field() -> None:
    batch = decode(_one_span_request(kind="SPAN_KIND_TELEPATHIC"), "application/json")
    assert len(batch.spans) == 1 and batch.spans[0].kind == 0
    assert batch.problems == [
        "resourceSpans[0].scopeSpans[0].spans[0].kind: unknown value 'SPAN_KIND_TELEPATHIC'; "
        "read as SPAN_KIND_UNSPECIFIED"
    ]


@pytest.mark.parametrize(
    ("trace_id", "expected"),
    [
        ("xyz", "traceId must be 32 hex digits (16 bytes), got 'xyz'"),
        ("0" * 32, "traceId is all zeros"),
        (None, "traceId is missing"),
    ],
)
def test_span_with_unusable_trace_id_is_rejected_with_a_reason(
    trace_id: str | None, expected: str
) -> None:
    batch = decode(_one_span_request(traceId=trace_id), "application/json")
    assert batch.spans == []
    assert len(batch.problems) == 1
    assert batch.problems[0].startswith("resourceSpans[0].scopeSpans[0].spans[0]: ")
    assert expected in batch.problems[0] and batch.problems[0].endswith("span rejected")


def test_uppercase_hex_ids_are_normalised_to_lowercase() -> None:
    batch = decode(
        _one_span_request(traceId="5B8EFFF798038103D269B633813FC60C"), "application/json"
    )
    assert batch.spans[0].trace_id == "5b8efff798038103d269b633813fc60c"


def test_metrics_requests_are_counted_as_ignored() -> None:
    body = {
        "resourceMetrics": [
            {"scopeMetrics": [{"metrics": [{"name": "a"}, {"name": "b"}]}]},
        ]
    }
    batch = decode(orjson.dumps(body), "application/json")
    assert batch.ignored == 2 and batch.spans == [] and batch.logs == []


def test_attribute_mappings_pickle_as_plain_dicts() -> None:
    import pickle

    payload = (TRACES / "pydantic-ai" / "g_handoff.raw" / "1.pb").read_bytes()
    span = decode(payload, "application/x-protobuf").spans[0]
    clone = pickle.loads(pickle.dumps(span))
    assert clone.attributes == dict(span.attributes)
    assert type(clone.attributes) is dict


def _modified_pb(change: Any) -> bytes:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest()
    request.ParseFromString((TRACES / "pydantic-ai" / "g_handoff.raw" / "1.pb").read_bytes())
    change(request.resource_spans[0].scope_spans[0].spans)
    return request.SerializeToString()


def test_protobuf_unknown_span_kind_keeps_the_span_and_reports_it() -> None:
    def change(spans: Any) -> None:
        spans[1].kind = 42

    batch = decode(_modified_pb(change), "application/x-protobuf")
    assert batch.spans[1].kind == 0
    assert batch.problems == [
        "resourceSpans[0].scopeSpans[0].spans[1].kind: unknown SpanKind 42; "
        "read as SPAN_KIND_UNSPECIFIED"
    ]


def test_protobuf_span_with_short_trace_id_is_rejected_and_the_rest_kept() -> None:
    def change(spans: Any) -> None:
        spans[0].trace_id = b"\x01\x02"

    good = decode(_modified_pb(lambda spans: None), "application/x-protobuf")
    batch = decode(_modified_pb(change), "application/x-protobuf")
    assert len(batch.spans) == len(good.spans) - 1
    assert len(batch.problems) == 1
    assert "traceId has 2 bytes, expected 16; span rejected" in batch.problems[0]


def test_protobuf_bodies_decode_the_same_whatever_protobuf_backend_is_installed() -> None:
    """The native core reads protobuf bodies: the pure-Python protobuf backend (250x slower
    than upb when it decoded them) no longer matters, so there is nothing to warn about."""
    import os
    import subprocess
    import sys

    body = str(TRACES / "pydantic-ai" / "g_handoff.raw" / "1.pb")
    code = (
        "from otel_oracles.decode import decode; import pathlib;"
        f"p = pathlib.Path({body!r}).read_bytes();"
        "b = decode(p, 'application/x-protobuf'); decode(p, 'application/x-protobuf');"
        "print(len(b.spans))"
    )
    env = {**os.environ, "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION": "python"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == len(decode(Path(body).read_bytes(), "application/x-protobuf").spans)
    assert int(done.stdout) > 3
    assert done.stderr == ""


def test_enum_names_decode_to_their_numbers() -> None:
    body = _one_span_request(
        kind="SPAN_KIND_CLIENT",
        status={"code": "STATUS_CODE_ERROR", "message": "boom"},
        attributes=[{"key": "k", "value": {"stringValue": "v"}}],
    )
    span = decode(body, "application/json").spans[0]
    assert (span.kind, span.status_code, span.status_message) == (3, 2, "boom")
    assert span.attributes == {"k": "v"}


@pytest.mark.parametrize(("source", "raw", "canonical"), SAME_RUN)
def test_records_survive_pickling_unchanged(source: str, raw: str, canonical: str) -> None:
    """Full records pickle with their attribute dicts (serve's workers get WireSpans
    instead, tested below); protobuf and JSON records arrive identical."""
    import pickle

    for path in (TRACES / source / raw, TRACES / source / canonical):
        spans, logs = read_all(path)
        payload = pickle.dumps((spans, logs), protocol=pickle.HIGHEST_PROTOCOL)
        back_spans, back_logs = pickle.loads(payload)
        assert [span_key_counted(s) for s in back_spans] == [span_key_counted(s) for s in spans], (
            path
        )
        assert [log_key_counted(r) for r in back_logs] == [log_key_counted(r) for r in logs], path


def test_log_records_decoded_for_transfer_become_the_same_records_elsewhere() -> None:
    from otel_oracles.decode import WireLog
    from tests.support.transfer_reference import handed_over

    pb = (TRACES / "openai-v2" / "d_forbidden_tool.raw" / "logs-1.pb").read_bytes()
    lines = (TRACES / "openai-v2" / "d_forbidden_tool.logs.otlp.jsonl").read_bytes()
    bodies = [(pb, "application/x-protobuf")]
    bodies += [(line, "application/json") for line in lines.splitlines() if line.strip()]
    checked = 0
    for payload, content_type in bodies:
        full = decode(payload, content_type, signal="logs").logs
        wire = decode(payload, content_type, signal="logs", for_transfer=True).logs
        assert all(type(r) is WireLog for r in wire)
        assert [(r.trace_id, r.span_id, r.time_ns) for r in wire] == [
            (r.trace_id, r.span_id, r.time_ns) for r in full
        ]
        _, back = handed_over([], wire)
        assert [log_key_counted(r) for r in back] == [log_key_counted(r) for r in full], (
            content_type
        )
        checked += len(full)
    assert checked > 10


def test_spans_decoded_for_transfer_become_the_same_records_elsewhere() -> None:
    """serve's receiving process decodes spans as WireSpans (ids, end time, body position);
    handed to a worker they are exactly the records a full decode makes, protobuf and
    OTLP/JSON."""
    from otel_oracles.decode import WireSpan
    from tests.support.transfer_reference import handed_over, spans_for_transfer

    checked = kept = 0
    for source, raw, canonical in SAME_RUN:
        path = TRACES / source / raw
        bodies = [(p.read_bytes(), "application/x-protobuf")
                  for p in (sorted(path.rglob("*.pb")) if path.is_dir() else [path])]  # fmt: skip
        text = (TRACES / source / canonical).read_bytes()
        lines = text.splitlines() if canonical.endswith(".jsonl") else [text]
        bodies += [(line, "application/json") for line in lines if line.strip()]
        for payload, content_type in bodies:
            full = decode(payload, content_type).spans
            wire = decode(payload, content_type, for_transfer=True).spans
            assert all(type(s) is WireSpan for s in wire)
            assert [(s.trace_id, s.span_id, s.parent_span_id, s.end_ns) for s in wire] == [
                (s.trace_id, s.span_id, s.parent_span_id, s.end_ns) for s in full
            ]
            # What assembly and joining read besides, though a protobuf body's attributes
            # were only checked, not built (``decode_proto(for_transfer=True)``).
            facts = [
                (s.resource, s.scope_name, s.start_ns, s.links, dict(s.attributes), s.flags)
                for s in wire
            ]
            if wire:
                assert facts == [
                    (s.resource, s.scope_name, s.start_ns, s.links, dict(s.attributes), s.flags)
                    for s in spans_for_transfer(full, wire[0].body)
                ], source
            kept += sum(
                bool(resource) + bool(attributes) for resource, _, _, _, attributes, _ in facts
            )
            back, _ = handed_over(wire)
            assert [span_key_counted(s) for s in back] == [span_key_counted(s) for s in full], (
                source
            )
            checked += len(full)
            logs = decode(payload, content_type).logs
            wire_logs = decode(payload, content_type, for_transfer=True).logs
            _, back_logs = handed_over([], wire_logs)
            assert [log_key_counted(r) for r in back_logs] == [log_key_counted(r) for r in logs], (
                source
            )
    assert checked > 60, "the fixtures hold real request bodies, protobuf and JSON"
    assert kept > checked, "service names and session ids among them"


def test_unreadable_log_scopes_and_resources_are_reported_with_their_path() -> None:
    body = {
        "resourceLogs": [
            "not an object",
            {"scopeLogs": ["not an object", {"logRecords": {"a": 1}}]},
            {"resource": {"attributes": 5}, "scopeLogs": []},
        ]
    }
    problems = decode(orjson.dumps(body), "application/json").problems
    assert problems[0].startswith("resourceLogs[0]: expected an object")
    assert problems[1].startswith("resourceLogs[1].scopeLogs[0]: expected an object")
    assert problems[2].startswith("resourceLogs[1].scopeLogs[1].logRecords must be a list")
    assert problems[3].startswith("resourceLogs[2].resource.attributes must be a list")
    assert problems[3].endswith("; resource skipped")
