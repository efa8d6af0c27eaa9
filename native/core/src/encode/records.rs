//! The emitter's records as the encoders read them, borrowed from the caller.

use std::borrow::Cow;

/// How deep values may nest (arrays and key-value lists inside each other). The emitter's
/// own values nest once at most; the bound keeps a self-referencing or absurdly deep value
/// from exhausting the stack of the recursive writers (the decoders' bound, too).
pub const MAX_VALUE_DEPTH: usize = 256;

/// An attribute value. `Empty` is an `AnyValue` with no field set (what a `None` becomes).
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    Empty,
    Str(Cow<'a, str>),
    Bool(bool),
    Int(i64),
    Double(f64),
    Bytes(Cow<'a, [u8]>),
    Array(Vec<Value<'a>>),
    KvList(Vec<Attribute<'a>>),
}

impl Value<'_> {
    /// The same value owning its text: for values whose source does not outlive the call
    /// that read it (the items of a list).
    pub fn into_owned(self) -> Value<'static> {
        match self {
            Value::Empty => Value::Empty,
            Value::Str(s) => Value::Str(Cow::Owned(s.into_owned())),
            Value::Bool(b) => Value::Bool(b),
            Value::Int(i) => Value::Int(i),
            Value::Double(d) => Value::Double(d),
            Value::Bytes(b) => Value::Bytes(Cow::Owned(b.into_owned())),
            Value::Array(items) => Value::Array(items.into_iter().map(Value::into_owned).collect()),
            Value::KvList(items) => Value::KvList(
                items
                    .into_iter()
                    .map(|a| Attribute {
                        key: Cow::Owned(a.key.into_owned()),
                        value: a.value.into_owned(),
                    })
                    .collect(),
            ),
        }
    }
}

/// One attribute, in emission order (runs and a record's own values never share a key).
#[derive(Debug, Clone, PartialEq)]
pub struct Attribute<'a> {
    /// Owned only when the caller had to make it (a mapping key that was not a string).
    pub key: Cow<'a, str>,
    pub value: Value<'a>,
}

impl<'a> Attribute<'a> {
    pub fn new(key: &'a str, value: Value<'a>) -> Self {
        Attribute {
            key: Cow::Borrowed(key),
            value,
        }
    }
}

/// Part of a record's attribute list: a shared run already encoded for this record's field
/// (by [`super::proto::attributes`] or [`super::json::attributes`]), or values to encode now.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece<'a> {
    Encoded(&'a [u8]),
    Values(Vec<Attribute<'a>>),
}

/// The instrumentation scope of a batch.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scope<'a> {
    pub name: &'a str,
    pub version: &'a str,
    pub attributes: Vec<Attribute<'a>>,
    pub schema_url: &'a str,
}

/// What every record of a batch shares: one resource and at most one scope.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Head<'a> {
    pub resource: Vec<Attribute<'a>>,
    pub resource_schema_url: &'a str,
    pub scope: Option<Scope<'a>>,
}

/// A span event.
#[derive(Debug, Clone, PartialEq)]
pub struct Event<'a> {
    pub name: &'a str,
    pub time_ns: u64,
    pub attributes: Vec<Piece<'a>>,
}

/// A finished INTERNAL grade span: its parent, when it has one, is the graded (remote,
/// sampled) span; it has no links.
#[derive(Debug, Clone, PartialEq)]
pub struct Span<'a> {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    pub parent_span_id: Option<[u8; 8]>,
    pub name: &'a str,
    pub start_ns: u64,
    pub end_ns: u64,
    pub attributes: Vec<Piece<'a>>,
    pub events: Vec<Event<'a>>,
    /// `StatusCode`: 0 unset, 2 error.
    pub status_code: u32,
    pub status_message: &'a str,
}

/// A body-less log record whose observed time is its time. It points at a (sampled) span
/// when it has a trace id.
#[derive(Debug, Clone, PartialEq)]
pub struct LogRecord<'a> {
    pub time_ns: u64,
    pub trace_id: Option<[u8; 16]>,
    pub span_id: Option<[u8; 8]>,
    pub severity_number: u32,
    pub severity_text: &'a str,
    pub event_name: &'a str,
    pub attributes: Vec<Piece<'a>>,
}

// Metrics: what the SDK's `MeterProvider` collected, read by the bindings from its
// `MetricsData`. Unlike spans and log records nothing is shared between points, and an
// export holds a few dozen points, so the records own their text.

/// A data point's or exemplar's value: the SDK keeps an integer counter's sums as `int`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    Int(i64),
    Double(f64),
}

/// An exemplar: a measurement kept with the span it was recorded in, when there was one.
#[derive(Debug, Clone, PartialEq)]
pub struct Exemplar {
    pub filtered_attributes: Vec<Attribute<'static>>,
    pub time_ns: u64,
    pub value: Number,
    /// Span and trace id, both or neither (the SDK's encoder writes them only together).
    pub span: Option<([u8; 8], [u8; 16])>,
}

/// A point of a sum or a gauge (a gauge's has no start time: `start_ns` 0 is left out).
#[derive(Debug, Clone, PartialEq)]
pub struct NumberPoint {
    pub attributes: Vec<Attribute<'static>>,
    pub start_ns: u64,
    pub time_ns: u64,
    pub value: Number,
    pub exemplars: Vec<Exemplar>,
}

/// A point of an explicit-bucket histogram.
#[derive(Debug, Clone, PartialEq)]
pub struct HistogramPoint {
    pub attributes: Vec<Attribute<'static>>,
    pub start_ns: u64,
    pub time_ns: u64,
    pub count: u64,
    pub sum: Option<f64>,
    pub bucket_counts: Vec<u64>,
    pub explicit_bounds: Vec<f64>,
    pub exemplars: Vec<Exemplar>,
    pub min: Option<f64>,
    pub max: Option<f64>,
}

/// One side of an exponential histogram's buckets.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Buckets {
    pub offset: i32,
    pub counts: Vec<u64>,
}

/// A point of a base-2 exponential histogram. A side without counts is left out.
#[derive(Debug, Clone, PartialEq)]
pub struct ExponentialPoint {
    pub attributes: Vec<Attribute<'static>>,
    pub start_ns: u64,
    pub time_ns: u64,
    pub count: u64,
    pub sum: Option<f64>,
    pub scale: i32,
    pub zero_count: u64,
    pub positive: Buckets,
    pub negative: Buckets,
    pub flags: u32,
    pub exemplars: Vec<Exemplar>,
    pub min: Option<f64>,
    pub max: Option<f64>,
}

/// A metric's points, by kind; `temporality` is the `AggregationTemporality` number.
#[derive(Debug, Clone, PartialEq)]
pub enum MetricData {
    Gauge(Vec<NumberPoint>),
    Sum {
        points: Vec<NumberPoint>,
        temporality: u32,
        monotonic: bool,
    },
    Histogram {
        points: Vec<HistogramPoint>,
        temporality: u32,
    },
    ExponentialHistogram {
        points: Vec<ExponentialPoint>,
        temporality: u32,
    },
}

impl MetricData {
    /// No points: the metric is written without data, as the SDK's encoder writes it.
    pub fn is_empty(&self) -> bool {
        match self {
            MetricData::Gauge(points) | MetricData::Sum { points, .. } => points.is_empty(),
            MetricData::Histogram { points, .. } => points.is_empty(),
            MetricData::ExponentialHistogram { points, .. } => points.is_empty(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    pub name: String,
    pub description: String,
    pub unit: String,
    /// `None` for a kind the encoders do not know (written without data).
    pub data: Option<MetricData>,
}

/// The metrics of one instrumentation scope.
#[derive(Debug, Clone, PartialEq)]
pub struct ScopeMetrics {
    pub name: String,
    pub version: String,
    pub attributes: Vec<Attribute<'static>>,
    pub schema_url: String,
    pub metrics: Vec<Metric>,
}

impl ScopeMetrics {
    pub fn scope(&self) -> Scope<'_> {
        Scope {
            name: &self.name,
            version: &self.version,
            attributes: self.attributes.clone(),
            schema_url: &self.schema_url,
        }
    }
}

/// The metrics of one resource.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceMetrics {
    pub resource: Vec<Attribute<'static>>,
    pub schema_url: String,
    pub scopes: Vec<ScopeMetrics>,
}
