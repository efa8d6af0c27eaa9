"""The compiled core's metric encoders against the SDK's own: for what a real
``MeterProvider`` collects (every instrument kind, both temporalities, explicit and
exponential histograms, exemplars from a sampled span, attribute values of every type), the
protobuf must be byte for byte what ``encode_metrics`` + ``SerializeToString`` give, and the
OTLP/JSON what protobuf's JSON printer makes of that request. If an SDK upgrade changes the
encoding, these fail instead of the exported metrics silently changing."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable

import pytest
from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics
from opentelemetry.metrics import CallbackOptions, Observation
from opentelemetry.sdk.metrics import (
    AlwaysOffExemplarFilter,
    AlwaysOnExemplarFilter,
    Counter,
    Histogram,
    MeterProvider,
    ObservableCounter,
    UpDownCounter,
)
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    InMemoryMetricReader,
    Metric,
    MetricsData,
    ResourceMetrics,
    ScopeMetrics,
)
from opentelemetry.sdk.metrics.view import (
    ExplicitBucketHistogramAggregation,
    ExponentialBucketHistogramAggregation,
    View,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.util.instrumentation import InstrumentationScope

from otel_oracles._native import encode_metrics_json, encode_metrics_proto
from tests.emit.conftest import reference_otlp_json

ATTRIBUTE_VALUES: list[dict[str, object]] = [
    {"outcome": "pass", "contract": "support-answers"},
    {"outcome": "invariant_failure", "n": 3, "ratio": 0.25, "strict": True},
    {"tags": ["a", "b"], "codes": [1, 2], "empty": ""},
    {},
]


def _observe(values: list[float]) -> object:
    def callback(_options: CallbackOptions) -> Iterable[Observation]:
        return [Observation(v, ATTRIBUTE_VALUES[i % 2]) for i, v in enumerate(values)]

    return callback


def _collect(delta: bool, exemplars: bool) -> MetricsData:
    temporality = AggregationTemporality.DELTA if delta else AggregationTemporality.CUMULATIVE
    reader = InMemoryMetricReader(
        preferred_temporality={
            kind: temporality for kind in (Counter, UpDownCounter, Histogram, ObservableCounter)
        }
    )
    provider = MeterProvider(
        metric_readers=[reader],
        resource=Resource({"service.name": "otel-oracles", "k8s.pod.uid": "x"}, "https://s/1"),
        views=[
            View(instrument_name="exp.*", aggregation=ExponentialBucketHistogramAggregation()),
            View(
                instrument_name="bounded",
                aggregation=ExplicitBucketHistogramAggregation((0.1, 1.0, 10.0), False),
            ),
            View(instrument_name="*"),
        ],
        exemplar_filter=AlwaysOnExemplarFilter() if exemplars else AlwaysOffExemplarFilter(),
    )
    meter = provider.get_meter("otel_oracles", "1.2.3", schema_url="https://s/2")
    other = provider.get_meter("other.scope", attributes={"scope.attr": 7})
    tracer = TracerProvider().get_tracer("t")
    counter = meter.create_counter("oracles.results", unit="{result}", description="results")
    floats = meter.create_counter("seconds.total", unit="s")
    updown = meter.create_up_down_counter("buffered")
    hist = meter.create_histogram("duration", unit="s")
    bounded = other.create_histogram("bounded")
    expo = meter.create_histogram("exp.duration", unit="ms")
    meter.create_observable_gauge("gauge", callbacks=[_observe([1.5, -2.0])])
    other.create_observable_up_down_counter("queue", callbacks=[_observe([4, 5])])
    other.create_observable_counter("seen", callbacks=[_observe([10.0])])
    with tracer.start_as_current_span("graded"):
        for i, attrs in enumerate(ATTRIBUTE_VALUES * 3):
            counter.add(i, attrs)
            floats.add(0.5 * i, attrs)
            updown.add(-i if i % 2 else i, attrs)
            hist.record(0.001 * (i + 1) * 10**i, attrs)
            bounded.record(i * 1.5, attrs)
            expo.record(float(i % 5) * 0.7, attrs)  # 0 included: the zero bucket
    data = reader.get_metrics_data()
    assert data is not None
    provider.shutdown()
    return data


def _assert_same(data: MetricsData) -> None:
    expected = encode_metrics(data)
    assert encode_metrics_proto(data) == expected.SerializeToString()
    assert json.loads(encode_metrics_json(data)) == json.loads(reference_otlp_json(expected))


@pytest.mark.parametrize("delta", [False, True], ids=["cumulative", "delta"])
@pytest.mark.parametrize("exemplars", [False, True], ids=["plain", "exemplars"])
def test_collected_metrics_encode_as_the_sdk_encodes_them(delta: bool, exemplars: bool) -> None:
    data = _collect(delta, exemplars)
    kinds = {
        type(m.data).__name__
        for rm in data.resource_metrics
        for sm in rm.scope_metrics
        for m in sm.metrics
    }
    assert kinds == {"Sum", "Gauge", "Histogram", "ExponentialHistogram"}
    has_exemplars = any(
        p.exemplars
        for rm in data.resource_metrics
        for sm in rm.scope_metrics
        for m in sm.metrics
        for p in m.data.data_points
    )
    assert has_exemplars == exemplars
    _assert_same(data)


def _one(metric: Metric) -> MetricsData:
    scope = InstrumentationScope("s", None, None, None)
    return MetricsData([ResourceMetrics(Resource({}), [ScopeMetrics(scope, [metric], "")], "")])


def test_no_resources_is_an_empty_request() -> None:
    data = MetricsData([])
    assert encode_metrics_proto(data) == b"" == encode_metrics(data).SerializeToString()
    assert encode_metrics_json(data) == b"{}"


def test_a_metric_of_an_unknown_kind_goes_without_data_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Summary:
        data_points: tuple[object, ...] = ()

    data = _one(Metric("odd", None, "", Summary()))  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING):
        _assert_same(data)
    assert "Summary" in caplog.text


def test_attribute_values_the_otlp_value_cannot_hold_are_left_out_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    data = _collect(delta=False, exemplars=False)
    first = data.resource_metrics[0].scope_metrics[0].metrics[0]
    point = first.data.data_points[0]
    odd = dict(point.attributes)
    odd["big"] = 2**70
    object.__setattr__(point, "attributes", odd)
    with caplog.at_level(logging.WARNING):
        proto = encode_metrics_proto(data)
    assert "big" in caplog.text
    del odd["big"]
    assert proto == encode_metrics(data).SerializeToString()
