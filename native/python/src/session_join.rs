//! `SessionJoiner`, `delegations` and `join_keys`: the offline window that joins runs split
//! over traces (`otel_oracles_core::session_join`) and what it reads of each trace.
//!
//! What ties a trace to others is read by the core's one walk (`session_join::facts`):
//! here over Python records (`SpanRecord`s, and `serve`'s `WireSpan`s for the join keys)
//! through `Record`, the core's `JoinSpan` on a record; at an offline release over the
//! decoded spans (`JoinFacts::of_decoded`). The window holds the `Trace`s themselves as
//! handles and hands back the groups that leave it, which `otel_oracles.assemble._sessions`
//! merges into one trace each.

use otel_oracles_core::session_join::{self as core, Facts, JoinAttr, JoinSpan, Joiner};
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PySet, PyString};
use std::sync::Arc;

use crate::pydict::lookup;
use crate::span_tree::int_of;

/// The key of `attr` as an interned Python str.
fn key_of(py: Python<'_>, attr: JoinAttr) -> &Bound<'_, PyString> {
    match attr {
        JoinAttr::ConversationId => intern!(py, JoinAttr::ConversationId.key()),
        JoinAttr::SessionId => intern!(py, JoinAttr::SessionId.key()),
        JoinAttr::ToolName => intern!(py, JoinAttr::ToolName.key()),
        JoinAttr::OperationName => intern!(py, JoinAttr::OperationName.key()),
        JoinAttr::AgentName => intern!(py, JoinAttr::AgentName.key()),
        JoinAttr::AgentId => intern!(py, JoinAttr::AgentId.key()),
    }
}

/// A Python span record (`SpanRecord`, or `serve`'s `WireSpan`) as the core's walk reads
/// it: `links` (each with a `trace_id`), `attributes` and `resource` as mappings, a str
/// value being one that is `isinstance(value, str)`.
struct Record<'py> {
    span: Bound<'py, PyAny>,
    /// Its `attributes`, read once: the walk looks several keys up.
    attributes: Bound<'py, PyAny>,
}

impl<'py> Record<'py> {
    fn new(span: Bound<'py, PyAny>) -> PyResult<Self> {
        let attributes = span.getattr(intern!(span.py(), "attributes"))?;
        Ok(Self { span, attributes })
    }

    fn links(&self) -> PyResult<Bound<'py, PyAny>> {
        self.span.getattr(intern!(self.span.py(), "links"))
    }
}

impl JoinSpan for Record<'_> {
    type Error = PyErr;

    fn each_linked_trace(&self, mut f: impl FnMut(&str)) -> PyResult<()> {
        let links = self.links()?;
        if !links.is_truthy()? {
            return Ok(());
        }
        let py = self.span.py();
        for link in links.try_iter()? {
            if let Ok(linked) = link?.getattr(intern!(py, "trace_id"))?.cast::<PyString>() {
                f(linked.to_str()?);
            }
        }
        Ok(())
    }

    fn has_links(&self) -> PyResult<bool> {
        self.links()?.is_truthy()
    }

    fn with_text_attr<R>(&self, attr: JoinAttr, f: impl FnOnce(Option<&str>) -> R) -> PyResult<R> {
        let value = lookup(&self.attributes, key_of(self.span.py(), attr))?;
        match value
            .as_ref()
            .and_then(|value| value.cast::<PyString>().ok())
        {
            Some(value) => Ok(f(Some(value.to_str()?))),
            None => Ok(f(None)),
        }
    }

    fn is_root(&self) -> PyResult<bool> {
        Ok(!self
            .span
            .getattr(intern!(self.span.py(), "parent_span_id"))?
            .is_truthy()?)
    }

    fn span_id(&self) -> PyResult<Arc<str>> {
        let id = self.span.getattr(intern!(self.span.py(), "span_id"))?;
        Ok(Arc::from(id.cast::<PyString>()?.to_str()?))
    }

    fn service(&self) -> PyResult<String> {
        let py = self.span.py();
        let resource = self.span.getattr(intern!(py, "resource"))?;
        let service = lookup(&resource, intern!(py, "service.name"))?;
        match service
            .as_ref()
            .and_then(|value| value.cast::<PyString>().ok())
        {
            Some(service) => Ok(service.to_str()?.to_owned()),
            None => Ok(String::new()),
        }
    }

    fn times(&self) -> PyResult<(i128, i128)> {
        let py = self.span.py();
        Ok((
            int_of(&self.span.getattr(intern!(py, "start_ns"))?)?,
            int_of(&self.span.getattr(intern!(py, "end_ns"))?)?,
        ))
    }
}

/// The core's walk (`session_join::facts`) over the records `spans` of the trace `trace_id`.
fn record_facts(trace_id: &str, spans: &Bound<'_, PyAny>) -> PyResult<Facts> {
    core::facts(
        trace_id,
        spans.try_iter()?.map(|span| span.and_then(Record::new)),
    )
}

/// The `Facts` of a `Trace`, read from its records.
fn trace_facts(trace: &Bound<'_, PyAny>) -> PyResult<Facts> {
    let py = trace.py();
    let trace_id = trace.getattr(intern!(py, "trace_id"))?;
    let trace_id = trace_id.cast::<PyString>()?.to_str()?;
    record_facts(trace_id, &trace.getattr(intern!(py, "spans"))?)
}

/// What the window reads of one trace (the core's `Facts`), worked out by the offline
/// assembler from the decoded spans when it releases the trace, so that `add` reads no
/// record back. Holds for that one `Trace` as released.
#[pyclass(module = "otel_oracles._native", name = "JoinFacts", frozen, eq)]
#[derive(Debug, PartialEq)]
pub struct JoinFacts(Facts);

impl JoinFacts {
    /// The facts of the trace `trace_id` whose decoded spans are `spans` (in `Trace.spans`
    /// order).
    pub(crate) fn of_decoded(trace_id: &str, spans: &[&otel_oracles_core::model::Span]) -> Self {
        Self(core::decoded_facts(trace_id, spans))
    }
}

#[pymethods]
impl JoinFacts {
    fn __repr__(&self) -> String {
        format!("{:?}", self.0)
    }
}

/// The `JoinFacts` of `trace` read from its records, as `SessionJoiner.add` reads them
/// when it is given none.
#[pyfunction]
fn join_facts(trace: &Bound<'_, PyAny>) -> PyResult<JoinFacts> {
    trace_facts(trace).map(JoinFacts)
}

/// The window of `join_sessions`: `add` a `Trace`, get the groups of traces (each one run,
/// in arrival order) that leave it.
#[pyclass(module = "otel_oracles._native", name = "SessionJoiner")]
pub struct SessionJoiner {
    inner: Joiner<Py<PyAny>>,
}

#[pymethods]
impl SessionJoiner {
    #[new]
    fn new(window_spans: i64) -> PyResult<Self> {
        let window = u64::try_from(window_spans).map_err(|_| {
            PyValueError::new_err(format!("window_spans must be >= 0, got {window_spans}"))
        })?;
        Ok(Self {
            inner: Joiner::new(window),
        })
    }

    /// Let `trace` into the window; the groups that leave it. `facts`: the trace's
    /// `JoinFacts` from its release, when the caller has them (else they are read from the
    /// trace's records).
    #[pyo3(signature = (trace, facts=None))]
    fn add(
        &mut self,
        trace: &Bound<'_, PyAny>,
        facts: Option<&Bound<'_, JoinFacts>>,
    ) -> PyResult<Vec<Vec<Py<PyAny>>>> {
        // The window copies what it keeps of the facts; a release's are only lent.
        let handle = trace.clone().unbind();
        Ok(match facts {
            Some(facts) => self.inner.add(handle, &facts.get().0),
            None => self.inner.add(handle, &trace_facts(trace)?),
        })
    }

    /// Every group left, in window order (end of input).
    fn flush(&mut self) -> Vec<Vec<Py<PyAny>>> {
        self.inner.flush()
    }

    /// Agent roots and tool calls waiting in the window for a partner.
    #[getter]
    fn waiting(&self) -> usize {
        self.inner.waiting()
    }
}

/// Root span id of an agent trace -> span id of the tool call that ran it, among `traces`
/// (the members of one joined run), for every agent trace exactly one call fits and that
/// call no other agent trace.
pub(crate) fn delegations_of<'py>(traces: &Bound<'py, PyList>) -> PyResult<Bound<'py, PyDict>> {
    let py = traces.py();
    let mut agents = Vec::new();
    let mut calls = Vec::new();
    for trace in traces.iter() {
        let found = trace_facts(&trace)?;
        agents.extend(found.root);
        calls.extend(found.calls);
    }
    let out = PyDict::new(py);
    if agents.is_empty() {
        return Ok(out);
    }
    for (agent, call) in core::delegations(&agents, &calls) {
        out.set_item(&*agents[agent].span_id, &*calls[call].span_id)?;
    }
    Ok(out)
}

/// What may tie the trace `trace_id` (of `spans`) to others (the keys of the core's
/// `session_join::facts`).
#[pyfunction]
fn join_keys<'py>(
    trace_id: &Bound<'py, PyString>,
    spans: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PySet>> {
    let keys = record_facts(trace_id.to_str()?, spans)?.keys;
    PySet::new(trace_id.py(), keys)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(join_keys, m)?)?;
    m.add_function(wrap_pyfunction!(join_facts, m)?)?;
    m.add_class::<JoinFacts>()?;
    m.add_class::<SessionJoiner>()
}
