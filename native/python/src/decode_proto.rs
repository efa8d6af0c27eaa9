//! `decode_proto`: OTLP protobuf bodies to a [`crate::batch`] batch.

use otel_oracles_core::otlp_proto::{self, Signal};
use otel_oracles_core::otlp_select;
use std::mem::MaybeUninit;

use pyo3::exceptions::{PyIndexError, PyOverflowError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::batch::Batch;

/// Decode one protobuf request body read as `signal` ("traces" or "logs").
///
/// Returns the batch and whether the body plausibly is that signal (see
/// `otlp_proto::Decoded`). Raises `ValueError` with the parser's reason when the bytes are
/// not that message. The interpreter is released while decoding, so `serve`'s receiving
/// thread keeps answering while a large body is read. `for_transfer`: the batch is only
/// read for `Batch.transfer_spans` (`otlp_proto::decode_for_transfer`: of a traces body's
/// attributes only what a transfer keeps is built). The body is `payload[start:end]` (all
/// of it by default; a range outside `payload` is a `ValueError`), as for `decode_json`: the
/// file reader hands each frame of a framed file on as its place in the block it read.
#[pyfunction]
#[pyo3(signature = (payload, signal, for_transfer=false, start=0, end=None))]
fn decode_proto(
    py: Python<'_>,
    payload: &[u8],
    signal: &str,
    for_transfer: bool,
    start: usize,
    end: Option<usize>,
) -> PyResult<(Batch, bool)> {
    let payload = crate::decode_json::range(payload, start, end)?;
    let signal = match signal {
        "traces" => Signal::Traces,
        "logs" => Signal::Logs,
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown signal {other:?}: expected \"traces\" or \"logs\""
            )))
        }
    };
    let decode = if for_transfer {
        otlp_proto::decode_for_transfer
    } else {
        otlp_proto::decode
    };
    match py.detach(|| decode(payload, signal)) {
        Ok(decoded) => Ok((Batch::new(decoded.batch), decoded.plausible)),
        Err(error) => Err(PyValueError::new_err(format!(
            "Error parsing message with type '{}': {error}",
            signal.message_name()
        ))),
    }
}

/// A protobuf request body (traces or logs: they share their framing) holding only the
/// records at `positions` of `payload`, which `decode_proto` reads as it read them in the
/// whole body, in position order (`otlp_select`). Positions count every record message, so
/// they are the decoded batch's only when the decoder rejected none of the body's records.
/// Raises `IndexError` for a position past the body's last record. The interpreter is
/// released meanwhile.
#[pyfunction]
fn select_proto<'py>(
    py: Python<'py>,
    payload: &[u8],
    mut positions: Vec<u32>,
) -> PyResult<Bound<'py, PyBytes>> {
    positions.sort_unstable();
    positions.dedup();
    let cut = py
        .detach(|| otlp_select::select(payload, &positions))
        .map_err(|error| PyValueError::new_err(format!("not a protobuf request body: {error}")))?;
    if cut.found < positions.len() {
        return Err(PyIndexError::new_err(format!(
            "record {} is past the body's last record",
            positions[cut.found]
        )));
    }
    let len = cut.len();
    let size = ffi::Py_ssize_t::try_from(len)
        .map_err(|_| PyOverflowError::new_err("a cut body over isize::MAX bytes"))?;
    // SAFETY: a null source makes CPython allocate the object's `len` bytes (and the
    // terminating NUL) without initialising them; nothing else holds the object until it
    // is returned, and `write_uninit` writes every one of those bytes or panics.
    unsafe {
        let bytes = Bound::from_owned_ptr_or_err(
            py,
            ffi::PyBytes_FromStringAndSize(std::ptr::null(), size),
        )?
        .cast_into_unchecked::<PyBytes>();
        let buf = std::slice::from_raw_parts_mut(
            ffi::PyBytes_AsString(bytes.as_ptr()).cast::<MaybeUninit<u8>>(),
            len,
        );
        py.detach(|| cut.write_uninit(buf));
        Ok(bytes)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(decode_proto, m)?)?;
    m.add_function(wrap_pyfunction!(select_proto, m)?)
}
