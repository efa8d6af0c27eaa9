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
//! Metrics are not encoded here: the emitter's metrics come from the SDK's `MeterProvider`
//! and its `encode_metrics`.

pub mod json;
pub mod proto;
pub mod records;
