//! `SessionJoiner`, `delegations` and `join_keys`: the offline window that joins runs split
//! over traces (`otel_oracles_core::session_join`) and what it reads of each trace.
//!
//! What ties a trace to others is read from its records by attribute (`SpanRecord`s, and
//! `serve`'s `WireSpan`s for the join keys) in one walk; the window holds the `Trace`s
//! themselves as handles and hands back the groups that leave it, which
//! `otel_oracles.assemble._sessions` merges into one trace each.

use otel_oracles_core::session_join::{self as core, AgentRoot, Arrival, Joiner, ToolCall};
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PySet, PyString};

use crate::batch::SESSION_ATTRIBUTES;
use crate::span_tree::int_of;

/// Where a root span names the agent whose run its trace is (`gen_ai.agent.name`, else
/// `gen_ai.agent.id`).
const AGENT_NAME_ATTRIBUTES: [&str; 2] = ["gen_ai.agent.name", "gen_ai.agent.id"];
/// The GenAI operations of a span that runs an agent.
const AGENT_OPERATIONS: [&str; 2] = ["invoke_agent", "create_agent"];

/// What the window reads of one trace's spans.
struct Facts<'py> {
    keys: Vec<String>,
    /// Spans without a parent id.
    roots: Vec<Bound<'py, PyAny>>,
    /// GenAI `execute_tool` spans naming their tool: (service, tool name, span).
    calls: Vec<(String, String, Bound<'py, PyAny>)>,
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

/// A str value (`isinstance(value, str)`), as text; non-empty only when `non_empty`.
fn text(value: Option<Bound<'_, PyAny>>, non_empty: bool) -> PyResult<Option<String>> {
    let Some(value) = value else { return Ok(None) };
    let Ok(value) = value.cast_into::<PyString>() else {
        return Ok(None);
    };
    let value = value.to_str()?;
    Ok((!non_empty || !value.is_empty()).then(|| value.to_owned()))
}

/// `resource["service.name"]` when it is a str, else `""`.
fn service_of(span: &Bound<'_, PyAny>) -> PyResult<String> {
    let py = span.py();
    let resource = span.getattr(intern!(py, "resource"))?;
    Ok(text(lookup(&resource, intern!(py, "service.name"))?, false)?.unwrap_or_default())
}

/// One walk over `spans` of the trace `trace_id`: its join keys (its own id as
/// `trace:<id>`, the traces its spans link to, its session ids as `<attribute>:<value>`),
/// root spans and tool calls.
fn facts<'py>(trace_id: &str, spans: &Bound<'py, PyAny>) -> PyResult<Facts<'py>> {
    let py = spans.py();
    let mut keys = vec![format!("trace:{trace_id}")];
    let mut roots = Vec::new();
    let mut calls = Vec::new();
    let session_keys: Vec<Bound<'py, PyString>> = SESSION_ATTRIBUTES
        .iter()
        .map(|key| PyString::new(py, key))
        .collect();
    let tool_name = intern!(py, "gen_ai.tool.name");
    let operation = intern!(py, "gen_ai.operation.name");
    for span in spans.try_iter()? {
        let span = span?;
        let links = span.getattr(intern!(py, "links"))?;
        if links.is_truthy()? {
            for link in links.try_iter()? {
                let linked = text(Some(link?.getattr(intern!(py, "trace_id"))?), true)?;
                if let Some(linked) = linked.filter(|linked| linked != trace_id) {
                    keys.push(format!("trace:{linked}"));
                }
            }
        }
        let attrs = span.getattr(intern!(py, "attributes"))?;
        for (name, key) in SESSION_ATTRIBUTES.iter().zip(&session_keys) {
            if let Some(value) = text(lookup(&attrs, key)?, true)? {
                keys.push(format!("{name}:{value}"));
            }
        }
        if !span.getattr(intern!(py, "parent_span_id"))?.is_truthy()? {
            roots.push(span.clone());
        }
        if let Some(name) = text(lookup(&attrs, tool_name)?, true)? {
            if text(lookup(&attrs, operation)?, false)?.as_deref() == Some("execute_tool") {
                calls.push((service_of(&span)?, name, span));
            }
        }
    }
    Ok(Facts { keys, roots, calls })
}

/// The trace as an agent's run started as a root: its one root span (linking nowhere,
/// since links join already) is a GenAI agent span naming its agent.
fn agent_root(trace_id: &str, roots: &[Bound<'_, PyAny>]) -> PyResult<Option<AgentRoot>> {
    let [root] = roots else { return Ok(None) };
    let py = root.py();
    if root.getattr(intern!(py, "links"))?.is_truthy()? {
        return Ok(None);
    }
    let attrs = root.getattr(intern!(py, "attributes"))?;
    let operation = text(lookup(&attrs, intern!(py, "gen_ai.operation.name"))?, false)?;
    if !operation.is_some_and(|op| AGENT_OPERATIONS.contains(&op.as_str())) {
        return Ok(None);
    }
    let mut name = None;
    for key in AGENT_NAME_ATTRIBUTES {
        name = text(lookup(&attrs, &PyString::new(py, key))?, true)?;
        if name.is_some() {
            break;
        }
    }
    let Some(name) = name else { return Ok(None) };
    Ok(Some(AgentRoot {
        trace_id: trace_id.to_owned(),
        span_id: root.getattr(intern!(py, "span_id"))?.extract()?,
        service: service_of(root)?,
        name,
        start: int_of(&root.getattr(intern!(py, "start_ns"))?)?,
        end: int_of(&root.getattr(intern!(py, "end_ns"))?)?,
    }))
}

/// The `ToolCall`s of `facts` in the trace `trace_id`.
fn tool_calls(trace_id: &str, facts: Facts<'_>) -> PyResult<Vec<ToolCall>> {
    let mut out = Vec::with_capacity(facts.calls.len());
    for (service, name, span) in facts.calls {
        let py = span.py();
        out.push(ToolCall {
            trace_id: trace_id.to_owned(),
            span_id: span.getattr(intern!(py, "span_id"))?.extract()?,
            service,
            name,
            start: int_of(&span.getattr(intern!(py, "start_ns"))?)?,
            end: int_of(&span.getattr(intern!(py, "end_ns"))?)?,
        });
    }
    Ok(out)
}

/// A trace as the window takes it: its `trace_id`, its join facts and its span count.
fn arrival(trace: &Bound<'_, PyAny>) -> PyResult<Arrival<Py<PyAny>>> {
    let py = trace.py();
    let trace_id: String = trace.getattr(intern!(py, "trace_id"))?.extract()?;
    let spans = trace.getattr(intern!(py, "spans"))?;
    let count = spans.len()?;
    let mut found = facts(&trace_id, &spans)?;
    let root = agent_root(&trace_id, &found.roots)?;
    let keys = std::mem::take(&mut found.keys);
    let calls = tool_calls(&trace_id, found)?;
    Ok(Arrival {
        handle: trace.clone().unbind(),
        trace_id,
        keys,
        root,
        calls,
        spans: count as u64,
    })
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

    /// Let `trace` into the window; the groups that leave it.
    fn add(&mut self, trace: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<Py<PyAny>>>> {
        Ok(self.inner.add(arrival(trace)?))
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
#[pyfunction]
fn delegations<'py>(traces: &Bound<'py, PyList>) -> PyResult<Bound<'py, PyDict>> {
    let py = traces.py();
    let mut agents = Vec::new();
    let mut calls = Vec::new();
    for trace in traces.iter() {
        let trace_id: String = trace.getattr(intern!(py, "trace_id"))?.extract()?;
        let found = facts(&trace_id, &trace.getattr(intern!(py, "spans"))?)?;
        agents.extend(agent_root(&trace_id, &found.roots)?);
        calls.extend(tool_calls(&trace_id, found)?);
    }
    let out = PyDict::new(py);
    if agents.is_empty() {
        return Ok(out);
    }
    for (agent, call) in core::delegations(&agents, &calls) {
        out.set_item(&agents[agent].span_id, &calls[call].span_id)?;
    }
    Ok(out)
}

/// What may tie the trace `trace_id` (of `spans`) to others (see `facts`).
#[pyfunction]
fn join_keys<'py>(
    trace_id: &Bound<'py, PyString>,
    spans: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PySet>> {
    let keys = facts(trace_id.to_str()?, spans)?.keys;
    PySet::new(trace_id.py(), keys)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(delegations, m)?)?;
    m.add_function(wrap_pyfunction!(join_keys, m)?)?;
    m.add_class::<SessionJoiner>()
}
