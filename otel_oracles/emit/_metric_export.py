"""The package's metric readers and exporters: each exporter has one ``MetricReader``, which
collects the grader's metrics (``GraderMetrics``, aggregated by the grader itself, no meter
provider) every ``OTEL_METRIC_EXPORT_INTERVAL``, on ``force_flush`` and once more at
shutdown, and hands each collection to its exporter (``_metric_data.MetricsData``).

``OwnMetricExporter`` tells the emitter about each failed export, so an undelivered metric
export is counted like an undelivered span. ``OtlpMetricExporter`` encodes in the compiled
core (``encode_metrics_proto``, the request the OTLP exporters' ``encode_metrics`` builds)
and sends through the same senders as spans and logs (``_transport``).
``SuppliedMetricExporter`` feeds an SDK ``MetricExporter`` a caller supplies the SDK's own
data classes, the one place the SDK's metrics module is imported.

The reader keeps the SDK's ``PeriodicExportingMetricReader``'s rules: the interval and
timeout from ``OTEL_METRIC_EXPORT_INTERVAL`` / ``OTEL_METRIC_EXPORT_TIMEOUT`` (60 s and 30 s;
an invalid value warned about and the default used, an interval <= 0 refused), a daemon
thread collecting on the interval, one export at a time, a collection with no metrics
delivered nowhere. Unlike the SDK's, it collects once more at shutdown even when the
interval is infinite (the SDK's final collection ran on its thread, so an infinite
interval sent nothing at all), on the caller's thread.
"""

from __future__ import annotations

import logging
import math
import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING

from otel_oracles._native import encode_metrics_proto
from otel_oracles.emit._metric_data import MetricsData, ResourceMetrics, ScopeMetrics
from otel_oracles.emit._resource import GraderResource, GraderScope, sdk_resource, sdk_scope
from otel_oracles.emit._transport import Sender

if TYPE_CHECKING:
    from opentelemetry.sdk.metrics.export import MetricExporter
    from opentelemetry.sdk.metrics.export import MetricsData as SdkMetricsData

    from otel_oracles.emit._metric_data import Metric
    from otel_oracles.emit._metrics import GraderMetrics, _ReaderSeries

logger = logging.getLogger(__name__)

TEMPORALITY_VARIABLE = "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE"
_DELTA_PREFERENCES = frozenset({"delta", "lowmemory"})
"""The specification's preferences that make counters and histograms deltas (``delta`` also
observable counters, which the grader has none of); up-down counters stay cumulative."""

INTERVAL_VARIABLE = "OTEL_METRIC_EXPORT_INTERVAL"
TIMEOUT_VARIABLE = "OTEL_METRIC_EXPORT_TIMEOUT"
DEFAULT_INTERVAL_MS = 60_000.0
DEFAULT_TIMEOUT_MS = 30_000.0


def prefers_delta() -> bool:
    """Whether ``OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`` asks for delta counters
    and histograms (``delta``, ``lowmemory``); cumulative by default, as the SDK's OTLP
    metric exporters read it."""
    value = os.environ.get(TEMPORALITY_VARIABLE, "").strip().lower() or "cumulative"
    if value != "cumulative" and value not in _DELTA_PREFERENCES:
        logger.warning("unknown %s %r; using cumulative", TEMPORALITY_VARIABLE, value)
        return False
    return value in _DELTA_PREFERENCES


def _milliseconds(variable: str, default: float) -> float:
    """``variable``'s milliseconds, else ``default`` (an invalid value warned about)."""
    try:
        return float(os.environ.get(variable, default))
    except ValueError:
        logger.warning("invalid %s %r; using %s ms", variable, os.environ[variable], default)
        return default


class OwnMetricExporter(ABC):
    """A metric exporter of this package: gets each collection a ``MetricReader`` makes,
    counters and durations as deltas when ``delta``; ``on_failure`` hears of every failed
    export."""

    def __init__(self, delta: bool = False) -> None:
        self.delta = delta
        self.on_failure: Callable[[str], None] | None = None
        self.shut_down = False

    @abstractmethod
    def deliver(self, metrics_data: MetricsData, timeout_s: float) -> bool:
        """Write or send ``metrics_data`` within ``timeout_s``; False when it was not
        delivered."""

    def export(self, metrics_data: MetricsData, timeout_s: float) -> bool:
        """``deliver``, its failure (False or an exception) told to ``on_failure``."""
        try:
            ok = not self.shut_down and self.deliver(metrics_data, timeout_s)
        except Exception:
            logger.exception("metric export via %s raised", type(self).__name__)
            ok = False
        if not ok and self.on_failure is not None:
            self.on_failure(type(self).__name__)
        return ok

    def force_flush(self, timeout_s: float) -> bool:
        return True

    def shutdown(self, timeout_s: float) -> None:
        self.shut_down = True


class OtlpMetricExporter(OwnMetricExporter):
    """OTLP metrics through a ``_transport`` sender, in the temporality
    ``OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`` asks for."""

    def __init__(self, sender: Sender) -> None:
        super().__init__(prefers_delta())
        self.sender = sender

    def deliver(self, metrics_data: MetricsData, timeout_s: float) -> bool:
        return self.sender.send(encode_metrics_proto(metrics_data), timeout_s)

    def shutdown(self, timeout_s: float) -> None:
        super().shutdown(timeout_s)
        self.sender.shutdown()


class SuppliedMetricExporter(OwnMetricExporter):
    """An SDK ``MetricExporter`` a caller supplies (``OtelEmitter(metric_exporters=...)``),
    fed the SDK's data classes through its public ``export``, ``force_flush`` and
    ``shutdown``.

    The SDK keeps an exporter's temporality and aggregation preferences private, so it gets
    cumulative metrics unless ``OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`` says
    otherwise, with the default aggregations; a failed export is counted as one of the
    package's exporters' is."""

    def __init__(self, exporter: MetricExporter) -> None:
        super().__init__(prefers_delta())
        self.exporter = exporter

    def deliver(self, metrics_data: MetricsData, timeout_s: float) -> bool:
        from opentelemetry.sdk.metrics.export import MetricExportResult

        result = self.exporter.export(
            sdk_metrics_data(metrics_data), timeout_millis=timeout_s * 1000
        )
        return result is MetricExportResult.SUCCESS

    def force_flush(self, timeout_s: float) -> bool:
        return self.exporter.force_flush(timeout_millis=timeout_s * 1000)

    def shutdown(self, timeout_s: float) -> None:
        if not self.shut_down:
            super().shutdown(timeout_s)
            self.exporter.shutdown(timeout_millis=timeout_s * 1000)


def sdk_metrics_data(data: MetricsData) -> SdkMetricsData:
    """``data`` as the SDK's data classes (what an SDK exporter's ``export`` takes)."""
    from opentelemetry.sdk.metrics.export import (
        AggregationTemporality,
        Histogram,
        HistogramDataPoint,
        Metric,
        NumberDataPoint,
        ResourceMetrics,
        ScopeMetrics,
        Sum,
    )
    from opentelemetry.sdk.metrics.export import MetricsData as SdkData

    from otel_oracles.emit import _metric_data as own

    def metric(m: own.Metric) -> Metric:
        d = m.data
        temporality = AggregationTemporality(d.aggregation_temporality)
        sdk: Sum | Histogram
        if isinstance(d, own.Sum):
            sdk = Sum(
                data_points=[
                    NumberDataPoint(
                        attributes=p.attributes,
                        start_time_unix_nano=p.start_time_unix_nano,
                        time_unix_nano=p.time_unix_nano,
                        value=p.value,
                        exemplars=[],
                    )
                    for p in d.data_points
                ],
                aggregation_temporality=temporality,
                is_monotonic=d.is_monotonic,
            )
        else:
            sdk = Histogram(
                data_points=[
                    HistogramDataPoint(
                        attributes=p.attributes,
                        start_time_unix_nano=p.start_time_unix_nano,
                        time_unix_nano=p.time_unix_nano,
                        count=p.count,
                        sum=p.sum,
                        bucket_counts=p.bucket_counts,
                        explicit_bounds=p.explicit_bounds,
                        min=p.min,
                        max=p.max,
                        exemplars=[],
                    )
                    for p in d.data_points
                ],
                aggregation_temporality=temporality,
            )
        return Metric(name=m.name, description=m.description, unit=m.unit, data=sdk)

    return SdkData(
        resource_metrics=[
            ResourceMetrics(
                resource=sdk_resource(rm.resource),
                scope_metrics=[
                    ScopeMetrics(
                        scope=sdk_scope(sm.scope),
                        metrics=[metric(m) for m in sm.metrics],
                        schema_url=sm.schema_url,
                    )
                    for sm in rm.scope_metrics
                ],
                schema_url=rm.schema_url,
            )
            for rm in data.resource_metrics
        ]
    )


class MetricReader:
    """Collects ``metrics``' series for ``exporter`` and hands each collection to it, as
    ``scope``'s metrics under ``resource`` (see the module docstring for when).

    ``interval_ms`` / ``timeout_ms`` default to the ``OTEL_METRIC_EXPORT_*`` variables; an
    infinite interval starts no thread."""

    def __init__(
        self,
        exporter: OwnMetricExporter,
        metrics: GraderMetrics,
        resource: GraderResource,
        scope: GraderScope,
        interval_ms: float | None = None,
        timeout_ms: float | None = None,
    ) -> None:
        if interval_ms is None:
            interval_ms = _milliseconds(INTERVAL_VARIABLE, DEFAULT_INTERVAL_MS)
        if timeout_ms is None:
            timeout_ms = _milliseconds(TIMEOUT_VARIABLE, DEFAULT_TIMEOUT_MS)
        if not interval_ms > 0:
            raise ValueError(f"metric export interval {interval_ms} ms: must be above 0")
        self.exporter = exporter
        self._metrics = metrics
        self._series: _ReaderSeries = metrics.reader_series(exporter.delta)
        self._resource = resource
        self._scope = scope
        self._timeout_s = timeout_ms / 1000
        self._export_lock = threading.Lock()
        """Held for a collection and its export: the exporter gets one at a time."""
        self._stop = threading.Event()
        self._shut_down = False
        self._thread: threading.Thread | None = None
        if interval_ms < math.inf:
            self._thread = threading.Thread(
                target=self._tick,
                args=(interval_ms / 1000,),
                name="otel-oracles-metrics",
                daemon=True,
            )
            self._thread.start()

    def _tick(self, interval_s: float) -> None:
        while not self._stop.wait(interval_s):
            self.collect()

    def collect(self, timeout_s: float | None = None) -> bool:
        """Collect now and export what was collected within ``timeout_s`` (the export
        timeout by default); True when there was nothing or it was delivered."""
        with self._export_lock:
            metrics = self._metrics.collect(self._series)
            if not metrics:
                return True
            return self.exporter.export(
                self._data(metrics), self._timeout_s if timeout_s is None else timeout_s
            )

    def _data(self, metrics: list[Metric]) -> MetricsData:
        scope = self._scope
        return MetricsData(
            [
                ResourceMetrics(
                    self._resource,
                    [ScopeMetrics(scope, metrics, scope.schema_url)],
                    self._resource.schema_url,
                )
            ]
        )

    def force_flush(self, timeout_s: float) -> bool:
        """Collect and export now, then flush the exporter."""
        if self._shut_down:
            return False
        self.collect(min(timeout_s, self._timeout_s))
        return self.exporter.force_flush(timeout_s)

    def shutdown(self) -> None:
        """Stop the thread (after a collection it is in), collect a last time and shut the
        exporter down."""
        if self._shut_down:
            return
        self._shut_down = True
        self._stop.set()
        if self._thread is not None:
            self._thread.join(self._timeout_s)
        try:
            self.collect()
        finally:
            self.exporter.shutdown(self._timeout_s)


def reader_for(
    exporter: OwnMetricExporter | MetricExporter,
    metrics: GraderMetrics,
    resource: GraderResource,
    scope: GraderScope,
) -> MetricReader:
    """A reader for one of the package's exporters, or for an SDK ``MetricExporter`` a caller
    supplied (wrapped in a ``SuppliedMetricExporter``)."""
    own = exporter if isinstance(exporter, OwnMetricExporter) else SuppliedMetricExporter(exporter)
    return MetricReader(own, metrics, resource, scope)
