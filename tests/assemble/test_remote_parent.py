"""A span whose parent is another process's is where a service's part of a trace begins.

An agent served behind an instrumented HTTP endpoint continues the caller's trace: its first
span's parent is the caller's span (the W3C ``traceparent`` the request carried), which is
exported by the caller's own SDK, to another backend or not at all. OTLP says so in the
span's flags (bit 8: the sender knows, bit 9: the parent is remote), which the OpenTelemetry
SDKs write. Such a run is whole, and must not read as a run that died part-way, whose open
agent span was never exported and whose children name a *local* parent that never arrived.

Both runs here are traced for real by the Python SDK and sent by its OTLP/HTTP exporter to
a receiver on 127.0.0.1: the served run under a context the W3C propagator extracted from a
``traceparent`` header, as a server instrumentation does; the killed run with its agent
span never ended (so never exported), as when the process dies mid-run.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import set_span_in_context
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from otel_oracles.assemble import build_trace
from otel_oracles.assemble.online_join import subject_trace
from otel_oracles.decode import decode
from otel_oracles.grade.completeness import trace_complete
from otel_oracles.grade.evidence import fragment_gap
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.contract import Contract
from otel_oracles.model.span import SpanRecord
from tests.support.online import ManualClock, online_assembler
from tests.support.otlp_sink import OtlpSink
from tests.support.transfer_reference import handed_over

PROTOBUF = "application/x-protobuf"
CALLER = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
"""The ``traceparent`` a caller sent: its span b7ad... is exported elsewhere."""


def _agent_run(tracer: Any, context: Any, *, end_agent: bool = True) -> None:
    agent = tracer.start_span(
        "invoke_agent support",
        context=context,
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"},
    )
    inner = set_span_in_context(agent)
    chat = tracer.start_span(
        "chat gpt-4o", context=inner, attributes={"gen_ai.operation.name": "chat"}
    )
    chat.end()
    tool = tracer.start_span(
        "execute_tool search",
        context=inner,
        attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"},
    )
    tool.end()
    if end_agent:
        agent.end()


@pytest.fixture(scope="module")
def sent() -> Iterator[dict[str, bytes]]:
    """What the SDK's OTLP/HTTP exporter sent for each run (one span per request, merged)."""
    bodies: dict[str, bytes] = {}
    with OtlpSink() as sink:
        for run in ("served", "killed"):
            provider = TracerProvider()
            exporter = OTLPSpanExporter(endpoint=sink.http_endpoint + "/v1/traces")
            provider.add_span_processor(SimpleSpanProcessor(exporter))
            tracer = provider.get_tracer("remote-parent-test")
            if run == "served":
                caller = TraceContextTextMapPropagator().extract({"traceparent": CALLER})
                _agent_run(tracer, caller)
            else:
                _agent_run(tracer, None, end_agent=False)
            provider.shutdown()
            merged = ExportTraceServiceRequest()
            for request in sink.requests("traces"):
                merged.MergeFromString(request.body)
            bodies[run] = merged.SerializeToString()
            sink.clear()
    yield bodies


def _decoded(body: bytes, form: str) -> list[SpanRecord]:
    if form == "protobuf":
        return decode(body, PROTOBUF).spans
    request = ExportTraceServiceRequest.FromString(body)
    text = json_format.MessageToJson(request, preserving_proto_field_name=form == "snake_case")
    return decode(text.encode(), "application/json").spans


FORMS = ["protobuf", "camelCase", "snake_case"]


@pytest.mark.parametrize("form", FORMS)
def test_a_served_run_begins_at_its_remote_parented_span(sent: dict[str, bytes], form: str) -> None:
    spans = _decoded(sent["served"], form)
    remote = {s.name: s.parent_is_remote for s in spans}
    assert remote == {
        "invoke_agent support": True,
        "chat gpt-4o": False,
        "execute_tool search": False,
    }
    (agent,) = [s for s in spans if s.parent_is_remote]
    assert agent.parent_span_id == CALLER.split("-")[2]
    trace = build_trace(agent.trace_id, spans)
    assert [s.name for s in trace.roots] == ["invoke_agent support"]
    assert trace.orphans == []


@pytest.mark.parametrize("form", FORMS)
def test_a_killed_runs_spans_name_a_local_parent_that_never_arrived(
    sent: dict[str, bytes], form: str
) -> None:
    spans = _decoded(sent["killed"], form)
    assert sorted(s.name for s in spans) == ["chat gpt-4o", "execute_tool search"]
    assert not any(s.parent_is_remote for s in spans)
    trace = build_trace(spans[0].trace_id, spans)
    assert sorted(s.name for s in trace.orphans) == ["chat gpt-4o", "execute_tool search"]


def test_only_the_served_run_is_graded_as_whole(sent: dict[str, bytes]) -> None:
    conventions = load_conventions()
    contract = Contract(id="c")
    whole: dict[str, tuple[bool, bool]] = {}
    for run, body in sent.items():
        spans = decode(body, PROTOBUF).spans
        trajectory = map_trace(build_trace(spans[0].trace_id, spans), conventions)
        whole[run] = (trace_complete(contract, trajectory) == [], fragment_gap(trajectory) is None)
    assert whole == {"served": (True, True), "killed": (False, False)}


def test_serves_transfer_keeps_the_flags(sent: dict[str, bytes]) -> None:
    """serve's receiving process builds the tree from WireSpans, and its grading workers
    rebuild the records from the body (``handed_over``: serve's route): both say the same
    about the parent as the offline decode."""
    wire = decode(sent["served"], PROTOBUF, for_transfer=True).spans
    assert sorted(s.parent_is_remote for s in wire) == [False, False, True]
    trace = build_trace(wire[0].trace_id, list(wire))
    assert [s.span_id for s in trace.roots] == [s.span_id for s in wire if s.parent_is_remote]
    assert trace.orphans == []
    rebuilt, _ = handed_over(wire)
    assert sorted(s.flags for s in rebuilt) == sorted(s.flags for s in wire)
    assert sorted(s.parent_is_remote for s in rebuilt) == [False, False, True]


@pytest.mark.parametrize(("run", "incomplete"), [("served", False), ("killed", True)])
def test_serve_grades_a_served_run_whole_at_its_age_limit(
    sent: dict[str, bytes], run: str, incomplete: bool
) -> None:
    """serve releases a trace without a parentless root at ``max_trace_age`` (its root rule
    cannot tell a served run's local root from a span whose caller is still going). Then a
    served run, whose tree is whole and whose remote-parented root ended, is graded as
    complete; a killed run's orphans keep it incomplete."""
    clock = ManualClock()
    buffer = online_assembler(clock)
    buffer.offer(decode(sent[run], PROTOBUF, for_transfer=True).spans)
    clock.now += 30
    assert buffer.due() == [], "nothing parentless ended: the trace waits for its age limit"
    clock.now += 31
    (ready,) = buffer.due()
    assert ready.reason == "max_age"
    assert subject_trace(ready).incomplete is incomplete
