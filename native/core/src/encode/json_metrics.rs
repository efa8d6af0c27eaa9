//! OTLP/JSON `{"resourceMetrics": ...}` of the metrics the SDK's `MeterProvider` collected
//! for the emitter: the JSON form of [`super::proto_metrics`], as protobuf's JSON mapping
//! prints that request (lowerCamelCase keys in field-number order, fields the protobuf
//! leaves out left out, 64-bit integers as strings, enums as numbers) with hex ids, as
//! the collector's `file` exporter writes them.

use super::json::{attribute_list, double, hex, int, quoted_int, string};
use super::records::{
    Attribute, Buckets, Exemplar, ExponentialPoint, HistogramPoint, Metric, MetricData, Number,
    NumberPoint, ResourceMetrics, ScopeMetrics,
};

/// Writes `"key":value` pairs of one object, with the commas between them.
struct Object<'b> {
    buf: &'b mut Vec<u8>,
    empty: bool,
}

impl<'b> Object<'b> {
    fn open(buf: &'b mut Vec<u8>) -> Self {
        buf.push(b'{');
        Object { buf, empty: true }
    }

    fn key(&mut self, key: &str) -> &mut Vec<u8> {
        if !self.empty {
            self.buf.push(b',');
        }
        self.empty = false;
        self.buf.push(b'"');
        self.buf.extend_from_slice(key.as_bytes());
        self.buf.extend_from_slice(b"\":");
        self.buf
    }

    fn text(&mut self, key: &str, value: &str) {
        if !value.is_empty() {
            string(self.key(key), value);
        }
    }

    fn uint64(&mut self, key: &str, n: u64) {
        if n != 0 {
            quoted_int(self.key(key), n);
        }
    }

    fn optional_double(&mut self, key: &str, value: Option<f64>) {
        if let Some(d) = value {
            double(self.key(key), d);
        }
    }

    fn attributes(&mut self, key: &str, attributes: &[Attribute<'_>]) {
        if !attributes.is_empty() {
            let buf = self.key(key);
            buf.push(b'[');
            attribute_list(buf, attributes);
            buf.push(b']');
        }
    }

    /// A repeated message field, absent when empty.
    fn list<T>(&mut self, key: &str, items: &[T], mut write: impl FnMut(&mut Vec<u8>, &T)) {
        if items.is_empty() {
            return;
        }
        let buf = self.key(key);
        buf.push(b'[');
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                buf.push(b',');
            }
            write(buf, item);
        }
        buf.push(b']');
    }

    fn close(self) {
        self.buf.push(b'}');
    }
}

fn signed(buf: &mut Vec<u8>, n: i32) {
    buf.extend_from_slice(n.to_string().as_bytes());
}

fn number(object: &mut Object<'_>, double_key: &str, int_key: &str, value: Number) {
    match value {
        Number::Double(d) => double(object.key(double_key), d),
        Number::Int(i) => quoted_int(object.key(int_key), i),
    }
}

fn exemplar(buf: &mut Vec<u8>, exemplar: &Exemplar) {
    let mut o = Object::open(buf);
    o.uint64("timeUnixNano", exemplar.time_ns);
    if let Number::Double(_) = exemplar.value {
        number(&mut o, "asDouble", "asInt", exemplar.value);
    }
    if let Some((span_id, trace_id)) = &exemplar.span {
        hex(o.key("spanId"), span_id);
        hex(o.key("traceId"), trace_id);
    }
    if let Number::Int(_) = exemplar.value {
        number(&mut o, "asDouble", "asInt", exemplar.value);
    }
    o.attributes("filteredAttributes", &exemplar.filtered_attributes);
    o.close();
}

fn number_point(buf: &mut Vec<u8>, point: &NumberPoint) {
    let mut o = Object::open(buf);
    o.uint64("startTimeUnixNano", point.start_ns);
    o.uint64("timeUnixNano", point.time_ns);
    if let Number::Double(_) = point.value {
        number(&mut o, "asDouble", "asInt", point.value);
    }
    o.list("exemplars", &point.exemplars, exemplar);
    if let Number::Int(_) = point.value {
        number(&mut o, "asDouble", "asInt", point.value);
    }
    o.attributes("attributes", &point.attributes);
    o.close();
}

fn histogram_point(buf: &mut Vec<u8>, point: &HistogramPoint) {
    let mut o = Object::open(buf);
    o.uint64("startTimeUnixNano", point.start_ns);
    o.uint64("timeUnixNano", point.time_ns);
    o.uint64("count", point.count);
    o.optional_double("sum", point.sum);
    o.list("bucketCounts", &point.bucket_counts, |buf, n| {
        quoted_int(buf, n)
    });
    o.list("explicitBounds", &point.explicit_bounds, |buf, d| {
        double(buf, *d)
    });
    o.list("exemplars", &point.exemplars, exemplar);
    o.attributes("attributes", &point.attributes);
    o.optional_double("min", point.min);
    o.optional_double("max", point.max);
    o.close();
}

fn buckets(object: &mut Object<'_>, key: &str, buckets: &Buckets) {
    if buckets.counts.is_empty() {
        return;
    }
    let mut o = Object::open(object.key(key));
    if buckets.offset != 0 {
        signed(o.key("offset"), buckets.offset);
    }
    o.list("bucketCounts", &buckets.counts, |buf, n| quoted_int(buf, n));
    o.close();
}

fn exponential_point(buf: &mut Vec<u8>, point: &ExponentialPoint) {
    let mut o = Object::open(buf);
    o.attributes("attributes", &point.attributes);
    o.uint64("startTimeUnixNano", point.start_ns);
    o.uint64("timeUnixNano", point.time_ns);
    o.uint64("count", point.count);
    o.optional_double("sum", point.sum);
    if point.scale != 0 {
        signed(o.key("scale"), point.scale);
    }
    o.uint64("zeroCount", point.zero_count);
    buckets(&mut o, "positive", &point.positive);
    buckets(&mut o, "negative", &point.negative);
    if point.flags != 0 {
        int(o.key("flags"), point.flags);
    }
    o.list("exemplars", &point.exemplars, exemplar);
    o.optional_double("min", point.min);
    o.optional_double("max", point.max);
    o.close();
}

/// `"dataPoints"` then the temporality (and monotonicity) of one kind of metric data.
fn data<T>(
    buf: &mut Vec<u8>,
    points: &[T],
    write: impl FnMut(&mut Vec<u8>, &T),
    temporality: Option<u32>,
    monotonic: bool,
) {
    let mut o = Object::open(buf);
    o.list("dataPoints", points, write);
    if let Some(t) = temporality.filter(|&t| t != 0) {
        int(o.key("aggregationTemporality"), t);
    }
    if monotonic {
        o.key("isMonotonic").extend_from_slice(b"true");
    }
    o.close();
}

fn metric(buf: &mut Vec<u8>, metric: &Metric) {
    let mut o = Object::open(buf);
    o.text("name", &metric.name);
    o.text("description", &metric.description);
    o.text("unit", &metric.unit);
    match metric.data.as_ref().filter(|d| !d.is_empty()) {
        None => {}
        Some(MetricData::Gauge(points)) => data(o.key("gauge"), points, number_point, None, false),
        Some(MetricData::Sum {
            points,
            temporality,
            monotonic,
        }) => data(
            o.key("sum"),
            points,
            number_point,
            Some(*temporality),
            *monotonic,
        ),
        Some(MetricData::Histogram {
            points,
            temporality,
        }) => data(
            o.key("histogram"),
            points,
            histogram_point,
            Some(*temporality),
            false,
        ),
        Some(MetricData::ExponentialHistogram {
            points,
            temporality,
        }) => data(
            o.key("exponentialHistogram"),
            points,
            exponential_point,
            Some(*temporality),
            false,
        ),
    }
    o.close();
}

fn scope_metrics(buf: &mut Vec<u8>, scope: &ScopeMetrics) {
    let mut o = Object::open(buf);
    let mut s = Object::open(o.key("scope"));
    s.text("name", &scope.name);
    s.text("version", &scope.version);
    s.attributes("attributes", &scope.attributes);
    s.close();
    o.list("metrics", &scope.metrics, metric);
    o.text("schemaUrl", &scope.schema_url);
    o.close();
}

fn resource_metrics(buf: &mut Vec<u8>, resource: &ResourceMetrics) {
    let mut o = Object::open(buf);
    let mut r = Object::open(o.key("resource"));
    r.attributes("attributes", &resource.resource);
    r.close();
    o.list("scopeMetrics", &resource.scopes, scope_metrics);
    o.text("schemaUrl", &resource.schema_url);
    o.close();
}

/// The object, `{}` without resources (as the JSON mapping prints an empty request).
pub fn metrics_request(resources: &[ResourceMetrics]) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut o = Object::open(&mut buf);
    o.list("resourceMetrics", resources, resource_metrics);
    o.close();
    buf
}

#[cfg(test)]
mod tests {
    use super::super::records::Value;
    use super::*;

    fn text(bytes: Vec<u8>) -> String {
        String::from_utf8(bytes).expect("utf-8")
    }

    fn request(data: MetricData) -> String {
        text(metrics_request(&[ResourceMetrics {
            resource: vec![Attribute::new("service.name", Value::Str("g".into()))],
            schema_url: String::new(),
            scopes: vec![ScopeMetrics {
                name: "s".into(),
                version: "1".into(),
                attributes: vec![],
                schema_url: String::new(),
                metrics: vec![Metric {
                    name: "m".into(),
                    description: "d".into(),
                    unit: "{x}".into(),
                    data: Some(data),
                }],
            }],
        }]))
    }

    #[test]
    fn a_monotonic_sum_with_an_exemplar() {
        let got = request(MetricData::Sum {
            points: vec![NumberPoint {
                attributes: vec![Attribute::new("k", Value::Str("v".into()))],
                start_ns: 1,
                time_ns: 2,
                value: Number::Int(3),
                exemplars: vec![Exemplar {
                    filtered_attributes: vec![],
                    time_ns: 2,
                    value: Number::Double(0.5),
                    span: Some(([0xab; 8], [0x01; 16])),
                }],
            }],
            temporality: 2,
            monotonic: true,
        });
        assert_eq!(
            got,
            concat!(
                r#"{"resourceMetrics":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"g"}}]},"#,
                r#""scopeMetrics":[{"scope":{"name":"s","version":"1"},"metrics":[{"name":"m","description":"d","unit":"{x}","#,
                r#""sum":{"dataPoints":[{"startTimeUnixNano":"1","timeUnixNano":"2","exemplars":[{"timeUnixNano":"2","asDouble":0.5,"#,
                r#""spanId":"abababababababab","traceId":"01010101010101010101010101010101"}],"asInt":"3","#,
                r#""attributes":[{"key":"k","value":{"stringValue":"v"}}]}],"aggregationTemporality":2,"isMonotonic":true}}]}]}]}"#
            )
        );
    }

    #[test]
    fn an_exponential_histogram_leaves_out_empty_sides() {
        let got = request(MetricData::ExponentialHistogram {
            points: vec![ExponentialPoint {
                attributes: vec![],
                start_ns: 0,
                time_ns: 9,
                count: 2,
                sum: Some(3.0),
                scale: -3,
                zero_count: 0,
                positive: Buckets {
                    offset: -2,
                    counts: vec![1, 0, 1],
                },
                negative: Buckets::default(),
                flags: 0,
                exemplars: vec![],
                min: Some(1.0),
                max: Some(2.0),
            }],
            temporality: 1,
        });
        assert!(
            got.contains(r#""exponentialHistogram":{"dataPoints":[{"timeUnixNano":"9","count":"2","sum":3.0,"scale":-3,"positive":{"offset":-2,"bucketCounts":["1","0","1"]},"min":1.0,"max":2.0}],"aggregationTemporality":1}"#),
            "{got}"
        );
    }

    #[test]
    fn no_resources_is_an_empty_object() {
        assert_eq!(text(metrics_request(&[])), "{}");
    }
}
