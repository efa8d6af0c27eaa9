//! `Batch`: decoded records owned by Rust, handed to Python as `otel_oracles.model.span` records on request.

use pyo3::prelude::*;

pub fn register(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}
