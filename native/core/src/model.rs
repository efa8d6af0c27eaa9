//! Decoded OTLP records: what every decoder produces and every later stage reads.
//!
//! They mirror the Python records of `otel_oracles.model.span` field for field, so turning
//! one into the other is a copy, never an interpretation. Ids are kept as bytes (hex only
//! when handed to Python); a span's resource and scope are shared by every span of its
//! `ResourceSpans`/`ScopeSpans`, as on the wire.

use std::sync::Arc;

/// An OTLP `AnyValue`. `Empty` is a value with none of its fields set (Python `None`).
#[derive(Debug, Clone, Default, PartialEq)]
pub enum AnyValue {
    #[default]
    Empty,
    Str(String),
    Bool(bool),
    Int(i64),
    Double(f64),
    Bytes(Vec<u8>),
    Array(Vec<AnyValue>),
    KvList(Vec<KeyValue>),
}

/// One attribute. Attribute lists keep wire order and duplicates; the Python side builds a
/// dict from them, so the last duplicate wins there as it always did.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyValue {
    pub key: String,
    pub value: AnyValue,
}

pub type Attributes = Vec<KeyValue>;

/// The resource of a `ResourceSpans`/`ResourceLogs`, shared by its records.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resource {
    pub attributes: Attributes,
}

/// The instrumentation scope of a `ScopeSpans`/`ScopeLogs`, shared by its records.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scope {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub name: String,
    pub time_ns: u64,
    pub attributes: Attributes,
}

/// A span link. Its ids are kept as they came (any length, empty when absent): links are
/// not checked, and a link with a malformed id still names what it pointed at.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    pub trace_id: Vec<u8>,
    pub span_id: Vec<u8>,
    pub attributes: Attributes,
}

/// A span that passed the decoder's checks (16-byte trace id, 8-byte span id, a parent id
/// of 8 bytes or none); enums out of range were read as unspecified.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    pub parent_span_id: Option<[u8; 8]>,
    pub name: String,
    pub kind: u8,
    pub start_ns: u64,
    pub end_ns: u64,
    pub status_code: u8,
    pub status_message: String,
    pub attributes: Attributes,
    pub events: Vec<Event>,
    pub links: Vec<Link>,
    pub resource: Arc<Resource>,
    pub scope: Arc<Scope>,
}

/// A log record. Those with an event name and a span context become events of their span
/// during assembly; ids are `None` when absent.
#[derive(Debug, Clone, PartialEq)]
pub struct LogRecord {
    pub trace_id: Option<[u8; 16]>,
    pub span_id: Option<[u8; 8]>,
    pub event_name: String,
    pub time_ns: u64,
    pub attributes: Attributes,
    pub body: AnyValue,
    pub severity_number: i32,
    pub resource: Arc<Resource>,
    pub scope: Arc<Scope>,
}

/// The most problem messages one batch lists; the rest are counted (as the Python
/// `Problems` list does, so a body of many bad spans cannot grow the messages without bound).
pub const MAX_LISTED_PROBLEMS: usize = 10;

/// What was wrong inside an otherwise readable request, each message naming its place
/// (`resourceSpans[0].scopeSpans[0].spans[3].kind`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Problems {
    pub listed: Vec<String>,
    pub omitted: usize,
}

impl Problems {
    pub fn push(&mut self, message: impl Into<String>) {
        if self.listed.len() < MAX_LISTED_PROBLEMS {
            self.listed.push(message.into());
        } else {
            self.omitted += 1;
        }
    }

    pub fn total(&self) -> usize {
        self.listed.len() + self.omitted
    }
}

/// The records of one request body (one file, one JSON line or one frame).
///
/// `ignored` counts records of signals that are not graded (metrics); `rejected` counts
/// spans and log records the decoder dropped (what OTLP partial success reports).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Batch {
    pub spans: Vec<Span>,
    pub logs: Vec<LogRecord>,
    pub ignored: usize,
    pub rejected: usize,
    pub problems: Problems,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_are_bounded_and_counted() {
        let mut problems = Problems::default();
        for i in 0..(MAX_LISTED_PROBLEMS + 5) {
            problems.push(format!("problem {i}"));
        }
        assert_eq!(problems.listed.len(), MAX_LISTED_PROBLEMS);
        assert_eq!(problems.omitted, 5);
        assert_eq!(problems.total(), MAX_LISTED_PROBLEMS + 5);
        assert_eq!(problems.listed[0], "problem 0");
    }
}
