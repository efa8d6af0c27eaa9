//! `decode_proto`: OTLP protobuf bodies to a [`crate::batch`] batch.

use otel_oracles_core::otlp_proto::{self, Signal};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::batch::Batch;

/// Decode one protobuf request body read as `signal` ("traces" or "logs").
///
/// Returns the batch and whether the body plausibly is that signal (see
/// `otlp_proto::Decoded`). Raises `ValueError` with the parser's reason when the bytes are
/// not that message. The interpreter is released while decoding, so `serve`'s receiving
/// thread keeps answering while a large body is read.
#[pyfunction]
fn decode_proto(py: Python<'_>, payload: &[u8], signal: &str) -> PyResult<(Batch, bool)> {
    let signal = match signal {
        "traces" => Signal::Traces,
        "logs" => Signal::Logs,
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown signal {other:?}: expected \"traces\" or \"logs\""
            )))
        }
    };
    match py.detach(|| otlp_proto::decode(payload, signal)) {
        Ok(decoded) => Ok((Batch::new(decoded.batch), decoded.plausible)),
        Err(error) => Err(PyValueError::new_err(format!(
            "Error parsing message with type '{}': {error}",
            signal.message_name()
        ))),
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(decode_proto, m)?)
}
