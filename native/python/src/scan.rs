//! The scan text of a step (`Step.scan_text`, `Step.raw_json`) and the pattern search over
//! it (`Trajectory.find_network_violations`), from `otel_oracles_core::scan`.
//!
//! The readers here turn Python values into the core's [`Value`] tree, but only values
//! whose JSON form is certain without asking Python: exact `str`, `int`, `float`, `bool`,
//! `None`, `list`, `tuple` and `dict` with exact `str` keys, nested at most
//! [`MAX_READ_DEPTH`] levels. For anything else (subclasses, enums in values, `bytes`, sets,
//! other keys, deeper or cyclic values) they answer `None`, and the caller asks the library
//! whose rules define the text (pydantic's `model_dump(mode="json")` for a step's fields,
//! `json.dumps(default=str)` for an AgentBench object): the text is theirs by construction.

use std::borrow::Cow;
use std::cell::RefCell;

use bumpalo::Bump;
use otel_oracles_core::json_text::float_text;
use otel_oracles_core::otlp_json::repr::repr_float;
use otel_oracles_core::scan::{self, Limits, Patterns, Value};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// Deepest nesting read from a step's fields or an AgentBench object: below pydantic's own
/// serialization limit (it refuses values nested about 255 levels deep) and `json.dumps`'s
/// recursion limit, so whatever is read is what they would have written, and deeper values
/// are theirs to write or refuse.
const MAX_READ_DEPTH: usize = 200;

/// Deepest nesting read from `model_dump`'s output: past pydantic's limit, so all of it.
const MAX_DUMP_DEPTH: usize = 300;

/// How non-finite floats are written: `model_dump(mode="json")` makes them `None`,
/// `json.dumps` writes `NaN`, `Infinity`, `-Infinity`.
#[derive(Clone, Copy, PartialEq)]
enum Floats {
    PydanticJson,
    JsonDumps,
}

struct Reader<'a> {
    bump: &'a Bump,
    floats: Floats,
    max_depth: usize,
    /// What Python raised while a value was read (the digits of an integer longer than it
    /// converts): the value is then unread, and `scan_data` raises it as `json.dumps` did.
    error: RefCell<Option<PyErr>>,
}

impl<'a> Reader<'a> {
    /// An exact `str` as surrogate-extended UTF-8.
    fn text(&self, text: &Bound<'_, PyString>) -> Option<&'a [u8]> {
        Some(self.bump.alloc_slice_copy(&str_bytes(text).ok()?))
    }

    fn number(&self, text: &[u8]) -> Value<'a> {
        Value::Number(self.bump.alloc_slice_copy(text))
    }

    /// `object` as a value of plain type (see the module notes), or `None`.
    fn any(&self, object: &Bound<'_, PyAny>, depth: usize) -> Option<Value<'a>> {
        if depth > self.max_depth {
            return None;
        }
        if object.is_exact_instance_of::<PyString>() {
            return Some(Value::Str(self.text(object.cast::<PyString>().ok()?)?));
        }
        if object.is_none() {
            return Some(Value::Null);
        }
        if object.is_exact_instance_of::<PyBool>() {
            return Some(Value::Bool(object.is_truthy().ok()?));
        }
        if object.is_exact_instance_of::<PyInt>() {
            return match object.extract::<i64>() {
                Ok(n) => Some(self.number(n.to_string().as_bytes())),
                // Python's own digits (it refuses more than `sys.get_int_max_str_digits()`).
                Err(_) => match object.str() {
                    Ok(digits) => Some(self.number(digits.to_str().ok()?.as_bytes())),
                    Err(error) => {
                        self.error.replace(Some(error));
                        None
                    }
                },
            };
        }
        if object.is_exact_instance_of::<PyFloat>() {
            let x = object.cast::<PyFloat>().ok()?.value();
            return Some(match self.floats {
                Floats::PydanticJson if !x.is_finite() => Value::Null,
                Floats::PydanticJson => self.number(repr_float(x).as_bytes()),
                Floats::JsonDumps => self.number(float_text(x).as_bytes()),
            });
        }
        if object.is_exact_instance_of::<PyList>() {
            let list = object.cast::<PyList>().ok()?;
            let items = list.iter().map(|item| self.any(&item, depth + 1));
            return items.collect::<Option<Vec<_>>>().map(Value::Arr);
        }
        if object.is_exact_instance_of::<PyTuple>() {
            let tuple = object.cast::<PyTuple>().ok()?;
            let items = tuple.iter().map(|item| self.any(&item, depth + 1));
            return items.collect::<Option<Vec<_>>>().map(Value::Arr);
        }
        if object.is_exact_instance_of::<PyDict>() {
            return self.dict(object.cast::<PyDict>().ok()?, depth);
        }
        None
    }

    fn dict(&self, dict: &Bound<'_, PyDict>, depth: usize) -> Option<Value<'a>> {
        let mut entries = Vec::with_capacity(dict.len());
        for (key, item) in dict.iter() {
            if !key.is_exact_instance_of::<PyString>() {
                return None;
            }
            let key = key.cast::<PyString>().ok()?;
            if self.floats == Floats::PydanticJson && key.to_str().is_err() {
                // pydantic cannot write a key holding lone surrogates: it raises.
                return None;
            }
            let key = self.text(key)?;
            entries.push((key, self.any(&item, depth + 1)?));
        }
        Some(Value::Obj(entries))
    }

    /// A list (or tuple) whose items are all exact `str`s, or all exact `dict`s.
    fn seq_of(&self, object: &Bound<'_, PyAny>, of: Code) -> Option<Value<'a>> {
        let items: Vec<Bound<'_, PyAny>> = match of {
            Code::StrTuple => object.cast_exact::<PyTuple>().ok()?.iter().collect(),
            _ => object.cast_exact::<PyList>().ok()?.iter().collect(),
        };
        let read = items.iter().map(|item| match of {
            Code::DictList => self.dict(item.cast_exact::<PyDict>().ok()?, 2),
            _ => Some(Value::Str(self.text(item.cast_exact::<PyString>().ok()?)?)),
        });
        read.collect::<Option<Vec<_>>>().map(Value::Arr)
    }
}

/// An exact `str` as surrogate-extended UTF-8: borrowed when it is UTF-8, else encoded with
/// `surrogatepass` (it holds lone surrogates).
fn str_bytes<'s>(text: &'s Bound<'_, PyString>) -> PyResult<Cow<'s, [u8]>> {
    match text.to_str() {
        Ok(text) => Ok(Cow::Borrowed(text.as_bytes())),
        Err(_) => {
            let py = text.py();
            let encoded = text.call_method1(
                intern!(py, "encode"),
                (intern!(py, "utf-8"), intern!(py, "surrogatepass")),
            )?;
            Ok(Cow::Owned(encoded.cast::<PyBytes>()?.as_bytes().to_vec()))
        }
    }
}

/// Surrogate-extended UTF-8 as a `str`.
fn to_str<'py>(py: Python<'py>, bytes: &[u8]) -> PyResult<Bound<'py, PyString>> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(PyString::new(py, text)),
        Err(_) => Ok(PyBytes::new(py, bytes)
            .call_method1(
                intern!(py, "decode"),
                (intern!(py, "utf-8"), intern!(py, "surrogatepass")),
            )?
            .cast_into::<PyString>()?),
    }
}

/// What a step field's declared type lets through unchanged to `model_dump(mode="json")`:
/// a value of exactly that type is dumped as the reader reads it; another value is dumped
/// by pydantic's rules for the mismatch (a `bool` in an `int` field becomes `1`), so the
/// whole step is left to pydantic.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Code {
    /// `Any`: any plain value.
    Any,
    /// `str` (or a `Literal` of strings).
    Str,
    /// `int` (not `bool`).
    Int,
    Bool,
    /// A member of the given enum class, dumped as its `value` (a `str`).
    Enum,
    /// `tuple[str, ...]`, dumped as a list.
    StrTuple,
    /// `list[str]`.
    StrList,
    /// `dict[str, Any]`.
    Dict,
    /// `list[dict[str, Any]]`.
    DictList,
}

impl Code {
    fn from_name(name: &str) -> PyResult<Self> {
        Ok(match name {
            "any" => Code::Any,
            "str" => Code::Str,
            "int" => Code::Int,
            "bool" => Code::Bool,
            "enum" => Code::Enum,
            "str_tuple" => Code::StrTuple,
            "str_list" => Code::StrList,
            "dict" => Code::Dict,
            "dict_list" => Code::DictList,
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown field type {other:?}"
                )))
            }
        })
    }
}

/// The behaviour fields of `Step` (declaration order, provenance left out) and their types,
/// given once by `otel_oracles.model.step`: the scan text of a step read from its fields.
#[pyclass(module = "otel_oracles._native", name = "ScanFields", frozen)]
pub struct ScanFields {
    fields: Vec<(Py<PyString>, Code, Option<Py<PyAny>>)>,
}

#[pymethods]
impl ScanFields {
    /// `fields`: `(name, type, enum class or None)` triples, type one of `any`, `str`,
    /// `int`, `bool`, `enum`, `str_tuple`, `str_list`, `dict`, `dict_list`.
    #[new]
    fn new(fields: Vec<(Bound<'_, PyString>, String, Option<Bound<'_, PyAny>>)>) -> PyResult<Self> {
        let fields = fields
            .into_iter()
            .map(|(name, code, enum_class)| {
                let code = Code::from_name(&code)?;
                if (code == Code::Enum) != enum_class.is_some() {
                    return Err(PyValueError::new_err(
                        "an enum class goes with type 'enum' only",
                    ));
                }
                Ok((name.unbind(), code, enum_class.map(Bound::unbind)))
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok(Self { fields })
    }

    /// The scan text of a step whose field values are `values` (its `__dict__`), fields
    /// that are `None` left out (only its sorted JSON unless `with_strings`), or `None` when a value is not of its field's exact type or
    /// not plain data (the caller then dumps the step with pydantic and calls
    /// [`scan_data`]). `int_max_str_digits`: `sys.get_int_max_str_digits()`.
    fn scan_text<'py>(
        &self,
        values: &Bound<'py, PyDict>,
        int_max_str_digits: usize,
        with_strings: bool,
    ) -> PyResult<Option<Bound<'py, PyString>>> {
        match self.text_of(values, int_max_str_digits, with_strings)? {
            Some(text) => to_str(values.py(), &text).map(Some),
            None => Ok(None),
        }
    }
}

impl ScanFields {
    /// [`ScanFields::scan_text`] as surrogate-extended UTF-8.
    fn text_of(
        &self,
        values: &Bound<'_, PyDict>,
        int_max_str_digits: usize,
        with_strings: bool,
    ) -> PyResult<Option<Vec<u8>>> {
        let mut out = Vec::new();
        let written = self.write_into(
            values,
            int_max_str_digits,
            with_strings,
            &Bump::new(),
            &mut out,
        )?;
        Ok(written.then_some(out))
    }

    /// [`ScanFields::text_of`] appended to `out`, the values read into `bump`: whether it
    /// was written (`out` is left as it was when not). A walk over many steps hands every
    /// step the same buffer and arena, so they grow to the largest step once instead of
    /// being made again per step.
    fn write_into(
        &self,
        values: &Bound<'_, PyDict>,
        int_max_str_digits: usize,
        with_strings: bool,
        bump: &Bump,
        out: &mut Vec<u8>,
    ) -> PyResult<bool> {
        let py = values.py();
        let reader = Reader {
            bump,
            floats: Floats::PydanticJson,
            max_depth: MAX_READ_DEPTH,
            error: RefCell::new(None),
        };
        let mut entries = Vec::with_capacity(self.fields.len());
        for (name, code, enum_class) in &self.fields {
            let Some(value) = values.get_item(name.bind(py))? else {
                continue;
            };
            if value.is_none() {
                continue;
            }
            let read = match code {
                Code::Any => reader.any(&value, 1),
                Code::Str if value.is_exact_instance_of::<PyString>() => reader.any(&value, 1),
                Code::Int if value.is_exact_instance_of::<PyInt>() => reader.any(&value, 1),
                Code::Bool if value.is_exact_instance_of::<PyBool>() => reader.any(&value, 1),
                Code::Dict => value
                    .cast_exact::<PyDict>()
                    .ok()
                    .and_then(|dict| reader.dict(dict, 1)),
                Code::StrTuple | Code::StrList | Code::DictList => reader.seq_of(&value, *code),
                Code::Enum => match enum_class {
                    Some(class) if value.get_type().is(class.bind(py)) => {
                        match value.cast::<PyString>() {
                            // A `StrEnum` member is the `str` of its value.
                            Ok(text) => reader.text(text).map(Value::Str),
                            Err(_) => {
                                let member = value.getattr(intern!(py, "value"))?;
                                match member.cast_exact::<PyString>() {
                                    Ok(text) => reader.text(text).map(Value::Str),
                                    Err(_) => None,
                                }
                            }
                        }
                    }
                    _ => None,
                },
                Code::Str | Code::Int | Code::Bool => None,
            };
            let Some(read) = read else {
                return Ok(false);
            };
            let key = reader
                .text(name.bind(py))
                .ok_or_else(|| PyValueError::new_err("a field name is no UTF-8"))?;
            entries.push((key, read));
        }
        write(&Value::Obj(entries), int_max_str_digits, with_strings, out);
        Ok(true)
    }
}

/// The scan text of a step's fields as `model_dump(mode="json", exclude_none=True)` gave
/// them (`data`, plain data by pydantic's making). A `TypeError` if `data` is not.
#[pyfunction]
fn scan_data<'py>(
    data: &Bound<'py, PyDict>,
    int_max_str_digits: usize,
    with_strings: bool,
) -> PyResult<Bound<'py, PyString>> {
    let bump = Bump::new();
    let reader = Reader {
        bump: &bump,
        floats: Floats::PydanticJson,
        max_depth: MAX_DUMP_DEPTH,
        error: RefCell::new(None),
    };
    let Some(value) = reader.dict(data, 0) else {
        return Err(reader.error.take().unwrap_or_else(|| {
            PyTypeError::new_err("scan_data: the step's dump is not plain JSON data")
        }));
    };
    let mut out = Vec::new();
    write(&value, int_max_str_digits, with_strings, &mut out);
    to_str(data.py(), &out)
}

/// A step's sorted JSON, and its strings after it when `with_strings` (its scan text),
/// appended to `out`.
fn write(fields: &Value<'_>, int_max_str_digits: usize, with_strings: bool, out: &mut Vec<u8>) {
    if with_strings {
        scan::scan_text(fields, Limits { int_max_str_digits }, out);
    } else {
        scan::write_sorted(fields, out);
    }
}

/// `json.dumps(raw, ensure_ascii=False, sort_keys=True)` of an AgentBench step object made
/// of plain data, or `None` for anything else (the caller then calls `json.dumps` itself).
#[pyfunction]
fn raw_json<'py>(raw: &Bound<'py, PyDict>) -> PyResult<Option<Bound<'py, PyString>>> {
    match raw_json_of(raw) {
        Some(text) => to_str(raw.py(), &text).map(Some),
        None => Ok(None),
    }
}

/// [`raw_json`] as surrogate-extended UTF-8.
fn raw_json_of(raw: &Bound<'_, PyDict>) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    raw_json_into(raw, &Bump::new(), &mut out).then_some(out)
}

/// [`raw_json_of`] appended to `out`, the object read into `bump`: whether it was written
/// (`out` is left as it was when not).
fn raw_json_into(raw: &Bound<'_, PyDict>, bump: &Bump, out: &mut Vec<u8>) -> bool {
    let reader = Reader {
        bump,
        floats: Floats::JsonDumps,
        max_depth: MAX_READ_DEPTH,
        error: RefCell::new(None),
    };
    match reader.any(raw.as_any(), 0) {
        Some(value) => {
            scan::write_sorted(&value, out);
            true
        }
        None => false,
    }
}

/// Which of some patterns occur in a text, ignoring case as `str.lower()` does: the
/// patterns are lower-cased once here, a text is searched as it is when it is ASCII and
/// lower-cased by Python otherwise (so the case mapping is the interpreter's own).
#[pyclass(module = "otel_oracles._native", name = "PatternSearch", frozen)]
pub struct PatternSearch {
    patterns: Patterns,
}

#[pymethods]
impl PatternSearch {
    #[new]
    fn new(patterns: Vec<Bound<'_, PyString>>) -> PyResult<Self> {
        let lowered = patterns
            .iter()
            .map(|p| {
                let lower = p
                    .call_method0(intern!(p.py(), "lower"))?
                    .cast_into::<PyString>()?;
                Ok(str_bytes(&lower)?.into_owned())
            })
            .collect::<PyResult<Vec<Vec<u8>>>>()?;
        let patterns = Patterns::new(&lowered).map_err(PyValueError::new_err)?;
        Ok(Self { patterns })
    }

    /// Indexes of the patterns that occur in `text` (case-insensitively), ascending.
    fn occurring(&self, text: &Bound<'_, PyString>) -> PyResult<Vec<usize>> {
        self.occurring_in(text)
    }

    /// `Trajectory.find_network_violations` over `steps` in one call: for every step that
    /// is scanned (an AgentBench step, whose `raw` is set, or a trace-derived step whose
    /// `kind` is in `toolish`), its scan text, then the patterns occurring in it, as
    /// `(step.index, step.tool, pattern index)` in step order and, within a step,
    /// ascending pattern order.
    ///
    /// A step's text is read from its fields by `fields` (with its strings) or written
    /// from its raw object as [`raw_json`] does, into one buffer the walk reuses, and
    /// searched there: an ASCII text (the usual one) is lower-cased in place and never
    /// becomes a Python string; any other text is made one and lower-cased by Python
    /// ([`PatternSearch::occurring`]). Where a reader answers `None` (a value that is not
    /// plain data) the text is `fallback(step)` (`Step.scan_text`, which lets the library
    /// whose rules define the text write it). No text is kept: writing a step's text again
    /// for another pattern list costs less than making and keeping a Python string of it.
    #[pyo3(signature = (steps, fields, int_max_str_digits, toolish, fallback))]
    fn violations<'py>(
        &self,
        steps: &Bound<'py, PyAny>,
        fields: &Bound<'py, ScanFields>,
        int_max_str_digits: usize,
        toolish: &Bound<'py, PyAny>,
        fallback: &Bound<'py, PyAny>,
    ) -> PyResult<Vec<Violation<'py>>> {
        let py = steps.py();
        let fields = fields.get();
        let mut found = Vec::new();
        let mut text: Vec<u8> = Vec::new();
        let mut bump = Bump::new();
        for step in steps.try_iter()? {
            let step = step?;
            let values = step
                .getattr(intern!(py, "__dict__"))?
                .cast_into::<PyDict>()?;
            let raw = values
                .get_item(intern!(py, "raw"))?
                .filter(|raw| !raw.is_none());
            if raw.is_none() {
                let kind = values
                    .get_item(intern!(py, "kind"))?
                    .unwrap_or_else(|| py.None().into_bound(py));
                if !toolish.contains(kind)? {
                    continue;
                }
            }
            text.clear();
            bump.reset();
            let written = match &raw {
                Some(raw) => match raw.cast::<PyDict>() {
                    Ok(raw) => raw_json_into(raw, &bump, &mut text),
                    Err(_) => false,
                },
                None => fields.write_into(&values, int_max_str_digits, true, &bump, &mut text)?,
            };
            let hits = if !written {
                let made = fallback.call1((&step,))?.cast_into::<PyString>()?;
                self.occurring_in(&made)?
            } else if text.is_ascii() {
                self.patterns.occurring_in_place(&mut text)
            } else {
                self.occurring_in(&to_str(py, &text)?)?
            };
            if !hits.is_empty() {
                let index = values
                    .get_item(intern!(py, "index"))?
                    .unwrap_or_else(|| py.None().into_bound(py));
                let tool = values
                    .get_item(intern!(py, "tool"))?
                    .unwrap_or_else(|| py.None().into_bound(py));
                found.extend(hits.into_iter().map(|i| (index.clone(), tool.clone(), i)));
            }
        }
        Ok(found)
    }
}

/// `(step.index, step.tool, pattern index)` of a pattern found in a step's scan text.
type Violation<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>, usize);

impl PatternSearch {
    fn occurring_in(&self, text: &Bound<'_, PyString>) -> PyResult<Vec<usize>> {
        if let Ok(plain) = text.to_str() {
            if plain.is_ascii() {
                return Ok(self.patterns.occurring(plain.as_bytes()));
            }
        }
        let lower = text
            .call_method0(intern!(text.py(), "lower"))?
            .cast_into::<PyString>()?;
        Ok(self.patterns.occurring(&str_bytes(&lower)?))
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ScanFields>()?;
    m.add_class::<PatternSearch>()?;
    m.add_function(wrap_pyfunction!(scan_data, m)?)?;
    m.add_function(wrap_pyfunction!(raw_json, m)?)?;
    Ok(())
}
