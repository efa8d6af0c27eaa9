"""The grader's collected metrics as plain records: what its metric readers hand its
exporters, and what the core's encoders (``encode_metrics_{proto,json}``) read.

The grader aggregates its metrics itself (``_metrics``), so it needs no meter provider;
these records carry a collection to the exporters. Their classes and fields are named as
OTLP's messages and the SDK's data classes are (``Sum``, ``Histogram``,
``NumberDataPoint``...), because the core's encoder reads either by those names: an SDK
``MetricsData`` (tests hold the encoder to the SDK's own encoder) and these encode alike.
The SDK's classes are kept out: importing ``opentelemetry.sdk.metrics`` was the largest
fixed cost of an export grade (docs/performance-history.md, "Emission: the metrics without
the SDK's meter provider"); plain slotted classes, as making them dataclasses cost an export
~29 M instructions at import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from otel_oracles.emit._resource import GraderResource, GraderScope

DELTA = 1
"""OTLP's ``AGGREGATION_TEMPORALITY_DELTA`` (the SDK's ``AggregationTemporality.DELTA``)."""
CUMULATIVE = 2
"""OTLP's ``AGGREGATION_TEMPORALITY_CUMULATIVE``."""
NO_EXEMPLARS: tuple[()] = ()
"""Every point's exemplars: the SDK's default trace-based filter took none (no span is
current where the grader counts)."""


class NumberDataPoint:
    """One series' value of a sum."""

    __slots__ = ("attributes", "exemplars", "start_time_unix_nano", "time_unix_nano", "value")

    def __init__(
        self, attributes: dict[str, Any], start_time_unix_nano: int, time_unix_nano: int, value: int
    ) -> None:
        self.attributes = attributes
        self.start_time_unix_nano = start_time_unix_nano
        self.time_unix_nano = time_unix_nano
        self.value = value
        self.exemplars = NO_EXEMPLARS


class HistogramDataPoint:
    """One series of a histogram: explicit bucket counts, sum, min and max."""

    __slots__ = (
        "attributes",
        "bucket_counts",
        "count",
        "exemplars",
        "explicit_bounds",
        "max",
        "min",
        "start_time_unix_nano",
        "sum",
        "time_unix_nano",
    )

    def __init__(
        self,
        attributes: dict[str, Any],
        start_time_unix_nano: int,
        time_unix_nano: int,
        count: int,
        sum: float,
        bucket_counts: tuple[int, ...],
        explicit_bounds: tuple[float, ...],
        min: float,
        max: float,
    ) -> None:
        self.attributes = attributes
        self.start_time_unix_nano = start_time_unix_nano
        self.time_unix_nano = time_unix_nano
        self.count = count
        self.sum = sum
        self.bucket_counts = bucket_counts
        self.explicit_bounds = explicit_bounds
        self.min = min
        self.max = max
        self.exemplars = NO_EXEMPLARS


class Sum:
    """A sum's points (``aggregation_temporality``: ``DELTA`` or ``CUMULATIVE``)."""

    __slots__ = ("aggregation_temporality", "data_points", "is_monotonic")

    def __init__(
        self, data_points: list[NumberDataPoint], aggregation_temporality: int, is_monotonic: bool
    ) -> None:
        self.data_points = data_points
        self.aggregation_temporality = aggregation_temporality
        self.is_monotonic = is_monotonic


class Histogram:
    """A histogram's points."""

    __slots__ = ("aggregation_temporality", "data_points")

    def __init__(self, data_points: list[HistogramDataPoint], aggregation_temporality: int) -> None:
        self.data_points = data_points
        self.aggregation_temporality = aggregation_temporality


class Metric:
    __slots__ = ("data", "description", "name", "unit")

    def __init__(self, name: str, description: str, unit: str, data: Sum | Histogram) -> None:
        self.name = name
        self.description = description
        self.unit = unit
        self.data = data


class ScopeMetrics:
    __slots__ = ("metrics", "schema_url", "scope")

    def __init__(self, scope: GraderScope, metrics: list[Metric], schema_url: str) -> None:
        self.scope = scope
        self.metrics = metrics
        self.schema_url = schema_url


class ResourceMetrics:
    __slots__ = ("resource", "schema_url", "scope_metrics")

    def __init__(
        self, resource: GraderResource, scope_metrics: list[ScopeMetrics], schema_url: str
    ) -> None:
        self.resource = resource
        self.scope_metrics = scope_metrics
        self.schema_url = schema_url


class MetricsData:
    """One collection of the grader's metrics, as an exporter gets it."""

    __slots__ = ("resource_metrics",)

    def __init__(self, resource_metrics: list[ResourceMetrics]) -> None:
        self.resource_metrics = resource_metrics
