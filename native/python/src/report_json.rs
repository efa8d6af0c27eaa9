//! The JSON report's text: `json.dumps(value, indent=2, ensure_ascii=False)` of plain data,
//! written in the core.
//!
//! Python's encoder takes its pure-Python path whenever an indent is asked for, and the JSON
//! report dumps every verdict with one, so writing it was a large share of grading many
//! small traces. This writes the same bytes for the values `model_dump(mode="json")` makes:
//! `None`, `bool`, `int`, `float`, `str`, and exact `list`, `tuple` and `dict` with `str`
//! keys. Anything else (another key or value type, a subclass of a container, a string with
//! lone surrogates, an integer beyond 64 bits, nesting deeper than [`MAX_DEPTH`]) answers
//! `None`, and the caller dumps the value with `json.dumps` itself, so an unusual value gets
//! Python's own text or Python's own error, never a different one.

use otel_oracles_core::json_text::{float_text, write_string};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// Deepest nesting written here; deeper values go to `json.dumps` (a result's details are a
/// few levels deep, so this bound only meets hostile or cyclic data).
const MAX_DEPTH: usize = 64;

/// `json.dumps(value, indent=indent, ensure_ascii=False)`, or `None` when the value holds
/// anything this writer leaves to Python (see the module's text). With a `level`, every line
/// after the first is indented `level` more steps: the text as it sits inside `level`
/// enclosing containers (the report places each verdict two levels deep).
#[pyfunction]
#[pyo3(signature = (value, indent, level = 0))]
fn json_indented(value: &Bound<'_, PyAny>, indent: usize, level: usize) -> Option<String> {
    let mut out = Vec::with_capacity(1024);
    let writer = Writer { indent, level };
    writer.write(value, 0, &mut out)?;
    // Every byte written came from a `str` read as UTF-8 or from ASCII.
    String::from_utf8(out).ok()
}

struct Writer {
    indent: usize,
    level: usize,
}

impl Writer {
    fn newline(&self, depth: usize, out: &mut Vec<u8>) {
        out.push(b'\n');
        out.resize(out.len() + self.indent * (self.level + depth), b' ');
    }

    fn write(&self, value: &Bound<'_, PyAny>, depth: usize, out: &mut Vec<u8>) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        // The order of `json`'s own type tests: str, None, bool, int, float, list/tuple, dict.
        if let Ok(text) = value.cast::<PyString>() {
            write_string(text.to_str().ok()?.as_bytes(), out);
        } else if value.is_none() {
            out.extend_from_slice(b"null");
        } else if let Ok(flag) = value.cast::<PyBool>() {
            out.extend_from_slice(if flag.is_true() { b"true" } else { b"false" });
        } else if let Ok(number) = value.cast::<PyInt>() {
            // `int.__repr__` of an int subclass (an `IntEnum`) is its number, as here.
            let n: i64 = number.extract().ok()?;
            out.extend_from_slice(n.to_string().as_bytes());
        } else if let Ok(number) = value.cast::<PyFloat>() {
            out.extend_from_slice(float_text(number.value()).as_bytes());
        } else if value.is_exact_instance_of::<PyList>() {
            let list = value.cast::<PyList>().ok()?;
            self.items(list.iter(), list.len(), depth, out)?;
        } else if value.is_exact_instance_of::<PyTuple>() {
            let tuple = value.cast::<PyTuple>().ok()?;
            self.items(tuple.iter(), tuple.len(), depth, out)?;
        } else if value.is_exact_instance_of::<PyDict>() {
            self.object(value.cast::<PyDict>().ok()?, depth, out)?;
        } else {
            return None;
        }
        Some(())
    }

    fn items<'py>(
        &self,
        items: impl Iterator<Item = Bound<'py, PyAny>>,
        len: usize,
        depth: usize,
        out: &mut Vec<u8>,
    ) -> Option<()> {
        if len == 0 {
            out.extend_from_slice(b"[]");
            return Some(());
        }
        out.push(b'[');
        for (i, item) in items.enumerate() {
            if i > 0 {
                out.push(b',');
            }
            self.newline(depth + 1, out);
            self.write(&item, depth + 1, out)?;
        }
        self.newline(depth, out);
        out.push(b']');
        Some(())
    }

    fn object(&self, dict: &Bound<'_, PyDict>, depth: usize, out: &mut Vec<u8>) -> Option<()> {
        if dict.is_empty() {
            out.extend_from_slice(b"{}");
            return Some(());
        }
        out.push(b'{');
        for (i, (key, item)) in dict.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            self.newline(depth + 1, out);
            // Other key types are spelled by `json`'s own rules: left to it.
            if !key.is_exact_instance_of::<PyString>() {
                return None;
            }
            write_string(key.cast::<PyString>().ok()?.to_str().ok()?.as_bytes(), out);
            out.extend_from_slice(b": ");
            self.write(&item, depth + 1, out)?;
        }
        self.newline(depth, out);
        out.push(b'}');
        Some(())
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(json_indented, m)?)?;
    Ok(())
}
