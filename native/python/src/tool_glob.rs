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
//!
//! The evidence's selections (`Evidence.calls_of`, the final-answer calls) are asked per
//! trajectory with a names tuple of a contract or of the conventions: their `NamedBy` is
//! kept per tuple for the process (`kept`, up to `KEPT_TUPLES` tuples), so its answers
//! outlive the trajectory that first asked them.

use std::sync::Mutex;

use otel_oracles_core::hashing::{FastMap, FastMapExt};
use otel_oracles_core::tool_glob::{ToolGlobs, MAX_TOOL_NAME};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString, PyTuple};

/// The most names whose answers one `NamedBy` remembers; past them, answers are worked
/// out again each time.
const REMEMBERED_NAMES: usize = 1024;

/// The most names tuples `kept` keeps a `NamedBy` for; past them, a tuple's is made per
/// ask. The tuples come from contracts and conventions (a contract set names a few dozen:
/// its forbidden and allowed tools, the final-answer tools), not from traces, so a small
/// table holds a run's; more is a program making tuples per call, whose answers a kept
/// table would only hold on to for the process (each `NamedBy` up to `REMEMBERED_NAMES`
/// names).
const KEPT_TUPLES: usize = 64;

/// What `first_match(name, patterns, mode)` answered for one name: no pattern named it,
/// or one did and the pattern returned is empty (falsy: the text `""`) or not.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Answer {
    None,
    Empty,
    Named,
}

/// One tuple of contract tool names (globs) as a plan asks whether they name a recorded
/// tool.
pub(crate) struct NamedBy {
    patterns: Py<PyTuple>,
    /// The core's plan, when every pattern is an exact `str` without a class.
    plan: Option<ToolGlobs>,
    /// Per pattern of `plan`, whether it is the empty text (`first_match` returns the
    /// pattern: an empty one is a match that tests false).
    empty: Vec<bool>,
    /// `first_match(recorded, patterns, unknown_namespace_matches)`, Python's.
    first_match: Py<PyAny>,
    /// Per name (an exact UTF-8 `str`), its answer without and with
    /// `unknown_namespace_matches`, once known.
    known: Mutex<FastMap<Box<str>, [Option<Answer>; 2]>>,
}

impl NamedBy {
    pub(crate) fn new(patterns: Bound<'_, PyTuple>, first_match: Bound<'_, PyAny>) -> Self {
        let strs: Option<Vec<Bound<'_, PyString>>> = patterns
            .iter()
            .map(|p| p.cast_exact::<PyString>().ok().cloned())
            .collect();
        let mut empty = Vec::new();
        let plan = strs.and_then(|strs| {
            let texts: Option<Vec<&str>> = strs.iter().map(|s| s.to_str().ok()).collect();
            let texts = texts?;
            empty = texts.iter().map(|t| t.is_empty()).collect();
            ToolGlobs::of(texts)
        });
        Self {
            patterns: patterns.unbind(),
            plan,
            empty,
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
        Ok(self.ask(recorded, unknown_namespace_matches)? != Answer::None)
    }

    /// `bool(first_match(recorded, patterns, unknown_namespace_matches))`: as `names`,
    /// but a match of an empty pattern tests false (what `Evidence.calls_of` selects by).
    pub(crate) fn names_truly(
        &self,
        recorded: &Bound<'_, PyAny>,
        unknown_namespace_matches: bool,
    ) -> PyResult<bool> {
        Ok(self.ask(recorded, unknown_namespace_matches)? == Answer::Named)
    }

    /// `first_match(recorded, patterns, unknown_namespace_matches)`'s answer, remembered
    /// per name.
    fn ask(
        &self,
        recorded: &Bound<'_, PyAny>,
        unknown_namespace_matches: bool,
    ) -> PyResult<Answer> {
        if recorded.is_none() {
            return Ok(Answer::None); // no name: none (`first_match`'s first rule)
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
            Some(None) => Answer::None,
            Some(Some(index)) if self.empty.get(index) == Some(&true) => Answer::Empty,
            Some(Some(_)) => Answer::Named,
            None => {
                let py = recorded.py();
                let patterns = self.patterns.bind(py);
                let found = self.first_match.bind(py).call1((
                    recorded,
                    patterns,
                    unknown_namespace_matches,
                ))?;
                if found.is_none() {
                    Answer::None
                } else if found.is_truthy()? {
                    Answer::Named
                } else {
                    Answer::Empty
                }
            }
        };
        if let (Some(text), Ok(mut known)) = (text, self.known.lock()) {
            if let Some(answers) = known.get_mut(text) {
                answers[mode] = Some(hit);
            } else if known.len() < REMEMBERED_NAMES && text.len() <= MAX_TOOL_NAME {
                // A name past the core's own limit is answered by Python every time: the
                // memo lives as long as the process, and names come from traces.
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

/// A `NamedBy` as a Python object, so that `kept`'s table (a `dict`, keyed by the names
/// tuple as Python compares tuples) can hold it.
#[pyclass(frozen)]
pub(crate) struct KeptNamedBy {
    named: NamedBy,
}

impl KeptNamedBy {
    pub(crate) fn named(&self) -> &NamedBy {
        &self.named
    }
}

/// The `NamedBy` of `patterns` for the process: one per names tuple (equal tuples share
/// it), so each name is matched once per tuple, not once per trajectory (the evidence's
/// selections, ~16,000 `first_match` asks a grade before). A tuple is kept with the
/// `first_match` it was first asked with; asked with another, or past `KEPT_TUPLES`
/// tuples, or unhashable, it gets a `NamedBy` of its own for the one ask.
pub(crate) fn kept<'py>(
    patterns: &Bound<'py, PyTuple>,
    first_match: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, KeptNamedBy>> {
    static KEPT: PyOnceLock<Py<PyDict>> = PyOnceLock::new();
    let py = patterns.py();
    let table = KEPT.get_or_init(py, || PyDict::new(py).unbind()).bind(py);
    let found = table.get_item(patterns);
    if let Ok(Some(found)) = &found {
        if let Ok(kept) = found.cast::<KeptNamedBy>() {
            if kept.get().named.first_match.bind(py).is(first_match) {
                return Ok(kept.clone());
            }
        }
    }
    let made = Bound::new(
        py,
        KeptNamedBy {
            named: NamedBy::new(patterns.clone(), first_match.clone()),
        },
    )?;
    if matches!(found, Ok(None)) && table.len() < KEPT_TUPLES {
        table.set_item(patterns, &made)?;
    }
    Ok(made)
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
    m.add("KEPT_TUPLES", KEPT_TUPLES)?;
    m.add_function(wrap_pyfunction!(tool_first_match, m)?)
}
