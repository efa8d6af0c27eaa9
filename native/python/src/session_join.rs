//! `SessionJoiner`, `delegations` and `join_keys`: the offline window that joins runs split
//! over traces (`otel_oracles_core::session_join`) and what it reads of each trace.
//!
//! What ties a trace to others is read from its records by attribute (`SpanRecord`s, and
//! `serve`'s `WireSpan`s for the join keys) in one walk; the window holds the `Trace`s
//! themselves as handles and hands back the groups that leave it, which
//! `otel_oracles.assemble._sessions` merges into one trace each.

use otel_oracles_core::model;
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
    // The session ids of the span before, per attribute: a trace's spans mostly repeat
    // them, and a key listed again ties nothing more (the keys are a set).
    let mut last_session: [Option<String>; 2] = [None, None];
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
        for ((name, key), last) in SESSION_ATTRIBUTES
            .iter()
            .zip(&session_keys)
            .zip(&mut last_session)
        {
            let Some(value) = lookup(&attrs, key)? else {
                continue;
            };
            let Ok(value) = value.cast_into::<PyString>() else {
                continue;
            };
            let value = value.to_str()?;
            if value.is_empty() || last.as_deref() == Some(value) {
                continue;
            }
            keys.push(format!("{name}:{value}"));
            *last = Some(value.to_owned());
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

/// What the window reads of one trace (`arrival`), worked out by the offline assembler from
/// the decoded spans when it releases the trace (`native_facts`), so that `add` reads no
/// record back. Holds for that one `Trace` as released.
#[pyclass(module = "otel_oracles._native", name = "JoinFacts", frozen, eq)]
#[derive(Debug, PartialEq)]
pub struct JoinFacts {
    trace_id: String,
    keys: Vec<String>,
    root: Option<AgentRoot>,
    calls: Vec<ToolCall>,
    spans: u64,
}

#[pymethods]
impl JoinFacts {
    fn __repr__(&self) -> String {
        format!("{self:?}")
    }
}

/// The `JoinFacts` of `trace` read from its records, as `SessionJoiner.add` reads them
/// when it is given none.
#[pyfunction]
fn join_facts(trace: &Bound<'_, PyAny>) -> PyResult<JoinFacts> {
    let found = arrival(trace)?;
    Ok(JoinFacts {
        trace_id: found.trace_id,
        keys: found.keys,
        root: found.root,
        calls: found.calls,
        spans: found.spans,
    })
}

/// The value of attribute `name` when it is a string (the last of repeated keys, as the
/// record's dict keeps it).
fn text_attr<'a>(attributes: &'a [model::KeyValue], name: &str) -> Option<&'a str> {
    match &attributes.iter().rev().find(|kv| kv.key == name)?.value {
        model::AnyValue::Str(text) => Some(text),
        _ => None,
    }
}

/// `service_of` on a decoded span's resource.
fn native_service(span: &model::Span) -> String {
    text_attr(&span.resource.attributes, "service.name")
        .unwrap_or_default()
        .to_owned()
}

/// `arrival`'s facts of the trace `trace_id` whose `Trace.spans` are `spans` (decoded spans,
/// in that order): the same keys, in the same order, the same agent root and tool calls as
/// `facts`, `agent_root` and `tool_calls` read from the records built of them.
pub(crate) fn native_facts(trace_id: &str, spans: &[&model::Span]) -> JoinFacts {
    let mut keys = vec![format!("trace:{trace_id}")];
    let mut last_session: [Option<&str>; 2] = [None, None];
    let mut roots = Vec::new();
    let mut calls = Vec::new();
    for &span in spans {
        for link in &span.links {
            let linked = model::hex(&link.trace_id);
            if !linked.is_empty() && linked != trace_id {
                keys.push(format!("trace:{linked}"));
            }
        }
        for (name, last) in SESSION_ATTRIBUTES.iter().zip(&mut last_session) {
            let Some(value) = text_attr(&span.attributes, name) else {
                continue;
            };
            if value.is_empty() || *last == Some(value) {
                continue;
            }
            keys.push(format!("{name}:{value}"));
            *last = Some(value);
        }
        if span.parent_span_id.is_none() {
            roots.push(span);
        }
        let tool = text_attr(&span.attributes, "gen_ai.tool.name").filter(|t| !t.is_empty());
        if let Some(name) = tool {
            if text_attr(&span.attributes, "gen_ai.operation.name") == Some("execute_tool") {
                calls.push(ToolCall {
                    trace_id: trace_id.to_owned(),
                    span_id: model::hex(&span.span_id),
                    service: native_service(span),
                    name: name.to_owned(),
                    start: i128::from(span.start_ns),
                    end: i128::from(span.end_ns),
                });
            }
        }
    }
    let root = match roots.as_slice() {
        [root] if root.links.is_empty() => {
            let operation = text_attr(&root.attributes, "gen_ai.operation.name");
            let name = AGENT_NAME_ATTRIBUTES
                .iter()
                .find_map(|key| text_attr(&root.attributes, key).filter(|n| !n.is_empty()));
            match (operation, name) {
                (Some(op), Some(name)) if AGENT_OPERATIONS.contains(&op) => Some(AgentRoot {
                    trace_id: trace_id.to_owned(),
                    span_id: model::hex(&root.span_id),
                    service: native_service(root),
                    name: name.to_owned(),
                    start: i128::from(root.start_ns),
                    end: i128::from(root.end_ns),
                }),
                _ => None,
            }
        }
        _ => None,
    };
    JoinFacts {
        trace_id: trace_id.to_owned(),
        keys,
        root,
        calls,
        spans: spans.len() as u64,
    }
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
        let arrival = match facts {
            Some(facts) => {
                let facts = facts.get();
                Arrival {
                    handle: trace.clone().unbind(),
                    trace_id: facts.trace_id.clone(),
                    keys: facts.keys.clone(),
                    root: facts.root.clone(),
                    calls: facts.calls.clone(),
                    spans: facts.spans,
                }
            }
            None => arrival(trace)?,
        };
        Ok(self.inner.add(arrival))
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
    m.add_function(wrap_pyfunction!(join_facts, m)?)?;
    m.add_class::<JoinFacts>()?;
    m.add_class::<SessionJoiner>()
}
