"""Ids, decimal strings and escaped strings as the compiled decoder reads them.

The decoder reads span and trace ids sixteen hex digits a step, decimal strings (times,
``intValue``) eight digits a step and a string's ``\\"`` escapes inside its sixteen-byte
steps; each reading is checked here against Python's own (``bytes.fromhex``, ``int``,
``json.loads``) on the spellings that sit at its edges, through both the direct reader
(a whole ``resourceSpans`` body) and the tree it falls back to.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from otel_oracles.decode import decode
from otel_oracles.errors import InputError
from otel_oracles.model.span import SpanRecord

T = "5b8efff798038103d269b633813fc60c"
S = "eee19b7ec3c1b174"


def _body(**fields: Any) -> bytes:
    span = {"traceId": T, "spanId": S, "name": "x", "kind": 1, "startTimeUnixNano": "1"}
    span.update(fields)
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).encode()


def _one(body: bytes) -> tuple[SpanRecord | None, list[str]]:
    """The body's one span (``None`` when rejected) and its problems."""
    batch = decode(body, "application/json")
    return (batch.spans[0] if batch.spans else None), list(batch.problems)


@pytest.mark.parametrize(
    "trace_id",
    [
        T,
        T.upper(),
        "0123456789abcdefABCDEF0f1e2d3c4b",
        "ffffffffffffffffffffffffffffffff",
        "00000000000000000000000000000001",
    ],
)
def test_hex_ids_read_in_either_case(trace_id: str) -> None:
    span, problems = _one(_body(traceId=trace_id, parentSpanId=trace_id[16:]))
    assert problems == []
    assert span is not None
    assert span.trace_id == bytes.fromhex(trace_id).hex()
    assert span.parent_span_id == bytes.fromhex(trace_id[16:]).hex()


@pytest.mark.parametrize("at", range(32))
@pytest.mark.parametrize("stray", ["g", "G", "/", ":", "@", "`", " ", "é"])
def test_an_id_with_a_stray_character_anywhere_is_rejected(at: int, stray: str) -> None:
    bad = T[:at] + stray + T[at + 1 :]
    span, problems = _one(_body(traceId=bad))
    assert span is None
    assert len(problems) == 1 and "traceId must be 32 hex digits" in problems[0], problems


DECIMALS = [
    "0",
    "7",
    "0000000000000000007",
    "12345678",
    "123456789",
    "1767225600038336158",
    "9223372036854775807",
    "9223372036854775808",
    "9999999999999999999",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999",
    "-1",
    "-9223372036854775808",
    "-9223372036854775809",
    " 12 ",
    "1_000",
    "12345678_",
    "1234567a",
    "a2345678",
    "123456789012345678:",
    "1e3",
    "",
]


def _python_int(text: str) -> int | None:
    """``int(text, 10)`` over ASCII, as the decoder documents it; ``None`` when it raises."""
    try:
        return int(text, 10)
    except ValueError:
        return None


@pytest.mark.parametrize("text", DECIMALS)
def test_int_values_read_as_python_int_within_64_bits(text: str) -> None:
    span, problems = _one(_body(attributes=[{"key": "k", "value": {"intValue": text}}]))
    assert span is not None
    expected = _python_int(text) if text != "1e3" else 1000
    if expected is not None and -(2**63) <= expected < 2**63:
        assert dict(span.attributes) == {"k": expected}
        assert type(dict(span.attributes)["k"]) is int
        assert problems == []
    else:
        assert dict(span.attributes) == {"k": None}
        assert len(problems) == 1 and "intValue must" in problems[0], problems


@pytest.mark.parametrize("text", DECIMALS)
def test_times_read_as_python_int_within_64_bits_unsigned(text: str) -> None:
    span, problems = _one(_body(startTimeUnixNano=text))
    expected = _python_int(text) if text != "1e3" else 1000
    if expected is not None and 0 <= expected < 2**64:
        assert span is not None and span.start_ns == expected and problems == []
    else:
        assert span is None
        assert len(problems) == 1 and "startTimeUnixNano must" in problems[0], problems


ESCAPES = ['\\"', "\\\\", "\\/", "\\n", "\\t", "\\b", "\\f", "\\r", "\\u00e9", "\\ud83d\\ude00"]


@pytest.mark.parametrize("escape", ESCAPES)
def test_escaped_strings_read_as_json_loads_at_every_offset(escape: str) -> None:
    # Each escape at every offset of the first sixteen-byte steps, in a run of escapes
    # as JSON text in an attribute is, and at the string's end; keys and values alike.
    for before in range(0, 40, 3):
        for shape in ("{0}{1}{0}", "{0}{1}{1}{1}", "{1}{0}{1}x{1}", "{0}{1}"):
            text = shape.format("a" * before, escape)
            raw = (
                f'{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{{"traceId":"{T}",'
                f'"spanId":"{S}","name":"{text}","attributes":[{{"key":"{text}",'
                f'"value":{{"stringValue":"{text}"}}}}]}}]}}]}}]}}'
            )
            span, problems = _one(raw.encode())
            expected = json.loads(f'"{text}"')
            assert problems == [] and span is not None, raw
            assert span.name == expected
            assert dict(span.attributes) == {expected: expected}


@pytest.mark.parametrize("escape", ["\\ud800", "\\udc00", "\\ud800\\u0041", "\\udbff\\udbff"])
def test_lone_surrogates_refuse_the_body_where_they_stand(escape: str) -> None:
    # The fast parser leaves these to the general one, which refuses the body with the
    # place of the escape (Python's json would have read a lone surrogate).
    raw = _body(name="placeholder").replace(b'"placeholder"', f'"{escape}\\"x"'.encode())
    with pytest.raises(InputError) as refused:
        _one(raw)
    message = refused.value.message
    assert message.startswith("invalid JSON at line 1 column ") and "escape" in message
    column = int(message.split()[6].rstrip(":"))
    first = raw.index(b"\\u") + 1  # columns count from 1
    assert first <= column <= first + len(escape) + 3, (message, first)  # or the `\\"` after


def test_a_surrogate_pair_reads_as_its_character() -> None:
    raw = _body(name="placeholder").replace(b'"placeholder"', b'"\\ud83d\\ude00\\"x"')
    span, problems = _one(raw)
    assert problems == [] and span is not None and span.name == '\U0001f600"x'
