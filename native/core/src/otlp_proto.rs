//! OTLP protobuf request bodies (traces and logs) to [`crate::model`] records.
