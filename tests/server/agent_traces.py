"""Agent traces for the serve tests: produced with the real OTel Python SDK, or real
request bodies from tests/server/testdata (re-keyed with fresh trace ids when a test needs
many distinct traces)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter
from opentelemetry.trace import SpanKind

TESTDATA = Path(__file__).resolve().parent / "testdata"


def send_agent_traces(
    exporter: SpanExporter, count: int, service: str = "py-support-agent"
) -> tuple[list[str], list[str]]:
    """Run ``count`` scripted agent runs through the SDK; every second one also calls the
    forbidden ``delete_records``. Returns (all trace ids, the forbidden ones)."""
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("agent-test", "1.0")
    ids: list[str] = []
    forbidden: list[str] = []
    for i in range(count):
        tools = ["search_docs", "delete_records"] if i % 2 else ["search_docs"]
        with tracer.start_as_current_span(
            "invoke_agent support",
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"},
        ) as root:
            with tracer.start_as_current_span(
                "chat gpt-4o-mini",
                kind=SpanKind.CLIENT,
                attributes={
                    "gen_ai.operation.name": "chat",
                    "gen_ai.provider.name": "openai",
                    "gen_ai.request.model": "gpt-4o-mini",
                    "gen_ai.usage.input_tokens": 120,
                    "gen_ai.usage.output_tokens": 30,
                },
            ):
                pass
            for tool in tools:
                with tracer.start_as_current_span(
                    f"execute_tool {tool}",
                    attributes={
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": tool,
                        "gen_ai.tool.call.id": f"call_{i}_{tool}",
                        "gen_ai.tool.call.arguments": '{"query": "refund policy"}',
                    },
                ):
                    pass
        tid = format(root.get_span_context().trace_id, "032x")
        ids.append(tid)
        if "delete_records" in tools:
            forbidden.append(tid)
    provider.shutdown()
    return ids, forbidden


def fixture_request(name: str) -> ExportTraceServiceRequest:
    """A real request body (``pydantic-ai/d_forbidden_tool``), parsed."""
    req = ExportTraceServiceRequest()
    req.ParseFromString((TESTDATA / "pydantic-ai" / f"{name}.pb").read_bytes())
    return req


def rekeyed(req: ExportTraceServiceRequest) -> tuple[ExportTraceServiceRequest, str]:
    """A copy of ``req`` whose spans all move to one fresh random trace id."""
    out = ExportTraceServiceRequest()
    out.CopyFrom(req)
    tid = os.urandom(16)
    for rs in out.resource_spans:
        for ss in rs.scope_spans:
            for span in ss.spans:
                span.trace_id = tid
    return out, tid.hex()


def single_span_requests(req: ExportTraceServiceRequest) -> list[ExportTraceServiceRequest]:
    """One request per span, each keeping its resource and scope (as a per-span exporter)."""
    out = []
    for rs in req.resource_spans:
        for ss in rs.scope_spans:
            for span in ss.spans:
                one = ExportTraceServiceRequest()
                r = one.resource_spans.add()
                r.resource.CopyFrom(rs.resource)
                s = r.scope_spans.add()
                s.scope.CopyFrom(ss.scope)
                s.spans.add().CopyFrom(span)
                out.append(one)
    return out


def span_count(req: ExportTraceServiceRequest) -> int:
    return sum(len(ss.spans) for rs in req.resource_spans for ss in rs.scope_spans)


def wait_until(predicate: Callable[[], bool], timeout: float = 10.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout}s waiting for {what or predicate}")


FORGERIES = ("scope", "service", "grade-name", "none")
"""How ``send_forged_run`` dresses its ``delete_records`` span: in the grader's
instrumentation scope, under the grader's ``service.name``, in that scope named and
attributed like a grade span besides its tool attributes, or not at all (the control)."""


def send_forged_run(exporter: SpanExporter, forge: str) -> str:
    """One scripted support-agent run through the SDK that calls ``search_docs`` and the
    forbidden ``delete_records``, the latter dressed as the grader's own telemetry as
    ``forge`` says (``FORGERIES``). Returns the trace id."""
    from opentelemetry import trace

    agent = TracerProvider(resource=Resource.create({"service.name": "py-support-agent"}))
    forger = TracerProvider(resource=Resource.create({"service.name": "otel-oracles"}))
    for provider in (agent, forger):
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = agent.get_tracer("agent-test", "1.0")
    forged_tracer = {
        "scope": agent.get_tracer("otel_oracles"),
        "service": forger.get_tracer("agent-test", "1.0"),
        "grade-name": agent.get_tracer("otel_oracles"),
        "none": tracer,
    }[forge]

    def tool(use: trace.Tracer, name: str, span_name: str, extra: dict[str, str]) -> None:
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": f"call_{name}",
            "gen_ai.tool.call.arguments": '{"query": "refund policy"}',
            **extra,
        }
        with use.start_as_current_span(span_name, attributes=attributes):
            pass

    with tracer.start_as_current_span(
        "invoke_agent support_agent",
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support_agent"},
    ) as root:
        tool(tracer, "search_docs", "execute_tool search_docs", {})
        dress = (
            {"otel_oracles.contract.id": "support-rag", "otel_oracles.contract.version": "1",
             "otel_oracles.verdict": "pass", "otel_oracles.checks": "1"}
            if forge == "grade-name" else {}
        )  # fmt: skip
        name = "grade support-rag" if forge == "grade-name" else "execute_tool delete_records"
        tool(forged_tracer, "delete_records", name, dress)
    for provider in (agent, forger):
        provider.shutdown()
    return format(root.get_span_context().trace_id, "032x")
