//! OTLP protobuf request bodies (traces and logs) to [`crate::model`] records.
//!
//! One pass over the bytes in wire order, so the first malformed byte decides the error
//! exactly as it did for the upb parser the Python decoder used ([`crate::wire`] has the
//! wire rules). `ExportTraceServiceRequest` and `TracesData` share their layout (repeated
//! `ResourceSpans` = 1), as do the logs messages. The record rules are the Python decoder's:
//! - a span needs a 16-byte trace id, an 8-byte span id and a parent id of 0 or 8 bytes,
//!   else it is rejected (counted in `rejected`) with a problem naming its place and name;
//! - a kind outside 0..=5 or a status code outside 0..=2 is read as unspecified/unset with a
//!   problem; a status message is kept whatever the code;
//! - a log record whose trace/span ids are not 16/8 bytes (or absent) is read without span
//!   context, with a problem; its time is `time_unix_nano`, else the observed time; its
//!   event name is `event_name`, else a string `event.name` attribute; an absent body and
//!   an empty `AnyValue` both read as [`AnyValue::Empty`];
//! - link ids are taken as they are (links are not checked); a span's `flags` (a `fixed32`)
//!   are kept; link flags, trace state, schema URLs and scope attributes are read (strings
//!   must be UTF-8) and dropped;
//! - the `dropped_*_count`s of spans, events, links and log records are kept (a `uint32`
//!   varint past 2^32-1 reads as 2^32-1, where protobuf parsers keep its low 32 bits: 2^32
//!   would read as nothing dropped);
//! - a singular message field that occurs more than once is merged (later fields win,
//!   repeated fields append), a scalar's last occurrence wins, and `AnyValue`'s variants
//!   replace one another, as protobuf parsers do;
//! - `string_value_strindex` of an `AnyValue` reads as an integer (the generated classes
//!   gave it so); attribute lists keep wire order and duplicates (last one wins in Python).

use std::sync::Arc;

use crate::model::{
    AnyValue, Attributes, Batch, Event, Interner, KeyValue, Link, LogRecord, Resource, Scope, Span,
    Text,
};
use crate::pyrepr::py_repr;
use crate::session_join::SESSION_ATTRIBUTES;
use crate::wire::{self, int32, string, uint32, Fields, Value, WireError};

/// The resource attributes a transfer keeps ([`decode_for_transfer`]).
const RESOURCE_KEPT: [&str; 1] = ["service.name"];

/// Which request a protobuf body is read as (the URL path, or the file's name, says).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    Traces,
    Logs,
}

impl Signal {
    /// The request message's full name, for error messages.
    pub fn message_name(self) -> &'static str {
        match self {
            Signal::Traces => "opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest",
            Signal::Logs => "opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest",
        }
    }
}

/// A decoded body and whether it plausibly is the signal it was read as.
///
/// Traces and logs requests share their outer field numbers, so the other signal's bytes
/// often parse without error; a wrong guess shows in the first records: a span always has
/// 16-byte trace and 8-byte span ids, a log record has a timestamp and ids of 0 or 16/8
/// bytes. The first four records are looked at.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    pub batch: Batch,
    pub plausible: bool,
}

/// How many records `plausible` looks at.
const PLAUSIBILITY_SAMPLE: usize = 4;
const MAX_KIND: i32 = 5;
const MAX_STATUS: i32 = 2;

/// Decode one protobuf request body of `signal`.
pub fn decode(payload: &[u8], signal: Signal) -> Result<Decoded, WireError> {
    decode_with(payload, signal, false)
}

/// Decode one traces body for transfer to another process (`serve`'s receiving process,
/// which only assembles the spans and hands them to a grading worker that decodes its own
/// part again): every byte is read and checked as [`decode`] checks it (the same errors,
/// rejected spans and problems), but of the attributes of the spans, of their resources,
/// events and links only what a transfer keeps is built: a span's `SESSION_ATTRIBUTES` and
/// its resource's `service.name` (in wire order, duplicates included). Events are checked
/// and dropped; links keep their ids. Building every attribute value was about a third of
/// the receiving process's instructions per span. A logs body is decoded as [`decode`]
/// decodes it (the receiving process builds its log records).
pub fn decode_for_transfer(payload: &[u8], signal: Signal) -> Result<Decoded, WireError> {
    decode_with(payload, signal, signal == Signal::Traces)
}

fn decode_with(payload: &[u8], signal: Signal, lean: bool) -> Result<Decoded, WireError> {
    let mut out = Decoder {
        batch: Batch::default(),
        // Lean, only the few attributes kept are interned: a small front table.
        texts: Interner::for_body(if lean { 0 } else { payload.len() }),
        sampled: 0,
        implausible_at: None,
        lean,
        pairs: Vec::new(),
    };
    let mut fields = Fields::top(payload, &[]);
    let mut index = 0;
    while let Some((number, value)) = fields.next()? {
        if let (1, Value::Bytes(bytes)) = (number, value) {
            match signal {
                Signal::Traces => out.resource_spans(&fields, bytes, index)?,
                Signal::Logs => out.resource_logs(&fields, bytes, index)?,
            }
            index += 1;
        }
    }
    Ok(Decoded {
        batch: out.batch,
        plausible: out.implausible_at.is_none(),
    })
}

struct Decoder<'a> {
    batch: Batch,
    /// The body's attribute keys and short string values.
    texts: Interner<'a>,
    /// Records looked at for plausibility so far (at most `PLAUSIBILITY_SAMPLE`).
    sampled: usize,
    implausible_at: Option<usize>,
    /// [`decode_for_transfer`]: span, resource, event and link attributes checked, only
    /// those a transfer keeps built.
    lean: bool,
    /// A span's attributes while they are read (kept from span to span, so a span's list
    /// is allocated once, at its final size, not grown entry by entry).
    pairs: Vec<KeyValue>,
}

impl<'a> Decoder<'a> {
    fn sample(&mut self, plausible: bool) {
        if self.sampled < PLAUSIBILITY_SAMPLE && self.implausible_at.is_none() {
            if !plausible {
                self.implausible_at = Some(self.sampled);
            }
            self.sampled += 1;
        }
    }

    fn resource_spans(&mut self, up: &Fields<'a>, bytes: &'a [u8], ri: usize) -> wire::Result<()> {
        let mut resource = Resource::default();
        let first = self.batch.spans.len();
        let mut fields = up.child(bytes, &[3])?;
        let mut si = 0;
        while let Some((number, value)) = fields.next()? {
            match (number, value) {
                (1, Value::Bytes(b)) => {
                    let kept = self.lean.then_some(&RESOURCE_KEPT[..]);
                    resource_into(&fields, b, &mut resource, &mut self.texts, kept)?
                }
                (2, Value::Bytes(b)) => {
                    self.scope_spans(&fields, b, ri, si)?;
                    si += 1;
                }
                (3, Value::Bytes(b)) => {
                    string(b)?;
                }
                _ => {}
            }
        }
        let resource = Arc::new(resource);
        for span in &mut self.batch.spans[first..] {
            span.resource = Arc::clone(&resource);
        }
        Ok(())
    }

    fn scope_spans(
        &mut self,
        up: &Fields<'a>,
        bytes: &'a [u8],
        ri: usize,
        si: usize,
    ) -> wire::Result<()> {
        let mut scope = Scope::default();
        let first = self.batch.spans.len();
        let mut fields = up.child(bytes, &[3])?;
        let mut pi = 0;
        while let Some((number, value)) = fields.next()? {
            match (number, value) {
                (1, Value::Bytes(b)) => {
                    scope_into(&fields, b, &mut scope, &mut self.texts, self.lean)?
                }
                (2, Value::Bytes(b)) => {
                    self.span(&fields, b, ri, si, pi)?;
                    pi += 1;
                }
                (3, Value::Bytes(b)) => {
                    string(b)?;
                }
                _ => {}
            }
        }
        let scope = Arc::new(scope);
        for span in &mut self.batch.spans[first..] {
            span.scope = Arc::clone(&scope);
        }
        Ok(())
    }

    fn span(
        &mut self,
        up: &Fields<'a>,
        bytes: &'a [u8],
        ri: usize,
        si: usize,
        pi: usize,
    ) -> wire::Result<()> {
        let raw = RawSpan::decode(up, bytes, &mut self.texts, self.lean, &mut self.pairs)?;
        self.sample(raw.trace_id.len() == 16 && raw.span_id.len() == 8);
        let problems = &mut self.batch.problems;
        let at = || format!("resourceSpans[{ri}].scopeSpans[{si}].spans[{pi}]");
        let (Ok(trace_id), Ok(span_id), Some(parent_span_id)) = (
            <[u8; 16]>::try_from(raw.trace_id),
            <[u8; 8]>::try_from(raw.span_id),
            parent_id(raw.parent),
        ) else {
            self.batch.rejected += 1;
            problems.push(format!(
                "{} ({}): {}; span rejected",
                at(),
                py_repr(&raw.name),
                bad_ids(raw.trace_id, raw.span_id, raw.parent)
            ));
            return Ok(());
        };
        let mut kind = raw.kind;
        if !(0..=MAX_KIND).contains(&kind) {
            problems.push(format!(
                "{}.kind: unknown SpanKind {kind}; read as SPAN_KIND_UNSPECIFIED",
                at()
            ));
            kind = 0;
        }
        let mut code = raw.status_code;
        if !(0..=MAX_STATUS).contains(&code) {
            problems.push(format!(
                "{}.status.code: unknown StatusCode {code}; read as STATUS_CODE_UNSET",
                at()
            ));
            code = 0;
        }
        self.batch.spans.push(Span {
            trace_id,
            span_id,
            parent_span_id,
            name: raw.name,
            // Both were checked to be in 0..=5 / 0..=2 above.
            kind: kind as u8,
            start_ns: raw.start_ns,
            end_ns: raw.end_ns,
            status_code: code as u8,
            status_message: raw.status_message,
            attributes: raw.attributes,
            events: raw.events,
            links: raw.links,
            resource: Arc::default(),
            scope: Arc::default(),
            dropped_attributes_count: raw.dropped_attributes_count,
            dropped_events_count: raw.dropped_events_count,
            dropped_links_count: raw.dropped_links_count,
            flags: raw.flags,
        });
        Ok(())
    }

    fn resource_logs(&mut self, up: &Fields<'a>, bytes: &'a [u8], ri: usize) -> wire::Result<()> {
        let mut resource = Resource::default();
        let first = self.batch.logs.len();
        let mut fields = up.child(bytes, &[3])?;
        let mut si = 0;
        while let Some((number, value)) = fields.next()? {
            match (number, value) {
                (1, Value::Bytes(b)) => {
                    resource_into(&fields, b, &mut resource, &mut self.texts, None)?
                }
                (2, Value::Bytes(b)) => {
                    self.scope_logs(&fields, b, ri, si)?;
                    si += 1;
                }
                (3, Value::Bytes(b)) => {
                    string(b)?;
                }
                _ => {}
            }
        }
        let resource = Arc::new(resource);
        for log in &mut self.batch.logs[first..] {
            log.resource = Arc::clone(&resource);
        }
        Ok(())
    }

    fn scope_logs(
        &mut self,
        up: &Fields<'a>,
        bytes: &'a [u8],
        ri: usize,
        si: usize,
    ) -> wire::Result<()> {
        let mut scope = Scope::default();
        let first = self.batch.logs.len();
        let mut fields = up.child(bytes, &[3])?;
        let mut li = 0;
        while let Some((number, value)) = fields.next()? {
            match (number, value) {
                (1, Value::Bytes(b)) => scope_into(&fields, b, &mut scope, &mut self.texts, false)?,
                (2, Value::Bytes(b)) => {
                    self.log_record(&fields, b, ri, si, li)?;
                    li += 1;
                }
                (3, Value::Bytes(b)) => {
                    string(b)?;
                }
                _ => {}
            }
        }
        let scope = Arc::new(scope);
        for log in &mut self.batch.logs[first..] {
            log.scope = Arc::clone(&scope);
        }
        Ok(())
    }

    fn log_record(
        &mut self,
        up: &Fields<'a>,
        bytes: &'a [u8],
        ri: usize,
        si: usize,
        li: usize,
    ) -> wire::Result<()> {
        let raw = RawLog::decode(up, bytes, &mut self.texts)?;
        let ids_fit = matches!(raw.trace_id.len(), 0 | 16) && matches!(raw.span_id.len(), 0 | 8);
        self.sample((raw.time_ns != 0 || raw.observed_ns != 0) && ids_fit);
        let (trace_id, span_id) = if ids_fit {
            (
                <[u8; 16]>::try_from(raw.trace_id).ok(),
                <[u8; 8]>::try_from(raw.span_id).ok(),
            )
        } else {
            self.batch.problems.push(format!(
                "resourceLogs[{ri}].scopeLogs[{si}].logRecords[{li}]: traceId/spanId have \
                 {}/{} bytes, expected 16/8; read without span context",
                raw.trace_id.len(),
                raw.span_id.len()
            ));
            (None, None)
        };
        let event_name = if raw.event_name.is_empty() {
            legacy_event_name(&raw.attributes)
        } else {
            raw.event_name
        };
        self.batch.logs.push(LogRecord {
            trace_id,
            span_id,
            event_name,
            time_ns: if raw.time_ns != 0 {
                raw.time_ns
            } else {
                raw.observed_ns
            },
            attributes: raw.attributes,
            body: raw.body,
            severity_number: raw.severity_number,
            resource: Arc::default(),
            scope: Arc::default(),
            dropped_attributes_count: raw.dropped_attributes_count,
        });
        Ok(())
    }
}

/// The `event.name` attribute older SDKs put log-based events' names in, when it is a
/// string (the last one, as a dict of the attributes would hold).
fn legacy_event_name(attributes: &Attributes) -> String {
    match attributes.iter().rev().find(|kv| kv.key == "event.name") {
        Some(KeyValue {
            value: AnyValue::Str(name),
            ..
        }) => name.to_string(),
        _ => String::new(),
    }
}

/// `Some(None)` for no parent, `Some(Some(id))` for an 8-byte one, `None` when malformed.
fn parent_id(parent: &[u8]) -> Option<Option<[u8; 8]>> {
    if parent.is_empty() {
        return Some(None);
    }
    <[u8; 8]>::try_from(parent).ok().map(Some)
}

fn bad_ids(trace_id: &[u8], span_id: &[u8], parent: &[u8]) -> String {
    let mut wrong = Vec::new();
    if trace_id.len() != 16 {
        wrong.push(format!("traceId has {} bytes, expected 16", trace_id.len()));
    }
    if span_id.len() != 8 {
        wrong.push(format!("spanId has {} bytes, expected 8", span_id.len()));
    }
    if !matches!(parent.len(), 0 | 8) {
        wrong.push(format!(
            "parentSpanId has {} bytes, expected 0 or 8",
            parent.len()
        ));
    }
    wrong.join("; ")
}

/// A span as it is on the wire, before its checks.
#[derive(Default)]
struct RawSpan<'a> {
    trace_id: &'a [u8],
    span_id: &'a [u8],
    parent: &'a [u8],
    name: String,
    kind: i32,
    start_ns: u64,
    end_ns: u64,
    status_code: i32,
    status_message: String,
    attributes: Attributes,
    events: Vec<Event>,
    links: Vec<Link>,
    dropped_attributes_count: u32,
    dropped_events_count: u32,
    dropped_links_count: u32,
    flags: u32,
}

impl<'a> RawSpan<'a> {
    /// The span in `bytes`; `pairs` is the decoder's list its attributes are gathered in.
    fn decode(
        up: &Fields<'a>,
        bytes: &'a [u8],
        texts: &mut Interner<'a>,
        lean: bool,
        pairs: &mut Vec<KeyValue>,
    ) -> wire::Result<Self> {
        let mut span = RawSpan::default();
        pairs.clear();
        let mut fields = up.child(bytes, &[3, 5])?;
        while let Some((number, value)) = fields.next()? {
            match (number, value) {
                (1, Value::Bytes(b)) => span.trace_id = b,
                (2, Value::Bytes(b)) => span.span_id = b,
                (3, Value::Bytes(b)) => {
                    string(b)?;
                }
                (4, Value::Bytes(b)) => span.parent = b,
                (5, Value::Bytes(b)) => span.name = string(b)?.to_owned(),
                (6, Value::Varint(v)) => span.kind = int32(v),
                (7, Value::Fixed64(v)) => span.start_ns = v,
                (8, Value::Fixed64(v)) => span.end_ns = v,
                (9, Value::Bytes(b)) if lean => {
                    pairs.extend(attribute_if(&fields, b, texts, &SESSION_ATTRIBUTES)?)
                }
                (9, Value::Bytes(b)) => {
                    // Pushed from the entry as read: through `attribute`'s `Option` the
                    // entry was copied four times on its way into `pairs`.
                    let (kv, other_fields) = key_value_entry(&fields, b, texts)?;
                    if !other_fields {
                        pairs.push(kv);
                    }
                }
                (10, Value::Varint(v)) => span.dropped_attributes_count = uint32(v),
                (11, Value::Bytes(b)) if lean => event_check(&fields, b)?,
                (11, Value::Bytes(b)) => span.events.push(event(&fields, b, texts)?),
                (12, Value::Varint(v)) => span.dropped_events_count = uint32(v),
                (13, Value::Bytes(b)) => span.links.push(link(&fields, b, texts, lean)?),
                (14, Value::Varint(v)) => span.dropped_links_count = uint32(v),
                (16, Value::Fixed32(v)) => span.flags = v,
                (15, Value::Bytes(b)) => {
                    let mut status = fields.child(b, &[2])?;
                    while let Some((number, value)) = status.next()? {
                        match (number, value) {
                            (2, Value::Bytes(b)) => span.status_message = string(b)?.to_owned(),
                            (3, Value::Varint(v)) => span.status_code = int32(v),
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        // Moved into a list of their own at its final size, by one copy of their bytes
        // (`append`), as the OTLP/JSON reader moves them: `drain(..).collect()` moved them
        // entry by entry (~24 instructions an entry, 10.5 M of decoding data-2000's
        // protobuf). `pairs` keeps its room for the next span (`mem::take` would hand this
        // span the grown list and the next an empty one).
        let mut attributes: Attributes = Vec::with_capacity(pairs.len());
        attributes.append(pairs);
        span.attributes = attributes;
        Ok(span)
    }
}

/// A log record as it is on the wire, before its checks.
#[derive(Default)]
struct RawLog<'a> {
    trace_id: &'a [u8],
    span_id: &'a [u8],
    time_ns: u64,
    observed_ns: u64,
    severity_number: i32,
    event_name: String,
    attributes: Attributes,
    body: AnyValue,
    dropped_attributes_count: u32,
}

impl<'a> RawLog<'a> {
    fn decode(up: &Fields<'a>, bytes: &'a [u8], texts: &mut Interner<'a>) -> wire::Result<Self> {
        let mut log = RawLog::default();
        let mut fields = up.child(bytes, &[3, 12])?;
        while let Some((number, value)) = fields.next()? {
            match (number, value) {
                (1, Value::Fixed64(v)) => log.time_ns = v,
                (11, Value::Fixed64(v)) => log.observed_ns = v,
                (2, Value::Varint(v)) => log.severity_number = int32(v),
                (3, Value::Bytes(b)) => {
                    string(b)?;
                }
                (5, Value::Bytes(b)) => any_value_into(&fields, b, &mut log.body, texts)?,
                (6, Value::Bytes(b)) => log.attributes.extend(attribute(&fields, b, texts)?),
                (7, Value::Varint(v)) => log.dropped_attributes_count = uint32(v),
                (9, Value::Bytes(b)) => log.trace_id = b,
                (10, Value::Bytes(b)) => log.span_id = b,
                (12, Value::Bytes(b)) => log.event_name = string(b)?.to_owned(),
                _ => {}
            }
        }
        Ok(log)
    }
}

fn event<'a>(up: &Fields<'a>, bytes: &'a [u8], texts: &mut Interner<'a>) -> wire::Result<Event> {
    let mut event = Event {
        name: String::new(),
        time_ns: 0,
        attributes: Vec::new(),
        dropped_attributes_count: 0,
    };
    let mut fields = up.child(bytes, &[2])?;
    while let Some((number, value)) = fields.next()? {
        match (number, value) {
            (1, Value::Fixed64(v)) => event.time_ns = v,
            (2, Value::Bytes(b)) => event.name = string(b)?.to_owned(),
            (3, Value::Bytes(b)) => event.attributes.extend(attribute(&fields, b, texts)?),
            (4, Value::Varint(v)) => event.dropped_attributes_count = uint32(v),
            _ => {}
        }
    }
    Ok(event)
}

/// An event as [`event`] reads it, checked and dropped ([`decode_for_transfer`]).
fn event_check<'a>(up: &Fields<'a>, bytes: &'a [u8]) -> wire::Result<()> {
    let mut fields = up.child(bytes, &[2])?;
    while let Some((number, value)) = fields.next()? {
        match (number, value) {
            (2, Value::Bytes(b)) => {
                string(b)?;
            }
            (3, Value::Bytes(b)) => key_value_check(&fields, b)?,
            _ => {}
        }
    }
    Ok(())
}

/// A link; `lean` ([`decode_for_transfer`]): its attributes checked, not kept.
fn link<'a>(
    up: &Fields<'a>,
    bytes: &'a [u8],
    texts: &mut Interner<'a>,
    lean: bool,
) -> wire::Result<Link> {
    let mut link = Link {
        trace_id: Vec::new(),
        span_id: Vec::new(),
        attributes: Vec::new(),
        dropped_attributes_count: 0,
    };
    let mut fields = up.child(bytes, &[3])?;
    while let Some((number, value)) = fields.next()? {
        match (number, value) {
            (1, Value::Bytes(b)) => link.trace_id = b.to_vec(),
            (2, Value::Bytes(b)) => link.span_id = b.to_vec(),
            (3, Value::Bytes(b)) => {
                string(b)?;
            }
            (4, Value::Bytes(b)) if lean => key_value_check(&fields, b)?,
            (4, Value::Bytes(b)) => link.attributes.extend(attribute(&fields, b, texts)?),
            (5, Value::Varint(v)) => link.dropped_attributes_count = uint32(v),
            _ => {}
        }
    }
    Ok(link)
}

/// Merge one occurrence of a `Resource` into `resource` (attributes append; entity
/// references are read for their UTF-8 and dropped); with `kept`, only the attributes of
/// those keys are built, the rest checked ([`decode_for_transfer`]).
fn resource_into<'a>(
    up: &Fields<'a>,
    bytes: &'a [u8],
    resource: &mut Resource,
    texts: &mut Interner<'a>,
    kept: Option<&[&str]>,
) -> wire::Result<()> {
    let mut fields = up.child(bytes, &[])?;
    while let Some((number, value)) = fields.next()? {
        match (number, value) {
            (1, Value::Bytes(b)) => resource.attributes.extend(match kept {
                Some(keys) => attribute_if(&fields, b, texts, keys)?,
                None => attribute(&fields, b, texts)?,
            }),
            (3, Value::Bytes(b)) => {
                let mut entity = fields.child(b, &[1, 2, 3, 4])?;
                while let Some((number, value)) = entity.next()? {
                    if let (1..=4, Value::Bytes(b)) = (number, value) {
                        string(b)?;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Merge one occurrence of an `InstrumentationScope` into `scope` (its attributes are read
/// and dropped: nothing grades them; `lean`: only checked, see [`decode_for_transfer`]).
fn scope_into<'a>(
    up: &Fields<'a>,
    bytes: &'a [u8],
    scope: &mut Scope,
    texts: &mut Interner<'a>,
    lean: bool,
) -> wire::Result<()> {
    let mut fields = up.child(bytes, &[1, 2])?;
    while let Some((number, value)) = fields.next()? {
        match (number, value) {
            (1, Value::Bytes(b)) => scope.name = string(b)?.to_owned(),
            (2, Value::Bytes(b)) => scope.version = string(b)?.to_owned(),
            (3, Value::Bytes(b)) if lean => key_value_check(&fields, b)?,
            (3, Value::Bytes(b)) => {
                key_value(&fields, b, texts)?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// A `KeyValue` of a kvlist or of a scope's attributes.
fn key_value<'a>(
    up: &Fields<'a>,
    bytes: &'a [u8],
    texts: &mut Interner<'a>,
) -> wire::Result<KeyValue> {
    Ok(key_value_entry(up, bytes, texts)?.0)
}

/// One entry of a span's, event's, link's, resource's or log record's attributes, `None`
/// when it is dropped. The Python decoder parsed these lists as protobuf maps (same wire
/// format as `KeyValue`), and upb keeps a map entry with any field other than a key and a
/// value (`key_strindex` included, or a key or value of the wrong wire type) out of the
/// map: such an entry is dropped here too.
fn attribute<'a>(
    up: &Fields<'a>,
    bytes: &'a [u8],
    texts: &mut Interner<'a>,
) -> wire::Result<Option<KeyValue>> {
    let (kv, other_fields) = key_value_entry(up, bytes, texts)?;
    Ok((!other_fields).then_some(kv))
}

/// A `KeyValue` and whether it had fields other than its key and value.
fn key_value_entry<'a>(
    up: &Fields<'a>,
    bytes: &'a [u8],
    texts: &mut Interner<'a>,
) -> wire::Result<(KeyValue, bool)> {
    if let Some((key, value)) = string_entry(up, bytes) {
        // The checks and their order of the loops below: the key's UTF-8, then the value's.
        let key = texts.text(string(key)?);
        let value = AnyValue::Str(texts.text(string(value)?));
        return Ok((KeyValue { key, value }, false));
    }
    key_value_fields(up, bytes, texts)
}

/// [`key_value_entry`] of any entry, field by field.
fn key_value_fields<'a>(
    up: &Fields<'a>,
    bytes: &'a [u8],
    texts: &mut Interner<'a>,
) -> wire::Result<(KeyValue, bool)> {
    let mut kv = KeyValue {
        key: Text::default(),
        value: AnyValue::Empty,
    };
    let mut other_fields = false;
    let mut fields = up.child(bytes, &[1])?;
    while let Some((number, value)) = fields.next()? {
        match (number, value) {
            (1, Value::Bytes(b)) => kv.key = texts.text(string(b)?),
            (2, Value::Bytes(b)) => any_value_into(&fields, b, &mut kv.value, texts)?,
            _ => other_fields = true,
        }
    }
    Ok((kv, other_fields))
}

/// The key's and the string value's bytes of the usual attribute entry,
/// `KeyValue{1: key, 2: AnyValue{1: string_value}}`, each field once, in this order, with
/// one-byte tags, lengths of at most three bytes and nothing else; `None` for any other
/// entry, which [`key_value_entry`]'s loops read.
///
/// Why: read through the loops, such an entry is two messages with a field loop each
/// (`Fields::child`, `Fields::next`, the match), ~190 M instructions of decoding
/// data-2000's protobuf for ~440,000 entries, most of them this shape. Each length is
/// checked to end exactly where its message does (no string runs past its message, so
/// upb's UTF-8-first rule never applies) and the two message levels against the depth
/// limit, so the loops would read the same key and value with the same errors.
#[inline(always)]
fn string_entry<'a>(up: &Fields<'a>, bytes: &'a [u8]) -> Option<(&'a [u8], &'a [u8])> {
    const KEY: u8 = 1 << 3 | 2;
    const VALUE: u8 = 2 << 3 | 2;
    const STRING_VALUE: u8 = 1 << 3 | 2;
    if !up.nests(2) {
        return None;
    }
    let (key, rest) = match bytes {
        [KEY, rest @ ..] => wire::length_prefixed(rest)?,
        _ => return None,
    };
    let (any, rest) = match rest {
        [VALUE, rest @ ..] => wire::length_prefixed(rest)?,
        _ => return None,
    };
    let (value, after) = match any {
        [STRING_VALUE, inner @ ..] => wire::length_prefixed(inner)?,
        _ => return None,
    };
    (rest.is_empty() && after.is_empty()).then_some((key, value))
}

/// [`attribute`] when the entry's key is one of `keys`, else `None`, the entry read as
/// [`attribute`] reads it (the same errors) without building its value.
fn attribute_if<'a>(
    up: &Fields<'a>,
    bytes: &'a [u8],
    texts: &mut Interner<'a>,
    keys: &[&str],
) -> wire::Result<Option<KeyValue>> {
    let mut key = "";
    let mut other_fields = false;
    let mut fields = up.child(bytes, &[1])?;
    while let Some((number, value)) = fields.next()? {
        match (number, value) {
            (1, Value::Bytes(b)) => key = string(b)?,
            (2, Value::Bytes(b)) => any_value_check(&fields, b)?,
            _ => other_fields = true,
        }
    }
    if other_fields || !keys.contains(&key) {
        return Ok(None);
    }
    attribute(up, bytes, texts)
}

/// A `KeyValue` read as [`key_value_entry`] reads it (the same errors), nothing built.
fn key_value_check<'a>(up: &Fields<'a>, bytes: &'a [u8]) -> wire::Result<()> {
    let mut fields = up.child(bytes, &[1])?;
    while let Some((number, value)) = fields.next()? {
        match (number, value) {
            (1, Value::Bytes(b)) => {
                string(b)?;
            }
            (2, Value::Bytes(b)) => any_value_check(&fields, b)?,
            _ => {}
        }
    }
    Ok(())
}

/// An `AnyValue` read as [`any_value_into`] reads it (the same errors), nothing built.
fn any_value_check<'a>(up: &Fields<'a>, bytes: &'a [u8]) -> wire::Result<()> {
    let mut fields = up.child(bytes, &[1])?;
    while let Some((number, value)) = fields.next()? {
        match (number, value) {
            (1, Value::Bytes(b)) => {
                string(b)?;
            }
            (5, Value::Bytes(b)) => {
                let mut array = fields.child(b, &[])?;
                while let Some((number, value)) = array.next()? {
                    if let (1, Value::Bytes(b)) = (number, value) {
                        any_value_check(&array, b)?;
                    }
                }
            }
            (6, Value::Bytes(b)) => {
                let mut list = fields.child(b, &[])?;
                while let Some((number, value)) = list.next()? {
                    if let (1, Value::Bytes(b)) = (number, value) {
                        key_value_check(&list, b)?;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Merge one occurrence of an `AnyValue` into `target`. Recursive through arrays and
/// kvlists; every level is a message one deeper, and [`Fields::child`] refuses one past
/// [`wire::MAX_DEPTH`], so the recursion is bounded.
fn any_value_into<'a>(
    up: &Fields<'a>,
    bytes: &'a [u8],
    target: &mut AnyValue,
    texts: &mut Interner<'a>,
) -> wire::Result<()> {
    let mut fields = up.child(bytes, &[1])?;
    while let Some((number, value)) = fields.next()? {
        match (number, value) {
            (1, Value::Bytes(b)) => *target = AnyValue::Str(texts.text(string(b)?)),
            (2, Value::Varint(v)) => *target = AnyValue::Bool(v != 0),
            // int64: the varint's bits, two's complement.
            (3, Value::Varint(v)) => *target = AnyValue::Int(v as i64),
            (4, Value::Fixed64(v)) => *target = AnyValue::Double(f64::from_bits(v)),
            (5, Value::Bytes(b)) => {
                if !matches!(target, AnyValue::Array(_)) {
                    *target = AnyValue::Array(Vec::new());
                }
                if let AnyValue::Array(values) = target {
                    let mut array = fields.child(b, &[])?;
                    while let Some((number, value)) = array.next()? {
                        if let (1, Value::Bytes(b)) = (number, value) {
                            let mut item = AnyValue::Empty;
                            any_value_into(&array, b, &mut item, texts)?;
                            values.push(item);
                        }
                    }
                }
            }
            (6, Value::Bytes(b)) => {
                if !matches!(target, AnyValue::KvList(_)) {
                    *target = AnyValue::KvList(Vec::new());
                }
                if let AnyValue::KvList(values) = target {
                    let mut list = fields.child(b, &[])?;
                    while let Some((number, value)) = list.next()? {
                        if let (1, Value::Bytes(b)) = (number, value) {
                            values.push(key_value(&list, b, texts)?);
                        }
                    }
                }
            }
            (7, Value::Bytes(b)) => *target = AnyValue::Bytes(b.to_vec()),
            (8, Value::Varint(v)) => *target = AnyValue::Int(i64::from(int32(v))),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::MAX_LISTED_PROBLEMS;

    /// A length-delimited field.
    fn ld(number: u32, payload: &[u8]) -> Vec<u8> {
        let mut out = varint(u64::from(number << 3 | 2));
        out.extend(varint(payload.len() as u64));
        out.extend_from_slice(payload);
        out
    }

    fn vi(number: u32, value: u64) -> Vec<u8> {
        let mut out = varint(u64::from(number << 3));
        out.extend(varint(value));
        out
    }

    fn f64_field(number: u32, value: u64) -> Vec<u8> {
        let mut out = varint(u64::from(number << 3 | 1));
        out.extend(value.to_le_bytes());
        out
    }

    fn varint(value: u64) -> Vec<u8> {
        let mut out = Vec::new();
        wire::put_varint(value, |b| out.push(b));
        out
    }

    fn cat(parts: &[Vec<u8>]) -> Vec<u8> {
        parts.concat()
    }

    fn string_value(s: &str) -> Vec<u8> {
        ld(1, s.as_bytes())
    }

    fn attr(key: &str, value: &[u8]) -> Vec<u8> {
        cat(&[ld(1, key.as_bytes()), ld(2, value)])
    }

    fn span(fields: &[Vec<u8>]) -> Vec<u8> {
        cat(fields)
    }

    fn good_ids() -> Vec<Vec<u8>> {
        vec![ld(1, &[1; 16]), ld(2, &[2; 8])]
    }

    /// A traces request of one resource and one scope holding `spans`.
    fn traces(resource: &[u8], scope: &[u8], spans: &[Vec<u8>]) -> Vec<u8> {
        let mut scope_spans = ld(1, scope);
        for s in spans {
            scope_spans.extend(ld(2, s));
        }
        ld(1, &cat(&[ld(1, resource), ld(2, &scope_spans)]))
    }

    fn logs(records: &[Vec<u8>]) -> Vec<u8> {
        let mut scope_logs = ld(1, &ld(1, b"scope"));
        for r in records {
            scope_logs.extend(ld(2, r));
        }
        ld(1, &ld(2, &scope_logs))
    }

    fn decoded(body: &[u8], signal: Signal) -> Decoded {
        decode(body, signal).expect("a valid body")
    }

    #[test]
    fn a_body_allocates_each_short_key_and_value_once() {
        let kv = attr("gen_ai.system", &string_value("openai"));
        let one = |span_id: u8| {
            span(
                &[
                    vec![ld(1, &[1; 16]), ld(2, &[span_id; 8])],
                    vec![ld(9, &kv)],
                    vec![ld(11, &ld(3, &kv))],
                ]
                .concat(),
            )
        };
        let body = traces(&ld(1, &kv), b"", &[one(2), one(3)]);
        let batch = decoded(&body, Signal::Traces).batch;
        let (first, second) = (&batch.spans[0], &batch.spans[1]);
        let all = [
            &first.attributes[0],
            &first.events[0].attributes[0],
            &second.attributes[0],
            &first.resource.attributes[0],
        ];
        for kv in all {
            assert!(Text::ptr_eq(&kv.key, &all[0].key), "{all:?}");
            let (AnyValue::Str(a), AnyValue::Str(b)) = (&kv.value, &all[0].value) else {
                panic!("{all:?}")
            };
            assert!(Text::ptr_eq(a, b), "{all:?}");
        }
    }

    #[test]
    fn spans_carry_their_fields_resource_and_scope() {
        let body = traces(
            &ld(1, &attr("service.name", &string_value("svc"))),
            &cat(&[ld(1, b"lib"), ld(2, b"1.0")]),
            &[span(
                &[
                    good_ids(),
                    vec![ld(4, &[3; 8]), ld(5, b"chat"), vi(6, 3)],
                    vec![f64_field(7, 10), f64_field(8, 20)],
                    vec![ld(9, &attr("k", &vi(3, u64::MAX)))],
                    vec![ld(11, &cat(&[f64_field(1, 15), ld(2, b"ev")]))],
                    vec![ld(13, &cat(&[ld(1, &[7; 3])]))],
                    vec![ld(15, &cat(&[ld(2, b"boom"), vi(3, 2)]))],
                ]
                .concat(),
            )],
        );
        let Decoded { batch, plausible } = decoded(&body, Signal::Traces);
        assert!(plausible);
        let span = &batch.spans[0];
        assert_eq!(
            (span.name.as_str(), span.kind, span.start_ns, span.end_ns),
            ("chat", 3, 10, 20)
        );
        assert_eq!(span.parent_span_id, Some([3; 8]));
        assert_eq!(
            (span.status_code, span.status_message.as_str()),
            (2, "boom")
        );
        assert_eq!(span.attributes[0].value, AnyValue::Int(-1));
        assert_eq!(
            (span.events[0].name.as_str(), span.events[0].time_ns),
            ("ev", 15)
        );
        assert_eq!(
            span.links[0].trace_id,
            vec![7; 3],
            "link ids are not checked"
        );
        assert!(span.links[0].span_id.is_empty());
        assert_eq!(span.resource.attributes[0].key, "service.name");
        assert_eq!(
            (span.scope.name.as_str(), span.scope.version.as_str()),
            ("lib", "1.0")
        );
    }

    #[test]
    fn span_flags_are_kept_as_sent() {
        let flagged = |flags: u32| {
            let mut field = varint(16 << 3 | 5);
            field.extend(flags.to_le_bytes());
            span(&[good_ids(), vec![field]].concat())
        };
        let body = traces(b"", b"", &[flagged(0x301), span(&good_ids())]);
        let Decoded { batch, .. } = decoded(&body, Signal::Traces);
        assert_eq!(batch.spans[0].flags, 0x301, "parent remote, sampled");
        assert_eq!(batch.spans[1].flags, 0, "absent");
    }

    #[test]
    fn dropped_counts_are_kept_for_spans_events_and_links() {
        let body = traces(
            b"",
            b"",
            &[
                span(
                    &[
                        good_ids(),
                        vec![vi(10, 7), vi(12, 2), vi(14, 1 << 32 | 3)],
                        vec![ld(11, &cat(&[f64_field(1, 15), vi(4, 1 << 32)]))],
                        vec![ld(13, &cat(&[ld(1, &[7; 16]), vi(5, 9)]))],
                        // a later occurrence of a scalar wins
                        vec![vi(10, 8)],
                    ]
                    .concat(),
                ),
                span(&good_ids()),
            ],
        );
        let batch = decoded(&body, Signal::Traces).batch;
        let span = &batch.spans[0];
        assert_eq!(
            (
                span.dropped_attributes_count,
                span.dropped_events_count,
                span.dropped_links_count
            ),
            (8, 2, u32::MAX),
            "a count past 2^32-1 saturates (its low 32 bits read 2^32 as nothing dropped)"
        );
        assert_eq!(span.events[0].dropped_attributes_count, u32::MAX);
        assert_eq!(span.links[0].dropped_attributes_count, 9);
        let plain = &batch.spans[1];
        assert_eq!(
            (
                plain.dropped_attributes_count,
                plain.dropped_events_count,
                plain.dropped_links_count
            ),
            (0, 0, 0)
        );
    }

    #[test]
    fn a_span_with_bad_ids_is_rejected_with_a_located_problem() {
        let body = traces(
            b"",
            b"",
            &[
                span(&good_ids()),
                span(&[
                    ld(1, &[1; 3]),
                    ld(2, &[2; 8]),
                    ld(4, &[1; 2]),
                    ld(5, b"it's"),
                ]),
            ],
        );
        let batch = decoded(&body, Signal::Traces).batch;
        assert_eq!((batch.spans.len(), batch.rejected), (1, 1));
        assert_eq!(
            batch.problems.listed,
            vec![
                "resourceSpans[0].scopeSpans[0].spans[1] (\"it's\"): traceId has 3 bytes, \
                 expected 16; parentSpanId has 2 bytes, expected 0 or 8; span rejected"
            ]
        );
    }

    #[test]
    fn enums_out_of_range_read_as_unspecified_with_a_problem() {
        let body = traces(
            b"",
            b"",
            &[span(
                &[good_ids(), vec![vi(6, 9), ld(15, &vi(3, u64::MAX))]].concat(),
            )],
        );
        let batch = decoded(&body, Signal::Traces).batch;
        assert_eq!((batch.spans[0].kind, batch.spans[0].status_code), (0, 0));
        assert_eq!(
            batch.problems.listed,
            vec![
                "resourceSpans[0].scopeSpans[0].spans[0].kind: unknown SpanKind 9; read as \
                 SPAN_KIND_UNSPECIFIED",
                "resourceSpans[0].scopeSpans[0].spans[0].status.code: unknown StatusCode -1; \
                 read as STATUS_CODE_UNSET",
            ]
        );
    }

    #[test]
    fn problems_are_bounded_per_batch() {
        let bad = span(&[ld(2, &[2; 8])]);
        let body = traces(b"", b"", &vec![bad; MAX_LISTED_PROBLEMS + 3]);
        let batch = decoded(&body, Signal::Traces).batch;
        assert_eq!(batch.rejected, MAX_LISTED_PROBLEMS + 3);
        assert_eq!(batch.problems.listed.len(), MAX_LISTED_PROBLEMS);
        assert_eq!(batch.problems.omitted, 3);
    }

    #[test]
    fn resource_and_scope_may_follow_the_spans_and_merge() {
        let span_bytes = span(&good_ids());
        let scope_spans = cat(&[ld(2, &span_bytes), ld(1, &ld(1, b"a")), ld(1, &ld(2, b"2"))]);
        let resource_spans = cat(&[
            ld(2, &scope_spans),
            ld(1, &ld(1, &attr("k", &string_value("1")))),
            ld(1, &ld(1, &attr("j", &string_value("2")))),
        ]);
        let batch = decoded(&ld(1, &resource_spans), Signal::Traces).batch;
        let span = &batch.spans[0];
        assert_eq!(
            (span.scope.name.as_str(), span.scope.version.as_str()),
            ("a", "2")
        );
        let keys: Vec<_> = span
            .resource
            .attributes
            .iter()
            .map(|kv| kv.key.as_str())
            .collect();
        assert_eq!(keys, ["k", "j"]);
    }

    #[test]
    fn any_values_merge_and_replace_as_protobuf_does() {
        let array = |s: &str| ld(5, &ld(1, &string_value(s)));
        let value = cat(&[array("a"), array("b"), vi(8, 7)]);
        let merged = cat(&[array("a"), array("b")]);
        let replaced = cat(&[array("a"), string_value("x"), array("b")]);
        let body = traces(
            b"",
            b"",
            &[span(
                &[
                    good_ids(),
                    vec![
                        ld(9, &attr("strindex", &value)),
                        ld(9, &attr("merged", &merged)),
                        ld(9, &attr("replaced", &replaced)),
                        ld(9, &attr("empty", b"")),
                    ],
                ]
                .concat(),
            )],
        );
        let attrs = &decoded(&body, Signal::Traces).batch.spans[0].attributes;
        let s = |v: &str| AnyValue::Str(v.into());
        assert_eq!(attrs[0].value, AnyValue::Int(7));
        assert_eq!(attrs[1].value, AnyValue::Array(vec![s("a"), s("b")]));
        assert_eq!(attrs[2].value, AnyValue::Array(vec![s("b")]));
        assert_eq!(attrs[3].value, AnyValue::Empty);
    }

    #[test]
    fn attribute_entries_with_other_fields_are_dropped_but_kvlist_entries_kept() {
        let with_strindex = cat(&[attr("dropped", &string_value("x")), vi(3, 1)]);
        let kvlist = ld(6, &ld(1, &with_strindex));
        let body = traces(
            b"",
            b"",
            &[span(
                &[
                    good_ids(),
                    vec![ld(9, &with_strindex), ld(9, &attr("list", &kvlist))],
                ]
                .concat(),
            )],
        );
        let attrs = &decoded(&body, Signal::Traces).batch.spans[0].attributes;
        assert_eq!(attrs.len(), 1);
        let AnyValue::KvList(entries) = &attrs[0].value else {
            panic!("a kvlist")
        };
        assert_eq!(entries[0].key, "dropped");
    }

    #[test]
    fn log_records_follow_the_python_rules() {
        let body = logs(&[
            cat(&[
                f64_field(11, 5),
                ld(9, &[1; 16]),
                ld(10, &[2; 8]),
                vi(2, 9),
                ld(6, &attr("event.name", &string_value("legacy"))),
                ld(5, &string_value("hi")),
            ]),
            cat(&[f64_field(1, 6), ld(9, &[1; 15]), ld(12, b"named")]),
        ]);
        let Decoded { batch, plausible } = decoded(&body, Signal::Logs);
        assert!(
            !plausible,
            "a record among the first four has ids of the wrong size"
        );
        let (first, second) = (&batch.logs[0], &batch.logs[1]);
        assert_eq!((first.time_ns, first.event_name.as_str()), (5, "legacy"));
        assert_eq!(
            (first.trace_id, first.span_id),
            (Some([1; 16]), Some([2; 8]))
        );
        assert_eq!(
            (first.severity_number, &first.body),
            (9, &AnyValue::Str("hi".into()))
        );
        assert_eq!((second.trace_id, second.span_id), (None, None));
        assert_eq!(
            (second.event_name.as_str(), &second.body),
            ("named", &AnyValue::Empty)
        );
        assert_eq!(first.scope.name, "scope");
        assert_eq!(
            batch.problems.listed,
            vec![
                "resourceLogs[0].scopeLogs[0].logRecords[1]: traceId/spanId have 15/0 bytes, \
                 expected 16/8; read without span context"
            ]
        );
    }

    #[test]
    fn the_other_signals_bytes_decode_but_look_implausible() {
        let log_body = logs(&[cat(&[f64_field(1, 6), ld(10, &[2; 8])])]);
        assert!(decoded(&log_body, Signal::Logs).plausible);
        assert!(!decoded(&log_body, Signal::Traces).plausible);
        let trace_body = traces(b"", b"", &[span(&good_ids())]);
        assert!(!decoded(&trace_body, Signal::Logs).plausible);
        // Only the first four records are looked at.
        let mut spans = vec![span(&good_ids()); 4];
        spans.push(span(&[ld(1, &[1; 3])]));
        assert!(decoded(&traces(b"", b"", &spans), Signal::Traces).plausible);
    }

    #[test]
    fn values_nest_up_to_the_message_depth_limit() {
        // The request, ResourceSpans, ScopeSpans, Span and the attribute entry are five
        // levels; each array adds two (ArrayValue, AnyValue).
        let nested = |levels: usize| {
            let mut value = string_value("x");
            for _ in 0..levels {
                value = ld(5, &ld(1, &value));
            }
            traces(
                b"",
                b"",
                &[span(
                    &[good_ids(), vec![ld(9, &attr("k", &value))]].concat(),
                )],
            )
        };
        assert!(decode(&nested(47), Signal::Traces).is_ok());
        assert_eq!(
            decode(&nested(48), Signal::Traces).err(),
            Some(WireError::TooDeep)
        );
        assert_eq!(
            decode(&nested(5000), Signal::Traces).err(),
            Some(WireError::TooDeep)
        );
    }

    #[test]
    fn strings_must_be_utf8_even_where_they_are_dropped() {
        let body = ld(1, &ld(3, &[0xff]));
        assert_eq!(
            decode(&body, Signal::Traces).err(),
            Some(WireError::BadUtf8)
        );
        let name = traces(
            b"",
            b"",
            &[span(&[good_ids(), vec![ld(5, &[0xc3])]].concat())],
        );
        assert_eq!(
            decode(&name, Signal::Traces).err(),
            Some(WireError::BadUtf8)
        );
    }

    #[test]
    fn the_usual_string_entry_reads_as_the_field_loops_read_it() {
        let entry = |key: &[u8], value: &[u8]| cat(&[ld(1, key), ld(2, &ld(1, value))]);
        let long = |n: usize| vec![b'v'; n];
        let mut entries = vec![];
        for n in [0, 1, 60, 127, 128, 16383, 16384, (1 << 21) - 1, 1 << 21] {
            entries.push((entry(b"gen_ai.k", &long(n)), n < (1 << 21) - 10));
        }
        let usual = entry(b"key", b"value");
        entries.extend([
            (usual.clone(), true),
            (entry(b"", b""), true),
            (entry("é漢".as_bytes(), "é漢".as_bytes()), true),
            (entry(&[0xff], b"v"), true),
            (entry(b"k", &[0xc3]), true),
            (entry(&[0xc3], &[0xff]), true),
            // An overlong length (5 as two bytes) reads as 5.
            (
                cat(&[b"\x0a\x85\x00keys!\x12\x07\x0a\x05value".to_vec()]),
                true,
            ),
            // Another shape: a value of another kind, another field, a repeated or
            // reordered field, a key only, a group.
            (cat(&[ld(1, b"k"), ld(2, &vi(3, 7))]), false),
            (cat(&[usual.clone(), vi(3, 1)]), false),
            (cat(&[usual.clone(), ld(2, &string_value("again"))]), false),
            (cat(&[ld(2, &string_value("v")), ld(1, b"k")]), false),
            (
                cat(&[
                    ld(1, b"k"),
                    ld(2, &cat(&[string_value("v"), string_value("w")])),
                ]),
                false,
            ),
            (ld(1, b"k"), false),
            (cat(&[usual.clone(), vec![0x1b, 0x1c]]), false),
        ]);
        for (bytes, fast) in &entries {
            // Cut at every length (a string or a length past its message, inside the body),
            // and followed by other bytes (what follows a field in its message).
            for end in (0..=bytes.len()).filter(|end| bytes.len() < 300 || *end == bytes.len()) {
                for tail in [&b""[..], &[0xff, 0xc3], &usual] {
                    let body = cat(&[bytes.clone(), tail.to_vec()]);
                    let up = Fields::top(&body, &[]);
                    let read = key_value_entry(&up, &body[..end], &mut Interner::new());
                    let loops = key_value_fields(&up, &body[..end], &mut Interner::new());
                    assert_eq!(read, loops, "{bytes:?} cut at {end} before {tail:?}");
                }
            }
            let up = Fields::top(bytes, &[]);
            assert_eq!(string_entry(&up, bytes).is_some(), *fast, "{bytes:?}");
        }
        // The entry's two levels are checked against the depth limit.
        for (levels, allowed) in [(wire::MAX_DEPTH - 2, true), (wire::MAX_DEPTH - 1, false)] {
            let mut body = usual.clone();
            for _ in 0..levels {
                body = ld(1, &body);
            }
            let mut up = Fields::top(&body, &[]);
            let mut inner: &[u8] = &body;
            for _ in 0..levels {
                let Some((1, Value::Bytes(b))) = up.next().unwrap() else {
                    panic!("a level")
                };
                up = up.child(b, &[]).unwrap();
                inner = b;
            }
            let read = key_value_entry(&up, inner, &mut Interner::new());
            assert_eq!(read.is_ok(), allowed);
            assert_eq!(read, key_value_fields(&up, inner, &mut Interner::new()));
        }
    }

    /// `decode`'s batch with only what `decode_for_transfer` builds of a traces body.
    fn kept_for_transfer(mut batch: Batch) -> Batch {
        let kept = |keys: &[&str], attributes: &mut Attributes| {
            attributes.retain(|kv| keys.contains(&kv.key.as_str()));
        };
        for span in &mut batch.spans {
            kept(&SESSION_ATTRIBUTES, &mut span.attributes);
            span.events.clear();
            for link in &mut span.links {
                link.attributes.clear();
            }
            let mut resource = (*span.resource).clone();
            kept(&RESOURCE_KEPT, &mut resource.attributes);
            span.resource = Arc::new(resource);
        }
        batch
    }

    #[test]
    fn a_transfer_decode_reads_every_byte_alike_and_keeps_what_a_transfer_needs() {
        // Every truncation and single-byte change of a body with attributes everywhere
        // (session ones and a service name among them, kept; values nested, merged and
        // duplicated): the same error, or the same batch less what a transfer drops.
        let session = attr(SESSION_ATTRIBUTES[0], &string_value("conv-1"));
        let nested = attr("k", &ld(6, &ld(1, &attr("n", &ld(5, &ld(1, &vi(2, 1)))))));
        let one = |span_id: u8, more: Vec<Vec<u8>>| {
            span(
                &[
                    vec![ld(1, &[1; 16]), ld(2, &[span_id; 8]), ld(5, b"op")],
                    more,
                ]
                .concat(),
            )
        };
        let body = traces(
            &cat(&[
                ld(1, &attr("service.name", &string_value("svc"))),
                ld(1, &attr("host", &vi(3, 7))),
                ld(1, &attr("service.name", &string_value("again"))),
            ]),
            &cat(&[ld(1, b"lib"), ld(2, b"1.0"), ld(3, &attr("s", &vi(2, 1)))]),
            &[
                one(2, vec![ld(9, &session), ld(9, &nested), vi(6, 9)]),
                one(
                    3,
                    vec![
                        ld(9, &attr(SESSION_ATTRIBUTES[1], &string_value("s-1"))),
                        ld(
                            9,
                            &cat(&[ld(1, SESSION_ATTRIBUTES[0].as_bytes()), vi(3, 1)]),
                        ),
                        ld(11, &cat(&[ld(2, b"ev"), ld(3, &nested)])),
                        ld(
                            13,
                            &cat(&[ld(1, &[7; 16]), ld(2, &[8; 8]), ld(4, &session)]),
                        ),
                    ],
                ),
                span(&[ld(1, &[1; 15]), ld(9, &session)]),
            ],
        );
        let full = decoded(&body, Signal::Traces);
        assert_eq!((full.batch.spans.len(), full.batch.rejected), (2, 1));
        let lean = decode_for_transfer(&body, Signal::Traces).expect("a valid body");
        assert_eq!(lean.batch, kept_for_transfer(full.batch.clone()));
        assert_eq!(lean.batch.spans[0].attributes.len(), 1);
        assert_eq!(lean.batch.spans[0].resource.attributes.len(), 2);
        assert_eq!(lean.batch.spans[1].links[0].span_id, vec![8; 8]);
        let same = |body: &[u8]| match (
            decode(body, Signal::Traces),
            decode_for_transfer(body, Signal::Traces),
        ) {
            (Ok(full), Ok(lean)) => {
                assert_eq!(lean.batch, kept_for_transfer(full.batch), "{body:?}");
                assert_eq!(lean.plausible, full.plausible);
            }
            (full, lean) => assert_eq!(full.err(), lean.err(), "{body:?}"),
        };
        for end in 0..body.len() {
            same(&body[..end]);
        }
        for i in 0..body.len() {
            for byte in [0x00, 0x07, 0x0b, 0x0c, 0x7f, 0x80, 0xc3, 0xff] {
                let mut changed = body.clone();
                changed[i] = byte;
                same(&changed);
            }
        }
        // A logs body is decoded whole.
        let log = logs(&[cat(&[f64_field(1, 6), ld(6, &nested)])]);
        assert_eq!(
            decode_for_transfer(&log, Signal::Logs)
                .expect("a valid body")
                .batch,
            decoded(&log, Signal::Logs).batch
        );
    }

    #[test]
    fn no_input_panics() {
        // Every truncation and every single-byte change of a body with all record kinds.
        let body = cat(&[
            traces(
                &ld(1, &attr("service.name", &string_value("svc"))),
                &ld(1, b"lib"),
                &[span(
                    &[
                        good_ids(),
                        vec![ld(9, &attr("k", &ld(6, &ld(1, &attr("n", &vi(2, 1))))))],
                        vec![ld(11, &ld(2, b"ev")), ld(13, &ld(1, &[7; 16]))],
                    ]
                    .concat(),
                )],
            ),
            logs(&[cat(&[f64_field(1, 6), ld(5, &ld(5, &ld(1, &vi(3, 1))))])]),
        ]);
        for signal in [Signal::Traces, Signal::Logs] {
            for end in 0..body.len() {
                let _ = decode(&body[..end], signal);
            }
            for i in 0..body.len() {
                for byte in [0x00, 0x07, 0x0b, 0x0c, 0x7f, 0x80, 0xff] {
                    let mut changed = body.clone();
                    changed[i] = byte;
                    let _ = decode(&changed, signal);
                }
            }
        }
    }
}
