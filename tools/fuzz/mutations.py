"""Structure-aware mutation of OTLP/JSON traces: hostile traces that still parse.

Byte-level mutation of a real trace mostly yields invalid JSON, which the decoder refuses in
its first microsecond; the mapping and grading stages never see it. These mutations keep the
document well-formed and change what an attacker controls: spans dropped or duplicated,
parent cycles and self-parenting, huge and deeply nested AnyValues, values of the wrong type,
absurd timestamps and ids, and (after encoding) invalid UTF-8 inside strings.

``mutate(data, seed)`` is deterministic in ``(data, seed)``; the fuzzing engine passes its
own seed, so a finding replays from the saved input alone.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import orjson

Doc = dict[str, Any]


def _spans(doc: Doc) -> list[tuple[list[Any], int]]:
    """(containing list, index) of every span in ``doc``."""
    out: list[tuple[list[Any], int]] = []
    for rs in _as_list(doc.get("resourceSpans")):
        for ss in _as_list(_get(rs, "scopeSpans")):
            spans = _get(ss, "spans")
            if isinstance(spans, list):
                out.extend((spans, i) for i in range(len(spans)))
    return out


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else None


def _as_list(obj: Any) -> list[Any]:
    return obj if isinstance(obj, list) else []


def _span_dicts(doc: Doc) -> list[dict[str, Any]]:
    return [s[i] for s, i in _spans(doc) if isinstance(s[i], dict)]


def _attributes(rng: random.Random, doc: Doc) -> list[Any] | None:
    """A random attribute list of some span, event or resource in ``doc``."""
    holders: list[Any] = []
    for span in _span_dicts(doc):
        holders.append(span)
        holders.extend(e for e in _as_list(span.get("events")) if isinstance(e, dict))
    for rs in _as_list(doc.get("resourceSpans")):
        if isinstance(_get(rs, "resource"), dict):
            holders.append(rs["resource"])
    if not holders:
        return None
    holder = rng.choice(holders)
    attrs = holder.get("attributes")
    if isinstance(attrs, list):
        return attrs
    fresh: list[Any] = []
    holder["attributes"] = fresh
    return fresh


def _hostile_value(rng: random.Random) -> Any:
    choice = rng.randrange(10)
    if choice == 0:  # deep nesting
        value: Any = {"stringValue": "leaf"}
        for _ in range(rng.choice([20, 90, 300])):  # 3 JSON levels each
            value = {"arrayValue": {"values": [value]}}
        return value
    if choice == 1:  # deep kvlist
        value = {"intValue": "1"}
        for _ in range(rng.choice([20, 70, 250])):  # 4 JSON levels each
            value = {"kvlistValue": {"values": [{"key": "k", "value": value}]}}
        return value
    if choice == 2:  # wide
        return {"arrayValue": {"values": [{"intValue": str(i)} for i in range(20_000)]}}
    if choice == 3:  # huge string
        return {"stringValue": "x" * rng.choice([1 << 16, 1 << 20])}
    if choice == 4:  # wrong types inside the AnyValue
        return rng.choice(
            [
                {"intValue": "abc"},
                {"intValue": 1e308},
                {"intValue": "99999999999999999999999999"},
                {"doubleValue": "NaN"},
                {"doubleValue": "Infinity"},
                {"boolValue": "yes"},
                {"bytesValue": "!!not base64!!"},
                {"arrayValue": {"values": "nope"}},
                {"kvlistValue": {"values": [{"key": 5}]}},
                {"stringValue": None},
                {"stringValue": "a", "intValue": "1"},
                {"unknownValue": 1},
            ]
        )
    if choice == 5:  # not an AnyValue at all
        return rng.choice([None, 1, "str", [], [1, 2], True, 1.5, {}])
    if choice == 6:  # JSON text where a mapping rule parses JSON
        depth = rng.choice([10, 1000, 50_000])
        return {"stringValue": "[" * depth + "1" + "]" * depth}
    if choice == 7:
        return {"stringValue": rng.choice(["", "\x00", "\ud7ff", "\u202e", "\\", '{"a":']) * 50}
    if choice == 8:
        return {"bytesValue": "QUJD" * 1000}
    return {"intValue": str(rng.choice([-(2**63), 2**63 - 1, 2**64, 0]))}


_KEYS = [
    "gen_ai.operation.name",
    "gen_ai.tool.name",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.response.finish_reasons",
    "gen_ai.usage.input_tokens",
    "gen_ai.conversation.id",
    "session.id",
    "openinference.span.kind",
    "llm.input_messages.0.message.content",
    "input.value",
    "output.value",
    "tool.name",
    "ai.toolCall.args",
    "ai.prompt.messages",
    "traceloop.entity.input",
    "logfire.json_schema",
    "http.url",
    "url.full",
]


def _set_attribute(rng: random.Random, doc: Doc) -> None:
    attrs = _attributes(rng, doc)
    if attrs is None:
        return
    existing = [a for a in attrs if isinstance(a, dict) and isinstance(a.get("key"), str)]
    key = rng.choice(existing)["key"] if existing and rng.random() < 0.6 else rng.choice(_KEYS)
    attrs.append({"key": key, "value": _hostile_value(rng)})


def _drop_span(rng: random.Random, doc: Doc) -> None:
    spans = _spans(doc)
    if spans:
        container, i = rng.choice(spans)
        del container[i]


def _duplicate_span(rng: random.Random, doc: Doc) -> None:
    spans = _spans(doc)
    if spans:
        container, i = rng.choice(spans)
        container.extend([container[i]] * rng.choice([1, 2, 100]))


def _reparent(rng: random.Random, doc: Doc) -> None:
    spans = _span_dicts(doc)
    if not spans:
        return
    mode = rng.randrange(4)
    if mode == 0:  # self-parent
        span = rng.choice(spans)
        span["parentSpanId"] = span.get("spanId")
    elif mode == 1:  # a cycle through every span
        for a, b in zip(spans, spans[1:] + spans[:1], strict=True):
            a["parentSpanId"] = b.get("spanId")
    elif mode == 2:  # two-cycle
        a, b = rng.choice(spans), rng.choice(spans)
        a["parentSpanId"], b["parentSpanId"] = b.get("spanId"), a.get("spanId")
    else:  # everything is a root, or every span the same id
        field = rng.choice(["parentSpanId", "spanId"])
        for span in spans:
            span[field] = "" if field == "parentSpanId" else "00000000000000aa"


_SPAN_FIELDS = (
    *("startTimeUnixNano", "endTimeUnixNano", "traceId", "spanId", "parentSpanId", "kind"),
    *("name", "status", "links", "events", "attributes"),
)


def _absurd_field(rng: random.Random, doc: Doc) -> None:
    spans = _span_dicts(doc)
    if not spans:
        return
    span = rng.choice(spans)
    field = rng.choice(_SPAN_FIELDS)
    span[field] = rng.choice(
        [
            "0",
            "-1",
            "18446744073709551615",
            "18446744073709551616",
            "1" * 40,
            1e300,
            -5,
            "",
            "zz" * 8,
            "00" * 16,
            "ab" * 33,
            None,
            [],
            {},
            {"code": 99, "message": 5},
            [{"traceId": "x", "spanId": 1, "attributes": 3}],
            [{"name": None, "timeUnixNano": "nope", "attributes": [{"key": "k"}]}],
            True,
            "\u0000" * 8,
        ]
    )


def _shuffle_spans(rng: random.Random, doc: Doc) -> None:
    for rs in _as_list(doc.get("resourceSpans")):
        for ss in _as_list(_get(rs, "scopeSpans")):
            spans = _get(ss, "spans")
            if isinstance(spans, list):
                rng.shuffle(spans)


def _wrong_container(rng: random.Random, doc: Doc) -> None:
    target = rng.choice(["resourceSpans", "scopeSpans", "spans"])
    if target == "resourceSpans":
        doc["resourceSpans"] = rng.choice([{}, "x", [None], [[]], 1])
        return
    for rs in _as_list(doc.get("resourceSpans")):
        if isinstance(rs, dict):
            if target == "scopeSpans":
                rs["scopeSpans"] = rng.choice([{}, [None], [{"spans": 1}], "s"])
            else:
                for ss in _as_list(rs.get("scopeSpans")):
                    if isinstance(ss, dict):
                        ss["spans"] = rng.choice([{}, [None], [1, "x"], [[]]])


MUTATIONS: tuple[Callable[[random.Random, Doc], None], ...] = (
    _set_attribute,
    _set_attribute,
    _drop_span,
    _duplicate_span,
    _reparent,
    _absurd_field,
    _absurd_field,
    _shuffle_spans,
    _wrong_container,
)


def _invalid_utf8(rng: random.Random, encoded: bytes) -> bytes:
    """Bytes that are not UTF-8 put inside a JSON string (after a ``"`` found at random)."""
    quotes = [i for i, b in enumerate(encoded[:200_000]) if b == 0x22]
    if not quotes:
        return encoded
    at = rng.choice(quotes) + 1
    bad = rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80\x80"])
    return encoded[:at] + bad + encoded[at:]


def mutate(data: bytes, seed: int) -> bytes | None:
    """A structurally mutated copy of the OTLP/JSON document ``data``; ``None`` when ``data``
    is not a JSON object (the caller then mutates bytes)."""
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(doc, dict):
        return None
    rng = random.Random(seed)
    for _ in range(rng.choice([1, 1, 2, 3])):
        rng.choice(MUTATIONS)(rng, doc)
    try:
        encoded = orjson.dumps(doc)
    except orjson.JSONEncodeError:  # nested past orjson's own limit: keep the input
        return None
    if rng.random() < 0.1:
        encoded = _invalid_utf8(rng, encoded)
    return encoded
