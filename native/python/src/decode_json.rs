//! `decode_json`: OTLP/JSON bodies to a [`crate::batch`] batch.
//!
//! The GIL is released while a body is parsed and decoded, so `serve`'s receiving thread
//! does not hold up the rest of the process on a large body.

use otel_oracles_core::otlp_json::{self, JsonError};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

use crate::batch::Batch;

create_exception!(
    _native,
    JsonSyntaxError,
    PyValueError,
    "The body is not JSON; args are (message, line, column), 1-based."
);

fn to_py(err: JsonError) -> PyErr {
    match err {
        JsonError::Syntax {
            line,
            column,
            message,
        } => JsonSyntaxError::new_err((message, line, column)),
        JsonError::TooDeep(message) | JsonError::Request(message) => PyValueError::new_err(message),
    }
}

/// Decodes one OTLP/JSON request body: `payload[start:end]` (all of it by default). Raises
/// `JsonSyntaxError` for text that is not JSON and `ValueError` (one line, the reason) for
/// JSON that is not an OTLP request or nests too deeply, or for a range outside `payload`.
///
/// Why a range: the file reader finds a file's lines in large blocks it reads whole, and
/// hands each line on as its place in the block; a `bytes` of each line was a copy of the
/// whole file, line by line.
#[pyfunction]
#[pyo3(signature = (payload, start = 0, end = None))]
fn decode_json(
    py: Python<'_>,
    payload: &[u8],
    start: usize,
    end: Option<usize>,
) -> PyResult<Batch> {
    let body = range(payload, start, end)?;
    py.detach(|| otlp_json::decode(body))
        .map(Batch::new)
        .map_err(to_py)
}

/// `payload[start:end]`, or the `ValueError` naming a range outside `payload`.
pub(crate) fn range(payload: &[u8], start: usize, end: Option<usize>) -> PyResult<&[u8]> {
    let end = end.unwrap_or(payload.len());
    payload.get(start..end).ok_or_else(|| {
        PyValueError::new_err(format!(
            "range {start}..{end} is outside the {}-byte payload",
            payload.len()
        ))
    })
}

/// Decodes a JSON array of requests, `payload[start:end]` (all of it by default, as for
/// `decode_json`: a file's document is read where the file reader's block holds it): a
/// `Batch`, or the reason as a `str`, per item.
#[pyfunction]
#[pyo3(signature = (payload, start = 0, end = None))]
fn decode_json_many<'py>(
    py: Python<'py>,
    payload: &[u8],
    start: usize,
    end: Option<usize>,
) -> PyResult<Bound<'py, PyList>> {
    let body = range(payload, start, end)?;
    let items = py.detach(|| otlp_json::decode_many(body)).map_err(to_py)?;
    let objects = items
        .into_iter()
        .map(|item| match item {
            Ok(batch) => Ok(Bound::new(py, Batch::new(batch))?.into_any()),
            Err(reason) => Ok(PyString::new(py, &reason).into_any()),
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, objects)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("JsonSyntaxError", m.py().get_type::<JsonSyntaxError>())?;
    // The bound lives in the core; Python reads it from here rather than keeping a copy.
    m.add(
        "MAX_ANY_VALUE_DEPTH",
        otel_oracles_core::otlp_json::MAX_ANY_VALUE_DEPTH,
    )?;
    m.add_function(wrap_pyfunction!(decode_json, m)?)?;
    m.add_function(wrap_pyfunction!(decode_json_many, m)?)?;
    Ok(())
}
