"""``grade --export otlp --workers 2`` sends the same results as the one-process grade.

With workers, the pairs reach the emitter (in the main process) in arrival order, not input
order (``grade_paths_parallel``'s ``on_graded``). So what may differ is only: the order of
records, batches and metric points, and which grade span gets which id (the ids are drawn
in arrival order from one sequence). Everything a user reads as a result (each record's
trace and span ids, attributes, severities and bodies; each grade span's trace, parent,
attributes, status and events; every metric point's value) must be the same, and this test
pins that: a grade whose workers graded, emitted or counted differently would fail it. The
clock fields, the measured grading times and the process's ``service.instance.id`` differ
by nature and are left out.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from otel_oracles.emit import _names as n
from tests.support.otlp_sink import OtlpSink, attrs

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO / "tests" / "testdata" / "traces"
CONTRACTS = Path(__file__).resolve().parent / "testdata" / "contracts"
CLI = Path(sys.executable).with_name("otel-oracles")
"""The installed console script, as users run it."""


def _grade(files: list[str], workers: int, tmp_path: Path) -> OtlpSink:
    """What ``grade --export otlp`` of ``files`` sent (the sink is stopped, its record kept)."""
    with OtlpSink() as sink:
        env = {
            **os.environ,
            "OTEL_EXPORTER_OTLP_ENDPOINT": sink.http_endpoint,
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        }
        env.pop("OTEL_SERVICE_NAME", None)
        args = ["-c", str(CONTRACTS), "--quiet", "--export", "otlp", "--workers", str(workers)]
        proc = subprocess.run(
            [str(CLI), "grade", *files, *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert proc.returncode in (0, 1), proc.stderr
        assert proc.stderr == "", "a quiet grade that delivered everything says nothing"
    return sink


def _resources(sink: OtlpSink) -> set[tuple[str, tuple[tuple[str, Any], ...]]]:
    """Each signal's resource attributes, less the per-process ``service.instance.id``."""
    out = set()
    for req in sink.requests():
        for rr in getattr(
            req.request,
            {"traces": "resource_spans", "logs": "resource_logs"}.get(
                req.signal, "resource_metrics"
            ),
        ):
            kept = {
                k: v for k, v in attrs(rr.resource.attributes).items() if k != "service.instance.id"
            }
            out.add((req.signal, tuple(sorted(kept.items()))))
    return out


def _logs(sink: OtlpSink) -> Counter[bytes]:
    """Every log record as it was sent, its clock fields zeroed."""
    out: Counter[bytes] = Counter()
    for item in sink.log_records():
        record = type(item.record).FromString(item.record.SerializeToString())
        record.time_unix_nano = record.observed_time_unix_nano = 0
        out[record.SerializeToString(deterministic=True)] += 1
    return out


def _spans(sink: OtlpSink) -> Counter[bytes]:
    """Every grade span as it was sent, its own id and clock fields zeroed."""
    out: Counter[bytes] = Counter()
    for item in sink.spans():
        span = type(item.span).FromString(item.span.SerializeToString())
        span.span_id = b""
        span.start_time_unix_nano = span.end_time_unix_nano = 0
        for event in span.events:
            event.time_unix_nano = 0
        out[span.SerializeToString(deterministic=True)] += 1
    return out


def _metrics(sink: OtlpSink) -> dict[str, Counter[bytes]]:
    """Each metric's points in the last export holding it (the cumulative totals), their
    clock fields zeroed; of the grading-time histogram only the count (times are measured)."""
    last: dict[str, Any] = {}
    for item in sink.metrics():
        last[item.metric.name] = item
    out: dict[str, Counter[bytes]] = {}
    for name, item in last.items():
        points: Counter[bytes] = Counter()
        for _, point in item.points():
            p = type(point).FromString(point.SerializeToString())
            p.start_time_unix_nano = p.time_unix_nano = 0
            if name == n.METRIC_DURATION:
                p.sum = p.min = p.max = 0
                del p.bucket_counts[:]
            points[p.SerializeToString(deterministic=True)] += 1
        out[name] = points
    return out


def test_workers_send_the_same_results_as_one_process(tmp_path: Path) -> None:
    files = sorted(str(p) for p in TRACES.glob("*/*.otlp.json"))
    assert len(files) >= 20, "the real-trace fixtures must be there"
    one = _grade(files, 1, tmp_path)
    two = _grade(files, 2, tmp_path)

    spans = _spans(one)
    assert sum(spans.values()) >= 2 * 20, "two contracts grade every real trace"
    assert _spans(two) == spans, "grade spans differ in more than their own ids"
    for sink in (one, two):
        ids = [s.span_id for s in sink.spans()]
        assert len(set(ids)) == len(ids) and "0" * 16 not in ids, "grade span ids are unique"

    logs = _logs(one)
    assert logs, "the real traces' checks are sent as evaluation log records"
    assert _logs(two) == logs

    metrics = _metrics(one)
    assert n.METRIC_TRACES in metrics and n.METRIC_DURATION in metrics
    assert _metrics(two) == metrics

    assert _resources(two) == _resources(one)
