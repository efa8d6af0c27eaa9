//! A trace's records into a `Trace` (`otel_oracles_core::span_tree`).
//!
//! The tree is read from records by attribute, so every caller shares it: the offline
//! assembler builds each released trace's `Trace` here in the call that releases it,
//! `build_trace` does for everyone else (`span_tree`, its log records attached by
//! `log_events`).

use otel_oracles_core::span_tree::{build as build_tree, Tree, TreeSpan};
use pyo3::exceptions::PyOverflowError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyInt, PyList, PyString};

use crate::log_events::attach_to;
use crate::slots::{Fallback, SlotClass};

/// `otel_oracles.model.span.Trace`, imported once and made in its memory (`SlotClass`):
/// calling the slotted dataclass cost its argument tuple, `type.__call__` and an `__init__`
/// frame storing each field, once per trace.
static TRACE: PyOnceLock<SlotClass> = PyOnceLock::new();

/// `Trace`'s fields, in order (its `__slots__`, its `__init__`'s parameters).
const TRACE_FIELDS: [&str; 7] = [
    "trace_id",
    "spans",
    "roots",
    "children",
    "orphans",
    "unattached_logs",
    "incomplete",
];

/// OTLP's SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK | SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK
/// (`REMOTE_PARENT_FLAGS` of `otel_oracles.model.span`).
pub(crate) const REMOTE_PARENT_FLAGS: i64 = 0x300;

/// A Python int as the tree compares times: within 64 bits on the fast path, else wider.
pub(crate) fn int_of(value: &Bound<'_, PyAny>) -> PyResult<i128> {
    match value.extract::<i64>() {
        Ok(small) => Ok(i128::from(small)),
        Err(_) => value
            .extract::<i128>()
            .map_err(|_| PyOverflowError::new_err("span time beyond 128 bits")),
    }
}

/// The `Trace` of `spans` (records, arrival order): the core's tree over the records'
/// `span_id`, `parent_span_id`, `flags`, `start_ns`, `end_ns` and `scope_name`.
pub(crate) fn trace_of<'py>(
    trace_id: &Bound<'py, PyAny>,
    spans: &Bound<'py, PyList>,
    incomplete: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let py = spans.py();
    let mut read: Vec<(
        Bound<'py, PyAny>,
        Bound<'py, PyString>,
        Bound<'py, PyString>,
    )> = Vec::with_capacity(spans.len());
    let mut times: Vec<(bool, i128, i128, Bound<'py, PyString>)> = Vec::with_capacity(spans.len());
    for span in spans.iter() {
        let id = span
            .getattr(intern!(py, "span_id"))?
            .cast_into::<PyString>()?;
        let parent = span
            .getattr(intern!(py, "parent_span_id"))?
            .cast_into::<PyString>()?;
        let flags: i64 = span.getattr(intern!(py, "flags"))?.extract()?;
        let start = int_of(&span.getattr(intern!(py, "start_ns"))?)?;
        let end = int_of(&span.getattr(intern!(py, "end_ns"))?)?;
        let scope = span
            .getattr(intern!(py, "scope_name"))?
            .cast_into::<PyString>()?;
        times.push((
            flags & REMOTE_PARENT_FLAGS == REMOTE_PARENT_FLAGS,
            start,
            end,
            scope,
        ));
        read.push((span, id, parent));
    }
    let mut tree_spans: Vec<TreeSpan<&str>> = Vec::with_capacity(read.len());
    for ((_, id, parent), (remote, start, end, scope)) in read.iter().zip(&times) {
        let parent = parent.to_str()?;
        tree_spans.push(TreeSpan {
            id: id.to_str()?,
            parent: (!parent.is_empty()).then_some(parent),
            parent_is_remote: *remote,
            start: *start,
            end: *end,
            scope: scope.to_str()?,
        });
    }
    let tree = build_tree(&tree_spans);
    let records: Vec<Bound<'py, PyAny>> = read.iter().map(|(span, _, _)| span.clone()).collect();
    trace_from(
        trace_id,
        &records,
        &tree,
        |index| Ok(read[index].1.clone()),
        incomplete,
    )
}

/// The `Trace` of `records` (arrival order) laid out as `tree` (positions among them):
/// `span_id(position)` is a parent's id, the key of its `children` list.
pub(crate) fn trace_from<'py>(
    trace_id: &Bound<'py, PyAny>,
    records: &[Bound<'py, PyAny>],
    tree: &Tree,
    span_id: impl Fn(usize) -> PyResult<Bound<'py, PyString>>,
    incomplete: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let py = trace_id.py();
    let record = |index: &usize| records[*index].clone();
    let ordered = PyList::new(py, tree.ordered.iter().map(record))?;
    let roots = PyList::new(py, tree.roots.iter().map(record))?;
    let orphans = PyList::new(
        py,
        tree.roots[tree.roots.len() - tree.orphans..]
            .iter()
            .map(record),
    )?;
    let children = PyDict::new(py);
    for (parent, kids) in &tree.children {
        children.set_item(span_id(*parent)?, PyList::new(py, kids.iter().map(record))?)?;
    }
    let trace = TRACE.get_or_try_init(py, || {
        let module = PyModule::import(py, "otel_oracles.model.span")?;
        SlotClass::load(
            module.getattr("Trace")?.cast()?,
            &TRACE_FIELDS,
            Fallback::Positional,
        )
    })?;
    trace.make(
        py,
        [
            trace_id.clone(),
            ordered.into_any(),
            roots.into_any(),
            children.into_any(),
            orphans.into_any(),
            PyInt::new(py, 0).into_any(),
            PyBool::new(py, incomplete).to_owned().into_any(),
        ],
    )
}

/// `build_trace`: the `Trace` of `spans`, with `logs` (`LogRecord`s) attached as events
/// (`log_events::attach_to`).
#[pyfunction]
#[pyo3(signature = (trace_id, spans, logs=None, /))]
fn span_tree<'py>(
    trace_id: &Bound<'py, PyString>,
    spans: &Bound<'py, PyList>,
    logs: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let trace = trace_of(trace_id.as_any(), spans, false)?;
    if let Some(logs) = logs {
        attach_to(&trace, logs)?;
    }
    Ok(trace)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(span_tree, m)?)
}
