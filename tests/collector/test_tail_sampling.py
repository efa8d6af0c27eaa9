"""docs/collector-tail-sampling.yaml with the real collector (built with the contrib
``tail_sampling`` processor) and a real ``otel-oracles serve``: with 1% baseline sampling,
every failing trace reaches the backend whole (each of its agent spans and its grade
span), because the grade span rejoins the trace before the sampling decision; most
passing traces do not reach it. Skips only when Go is missing, as the other collector
tests do."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.collector.collector_harness import (
    GRADE_SPAN,
    REPO,
    Collector,
    Serve,
    collector_binary,
    file_exporter,
    read_backend,
    run_agent,
    stop_all,
    validate,
    wait_until,
)

TAIL_CONFIG = REPO / "docs" / "collector-tail-sampling.yaml"
DECISION_WAIT = "10s"
"""Above serve's 3 s decision wait in the harness, plus grading and the trip back."""
REPEAT = 4
"""Each of the five scenarios four times: 8 passing and 12 failing traces."""


@pytest.fixture(scope="module")
def otelcol() -> Path:
    return collector_binary()


def test_the_shipped_config_validates(otelcol: Path) -> None:
    proc = validate(otelcol, TAIL_CONFIG)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def overlay(collector: Collector, serve: Serve, unsampled: Path) -> dict[str, Any]:
    """The backend as files, the grader's address, a short decision wait; and, for the
    comparison only, a second file receiving every span unsampled."""
    files = collector.backend_files
    return {
        "processors": {"tail_sampling": {"decision_wait": DECISION_WAIT}},
        "exporters": {
            "file/traces": file_exporter(files[0]),
            "file/logs": file_exporter(files[1]),
            "file/unsampled": file_exporter(unsampled),
            "otlp_grpc/oracles": {"endpoint": serve.grpc_endpoint},
            "prometheus": {"endpoint": f"127.0.0.1:{collector.prometheus_port}"},
        },
        "service": {
            "pipelines": {
                "traces/backend": {"exporters": ["file/traces"]},
                "logs/backend": {"exporters": ["file/logs"]},
                "metrics": {"exporters": ["prometheus"]},
                "traces/unsampled": {"receivers": ["otlp"], "exporters": ["file/unsampled"]},
            }
        },
    }


def test_every_failing_trace_is_kept_whole(otelcol: Path, tmp_path: Path) -> None:
    procs: list[Any] = []
    unsampled = tmp_path / "unsampled.jsonl"
    try:
        collector = Collector(otelcol, tmp_path, [TAIL_CONFIG], {}, name="sampler")
        serve = Serve(tmp_path, results_endpoint=collector.otlp_http, instance="tail")
        collector.overlay = overlay(collector, serve, unsampled)
        procs.append(collector.start())
        procs.append(serve.start())
        rows = run_agent(collector.otlp_grpc, tmp_path / "rows.jsonl", repeat=REPEAT, seed=23)
        assert isinstance(rows, list)
        verdicts = Counter(r["expected_verdict"] for r in rows)
        assert verdicts == {"pass": 2 * REPEAT, "fail": 3 * REPEAT}, verdicts
        failing = {r["trace_id"] for r in rows if r["expected_verdict"] == "fail"}
        passing = {r["trace_id"] for r in rows} - failing

        def all_graded() -> dict[str, set[str]] | None:
            """span ids per trace, unsampled, once every trace has its grade span"""
            spans = read_backend([unsampled]).spans_by_trace()
            graded = {t for t, ss in spans.items() if any(s.name == GRADE_SPAN for s in ss)}
            if not failing | passing <= graded:
                return None
            return {t: {s.span_id for s in ss} for t, ss in spans.items()}

        everything = wait_until(all_graded, 120, "every trace graded (unsampled copy)", 0.5)

        def decided() -> dict[str, set[str]] | None:
            """span ids per trace in the backend, once every failing trace is there whole"""
            spans = read_backend(collector.backend_files).spans_by_trace()
            kept = {t: {s.span_id for s in ss} for t, ss in spans.items()}
            whole = all(kept.get(t) == everything[t] for t in failing)
            return kept if whole else None

        try:
            kept = wait_until(decided, 90, "every failing trace in the backend, whole", 0.5)
        except AssertionError:
            spans = read_backend(collector.backend_files).spans_by_trace()
            missing = {
                t: sorted(everything[t] - {s.span_id for s in spans.get(t, [])}) for t in failing
            }
            raise AssertionError(f"failing traces incomplete in the backend: {missing}") from None
        backend = read_backend(collector.backend_files).spans_by_trace()
        for trace_id in failing:
            names = {s.name for s in backend[trace_id]}
            assert GRADE_SPAN in names and any(n.startswith("invoke_agent") for n in names)
        kept_passing = passing & kept.keys()
        assert len(kept_passing) < len(passing) / 2, (
            f"1% baseline sampling kept {len(kept_passing)} of {len(passing)} passing traces"
        )
        for trace_id in kept_passing:  # a kept passing trace is whole too
            assert kept[trace_id] == everything[trace_id]
    finally:
        stop_all(reversed(procs))
