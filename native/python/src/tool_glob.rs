//! `model.tool_name.first_match` asked by the plans without a Python call: the core's
//! `ToolGlobs` answers for patterns without a character class and names that are exact,
//! UTF-8 `str`s within `MAX_TOOL_NAME`; anything else (a class, a `str` subclass, a lone
//! surrogate, a name of another type) is asked of Python's `first_match`, which the plan
//! was handed, so every answer is that function's.
//!
//! A plan asks it of every call of every trajectory, and a run calls a few tools: the
//! answers are remembered per name (as Python's `first_match` remembers them), up to
//! `REMEMBERED_NAMES` names a plan (trace content may name tools without end), so an ask
//! is a hash lookup (~150 instructions, where the Python call was ~900 and the core's
//! matching ~600 with its segments split).

use std::sync::Mutex;

use otel_oracles_core::hashing::{FastMap, FastMapExt};
use otel_oracles_core::tool_glob::ToolGlobs;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};

/// The most names whose answers one `NamedBy` remembers; past them, answers are worked
/// out again each time.
const REMEMBERED_NAMES: usize = 1024;

/// One tuple of contract tool names (globs) as a plan asks whether they name a recorded
/// tool.
pub(crate) struct NamedBy {
    patterns: Py<PyTuple>,
    /// The core's plan, when every pattern is an exact `str` without a class.
    plan: Option<ToolGlobs>,
    /// `first_match(recorded, patterns, unknown_namespace_matches)`, Python's.
    first_match: Py<PyAny>,
    /// Per name (an exact UTF-8 `str`), its answer without and with
    /// `unknown_namespace_matches`, once known.
    known: Mutex<FastMap<Box<str>, [Option<bool>; 2]>>,
}

impl NamedBy {
    pub(crate) fn new(patterns: Bound<'_, PyTuple>, first_match: Bound<'_, PyAny>) -> Self {
        let strs: Option<Vec<Bound<'_, PyString>>> = patterns
            .iter()
            .map(|p| p.cast_exact::<PyString>().ok().cloned())
            .collect();
        let plan = strs.and_then(|strs| {
            let texts: Option<Vec<&str>> = strs.iter().map(|s| s.to_str().ok()).collect();
            ToolGlobs::of(texts?)
        });
        Self {
            patterns: patterns.unbind(),
            plan,
            first_match: first_match.unbind(),
            known: Mutex::new(FastMap::new()),
        }
    }

    /// `first_match(recorded, patterns, unknown_namespace_matches) is not None`.
    pub(crate) fn names(
        &self,
        recorded: &Bound<'_, PyAny>,
        unknown_namespace_matches: bool,
    ) -> PyResult<bool> {
        if recorded.is_none() {
            return Ok(false); // no name: none (`first_match`'s first rule)
        }
        let mode = usize::from(unknown_namespace_matches);
        let text = recorded
            .cast_exact::<PyString>()
            .ok()
            .and_then(|s| s.to_str().ok());
        if let Some(text) = text {
            let known = self.known.lock().ok();
            if let Some(hit) = known.and_then(|k| k.get(text).and_then(|answers| answers[mode])) {
                return Ok(hit);
            }
        }
        let hit = match self.answer(recorded, unknown_namespace_matches) {
            Some(found) => found.is_some(),
            None => {
                let py = recorded.py();
                let patterns = self.patterns.bind(py);
                !self
                    .first_match
                    .bind(py)
                    .call1((recorded, patterns, unknown_namespace_matches))?
                    .is_none()
            }
        };
        if let (Some(text), Ok(mut known)) = (text, self.known.lock()) {
            if let Some(answers) = known.get_mut(text) {
                answers[mode] = Some(hit);
            } else if known.len() < REMEMBERED_NAMES {
                let mut answers = [None; 2];
                answers[mode] = Some(hit);
                known.insert(text.into(), answers);
            }
        }
        Ok(hit)
    }

    /// The core's answer (the index of the first pattern naming `recorded`), when it has
    /// one.
    fn answer(&self, recorded: &Bound<'_, PyAny>, lax: bool) -> Option<Option<usize>> {
        if recorded.is_none() {
            return Some(None); // no name: none (`first_match`'s first rule)
        }
        let text = recorded.cast_exact::<PyString>().ok()?.to_str().ok()?;
        self.plan.as_ref()?.first_match(text, lax)
    }
}

/// The core's `first_match(recorded, patterns, unknown_namespace_matches)`: `(index,)` of
/// the first pattern naming `recorded`, `()` for none, or `None` when Python's answers
/// (a class in a pattern, a name that is no exact UTF-8 `str`, past `MAX_TOOL_NAME` bytes
/// or ending in a line break).
#[pyfunction]
#[pyo3(signature = (recorded, patterns, unknown_namespace_matches=false, /))]
fn tool_first_match<'py>(
    recorded: &Bound<'py, PyAny>,
    patterns: &Bound<'py, PyTuple>,
    unknown_namespace_matches: bool,
) -> PyResult<Option<Bound<'py, PyTuple>>> {
    let py = recorded.py();
    let named = NamedBy::new(patterns.clone(), py.None().into_bound(py));
    match named.answer(recorded, unknown_namespace_matches) {
        Some(Some(index)) => PyTuple::new(py, [index]).map(Some),
        Some(None) => Ok(Some(PyTuple::empty(py))),
        None => Ok(None),
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("MAX_TOOL_NAME", otel_oracles_core::tool_glob::MAX_TOOL_NAME)?;
    m.add_function(wrap_pyfunction!(tool_first_match, m)?)
}
