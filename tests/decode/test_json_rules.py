"""The tolerant OTLP/JSON rules: what every odd or malformed body decodes to.

``testdata/json_decoder_golden.json`` holds what the Python decoders (msgspec's typed path
and the tolerant walk over orjson, removed once the compiled decoder was proven equal to
them on every JSON fixture, example trace, shared capture and synthetic bench trace) gave
for each body below: records, problems (as a set: attribute values are now converted while
decoding, not when first read), rejected and ignored counts, or the refusal. The compiled
decoder must give the same. The rules that changed on purpose are in ``CHANGED`` with what
they give now.
"""

from __future__ import annotations

import base64
import json
import math
from pathlib import Path
from typing import Any

import orjson
import pytest

from otel_oracles.decode import decode
from otel_oracles.errors import InputError
from tests.decode.test_decode_bodies import log_key, span_key

GOLDEN: dict[str, str] = json.loads(
    (Path(__file__).parent / "testdata" / "json_decoder_golden.json").read_text()
)


def _normal(x: Any) -> Any:
    if isinstance(x, float) and math.isnan(x):
        return "nan"
    if isinstance(x, dict):
        return {k: _normal(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_normal(v) for v in x]
    return x


def outcome(body: bytes) -> tuple[Any, ...]:
    """Records, sorted problems and counts of ``body``, or how it was refused."""
    try:
        batch = decode(body, "application/json")
    except InputError as exc:
        if exc.message.startswith("invalid JSON at line "):
            return ("not JSON", int(exc.message.split()[4]))
        return ("refused", exc.message)
    return (
        [_normal(span_key(s)) for s in batch.spans],
        [_normal(log_key(r)) for r in batch.logs],
        batch.ignored,
        batch.rejected,
        sorted(batch.problems),
        batch.problems.omitted,
    )


T = "5b8efff798038103d269b633813fc60c"
S = "eee19b7ec3c1b174"


def _span(**fields: Any) -> dict[str, Any]:
    span = {"traceId": T, "spanId": S, "name": "x", "kind": 1, "startTimeUnixNano": "1"}
    span.update(fields)
    return {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}


def _attr(value: Any) -> dict[str, Any]:
    return _span(attributes=[{"key": "k", "value": value}])


def _log(**fields: Any) -> dict[str, Any]:
    return {"resourceLogs": [{"scopeLogs": [{"logRecords": [fields]}]}]}


def _deep(levels: int) -> bytes:
    return orjson.dumps(_attr({"stringValue": "x"})).replace(
        b'{"stringValue":"x"}',
        b'{"arrayValue":{"values":[' * levels + b'{"stringValue":"x"}' + b"]}}" * levels,
    )


SAME: dict[str, Any] = {  # name: body, decoded as GOLDEN[name] says
    "bool as string": _attr({"boolValue": "true"}),
    "null value": _span(attributes=[{"key": "k", "value": None}]),
    "null variant": _attr({"stringValue": None}),
    "missing value": _span(attributes=[{"key": "k"}]),
    "kind as digit string": _span(kind="3"),
    "kind as float": _span(kind=3.0),
    "kind as bool": _span(kind=True),
    "unknown kind": _span(kind="SPAN_KIND_TELEPATHIC"),
    "status code as digit string": _span(status={"code": "2"}),
    "status not an object": _span(status="ok"),
    "status message not a string": _span(status={"code": 1, "message": [1, "a"]}),
    "float time": _span(startTimeUnixNano=1.5),
    "spaced time": _span(startTimeUnixNano=" 12 "),
    "url-safe bytes": _attr({"bytesValue": "-_8="}),
    "int as exponent string": _attr({"intValue": "1e3"}),
    "double as inf": _attr({"doubleValue": "inf"}),
    "double bool": _attr({"doubleValue": True}),
    "int not decimal": _attr({"intValue": "0x10"}),
    "kvlist null value": _attr({"kvlistValue": {"values": [{"key": "a", "value": None}]}}),
    "kvlist bad entry": _attr({"kvlistValue": {"values": [{"k": 1}]}}),
    "array values null": _attr({"arrayValue": {"values": None}}),
    "unknown variant": _attr({"weird": 1}),
    "all-zero trace id": _span(traceId="0" * 32),
    "base64 all-zero trace id": _span(traceId=base64.b64encode(bytes(16)).decode()),
    "base64 parent": _span(parentSpanId=base64.b64encode(bytes.fromhex(S)).decode()),
    "parent not a string": _span(parentSpanId=5),
    "name not a string": _span(name=5),
    "quotes in a bad id": _span(spanId='it\'s "x" é\u200b'),
    "event name null": _span(events=[{"name": None, "timeUnixNano": "3"}]),
    "event attributes not a list": _span(events=[{"name": "e", "attributes": {"a": 1}}]),
    "snake-case link": _span(links=[{"trace_id": T, "span_id": S}]),
    "unknown field": _span(foo=1),
    "repeated attribute": _span(
        attributes=[
            {"key": "a", "value": {"intValue": "bad"}},
            {"key": "a", "value": {"stringValue": "ok"}},
        ]
    ),
    "log severity 99": _log(severityNumber=99),
    "log severity name": _log(severityNumber="SEVERITY_NUMBER_INFO3"),
    "log severity float": _log(severityNumber=9.0),
    "log bad trace id": _log(traceId="xyz", spanId=S),
    "log legacy event name": _log(
        attributes=[{"key": "event.name", "value": {"stringValue": "ev"}}]
    ),
    "log bad body": _log(body={"intValue": "q"}),
    "log observed time": _log(observedTimeUnixNano="7"),
    "resource bad attribute": {
        "resourceSpans": [
            {
                "resource": {"attributes": [{"key": "a", "value": {"intValue": "z"}}, 5]},
                "scopeSpans": [],
            }
        ]
    },
    "not a request": {"foo": 1},
    "a list": [1, 2],
    "metrics": {"resourceMetrics": [{"scopeMetrics": [{"metrics": [1, 2]}]}]},
}


@pytest.mark.parametrize("name", sorted(SAME))
def test_tolerated_and_malformed_values_decode_as_before(name: str) -> None:
    assert repr(outcome(orjson.dumps(SAME[name]))) == GOLDEN[name]


@pytest.mark.parametrize("levels", [64, 65, 100, 300, 400, 10_000])
def test_deep_values_decode_or_are_refused_as_before(levels: int) -> None:
    """Values nested past 64 levels read as null; documents nested past 1,024 levels are
    refused (the typed decoder stopped near 1,000, where the interpreter's recursion limit
    fell, so levels in between were not recorded)."""
    assert repr(outcome(_deep(levels))) == GOLDEN[f"deep {levels}"]


def _problems(obj: Any) -> list[str]:
    return list(decode(orjson.dumps(obj), "application/json").problems)


CHANGED: dict[str, tuple[Any, str]] = {
    # Two variants set: the typed decoder took the first; an AnyValue holds one.
    "two variants": (
        _attr({"stringValue": "a", "intValue": "1"}),
        "attribute 'k': an AnyValue holds exactly one variant, got keys ['intValue', "
        "'stringValue']; read as null",
    ),
    # Times outside 0..2^64-1 were kept as Python integers; protobuf cannot carry them.
    "negative time": (
        _span(startTimeUnixNano="-5"),
        "startTimeUnixNano must be from 0 to 2^64-1, got '-5'; span rejected",
    ),
    "time past 64 bits": (
        _span(startTimeUnixNano="99999999999999999999999"),
        "startTimeUnixNano must be from 0 to 2^64-1, got '99999999999999999999999'; span rejected",
    ),
    # Digits of other scripts were read by Python's int().
    "arabic digits": (
        _span(startTimeUnixNano="١٢"),
        "startTimeUnixNano must be an integer (decimal string), got '١٢'; span rejected",
    ),
    "intValue past 64 bits": (
        _attr({"intValue": "99999999999999999999"}),
        "attribute 'k': intValue must fit in 64 bits, got '99999999999999999999'; read as null",
    ),
    # One wording for bad base64 (the typed path quoted the base64 module's error).
    "bad base64": (
        _attr({"bytesValue": "A"}),
        "attribute 'k': bytesValue must be base64, got 'A'; read as null",
    ),
}


@pytest.mark.parametrize("name", sorted(CHANGED))
def test_changed_rules_give_their_documented_problem(name: str) -> None:
    obj, message = CHANGED[name]
    assert _problems(obj) == [f"resourceSpans[0].scopeSpans[0].spans[0]: {message}"]
