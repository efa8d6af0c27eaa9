//! OTLP/JSON request bodies (canonical and the tolerant forms) to [`crate::model`] records.
//!
//! One decoder for every OTLP/JSON body: what the OTLP specification writes
//! (<https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding>) and the variants real
//! tools write, each problem reported with its place in the request
//! (`resourceSpans[0].scopeSpans[0].spans[3].kind`). The rules:
//!
//! * **Request.** A JSON object holding `resourceSpans`, `resourceLogs` and/or
//!   `resourceMetrics` (a key present with `null` counts); metrics are counted in
//!   `ignored` (the `metrics` of every `scopeMetrics`). Another object, a value that is not
//!   an object, or a top-level list that is not a list refuse the whole body
//!   ([`JsonError::Request`]); `{}` is an empty request.
//! * **Keys.** lowerCamelCase as OTLP writes them, else snake_case, looked up per field (the
//!   camelCase value wins unless it is absent or `null`). Exception kept from the Python
//!   decoder: a span reads its ids and times in snake_case only when it has no `traceId`.
//! * **Ids.** 32/16 hex digits in either case; else base64 that decodes to exactly 16/8 bytes
//!   (protobuf's generic JSON printer). A span without a usable trace or span id is rejected
//!   (`traceId is missing`, `... is all zeros, which OTLP defines as invalid`, `... must be
//!   32 hex digits (16 bytes), got 'xyz'`, `... must be a hex string, got 5`); an empty, falsy
//!   or all-zero parent id means "no parent"; a log record with a bad id keeps the record
//!   without span context. A link with a bad id is ignored.
//! * **Integers** (times, `intValue`, enums given as numbers): JSON integers, decimal
//!   strings as Python's `int()` reads them (whitespace, `+`, `1_000`), and integral floats or
//!   float strings (`1.0`, `"1e3"`), which the typed decoder this replaces accepted.
//! * **Times.** Integers from 0 to 2^64-1; anything else rejects the span (the log record;
//!   the event is ignored). Negative or larger values, which the Python decoder kept as
//!   Python integers, are rejected with a reason (protobuf cannot carry them either).
//! * **Dropped counts** (`droppedAttributesCount` of spans, events, links and log records,
//!   `droppedEventsCount`, `droppedLinksCount`): integers as above from 0 to 2^32-1 (a
//!   `uint32`), absent or `null` = 0; anything else reads as 0 with a problem, and the
//!   record is kept.
//! * **Span flags** (`flags`): an integer as above from 0 to 2^32-1 (a `fixed32`), absent
//!   or `null` = 0; anything else reads as 0 with a problem, and the span is kept.
//! * **Enums.** Integers in range or the enum's names (`SPAN_KIND_CLIENT`,
//!   `STATUS_CODE_ERROR`, `SEVERITY_NUMBER_WARN2`); any other kind or status code is read as
//!   unspecified with a problem; an unknown severity reads as 0.
//! * **AnyValue.** Exactly one variant set (`stringValue`, `boolValue` as `true`/`false` or
//!   those words as a string, `intValue`, `doubleValue` as a number or `NaN`/`Infinity`/
//!   `-Infinity` or another float string, `bytesValue` as base64 or URL-safe base64,
//!   `arrayValue`, `kvlistValue`; or the snake_case spellings). `null` is an unset field, as
//!   in the protobuf JSON mapping: `{}`, `null` and `{"stringValue": null}` are `None`. A
//!   malformed value, one with two variants set, or one nested past [`MAX_ANY_VALUE_DEPTH`]
//!   arrays/kvlists reads as `None` with a problem naming the attribute; `intValue` outside
//!   64 bits is malformed (Python kept a big integer).
//! * **Attributes.** `{key, value}` entries; a repeated key keeps its first position and last
//!   value (a Python `dict`); malformed entries are skipped with a problem. All attribute
//!   values are converted here, eagerly: a malformed one is reported when the body is decoded
//!   (the Python decoders reported one when it was first read, or never if nobody read it).
//! * **Structure.** A resource, scope, span, event, link or log record that is not an object,
//!   or a list that is not a list, is skipped with a problem saying what was skipped; a
//!   status that is not an object is ignored with a problem; names and messages that are not
//!   strings are read as Python's `str()` of the value (the span name must be a string).
//! * **Limits.** Nesting past [`value::MAX_JSON_DEPTH`] levels refuses the body with the
//!   byte offset ([`JsonError::TooDeep`]); at most [`crate::model::MAX_LISTED_PROBLEMS`]
//!   messages are kept per body, the rest counted. Not JSON at all is [`JsonError::Syntax`]
//!   with line and column.

mod direct;
pub mod repr;
pub mod scalars;
pub mod value;

use std::marker::PhantomData;
use std::sync::Arc;

use crate::model::{
    AnyValue, Attributes, Batch, Event, Interner, KeyValue, Link, LogRecord, Problems, Resource,
    Scope, Span, Text,
};
use bumpalo::Bump;
use repr::{py_str, repr_str, show, type_name};
use scalars::{b64_bytes, b64_strict, hex_id, py_float, py_int};
use value::{dedupe_last_wins, parse, parse_utf8, utf8, Obj, ParseError, J};

/// Most arrays/kvlists one attribute value or log body may nest.
pub const MAX_ANY_VALUE_DEPTH: usize = 64;

/// Why a body was refused as a whole.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonError {
    /// Not JSON: `invalid JSON at line {line} column {column}: {message}`.
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
    /// Nested past the depth limit; the message names the byte offset.
    TooDeep(String),
    /// JSON, but not an OTLP request; the message says why.
    Request(String),
}

impl From<ParseError> for JsonError {
    fn from(err: ParseError) -> Self {
        match err {
            ParseError::Syntax {
                line,
                column,
                message,
            } => JsonError::Syntax {
                line,
                column,
                message,
            },
            ParseError::TooDeep(message) => JsonError::TooDeep(message),
        }
    }
}

/// Decodes one OTLP/JSON request body.
///
/// A body of the usual shape is read straight from its tokens ([`direct`]), an element of
/// its `resourceSpans` with anything unusual or a problem as a tree; any other body is
/// parsed into a tree and read by the rules below (the direct reader only accepts, so every
/// result and message comes from one set of rules).
pub fn decode(data: &[u8]) -> Result<Batch, JsonError> {
    let bump = Bump::new();
    let doc = match utf8(data) {
        Some(text) => {
            if let Some(batch) = direct::decode(text, &bump) {
                return Ok(batch);
            }
            parse_utf8(text, &bump)?
        }
        None => parse(data, &bump)?,
    };
    decode_value(&doc).map_err(JsonError::Request)
}

/// [`decode`] through the tree alone (what the direct reader must agree with).
#[cfg(test)]
fn decode_tree(data: &[u8]) -> Result<Batch, JsonError> {
    let bump = Bump::new();
    let doc = parse(data, &bump)?;
    decode_value(&doc).map_err(JsonError::Request)
}

/// [`decode_many`] through the tree alone (what the direct reader must agree with).
#[cfg(test)]
fn decode_many_tree(data: &[u8]) -> Result<Vec<Result<Batch, String>>, JsonError> {
    many_as_tree(data, &Bump::new())
}

/// Decodes a JSON array of requests (some tools dump a list of export bodies): one result
/// per item, an item that is not a request giving its reason. A document that is not an
/// array is one request.
///
/// Items of the usual shape are read straight from their tokens, as [`decode`] reads a
/// body; any other item as a tree, by the rules below.
pub fn decode_many(data: &[u8]) -> Result<Vec<Result<Batch, String>>, JsonError> {
    let bump = Bump::new();
    match utf8(data).and_then(|text| direct::decode_many(text, &bump)) {
        Some(items) => Ok(items),
        None => many_as_tree(data, &bump),
    }
}

/// [`decode_many`]'s document parsed into a tree and each item read by the tree's rules.
fn many_as_tree(data: &[u8], bump: &Bump) -> Result<Vec<Result<Batch, String>>, JsonError> {
    match parse(data, bump)? {
        J::Arr(items) => Ok(items.iter().map(decode_value).collect()),
        doc => Ok(vec![decode_value(&doc)]),
    }
}

/// A field problem inside one record: the message says what, the caller says where.
struct Bad(String);

type Fallible<T> = Result<T, Bad>;

fn bad<T>(message: String) -> Fallible<T> {
    Err(Bad(message))
}

/// Python truthiness of a JSON value (`if x:`).
fn truthy(value: &J<'_>) -> bool {
    match value {
        J::Null => false,
        J::Bool(b) => *b,
        J::U64(n) => *n != 0,
        J::I64(n) => *n != 0,
        J::F64(x) => *x != 0.0,
        J::Str(s) => !s.is_empty(),
        J::Arr(items) => !items.is_empty(),
        J::Obj(obj) => !obj.is_empty(),
    }
}

/// The value under `camel`, else under `snake` when `camel` is absent or `null`.
fn get2<'o, 'a>(obj: &'o Obj<'a>, camel: &str, snake: &str) -> Option<&'o J<'a>> {
    obj.get_some(camel).or_else(|| obj.get_some(snake))
}

/// A list field (`None` = absent or null = empty); `where_` prefixes the message.
fn list_field<'o, 'a>(
    obj: &'o Obj<'a>,
    camel: &str,
    snake: &str,
    where_: &str,
) -> Fallible<&'o [J<'a>]> {
    match get2(obj, camel, snake) {
        None => Ok(&[]),
        Some(J::Arr(items)) => Ok(items),
        Some(other) => bad(format!(
            "{where_}.{camel} must be a list, got {}",
            show(other)
        )),
    }
}

fn decode_value(doc: &J<'_>) -> Result<Batch, String> {
    let J::Obj(obj) = doc else {
        return Err(format!(
            "expected an OTLP/JSON request object, got a JSON {}",
            type_name(doc)
        ));
    };
    let texts = &mut Interner::new();
    let mut batch = Batch::default();
    let mut found = false;
    let top = |camel: &str, snake: &str| -> Result<(bool, &[J<'_>]), String> {
        let items = list_field(obj, camel, snake, "")
            .map_err(|Bad(message)| message.trim_start_matches('.').to_string())?;
        Ok((
            !items.is_empty() || obj.contains(camel) || obj.contains(snake),
            items,
        ))
    };
    let (present, spans) = top("resourceSpans", "resource_spans")?;
    if present {
        found = true;
        decode_spans(spans, 0, &mut batch, texts);
    }
    let (present, logs) = top("resourceLogs", "resource_logs")?;
    if present {
        found = true;
        decode_logs(logs, 0, &mut batch, texts);
    }
    let (present, metrics) = top("resourceMetrics", "resource_metrics")?;
    if present {
        found = true;
        batch.ignored += count_metrics(metrics);
    }
    if !found && !obj.is_empty() {
        let mut keys: Vec<&str> = obj.iter().map(|(k, _)| k).collect();
        keys.sort_unstable();
        let listed: Vec<String> = keys.iter().take(8).map(|k| repr_str(k)).collect();
        return Err(format!(
            "not an OTLP/JSON request: expected a resourceSpans, resourceLogs or \
             resourceMetrics key, got keys [{}]",
            listed.join(", ")
        ));
    }
    Ok(batch)
}

fn count_metrics(resource_metrics: &[J<'_>]) -> usize {
    let mut count = 0;
    for rm in resource_metrics {
        let J::Obj(rm) = rm else { continue };
        let Some(J::Arr(scopes)) = get2(rm, "scopeMetrics", "scope_metrics") else {
            continue;
        };
        for sm in scopes.iter() {
            if let J::Obj(sm) = sm {
                if let Some(J::Arr(metrics)) = sm.get("metrics") {
                    count += metrics.len();
                }
            }
        }
    }
    count
}

/// One readable scope of `resourceSpans`/`resourceLogs`: its resource, its object and path.
struct ScopeEntry<'o, 'a> {
    resource: Arc<Resource>,
    scope: &'o Obj<'a>,
    path: String,
}

/// Calls `visit` with every readable scope of `resource{signal}` (`signal` = "Spans"/"Logs")
/// in order, `entries` being that list's elements from index `first` on; what cannot be read
/// is reported and skipped, in document order with the problems `visit` finds.
fn each_scope<'o, 'a>(
    entries: &'o [J<'a>],
    first: usize,
    signal: &str,
    batch: &mut Batch,
    texts: &mut Interner<'a>,
    mut visit: impl FnMut(ScopeEntry<'o, 'a>, &mut Batch, &mut Interner<'a>),
) {
    let (camel, snake) = match signal {
        "Spans" => ("scopeSpans", "scope_spans"),
        _ => ("scopeLogs", "scope_logs"),
    };
    for (ri, entry) in (first..).zip(entries) {
        let rwhere = format!("resource{signal}[{ri}]");
        let J::Obj(entry) = entry else {
            batch
                .problems
                .push(format!("{rwhere}: expected an object, got {}", show(entry)));
            continue;
        };
        let read = resource(
            entry.get_some("resource"),
            &rwhere,
            &mut batch.problems,
            texts,
        )
        .and_then(|res| Ok((res, list_field(entry, camel, snake, &rwhere)?)));
        let (res, scope_list) = match read {
            Ok(found) => found,
            Err(Bad(message)) => {
                batch.problems.push(format!("{message}; resource skipped"));
                continue;
            }
        };
        for (si, scope) in scope_list.iter().enumerate() {
            let path = format!("{rwhere}.scope{signal}[{si}]");
            match scope {
                J::Obj(scope) => visit(
                    ScopeEntry {
                        resource: Arc::clone(&res),
                        scope,
                        path,
                    },
                    batch,
                    texts,
                ),
                other => batch
                    .problems
                    .push(format!("{path}: expected an object, got {}", show(other))),
            }
        }
    }
}

/// A `resource` (`None`: absent or `null`).
fn resource<'a>(
    res: Option<&J<'a>>,
    where_: &str,
    problems: &mut Problems,
    texts: &mut Interner<'a>,
) -> Fallible<Arc<Resource>> {
    let Some(res) = res else {
        return Ok(Arc::default());
    };
    let J::Obj(res) = res else {
        return bad(format!(
            "{where_}.resource must be an object, got {}",
            show(res)
        ));
    };
    let attributes = match res.get("attributes") {
        Some(J::Arr(items)) if !items.is_empty() => items,
        Some(other) if truthy(other) => {
            return bad(format!(
                "{where_}.resource.attributes must be a list, got {}",
                show(other)
            ))
        }
        _ => return Ok(Arc::default()),
    };
    // Converted entry by entry, every entry (repeated keys included), as before.
    let mut pairs = Vec::with_capacity(attributes.len());
    for (i, kv) in attributes.iter().enumerate() {
        let Some((key, raw)) = key_value(kv) else {
            problems.push(format!(
                "{where_}.resource.attributes[{i}]: expected {{key, value}}, got {}",
                show(kv)
            ));
            continue;
        };
        let value = match raw.map_or(Ok(AnyValue::Empty), |v| any_value(v, 0, texts)) {
            Ok(value) => value,
            Err(message) => {
                problems.push(format!(
                    "{where_}.resource: attribute {}: {message}; read as null",
                    repr_str(key)
                ));
                AnyValue::Empty
            }
        };
        pairs.push((texts.text(key), value));
    }
    Ok(Arc::new(Resource {
        attributes: into_attributes(pairs),
    }))
}

fn into_attributes(pairs: Vec<(Text, AnyValue)>) -> Attributes {
    dedupe_last_wins(pairs)
        .into_iter()
        .map(|(key, value)| KeyValue { key, value })
        .collect()
}

/// `(key, value)` of a `{key, value}` entry; the value `None` when absent or `null`.
fn key_value<'o, 'a>(kv: &'o J<'a>) -> Option<(&'a str, Option<&'o J<'a>>)> {
    let J::Obj(kv) = kv else { return None };
    match kv.get("key") {
        Some(J::Str(key)) => Some((*key, kv.get_some("value"))),
        _ => None,
    }
}

/// An attribute list of a span, event, link or log record; problems name `where_`.
fn attributes<'a>(
    list: &[J<'a>],
    where_: &dyn Fn() -> String,
    problems: &mut Problems,
    texts: &mut Interner<'a>,
) -> Attributes {
    let mut pairs = Vec::with_capacity(list.len());
    for (i, kv) in list.iter().enumerate() {
        match key_value(kv) {
            Some(pair) => pairs.push(pair),
            None => problems.push(format!(
                "{}: attributes[{i}]: expected {{key, value}}, got {}",
                where_(),
                show(kv)
            )),
        }
    }
    // Only the value a key ends up with is converted (and reported), as a dict would.
    dedupe_last_wins(pairs)
        .into_iter()
        .map(|(key, raw)| {
            let value = match raw {
                None => AnyValue::Empty,
                Some(J::Obj(obj)) if obj.len() == 1 => match obj.get("stringValue") {
                    Some(J::Str(s)) => AnyValue::Str(texts.text(s)),
                    _ => convert_attribute(key, raw, where_, problems, texts),
                },
                Some(_) => convert_attribute(key, raw, where_, problems, texts),
            };
            KeyValue {
                key: texts.text(key),
                value,
            }
        })
        .collect()
}

fn convert_attribute<'a>(
    key: &str,
    raw: Option<&J<'a>>,
    where_: &dyn Fn() -> String,
    problems: &mut Problems,
    texts: &mut Interner<'a>,
) -> AnyValue {
    let Some(raw) = raw else {
        return AnyValue::Empty;
    };
    any_value(raw, 0, texts).unwrap_or_else(|message| {
        problems.push(format!(
            "{}: attribute {}: {message}; read as null",
            where_(),
            repr_str(key)
        ));
        AnyValue::Empty
    })
}

fn too_deep_value() -> String {
    format!("AnyValue nests more than {MAX_ANY_VALUE_DEPTH} arrays/kvlists deep")
}

/// An OTLP/JSON `AnyValue`; `depth` = the arrays/kvlists around it. `Err` is the reason.
fn any_value<'a>(
    value: &J<'a>,
    depth: usize,
    texts: &mut Interner<'a>,
) -> Result<AnyValue, String> {
    let J::Obj(obj) = value else {
        return Err(format!(
            "expected an AnyValue object like {{'stringValue': ...}}, got {}",
            show(value)
        ));
    };
    // `null` is an unset field in the protobuf JSON mapping: `{"stringValue": null}` holds
    // no variant at all.
    let mut set = obj.iter().filter(|(_, v)| !matches!(v, J::Null));
    let Some((variant, x)) = set.next() else {
        return Ok(AnyValue::Empty);
    };
    if set.next().is_some() {
        let mut keys: Vec<&str> = obj
            .iter()
            .filter(|(_, v)| !matches!(v, J::Null))
            .map(|(k, _)| k)
            .collect();
        keys.sort_unstable();
        let listed: Vec<String> = keys.iter().map(|k| repr_str(k)).collect();
        return Err(format!(
            "an AnyValue holds exactly one variant, got keys [{}]",
            listed.join(", ")
        ));
    }
    if let Some(read) = scalar_variant(variant, x, texts) {
        return read;
    }
    match variant {
        "arrayValue" | "array_value" | "kvlistValue" | "kvlist_value" => {
            if depth >= MAX_ANY_VALUE_DEPTH {
                return Err(too_deep_value());
            }
            let is_array = variant.starts_with("array");
            let name = if is_array {
                "arrayValue"
            } else {
                "kvlistValue"
            };
            let values = values_list(x, name)?;
            if is_array {
                let items: Result<Vec<_>, _> = values
                    .iter()
                    .map(|v| any_value(v, depth + 1, texts))
                    .collect();
                Ok(AnyValue::Array(items?))
            } else {
                let mut pairs = Vec::with_capacity(values.len());
                for kv in values {
                    let Some((key, raw)) = key_value(kv) else {
                        return Err(format!(
                            "kvlistValue entries must be {{key, value}} objects, got {}",
                            show(kv)
                        ));
                    };
                    let value = match raw {
                        None => AnyValue::Empty,
                        Some(raw) => any_value(raw, depth + 1, texts)?,
                    };
                    pairs.push((texts.text(key), value));
                }
                Ok(AnyValue::KvList(into_attributes(pairs)))
            }
        }
        other => Err(format!("unknown AnyValue variant {}", repr_str(other))),
    }
}

/// The `AnyValue` a scalar variant (`stringValue`, `boolValue`, `intValue`, `doubleValue`,
/// `bytesValue`, or its snake_case spelling) holding `x` (not `null`) makes, `Err` being the
/// reason; `None` when `variant` is not one of them. Shared by the tree's [`any_value`] and
/// the direct reader.
fn scalar_variant<'a>(
    variant: &str,
    x: &J<'a>,
    texts: &mut Interner<'a>,
) -> Option<Result<AnyValue, String>> {
    Some(match variant {
        "stringValue" | "string_value" => match x {
            J::Str(s) => Ok(AnyValue::Str(texts.text(s))),
            other => Err(format!("stringValue must be a string, got {}", show(other))),
        },
        "boolValue" | "bool_value" => match x {
            J::Bool(b) => Ok(AnyValue::Bool(*b)),
            J::Str(s) if s.eq_ignore_ascii_case("true") => Ok(AnyValue::Bool(true)),
            J::Str(s) if s.eq_ignore_ascii_case("false") => Ok(AnyValue::Bool(false)),
            other => Err(format!(
                "boolValue must be true or false, got {}",
                show(other)
            )),
        },
        "intValue" | "int_value" => int64(x).map(AnyValue::Int),
        "doubleValue" | "double_value" => double(x).map(AnyValue::Double),
        "bytesValue" | "bytes_value" => match x {
            J::Str(s) => b64_bytes(s)
                .map(AnyValue::Bytes)
                .ok_or_else(|| format!("bytesValue must be base64, got {}", show(x))),
            other => Err(format!(
                "bytesValue must be a base64 string, got {}",
                show(other)
            )),
        },
        _ => return None,
    })
}

fn values_list<'o, 'a>(x: &'o J<'a>, variant: &str) -> Result<&'o [J<'a>], String> {
    let J::Obj(obj) = x else {
        return Err(format!(
            "{variant} must be an object with a 'values' list, got {}",
            show(x)
        ));
    };
    match obj.get("values") {
        None => Ok(&[]),
        Some(J::Arr(items)) => Ok(items),
        Some(other) => Err(format!(
            "{variant}.values must be a list, got {}",
            show(other)
        )),
    }
}

/// An integer as writers of OTLP/JSON spell one.
enum Integer {
    Value(i128),
    OutOfRange,
    Malformed,
}

/// Reads a JSON integer, an integral float (`1.0`, `1e3`), or a string of either (`"12"`,
/// `" 1_000 "` as Python's `int()` reads it, `"1e3"` as the typed decoder read it).
fn integer(x: &J<'_>) -> Integer {
    const LIMIT: f64 = 1e30; // far beyond 64 bits, well inside i128
    let from_float = |f: f64| {
        if f.fract() != 0.0 || !f.is_finite() {
            Integer::Malformed
        } else if f.abs() < LIMIT {
            Integer::Value(f as i128)
        } else {
            Integer::OutOfRange
        }
    };
    match x {
        J::U64(n) => Integer::Value(i128::from(*n)),
        J::I64(n) => Integer::Value(i128::from(*n)),
        J::F64(f) => from_float(*f),
        J::Str(s) => match py_int(s) {
            Some(n) => Integer::Value(n),
            None if !s.is_empty()
                && s.bytes().all(|b| {
                    b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E')
                }) =>
            {
                s.parse::<f64>().map_or(Integer::Malformed, from_float)
            }
            None => Integer::Malformed,
        },
        _ => Integer::Malformed,
    }
}

/// `intValue`: an integer (see [`integer`]) within 64 bits.
fn int64(x: &J<'_>) -> Result<i64, String> {
    match integer(x) {
        Integer::Value(n) => i64::try_from(n)
            .map_err(|_| format!("intValue must fit in 64 bits, got {}", repr::repr(x))),
        Integer::OutOfRange => Err(format!(
            "intValue must fit in 64 bits, got {}",
            repr::repr(x)
        )),
        Integer::Malformed => Err(format!(
            "intValue must be a decimal integer, got {}",
            repr::repr(x)
        )),
    }
}

/// `doubleValue`: a number, or a string Python's `float()` reads (`NaN`, `Infinity`, ...).
fn double(x: &J<'_>) -> Result<f64, String> {
    match x {
        J::F64(f) => Ok(*f),
        J::U64(n) => Ok(*n as f64),
        J::I64(n) => Ok(*n as f64),
        J::Str(s) => match *s {
            "NaN" => Ok(f64::NAN),
            "Infinity" => Ok(f64::INFINITY),
            "-Infinity" => Ok(f64::NEG_INFINITY),
            other => py_float(other)
                .ok_or_else(|| format!("doubleValue must be a number, got {}", repr::repr(x))),
        },
        other => Err(format!(
            "doubleValue must be a number, got {}",
            repr::repr(other)
        )),
    }
}

/// An id of `N` bytes from hex or clearly-base64 text; `None` = "none" (only when
/// `optional`).
fn id<const N: usize>(
    value: Option<&J<'_>>,
    field: &str,
    optional: bool,
) -> Fallible<Option<[u8; N]>> {
    let text = match value {
        None | Some(J::Null) => None,
        Some(J::Str("")) => None,
        Some(J::Str(s)) => Some(*s),
        Some(other) => return bad(format!("{field} must be a hex string, got {}", show(other))),
    };
    let Some(text) = text else {
        return if optional {
            Ok(None)
        } else {
            bad(format!("{field} is missing"))
        };
    };
    if let Some(bytes) = hex_id::<N>(text) {
        if bytes.iter().all(|b| *b == 0) {
            return if optional {
                Ok(None) // an all-zero parent id is how some writers spell "no parent"
            } else {
                bad(format!(
                    "{field} is all zeros, which OTLP defines as invalid"
                ))
            };
        }
        return Ok(Some(bytes));
    }
    if let Some(raw) = b64_strict(text) {
        if let Ok(bytes) = <[u8; N]>::try_from(raw.as_slice()) {
            return Ok(Some(bytes));
        }
    }
    bad(format!(
        "{field} must be {} hex digits ({N} bytes), got {}",
        2 * N,
        show(value.unwrap_or(&J::Null))
    ))
}

/// A time in nanoseconds (`None`/absent = 0).
fn nanos(value: Option<&J<'_>>, field: &str) -> Fallible<u64> {
    let Some(value) = value.filter(|v| !matches!(v, J::Null)) else {
        return Ok(0);
    };
    if let J::U64(n) = value {
        return Ok(*n);
    }
    match integer(value) {
        Integer::Value(n) => u64::try_from(n).or_else(|_| {
            bad(format!(
                "{field} must be from 0 to 2^64-1, got {}",
                show(value)
            ))
        }),
        Integer::OutOfRange => bad(format!(
            "{field} must be from 0 to 2^64-1, got {}",
            show(value)
        )),
        Integer::Malformed => bad(format!(
            "{field} must be an integer (decimal string), got {}",
            show(value)
        )),
    }
}

/// A `dropped*Count` (`camel` or its `snake` spelling) of a span, event or link: a
/// `uint32` (see [`integer`]); absent or `null` is 0. Anything else (negative, past 2^32-1,
/// not an integer) reads as `u32::MAX` with a problem naming `path()`: the sender wrote a
/// count, so its lists may be short, and reading the count as 0 ("nothing dropped") let a
/// list an SDK limit cut pass as whole (DESIGN.md section 8: fail closed).
fn dropped_count(
    obj: &Obj<'_>,
    camel: &str,
    snake: &str,
    path: &dyn Fn() -> String,
    problems: &mut Problems,
) -> u32 {
    dropped_count_of(get2(obj, camel, snake), camel, path, problems)
}

/// [`dropped_count`] of the value already found (`None`: absent or `null`), `camel` naming
/// the field in the problem.
fn dropped_count_of(
    value: Option<&J<'_>>,
    camel: &str,
    path: &dyn Fn() -> String,
    problems: &mut Problems,
) -> u32 {
    let Some(value) = value else {
        return 0;
    };
    if let Integer::Value(n) = integer(value) {
        if let Ok(count) = u32::try_from(n) {
            return count;
        }
    }
    problems.push(format!(
        "{}.{camel}: must be an integer from 0 to 2^32-1, got {}; read as {} (dropped, how \
         many unknown)",
        path(),
        show(value),
        u32::MAX
    ));
    u32::MAX
}

/// A span's `flags` (a `fixed32`): an integer as [`integer`] reads it from 0 to 2^32-1,
/// absent or `null` = 0; anything else reads as 0 (nothing said about the parent) with a
/// problem, and the span is kept.
fn span_flags(value: Option<&J<'_>>, path: &dyn Fn() -> String, problems: &mut Problems) -> u32 {
    let Some(value) = value else {
        return 0;
    };
    if let Integer::Value(n) = integer(value) {
        if let Ok(flags) = u32::try_from(n) {
            return flags;
        }
    }
    problems.push(format!(
        "{}.flags: must be an integer from 0 to 2^32-1, got {}; read as 0",
        path(),
        show(value)
    ));
    0
}

const SPAN_KINDS: [&str; 6] = [
    "SPAN_KIND_UNSPECIFIED",
    "SPAN_KIND_INTERNAL",
    "SPAN_KIND_SERVER",
    "SPAN_KIND_CLIENT",
    "SPAN_KIND_PRODUCER",
    "SPAN_KIND_CONSUMER",
];
const STATUS_CODES: [&str; 3] = ["STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR"];

/// An enum given as its number (see [`integer`]) or name; anything else is unspecified,
/// with a problem.
fn enum_value(
    value: Option<&J<'_>>,
    names: &[&str],
    field: &dyn Fn() -> String,
    problems: &mut Problems,
) -> u8 {
    let found = match value {
        None | Some(J::Null) => return 0,
        Some(J::U64(n)) if (*n as usize) < names.len() => return *n as u8,
        Some(J::Str(s)) if names.contains(s) => names.iter().position(|name| name == s),
        Some(J::Bool(_)) => None,
        Some(other) => match integer(other) {
            Integer::Value(n) => usize::try_from(n).ok().filter(|&n| n < names.len()),
            _ => None,
        },
    };
    if let Some(n) = found {
        return n as u8;
    }
    problems.push(format!(
        "{}: unknown value {}; read as {}",
        field(),
        show(value.unwrap_or(&J::Null)),
        names[0]
    ));
    0
}

/// `scope.name`/`scope.version` of a `scope` (`None`: absent; `str()` of what is there;
/// falsy = "").
fn scope_of(scope: Option<&J<'_>>) -> Arc<Scope> {
    let Some(J::Obj(scope)) = scope else {
        return Arc::default();
    };
    let text = |key: &str| match scope.get(key) {
        Some(v) if truthy(v) => py_str(v),
        _ => String::new(),
    };
    Arc::new(Scope {
        name: text("name"),
        version: text("version"),
    })
}

/// The spans of `resource_spans`, the elements of that list from index `first` on.
fn decode_spans<'a>(
    resource_spans: &[J<'a>],
    first: usize,
    batch: &mut Batch,
    texts: &mut Interner<'a>,
) {
    each_scope(
        resource_spans,
        first,
        "Spans",
        batch,
        texts,
        |entry, batch, texts| {
            let scope = scope_of(entry.scope.get("scope"));
            let spans = match entry.scope.get("spans") {
                None | Some(J::Null) => return,
                Some(J::Arr(spans)) => spans,
                Some(other) => {
                    batch.problems.push(format!(
                        "{}.spans: must be a list, got {}",
                        entry.path,
                        show(other)
                    ));
                    return;
                }
            };
            let pwhere = format!("{}.spans", entry.path);
            for (pi, sp) in spans.iter().enumerate() {
                let at = SpanAt {
                    where_: &pwhere,
                    index: pi,
                };
                match span(sp, at, &entry.resource, &scope, &mut batch.problems, texts) {
                    Ok(span) => batch.spans.push(span),
                    Err(Bad(message)) => {
                        batch.rejected += 1;
                        batch
                            .problems
                            .push(format!("{pwhere}[{pi}]: {message}; span rejected"));
                    }
                }
            }
        },
    );
}

/// A record's place: `{where_}[{index}]`.
#[derive(Clone, Copy)]
struct SpanAt<'w> {
    where_: &'w str,
    index: usize,
}

impl SpanAt<'_> {
    fn path(&self, suffix: &str) -> String {
        format!("{}[{}]{suffix}", self.where_, self.index)
    }
}

/// The members of a span object [`span`] reads, each spelling its own key.
#[derive(Clone, Copy, PartialEq)]
enum SpanKey {
    TraceId,
    SpanId,
    ParentSpanId,
    StartTimeUnixNano,
    EndTimeUnixNano,
    TraceIdSnake,
    SpanIdSnake,
    ParentSpanIdSnake,
    StartTimeUnixNanoSnake,
    EndTimeUnixNanoSnake,
    Name,
    Kind,
    Status,
    Attributes,
    Events,
    Links,
    DroppedAttributesCount,
    DroppedAttributesCountSnake,
    DroppedEventsCount,
    DroppedEventsCountSnake,
    DroppedLinksCount,
    DroppedLinksCountSnake,
    Flags,
}

impl SpanKey {
    const COUNT: usize = SpanKey::Flags as usize + 1;
}

impl MemberKey for SpanKey {
    fn at(self) -> usize {
        self as usize
    }

    fn of(key: &str) -> Option<SpanKey> {
        Some(match key {
            "traceId" => SpanKey::TraceId,
            "spanId" => SpanKey::SpanId,
            "parentSpanId" => SpanKey::ParentSpanId,
            "startTimeUnixNano" => SpanKey::StartTimeUnixNano,
            "endTimeUnixNano" => SpanKey::EndTimeUnixNano,
            "trace_id" => SpanKey::TraceIdSnake,
            "span_id" => SpanKey::SpanIdSnake,
            "parent_span_id" => SpanKey::ParentSpanIdSnake,
            "start_time_unix_nano" => SpanKey::StartTimeUnixNanoSnake,
            "end_time_unix_nano" => SpanKey::EndTimeUnixNanoSnake,
            "name" => SpanKey::Name,
            "kind" => SpanKey::Kind,
            "status" => SpanKey::Status,
            "attributes" => SpanKey::Attributes,
            "events" => SpanKey::Events,
            "links" => SpanKey::Links,
            "droppedAttributesCount" => SpanKey::DroppedAttributesCount,
            "dropped_attributes_count" => SpanKey::DroppedAttributesCountSnake,
            "droppedEventsCount" => SpanKey::DroppedEventsCount,
            "dropped_events_count" => SpanKey::DroppedEventsCountSnake,
            "droppedLinksCount" => SpanKey::DroppedLinksCount,
            "dropped_links_count" => SpanKey::DroppedLinksCountSnake,
            "flags" => SpanKey::Flags,
            _ => return None,
        })
    }
}

/// The members a record's reader reads ([`SpanKey`], [`LogKey`]), each spelling its own key.
trait MemberKey: Copy {
    /// The key's slot in [`Members`].
    fn at(self) -> usize;
    /// The key spelled `key`, `None` for a member the reader does not read.
    fn of(key: &str) -> Option<Self>;
}

/// A record object's members (a span's, a log record's) found in one pass over it, by key.
///
/// Why: looked up by name, each of the ~20 fields a span is read for was a scan of its
/// members comparing keys, two scans for each `dropped*Count` a sender leaves out (most
/// do); one pass that matches each key once took that off every span. An object's keys are
/// unique (the tree keeps the last value of a repeated key), so what `Obj::get` finds is
/// what is kept here.
///
/// The values are held by value (a `J` is a small copy), so the direct reader fills the
/// slots as it reads the members, with no second array of references made from its own.
struct Members<'a, K, const N: usize> {
    found: [Option<J<'a>>; N],
    key: PhantomData<K>,
}

type SpanMembers<'a> = Members<'a, SpanKey, { SpanKey::COUNT }>;

impl<'a, K: MemberKey, const N: usize> Members<'a, K, N> {
    /// None found yet (the direct reader fills them).
    fn new() -> Self {
        Members {
            found: [None; N],
            key: PhantomData,
        }
    }

    fn of(obj: &Obj<'a>) -> Self {
        let mut members = Self::new();
        for (key, value) in obj.iter() {
            if let Some(at) = K::of(key) {
                members.found[at.at()] = Some(*value);
            }
        }
        members
    }

    /// As `Obj::contains`.
    fn has(&self, key: K) -> bool {
        self.found[key.at()].is_some()
    }

    /// As `Obj::get`.
    fn get(&self, key: K) -> Option<&J<'a>> {
        self.found[key.at()].as_ref()
    }

    /// As `Obj::get_some`: absent and `null` are both `None`.
    fn get_some(&self, key: K) -> Option<&J<'a>> {
        self.get(key).filter(|value| !matches!(value, J::Null))
    }

    /// As [`get2`]: `camel`'s value, else `snake`'s when `camel` is absent or `null`.
    fn get2(&self, camel: K, snake: K) -> Option<&J<'a>> {
        self.get_some(camel).or_else(|| self.get_some(snake))
    }
}

fn span<'a>(
    sp: &J<'a>,
    at: SpanAt<'_>,
    resource: &Arc<Resource>,
    scope: &Arc<Scope>,
    problems: &mut Problems,
    texts: &mut Interner<'a>,
) -> Fallible<Span> {
    let J::Obj(obj) = sp else {
        return bad(format!("expected a span object, got {}", show(sp)));
    };
    span_of(
        &SpanMembers::of(obj),
        None,
        at,
        resource,
        scope,
        problems,
        texts,
    )
}

/// A span of the members `sp`, its attributes `read` already when the caller read them
/// (the direct reader), else from `sp`.
fn span_of<'a>(
    sp: &SpanMembers<'a>,
    read: Option<Attributes>,
    at: SpanAt<'_>,
    resource: &Arc<Resource>,
    scope: &Arc<Scope>,
    problems: &mut Problems,
    texts: &mut Interner<'a>,
) -> Fallible<Span> {
    // The ids and times are all camelCase or all snake_case, as `traceId` says.
    let ids = if sp.has(SpanKey::TraceId) {
        [
            SpanKey::TraceId,
            SpanKey::SpanId,
            SpanKey::ParentSpanId,
            SpanKey::StartTimeUnixNano,
            SpanKey::EndTimeUnixNano,
        ]
    } else {
        [
            SpanKey::TraceIdSnake,
            SpanKey::SpanIdSnake,
            SpanKey::ParentSpanIdSnake,
            SpanKey::StartTimeUnixNanoSnake,
            SpanKey::EndTimeUnixNanoSnake,
        ]
    };
    let trace_id = id::<16>(sp.get(ids[0]), "traceId", false)?.unwrap_or_default();
    let span_id = id::<8>(sp.get(ids[1]), "spanId", false)?.unwrap_or_default();
    let parent = match sp.get(ids[2]) {
        Some(p) if truthy(p) => id::<8>(Some(p), "parentSpanId", true)?,
        _ => None,
    };
    let name = match sp.get(SpanKey::Name) {
        None => String::new(),
        Some(J::Str(s)) => s.to_string(),
        Some(other) => return bad(format!("name must be a string, got {}", show(other))),
    };
    let kind = enum_value(
        sp.get(SpanKey::Kind),
        &SPAN_KINDS,
        &|| at.path(".kind"),
        problems,
    );
    let start_ns = nanos(sp.get(ids[3]), "startTimeUnixNano")?;
    let end_ns = nanos(sp.get(ids[4]), "endTimeUnixNano")?;
    let mut status_code = 0;
    let mut status_message = String::new();
    match sp.get(SpanKey::Status) {
        Some(status) if truthy(status) => match status {
            J::Obj(status) => {
                status_code = enum_value(
                    status.get("code"),
                    &STATUS_CODES,
                    &|| at.path(".status.code"),
                    problems,
                );
                if let Some(message) = status.get("message").filter(|m| truthy(m)) {
                    status_message = py_str(message);
                }
            }
            other => problems.push(format!(
                "{}: must be an object, got {}",
                at.path(".status"),
                show(other)
            )),
        },
        _ => {}
    }
    let span_attributes = match (read, sp.get(SpanKey::Attributes)) {
        (Some(read), _) => read,
        (None, Some(J::Arr(list))) if !list.is_empty() => {
            attributes(list, &|| at.path(""), problems, texts)
        }
        (None, Some(other)) if truthy(other) => {
            problems.push(format!(
                "{}: must be a list, got {}; ignored",
                at.path(".attributes"),
                show(other)
            ));
            Vec::new()
        }
        _ => Vec::new(),
    };
    let events = match sp.get(SpanKey::Events) {
        Some(events) if truthy(events) => span_events(events, at, problems, texts),
        _ => Vec::new(),
    };
    let links = match sp.get(SpanKey::Links) {
        Some(links) if truthy(links) => span_links(links, at, problems, texts),
        _ => Vec::new(),
    };
    let span_path = || at.path("");
    let dropped = |camel: SpanKey, snake: SpanKey, name: &str, problems: &mut Problems| {
        dropped_count_of(sp.get2(camel, snake), name, &span_path, problems)
    };
    let dropped_attributes_count = dropped(
        SpanKey::DroppedAttributesCount,
        SpanKey::DroppedAttributesCountSnake,
        "droppedAttributesCount",
        problems,
    );
    let dropped_events_count = dropped(
        SpanKey::DroppedEventsCount,
        SpanKey::DroppedEventsCountSnake,
        "droppedEventsCount",
        problems,
    );
    let dropped_links_count = dropped(
        SpanKey::DroppedLinksCount,
        SpanKey::DroppedLinksCountSnake,
        "droppedLinksCount",
        problems,
    );
    let flags = span_flags(sp.get_some(SpanKey::Flags), &span_path, problems);
    Ok(Span {
        trace_id,
        span_id,
        parent_span_id: parent,
        name,
        kind,
        start_ns,
        end_ns,
        status_code,
        status_message,
        attributes: span_attributes,
        events,
        links,
        resource: Arc::clone(resource),
        scope: Arc::clone(scope),
        dropped_attributes_count,
        dropped_events_count,
        dropped_links_count,
        flags,
    })
}

/// Attributes of an event or link: a non-empty list, else none (no problem for a non-list).
fn nested_attributes<'a>(
    obj: &Obj<'a>,
    path: &dyn Fn() -> String,
    problems: &mut Problems,
    texts: &mut Interner<'a>,
) -> Attributes {
    match obj.get("attributes") {
        Some(J::Arr(list)) if !list.is_empty() => attributes(list, path, problems, texts),
        _ => Vec::new(),
    }
}

fn span_events<'a>(
    events: &J<'a>,
    at: SpanAt<'_>,
    problems: &mut Problems,
    texts: &mut Interner<'a>,
) -> Vec<Event> {
    let J::Arr(events) = events else {
        problems.push(format!(
            "{}: must be a list, got {}; ignored",
            at.path(".events"),
            show(events)
        ));
        return Vec::new();
    };
    let mut out = Vec::with_capacity(events.len());
    for (ei, ev) in events.iter().enumerate() {
        let suffix = format!(".events[{ei}]");
        let event = match ev {
            J::Obj(ev) => {
                let name = match ev.get("name") {
                    None => String::new(),
                    Some(name) => py_str(name),
                };
                nanos(get2(ev, "timeUnixNano", "time_unix_nano"), "timeUnixNano").map(|time_ns| {
                    let path = || at.path(&suffix);
                    Event {
                        name,
                        time_ns,
                        attributes: nested_attributes(ev, &path, problems, texts),
                        dropped_attributes_count: dropped_count(
                            ev,
                            "droppedAttributesCount",
                            "dropped_attributes_count",
                            &path,
                            problems,
                        ),
                    }
                })
            }
            other => bad(format!("expected an event object, got {}", show(other))),
        };
        match event {
            Ok(event) => out.push(event),
            Err(Bad(message)) => {
                problems.push(format!("{}: {message}; event ignored", at.path(&suffix)))
            }
        }
    }
    out
}

fn span_links<'a>(
    links: &J<'a>,
    at: SpanAt<'_>,
    problems: &mut Problems,
    texts: &mut Interner<'a>,
) -> Vec<Link> {
    let J::Arr(links) = links else {
        problems.push(format!(
            "{}: must be a list, got {}; ignored",
            at.path(".links"),
            show(links)
        ));
        return Vec::new();
    };
    let mut out = Vec::with_capacity(links.len());
    for (li, link) in links.iter().enumerate() {
        let suffix = format!(".links[{li}]");
        let read = match link {
            J::Obj(link) => (|| {
                let trace_id = id::<16>(get2(link, "traceId", "trace_id"), "traceId", false)?;
                let span_id = id::<8>(get2(link, "spanId", "span_id"), "spanId", false)?;
                let path = || at.path(&suffix);
                Ok(Link {
                    trace_id: trace_id.unwrap_or_default().to_vec(),
                    span_id: span_id.unwrap_or_default().to_vec(),
                    attributes: nested_attributes(link, &path, problems, texts),
                    dropped_attributes_count: dropped_count(
                        link,
                        "droppedAttributesCount",
                        "dropped_attributes_count",
                        &path,
                        problems,
                    ),
                })
            })(),
            other => bad(format!("expected a link object, got {}", show(other))),
        };
        match read {
            Ok(link) => out.push(link),
            Err(Bad(message)) => {
                problems.push(format!("{}: {message}; link ignored", at.path(&suffix)))
            }
        }
    }
    out
}

/// The log records of `resource_logs`, the elements of that list from index `first` on.
fn decode_logs<'a>(
    resource_logs: &[J<'a>],
    first: usize,
    batch: &mut Batch,
    texts: &mut Interner<'a>,
) {
    each_scope(
        resource_logs,
        first,
        "Logs",
        batch,
        texts,
        |entry, batch, texts| {
            let scope = scope_of(entry.scope.get("scope"));
            let records = match list_field(entry.scope, "logRecords", "log_records", &entry.path) {
                Ok(records) => records,
                Err(Bad(message)) => {
                    batch.problems.push(message);
                    return;
                }
            };
            let lwhere = format!("{}.logRecords", entry.path);
            for (li, lr) in records.iter().enumerate() {
                let at = SpanAt {
                    where_: &lwhere,
                    index: li,
                };
                match log_record(lr, at, &entry.resource, &scope, &mut batch.problems, texts) {
                    Ok(record) => batch.logs.push(record),
                    Err(Bad(message)) => {
                        batch.rejected += 1;
                        batch
                            .problems
                            .push(format!("{lwhere}[{li}]: {message}; log record rejected"));
                    }
                }
            }
        },
    );
}

/// The members of a log record object [`log_record_of`] reads, each spelling its own key.
#[derive(Clone, Copy, PartialEq)]
enum LogKey {
    TraceId,
    TraceIdSnake,
    SpanId,
    SpanIdSnake,
    EventName,
    EventNameSnake,
    TimeUnixNano,
    TimeUnixNanoSnake,
    ObservedTimeUnixNano,
    ObservedTimeUnixNanoSnake,
    Body,
    Attributes,
    SeverityNumber,
    SeverityNumberSnake,
    DroppedAttributesCount,
    DroppedAttributesCountSnake,
}

impl LogKey {
    const COUNT: usize = LogKey::DroppedAttributesCountSnake as usize + 1;
}

impl MemberKey for LogKey {
    fn at(self) -> usize {
        self as usize
    }

    fn of(key: &str) -> Option<LogKey> {
        Some(match key {
            "traceId" => LogKey::TraceId,
            "trace_id" => LogKey::TraceIdSnake,
            "spanId" => LogKey::SpanId,
            "span_id" => LogKey::SpanIdSnake,
            "eventName" => LogKey::EventName,
            "event_name" => LogKey::EventNameSnake,
            "timeUnixNano" => LogKey::TimeUnixNano,
            "time_unix_nano" => LogKey::TimeUnixNanoSnake,
            "observedTimeUnixNano" => LogKey::ObservedTimeUnixNano,
            "observed_time_unix_nano" => LogKey::ObservedTimeUnixNanoSnake,
            "body" => LogKey::Body,
            "attributes" => LogKey::Attributes,
            "severityNumber" => LogKey::SeverityNumber,
            "severity_number" => LogKey::SeverityNumberSnake,
            "droppedAttributesCount" => LogKey::DroppedAttributesCount,
            "dropped_attributes_count" => LogKey::DroppedAttributesCountSnake,
            _ => return None,
        })
    }
}

type LogMembers<'a> = Members<'a, LogKey, { LogKey::COUNT }>;

fn log_record<'a>(
    lr: &J<'a>,
    at: SpanAt<'_>,
    resource: &Arc<Resource>,
    scope: &Arc<Scope>,
    problems: &mut Problems,
    texts: &mut Interner<'a>,
) -> Fallible<LogRecord> {
    let J::Obj(obj) = lr else {
        return bad(format!("expected a log record object, got {}", show(lr)));
    };
    log_record_of(
        &LogMembers::of(obj),
        None,
        at,
        resource,
        scope,
        problems,
        texts,
    )
}

/// A log record of the members `lr`, its attributes `read` already when the caller read
/// them (the direct reader), else from `lr`.
fn log_record_of<'a>(
    lr: &LogMembers<'a>,
    read: Option<Attributes>,
    at: SpanAt<'_>,
    resource: &Arc<Resource>,
    scope: &Arc<Scope>,
    problems: &mut Problems,
    texts: &mut Interner<'a>,
) -> Fallible<LogRecord> {
    let context = id::<16>(
        lr.get2(LogKey::TraceId, LogKey::TraceIdSnake),
        "traceId",
        true,
    )
    .and_then(|trace| {
        Ok((
            trace,
            id::<8>(lr.get2(LogKey::SpanId, LogKey::SpanIdSnake), "spanId", true)?,
        ))
    });
    let (trace_id, span_id) = context.unwrap_or_else(|Bad(message)| {
        problems.push(format!(
            "{}: {message}; read without span context",
            at.path("")
        ));
        (None, None)
    });
    let attrs = match (read, lr.get(LogKey::Attributes)) {
        (Some(read), _) => read,
        (None, Some(J::Arr(list))) if !list.is_empty() => {
            attributes(list, &|| at.path(""), problems, texts)
        }
        _ => Vec::new(),
    };
    let event_name = match lr.get2(LogKey::EventName, LogKey::EventNameSnake) {
        Some(J::Str(name)) if !name.is_empty() => name.to_string(),
        _ => match attrs.iter().find(|kv| kv.key == "event.name") {
            Some(KeyValue {
                value: AnyValue::Str(name),
                ..
            }) => name.to_string(),
            _ => String::new(),
        },
    };
    let mut time_ns = nanos(
        lr.get2(LogKey::TimeUnixNano, LogKey::TimeUnixNanoSnake),
        "timeUnixNano",
    )?;
    if time_ns == 0 {
        time_ns = nanos(
            lr.get2(
                LogKey::ObservedTimeUnixNano,
                LogKey::ObservedTimeUnixNanoSnake,
            ),
            "observedTimeUnixNano",
        )?;
    }
    let body = match lr.get_some(LogKey::Body) {
        None => AnyValue::Empty,
        Some(body) => any_value(body, 0, texts).unwrap_or_else(|message| {
            problems.push(format!("{}: {message}; read as null", at.path(".body")));
            AnyValue::Empty
        }),
    };
    let severity_number = match lr.get2(LogKey::SeverityNumber, LogKey::SeverityNumberSnake) {
        Some(J::Str(name)) if name.starts_with("SEVERITY_NUMBER_") => severity_by_name(name),
        Some(J::Bool(_)) | None => 0,
        Some(other) => match integer(other) {
            Integer::Value(n) => i32::try_from(n).unwrap_or(0),
            _ => 0,
        },
    };
    let dropped_attributes_count = dropped_count_of(
        lr.get2(
            LogKey::DroppedAttributesCount,
            LogKey::DroppedAttributesCountSnake,
        ),
        "droppedAttributesCount",
        &|| at.path(""),
        problems,
    );
    Ok(LogRecord {
        trace_id,
        span_id,
        event_name,
        time_ns,
        attributes: attrs,
        body,
        severity_number,
        resource: Arc::clone(resource),
        scope: Arc::clone(scope),
        dropped_attributes_count,
    })
}

/// `SEVERITY_NUMBER_TRACE` .. `SEVERITY_NUMBER_FATAL4`; anything else is 0.
fn severity_by_name(name: &str) -> i32 {
    const LEVELS: [(&str, i32); 6] = [
        ("TRACE", 1),
        ("DEBUG", 5),
        ("INFO", 9),
        ("WARN", 13),
        ("ERROR", 17),
        ("FATAL", 21),
    ];
    let Some(rest) = name.strip_prefix("SEVERITY_NUMBER_") else {
        return 0;
    };
    for (level, base) in LEVELS {
        if let Some(n) = rest.strip_prefix(level) {
            return match n {
                "" => base,
                "2" => base + 1,
                "3" => base + 2,
                "4" => base + 3,
                _ => 0,
            };
        }
    }
    0
}

#[cfg(test)]
mod tests;
