//! `Batch`: decoded records owned by Rust, handed to Python as `otel_oracles.model.span` records on request.
//!
//! A decoder fills an [`otel_oracles_core::model::Batch`] without the interpreter (the GIL is
//! released meanwhile); only `records()` creates Python objects, once per record, so the cost
//! of crossing the boundary is paid by the stage that wants the records and nowhere else.
//!
//! The records are the real classes of `otel_oracles.model.span` with the values the Python
//! decoders gave: ids as lowercase hex, attribute values as str/bool/int/float/bytes/list/dict
//! or `None`, plain `dict` attribute maps. Memory follows the Python records' conventions:
//! empty attribute maps are the shared `EMPTY`, empty event and link lists the shared
//! `NO_ITEMS`, and records share their repeated parts (`Shared`): one resource dict per
//! distinct resource, one string per scope name and version, attribute key, span name and
//! short string value, within a batch and, offline, across every released trace.

use std::sync::Arc;

use otel_oracles_core::hashing::{FastMap, FastMapExt, FastSet};
use otel_oracles_core::model::{self, AnyValue, KeyValue, Text};

use crate::online::{BodyInfo, Extra, SpanFacts, TransferSpans, NO_EXTRA};

/// `emit.OWN_SHAPE.as_tuple()`: span name prefix, span keys required and allowed, event
/// name, event keys allowed, log keys required and allowed (`model::OwnShape`).
type OwnShapeArgs = (
    String,
    Vec<String>,
    FastSet<String>,
    String,
    FastSet<String>,
    Vec<String>,
    FastSet<String>,
);
use pyo3::exceptions::{PyIndexError, PyOverflowError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyDict, PyInt, PyList, PyString};

use crate::slots::{Fallback, SlotClass};

/// The Python classes and shared constants the records are built from, imported once.
pub(crate) struct RecordTypes {
    span: SlotClass,
    event: SlotClass,
    link: SlotClass,
    log: SlotClass,
    pub(crate) empty: Py<PyAny>,
    pub(crate) no_items: Py<PyAny>,
    /// The empty string: a span's status message and a root's parent id, nearly always
    /// empty, are this one object rather than a call into CPython's string maker each.
    no_text: Py<PyString>,
    /// The ints `0..SMALL_INTS` (`Builder::small_int`).
    small_ints: Box<[Py<PyAny>]>,
}

/// How many of the smallest non-negative ints `RecordTypes` holds: CPython's own cache of
/// small ints ends at 256, so these are its objects, handed out without a call.
const SMALL_INTS: u32 = 257;

/// The fields of `SpanRecord`, `EventRecord`, `LinkRecord` and `LogRecord` in declared order
/// (their `__slots__`): the order of the values each record is built from.
const SPAN_FIELDS: [&str; 19] = [
    "trace_id",
    "span_id",
    "parent_span_id",
    "name",
    "kind",
    "start_ns",
    "end_ns",
    "status_code",
    "status_message",
    "attributes",
    "events",
    "links",
    "resource",
    "scope_name",
    "scope_version",
    "dropped_attributes",
    "dropped_events",
    "dropped_links",
    "flags",
];
const EVENT_FIELDS: [&str; 6] = [
    "name",
    "time_ns",
    "attributes",
    "body",
    "from_log",
    "dropped_attributes",
];
const LINK_FIELDS: [&str; 4] = ["trace_id", "span_id", "attributes", "dropped_attributes"];
const LOG_FIELDS: [&str; 10] = [
    "trace_id",
    "span_id",
    "event_name",
    "time_ns",
    "attributes",
    "body",
    "severity_number",
    "resource",
    "scope_name",
    "dropped_attributes",
];

impl RecordTypes {
    /// An `EventRecord` of `values` (`EVENT_FIELDS` order), as the decoders make one.
    pub(crate) fn event<'py>(
        &self,
        py: Python<'py>,
        values: [Bound<'py, PyAny>; 6],
    ) -> PyResult<Bound<'py, PyAny>> {
        self.event.make(py, values)
    }
}

static RECORD_TYPES: PyOnceLock<RecordTypes> = PyOnceLock::new();

/// How many of the latest distinct [`Extra`]s a span's is compared with before it is kept
/// as a new one: a request interleaves the spans of up to a few dozen traces.
const EXTRAS_SHARED_WITHIN: usize = 128;

/// `SESSION_ATTRIBUTES` of `otel_oracles.model.span`: the span attributes a `WireSpan` keeps
/// (the join's session keys).
pub(crate) use otel_oracles_core::session_join::SESSION_ATTRIBUTES;

pub(crate) fn record_types(py: Python<'_>) -> PyResult<&RecordTypes> {
    RECORD_TYPES.get_or_try_init(py, || {
        let module = PyModule::import(py, "otel_oracles.model.span")?;
        let get = |name: &str| -> PyResult<Py<PyAny>> { Ok(module.getattr(name)?.unbind()) };
        // Made in their memory (`SlotClass`): calling a slotted dataclass costs its
        // argument tuple, `type.__call__` and an `__init__` frame storing each field
        // (~2,900 instructions a span record, a fifth of building it).
        let class = |name: &str, fields: &[&str]| -> PyResult<SlotClass> {
            SlotClass::load(module.getattr(name)?.cast()?, fields, Fallback::Positional)
        };
        Ok(RecordTypes {
            span: class("SpanRecord", &SPAN_FIELDS)?,
            event: class("EventRecord", &EVENT_FIELDS)?,
            link: class("LinkRecord", &LINK_FIELDS)?,
            log: class("LogRecord", &LOG_FIELDS)?,
            empty: get("EMPTY")?,
            no_items: get("NO_ITEMS")?,
            no_text: PyString::new(py, "").unbind(),
            small_ints: (0..SMALL_INTS)
                .map(|value| PyInt::new(py, value).into_any().unbind())
                .collect(),
        })
    })
}

/// The records of one request body (one file, one JSON line or one frame), decoded in Rust.
///
/// `ignored` counts records of signals that are not graded; `rejected` the spans and log
/// records the decoder dropped; `problems` the first located problem messages and
/// `problems_omitted` how many more there were.
#[pyclass(module = "otel_oracles._native", name = "Batch", frozen)]
pub struct Batch {
    /// Shared with the offline assembler, which keeps a batch alive while any of its spans
    /// wait for their trace.
    inner: Arc<model::Batch>,
}

impl Batch {
    /// Wrap a batch a decoder produced.
    pub fn new(inner: model::Batch) -> Self {
        Self {
            inner: Arc::new(inner),
        }
    }

    /// The decoded records, shared.
    pub(crate) fn shared(&self) -> &Arc<model::Batch> {
        &self.inner
    }

    fn build<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyList>)> {
        let mut builder = Builder::sharing(py, Shared::new())?;
        let spans = self
            .inner
            .spans
            .iter()
            .map(|span| builder.span(span))
            .collect::<PyResult<Vec<_>>>()?;
        let logs = self
            .inner
            .logs
            .iter()
            .map(|log| builder.log(log))
            .collect::<PyResult<Vec<_>>>()?;
        Ok((PyList::new(py, spans)?, PyList::new(py, logs)?))
    }
}

#[pymethods]
impl Batch {
    /// An empty batch (what a body without records decodes to).
    #[new]
    fn empty() -> Self {
        Self::new(model::Batch::default())
    }

    #[getter]
    fn ignored(&self) -> usize {
        self.inner.ignored
    }

    #[getter]
    fn rejected(&self) -> usize {
        self.inner.rejected
    }

    #[getter]
    fn problems(&self) -> Vec<String> {
        self.inner.problems.listed.clone()
    }

    #[getter]
    fn problems_omitted(&self) -> usize {
        self.inner.problems.omitted
    }

    #[getter]
    fn span_count(&self) -> usize {
        self.inner.spans.len()
    }

    #[getter]
    fn log_count(&self) -> usize {
        self.inner.logs.len()
    }

    /// This batch without the grader's own spans and log records (`emit`'s
    /// `is_own_telemetry`: instrumentation scope `scope` or a resource `service.name` among
    /// `services`, and the shape `emit.OWN_SHAPE.as_tuple()` gives; `model::OwnTelemetry`),
    /// or `None` when it holds none (the usual case: nothing is copied).
    fn without_own(
        &self,
        scope: String,
        services: FastSet<String>,
        shape: OwnShapeArgs,
    ) -> Option<Batch> {
        let (
            span_prefix,
            span_required,
            span_allowed,
            event_name,
            event_allowed,
            log_required,
            log_allowed,
        ) = shape;
        let shape = model::OwnShape {
            span_prefix,
            span_required,
            span_allowed,
            event_name,
            event_allowed,
            log_required,
            log_allowed,
        };
        let own = model::OwnTelemetry {
            scope,
            services,
            shape,
        };
        self.inner.without_own(&own).map(Batch::new)
    }

    /// `(spans, logs)` as new `SpanRecord`s and `LogRecord`s (each call builds new ones).
    ///
    /// The garbage collector is paused meanwhile: every attribute dict is a tracked object,
    /// so a large batch set off young-generation collections that scanned records still
    /// being built (a quarter to a third of the time), and the records hold no cycles.
    fn records<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyList>)> {
        with_gc_paused(py, || self.build(py))
    }

    /// The spans of `body` decoded for transfer (positions = list order): what `serve`'s
    /// receiving process assembles, kept as compact entries (`online.rs`) and read as
    /// `WireSpan`s. Each keeps its resource's `service.name` only (one dict per resource),
    /// its links without their attributes and the `SESSION_ATTRIBUTES` among its attributes,
    /// as `decode._transfer.spans_for_transfer` does from full records.
    fn transfer_spans<'py>(
        &self,
        py: Python<'py>,
        body: &Bound<'py, PyAny>,
    ) -> PyResult<TransferSpans> {
        let mut builder = Builder::sharing(py, Shared::new())?;
        let mut services: FastMap<*const model::Resource, Bound<'py, PyAny>> = FastMap::new();
        let mut origin_of: FastMap<(*const model::Resource, *const model::Scope), u32> =
            FastMap::new();
        let mut origins = Vec::new();
        let mut extras: Vec<Extra> = Vec::new();
        let mut last_extra: FastMap<[u8; 16], usize> = FastMap::new();
        let mut spans = Vec::with_capacity(self.inner.spans.len());
        for (index, span) in self.inner.spans.iter().enumerate() {
            let index = u32::try_from(index)
                .map_err(|_| PyOverflowError::new_err("more than 2**32 spans in one body"))?;
            let key = (Arc::as_ptr(&span.resource), Arc::as_ptr(&span.scope));
            let origin = match origin_of.get(&key) {
                Some(&origin) => origin,
                None => {
                    let service = match services.entry(key.0) {
                        std::collections::hash_map::Entry::Occupied(found) => found.get().clone(),
                        std::collections::hash_map::Entry::Vacant(slot) => {
                            let only = builder.service_only(&span.resource)?;
                            slot.insert(only).clone()
                        }
                    };
                    let (scope_name, _) = builder.scope(&span.scope);
                    let origin = u32::try_from(origins.len())
                        .map_err(|_| PyOverflowError::new_err("too many scopes in one body"))?;
                    origins.push((service.unbind(), scope_name.into_any().unbind()));
                    origin_of.insert(key, origin);
                    origin
                }
            };
            let session: Vec<KeyValue> = span
                .attributes
                .iter()
                .filter(|kv| SESSION_ATTRIBUTES.contains(&kv.key.as_str()))
                .cloned()
                .collect();
            let extra = if span.links.is_empty() && session.is_empty() {
                NO_EXTRA
            } else {
                let links: Vec<model::Link> = span
                    .links
                    .iter()
                    .map(|link| model::Link {
                        trace_id: link.trace_id.clone(),
                        span_id: link.span_id.clone(),
                        attributes: Vec::new(),
                        dropped_attributes_count: 0,
                    })
                    .collect();
                let found = Extra { links, session };
                // The spans of one trace carry the same session id: kept once (compared with
                // the one its trace's last span had, else looked for among the last few
                // kept, so a body of distinct ones stays linear). Comparing each span's with
                // every one kept lately, the traces of a request interleaved, was ~5% of the
                // receiving process's instructions (`bench/serve_receive.py`).
                let last = last_extra.entry(span.trace_id).or_insert(usize::MAX);
                let at = if extras.get(*last) == Some(&found) {
                    *last
                } else {
                    let recent = extras.len().saturating_sub(EXTRAS_SHARED_WITHIN);
                    match extras[recent..].iter().position(|kept| *kept == found) {
                        Some(offset) => recent + offset,
                        None => {
                            extras.push(found);
                            extras.len() - 1
                        }
                    }
                };
                *last = at;
                u32::try_from(at)
                    .map_err(|_| PyOverflowError::new_err("too many spans in one body"))?
            };
            spans.push(SpanFacts {
                trace_id: span.trace_id,
                span_id: span.span_id,
                parent: span.parent_span_id,
                start_ns: span.start_ns,
                end_ns: span.end_ns,
                flags: span.flags,
                index,
                origin,
                extra,
            });
        }
        let types = builder.types;
        let info = BodyInfo {
            id: body.getattr(pyo3::intern!(py, "id"))?.extract()?,
            body: body.clone().unbind(),
            origins,
            extras,
            no_items: types.no_items.clone_ref(py),
            empty: types.empty.clone_ref(py),
        };
        Ok(TransferSpans {
            body: Arc::new(info),
            spans,
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "Batch(spans={}, logs={}, ignored={}, rejected={}, problems={})",
            self.inner.spans.len(),
            self.inner.logs.len(),
            self.inner.ignored,
            self.inner.rejected,
            self.inner.problems.total()
        )
    }
}

/// Python objects the records of many builds share: attribute keys (and other short texts
/// that repeat, such as span names), resource dicts and scope strings. The offline assembler
/// keeps one for its whole input, so the records of every released trace share them, not
/// only the records of one trace; a `Batch`'s records share one for the batch.
///
/// Every part is bounded whatever the input (a file may hold a million distinct keys or
/// resources): texts live in a direct-mapped table of `TEXT_SLOTS` slots (a text that lands
/// on a taken slot replaces its holder; texts over `TEXT_MAX_BYTES` are not kept), resources
/// and scopes in lists of the `RECENT_ORIGINS` most recently used. A lookup costs at most
/// one text comparison, or `RECENT_ORIGINS` resource comparisons per build and resource.
///
/// Sharing is safe because nothing reads a record's resource or attribute dict to change
/// it (`tests/assemble/test_shared_records.py` pins that grading leaves them as released),
/// and Python strings cannot change.
#[derive(Default)]
pub(crate) struct Shared {
    /// Attribute keys, span and event names. Empty (nothing kept) until `Shared::new`
    /// sizes it, as `values`.
    texts: Vec<Option<(Text, Py<PyString>)>>,
    /// Short string values (an operation name, a model, a finish reason), apart from
    /// `texts` so that values seen once (ids, messages) do not push the keys out.
    values: Vec<Option<(Text, Py<PyString>)>>,
    /// Attribute key lists seen lately with a dict of their keys (`KeyTemplate`), found by
    /// the keys' addresses or by their content (`Builder::template`). Empty (no templates)
    /// until `Shared::new` sizes it.
    templates: Vec<Option<KeyTemplate>>,
    resources: Vec<(Arc<model::Resource>, Py<PyAny>)>,
    scopes: Vec<(Arc<model::Scope>, Py<PyString>, Py<PyString>)>,
}

/// One attribute key list and a dict of its keys, which a new attribute dict with the same
/// keys is copied from (`PyDict_Copy`) before its values are put in.
///
/// Why: a dict filled entry by entry grows twice on the way to a span's dozen attributes (a
/// new table each time, the entries moved over) and every insert probes for a free slot:
/// ~280 instructions an entry, the largest part of building a record (~440,000 entries on
/// data-2000). A copy allocates the table once at its final size with the keys and their
/// hashes in place, and putting a value in is a lookup that finds its key at once. The spans
/// of one kind carry the same keys in the same order, so nearly every list finds its
/// template; the copy keeps the template's key order, duplicates included, and the last
/// value of a duplicate key is put in last, so the dict is the one filled in wire order.
///
/// The dict's values are those the template holds (`Held`): a value of a key that repeats
/// from list to list (a system, an operation, a model, a temperature, a flag, a small
/// count) is in the copy already and is not put in again. Putting a value into a copy is
/// still ~200 instructions of CPython's (`PyDict_SetItem`: the key's lookup, the tracking
/// check, the old value's release) besides making the value; about half of data-2000's
/// values are the one their key held in the list before.
struct KeyTemplate {
    /// The decoded keys. Held, so that no other text takes their addresses while the
    /// template is matched by them.
    keys: Vec<Text>,
    /// The Python string of each key, in list order.
    names: Vec<Py<PyString>>,
    /// The keys in list order with the values `held` says (`None` for the others): never
    /// handed out, and changed only by `KeyTemplate::learn`. It holds only strings,
    /// numbers, booleans and `None`, so it is not tracked by the garbage collector, nor is a
    /// copy until a value that may be is put in (as a dict filled entry by entry).
    dict: Py<PyDict>,
    /// What `dict` holds for each key in list order, with the value met last at its place
    /// that was not held (`KeyTemplate::learn`). Empty when the list repeats a key: then
    /// every value is put in, in list order, so that the last one wins.
    held: Vec<HeldSlot>,
}

/// A template's value for one key, and the value at that place in the list before.
struct HeldSlot {
    /// What the template's dict holds for this key.
    held: Held,
    /// The value at this place last time it was not `held` (`Seen::Nothing` at first).
    last: Seen,
}

/// A value that may be held, as `KeyTemplate::learn` remembers it: by a fingerprint that
/// holds no reference (a string by its text's address and length), where a `Held` cost an
/// `Arc` clone and the release of the one before at every value not held. Two values with
/// the same fingerprint are taken for equal only to decide that the template holds the
/// value just put in (`Held::of` of that value): a wrong guess (a text freed and another
/// made at its address) costs one more set into the template, never a wrong record, and
/// an equal text from another body (another address) is learnt one list later.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Seen {
    /// No value that may be held (`Held::Other`), or none met yet: equal to no value.
    Nothing,
    Empty,
    Str(usize, usize),
    Int(i64),
    Double(u64),
    Bool(bool),
}

impl Seen {
    fn of(value: &AnyValue) -> Self {
        match value {
            AnyValue::Empty => Seen::Empty,
            AnyValue::Str(s) if s.len() <= VALUE_MAX_BYTES => {
                Seen::Str(s.as_ptr() as usize, s.len())
            }
            AnyValue::Int(i) => Seen::Int(*i),
            AnyValue::Double(d) => Seen::Double(d.to_bits()),
            AnyValue::Bool(b) => Seen::Bool(*b),
            _ => Seen::Nothing,
        }
    }
}

/// A value a template's dict may hold for a key, as the decoder gave it: small immutable
/// values only, so that a template keeps little memory and is never tracked by the garbage
/// collector. A string is a short one (`VALUE_MAX_BYTES`); a float is told by its bits
/// (`0.0` and `-0.0` print apart).
#[derive(Clone)]
enum Held {
    /// `None`: an empty value.
    Empty,
    Str(Text),
    Int(i64),
    Double(u64),
    Bool(bool),
    /// Any other value (a long string, bytes, a list, a key list): never held; the dict
    /// holds `None` in its place.
    Other,
}

impl Held {
    fn of(value: &AnyValue) -> Self {
        match value {
            AnyValue::Empty => Held::Empty,
            AnyValue::Str(s) if s.len() <= VALUE_MAX_BYTES => Held::Str(s.clone()),
            AnyValue::Int(i) => Held::Int(*i),
            AnyValue::Double(d) => Held::Double(d.to_bits()),
            AnyValue::Bool(b) => Held::Bool(*b),
            _ => Held::Other,
        }
    }

    /// Whether `value` makes the Python value this holds (equal, of the same type): never
    /// for `Other`. A string is compared by its address first: the decoder shares one text
    /// per short value within a body. One found equal by its content (held from another
    /// body: a template found by its keys' content) is replaced by `value`'s text, so that
    /// the next lists of this body match it by address.
    fn is(&mut self, value: &AnyValue) -> bool {
        match (self, value) {
            (Held::Empty, AnyValue::Empty) => true,
            (Held::Str(held), AnyValue::Str(s)) => {
                if Text::ptr_eq(held, s) {
                    return true;
                }
                let equal = **held == **s;
                if equal {
                    *held = s.clone();
                }
                equal
            }
            (Held::Int(held), AnyValue::Int(i)) => held == i,
            (Held::Double(held), AnyValue::Double(d)) => *held == d.to_bits(),
            (Held::Bool(held), AnyValue::Bool(b)) => held == b,
            _ => false,
        }
    }
}

impl KeyTemplate {
    /// Whether `attributes` has these keys in this order: the same decoded texts or, when
    /// `by_address` is false, equal ones.
    fn fits(&self, attributes: &[KeyValue], by_address: bool) -> bool {
        self.keys.len() == attributes.len()
            && self
                .keys
                .iter()
                .zip(attributes)
                .all(|(key, kv)| Text::ptr_eq(key, &kv.key) || (!by_address && *key == *kv.key))
    }

    /// The same template for `attributes` (equal keys, other texts): its key strings
    /// shared, its dict a copy, since each template changes its own (`learn`).
    fn for_keys(&self, py: Python<'_>, attributes: &[KeyValue]) -> PyResult<Self> {
        Ok(Self {
            keys: attributes.iter().map(|kv| kv.key.clone()).collect(),
            names: self.names.iter().map(|name| name.clone_ref(py)).collect(),
            dict: dict_copy(self.dict.bind(py))?.unbind(),
            held: self
                .held
                .iter()
                .map(|slot| HeldSlot {
                    held: slot.held.clone(),
                    last: slot.last,
                })
                .collect(),
        })
    }

    /// Called with a value put into a copy at place `at` (`object`, made of `value`) because
    /// the template did not hold it: when it is the value met there last time too, the
    /// template holds it from now on (the value of a key that changes from trace to trace
    /// and then stays), else it is remembered as met last.
    fn learn(
        &mut self,
        py: Python<'_>,
        at: usize,
        value: &AnyValue,
        object: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let seen = Seen::of(value);
        if seen == Seen::Nothing {
            return Ok(());
        }
        let slot = &mut self.held[at];
        if slot.last == seen {
            set_item(self.dict.bind(py), self.names[at].bind(py), object)?;
            slot.held = Held::of(value);
        } else {
            slot.last = seen;
        }
        Ok(())
    }
}

/// Slots of `Shared`'s template table: a few dozen kinds of spans, events and resources,
/// each list in up to two slots (its keys' addresses, their content).
const TEMPLATE_SLOTS: usize = 256;

/// Longer key lists are filled entry by entry: a template holds its keys, and the table
/// stays small whatever the input.
const TEMPLATE_MAX_KEYS: usize = 64;

/// The template slot of a key list by its keys' addresses: a few instructions a key. The
/// decoder shares one text per distinct key within a body (`model::Interner`), so the
/// lists of one body's spans of one kind have the same addresses.
fn address_slot(attributes: &[KeyValue]) -> usize {
    let mut hash = (attributes.len() as u64).wrapping_mul(SLOT_SEED);
    for kv in attributes {
        hash = (hash.rotate_left(5) ^ kv.key.as_ptr() as u64).wrapping_mul(SLOT_SEED);
    }
    (hash >> 32) as usize % TEMPLATE_SLOTS
}

/// The template slot of a key list by its keys' content: where the same keys decoded from
/// another body find their template.
fn content_slot(attributes: &[KeyValue]) -> usize {
    let mut hash = (attributes.len() as u64).wrapping_mul(SLOT_SEED);
    for kv in attributes {
        hash = (hash.rotate_left(5) ^ text_hash(&kv.key)).wrapping_mul(SLOT_SEED);
    }
    (hash >> 32) as usize % TEMPLATE_SLOTS
}

/// Slots of `Shared`'s text table: the keys of a few hundred attribute names and span names
/// with room to spare (24 bytes each).
const TEXT_SLOTS: usize = 1024;

/// Longer texts are built anew each time: keys and names are short, and a kept text holds
/// memory until a text with its slot replaces it.
const TEXT_MAX_BYTES: usize = 256;

/// How many distinct resources (and scopes) `Shared` keeps: a file interleaves the traces of
/// a handful of services.
const RECENT_ORIGINS: usize = 16;

impl Shared {
    /// A table ready to keep texts (`Default` keeps none: what a builder made for a couple
    /// of strings wants).
    pub(crate) fn new() -> Self {
        let mut texts = Vec::new();
        texts.resize_with(TEXT_SLOTS, || None);
        let mut values = Vec::new();
        values.resize_with(TEXT_SLOTS, || None);
        let mut templates = Vec::new();
        templates.resize_with(TEMPLATE_SLOTS, || None);
        Self {
            texts,
            values,
            templates,
            ..Self::default()
        }
    }
}

/// String values longer than this are built anew each time: the values that repeat from
/// span to span are names and short codes.
const VALUE_MAX_BYTES: usize = 64;

/// The string of `text` kept in `table` (a `Shared` table), kept there now if its slot held
/// another; built anew when the table keeps nothing or `text` is longer than
/// `TEXT_MAX_BYTES`.
fn kept_text<'py>(
    py: Python<'py>,
    table: &mut [Option<(Text, Py<PyString>)>],
    text: &str,
) -> Bound<'py, PyString> {
    kept(
        py,
        table,
        text,
        |kept| **kept == *text,
        || Text::from(text),
        PyString::new,
    )
}

/// `kept_text` of a decoded text: a kept text that is the same allocation (the decoder
/// shares one per distinct short text of a body) is found without comparing bytes, and
/// one kept now is that allocation, not a copy of it. `new` makes the string kept
/// (`PyString::new`, or `PyString::intern` for an attribute key: see `Builder::key`).
fn kept_decoded<'py>(
    py: Python<'py>,
    table: &mut [Option<(Text, Py<PyString>)>],
    text: &Text,
    new: fn(Python<'py>, &str) -> Bound<'py, PyString>,
) -> Bound<'py, PyString> {
    kept(
        py,
        table,
        text,
        |kept| Text::ptr_eq(kept, text) || *kept == **text,
        || text.clone(),
        new,
    )
}

fn kept<'py>(
    py: Python<'py>,
    table: &mut [Option<(Text, Py<PyString>)>],
    text: &str,
    same: impl FnOnce(&Text) -> bool,
    owned: impl FnOnce() -> Text,
    new: fn(Python<'py>, &str) -> Bound<'py, PyString>,
) -> Bound<'py, PyString> {
    if table.is_empty() || text.len() > TEXT_MAX_BYTES {
        return PyString::new(py, text);
    }
    let slot = &mut table[text_slot(text)];
    if let Some((kept, string)) = slot {
        if same(kept) {
            return string.bind(py).clone();
        }
    }
    let string = new(py, text);
    *slot = Some((owned(), string.clone().unbind()));
    string
}

/// Whether this interpreter frees an interned string with its last reference. CPython 3.12
/// made every interned string immortal (PEP 683); 3.13 made them mortal again, and the fix
/// reached 3.12 only in a late maintenance release (gh-113993), so every 3.12 is taken as
/// keeping them. Read once a process: the answer cannot change while it runs.
fn interning_frees(py: Python<'_>) -> bool {
    static FREES: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FREES.get_or_init(|| {
        let version = py.version_info();
        !(version.major == 3 && version.minor == 12)
    })
}

/// The slot of `text` in a `Shared` table: its length and three 8-byte words (the first,
/// the middle and the last, overlapping in texts under 24 bytes) mixed FxHash-style. A
/// collision only costs a string built anew, so speed matters more than spread: hashing
/// every word and then the tail byte by byte made this most of `kept_text`'s ~110
/// instructions a lookup (~700,000 lookups on data-2000), and the attribute keys and
/// short values that share a table differ in length or in one of these words.
fn text_slot(text: &str) -> usize {
    (text_hash(text) >> 32) as usize % TEXT_SLOTS
}

/// FxHash's multiplier: what `text_hash` and the template slots mix their words with.
const SLOT_SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

/// `text_slot`'s hash of `text`, before it is reduced to a slot.
fn text_hash(text: &str) -> u64 {
    const SEED: u64 = SLOT_SEED;
    let bytes = text.as_bytes();
    let len = bytes.len();
    let word = |at: usize| -> u64 {
        let mut word = [0u8; 8];
        if let Some(eight) = bytes.get(at..at + 8) {
            word.copy_from_slice(eight);
        }
        u64::from_le_bytes(word)
    };
    let (first, middle, last) = if len >= 8 {
        (word(0), word((len - 8) / 2), word(len - 8))
    } else {
        let mut short = [0u8; 8];
        short[..len].copy_from_slice(bytes);
        (u64::from_le_bytes(short), 0, 0)
    };
    let mut hash = (len as u64).wrapping_mul(SEED);
    for part in [first, middle, last] {
        hash = (hash.rotate_left(5) ^ part).wrapping_mul(SEED);
    }
    hash
}

/// Whether two attribute lists would make equal dicts of identical values: same keys in the
/// same order and values of the same kind and bits (`PartialEq` calls `0.0` and `-0.0` equal,
/// which Python prints apart).
fn identical(a: &[KeyValue], b: &[KeyValue]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.key == y.key && identical_value(&x.value, &y.value))
}

fn identical_value(a: &AnyValue, b: &AnyValue) -> bool {
    match (a, b) {
        (AnyValue::Double(x), AnyValue::Double(y)) => x.to_bits() == y.to_bits(),
        (AnyValue::Array(x), AnyValue::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| identical_value(x, y))
        }
        (AnyValue::KvList(x), AnyValue::KvList(y)) => identical(x, y),
        _ => a == b,
    }
}

/// Builds the Python records of one batch or one released trace, sharing one dict per
/// resource and one string per scope name (keyed by the `Arc` the records share, then looked
/// up in `Shared` by content), and one string per attribute key (`Shared`): keys repeat on
/// every span, and a string made once also carries its hash into every dict.
pub(crate) struct Builder<'py> {
    py: Python<'py>,
    types: &'py RecordTypes,
    resources: FastMap<*const model::Resource, Bound<'py, PyAny>>,
    scopes: FastMap<*const model::Scope, (Bound<'py, PyString>, Bound<'py, PyString>)>,
    shared: Shared,
    /// The last span's trace id and its hex string: a released trace's spans (and mostly a
    /// batch's, which come trace by trace) share one.
    trace_id: Option<([u8; 16], Bound<'py, PyString>)>,
    /// Span ids met lately and their hex strings (`Builder::span_id`), by a slot of the id;
    /// empty until the first one.
    span_ids: Vec<Option<([u8; 8], Bound<'py, PyString>)>>,
}

/// Slots of `Builder::span_ids`: a span's parent (or child) is built a few dozen records
/// away from it, within its trace.
const SPAN_ID_SLOTS: usize = 64;

impl<'py> Builder<'py> {
    /// A builder that keeps no texts: for a few records.
    pub(crate) fn new(py: Python<'py>) -> PyResult<Self> {
        Self::sharing(py, Shared::default())
    }

    /// A builder whose records share `shared`'s objects (get it back with `into_shared`).
    ///
    /// The `Arc`s of the records built must outlive the builder: its own maps are keyed by
    /// their addresses.
    pub(crate) fn sharing(py: Python<'py>, shared: Shared) -> PyResult<Self> {
        Ok(Self {
            py,
            types: record_types(py)?,
            resources: FastMap::new(),
            scopes: FastMap::new(),
            shared,
            trace_id: None,
            span_ids: Vec::new(),
        })
    }

    /// The shared objects, with what this builder added.
    pub(crate) fn into_shared(self) -> Shared {
        self.shared
    }

    pub(crate) fn span(&mut self, span: &model::Span) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let (scope_name, scope_version) = self.scope(&span.scope);
        let parent = match &span.parent_span_id {
            Some(id) => self.span_id(id),
            None => self.types.no_text.bind(py).clone(),
        };
        let trace_id = self.trace_id(&span.trace_id);
        let args: [Bound<'py, PyAny>; 19] = [
            trace_id.into_any(),
            self.span_id(&span.span_id).into_any(),
            parent.into_any(),
            self.text(&span.name).into_any(),
            self.small_int(span.kind.into()),
            span.start_ns.into_pyobject(py)?.into_any(),
            span.end_ns.into_pyobject(py)?.into_any(),
            self.small_int(span.status_code.into()),
            if span.status_message.is_empty() {
                self.types.no_text.bind(py).clone()
            } else {
                PyString::new(py, &span.status_message)
            }
            .into_any(),
            self.attributes(&span.attributes)?,
            self.events(&span.events)?,
            self.links(&span.links)?,
            self.resource(&span.resource)?,
            scope_name.into_any(),
            scope_version.into_any(),
            self.small_int(span.dropped_attributes_count.into()),
            self.small_int(span.dropped_events_count.into()),
            self.small_int(span.dropped_links_count.into()),
            self.small_int(span.flags.into()),
        ];
        self.types.span.make(py, args)
    }

    /// A count, code, flag word or int attribute value as a Python int: one of
    /// `RecordTypes`' when it is small.
    ///
    /// Why: a span record carries six such ints, nearly always 0 to 3 (kind, status code,
    /// the dropped counts, flags): each was a call to `PyLong_FromLong` (~21 instructions
    /// and pyo3's check of its result, ~240,000 calls on data-2000) for an object CPython
    /// keeps anyway; taking it here is an index and a new reference.
    fn small_int(&self, value: i64) -> Bound<'py, PyAny> {
        let py = self.py;
        match usize::try_from(value)
            .ok()
            .and_then(|at| self.types.small_ints.get(at))
        {
            Some(int) => int.bind(py).clone(),
            None => PyInt::new(py, value).into_any(),
        }
    }

    /// The hex string of a trace id, the last one's when it is the same: a released
    /// trace's own id is the string its span records were just given.
    pub(crate) fn trace_id(&mut self, id: &[u8; 16]) -> Bound<'py, PyString> {
        match &self.trace_id {
            Some((last, text)) if last == id => text.clone(),
            _ => {
                let text = hex(self.py, id);
                self.trace_id = Some((*id, text.clone()));
                text
            }
        }
    }

    /// The hex string of a span id, shared with the record that carried it lately.
    ///
    /// Why: nearly every span id is written twice, as a span's own and as its children's
    /// parent (and a log record's), a few records apart: the string made for one is the
    /// other's, where each was ~400 instructions (hex digits and a new `str`).
    fn span_id(&mut self, id: &[u8; 8]) -> Bound<'py, PyString> {
        if self.span_ids.is_empty() {
            self.span_ids.resize_with(SPAN_ID_SLOTS, || None);
        }
        let mixed = u64::from_le_bytes(*id).wrapping_mul(SLOT_SEED);
        let slot = (mixed >> 32) as usize % SPAN_ID_SLOTS;
        let Some(entry) = self.span_ids.get_mut(slot) else {
            return hex(self.py, id);
        };
        if let Some((kept, text)) = entry {
            if kept == id {
                return text.clone();
            }
        }
        let text = hex(self.py, id);
        *entry = Some((*id, text.clone()));
        text
    }

    pub(crate) fn log(&mut self, log: &model::LogRecord) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let (scope_name, _) = self.scope(&log.scope);
        let trace_id = match &log.trace_id {
            Some(id) => self.trace_id(id),
            None => PyString::new(py, ""),
        };
        let span_id = match &log.span_id {
            Some(id) => self.span_id(id),
            None => PyString::new(py, ""),
        };
        let args: [Bound<'py, PyAny>; 10] = [
            trace_id.into_any(),
            span_id.into_any(),
            self.text(&log.event_name).into_any(),
            log.time_ns.into_pyobject(py)?.into_any(),
            self.attributes(&log.attributes)?,
            self.value(&log.body)?,
            self.small_int(log.severity_number.into()),
            self.resource(&log.resource)?,
            scope_name.into_any(),
            self.small_int(log.dropped_attributes_count.into()),
        ];
        self.types.log.make(py, args)
    }

    /// The body and attributes of `log` as its `LogRecord` would hold them (what
    /// attaching compares of two records).
    pub(crate) fn log_contents(
        &mut self,
        log: &model::LogRecord,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        Ok((self.value(&log.body)?, self.attributes(&log.attributes)?))
    }

    /// The `EventRecord` of `log` (`LogRecord.as_event`), no `LogRecord` built: `contents`
    /// its body and attributes when already built (`log_contents`).
    pub(crate) fn log_event(
        &mut self,
        log: &model::LogRecord,
        contents: Option<(Bound<'py, PyAny>, Bound<'py, PyAny>)>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let (body, attributes) = match contents {
            Some(built) => built,
            None => self.log_contents(log)?,
        };
        let values = [
            self.text(&log.event_name).into_any(),
            log.time_ns.into_pyobject(py)?.into_any(),
            attributes,
            body,
            PyBool::new(py, true).to_owned().into_any(),
            self.small_int(log.dropped_attributes_count.into()),
        ];
        self.types.event.make(py, values)
    }

    fn events(&mut self, events: &[model::Event]) -> PyResult<Bound<'py, PyAny>> {
        if events.is_empty() {
            return Ok(self.types.no_items.bind(self.py).clone());
        }
        let py = self.py;
        let mut items = Vec::with_capacity(events.len());
        for event in events {
            let attributes = self.attributes(&event.attributes)?;
            // `body` and `from_log` are a log-based event's (`LogRecord.as_event`).
            let values = [
                self.text(&event.name).into_any(),
                event.time_ns.into_pyobject(py)?.into_any(),
                attributes,
                py.None().into_bound(py),
                PyBool::new(py, false).to_owned().into_any(),
                self.small_int(event.dropped_attributes_count.into()),
            ];
            items.push(self.types.event.make(py, values)?);
        }
        Ok(PyList::new(py, items)?.into_any())
    }

    fn links(&mut self, links: &[model::Link]) -> PyResult<Bound<'py, PyAny>> {
        if links.is_empty() {
            return Ok(self.types.no_items.bind(self.py).clone());
        }
        let py = self.py;
        let mut items = Vec::with_capacity(links.len());
        for link in links {
            let attributes = self.attributes(&link.attributes)?;
            let values = [
                hex(py, &link.trace_id).into_any(),
                hex(py, &link.span_id).into_any(),
                attributes,
                self.small_int(link.dropped_attributes_count.into()),
            ];
            items.push(self.types.link.make(py, values)?);
        }
        Ok(PyList::new(py, items)?.into_any())
    }

    /// A plain dict, or the shared `EMPTY` when there are no attributes.
    fn attributes(&mut self, attributes: &[KeyValue]) -> PyResult<Bound<'py, PyAny>> {
        if attributes.is_empty() {
            return Ok(self.types.empty.bind(self.py).clone());
        }
        Ok(self.key_values(attributes)?.into_any())
    }

    /// An attribute list as a dict: wire order, the last of duplicate keys wins (as building
    /// a dict from the list always did). A copy of its keys' template with the values it
    /// does not hold put in (`KeyTemplate`), or filled entry by entry when the builder keeps
    /// no templates or the list is too long for one.
    fn key_values(&mut self, attributes: &[KeyValue]) -> PyResult<Bound<'py, PyDict>> {
        let py = self.py;
        let Some((at, mut template)) = self.template(attributes)? else {
            let dict = PyDict::new(py);
            for kv in attributes {
                let key = self.key(&kv.key);
                let value = self.value(&kv.value)?;
                set_item(&dict, &key, &value)?;
            }
            return Ok(dict);
        };
        // Out of its slot meanwhile: a value that is a key list itself uses the table.
        let built = dict_copy(template.dict.bind(py)).and_then(|dict| {
            if template.held.is_empty() {
                for (kv, name) in attributes.iter().zip(&template.names) {
                    let value = self.value(&kv.value)?;
                    set_item(&dict, name.bind(py), &value)?;
                }
                return Ok(dict);
            }
            for (place, kv) in attributes.iter().enumerate() {
                if template.held[place].held.is(&kv.value) {
                    continue;
                }
                let value = self.value(&kv.value)?;
                set_item(&dict, template.names[place].bind(py), &value)?;
                template.learn(py, place, &kv.value, &value)?;
            }
            Ok(dict)
        });
        self.shared.templates[at] = Some(template);
        built
    }

    /// The template of `attributes`' keys, taken out of its slot (put it back at the slot
    /// given), made now if none fits; `None` when the builder keeps no templates or the
    /// list is longer than `TEMPLATE_MAX_KEYS`. A template made now holds the values of
    /// `attributes` that it may hold (`Held`).
    ///
    /// Looked for by the keys' addresses first (the spans of one body), then by their
    /// content (the same keys decoded from another body), which puts the template found
    /// under these addresses too: the next span of this body finds it by address.
    fn template(&mut self, attributes: &[KeyValue]) -> PyResult<Option<(usize, KeyTemplate)>> {
        let py = self.py;
        if self.shared.templates.is_empty() || attributes.len() > TEMPLATE_MAX_KEYS {
            return Ok(None);
        }
        let at = address_slot(attributes);
        if let Some(found) = self.shared.templates[at].take() {
            if found.fits(attributes, true) {
                return Ok(Some((at, found)));
            }
            self.shared.templates[at] = Some(found);
        }
        let by_content = content_slot(attributes);
        if let Some(found) = &self.shared.templates[by_content] {
            if found.fits(attributes, false) {
                return Ok(Some((at, found.for_keys(py, attributes)?)));
            }
        }
        let dict = PyDict::new(py);
        let mut names = Vec::with_capacity(attributes.len());
        let mut held = Vec::with_capacity(attributes.len());
        for kv in attributes {
            let name = self.key(&kv.key);
            let value = Held::of(&kv.value);
            let object = match value {
                Held::Empty | Held::Other => py.None().into_bound(py),
                _ => self.value(&kv.value)?,
            };
            set_item(&dict, &name, &object)?;
            names.push(name.unbind());
            held.push(HeldSlot {
                held: value,
                last: Seen::Nothing,
            });
        }
        if dict.len() != attributes.len() {
            // A repeated key: one entry holds one of its values, so none is taken as held.
            held.clear();
        }
        let made = KeyTemplate {
            keys: attributes.iter().map(|kv| kv.key.clone()).collect(),
            names,
            dict: dict.unbind(),
            held,
        };
        if by_content != at {
            self.shared.templates[by_content] = Some(made.for_keys(py, attributes)?);
        }
        Ok(Some((at, made)))
    }

    /// The Python string of an attribute key, the one kept in `Shared` when there is one.
    /// A key kept is interned: the readers of attributes in the core look keys up by their
    /// interned strings (the field reader's sources, the rule table's keys), and a dict
    /// compares an interned key with the one it holds by address when they are the same
    /// object, by their characters otherwise (~60 instructions more a hit: ~280,000 hits of
    /// the field reader on the bench's 2,000 traces). Interning costs a lookup in Python's
    /// table when a key is kept, a few hundred times a run.
    ///
    /// Keys come from traces, so a key is interned only where an interned string is freed
    /// with its last reference (`interning_frees`): where every interned string is immortal,
    /// a stream of distinct keys would grow the process for as long as it runs.
    fn key(&mut self, key: &Text) -> Bound<'py, PyString> {
        let new = if interning_frees(self.py) {
            PyString::intern
        } else {
            PyString::new
        };
        kept_decoded(self.py, &mut self.shared.texts, key, new)
    }

    /// A Python string of `text`, the one kept in `Shared` when there is one.
    fn text(&mut self, text: &str) -> Bound<'py, PyString> {
        kept_text(self.py, &mut self.shared.texts, text)
    }

    /// The plain Python value an `AnyValue` carries. Recursive: the decoders bound how deep
    /// a value nests (protobuf's message depth limit, the JSON depth limit), so the
    /// recursion is bounded too.
    fn value(&mut self, value: &AnyValue) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        Ok(match value {
            AnyValue::Empty => py.None().into_bound(py),
            AnyValue::Str(s) if s.len() <= VALUE_MAX_BYTES => {
                kept_decoded(py, &mut self.shared.values, s, PyString::new).into_any()
            }
            AnyValue::Str(s) => PyString::new(py, s).into_any(),
            AnyValue::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
            AnyValue::Int(i) => self.small_int(*i),
            AnyValue::Double(d) => d.into_pyobject(py)?.into_any(),
            AnyValue::Bytes(b) => PyBytes::new(py, b).into_any(),
            AnyValue::Array(values) => {
                let mut items = Vec::with_capacity(values.len());
                for v in values {
                    items.push(self.value(v)?);
                }
                PyList::new(py, items)?.into_any()
            }
            AnyValue::KvList(values) => self.key_values(values)?.into_any(),
        })
    }

    /// `{"service.name": value}` of a resource, or `EMPTY` (`_transfer.service_only`).
    fn service_only(&mut self, resource: &model::Resource) -> PyResult<Bound<'py, PyAny>> {
        let found = resource
            .attributes
            .iter()
            .rev()
            .find(|kv| kv.key == "service.name");
        match found {
            Some(kv) if kv.value != AnyValue::Empty => {
                let dict = PyDict::new(self.py);
                dict.set_item(self.key(&kv.key), self.value(&kv.value)?)?;
                Ok(dict.into_any())
            }
            _ => Ok(self.types.empty.bind(self.py).clone()),
        }
    }

    /// Links without their attributes (`_transfer._bare_links`).
    pub(crate) fn bare_links(&mut self, links: &[model::Link]) -> PyResult<Bound<'py, PyAny>> {
        if links.is_empty() {
            return Ok(self.types.no_items.bind(self.py).clone());
        }
        let py = self.py;
        let mut items = Vec::with_capacity(links.len());
        for link in links {
            // `LinkRecord(trace_id, span_id)`: the defaults are `EMPTY` and 0.
            let values = [
                hex(py, &link.trace_id).into_any(),
                hex(py, &link.span_id).into_any(),
                self.types.empty.bind(py).clone(),
                self.small_int(0),
            ];
            items.push(self.types.link.make(py, values)?);
        }
        Ok(PyList::new(py, items)?.into_any())
    }

    /// The `SESSION_ATTRIBUTES` among `attributes`, or `EMPTY`
    /// (`_transfer.session_attributes`; the last of duplicate keys wins).
    pub(crate) fn session_attributes(
        &mut self,
        attributes: &[KeyValue],
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut dict: Option<Bound<'py, PyDict>> = None;
        for name in SESSION_ATTRIBUTES {
            if let Some(kv) = attributes.iter().rev().find(|kv| kv.key == name) {
                let target = dict.get_or_insert_with(|| PyDict::new(self.py));
                target.set_item(self.key(&kv.key), self.value(&kv.value)?)?;
            }
        }
        Ok(match dict {
            Some(dict) => dict.into_any(),
            None => self.types.empty.bind(self.py).clone(),
        })
    }

    fn resource(&mut self, resource: &Arc<model::Resource>) -> PyResult<Bound<'py, PyAny>> {
        // The last one used first: spans of one resource come in runs.
        if let Some((kept, built)) = self.shared.resources.first() {
            if Arc::ptr_eq(kept, resource) {
                return Ok(built.bind(self.py).clone());
            }
        }
        let key = Arc::as_ptr(resource);
        if let Some(found) = self.resources.get(&key) {
            return Ok(found.clone());
        }
        let py = self.py;
        let recent = &mut self.shared.resources;
        let kept = recent.iter().position(|(kept, _)| {
            Arc::ptr_eq(kept, resource) || identical(&kept.attributes, &resource.attributes)
        });
        let built = match kept {
            Some(at) => {
                let mut entry = recent.remove(at);
                // The newest of equal resources: an older batch's is let go sooner.
                entry.0 = Arc::clone(resource);
                let built = entry.1.bind(py).clone();
                recent.insert(0, entry);
                built
            }
            None => {
                let built = self.attributes(&resource.attributes)?;
                let recent = &mut self.shared.resources;
                recent.truncate(RECENT_ORIGINS - 1);
                recent.insert(0, (Arc::clone(resource), built.clone().unbind()));
                built
            }
        };
        self.resources.insert(key, built.clone());
        Ok(built)
    }

    fn scope(&mut self, scope: &Arc<model::Scope>) -> (Bound<'py, PyString>, Bound<'py, PyString>) {
        if let Some((kept, name, version)) = self.shared.scopes.first() {
            if Arc::ptr_eq(kept, scope) {
                return (name.bind(self.py).clone(), version.bind(self.py).clone());
            }
        }
        let key = Arc::as_ptr(scope);
        if let Some(found) = self.scopes.get(&key) {
            return found.clone();
        }
        let py = self.py;
        let recent = &mut self.shared.scopes;
        let kept = recent.iter().position(|(kept, _, _)| {
            Arc::ptr_eq(kept, scope) || (kept.name == scope.name && kept.version == scope.version)
        });
        let entry = match kept {
            Some(at) => {
                let mut entry = recent.remove(at);
                entry.0 = Arc::clone(scope);
                entry
            }
            None => {
                recent.truncate(RECENT_ORIGINS - 1);
                (
                    Arc::clone(scope),
                    PyString::new(py, &scope.name).unbind(),
                    PyString::new(py, &scope.version).unbind(),
                )
            }
        };
        let built = (entry.1.bind(py).clone(), entry.2.bind(py).clone());
        recent.insert(0, entry);
        self.scopes.insert(key, built.clone());
        built
    }
}

/// `dict.copy()` through `PyDict_Copy`: a template's table cloned whole, keys, hashes and
/// values (see `KeyTemplate`).
fn dict_copy<'py>(dict: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyDict>> {
    // SAFETY: `PyDict_Copy` of a live dict returns a new reference to a dict, or NULL with
    // an exception set.
    unsafe {
        Bound::from_owned_ptr_or_err(dict.py(), ffi::PyDict_Copy(dict.as_ptr()))
            .map(|copy| copy.cast_into_unchecked::<PyDict>())
    }
}

/// `dict[key] = value` through `PyDict_SetItem` itself: `set_item`'s conversions and
/// reference juggling were a tenth of building a span's attributes.
fn set_item(
    dict: &Bound<'_, PyDict>,
    key: &Bound<'_, PyString>,
    value: &Bound<'_, PyAny>,
) -> PyResult<()> {
    // SAFETY: three live objects, the key a `str`; the dict takes its own references and
    // returns -1 with an exception set on failure.
    if unsafe { ffi::PyDict_SetItem(dict.as_ptr(), key.as_ptr(), value.as_ptr()) } < 0 {
        return Err(PyErr::fetch(dict.py()));
    }
    Ok(())
}

/// Runs `build` with the garbage collector paused (when it was enabled): building records
/// makes many tracked dicts and no cycles, and young-generation collections scanning records
/// still being built cost a quarter to a third of the time.
///
/// The offline assembler calls it once per released trace: `gc`'s three functions are
/// looked up once per process, not imported and looked up on every call.
pub(crate) fn with_gc_paused<T>(
    py: Python<'_>,
    build: impl FnOnce() -> PyResult<T>,
) -> PyResult<T> {
    let [isenabled, disable, enable] = GC
        .get_or_try_init(py, || -> PyResult<[Py<PyAny>; 3]> {
            let gc = PyModule::import(py, "gc")?;
            let get = |name: &str| -> PyResult<Py<PyAny>> { Ok(gc.getattr(name)?.unbind()) };
            Ok([get("isenabled")?, get("disable")?, get("enable")?])
        })?
        .each_ref()
        .map(|function| function.bind(py));
    let paused = isenabled.call0()?.is_truthy()?;
    if paused {
        disable.call0()?;
    }
    let built = build();
    if paused {
        enable.call0()?;
    }
    built
}

/// `gc.isenabled`, `gc.disable` and `gc.enable`, looked up once.
static GC: PyOnceLock<[Py<PyAny>; 3]> = PyOnceLock::new();

/// Lowercase hex of an id, as every record carries ids (link ids may have any length):
/// span and trace ids written on the stack (`model::with_hex`) and copied once, into the
/// new `str` (three ids per span record; 117,000 ids in a `stage decode` of data-2000).
pub(crate) fn hex<'py>(py: Python<'py>, id: &[u8]) -> Bound<'py, PyString> {
    model::with_hex(id, |text| PyString::new(py, text))
}

/// Builds the records of chosen positions of decoded batches, sharing their repeated parts
/// across calls (`Shared`, bounded), as the offline assembler does across released traces.
///
/// Why: a `serve` grading worker is sent, per message, a part of each request body that
/// holds a span of a trace it grades: a protobuf body cut down to those spans
/// (`select_proto`), a JSON body whole. It builds the records of the positions its traces
/// have, not every record of a whole body: most of a JSON body's spans belong to traces
/// another worker grades.
#[pyclass(module = "otel_oracles._native", name = "RecordBuilder")]
pub struct RecordBuilder {
    shared: Shared,
}

#[pymethods]
impl RecordBuilder {
    #[new]
    fn new() -> Self {
        Self {
            shared: Shared::new(),
        }
    }

    /// The span lists and log-record lists of a worker's message
    /// (`server._processes._build_records`), each built from its references in one pass.
    ///
    /// Why: the receiving process sends a record as a pair of numbers, not an object, so
    /// that its message pickles in C and the worker runs no Python per record. Each list
    /// is `(refs, objects)`: `refs` one (slot, position) pair of native-order `u32`s per
    /// record, in the list's order. A slot names one of the message's parts: `batches[slot]`
    /// is the part decoded (`None` when the receiving process could not send it: building
    /// from it raises `IndexError`), `orders[slot]` the positions it was cut to, sorted
    /// (`u32`s), or `None` when it is the whole body; a position is the record's place in
    /// its body. The slot [`AS_IS`] names `objects[position]`, a record sent as itself.
    fn place<'py>(
        &mut self,
        py: Python<'py>,
        batches: Vec<Option<PyRef<'py, Batch>>>,
        orders: Vec<Option<Bound<'py, PyBytes>>>,
        spans: Vec<(Bound<'py, PyBytes>, Bound<'py, PyList>)>,
        logs: Vec<(Bound<'py, PyBytes>, Bound<'py, PyList>)>,
    ) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyList>)> {
        let orders: Vec<Option<Vec<u32>>> = orders
            .iter()
            .map(|order| order.as_ref().map(|bytes| u32s(bytes.as_bytes()).collect()))
            .collect();
        let shared = &mut self.shared;
        with_gc_paused(py, || {
            let mut builder = Builder::sharing(py, std::mem::take(shared))?;
            let mut place_all = |lists: &[(Bound<'py, PyBytes>, Bound<'py, PyList>)],
                                 logs: bool|
             -> PyResult<Bound<'py, PyList>> {
                let built = lists
                    .iter()
                    .map(|(refs, objects)| {
                        place_list(
                            &mut builder,
                            &batches,
                            &orders,
                            refs.as_bytes(),
                            objects,
                            logs,
                        )
                    })
                    .collect::<PyResult<Vec<_>>>()?;
                PyList::new(py, built)
            };
            let built =
                place_all(&spans, false).and_then(|s| place_all(&logs, true).map(|l| (s, l)));
            *shared = builder.into_shared();
            built
        })
    }
}

/// [`RecordBuilder::place`]'s slot of a record sent as itself.
const AS_IS: u32 = u32::MAX;

/// Native-order `u32`s, as Python's `array("I")` writes them (the worker that reads them
/// runs on the machine that wrote them); a trailing partial one ignored.
fn u32s(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    bytes
        .chunks_exact(4)
        .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
}

/// One list of [`RecordBuilder::place`].
fn place_list<'py>(
    builder: &mut Builder<'py>,
    batches: &[Option<PyRef<'py, Batch>>],
    orders: &[Option<Vec<u32>>],
    refs: &[u8],
    objects: &Bound<'py, PyList>,
    logs: bool,
) -> PyResult<Bound<'py, PyList>> {
    if refs.len() % 8 != 0 {
        return Err(PyValueError::new_err(
            "record references are (slot, position) pairs of u32s",
        ));
    }
    let mut built = Vec::with_capacity(refs.len() / 8);
    let mut words = u32s(refs);
    while let (Some(slot), Some(position)) = (words.next(), words.next()) {
        if slot == AS_IS {
            built.push(objects.get_item(position as usize)?);
            continue;
        }
        let batch = batches
            .get(slot as usize)
            .and_then(Option::as_ref)
            .ok_or_else(|| PyIndexError::new_err("a record of a request body that was not sent"))?;
        let index = match orders.get(slot as usize).and_then(Option::as_ref) {
            Some(order) => order.binary_search(&position).map_err(|_| {
                PyIndexError::new_err(format!("position {position} is not in its body's part"))
            })?,
            None => position as usize,
        };
        let count = if logs {
            batch.inner.logs.len()
        } else {
            batch.inner.spans.len()
        };
        if index >= count {
            return Err(PyIndexError::new_err(format!(
                "record {index} of a batch of {count}"
            )));
        }
        built.push(if logs {
            builder.log(&batch.inner.logs[index])?
        } else {
            builder.span(&batch.inner.spans[index])?
        });
    }
    PyList::new(objects.py(), built)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Batch>()?;
    m.add_class::<RecordBuilder>()
}
