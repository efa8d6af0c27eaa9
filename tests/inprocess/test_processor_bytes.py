"""``GradingSpanProcessor`` holds spans in the agent's own process, so what it holds must be
bounded in bytes, not only in spans and traces: 10,000 spans of a 1 MB attribute each are
within every count limit and would be 10 GB. Real SDK providers record real spans and log
records; the memory one run costs is measured in a fresh interpreter (``/proc`` RSS)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk.trace import TracerProvider

from otel_oracles.emit import InMemoryEmitter
from otel_oracles.inprocess import GradingLogProcessor, GradingSpanProcessor, ProcessorLimits

CONTRACT = """\
id: support-inprocess
version: 3
invariants:
  - {type: tool_not_called, tool: delete_records, name: no-destructive-tools}
"""

ROOT = Path(__file__).resolve().parents[2]

# One agent run whose root is still open while 200 tool spans of a 1 MB argument each end:
# every count limit is far away (200 of 10,000 spans, one trace of 1,000).
_LARGE_RUN = """
import json, sys, gc
from opentelemetry.sdk.trace import TracerProvider
from otel_oracles.emit import InMemoryEmitter
from otel_oracles.inprocess import GradingSpanProcessor

def rss() -> int:
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")

emitter = InMemoryEmitter()
provider = TracerProvider()
processor = GradingSpanProcessor([sys.argv[1]], emitter=emitter)
provider.add_span_processor(processor)
tracer = provider.get_tracer("support-agent")
gc.collect()
before = rss()
root = tracer.start_span("invoke_agent support", attributes={
    "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"})
from opentelemetry import trace
with trace.use_span(root):
    for i in range(200):
        with tracer.start_as_current_span("execute_tool search_docs", attributes={
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search_docs",
            "gen_ai.tool.call.arguments": str(i) + "x" * 1_000_000}):
            pass
gc.collect()
held = rss() - before
root.end()
assert provider.force_flush(60_000)
stats = processor.stats()
provider.shutdown()
print(json.dumps({"held": held, "stats": stats.__dict__ if hasattr(stats, "__dict__") else
    {k: getattr(stats, k) for k in stats.__slots__}, "verdicts": len(emitter.verdicts)}))
"""


def test_a_run_of_large_spans_is_bounded_in_bytes(tmp_path: Path) -> None:
    """200 spans of 1 MB under an open root: the processor keeps at most its per-trace byte
    budget (64 MiB by default), counts the rest as dropped, and does not grade the run on
    part of its spans (as over the span cap)."""
    contract = tmp_path / "support.yaml"
    contract.write_text(CONTRACT, encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-c", _LARGE_RUN, str(contract)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        check=True,
    )
    result = json.loads(out.stdout.splitlines()[-1])
    stats = result["stats"]
    assert result["held"] < 120 * 1024 * 1024, result  # 200 MB without a byte bound
    assert stats["dropped_traces"] == 1 and stats["dropped_spans"] >= 130, stats
    assert stats["buffered_bytes"] == 0, stats  # nothing held once the run was dropped
    assert result["verdicts"] == 0  # never a verdict on part of a run


def _provider(
    contract: Path, limits: ProcessorLimits
) -> tuple[TracerProvider, GradingSpanProcessor, InMemoryEmitter]:
    emitter = InMemoryEmitter()
    provider = TracerProvider()
    processor = GradingSpanProcessor([contract], emitter=emitter, limits=limits)
    provider.add_span_processor(processor)
    return provider, processor, emitter


def _run(provider: TracerProvider, argument_chars: int) -> None:
    tracer = provider.get_tracer("support-agent")
    with (
        tracer.start_as_current_span(
            "invoke_agent support",
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"},
        ),
        tracer.start_as_current_span(
            "execute_tool search_docs",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "search_docs",
                "gen_ai.tool.call.arguments": "x" * argument_chars,
            },
        ),
    ):
        pass


def test_buffered_bytes_are_accounted_and_released(tmp_path: Path) -> None:
    """Every held span's bytes are counted while its trace waits and given back when it is
    graded; a trace whose spans would take the buffer past ``max_buffered_bytes`` is not
    kept (its spans counted at once, the trace when its wait is over), the traces already
    held are graded."""
    contract = tmp_path / "support.yaml"
    contract.write_text(CONTRACT, encoding="utf-8")
    limits = ProcessorLimits(wait_millis=60_000, max_buffered_bytes=250_000)
    provider, processor, emitter = _provider(contract, limits)
    _run(provider, 100_000)
    held_one = processor.stats().buffered_bytes
    assert 100_000 <= held_one < 102_000
    _run(provider, 100_000)
    assert processor.stats().buffered_bytes == 2 * held_one
    _run(provider, 100_000)  # a third would pass 250,000: its two spans not kept
    stats = processor.stats()
    assert (stats.dropped_spans, stats.buffered_bytes) == (2, 2 * held_one), stats
    assert processor.force_flush(30_000)
    stats = processor.stats()
    assert (stats.graded_traces, stats.dropped_traces, stats.buffered_bytes) == (2, 1, 0), stats
    assert [v.verdict for v in emitter.verdicts] == ["pass", "pass"]
    provider.shutdown()


def test_log_records_count_in_the_trace_bytes(tmp_path: Path) -> None:
    """Log-based events (prompts and answers as log records) are held with their trace's
    spans and count in its byte budget: a run whose records pass ``max_trace_bytes`` is not
    graded on part of them."""
    contract = tmp_path / "support.yaml"
    contract.write_text(CONTRACT, encoding="utf-8")
    limits = ProcessorLimits(wait_millis=0, max_trace_bytes=300_000)
    provider, processor, emitter = _provider(contract, limits)
    loggers = LoggerProvider()
    loggers.add_log_record_processor(GradingLogProcessor(processor))
    tracer, logger = provider.get_tracer("support-agent"), loggers.get_logger("support-agent")
    with tracer.start_as_current_span("invoke_agent support"):
        for _ in range(5):
            logger.emit(
                event_name="gen_ai.client.inference.operation.details",
                attributes={"gen_ai.output.messages": "y" * 100_000},
            )
    assert processor.force_flush(30_000)
    stats = processor.stats()
    assert stats.dropped_traces == 1 and stats.dropped_spans >= 2, stats
    assert stats.buffered_bytes == 0 and emitter.verdicts == []
    provider.shutdown()


# One agent run that emits one log record whose body is built by ``sys.argv[2]``; prints the
# processor's counts, the verdicts and whether anything was logged as an exception.
_HOSTILE_BODY_RUN = """
import json, logging, sys, time
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk.trace import TracerProvider
from otel_oracles.emit import InMemoryEmitter
from otel_oracles.inprocess import GradingLogProcessor, GradingSpanProcessor, ProcessorLimits

errors = []
class Catch(logging.Handler):
    def emit(self, record):
        errors.append(record.getMessage())
logging.getLogger("otel_oracles").addHandler(Catch())

body = "x"
if sys.argv[2] == "deep":  # a list nested 100,000 deep
    for _ in range(100_000):
        body = [body]
else:  # a list holding the one below twice, 40 levels: 2^40 values once written out
    for _ in range(40):
        body = [body, body]
emitter = InMemoryEmitter()
provider = TracerProvider()
processor = GradingSpanProcessor([sys.argv[1]], emitter=emitter,
                                 limits=ProcessorLimits(wait_millis=0))
provider.add_span_processor(processor)
loggers = LoggerProvider()
loggers.add_log_record_processor(GradingLogProcessor(processor))
tracer, logger = provider.get_tracer("support-agent"), loggers.get_logger("support-agent")
start = time.process_time()
with tracer.start_as_current_span("invoke_agent support", attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"}):
    logger.emit(event_name="gen_ai.client.inference.operation.details", body=body)
emit_seconds = time.process_time() - start
assert provider.force_flush(60_000)
stats = processor.stats()
print(json.dumps({"stats": {k: getattr(stats, k) for k in stats.__slots__},
                  "verdicts": len(emitter.verdicts), "errors": errors,
                  "emit_seconds": emit_seconds}))
"""


@pytest.mark.parametrize("shape", ["deep", "shared"])
def test_a_hostile_log_body_is_bounded_not_lost(shape: str, tmp_path: Path) -> None:
    """A log body is whatever the program hands the SDK, not an attribute the SDK checked.
    Nested 100,000 deep, counting it ended in ``RecursionError`` on the agent's thread: the
    record was lost, logged as an exception, and the run graded without it (a verdict on
    part of a run). A list holding the one below twice, 40 levels down, is 2^40 values once
    written out: counting them never ended. Both are now counted past the trace's byte
    budget (or the decoder's nesting limit) at once: the record is not kept, the run not
    graded, both counted."""
    contract = tmp_path / "support.yaml"
    contract.write_text(CONTRACT, encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-c", _HOSTILE_BODY_RUN, str(contract), shape],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        check=True,
    )
    result = json.loads(out.stdout.splitlines()[-1])
    stats = result["stats"]
    assert result["errors"] == [], result["errors"]
    assert stats["dropped_traces"] == 1 and stats["dropped_spans"] >= 1, stats
    assert result["verdicts"] == 0 and stats["buffered_bytes"] == 0, result
    assert result["emit_seconds"] < 30, result  # at most max_trace_bytes / 16 values walked
