"""The core's ``Batch``: counts and records of a decoded body, empty ones included."""

from __future__ import annotations

import dataclasses
import gc
import json
import math
import random
import re
import sys
import threading
import time
from array import array
from pathlib import Path
from typing import Any

import pytest

from otel_oracles import _native
from otel_oracles.decode import RequestBody, WireSpan
from otel_oracles.model.span import EMPTY, NO_ITEMS, EventRecord, LinkRecord, LogRecord, SpanRecord
from tests.support.transfer_reference import ExpectedWireSpan, spans_for_transfer


def test_an_empty_batch_has_no_records_and_nothing_wrong() -> None:
    batch = _native.Batch()
    assert batch.records() == ([], [])
    assert (batch.span_count, batch.log_count) == (0, 0)
    assert (batch.ignored, batch.rejected, batch.problems, batch.problems_omitted) == (0, 0, [], 0)
    assert repr(batch) == "Batch(spans=0, logs=0, ignored=0, rejected=0, problems=0)"


TRACES = Path(__file__).resolve().parents[1] / "testdata" / "traces"


def test_records_of_a_real_body_are_model_records_with_shared_empties() -> None:
    body = (TRACES / "pydantic-ai" / "g_handoff.raw" / "1.pb").read_bytes()
    batch, plausible = _native.decode_proto(body, "traces")
    spans, logs = batch.records()
    assert plausible and logs == [] and len(spans) == batch.span_count > 3
    assert all(type(s) is SpanRecord for s in spans)
    assert all(re.fullmatch("[0-9a-f]{32}", s.trace_id) for s in spans)
    assert all(re.fullmatch("[0-9a-f]{16}", s.span_id) for s in spans)
    assert all(type(s.attributes) is dict or s.attributes is EMPTY for s in spans)
    assert all(s.events is NO_ITEMS for s in spans if not s.events)
    assert len({id(s.resource) for s in spans}) == 1, "one dict per resource"
    assert spans[0].resource["service.name"]
    again, _ = batch.records()
    assert [s.span_id for s in again] == [s.span_id for s in spans]
    assert again[0] is not spans[0], "each call builds new records"


def _at(
    builder: _native.RecordBuilder, batch: _native.Batch, positions: list[int], logs: bool = False
) -> list[Any]:
    """The records at ``positions`` of a whole body's ``batch``, named as a worker's
    message names them (``RecordBuilder.place``, slot 0)."""
    refs = (array("I", [n for at in positions for n in (0, at)]).tobytes(), [])
    spans, built_logs = builder.place(
        [batch], [None], [] if logs else [refs], [refs] if logs else []
    )
    return built_logs[0] if logs else spans[0]


def test_a_record_builder_builds_the_records_at_the_positions_asked_in_that_order() -> None:
    """What a ``serve`` grading worker builds of a body: its own traces' records only, equal
    to those ``records()`` builds of the whole body, and sharing resources across calls."""
    body = (TRACES / "pydantic-ai" / "g_handoff.raw" / "1.pb").read_bytes()
    batch, _ = _native.decode_proto(body, "traces")
    every, _ = batch.records()
    builder = _native.RecordBuilder()
    picked = _at(builder, batch, [3, 0, 3])
    assert picked == [every[3], every[0], every[3]]
    assert picked[0] is not picked[2], "each position asked gets its own record"
    assert _at(builder, batch, [1])[0].resource is picked[0].resource, "shared across calls"
    assert _at(builder, batch, []) == []
    with pytest.raises(IndexError, match=f"record {batch.span_count} of a batch of"):
        _at(builder, batch, [0, batch.span_count])
    logs_body = TRACES / "openai-java" / "m_excess_calls.nocontent.raw" / "logs-4.pb"
    logs_batch, _ = _native.decode_proto(logs_body.read_bytes(), "logs")
    _, every_log = logs_batch.records()
    assert every_log, "the fixture holds log records"
    last = len(every_log) - 1
    assert _at(builder, logs_batch, [last, 0], logs=True) == [every_log[last], every_log[0]]
    with pytest.raises(IndexError):
        _at(builder, batch, [0], logs=True)  # a traces body has no log records


def test_a_message_s_references_become_the_records_they_name() -> None:
    """``RecordBuilder.place`` (what a ``serve`` grading worker builds of its message): each
    (slot, position) pair names the record at that position of its body, found in the
    body's part by the sorted positions it was cut to (or directly in a whole body); the
    ``0xFFFFFFFF`` slot names a record sent as itself; a slot with no part, a position not
    in the part and a torn pair are refused."""
    body = (TRACES / "pydantic-ai" / "g_handoff.raw" / "1.pb").read_bytes()
    batch, _ = _native.decode_proto(body, "traces")
    every, _ = batch.records()
    cut, _ = _native.decode_proto(_native.select_proto(body, [1, 3]), "traces")

    def refs(*pairs: int) -> bytes:
        return array("I", pairs).tobytes()

    builder = _native.RecordBuilder()
    batches = [cut, batch, None]
    orders = [refs(1, 3), None, None]
    sent_whole = every[2]
    spans, logs = builder.place(
        batches,
        orders,
        [(refs(0, 3, 0xFFFF_FFFF, 0, 1, 0, 0, 1), [sent_whole]), (b"", [])],
        [(b"", [])],
    )
    assert spans == [[every[3], sent_whole, every[0], every[1]], []]
    assert spans[0][1] is sent_whole
    assert logs == [[]]
    with pytest.raises(IndexError, match="not sent"):
        builder.place(batches, orders, [(refs(2, 0), [])], [])
    with pytest.raises(IndexError, match="position 2 is not in its body's part"):
        builder.place(batches, orders, [(refs(0, 2), [])], [])
    with pytest.raises(IndexError, match="a batch of"):
        builder.place(batches, orders, [], [(refs(1, 0), [])])  # a traces body has no logs
    with pytest.raises(ValueError, match="pairs"):
        builder.place(batches, orders, [(refs(0, 1)[:6], [])], [])


def test_a_body_cut_to_some_records_decodes_to_exactly_those_records() -> None:
    """What a ``serve`` grading worker is sent of a body (``select_proto``): the records at
    the positions asked, in position order, each equal to the record the whole body gives
    there (resource and scope included), in fewer bytes; spans and log records alike."""
    body = (TRACES / "pydantic-ai" / "g_handoff.raw" / "1.pb").read_bytes()
    batch, _ = _native.decode_proto(body, "traces")
    every, _ = batch.records()
    assert batch.rejected == 0 and len(every) > 4
    last = len(every) - 1
    cut = _native.select_proto(body, [last, 1, 3, 1])
    assert len(cut) < len(body)
    part, plausible = _native.decode_proto(cut, "traces")
    assert plausible and part.rejected == 0
    assert part.records()[0] == [every[1], every[3], every[last]]
    whole, _ = _native.decode_proto(_native.select_proto(body, list(range(len(every)))), "traces")
    assert whole.records()[0] == every
    assert _native.select_proto(body, []) == b""
    with pytest.raises(IndexError, match=f"record {len(every)} is past the body's last record"):
        _native.select_proto(body, [0, len(every)])
    with pytest.raises(ValueError, match="not a protobuf request body"):
        _native.select_proto(b"\x0a\xff", [0])
    logs_body = (TRACES / "openai-java" / "m_excess_calls.nocontent.raw" / "logs-4.pb").read_bytes()
    logs_batch, _ = _native.decode_proto(logs_body, "logs")
    _, every_log = logs_batch.records()
    cut_logs, _ = _native.decode_proto(
        _native.select_proto(logs_body, [len(every_log) - 1]), "logs"
    )
    assert cut_logs.records()[1] == [every_log[-1]]


_SPAN_WITH_ALL = json.dumps(
    {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "svc"}}]
                },
                "scopeSpans": [
                    {
                        "scope": {"name": "lib", "version": "1.2"},
                        "spans": [
                            {
                                "traceId": "0af7651916cd43dd8448eb211c80319c",
                                "spanId": "b7ad6b7169203331",
                                "parentSpanId": "00f067aa0ba902b7",
                                "name": "chat m",
                                "kind": 3,
                                "startTimeUnixNano": "10",
                                "endTimeUnixNano": "20",
                                "status": {"code": 2, "message": "boom"},
                                "flags": 769,
                                "droppedAttributesCount": 1,
                                "droppedEventsCount": 2,
                                "droppedLinksCount": 3,
                                "attributes": [
                                    {"key": "a", "value": {"intValue": "7"}},
                                    {
                                        "key": "b",
                                        "value": {"arrayValue": {"values": [{"boolValue": True}]}},
                                    },
                                ],
                                "events": [
                                    {
                                        "name": "ev",
                                        "timeUnixNano": "15",
                                        "droppedAttributesCount": 4,
                                        "attributes": [{"key": "c", "value": {"doubleValue": 1.5}}],
                                    }
                                ],
                                "links": [
                                    {
                                        "traceId": "0af7651916cd43dd8448eb211c80319d",
                                        "spanId": "b7ad6b7169203332",
                                        "droppedAttributesCount": 5,
                                        "attributes": [{"key": "d", "value": {"stringValue": "x"}}],
                                    }
                                ],
                            }
                        ],
                    }
                ],
            }
        ]
    }
).encode()

_LOG = json.dumps(
    {
        "resourceLogs": [
            {
                "scopeLogs": [
                    {
                        "scope": {"name": "lib"},
                        "logRecords": [
                            {
                                "traceId": "0af7651916cd43dd8448eb211c80319c",
                                "spanId": "b7ad6b7169203331",
                                "eventName": "gen_ai.choice",
                                "timeUnixNano": "16",
                                "severityNumber": 9,
                                "droppedAttributesCount": 6,
                                "body": {"stringValue": "hi"},
                                "attributes": [{"key": "e", "value": {"intValue": "1"}}],
                            }
                        ],
                    }
                ]
            }
        ]
    }
).encode()


def _called_again(record: Any) -> Any:
    """The record its class's own constructor makes of the record's fields."""
    return type(record)(*(getattr(record, f.name) for f in dataclasses.fields(record)))


def test_records_are_what_their_classes_make_of_every_field() -> None:
    """Records are made in their memory, not by calling their classes: each has every
    field set (a slot left empty would raise here) to what the decoders read, and equals
    what its class makes of those fields."""
    (spans, _), (_, logs) = (
        _native.decode_json(_SPAN_WITH_ALL).records(),
        _native.decode_json(_LOG).records(),
    )
    [span], [log] = spans, logs
    [event], [link] = span.events, span.links
    assert (type(span), type(event), type(link), type(log)) == (
        SpanRecord,
        EventRecord,
        LinkRecord,
        LogRecord,
    )
    for record in (span, event, link, log):
        assert record == _called_again(record)
    assert (span.parent_span_id, span.kind, span.start_ns, span.end_ns) == (
        "00f067aa0ba902b7",
        3,
        10,
        20,
    )
    assert (span.status_code, span.status_message, span.flags) == (2, "boom", 769)
    assert (span.dropped_attributes, span.dropped_events, span.dropped_links) == (1, 2, 3)
    assert span.attributes == {"a": 7, "b": [True]}
    assert (span.resource, span.scope_name, span.scope_version) == (
        {"service.name": "svc"},
        "lib",
        "1.2",
    )
    assert (event.name, event.time_ns, event.attributes, event.dropped_attributes) == (
        "ev",
        15,
        {"c": 1.5},
        4,
    )
    assert (event.body, event.from_log) == (None, False)
    assert (link.trace_id, link.span_id, link.attributes) == (
        "0af7651916cd43dd8448eb211c80319d",
        "b7ad6b7169203332",
        {"d": "x"},
    )
    assert link.dropped_attributes == 5
    assert (log.event_name, log.time_ns, log.body, log.severity_number) == (
        "gen_ai.choice",
        16,
        "hi",
        9,
    )
    assert (log.attributes, log.resource, log.scope_name, log.dropped_attributes) == (
        {"e": 1},
        EMPTY,
        "lib",
        6,
    )


def _kv(key: str, value: dict[str, Any]) -> dict[str, Any]:
    return {"key": key, "value": value}


def _kv_list(*pairs: tuple[str, str]) -> dict[str, Any]:
    return {"kvlistValue": {"values": [_kv(k, {"stringValue": v}) for k, v in pairs]}}


# Attribute lists of one body: the same keys in the same order (a duplicate among them)
# with other values, then the same keys in another order and fewer of them.
_SAME_KEYS: list[list[dict[str, Any]]] = [
    [
        _kv("a", {"intValue": "1"}),
        _kv("b", {"arrayValue": {"values": [{"intValue": "1"}, {"stringValue": "x"}]}}),
        _kv("a", {"intValue": "3"}),
        _kv("c", _kv_list(("x", "y"), ("w", "v"))),
    ],
    [
        _kv("a", {"stringValue": "s"}),
        _kv("b", {"doubleValue": 2.5}),
        _kv("a", {}),
        _kv("c", _kv_list(("x", "z"), ("w", "u"))),
    ],
    [_kv("c", {"boolValue": True}), _kv("a", {"intValue": "2"})],
    [_kv("a", {"stringValue": "t"}), _kv("c", {"intValue": "4"})],
]


def _body_of_attribute_lists() -> bytes:
    spans = [
        {
            "traceId": "0af7651916cd43dd8448eb211c80319c",
            "spanId": f"b7ad6b716920333{n}",
            "name": "s",
            "startTimeUnixNano": "10",
            "endTimeUnixNano": "20",
            "attributes": attributes,
            "events": [{"name": "e", "timeUnixNano": "15", "attributes": attributes}],
        }
        for n, attributes in enumerate(_SAME_KEYS)
    ]
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode()


def _python_value(value: dict[str, Any]) -> Any:
    """What the records carry of a JSON ``AnyValue`` (the kinds ``_SAME_KEYS`` and
    ``_VALUE_POOL`` use)."""
    if not value:
        return None
    [(kind, inner)] = value.items()
    if kind == "intValue":
        return int(inner)
    if kind == "arrayValue":
        return [_python_value(v) for v in inner["values"]]
    if kind == "kvlistValue":
        return {kv["key"]: _python_value(kv["value"]) for kv in inner["values"]}
    return inner


def test_attribute_dicts_of_the_same_keys_are_filled_as_from_the_wire_list() -> None:
    """Attribute dicts of the same keys are copies of one template of those keys with the
    values put in: each is the dict of its wire list (key order, the last of a duplicate
    key, nested lists), tracked by the garbage collector as that dict is, and its own
    object, whether its keys were decoded from the body of the last list (found by their
    addresses) or from another body (found by their content)."""
    expected = [dict((kv["key"], _python_value(kv["value"])) for kv in a) for a in _SAME_KEYS]
    builder = _native.RecordBuilder()
    for _ in range(2):  # the second body's keys are other texts, equal to the first's
        batch = _native.decode_json(_body_of_attribute_lists())
        spans = _at(builder, batch, [0, 1, 2, 3, 1, 0])
        dicts = [span.attributes for span in spans]
        assert [list(d.items()) for d in dicts] == [
            list(expected[n].items()) for n in (0, 1, 2, 3, 1, 0)
        ]
        assert [gc.is_tracked(d) for d in dicts] == [
            gc.is_tracked(expected[n]) for n in (0, 1, 2, 3, 1, 0)
        ]
        assert [span.events[0].attributes for span in spans] == dicts
        assert len({id(d) for d in dicts} | {id(s.events[0].attributes) for s in spans}) == 12
        dicts[0]["added"] = True  # what a record's reader may do to its own dict
        dicts[0]["c"]["added"] = True
    assert _at(builder, batch, [0])[0].attributes == expected[0]


# Values one key may take from span to span, as JSON `AnyValue`s: kinds whose Python values
# are equal across types (`1`, `1.0`, `True`, `"1"`), floats told apart only by their sign
# or their bits, empty values, and a string over the length a template holds.
_VALUE_POOL: list[dict[str, Any]] = [
    {"intValue": "1"},
    {"intValue": "1000"},
    {"doubleValue": 1.0},
    {"doubleValue": 0.0},
    {"doubleValue": -0.0},
    {"boolValue": True},
    {"boolValue": False},
    {"stringValue": "1"},
    {"stringValue": "gpt-4o"},
    {"stringValue": "x" * 65},
    {},
    {"arrayValue": {"values": [{"intValue": "1"}]}},
]


def _strictly(d: dict[str, Any]) -> list[tuple[str, type, str]]:
    """A dict's items with each value's exact type and ``repr`` (``-0.0`` apart from
    ``0.0``, ``True`` from ``1``)."""
    return [(k, type(v), repr(v)) for k, v in d.items()]


def test_values_a_template_holds_are_the_values_of_each_list() -> None:
    """A template of a key list holds values met in earlier lists (what a copy need not be
    given again): each list's dict still has exactly its own values, of their own types,
    whatever ran before it: a key's value that stays, changes once and stays, alternates,
    or changes to an equal value of another type; over two bodies (the second's texts found
    by content) and through both builders (a batch's, the offline one's)."""
    rng = random.Random(7)
    keys = ["k0", "k1", "k2", "k3", "k4", "k5"]
    lists: list[list[dict[str, Any]]] = []
    current = [rng.randrange(len(_VALUE_POOL)) for _ in keys]
    for n in range(240):
        for at in range(len(keys)):
            if at == 1:  # alternates between two values
                current[at] = n % 2
            elif at == 2:  # an equal value of another type every third list
                current[at] = (0, 2, 5, 7)[n % 4]
            elif rng.random() < 0.3:  # changes now and then, else stays
                current[at] = rng.randrange(len(_VALUE_POOL))
        lists.append([_kv(k, _VALUE_POOL[v]) for k, v in zip(keys, current, strict=True)])
    spans = [
        {
            "traceId": "0af7651916cd43dd8448eb211c80319c",
            "spanId": f"{n + 1:016x}",
            "name": "s",
            "startTimeUnixNano": "10",
            "endTimeUnixNano": "20",
            "attributes": attributes,
        }
        for n, attributes in enumerate(lists)
    ]
    body = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode()
    expected = [_strictly({kv["key"]: _python_value(kv["value"]) for kv in a}) for a in lists]
    builder = _native.RecordBuilder()
    for _ in range(2):
        batch = _native.decode_json(body)
        built = batch.records()[0]
        assert [_strictly(span.attributes) for span in built] == expected
        order = list(range(len(lists))) + list(range(len(lists)))[::-1]
        placed = _at(builder, batch, order)
        assert [_strictly(span.attributes) for span in placed] == [expected[n] for n in order]


def test_attribute_keys_are_the_interned_strings_the_readers_look_up() -> None:
    """A record's attribute keys are interned strings: the core's readers look a key up by
    its interned string, which a dict then finds by address rather than by its characters.
    String values are not interned (a value is not looked up). On CPython 3.12, which keeps
    every interned string for the life of the process, keys from traces are not interned
    either: distinct keys would grow a long-lived `serve` without bound."""
    body = (TRACES / "pydantic-ai" / "g_handoff.raw" / "1.pb").read_bytes()
    spans, _ = _native.decode_proto(body, "traces")[0].records()

    def interned(text: str) -> bool:
        return sys.intern("".join(text)) is text  # an equal new string gives the interned one

    keys = [key for span in spans for key in span.attributes]
    interning_frees = sys.version_info[:2] != (3, 12)
    assert keys and all(interned(key) is interning_frees for key in keys)
    texts = [v for span in spans for v in span.attributes.values() if isinstance(v, str)]
    assert texts and not any(interned(text) for text in texts)


def test_decode_proto_refuses_what_is_not_that_message() -> None:
    with pytest.raises(ValueError, match="ExportTraceServiceRequest': Wire format was corrupt"):
        _native.decode_proto(b"\x0a\x05abc", "traces")
    with pytest.raises(ValueError, match="String field had bad UTF-8"):
        _native.decode_proto(b"\x0a\x03\x1a\x01\xff", "logs")
    with pytest.raises(ValueError, match='unknown signal "metrics"'):
        _native.decode_proto(b"", "metrics")  # type: ignore[arg-type]


def test_records_leave_the_garbage_collector_as_they_found_it() -> None:
    body = (TRACES / "pydantic-ai" / "g_handoff.raw" / "1.pb").read_bytes()
    batch, _ = _native.decode_proto(body, "traces")
    assert gc.isenabled()
    batch.records()
    assert gc.isenabled()
    gc.disable()
    try:
        batch.records()
        assert not gc.isenabled()
    finally:
        gc.enable()


def _wire(span: WireSpan | ExpectedWireSpan) -> tuple[object, ...]:
    return (
        span.body, span.index, span.trace_id, span.span_id, span.parent_span_id, span.end_ns,
        span.resource, span.scope_name, span.start_ns, span.flags,
        [(ln.trace_id, ln.span_id, ln.attributes) for ln in span.links], span.attributes,
    )  # fmt: skip


def test_transfer_spans_are_the_stand_ins_full_records_would_give() -> None:
    bodies = sorted(TRACES.rglob("*.pb"))
    session_keys = links = 0
    for path in bodies:
        try:
            batch, _ = _native.decode_proto(path.read_bytes(), "traces")
        except ValueError:
            continue  # a logs body, or one of the deliberately corrupt ones
        body = RequestBody(b"", "proto-traces")
        transfer = batch.transfer_spans(body)
        native = list(transfer)
        spans = spans_for_transfer(batch.records()[0], body)
        assert [_wire(s) for s in native] == [_wire(s) for s in spans], path
        assert len(transfer) == len(spans)
        if spans:
            assert _wire(transfer[-1]) == _wire(spans[-1]) and _wire(transfer[0]) == _wire(spans[0])
        session_keys += sum(1 for s in native if s.attributes)
        links += sum(len(s.links) for s in native)
    assert len(bodies) > 500 and session_keys > 0 and links > 0


def test_decoding_lets_other_threads_run() -> None:
    """serve's receiving thread decodes while its other threads answer: the core decodes
    without the GIL. Another thread counts while a large body decodes; holding the GIL,
    it would count nothing until the decode returned."""
    one = (TRACES / "pydantic-ai" / "g_handoff.raw" / "1.pb").read_bytes()
    payload = one * (32_000_000 // len(one))  # concatenated requests: one larger request
    # Grown until one decode takes ~0.25 s on this machine (at most 4 times): a faster
    # decoder or machine must not leave the counting thread too short a time to show.
    t0 = time.perf_counter()
    _native.decode_proto(payload, "traces")
    payload *= min(4, math.ceil(0.25 / max(time.perf_counter() - t0, 1e-3)))
    started, done = threading.Event(), threading.Event()
    decoded: list[int] = []

    def decode() -> None:
        started.set()
        batch, _ = _native.decode_proto(payload, "traces")
        done.set()
        decoded.append(batch.span_count)

    def count_until(stop: threading.Event) -> tuple[int, float]:
        n, t0 = 0, time.perf_counter()
        while not stop.is_set():
            n += 1
        return n, time.perf_counter() - t0

    alone = threading.Event()
    timer = threading.Timer(0.2, alone.set)
    timer.start()
    solo, solo_s = count_until(alone)
    # Hand the GIL over quickly, so the counting before the decode takes it is negligible.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    try:
        thread = threading.Thread(target=decode)
        thread.start()
        started.wait()
        during, during_s = count_until(done)
        thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert decoded and decoded[0] > 1000
    assert during_s > 0.05, "the decode should take long enough to tell"
    assert during / during_s > 0.3 * (solo / solo_s)


def test_a_body_is_decoded_in_place_from_its_range_of_a_block() -> None:
    """``decode_json(block, start, end)`` reads ``block[start:end]`` (a line of a block the
    file reader read whole) as ``decode_json`` reads that slice; a range outside the block
    is refused, not read past its end; syntax errors are located within the range."""
    block = b"{}\n" + _SPAN_WITH_ALL + b"\n" + _LOG
    start = 3
    end = start + len(_SPAN_WITH_ALL)
    (spans, _), (alone, _) = (
        _native.decode_json(block, start, end).records(),
        _native.decode_json(_SPAN_WITH_ALL).records(),
    )
    assert spans == alone and len(spans) == 1
    (_, logs) = _native.decode_json(block, end + 1).records()
    assert len(logs) == 1
    for bad in [(0, len(block) + 1), (5, 4), (len(block) + 1, None)]:
        with pytest.raises(ValueError, match="outside the"):
            _native.decode_json(block, *bad)
    with pytest.raises(_native.JsonSyntaxError) as raised:
        _native.decode_json(b'{"a": 1}\n{"b": x}', 9)
    assert raised.value.args[1:] == (1, 7)
    # An array of requests likewise (a pretty-printed file's array, read in its block).
    array = b"[" + _SPAN_WITH_ALL + b", " + _LOG + b"]"
    padded = b"  {}\n" + array + b"\n{}"
    items = _native.decode_json_many(padded, 5, 5 + len(array))
    assert [item.records() for item in items] == [
        item.records() for item in _native.decode_json_many(array)
    ]
    assert len(items) == 2
    with pytest.raises(ValueError, match="outside the"):
        _native.decode_json_many(array, 1, len(array) + 1)


def test_ids_are_the_lowercase_hex_of_their_bytes_whoever_carries_them() -> None:
    """A span id's string is shared with the records that carry it again (its children's
    parent id, a log record's span id): every record still holds its own id's hex, with
    the parents built before and after their children, more spans than the builder keeps
    ids of, and ids written in capitals."""
    rng = random.Random(18)
    trace_ids = [bytes(rng.randrange(256) for _ in range(16)) for _ in range(3)]
    trace_ids.append(bytes(range(0x01, 0xF2, 0x10)))  # every nibble in both places
    span_ids = [bytes(rng.randrange(256) for _ in range(8)) for _ in range(300)]
    span_ids[:2] = [bytes.fromhex("0123456789abcdef"), bytes.fromhex("fedcba9876543210")]
    parents = [None if i % 50 == 0 else span_ids[rng.randrange(300)] for i in range(300)]
    spans = [
        {
            "traceId": trace_ids[i % 4].hex(),
            "spanId": span_id.hex().upper() if i % 3 == 0 else span_id.hex(),
            **({"parentSpanId": parent.hex()} if parent else {}),
            "name": "s",
            "startTimeUnixNano": "1",
            "endTimeUnixNano": "2",
        }
        for i, (span_id, parent) in enumerate(zip(span_ids, parents, strict=True))
    ]
    logs = [
        {"traceId": trace_ids[i % 4].hex(), "spanId": span_ids[(i * 7) % 300].hex()}
        for i in range(100)
    ]
    span_body = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    log_body = {"resourceLogs": [{"scopeLogs": [{"logRecords": logs}]}]}
    built, _ = _native.decode_json(json.dumps(span_body).encode()).records()
    _, built_logs = _native.decode_json(json.dumps(log_body).encode()).records()
    assert [(s.trace_id, s.span_id, s.parent_span_id) for s in built] == [
        (trace_ids[i % 4].hex(), span_id.hex(), parent.hex() if parent else "")
        for i, (span_id, parent) in enumerate(zip(span_ids, parents, strict=True))
    ]
    assert [(log.trace_id, log.span_id) for log in built_logs] == [
        (trace_ids[i % 4].hex(), span_ids[(i * 7) % 300].hex()) for i in range(100)
    ]
