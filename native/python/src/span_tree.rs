//! A trace's records into a `Trace` (`otel_oracles_core::span_tree`), and what joining runs
//! reads of each trace (`join_facts`).
//!
//! Both read records by attribute (`SpanRecord`s, and `serve`'s `WireSpan`s for the join
//! keys), so every caller shares them: the offline assembler builds each released trace's
//! `Trace` here in the call that releases it, `build_trace` does for everyone else.

use otel_oracles_core::span_tree::{build as build_tree, TreeSpan};
use pyo3::exceptions::PyOverflowError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PySet, PyString, PyTuple};

use crate::batch::SESSION_ATTRIBUTES;

/// `otel_oracles.model.span.Trace`, imported once.
static TRACE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// OTLP's SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK | SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK
/// (`REMOTE_PARENT_FLAGS` of `otel_oracles.model.span`).
const REMOTE_PARENT_FLAGS: i64 = 0x300;

/// A Python int as the tree compares times: within 64 bits on the fast path, else wider.
fn int_of(value: &Bound<'_, PyAny>) -> PyResult<i128> {
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
    let record = |index: &usize| read[*index].0.clone();
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
        children.set_item(&read[*parent].1, PyList::new(py, kids.iter().map(record))?)?;
    }
    let trace = TRACE.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        Ok(PyModule::import(py, "otel_oracles.model.span")?
            .getattr("Trace")?
            .unbind())
    })?;
    trace
        .bind(py)
        .call1((trace_id, ordered, roots, children, orphans, 0, incomplete))
}

/// `build_trace`'s tree: the `Trace` of `spans` (no log records attached).
#[pyfunction]
fn span_tree<'py>(
    trace_id: &Bound<'py, PyString>,
    spans: &Bound<'py, PyList>,
) -> PyResult<Bound<'py, PyAny>> {
    trace_of(trace_id.as_any(), spans, false)
}

/// `mapping.get(key)` for a dict or any other mapping.
fn lookup<'py>(
    mapping: &Bound<'py, PyAny>,
    key: &Bound<'py, PyString>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    if let Ok(dict) = mapping.cast::<PyDict>() {
        return dict.get_item(key);
    }
    if mapping.contains(key)? {
        return mapping.get_item(key).map(Some);
    }
    Ok(None)
}

/// A non-empty str value, as the joiner reads names and ids.
fn text_of<'py>(value: Option<Bound<'py, PyAny>>) -> Option<Bound<'py, PyString>> {
    let text = value?.cast_into::<PyString>().ok()?;
    (text.len().ok()? > 0).then_some(text)
}

/// What may tie a trace to others, read in one walk over its spans (`assemble._sessions`):
/// its join keys (its own id as `trace:<id>`, the traces its spans link to, and its session
/// ids as `<attribute>:<value>`), its root spans (no parent id), and its GenAI
/// `execute_tool` spans that name their tool, each as `((service, tool name), span)`.
#[pyfunction]
fn join_facts<'py>(
    trace_id: &Bound<'py, PyString>,
    spans: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PySet>, Bound<'py, PyList>, Bound<'py, PyList>)> {
    let py = trace_id.py();
    let own = trace_id.to_str()?;
    let keys = PySet::empty(py)?;
    keys.add(format!("trace:{own}"))?;
    let roots = PyList::empty(py);
    let calls = PyList::empty(py);
    let session_keys: Vec<Bound<'py, PyString>> = SESSION_ATTRIBUTES
        .iter()
        .map(|key| PyString::new(py, key))
        .collect();
    let tool_name = intern!(py, "gen_ai.tool.name");
    let operation = intern!(py, "gen_ai.operation.name");
    let service_name = intern!(py, "service.name");
    for span in spans.try_iter()? {
        let span = span?;
        let links = span.getattr(intern!(py, "links"))?;
        if links.is_truthy()? {
            for link in links.try_iter()? {
                let linked = link?.getattr(intern!(py, "trace_id"))?;
                if let Some(linked) = text_of(Some(linked)) {
                    let linked = linked.to_str()?;
                    if linked != own {
                        keys.add(format!("trace:{linked}"))?;
                    }
                }
            }
        }
        let attrs = span.getattr(intern!(py, "attributes"))?;
        for (name, key) in SESSION_ATTRIBUTES.iter().zip(&session_keys) {
            if let Some(value) = text_of(lookup(&attrs, key)?) {
                keys.add(format!("{name}:{}", value.to_str()?))?;
            }
        }
        if !span.getattr(intern!(py, "parent_span_id"))?.is_truthy()? {
            roots.append(&span)?;
        }
        if let Some(name) = text_of(lookup(&attrs, tool_name)?) {
            let is_tool = lookup(&attrs, operation)?
                .and_then(|op| op.cast_into::<PyString>().ok())
                .is_some_and(|op| op.to_str().is_ok_and(|op| op == "execute_tool"));
            if is_tool {
                let resource = span.getattr(intern!(py, "resource"))?;
                let service = lookup(&resource, service_name)?
                    .and_then(|s| s.cast_into::<PyString>().ok())
                    .unwrap_or_else(|| PyString::new(py, ""));
                let key = PyTuple::new(py, [service, name])?;
                calls.append((key, &span))?;
            }
        }
    }
    Ok((keys, roots, calls))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(span_tree, m)?)?;
    m.add_function(wrap_pyfunction!(join_facts, m)?)
}
