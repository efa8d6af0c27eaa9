"""Runs split over traces are joined online: ``serve`` grades a multi-agent run cut into two
traces (by a span link, by a shared session id) as one subject, whichever trace arrives first,
with the verdicts ``otel-oracles grade`` gives on the same file; with ``join_window: 0`` each
trace is a subject; the waiting cap releases early and counts it; and after ``kill -9`` the
spool brings both traces back and they are joined again.

Real parts: ``serve`` in-process (threads) and as a subprocess (worker processes), the OTel
SDK's OTLP gRPC exporter sending one trace per export call, ``tests.support.otlp_sink`` as
the destination of the subprocess's results.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter

from tests.server.agent_traces import send_agent_traces, wait_until
from tests.server.conftest import Running
from tests.server.split_runs import (
    CUTS,
    SEARCH_FORBIDDEN,
    export_each_trace,
    offline_verdicts,
    readable_spans,
    split_capture,
    verdict_key,
)
from tests.server.test_serve_durability import grade_span_traces, kill_9
from tests.server.test_serve_process import ServeProcess
from tests.support.otlp_sink import OtlpSink


def _contracts(tmp_path: Path) -> Path:
    directory = tmp_path / "contracts"
    directory.mkdir(exist_ok=True)
    (directory / "no-search.yaml").write_text(SEARCH_FORBIDDEN)
    return directory


def _served_verdicts(bg: Running) -> list[tuple[object, ...]]:
    return sorted(verdict_key(v.model_dump(mode="json")) for v in bg.emitter.verdicts)


@pytest.mark.parametrize("first", ["original", "split_off"])
@pytest.mark.parametrize("cut", sorted(CUTS))
def test_a_run_split_over_two_traces_gets_the_offline_verdict(
    serve: Callable[..., Running], tmp_path: Path, cut: str, first: str
) -> None:
    contracts = _contracts(tmp_path)
    path, original, split_off = split_capture(cut, tmp_path)
    expected = offline_verdicts(path, contracts)
    assert len(expected) == 1, "offline grades the run as one subject"
    bg = serve(**{"grading.contracts": [str(contracts)], "assembly.join_window": "1s"})
    spans = readable_spans(path)
    order = [original, split_off] if first == "original" else [split_off, original]
    exporter = GrpcExporter(endpoint=bg.grpc_endpoint, insecure=True)
    export_each_trace(exporter, spans, order[:1])
    # The first trace completes and waits for the rest of its run (no verdict yet).
    wait_until(lambda: bg.stats()["joining"]["waiting_traces"] == 1, what="first trace waiting")
    export_each_trace(exporter, spans, order[1:])
    wait_until(lambda: bg.stats()["joining"]["subjects"] == 1, what="the joined subject")
    wait_until(lambda: len(bg.emitter.verdicts) == 1, what="its verdict")
    exporter.shutdown()
    assert _served_verdicts(bg) == expected
    ((verdict, trajectory),) = bg.emitter.results
    assert verdict.trace_id == original, "results go to the trace holding the run's root"
    sources = {s.source.trace_id for s in trajectory.steps if s.source is not None}
    assert sources == {original, split_off}, "each step keeps its own trace id"
    joining = bg.stats()["joining"]
    assert (joining["traces"], joining["released_early"], joining["waiting_traces"]) == (2, 0, 0)


def test_with_joining_off_each_trace_is_a_subject(
    serve: Callable[..., Running], tmp_path: Path
) -> None:
    contracts = _contracts(tmp_path)
    path, original, split_off = split_capture("link", tmp_path)
    bg = serve(**{"grading.contracts": [str(contracts)], "assembly.join_window": "0s"})
    exporter = GrpcExporter(endpoint=bg.grpc_endpoint, insecure=True)
    export_each_trace(exporter, readable_spans(path), [original, split_off])
    exporter.shutdown()
    wait_until(lambda: len(bg.emitter.verdicts) == 2, what="two verdicts")
    passed = {v.subject: v.passed for v in bg.emitter.verdicts}
    assert passed == {original: True, split_off: False}, "the search happened in the sub-run"
    assert "joining" not in bg.stats()


def test_past_the_waiting_cap_the_oldest_trace_is_graded_early_and_counted(
    serve: Callable[..., Running],
) -> None:
    bg = serve(**{"assembly.join_window": "60s", "assembly.join_max_traces": 1})
    exporter = GrpcExporter(endpoint=bg.grpc_endpoint, insecure=True)
    first = send_agent_traces(exporter, 1)[0]
    wait_until(lambda: bg.stats()["joining"]["waiting_traces"] == 1, what="first waiting")
    exporter = GrpcExporter(endpoint=bg.grpc_endpoint, insecure=True)
    second = send_agent_traces(exporter, 1)[0]
    wait_until(lambda: len(bg.emitter.verdicts) == 1, what="the early release")
    assert [v.trace_id for v in bg.emitter.verdicts] == first, "the one waiting longest"
    joining = bg.stats()["joining"]
    assert (joining["released_early"], joining["waiting_traces"]) == (1, 1)
    assert bg.shutdown(10), "the drain grades the trace still waiting"
    assert sorted(v.trace_id for v in bg.emitter.verdicts) == sorted(first + second)


def _config(tmp_path: Path, spool: Path, contracts: Path, join_window: str) -> Path:
    path = tmp_path / f"serve-join-{join_window}.yaml"
    path.write_text(
        "receivers:\n  grpc: {endpoint: '127.0.0.1:0'}\n  http: {endpoint: '127.0.0.1:0'}\n"
        "assembly: {decision_wait: 200ms, max_trace_age: 10m, sweep_interval: 20ms, "
        f"join_window: {join_window}}}\n"
        # One worker process: the members cross the pipe to it; one starts faster than two.
        f"grading: {{contracts: [{json.dumps(str(contracts))}], workers: 2, processes: 1}}\n"
        f"spool: {{path: {json.dumps(str(spool))}}}\n"
        "shutdown_timeout: 10s\n"
    )
    return path


def test_kill_9_while_joining_keeps_both_traces_and_the_restart_joins_them_again(
    tmp_path: Path, sink: OtlpSink
) -> None:
    contracts = _contracts(tmp_path)
    spool = tmp_path / "spool"
    path, original, split_off = split_capture("session", tmp_path)
    spans = readable_spans(path)

    # 1. Both traces complete and wait out a long join window; then SIGKILL.
    serve = ServeProcess(_config(tmp_path, spool, contracts, "60s"), sink, start_timeout=120)
    exporter = GrpcExporter(endpoint=f"127.0.0.1:{serve.grpc_port}", insecure=True)
    export_each_trace(exporter, spans, [split_off, original])
    exporter.shutdown()
    wait_until(lambda: serve.get("/stats")[1]["joining"]["waiting_traces"] == 2,
               what="both traces waiting in one group")  # fmt: skip
    assert grade_span_traces(sink) == [], "nothing graded before the kill"
    kill_9(serve)

    # 2. Restart on the same spool (worker processes grade): one subject, graded once.
    # (A worker process starting on a machine this loaded has taken over 30 s.)
    serve = ServeProcess(_config(tmp_path, spool, contracts, "1s"), sink, start_timeout=120)
    try:
        wait_until(lambda: grade_span_traces(sink) == [original], timeout=60, what="grade span")
        wait_until(lambda: serve.get("/stats")[1]["spool_requests"] == 0, what="spool emptied")
        # (counted after the spool let go of the traces)
        wait_until(lambda: bool(serve.get("/stats")[1]["verdicts"]), what="verdict counted")
        stats = serve.get("/stats")[1]
        assert (stats["joining"]["subjects"], stats["joining"]["traces"]) == (1, 2)
        assert stats["verdicts"] == {"fail": 1}, "the sub-run's search fails the joined run"
        verdict_lines = [json.loads(x) for x in serve.lines if '"msg": "verdict"' in x]
        assert [(v["trace_id"], v["member_trace_ids"]) for v in verdict_lines] == [
            (original, [original, split_off])
        ]
    finally:
        assert serve.stop() == 0
    assert grade_span_traces(sink) == [original], "graded exactly once"
