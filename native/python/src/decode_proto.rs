//! `decode_proto`: OTLP protobuf bodies to a [`crate::batch`] batch.

use pyo3::prelude::*;

pub fn register(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}
