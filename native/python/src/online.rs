//! `OnlineBuffer` and `TransferSpans`: `serve`'s online assembly buffer, with the spans it
//! buffers kept as compact native entries.
//!
//! `serve`'s receiving process only assembles: it reads a span's ids, end time and (for
//! joining runs split over traces) its start, links and session attributes, and hands the
//! span to a grading worker by its position in the request body. So a body decoded for
//! transfer (`Batch.transfer_spans`) becomes a `TransferSpans`: per span a [`SpanFacts`]
//! (ids, times, position, origin), per body one [`BodyInfo`] (the `RequestBody`, the
//! `service.name` dict and scope name of each resource and scope, the rare links and session
//! attributes). `OnlineBuffer.offer` moves those entries into the policy of
//! `otel_oracles_core::online` without a Python object per span; `WireSpan`s are built when
//! a trace is released (`due`, `drain`), the only time Python code reads them.
//!
//! Records that are Python objects already (`SpanRecord`s when grading runs on threads of
//! the receiving process, log records, tests) are buffered as they are.

use std::sync::Arc;

use otel_oracles_core::hashing::{FastMap, FastMapExt};
use otel_oracles_core::model::{self, KeyValue};
use otel_oracles_core::online::{
    self as policy, BufferedSpan, Fingerprint, Limits, Part, Released,
};
use pyo3::exceptions::{PyIndexError, PyOverflowError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyIterator, PyList, PySet, PyString};

use otel_oracles_core::model::hex as hex_string;

use crate::batch::{hex, Builder};

/// What is kept of one span decoded for transfer: everything a `WireSpan` holds except what
/// its body shares ([`BodyInfo`]).
#[derive(Clone, Copy, Debug)]
pub struct SpanFacts {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    pub parent: Option<[u8; 8]>,
    pub start_ns: u64,
    pub end_ns: u64,
    /// OTLP's `Span.flags` (whether the parent is remote, for `build_trace`).
    pub flags: u32,
    /// Position among the body's decoded spans (what a worker takes it by).
    pub index: u32,
    /// Index into [`BodyInfo::origins`].
    pub origin: u32,
    /// Index into [`BodyInfo::extras`], or [`NO_EXTRA`].
    pub extra: u32,
}

/// [`SpanFacts::extra`] of a span without links or session attributes.
pub const NO_EXTRA: u32 = u32::MAX;

/// What joining runs split over traces reads of a span besides its ids: its links (without
/// attributes) and its `SESSION_ATTRIBUTES`, in wire order. Kept as decoded (Python objects
/// are built when the span is released), once per run of spans that share them.
#[derive(Debug, PartialEq)]
pub struct Extra {
    pub links: Vec<model::Link>,
    pub session: Vec<KeyValue>,
}

/// What the spans of one request body share.
pub struct BodyInfo {
    /// The `decode._transfer.RequestBody` (payload, kind, id).
    pub body: Py<PyAny>,
    /// Its `id` (what a worker's message names its part by: `wire_references`).
    pub id: u64,
    /// Per (resource, scope): the `service.name` dict (`_transfer.service_only`) and the
    /// scope name.
    pub origins: Vec<(Py<PyAny>, Py<PyAny>)>,
    /// The links and session attributes of the spans that have any (the rest share
    /// `NO_ITEMS`/`EMPTY`).
    pub extras: Vec<Extra>,
    pub no_items: Py<PyAny>,
    pub empty: Py<PyAny>,
}

impl BodyInfo {
    /// The `WireSpan` of one of this body's spans (`trace_id`: its hex, shared by the
    /// spans of a trace released together).
    fn wire_span<'py>(
        self: &Arc<Self>,
        py: Python<'py>,
        facts: &SpanFacts,
        trace_id: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if self.origins.get(facts.origin as usize).is_none() {
            return Err(PyIndexError::new_err("span origin out of range"));
        }
        let span = Bound::new(
            py,
            WireSpan {
                body: Arc::clone(self),
                facts: *facts,
                trace_id: trace_id.clone().unbind(),
            },
        )?;
        // Out of the collector's lists: a `WireSpan` shows the collector no reference (it
        // has no `__traverse__`, and its body's objects are behind an `Arc`), so it cannot
        // be seen in a cycle, and scanning the ones held in flight was ~0.5 k instructions
        // a span. SAFETY: `span` is a live object, untracked only when it is a collector's
        // object (every `#[pyclass]` is); untracking is always allowed, and its dealloc
        // untracks only what is tracked.
        unsafe {
            let flags = pyo3::ffi::PyType_GetFlags(span.get_type().as_type_ptr());
            if flags & pyo3::ffi::Py_TPFLAGS_HAVE_GC != 0 {
                pyo3::ffi::PyObject_GC_UnTrack(span.as_ptr().cast());
            }
        }
        Ok(span.into_any())
    }
}

/// What assembly reads of a span decoded for transfer, and where the rest is: the span's
/// compact entry and its body's shared part, read as attributes on access. Why native: the
/// receiving process makes one for every span it releases, and a Python object with its
/// twelve fields built up front (ids as hex, times as ints, links and session attributes as
/// Python objects) was the most per-span Python left there, while the joiner reads only the
/// links, session attributes and start, and the hand-off only the body and the position
/// (`wire_references`, in the core). Never pickled: a worker is sent references
/// (`_processes._parts`).
#[pyclass(module = "otel_oracles._native", name = "WireSpan", frozen)]
pub struct WireSpan {
    body: Arc<BodyInfo>,
    facts: SpanFacts,
    trace_id: Py<PyString>,
}

impl WireSpan {
    fn origin(&self) -> PyResult<&(Py<PyAny>, Py<PyAny>)> {
        self.body
            .origins
            .get(self.facts.origin as usize)
            .ok_or_else(|| PyIndexError::new_err("span origin out of range"))
    }
}

#[pymethods]
impl WireSpan {
    /// The `RequestBody` the span was decoded from.
    #[getter]
    fn body<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.body.body.bind(py).clone()
    }

    /// Its position among the body's decoded spans.
    #[getter]
    fn index(&self) -> u32 {
        self.facts.index
    }

    #[getter]
    fn trace_id<'py>(&self, py: Python<'py>) -> Bound<'py, PyString> {
        self.trace_id.bind(py).clone()
    }

    #[getter]
    fn span_id<'py>(&self, py: Python<'py>) -> Bound<'py, PyString> {
        hex(py, &self.facts.span_id)
    }

    /// The parent's id, "" for a root.
    #[getter]
    fn parent_span_id<'py>(&self, py: Python<'py>) -> Bound<'py, PyString> {
        match &self.facts.parent {
            Some(id) => hex(py, id),
            None => PyString::new(py, ""),
        }
    }

    #[getter]
    fn start_ns(&self) -> u64 {
        self.facts.start_ns
    }

    #[getter]
    fn end_ns(&self) -> u64 {
        self.facts.end_ns
    }

    #[getter]
    fn flags(&self) -> u32 {
        self.facts.flags
    }

    /// As `SpanRecord.parent_is_remote`.
    #[getter]
    fn parent_is_remote(&self) -> bool {
        self.facts.flags & REMOTE_PARENT_FLAGS == REMOTE_PARENT_FLAGS
    }

    /// Its resource's `service.name` only (`_transfer.service_only`), one dict a resource.
    #[getter]
    fn resource<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.origin()?.0.bind(py).clone())
    }

    #[getter]
    fn scope_name<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.origin()?.1.bind(py).clone())
    }

    /// Its links without their attributes (`NO_ITEMS` when none), built on each read.
    #[getter]
    fn links<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.body.extras.get(self.facts.extra as usize) {
            Some(extra) => Builder::new(py)?.bare_links(&extra.links),
            None => Ok(self.body.no_items.bind(py).clone()),
        }
    }

    /// Its `SESSION_ATTRIBUTES` only (`EMPTY` when none), built on each read.
    #[getter]
    fn attributes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.body.extras.get(self.facts.extra as usize) {
            Some(extra) => Builder::new(py)?.session_attributes(&extra.session),
            None => Ok(self.body.empty.bind(py).clone()),
        }
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "WireSpan(body={}, index={}, trace_id={}, span_id={})",
            self.body.id,
            self.facts.index,
            self.trace_id.bind(py),
            hex_string(&self.facts.span_id)
        )
    }
}

/// `SpanRecord.flags` bits saying the parent's context was propagated from another process
/// (`model.span.REMOTE_PARENT_FLAGS`: has-is-remote and is-remote).
const REMOTE_PARENT_FLAGS: u32 = 0x300;

/// `otel_oracles.decode._transfer.WireLog`, imported on first use.
static WIRE_LOG: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// A span or log-record list of a message to a grading worker as references into the
/// parts of their bodies (`_processes._Records`): for each list of `lists`, one
/// (slot, position) pair of native-order `u32`s a record, in the list's order, and the
/// records sent as themselves (slot `0xFFFFFFFF`, position = index in that list: any record
/// that is not a `WireSpan` or `WireLog`). A slot is the body's place in the returned
/// bodies, first come first placed; with each body, the positions named in it, ascending,
/// without repeats. One call a message: the receiving process's hand-off runs no Python per
/// record (a `WireLog`'s body and index are read as attributes).
#[pyfunction]
#[allow(clippy::type_complexity)]
fn wire_references<'py>(
    py: Python<'py>,
    lists: Vec<Bound<'py, PyAny>>,
) -> PyResult<(
    Bound<'py, PyList>,
    Vec<Vec<u32>>,
    Vec<(Bound<'py, PyBytes>, Bound<'py, PyList>)>,
)> {
    let wire_log = WIRE_LOG
        .get_or_try_init(py, || -> PyResult<Py<PyAny>> {
            let module = PyModule::import(py, "otel_oracles.decode._transfer")?;
            Ok(module.getattr("WireLog")?.unbind())
        })?
        .bind(py);
    let mut slots: FastMap<u64, u32> = FastMap::new();
    let bodies = PyList::empty(py);
    let mut positions: Vec<Vec<u32>> = Vec::new();
    let mut out = Vec::with_capacity(lists.len());
    let mut slot_of = |id: u64, body: &Bound<'py, PyAny>| -> PyResult<u32> {
        if let Some(&slot) = slots.get(&id) {
            return Ok(slot);
        }
        let slot = u32::try_from(positions.len())
            .ok()
            .filter(|&slot| slot != AS_IS)
            .ok_or_else(|| PyOverflowError::new_err("too many bodies in one message"))?;
        slots.insert(id, slot);
        bodies.append(body)?;
        positions.push(Vec::new());
        Ok(slot)
    };
    let mut named: Vec<(u32, u32)> = Vec::new();
    for records in lists {
        let mut refs: Vec<u32> = Vec::new();
        let objects = PyList::empty(py);
        for record in records.try_iter()? {
            let record = record?;
            let (slot, index) = if let Ok(span) = record.cast::<WireSpan>() {
                let span = span.get();
                (
                    slot_of(span.body.id, span.body.body.bind(py))?,
                    span.facts.index,
                )
            } else if record.get_type().is(wire_log) {
                let body = record.getattr(intern!(py, "body"))?;
                let id: u64 = body.getattr(intern!(py, "id"))?.extract()?;
                (
                    slot_of(id, &body)?,
                    record.getattr(intern!(py, "index"))?.extract()?,
                )
            } else {
                let at = u32::try_from(objects.len())
                    .map_err(|_| PyOverflowError::new_err("too many records in one list"))?;
                objects.append(record)?;
                refs.extend([AS_IS, at]);
                continue;
            };
            named.push((slot, index));
            refs.extend([slot, index]);
        }
        let bytes = PyBytes::new_with(py, refs.len() * 4, |buf| {
            for (chunk, value) in buf.chunks_exact_mut(4).zip(&refs) {
                chunk.copy_from_slice(&value.to_ne_bytes());
            }
            Ok(())
        })?;
        out.push((bytes, objects));
    }
    for (slot, index) in named {
        positions[slot as usize].push(index);
    }
    for at in &mut positions {
        at.sort_unstable();
        at.dedup();
    }
    Ok((bodies, positions, out))
}

/// The slot of a record sent as itself (`_processes._AS_IS`).
const AS_IS: u32 = u32::MAX;

/// The spans of one request body decoded for transfer (`Batch.transfer_spans`): a sequence
/// of `WireSpan`s built on access, and what `OnlineBuffer.offer` buffers without them.
#[pyclass(module = "otel_oracles._native", name = "TransferSpans")]
pub struct TransferSpans {
    pub body: Arc<BodyInfo>,
    pub spans: Vec<SpanFacts>,
}

impl TransferSpans {
    fn wire_span<'py>(&self, py: Python<'py>, facts: &SpanFacts) -> PyResult<Bound<'py, PyAny>> {
        self.body.wire_span(py, facts, &hex(py, &facts.trace_id))
    }
}

#[pymethods]
impl TransferSpans {
    /// The `RequestBody` the spans were decoded from (`serve` spills its bytes once the
    /// request is spooled).
    #[getter]
    fn body<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.body.body.bind(py).clone()
    }

    fn __len__(&self) -> usize {
        self.spans.len()
    }

    fn __getitem__<'py>(&self, py: Python<'py>, index: isize) -> PyResult<Bound<'py, PyAny>> {
        let len = isize::try_from(self.spans.len()).unwrap_or(isize::MAX);
        let at = if index < 0 { index + len } else { index };
        let facts = usize::try_from(at)
            .ok()
            .and_then(|i| self.spans.get(i))
            .ok_or_else(|| PyIndexError::new_err("TransferSpans index out of range"))?;
        self.wire_span(py, facts)
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyIterator>> {
        let items = self
            .spans
            .iter()
            .map(|facts| self.wire_span(py, facts))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)?.try_iter()
    }

    /// Drop the spans the grader emitted itself; how many. `marked` (the grader's scope or
    /// `service.name`) is asked once per (resource, scope) of the body, with its first span,
    /// as it only reads those; `is_own` (markers and the shape of a grade span) is asked of
    /// every span of a marked (resource, scope): the markers are strings any sender can
    /// write, so a forged span beside real grade spans must be looked at on its own.
    fn drop_own(
        &mut self,
        py: Python<'_>,
        marked: &Bound<'_, PyAny>,
        is_own: &Bound<'_, PyAny>,
    ) -> PyResult<usize> {
        let mut verdicts: Vec<Option<bool>> = vec![None; self.body.origins.len()];
        let mut dropped: Vec<bool> = Vec::with_capacity(self.spans.len());
        for facts in &self.spans {
            let slot = verdicts
                .get_mut(facts.origin as usize)
                .ok_or_else(|| PyIndexError::new_err("span origin out of range"))?;
            let is_marked = match *slot {
                Some(known) => known,
                None => {
                    let probe = self.body.wire_span(py, facts, &hex(py, &facts.trace_id))?;
                    *slot.insert(marked.call1((probe,))?.is_truthy()?)
                }
            };
            let own = is_marked && {
                let probe = self.body.wire_span(py, facts, &hex(py, &facts.trace_id))?;
                is_own.call1((probe,))?.is_truthy()?
            };
            dropped.push(own);
        }
        let before = self.spans.len();
        let mut flags = dropped.into_iter();
        self.spans.retain(|_| !flags.next().unwrap_or(false));
        Ok(before - self.spans.len())
    }

    /// The trace ids (hex) the spans belong to.
    fn trace_ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PySet>> {
        let set = PySet::empty(py)?;
        let mut seen: FastMap<[u8; 16], ()> = FastMap::new();
        for facts in &self.spans {
            if seen.insert(facts.trace_id, ()).is_none() {
                set.add(hex(py, &facts.trace_id))?;
            }
        }
        Ok(set)
    }

    /// Keep only the spans of the trace ids in `keep` (a set of hex ids).
    fn keep_traces(&mut self, py: Python<'_>, keep: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut verdicts: FastMap<[u8; 16], bool> = FastMap::new();
        for facts in &self.spans {
            if let std::collections::hash_map::Entry::Vacant(slot) = verdicts.entry(facts.trace_id)
            {
                slot.insert(keep.contains(hex(py, &facts.trace_id))?);
            }
        }
        self.spans
            .retain(|facts| verdicts.get(&facts.trace_id) == Some(&true));
        Ok(())
    }

    fn __repr__(&self) -> String {
        format!("TransferSpans(spans={})", self.spans.len())
    }
}

/// A buffered span: a Python record as given, or the compact entry of a span decoded for
/// transfer (its body's shared part by reference).
enum SpanEntry {
    Object {
        record: Py<PyAny>,
        ends_root: bool,
    },
    Compact {
        body: Arc<BodyInfo>,
        facts: SpanFacts,
    },
}

impl BufferedSpan for SpanEntry {
    fn ends_root(&self) -> bool {
        match self {
            SpanEntry::Object { ends_root, .. } => *ends_root,
            SpanEntry::Compact { facts, .. } => facts.parent.is_none() && facts.end_ns != 0,
        }
    }
}

/// A part of a request being grouped: its trace's records and (for the fingerprint) the
/// first record's key once known.
struct Group {
    trace_id: String,
    spans: Vec<SpanEntry>,
    logs: Vec<Py<PyAny>>,
    first_span: Option<String>,
}

/// `serve`'s online assembly buffer (`otel_oracles.assemble.online.OnlineAssembler` drives
/// it; the policy is `otel_oracles_core::online`).
#[pyclass(module = "otel_oracles._native", name = "OnlineBuffer")]
pub struct OnlineBuffer {
    inner: policy::OnlineBuffer<SpanEntry, Py<PyAny>>,
}

type Released6<'py> = (
    String,
    Bound<'py, PyList>,
    Bound<'py, PyList>,
    &'static str,
    f64,
    usize,
);

impl OnlineBuffer {
    fn released<'py>(
        py: Python<'py>,
        traces: Vec<Released<SpanEntry, Py<PyAny>>>,
    ) -> PyResult<Vec<Released6<'py>>> {
        let mut out = Vec::with_capacity(traces.len());
        for ready in traces {
            let trace_hex = PyString::new(py, &ready.trace_id);
            let mut spans = Vec::with_capacity(ready.spans.len());
            for entry in ready.spans {
                spans.push(match entry {
                    SpanEntry::Object { record, .. } => record.into_bound(py),
                    SpanEntry::Compact { body, facts } => body.wire_span(py, &facts, &trace_hex)?,
                });
            }
            let logs = ready.logs.into_iter().map(|log| log.into_bound(py));
            out.push((
                ready.trace_id,
                PyList::new(py, spans)?,
                PyList::new(py, logs)?,
                ready.reason.as_str(),
                ready.due_at,
                ready.dropped,
            ));
        }
        Ok(out)
    }
}

/// `str(obj)` as a Rust string.
fn text(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(obj.str()?.to_cow()?.into_owned())
}

#[pymethods]
impl OnlineBuffer {
    #[new]
    #[pyo3(signature = (*, decision_wait, max_trace_age, max_traces, overflow_traces,
                        max_buffered_spans, max_spans_per_trace, decision_cache_size))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        decision_wait: f64,
        max_trace_age: f64,
        max_traces: usize,
        overflow_traces: usize,
        max_buffered_spans: usize,
        max_spans_per_trace: usize,
        decision_cache_size: usize,
    ) -> Self {
        Self {
            inner: policy::OnlineBuffer::new(Limits {
                decision_wait,
                max_trace_age,
                max_traces,
                overflow_traces,
                max_buffered_spans,
                max_spans_per_trace,
                decision_cache_size,
            }),
        }
    }

    #[getter]
    fn buffered_traces(&self) -> usize {
        self.inner.buffered_traces()
    }

    #[getter]
    fn buffered_items(&self) -> usize {
        self.inner.buffered_items()
    }

    #[getter]
    fn draining_traces(&self) -> usize {
        self.inner.draining().0
    }

    #[getter]
    fn draining_items(&self) -> usize {
        self.inner.draining().1
    }

    #[getter]
    fn evictions(&self) -> usize {
        self.inner.evictions()
    }

    fn holds(&self, trace_id: &str) -> bool {
        self.inner.holds(trace_id)
    }

    /// Buffer one request, all or nothing, at monotonic time `now`. Returns `(accepted,
    /// rejected, late, unattached_logs, overflow, traces, refused)`; `refused` is `None`, or
    /// `(limit, traces buffered, records buffered)` when nothing was buffered.
    #[allow(clippy::type_complexity)]
    fn offer<'py>(
        &mut self,
        py: Python<'py>,
        spans: &Bound<'py, PyAny>,
        logs: &Bound<'py, PyAny>,
        now: f64,
    ) -> PyResult<(
        usize,
        usize,
        usize,
        usize,
        bool,
        Vec<String>,
        Option<(&'static str, usize, usize)>,
    )> {
        let mut groups: Vec<Group> = Vec::new();
        let mut by_id: FastMap<String, usize> = FastMap::new();
        if let Ok(transfer) = spans.cast::<TransferSpans>() {
            let transfer = transfer.borrow();
            let mut by_bytes: FastMap<[u8; 16], usize> = FastMap::new();
            for facts in &transfer.spans {
                let at = *by_bytes.entry(facts.trace_id).or_insert_with(|| {
                    groups.push(Group {
                        trace_id: hex_string(&facts.trace_id),
                        spans: Vec::new(),
                        logs: Vec::new(),
                        first_span: None,
                    });
                    groups.len() - 1
                });
                let group = &mut groups[at];
                if group.first_span.is_none() {
                    group.first_span = Some(hex_string(&facts.span_id));
                }
                group.spans.push(SpanEntry::Compact {
                    body: Arc::clone(&transfer.body),
                    facts: *facts,
                });
            }
            for (at, group) in groups.iter().enumerate() {
                by_id.insert(group.trace_id.clone(), at);
            }
        } else {
            for record in spans.try_iter()? {
                let record = record?;
                let trace_id = text(&record.getattr("trace_id")?)?;
                let ends_root = !record.getattr("parent_span_id")?.is_truthy()?
                    && record.getattr("end_ns")?.is_truthy()?;
                let at = match by_id.get(&trace_id) {
                    Some(&at) => at,
                    None => {
                        groups.push(Group {
                            trace_id: trace_id.clone(),
                            spans: Vec::new(),
                            logs: Vec::new(),
                            first_span: Some(text(&record.getattr("span_id")?)?),
                        });
                        by_id.insert(trace_id, groups.len() - 1);
                        groups.len() - 1
                    }
                };
                groups[at].spans.push(SpanEntry::Object {
                    record: record.unbind(),
                    ends_root,
                });
            }
        }
        let mut unattached = 0;
        for record in logs.try_iter()? {
            let record = record?;
            let trace_id = record.getattr("trace_id")?;
            if !trace_id.is_truthy()? {
                unattached += 1;
                continue;
            }
            let trace_id = text(&trace_id)?;
            let at = match by_id.get(&trace_id) {
                Some(&at) => at,
                None => {
                    groups.push(Group {
                        trace_id: trace_id.clone(),
                        spans: Vec::new(),
                        logs: Vec::new(),
                        first_span: None,
                    });
                    by_id.insert(trace_id, groups.len() - 1);
                    groups.len() - 1
                }
            };
            groups[at].logs.push(record.unbind());
        }
        let mut parts = Vec::with_capacity(groups.len());
        for group in groups {
            let first = match (group.first_span, group.logs.first()) {
                (Some(first), _) => first,
                (None, Some(log)) => {
                    let log = log.bind(py);
                    let span_id = text(&log.getattr("span_id")?)?;
                    let time_ns = text(&log.getattr("time_ns")?)?;
                    format!("{span_id}/{time_ns}")
                }
                (None, None) => String::new(),
            };
            parts.push(Part {
                fingerprint: Fingerprint {
                    first,
                    spans: group.spans.len(),
                    logs: group.logs.len(),
                },
                trace_id: group.trace_id,
                spans: group.spans,
                logs: group.logs,
            });
        }
        Ok(match self.inner.offer(parts, now) {
            Ok(adm) => (
                adm.accepted,
                adm.rejected,
                adm.late,
                unattached,
                adm.overflow,
                adm.traces,
                None,
            ),
            Err(refused) => (
                0,
                0,
                0,
                unattached,
                false,
                Vec::new(),
                Some((refused.what, refused.traces, refused.items)),
            ),
        })
    }

    /// Every trace gradable at `now` (at most `limit`), as `(trace_id, spans, logs, reason,
    /// due_at, dropped)`; spans decoded for transfer come back as `WireSpan`s.
    #[pyo3(signature = (now, limit=None))]
    fn due<'py>(
        &mut self,
        py: Python<'py>,
        now: f64,
        limit: Option<usize>,
    ) -> PyResult<Vec<Released6<'py>>> {
        Self::released(py, self.inner.due(now, limit))
    }

    /// Release everything (shutdown), as `due`.
    fn drain<'py>(&mut self, py: Python<'py>, now: f64) -> PyResult<Vec<Released6<'py>>> {
        Self::released(py, self.inner.drain(now))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<TransferSpans>()?;
    m.add_class::<WireSpan>()?;
    m.add_function(wrap_pyfunction!(wire_references, m)?)?;
    m.add_class::<OnlineBuffer>()
}
