//! Log records attached to a `Trace`'s spans, and a joined run's `Trace`s merged
//! (`otel_oracles_core::log_events`), over Python records.
//!
//! The core decides where each record goes and which are repeats; here the records' fields
//! are read, their contents compared with Python's `==` (`body == body` and the attributes
//! as `dict`s: what the decoders build compares as Python compares it), the `EventRecord`s
//! made as `LogRecord.as_event` makes them and each span's events list set.

use otel_oracles_core::hashing::{FastMap, FastMapExt, FastSet, FastSetExt};
use otel_oracles_core::log_events::{
    attach, first_start as core_first_start, merge_by_time, merge_order, Kid, LogRef,
};
use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString};

use otel_oracles_core::assemble_offline::TraceKey;
use otel_oracles_core::model;
use otel_oracles_core::span_tree::Tree;

use crate::batch::{record_types, Builder};
use crate::session_join::delegations_of;
use crate::span_tree::{int_of, trace_of};

/// A record's `str` field as Rust text.
fn text_of(value: &Bound<'_, PyAny>) -> PyResult<String> {
    match value.cast::<PyString>() {
        Ok(text) => Ok(text.to_str()?.to_owned()),
        Err(_) => Err(PyTypeError::new_err("span and trace ids must be str")),
    }
}

/// `dict(value)`, without a copy when it is one.
fn as_dict<'py>(value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if value.is_exact_instance_of::<PyDict>() {
        Ok(value.clone())
    } else {
        value.py().get_type::<PyDict>().call1((value,))
    }
}

/// Attach `logs` (`LogRecord`s) to the spans of `trace` (built without them) as
/// `build_trace` says, and add the rest to `trace.unattached_logs`.
pub(crate) fn attach_to(trace: &Bound<'_, PyAny>, logs: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = trace.py();
    let records: Vec<Bound<'_, PyAny>> = logs.try_iter()?.collect::<PyResult<_>>()?;
    if records.is_empty() {
        return Ok(());
    }
    let trace_id = trace.getattr(intern!(py, "trace_id"))?;
    let own_id = trace_id
        .cast::<PyString>()
        .ok()
        .map(|id| id.to_str())
        .transpose()?;
    let spans = trace.getattr(intern!(py, "spans"))?;
    let mut by_id: FastMap<String, (Bound<'_, PyAny>, Bound<'_, PyAny>)> = FastMap::new();
    for span in spans.try_iter()? {
        let span = span?;
        let id = span.getattr(intern!(py, "span_id"))?;
        by_id.insert(text_of(&id)?, (span, id));
    }
    let children = trace.getattr(intern!(py, "children"))?;
    let children = children.cast::<PyDict>()?;

    let mut refs = Vec::with_capacity(records.len());
    for log in &records {
        let named = log.getattr(intern!(py, "event_name"))?;
        let log_trace = log.getattr(intern!(py, "trace_id"))?;
        let in_trace = match (own_id, log_trace.cast::<PyString>()) {
            (Some(own), Ok(theirs)) => theirs.to_str()? == own,
            _ => log_trace.eq(&trace_id)?,
        };
        let is_named = named.is_truthy()?;
        let span = text_of(&log.getattr(intern!(py, "span_id"))?)?;
        let time = if is_named && in_trace && by_id.contains_key(&span) {
            int_of(&log.getattr(intern!(py, "time_ns"))?)?
        } else {
            0
        };
        refs.push(LogRef {
            named: is_named,
            in_trace,
            span,
            event: if is_named {
                text_of(&named)?
            } else {
                String::new()
            },
            time,
        });
    }

    let mut kids_read: FastMap<String, Vec<Kid<String>>> = FastMap::new();
    let kids = |span: &String| -> PyResult<Vec<Kid<String>>> {
        if let Some(known) = kids_read.get(span) {
            return Ok(known.clone());
        }
        let mut found = Vec::new();
        if let Some((_, id)) = by_id.get(span) {
            if let Some(list) = children.get_item(id)? {
                for kid in list.try_iter()? {
                    let kid = kid?;
                    found.push(Kid {
                        id: text_of(&kid.getattr(intern!(py, "span_id"))?)?,
                        start: int_of(&kid.getattr(intern!(py, "start_ns"))?)?,
                        end: int_of(&kid.getattr(intern!(py, "end_ns"))?)?,
                    });
                }
            }
        }
        kids_read.insert(span.clone(), found.clone());
        Ok(found)
    };
    let same = |a: usize, b: usize| -> PyResult<bool> {
        let (a, b) = (&records[a], &records[b]);
        let body = intern!(py, "body");
        if !a.getattr(body)?.eq(b.getattr(body)?)? {
            return Ok(false);
        }
        let attributes = intern!(py, "attributes");
        as_dict(&a.getattr(attributes)?)?.eq(as_dict(&b.getattr(attributes)?)?)
    };
    let found = attach(&refs, |span| by_id.contains_key(span), kids, same)?;

    let types = record_types(py)?;
    let from_log = PyBool::new(py, true).to_owned().into_any();
    for (span_id, attached) in &found.per_span {
        let Some((span, _)) = by_id.get(span_id) else {
            continue; // the core attaches to known spans only
        };
        let mut events = Vec::with_capacity(attached.len());
        for &index in attached {
            let log = &records[index];
            events.push(types.event(
                py,
                [
                    log.getattr(intern!(py, "event_name"))?,
                    log.getattr(intern!(py, "time_ns"))?,
                    log.getattr(intern!(py, "attributes"))?,
                    log.getattr(intern!(py, "body"))?,
                    from_log.clone(),
                    log.getattr(intern!(py, "dropped_attributes"))?,
                ],
            )?);
        }
        set_events(span, events)?;
    }
    count_unattached(trace, found.unattached)
}

/// `span.events`: its own events (log-based ones attached earlier dropped) and `attached`,
/// merged by time.
fn set_events<'py>(span: &Bound<'py, PyAny>, attached: Vec<Bound<'py, PyAny>>) -> PyResult<()> {
    let py = span.py();
    let mut events: Vec<Bound<'py, PyAny>> = Vec::new();
    for event in span.getattr(intern!(py, "events"))?.try_iter()? {
        let event = event?;
        if !event.getattr(intern!(py, "from_log"))?.is_truthy()? {
            events.push(event);
        }
    }
    events.extend(attached);
    span.setattr(intern!(py, "events"), by_time(py, events)?)
}

/// Add `unattached` to `trace.unattached_logs`.
fn count_unattached(trace: &Bound<'_, PyAny>, unattached: usize) -> PyResult<()> {
    if unattached > 0 {
        let py = trace.py();
        let count = intern!(py, "unattached_logs");
        let before = trace.getattr(count)?;
        trace.setattr(count, before.add(unattached)?)?;
    }
    Ok(())
}

/// A released trace's spans as the offline assembler holds them: the records (arrival
/// order), the decoded spans they were built from, and the tree over those positions.
pub(crate) struct DecodedTrace<'a, 'py> {
    pub records: &'a [Bound<'py, PyAny>],
    pub decoded: &'a [&'a model::Span],
    pub tree: &'a Tree,
}

/// `attach_to` for log records of decoded batches, read from the decoded records: only the
/// attached ones are built, as `EventRecord`s (`Builder::log_event`), and the contents of
/// two records are built to be compared only when they share a span, event name and time.
pub(crate) fn attach_decoded<'py>(
    trace: &Bound<'py, PyAny>,
    trace_id: &TraceKey,
    spans: &DecodedTrace<'_, 'py>,
    logs: &[&model::LogRecord],
    builder: &mut Builder<'py>,
) -> PyResult<()> {
    if logs.is_empty() {
        return Ok(());
    }
    let (decoded, tree) = (spans.decoded, spans.tree);
    // The trace's spans by id (the tree keeps the first record of each) and the slot of
    // each parent's children.
    let mut by_id: FastMap<[u8; 8], usize> = FastMap::with_capacity(tree.ordered.len());
    for &index in &tree.ordered {
        by_id.insert(decoded[index].span_id, index);
    }
    let mut slot_of: FastMap<usize, usize> = FastMap::with_capacity(tree.children.len());
    for (slot, (parent, _)) in tree.children.iter().enumerate() {
        slot_of.insert(*parent, slot);
    }
    let own_text = match trace_id {
        TraceKey::Id(_) => None,
        TraceKey::Text(text) => Some(text),
    };
    let refs: Vec<LogRef<Option<[u8; 8]>, &str>> = logs
        .iter()
        .map(|log| LogRef {
            named: !log.event_name.is_empty(),
            in_trace: match (trace_id, &log.trace_id) {
                (TraceKey::Id(own), Some(theirs)) => own == theirs,
                (_, theirs) => {
                    let theirs = theirs.map(|id| model::hex(&id)).unwrap_or_default();
                    own_text.is_some_and(|own| **own == *theirs)
                }
            },
            span: log.span_id,
            event: log.event_name.as_str(),
            time: i128::from(log.time_ns),
        })
        .collect();
    let kids = |span: &Option<[u8; 8]>| -> PyResult<Vec<Kid<Option<[u8; 8]>>>> {
        let slot = span
            .and_then(|id| by_id.get(&id))
            .and_then(|index| slot_of.get(index));
        Ok(slot.map_or_else(Vec::new, |&slot| {
            tree.children[slot]
                .1
                .iter()
                .map(|&kid| Kid {
                    id: Some(decoded[kid].span_id),
                    start: i128::from(decoded[kid].start_ns),
                    end: i128::from(decoded[kid].end_ns),
                })
                .collect()
        }))
    };
    let mut contents: Vec<Option<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> =
        (0..logs.len()).map(|_| None).collect();
    let found = {
        let mut built = |index: usize| -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
            if let Some(known) = &contents[index] {
                return Ok(known.clone());
            }
            let made = builder.log_contents(logs[index])?;
            contents[index] = Some(made.clone());
            Ok(made)
        };
        let same = |a: usize, b: usize| -> PyResult<bool> {
            let ((body_a, attributes_a), (body_b, attributes_b)) = (built(a)?, built(b)?);
            if !body_a.eq(body_b)? {
                return Ok(false);
            }
            as_dict(&attributes_a)?.eq(as_dict(&attributes_b)?)
        };
        attach(
            &refs,
            |span| span.is_some_and(|id| by_id.contains_key(&id)),
            kids,
            same,
        )?
    };
    for (span_id, attached) in &found.per_span {
        let Some(&index) = span_id.and_then(|id| by_id.get(&id)) else {
            continue; // the core attaches to known spans only
        };
        let mut events = Vec::with_capacity(attached.len());
        for &log in attached {
            events.push(builder.log_event(logs[log], contents[log].take())?);
        }
        set_events(&spans.records[index], events)?;
    }
    count_unattached(trace, found.unattached)
}

/// `events` in a new list sorted by `time_ns`, ties kept in order (`list.sort` with that
/// key when a time is not an integer).
fn by_time<'py>(py: Python<'py>, events: Vec<Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyList>> {
    let mut times = Vec::with_capacity(events.len());
    for event in &events {
        match int_of(&event.getattr(intern!(py, "time_ns"))?) {
            Ok(time) => times.push(time),
            Err(_) => {
                let list = PyList::new(py, events)?;
                let key = PyModule::import(py, "operator")?
                    .getattr(intern!(py, "attrgetter"))?
                    .call1((intern!(py, "time_ns"),))?;
                let kwargs = PyDict::new(py);
                kwargs.set_item(intern!(py, "key"), key)?;
                list.call_method(intern!(py, "sort"), (), Some(&kwargs))?;
                return Ok(list);
            }
        }
    }
    PyList::new(py, merge_by_time(&times).into_iter().map(|i| &events[i]))
}

/// When the earliest of `spans` started (0 for none).
fn start_of(spans: &Bound<'_, PyAny>) -> PyResult<i128> {
    let py = spans.py();
    let mut starts = Vec::new();
    for span in spans.try_iter()? {
        starts.push(int_of(&span?.getattr(intern!(py, "start_ns"))?)?);
    }
    Ok(core_first_start(starts))
}

/// When the earliest of `spans` started: joined traces are ordered by it.
#[pyfunction]
fn first_start(spans: &Bound<'_, PyAny>) -> PyResult<i128> {
    start_of(spans)
}

/// One `Trace` of a joined run's `traces`: identified by the one that started first; a root
/// span that links to a span of another member becomes that span's child (a copy of the
/// record with the parent set), and so does the root of an agent trace that one tool call
/// of another member ran (`delegations`); incomplete when any member is, its unattached log
/// records theirs added up.
#[pyfunction]
fn merge_traces<'py>(traces: &Bound<'py, PyList>) -> PyResult<Bound<'py, PyAny>> {
    let py = traces.py();
    if traces.len() == 1 {
        return traces.get_item(0);
    }
    let members: Vec<Bound<'py, PyAny>> = traces.iter().collect();
    let mut starts = Vec::with_capacity(members.len());
    let mut member_spans = Vec::with_capacity(members.len());
    for trace in &members {
        let spans = trace.getattr(intern!(py, "spans"))?;
        starts.push(start_of(&spans)?);
        member_spans.push(spans);
    }
    let order = merge_order(&starts);
    let ordered = PyList::new(py, order.iter().map(|&i| &members[i]))?;
    let mut span_ids: FastSet<String> = FastSet::new();
    for &i in &order {
        for span in member_spans[i].try_iter()? {
            span_ids.insert(text_of(&span?.getattr(intern!(py, "span_id"))?)?);
        }
    }
    let adopted = delegations_of(&ordered)?;
    let mut spans = Vec::new();
    for &i in &order {
        for span in member_spans[i].try_iter()? {
            let span = span?;
            spans.push(match rehung_parent(&span, &adopted, &span_ids)? {
                Some(parent) => with_parent(&span, &parent)?,
                None => span,
            });
        }
    }
    let mut incomplete = false;
    let mut unattached = 0u64;
    for trace in &members {
        incomplete |= trace.getattr(intern!(py, "incomplete"))?.is_truthy()?;
        unattached += trace
            .getattr(intern!(py, "unattached_logs"))?
            .extract::<u64>()?;
    }
    let first = ordered.get_item(0)?;
    let joined = trace_of(
        &first.getattr(intern!(py, "trace_id"))?,
        &PyList::new(py, spans)?,
        incomplete,
    )?;
    joined.setattr(intern!(py, "unattached_logs"), unattached)?;
    Ok(joined)
}

/// A copy of `span` with `parent_span_id` set to `parent` (`dataclasses.replace`: the
/// record's class called with its fields; a joined run hangs a few roots).
fn with_parent<'py>(
    span: &Bound<'py, PyAny>,
    parent: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = span.py();
    let kwargs = PyDict::new(py);
    kwargs.set_item(intern!(py, "parent_span_id"), parent)?;
    PyModule::import(py, "dataclasses")?
        .getattr(intern!(py, "replace"))?
        .call((span,), Some(&kwargs))
}

/// The parent a root `span` of a joined run gets: the tool call that ran its agent trace
/// (`adopted`), else the first span it links to in another trace among the run's
/// (`span_ids`); `None` for a span with a parent or nothing to hang under.
fn rehung_parent<'py>(
    span: &Bound<'py, PyAny>,
    adopted: &Bound<'py, PyDict>,
    span_ids: &FastSet<String>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = span.py();
    if span.getattr(intern!(py, "parent_span_id"))?.is_truthy()? {
        return Ok(None);
    }
    let id = span.getattr(intern!(py, "span_id"))?;
    if !adopted.is_empty() {
        if let Some(caller) = adopted.get_item(&id)? {
            return Ok(Some(caller));
        }
    }
    let trace_id = span.getattr(intern!(py, "trace_id"))?;
    for link in span.getattr(intern!(py, "links"))?.try_iter()? {
        let link = link?;
        if link.getattr(intern!(py, "trace_id"))?.ne(&trace_id)? {
            let target = link.getattr(intern!(py, "span_id"))?;
            if let Ok(text) = target.cast::<PyString>() {
                if span_ids.contains(text.to_str()?) {
                    return Ok(Some(target));
                }
            }
        }
    }
    Ok(None)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(first_start, m)?)?;
    m.add_function(wrap_pyfunction!(merge_traces, m)?)
}
