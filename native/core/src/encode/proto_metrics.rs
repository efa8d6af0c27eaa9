//! OTLP protobuf `ExportMetricsServiceRequest` of the metrics the SDK's `MeterProvider`
//! collected for the emitter.
//!
//! The same rules as [`super::proto`] (fields in field-number order, proto3 defaults left
//! out, `oneof` members and `optional` fields written when set, even when zero), which is
//! what upb writes for the request the SDK's `encode_metrics` builds; the Python tests hold
//! the two equal byte for byte. Where that encoder leaves a field unset (a gauge point's
//! start time, a histogram point's flags, an exponential histogram's zero threshold), so
//! does this one.

use super::proto::{
    bytes_field, fixed64, key_value, nested, scope_fields, text, varint, varint_field,
};
use super::records::{
    Buckets, Exemplar, ExponentialPoint, HistogramPoint, Metric, MetricData, Number, NumberPoint,
    ResourceMetrics,
};

fn zigzag(n: i32) -> u64 {
    u64::from(((n << 1) ^ (n >> 31)) as u32)
}

fn fixed64_field(buf: &mut Vec<u8>, tag: u8, n: u64) {
    if n != 0 {
        fixed64(buf, tag, n);
    }
}

fn optional_double(buf: &mut Vec<u8>, tag: u8, value: Option<f64>) {
    if let Some(d) = value {
        fixed64(buf, tag, d.to_bits());
    }
}

/// A packed `repeated fixed64` / `repeated double` (8 bytes each), absent when empty.
fn packed_fixed64(buf: &mut Vec<u8>, tag: u8, values: impl ExactSizeIterator<Item = u64>) {
    if values.len() == 0 {
        return;
    }
    buf.push(tag);
    varint(buf, (values.len() * 8) as u64);
    for n in values {
        buf.extend_from_slice(&n.to_le_bytes());
    }
}

/// The value of a point or exemplar: `as_double` or `as_int` (an `sfixed64`), each the
/// member of a `oneof`, so written even when zero.
fn number(buf: &mut Vec<u8>, double_tag: u8, int_tag: u8, value: Number) {
    match value {
        Number::Double(d) => fixed64(buf, double_tag, d.to_bits()),
        Number::Int(i) => fixed64(buf, int_tag, i as u64),
    }
}

/// `Exemplar`: time = 2, as_double = 3, span_id = 4, trace_id = 5, as_int = 6,
/// filtered_attributes = 7.
fn exemplar(buf: &mut Vec<u8>, tag: u8, exemplar: &Exemplar) {
    nested(buf, &[tag], |buf| {
        fixed64_field(buf, 0x11, exemplar.time_ns);
        if let Number::Double(_) = exemplar.value {
            number(buf, 0x19, 0x31, exemplar.value);
        }
        if let Some((span_id, trace_id)) = &exemplar.span {
            bytes_field(buf, 0x22, span_id);
            bytes_field(buf, 0x2a, trace_id);
        }
        if let Number::Int(_) = exemplar.value {
            number(buf, 0x19, 0x31, exemplar.value);
        }
        for attribute in &exemplar.filtered_attributes {
            key_value(buf, 0x3a, attribute);
        }
    });
}

/// `NumberDataPoint`: start = 2, time = 3, as_double = 4, exemplars = 5, as_int = 6,
/// attributes = 7.
fn number_point(buf: &mut Vec<u8>, point: &NumberPoint) {
    nested(buf, &[0x0a], |buf| {
        fixed64_field(buf, 0x11, point.start_ns);
        fixed64_field(buf, 0x19, point.time_ns);
        if let Number::Double(_) = point.value {
            number(buf, 0x21, 0x31, point.value);
        }
        for e in &point.exemplars {
            exemplar(buf, 0x2a, e);
        }
        if let Number::Int(_) = point.value {
            number(buf, 0x21, 0x31, point.value);
        }
        for attribute in &point.attributes {
            key_value(buf, 0x3a, attribute);
        }
    });
}

/// `HistogramDataPoint`: start = 2, time = 3, count = 4, sum = 5, bucket_counts = 6,
/// explicit_bounds = 7, exemplars = 8, attributes = 9, min = 11, max = 12.
fn histogram_point(buf: &mut Vec<u8>, point: &HistogramPoint) {
    nested(buf, &[0x0a], |buf| {
        fixed64_field(buf, 0x11, point.start_ns);
        fixed64_field(buf, 0x19, point.time_ns);
        fixed64_field(buf, 0x21, point.count);
        optional_double(buf, 0x29, point.sum);
        packed_fixed64(buf, 0x32, point.bucket_counts.iter().copied());
        packed_fixed64(buf, 0x3a, point.explicit_bounds.iter().map(|d| d.to_bits()));
        for e in &point.exemplars {
            exemplar(buf, 0x42, e);
        }
        for attribute in &point.attributes {
            key_value(buf, 0x4a, attribute);
        }
        optional_double(buf, 0x59, point.min);
        optional_double(buf, 0x61, point.max);
    });
}

/// `ExponentialHistogramDataPoint.Buckets`: offset = 1 (sint32), bucket_counts = 2 (packed
/// varints); left out when it has no counts.
fn buckets(buf: &mut Vec<u8>, tag: u8, buckets: &Buckets) {
    if buckets.counts.is_empty() {
        return;
    }
    nested(buf, &[tag], |buf| {
        varint_field(buf, 0x08, zigzag(buckets.offset));
        nested(buf, &[0x12], |buf| {
            for &n in &buckets.counts {
                varint(buf, n);
            }
        });
    });
}

/// `ExponentialHistogramDataPoint`: attributes = 1, start = 2, time = 3, count = 4, sum = 5,
/// scale = 6 (sint32), zero_count = 7, positive = 8, negative = 9, flags = 10,
/// exemplars = 11, min = 12, max = 13.
fn exponential_point(buf: &mut Vec<u8>, point: &ExponentialPoint) {
    nested(buf, &[0x0a], |buf| {
        for attribute in &point.attributes {
            key_value(buf, 0x0a, attribute);
        }
        fixed64_field(buf, 0x11, point.start_ns);
        fixed64_field(buf, 0x19, point.time_ns);
        fixed64_field(buf, 0x21, point.count);
        optional_double(buf, 0x29, point.sum);
        varint_field(buf, 0x30, zigzag(point.scale));
        fixed64_field(buf, 0x39, point.zero_count);
        buckets(buf, 0x42, &point.positive);
        buckets(buf, 0x4a, &point.negative);
        varint_field(buf, 0x50, u64::from(point.flags));
        for e in &point.exemplars {
            exemplar(buf, 0x5a, e);
        }
        optional_double(buf, 0x61, point.min);
        optional_double(buf, 0x69, point.max);
    });
}

/// `Metric`: name = 1, description = 2, unit = 3, gauge = 5, sum = 7, histogram = 9,
/// exponential_histogram = 10. A metric without points has no data field at all.
fn metric(buf: &mut Vec<u8>, metric: &Metric) {
    nested(buf, &[0x12], |buf| {
        text(buf, 0x0a, &metric.name);
        text(buf, 0x12, &metric.description);
        text(buf, 0x1a, &metric.unit);
        let Some(data) = metric.data.as_ref().filter(|d| !d.is_empty()) else {
            return;
        };
        match data {
            MetricData::Gauge(points) => nested(buf, &[0x2a], |buf| {
                points.iter().for_each(|p| number_point(buf, p));
            }),
            MetricData::Sum {
                points,
                temporality,
                monotonic,
            } => nested(buf, &[0x3a], |buf| {
                points.iter().for_each(|p| number_point(buf, p));
                varint_field(buf, 0x10, u64::from(*temporality));
                varint_field(buf, 0x18, u64::from(*monotonic));
            }),
            MetricData::Histogram {
                points,
                temporality,
            } => nested(buf, &[0x4a], |buf| {
                points.iter().for_each(|p| histogram_point(buf, p));
                varint_field(buf, 0x10, u64::from(*temporality));
            }),
            MetricData::ExponentialHistogram {
                points,
                temporality,
            } => nested(buf, &[0x52], |buf| {
                points.iter().for_each(|p| exponential_point(buf, p));
                varint_field(buf, 0x10, u64::from(*temporality));
            }),
        }
    });
}

/// The serialized request: `resource_metrics` = 1, each a `ResourceMetrics` (resource = 1,
/// scope_metrics = 2, schema_url = 3) whose `ScopeMetrics` hold the scope = 1 (always
/// present), metrics = 2, schema_url = 3. Empty without resources.
pub fn metrics_request(resources: &[ResourceMetrics]) -> Vec<u8> {
    let mut buf = Vec::new();
    for resource in resources {
        nested(&mut buf, &[0x0a], |buf| {
            nested(buf, &[0x0a], |buf| {
                for attribute in &resource.resource {
                    key_value(buf, 0x0a, attribute);
                }
            });
            for scope in &resource.scopes {
                nested(buf, &[0x12], |buf| {
                    nested(buf, &[0x0a], |buf| scope_fields(buf, &scope.scope()));
                    for m in &scope.metrics {
                        metric(buf, m);
                    }
                    text(buf, 0x1a, &scope.schema_url);
                });
            }
            text(buf, 0x1a, &resource.schema_url);
        });
    }
    buf
}

#[cfg(test)]
mod tests {
    use super::super::records::{Attribute, ScopeMetrics, Value};
    use super::*;

    fn point(value: Number) -> NumberPoint {
        NumberPoint {
            attributes: vec![Attribute::new("a", Value::Str("b".into()))],
            start_ns: 5,
            time_ns: 6,
            value,
            exemplars: vec![],
        }
    }

    fn request(data: MetricData) -> Vec<u8> {
        metrics_request(&[ResourceMetrics {
            resource: vec![],
            schema_url: String::new(),
            scopes: vec![ScopeMetrics {
                name: "s".into(),
                version: String::new(),
                attributes: vec![],
                schema_url: String::new(),
                metrics: vec![Metric {
                    name: "m".into(),
                    description: String::new(),
                    unit: String::new(),
                    data: Some(data),
                }],
            }],
        }])
    }

    #[test]
    fn number_points_are_what_upb_writes() {
        // NumberDataPoint(attributes=[a=b], start_time_unix_nano=5, time_unix_nano=6,
        // as_int=3).SerializeToString(), from the protobuf runtime the SDK uses.
        let mut buf = Vec::new();
        number_point(&mut buf, &point(Number::Int(3)));
        let want = b"\x11\x05\0\0\0\0\0\0\0\x19\x06\0\0\0\0\0\0\0\x31\x03\0\0\0\0\0\0\0\x3a\x08\x0a\x01a\x12\x03\x0a\x01b";
        assert_eq!(buf[0], 0x0a);
        assert_eq!(&buf[2..], &want[..]);
    }

    #[test]
    fn histogram_points_are_what_upb_writes() {
        // HistogramDataPoint(attributes=[a=b], count=2, sum=1.5, bucket_counts=[1, 1],
        // explicit_bounds=[0.5], min=0.0, max=1.0).SerializeToString().
        let mut buf = Vec::new();
        histogram_point(
            &mut buf,
            &HistogramPoint {
                attributes: vec![Attribute::new("a", Value::Str("b".into()))],
                start_ns: 0,
                time_ns: 0,
                count: 2,
                sum: Some(1.5),
                bucket_counts: vec![1, 1],
                explicit_bounds: vec![0.5],
                exemplars: vec![],
                min: Some(0.0),
                max: Some(1.0),
            },
        );
        let want: &[u8] = b"\x21\x02\0\0\0\0\0\0\0\x29\0\0\0\0\0\0\xf8\x3f\x32\x10\x01\0\0\0\0\0\0\0\x01\0\0\0\0\0\0\0\x3a\x08\0\0\0\0\0\0\xe0\x3f\x4a\x08\x0a\x01a\x12\x03\x0a\x01b\x59\0\0\0\0\0\0\0\0\x61\0\0\0\0\0\0\xf0\x3f";
        assert_eq!(&buf[2..], want);
    }

    #[test]
    fn a_metric_without_points_has_no_data() {
        let empty = request(MetricData::Sum {
            points: vec![],
            temporality: 2,
            monotonic: true,
        });
        // resource_metrics { resource {} scope_metrics { scope { name: "s" } metrics { name: "m" } } }
        assert_eq!(
            empty,
            b"\x0a\x0e\x0a\x00\x12\x0a\x0a\x03\x0a\x01s\x12\x03\x0a\x01m".to_vec()
        );
    }

    #[test]
    fn zigzag_matches_sint32() {
        for (n, want) in [
            (0, 0u64),
            (-1, 1),
            (1, 2),
            (-2, 3),
            (i32::MAX, 0xffff_fffe),
            (i32::MIN, 0xffff_ffff),
        ] {
            assert_eq!(zigzag(n), want, "{n}");
        }
    }

    #[test]
    fn no_resources_is_an_empty_request() {
        assert!(metrics_request(&[]).is_empty());
    }
}
