//! How messages point at steps (`where`, `list_steps`) and whether a step's field was
//! captured (`absent`): the one implementation of `otel_oracles.grade.evidence`'s
//! functions of those names, which Python imports from here, and which the plans call
//! directly (a grounded citation's source named per id, a call source's result tested per
//! source) instead of a Python call each.
//!
//! `where` writes the text in Rust when its parts are plain: an exact `int` index and
//! exact, UTF-8 `str` names (what the mapping gives); anything else (a `str` subclass with
//! its own `__format__`, a lone surrogate) is formatted by Python's `str.format`, as the
//! f-string did.

use std::fmt::Write as _;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyList, PyString};

use super::placeholder;
use crate::pydict::StepFields;

/// How many steps `list_steps` names before it stops listing (`evidence.MAX_LISTED`,
/// Python's name for it: `MAX_LISTED_STEPS`).
pub(crate) const MAX_LISTED: usize = 5;

/// The name `where` shows for a step: its tool, else a model call's model, else its
/// agent, else any model, else its kind (`step.tool or model or step.agent_name or
/// step.model or step.kind.value`).
pub(super) fn shown_name<'py>(step: &StepFields<'py>) -> PyResult<Bound<'py, PyAny>> {
    let py = step.step.py();
    let tool = step.get(intern!(py, "tool"))?;
    if tool.is_truthy()? {
        return Ok(tool);
    }
    let kind = step.get(intern!(py, "kind"))?;
    let model = step.get(intern!(py, "model"))?;
    if model.is_truthy()? && kind.eq(intern!(py, "generation"))? {
        return Ok(model);
    }
    let agent = step.get(intern!(py, "agent_name"))?;
    if agent.is_truthy()? {
        return Ok(agent);
    }
    if model.is_truthy()? {
        return Ok(model);
    }
    kind.getattr(intern!(py, "value"))
}

/// An exact `str`'s UTF-8 (none for a subclass or a lone surrogate).
pub(super) fn plain<'a>(value: &'a Bound<'_, PyAny>) -> Option<&'a str> {
    value.cast_exact::<PyString>().ok()?.to_str().ok()
}

/// `where(step)`: `step 3 (search_docs, span ab12...)`, or `step 3 (search_docs)` for a
/// step no span recorded.
pub(crate) fn where_text<'py>(step: &StepFields<'py>) -> PyResult<Bound<'py, PyString>> {
    let name = shown_name(step)?;
    let (index, span) = step_place(step)?;
    let mut text = String::new();
    match write_where(&name, &index, span.as_ref(), &mut text)? {
        Some(formatted) => Ok(formatted),
        None => Ok(PyString::new(step.step.py(), &text)),
    }
}

/// A step's `index`, and its span's id when a span recorded it (`source.span_id`): what
/// `where` shows of it besides its name, and what a diff's row holds of it.
pub(super) fn step_place<'py>(
    step: &StepFields<'py>,
) -> PyResult<(Bound<'py, PyAny>, Option<Bound<'py, PyAny>>)> {
    let py = step.step.py();
    let index = step.get(intern!(py, "index"))?;
    let source = step.get(intern!(py, "source"))?;
    let span = if source.is_none() {
        None
    } else {
        Some(source.getattr(intern!(py, "span_id"))?)
    };
    Ok((index, span))
}

/// `where` of the step `shown_name` names `name` and `step_place` places at `index` and
/// `span`, written at the end of `out` when its parts are plain (`None`), else the text as
/// Python's `str.format` makes it, `out` left as it was: a caller that writes a longer text
/// (a diff's line) makes no Python string of it.
pub(super) fn write_where<'py>(
    name: &Bound<'py, PyAny>,
    index: &Bound<'py, PyAny>,
    span: Option<&Bound<'py, PyAny>>,
    out: &mut String,
) -> PyResult<Option<Bound<'py, PyString>>> {
    let py = name.py();
    let number = index
        .cast_exact::<PyInt>()
        .ok()
        .and_then(|i| i.extract::<i64>().ok());
    let span_text = match span {
        None => Some(None),
        Some(span) => plain(span).map(Some),
    };
    if let (Some(number), Some(name_text), Some(span_text)) = (number, plain(name), span_text) {
        out.reserve(24 + name_text.len());
        // (Writing to a `String` cannot fail.)
        let _ = write!(out, "step {number} ({name_text}");
        if let Some(span_text) = span_text {
            out.push_str(", span ");
            out.push_str(span_text);
        }
        out.push(')');
        return Ok(None);
    }
    let format = intern!(py, "format");
    let text = match span {
        None => intern!(py, "step {} ({})").call_method1(format, (index, name))?,
        Some(span) => {
            intern!(py, "step {} ({}, span {})").call_method1(format, (index, name, span))?
        }
    };
    Ok(Some(text.cast_into::<PyString>()?))
}

/// `list_steps(steps)`: the first `MAX_LISTED` of `steps` as `where` names them, joined by
/// `", "`, then ` and N more` for the rest.
pub(crate) fn listed_steps<'py>(steps: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyString>> {
    let py = steps.py();
    let count = steps.len()?;
    let shown = PyList::empty(py);
    for i in 0..count.min(MAX_LISTED) {
        shown.append(where_text(&StepFields::new(steps.get_item(i)?))?)?;
    }
    let text = intern!(py, ", ").call_method1(intern!(py, "join"), (shown,))?;
    let text = text.cast_into::<PyString>()?;
    if count <= MAX_LISTED {
        return Ok(text);
    }
    let more = format!(" and {} more", count - MAX_LISTED);
    Ok(text.add(more)?.cast_into::<PyString>()?)
}

/// `absent(step, field)`: whether `field` of `step` was not captured (listed in
/// `step.redacted`, `None` or a placeholder).
pub(crate) fn field_absent(step: &StepFields<'_>, field: &Bound<'_, PyString>) -> PyResult<bool> {
    let py = field.py();
    if step.get(intern!(py, "redacted"))?.contains(field)? {
        return Ok(true);
    }
    placeholder(&step.get(field)?, 0)
}

/// ``step 3 (search_docs, span ab12...)``: how messages point at a step.
#[pyfunction]
#[pyo3(name = "where")]
fn where_step<'py>(step: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyString>> {
    where_text(&StepFields::new(step))
}

/// The first five of `steps` as `where` names them, then how many more there are.
#[pyfunction]
fn list_steps<'py>(steps: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyString>> {
    listed_steps(steps)
}

/// Whether `field` of `step` was not captured (None, redacted or a placeholder).
#[pyfunction]
fn absent(step: Bound<'_, PyAny>, field: &Bound<'_, PyString>) -> PyResult<bool> {
    field_absent(&StepFields::new(step), field)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("MAX_LISTED_STEPS", MAX_LISTED)?;
    m.add_function(wrap_pyfunction!(where_step, m)?)?;
    m.add_function(wrap_pyfunction!(list_steps, m)?)?;
    m.add_function(wrap_pyfunction!(absent, m)?)
}
