"""The direct protobuf path: when every sink is an ``OtlpSink``, the core writes each
verdict's records straight into the pending requests (``ProtoRequest``) instead of building
a ``SpanItem``/``LogItem`` per record and encoding those. Nothing a receiver sees may
change: the requests must be, request by request and byte for byte, what the item path
sends (the item path's encoder is held to the SDK's own encoders in
``test_emit_encoders``). Only the clock differs between two runs, so the time fields are
cleared before comparing; the grade spans' ids come from one seeded sequence in both."""

from __future__ import annotations

import random
from typing import Any

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from otel_oracles._native import ProtoRequest
from otel_oracles.emit import EmitResult, EmitSettings, OtelEmitter
from otel_oracles.emit._build import otlp_destinations
from otel_oracles.emit._sinks import Sink
from tests.emit.conftest import KeepingSink
from tests.emit.test_emit_encoders import _pairs
from tests.support.otlp_sink import OtlpSink


def _without_clock(signal: str, body: bytes) -> bytes:
    """``body`` with its time stamps cleared (the only fields two runs make differently)."""
    if signal == "logs":
        logs = ExportLogsServiceRequest.FromString(body)
        for rl in logs.resource_logs:
            for sl in rl.scope_logs:
                for r in sl.log_records:
                    assert r.time_unix_nano and r.time_unix_nano == r.observed_time_unix_nano
                    r.time_unix_nano = r.observed_time_unix_nano = 0
        return logs.SerializeToString()
    spans = ExportTraceServiceRequest.FromString(body)
    for rs in spans.resource_spans:
        for ss in rs.scope_spans:
            for s in ss.spans:
                assert s.start_time_unix_nano and s.end_time_unix_nano
                s.end_time_unix_nano -= s.start_time_unix_nano  # keeps the duration
                s.start_time_unix_nano = 0
                for e in s.events:
                    e.time_unix_nano = 0
    return spans.SerializeToString()


def _sent(
    monkeypatch: pytest.MonkeyPatch, settings: EmitSettings, pairs: list[Any], item_path: bool
) -> tuple[dict[str, list[bytes]], bool]:
    """The requests one emitter sent (clocks cleared) and whether it wrote them directly."""
    monkeypatch.setattr(random.SystemRandom, "getrandbits", lambda self, k: 0x1234567)
    with OtlpSink() as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.http_endpoint)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
        otlp, _, _ = otlp_destinations()
        sinks: list[Sink] = [otlp, KeepingSink()] if item_path else [otlp]
        emitter = OtelEmitter(sinks=sinks, settings=settings)
        direct = isinstance(emitter._pending["logs"], ProtoRequest)
        assert emitter.export(pairs) is EmitResult.SUCCESS
        assert emitter.export(pairs[:1]) is EmitResult.SUCCESS  # the kept runs, reused
        emitter.shutdown()
        sent = {
            signal: [_without_clock(signal, r.body) for r in receiver.requests(signal)]
            for signal in ("traces", "logs")
        }
    return sent, direct


@pytest.mark.parametrize("explain", ["template", "full"])
@pytest.mark.parametrize(
    "forms",
    [{}, {"span_events": False}, {"grade_span": False}, {"log_events": False}],
    ids=["all", "no-span-events", "no-grade-span", "no-logs"],
)
def test_the_direct_requests_are_the_item_paths_bytes(
    monkeypatch: pytest.MonkeyPatch, explain: str, forms: dict[str, bool]
) -> None:
    settings = EmitSettings(explain=explain, max_export_batch_size=5, metrics=False, **forms)
    pairs = _pairs() * 3
    direct, wrote_directly = _sent(monkeypatch, settings, pairs, item_path=False)
    items, wrote_items_directly = _sent(monkeypatch, settings, pairs, item_path=True)
    assert wrote_directly and not wrote_items_directly
    assert bool(direct["traces"]) == forms.get("grade_span", True)
    assert bool(direct["logs"]) == forms.get("log_events", True)
    for signal in ("traces", "logs"):
        assert len(direct[signal]) == len(items[signal]), signal
        for at, (got, want) in enumerate(zip(direct[signal], items[signal], strict=True)):
            assert got == want, f"{signal} request {at} differs"


def test_a_request_is_taken_once_and_starts_anew() -> None:
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope

    from otel_oracles.emit._resource import grader_resource

    request = ProtoRequest(4)
    assert len(request) == 0
    assert request.take(grader_resource(), InstrumentationScope("s", "1")) == b""


@pytest.mark.parametrize("padding", [0, 4096], ids=["envelope-in-room", "envelope-past-room"])
def test_a_taken_request_is_a_read_only_view_of_the_encoders_bytes(
    monkeypatch: pytest.MonkeyPatch, padding: int
) -> None:
    """``take`` hands out the writer's own buffer, the envelope written into the room kept
    before the records (1 KiB), the buffer grown past the records expected; a resource too
    large for the room (``padding``) takes the copying path instead. Either way the bytes
    are what the encoder makes of the same records (the clock aside: the two builds run at
    different times), and the view cannot be written through."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope

    from otel_oracles._native import encode_logs_proto, encode_spans_proto
    from otel_oracles.emit._records import ItemBatch
    from otel_oracles.emit._resource import grader_resource

    monkeypatch.setattr(random.SystemRandom, "getrandbits", lambda self, k: 0x1234567)
    resource = grader_resource().merge(Resource({"padding": "p" * padding}))
    scope = InstrumentationScope("otel-oracles", "1", "https://scope.example")
    pairs = _pairs()
    spans, logs = ProtoRequest(2), ProtoRequest(2)
    span_items: list[Any] = []
    log_items: list[Any] = []
    for into in ((spans, logs), (span_items, log_items)):  # an emitter each: the same span ids
        emitter = OtelEmitter(sinks=[KeepingSink()], settings=EmitSettings(metrics=False))
        assert emitter._builder.build(pairs, 0, *into, 10_000) == len(pairs)
    for signal, pending, items, encode in (
        ("traces", spans, span_items, encode_spans_proto),
        ("logs", logs, log_items, encode_logs_proto),
    ):
        assert len(pending) == len(items) > 2  # past the expected count: the buffer grew
        view = pending.take(resource, scope)
        want = encode(ItemBatch(items, resource, scope))
        assert len(view) == len(want) and view.readonly and view.format == "B"
        assert _without_clock(signal, view.tobytes()) == _without_clock(signal, want)
        with pytest.raises(TypeError):
            view[0] = 0
        assert bytes(view.obj) == view.tobytes()  # a view of the request's own buffer
        assert len(pending) == 0


def _rekeyed(model: Any, **values: Any) -> Any:
    """A copy of ``model`` whose instance dict holds its fields (``values`` replacing some) in
    reverse order, each under a ``str`` of its own: equal to the field's name, not the
    interned name itself that keys the dict of a model filled by the core or validated."""
    fields = {}
    for name, value in reversed(vars(model).items()):
        key = "".join([*name])
        assert key == name and key is not name
        fields[key] = values.get(name, value)
    copy = model.model_copy()
    object.__setattr__(copy, "__dict__", fields)
    return copy


def test_fields_held_under_keys_of_their_own_are_read_as_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The core reads a verdict's, its counts' and each result's fields in one walk of the
    instance dict, matching the keys by identity with the interned names; a dict keyed
    otherwise (and in another order) must give the same records, its fields read by name."""
    settings = EmitSettings(max_export_batch_size=5, metrics=False)
    pairs = _pairs()
    rekeyed = [
        (
            _rekeyed(
                verdict,
                results=[_rekeyed(result) for result in verdict.results],
                counts=_rekeyed(verdict.counts),
            ),
            trajectory,
        )
        for verdict, trajectory in pairs
    ]
    assert all(
        verdict.results and next(iter(vars(verdict.results[0]))) == "duration_ns"
        for verdict, _ in rekeyed
    )
    want, _ = _sent(monkeypatch, settings, pairs, item_path=False)
    got, direct = _sent(monkeypatch, settings, rekeyed, item_path=False)
    assert direct and want["traces"] and want["logs"]
    assert got == want
