"""An instrumented "agent" for the collector end-to-end tests.

Why a separate program: the tests must prove the pipeline with telemetry produced the way a
real agent produces it, so this process uses the real OpenTelemetry Python SDK (tracer
provider, batch span processor, OTLP/gRPC exporter) and the GenAI semantic conventions
(``invoke_agent`` root, ``chat`` generations, ``execute_tool`` calls), exported to a real
collector. No model is called; the scenario decides which tools the "model" asks for.

Scenarios (graded against ``tests/collector/contracts/support-agent.yaml``):

=================  ==========================================  ===================
scenario           what the agent does                         expected verdict
=================  ==========================================  ===================
``ok``             search_docs once, answers                   pass
``one_retry``      search_docs fails once, retried, answers    pass (1 tolerated)
``retry_storm``    search_docs fails 3 times, then works       fail (budget)
``forbidden``      calls delete_records                        fail (invariant)
``blind``          tool spans without gen_ai.tool.name         fail (evidence)
=================  ==========================================  ===================

Trace and span ids come from a seeded generator (``--seed``), so the same run sent through
two pipelines produces the same trace ids and the tests can compare results trace by trace.

Usage::

    python tests/collector/agent_program.py --endpoint http://127.0.0.1:4317 \\
        --scenario ok --scenario forbidden --repeat 5 --seed 7 --out traces.jsonl

Every trace's id, scenario and expected verdict is written to ``--out`` (JSON lines) after
the exporter has flushed; the exit code is 1 if the flush failed.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from opentelemetry._logs import SeverityNumber
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import Logger, LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Tracer, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import SpanKind, Status, StatusCode

SERVICE_NAME = "collector-e2e-agent"
AGENT_NAME = "support"
MODEL = "gpt-4o-mini"


@dataclass(frozen=True)
class Scenario:
    name: str
    tools: tuple[tuple[str, bool], ...]
    """(tool name, succeeded) in call order."""
    expected_verdict: str
    expected_outcomes: tuple[tuple[str, str], ...]
    """(oracle type, outcome) the contract must give."""


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            "ok",
            (("search_docs", True),),
            "pass",
            (("tool_not_called", "pass"), ("tool_retries", "pass")),
        ),
        Scenario(
            "one_retry",
            (("search_docs", False), ("search_docs", True)),
            "pass",
            (("tool_not_called", "pass"), ("tool_retries", "tolerated")),
        ),
        Scenario(
            "retry_storm",
            (
                ("search_docs", False),
                ("search_docs", False),
                ("search_docs", False),
                ("search_docs", True),
            ),
            "fail",
            (("tool_not_called", "pass"), ("tool_retries", "budget_exhausted")),
        ),
        Scenario(
            "blind",
            (("", True),),
            "fail",
            (("tool_not_called", "missing_evidence"), ("tool_retries", "missing_evidence")),
        ),
        Scenario(
            "forbidden",
            (("search_docs", True), ("delete_records", True)),
            "fail",
            (("tool_not_called", "invariant_failure"), ("tool_retries", "pass")),
        ),
    )
}


class SeededIds(IdGenerator):
    """Deterministic ids: the same ``--seed`` yields the same traces in every pipeline."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)

    def generate_span_id(self) -> int:
        return self._rng.getrandbits(64) or 1

    def generate_trace_id(self) -> int:
        return self._rng.getrandbits(128) or 1


def _chat(tracer: Tracer, tool: str | None, turn: int) -> None:
    """One ``chat`` span: the model either asks for ``tool`` or gives the final answer."""
    with tracer.start_as_current_span(f"chat {MODEL}", kind=SpanKind.CLIENT) as span:
        span.set_attribute("gen_ai.operation.name", "chat")
        span.set_attribute("gen_ai.provider.name", "openai")
        span.set_attribute("gen_ai.request.model", MODEL)
        span.set_attribute("gen_ai.response.model", MODEL)
        span.set_attribute("gen_ai.agent.name", AGENT_NAME)
        span.set_attribute("gen_ai.usage.input_tokens", 120 + 30 * turn)
        span.set_attribute("gen_ai.usage.output_tokens", 25)
        span.set_attribute("gen_ai.response.finish_reasons", ["tool_calls" if tool else "stop"])


def _tool(tracer: Tracer, logger: Logger, tool: str, ok: bool, call: int) -> None:
    """One ``execute_tool`` span; a failed call has error status and ``error.type``. An
    empty ``tool`` leaves the tool name out, as an instrumentation that captures nothing
    would: the grader must report missing evidence, not "the tool was not called"."""
    name = f"execute_tool {tool}" if tool else "execute_tool"
    with tracer.start_as_current_span(name, kind=SpanKind.INTERNAL) as span:
        span.set_attribute("gen_ai.operation.name", "execute_tool")
        if tool:
            span.set_attribute("gen_ai.tool.name", tool)
        span.set_attribute("gen_ai.tool.call.id", f"call_{call}")
        span.set_attribute("gen_ai.tool.type", "function")
        span.set_attribute("gen_ai.agent.name", AGENT_NAME)
        time.sleep(0.001)
        # an application log inside the tool span: it carries the trace id, so the
        # collector must route it to the same grader replica as the spans
        logger.emit(
            body=f"tool call {call} finished",
            severity_number=SeverityNumber.INFO if ok else SeverityNumber.WARN,
            attributes={"e2e.tool.call": call},
        )
        if not ok:
            span.set_attribute("error.type", "TimeoutError")
            span.set_status(Status(StatusCode.ERROR, "search backend timed out"))


def run_scenario(tracer: Tracer, logger: Logger, scenario: Scenario) -> str:
    """Emit one agent run; returns its trace id (32 hex)."""
    with tracer.start_as_current_span(f"invoke_agent {AGENT_NAME}", kind=SpanKind.INTERNAL) as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("gen_ai.agent.name", AGENT_NAME)
        root.set_attribute("gen_ai.provider.name", "openai")
        root.set_attribute("gen_ai.request.model", MODEL)
        root.set_attribute("e2e.scenario", scenario.name)
        for call, (tool, ok) in enumerate(scenario.tools):
            _chat(tracer, tool, call)
            _tool(tracer, logger, tool, ok, call)
        _chat(tracer, None, len(scenario.tools))
        return format(root.get_span_context().trace_id, "032x")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--endpoint", required=True, help="OTLP/gRPC endpoint of the collector")
    parser.add_argument("--scenario", action="append", choices=sorted(SCENARIOS), default=[])
    parser.add_argument("--repeat", type=int, default=1, help="runs of each scenario")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pause", type=float, default=0.0, help="seconds between traces")
    parser.add_argument("--out", type=Path, required=True, help="JSON lines of trace ids")
    args = parser.parse_args(argv)

    resource = Resource.create({"service.name": SERVICE_NAME, "service.version": "1.0.0"})
    provider = TracerProvider(resource=resource, id_generator=SeededIds(args.seed))
    exporter = OTLPSpanExporter(endpoint=args.endpoint, insecure=True, timeout=10)
    provider.add_span_processor(
        BatchSpanProcessor(exporter, schedule_delay_millis=100, max_export_batch_size=256)
    )
    tracer = provider.get_tracer("collector-e2e-agent", "1.0.0")
    log_provider = LoggerProvider(resource=resource)
    log_provider.add_log_record_processor(
        BatchLogRecordProcessor(
            OTLPLogExporter(endpoint=args.endpoint, insecure=True, timeout=10),
            schedule_delay_millis=100,
        )
    )
    logger = log_provider.get_logger("collector-e2e-agent", "1.0.0")

    rows: list[dict[str, object]] = []
    for _ in range(args.repeat):
        for name in args.scenario or sorted(SCENARIOS):
            scenario = SCENARIOS[name]
            trace_id = run_scenario(tracer, logger, scenario)
            rows.append(
                {
                    "trace_id": trace_id,
                    "scenario": name,
                    "expected_verdict": scenario.expected_verdict,
                    "expected_outcomes": dict(scenario.expected_outcomes),
                    "log_records": len(scenario.tools),
                }
            )
            if args.pause:
                time.sleep(args.pause)
    flushed = provider.force_flush(timeout_millis=30_000)
    flushed = log_provider.force_flush(timeout_millis=30_000) and flushed
    provider.shutdown()
    log_provider.shutdown()
    args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    if not flushed:
        print("agent_program: the exporter did not flush in 30 s", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
