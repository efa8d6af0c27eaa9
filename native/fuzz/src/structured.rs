//! The structure-aware target's input: an OTLP traces request as a Rust value that
//! `arbitrary` builds from the fuzzer's bytes, encoded to a well-framed protobuf body.
//!
//! Byte-level mutation spends most inputs on framing errors; a request built from structure
//! always frames correctly, so every input reaches the record rules (id lengths, enum ranges,
//! `AnyValue` variants, nesting). And since the test knows what it encoded, it knows what the
//! decoder must return: the target compares record by record ([`expected`]), not just "no
//! panic".

use arbitrary::Arbitrary;
use otel_oracles_core::model::{self, AnyValue, KeyValue};
use otel_oracles_core::wire::MAX_DEPTH;

/// An id: mostly the right length, sometimes any bytes (rejected unless the length is right).
#[derive(Arbitrary, Debug, Clone)]
pub enum Id<const N: usize> {
    Right([u8; N]),
    Any(Vec<u8>),
}

impl<const N: usize> Id<N> {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Id::Right(bytes) => bytes.to_vec(),
            Id::Any(bytes) => bytes.clone(),
        }
    }
}

#[derive(Arbitrary, Debug, Clone)]
pub enum Any {
    Empty,
    Str(String),
    Bool(bool),
    Int(i64),
    Double(f64),
    Bytes(Vec<u8>),
    Array(Vec<Any>),
    KvList(Vec<Attr>),
}

#[derive(Arbitrary, Debug, Clone)]
pub struct Attr {
    pub key: String,
    pub value: Any,
}

#[derive(Arbitrary, Debug, Clone)]
pub struct Event {
    pub time_ns: u64,
    pub name: String,
    pub attributes: Vec<Attr>,
}

#[derive(Arbitrary, Debug, Clone)]
pub struct Link {
    pub trace_id: Id<16>,
    pub span_id: Id<8>,
    pub attributes: Vec<Attr>,
}

#[derive(Arbitrary, Debug, Clone)]
pub struct Span {
    pub trace_id: Id<16>,
    pub span_id: Id<8>,
    pub parent_span_id: Option<Id<8>>,
    pub name: String,
    pub kind: i32,
    pub start_ns: u64,
    pub end_ns: u64,
    pub attributes: Vec<Attr>,
    pub events: Vec<Event>,
    pub links: Vec<Link>,
    pub status: Option<(i32, String)>,
}

#[derive(Arbitrary, Debug, Clone)]
pub struct ScopeSpans {
    pub name: String,
    pub version: String,
    pub spans: Vec<Span>,
}

#[derive(Arbitrary, Debug, Clone)]
pub struct ResourceSpans {
    pub attributes: Vec<Attr>,
    pub scopes: Vec<ScopeSpans>,
}

#[derive(Arbitrary, Debug, Clone)]
pub struct Request {
    pub resources: Vec<ResourceSpans>,
}

// -- encoding (the OTLP field numbers of opentelemetry/proto/{trace,common,resource}/v1) ------

fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn tag(out: &mut Vec<u8>, number: u32, wire_type: u8) {
    varint(out, u64::from(number << 3 | u32::from(wire_type)));
}

fn bytes_field(out: &mut Vec<u8>, number: u32, bytes: &[u8]) {
    tag(out, number, 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn varint_field(out: &mut Vec<u8>, number: u32, value: u64) {
    tag(out, number, 0);
    varint(out, value);
}

fn fixed64_field(out: &mut Vec<u8>, number: u32, value: u64) {
    tag(out, number, 1);
    out.extend_from_slice(&value.to_le_bytes());
}

/// An `int32`/enum on the wire: negative values sign-extend to ten bytes.
fn int32_field(out: &mut Vec<u8>, number: u32, value: i32) {
    varint_field(out, number, i64::from(value) as u64);
}

fn any_value(value: &Any) -> Vec<u8> {
    let mut out = Vec::new();
    match value {
        Any::Empty => {}
        Any::Str(text) => bytes_field(&mut out, 1, text.as_bytes()),
        Any::Bool(flag) => varint_field(&mut out, 2, u64::from(*flag)),
        Any::Int(number) => varint_field(&mut out, 3, *number as u64),
        Any::Double(number) => fixed64_field(&mut out, 4, number.to_bits()),
        Any::Array(items) => {
            let mut array = Vec::new();
            for item in items {
                bytes_field(&mut array, 1, &any_value(item));
            }
            bytes_field(&mut out, 5, &array);
        }
        Any::KvList(attrs) => bytes_field(&mut out, 6, &attributes_message(1, attrs)),
        Any::Bytes(data) => bytes_field(&mut out, 7, data),
    }
    out
}

/// `attrs` as repeated `KeyValue` field `number` of a message.
fn attributes_message(number: u32, attrs: &[Attr]) -> Vec<u8> {
    let mut out = Vec::new();
    for attr in attrs {
        let mut kv = Vec::new();
        bytes_field(&mut kv, 1, attr.key.as_bytes());
        bytes_field(&mut kv, 2, &any_value(&attr.value));
        bytes_field(&mut out, number, &kv);
    }
    out
}

fn span_message(span: &Span) -> Vec<u8> {
    let mut out = Vec::new();
    bytes_field(&mut out, 1, &span.trace_id.bytes());
    bytes_field(&mut out, 2, &span.span_id.bytes());
    if let Some(parent) = &span.parent_span_id {
        bytes_field(&mut out, 4, &parent.bytes());
    }
    bytes_field(&mut out, 5, span.name.as_bytes());
    int32_field(&mut out, 6, span.kind);
    fixed64_field(&mut out, 7, span.start_ns);
    fixed64_field(&mut out, 8, span.end_ns);
    out.extend(attributes_message(9, &span.attributes));
    for event in &span.events {
        let mut message = Vec::new();
        fixed64_field(&mut message, 1, event.time_ns);
        bytes_field(&mut message, 2, event.name.as_bytes());
        message.extend(attributes_message(3, &event.attributes));
        bytes_field(&mut out, 11, &message);
    }
    for link in &span.links {
        let mut message = Vec::new();
        bytes_field(&mut message, 1, &link.trace_id.bytes());
        bytes_field(&mut message, 2, &link.span_id.bytes());
        message.extend(attributes_message(4, &link.attributes));
        bytes_field(&mut out, 13, &message);
    }
    if let Some((code, text)) = &span.status {
        let mut message = Vec::new();
        bytes_field(&mut message, 2, text.as_bytes());
        int32_field(&mut message, 3, *code);
        bytes_field(&mut out, 15, &message);
    }
    out
}

/// The request as an `ExportTraceServiceRequest` body.
pub fn encode(request: &Request) -> Vec<u8> {
    let mut out = Vec::new();
    for resource in &request.resources {
        let mut rs = Vec::new();
        bytes_field(&mut rs, 1, &attributes_message(1, &resource.attributes));
        for scope in &resource.scopes {
            let mut ss = Vec::new();
            let mut scope_message = Vec::new();
            bytes_field(&mut scope_message, 1, scope.name.as_bytes());
            bytes_field(&mut scope_message, 2, scope.version.as_bytes());
            bytes_field(&mut ss, 1, &scope_message);
            for span in &scope.spans {
                bytes_field(&mut ss, 2, &span_message(span));
            }
            bytes_field(&mut rs, 2, &ss);
        }
        bytes_field(&mut out, 1, &rs);
    }
    out
}

// -- what the decoder must return ------------------------------------------------------------

/// Nesting level of the deepest message in an `AnyValue` at `level` (arrays and kvlists add
/// two levels each: the list message and the values or `KeyValue`s in it).
fn any_depth(value: &Any, level: u32) -> u32 {
    match value {
        Any::Array(items) => items
            .iter()
            .map(|item| any_depth(item, level + 2))
            .max()
            .unwrap_or(level + 1),
        Any::KvList(attrs) => attrs_depth(attrs, level + 2),
        _ => level,
    }
}

/// Deepest message of a message whose `KeyValue`s are at `level` (the message itself, one
/// level up, when it has none).
fn attrs_depth(attrs: &[Attr], level: u32) -> u32 {
    attrs
        .iter()
        .map(|attr| any_depth(&attr.value, level + 1))
        .max()
        .unwrap_or(level - 1)
}

/// Nesting level of the request's deepest message (the request itself is 0), which decides
/// whether the decoder must refuse it as too deep.
pub fn depth(request: &Request) -> u32 {
    let mut deepest = 0;
    for resource in &request.resources {
        // ResourceSpans 1, Resource 2, its KeyValues 3.
        deepest = deepest.max(attrs_depth(&resource.attributes, 3)).max(2);
        for scope in &resource.scopes {
            // ScopeSpans 2, InstrumentationScope and Span 3.
            deepest = deepest.max(3);
            for span in &scope.spans {
                deepest = deepest.max(attrs_depth(&span.attributes, 4));
                if span.status.is_some() {
                    deepest = deepest.max(4);
                }
                for event in &span.events {
                    deepest = deepest.max(attrs_depth(&event.attributes, 5)).max(4);
                }
                for link in &span.links {
                    deepest = deepest.max(attrs_depth(&link.attributes, 5)).max(4);
                }
            }
        }
    }
    deepest
}

/// Whether a request this deep is refused.
pub fn too_deep(depth: u32) -> bool {
    depth > MAX_DEPTH
}

fn any_model(value: &Any) -> AnyValue {
    match value {
        Any::Empty => AnyValue::Empty,
        Any::Str(text) => AnyValue::Str(text.as_str().into()),
        Any::Bool(flag) => AnyValue::Bool(*flag),
        Any::Int(number) => AnyValue::Int(*number),
        Any::Double(number) => AnyValue::Double(*number),
        Any::Bytes(data) => AnyValue::Bytes(data.clone()),
        Any::Array(items) => AnyValue::Array(items.iter().map(any_model).collect()),
        Any::KvList(attrs) => AnyValue::KvList(attrs_model(attrs)),
    }
}

fn attrs_model(attrs: &[Attr]) -> Vec<KeyValue> {
    attrs
        .iter()
        .map(|attr| KeyValue {
            key: attr.key.as_str().into(),
            value: any_model(&attr.value),
        })
        .collect()
}

/// A span the decoder must keep, as it must keep it (the record rules of `otlp_proto`), or
/// `None` when it must reject it.
fn span_model(span: &Span) -> Option<ExpectedSpan> {
    let trace_id: [u8; 16] = span.trace_id.bytes().try_into().ok()?;
    let span_id: [u8; 8] = span.span_id.bytes().try_into().ok()?;
    let parent_span_id = match span.parent_span_id.as_ref().map(Id::bytes) {
        None => None,
        Some(bytes) if bytes.is_empty() => None,
        Some(bytes) => Some(<[u8; 8]>::try_from(bytes).ok()?),
    };
    let in_range = |value: i32, max: i32| u8::try_from(value).ok().filter(|v| i32::from(*v) <= max);
    let (status_code, status_message) = match &span.status {
        None => (0, String::new()),
        Some((code, text)) => (in_range(*code, 2).unwrap_or(0), text.clone()),
    };
    Some(ExpectedSpan {
        trace_id,
        span_id,
        parent_span_id,
        name: span.name.clone(),
        kind: in_range(span.kind, 5).unwrap_or(0),
        start_ns: span.start_ns,
        end_ns: span.end_ns,
        status_code,
        status_message,
        attributes: attrs_model(&span.attributes),
        events: span
            .events
            .iter()
            .map(|event| model::Event {
                name: event.name.clone(),
                time_ns: event.time_ns,
                attributes: attrs_model(&event.attributes),
                dropped_attributes_count: 0,
            })
            .collect(),
        links: span
            .links
            .iter()
            .map(|link| model::Link {
                trace_id: link.trace_id.bytes(),
                span_id: link.span_id.bytes(),
                attributes: attrs_model(&link.attributes),
                dropped_attributes_count: 0,
            })
            .collect(),
    })
}

/// The fields of a decoded span the test predicts, plus its resource and scope.
#[derive(Debug)]
pub struct ExpectedSpan {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    pub parent_span_id: Option<[u8; 8]>,
    pub name: String,
    pub kind: u8,
    pub start_ns: u64,
    pub end_ns: u64,
    pub status_code: u8,
    pub status_message: String,
    pub attributes: Vec<KeyValue>,
    pub events: Vec<model::Event>,
    pub links: Vec<model::Link>,
}

/// What decoding the encoded request must give: the kept spans in wire order with their
/// resource attributes and scope, and how many are rejected.
pub fn expected(request: &Request) -> (Vec<(ExpectedSpan, Vec<KeyValue>, model::Scope)>, usize) {
    let mut kept = Vec::new();
    let mut rejected = 0;
    for resource in &request.resources {
        let resource_attrs = attrs_model(&resource.attributes);
        for scope in &resource.scopes {
            let scope_model = model::Scope {
                name: scope.name.clone(),
                version: scope.version.clone(),
            };
            for span in &scope.spans {
                match span_model(span) {
                    Some(span) => kept.push((span, resource_attrs.clone(), scope_model.clone())),
                    None => rejected += 1,
                }
            }
        }
    }
    (kept, rejected)
}

/// Equality with doubles compared by bits (NaN is a value like any other here).
pub fn same_any(a: &AnyValue, b: &AnyValue) -> bool {
    match (a, b) {
        (AnyValue::Double(x), AnyValue::Double(y)) => x.to_bits() == y.to_bits(),
        (AnyValue::Array(xs), AnyValue::Array(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| same_any(x, y))
        }
        (AnyValue::KvList(xs), AnyValue::KvList(ys)) => same_attrs(xs, ys),
        _ => a == b,
    }
}

pub fn same_attrs(a: &[KeyValue], b: &[KeyValue]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.key == y.key && same_any(&x.value, &y.value))
}

/// Panics (a finding) when `got` is not the span `want` predicts.
pub fn assert_span(
    got: &model::Span,
    want: &ExpectedSpan,
    resource: &[KeyValue],
    scope: &model::Scope,
) {
    assert_eq!(got.trace_id, want.trace_id, "trace id");
    assert_eq!(got.span_id, want.span_id, "span id");
    assert_eq!(got.parent_span_id, want.parent_span_id, "parent span id");
    assert_eq!(got.name, want.name, "name");
    assert_eq!(got.kind, want.kind, "kind");
    assert_eq!(
        (got.start_ns, got.end_ns),
        (want.start_ns, want.end_ns),
        "times"
    );
    assert_eq!(got.status_code, want.status_code, "status code");
    assert_eq!(got.status_message, want.status_message, "status message");
    assert!(
        same_attrs(&got.attributes, &want.attributes),
        "attributes: {:?}",
        got.attributes
    );
    assert_eq!(got.events.len(), want.events.len(), "events");
    for (g, w) in got.events.iter().zip(&want.events) {
        assert_eq!((&g.name, g.time_ns), (&w.name, w.time_ns), "event");
        assert!(same_attrs(&g.attributes, &w.attributes), "event attributes");
    }
    assert_eq!(got.links.len(), want.links.len(), "links");
    for (g, w) in got.links.iter().zip(&want.links) {
        assert_eq!(
            (&g.trace_id, &g.span_id),
            (&w.trace_id, &w.span_id),
            "link ids"
        );
        assert!(same_attrs(&g.attributes, &w.attributes), "link attributes");
    }
    assert!(
        same_attrs(&got.resource.attributes, resource),
        "resource attributes"
    );
    assert_eq!(*got.scope, *scope, "scope");
}
