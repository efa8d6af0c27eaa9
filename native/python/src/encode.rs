//! Encoding of emitted telemetry (grade spans, evaluation events, metrics) to OTLP bytes.

use pyo3::prelude::*;

pub fn register(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}
