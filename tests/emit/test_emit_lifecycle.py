"""The Emitter seam: lifecycle rules for every emitter, fan-out deadline, no drops."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from otel_oracles.emit import (
    BatchingEmitter,
    EmitResult,
    EmitSettings,
    Emitter,
    FanOutEmitter,
    GradedPair,
    InMemoryEmitter,
    OtelEmitter,
    build_emitter,
)
from otel_oracles.emit import _names as n
from otel_oracles.emit._records import ItemBatch
from otel_oracles.emit._sinks import Sink
from otel_oracles.model.result import OracleResult, Outcome
from tests.emit.conftest import make_trajectory, make_verdict
from tests.support.otlp_sink import OtlpSink


def _pair() -> GradedPair:
    trajectory = make_trajectory()
    return make_verdict(trajectory), trajectory


FACTORIES: dict[str, Callable[[Path], Emitter]] = {
    "in_memory": lambda _: InMemoryEmitter(),
    "fan_out": lambda _: FanOutEmitter([InMemoryEmitter(), InMemoryEmitter()]),
    "otel_file": lambda tmp: build_emitter(None, tmp / "r.jsonl"),
    "batching": lambda _: BatchingEmitter(InMemoryEmitter(), batch_size=2),
}


@pytest.mark.parametrize("kind", FACTORIES)
def test_shutdown_is_idempotent_and_export_after_it_fails(kind: str, tmp_path: Path) -> None:
    emitter = FACTORIES[kind](tmp_path)
    assert emitter.export([_pair()]) is EmitResult.SUCCESS
    assert emitter.force_flush(5_000) is True
    emitter.shutdown()
    emitter.shutdown()
    assert emitter.export([_pair()]) is EmitResult.FAILURE, "export after shutdown must fail"


@pytest.mark.parametrize("kind", FACTORIES)
def test_shutdown_before_any_export_is_safe(kind: str, tmp_path: Path) -> None:
    emitter = FACTORIES[kind](tmp_path)
    emitter.shutdown()
    emitter.shutdown()


def test_in_memory_emitter_counts_what_it_refused_after_shutdown() -> None:
    emitter = InMemoryEmitter()
    emitter.export([_pair(), _pair()])
    emitter.shutdown()
    emitter.export([_pair()])
    assert len(emitter.results) == 2
    assert emitter.rejected_after_shutdown == 1


class _SlowFlush(InMemoryEmitter):
    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds
        self.given_ms: int | None = None

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        self.given_ms = timeout_millis
        time.sleep(self.seconds)
        return True


def test_fan_out_children_share_one_flush_deadline() -> None:
    first, second = _SlowFlush(0.3), _SlowFlush(0.0)
    fan = FanOutEmitter([first, second])
    assert fan.force_flush(1_000) is True
    assert first.given_ms is not None and 990 <= first.given_ms <= 1_000
    assert second.given_ms is not None and second.given_ms <= 720, "second gets what is left"
    assert FanOutEmitter([_SlowFlush(0.3), _SlowFlush(0.0)]).force_flush(200) is False


class _Failing(InMemoryEmitter):
    def export(self, results: Sequence[GradedPair]) -> EmitResult:
        return EmitResult.FAILURE


def test_fan_out_reports_failure_but_still_feeds_the_other_children() -> None:
    good = InMemoryEmitter()
    fan = FanOutEmitter([_Failing(), good])
    assert fan.export([_pair()]) is EmitResult.FAILURE
    assert len(good.results) == 1


def test_fan_out_exposes_the_real_metrics_of_a_child(tmp_path: Path) -> None:
    otel = build_emitter(None, tmp_path / "r.jsonl")
    fan = FanOutEmitter([InMemoryEmitter(), otel])
    assert fan.metrics is otel.metrics and not fan.metrics.is_noop
    assert InMemoryEmitter().metrics.is_noop
    fan.shutdown()


def _one_check_pair(i: int) -> GradedPair:
    trajectory = make_trajectory()
    result = OracleResult(
        oracle_type="tool_not_called",
        name="never-delete",
        outcome=Outcome.PASS,
        passed=True,
        message="ok",
        contract_id="c",
    )
    verdict = make_verdict(trajectory, [result], contract_id="c")
    return verdict.model_copy(update={"trace_id": f"{i + 1:032x}"}), trajectory


def test_no_result_is_dropped_count_in_equals_count_out(
    monkeypatch: pytest.MonkeyPatch, sink: OtlpSink
) -> None:
    """5,000 verdicts in one tight loop of export calls: every grade span and every
    evaluation log record arrives (the SDK's batch processor dropped about half)."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", sink.grpc_endpoint)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    emitter = build_emitter("otlp")
    assert isinstance(emitter, OtelEmitter)
    pairs = [_one_check_pair(i) for i in range(5_000)]
    for start in range(0, len(pairs), 250):
        assert emitter.export(pairs[start : start + 250]) is EmitResult.SUCCESS
    emitter.shutdown()
    spans = sink.wait_for_spans(5_000, timeout=30)
    logs = sink.wait_for_logs(5_000, timeout=30)
    assert len(spans) == 5_000 and len(logs) == 5_000, "count in must equal count out"
    assert len({s.trace_id for s in spans}) == 5_000, "each verdict's span in its own trace"
    assert emitter.stats.spans_exported == 5_000 and emitter.stats.log_records_exported == 5_000
    (traces,) = sink.metrics(n.METRIC_TRACES)
    assert sum(p.as_int for _, p in traces.points()) == 5_000


class _Recording(InMemoryEmitter):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[int] = []

    def export(self, results: Sequence[GradedPair]) -> EmitResult:
        self.calls.append(len(results))
        return super().export(results)


def test_batching_emitter_forwards_full_batches_and_the_rest_at_shutdown() -> None:
    inner = _Recording()
    batching = BatchingEmitter(inner, batch_size=3)
    for _ in range(7):
        assert batching.export([_pair()]) is EmitResult.SUCCESS
    assert inner.calls == [3, 3], "full batches are forwarded as they fill"
    batching.shutdown()
    assert inner.calls == [3, 3, 1], "the remainder is forwarded at shutdown, nothing dropped"
    assert len(inner.results) == 7


def test_batching_emitter_force_flush_forwards_pending_pairs() -> None:
    inner = _Recording()
    batching = BatchingEmitter(inner, batch_size=100)
    batching.export([_pair(), _pair()])
    assert inner.calls == []
    assert batching.force_flush(1_000) is True
    assert inner.calls == [2]


class _CollectorWatch(Sink):
    """Notes, for every batch it is handed, whether the cyclic collector was on and how
    many collections had started by then (``starts``, appended to by a gc callback)."""

    name = "watch"

    def __init__(self, starts: list[int]) -> None:
        self.starts = starts
        self.seen: list[tuple[bool, int]] = []

    def export(self, signal: Any, batch: ItemBatch[Any]) -> bool:
        self.seen.append((gc.isenabled(), len(self.starts)))
        return True

    def shutdown(self) -> None:
        pass


@pytest.mark.parametrize("enabled", [True, False], ids=["collecting", "paused-by-caller"])
def test_export_builds_without_collections_and_leaves_the_collector_as_it_found_it(
    enabled: bool,
) -> None:
    """``pause_collector`` (``grade``'s): a call's records are freed when it returns, and
    collections their allocations started rescanned the grader's heap. A caller's own
    setting is kept, also when a sink raises."""
    starts: list[int] = []
    watch = _CollectorWatch(starts)
    emitter = OtelEmitter(sinks=[watch], settings=EmitSettings(metrics=False), pause_collector=True)
    pairs = [_pair() for _ in range(10)]
    was = gc.isenabled()

    def started(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            starts.append(info["generation"])

    threshold = gc.get_threshold()
    gc.callbacks.append(started)
    try:
        (gc.enable if enabled else gc.disable)()
        gc.set_threshold(100)  # far fewer than the objects ten verdicts' records take
        gc.collect()
        before = len(starts)
        assert emitter.export(pairs) is EmitResult.SUCCESS
        assert gc.isenabled() is enabled
        assert watch.seen == [(False, before), (False, before)]
        watch.export = _raising  # type: ignore[method-assign]
        assert emitter.export(pairs) is EmitResult.FAILURE
        assert gc.isenabled() is enabled
    finally:
        gc.callbacks.remove(started)
        gc.set_threshold(*threshold)
        (gc.enable if was else gc.disable)()
    emitter.shutdown()


def _raising(signal: Any, batch: Any) -> bool:
    raise RuntimeError("sink down")


def test_an_emitter_leaves_the_collector_alone_unless_asked() -> None:
    """A host with other threads (an application's in-process processor, ``serve``'s
    receiver) must not have its collector paused for a network round trip."""
    watch = _CollectorWatch([])
    emitter = OtelEmitter(sinks=[watch], settings=EmitSettings(metrics=False))
    was = gc.isenabled()
    gc.enable()
    try:
        assert emitter.export([_pair()]) is EmitResult.SUCCESS
    finally:
        (gc.enable if was else gc.disable)()
    assert [on for on, _ in watch.seen] == [True, True]
    emitter.shutdown()
