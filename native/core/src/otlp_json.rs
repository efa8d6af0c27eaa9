//! OTLP/JSON request bodies (canonical and the tolerant forms) to [`crate::model`] records.
