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
//!
//! [`VerdictJson`] writes a whole verdict of the report this way straight from its model
//! objects (their `__dict__`s, read in field order), with each result's shown message and
//! details asked of the report's privacy boundary, and the report's `json_safe` applied as
//! each string is written: the report's text without Python building a dict of every
//! verdict, nor a `str` to be scanned and encoded.

use otel_oracles_core::json_text::{float_text, write_int, write_shown_string, write_string};
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

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
    let writer = Writer {
        indent,
        level,
        shown: false,
    };
    writer.write::<false>(value, 0, &mut out)?;
    // Every byte written came from a `str` read as UTF-8 or from ASCII.
    String::from_utf8(out).ok()
}

struct Writer {
    indent: usize,
    level: usize,
    /// Whether strings are written `json_safe` (`write_shown_string`), as the report's
    /// verdicts are, or as `json.dumps` writes them.
    shown: bool,
}

impl Writer {
    fn newline(&self, depth: usize, out: &mut Vec<u8>) {
        out.push(b'\n');
        out.resize(out.len() + self.indent * (self.level + depth), b' ');
    }

    fn string(&self, text: &Bound<'_, PyString>, out: &mut Vec<u8>) -> Option<()> {
        let bytes = text.to_str().ok()?.as_bytes();
        if self.shown {
            write_shown_string(bytes, out);
        } else {
            write_string(bytes, out);
        }
        Some(())
    }

    /// `value`'s text. With `PLAIN`, only what the report's `_plain` calls plain JSON data
    /// (exact `str`, `int`, `bool`, `None`, finite exact `float`, exact `list` and `dict`
    /// with `str` keys) is written: anything else pydantic dumps first, so it is left to
    /// Python (a tuple's or an enum member's text would be the same, NaN's would not).
    fn write<const PLAIN: bool>(
        &self,
        value: &Bound<'_, PyAny>,
        depth: usize,
        out: &mut Vec<u8>,
    ) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        // The order of `json`'s own type tests: str, None, bool, int, float, list/tuple, dict.
        if let Ok(text) = value.cast::<PyString>() {
            if PLAIN && !value.is_exact_instance_of::<PyString>() {
                return None;
            }
            self.string(text, out)?;
        } else if value.is_none() {
            out.extend_from_slice(b"null");
        } else if let Ok(flag) = value.cast::<PyBool>() {
            out.extend_from_slice(if flag.is_true() { b"true" } else { b"false" });
        } else if let Ok(number) = value.cast::<PyInt>() {
            if PLAIN && !value.is_exact_instance_of::<PyInt>() {
                return None;
            }
            // `int.__repr__` of an int subclass (an `IntEnum`) is its number, as here.
            let n: i64 = number.extract().ok()?;
            write_int(n, out);
        } else if let Ok(number) = value.cast::<PyFloat>() {
            let x = number.value();
            if PLAIN && !(x.is_finite() && value.is_exact_instance_of::<PyFloat>()) {
                return None;
            }
            out.extend_from_slice(float_text(x).as_bytes());
        } else if value.is_exact_instance_of::<PyList>() {
            let list = value.cast::<PyList>().ok()?;
            self.items::<PLAIN>(list.iter(), list.len(), depth, out)?;
        } else if !PLAIN && value.is_exact_instance_of::<PyTuple>() {
            let tuple = value.cast::<PyTuple>().ok()?;
            self.items::<PLAIN>(tuple.iter(), tuple.len(), depth, out)?;
        } else if value.is_exact_instance_of::<PyDict>() {
            self.object::<PLAIN>(value.cast::<PyDict>().ok()?, depth, out)?;
        } else {
            return None;
        }
        Some(())
    }

    fn items<'py, const PLAIN: bool>(
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
            self.write::<PLAIN>(&item, depth + 1, out)?;
        }
        self.newline(depth, out);
        out.push(b']');
        Some(())
    }

    fn object<const PLAIN: bool>(
        &self,
        dict: &Bound<'_, PyDict>,
        depth: usize,
        out: &mut Vec<u8>,
    ) -> Option<()> {
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
            self.string(key.cast::<PyString>().ok()?, out)?;
            out.extend_from_slice(b": ");
            self.write::<PLAIN>(&item, depth + 1, out)?;
        }
        self.newline(depth, out);
        out.push(b'}');
        Some(())
    }
}

/// Why a verdict's text was not written: something in it is left to Python's writer, or
/// asking for a result's shown fields raised.
enum Stop {
    LeftToPython,
    Raised(PyErr),
}

impl From<PyErr> for Stop {
    fn from(err: PyErr) -> Self {
        Stop::Raised(err)
    }
}

/// `Option`'s `None` (the plain writer's "left to Python") as a [`Stop`].
trait OrLeft<T> {
    fn or_left(self) -> Result<T, Stop>;
}

impl<T> OrLeft<T> for Option<T> {
    fn or_left(self) -> Result<T, Stop> {
        self.ok_or(Stop::LeftToPython)
    }
}

/// A model's field names in declaration order: what its `__dict__` holds, in that order,
/// once validated (or built by the trusted constructors), and each name's text as a key
/// (`"name": `).
struct Fields {
    names: Vec<Py<PyString>>,
    keys: Vec<Vec<u8>>,
}

impl Fields {
    fn new(names: Vec<Bound<'_, PyString>>) -> PyResult<Self> {
        let mut keys = Vec::with_capacity(names.len());
        for name in &names {
            let mut key = Vec::new();
            write_shown_string(name.to_str()?.as_bytes(), &mut key);
            key.extend_from_slice(b": ");
            keys.push(key);
        }
        Ok(Fields {
            names: names.into_iter().map(Bound::unbind).collect(),
            keys,
        })
    }

    fn position(&self, name: &str) -> PyResult<usize> {
        let mut key = Vec::new();
        write_shown_string(name.as_bytes(), &mut key);
        key.extend_from_slice(b": ");
        self.keys
            .iter()
            .position(|k| *k == key)
            .ok_or_else(|| PyValueError::new_err(format!("no field {name:?}")))
    }

    /// `model`'s field values in declaration order, or `LeftToPython` when its `__dict__`
    /// holds anything else (a model held another way is dumped by pydantic).
    fn values<'py>(&self, model: &Bound<'py, PyAny>) -> Result<Vec<Bound<'py, PyAny>>, Stop> {
        let py = model.py();
        let Ok(dict) = model.getattr(intern!(py, "__dict__")) else {
            return Err(Stop::LeftToPython);
        };
        let dict = dict.cast_into::<PyDict>().ok().or_left()?;
        if dict.len() != self.names.len() {
            return Err(Stop::LeftToPython);
        }
        let mut values = Vec::with_capacity(self.names.len());
        for ((key, value), name) in dict.iter().zip(&self.names) {
            // Field names are interned: the same object, but compared by value otherwise.
            if !key.is(name) && !key.eq(name.bind(py))? {
                return Err(Stop::LeftToPython);
            }
            values.push(value);
        }
        Ok(values)
    }
}

/// The text of one verdict of the JSON report: `json.dumps(verdict_data(verdict, shown),
/// indent=2, ensure_ascii=False)` at `level`, `json_safe`, encoded as UTF-8. Built once
/// with the models' field names; `write` answers `None` for a verdict whose text it leaves
/// to Python (a model held otherwise than validation leaves it, details or params that are
/// not plain JSON data, anything `json_indented` leaves to `json.dumps`).
#[pyclass(module = "otel_oracles._native", name = "VerdictJson", frozen)]
struct VerdictJson {
    verdict: Fields,
    result: Fields,
    counts: Fields,
    /// The verdict fields holding the results and the counts.
    results_at: usize,
    counts_at: usize,
    /// The result fields a report shows through the privacy boundary (message and
    /// details) and the other `dict[str, Any]` one (params).
    message_at: usize,
    details_at: usize,
    params_at: usize,
    level: usize,
}

const INDENT: usize = 2;

#[pymethods]
impl VerdictJson {
    #[new]
    fn new(
        verdict_fields: Vec<Bound<'_, PyString>>,
        result_fields: Vec<Bound<'_, PyString>>,
        counts_fields: Vec<Bound<'_, PyString>>,
        level: usize,
    ) -> PyResult<Self> {
        let verdict = Fields::new(verdict_fields)?;
        let result = Fields::new(result_fields)?;
        Ok(VerdictJson {
            results_at: verdict.position("results")?,
            counts_at: verdict.position("counts")?,
            message_at: result.position("message")?,
            details_at: result.position("details")?,
            params_at: result.position("params")?,
            verdict,
            result,
            counts: Fields::new(counts_fields)?,
            level,
        })
    }

    /// `verdict`'s text, each result's message and details being what `shown(result)`
    /// gives when `shown` is given; `None` when the text is left to Python.
    #[pyo3(signature = (verdict, shown = None))]
    fn write<'py>(
        &self,
        verdict: &Bound<'py, PyAny>,
        shown: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let mut out = Vec::with_capacity(8192);
        match self.write_verdict(verdict, shown, &mut out) {
            Ok(()) => Ok(Some(PyBytes::new(verdict.py(), &out))),
            Err(Stop::LeftToPython) => Ok(None),
            Err(Stop::Raised(err)) => Err(err),
        }
    }
}

impl VerdictJson {
    fn writer(&self) -> Writer {
        Writer {
            indent: INDENT,
            level: self.level,
            shown: true,
        }
    }

    fn write_verdict(
        &self,
        verdict: &Bound<'_, PyAny>,
        shown: Option<&Bound<'_, PyAny>>,
        out: &mut Vec<u8>,
    ) -> Result<(), Stop> {
        let py = verdict.py();
        let w = self.writer();
        let values = self.verdict.values(verdict)?;
        out.push(b'{');
        for (i, value) in values.iter().enumerate() {
            w.newline(1, out);
            out.extend_from_slice(&self.verdict.keys[i]);
            if i == self.results_at {
                let results = value.cast::<PyList>().ok().or_left()?;
                if !value.is_exact_instance_of::<PyList>() {
                    return Err(Stop::LeftToPython);
                }
                if results.is_empty() {
                    out.extend_from_slice(b"[]");
                } else {
                    out.push(b'[');
                    for (n, result) in results.iter().enumerate() {
                        if n > 0 {
                            out.push(b',');
                        }
                        w.newline(2, out);
                        self.write_result(&w, &result, shown, out)?;
                    }
                    w.newline(1, out);
                    out.push(b']');
                }
            } else if i == self.counts_at {
                let counts = self.counts.values(value)?;
                self.write_object(&w, &self.counts, &counts, 1, out)?;
            } else {
                w.write::<false>(value, 1, out).or_left()?;
            }
            out.push(b',');
        }
        // The derived `verdict` ("pass", "fail", "error"), as the report adds it.
        w.newline(1, out);
        write_shown_string(b"verdict", out);
        out.extend_from_slice(b": ");
        let derived = verdict.getattr(intern!(py, "verdict"))?;
        w.write::<false>(&derived, 1, out).or_left()?;
        w.newline(0, out);
        out.push(b'}');
        Ok(())
    }

    fn write_result(
        &self,
        w: &Writer,
        result: &Bound<'_, PyAny>,
        shown: Option<&Bound<'_, PyAny>>,
        out: &mut Vec<u8>,
    ) -> Result<(), Stop> {
        let mut values = self.result.values(result)?;
        if let Some(shown) = shown {
            let (message, details): (Bound<'_, PyAny>, Bound<'_, PyAny>) =
                shown.call1((result,))?.extract()?;
            values[self.message_at] = message;
            values[self.details_at] = details;
        }
        out.push(b'{');
        for (i, value) in values.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            w.newline(3, out);
            out.extend_from_slice(&self.result.keys[i]);
            if i == self.details_at || i == self.params_at {
                w.write::<true>(value, 3, out).or_left()?;
            } else {
                w.write::<false>(value, 3, out).or_left()?;
            }
        }
        w.newline(2, out);
        out.push(b'}');
        Ok(())
    }

    /// A model's fields (`values`, in the order of `fields`) as an object `depth` deep.
    fn write_object(
        &self,
        w: &Writer,
        fields: &Fields,
        values: &[Bound<'_, PyAny>],
        depth: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), Stop> {
        if values.is_empty() {
            out.extend_from_slice(b"{}");
            return Ok(());
        }
        out.push(b'{');
        for (i, value) in values.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            w.newline(depth + 1, out);
            out.extend_from_slice(&fields.keys[i]);
            w.write::<false>(value, depth + 1, out).or_left()?;
        }
        w.newline(depth, out);
        out.push(b'}');
        Ok(())
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(json_indented, m)?)?;
    m.add_class::<VerdictJson>()?;
    Ok(())
}
