//! OTLP protobuf and OTLP/JSON encoding of the telemetry otel-oracles emits: grade spans with
//! their evaluation events, and evaluation log records.
//!
//! Why its own model ([`records`]) rather than [`crate::model`]: the emitter's attributes are
//! runs shared by many records (a check's contract, name, outcome and explanation) plus a few
//! values of the record's own. A run is encoded once ([`proto::attributes`],
//! [`json::attributes`]) and its bytes are copied into every record that shares it
//! ([`records::Piece::Encoded`]); only the record's own values are encoded per record. The
//! records borrow everything (strings, cached bytes) from the caller, so the Python bindings
//! hand over what the Python objects hold without copying it first.
//!
//! Metrics ([`proto_metrics`], [`json_metrics`]) are what the SDK's `MeterProvider`
//! aggregated: a few dozen points per export, nothing shared between them, so their records
//! own their text and are encoded in one call.

pub mod json;
pub mod json_metrics;
pub mod proto;
pub mod proto_metrics;
pub mod records;

/// A finished request as three parts: what precedes the records, the records, what follows.
/// The envelope's lengths are known only once every record is written; keeping the parts
/// apart lets the caller write them once into the buffer it returns (the Python `bytes`)
/// instead of joining them into another buffer first.
#[derive(Debug, Default, PartialEq)]
pub struct Framed {
    pub head: Vec<u8>,
    pub items: Vec<u8>,
    pub tail: Vec<u8>,
}

impl Framed {
    pub fn len(&self) -> usize {
        self.head.len() + self.items.len() + self.tail.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes the request into `out`, which must be exactly [`Self::len`] bytes long.
    pub fn write_to(&self, out: &mut [u8]) {
        let (head, rest) = out.split_at_mut(self.head.len());
        let (items, tail) = rest.split_at_mut(self.items.len());
        head.copy_from_slice(&self.head);
        items.copy_from_slice(&self.items);
        tail.copy_from_slice(&self.tail);
    }

    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = vec![0; self.len()];
        self.write_to(&mut out);
        out
    }
}

/// Room for the records still to come, judged by the first one: a batch's records are alike
/// (one result each), so this replaces the doublings (and copies) of a growing buffer.
fn reserve_after_first(items: &mut Vec<u8>, count: usize, expected: usize) {
    if count == 1 && expected > 1 {
        items.reserve(items.len().saturating_mul(expected - 1));
    }
}
