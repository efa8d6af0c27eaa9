//! `decode_json`: OTLP/JSON bodies to a [`crate::batch`] batch.

use pyo3::prelude::*;

pub fn register(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}
