//! `OfflineAssembler`: the core's offline assembler (`otel_oracles_core::assemble_offline`)
//! fed with decoded `Batch`es, or with Python records built elsewhere.
//!
//! A native batch's spans wait as (batch, index) handles: the batch stays alive (shared)
//! while any of them waits, and Python records are built only for a released trace's spans,
//! when it is released, with its `Trace`. `otel_oracles.assemble._offline` drives it.

use std::sync::Arc;

use otel_oracles_core::assemble_offline::{self as core, Assembler, TraceKey};
use otel_oracles_core::model;
use otel_oracles_core::span_tree::{build as build_tree, Tree, TreeSpan};
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

use crate::batch::{with_gc_paused, Batch, Builder, Shared};
use crate::log_events::{attach_decoded, attach_to, DecodedTrace};
use crate::session_join::JoinFacts;
use crate::span_tree::{trace_from, trace_of, REMOTE_PARENT_FLAGS};

/// One waiting record: a span or log record of a decoded batch (by position), or a Python
/// record a caller built itself (tests, tools).
enum Item {
    Span(Arc<model::Batch>, usize),
    Log(Arc<model::Batch>, usize),
    Record(Py<PyAny>),
}

/// What `next_release` returns: the trace, built from its spans (`Trace.incomplete` set when
/// it was released early) with its log records attached (`log_events::attach_to`: those
/// attached nowhere counted in `Trace.unattached_logs`), and, when its spans are all
/// natively decoded, its `JoinFacts` read from them.
type Released<'py> = (Bound<'py, PyAny>, Option<Bound<'py, JoinFacts>>);

/// The counts of `AssemblyStats` the core keeps, in its field order (`late_trace_ids` as
/// hex strings).
type StatsTuple = (u64, u64, u64, u64, u64, Vec<String>, u64, u64, u64, u64);

#[pyclass(module = "otel_oracles._native", name = "OfflineAssembler")]
pub struct OfflineAssembler {
    inner: Assembler<Item>,
    /// What the records of every released trace share (attribute keys, resource dicts,
    /// scope strings): the traces of one input repeat them. Bounded (`batch::Shared`).
    shared: Shared,
}

#[pymethods]
impl OfflineAssembler {
    #[new]
    #[pyo3(signature = (idle_spans, max_buffered_spans=None))]
    fn new(idle_spans: i64, max_buffered_spans: Option<i64>) -> PyResult<Self> {
        Assembler::new(idle_spans, max_buffered_spans)
            .map(|inner| Self {
                inner,
                shared: Shared::new(),
            })
            .map_err(|err| PyValueError::new_err(err.0))
    }

    /// Feed a decoded batch (its spans, then its log records).
    fn push_batch(&mut self, batch: &Batch) {
        let shared = batch.shared();
        for (index, span) in shared.spans.iter().enumerate() {
            let item = Item::Span(Arc::clone(shared), index);
            self.inner.span(
                TraceKey::Id(span.trace_id),
                span.parent_span_id.is_none(),
                item,
            );
        }
        for (index, log) in shared.logs.iter().enumerate() {
            let item = Item::Log(Arc::clone(shared), index);
            self.inner.log(log.trace_id.map(TraceKey::Id), item);
        }
        self.inner.end_batch();
    }

    /// Feed Python `SpanRecord`s and `LogRecord`s (grouped by their `trace_id` text; a
    /// span is a root when its `parent_span_id` is empty, a log record without a trace id
    /// is unattached).
    fn push_records(&mut self, spans: &Bound<'_, PyAny>, logs: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = spans.py();
        let trace_id = PyString::new(py, "trace_id");
        let parent_span_id = PyString::new(py, "parent_span_id");
        for span in spans.try_iter()? {
            let span = span?;
            let key = span.getattr(&trace_id)?;
            let key = TraceKey::from_text(key.cast::<PyString>()?.to_str()?);
            let is_root = !span.getattr(&parent_span_id)?.is_truthy()?;
            self.inner.span(key, is_root, Item::Record(span.unbind()));
        }
        for log in logs.try_iter()? {
            let log = log?;
            let key = log.getattr(&trace_id)?;
            let key = key.cast::<PyString>()?.to_str()?;
            let key = (!key.is_empty()).then(|| TraceKey::from_text(key));
            self.inner.log(key, Item::Record(log.unbind()));
        }
        self.inner.end_batch();
        Ok(())
    }

    /// No more input: the traces still waiting come out of `next_release`.
    fn finish(&mut self) {
        self.inner.finish();
    }

    /// True once `finish` was called and every trace was released.
    #[getter]
    fn done(&self) -> bool {
        self.inner.is_done()
    }

    /// The next trace released, or `None` when the assembler needs the next batch (or is
    /// done). Its records and its `Trace` (the span tree, `span_tree::trace_of`, its log
    /// records attached as events) are built now, with the garbage collector paused.
    fn next_release<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Released<'py>>> {
        let Some(release) = self.inner.next_release() else {
            return Ok(None);
        };
        let shared = &mut self.shared;
        let released = with_gc_paused(py, || {
            let mut builder = Builder::sharing(py, std::mem::take(shared))?;
            let released = released_trace(py, &mut builder, &release);
            *shared = builder.into_shared();
            released
        })?;
        Ok(Some(released))
    }

    /// The counts so far: (spans_read, logs_read, traces, late_spans, late_logs,
    /// late_trace_ids, evicted_traces, unattached_logs, buffered_spans, peak_buffered_spans).
    fn stats(&self) -> StatsTuple {
        let s = self.inner.stats();
        (
            s.spans_read,
            s.logs_read,
            s.traces,
            s.late_spans,
            s.late_logs,
            s.late_trace_ids.iter().map(TraceKey::to_text).collect(),
            s.evicted_traces,
            s.unattached_logs,
            s.buffered_spans,
            s.peak_buffered_spans,
        )
    }
}

/// The `Trace` of `release` and its `JoinFacts` (`next_release`): its span records built,
/// its tree and facts read from the decoded spans when they all are, its log records
/// attached (those of decoded batches without building their `LogRecord`s when the tree is
/// the decoded spans', `log_events::attach_decoded`).
fn released_trace<'py>(
    py: Python<'py>,
    builder: &mut Builder<'py>,
    release: &core::Release<Item>,
) -> PyResult<Released<'py>> {
    let spans = records(py, builder, &release.spans)?;
    // The builder keeps the last trace id's string: the one the spans just built carry.
    let trace_id = match &release.trace_id {
        TraceKey::Id(id) => builder.trace_id(id),
        TraceKey::Text(text) => PyString::new(py, text),
    };
    let Some((tree, decoded)) = native_tree(&release.spans) else {
        let trace = trace_of(trace_id.as_any(), &spans, release.incomplete)?;
        let logs = records(py, builder, &release.logs)?;
        if !logs.is_empty() {
            attach_to(&trace, logs.as_any())?;
        }
        return Ok((trace, None));
    };
    let span_records: Vec<Bound<'py, PyAny>> = spans.iter().collect();
    let span_id = |index: usize| -> PyResult<Bound<'py, PyString>> {
        Ok(span_records[index]
            .getattr(intern!(py, "span_id"))?
            .cast_into::<PyString>()?)
    };
    let trace = trace_from(
        trace_id.as_any(),
        &span_records,
        &tree,
        span_id,
        release.incomplete,
    )?;
    let ordered: Vec<&model::Span> = tree.ordered.iter().map(|&index| decoded[index]).collect();
    let facts = JoinFacts::of_decoded(trace_id.to_str()?, &ordered);
    if !release.logs.is_empty() {
        match decoded_logs(&release.logs) {
            Some(logs) => {
                let spans = DecodedTrace {
                    records: &span_records,
                    decoded: &decoded,
                    tree: &tree,
                };
                attach_decoded(&trace, &release.trace_id, &spans, &logs, builder)?;
            }
            None => attach_to(&trace, records(py, builder, &release.logs)?.as_any())?,
        }
    }
    Ok((trace, Some(Bound::new(py, facts)?)))
}

/// The decoded log records of released items that all are; `None` when a record built in
/// Python is among them.
fn decoded_logs(items: &[Item]) -> Option<Vec<&model::LogRecord>> {
    items
        .iter()
        .map(|item| match item {
            Item::Log(batch, index) => batch.logs.get(*index),
            _ => None,
        })
        .collect()
}

/// The span tree of released items that are all spans of decoded batches, read from the
/// decoded spans themselves (ids compared as bytes, as their hex texts compare), so the
/// records just built are not read back, with the decoded spans (arrival order, the
/// tree's positions); `None` when a record built in Python is among them (`trace_of` reads
/// those).
fn native_tree(items: &[Item]) -> Option<(Tree, Vec<&model::Span>)> {
    let mut decoded = Vec::with_capacity(items.len());
    for item in items {
        let Item::Span(batch, index) = item else {
            return None;
        };
        decoded.push(batch.spans.get(*index)?);
    }
    let mut spans: Vec<TreeSpan<&[u8]>> = Vec::with_capacity(decoded.len());
    for span in &decoded {
        spans.push(TreeSpan {
            id: &span.span_id,
            parent: span.parent_span_id.as_ref().map(|id| &id[..]),
            parent_is_remote: i64::from(span.flags) & REMOTE_PARENT_FLAGS == REMOTE_PARENT_FLAGS,
            start: i128::from(span.start_ns),
            end: i128::from(span.end_ns),
            scope: span.scope.name.as_bytes(),
        });
    }
    let tree = build_tree(&spans);
    Some((tree, decoded))
}

/// The Python records of released items, in order.
fn records<'py>(
    py: Python<'py>,
    builder: &mut Builder<'py>,
    items: &[Item],
) -> PyResult<Bound<'py, PyList>> {
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        out.push(match item {
            Item::Span(batch, index) => match batch.spans.get(*index) {
                Some(span) => builder.span(span)?,
                None => return Err(PyValueError::new_err("span handle out of range")),
            },
            Item::Log(batch, index) => match batch.logs.get(*index) {
                Some(log) => builder.log(log)?,
                None => return Err(PyValueError::new_err("log handle out of range")),
            },
            Item::Record(record) => record.bind(py).clone(),
        });
    }
    PyList::new(py, out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The release policy's constants live in the core; Python reads them from here.
    m.add("UNROOTED_IDLE_FACTOR", core::UNROOTED_IDLE_FACTOR)?;
    m.add("REMEMBERED_TRACE_IDS", core::REMEMBERED_TRACE_IDS)?;
    m.add("LATE_SAMPLE_SIZE", core::LATE_SAMPLE_SIZE)?;
    m.add_class::<OfflineAssembler>()
}
