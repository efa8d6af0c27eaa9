//! The cut length of a trace (`otel_oracles.mapping._limits`, `cut_length`): the longest
//! text values among the attributes the mapping reads, and whether enough different texts
//! share that length for it to be an SDK's value length limit.
//!
//! `SourceScan` is where one rule reads a span (`CompiledRule.source_attrs`,
//! `source_prefixes`, `source_events`), made once per rule; `cut_length` reads, for every
//! drafted span (drafts read here, no Python loop), the values of its rule's sources as recorded (attributes named by a source,
//! attributes under a source's prefix, the attributes of span events a source reads, never
//! log records, which the span limits do not cut) and every `str` nested in them in `dict`
//! values, `list`s and `tuple`s (exact types; keys left out). What it decides, as
//! `_limits.py` describes it:
//!
//! - the longest text: the greatest length (in code points, as `len()` counts) of the
//!   strings holding a space;
//! - its texts: the different strings of that length, compared with their ASCII digits
//!   removed (one message with a counter is one text), counted up to `min_values`;
//! - the longest word: the greatest length of the strings without a space (ids, names,
//!   hashes), which rules a cut out when longer than the longest text.
//!
//! The cut length is the longest text's length when it is at least `min_length`, at least
//! `min_values` different texts have it and no word is longer. Only the values of matching
//! keys are read (a decoder may convert values lazily), each string's length first: most
//! are shorter than the longest text seen and need no more.

use std::collections::HashSet;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyFrozenSet, PyList, PyString, PyTuple};

/// Where one rule reads a span: attribute keys, key prefixes, span events.
#[pyclass(module = "otel_oracles._native", name = "SourceScan", frozen)]
pub struct SourceScan {
    /// The keys, looked up as Python looks them up.
    keys_py: Py<PyFrozenSet>,
    /// The prefixes that are UTF-8 (a key that is UTF-8 can start with no other).
    prefixes: Vec<String>,
    /// All the prefixes, as Python's `str.startswith` takes them, for a key that is no UTF-8.
    prefixes_py: Py<PyTuple>,
    events: Vec<EventSource>,
}

/// One span-event source: the event names (the UTF-8 ones, and all as Python compares them)
/// and the attribute read (`None`: all of them).
struct EventSource {
    names: HashSet<String>,
    names_py: Py<PyFrozenSet>,
    key: Option<Py<PyString>>,
}

/// An event source as Python hands it over: its names and the attribute read.
type EventArg<'py> = (Vec<Bound<'py, PyString>>, Option<Bound<'py, PyString>>);

/// The UTF-8 texts among `items` (each a `str`).
fn utf8_texts<'py>(items: impl Iterator<Item = Bound<'py, PyAny>>) -> PyResult<Vec<String>> {
    let mut out = Vec::new();
    for item in items {
        if let Ok(text) = item.cast::<PyString>()?.to_str() {
            out.push(text.to_owned());
        }
    }
    Ok(out)
}

#[pymethods]
impl SourceScan {
    /// `keys`: attributes read (`attr`, `attrs`); `prefixes`: flattened attributes' prefixes
    /// (`attr_prefix`, matched as `str.startswith` matches); `events`: per span-event source
    /// its names and the attribute it reads, `None` for all of them.
    #[new]
    fn new(
        keys: Bound<'_, PyFrozenSet>,
        prefixes: Vec<Bound<'_, PyString>>,
        events: Vec<EventArg<'_>>,
    ) -> PyResult<Self> {
        let py = keys.py();
        let mut scan_events = Vec::new();
        for (names, key) in events {
            let names_py = PyFrozenSet::new(py, &names)?.unbind();
            let own = utf8_texts(names.into_iter().map(Bound::into_any))?;
            scan_events.push(EventSource {
                names: own.into_iter().collect(),
                names_py,
                key: key.map(Bound::unbind),
            });
        }
        Ok(Self {
            keys_py: keys.unbind(),
            prefixes: utf8_texts(prefixes.iter().map(|p| p.clone().into_any()))?,
            prefixes_py: PyTuple::new(py, &prefixes)?.unbind(),
            events: scan_events,
        })
    }
}

impl SourceScan {
    /// Whether the attribute `key` is one of the sources (`key in keys or
    /// key.startswith(prefixes)`).
    fn reads(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Ok(text) = key.cast::<PyString>() else {
            return Ok(false);
        };
        let py = key.py();
        // The set as Python looks it up: a key `str` caches its hash, and decoders make one
        // object per key, so this is one probe per key, no text hashed.
        if self.keys_py.bind(py).contains(key)? {
            return Ok(true);
        }
        if let Ok(text) = text.to_str() {
            // A UTF-8 key starts with no prefix that is no UTF-8.
            return Ok(self.prefixes.iter().any(|p| text.starts_with(p.as_str())));
        }
        let prefixes = self.prefixes_py.bind(py);
        if prefixes.is_empty() {
            return Ok(false);
        }
        key.call_method1(intern!(py, "startswith"), (prefixes,))?
            .is_truthy()
    }
}

/// The longest texts seen.
struct Longest {
    longest: usize,
    longest_word: usize,
    /// The different texts of the longest length, digits removed, at most `min_values`.
    at_longest: Vec<Vec<u8>>,
    min_values: usize,
}

impl Longest {
    /// Every `str` in `value`, nested in `dict` values, `list`s and `tuple`s.
    fn see(&mut self, value: Bound<'_, PyAny>) -> PyResult<()> {
        let mut stack = vec![value];
        while let Some(item) = stack.pop() {
            if item.is_exact_instance_of::<PyString>() {
                let size = item.len()?;
                if size >= self.longest {
                    self.see_text(item.cast::<PyString>()?, size)?;
                }
            } else if let Ok(dict) = item.cast_exact::<PyDict>() {
                stack.extend(dict.values());
            } else if let Ok(list) = item.cast_exact::<PyList>() {
                stack.extend(list.iter());
            } else if let Ok(tuple) = item.cast_exact::<PyTuple>() {
                stack.extend(tuple.iter());
            }
        }
        Ok(())
    }

    fn see_text(&mut self, text: &Bound<'_, PyString>, size: usize) -> PyResult<()> {
        let (spaced, bytes) = match text.to_str() {
            Ok(own) => (own.contains(' '), None),
            Err(_) => {
                // Lone surrogates: Python's test, and its bytes with the surrogates kept.
                let py = text.py();
                let encoded = text
                    .call_method1(intern!(py, "encode"), ("utf-8", "surrogatepass"))?
                    .cast_into::<PyBytes>()?;
                (text.contains(" ")?, Some(encoded.as_bytes().to_vec()))
            }
        };
        if !spaced {
            self.longest_word = self.longest_word.max(size);
            return Ok(());
        }
        if size < self.longest || (size == self.longest && self.at_longest.len() >= self.min_values)
        {
            return Ok(());
        }
        let raw = match &bytes {
            Some(bytes) => bytes.as_slice(),
            None => text.to_str()?.as_bytes(),
        };
        let key: Vec<u8> = raw
            .iter()
            .copied()
            .filter(|b| !b.is_ascii_digit())
            .collect();
        if size > self.longest {
            self.longest = size;
            self.at_longest = vec![key];
        } else if !self.at_longest.contains(&key) {
            self.at_longest.push(key);
        }
        Ok(())
    }
}

/// The values of `attributes` (a mapping) under the keys `scan` reads, each seen.
fn see_attributes(
    longest: &mut Longest,
    scan: &SourceScan,
    attributes: &Bound<'_, PyAny>,
) -> PyResult<()> {
    if let Ok(dict) = attributes.cast_exact::<PyDict>() {
        for (key, value) in dict.iter() {
            if scan.reads(&key)? {
                longest.see(value)?;
            }
        }
        return Ok(());
    }
    for key in attributes.try_iter()? {
        let key = key?;
        if scan.reads(&key)? {
            longest.see(attributes.get_item(&key)?)?;
        }
    }
    Ok(())
}

/// The values of the span events `scan` reads (log-based events left out), each seen.
fn see_events(longest: &mut Longest, scan: &SourceScan, span: &Bound<'_, PyAny>) -> PyResult<()> {
    if scan.events.is_empty() {
        return Ok(());
    }
    let py = span.py();
    let events = span.getattr(intern!(py, "events"))?;
    if events.len().unwrap_or(1) == 0 {
        return Ok(());
    }
    for event in events.try_iter()? {
        let event = event?;
        let name = event.getattr(intern!(py, "name"))?;
        let text = name.cast::<PyString>().ok().map(|n| n.to_str());
        for source in &scan.events {
            let named = match &text {
                Some(Ok(text)) => source.names.contains(*text),
                _ => source.names_py.bind(py).contains(&name)?, // as Python compares it
            };
            if !named || event.getattr(intern!(py, "from_log"))?.is_truthy()? {
                continue;
            }
            let attributes = event.getattr(intern!(py, "attributes"))?;
            match &source.key {
                None => {
                    let values = match attributes.cast_exact::<PyDict>() {
                        Ok(dict) => dict.values().into_any(),
                        Err(_) => attributes.call_method0(intern!(py, "values"))?,
                    };
                    for value in values.try_iter()? {
                        longest.see(value?)?;
                    }
                }
                Some(key) => {
                    let value = attributes.call_method1(intern!(py, "get"), (key.bind(py),))?;
                    longest.see(value)?;
                }
            }
        }
    }
    Ok(())
}

/// The cut length of the spans of `drafts` (each a draft of `mapping._mapper`: its `span`,
/// `None` for a call seen only in a model's messages, `synthesized`, and its rule's
/// `source_scan`; synthesized drafts and drafts without a span are left out), or `None` when
/// they show none (the module's doc says how).
#[pyfunction]
pub(crate) fn cut_length(
    drafts: &Bound<'_, PyAny>,
    min_values: usize,
    min_length: usize,
) -> PyResult<Option<usize>> {
    let py = drafts.py();
    let mut longest = Longest {
        longest: 0,
        longest_word: 0,
        at_longest: Vec::new(),
        min_values,
    };
    for draft in drafts.try_iter()? {
        let draft = draft?;
        let span = draft.getattr(intern!(py, "span"))?;
        if span.is_none() || draft.getattr(intern!(py, "synthesized"))?.is_truthy()? {
            continue;
        }
        let scan = draft
            .getattr(intern!(py, "rule"))?
            .getattr(intern!(py, "source_scan"))?;
        let scan = scan.cast::<SourceScan>()?.get();
        let attributes = span.getattr(intern!(py, "attributes"))?;
        see_attributes(&mut longest, scan, &attributes)?;
        see_events(&mut longest, scan, &span)?;
    }
    let cut = longest.longest >= min_length
        && longest.at_longest.len() >= min_values
        && longest.longest_word <= longest.longest;
    Ok(cut.then_some(longest.longest))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SourceScan>()?;
    m.add_function(wrap_pyfunction!(cut_length, m)?)?;
    Ok(())
}
