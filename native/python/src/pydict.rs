//! Python's small reads of mappings, sequences and texts, done through the C API as Python
//! code does them: `mapping.get(key)` (and with a default), `key in mapping` then
//! `mapping[key]`, `list(value)` and `list(value or [])`, and `value == text`.
//!
//! One implementation of each for every binding that reads the mapping's Python values
//! (drafts' fields and attributes, messages and their parts, tool results): an exact
//! `dict`, `list` or `str` is read through its storage, and anything else goes through its
//! own methods, so a subclass that defines its own `get`, `__iter__` or `__eq__` is
//! answered as Python would answer it.

use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use pyo3::Borrowed;

/// `mapping.get(key)` as Python calls it: an exact `dict` through its storage (`None` when
/// missing), any other object (a subclass) through its own `get`.
pub(crate) fn get<'py>(
    mapping: &Bound<'py, PyAny>,
    key: &Bound<'py, PyString>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = mapping.py();
    if let Ok(dict) = mapping.cast_exact::<PyDict>() {
        return Ok(dict
            .get_item(key)?
            .unwrap_or_else(|| py.None().into_bound(py)));
    }
    mapping.call_method1(intern!(py, "get"), (key,))
}

/// `mapping.get(key, default)` as Python calls it (an exact `dict` through its storage).
pub(crate) fn get_or<'py>(
    mapping: &Bound<'py, PyAny>,
    key: &Bound<'py, PyString>,
    default: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    if let Ok(dict) = mapping.cast_exact::<PyDict>() {
        return Ok(dict.get_item(key)?.unwrap_or_else(|| default.clone()));
    }
    mapping.call_method1(intern!(mapping.py(), "get"), (key, default))
}

/// `mapping[key] if key in mapping else None` (as `Some` / `None`): a `dict`, subclasses
/// included, read through its storage; any other mapping by its `__contains__` and
/// `__getitem__`. What the field readers do with span and event attributes, which the
/// decoders make as plain `dict`s.
pub(crate) fn lookup<'py>(
    mapping: &Bound<'py, PyAny>,
    key: &Bound<'py, PyString>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    if let Ok(dict) = mapping.cast::<PyDict>() {
        return dict.get_item(key);
    }
    if mapping.contains(key)? {
        mapping.get_item(key).map(Some)
    } else {
        Ok(None)
    }
}

/// The items of an iterable, in order (`list(value)`; an exact `list`'s read in place).
pub(crate) fn items<'py>(value: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyAny>>> {
    if let Ok(list) = value.cast_exact::<PyList>() {
        return Ok(list.iter().collect());
    }
    value.try_iter()?.collect()
}

/// The items of `value or []` (`None` and any other falsy value hold none).
pub(crate) fn items_of<'py>(value: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyAny>>> {
    if !value.is_exact_instance_of::<PyList>() && (value.is_none() || !value.is_truthy()?) {
        return Ok(Vec::new());
    }
    items(value)
}

/// `value == text` as Python compares them: the same object, an exact `str` by its
/// characters, anything else through its own comparison.
pub(crate) fn eq_text(value: &Bound<'_, PyAny>, text: &Bound<'_, PyString>) -> PyResult<bool> {
    if value.is(text) {
        return Ok(true);
    }
    if let Ok(own) = value.cast_exact::<PyString>() {
        return Ok(match (own.to_str(), text.to_str()) {
            (Ok(a), Ok(b)) => a == b,
            _ => PyAnyMethods::eq(own.as_any(), text)?,
        });
    }
    value.eq(text)
}

/// The pairs of a dict as `PyDict_Next` lends them ([`lent_pairs`]).
pub(crate) struct LentPairs<'a, 'py> {
    dict: &'a Bound<'py, PyDict>,
    at: ffi::Py_ssize_t,
}

/// `dict`'s pairs in order, each key and value lent by the dict: no reference taken or
/// released per key and value and no `PyDict_Size` per pair, as pyo3's iterator has (four
/// calls of the interpreter's reference counting and one of its size, under the stable ABI).
/// `PyDict_Next` itself stays safe whatever happens to the dict.
///
/// # Safety
///
/// A pair is valid while the dict holds it: the caller runs nothing that could change
/// `dict` (Python code) while it reads a pair it has not given references of its own
/// (`Borrowed::to_owned`).
pub(crate) unsafe fn lent_pairs<'a, 'py>(dict: &'a Bound<'py, PyDict>) -> LentPairs<'a, 'py> {
    LentPairs { dict, at: 0 }
}

impl<'a, 'py> Iterator for LentPairs<'a, 'py> {
    type Item = (Borrowed<'a, 'py, PyAny>, Borrowed<'a, 'py, PyAny>);

    fn next(&mut self) -> Option<Self::Item> {
        let mut key = std::ptr::null_mut();
        let mut value = std::ptr::null_mut();
        // SAFETY: `dict` is a live dict; `PyDict_Next` lends its key and value (no reference
        // taken), or answers 0 at the end.
        if unsafe { ffi::PyDict_Next(self.dict.as_ptr(), &mut self.at, &mut key, &mut value) } == 0
        {
            return None;
        }
        let py = self.dict.py();
        // SAFETY: live objects the dict holds, read while it is not changed (`lent_pairs`).
        Some(unsafe { (Borrowed::from_ptr(py, key), Borrowed::from_ptr(py, value)) })
    }
}
