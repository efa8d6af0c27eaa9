"""``GradingSpanProcessor`` on a real SDK ``TracerProvider``: agent runs recorded by real
tracers on many threads and in an asyncio app are graded in-process, and their grade spans
reach a real OTLP receiver on 127.0.0.1 through the default emitter (``build_emitter``, as
``grade --export otlp``)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.trace import SpanKind, Tracer

from otel_oracles.emit import EmitResult, GradedPair, InMemoryEmitter
from otel_oracles.inprocess import GradingLogProcessor, GradingSpanProcessor, ProcessorLimits
from tests.support.otlp_sink import OtlpSink

CONTRACT = """\
id: support-inprocess
version: 3
invariants:
  - {type: tool_not_called, tool: delete_records, name: no-destructive-tools}
"""


@pytest.fixture
def contract(tmp_path: Path) -> Path:
    path = tmp_path / "support.yaml"
    path.write_text(CONTRACT, encoding="utf-8")
    return path


@pytest.fixture
def sink(monkeypatch: pytest.MonkeyPatch) -> Iterator[OtlpSink]:
    with OtlpSink() as s:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", s.http_endpoint)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
        yield s


def _tool_span(tracer: Tracer, tool: str, i: int) -> None:
    with tracer.start_as_current_span(
        f"execute_tool {tool}",
        attributes={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.call.id": f"call_{i}",
            "gen_ai.tool.call.arguments": json.dumps({"query": "refund"}),
        },
    ):
        pass


def _chat_span(tracer: Tracer) -> None:
    with tracer.start_as_current_span(
        "chat gpt-4o-mini",
        kind=SpanKind.CLIENT,
        attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini"},
    ):
        pass


def run_agent(tracer: Tracer, tools: Sequence[str]) -> str:
    """One agent run (its own trace): a model call, then ``tools``; returns the trace id."""
    with tracer.start_as_current_span(
        "invoke_agent support",
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"},
    ) as root:
        _chat_span(tracer)
        for i, tool in enumerate(tools):
            _tool_span(tracer, tool, i)
    return f"{root.get_span_context().trace_id:032x}"


async def run_agent_async(tracer: Tracer, tools: Sequence[str]) -> str:
    """``run_agent`` as an asyncio agent: every step awaits, so runs interleave."""
    with tracer.start_as_current_span(
        "invoke_agent support",
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"},
    ) as root:
        await asyncio.sleep(0)
        _chat_span(tracer)
        for i, tool in enumerate(tools):
            await asyncio.sleep(0)
            _tool_span(tracer, tool, i)
    return f"{root.get_span_context().trace_id:032x}"


def grade_spans(sink: OtlpSink, count: int) -> dict[str, str]:
    """trace id -> verdict of the grade spans the sink received (waits for ``count``)."""
    spans = sink.wait_for_spans(count, timeout=20)
    return {
        s.trace_id: s.attributes["otel_oracles.verdict"]
        for s in spans
        if "otel_oracles.verdict" in s.attributes
    }


def test_runs_on_many_threads_are_graded_and_exported(contract: Path, sink: OtlpSink) -> None:
    provider = TracerProvider()
    processor = GradingSpanProcessor([contract], limits=ProcessorLimits(wait_millis=20))
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("support-agent")
    expected: dict[str, str] = {}
    lock = threading.Lock()

    def agent(n: int) -> None:
        tools = ["search_docs", "delete_records"] if n % 3 == 0 else ["search_docs"]
        trace_id = run_agent(tracer, tools)
        with lock:
            expected[trace_id] = "fail" if n % 3 == 0 else "pass"

    threads = [threading.Thread(target=agent, args=(n,)) for n in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert provider.force_flush(20_000)
    assert grade_spans(sink, 12) == expected
    stats = processor.stats()
    assert (stats.graded_traces, stats.verdicts, stats.pending_traces) == (12, 12, 0)
    assert (stats.dropped_spans, stats.grading_errors, stats.export_failures) == (0, 0, 0)
    provider.shutdown()


def test_an_asyncio_app_is_graded_per_run(contract: Path, sink: OtlpSink) -> None:
    provider = TracerProvider()
    processor = GradingSpanProcessor([contract], limits=ProcessorLimits(wait_millis=20))
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("support-agent")

    async def app() -> list[str]:
        runs = [run_agent_async(tracer, ["search_docs"] * (n + 1)) for n in range(5)]
        runs.append(run_agent_async(tracer, ["delete_records"]))
        return list(await asyncio.gather(*runs))

    trace_ids = asyncio.run(app())
    provider.shutdown()  # grades what is pending and flushes the emitter
    assert grade_spans(sink, 6) == {t: "fail" if t == trace_ids[-1] else "pass" for t in trace_ids}
    assert processor.stats().graded_traces == 6


class BlockedEmitter(InMemoryEmitter):
    """An emitter whose export waits until released: the grader is stuck, as it would be
    behind a slow collector."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.release = threading.Event()

    def export(self, results: Sequence[GradedPair]) -> EmitResult:
        self.entered.set()
        assert self.release.wait(30), "the test never released the emitter"
        return super().export(results)


def test_ending_spans_never_waits_for_grading(contract: Path) -> None:
    emitter = BlockedEmitter()
    provider = TracerProvider()
    processor = GradingSpanProcessor(
        [contract], emitter=emitter, limits=ProcessorLimits(wait_millis=0)
    )
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("support-agent")
    try:
        run_agent(tracer, ["search_docs"])
        assert emitter.entered.wait(30)  # the worker is inside export, blocked
        for _ in range(5):  # the program goes on recording while the grader is stuck
            run_agent(tracer, ["search_docs"])
        assert emitter.verdicts == []
        assert not processor.force_flush(50)  # the deadline is kept, and said to be missed
    finally:
        emitter.release.set()
    assert processor.force_flush(20_000)
    assert [v.verdict for v in emitter.verdicts] == ["pass"] * 6
    provider.shutdown()


def test_memory_is_capped_and_every_drop_counted(contract: Path) -> None:
    emitter = InMemoryEmitter()
    provider = TracerProvider()
    limits = ProcessorLimits(wait_millis=0, max_spans_per_trace=3)
    processor = GradingSpanProcessor([contract], emitter=emitter, limits=limits)
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("support-agent")
    run_agent(tracer, ["delete_records", "search_docs"])  # 4 spans: over the span cap
    assert provider.force_flush(20_000)
    stats = processor.stats()
    assert stats.dropped_traces == 1 and stats.dropped_spans == 1
    assert emitter.verdicts == []  # the over-cap run is not graded on part of its spans
    provider.shutdown()


def test_full_buffer_drops_new_traces_counted(contract: Path) -> None:
    emitter = InMemoryEmitter()
    provider = TracerProvider()
    limits = ProcessorLimits(wait_millis=60_000, max_traces=1)
    processor = GradingSpanProcessor([contract], emitter=emitter, limits=limits)
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("support-agent")
    run_agent(tracer, ["search_docs"])  # waits 60 s for stragglers: holds the one place
    run_agent(tracer, ["delete_records"])  # 3 spans, no place
    stats = processor.stats()
    assert (stats.pending_traces, stats.dropped_traces, stats.dropped_spans) == (1, 1, 3)
    provider.shutdown()  # shutdown grades the pending trace without waiting its minute
    assert [v.verdict for v in emitter.verdicts] == ["pass"]


def test_stragglers_after_grading_are_counted_late(contract: Path) -> None:
    emitter = InMemoryEmitter()
    provider = TracerProvider()
    processor = GradingSpanProcessor(
        [contract], emitter=emitter, limits=ProcessorLimits(wait_millis=0)
    )
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("support-agent")
    with tracer.start_as_current_span("invoke_agent support") as root:
        background = tracer.start_span("execute_tool search_docs")  # outlives its run
        _chat_span(tracer)
    del root
    assert processor.force_flush(20_000)
    background.end()
    provider.shutdown()
    stats = processor.stats()
    assert (stats.graded_traces, stats.late_spans) == (1, 1)


def test_a_trace_whose_root_never_ends_is_evicted_in_time(contract: Path) -> None:
    emitter = InMemoryEmitter()
    provider = TracerProvider()
    limits = ProcessorLimits(wait_millis=0, max_trace_age_millis=50)
    processor = GradingSpanProcessor([contract], emitter=emitter, limits=limits)
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("support-agent")
    root = tracer.start_span("invoke_agent support")  # a crashed run: never ended
    with trace.use_span(root):
        _chat_span(tracer)  # a child ends; no root end ever wakes the grader
    deadline = time.monotonic() + 10
    while processor.stats().evicted_traces == 0:  # the worker's own timer, not ours
        assert time.monotonic() < deadline, processor.stats()
        time.sleep(0.01)
    assert processor.stats().pending_traces == 0
    provider.shutdown()
    assert emitter.verdicts == []


def test_shutdown_is_safe_twice_and_later_spans_are_counted(contract: Path) -> None:
    emitter = InMemoryEmitter()
    provider = TracerProvider()
    processor = GradingSpanProcessor([contract], emitter=emitter)
    provider.add_span_processor(processor)
    processor.shutdown()
    processor.shutdown()
    assert processor.force_flush(1_000)
    processor.on_end(_ended_span())
    assert processor.stats().dropped_spans == 1


def _ended_span() -> ReadableSpan:
    provider = TracerProvider()
    with provider.get_tracer("t").start_as_current_span("invoke_agent late") as span:
        pass
    return span


@pytest.mark.parametrize(
    ("limits", "message"),
    [
        ({"wait_millis": -1}, "wait_millis: must be >= 0, got -1"),
        ({"max_traces": 0}, "max_traces: must be >= 1, got 0"),
    ],
)
def test_bad_limits_name_the_argument(limits: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ProcessorLimits(**limits)


def test_no_contract_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="contracts: no contract given"):
        GradingSpanProcessor([tmp_path], emitter=InMemoryEmitter())


ANSWER_CONTRACT = """\
id: answer-in-logs
version: 1
evidence:
  - {field: final_output, name: answer-captured}
"""


def test_log_based_events_are_graded_with_their_spans(tmp_path: Path) -> None:
    """The answer is only in a log-based event (content capture through logs, as recent
    GenAI instrumentations do): with the log processor it is evidence; without, the same
    run lacks it."""
    contract = tmp_path / "answer.yaml"
    contract.write_text(ANSWER_CONTRACT, encoding="utf-8")
    limits = ProcessorLimits(wait_millis=0)
    with_logs, without_logs = InMemoryEmitter(), InMemoryEmitter()
    provider = TracerProvider()
    grader = GradingSpanProcessor([contract], emitter=with_logs, limits=limits)
    provider.add_span_processor(grader)
    provider.add_span_processor(
        GradingSpanProcessor([contract], emitter=without_logs, limits=limits)
    )
    loggers = LoggerProvider()
    loggers.add_log_record_processor(GradingLogProcessor(grader))
    tracer, logger = provider.get_tracer("support-agent"), loggers.get_logger("support-agent")
    answer = [{"role": "assistant", "parts": [{"type": "text", "content": "Refunds: 30 days."}]}]
    with tracer.start_as_current_span(
        "invoke_agent support",
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"},
    ):
        with tracer.start_as_current_span(
            "chat gpt-4o-mini",
            kind=SpanKind.CLIENT,
            attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini"},
        ):
            logger.emit(
                event_name="gen_ai.client.inference.operation.details",
                attributes={"gen_ai.output.messages": json.dumps(answer)},
            )
        logger.emit(body="a log line outside any GenAI event")
    logger.emit(body="no trace context: belongs to no run")
    loggers.shutdown()  # the log processor's shutdown grades what is pending
    assert [v.verdict for v in with_logs.verdicts] == ["pass"]
    assert provider.force_flush(20_000)  # the other grader, which has no log processor
    assert [v.verdict for v in without_logs.verdicts] == ["fail"]
    (missing,) = [r for r in without_logs.verdicts[0].results if not r.passed]
    assert (missing.name, missing.outcome.value) == ("answer-captured", "missing_evidence")
    provider.shutdown()
    assert grader.stats().late_spans == 0
