//! Encoding of the SDK's `MetricsData` (what the emitter's `MeterProvider` hands its metric
//! exporters) to OTLP protobuf and OTLP/JSON bytes, read through the SDK's public data
//! classes: the same request the SDK's `encode_metrics` builds, which the Python tests hold
//! this equal to, byte for byte.
//!
//! As that encoder does: a resource's and a scope's schema URL come from the `Resource`
//! and the `InstrumentationScope`; a point's value is `as_int` when it is a Python `int`
//! (a `bool` too) and `as_double` otherwise; an exemplar carries its span only when it has
//! both ids; a metric of a kind it does not know is written without data, with a warning.
//! Attribute values go through the span encoder's rules (`encode::value`).

use std::borrow::Cow;

use otel_oracles_core::encode::records::{
    Attribute, Buckets, Exemplar, ExponentialPoint, HistogramPoint, Metric, MetricData, Number,
    NumberPoint, ResourceMetrics, ScopeMetrics,
};
use otel_oracles_core::encode::{json_metrics, proto_metrics};
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyInt};

use crate::encode::{attributes, nanos, optional_pairs, span_id, text, trace_id, Skipped};

/// Reads the SDK's objects into the core's records, noting what it had to leave out.
struct Reader {
    skipped: Skipped,
    unknown_kinds: Vec<String>,
}

fn owned_text(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<String> {
    Ok(text(obj, field)?.into_owned())
}

fn count(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<u64> {
    obj.extract::<u64>()
        .map_err(|_| PyValueError::new_err(format!("{field}: expected a count")))
}

fn float(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<f64> {
    obj.extract::<f64>()
        .map_err(|_| PyValueError::new_err(format!("{field}: expected a number")))
}

fn optional_float(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<Option<f64>> {
    if obj.is_none() {
        Ok(None)
    } else {
        float(obj, field).map(Some)
    }
}

/// An `int` (or `bool`) as `as_int`, anything else as `as_double`.
fn number(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<Number> {
    if obj.is_instance_of::<PyInt>() || obj.is_instance_of::<PyBool>() {
        return obj.extract::<i64>().map(Number::Int).map_err(|_| {
            PyValueError::new_err(format!("{field}: an int outside the 64-bit range"))
        });
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Number::Double(f.value()));
    }
    float(obj, field).map(Number::Double)
}

fn enum_number(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<u32> {
    obj.extract::<u32>()
        .map_err(|_| PyValueError::new_err(format!("{field}: expected an enum member")))
}

fn counts(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<Vec<u64>> {
    obj.try_iter()?.map(|n| count(&n?, field)).collect()
}

impl Reader {
    fn attributes(&mut self, obj: &Bound<'_, PyAny>) -> PyResult<Vec<Attribute<'static>>> {
        let held = optional_pairs(obj)?;
        Ok(attributes(&held, &mut self.skipped)?
            .into_iter()
            .map(|a| Attribute {
                key: Cow::Owned(a.key.into_owned()),
                value: a.value.into_owned(),
            })
            .collect())
    }

    fn exemplars(&mut self, point: &Bound<'_, PyAny>) -> PyResult<Vec<Exemplar>> {
        let py = point.py();
        let mut out = Vec::new();
        for exemplar in point.getattr(intern!(py, "exemplars"))?.try_iter()? {
            let exemplar = exemplar?;
            let span = exemplar.getattr(intern!(py, "span_id"))?;
            let trace = exemplar.getattr(intern!(py, "trace_id"))?;
            let value = exemplar.getattr(intern!(py, "value"))?;
            if !(value.is_instance_of::<PyFloat>() || value.is_instance_of::<PyInt>()) {
                return Err(PyValueError::new_err(
                    "Exemplar.value: expected an int or a float",
                ));
            }
            out.push(Exemplar {
                filtered_attributes: self
                    .attributes(&exemplar.getattr(intern!(py, "filtered_attributes"))?)?,
                time_ns: nanos(
                    &exemplar.getattr(intern!(py, "time_unix_nano"))?,
                    "Exemplar.time_unix_nano",
                )?,
                value: number(&value, "Exemplar.value")?,
                span: if span.is_none() || trace.is_none() {
                    None
                } else {
                    Some((
                        span_id(&span, "Exemplar.span_id")?,
                        trace_id(&trace, "Exemplar.trace_id")?,
                    ))
                },
            });
        }
        Ok(out)
    }

    fn number_point(&mut self, point: &Bound<'_, PyAny>, gauge: bool) -> PyResult<NumberPoint> {
        let py = point.py();
        Ok(NumberPoint {
            attributes: self.attributes(&point.getattr(intern!(py, "attributes"))?)?,
            start_ns: if gauge {
                0
            } else {
                nanos(
                    &point.getattr(intern!(py, "start_time_unix_nano"))?,
                    "NumberDataPoint.start_time_unix_nano",
                )?
            },
            time_ns: nanos(
                &point.getattr(intern!(py, "time_unix_nano"))?,
                "NumberDataPoint.time_unix_nano",
            )?,
            value: number(
                &point.getattr(intern!(py, "value"))?,
                "NumberDataPoint.value",
            )?,
            exemplars: self.exemplars(point)?,
        })
    }

    fn histogram_point(&mut self, point: &Bound<'_, PyAny>) -> PyResult<HistogramPoint> {
        let py = point.py();
        let bounds = point
            .getattr(intern!(py, "explicit_bounds"))?
            .try_iter()?
            .map(|d| float(&d?, "HistogramDataPoint.explicit_bounds"))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(HistogramPoint {
            attributes: self.attributes(&point.getattr(intern!(py, "attributes"))?)?,
            start_ns: nanos(
                &point.getattr(intern!(py, "start_time_unix_nano"))?,
                "HistogramDataPoint.start_time_unix_nano",
            )?,
            time_ns: nanos(
                &point.getattr(intern!(py, "time_unix_nano"))?,
                "HistogramDataPoint.time_unix_nano",
            )?,
            count: count(
                &point.getattr(intern!(py, "count"))?,
                "HistogramDataPoint.count",
            )?,
            sum: optional_float(
                &point.getattr(intern!(py, "sum"))?,
                "HistogramDataPoint.sum",
            )?,
            bucket_counts: counts(
                &point.getattr(intern!(py, "bucket_counts"))?,
                "HistogramDataPoint.bucket_counts",
            )?,
            explicit_bounds: bounds,
            exemplars: self.exemplars(point)?,
            min: optional_float(
                &point.getattr(intern!(py, "min"))?,
                "HistogramDataPoint.min",
            )?,
            max: optional_float(
                &point.getattr(intern!(py, "max"))?,
                "HistogramDataPoint.max",
            )?,
        })
    }

    fn buckets(side: &Bound<'_, PyAny>, field: &str) -> PyResult<Buckets> {
        let py = side.py();
        Ok(Buckets {
            offset: side
                .getattr(intern!(py, "offset"))?
                .extract::<i32>()
                .map_err(|_| PyValueError::new_err(format!("{field}.offset: expected an int32")))?,
            counts: counts(&side.getattr(intern!(py, "bucket_counts"))?, field)?,
        })
    }

    fn exponential_point(&mut self, point: &Bound<'_, PyAny>) -> PyResult<ExponentialPoint> {
        let py = point.py();
        const WHAT: &str = "ExponentialHistogramDataPoint";
        Ok(ExponentialPoint {
            attributes: self.attributes(&point.getattr(intern!(py, "attributes"))?)?,
            start_ns: nanos(
                &point.getattr(intern!(py, "start_time_unix_nano"))?,
                "ExponentialHistogramDataPoint.start_time_unix_nano",
            )?,
            time_ns: nanos(
                &point.getattr(intern!(py, "time_unix_nano"))?,
                "ExponentialHistogramDataPoint.time_unix_nano",
            )?,
            count: count(&point.getattr(intern!(py, "count"))?, WHAT)?,
            sum: optional_float(&point.getattr(intern!(py, "sum"))?, WHAT)?,
            scale: point
                .getattr(intern!(py, "scale"))?
                .extract::<i32>()
                .map_err(|_| PyValueError::new_err(format!("{WHAT}.scale: expected an int32")))?,
            zero_count: count(&point.getattr(intern!(py, "zero_count"))?, WHAT)?,
            positive: Self::buckets(&point.getattr(intern!(py, "positive"))?, WHAT)?,
            negative: Self::buckets(&point.getattr(intern!(py, "negative"))?, WHAT)?,
            flags: point
                .getattr(intern!(py, "flags"))?
                .extract::<u32>()
                .map_err(|_| PyValueError::new_err(format!("{WHAT}.flags: expected an int")))?,
            exemplars: self.exemplars(point)?,
            min: optional_float(&point.getattr(intern!(py, "min"))?, WHAT)?,
            max: optional_float(&point.getattr(intern!(py, "max"))?, WHAT)?,
        })
    }

    fn points<T>(
        &mut self,
        data: &Bound<'_, PyAny>,
        mut read: impl FnMut(&mut Self, &Bound<'_, PyAny>) -> PyResult<T>,
    ) -> PyResult<Vec<T>> {
        let mut out = Vec::new();
        for point in data
            .getattr(intern!(data.py(), "data_points"))?
            .try_iter()?
        {
            out.push(read(self, &point?)?);
        }
        Ok(out)
    }

    /// The metric's data by the SDK class it is (`Gauge`, `Sum`, `Histogram`,
    /// `ExponentialHistogram` of `opentelemetry.sdk.metrics.export`).
    fn data(&mut self, data: &Bound<'_, PyAny>) -> PyResult<Option<MetricData>> {
        let py = data.py();
        let kind = data.get_type().name()?.to_string();
        let temporality = || {
            enum_number(
                &data.getattr(intern!(py, "aggregation_temporality"))?,
                "aggregation_temporality",
            )
        };
        Ok(Some(match kind.as_str() {
            "Gauge" => MetricData::Gauge(self.points(data, |r, p| r.number_point(p, true))?),
            "Sum" => MetricData::Sum {
                points: self.points(data, |r, p| r.number_point(p, false))?,
                temporality: temporality()?,
                monotonic: data.getattr(intern!(py, "is_monotonic"))?.is_truthy()?,
            },
            "Histogram" => MetricData::Histogram {
                points: self.points(data, Self::histogram_point)?,
                temporality: temporality()?,
            },
            "ExponentialHistogram" => MetricData::ExponentialHistogram {
                points: self.points(data, Self::exponential_point)?,
                temporality: temporality()?,
            },
            _ => {
                self.unknown_kinds.push(kind);
                return Ok(None);
            }
        }))
    }

    fn metric(&mut self, metric: &Bound<'_, PyAny>) -> PyResult<Metric> {
        let py = metric.py();
        Ok(Metric {
            name: owned_text(&metric.getattr(intern!(py, "name"))?, "Metric.name")?,
            description: owned_text(
                &metric.getattr(intern!(py, "description"))?,
                "Metric.description",
            )?,
            unit: owned_text(&metric.getattr(intern!(py, "unit"))?, "Metric.unit")?,
            data: self.data(&metric.getattr(intern!(py, "data"))?)?,
        })
    }

    fn scope_metrics(&mut self, scope_metrics: &Bound<'_, PyAny>) -> PyResult<ScopeMetrics> {
        let py = scope_metrics.py();
        let scope = scope_metrics.getattr(intern!(py, "scope"))?;
        let mut metrics = Vec::new();
        for metric in scope_metrics.getattr(intern!(py, "metrics"))?.try_iter()? {
            metrics.push(self.metric(&metric?)?);
        }
        if scope.is_none() {
            return Ok(ScopeMetrics {
                name: String::new(),
                version: String::new(),
                attributes: Vec::new(),
                schema_url: String::new(),
                metrics,
            });
        }
        Ok(ScopeMetrics {
            name: owned_text(
                &scope.getattr(intern!(py, "name"))?,
                "InstrumentationScope.name",
            )?,
            version: owned_text(
                &scope.getattr(intern!(py, "version"))?,
                "InstrumentationScope.version",
            )?,
            attributes: self.attributes(&scope.getattr(intern!(py, "attributes"))?)?,
            schema_url: owned_text(
                &scope.getattr(intern!(py, "schema_url"))?,
                "InstrumentationScope.schema_url",
            )?,
            metrics,
        })
    }

    fn resources(&mut self, metrics_data: &Bound<'_, PyAny>) -> PyResult<Vec<ResourceMetrics>> {
        let py = metrics_data.py();
        let mut out = Vec::new();
        for resource_metrics in metrics_data
            .getattr(intern!(py, "resource_metrics"))?
            .try_iter()?
        {
            let resource_metrics = resource_metrics?;
            let resource = resource_metrics.getattr(intern!(py, "resource"))?;
            let mut scopes = Vec::new();
            for scope in resource_metrics
                .getattr(intern!(py, "scope_metrics"))?
                .try_iter()?
            {
                scopes.push(self.scope_metrics(&scope?)?);
            }
            out.push(ResourceMetrics {
                resource: self.attributes(&resource.getattr(intern!(py, "attributes"))?)?,
                schema_url: owned_text(
                    &resource.getattr(intern!(py, "schema_url"))?,
                    "Resource.schema_url",
                )?,
                scopes,
            });
        }
        Ok(out)
    }

    fn log(self, py: Python<'_>) -> PyResult<()> {
        self.skipped.log(py)?;
        if !self.unknown_kinds.is_empty() {
            py.import(intern!(py, "logging"))?
                .call_method1(intern!(py, "getLogger"), ("otel_oracles.emit",))?
                .call_method1(
                    intern!(py, "warning"),
                    (
                        "cannot encode metric data of kind(s) %s; the metrics are sent without points",
                        self.unknown_kinds.join(", "),
                    ),
                )?;
        }
        Ok(())
    }
}

fn encode<'py>(
    metrics_data: &Bound<'py, PyAny>,
    write: fn(&[ResourceMetrics]) -> Vec<u8>,
) -> PyResult<Bound<'py, PyBytes>> {
    let py = metrics_data.py();
    let mut reader = Reader {
        skipped: Skipped::default(),
        unknown_kinds: Vec::new(),
    };
    let resources = reader.resources(metrics_data)?;
    reader.log(py)?;
    Ok(PyBytes::new(py, &write(&resources)))
}

/// The serialized `ExportMetricsServiceRequest` of the SDK's `MetricsData` (empty bytes when
/// it holds no resource).
#[pyfunction]
fn encode_metrics_proto<'py>(metrics_data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    encode(metrics_data, proto_metrics::metrics_request)
}

/// `{"resourceMetrics": ...}` of the SDK's `MetricsData`, as one line of OTLP/JSON (`{}` when
/// it holds no resource).
#[pyfunction]
fn encode_metrics_json<'py>(metrics_data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    encode(metrics_data, json_metrics::metrics_request)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(encode_metrics_proto, m)?)?;
    m.add_function(wrap_pyfunction!(encode_metrics_json, m)?)?;
    Ok(())
}
