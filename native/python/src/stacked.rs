//! One call recorded by stacked layers, one step: `merge_stacked_generations` over a
//! trace's drafts (`otel_oracles.mapping._mapper`'s `Draft` records), for `map_trace`, in
//! one call per trace; `mapping/_stacked.py`'s module doc gives the rule. The helpers the
//! side-by-side pass (`_stacked.merge_sibling_layers`, Python) shares with it are exposed
//! too: `nearest_draft`, `same_tool`, `absorb_layer`, `outcome_from_layers` and
//! `compatible_models`.
//!
//! Ancestors are walked through `by_id` (span id -> span) and `draft_by_span` (span id ->
//! draft), Python `dict`s, so ids are hashed and compared as Python does; a parent chain that
//! loops ends where it would repeat. Drafts are told apart by identity (Python's `id`).
//! Kinds, names, statuses and times are compared and tested as Python does (`==`, `<`,
//! truthiness); a model name or a tool name is read natively when it is ASCII, any other
//! text through Python's own `str` methods.

use otel_oracles_core::hashing::{FastMap, FastMapExt, FastSet, FastSetExt};

use crate::draft::{
    draft_attr, draft_fields, draft_held, kind_in, kind_is, Kind, ATTRIBUTES, KIND, REDACTED, SPAN,
    STATUS,
};
use crate::pydict;
use crate::slots::{span, span_held};
use pyo3::exceptions::PyAssertionError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PySet, PyString};

/// What a framework puts between an MCP server's (or toolset's) name and the server's own
/// tool name: `_` and `model.tool_name.TOOL_NAME_SEPARATORS`.
const QUALIFIERS: [&str; 5] = ["_", "__", "-", ".", "/"];

fn field<'py>(
    draft: &Bound<'py, PyAny>,
    name: &Bound<'py, PyString>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = draft.py();
    Ok(draft_fields(draft)?
        .get_item(name)?
        .unwrap_or_else(|| py.None().into_bound(py)))
}

/// The draft of `span`'s nearest ancestor that has one (`_nearest_draft`).
fn nearest<'py>(
    span: &Bound<'py, PyAny>,
    draft_by_span: &Bound<'py, PyDict>,
    by_id: &Bound<'py, PyDict>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    nearest_memo(span, draft_by_span, by_id, None)
}

/// `nearest`, remembering in `memo` (span id -> draft or `None`) the answer for every span
/// without a draft that a walk passed: model calls hanging at every level of a chain of
/// 20,000 spans no rule recognised each walked the chain to its top, 168 s in
/// `merge_stacked_generations`, where each span is walked once now. A walk that ends on
/// its own span (the span on a loop of parent ids) is not remembered: from a span it
/// passed, the loop leads back to this one, which may have a draft.
fn nearest_memo<'py>(
    span: &Bound<'py, PyAny>,
    draft_by_span: &Bound<'py, PyDict>,
    by_id: &Bound<'py, PyDict>,
    memo: Option<&Bound<'py, PyDict>>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = span.py();
    let own = span_held(span, span::SPAN_ID, intern!(py, "span_id"))?;
    // `parent_id == own` as Python compares them; two exact `str`s (span ids nearly always)
    // by their text, without the rich comparison and the `bool` it makes.
    let own_text = own.cast_exact::<PyString>().ok();
    let is_own = |parent_id: &Bound<'py, PyAny>| -> PyResult<bool> {
        match own_text {
            Some(own) => pydict::eq_text(parent_id, own),
            None => parent_id.eq(&own),
        }
    };
    let mut parent_id =
        span_held(span, span::PARENT_SPAN_ID, intern!(py, "parent_span_id"))?.into_bound();
    // `seen` is made on the second step only: most spans' parent has a draft.
    let mut seen: Option<Bound<'py, PySet>> = None;
    let mut passed: Vec<Bound<'py, PyAny>> = Vec::new();
    let found = loop {
        if !parent_id.is_truthy()? {
            break None;
        }
        match &seen {
            None => {
                if is_own(&parent_id)? {
                    return Ok(None);
                }
            }
            Some(set) => {
                if set.contains(&parent_id)? {
                    if is_own(&parent_id)? {
                        return Ok(None);
                    }
                    break None;
                }
            }
        }
        if let Some(found) = draft_by_span.get_item(&parent_id)? {
            break Some(found);
        }
        if let Some(memo) = memo {
            if let Some(known) = memo.get_item(&parent_id)? {
                break (!known.is_none()).then_some(known);
            }
        }
        let Some(parent) = by_id.get_item(&parent_id)? else {
            break None;
        };
        match &seen {
            None => {
                let set = PySet::empty(py)?;
                set.add(&own)?;
                set.add(&parent_id)?;
                seen = Some(set);
            }
            Some(set) => set.add(&parent_id)?,
        }
        let next =
            span_held(&parent, span::PARENT_SPAN_ID, intern!(py, "parent_span_id"))?.into_bound();
        if memo.is_some() {
            passed.push(parent_id);
        }
        parent_id = next;
    };
    if let Some(memo) = memo {
        let answer = found.clone().unwrap_or_else(|| py.None().into_bound(py));
        for id in passed {
            memo.set_item(id, &answer)?;
        }
    }
    Ok(found)
}

/// The nearest ancestor draft of `span` (through `draft_by_span`), or `None`.
#[pyfunction]
fn nearest_draft<'py>(
    span: &Bound<'py, PyAny>,
    draft_by_span: &Bound<'py, PyDict>,
    by_id: &Bound<'py, PyDict>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    nearest(span, draft_by_span, by_id)
}

/// `text` when it is an ASCII `str` (read natively), else `None` (read through Python).
fn ascii<'a>(text: &'a Bound<'_, PyString>) -> Option<&'a str> {
    text.to_str().ok().filter(|s| s.is_ascii())
}

/// Whether the outer layer's tool `name` is the inner layer's tool: the same name, or, for
/// an inner span of the MCP protocol (`mcp.method.name` kept by its rule), that name
/// qualified by the toolset or server the framework put before it.
#[pyfunction]
fn same_tool(name: &Bound<'_, PyAny>, inner: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = name.py();
    let served = field(inner, intern!(py, "tool"))?;
    let (Ok(name), Ok(served)) = (name.cast::<PyString>(), served.cast::<PyString>()) else {
        return Ok(false);
    };
    if !name.is_truthy()? || !served.is_truthy()? {
        return Ok(false);
    }
    if name.as_any().eq(served)? {
        return Ok(true);
    }
    if !draft_held(inner, ATTRIBUTES, intern!(py, "attributes"))?
        .contains(intern!(py, "mcp.method.name"))?
    {
        return Ok(false);
    }
    if let (Some(n), Some(s)) = (ascii(name), ascii(served)) {
        return Ok(QUALIFIERS.iter().any(|sep| {
            n.len() > sep.len() + s.len() && n.ends_with(s) && n[..n.len() - s.len()].ends_with(sep)
        }));
    }
    let name_len = name.len()?;
    for sep in QUALIFIERS {
        let suffix = PyString::new(py, sep).add(served)?;
        if name
            .call_method1(intern!(py, "endswith"), (&suffix,))?
            .is_truthy()?
            && name_len > suffix.len()?
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether two model names may name the same model: equal after dropping a path prefix
/// (`models/`, `openai/`) and case, or one a dated/suffixed version of the other; an
/// unknown model is compatible with any.
#[pyfunction]
fn compatible_models(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<bool> {
    let (Ok(a), Ok(b)) = (a.cast::<PyString>(), b.cast::<PyString>()) else {
        return Ok(true);
    };
    if !a.is_truthy()? || !b.is_truthy()? {
        return Ok(true);
    }
    if let (Some(a), Some(b)) = (ascii(a), ascii(b)) {
        let x = a.rsplit('/').next().unwrap_or("").to_ascii_lowercase();
        let y = b.rsplit('/').next().unwrap_or("").to_ascii_lowercase();
        let (short, long) = if y.len() < x.len() {
            (&y, &x)
        } else {
            (&x, &y)
        };
        return Ok(long == short
            || (long.len() > short.len()
                && long.starts_with(short.as_str())
                && matches!(long.as_bytes()[short.len()], b'-' | b'@')));
    }
    let py = a.py();
    let (x, y) = (last_segment_lower(a)?, last_segment_lower(b)?);
    let (short, long) = if y.len()? < x.len()? { (y, x) } else { (x, y) };
    if long.eq(&short)? {
        return Ok(true);
    }
    for sep in ["-", "@"] {
        let prefix = short.add(sep)?;
        if long
            .call_method1(intern!(py, "startswith"), (prefix,))?
            .is_truthy()?
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// `text.rsplit("/", 1)[-1].lower()`, through Python.
fn last_segment_lower<'py>(text: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyAny>> {
    let py = text.py();
    text.call_method1(intern!(py, "rsplit"), ("/", 1))?
        .get_item(-1)?
        .call_method0(intern!(py, "lower"))
}

/// Whether `inner` (nested in `outer`, its nearest step-making ancestor) is `outer`'s call
/// recorded again (`_same_call`).
fn same_call(outer: &Bound<'_, PyAny>, inner: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = outer.py();
    // Only kinds that can record one call twice are compared further (the answers below
    // for any other pair are `false` whatever the times): most drafts' nearest step is
    // their agent, and reading four span times for each of them cost more than the pass.
    // The kinds are asked by `kind_is` / `kind_in` (another step kind's text is told apart
    // by its address, not by Python's `==`).
    let toolish = |draft: &Bound<'_, PyAny>| kind_in(draft, &[Kind::ToolCall, Kind::Handoff]);
    let can_pair = if kind_is(inner, Kind::Retrieval)? {
        kind_in(outer, &[Kind::ToolCall, Kind::Retrieval])?
    } else {
        (toolish(outer)? && toolish(inner)?)
            || (kind_is(outer, Kind::Generation)? && kind_is(inner, Kind::Generation)?)
    };
    if !can_pair {
        return Ok(false);
    }
    let a = draft_held(outer, SPAN, intern!(py, "span"))?;
    let b = draft_held(inner, SPAN, intern!(py, "span"))?;
    let start_ns = intern!(py, "start_ns");
    let end_ns = intern!(py, "end_ns");
    if span_held(&b, span::START_NS, start_ns)?.lt(span_held(&a, span::START_NS, start_ns)?)? {
        return Ok(false);
    }
    let (a_end, b_end) = (
        span_held(&a, span::END_NS, end_ns)?,
        span_held(&b, span::END_NS, end_ns)?,
    );
    if a_end.is_truthy()? && b_end.is_truthy()? && b_end.gt(&a_end)? {
        // Only a model call opened directly inside the model call (`_child_call`): the
        // provider SDK's record of a streamed call may end after the framework's.
        let outer_kind = draft_attr(outer, KIND, intern!(py, "kind"))?;
        let inner_kind = draft_attr(inner, KIND, intern!(py, "kind"))?;
        let child = outer_kind.eq(&inner_kind)?
            && inner_kind.eq(intern!(py, "generation"))?
            && span_held(&b, span::PARENT_SPAN_ID, intern!(py, "parent_span_id"))?
                .eq(span_held(&a, span::SPAN_ID, intern!(py, "span_id"))?)?;
        if !child {
            return Ok(false);
        }
    }
    if kind_is(inner, Kind::Retrieval)? {
        return Ok(true); // held by a tool call or a retrieval (`can_pair`)
    }
    if toolish(outer)? && toolish(inner)? {
        return same_tool(&field(outer, intern!(py, "tool"))?, inner);
    }
    // Both generations (`can_pair`).
    let model = intern!(py, "model");
    compatible_models(&field(outer, model)?, &field(inner, model)?)
}

fn part_count(messages: &Bound<'_, PyAny>) -> PyResult<usize> {
    let py = messages.py();
    let Ok(messages) = messages.cast::<PyList>() else {
        return Ok(0);
    };
    let mut total = 0;
    for m in messages.iter() {
        let Ok(m) = m.cast::<PyDict>() else {
            continue;
        };
        let parts = pydict::get(m.as_any(), intern!(py, "parts"))?;
        if parts.is_instance_of::<PyList>() {
            let parts = if m.is_exact_instance_of::<PyDict>() {
                parts
            } else {
                m.as_any().get_item(intern!(py, "parts"))?
            };
            total += parts.len()?;
        }
    }
    Ok(total)
}

/// Fold `other` (the same call, another layer) into `kept`, field by field, the richer
/// value winning (`absorb`): a value over none, a captured message list over a redacted one
/// and one with more parts over fewer (on a tie `other`'s, the layer nearer the wire), a
/// longer model name; otherwise `kept`'s own value stays (token counts come from one span,
/// never summed). A failure of either layer fails the call; `other`'s attributes fill the
/// ones `kept` lacks, and its span id joins `stacked_spans`.
fn absorb(kept: &Bound<'_, PyAny>, other: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = kept.py();
    let kept_fields = draft_fields(kept)?;
    let kept_redacted = draft_attr(kept, REDACTED, intern!(py, "redacted"))?;
    let other_redacted = draft_attr(other, REDACTED, intern!(py, "redacted"))?;
    let model = intern!(py, "model");
    let discard = intern!(py, "discard");
    for (name, value) in draft_fields(other)?.iter() {
        if value.is_none() {
            continue;
        }
        let current = kept_fields.get_item(&name)?.filter(|c| !c.is_none());
        let Some(current) = current else {
            if kept_redacted.contains(&name)? && !other_redacted.contains(&name)? {
                kept_redacted.call_method1(discard, (&name,))?;
            }
            kept_fields.set_item(&name, &value)?;
            continue;
        };
        if name.eq(intern!(py, "input_messages"))? || name.eq(intern!(py, "output_messages"))? {
            let (new_red, old_red) = (
                other_redacted.contains(&name)?,
                kept_redacted.contains(&name)?,
            );
            let richer = if old_red != new_red {
                old_red
            } else {
                part_count(&value)? >= part_count(&current)?
            };
            if richer {
                kept_fields.set_item(&name, &value)?;
                kept_redacted.call_method1(discard, (&name,))?;
            }
        } else if name.eq(model)? {
            if let (Ok(v), Ok(c)) = (value.cast::<PyString>(), current.cast::<PyString>()) {
                if v.len()? > c.len()? {
                    kept_fields.set_item(&name, &value)?;
                }
            }
        }
    }
    let missing = PySet::empty(py)?;
    for name in other_redacted.try_iter()? {
        let name = name?;
        let value = kept_fields.get_item(&name)?;
        if value.map_or(true, |v| v.is_none()) {
            missing.add(name)?;
        }
    }
    let merged = kept_redacted.call_method1(intern!(py, "__ior__"), (missing,))?;
    kept.setattr(intern!(py, "redacted"), merged)?;
    let status = intern!(py, "status");
    let other_status = other.getattr(status)?;
    if other_status.eq(intern!(py, "error"))? {
        kept.setattr(status, intern!(py, "error"))?;
    } else if kept.getattr(status)?.eq(intern!(py, "unset"))? {
        kept.setattr(status, other_status)?;
    }
    let kept_attributes = draft_held(kept, ATTRIBUTES, intern!(py, "attributes"))?;
    let setdefault = intern!(py, "setdefault");
    for item in draft_held(other, ATTRIBUTES, intern!(py, "attributes"))?
        .call_method0(intern!(py, "items"))?
        .try_iter()?
    {
        let (key, val): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
        kept_attributes.call_method1(setdefault, (key, val))?;
    }
    let span = draft_held(other, SPAN, intern!(py, "span"))?;
    if span.is_none() {
        return Err(PyAssertionError::new_err(()));
    }
    kept_attributes
        .call_method1(
            setdefault,
            (intern!(py, "stacked_spans"), PyList::empty(py)),
        )?
        .call_method1(
            intern!(py, "append"),
            (span_held(&span, span::SPAN_ID, intern!(py, "span_id"))?,),
        )?;
    Ok(())
}

/// `inner` is `kept`'s call recorded by another layer: folded into it (`absorb`), the MCP
/// server's own name for the tool kept (`mcp_tool`), and `inner`'s span mapped to `kept`.
#[pyfunction]
fn absorb_layer<'py>(
    kept: &Bound<'py, PyAny>,
    inner: &Bound<'py, PyAny>,
    draft_by_span: &Bound<'py, PyDict>,
) -> PyResult<()> {
    let py = kept.py();
    absorb(kept, inner)?;
    let tool = intern!(py, "tool");
    let served = field(inner, tool)?;
    if served.ne(field(kept, tool)?)?
        && draft_held(inner, ATTRIBUTES, intern!(py, "attributes"))?
            .contains(intern!(py, "mcp.method.name"))?
    {
        draft_held(kept, ATTRIBUTES, intern!(py, "attributes"))?
            .call_method1(intern!(py, "setdefault"), (intern!(py, "mcp_tool"), served))?;
    }
    let span = draft_held(inner, SPAN, intern!(py, "span"))?;
    if span.is_none() {
        return Err(PyAssertionError::new_err(()));
    }
    draft_by_span.set_item(
        span_held(&span, span::SPAN_ID, intern!(py, "span_id"))?,
        kept,
    )
}

/// Whether one of `ancestors` (span ids) is an ancestor of `span` (`_inside`).
fn inside(
    span: &Bound<'_, PyAny>,
    ancestors: &Bound<'_, PySet>,
    by_id: &Bound<'_, PyDict>,
) -> PyResult<bool> {
    let py = span.py();
    let seen = PySet::empty(py)?;
    seen.add(span_held(span, span::SPAN_ID, intern!(py, "span_id"))?)?;
    let mut parent_id =
        span_held(span, span::PARENT_SPAN_ID, intern!(py, "parent_span_id"))?.into_bound();
    while parent_id.is_truthy()? && !seen.contains(&parent_id)? {
        if ancestors.contains(&parent_id)? {
            return Ok(true);
        }
        seen.add(&parent_id)?;
        let Some(parent) = by_id.get_item(&parent_id)? else {
            return Ok(false);
        };
        parent_id =
            span_held(&parent, span::PARENT_SPAN_ID, intern!(py, "parent_span_id"))?.into_bound();
    }
    Ok(false)
}

/// Whether `span` lies within the time of one of the `hiding` spans (`_within_in_time`:
/// layers recorded side by side).
fn within_in_time(
    span: &Bound<'_, PyAny>,
    hiding: &Bound<'_, PySet>,
    by_id: &Bound<'_, PyDict>,
) -> PyResult<bool> {
    let py = span.py();
    let (start_ns, end_ns) = (intern!(py, "start_ns"), intern!(py, "end_ns"));
    for span_id in hiding.iter() {
        let Some(other) = by_id.get_item(&span_id)? else {
            continue;
        };
        if other.is(span) {
            continue;
        }
        if span_held(&other, span::START_NS, start_ns)?.le(span_held(
            span,
            span::START_NS,
            start_ns,
        )?)? && span_held(span, span::END_NS, end_ns)?.le(span_held(
            &other,
            span::END_NS,
            end_ns,
        )?)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Fold the layers' view of one call's outcome into the kept draft (`group[0]`): an OK is
/// no proof when a layer hides the outcome (`outcome_hidden`), unless a layer inside that
/// one shows it (by nesting, or with `in_time` by time, for layers side by side) or the
/// result was captured; otherwise the call's outcome is unknown (`unset`).
#[pyfunction]
fn outcome_from_layers(
    group: &Bound<'_, PyList>,
    by_id: &Bound<'_, PyDict>,
    in_time: bool,
) -> PyResult<()> {
    let py = group.py();
    let kept = group.get_item(0)?;
    let (span_key, hidden_key) = (intern!(py, "span"), intern!(py, "outcome_hidden"));
    let hidden = PySet::empty(py)?;
    for d in group.iter() {
        if d.getattr(hidden_key)?.is_truthy()? {
            let span = draft_held(&d, SPAN, span_key)?;
            if !span.is_none() {
                hidden.add(span_held(&span, span::SPAN_ID, intern!(py, "span_id"))?)?;
            }
        }
    }
    let status = intern!(py, "status");
    let ok = intern!(py, "ok");
    if hidden.is_empty()
        || !kept.getattr(status)?.eq(ok)?
        || !field(&kept, intern!(py, "result"))?.is_none()
    {
        return Ok(());
    }
    for layer in group.iter() {
        let span = draft_held(&layer, SPAN, span_key)?;
        let shows = layer.getattr(status)?.eq(ok)?
            && !layer.getattr(hidden_key)?.is_truthy()?
            && !span.is_none();
        if shows {
            let within = if in_time {
                within_in_time(&span, &hidden, by_id)?
            } else {
                inside(&span, &hidden, by_id)?
            };
            if within {
                return Ok(()); // a layer below the hiding one saw the call succeed
            }
        }
    }
    kept.setattr(status, intern!(py, "unset"))?;
    kept.setattr(hidden_key, true)
}

/// The inner generations of `pairs` that are failed attempts of their outer call (by
/// identity), each flagged `failed_attempt`: nested in a generation for the same call,
/// failed, and ended before another generation nested there for that call started
/// (`_stacked._failed_attempts` of old; see the module doc there).
fn failed_attempts<'py>(
    pairs: &[(Bound<'py, PyAny>, Bound<'py, PyAny>)],
) -> PyResult<FastSet<usize>> {
    let Some((first, _)) = pairs.first() else {
        return Ok(FastSet::new());
    };
    let py = first.py();
    // The inner generations of each outer one, outers in first-seen order (by identity).
    let mut by_outer: Vec<Vec<&Bound<'py, PyAny>>> = Vec::new();
    let mut outer_at: FastMap<usize, usize> = FastMap::new();
    for (outer, inner) in pairs {
        if kind_is(outer, Kind::Generation)? && kind_is(inner, Kind::Generation)? {
            let at = *outer_at.entry(outer.as_ptr() as usize).or_insert_with(|| {
                by_outer.push(Vec::new());
                by_outer.len() - 1
            });
            by_outer[at].push(inner);
        }
    }
    let mut failed = FastSet::new();
    let span_key = intern!(py, "span");
    let (start_ns, end_ns) = (intern!(py, "start_ns"), intern!(py, "end_ns"));
    for inners in &by_outer {
        // The latest start of an inner span and the latest of the others: "another inner
        // call started when or after this one ended" is one comparison per inner, where
        // comparing every pair cost the square of their number (20,000 failed calls inside
        // one call, all still open when each other started). `None` when a start is not an
        // integer: the pairs are compared through Python then.
        let mut integers = true;
        let mut latest: Option<(i128, usize)> = None; // the latest start, and whose
        let mut runner_up: Option<i128> = None; // the latest start of the others
        for (at, o) in inners.iter().enumerate() {
            let other = draft_held(o, SPAN, span_key)?;
            if other.is_none() {
                continue;
            }
            let Ok(start) = span_held(&other, span::START_NS, start_ns)?.extract::<i128>() else {
                integers = false;
                break;
            };
            match latest {
                Some((first, _)) if start < first => {
                    runner_up = runner_up.max(Some(start));
                }
                _ => {
                    runner_up = runner_up.max(latest.map(|(first, _)| first));
                    latest = Some((start, at));
                }
            }
        }
        for (at, draft) in inners.iter().enumerate() {
            let span = draft_held(draft, SPAN, span_key)?;
            if !draft_attr(draft, STATUS, intern!(py, "status"))?.eq(intern!(py, "error"))?
                || span.is_none()
            {
                continue;
            }
            let end = span_held(&span, span::END_NS, end_ns)?;
            let later = match (integers, end.extract::<i128>()) {
                (true, Ok(end)) => {
                    let others = match latest {
                        Some((first, who)) if who != at => Some(first),
                        _ => runner_up,
                    };
                    others.is_some_and(|start| start >= end)
                }
                _ => {
                    let mut later = false;
                    for o in inners {
                        if o.is(*draft) {
                            continue;
                        }
                        let other = draft_held(o, SPAN, span_key)?;
                        if !other.is_none()
                            && span_held(&other, span::START_NS, start_ns)?.ge(&end)?
                        {
                            later = true;
                            break;
                        }
                    }
                    later
                }
            };
            if later {
                draft_held(draft, ATTRIBUTES, intern!(py, "attributes"))?
                    .set_item(intern!(py, "failed_attempt"), true)?;
                failed.insert(draft.as_ptr() as usize);
            }
        }
    }
    Ok(failed)
}

/// `drafts` without the inner drafts of stacked pairs, each absorbed into its outer draft
/// (`draft_by_span` then maps the inner span to the kept draft): a model call, tool call,
/// handoff or retrieval whose nearest step-making ancestor records the same call
/// (`same_call`) and has no other step below it. Three stacked layers merge into the
/// outermost; a retrieval absorbed by a tool call keeps the tool's name and flags
/// `retrieval`. The same list is returned when nothing merges.
#[pyfunction]
fn merge_stacked_generations<'py>(
    drafts: &Bound<'py, PyList>,
    draft_by_span: &Bound<'py, PyDict>,
    by_id: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyList>> {
    let py = drafts.py();
    if drafts.len() < 2 {
        return Ok(drafts.clone());
    }
    let span_key = intern!(py, "span");
    let stackable = [
        Kind::Generation,
        Kind::ToolCall,
        Kind::Handoff,
        Kind::Retrieval,
    ];
    // Each draft's nearest enclosing draft, for the stackable ones (by identity).
    let memo = PyDict::new(py);
    let mut parent_of: FastMap<usize, Option<Bound<'py, PyAny>>> =
        FastMap::with_capacity(drafts.len());
    let mut pairs: Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)> = Vec::new();
    for draft in drafts.iter() {
        if !kind_in(&draft, &stackable)? {
            continue;
        }
        let span = draft_held(&draft, SPAN, span_key)?;
        if span.is_none() {
            continue;
        }
        let outer = nearest_memo(&span, draft_by_span, by_id, Some(&memo))?;
        if let Some(outer) = &outer {
            if same_call(outer, &draft)? {
                pairs.push((outer.clone(), draft.clone()));
            }
        }
        parent_of.insert(draft.as_ptr() as usize, outer);
    }
    if pairs.is_empty() {
        return Ok(drafts.clone());
    }
    let attempts = failed_attempts(&pairs)?;
    let mut below: FastMap<usize, usize> = FastMap::new();
    for draft in drafts.iter() {
        let key = draft.as_ptr() as usize;
        let span = draft_held(&draft, SPAN, span_key)?;
        if span.is_none() || attempts.contains(&key) {
            continue;
        }
        let parent = match parent_of.get(&key) {
            Some(parent) => parent.clone(),
            None => nearest_memo(&span, draft_by_span, by_id, Some(&memo))?,
        };
        if let Some(parent) = parent {
            *below.entry(parent.as_ptr() as usize).or_default() += 1;
        }
    }
    // inner -> the draft it merged into, in merge order.
    let mut merged_into: Vec<(usize, Bound<'py, PyAny>, Bound<'py, PyAny>)> = Vec::new();
    let mut merged_at: FastMap<usize, usize> = FastMap::new();
    let follow = |kept: &Bound<'py, PyAny>,
                  merged_into: &[(usize, Bound<'py, PyAny>, Bound<'py, PyAny>)],
                  merged_at: &FastMap<usize, usize>| {
        let mut kept = kept.clone();
        while let Some(&at) = merged_at.get(&(kept.as_ptr() as usize)) {
            kept = merged_into[at].2.clone();
        }
        kept
    };
    let tool = intern!(py, "tool");
    for (outer, inner) in &pairs {
        let inner_key = inner.as_ptr() as usize;
        if attempts.contains(&inner_key) {
            continue; // a failed attempt of the call: a failed model call step of its own
        }
        if below.get(&(outer.as_ptr() as usize)) != Some(&1) {
            continue; // other steps below it: a wrapper of several calls, not one call twice
        }
        let kept = follow(outer, &merged_into, &merged_at);
        let name = draft_fields(&kept)?.get_item(tool)?;
        absorb_layer(&kept, inner, draft_by_span)?;
        let retrieval = intern!(py, "retrieval");
        if kind_is(inner, Kind::Retrieval)? && !kind_is(&kept, Kind::Retrieval)? {
            // The call is the tool's, named as the model asked for it: a tool span whose
            // name was not recorded stays an unnamed call, never one named after the
            // retriever inside it.
            let kept_fields = draft_fields(&kept)?;
            match name.filter(|n| !n.is_none()) {
                None => {
                    kept_fields.call_method1(intern!(py, "pop"), (tool, py.None()))?;
                }
                Some(name) => kept_fields.set_item(tool, name)?,
            }
            draft_held(&kept, ATTRIBUTES, intern!(py, "attributes"))?.set_item(retrieval, true)?;
        }
        match merged_at.get(&inner_key) {
            Some(&at) => merged_into[at].2 = kept,
            None => {
                merged_at.insert(inner_key, merged_into.len());
                merged_into.push((inner_key, inner.clone(), kept));
            }
        }
    }
    // The layers of each kept draft, in first-merge order (an index by identity: a list
    // searched per merge cost the square of the number of merged calls).
    let mut layers: Vec<Bound<'py, PyList>> = Vec::new();
    let mut layer_at: FastMap<usize, usize> = FastMap::new();
    for (_, inner, kept) in &merged_into {
        let kept = follow(kept, &merged_into, &merged_at);
        match layer_at.get(&(kept.as_ptr() as usize)) {
            Some(&at) => layers[at].append(inner)?,
            None => {
                layer_at.insert(kept.as_ptr() as usize, layers.len());
                layers.push(PyList::new(py, [&kept, inner])?);
            }
        }
    }
    for group in &layers {
        outcome_from_layers(group, by_id, false)?;
    }
    let out = PyList::empty(py);
    for draft in drafts.iter() {
        if !merged_at.contains_key(&(draft.as_ptr() as usize)) {
            out.append(draft)?;
        }
    }
    Ok(out)
}

/// The tool calls `merge_sibling_layers` (`_stacked`) pairs: the tool-call and handoff
/// drafts with a span, in order; none when fewer than two, or when all their spans are of
/// one instrumentation scope (a layer never records one call twice), so that a trace with
/// nothing to pair costs no Python walk of its drafts. A handoff tool (AutoGen's
/// `transfer_to_<agent>`) is a handoff step where a layer knows it for one (both, when
/// OpenInference's TOOL span and autogen-core's `execute_tool` span each are recognised as
/// the handoff) and a plain tool call where it does not: either can be a layer.
#[pyfunction]
fn sibling_layer_calls<'py>(drafts: &Bound<'py, PyList>) -> PyResult<Bound<'py, PyList>> {
    let py = drafts.py();
    let calls = PyList::empty(py);
    let scopes = PySet::empty(py)?;
    for d in drafts.iter() {
        if !kind_in(&d, &[Kind::ToolCall, Kind::Handoff])? {
            continue;
        }
        let span = draft_held(&d, SPAN, intern!(py, "span"))?;
        if span.is_none() {
            continue;
        }
        if scopes.len() < 2 {
            scopes.add(span.getattr(intern!(py, "scope_name"))?)?;
        }
        calls.append(&d)?;
    }
    if calls.len() < 2 || scopes.len() < 2 {
        return Ok(PyList::empty(py));
    }
    Ok(calls)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(merge_stacked_generations, m)?)?;
    m.add_function(wrap_pyfunction!(sibling_layer_calls, m)?)?;
    m.add_function(wrap_pyfunction!(nearest_draft, m)?)?;
    m.add_function(wrap_pyfunction!(same_tool, m)?)?;
    m.add_function(wrap_pyfunction!(compatible_models, m)?)?;
    m.add_function(wrap_pyfunction!(absorb_layer, m)?)?;
    m.add_function(wrap_pyfunction!(outcome_from_layers, m)?)
}
