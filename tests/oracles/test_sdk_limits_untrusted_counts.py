"""A dropped count the decoder cannot read still says that something was dropped.

A real run under SDK limits (``tests/testdata/sdk-limits/openinference-openai-limits``,
``d_forbidden_tool``: a raw client, no tool spans, its model calls' flattened messages cut
by the attribute count limit) reports on its spans how many attributes the SDK dropped, and
the checks on which tools ran are missing evidence (``test_sdk_limits``). Written unreadably
(a negative number, text, a fraction, a number past 2^32-1; in protobuf a varint past
2^32-1, whose low 32 bits parsers keep: 2^32 reads as 0) a count used to read as 0,
"nothing dropped", and those checks passed on lists the SDK had cut. Now it reads as 2^32-1
(dropped, how many unknown), with a located problem where the decoder saw one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from otel_oracles.decode import decode
from otel_oracles.model.result import Outcome
from otel_oracles.pipeline import grade_trace, read_traces
from tests.oracles.test_contracts_on_real_traces import TRACES, contract_named, conventions

CAPTURE = (
    TRACES.parent / "sdk-limits" / "openinference-openai-limits" / "d_forbidden_tool.otlp.json"
)
DECIDED_BY_COUNTS = ("searched-the-index", "bounded-effort", "search-retry")
"""``support-rag`` checks the counts decide on this capture: missing evidence with them,
a pass with every count 0."""
U32_MAX = 2**32 - 1


def _with_counts(out: Path, count: Any) -> Path:
    """The capture with every dropped count it reports written as ``count``."""
    doc = json.loads(CAPTURE.read_text())
    written = 0
    for rs in doc["resourceSpans"]:
        for scope in rs["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("droppedAttributesCount", "droppedEventsCount"):
                    if span.get(key):
                        span[key] = count
                        written += 1
    assert written
    out.write_text(json.dumps(doc))
    return out


def _grade(path: Path) -> tuple[dict[str, Outcome], list[Any]]:
    problems: list[Any] = []
    contract = contract_named("support-rag")
    ((verdict, _),) = [
        graded
        for trace in read_traces([str(path)], problems)
        for graded in grade_trace(trace, [contract], conventions())
    ]
    return {r.name: r.outcome for r in verdict.results}, problems


def test_the_counts_decide_these_checks(tmp_path: Path) -> None:
    reported, problems = _grade(CAPTURE)
    assert problems == []
    assert {reported[c] for c in DECIDED_BY_COUNTS} == {Outcome.MISSING_EVIDENCE}
    nothing_dropped, _ = _grade(_with_counts(tmp_path / "zero.json", 0))
    assert {nothing_dropped[c] for c in DECIDED_BY_COUNTS} == {Outcome.PASS}


@pytest.mark.parametrize("count", [-1, "many", 1.5, 2**32, "4294967296"])
def test_an_unreadable_count_is_no_list_left_whole(count: Any, tmp_path: Path) -> None:
    got, problems = _grade(_with_counts(tmp_path / "garbled.json", count))
    assert {got[c] for c in DECIDED_BY_COUNTS} == {Outcome.MISSING_EVIDENCE}
    assert problems, "each unreadable count is a located problem"
    for problem in problems:
        assert "Count: must be an integer from 0 to 2^32-1" in problem.message
        assert problem.message.endswith("read as 4294967295 (dropped, how many unknown)")


def test_a_protobuf_count_past_uint32_is_not_its_low_bits() -> None:
    """2^32 on the wire: protobuf parsers read the low 32 bits, 0."""
    request = ExportTraceServiceRequest()
    span = request.resource_spans.add().scope_spans.add().spans.add()
    span.trace_id = bytes.fromhex("5b8efff798038103d269b633813fc60c")
    span.span_id = bytes.fromhex("eee19b7ec3c1b174")
    span.name = "chat"
    # dropped_attributes_count is field 10 (varint): key 0x50, then 2^32 as a varint
    varint = bytes([0x80, 0x80, 0x80, 0x80, 0x10])
    inner = span.SerializeToString() + b"\x50" + varint
    scope = b"\x12" + _length(inner) + inner
    resource = b"\x12" + _length(scope) + scope
    body = b"\x0a" + _length(resource) + resource
    parsed = ExportTraceServiceRequest.FromString(body)
    assert parsed.resource_spans[0].scope_spans[0].spans[0].dropped_attributes_count == 0
    (record,) = decode(body, "application/x-protobuf").spans
    assert record.dropped_attributes == U32_MAX


def _length(data: bytes) -> bytes:
    n, out = len(data), bytearray()
    while True:
        if n < 0x80:
            out.append(n)
            return bytes(out)
        out.append(n & 0x7F | 0x80)
        n >>= 7
