"""A span's times are trace data: a tool span that never ended (end time 0, OTLP's unset) or
one whose end is before its start must not pass a latency budget. Before, such an end read as
a duration of 0 (per call) or as a negative trace duration (whole trace), so a tool call that
hung until the process died, or a sender writing garbage times, passed every budget.

The spans are made by the real OpenTelemetry SDK (its spans ended at explicit times, as an
instrumentation that takes its times from elsewhere ends them), encoded by the OTLP
exporter's own protobuf encoder, then decoded, mapped and graded as any body is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_oracles.grade.loader import parse_contract
from otel_oracles.mapping import load_conventions
from otel_oracles.model.result import Outcome
from otel_oracles.pipeline import grade_trace, read_traces

MS = 1_000_000
T0 = 1_796_209_347_000_000_000
"""A real clock reading (December 2026), so no time of the run is 0 but the unset ones."""

CONTRACT = parse_contract(
    {
        "id": "latency",
        "version": 1,
        "invariants": [
            {"type": "latency", "name": "run", "max_ms": 120_000},
            {"type": "latency", "name": "per-tool", "scope": "tool", "max_ms": 60_000},
        ],
    },
    "latency.yaml",
)


def _run(tmp_path: Path, tool_start: int, tool_end: int) -> dict[str, Outcome]:
    """An agent run of 2 s holding one model call and one ``search_docs`` call with the
    given times, sent as the body an OTLP exporter posts; each latency check's outcome."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test.agent")

    agent = tracer.start_span(
        "invoke_agent support",
        start_time=T0,
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"},
    )
    ctx = trace.set_span_in_context(agent)
    chat = tracer.start_span(
        "chat m",
        context=ctx,
        start_time=T0 + 10 * MS,
        attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"},
    )
    chat.end(end_time=T0 + 500 * MS)
    tool = tracer.start_span(
        "execute_tool search_docs",
        context=ctx,
        start_time=tool_start,
        attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search_docs"},
    )
    tool.end(end_time=tool_end)
    agent.end(end_time=T0 + 2000 * MS)
    provider.shutdown()
    path = tmp_path / "traces-1.pb"
    path.write_bytes(encode_spans(exporter.get_finished_spans()).SerializeToString())
    problems: list[Any] = []
    (read,) = read_traces([str(path)], problems)
    assert problems == []
    ((verdict, _),) = grade_trace(read, [CONTRACT], load_conventions())
    return {r.name: r.outcome for r in verdict.results}


def test_well_timed_tool_call_passes(tmp_path: Path) -> None:
    outcomes = _run(tmp_path, T0 + 600 * MS, T0 + 900 * MS)
    assert outcomes == {"run": Outcome.PASS, "per-tool": Outcome.PASS}


def test_tool_span_that_never_ended_is_missing_evidence(tmp_path: Path) -> None:
    outcomes = _run(tmp_path, T0 + 600 * MS, 0)
    assert outcomes == {"run": Outcome.MISSING_EVIDENCE, "per-tool": Outcome.MISSING_EVIDENCE}


def test_tool_span_ending_before_it_starts_never_passes(tmp_path: Path) -> None:
    """Its duration is unknown (per call: missing); both its instants belong to the run, and
    300 s between them put the run over its 120 s budget."""
    outcomes = _run(tmp_path, T0 + 600 * MS, T0 + 600 * MS - 300_000 * MS)
    assert outcomes == {"run": Outcome.INVARIANT_FAILURE, "per-tool": Outcome.MISSING_EVIDENCE}


def test_run_already_over_budget_fails_whatever_the_unended_span(tmp_path: Path) -> None:
    """A failure stands on the times known: the run took 200 s before the tool call that
    never ended started."""
    outcomes = _run(tmp_path, T0 + 200_000 * MS, 0)
    assert outcomes["run"] == Outcome.INVARIANT_FAILURE
