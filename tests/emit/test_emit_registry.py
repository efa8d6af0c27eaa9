"""The registry (conventions/registry/otel-oracles.yaml) and the code agree, both ways,
and docs/telemetry.md carries the tables generated from the registry."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from otel_oracles.emit import _names as n
from otel_oracles.emit import build_emitter
from otel_oracles.emit._registry import REGISTRY_PATH, load_registry, render_tables
from tests.emit.conftest import make_trajectory, make_verdict
from tests.support.otlp_sink import OtlpSink

INSTRUMENT_OF = {
    ("sum", True): "counter",
    ("sum", False): "updowncounter",
    ("histogram", None): "histogram",
    ("gauge", None): "gauge",
}


@pytest.fixture(scope="module")
def emitted() -> OtlpSink:
    """Everything the emitter can produce: all outcomes, a trace and a trajectory without
    one, and every receiver instrument."""
    with OtlpSink() as sink, pytest.MonkeyPatch.context() as mp:
        mp.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", sink.grpc_endpoint)
        mp.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        emitter = build_emitter("otlp")
        with_trace, without = make_trajectory(), make_trajectory(trace_id=None)
        emitter.export([(make_verdict(with_trace), with_trace), (make_verdict(without), without)])
        metrics = emitter.metrics
        metrics.buffered_traces_changed(1)
        metrics.late_spans(2)
        metrics.evicted_traces(1)
        metrics.rejected_requests("resource_exhausted", "grpc")
        emitter.shutdown()
        sink.wait_for_spans(2)
        sink.wait_for_logs(12)
        sink.wait_for_metric(n.METRIC_REJECTED_REQUESTS)
        yield sink


def _seen(sink: OtlpSink) -> dict[str, set[str]]:
    """Group name -> attribute keys seen on it (span type, event name, metric name)."""
    seen: dict[str, set[str]] = defaultdict(set)
    for item in sink.spans():
        assert item.span.name.startswith(n.GRADE_SPAN_PREFIX + " "), item.span.name
        seen["otel_oracles.grade"].update(item.attributes)
        for event in item.span.events:
            seen[f"event:{event.name}"].update(a.key for a in event.attributes)
    for log in sink.log_records():
        seen[f"event:{log.record.event_name}"].update(log.attributes)
    for metric in sink.metrics():
        seen[f"metric:{metric.metric.name}"]
        for attrs, _ in metric.points():
            seen[f"metric:{metric.metric.name}"].update(attrs)
    return seen


def _declared() -> dict[str, set[str]]:
    reg = load_registry()
    declared: dict[str, set[str]] = {}
    for span in reg.spans:
        declared[span.type] = {r.ref for r in span.attributes}
    for event in reg.events:
        declared[f"event:{event.name}"] = {r.ref for r in event.attributes}
    for metric in reg.metrics:
        declared[f"metric:{metric.name}"] = {r.ref for r in metric.attributes}
    return declared


def test_code_emits_no_name_the_registry_does_not_declare(emitted: OtlpSink) -> None:
    declared = _declared()
    for group, keys in _seen(emitted).items():
        assert group in declared, f"{group} is emitted but not declared in {REGISTRY_PATH.name}"
        undeclared = keys - declared[group]
        assert not undeclared, f"{group} emits undeclared attributes {sorted(undeclared)}"


def test_registry_declares_nothing_the_code_never_emits(emitted: OtlpSink) -> None:
    seen = _seen(emitted)
    for group, keys in _declared().items():
        assert group in seen, f"{group} is declared but never emitted"
        unused = keys - seen[group]
        assert not unused, f"{group} declares attributes never emitted: {sorted(unused)}"
    reg = load_registry()
    used = set().union(*seen.values())
    unused_own = {a.key for a in reg.attributes} - used
    assert not unused_own, f"registry attributes never emitted: {sorted(unused_own)}"


def test_metric_units_and_instruments_match_the_registry(emitted: OtlpSink) -> None:
    by_name = {m.name: m for m in load_registry().metrics}
    for item in emitted.metrics():
        metric = item.metric
        spec = by_name[metric.name]
        kind = metric.WhichOneof("data")
        monotonic = metric.sum.is_monotonic if kind == "sum" else None
        assert INSTRUMENT_OF[(kind, monotonic)] == spec.instrument, metric.name
        assert metric.unit == spec.unit, f"{metric.name}: unit {metric.unit!r} != {spec.unit!r}"
        assert metric.description, f"{metric.name} needs a description"


def test_every_name_constant_is_declared() -> None:
    reg = load_registry()
    declared = (
        reg.attribute_keys()
        | {m.name for m in reg.metrics}
        | {e.name for e in reg.events}
        | {reg.producer.instrumentation_scope, reg.producer.service_name, n.GRADE_SPAN_PREFIX}
    )
    constants = {v for k, v in vars(n).items() if k.isupper() and isinstance(v, str)}
    assert constants <= declared, f"undeclared names in _names.py: {sorted(constants - declared)}"


def test_own_telemetry_markers_are_the_registrys(emitted: OtlpSink) -> None:
    """The service name and scope the self-telemetry filter skips are defined once (in
    ``_names``), equal to the registry's, and are what the emitter actually sends."""
    from otel_oracles.emit._own import own_markers
    from otel_oracles.emit.config import DEFAULT_SERVICE_NAME

    producer = load_registry().producer
    assert (
        producer.service_name,
        producer.instrumentation_scope,
    ) == (n.SERVICE_NAME, n.INSTRUMENTATION_SCOPE)
    assert DEFAULT_SERVICE_NAME is n.SERVICE_NAME
    scope, services = own_markers()
    assert scope == producer.instrumentation_scope and producer.service_name in services
    spans = emitted.spans()
    assert spans and all(s.scope_name == producer.instrumentation_scope for s in spans)
    assert all(s.resource["service.name"] == producer.service_name for s in spans)


def test_docs_tables_are_generated_from_the_registry(repo_root: Path) -> None:
    doc = (repo_root / "docs" / "telemetry.md").read_text(encoding="utf-8")
    assert render_tables() in doc, (
        "docs/telemetry.md is out of date; run "
        "`python -m otel_oracles.emit._registry --write docs/telemetry.md`"
    )


def test_prometheus_names_follow_the_collector_translation() -> None:
    by_name = {m.name: m.prometheus_name for m in load_registry().metrics}
    assert by_name[n.METRIC_TRACES] == "otel_oracles_grade_traces_total"
    assert by_name[n.METRIC_DURATION] == "otel_oracles_grade_duration_seconds"
    assert by_name[n.METRIC_BUFFERED_TRACES] == "otel_oracles_receiver_buffered_traces"
