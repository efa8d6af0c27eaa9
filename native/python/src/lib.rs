//! `otel_oracles._native`: the native core's Python face.
//!
//! Each stage's bindings live in their own module and are registered here; the Python
//! stage packages (`otel_oracles.decode`, ...) are the only importers.

use pyo3::prelude::*;

/// The version of the core the extension was built from; `otel-oracles --version` and the
/// tests compare it with the Python package's.
#[pyfunction]
fn core_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(core_version, m)?)?;
    Ok(())
}
