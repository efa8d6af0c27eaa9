"""End-to-end: instrumented agent -> real OpenTelemetry Collector -> ``otel-oracles serve``
-> collector -> backend (file exporter) and Prometheus.

These tests prove the shipped ``collector-config.yaml`` and
``docs/collector-loadbalancing.yaml`` with the real collector (built by
``tests/collector/build.sh``) and Debian's Prometheus; they skip only when Go or Prometheus
is not installed, naming what to install. Everything binds 127.0.0.1 on free ports.
"""

from __future__ import annotations

import json
import math
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter

from tests.collector.collector_harness import (
    EVAL_EVENT,
    GRADE_SPAN,
    LB_CONFIG,
    MAIN_CONFIG,
    REPO,
    Backend,
    Collector,
    Prometheus,
    Serve,
    collector_binary,
    file_exporter,
    graded_summary,
    prometheus_binary,
    read_backend,
    read_rows,
    run_agent,
    stop_all,
    validate,
    wait_until,
)
from tests.server.agent_traces import FORGERIES, send_forged_run
from tests.support.otlp_sink import OtlpSink

SEED = 11
REPEAT = 3
"""Each of the five scenarios three times: 15 traces per pipeline run."""


@pytest.fixture(scope="module")
def otelcol() -> Path:
    return collector_binary()


def backend_overlay(collector: Collector, grader: dict[str, Any]) -> dict[str, Any]:
    """What a user changes: the backend exporter (here the file exporter), the grader's
    address and the Prometheus exporter's port; pipelines otherwise exactly as shipped."""
    return {
        "exporters": {
            # one file per signal: a file exporter shared by several pipelines can be
            # closed by one while another still flushes at shutdown (seen at v0.161)
            "file/traces": file_exporter(collector.backend_files[0]),
            "file/logs": file_exporter(collector.backend_files[1]),
            **grader,
            "prometheus": {"endpoint": f"127.0.0.1:{collector.prometheus_port}"},
        },
        "service": {
            "pipelines": {
                "traces/backend": {"exporters": ["file/traces"]},
                "logs/backend": {"exporters": ["file/logs"]},
                "metrics": {"exporters": ["prometheus"]},
            }
        },
    }


def wait_graded(collector: Collector, rows: list[dict[str, Any]], timeout: float = 90.0) -> Backend:
    """Until every agent trace has a grade span and its evaluation log records."""
    want = {r["trace_id"] for r in rows}

    def done() -> Backend | None:
        backend = read_backend(collector.backend_files)
        graded = {s.trace_id for s in backend.grade_spans()}
        logged = {rec.trace_id for rec in backend.eval_logs()}
        return backend if want <= graded and want <= logged else None

    return wait_until(done, timeout, f"grade spans of {len(want)} traces in the backend", 0.3)


@dataclass
class PipelineRun:
    rows: list[dict[str, Any]]
    backend: Backend
    serve: Serve
    collector: Collector
    workdir: Path


@pytest.fixture(scope="module")
def single_run(otelcol: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[PipelineRun]:
    """One grader behind collector-config.yaml; the agent's 15 traces graded."""
    workdir = tmp_path_factory.mktemp("single")
    procs: list[Any] = []
    try:
        collector = Collector(otelcol, workdir, [MAIN_CONFIG], {}, name="collector")
        serve = Serve(workdir, results_endpoint=collector.otlp_http, instance="single")
        collector.overlay = backend_overlay(
            collector, {"otlp_grpc/oracles": {"endpoint": serve.grpc_endpoint}}
        )
        procs.append(collector.start())
        procs.append(serve.start())
        rows = run_agent(collector.otlp_grpc, workdir / "rows.jsonl", repeat=REPEAT, seed=SEED)
        assert isinstance(rows, list) and len(rows) == 5 * REPEAT
        backend = wait_graded(collector, rows)
        yield PipelineRun(rows, backend, serve, collector, workdir)
    finally:
        stop_all(reversed(procs))


# ---- configuration ---------------------------------------------------------------------------


def test_shipped_configs_validate(otelcol: Path, tmp_path: Path) -> None:
    for cfg in (MAIN_CONFIG, LB_CONFIG):
        proc = validate(otelcol, cfg)
        assert proc.returncode == 0, f"{cfg.name}: {proc.stdout}{proc.stderr}"
    # validate really checks: a pipeline naming an exporter nobody defined is refused
    broken = tmp_path / "broken.yaml"
    broken.write_text(
        MAIN_CONFIG.read_text().replace(
            "exporters: [otlp_grpc/oracles]", "exporters: [otlp_grpc/nowhere]", 1
        )
    )
    proc = validate(otelcol, broken)
    assert proc.returncode != 0
    assert "otlp_grpc/nowhere" in proc.stdout + proc.stderr


# ---- agent -> collector -> serve -> collector -> backend -------------------------------------


def test_verdicts_and_grade_spans_land_in_the_agent_traces(single_run: PipelineRun) -> None:
    by_trace = single_run.backend.spans_by_trace()
    logs_by_trace: dict[str, list[Any]] = {}
    for rec in single_run.backend.eval_logs():
        logs_by_trace.setdefault(rec.trace_id, []).append(rec)
    for row in single_run.rows:
        spans = by_trace[row["trace_id"]]
        roots = [s for s in spans if s.name == "invoke_agent support"]
        assert len(roots) == 1, row
        agent_span_ids = {s.span_id for s in spans if s.scope != "otel_oracles"}
        grades = [s for s in spans if s.name == GRADE_SPAN]
        assert len(grades) == 1, (row, [g.attributes for g in grades])
        grade = grades[0]
        # same trace, child of the graded root, emitted by the grader
        assert grade.parent_span_id == roots[0].span_id
        assert grade.resource.get("service.name") == "otel-oracles"
        assert grade.attributes["otel_oracles.verdict"] == row["expected_verdict"], row
        # the standard attributes carry the outcome: score.label is the outcome's name
        from_events = {
            attrs["gen_ai.evaluation.name"]: attrs["gen_ai.evaluation.score.label"]
            for name, attrs in grade.events
            if name == EVAL_EVENT
        }
        assert from_events == row["expected_outcomes"], row
        # log-based events: one per check, pointing into the agent's own trace
        records = logs_by_trace[row["trace_id"]]
        from_logs = {
            r.attributes["gen_ai.evaluation.name"]: r.attributes["gen_ai.evaluation.score.label"]
            for r in records
        }
        assert all(
            r.attributes["otel_oracles.outcome"] == r.attributes["gen_ai.evaluation.score.label"]
            for r in records
        )
        assert from_logs == row["expected_outcomes"], row
        assert len(records) == len(row["expected_outcomes"])
        assert all(r.span_id in agent_span_ids for r in records), row


def test_grader_output_echoed_back_is_skipped_not_regraded(single_run: PipelineRun) -> None:
    """The shipped configuration sends everything the receiver takes to the grader, the
    grader's own grade spans and evaluation records included (no collector filter: it could
    match only forgeable markers). ``serve`` recognises its output by marker and shape,
    skips and counts it, and grades each agent trace once."""
    agent_logs = sum(r["log_records"] for r in single_run.rows)
    instance = single_run.serve.instance

    def own(record: Any) -> bool:
        return bool(record.resource.get("service.instance.id") == instance)

    # the grader's output: one grade span per trace, one evaluation record per check
    own_spans = len(single_run.rows)
    own_logs = sum(len(r["expected_outcomes"]) for r in single_run.rows)
    backend = wait_until(
        lambda: (
            (b := read_backend(single_run.collector.backend_files))
            and sum(1 for s in b.spans if own(s)) == own_spans
            and sum(1 for rec in b.logs if own(rec)) == own_logs
            and b
        ),
        30,
        "the grader's output in the backend",
        0.3,
    )
    agent_spans = sum(1 for s in backend.spans if not own(s))
    # every agent log record reaches the grader through logs/grading (joined to its trace
    # or, if it trailed the trace by more than the decision wait, counted as late), and so
    # does every record the grader exported, echoed by the collector
    stats = wait_until(
        lambda: (
            (st := single_run.serve.stats())
            and _received(st, "logs") == agent_logs + own_logs
            and st["skipped_self_telemetry"] == own_spans + own_logs
            and st
        ),
        30,
        "the agent's log records and the grader's echoed output at the grader",
    )
    assert _received(stats, "traces") == agent_spans + own_spans, stats
    graded = sum(stats["graded_traces"].values())
    assert graded == len(single_run.rows), stats  # the echo was not graded again
    assert stats["buffered_traces"] == 0 and stats["unattached_logs"] == 0, stats
    assert stats["late"] <= agent_logs, stats  # late ones are agent logs, never the echo
    backend = read_backend(single_run.collector.backend_files)
    assert sum(1 for s in backend.spans if own(s)) == own_spans, "no grade span of a grade span"
    wait_until(
        lambda: (
            agent_logs
            == sum(
                1
                for rec in read_backend(single_run.collector.backend_files).logs
                if rec.resource.get("service.name") != "otel-oracles"
            )
        ),
        30,
        "the agent's log records in the backend",
    )


def _received(stats: dict[str, Any], signal_name: str) -> int:
    return sum(n for key, n in stats["received"].items() if key.endswith("." + signal_name))


def expected_numbers(rows: list[dict[str, Any]]) -> dict[str, int]:
    outcomes = Counter(o for r in rows for o in r["expected_outcomes"].values())
    return {
        "invariant_failures": outcomes["invariant_failure"],
        "tolerated_failures": outcomes["tolerated"],
        "budgets_exhausted": outcomes["budget_exhausted"],
        "missing_evidence": outcomes["missing_evidence"],
    }


@pytest.fixture
def prometheus(single_run: PipelineRun) -> Iterator[Prometheus]:
    """A real Prometheus scraping the single-grader collector's prometheus exporter (the
    counters are cumulative, so starting it after the run loses nothing)."""
    target = f"127.0.0.1:{single_run.collector.prometheus_port}"
    prom = Prometheus(prometheus_binary(), single_run.workdir, [target])
    try:
        yield prom.start()
    finally:
        prom.stop()


def test_prometheus_scrapes_the_four_numbers(
    single_run: PipelineRun, prometheus: Prometheus
) -> None:
    prom = prometheus
    want = expected_numbers(single_run.rows)
    assert all(want.values()), want  # every number is exercised, none is trivially 0
    queries = {
        name: f'sum(otel_oracles_grade_{name}_total{{job="otelcol-results"}})' for name in want
    }

    def scraped() -> dict[str, float | None] | None:
        got = {name: prom.scalar(q) for name, q in queries.items()}
        return got if got == {k: float(v) for k, v in want.items()} else None

    try:
        wait_until(scraped, 45, "Prometheus to scrape the four numbers", 0.5)
    except AssertionError:
        got = {name: prom.scalar(q) for name, q in queries.items()}
        names = prom.query('{__name__=~"otel_oracles.*"}')
        raise AssertionError(
            f"PromQL {got} != {want}; series: {sorted({n['metric']['__name__'] for n in names})}"
        ) from None
    verdicts = prom.query("sum by (otel_oracles_verdict) (otel_oracles_grade_traces_total)")
    by_verdict = {v["metric"].get("otel_oracles_verdict"): float(v["value"][1]) for v in verdicts}
    want_verdicts = Counter(r["expected_verdict"] for r in single_run.rows)
    assert by_verdict == {k: float(v) for k, v in want_verdicts.items()}, verdicts
    # the other queries docs/collector.md shows work as written
    results = prom.query(
        "sum by (gen_ai_evaluation_name, otel_oracles_outcome) (otel_oracles_grade_results_total)"
    )
    by_check = {
        (r["metric"]["gen_ai_evaluation_name"], r["metric"]["otel_oracles_outcome"]): float(
            r["value"][1]
        )
        for r in results
    }
    want_checks = Counter(
        (k, v) for r in single_run.rows for k, v in r["expected_outcomes"].items()
    )
    assert by_check == {k: float(v) for k, v in want_checks.items()}, results
    # (the docs wrap this in increase(...[1h]), which needs an hour-long history)
    per_contract = prom.query(
        "sum by (otel_oracles_contract_id) "
        '(otel_oracles_grade_traces_total{otel_oracles_verdict="fail"})'
    )
    assert {
        r["metric"]["otel_oracles_contract_id"]: float(r["value"][1]) for r in per_contract
    } == {"support-agent-tools": float(want_verdicts["fail"])}
    p99 = prom.scalar(
        "histogram_quantile(0.99, sum by (le) (otel_oracles_grade_duration_seconds_bucket))"
    )
    assert p99 is not None and 0 < p99 < 10, p99


DASHBOARD = Path(__file__).resolve().parents[2] / "dashboards" / "otel-oracles.json"
GRAFANA_VARIABLES = {"$__rate_interval": "1m", "$__range": "10m", "$contract": ".*"}
"""What Grafana substitutes in the dashboard's queries, as it would over a short window."""


def test_every_dashboard_panel_returns_data(otelcol: Path, tmp_path: Path) -> None:
    """A real Prometheus scrapes the collector from before the agent runs, so every rate
    in the shipped dashboard has an increase to see; each panel query must then return at
    least one real (not NaN) value, and every rate of a grading panel a positive one."""
    procs: list[Any] = []
    try:
        collector = Collector(otelcol, tmp_path, [MAIN_CONFIG], {}, name="collector")
        serve = Serve(tmp_path, results_endpoint=collector.otlp_http, instance="dashboard")
        collector.overlay = backend_overlay(
            collector, {"otlp_grpc/oracles": {"endpoint": serve.grpc_endpoint}}
        )
        procs.append(collector.start())
        procs.append(serve.start())
        target = f"127.0.0.1:{collector.prometheus_port}"
        prom = Prometheus(prometheus_binary(), tmp_path, [target])
        procs.append(prom.start())
        wait_until(lambda: prom.query("up") != [], 30, "Prometheus's first scrape", 0.3)
        total = "sum(otel_oracles_grade_traces_total)"
        graded = 0
        # Twice: a series' first sample is its baseline, so only the second run's verdicts
        # are an increase a rate can see.
        for run in (1, 2):
            rows = run_agent(
                collector.otlp_grpc, tmp_path / f"rows{run}.jsonl", repeat=1, seed=SEED + run
            )
            assert isinstance(rows, list)
            wait_graded(collector, rows)
            graded += len(rows)
            wait_until(
                lambda want=graded: prom.scalar(total) == want, 90, "the verdicts scraped", 0.3
            )
        doc = json.loads(DASHBOARD.read_text(encoding="utf-8"))
        queries = {
            f"{panel['title']} [{target['refId']}]": target["expr"]
            for panel in doc["panels"]
            for target in panel["targets"]
        }
        for name, expr in queries.items():
            for variable, value in GRAFANA_VARIABLES.items():
                expr = expr.replace(variable, value)
            assert "$" not in expr, f"{name}: unsubstituted variable in {expr}"

            def real_values(expr: str = expr) -> list[float]:
                values = [float(r["value"][1]) for r in prom.query(expr)]
                real = [v for v in values if not math.isnan(v)]
                if "otel_oracles_grade_" in expr and not any(v > 0 for v in real):
                    return []  # a grading panel shows what the runs did, not zeros
                return real

            wait_until(real_values, 20, f"panel {name!r} to return data: {expr}", 0.5)
    finally:
        stop_all(reversed(procs))


# ---- a sender's span dressed as the grader's own ---------------------------------------------

SUPPORT_RAG = REPO / "examples" / "contracts" / "support-rag.yaml"


def test_forged_grader_span_through_the_collector_fails_the_run(
    otelcol: Path, tmp_path: Path
) -> None:
    """DESIGN.md section 8 through the shipped collector-config.yaml: a ``delete_records``
    tool span put in the grader's scope, under its service.name, or named and attributed
    like a grade span reaches ``serve`` (no collector filter drops it) and fails
    ``no-destructive-tools`` like the undressed control; the grader's real output, echoed
    back by the same pipelines, is skipped and counted, not graded."""
    procs: list[Any] = []
    try:
        collector = Collector(otelcol, tmp_path, [MAIN_CONFIG], {}, name="forged")
        serve = Serve(
            tmp_path,
            collector.otlp_http,
            name="serve-forged",
            instance="forged",
            decision_wait="2s",
            join_window="0s",
            contracts=SUPPORT_RAG,
        )
        collector.overlay = backend_overlay(
            collector, {"otlp_grpc/oracles": {"endpoint": serve.grpc_endpoint}}
        )
        procs.append(collector.start())
        procs.append(serve.start())
        url = f"{collector.otlp_http}/v1/traces"
        ids = {forge: send_forged_run(HttpExporter(endpoint=url), forge) for forge in FORGERIES}

        def own(record: Any) -> bool:
            return bool(record.resource.get("service.instance.id") == "forged")

        def complete() -> Backend | None:
            """The backend once it holds a grade span per run and every evaluation record
            those grade spans announce (one per check)."""
            backend = read_backend(collector.backend_files)
            grades = [s for s in backend.spans if own(s)]
            checks = sum(1 for g in grades for name, _ in g.events if name == EVAL_EVENT)
            graded = {g.trace_id for g in grades}
            records = sum(1 for rec in backend.logs if own(rec))
            done = graded == set(ids.values()) and len(grades) == len(ids)
            return backend if done and records == checks else None

        backend = wait_until(complete, 60, "every run's grade span and evaluation records", 0.3)
        outcomes = {
            rec.trace_id: rec.attributes["gen_ai.evaluation.score.label"]
            for rec in backend.logs
            if own(rec) and rec.attributes.get("gen_ai.evaluation.name") == "no-destructive-tools"
        }
        assert {forge: outcomes.get(tid) for forge, tid in ids.items()} == dict.fromkeys(
            FORGERIES, "invariant_failure"
        ), "a delete_records span fails the run however it is dressed"
        for grade in (s for s in backend.spans if own(s)):
            assert grade.attributes["otel_oracles.verdict"] == "fail", grade

        own_records = sum(1 for s in backend.spans if own(s)) + sum(
            1 for rec in backend.logs if own(rec)
        )
        agent_spans = sum(1 for s in backend.spans if not own(s))
        assert agent_spans == 3 * len(FORGERIES)  # root, search_docs, delete_records
        stats = wait_until(
            lambda: (st := serve.stats()) and st["skipped_self_telemetry"] == own_records and st,
            30,
            "the grader's echoed output skipped at the grader",
        )
        assert _received(stats, "traces") == agent_spans + len(ids), stats
        assert sum(stats["graded_traces"].values()) == len(ids), stats
        assert stats["buffered_traces"] == 0 and stats["late"] == 0, stats
    finally:
        stop_all(reversed(procs))


# ---- scale-out ------------------------------------------------------------------------------


def test_load_balanced_replicas_grade_each_trace_exactly_once(
    otelcol: Path, tmp_path: Path, single_run: PipelineRun
) -> None:
    procs: list[Any] = []
    try:
        collector = Collector(otelcol, tmp_path, [LB_CONFIG], {}, name="lb")
        replicas = [
            Serve(tmp_path, collector.otlp_http, name=f"serve-{i}", instance=f"replica-{i}")
            for i in range(2)
        ]
        collector.overlay = backend_overlay(
            collector,
            {
                "load_balancing/oracles": {
                    "resolver": {"static": {"hostnames": [r.grpc_endpoint for r in replicas]}}
                }
            },
        )
        # started collector first so teardown (reversed) stops the replicas first: a
        # replica's drain exports its last results through the still-running collector
        procs.append(collector.start())
        for r in replicas:
            procs.append(r.start())
        rows = run_agent(collector.otlp_grpc, tmp_path / "rows.jsonl", repeat=REPEAT, seed=SEED)
        assert isinstance(rows, list)
        assert [r["trace_id"] for r in rows] == [r["trace_id"] for r in single_run.rows]
        backend = wait_graded(collector, rows)
        time.sleep(1.5)  # a duplicate grade would arrive within a decision wait
        backend = read_backend(collector.backend_files)

        grades = backend.grade_spans()
        per_trace = Counter(s.trace_id for s in grades)
        assert set(per_trace) == {r["trace_id"] for r in rows}
        assert set(per_trace.values()) == {1}, per_trace  # exactly once
        by_replica = Counter(s.resource.get("service.instance.id") for s in grades)
        assert set(by_replica) == {"replica-0", "replica-1"}, by_replica  # both did work
        stats = [r.stats() for r in replicas]
        assert sum(sum(s["graded_traces"].values()) for s in stats) == len(rows), stats
        # no log records at the replicas (see the note in the config), so none sits there
        # as a trace without spans; the agents' logs still reach the backend
        assert sum(_received(s, "logs") for s in stats) == 0, stats
        assert all(s["buffered_traces"] == 0 and s["late"] == 0 for s in stats), stats
        agent_logs = [r for r in backend.logs if r.resource.get("service.name") != "otel-oracles"]
        assert len(agent_logs) == sum(r["log_records"] for r in rows)
        # identical results to the single grader, trace by trace
        assert graded_summary(backend) == graded_summary(single_run.backend)
    finally:
        stop_all(reversed(procs))


def test_load_balancing_routes_logs_apart_from_their_spans(otelcol: Path, tmp_path: Path) -> None:
    """Why docs/collector-loadbalancing.yaml has no logs/grading pipeline: at v0.161 the
    load_balancing exporter hashes spans by the raw trace id and log records by its hex
    string, so the two signals of one trace are routed independently. Two plain OTLP
    sinks stand in for the replicas, so where each record went is read directly. When
    this test fails after a collector upgrade, the exporter routes both signals alike: add
    logs/grading back to the scale-out configuration."""
    sinks = [OtlpSink().start(), OtlpSink().start()]
    procs: list[Any] = []
    try:
        collector = Collector(otelcol, tmp_path, [LB_CONFIG], {}, name="lblogs")
        hostnames = [sink.grpc_endpoint.removeprefix("http://") for sink in sinks]
        overlay = backend_overlay(
            collector,
            {"load_balancing/oracles": {"resolver": {"static": {"hostnames": hostnames}}}},
        )
        overlay["service"]["pipelines"]["logs/grading"] = {
            "receivers": ["otlp"],
            "processors": ["memory_limiter", "batch"],
            "exporters": ["load_balancing/oracles"],
        }
        collector.overlay = overlay
        procs.append(collector.start())
        rows = run_agent(collector.otlp_grpc, tmp_path / "rows.jsonl", repeat=REPEAT, seed=SEED)
        assert isinstance(rows, list)
        want_spans = len(read_backend_spans_when(collector, rows))
        want_logs = sum(r["log_records"] for r in rows)
        wait_until(
            lambda: (
                sum(len(k.spans()) for k in sinks) == want_spans
                and sum(len(k.log_records()) for k in sinks) == want_logs
            ),
            30,
            "every agent span and log record at one of the sinks",
        )
        span_home = {sp.trace_id: i for i, k in enumerate(sinks) for sp in k.spans()}
        log_home = {lr.trace_id: i for i, k in enumerate(sinks) for lr in k.log_records()}
        assert len(span_home) == len(rows)  # spans of a trace never split across sinks
        apart = [t for t, i in log_home.items() if span_home[t] != i]
        assert apart, (span_home, log_home)
    finally:
        stop_all(reversed(procs))
        for sink in sinks:
            sink.stop()


def read_backend_spans_when(collector: Collector, rows: list[dict[str, Any]]) -> list[Any]:
    """The agent's spans, once the backend has every trace's root (all spans exported)."""
    want = {r["trace_id"] for r in rows}

    def roots() -> list[Any] | None:
        spans = read_backend(collector.backend_files).spans
        done = {s.trace_id for s in spans if s.name == "invoke_agent support"}
        return spans if want <= done else None

    spans = wait_until(roots, 30, "the agent's spans in the backend", 0.3)
    return [s for s in spans if s.resource.get("service.name") != "otel-oracles"]


# ---- failure: the grader goes away mid-stream ------------------------------------------------


def test_grader_restart_mid_stream_leaves_no_trace_ungraded(otelcol: Path, tmp_path: Path) -> None:
    procs: list[Any] = []
    agent: subprocess.Popen[bytes] | None = None
    try:
        collector = Collector(otelcol, tmp_path, [MAIN_CONFIG], {}, name="restart")
        # A short decision wait keeps the number of traces in flight at the stop small; no
        # join window, so the first verdicts come while the agent is still sending.
        serve = Serve(
            tmp_path,
            collector.otlp_http,
            name="serve-a",
            instance="a",
            decision_wait="1s",
            join_window="0s",
        )
        collector.overlay = backend_overlay(
            collector, {"otlp_grpc/oracles": {"endpoint": serve.grpc_endpoint}}
        )
        procs.append(collector.start())
        procs.append(serve.start())
        out = tmp_path / "rows.jsonl"
        agent = run_agent(  # type: ignore[assignment]
            collector.otlp_grpc, out, repeat=12, seed=23, pause=0.1, background=True
        )
        assert isinstance(agent, subprocess.Popen)
        wait_until(
            lambda: sum(serve.stats()["graded_traces"].values()) >= 3,
            60,
            "the first grader to finish some traces",
        )
        assert agent.poll() is None, "the agent finished before the stop: not mid-stream"
        stopped_ns = time.time_ns()
        assert serve.stop(signal.SIGTERM) == 0, serve.log()[-3000:]  # drains, exits 0
        time.sleep(3.0)  # the agent keeps sending; the collector queues and retries
        restarted = Serve(
            tmp_path,
            collector.otlp_http,
            name="serve-b",
            instance="b",
            decision_wait="1s",
            join_window="0s",
            grpc_port=serve.grpc_port,
            http_port=serve.http_port,
        )
        procs.append(restarted.start())
        agent_out, _ = agent.communicate(timeout=120)
        assert agent.returncode == 0, agent_out
        rows = read_rows(out)
        assert len(rows) == 60
        backend = wait_graded(collector, rows, timeout=120)

        per_trace = Counter(s.trace_id for s in backend.grade_spans())
        accepted = {r["trace_id"] for r in rows}
        assert accepted <= set(per_trace), accepted - set(per_trace)  # none ungraded
        by_instance = Counter(s.resource.get("service.instance.id") for s in backend.grade_spans())
        assert by_instance["a"] > 0 and by_instance["b"] > 0, by_instance  # really mid-stream
        retried = [
            line
            for line in collector.log().splitlines()
            if "Will retry" in line and "otlp_grpc/oracles" in line
        ]
        assert retried, collector.log()[-3000:]  # the collector's queue did the retrying
        # SIGTERM drains: what the old grader had buffered is graded at once, before its
        # decision wait ran out, so those traces are judged incomplete (every check
        # missing_evidence) rather than lost. Only traces in flight at the stop may be
        # judged so: their root span ended within decision_wait (1 s) + the collector's
        # batch timeout (1 s) + the agents' export delays and slack for a loaded machine
        # (4 s) of the stop.
        roots = {s.trace_id: s for s in backend.spans if s.name == "invoke_agent support"}
        in_flight_ns = 6_000_000_000
        verdict_of = {r["trace_id"]: r["expected_verdict"] for r in rows}
        drained: list[str] = []
        for span in backend.grade_spans():
            if span.attributes["otel_oracles.verdict"] == verdict_of[span.trace_id]:
                continue
            outcomes = {
                a.get("gen_ai.evaluation.score.label") for n, a in span.events if n == EVAL_EVENT
            }
            assert span.resource.get("service.instance.id") == "a", span
            assert outcomes == {"missing_evidence"}, (span.trace_id, outcomes)
            assert stopped_ns - roots[span.trace_id].end_ns < in_flight_ns, span.trace_id
            drained.append(span.trace_id)
        # a trace graded twice had its spans split by the restart: only one in flight
        twice = [t for t, n in per_trace.items() if n > 1]
        assert len(twice) <= 2, twice
        assert len(drained) < len(rows) // 2, drained
    finally:
        if agent is not None:
            if agent.poll() is None:
                agent.kill()
                agent.communicate()
            if agent.stdout is not None and not agent.stdout.closed:
                agent.stdout.close()  # an early assertion left its output unread
        stop_all(reversed(procs))


# ---- backpressure: the grader's buffer is full ------------------------------------------------


def test_full_grader_pushes_back_and_the_collector_queue_holds(
    otelcol: Path, tmp_path: Path
) -> None:
    """DESIGN section 7: a full grader answers RESOURCE_EXHAUSTED with RetryInfo, the
    collector's sending queue holds the data and retries after the suggested delay, and
    nothing is dropped. The grader here buffers at most 6 traces, so most requests of a
    burst are refused at first."""
    procs: list[Any] = []
    try:
        collector = Collector(otelcol, tmp_path, [MAIN_CONFIG], {}, name="full")
        serve = Serve(
            tmp_path,
            collector.otlp_http,
            name="serve-full",
            extra_args=["--max-traces", "6"],
        )
        overlay = backend_overlay(
            collector, {"otlp_grpc/oracles": {"endpoint": serve.grpc_endpoint}}
        )
        # small batches: many small requests, so the tiny buffer is hit again and again and
        # traces are cut across requests (their roots often in a later, refused one)
        overlay["processors"] = {"batch": {"send_batch_size": 16, "send_batch_max_size": 16}}
        collector.overlay = overlay
        procs.append(collector.start())
        procs.append(serve.start())
        rows = run_agent(collector.otlp_grpc, tmp_path / "rows.jsonl", repeat=6, seed=31)
        assert isinstance(rows, list) and len(rows) == 30
        # with retries every ~1 s, 30 traces through a 6-trace buffer take seconds
        backend = wait_graded(collector, rows, timeout=40)

        per_trace = Counter(s.trace_id for s in backend.grade_spans())
        assert set(per_trace) == {r["trace_id"] for r in rows}
        assert set(per_trace.values()) == {1}, per_trace
        verdict_of = {r["trace_id"]: r["expected_verdict"] for r in rows}
        for span in backend.grade_spans():
            assert span.attributes["otel_oracles.verdict"] == verdict_of[span.trace_id]
        stats = serve.stats()
        assert sum(stats["rejected"].values()) > 0, stats  # it really pushed back
        retried = [
            line
            for line in collector.log().splitlines()
            if "Will retry" in line and "otlp_grpc/oracles" in line
        ]
        assert retried, collector.log()[-3000:]
    finally:
        stop_all(reversed(procs))
