"""The package's metric exporters: the grader's metrics are aggregated by the SDK's
``MeterProvider`` (public API), and its periodic reader hands them to one of these.

``OwnMetricExporter`` tells the emitter about each failed export (the reader would only log
it), so an undelivered metric export is counted like an undelivered span, and adds the
verdict metrics to each collection it is handed (``add_metrics``, set by
``GraderMetrics.attach``): the periodic reader calls ``export`` right after every collection
(periodic, ``force_flush``, shutdown), and the exporter knows the temporality it asked the
reader for (``temporality``), so the merge needs no private part of the SDK.
``SuppliedMetricExporter`` is that for an SDK ``MetricExporter`` a caller supplies.
``OtlpMetricExporter`` encodes in the compiled core (``encode_metrics_proto``, the request the
OTLP exporters' ``encode_metrics`` builds) and sends through the same senders as spans and
logs (``_transport``).
"""

from __future__ import annotations

import logging
import os
from abc import abstractmethod
from collections.abc import Callable
from typing import Any

from opentelemetry.sdk.metrics import (
    Counter,
    Histogram,
    ObservableCounter,
    ObservableGauge,
    ObservableUpDownCounter,
    UpDownCounter,
)
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    MetricExporter,
    MetricExportResult,
    MetricsData,
)

from otel_oracles._native import encode_metrics_proto
from otel_oracles.emit._transport import Sender

logger = logging.getLogger(__name__)

TEMPORALITY_VARIABLE = "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE"
_DELTA = AggregationTemporality.DELTA
_CUMULATIVE = AggregationTemporality.CUMULATIVE
_PREFERENCES: dict[str, dict[type, AggregationTemporality]] = {
    "cumulative": {},
    "delta": {Counter: _DELTA, ObservableCounter: _DELTA, Histogram: _DELTA},
    "lowmemory": {Counter: _DELTA, Histogram: _DELTA},
}
"""The specification's temporality preferences (anything not listed is cumulative)."""


def preferred_temporality() -> dict[type, AggregationTemporality]:
    """The temporality per instrument that ``OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE``
    asks for (cumulative by default), as the SDK's OTLP metric exporters read it."""
    value = os.environ.get(TEMPORALITY_VARIABLE, "").strip().lower() or "cumulative"
    chosen = _PREFERENCES.get(value)
    if chosen is None:
        logger.warning("unknown %s %r; using cumulative", TEMPORALITY_VARIABLE, value)
        chosen = {}
    every = (Counter, UpDownCounter, Histogram, ObservableCounter, ObservableUpDownCounter)
    return {kind: chosen.get(kind, _CUMULATIVE) for kind in (*every, ObservableGauge)}


class OwnMetricExporter(MetricExporter):
    """A metric exporter of this package: ``on_failure`` hears of every failed export, and
    ``add_metrics`` completes each collection before it is delivered."""

    def __init__(self, temporality: dict[type, AggregationTemporality] | None = None) -> None:
        super().__init__(preferred_temporality=temporality)
        self.temporality: dict[type, AggregationTemporality] = dict(temporality or {})
        """The temporality asked of the reader per instrument class (the public ones of
        ``opentelemetry.sdk.metrics``); a class not listed is cumulative."""
        self.on_failure: Callable[[str], None] | None = None
        self.add_metrics: Callable[[MetricsData], MetricsData] | None = None
        """What ``export`` makes of a collection before delivering it (the verdict metrics
        added, ``GraderMetrics.attach``); a collection left with no metrics is not
        delivered, as the reader delivers none when the SDK collected nothing."""
        self.shut_down = False

    def is_delta(self, kind: type) -> bool:
        """Whether instruments of class ``kind`` are collected as deltas for this exporter."""
        return self.temporality.get(kind) is AggregationTemporality.DELTA

    @abstractmethod
    def deliver(self, metrics_data: MetricsData, timeout_s: float) -> bool:
        """Write or send ``metrics_data`` within ``timeout_s``; False when it was not
        delivered."""

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        try:
            if self.add_metrics is not None and not self.shut_down:
                metrics_data = self.add_metrics(metrics_data)
                if not metrics_data.resource_metrics:
                    return MetricExportResult.SUCCESS
            # The reader's timeout bounds the export: a flush at shutdown passes what is
            # left of the drain's budget, which a silent collector must not outlast.
            ok = not self.shut_down and self.deliver(metrics_data, timeout_millis / 1000)
        except Exception:
            logger.exception("metric export via %s raised", type(self).__name__)
            ok = False
        if not ok and self.on_failure is not None:
            self.on_failure(type(self).__name__)
        return MetricExportResult.SUCCESS if ok else MetricExportResult.FAILURE

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        self.shut_down = True


class OtlpMetricExporter(OwnMetricExporter):
    """OTLP metrics through a ``_transport`` sender."""

    def __init__(self, sender: Sender) -> None:
        super().__init__(preferred_temporality())
        self.sender = sender

    def deliver(self, metrics_data: MetricsData, timeout_s: float) -> bool:
        return self.sender.send(encode_metrics_proto(metrics_data), timeout_s)

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        super().shutdown()
        self.sender.shutdown()


class SuppliedMetricExporter(OwnMetricExporter):
    """An SDK ``MetricExporter`` a caller supplies (``OtelEmitter(metric_exporters=...)``),
    fed through its public ``export``, ``force_flush`` and ``shutdown``.

    The SDK keeps an exporter's temporality and aggregation preferences private, so the
    reader is asked for cumulative metrics unless
    ``OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`` says otherwise
    (``preferred_temporality``), with the default aggregations; a failed export is counted
    as one of the package's exporters' is."""

    def __init__(self, exporter: MetricExporter) -> None:
        super().__init__(preferred_temporality())
        self.exporter = exporter

    def deliver(self, metrics_data: MetricsData, timeout_s: float) -> bool:
        result = self.exporter.export(metrics_data, timeout_millis=timeout_s * 1000)
        return result is MetricExportResult.SUCCESS

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return self.exporter.force_flush(timeout_millis=timeout_millis)

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        if not self.shut_down:
            super().shutdown()
            self.exporter.shutdown(timeout_millis=timeout_millis, **kwargs)
