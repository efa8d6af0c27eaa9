"""``serve`` grading in worker processes (``grading.processes``), as a real subprocess: results
reach the sink from the workers, metrics from the receiving process only, a slow check holds
one thread, a killed worker is counted and replaced, SIGTERM still drains everything."""

from __future__ import annotations

import gc
import json
import os
import pickle
import signal
import subprocess
import sys
import time
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter

from otel_oracles import _native
from otel_oracles.decode import RequestBody, WireLog, WireSpan
from otel_oracles.server import _processes
from tests.server.agent_traces import send_agent_traces, wait_until
from tests.server.conftest import CONTRACTS
from tests.server.test_serve_process import ServeProcess, grade_spans
from tests.support.otlp_sink import OtlpSink

SLOW_CONTRACT = (
    "id: slow-tests\nname: slow\ndescription: a slow test_must_pass\n"
    "workspace: {README.md: x}\nmatch: {resource: {service.name: slow-agent}}\n"
    "invariants:\n  - {type: test_must_pass, command: 'sleep 4', timeout: 30}\n"
)

REPLACEMENT_STARTS = 120.0
"""Seconds a replacement worker may take to start and export: a bound for a stalled test,
not a figure (it starts in 1-3 s on an idle machine)."""


def config(tmp_path: Path, processes: int = 2, workers: int = 2, slow: bool = False) -> Path:
    contracts = [str(CONTRACTS)]
    if slow:
        (tmp_path / "slow.yaml").write_text(SLOW_CONTRACT)
        contracts.append(str(tmp_path / "slow.yaml"))
    path = tmp_path / "serve.yaml"
    path.write_text(
        "receivers:\n  grpc: {endpoint: '127.0.0.1:0'}\n  http: {endpoint: '127.0.0.1:0'}\n"
        # No join window: these tests time verdicts, and none of their runs spans traces.
        "assembly: {decision_wait: 0.2s, sweep_interval: 20ms, join_window: 0s}\n"
        f"grading: {{contracts: {json.dumps(contracts)}, processes: {processes}, "
        f"workers: {workers}, commands: sandbox}}\n"
        "shutdown_timeout: 15s\n"
    )
    return path


def worker_pids(parent: int) -> list[int]:
    """The grading workers among the children of ``parent`` (multiprocessing also starts
    its resource tracker)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if int(fields[1]) == parent and b"resource_tracker" not in cmdline:
            out.append(int(stat.parent.name))
    return out


def test_workers_grade_and_export_while_metrics_come_from_one_process(
    tmp_path: Path, sink: OtlpSink
) -> None:
    serve = ServeProcess(config(tmp_path), sink)
    try:
        assert len(worker_pids(serve.proc.pid)) == 2
        stats = serve.get("/stats")[1]
        assert stats["grading_processes"] == 2
        url = f"http://127.0.0.1:{serve.http_port}/v1/traces"
        ids, bad = send_agent_traces(HttpExporter(endpoint=url), 8)
        wait_until(lambda: set(ids) <= set(grade_spans(sink)), timeout=20, what="8 grade spans")
        spans = grade_spans(sink)
        assert {t for t in ids if spans[t]["otel_oracles.verdict"] == "fail"} == set(bad)
        wait_until(lambda: bool(sink.log_records()), what="evaluation events from the workers")
        # Counted while running (not only at shutdown), once per trace: workers send their
        # counts and the receiving process records them (periodic export every 0.5 s).
        wait_until(lambda: verdicts_counted(sink) == len(ids), timeout=15, what="metrics")
        assert serve.get("/stats")[1]["received"]["http.traces"] == 8 * 3 + 4
    finally:
        assert serve.stop() == 0
    # Two processes exporting the same series would overwrite each other's counts here.
    assert verdicts_counted(sink) == len(ids)


def verdicts_counted(sink: OtlpSink) -> int:
    """Sum over series of the latest cumulative ``otel_oracles.grade.traces`` values."""
    last: dict[tuple[tuple[str, object], ...], int] = {}
    for m in sink.metrics("otel_oracles.grade.traces"):
        for attrs, point in m.points():
            last[tuple(sorted(attrs.items()))] = point.as_int
    return sum(last.values())


def test_slow_check_in_one_worker_does_not_stall_the_others(tmp_path: Path, sink: OtlpSink) -> None:
    serve = ServeProcess(config(tmp_path, slow=True), sink)
    try:
        url = f"http://127.0.0.1:{serve.http_port}/v1/traces"
        slow_ids, _ = send_agent_traces(HttpExporter(endpoint=url), 1, service="slow-agent")
        time.sleep(0.5)  # the slow trace is grading now
        t0 = time.monotonic()
        ids, _ = send_agent_traces(HttpExporter(endpoint=url), 6)
        wait_until(lambda: set(ids) <= set(grade_spans(sink)), timeout=15, what="fast verdicts")
        assert time.monotonic() - t0 < 3.0, "fast traces waited behind the slow test_must_pass"
        assert slow_ids[0] not in grade_spans(sink), "the slow one is still grading"
        wait_until(lambda: slow_ids[0] in grade_spans(sink), timeout=20, what="slow verdict")
    finally:
        assert serve.stop() == 0


def test_a_killed_worker_is_counted_and_replaced(tmp_path: Path, sink: OtlpSink) -> None:
    serve = ServeProcess(config(tmp_path, processes=1, slow=True), sink)
    try:
        url = f"http://127.0.0.1:{serve.http_port}/v1/traces"
        (slow,), _ = send_agent_traces(HttpExporter(endpoint=url), 1, service="slow-agent")
        wait_until(lambda: serve.get("/stats")[1]["grading_inflight"] == 1, what="in flight")
        (worker,) = worker_pids(serve.proc.pid)
        os.kill(worker, signal.SIGKILL)  # a real crash: the OOM killer does the same
        serve.wait_for_line("exited with 1 traces in hand", timeout=30)
        # Replaced right after the loss is logged (its start is not waited for).
        wait_until(lambda: serve.get("/stats")[1]["worker_restarts"] == 1, what="restart")
        # The replacement exports the lost trace's error verdicts once it has started (its
        # imports, contracts and conventions: seconds, far more on a loaded machine).
        assert sink.wait_for(
            lambda s: grade_spans(s).get(slow, {}).get("otel_oracles.verdict") == "error",
            timeout=REPLACEMENT_STARTS,
        ), f"no error verdict for the lost trace: {serve.lines[-5:]}"
        # Counted when the replacement says the verdicts follow, before it exports them.
        wait_until(lambda: serve.get("/stats")[1]["grading_errors"] == 1, what="lost trace")
        ids, _ = send_agent_traces(HttpExporter(endpoint=url), 3)
        wait_until(lambda: set(ids) <= set(grade_spans(sink)), timeout=30, what="graded after")
        assert worker not in worker_pids(serve.proc.pid)
    finally:
        assert serve.stop() == 0


def test_sigterm_with_workers_drains_and_leaves_no_process_behind(
    tmp_path: Path, sink: OtlpSink
) -> None:
    serve = ServeProcess(config(tmp_path), sink)
    children = worker_pids(serve.proc.pid)
    url = f"http://127.0.0.1:{serve.http_port}/v1/traces"
    ids, _ = send_agent_traces(HttpExporter(endpoint=url), 4)
    assert serve.stop() == 0
    assert set(ids) <= set(grade_spans(sink)), "every buffered trace is graded on SIGTERM"
    for pid in children:
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text()


def test_log_based_events_reach_the_worker_with_their_trace(tmp_path: Path, sink: OtlpSink) -> None:
    """Tool calls present only in log records (openai-v2 instrumentation) are graded by a
    worker process: the log records travel like spans (body once, records by position)."""
    import urllib.request

    from tests.server.agent_traces import TESTDATA

    serve = ServeProcess(config(tmp_path), sink)
    try:
        for name, path in (("d_forbidden_tool.logs.pb", "/v1/logs"),
                           ("d_forbidden_tool.pb", "/v1/traces")):  # fmt: skip
            body = (TESTDATA / "openai-v2" / name).read_bytes()
            req = urllib.request.Request(
                f"http://127.0.0.1:{serve.http_port}{path}",
                data=body,
                headers={"Content-Type": "application/x-protobuf"},
            )
            with urllib.request.urlopen(req, timeout=10) as r:
                assert r.status == 200
        wait_until(lambda: len(grade_spans(sink)) == 1, what="the verdict")
        (attrs,) = grade_spans(sink).values()
        assert attrs["otel_oracles.verdict"] == "fail", "delete_records is in the logs only"

        def outcomes() -> set[object]:
            return {r.attributes.get("otel_oracles.outcome") for r in sink.log_records()}

        # The evaluation log records are exported next to the grade span, not with it.
        wait_until(lambda: "invariant_failure" in outcomes(), what="the failed check's event")
        stats = serve.get("/stats")[1]
        assert stats["received"]["http.logs"] > 0 and stats["late"] == 0
    finally:
        assert serve.stop() == 0


@pytest.mark.parametrize("cuttable", [True, False])
def test_a_worker_builds_the_records_of_the_positions_it_is_sent_in_order(cuttable: bool) -> None:
    """Both sides of the hand-over (``_processes._message``, ``_build_records``): a message
    carries a part of each body its traces have records in (cut down to those records, or
    the whole body when it cannot be cut), the references sent for ``WireSpan``s and
    ``WireLog``s become those records in each trace's order, records sent whole stay as
    they are, and a record of a body that could not be sent fails the worker (which is then
    replaced)."""
    traces = Path(__file__).resolve().parents[1] / "testdata" / "traces"
    spans_pb = (traces / "pydantic-ai" / "g_handoff.raw" / "1.pb").read_bytes()
    logs_pb = (traces / "openai-java" / "m_excess_calls.nocontent.raw" / "logs-4.pb").read_bytes()
    spans_body = RequestBody(spans_pb, "proto-traces", cuttable=cuttable)
    logs_body = RequestBody(logs_pb, "proto-logs", cuttable=cuttable)
    span_batch, _ = _native.decode_proto(spans_pb, "traces")
    log_batch, _ = _native.decode_proto(logs_pb, "logs")
    every_span, _ = span_batch.records()
    _, every_log = log_batch.records()

    transfer = _native.decode_proto(spans_pb, "traces", True)[0].transfer_spans(spans_body)

    def wire(index: int) -> WireSpan:
        return transfer[index]  # as the receiving process releases it

    whole = every_span[2]
    log = WireLog(logs_body, 1, every_log[1], every_log[1].resource)
    items = [(0, "t0", [wire(3), whole, wire(0)], [log], "complete", None),
             (1, "t1", [wire(1)], [], "complete", None)]  # fmt: skip

    def sent(payload_of: Callable[[RequestBody], bytes]) -> tuple[Any, ...]:
        return pickle.loads(_processes._message(("grade", items), payload_of))  # type: ignore[no-any-return]

    msg = sent(lambda body: body.payload)
    (_, spans_part, spans_id, spans_order), (_, logs_part, logs_id, logs_order) = msg[2]
    assert (len(spans_part) < len(spans_pb)) is cuttable
    assert (len(logs_part) < len(logs_pb)) is cuttable
    assert (spans_id, logs_id) == ((None, None) if cuttable else (spans_body.id, logs_body.id))
    assert (spans_order, logs_order) == (
        (array("I", [0, 1, 3]).tobytes(), array("I", [1]).tobytes()) if cuttable else (None, None)
    )
    built = _processes._build_records(
        msg[1], msg[2], _native.RecordBuilder(), _processes._WholeBodies()
    )
    assert built[0][2] == [every_span[3], whole, every_span[0]]
    assert built[0][3] == [every_log[1]]
    assert built[1][2] == [every_span[1]]
    assert built[1][3] == []
    assert [item[:2] + item[4:] for item in built] == [
        (0, "t0", "complete", None),
        (1, "t1", "complete", None),
    ]
    assert type(items[0][2][0]) is WireSpan, "the parent keeps its stand-ins"
    with pytest.raises(TypeError):  # a stand-in travels as a reference, never as itself
        pickle.dumps(items[0][2][0])
    assert not gc.is_tracked(items[0][2][0]), "the collector never scans a stand-in"

    def spilled(body: RequestBody) -> bytes:
        if body is logs_body:
            raise LookupError("not in the spool")
        return body.payload

    msg = sent(spilled)
    assert msg[2][1] is None, "the logs body is not sent"
    with pytest.raises(IndexError, match="not sent"):
        _processes._build_records(
            msg[1], msg[2], _native.RecordBuilder(), _processes._WholeBodies()
        )


def test_a_whole_body_is_decoded_once_for_the_messages_that_need_it() -> None:
    """A body that cannot be cut (JSON) goes whole with every message holding records of
    it (its traces are released over several sweeps): the worker decodes it once while it
    keeps it (``_WholeBodies``), builds the same records from it, and forgets the oldest
    body beyond what it keeps."""
    traces = Path(__file__).resolve().parents[1] / "testdata" / "traces"
    payload = (traces / "pydantic-ai" / "a_happy.otlp.json").read_bytes()
    every_span, _ = _native.decode_json(payload).records()
    bodies = [RequestBody(payload, "json") for _ in range(3)]
    transfers = {body.id: _native.decode_json(payload).transfer_spans(body) for body in bodies}

    def message(body: RequestBody, index: int) -> tuple[Any, ...]:
        span = transfers[body.id][index]
        items = [(index, span.trace_id, [span], [], "complete", None)]
        return pickle.loads(_processes._message(("grade", items), lambda b: b.payload))  # type: ignore[no-any-return]

    whole = _processes._WholeBodies(kept=2)
    builder = _native.RecordBuilder()
    for index in range(len(every_span)):  # one message per span of the first body
        msg = message(bodies[0], index)
        assert _processes._build_records(msg[1], msg[2], builder, whole)[0][2] == [
            every_span[index]
        ]
    assert whole.decoded == 1 < len(every_span)
    for body in (bodies[1], bodies[2], bodies[0]):  # the first one forgotten, then again
        msg = message(body, 0)
        assert _processes._build_records(msg[1], msg[2], builder, whole)[0][2] == [every_span[0]]
    assert whole.decoded == 4


def test_a_worker_starts_without_the_receivers() -> None:
    """A worker process imports ``server._processes`` (so the package's ``__init__``) and
    builds its grader and exporter; none of that needs the receivers: aiohttp (whose import
    builds two TLS contexts from the system's CA certificates), gRPC and the asyncio service
    were ~1 G instructions of every worker's start. A fresh interpreter, as a spawned worker
    is."""
    code = (
        "import sys\n"
        "from otel_oracles.server import _processes\n"
        "from otel_oracles.server.config import load_settings\n"
        "settings = load_settings(\n"
        f"    overrides={{'grading': {{'contracts': [{str(CONTRACTS)!r}]}}}}, environ={{}}\n"
        ")\n"
        "_processes._worker_backend(settings, 1, lambda msg: None)\n"
        "print(sorted(m for m in ('aiohttp', 'grpc', 'asyncio') if m in sys.modules))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env |= {"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120, check=True)  # fmt: skip
    assert out.stdout.strip() == "[]", out.stdout
