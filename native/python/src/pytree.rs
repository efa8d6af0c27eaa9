//! Python objects as a [`Tree`] the core's message parsers read, and their results as
//! Python objects.
//!
//! A parser given an already structured value (an OTLP `AnyValue` array the decoder turned
//! into lists and dicts, or what a parser before it in the chain returned) reads it through
//! [`PyValue`]: each node keeps its object, so a value the parser keeps comes back as the very
//! object it was given (as the Python parsers returned it), and the few Python operations
//! the rules need on other objects (`str()`, `json.dumps`, `orjson.dumps`) are Python's own.

use otel_oracles_core::otlp_json::value::J;
use otel_oracles_core::parsers::{Iteration, Kind, Out, OutKey, ParserError, Tree};
use pyo3::exceptions::{PyAttributeError, PyRecursionError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::parsers::{dict_key, dict_set, to_python};

/// Levels of a structured value read into the tree; deeper containers are kept whole
/// without being looked into. The parsers look at most about ten levels deep (messages,
/// parts, a block's result, its blocks, their text), so this bound never changes a result;
/// it bounds the recursion on a value nested as deep as Python allows.
const MAX_READ_DEPTH: usize = 32;

/// One Python object and what the parsers can see of it.
pub(crate) struct PyValue<'py> {
    object: Bound<'py, PyAny>,
    node: Node<'py>,
}

enum Node<'py> {
    Null,
    Str,
    Arr(Vec<PyValue<'py>>),
    Obj(Vec<(Bound<'py, PyAny>, PyValue<'py>)>),
    Other { truthy: bool, iteration: Items<'py> },
}

enum Items<'py> {
    Fails,
    NoDicts,
    Tuple(Vec<PyValue<'py>>),
}

impl<'py> PyValue<'py> {
    /// Reads `object` (and what it holds, to [`MAX_READ_DEPTH`] levels).
    pub(crate) fn read(object: &Bound<'py, PyAny>) -> PyResult<Self> {
        Self::read_at(object, 0)
    }

    fn read_at(object: &Bound<'py, PyAny>, depth: usize) -> PyResult<Self> {
        let deep = depth >= MAX_READ_DEPTH;
        let node = if object.is_none() {
            Node::Null
        } else if let Ok(text) = object.cast::<PyString>() {
            if text.to_str().is_ok() {
                Node::Str
            } else {
                // Lone surrogates: a `str` no rule can compare equal to a name; kept as it is.
                Node::Other {
                    truthy: object.is_truthy()?,
                    iteration: Items::NoDicts,
                }
            }
        } else if let (Ok(dict), false) = (object.cast::<PyDict>(), deep) {
            let mut entries = Vec::with_capacity(dict.len());
            for (key, value) in dict.iter() {
                let value = Self::read_at(&value, depth + 1)?;
                entries.push((key, value));
            }
            Node::Obj(entries)
        } else if let (Ok(list), false) = (object.cast::<PyList>(), deep) {
            let items = list
                .iter()
                .map(|item| Self::read_at(&item, depth + 1))
                .collect::<PyResult<Vec<_>>>()?;
            Node::Arr(items)
        } else if let (Ok(tuple), false) = (object.cast::<PyTuple>(), deep) {
            let items = tuple
                .iter()
                .map(|item| Self::read_at(&item, depth + 1))
                .collect::<PyResult<Vec<_>>>()?;
            Node::Other {
                truthy: !items.is_empty(),
                iteration: Items::Tuple(items),
            }
        } else {
            let scalar = object.is_instance_of::<PyBool>()
                || object.is_instance_of::<PyInt>()
                || object.is_instance_of::<PyFloat>();
            let iteration = if !scalar && object.try_iter().is_ok() {
                Items::NoDicts
            } else {
                Items::Fails
            };
            Node::Other {
                truthy: object.is_truthy()?,
                iteration,
            }
        };
        Ok(PyValue {
            object: object.clone(),
            node,
        })
    }
}

/// A Python exception raised by a parser or by a Python operation it used.
pub(crate) struct PyFailure(pub(crate) PyErr);

impl From<ParserError> for PyFailure {
    fn from(error: ParserError) -> Self {
        match error {
            ParserError::Type(message) => PyFailure(PyTypeError::new_err(message)),
            ParserError::Value(message) => PyFailure(PyValueError::new_err(message)),
            ParserError::Attribute(message) => PyFailure(PyAttributeError::new_err(message)),
        }
    }
}

impl From<PyErr> for PyFailure {
    fn from(error: PyErr) -> Self {
        PyFailure(error)
    }
}

impl<'py> Tree for PyValue<'py> {
    type Key = Bound<'py, PyAny>;
    type Error = PyFailure;

    fn kind(&self) -> Kind<'_, Self> {
        match &self.node {
            Node::Null => Kind::Null,
            Node::Str => match self.object.cast::<PyString>().map(|s| s.to_str()) {
                Ok(Ok(text)) => Kind::Str(text),
                // Checked when read.
                _ => Kind::Other {
                    truthy: true,
                    iteration: Iteration::NoDicts,
                },
            },
            Node::Arr(items) => Kind::Arr(items),
            Node::Obj(entries) => Kind::Obj(entries),
            Node::Other { truthy, iteration } => Kind::Other {
                truthy: *truthy,
                iteration: match iteration {
                    Items::Fails => Iteration::Fails,
                    Items::NoDicts => Iteration::NoDicts,
                    Items::Tuple(items) => Iteration::Items(items),
                },
            },
        }
    }

    fn key_str(key: &Self::Key) -> Option<&str> {
        key.cast::<PyString>().ok()?.to_str().ok()
    }

    fn display(&self) -> Result<Option<String>, PyFailure> {
        if self.object.is_instance_of::<PyString>() {
            return Ok(None);
        }
        Ok(Some(self.object.str()?.extract::<String>()?))
    }

    fn dumps_sorted(&self) -> Result<Option<String>, PyFailure> {
        let py = self.object.py();
        let kwargs = PyDict::new(py);
        kwargs.set_item("ensure_ascii", false)?;
        kwargs.set_item("sort_keys", true)?;
        match serialisers(py)?
            .json_dumps
            .bind(py)
            .call((&self.object,), Some(&kwargs))
        {
            Ok(text) => Ok(Some(text.extract::<String>()?)),
            Err(err) if err.is_instance_of::<PyRecursionError>(py) => Ok(None),
            Err(err) => Err(err.into()),
        }
    }

    fn dumps_built(value: &Out<'_, Self>) -> Result<Option<String>, PyFailure> {
        let Some(py) = built_py(value) else {
            return Ok(None);
        };
        let object = emit(py, value)?;
        let kwargs = PyDict::new(py);
        kwargs.set_item("ensure_ascii", false)?;
        kwargs.set_item("sort_keys", true)?;
        match serialisers(py)?
            .json_dumps
            .bind(py)
            .call((&object,), Some(&kwargs))
        {
            Ok(text) => Ok(Some(text.extract::<String>()?)),
            Err(err) if err.is_instance_of::<PyRecursionError>(py) => Ok(None),
            Err(err) => Err(err.into()),
        }
    }

    fn dumps_compact(&self) -> Result<String, PyFailure> {
        let py = self.object.py();
        let data = serialisers(py)?
            .orjson_dumps
            .bind(py)
            .call1((&self.object,))?;
        Ok(data.call_method0("decode")?.extract::<String>()?)
    }
}

/// The interpreter, from the first input value a built object holds (`None` when it holds
/// none: such an object is never serialised, it always holds the value it was built for).
fn built_py<'py>(value: &Out<'_, PyValue<'py>>) -> Option<Python<'py>> {
    match value {
        Out::In(node) => Some(node.object.py()),
        Out::Obj(entries) => entries.iter().find_map(|(key, v)| match key {
            OutKey::In(key) => Some(key.py()),
            _ => built_py(v),
        }),
        Out::Arr(items) => items.iter().find_map(built_py),
        _ => None,
    }
}

struct Serialisers {
    json_dumps: pyo3::Py<PyAny>,
    orjson_dumps: pyo3::Py<PyAny>,
}

static SERIALISERS: PyOnceLock<Serialisers> = PyOnceLock::new();

fn serialisers(py: Python<'_>) -> PyResult<&Serialisers> {
    SERIALISERS.get_or_try_init(py, || {
        Ok(Serialisers {
            json_dumps: PyModule::import(py, "json")?.getattr("dumps")?.unbind(),
            orjson_dumps: PyModule::import(py, "orjson")?.getattr("dumps")?.unbind(),
        })
    })
}

/// A tree whose nodes the result refers to, as Python objects.
pub(crate) trait Emit<'py>: Tree {
    fn emit(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>>;
    fn emit_key(key: &Self::Key, py: Python<'py>) -> Bound<'py, PyAny>;
}

impl<'py> Emit<'py> for PyValue<'py> {
    fn emit(&self, _py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.object.clone())
    }

    fn emit_key(key: &Self::Key, _py: Python<'py>) -> Bound<'py, PyAny> {
        key.clone()
    }
}

impl<'py> Emit<'py> for J<'_> {
    fn emit(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, self)
    }

    fn emit_key(key: &Self::Key, py: Python<'py>) -> Bound<'py, PyAny> {
        dict_key(py, key).into_any()
    }
}

/// The Python objects of a parser's result. The recursion follows the result's own nesting,
/// which the parsers build a few levels deep (kept and parsed values are converted by
/// [`Emit`], bounded by the JSON depth limit).
pub(crate) fn emit<'py, V: Emit<'py>>(
    py: Python<'py>,
    out: &Out<'_, V>,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match out {
        Out::In(value) => value.emit(py)?,
        Out::Parsed(value) => to_python(py, value)?,
        Out::Null => py.None().into_bound(py),
        Out::Static(text) => dict_key(py, text).into_any(),
        Out::Text(text) => PyString::new(py, text).into_any(),
        Out::Obj(entries) => {
            let dict = PyDict::new(py);
            for (key, value) in entries {
                let key = match key {
                    OutKey::Static(text) | OutKey::Str(text) => dict_key(py, text).into_any(),
                    OutKey::In(key) => V::emit_key(key, py),
                };
                dict_set(&dict, &key, &emit(py, value)?)?;
            }
            dict.into_any()
        }
        Out::Arr(items) => {
            let items = items
                .iter()
                .map(|item| emit(py, item))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
    })
}
