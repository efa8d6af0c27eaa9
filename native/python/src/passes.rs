//! Trace-level mapping passes over a trace's drafts (`otel_oracles.mapping._mapper`'s
//! `Draft` records), for `map_trace`: `assign_agents` (each draft's agent scope and
//! enclosing agent) and `flag_aggregated_usage` (a model call with model calls below it).
//! Both walk span ancestors: through `by_id` (span id -> span) and `draft_by_span` (span id
//! -> draft), Python `dict`s, so ids are hashed and compared as Python does; a parent chain
//! that loops (malformed telemetry) ends where it would repeat. Draft kinds, names and
//! flags are compared and tested as Python compares and tests them (`==`, truthiness).

use pyo3::exceptions::PyAssertionError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PySet, PyString, PyTuple};

/// The drafts of a span's ancestors, nearest first (`_ancestor_drafts`): up the parent ids
/// until an empty one, one seen before, or one not in the trace.
fn ancestor_drafts<'py>(
    span: &Bound<'py, PyAny>,
    draft_by_span: &Bound<'py, PyDict>,
    by_id: &Bound<'py, PyDict>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let py = span.py();
    let mut out = Vec::new();
    let seen = PySet::empty(py)?;
    seen.add(span.getattr(intern!(py, "span_id"))?)?;
    let mut parent_id = span.getattr(intern!(py, "parent_span_id"))?;
    while parent_id.is_truthy()? && !seen.contains(&parent_id)? {
        seen.add(&parent_id)?;
        if let Some(draft) = draft_by_span.get_item(&parent_id)? {
            out.push(draft);
        }
        let Some(parent) = by_id.get_item(&parent_id)? else {
            break;
        };
        parent_id = parent.getattr(intern!(py, "parent_span_id"))?;
    }
    Ok(out)
}

fn is_kind(draft: &Bound<'_, PyAny>, kind: &Bound<'_, PyString>) -> PyResult<bool> {
    draft.getattr(intern!(draft.py(), "kind"))?.eq(kind)
}

fn fields<'py>(draft: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    Ok(draft
        .getattr(intern!(draft.py(), "fields"))?
        .cast_into::<PyDict>()?)
}

/// A handoff whose target agent works inside its span (`delegate_works_inside`, target
/// known): it scopes the steps under it as an agent step would.
fn delegate_scope(draft: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = draft.py();
    if !is_kind(draft, intern!(py, "handoff"))? {
        return Ok(false);
    }
    let rule = draft.getattr(intern!(py, "rule"))?;
    if !rule
        .getattr(intern!(py, "delegate_works_inside"))?
        .is_truthy()?
    {
        return Ok(false);
    }
    match fields(draft)?.get_item(intern!(py, "to_agent"))? {
        Some(target) => target.is_truthy(),
        None => Ok(false),
    }
}

/// The agent a scope-making draft stands for: an agent's name, a delegation's target, when
/// it is a non-empty `str`.
fn scope_agent<'py>(draft: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = draft.py();
    let key = if is_kind(draft, intern!(py, "agent"))? {
        intern!(py, "agent_name")
    } else {
        intern!(py, "to_agent")
    };
    Ok(fields(draft)?
        .get_item(key)?
        .filter(|name| name.is_instance_of::<PyString>() && name.is_truthy().unwrap_or(false)))
}

/// `(scope, enclosing agent name)` from the span's ancestors, or `None` on a parent cycle.
/// `memo[id]` is what the descendants of span `id` see (its own agent draft included); only
/// cycle-free chains are stored, so a stored entry never depends on the start.
fn enclosing<'py>(
    span: &Bound<'py, PyAny>,
    draft_by_span: &Bound<'py, PyDict>,
    by_id: &Bound<'py, PyDict>,
    memo: &Bound<'py, PyDict>,
    top: &Bound<'py, PyTuple>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = span.py();
    let mut chain = Vec::new();
    let seen = PySet::empty(py)?;
    seen.add(span.getattr(intern!(py, "span_id"))?)?;
    let mut parent_id = span.getattr(intern!(py, "parent_span_id"))?;
    let mut context = loop {
        if !parent_id.is_truthy()? {
            break top.clone().into_any();
        }
        if let Some(known) = memo.get_item(&parent_id)? {
            break known;
        }
        if seen.contains(&parent_id)? {
            return Ok(None);
        }
        seen.add(&parent_id)?;
        chain.push(parent_id.clone());
        let Some(parent) = by_id.get_item(&parent_id)? else {
            break top.clone().into_any();
        };
        parent_id = parent.getattr(intern!(py, "parent_span_id"))?;
    };
    for span_id in chain.iter().rev() {
        if let Some(draft) = draft_by_span.get_item(span_id)? {
            let own = draft.getattr(intern!(py, "span"))?;
            if !own.is_none() {
                if is_kind(&draft, intern!(py, "agent"))? {
                    let name = fields(&draft)?.get_item(intern!(py, "agent_name"))?;
                    let name = match name {
                        Some(name) if name.is_truthy()? => name,
                        _ => context.get_item(1)?,
                    };
                    context =
                        PyTuple::new(py, [own.getattr(intern!(py, "span_id"))?, name])?.into_any();
                } else if delegate_scope(&draft)? {
                    let target = fields(&draft)?.get_item(intern!(py, "to_agent"))?;
                    context = PyTuple::new(
                        py,
                        [
                            own.getattr(intern!(py, "span_id"))?,
                            target.unwrap_or_else(|| py.None().into_bound(py)),
                        ],
                    )?
                    .into_any();
                }
            }
        }
        memo.set_item(span_id, &context)?;
    }
    Ok(Some(context))
}

/// Nearest enclosing agent per draft in one pass over the tree (`draft.scope`, the span id
/// of the enclosing agent step or delegation, "" at trace level): what a span's descendants
/// see is memoized per span id, so each ancestor chain is walked once per trace. A chain
/// with a parent cycle is not memoized: it takes the per-draft walk, whose answer depends
/// on where it starts. A non-agent draft takes the enclosing agent's name as its
/// `agent_name`; without one, a rule with deferred fields reads them
/// (`read_deferred(draft, compiled)`, Python). A handoff without `from_agent` gets the
/// enclosing agent.
#[pyfunction]
fn assign_agents<'py>(
    drafts: &Bound<'py, PyList>,
    draft_by_span: &Bound<'py, PyDict>,
    by_id: &Bound<'py, PyDict>,
    read_deferred: &Bound<'py, PyAny>,
    compiled: &Bound<'py, PyAny>,
) -> PyResult<()> {
    let py = drafts.py();
    let memo = PyDict::new(py);
    let top = PyTuple::new(
        py,
        [
            PyString::intern(py, "").into_any(),
            py.None().into_bound(py),
        ],
    )?;
    for draft in drafts.iter() {
        let span = draft.getattr(intern!(py, "span"))?;
        if span.is_none() {
            return Err(PyAssertionError::new_err(()));
        }
        let (scope, enclosing_name) = match enclosing(&span, draft_by_span, by_id, &memo, &top)? {
            Some(context) => (context.get_item(0)?, context.get_item(1)?),
            None => {
                let mut agents = Vec::new();
                for a in ancestor_drafts(&span, draft_by_span, by_id)? {
                    if is_kind(&a, intern!(py, "agent"))? || delegate_scope(&a)? {
                        agents.push(a);
                    }
                }
                let scope = match agents.first() {
                    Some(first) => {
                        let own = first.getattr(intern!(py, "span"))?;
                        if own.is_truthy()? {
                            own.getattr(intern!(py, "span_id"))?
                        } else {
                            PyString::intern(py, "").into_any()
                        }
                    }
                    None => PyString::intern(py, "").into_any(),
                };
                let mut name = py.None().into_bound(py);
                for a in &agents {
                    if let Some(found) = scope_agent(a)? {
                        name = found;
                        break;
                    }
                }
                (scope, name)
            }
        };
        draft.setattr(intern!(py, "scope"), scope)?;
        let fields = fields(&draft)?;
        if !is_kind(&draft, intern!(py, "agent"))? {
            if !enclosing_name.is_none() {
                fields.set_item(intern!(py, "agent_name"), &enclosing_name)?;
            } else {
                let deferred: isize = draft
                    .getattr(intern!(py, "rule"))?
                    .getattr(intern!(py, "deferred"))?
                    .extract()?;
                if deferred >= 0 {
                    read_deferred.call1((&draft, compiled))?;
                }
            }
        }
        if is_kind(&draft, intern!(py, "handoff"))?
            && !fields.contains(intern!(py, "from_agent"))?
            && !enclosing_name.is_none()
        {
            fields.set_item(intern!(py, "from_agent"), &enclosing_name)?;
        }
    }
    Ok(())
}

/// A model call with model calls still below it (a wrapper around several calls) is
/// flagged `usage_aggregated`, so `Trajectory.token_usage()` counts leaves only. A failed
/// attempt of the call around it (`failed_attempt`, see `_stacked`) has no usage to sum and
/// flags nothing.
#[pyfunction]
fn flag_aggregated_usage<'py>(
    drafts: &Bound<'py, PyList>,
    draft_by_span: &Bound<'py, PyDict>,
    by_id: &Bound<'py, PyDict>,
) -> PyResult<()> {
    let py = drafts.py();
    let generation = intern!(py, "generation");
    for draft in drafts.iter() {
        if !is_kind(&draft, generation)? {
            continue;
        }
        let span = draft.getattr(intern!(py, "span"))?;
        if span.is_none() {
            continue;
        }
        let attributes = draft.getattr(intern!(py, "attributes"))?;
        if attributes
            .call_method1(intern!(py, "get"), (intern!(py, "failed_attempt"),))?
            .is_truthy()?
        {
            continue;
        }
        for ancestor in ancestor_drafts(&span, draft_by_span, by_id)? {
            if is_kind(&ancestor, generation)? {
                ancestor
                    .getattr(intern!(py, "attributes"))?
                    .set_item(intern!(py, "usage_aggregated"), true)?;
            }
        }
    }
    Ok(())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(assign_agents, m)?)?;
    m.add_function(wrap_pyfunction!(flag_aggregated_usage, m)?)
}
