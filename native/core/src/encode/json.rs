//! OTLP/JSON (one `{"resourceSpans": ...}` or `{"resourceLogs": ...}` object) of the
//! emitter's records, as the collector's `file` exporter writes it: lowerCamelCase keys, hex
//! ids, enums as integers, 64-bit integers as strings.
//!
//! Written straight to bytes: keys in the order protobuf's JSON printer gives them, strings
//! escaped as a JSON serializer does (`"`, `\` and control characters; everything else as
//! UTF-8), no whitespace.

use std::fmt::Write as _;

use crate::json_text::write_string;

use super::records::{Attribute, Event, Head, LogRecord, Piece, Span, Value};
use super::{reserve_after_first, Framed};

/// `string` as a JSON string literal (`crate::json_text`'s escaping: `"`, `\` and control
/// characters).
pub(super) fn string(buf: &mut Vec<u8>, string: &str) {
    write_string(string.as_bytes(), buf);
}

pub(super) fn hex(buf: &mut Vec<u8>, id: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    buf.push(b'"');
    for &b in id {
        buf.push(HEX[usize::from(b >> 4)]);
        buf.push(HEX[usize::from(b & 0xf)]);
    }
    buf.push(b'"');
}

/// A 64-bit integer as OTLP/JSON writes it: a decimal string.
pub(super) fn quoted_int(buf: &mut Vec<u8>, n: impl std::fmt::Display) {
    let mut s = String::with_capacity(24);
    let _ = write!(s, "\"{n}\"");
    buf.extend_from_slice(s.as_bytes());
}

pub(super) fn int(buf: &mut Vec<u8>, n: u32) {
    let mut s = String::with_capacity(10);
    let _ = write!(s, "{n}");
    buf.extend_from_slice(s.as_bytes());
}

/// A double: the shortest text that reads back as the same value; the non-finite values
/// as the strings protobuf's JSON mapping uses (JSON has no literal for them).
pub(super) fn double(buf: &mut Vec<u8>, d: f64) {
    if d.is_nan() {
        buf.extend_from_slice(b"\"NaN\"");
    } else if d.is_infinite() {
        buf.extend_from_slice(if d > 0.0 {
            b"\"Infinity\""
        } else {
            b"\"-Infinity\""
        });
    } else {
        let mut s = String::with_capacity(24);
        let _ = write!(s, "{d:?}");
        buf.extend_from_slice(s.as_bytes());
    }
}

fn base64(buf: &mut Vec<u8>, data: &[u8]) {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    buf.push(b'"');
    for chunk in data.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                buf.push(ALPHABET[((n >> (18 - 6 * i)) & 0x3f) as usize]);
            } else {
                buf.push(b'=');
            }
        }
    }
    buf.push(b'"');
}

fn any_value(buf: &mut Vec<u8>, value: &Value<'_>) {
    match value {
        Value::Empty => buf.extend_from_slice(b"{}"),
        Value::Str(s) => {
            buf.extend_from_slice(b"{\"stringValue\":");
            string(buf, s);
            buf.push(b'}');
        }
        Value::Bool(b) => buf.extend_from_slice(if *b {
            b"{\"boolValue\":true}"
        } else {
            b"{\"boolValue\":false}"
        }),
        Value::Int(i) => {
            buf.extend_from_slice(b"{\"intValue\":");
            quoted_int(buf, i);
            buf.push(b'}');
        }
        Value::Double(d) => {
            buf.extend_from_slice(b"{\"doubleValue\":");
            double(buf, *d);
            buf.push(b'}');
        }
        Value::Bytes(b) => {
            buf.extend_from_slice(b"{\"bytesValue\":");
            base64(buf, b);
            buf.push(b'}');
        }
        Value::Array(items) => {
            buf.extend_from_slice(b"{\"arrayValue\":{\"values\":[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    buf.push(b',');
                }
                any_value(buf, item);
            }
            buf.extend_from_slice(b"]}}");
        }
        Value::KvList(items) => {
            buf.extend_from_slice(b"{\"kvlistValue\":{\"values\":[");
            attribute_list(buf, items);
            buf.extend_from_slice(b"]}}");
        }
    }
}

pub(super) fn attribute_list(buf: &mut Vec<u8>, attributes: &[Attribute<'_>]) {
    for (i, attribute) in attributes.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        buf.extend_from_slice(b"{\"key\":");
        string(buf, &attribute.key);
        buf.extend_from_slice(b",\"value\":");
        any_value(buf, &attribute.value);
        buf.push(b'}');
    }
}

/// The elements of an `attributes` array (comma-separated, no brackets): what a shared run
/// is cached as, the same for spans, events and log records.
pub fn attributes(attributes: &[Attribute<'_>]) -> Vec<u8> {
    let mut buf = Vec::new();
    attribute_list(&mut buf, attributes);
    buf
}

/// `"attributes":[...]` from shared runs and values of the record's own.
fn pieces(buf: &mut Vec<u8>, pieces: &[Piece<'_>]) {
    buf.extend_from_slice(b"\"attributes\":[");
    let mut first = true;
    for piece in pieces {
        let at = buf.len();
        if !first {
            buf.push(b',');
        }
        match piece {
            Piece::Encoded(bytes) => buf.extend_from_slice(bytes),
            Piece::Values(values) => attribute_list(buf, values),
        }
        if buf.len() == at + usize::from(!first) {
            buf.truncate(at); // an empty run adds no element (and no comma)
        } else {
            first = false;
        }
    }
    buf.push(b']');
}

fn event(buf: &mut Vec<u8>, event: &Event<'_>) {
    buf.push(b'{');
    if event.time_ns != 0 {
        buf.extend_from_slice(b"\"timeUnixNano\":");
        quoted_int(buf, event.time_ns);
        buf.push(b',');
    }
    buf.extend_from_slice(b"\"name\":");
    string(buf, event.name);
    buf.push(b',');
    pieces(buf, &event.attributes);
    buf.push(b'}');
}

fn span(buf: &mut Vec<u8>, span: &Span<'_>) {
    buf.extend_from_slice(b"{\"traceId\":");
    hex(buf, &span.trace_id);
    buf.extend_from_slice(b",\"spanId\":");
    hex(buf, &span.span_id);
    if let Some(parent) = &span.parent_span_id {
        buf.extend_from_slice(b",\"parentSpanId\":");
        hex(buf, parent);
    }
    buf.extend_from_slice(b",\"name\":");
    string(buf, span.name);
    buf.extend_from_slice(b",\"kind\":1,");
    // Times of zero (unknown) are left out, as protobuf's JSON mapping leaves out defaults.
    if span.start_ns != 0 {
        buf.extend_from_slice(b"\"startTimeUnixNano\":");
        quoted_int(buf, span.start_ns);
        buf.push(b',');
    }
    if span.end_ns != 0 {
        buf.extend_from_slice(b"\"endTimeUnixNano\":");
        quoted_int(buf, span.end_ns);
        buf.push(b',');
    }
    pieces(buf, &span.attributes);
    if !span.events.is_empty() {
        buf.extend_from_slice(b",\"events\":[");
        for (i, e) in span.events.iter().enumerate() {
            if i > 0 {
                buf.push(b',');
            }
            event(buf, e);
        }
        buf.push(b']');
    }
    buf.extend_from_slice(b",\"status\":{");
    if !span.status_message.is_empty() {
        buf.extend_from_slice(b"\"message\":");
        string(buf, span.status_message);
    }
    if span.status_code != 0 {
        if !span.status_message.is_empty() {
            buf.push(b',');
        }
        buf.extend_from_slice(b"\"code\":");
        int(buf, span.status_code);
    }
    buf.extend_from_slice(b"},\"flags\":");
    int(
        buf,
        if span.parent_span_id.is_some() {
            0x300
        } else {
            0x100
        },
    );
    buf.push(b'}');
}

fn log_record(buf: &mut Vec<u8>, log: &LogRecord<'_>) {
    buf.push(b'{');
    if log.time_ns != 0 {
        buf.extend_from_slice(b"\"timeUnixNano\":");
        quoted_int(buf, log.time_ns);
        buf.push(b',');
    }
    buf.extend_from_slice(b"\"severityNumber\":");
    int(buf, log.severity_number);
    if !log.severity_text.is_empty() {
        buf.extend_from_slice(b",\"severityText\":");
        string(buf, log.severity_text);
    }
    buf.extend_from_slice(b",\"body\":{},");
    pieces(buf, &log.attributes);
    if let Some(trace_id) = &log.trace_id {
        buf.extend_from_slice(b",\"flags\":1,\"traceId\":");
        hex(buf, trace_id);
    }
    if let Some(span_id) = &log.span_id {
        buf.extend_from_slice(b",\"spanId\":");
        hex(buf, span_id);
    }
    if log.time_ns != 0 {
        buf.extend_from_slice(b",\"observedTimeUnixNano\":");
        quoted_int(buf, log.time_ns);
    }
    if !log.event_name.is_empty() {
        buf.extend_from_slice(b",\"eventName\":");
        string(buf, log.event_name);
    }
    buf.push(b'}');
}

/// Which signal a [`RequestWriter`] writes: the names of its envelope's keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    Traces,
    Logs,
}

impl Signal {
    fn keys(self) -> (&'static [u8], &'static [u8], &'static [u8]) {
        match self {
            Signal::Traces => (b"resourceSpans", b"scopeSpans", b"spans"),
            Signal::Logs => (b"resourceLogs", b"scopeLogs", b"logRecords"),
        }
    }
}

/// Builds one OTLP/JSON object of one signal; records are appended as they come.
#[derive(Debug)]
pub struct RequestWriter {
    signal: Signal,
    items: Vec<u8>,
    count: usize,
    expected: usize,
}

impl RequestWriter {
    pub fn new(signal: Signal) -> Self {
        Self::for_records(signal, 0)
    }

    /// A writer told how many records will come, so it reserves room for them.
    pub fn for_records(signal: Signal, expected: usize) -> Self {
        RequestWriter {
            signal,
            items: Vec::new(),
            count: 0,
            expected,
        }
    }

    fn separate(&mut self) {
        if self.count > 0 {
            self.items.push(b',');
        }
        self.count += 1;
    }

    /// Appends a span (to a [`Signal::Traces`] writer).
    pub fn span(&mut self, record: &Span<'_>) {
        self.separate();
        span(&mut self.items, record);
        reserve_after_first(&mut self.items, self.count, self.expected);
    }

    /// Appends a log record (to a [`Signal::Logs`] writer).
    pub fn log_record(&mut self, record: &LogRecord<'_>) {
        self.separate();
        log_record(&mut self.items, record);
        reserve_after_first(&mut self.items, self.count, self.expected);
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The object: one resource holding one scope holding the records; an empty list of
    /// resources without records.
    pub fn finish(self, head: &Head<'_>) -> Vec<u8> {
        self.framed(head).to_vec()
    }

    /// [`Self::finish`] in parts, to be written once into the caller's buffer.
    pub fn framed(self, head: &Head<'_>) -> Framed {
        let (resources, scopes, items) = self.signal.keys();
        let mut out = Vec::with_capacity(256);
        out.extend_from_slice(b"{\"");
        out.extend_from_slice(resources);
        out.extend_from_slice(b"\":[");
        if self.count == 0 {
            out.extend_from_slice(b"]}");
            return Framed {
                head: out,
                ..Framed::default()
            };
        }
        out.extend_from_slice(b"{\"resource\":{\"attributes\":[");
        attribute_list(&mut out, &head.resource);
        out.extend_from_slice(b"]}");
        if !head.resource_schema_url.is_empty() {
            out.extend_from_slice(b",\"schemaUrl\":");
            string(&mut out, head.resource_schema_url);
        }
        out.extend_from_slice(b",\"");
        out.extend_from_slice(scopes);
        out.extend_from_slice(b"\":[{\"scope\":{");
        if let Some(scope) = &head.scope {
            out.extend_from_slice(b"\"name\":");
            string(&mut out, scope.name);
            if !scope.version.is_empty() {
                out.extend_from_slice(b",\"version\":");
                string(&mut out, scope.version);
            }
            if !scope.attributes.is_empty() {
                out.extend_from_slice(b",\"attributes\":[");
                attribute_list(&mut out, &scope.attributes);
                out.push(b']');
            }
        }
        out.extend_from_slice(b"},\"");
        out.extend_from_slice(items);
        out.extend_from_slice(b"\":[");
        let mut tail = vec![b']'];
        if let Some(scope) = head.scope.as_ref().filter(|s| !s.schema_url.is_empty()) {
            tail.extend_from_slice(b",\"schemaUrl\":");
            string(&mut tail, scope.schema_url);
        }
        tail.extend_from_slice(b"}]}]}");
        Framed {
            head: out,
            items: self.items,
            tail,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::records::Scope;
    use super::*;

    fn attr<'a>(key: &'a str, value: Value<'a>) -> Attribute<'a> {
        Attribute::new(key, value)
    }

    fn text(bytes: Vec<u8>) -> String {
        String::from_utf8(bytes).expect("utf-8")
    }

    #[test]
    fn strings_are_escaped_as_a_json_serializer_escapes_them() {
        let mut buf = Vec::new();
        string(&mut buf, "a\"b\\c\nd\u{1}e\u{7f}é☃\t");
        assert_eq!(text(buf), "\"a\\\"b\\\\c\\nd\\u0001e\u{7f}é☃\\t\"");
    }

    #[test]
    fn values_use_the_otlp_json_forms() {
        let attrs = vec![
            attr("s", Value::Str("x".into())),
            attr("b", Value::Bool(true)),
            attr("i", Value::Int(-9_007_199_254_740_993)),
            attr("d", Value::Double(1.0)),
            attr("e", Value::Double(1e-7)),
            attr("nan", Value::Double(f64::NAN)),
            attr("y", Value::Bytes(b"\x00\xffab"[..].into())),
            attr("n", Value::Empty),
            attr(
                "l",
                Value::Array(vec![Value::Int(1), Value::Str("a".into())]),
            ),
            attr("m", Value::KvList(vec![attr("k", Value::Bool(false))])),
        ];
        assert_eq!(
            text(attributes(&attrs)),
            concat!(
                r#"{"key":"s","value":{"stringValue":"x"}},"#,
                r#"{"key":"b","value":{"boolValue":true}},"#,
                r#"{"key":"i","value":{"intValue":"-9007199254740993"}},"#,
                r#"{"key":"d","value":{"doubleValue":1.0}},"#,
                r#"{"key":"e","value":{"doubleValue":1e-7}},"#,
                r#"{"key":"nan","value":{"doubleValue":"NaN"}},"#,
                r#"{"key":"y","value":{"bytesValue":"AP9hYg=="}},"#,
                r#"{"key":"n","value":{}},"#,
                r#"{"key":"l","value":{"arrayValue":{"values":[{"intValue":"1"},{"stringValue":"a"}]}}},"#,
                r#"{"key":"m","value":{"kvlistValue":{"values":[{"key":"k","value":{"boolValue":false}}]}}}"#,
            )
        );
    }

    #[test]
    fn base64_pads_as_the_standard_alphabet_does() {
        for (data, want) in [
            (&b""[..], "\"\""),
            (b"f", "\"Zg==\""),
            (b"fo", "\"Zm8=\""),
            (b"foo", "\"Zm9v\""),
        ] {
            let mut buf = Vec::new();
            base64(&mut buf, data);
            assert_eq!(text(buf), want);
        }
    }

    #[test]
    fn a_request_without_records_is_an_empty_list() {
        assert_eq!(
            text(RequestWriter::new(Signal::Logs).finish(&Head::default())),
            r#"{"resourceLogs":[]}"#
        );
    }

    #[test]
    fn spans_and_empty_runs() {
        let run = attributes(&[attr("c", Value::Str("v".into()))]);
        let mut writer = RequestWriter::new(Signal::Traces);
        for parent in [Some([0xab; 8]), None] {
            writer.span(&Span {
                trace_id: [1; 16],
                span_id: [2; 8],
                parent_span_id: parent,
                name: "g",
                start_ns: 1,
                end_ns: 2,
                attributes: vec![
                    Piece::Encoded(b""),
                    Piece::Encoded(&run),
                    Piece::Values(vec![]),
                ],
                events: vec![Event {
                    name: "e",
                    time_ns: 3,
                    attributes: vec![Piece::Encoded(&run)],
                }],
                status_code: if parent.is_some() { 2 } else { 0 },
                status_message: if parent.is_some() { "bad" } else { "" },
            });
        }
        let head = Head {
            resource: vec![attr("service.name", Value::Str("s".into()))],
            resource_schema_url: "",
            scope: Some(Scope {
                name: "o",
                version: "",
                attributes: vec![],
                schema_url: "",
            }),
        };
        let ids = r#""traceId":"01010101010101010101010101010101","spanId":"0202020202020202""#;
        let body = r#""name":"g","kind":1,"startTimeUnixNano":"1","endTimeUnixNano":"2","attributes":[{"key":"c","value":{"stringValue":"v"}}],"events":[{"timeUnixNano":"3","name":"e","attributes":[{"key":"c","value":{"stringValue":"v"}}]}]"#;
        let want = format!(
            concat!(
                r#"{{"resourceSpans":[{{"resource":{{"attributes":[{{"key":"service.name","value":{{"stringValue":"s"}}}}]}},"#,
                r#""scopeSpans":[{{"scope":{{"name":"o"}},"spans":["#,
                r#"{{{ids},"parentSpanId":"abababababababab",{body},"status":{{"message":"bad","code":2}},"flags":768}},"#,
                r#"{{{ids},{body},"status":{{}},"flags":256}}"#,
                r#"]}}]}}]}}"#
            ),
            ids = ids,
            body = body
        );
        assert_eq!(text(writer.finish(&head)), want);
    }

    #[test]
    fn log_records_with_and_without_a_span() {
        let mut writer = RequestWriter::new(Signal::Logs);
        writer.log_record(&LogRecord {
            time_ns: 7,
            trace_id: Some([0xff; 16]),
            span_id: Some([0x0f; 8]),
            severity_number: 17,
            severity_text: "ERROR",
            event_name: "ev",
            attributes: vec![Piece::Values(vec![attr("k", Value::Int(1))])],
        });
        writer.log_record(&LogRecord {
            time_ns: 0,
            trace_id: None,
            span_id: None,
            severity_number: 9,
            severity_text: "",
            event_name: "",
            attributes: vec![],
        });
        let got = text(writer.finish(&Head::default()));
        assert_eq!(
            got,
            concat!(
                r#"{"resourceLogs":[{"resource":{"attributes":[]},"scopeLogs":[{"scope":{},"logRecords":["#,
                r#"{"timeUnixNano":"7","severityNumber":17,"severityText":"ERROR","body":{},"attributes":[{"key":"k","value":{"intValue":"1"}}],"flags":1,"traceId":"ffffffffffffffffffffffffffffffff","spanId":"0f0f0f0f0f0f0f0f","observedTimeUnixNano":"7","eventName":"ev"},"#,
                r#"{"severityNumber":9,"body":{},"attributes":[]}"#,
                r#"]}]}]}"#
            )
        );
    }
}
