//! What the evidence probes of `otel_oracles.grade.evidence` compute per trajectory: the
//! placeholder test (`is_placeholder`, the one implementation of
//! `otel_oracles_core::placeholder` over Python values) and the steps sorted by what the
//! checks select (`step_groups`, read as `evidence.StepGroups`).
//!
//! Both read the values as Python holds them and call no Python code: a `str` (or a
//! subclass: its characters, never its methods) is read code point by code point through
//! the stable ABI, a `dict` or `list` (or a subclass) through its own storage.

use otel_oracles_core::placeholder::is_placeholder_text;
use pyo3::exceptions::PyRecursionError;
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFrozenSet, PyList, PyString, PyTuple};

/// Deepest nesting of lists and dicts `is_placeholder` descends into. Python's recursive
/// version stopped at its recursion limit, about 500 levels, with a `RecursionError`; this
/// one answers to twice that depth and raises the same error past it (a cycle, say).
const MAX_DEPTH: usize = 1000;

/// Whether the text of `text` is a placeholder (`is_placeholder_text`), read code point by
/// code point: a long text is decided by its first character without being encoded.
fn text_is_placeholder(text: &Bound<'_, PyString>) -> bool {
    let ptr = text.as_ptr();
    // SAFETY: `ptr` is a live `str` (a `PyString` cast succeeded) held by `text` for the
    // whole call; every index read is below its length.
    let len = unsafe { ffi::PyUnicode_GetLength(ptr) };
    let Ok(len) = usize::try_from(len) else {
        return false; // unreachable for a str: GetLength fails only for other types
    };
    is_placeholder_text(len, |i| {
        // SAFETY: as above; `i < len` fits `Py_ssize_t`, which `len` came from.
        unsafe { ffi::PyUnicode_ReadChar(ptr, i as ffi::Py_ssize_t) }
    })
}

fn placeholder(value: &Bound<'_, PyAny>, depth: usize) -> PyResult<bool> {
    if value.is_none() {
        return Ok(true);
    }
    if let Ok(text) = value.cast::<PyString>() {
        return Ok(text_is_placeholder(text));
    }
    if depth >= MAX_DEPTH {
        return Err(PyRecursionError::new_err(
            "maximum recursion depth exceeded while checking for a placeholder",
        ));
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        if dict.is_empty() {
            return Ok(false);
        }
        for (_, item) in dict.iter() {
            if !placeholder(&item, depth + 1)? {
                return Ok(false);
            }
        }
        return Ok(true);
    }
    if let Ok(list) = value.cast::<PyList>() {
        if list.is_empty() {
            return Ok(false);
        }
        for item in list.iter() {
            if !placeholder(&item, depth + 1)? {
                return Ok(false);
            }
        }
        return Ok(true);
    }
    Ok(false)
}

/// True for a redaction placeholder or an empty string (content dropped, not content):
/// `None`; a `str` that `otel_oracles_core::placeholder` calls one; a non-empty `dict` whose
/// values, or a non-empty `list` whose items, are all placeholders. An empty `dict` or
/// `list` is a real value (a tool called with no arguments), as is anything else.
#[pyfunction]
fn is_placeholder(value: &Bound<'_, PyAny>) -> PyResult<bool> {
    placeholder(value, 0)
}

/// Which group a step's kind puts it in.
#[derive(Clone, Copy, PartialEq)]
enum Group {
    Call,
    Generation,
    Agent,
    Handoff,
    Other,
}

/// Sorts kinds into groups: the members given (the usual case: a step's kind is the
/// `StepKind` member itself) by identity, anything else as Python compares it (`kind in
/// toolish`, then `kind == generation` ...), so a kind given as its plain string value sorts
/// as its member does.
struct Kinds<'py> {
    toolish: Bound<'py, PyFrozenSet>,
    members: Vec<(Bound<'py, PyAny>, Group)>,
}

impl<'py> Kinds<'py> {
    fn group(&self, kind: &Bound<'py, PyAny>) -> PyResult<Group> {
        if let Some((_, group)) = self.members.iter().find(|(member, _)| member.is(kind)) {
            return Ok(*group);
        }
        if self.toolish.contains(kind)? {
            return Ok(Group::Call);
        }
        for (member, group) in &self.members {
            if *group != Group::Call && kind.eq(member)? {
                return Ok(*group);
            }
        }
        Ok(Group::Other)
    }
}

/// A step's field: from its instance `__dict__` (where a `Record` keeps its fields), else
/// as an attribute.
fn field<'py>(
    step: &Bound<'py, PyAny>,
    fields: Option<&Bound<'py, PyDict>>,
    name: &Bound<'py, PyString>,
) -> PyResult<Bound<'py, PyAny>> {
    if let Some(found) = fields.map(|f| f.get_item(name)).transpose()?.flatten() {
        return Ok(found);
    }
    step.getattr(name)
}

/// `otel_oracles.grade.evidence.group_steps`: `steps` sorted by what the checks select, in
/// one pass and in step order: `(calls, generations, agents, handoffs, nameless,
/// tool_spans, all_raw)`. Calls are the steps whose kind is in `toolish`; `nameless` are
/// the calls with no `raw` object whose `tool` is a placeholder; `tool_spans` says whether
/// a call is not `synthesized`; `all_raw` whether there are steps and each has a `raw`.
#[pyfunction]
fn step_groups<'py>(
    steps: &Bound<'py, PyAny>,
    toolish: &Bound<'py, PyFrozenSet>,
    generation: &Bound<'py, PyAny>,
    agent: &Bound<'py, PyAny>,
    handoff: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyTuple>> {
    let py = steps.py();
    let mut members: Vec<(Bound<'py, PyAny>, Group)> =
        toolish.iter().map(|kind| (kind, Group::Call)).collect();
    members.push((generation.clone(), Group::Generation));
    members.push((agent.clone(), Group::Agent));
    members.push((handoff.clone(), Group::Handoff));
    let kinds = Kinds {
        toolish: toolish.clone(),
        members,
    };
    let (kind_key, raw_key) = (intern!(py, "kind"), intern!(py, "raw"));
    let (synthesized_key, tool_key) = (intern!(py, "synthesized"), intern!(py, "tool"));
    let dict_key = intern!(py, "__dict__");
    let mut calls = Vec::new();
    let mut generations = Vec::new();
    let mut agents = Vec::new();
    let mut handoffs = Vec::new();
    let mut nameless = Vec::new();
    let mut tool_spans = false;
    let mut all_raw = true;
    let mut any = false;
    for step in steps.try_iter()? {
        let step = step?;
        any = true;
        let values = step.getattr(dict_key).ok();
        let values = values.as_ref().and_then(|v| v.cast::<PyDict>().ok());
        let raw_none = field(&step, values, raw_key)?.is_none();
        if raw_none {
            all_raw = false;
        }
        match kinds.group(&field(&step, values, kind_key)?)? {
            Group::Call => {
                if !field(&step, values, synthesized_key)?.is_truthy()? {
                    tool_spans = true;
                }
                if raw_none && placeholder(&field(&step, values, tool_key)?, 0)? {
                    nameless.push(step.clone());
                }
                calls.push(step);
            }
            Group::Generation => generations.push(step),
            Group::Agent => agents.push(step),
            Group::Handoff => handoffs.push(step),
            Group::Other => {}
        }
    }
    let groups = [calls, generations, agents, handoffs, nameless];
    let mut items: Vec<Bound<'py, PyAny>> = Vec::with_capacity(7);
    for group in groups {
        items.push(PyTuple::new(py, group)?.into_any());
    }
    items.push(PyBool::new(py, tool_spans).to_owned().into_any());
    items.push(PyBool::new(py, any && all_raw).to_owned().into_any());
    PyTuple::new(py, items)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(is_placeholder, m)?)?;
    m.add_function(wrap_pyfunction!(step_groups, m)?)
}
