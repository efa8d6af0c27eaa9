//! The report's privacy filter of a result's details (`emit.scrub_details`), in the core.
//!
//! Every result a report shows (tens of thousands in a large grade, most of them passes whose
//! details are a few counts) goes through the filter, and a Python loop over each detail
//! was most of what showing a result cost. [`DetailScrub`] is the filter itself: numbers and
//! booleans are kept, values under the identifier keys are kept when identifier-shaped
//! (secret-shaped ones and others replaced), everything else dropped. What is an identifier
//! stays one Python function (`emit.safe_identifier`, the regexes that templates and
//! scrubbing share), asked here; the strings it gave back are remembered, so the same
//! detail keys and tool names of every result cost a set lookup.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PySet, PySlice, PyString, PyTuple};

/// `emit.scrub_details` with its allow-lists: see the module's text. Built once by
/// `otel_oracles.emit._explain`.
#[pyclass(module = "otel_oracles._native", name = "DetailScrub", frozen)]
struct DetailScrub {
    /// Detail keys whose string values are identifiers (`IDENTIFIER_DETAIL_KEYS`).
    identifier_keys: Py<PyFrozenSet>,
    /// `emit.safe_identifier`: a value, or `None` when it is not a short identifier free
    /// of secret shapes.
    safe_identifier: Py<PyAny>,
    /// What replaces a value that is not shown (`REDACTED`).
    redacted: Py<PyString>,
    /// `slice(0, max_items)`: the items of a list (or a dict's first pairs) shown.
    head: Py<PySlice>,
    max_items: usize,
    /// Exact `str`s `safe_identifier` gave back, up to `max_known` of them.
    known: Py<PySet>,
    max_known: usize,
}

#[pymethods]
impl DetailScrub {
    #[new]
    fn new(
        identifier_keys: Bound<'_, PyFrozenSet>,
        safe_identifier: Bound<'_, PyAny>,
        redacted: Bound<'_, PyString>,
        max_items: usize,
        max_known: usize,
    ) -> PyResult<Self> {
        let py = identifier_keys.py();
        Ok(DetailScrub {
            identifier_keys: identifier_keys.unbind(),
            safe_identifier: safe_identifier.unbind(),
            redacted: redacted.unbind(),
            head: PySlice::new(py, 0, isize::try_from(max_items)?, 1).unbind(),
            max_items,
            known: PySet::empty(py)?.unbind(),
            max_known,
        })
    }

    /// The details a report may show by default (`emit.scrub_details`): a new dict of the
    /// numbers and booleans of `details` whose keys are identifiers, and, under the
    /// identifier keys, strings, lists' first items and dicts' first name-count pairs with
    /// each string kept when an identifier, else `redacted`. Anything else is dropped.
    fn scrub<'py>(&self, details: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
        let py = details.py();
        let out = PyDict::new(py);
        if let Ok(dict) = details.cast_exact::<PyDict>() {
            for (key, value) in dict.iter() {
                self.entry(&out, &key, &value)?;
            }
        } else {
            for item in details
                .call_method0(pyo3::intern!(py, "items"))?
                .try_iter()?
            {
                let (key, value) = item?.extract::<(Bound<'py, PyAny>, Bound<'py, PyAny>)>()?;
                self.entry(&out, &key, &value)?;
            }
        }
        Ok(out)
    }
}

impl DetailScrub {
    /// `safe_identifier(value)`: an exact `str` it gave back before is not asked again.
    fn safe<'py>(&self, value: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = value.py();
        let exact = value.is_exact_instance_of::<PyString>();
        let known = self.known.bind(py);
        if exact && known.contains(value)? {
            return Ok(Some(value.clone()));
        }
        let safe = self.safe_identifier.bind(py).call1((value,))?;
        if safe.is_none() {
            return Ok(None);
        }
        if exact && safe.is(value) && known.len() < self.max_known {
            known.add(value)?;
        }
        Ok(Some(safe))
    }

    /// `safe_identifier(value) or redacted`.
    fn shown<'py>(&self, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        match self.safe(value)? {
            Some(safe) if safe.is_truthy()? => Ok(safe),
            _ => Ok(self.redacted.bind(value.py()).clone().into_any()),
        }
    }

    /// One detail into `out`, when shown.
    fn entry<'py>(
        &self,
        out: &Bound<'py, PyDict>,
        key: &Bound<'py, PyAny>,
        value: &Bound<'py, PyAny>,
    ) -> PyResult<()> {
        if self.safe(key)?.is_none() {
            return Ok(());
        }
        // Numbers and booleans (`bool` is an `int`): counts, lengths, exit codes.
        if value.is_instance_of::<PyInt>() || value.is_instance_of::<PyFloat>() {
            return out.set_item(key, value);
        }
        let py = key.py();
        if !self.identifier_keys.bind(py).contains(key)? {
            return Ok(());
        }
        if value.is_instance_of::<PyString>() {
            out.set_item(key, self.shown(value)?)
        } else if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
            let head = value.get_item(self.head.bind(py))?;
            let items = PyList::empty(py);
            for item in head.try_iter()? {
                items.append(self.shown(&item?)?)?;
            }
            out.set_item(key, items)
        } else if let Ok(dict) = value.cast::<PyDict>() {
            // name -> count (e.g. unclassified span names): its first pairs, counts only.
            let counts = PyDict::new(py);
            let pairs = if let Ok(exact) = dict.cast_exact::<PyDict>() {
                exact.items()
            } else {
                let items = dict.call_method0(pyo3::intern!(py, "items"))?;
                PyList::new(py, items.try_iter()?.collect::<PyResult<Vec<_>>>()?)?
            };
            for pair in pairs.iter().take(self.max_items) {
                let (name, n) = pair.extract::<(Bound<'py, PyAny>, Bound<'py, PyAny>)>()?;
                if n.is_instance_of::<PyInt>() {
                    counts.set_item(self.shown(&name)?, n)?;
                }
            }
            out.set_item(key, counts)
        } else {
            Ok(())
        }
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<DetailScrub>()?;
    Ok(())
}
