//! Trace-level mapping passes over a trace's drafts (`otel_oracles.mapping._mapper`'s
//! `Draft` records), for `map_trace`: `assign_agents` (each draft's agent scope and
//! enclosing agent) and `flag_aggregated_usage` (a model call with model calls below it).
//! Both walk span ancestors: through `by_id` (span id -> span) and `draft_by_span` (span id
//! -> draft), Python `dict`s, so ids are hashed and compared as Python does; a parent chain
//! that loops (malformed telemetry) ends where it would repeat. Draft kinds, names and
//! flags are compared and tested as Python compares and tests them (`==`, truthiness).
//!
//! A trace decides its shape, so every pass costs time about linear in its spans whatever
//! that shape is: a chain 20,000 deep, a cycle of parent ids, 10,000 agents beside 10,000
//! tool spans of one parent. Walks stop where what they look for is found or was worked
//! out before (`first_in_chain`, `reached`), sibling tools are searched by time
//! (`SiblingTools`), handoff targets by binary search; `tests/mapping/test_hostile_shapes.py`
//! grades such traces in a subprocess under time and memory bounds.

use pyo3::exceptions::PyAssertionError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PySet, PyString, PyTuple};

use crate::draft::{
    draft_attr, draft_fields, draft_held, draft_set, kind_is, Kind, ATTRIBUTES, FIELDS, FOLLOWS,
    KIND, REDACTED, RULE, SCOPE, SPAN, STATUS, SYNTHESIZED,
};
use crate::linking::{field_items, nanos, parts, requested_of};
use crate::pydict::{eq_text, get, items};
use crate::slots::{span, span_held};

/// Visit the drafts of a span's ancestors, nearest first (`_ancestor_drafts`): up the
/// parent ids until an empty one, one seen before, or one not in the trace, or until
/// `visit` returns `true` (found what it looked for: the rest of the chain is not read, so
/// a caller that stops at the nearest agent costs its distance, not the whole depth).
fn walk_ancestor_drafts<'py>(
    span: &Bound<'py, PyAny>,
    draft_by_span: &Bound<'py, PyDict>,
    by_id: &Bound<'py, PyDict>,
    mut visit: impl FnMut(Bound<'py, PyAny>) -> PyResult<bool>,
) -> PyResult<()> {
    let py = span.py();
    let seen = PySet::empty(py)?;
    seen.add(span_held(span, span::SPAN_ID, intern!(py, "span_id"))?)?;
    let mut parent_id =
        span_held(span, span::PARENT_SPAN_ID, intern!(py, "parent_span_id"))?.into_bound();
    while parent_id.is_truthy()? && !seen.contains(&parent_id)? {
        seen.add(&parent_id)?;
        if let Some(draft) = draft_by_span.get_item(&parent_id)? {
            if visit(draft)? {
                return Ok(());
            }
        }
        let Some(parent) = by_id.get_item(&parent_id)? else {
            break;
        };
        parent_id =
            span_held(&parent, span::PARENT_SPAN_ID, intern!(py, "parent_span_id"))?.into_bound();
    }
    Ok(())
}

/// `A(id)`: the first span id in `[id] + ancestors(id)` whose draft satisfies `pred`
/// (memoized in `memo`: id -> that id, or `None`), read as `walk_ancestor_drafts` reads
/// ancestors. Each id is worked out once per memo, a parent cycle included: on a cycle
/// `A` is the first match going round it from the id, `None` when nothing on it matches.
/// So the first matching ancestor of a span `x` is `A(parent of x)`, unless that is `x`
/// itself (only on a cycle: nothing else on it matches), for every span of a trace in
/// time linear in its spans; walking each span's chain cost the square of a cycle's length
/// (a ring of 2,000 parent ids took 8.5 s to map, 10,000 would take minutes).
fn first_in_chain<'py>(
    start: &Bound<'py, PyAny>,
    draft_by_span: &Bound<'py, PyDict>,
    by_id: &Bound<'py, PyDict>,
    memo: &Bound<'py, PyDict>,
    pred: &mut impl FnMut(&Bound<'py, PyAny>) -> PyResult<bool>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = start.py();
    if let Some(known) = memo.get_item(start)? {
        return Ok(Some(known).filter(|k| !k.is_none()));
    }
    // Up from `start` until an id already worked out, the chain's end, or an id met before.
    let mut path: Vec<Bound<'py, PyAny>> = Vec::new();
    let on_path = PyDict::new(py); // id -> position in `path`
    let mut id = start.clone();
    let mut above: Option<Bound<'py, PyAny>> = None; // A of the id past the path's end
    let mut cycle_from: Option<usize> = None;
    loop {
        if let Some(known) = memo.get_item(&id)? {
            above = Some(known).filter(|k| !k.is_none());
            break;
        }
        if let Some(at) = on_path.get_item(&id)? {
            cycle_from = Some(at.extract()?);
            break;
        }
        on_path.set_item(&id, path.len())?;
        path.push(id.clone());
        let Some(span) = by_id.get_item(&id)? else {
            break;
        };
        let parent =
            span_held(&span, span::PARENT_SPAN_ID, intern!(py, "parent_span_id"))?.into_bound();
        if !parent.is_truthy()? {
            break;
        }
        id = parent;
    }
    let mut matches = Vec::with_capacity(path.len());
    for id in &path {
        matches.push(match draft_by_span.get_item(id)? {
            Some(draft) => pred(&draft)?,
            None => false,
        });
    }
    let mut end = path.len();
    if let Some(from) = cycle_from {
        // The cycle is path[from..]: going round it, each id's first match.
        // `A` of its last id is the first match from its first id on: the lowest match.
        let cycle = from..path.len();
        let mut next = cycle.clone().find(|&i| matches[i]).map(|i| path[i].clone());
        for i in cycle.rev() {
            if matches[i] {
                next = Some(path[i].clone());
            }
            let value = next.clone().unwrap_or_else(|| py.None().into_bound(py));
            memo.set_item(&path[i], value)?;
        }
        above = next;
        end = from;
    }
    for i in (0..end).rev() {
        if matches[i] {
            above = Some(path[i].clone());
        }
        let value = above.clone().unwrap_or_else(|| py.None().into_bound(py));
        memo.set_item(&path[i], value)?;
    }
    Ok(memo.get_item(start)?.filter(|k| !k.is_none()))
}

/// A handoff whose target agent works inside its span (`delegate_works_inside`, target
/// known): it scopes the steps under it as an agent step would.
fn delegate_scope(draft: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = draft.py();
    if !kind_is(draft, Kind::Handoff)? {
        return Ok(false);
    }
    let rule = draft_held(draft, RULE, intern!(py, "rule"))?;
    if !rule
        .getattr(intern!(py, "delegate_works_inside"))?
        .is_truthy()?
    {
        return Ok(false);
    }
    match draft_fields(draft)?.get_item(intern!(py, "to_agent"))? {
        Some(target) => target.is_truthy(),
        None => Ok(false),
    }
}

/// The agent a scope-making draft stands for: an agent's name, a delegation's target, when
/// it is a non-empty `str`.
fn scope_agent<'py>(draft: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = draft.py();
    let key = if kind_is(draft, Kind::Agent)? {
        intern!(py, "agent_name")
    } else {
        intern!(py, "to_agent")
    };
    Ok(draft_fields(draft)?
        .get_item(key)?
        .filter(|name| name.is_instance_of::<PyString>() && name.is_truthy().unwrap_or(false)))
}

/// Item `at` of a context `(scope, agent name)`: a tuple's slot read in place (an item
/// read by `PyObject_GetItem` made an `int` of the index first), any other object (none is
/// stored: `enclosing` makes every context) by its own `[]`.
fn context_item<'py>(context: &Bound<'py, PyAny>, at: usize) -> PyResult<Bound<'py, PyAny>> {
    match context.cast::<PyTuple>() {
        Ok(tuple) => tuple.get_item(at),
        Err(_) => context.get_item(at),
    }
}

/// `(scope, enclosing agent name)` from the span's ancestors, or `None` on a parent cycle
/// (its ids, and those leading into it, remembered in `looping`).
/// `memo[id]` is what the descendants of span `id` see (its own agent draft included); only
/// cycle-free chains are stored, so a stored entry never depends on the start.
fn enclosing<'py>(
    span: &Bound<'py, PyAny>,
    draft_by_span: &Bound<'py, PyDict>,
    by_id: &Bound<'py, PyDict>,
    memo: &Bound<'py, PyDict>,
    looping: &Bound<'py, PySet>,
    top: &Bound<'py, PyTuple>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = span.py();
    let mut chain = Vec::new();
    // The ids walked, for the cycle test: made on the first parent the memo does not hold
    // (most walks end at once, on a memoized parent, and need none).
    let mut seen: Option<Bound<'py, PySet>> = None;
    let own = span_held(span, span::SPAN_ID, intern!(py, "span_id"))?;
    let mut parent_id =
        span_held(span, span::PARENT_SPAN_ID, intern!(py, "parent_span_id"))?.into_bound();
    let mut context = loop {
        if !parent_id.is_truthy()? {
            break top.clone().into_any();
        }
        if let Some(known) = memo.get_item(&parent_id)? {
            break known;
        }
        let seen = match &seen {
            Some(walked) => walked.clone(),
            None => {
                let made = PySet::empty(py)?;
                made.add(&*own)?;
                seen = Some(made.clone());
                made
            }
        };
        if seen.contains(&parent_id)? || looping.contains(&parent_id)? {
            // Every id walked leads into the cycle (none of them is memoized): a later
            // walk reaching one of them stops there, instead of going round it again.
            looping.add(&own)?;
            for span_id in chain {
                looping.add(span_id)?;
            }
            return Ok(None);
        }
        seen.add(&parent_id)?;
        chain.push(parent_id.clone());
        let Some(parent) = by_id.get_item(&parent_id)? else {
            break top.clone().into_any();
        };
        parent_id =
            span_held(&parent, span::PARENT_SPAN_ID, intern!(py, "parent_span_id"))?.into_bound();
    };
    for span_id in chain.iter().rev() {
        if let Some(draft) = draft_by_span.get_item(span_id)? {
            let own = draft_held(&draft, SPAN, intern!(py, "span"))?;
            if !own.is_none() {
                if kind_is(&draft, Kind::Agent)? {
                    let name = draft_fields(&draft)?.get_item(intern!(py, "agent_name"))?;
                    let name = match name {
                        Some(name) if name.is_truthy()? => name,
                        _ => context_item(&context, 1)?,
                    };
                    context = PyTuple::new(
                        py,
                        [
                            span_held(&own, span::SPAN_ID, intern!(py, "span_id"))?.into_bound(),
                            name,
                        ],
                    )?
                    .into_any();
                } else if delegate_scope(&draft)? {
                    let target = draft_fields(&draft)?.get_item(intern!(py, "to_agent"))?;
                    context = PyTuple::new(
                        py,
                        [
                            span_held(&own, span::SPAN_ID, intern!(py, "span_id"))?.into_bound(),
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
    let looping = PySet::empty(py)?;
    let (scope_memo, name_memo) = (PyDict::new(py), PyDict::new(py));
    let mut agentish = |d: &Bound<'py, PyAny>| -> PyResult<bool> {
        Ok(kind_is(d, Kind::Agent)? || delegate_scope(d)?)
    };
    let mut named = |d: &Bound<'py, PyAny>| -> PyResult<bool> {
        Ok((kind_is(d, Kind::Agent)? || delegate_scope(d)?) && scope_agent(d)?.is_some())
    };
    let top = PyTuple::new(
        py,
        [
            PyString::intern(py, "").into_any(),
            py.None().into_bound(py),
        ],
    )?;
    for draft in drafts.iter() {
        let span = draft_held(&draft, SPAN, intern!(py, "span"))?;
        if span.is_none() {
            return Err(PyAssertionError::new_err(()));
        }
        let (scope, enclosing_name) =
            match enclosing(&span, draft_by_span, by_id, &memo, &looping, &top)? {
                Some(context) => (context_item(&context, 0)?, context_item(&context, 1)?),
                None => {
                    // A parent cycle: the first agent (or delegation) among the ancestors, and
                    // the first of those naming its agent, each worked out once per trace.
                    let own = span_held(&span, span::SPAN_ID, intern!(py, "span_id"))?;
                    let parent =
                        span_held(&span, span::PARENT_SPAN_ID, intern!(py, "parent_span_id"))?;
                    let (mut scope_of, mut name_of) = (None, None);
                    if parent.is_truthy()? {
                        scope_of = first_in_chain(
                            &parent,
                            draft_by_span,
                            by_id,
                            &scope_memo,
                            &mut agentish,
                        )?;
                        name_of =
                            first_in_chain(&parent, draft_by_span, by_id, &name_memo, &mut named)?;
                    }
                    let not_own =
                        |id: Option<Bound<'py, PyAny>>| -> PyResult<Option<Bound<'py, PyAny>>> {
                            match id {
                                Some(id) if !id.eq(&own)? => draft_by_span.get_item(&id),
                                _ => Ok(None),
                            }
                        };
                    let scope = match not_own(scope_of)? {
                        Some(first) => {
                            let own = draft_held(&first, SPAN, intern!(py, "span"))?;
                            if own.is_truthy()? {
                                span_held(&own, span::SPAN_ID, intern!(py, "span_id"))?.into_bound()
                            } else {
                                PyString::intern(py, "").into_any()
                            }
                        }
                        None => PyString::intern(py, "").into_any(),
                    };
                    let name = match not_own(name_of)? {
                        Some(a) => scope_agent(&a)?.unwrap_or_else(|| py.None().into_bound(py)),
                        None => py.None().into_bound(py),
                    };
                    (scope, name)
                }
            };
        draft_set(&draft, SCOPE, intern!(py, "scope"), &scope)?;
        let fields = draft_fields(&draft)?;
        if !kind_is(&draft, Kind::Agent)? {
            if !enclosing_name.is_none() {
                fields.set_item(intern!(py, "agent_name"), &enclosing_name)?;
            } else {
                let deferred: isize = draft_held(&draft, RULE, intern!(py, "rule"))?
                    .getattr(intern!(py, "deferred"))?
                    .extract()?;
                if deferred >= 0 {
                    read_deferred.call1((&draft, compiled))?;
                }
            }
        }
        if kind_is(&draft, Kind::Handoff)?
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
    let usage_aggregated = intern!(py, "usage_aggregated");
    let flag = |d: &Bound<'py, PyAny>| {
        draft_held(d, ATTRIBUTES, intern!(py, "attributes"))?.set_item(usage_aggregated, true)
    };
    let flagged = |d: &Bound<'py, PyAny>| -> PyResult<bool> {
        let attributes = draft_held(d, ATTRIBUTES, intern!(py, "attributes"))?;
        match get(&attributes, usage_aggregated)? {
            v if v.is_none() => Ok(false),
            v => v.is_truthy(),
        }
    };
    // Span ids from which every model call up the chain is flagged.
    let reached = PySet::empty(py)?;
    for draft in drafts.iter() {
        if !kind_is(&draft, Kind::Generation)? {
            continue;
        }
        let span = draft_held(&draft, SPAN, intern!(py, "span"))?;
        if span.is_none() {
            continue;
        }
        let attributes = draft_held(&draft, ATTRIBUTES, intern!(py, "attributes"))?;
        if get(&attributes, intern!(py, "failed_attempt"))?.is_truthy()? {
            continue;
        }
        // Up the ancestors, flagging each model call, until the chain's end, an id met
        // before on this walk, or one `reached` (every model call from there up is
        // flagged already): each id is walked past about once per trace, where walking
        // every chain whole cost the square of its depth (a cycle of parent ids: its
        // length).
        let own = span_held(&span, span::SPAN_ID, intern!(py, "span_id"))?;
        let seen = PySet::empty(py)?;
        seen.add(&own)?;
        let mut walked = Vec::new();
        let mut parent_id =
            span_held(&span, span::PARENT_SPAN_ID, intern!(py, "parent_span_id"))?.into_bound();
        let mut back_to_start = false;
        while parent_id.is_truthy()? && !reached.contains(&parent_id)? {
            if seen.contains(&parent_id)? {
                back_to_start = parent_id.eq(&own)?;
                break;
            }
            seen.add(&parent_id)?;
            walked.push(parent_id.clone());
            if let Some(ancestor) = draft_by_span.get_item(&parent_id)? {
                if kind_is(&ancestor, Kind::Generation)? {
                    flag(&ancestor)?;
                }
            }
            let Some(parent) = by_id.get_item(&parent_id)? else {
                break;
            };
            parent_id = span_held(&parent, span::PARENT_SPAN_ID, intern!(py, "parent_span_id"))?
                .into_bound();
        }
        // Back at its start (a cycle through this span), the ids walked have it above
        // them: they are done only once it is flagged too.
        let start_done = match draft_by_span.get_item(&own)? {
            Some(d) => !kind_is(&d, Kind::Generation)? || flagged(&d)?,
            None => true,
        };
        if !back_to_start || start_done {
            for id in walked {
                reached.add(id)?;
            }
        }
    }
    Ok(())
}

/// A span time read as a number (Python `int`s compare as `i128`s do); `None` for anything
/// else, which the caller then compares through Python.
fn time(span: &Bound<'_, PyAny>, key: &Bound<'_, PyString>) -> PyResult<Option<i128>> {
    Ok(span.getattr(key)?.extract::<i128>().ok())
}

/// The tool steps beside one agent run (the children of one span), for "the one sibling
/// tool step whose span starts before the agent's and ends after": sorted by start, with
/// the greatest and second greatest end of every prefix, each agent is answered by one
/// binary search. Looking at every sibling for every agent cost their product: 10,000
/// agents beside 10,000 tool spans of one parent took 67 s to grade, 100,000 of each hours.
/// `None` when a time is not an integer: then the siblings are compared one by one.
struct SiblingTools(Option<SortedTools>);

struct SortedTools {
    /// Start times, ascending.
    starts: Vec<i128>,
    /// For the first `i + 1` tools by start: (greatest end, its position in the siblings'
    /// list, second greatest end), ends equal to the greatest counted as second too.
    best: Vec<(i128, usize, i128)>,
}

impl SiblingTools {
    fn new(
        siblings: &Bound<'_, PyList>,
        span_key: &Bound<'_, PyString>,
        start_ns: &Bound<'_, PyString>,
        end_ns: &Bound<'_, PyString>,
    ) -> PyResult<Self> {
        let mut tools = Vec::with_capacity(siblings.len());
        for (at, d) in siblings.iter().enumerate() {
            let own = draft_held(&d, SPAN, span_key)?;
            if own.is_none() {
                continue;
            }
            match (time(&own, start_ns)?, time(&own, end_ns)?) {
                (Some(start), Some(end)) => tools.push((start, end, at)),
                _ => return Ok(Self(None)),
            }
        }
        tools.sort_by_key(|&(start, _, _)| start);
        let mut best = Vec::with_capacity(tools.len());
        let (mut first, mut at_first, mut second) = (i128::MIN, 0, i128::MIN);
        for &(_, end, at) in &tools {
            if end >= first {
                (second, first, at_first) = (first, end, at);
            } else if end > second {
                second = end;
            }
            best.push((first, at_first, second));
        }
        let starts = tools.iter().map(|&(start, _, _)| start).collect();
        Ok(Self(Some(SortedTools { starts, best })))
    }

    /// The one sibling tool whose span holds `span` in time, if exactly one does.
    fn holding<'py>(
        &self,
        siblings: &Bound<'py, PyList>,
        span: &Bound<'py, PyAny>,
        span_key: &Bound<'py, PyString>,
        start_ns: &Bound<'py, PyString>,
        end_ns: &Bound<'py, PyString>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        if let (Some(sorted), Some(start), Some(end)) =
            (&self.0, time(span, start_ns)?, time(span, end_ns)?)
        {
            let before = sorted.starts.partition_point(|&s| s <= start);
            let Some(&(first, at, second)) = before.checked_sub(1).map(|i| &sorted.best[i]) else {
                return Ok(None);
            };
            return Ok(if first >= end && second < end {
                Some(siblings.get_item(at)?)
            } else {
                None
            });
        }
        let mut found = Vec::new();
        for d in siblings.iter() {
            let own = draft_held(&d, SPAN, span_key)?;
            if !own.is_none()
                && span_held(&own, span::START_NS, start_ns)?.le(span_held(
                    span,
                    span::START_NS,
                    start_ns,
                )?)?
                && span_held(span, span::END_NS, end_ns)?.le(span_held(
                    &own,
                    span::END_NS,
                    end_ns,
                )?)?
            {
                found.push(d);
            }
        }
        Ok(if found.len() == 1 { found.pop() } else { None })
    }
}

/// Rules with `agent_inside_is_delegation`: a tool step whose span directly holds a span
/// mapped to an agent step ran that agent (an agent called as a tool), or whose span is the
/// one sibling tool span whose time holds an agent run opened beside it, or that holds the
/// agent's own definition step (an `other` step whose span names the same agent in
/// `gen_ai.agent.name` / `.id`): it becomes a handoff to that agent (`to_agent` unless
/// set), keeping the tool's fields. Tools and `other` steps are kept in Python `dict`s by
/// span id, as `_mapper` kept them.
#[pyfunction]
fn tools_running_agents(drafts: &Bound<'_, PyList>) -> PyResult<()> {
    let py = drafts.py();
    let (kind_key, span_key) = (intern!(py, "kind"), intern!(py, "span"));
    let (span_id, parent_key) = (intern!(py, "span_id"), intern!(py, "parent_span_id"));
    let tools = PyDict::new(py);
    for d in drafts.iter() {
        if draft_attr(&d, KIND, kind_key)?.eq(intern!(py, "tool_call"))?
            && draft_held(&d, RULE, intern!(py, "rule"))?
                .getattr(intern!(py, "agent_inside_is_delegation"))?
                .is_truthy()?
        {
            let span = draft_held(&d, SPAN, span_key)?;
            if !span.is_none() {
                tools.set_item(span_held(&span, span::SPAN_ID, span_id)?, &d)?;
            }
        }
    }
    if tools.is_empty() {
        return Ok(());
    }
    let others = PyDict::new(py);
    for d in drafts.iter() {
        if draft_attr(&d, KIND, kind_key)?.eq(intern!(py, "other"))? {
            let span = draft_held(&d, SPAN, span_key)?;
            if !span.is_none() {
                others.set_item(span_held(&span, span::SPAN_ID, span_id)?, &d)?;
            }
        }
    }
    // The tool steps by their span's parent (`_ToolsBeside`), in the dict's order.
    let by_parent = PyDict::new(py);
    for d in tools.values().iter() {
        let span = draft_held(&d, SPAN, span_key)?;
        if span.is_none() {
            continue;
        }
        let parent = span_held(&span, span::PARENT_SPAN_ID, parent_key)?;
        match by_parent.get_item(&parent)? {
            Some(list) => list.cast_into::<PyList>()?.append(&d)?,
            None => by_parent.set_item(&parent, PyList::new(py, [&d])?)?,
        }
    }
    let (start_ns, end_ns) = (intern!(py, "start_ns"), intern!(py, "end_ns"));
    let agent_name = intern!(py, "agent_name");
    // Per parent span id, the index (into `built`) of its sibling tools' `SiblingTools`.
    let indexes = PyDict::new(py);
    let mut built: Vec<SiblingTools> = Vec::new();
    for draft in drafts.iter() {
        if !draft_attr(&draft, KIND, kind_key)?.eq(intern!(py, "agent"))? {
            continue;
        }
        let span = draft_held(&draft, SPAN, span_key)?;
        if span.is_none() {
            continue;
        }
        let parent = span_held(&span, span::PARENT_SPAN_ID, parent_key)?;
        let mut tool = tools.get_item(&parent)?;
        if tool.is_none() {
            // The one sibling tool step whose span starts before the agent's and ends after.
            if let Some(siblings) = by_parent.get_item(&parent)? {
                let siblings = siblings.cast_into::<PyList>()?;
                let key = parent.clone();
                let index = match indexes.get_item(&key)? {
                    Some(found) => found.extract::<usize>()?,
                    None => {
                        built.push(SiblingTools::new(&siblings, span_key, start_ns, end_ns)?);
                        indexes.set_item(&key, built.len() - 1)?;
                        built.len() - 1
                    }
                };
                tool = built[index].holding(&siblings, &span, span_key, start_ns, end_ns)?;
            }
        }
        let name = draft_fields(&draft)?
            .get_item(agent_name)?
            .unwrap_or_else(|| py.None().into_bound(py));
        if tool.is_none() && !name.is_none() {
            if let Some(holder) = others.get_item(&parent)? {
                let own = draft_held(&holder, SPAN, span_key)?;
                if !own.is_none() {
                    let attributes = span_held(&own, span::ATTRIBUTES, intern!(py, "attributes"))?;
                    let names = PyTuple::new(
                        py,
                        [
                            get(&attributes, intern!(py, "gen_ai.agent.name"))?,
                            get(&attributes, intern!(py, "gen_ai.agent.id"))?,
                        ],
                    )?;
                    if names.contains(&name)? {
                        tool =
                            tools.get_item(span_held(&own, span::PARENT_SPAN_ID, parent_key)?)?;
                    }
                }
            }
        }
        if let Some(tool) = tool {
            tool.setattr(kind_key, intern!(py, "handoff"))?;
            if !name.is_none() {
                draft_fields(&tool)?
                    .call_method1(intern!(py, "setdefault"), (intern!(py, "to_agent"), &name))?;
            }
        }
    }
    Ok(())
}

/// Rules with `nested_agent_is_handoff`: an agent step nested in another agent step, with
/// no tool, retrieval or handoff step between them, is a delegation recorded only by
/// nesting (smolagents managed agents). A handoff step from the enclosing agent to the
/// nested one (`draft_cls(kind="handoff", span=, rule=, status=, scope=)` of the nested
/// agent's, with `from_agent`, `agent_name` and `to_agent`) is placed right before it. The
/// same list is returned when no rule asks for this.
#[pyfunction]
fn nested_agent_handoffs<'py>(
    drafts: &Bound<'py, PyList>,
    draft_by_span: &Bound<'py, PyDict>,
    by_id: &Bound<'py, PyDict>,
    draft_cls: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyList>> {
    let py = drafts.py();
    let (rule_key, flag) = (intern!(py, "rule"), intern!(py, "nested_agent_is_handoff"));
    let mut any = false;
    for d in drafts.iter() {
        if draft_held(&d, RULE, rule_key)?.getattr(flag)?.is_truthy()? {
            any = true;
            break;
        }
    }
    if !any {
        return Ok(drafts.clone());
    }
    let out = PyList::empty(py);
    let agent_name = intern!(py, "agent_name");
    for draft in drafts.iter() {
        if kind_is(&draft, Kind::Agent)?
            && draft_held(&draft, RULE, rule_key)?
                .getattr(flag)?
                .is_truthy()?
        {
            let span = draft_held(&draft, SPAN, intern!(py, "span"))?;
            if span.is_none() {
                return Err(PyAssertionError::new_err(()));
            }
            let mut handoff = None;
            walk_ancestor_drafts(&span, draft_by_span, by_id, |ancestor| {
                if kind_is(&ancestor, Kind::ToolCall)?
                    || kind_is(&ancestor, Kind::Retrieval)?
                    || kind_is(&ancestor, Kind::Handoff)?
                {
                    return Ok(true);
                }
                if !kind_is(&ancestor, Kind::Agent)? {
                    return Ok(false);
                }
                let kwargs = PyDict::new(py);
                kwargs.set_item(intern!(py, "kind"), intern!(py, "handoff"))?;
                kwargs.set_item(intern!(py, "span"), &span)?;
                kwargs.set_item(rule_key, draft_held(&draft, RULE, rule_key)?)?;
                kwargs.set_item(
                    intern!(py, "status"),
                    draft_attr(&draft, STATUS, intern!(py, "status"))?,
                )?;
                kwargs.set_item(
                    intern!(py, "scope"),
                    draft_attr(&draft, SCOPE, intern!(py, "scope"))?,
                )?;
                let made = draft_cls.call((), Some(&kwargs))?;
                let source = draft_fields(&ancestor)?.get_item(agent_name)?;
                let target = draft_fields(&draft)?.get_item(agent_name)?;
                let made_fields = draft_fields(&made)?;
                for (name, value) in [
                    (intern!(py, "from_agent"), &source),
                    (agent_name, &source),
                    (intern!(py, "to_agent"), &target),
                ] {
                    if let Some(value) = value.as_ref().filter(|v| !v.is_none()) {
                        made_fields.set_item(name, value)?;
                    }
                }
                handoff = Some(made);
                Ok(true)
            })?;
            if let Some(handoff) = handoff {
                out.append(handoff)?;
            }
        }
        out.append(&draft)?;
    }
    Ok(out)
}

/// A handoff step that does not name its target hands over to the agent that runs next:
/// the first named agent step (`sorted` by its span's start) starting when or after the
/// handoff's span starts. No later agent, no target.
#[pyfunction]
fn handoff_targets(drafts: &Bound<'_, PyList>) -> PyResult<()> {
    let py = drafts.py();
    let (to_agent, agent_name) = (intern!(py, "to_agent"), intern!(py, "agent_name"));
    let span_key = intern!(py, "span");
    let mut pending = Vec::new();
    for d in drafts.iter() {
        if kind_is(&d, Kind::Handoff)?
            && draft_fields(&d)?
                .get_item(to_agent)?
                .map_or(true, |v| v.is_none())
        {
            pending.push(d);
        }
    }
    if pending.is_empty() {
        return Ok(());
    }
    let agents = PyList::empty(py);
    for d in drafts.iter() {
        if kind_is(&d, Kind::Agent)?
            && draft_held(&d, SPAN, span_key)?.is_truthy()?
            && draft_fields(&d)?
                .get_item(agent_name)?
                .map_or(Ok(false), |n| n.is_truthy())?
        {
            agents.append(d)?;
        }
    }
    let start_ns = intern!(py, "start_ns");
    let key = py
        .import(intern!(py, "operator"))?
        .getattr(intern!(py, "attrgetter"))?
        .call1((intern!(py, "span.start_ns"),))?;
    let kwargs = PyDict::new(py);
    kwargs.set_item(intern!(py, "key"), key)?;
    agents.call_method(intern!(py, "sort"), (), Some(&kwargs))?;
    // The agents' start times, ascending (`None` if one is not an integer): each handoff's
    // target is then one binary search away, not a scan of every agent starting earlier
    // (handoffs times agents: 10,000 of each were 10^8 comparisons).
    let mut starts = Vec::with_capacity(agents.len());
    for a in agents.iter() {
        match time(&*draft_held(&a, SPAN, span_key)?, start_ns)? {
            Some(start) => starts.push(start),
            None => {
                starts.clear();
                break;
            }
        }
    }
    let sorted = starts.len() == agents.len();
    for handoff in pending {
        let span = draft_held(&handoff, SPAN, span_key)?;
        if span.is_none() {
            return Err(PyAssertionError::new_err(()));
        }
        let target = match (sorted, time(&span, start_ns)?) {
            (true, Some(start)) => {
                let at = starts.partition_point(|&s| s < start);
                if at < agents.len() {
                    Some(agents.get_item(at)?)
                } else {
                    None
                }
            }
            _ => {
                let start = span_held(&span, span::START_NS, start_ns)?;
                let mut found = None;
                for a in agents.iter() {
                    if draft_held(&a, SPAN, span_key)?
                        .getattr(start_ns)?
                        .ge(&start)?
                    {
                        found = Some(a);
                        break;
                    }
                }
                found
            }
        };
        if let Some(a) = target {
            let name = draft_fields(&a)?.as_any().get_item(agent_name)?;
            draft_fields(&handoff)?.set_item(to_agent, name)?;
        }
    }
    Ok(())
}

/// `run_wrappers` and the coverage of the spans no rule recognised: `(wrappers, unmapped)`,
/// how many different span ids among `unrecognised` belong to spans that enclose every
/// recognised step (`draft_by_span`'s keys; the application's own spans around a run:
/// `otel_oracles.trace_passes::common_ancestors` over the spans of `by_id` numbered in its
/// order), and, for every other unrecognised span, a count per span name in first-seen
/// order. Span ids are looked up in Python `dict`s, so they hash and compare as Python's.
#[pyfunction]
fn run_wrappers<'py>(
    unrecognised: &Bound<'py, PyList>,
    draft_by_span: &Bound<'py, PyDict>,
    by_id: &Bound<'py, PyDict>,
) -> PyResult<(usize, Bound<'py, PyDict>)> {
    let py = unrecognised.py();
    let (span_id, parent_key) = (intern!(py, "span_id"), intern!(py, "parent_span_id"));
    let mut wrapper = Vec::new();
    let mut number = None;
    if !unrecognised.is_empty() && !draft_by_span.is_empty() {
        let index = PyDict::new(py);
        for (n, key) in by_id.keys().iter().enumerate() {
            index.set_item(key, n)?;
        }
        let at = |key: &Bound<'py, PyAny>| -> PyResult<Option<usize>> {
            index.get_item(key)?.map(|n| n.extract()).transpose()
        };
        let mut parent = Vec::with_capacity(by_id.len());
        for span in by_id.values().iter() {
            let id = span_held(&span, span::PARENT_SPAN_ID, parent_key)?;
            parent.push(if id.is_truthy()? { at(&id)? } else { None });
        }
        let mut steps = Vec::with_capacity(draft_by_span.len());
        for key in draft_by_span.keys().iter() {
            steps.push(at(&key)?);
        }
        wrapper = otel_oracles_core::trace_passes::common_ancestors(&steps, &parent);
        number = Some(index);
    }
    let mut wrappers = vec![false; wrapper.len()];
    let unmapped = PyDict::new(py);
    for span in unrecognised.iter() {
        if let Some(index) = &number {
            if let Some(n) = index.get_item(span_held(&span, span::SPAN_ID, span_id)?)? {
                let n: usize = n.extract()?;
                if wrapper[n] {
                    wrappers[n] = true;
                    continue;
                }
            }
        }
        let name = span_held(&span, span::NAME, intern!(py, "name"))?;
        let count = match unmapped.get_item(&name)? {
            Some(count) => count.extract::<usize>()? + 1,
            None => 1,
        };
        unmapped.set_item(name, count)?;
    }
    Ok((wrappers.iter().filter(|w| **w).count(), unmapped))
}

/// `_role(message)`: a `dict` message's `role`, else `None`.
fn role<'py>(message: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = message.py();
    if !message.is_instance_of::<PyDict>() {
        return Ok(py.None().into_bound(py));
    }
    get(message, intern!(py, "role"))
}

/// `_asks_for_tools(message)`: an assistant turn requesting at least one named tool call.
fn asks_for_tools(message: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = message.py();
    if !eq_text(&role(message)?, intern!(py, "assistant"))? {
        return Ok(false);
    }
    for part in parts(message)? {
        if eq_text(&get(&part, intern!(py, "type"))?, intern!(py, "tool_call"))?
            && get(&part, intern!(py, "name"))?.is_truthy()?
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// `_shows_text(gen)`: whether a model call's recorded output holds any non-empty text.
fn shows_text(fields: &Bound<'_, PyDict>) -> PyResult<bool> {
    let py = fields.py();
    for message in field_items(fields.as_any(), intern!(py, "output_messages"))? {
        if !message.is_instance_of::<PyDict>() {
            continue;
        }
        for part in parts(&message)? {
            if eq_text(&get(&part, intern!(py, "type"))?, intern!(py, "text"))?
                && get(&part, intern!(py, "content"))?.is_truthy()?
            {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// Rules with `requests_from_next_input` (`_mapper._requests_from_next_input`'s docstring
/// says why): a model call whose output shows neither text nor a requested call, followed
/// in its scope by a model call whose input continues its own (at least one more message,
/// the same roles up to its length), takes as its output the assistant turns asking for
/// tools that come first among the new messages, each followed by nothing but tool results;
/// its `output_messages` is then no longer flagged as not captured.
#[pyfunction]
fn requests_from_next_input(drafts: &Bound<'_, PyList>) -> PyResult<()> {
    let py = drafts.py();
    let (rule_key, flag) = (intern!(py, "rule"), intern!(py, "requests_from_next_input"));
    let mut any = false;
    for d in drafts.iter() {
        if kind_is(&d, Kind::Generation)?
            && draft_held(&d, RULE, rule_key)?.getattr(flag)?.is_truthy()?
        {
            any = true;
            break;
        }
    }
    if !any {
        return Ok(());
    }
    let last = PyDict::new(py);
    let mut pairs = Vec::new();
    for draft in drafts.iter() {
        if !kind_is(&draft, Kind::Generation)? {
            continue;
        }
        let scope = draft_attr(&draft, SCOPE, intern!(py, "scope"))?;
        if let Some(prev) = last.get_item(&scope)? {
            if draft_held(&prev, RULE, rule_key)?
                .getattr(flag)?
                .is_truthy()?
            {
                pairs.push((prev, draft.clone()));
            }
        }
        last.set_item(scope, draft)?;
    }
    let input = intern!(py, "input_messages");
    for (gen, next) in pairs {
        let own = draft_fields(&gen)?;
        if !requested_of(&gen)?.is_empty() || shows_text(&own)? {
            continue;
        }
        let mine = get(own.as_any(), input)?;
        let theirs = get(draft_fields(&next)?.as_any(), input)?;
        if !mine.is_instance_of::<PyList>() || !theirs.is_instance_of::<PyList>() {
            continue;
        }
        let (mine, theirs) = (items(&mine)?, items(&theirs)?);
        if mine.is_empty() || theirs.len() <= mine.len() {
            continue;
        }
        let mut continues = true;
        for (a, b) in theirs.iter().zip(&mine) {
            // `list.__eq__` of the two role lists: identity first, then `==`.
            let (a, b) = (role(a)?, role(b)?);
            if !(a.is(&b) || a.eq(&b)?) {
                continues = false;
                break;
            }
        }
        if !continues {
            continue;
        }
        let asked = PyList::empty(py);
        for message in &theirs[mine.len()..] {
            if asks_for_tools(message)? {
                asked.append(message)?;
            } else if !eq_text(&role(message)?, intern!(py, "tool"))? || asked.is_empty() {
                break;
            }
        }
        if !asked.is_empty() {
            own.set_item(intern!(py, "output_messages"), asked)?;
            draft_attr(&gen, REDACTED, intern!(py, "redacted"))?
                .call_method1(intern!(py, "discard"), (intern!(py, "output_messages"),))?;
        }
    }
    Ok(())
}

/// `_agent_key(name)`: a name lower-cased by Python's `str.lower` (not ASCII) or natively
/// (ASCII), then `otel_oracles_core::trace_passes::agent_key`.
fn agent_key(name: &Bound<'_, PyString>) -> PyResult<String> {
    if let Ok(text) = name.to_str() {
        if text.is_ascii() {
            return Ok(otel_oracles_core::trace_passes::agent_key(
                &text.to_ascii_lowercase(),
            ));
        }
    }
    let lowered = name.call_method0(intern!(name.py(), "lower"))?;
    let lowered = lowered.cast_into::<PyString>()?;
    Ok(otel_oracles_core::trace_passes::agent_key(
        &lowered.to_string_lossy(),
    ))
}

/// Files with `handoff_requests` (`_mapper._requested_handoffs`'s docstring says why): a
/// synthesized tool call (a request no span ran) after a model call whose tool name one of
/// `patterns` matches, naming (group `agent`, as `agent_group(pattern, tool)` returns it:
/// the match is the regex engine's, under `safe_regex`'s budget) the agent that starts next
/// (the first named agent step, stable-sorted by its span's start, starting when or after
/// the model call did, names compared by `agent_key`), becomes the handoff to that agent
/// (`to_agent`, `from_agent` the model call's agent unless set). Any other agent next, or
/// none, leaves it a call never run.
#[pyfunction]
fn requested_handoffs(
    drafts: &Bound<'_, PyList>,
    patterns: &Bound<'_, PyTuple>,
    agent_group: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let py = drafts.py();
    let span_key = intern!(py, "span");
    let (tool_key, agent_name) = (intern!(py, "tool"), intern!(py, "agent_name"));
    let start_ns = intern!(py, "start_ns");
    let mut agents: Option<Vec<(i128, Bound<'_, PyAny>)>> = None;
    for gen in drafts.iter() {
        if !kind_is(&gen, Kind::Generation)? {
            continue;
        }
        let span = draft_held(&gen, SPAN, span_key)?;
        if span.is_none() {
            continue;
        }
        let mut calls = Vec::new();
        for call in items(&*draft_held(&gen, FOLLOWS, intern!(py, "follows"))?)? {
            let tool = get(draft_fields(&call)?.as_any(), tool_key)?;
            if kind_is(&call, Kind::ToolCall)?
                && draft_held(&call, SYNTHESIZED, intern!(py, "synthesized"))?.is_truthy()?
                && tool.is_instance_of::<PyString>()
            {
                calls.push((call, tool));
            }
        }
        if calls.is_empty() {
            continue;
        }
        if agents.is_none() {
            let mut found = Vec::new();
            for d in drafts.iter() {
                if kind_is(&d, Kind::Agent)?
                    && draft_held(&d, SPAN, span_key)?.is_truthy()?
                    && get(draft_fields(&d)?.as_any(), agent_name)?.is_truthy()?
                {
                    found.push((
                        nanos(&draft_held(&d, SPAN, span_key)?.getattr(start_ns)?)?,
                        d,
                    ));
                }
            }
            found.sort_by_key(|(start, _)| *start);
            agents = Some(found);
        }
        let agents = agents.as_deref().unwrap_or_default();
        let start = nanos(&*span_held(&span, span::START_NS, start_ns)?)?;
        let Some((_, after)) = agents.get(agents.partition_point(|(s, _)| *s < start)) else {
            continue;
        };
        let target = draft_fields(after)?.as_any().get_item(agent_name)?.str()?;
        let wanted = agent_key(&target)?;
        for (call, tool) in calls {
            for pattern in patterns.iter() {
                let group = agent_group.call1((pattern, &tool))?;
                let Ok(group) = group.cast_into::<PyString>() else {
                    continue;
                };
                if agent_key(&group)? == wanted {
                    call.setattr(intern!(py, "kind"), intern!(py, "handoff"))?;
                    let call_fields = draft_fields(&call)?;
                    call_fields.set_item(intern!(py, "to_agent"), &target)?;
                    let from = get(draft_fields(&gen)?.as_any(), agent_name)?;
                    if from.is_truthy()? {
                        call_fields.call_method1(
                            intern!(py, "setdefault"),
                            (intern!(py, "from_agent"), from),
                        )?;
                    }
                    break;
                }
            }
        }
    }
    Ok(())
}

/// The model calls whose reply may be written tool requests (`_text_requests`'s
/// `requests_in_text` reads only these): a generation whose output is one message of one
/// part whose `content` is a `str` holding a `{` or a `<tool_call>` block. A reply without
/// either is never read as requests, so the Python pass would pass over it; anything not a
/// plain `list`, `dict` or `str` where one is looked for goes to Python, which decides.
#[pyfunction]
fn written_request_candidates<'py>(drafts: &Bound<'py, PyList>) -> PyResult<Bound<'py, PyList>> {
    let py = drafts.py();
    let out = PyList::empty(py);
    for d in drafts.iter() {
        if kind_is(&d, Kind::Generation)? && may_hold_written_requests(&d)? {
            out.append(&d)?;
        }
    }
    Ok(out)
}

/// Whether `requests_in_text` may read requests from a generation's reply (see
/// `written_request_candidates`): `false` only where its checks certainly fail.
fn may_hold_written_requests(draft: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = draft.py();
    let fields = draft_held(draft, FIELDS, intern!(py, "fields"))?;
    let Ok(fields) = fields.cast_exact::<PyDict>() else {
        return Ok(true);
    };
    let Some(out) = fields.get_item(intern!(py, "output_messages"))? else {
        return Ok(false);
    };
    let Ok(out) = out.cast_exact::<PyList>() else {
        return Ok(out.is_instance_of::<PyList>());
    };
    if out.len() != 1 {
        return Ok(false);
    }
    let message = out.get_item(0)?;
    let Ok(message) = message.cast_exact::<PyDict>() else {
        return Ok(message.is_instance_of::<PyDict>());
    };
    let Some(parts) = message.get_item(intern!(py, "parts"))? else {
        return Ok(false);
    };
    let Ok(parts) = parts.cast_exact::<PyList>() else {
        return Ok(parts.is_instance_of::<PyList>());
    };
    if parts.len() != 1 {
        return Ok(false);
    }
    let part = parts.get_item(0)?;
    let Ok(part) = part.cast_exact::<PyDict>() else {
        return Ok(part.is_instance_of::<PyDict>());
    };
    let Some(text) = part.get_item(intern!(py, "content"))? else {
        return Ok(false);
    };
    let Ok(text) = text.cast_exact::<PyString>() else {
        return Ok(text.is_instance_of::<PyString>());
    };
    Ok(match text.to_str() {
        Ok(text) => text.contains('{') || text.contains("<tool_call>"),
        Err(_) => true, // lone surrogates: Python reads it
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(assign_agents, m)?)?;
    m.add_function(wrap_pyfunction!(flag_aggregated_usage, m)?)?;
    m.add_function(wrap_pyfunction!(tools_running_agents, m)?)?;
    m.add_function(wrap_pyfunction!(nested_agent_handoffs, m)?)?;
    m.add_function(wrap_pyfunction!(handoff_targets, m)?)?;
    m.add_function(wrap_pyfunction!(run_wrappers, m)?)?;
    m.add_function(wrap_pyfunction!(requests_from_next_input, m)?)?;
    m.add_function(wrap_pyfunction!(written_request_candidates, m)?)?;
    m.add_function(wrap_pyfunction!(requested_handoffs, m)?)
}
