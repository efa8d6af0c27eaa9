//! The emitter's grade spans and evaluation log records built from verdicts
//! (`otel_oracles.emit._otel`), one call for a run of verdicts.
//!
//! Why here: building the records was the largest part of emitting in Python (a few
//! dict and object builds and lookups per check, with an interpreter step each), and it
//! runs for every check of every graded trace in `serve`'s workers. The records are the
//! emitter's own (`otel_oracles.emit._records`: `Attrs`, `SpanItem`, `EventItem`, `LogItem`),
//! so the encoders and the SDK adapter read them as before; or, when every sink of the
//! emitter sends OTLP protobuf, they are written straight into the pending requests
//! (`ProtoRequest`, `encode.rs`) with no object a record: a check's shared runs are kept
//! encoded beside their key, and a record's own values are encoded from the values the
//! items would hold, by the encoder's own functions, so the bytes are the same. The explanations and error types
//! are the privacy filter's (`ShownFilter`, `scrub.rs`), asked directly; what stays in Python
//! is called from here: the oracle's own message of `full` explanations (`explain`), the
//! subject label of a grade span that starts its own trace, the attribute names (`_names`)
//! and the severities. The agent, provider and model labels are the core's label rules
//! (`VerdictLabels`, `grade_tally.rs`), which the metrics' tally follows too.

use std::sync::{Arc, Mutex};

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use otel_oracles_core::encode::proto;
use otel_oracles_core::encode::records::{Event, LogRecord, Piece, Span};
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyInt, PyList, PyString, PyTuple};

use crate::encode::{attributes, attributes_into, severity_number, text, ProtoRequest, Skipped};
use crate::grade_tally::{count_fields, Generation, GradeTally, ResultKey, Tallied, VerdictLabels};
use crate::pydict::StepFields;
use crate::scrub::{str_text, Judged, ShownFilter};
use crate::slots::{Fallback, SlotClass};

/// `StatusCode.ERROR` / `StatusCode.UNSET` values of a grade span.
const STATUS_ERROR: u32 = 2;
const STATUS_UNSET: u32 = 0;

/// The attribute names and event name the records carry (`otel_oracles.emit._names`).
struct Names {
    evaluation_name: Py<PyString>,
    score_value: Py<PyString>,
    score_label: Py<PyString>,
    explanation: Py<PyString>,
    error_type: Py<PyString>,
    agent_name: Py<PyString>,
    provider_name: Py<PyString>,
    request_model: Py<PyString>,
    contract_id: Py<PyString>,
    contract_version: Py<PyString>,
    contract_hash: Py<PyString>,
    verdict: Py<PyString>,
    outcome: Py<PyString>,
    oracle_type: Py<PyString>,
    layer: Py<PyString>,
    passed: Py<PyString>,
    budget_used: Py<PyString>,
    budget_limit: Py<PyString>,
    step_indexes: Py<PyString>,
    evaluated_span_ids: Py<PyString>,
    subject: Py<PyString>,
    checks: Py<PyString>,
    invariant_failures: Py<PyString>,
    tolerated_failures: Py<PyString>,
    budget_exhausted: Py<PyString>,
    missing_evidence: Py<PyString>,
    errors: Py<PyString>,
    grade_span_prefix: String,
    evaluation_event: Py<PyString>,
}

impl Names {
    fn read(names: &Bound<'_, PyAny>) -> PyResult<Self> {
        let get = |name: &str| -> PyResult<Py<PyString>> {
            Ok(names.getattr(name)?.cast_into::<PyString>()?.unbind())
        };
        Ok(Names {
            evaluation_name: get("EVALUATION_NAME")?,
            score_value: get("EVALUATION_SCORE_VALUE")?,
            score_label: get("EVALUATION_SCORE_LABEL")?,
            explanation: get("EVALUATION_EXPLANATION")?,
            error_type: get("ERROR_TYPE")?,
            agent_name: get("AGENT_NAME")?,
            provider_name: get("PROVIDER_NAME")?,
            request_model: get("REQUEST_MODEL")?,
            contract_id: get("CONTRACT_ID")?,
            contract_version: get("CONTRACT_VERSION")?,
            contract_hash: get("CONTRACT_HASH")?,
            verdict: get("VERDICT")?,
            outcome: get("OUTCOME")?,
            oracle_type: get("ORACLE_TYPE")?,
            layer: get("LAYER")?,
            passed: get("PASSED")?,
            budget_used: get("BUDGET_USED")?,
            budget_limit: get("BUDGET_LIMIT")?,
            step_indexes: get("STEP_INDEXES")?,
            evaluated_span_ids: get("EVALUATED_SPAN_IDS")?,
            subject: get("SUBJECT")?,
            checks: get("CHECKS")?,
            invariant_failures: get("INVARIANT_FAILURES")?,
            tolerated_failures: get("TOLERATED_FAILURES")?,
            budget_exhausted: get("BUDGET_EXHAUSTED")?,
            missing_evidence: get("MISSING_EVIDENCE")?,
            errors: get("ERRORS")?,
            grade_span_prefix: get("GRADE_SPAN_PREFIX")?
                .bind(names.py())
                .to_str()?
                .to_owned(),
            evaluation_event: get("EVALUATION_EVENT")?,
        })
    }
}

const SPAN_FIELDS: [&str; 11] = [
    "trace_id",
    "span_id",
    "parent_id",
    "name",
    "start",
    "end",
    "chunks",
    "extra",
    "events",
    "status_code",
    "status_message",
];
const EVENT_FIELDS: [&str; 3] = ["name", "time", "chunks"];
const LOG_FIELDS: [&str; 8] = [
    "time",
    "trace_id",
    "span_id",
    "severity",
    "severity_text",
    "event_name",
    "chunks",
    "extra",
];

/// The privacy filter, `explain` (for `full` explanations), the label rules and the
/// subject label, as the emitter passes them.
type HelperFns = (Py<ShownFilter>, Py<PyAny>, Py<VerdictLabels>, Py<PyAny>);

/// The Python the records are built with (see the module's text).
struct Helpers {
    attrs: Py<PyAny>,
    /// `SpanItem`, `EventItem`, `LogItem`, made in their memory (`SlotClass`: a record per
    /// check, two for the span event), else called with the fields by name.
    span_item: SlotClass,
    event_item: SlotClass,
    log_item: SlotClass,
    filter: Py<ShownFilter>,
    explain: Py<PyAny>,
    labels: Py<VerdictLabels>,
    subject_label: Py<PyAny>,
}

/// `(key, value)` attributes in emission order, as the records carry them.
type Pairs<'py> = Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>;

/// One check's records: the runs every result with the same check, outcome and
/// explanation shares, the result's own attributes, and the span it points at.
struct Check<'py> {
    /// The result's check name, oracle type and outcome (what the tally counts it by).
    key: ResultKey<'py>,
    shared: Run<'py>,
    extra: Pairs<'py>,
    /// The first of its span ids (a `str` shaped as one: `span_id_shaped`).
    pointed: Option<Bound<'py, PyString>>,
}

impl Check<'_> {
    /// The span its records point at, when it names one.
    fn pointed(&self) -> Option<&str> {
        self.pointed.as_ref().and_then(|s| s.to_str().ok())
    }
}

/// The form the records are built in: the emitter's items (`SpanItem`, `LogItem`, ...) for
/// any sink, or written straight into OTLP protobuf requests (`ProtoRequest`) when every
/// sink sends those.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    Items,
    Proto,
}

/// A check's shared runs in the form its records are built in.
enum Run<'py> {
    /// `(log runs, event runs, severity, severity text)`: tuples of `Attrs` and what a
    /// `LogItem` carries.
    Items(Bound<'py, PyTuple>),
    Proto(Arc<ProtoRun>),
}

/// A check's shared runs encoded for the protobuf requests, as the encoder would encode
/// and cache its `Attrs` (`encode.rs`), with the severity the log records carry.
struct ProtoRun {
    /// `LogRecord.attributes` fields.
    log: Vec<u8>,
    /// `Span.Event.attributes` fields.
    event: Vec<u8>,
    severity: u32,
    severity_text: String,
}

/// A run kept (see [`SharedRuns`]).
enum Kept {
    Items(Py<PyTuple>),
    Proto(Arc<ProtoRun>),
}

impl Kept {
    fn form(&self) -> Form {
        match self {
            Kept::Items(_) => Form::Items,
            Kept::Proto(_) => Form::Proto,
        }
    }

    fn bind<'py>(&self, py: Python<'py>) -> Run<'py> {
        match self {
            Kept::Items(run) => Run::Items(run.bind(py).clone()),
            Kept::Proto(run) => Run::Proto(Arc::clone(run)),
        }
    }
}

/// What a check's shared runs are made of: the attributes of the log form and of the
/// span-event form, and the log records' severity (`shared_parts`).
struct SharedParts<'py> {
    log: Pairs<'py>,
    event: Pairs<'py>,
    severity: Bound<'py, PyAny>,
    severity_text: Bound<'py, PyAny>,
}

/// Where one call's records go.
enum Out<'a, 'py> {
    Items {
        spans: &'a Bound<'py, PyList>,
        logs: &'a Bound<'py, PyList>,
    },
    Proto {
        spans: &'a mut proto::RequestWriter,
        logs: &'a mut proto::RequestWriter,
        /// Text of `EVALUATION_EVENT`: the log records' event name and the span events'.
        event_name: &'a str,
        skipped: &'a mut Skipped,
    },
}

impl Out<'_, '_> {
    fn form(&self) -> Form {
        match self {
            Out::Items { .. } => Form::Items,
            Out::Proto { .. } => Form::Proto,
        }
    }

    fn lens(&self) -> (usize, usize) {
        match self {
            Out::Items { spans, logs } => (spans.len(), logs.len()),
            Out::Proto { spans, logs, .. } => (spans.len(), logs.len()),
        }
    }
}

/// A grade span's values, before they become a `SpanItem` or a protobuf span.
struct GradeSpan<'py> {
    trace_id: u128,
    span_id: u64,
    parent_id: Option<u64>,
    name: String,
    start: i128,
    /// The span's own attributes (after the contract's run).
    attrs: Pairs<'py>,
    /// `fail: ...` when the verdict is not a pass (status ERROR), else None (UNSET).
    status: Option<String>,
}

/// A verdict's fields the records read more than once (or the tally reads too).
struct Read<'py> {
    verdict: Bound<'py, PyAny>,
    contract_id: Bound<'py, PyAny>,
    contract_version: Bound<'py, PyAny>,
    contract_hash: Bound<'py, PyAny>,
    /// The verdict's own `agent_name`.
    agent: Bound<'py, PyAny>,
    /// `Verdict.verdict`.
    outcome: Bound<'py, PyAny>,
    /// `Verdict.counts`' invariant failures, tolerated failures, budgets exhausted, missing
    /// evidence and errors.
    counts: [Bound<'py, PyAny>; 5],
    duration_ns: Bound<'py, PyAny>,
    trace_id: Option<String>,
    root_span_id: Option<String>,
    results: Vec<Bound<'py, PyAny>>,
}

/// What a check's shared runs are made of beside its result's name, type and outcome and
/// the verdict's contract (`shared_check`).
struct Shared<'a, 'py> {
    layer: &'a Bound<'py, PyAny>,
    passed: &'a Bound<'py, PyAny>,
    /// Where the outcome stands in the filter's templates.
    at: usize,
    explanation: &'a str,
    /// The error type of an errored check.
    error: Option<&'a str>,
}

/// Slots of [`SharedRuns`]: twice the most runs it keeps, so that a probe soon meets an
/// empty slot.
const RUN_SLOTS: usize = 8192;

/// A shared run's key: everything `shared_parts` reads (the contract's id, version and hash,
/// the check's name, type and layer, whether it passed: each object by its address; where
/// its outcome stands, its explanation and error type), and the form it is made in. Only
/// exact `str`s, `int`s of 64 bits and `bool`s make one, whose values never change (a `str`
/// holding a surrogate too: its escape is written the same each time): a run of other
/// values is made and not kept.
struct RunKey<'a, 'py> {
    objects: [&'a Bound<'py, PyAny>; 7],
    at: usize,
    explanation: &'a str,
    error: Option<&'a str>,
    form: Form,
}

impl<'a, 'py> RunKey<'a, 'py> {
    /// The key of a check's runs, or None when a part is of another type.
    fn of(
        read: &'a Read<'py>,
        j: &Judged<'a, 'py>,
        parts: &Shared<'a, 'py>,
        form: Form,
    ) -> Option<Self> {
        let objects = [
            &read.contract_id,
            &read.contract_version,
            &read.contract_hash,
            j.name,
            j.oracle_type,
            parts.layer,
            parts.passed,
        ];
        // An int past 64 bits is left out of the run with a warning each time it is made,
        // as before: not kept.
        let unchanging = |value: &Bound<'_, PyAny>| {
            value.is_exact_instance_of::<PyString>()
                || value.is_exact_instance_of::<PyBool>()
                || (value.is_exact_instance_of::<PyInt>() && value.extract::<i64>().is_ok())
        };
        objects
            .iter()
            .all(|value| unchanging(value))
            .then_some(RunKey {
                objects,
                at: parts.at,
                explanation: parts.explanation,
                error: parts.error,
                form,
            })
    }

    /// The key's first slot: its objects' addresses, its outcome, and its explanation's length
    /// and first and last words (a check's explanations of one outcome differ by the
    /// steps and details at their end), mixed; nothing else of the texts is read.
    fn slot(&self) -> usize {
        let text = self.explanation.as_bytes();
        let word = |at: usize| {
            let mut eight = [0u8; 8];
            let part = &text[at..text.len().min(at + 8)];
            eight[..part.len()].copy_from_slice(part);
            u64::from_le_bytes(eight)
        };
        let mut key = (self.at as u64) ^ (text.len() as u64).rotate_left(32);
        key ^= word(0).rotate_left(7) ^ word(text.len().saturating_sub(8)).rotate_left(19);
        for object in self.objects {
            key = (key.rotate_left(5) ^ (object.as_ptr() as u64 >> 4))
                .wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
        let mixed = key.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (mixed >> (64 - RUN_SLOTS.trailing_zeros())) as usize
    }
}

/// A run kept with its key: the key's objects held, so no other object takes their
/// addresses while the slot stands for them.
struct KeptRun {
    objects: [Py<PyAny>; 7],
    at: usize,
    explanation: String,
    error: Option<String>,
    run: Kept,
}

impl KeptRun {
    fn is(&self, key: &RunKey<'_, '_>) -> bool {
        self.run.form() == key.form
            && self.at == key.at
            && self
                .objects
                .iter()
                .zip(key.objects)
                .all(|(kept, object)| kept.as_ptr() == object.as_ptr())
            && self.explanation == key.explanation
            && self.error.as_deref() == key.error
    }
}

/// The shared runs of the checks seen, by their key (open addressing: a key's run is in
/// the first slot from its own that holds it, before an empty one). A check's key was
/// ~100 bytes and more of names and text, hashed and compared in full for every result;
/// the objects it is read from are the same from one verdict to the next (a contract's
/// and its checks' own), so their addresses stand for their texts. At most half the
/// slots are taken: every run is dropped first when that many, or `max_shared`, are kept
/// (a grade's runs are its checks times their outcomes and explanations, ~1,200 on
/// data-2000; kept in fewer slots, a run evicted was made again for ~1,000 instructions).
struct SharedRuns {
    slots: Vec<Option<Box<KeptRun>>>,
    len: usize,
}

impl Default for SharedRuns {
    fn default() -> Self {
        SharedRuns {
            slots: (0..RUN_SLOTS).map(|_| None).collect(),
            len: 0,
        }
    }
}

impl SharedRuns {
    /// Where `key`'s run is, or the empty slot it would take.
    fn probe(&self, key: &RunKey<'_, '_>) -> usize {
        let mut at = key.slot();
        while let Some(kept) = &self.slots[at] {
            if kept.is(key) {
                break;
            }
            at = (at + 1) % RUN_SLOTS;
        }
        at
    }
}

/// Whether `s` is a span id as the emitter accepts one: 16 lowercase hex digits (a final
/// newline allowed, as the regular expression's `$` allowed it).
fn span_id_shaped(s: &str) -> bool {
    let b = s.as_bytes();
    let b = b.strip_suffix(b"\n").unwrap_or(b);
    b.len() == 16 && b.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
}

/// The value of `len` hex digits of either case (a final newline allowed): an id compared
/// in lowercase, as the emitter compares them.
fn hex_value(s: &str, len: usize) -> Option<u128> {
    let b = s.as_bytes();
    let b = b.strip_suffix(b"\n").unwrap_or(b);
    if b.len() != len {
        return None;
    }
    let mut value = 0u128;
    for c in b {
        let digit = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        value = (value << 4) | u128::from(digit);
    }
    Some(value)
}

/// The graded trace's id, or None when it is unusable (an AgentBench trajectory has none:
/// the grade span then starts its own trace). Parsed once a verdict: its records share it.
fn trace_value(trace_id: Option<&str>) -> Option<u128> {
    hex_value(trace_id?, 32).filter(|&t| t != 0)
}

/// A graded span's id (a remote, sampled parent, or the span a record points at), or None
/// when it is unusable.
fn span_value(span_id: Option<&str>) -> Option<u64> {
    u64::try_from(hex_value(span_id?, 16)?)
        .ok()
        .filter(|&s| s != 0)
}

/// An optional str field (`None` and the empty string alike: absent).
fn optional_text(obj: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    if obj.is_none() {
        return Ok(None);
    }
    let s = str_text(obj.cast::<PyString>()?)?;
    Ok((!s.is_empty()).then(|| s.into_owned()))
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Builds the grade spans and evaluation log records of verdicts (`OtelEmitter`'s one
/// record builder; see the module's text). Keeps the shared attribute runs of the checks
/// and contracts it has seen (each cache cleared when it reaches `max_shared`).
#[pyclass(module = "otel_oracles._native", name = "VerdictRecords", frozen)]
pub(crate) struct VerdictRecords {
    names: Names,
    helpers: Helpers,
    /// `Outcome` -> `(SeverityNumber, text)`.
    severities: Py<PyDict>,
    /// The outcomes that score 1.0 (pass, tolerated).
    passing: Vec<Py<PyAny>>,
    error_outcome: Py<PyAny>,
    explain_mode: Py<PyAny>,
    /// `explain_mode == "full"`: the explanation is the oracle's own message (`explain`),
    /// else the filter's template text.
    full: bool,
    grade_span: bool,
    span_events: bool,
    log_events: bool,
    max_list: usize,
    max_shared: usize,
    /// The shared runs of both event forms, by what they are made of (see [`RunKey`]).
    shared: Mutex<SharedRuns>,
    /// Per (contract id, version, hash): the grade span's contract run (a tuple of one
    /// `Attrs`).
    contracts: Py<PyDict>,
    /// The same, encoded as `Span.attributes` fields (`bytes`), for the protobuf requests.
    contract_fields: Py<PyDict>,
    /// splitmix64 state for the ids of grade spans (and of the traces they start).
    random: AtomicU64,
}

#[pymethods]
impl VerdictRecords {
    #[new]
    #[allow(clippy::too_many_arguments)]
    fn new(
        names: &Bound<'_, PyAny>,
        classes: (
            Py<PyAny>,
            Bound<'_, PyAny>,
            Bound<'_, PyAny>,
            Bound<'_, PyAny>,
        ),
        helpers: HelperFns,
        severities: Bound<'_, PyDict>,
        passing: Vec<Py<PyAny>>,
        error_outcome: Py<PyAny>,
        explain_mode: Py<PyAny>,
        forms: (bool, bool, bool),
        max_list: usize,
        max_shared: usize,
        seed: u64,
    ) -> PyResult<Self> {
        let py = names.py();
        let (attrs, span_item, event_item, log_item) = classes;
        let (filter, explain, labels, subject_label) = helpers;
        let full = explain_mode
            .bind(py)
            .cast::<PyString>()
            .is_ok_and(|mode| mode == "full");
        Ok(VerdictRecords {
            names: Names::read(names)?,
            helpers: Helpers {
                attrs,
                span_item: SlotClass::load(span_item.cast()?, &SPAN_FIELDS, Fallback::Keywords)?,
                event_item: SlotClass::load(event_item.cast()?, &EVENT_FIELDS, Fallback::Keywords)?,
                log_item: SlotClass::load(log_item.cast()?, &LOG_FIELDS, Fallback::Keywords)?,
                filter,
                explain,
                labels,
                subject_label,
            },
            severities: severities.unbind(),
            passing,
            error_outcome,
            explain_mode,
            full,
            grade_span: forms.0,
            span_events: forms.1,
            log_events: forms.2,
            max_list,
            max_shared: max_shared.max(1),
            shared: Mutex::new(SharedRuns::default()),
            contracts: PyDict::new(py).unbind(),
            contract_fields: PyDict::new(py).unbind(),
            random: AtomicU64::new(seed),
        })
    }

    /// Appends the records of `results[start:]` (pairs of a verdict and its trajectory or
    /// None) to `spans` and `logs`, each verdict's at one time stamp, and returns the index
    /// after the last verdict built: the first after which `spans` or `logs` holds at least
    /// `batch` records (the caller ships them then), else `len(results)`. `spans` and `logs`
    /// are lists (of `SpanItem`s and `LogItem`s) or two `ProtoRequest`s, into which the
    /// records are written as OTLP protobuf (the bytes `encode_*_proto` makes of the items).
    /// `tally` (a `GradeTally`) counts each verdict built, from the fields and labels the
    /// records read: the tally read them again on its own, its labels' rules applied twice.
    #[pyo3(signature = (results, start, spans, logs, batch, tally=None))]
    fn build(
        &self,
        results: &Bound<'_, PyList>,
        start: usize,
        spans: &Bound<'_, PyAny>,
        logs: &Bound<'_, PyAny>,
        batch: usize,
        tally: Option<&Bound<'_, GradeTally>>,
    ) -> PyResult<usize> {
        let mut tally = tally.map(Bound::try_borrow_mut).transpose()?;
        let py = results.py();
        if let (Ok(spans), Ok(logs)) = (spans.cast::<ProtoRequest>(), logs.cast::<ProtoRequest>()) {
            if spans.is(logs) {
                return Err(PyValueError::new_err(
                    "VerdictRecords.build: spans and logs need a request each",
                ));
            }
            let mut skipped = Skipped::default();
            let event_name = text(
                self.names.evaluation_event.bind(py).as_any(),
                "EventItem.name",
            )?;
            let (mut span_writer, mut log_writer) = (spans.get().writer()?, logs.get().writer()?);
            let at = self.build_into(
                results,
                start,
                Out::Proto {
                    spans: &mut span_writer,
                    logs: &mut log_writer,
                    event_name: &event_name,
                    skipped: &mut skipped,
                },
                batch,
                tally.as_deref_mut(),
            )?;
            skipped.log(py)?;
            return Ok(at);
        }
        let spans = spans
            .cast::<PyList>()
            .map_err(|_| PyValueError::new_err("VerdictRecords.build: spans: expected a list"))?;
        let logs = logs
            .cast::<PyList>()
            .map_err(|_| PyValueError::new_err("VerdictRecords.build: logs: expected a list"))?;
        self.build_into(
            results,
            start,
            Out::Items { spans, logs },
            batch,
            tally.as_deref_mut(),
        )
    }
}

impl VerdictRecords {
    /// `build` into `out`.
    fn build_into<'py>(
        &self,
        results: &Bound<'py, PyList>,
        start: usize,
        mut out: Out<'_, 'py>,
        batch: usize,
        mut tally: Option<&mut GradeTally>,
    ) -> PyResult<usize> {
        let form = out.form();
        // The tally's labels are the records' own: it takes the agent and generation labels
        // made here.
        let shares_labels = tally.as_ref().is_some_and(|t| t.asks(&self.helpers.labels));
        let mut labels: Option<(Bound<'py, PyAny>, Generation<'py>)> = None;
        let total = results.len();
        let mut i = start;
        while i < total {
            let pair = results.get_item(i)?;
            let (verdict, trajectory) = pair.extract::<(Bound<'py, PyAny>, Bound<'py, PyAny>)>()?;
            i += 1;
            let now = now_ns();
            let read = self.read(&verdict)?;
            let trace = trace_value(read.trace_id.as_deref());
            let checks = if self.log_events || (self.grade_span && self.span_events) {
                let mut skipped = Skipped::default();
                let made = read
                    .results
                    .iter()
                    .map(|r| self.check(&read, r, form, &mut skipped))
                    .collect::<PyResult<Vec<_>>>()?;
                if let Out::Proto { skipped: into, .. } = &mut out {
                    into.0.extend(skipped.0);
                }
                made
            } else {
                Vec::new()
            };
            let labelled = self.grade_span || shares_labels;
            let generation = if labelled {
                match &labels {
                    Some((held, found)) if held.is(&trajectory) => found.clone(),
                    _ => {
                        let found = self.helpers.labels.get().generation(&trajectory)?;
                        labels = Some((trajectory.clone(), found.clone()));
                        found
                    }
                }
            } else {
                (None, None)
            };
            let agent = if labelled {
                self.helpers
                    .labels
                    .get()
                    .agent_of(&read.agent, &trajectory)?
            } else {
                None
            };
            if self.grade_span {
                let span = self.grade_span(&read, trace, &trajectory, &agent, &generation, now)?;
                self.write_span(&read, &span, now, &checks, &mut out)?;
            }
            if self.log_events {
                self.log_records(&read, trace, now, &checks, &mut out)?;
            }
            if let Some(tally) = tally.as_deref_mut() {
                let [invariant, tolerated, exhausted, missing, _] = &read.counts;
                let v = Tallied {
                    verdict: &read.verdict,
                    trajectory: &trajectory,
                    contract_id: &read.contract_id,
                    contract_version: &read.contract_version,
                    agent: &read.agent,
                    outcome: &read.outcome,
                    counts: [invariant, tolerated, exhausted, missing],
                    duration_ns: &read.duration_ns,
                };
                let known = shares_labels.then_some((&agent, &generation));
                if checks.len() == read.results.len() {
                    tally.count(&v, known, checks.iter().map(|c| Ok(c.key.clone())))?;
                } else {
                    let py = verdict.py();
                    tally.count(
                        &v,
                        known,
                        read.results.iter().map(|result| {
                            let r = StepFields::new(result.clone());
                            Ok((
                                r.get(intern!(py, "name"))?,
                                r.get(intern!(py, "oracle_type"))?,
                                r.get(intern!(py, "outcome"))?,
                            ))
                        }),
                    )?;
                }
            }
            let (span_count, log_count) = out.lens();
            if span_count >= batch || log_count >= batch {
                break;
            }
        }
        Ok(i)
    }

    /// The next of a splitmix64 sequence (seeded by the emitter from the system's random
    /// source): ids of grade spans need to be unique, not secret.
    fn next_random(&self) -> u64 {
        let mut z = self
            .random
            .fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed)
            .wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The verdict's fields, from its instance `__dict__` (`StepFields`), as the tally
    /// reads them.
    fn read<'py>(&self, verdict: &Bound<'py, PyAny>) -> PyResult<Read<'py>> {
        let py = verdict.py();
        // Declaration order, then `verdict` (a property: read last, as an attribute).
        let [contract_id, contract_version, contract_hash, trace_id, root_span_id, agent, results, counts, duration_ns, outcome] =
            StepFields::new(verdict.clone()).read(
                0,
                [
                    intern!(py, "contract_id"),
                    intern!(py, "contract_version"),
                    intern!(py, "contract_hash"),
                    intern!(py, "trace_id"),
                    intern!(py, "root_span_id"),
                    intern!(py, "agent_name"),
                    intern!(py, "results"),
                    intern!(py, "counts"),
                    intern!(py, "duration_ns"),
                    intern!(py, "verdict"),
                ],
            )?;
        let results = results
            .cast::<PyList>()
            .map_err(|_| PyValueError::new_err("Verdict.results: expected a list"))?
            .iter()
            .collect();
        let [invariant, tolerated, exhausted, missing] = count_fields(py);
        Ok(Read {
            contract_id,
            contract_version,
            contract_hash,
            agent,
            outcome,
            counts: StepFields::new(counts).read(
                0,
                [
                    invariant,
                    tolerated,
                    exhausted,
                    missing,
                    intern!(py, "errors"),
                ],
            )?,
            duration_ns,
            trace_id: optional_text(&trace_id)?,
            root_span_id: optional_text(&root_span_id)?,
            results,
            verdict: verdict.clone(),
        })
    }

    /// The `gen_ai.evaluation.result` attributes of one check, shared by the span and log
    /// forms: one run shared by every result with the same check, outcome and explanation
    /// (contract, name, type, layer, score, outcome, explanation), plus the result's own
    /// few values (budget numbers, step indexes, span ids). The result's fields are read
    /// from its instance `__dict__` (a pydantic model's attribute read goes through its
    /// `__getattr__` hook), the explanation is the filter's text, and the run is found by
    /// what it is made of, compared in the core.
    fn check<'py>(
        &self,
        read: &Read<'py>,
        result: &Bound<'py, PyAny>,
        form: Form,
        skipped: &mut Skipped,
    ) -> PyResult<Check<'py>> {
        let py = result.py();
        // `OracleResult`'s declaration order.
        let [oracle_type, name, layer, outcome, passed, message, details, span_ids, steps, used, budget] =
            StepFields::new(result.clone()).read(
                0,
                [
                    intern!(py, "oracle_type"),
                    intern!(py, "name"),
                    intern!(py, "layer"),
                    intern!(py, "outcome"),
                    intern!(py, "passed"),
                    intern!(py, "message"),
                    intern!(py, "details"),
                    intern!(py, "span_ids"),
                    intern!(py, "step_indexes"),
                    intern!(py, "used"),
                    intern!(py, "budget"),
                ],
            )?;
        let j = Judged {
            name: &name,
            oracle_type: &oracle_type,
            outcome: &outcome,
            used: &used,
            budget: &budget,
            steps: &steps,
            details: &details,
            message: &message,
        };
        let filter = self.helpers.filter.get();
        let at = filter.outcome_at(j.outcome)?;
        let explanation = if self.full {
            let text = self
                .helpers
                .explain
                .bind(py)
                .call1((result, self.explain_mode.bind(py)))?;
            str_text(text.cast::<PyString>()?)?.into_owned()
        } else {
            filter.text_at(at, &j)?
        };
        let error = if j.outcome.is(self.error_outcome.bind(py)) {
            Some(filter.error_type(j.details)?)
        } else {
            None
        };
        let parts = Shared {
            layer: &layer,
            passed: &passed,
            at,
            explanation: &explanation,
            error: error.as_deref(),
        };
        let key = RunKey::of(read, &j, &parts, form);
        let found = key.as_ref().and_then(|key| self.found(py, key));
        let shared = match found {
            Some(found) => found,
            None => {
                let made = self.shared_parts(read, &j, &parts)?;
                let kept = self.shared_run(made, form, skipped)?;
                let run = kept.bind(py);
                if let Some(key) = &key {
                    self.keep(key, kept);
                }
                run
            }
        };
        let budget = j.budget;
        let n = &self.names;
        let name = |name: &Py<PyString>| name.bind(py).clone().into_any();
        let mut extra = Vec::new();
        let tolerance = layer.cast::<PyString>().is_ok_and(|s| s == "tolerance");
        if tolerance || !budget.is_none() {
            extra.push((name(&n.budget_used), j.used.clone()));
            if !budget.is_none() {
                extra.push((name(&n.budget_limit), budget.clone()));
            }
        }
        let steps = j
            .steps
            .cast::<PyList>()
            .map_err(|_| PyValueError::new_err("OracleResult.step_indexes: expected a list"))?;
        // Written into a request (`Form::Proto`), a list is encoded at once, so the result's
        // own list serves when it is not cut; an item keeps a list of its own.
        let whole = |len: usize| form == Form::Proto && len <= self.max_list;
        if !steps.is_empty() {
            let value = if whole(steps.len()) {
                steps.clone().into_any()
            } else {
                steps.get_slice(0, self.max_list).into_any()
            };
            extra.push((name(&n.step_indexes), value));
        }
        let mut pointed = None;
        let span_ids = span_ids
            .cast::<PyList>()
            .map_err(|_| PyValueError::new_err("OracleResult.span_ids: expected a list"))?;
        if !span_ids.is_empty() {
            // A str with a surrogate is no span id either.
            let shaped = |item: &Bound<'py, PyAny>| -> PyResult<bool> {
                Ok(item.cast::<PyString>()?.to_str().is_ok_and(span_id_shaped))
            };
            let mut shown = 0;
            let mut first = None;
            for (at, item) in span_ids.iter().enumerate() {
                if at >= self.max_list && shown > 0 {
                    break;
                }
                if !shaped(&item)? {
                    continue;
                }
                if first.is_none() {
                    first = Some(item.cast_into::<PyString>()?);
                }
                if at >= self.max_list {
                    // none of the first ones: the first id past them is pointed at
                    break;
                }
                shown += 1;
            }
            if shown > 0 {
                // The ids shown are the span ids among the first `max_list` (the walk went
                // past them only when none was one).
                let value = if whole(span_ids.len()) && shown == span_ids.len() {
                    span_ids.clone().into_any()
                } else {
                    let mut kept = Vec::with_capacity(shown);
                    for item in span_ids.iter().take(self.max_list) {
                        if shaped(&item)? {
                            kept.push(item);
                        }
                    }
                    PyList::new(py, kept)?.into_any()
                };
                extra.push((name(&n.evaluated_span_ids), value));
            }
            pointed = first;
        }
        Ok(Check {
            key: (j.name.clone(), oracle_type, outcome),
            shared,
            extra,
            pointed,
        })
    }

    /// What the runs a check's records share (see `check`) hold, made of `parts`.
    fn shared_parts<'py>(
        &self,
        read: &Read<'py>,
        j: &Judged<'_, 'py>,
        parts: &Shared<'_, 'py>,
    ) -> PyResult<SharedParts<'py>> {
        let py = j.name.py();
        let n = &self.names;
        let name = |name: &Py<PyString>| name.bind(py).clone().into_any();
        let outcome = j.outcome;
        let value = outcome.getattr(intern!(py, "value"))?;
        let score = if self.passing.iter().any(|p| p.bind(py).is(outcome)) {
            1.0f64
        } else {
            0.0
        };
        let score = score.into_pyobject(py)?.into_any();
        let explanation = PyString::new(py, parts.explanation).into_any();
        let mut log = vec![(name(&n.evaluation_name), j.name.clone())];
        self.contract_attributes(read, &mut log)?;
        log.push((name(&n.oracle_type), j.oracle_type.clone()));
        log.push((name(&n.layer), parts.layer.clone()));
        // Span events carry only the gen_ai.evaluation.* core (and error.type): the
        // contract attributes are on the span itself, and the log form carries the full set.
        let mut event = vec![(name(&n.evaluation_name), j.name.clone())];
        for form in [&mut log, &mut event] {
            form.push((name(&n.score_value), score.clone()));
            form.push((name(&n.score_label), value.clone()));
            form.push((name(&n.explanation), explanation.clone()));
        }
        log.push((name(&n.outcome), value));
        log.push((name(&n.passed), parts.passed.clone()));
        if let Some(error) = parts.error {
            let error = PyString::new(py, error).into_any();
            log.push((name(&n.error_type), error.clone()));
            event.push((name(&n.error_type), error));
        }
        let (severity, severity_text) = self
            .severities
            .bind(py)
            .get_item(outcome)?
            .ok_or_else(|| PyValueError::new_err("an outcome without a severity"))?
            .extract::<(Bound<'py, PyAny>, Bound<'py, PyAny>)>()?;
        Ok(SharedParts {
            log,
            event,
            severity,
            severity_text,
        })
    }

    /// The runs of `parts` in `form`: `Attrs` of each form (what the items carry), or their
    /// protobuf fields as the encoder would write and cache them.
    fn shared_run(
        &self,
        parts: SharedParts<'_>,
        form: Form,
        skipped: &mut Skipped,
    ) -> PyResult<Kept> {
        let py = parts.severity.py();
        match form {
            Form::Items => {
                let attrs = self.helpers.attrs.bind(py);
                let run = |pairs: &Pairs<'_>| -> PyResult<Bound<'_, PyTuple>> {
                    let items = PyDict::new(py);
                    for (key, value) in pairs {
                        items.set_item(key, value)?;
                    }
                    PyTuple::new(py, [attrs.call1((items,))?])
                };
                Ok(Kept::Items(
                    PyTuple::new(
                        py,
                        [
                            run(&parts.log)?.into_any(),
                            run(&parts.event)?.into_any(),
                            parts.severity,
                            parts.severity_text,
                        ],
                    )?
                    .unbind(),
                ))
            }
            Form::Proto => Ok(Kept::Proto(Arc::new(ProtoRun {
                log: proto::attributes(
                    proto::AttributeField::Log,
                    &attributes(&parts.log, skipped)?,
                ),
                event: proto::attributes(
                    proto::AttributeField::Event,
                    &attributes(&parts.event, skipped)?,
                ),
                severity: severity_number(&parts.severity)?,
                severity_text: text(&parts.severity_text, "LogItem.severity_text")?.into_owned(),
            }))),
        }
    }

    /// The runs kept under `key`.
    fn found<'py>(&self, py: Python<'py>, key: &RunKey<'_, 'py>) -> Option<Run<'py>> {
        let runs = self.shared.lock().ok()?;
        let kept = runs.slots[runs.probe(key)].as_ref()?;
        Some(kept.run.bind(py))
    }

    /// Keeps `run` under `key`: every run is dropped first when `max_shared` (or half the
    /// slots) are kept (explanations repeat: templates).
    fn keep(&self, key: &RunKey<'_, '_>, run: Kept) {
        let Ok(mut runs) = self.shared.lock() else {
            return;
        };
        if runs.len >= self.max_shared.min(RUN_SLOTS / 2) {
            runs.slots.iter_mut().for_each(|slot| *slot = None);
            runs.len = 0;
        }
        let at = runs.probe(key);
        if runs.slots[at].is_none() {
            runs.len += 1;
        }
        runs.slots[at] = Some(Box::new(KeptRun {
            objects: key.objects.map(|object| object.clone().unbind()),
            at: key.at,
            explanation: key.explanation.to_owned(),
            error: key.error.map(str::to_owned),
            run,
        }));
    }

    fn contract_attributes<'py>(&self, read: &Read<'py>, into: &mut Pairs<'py>) -> PyResult<()> {
        let py = read.verdict.py();
        let n = &self.names;
        let name = |name: &Py<PyString>| name.bind(py).clone().into_any();
        into.push((name(&n.contract_id), read.contract_id.clone()));
        into.push((name(&n.contract_version), read.contract_version.clone()));
        if read.contract_hash.is_truthy()? {
            into.push((name(&n.contract_hash), read.contract_hash.clone()));
        }
        Ok(())
    }

    /// The grade span's contract run in `form` (kept per contract): a tuple of one `Attrs`,
    /// or its `Span.attributes` fields as `bytes`.
    fn contract_run<'py>(
        &self,
        read: &Read<'py>,
        form: Form,
        skipped: &mut Skipped,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = read.verdict.py();
        let ckey = PyTuple::new(
            py,
            [
                &read.contract_id,
                &read.contract_version,
                &read.contract_hash,
            ],
        )?;
        let kept = match form {
            Form::Items => self.contracts.bind(py),
            Form::Proto => self.contract_fields.bind(py),
        };
        if let Some(found) = kept.get_item(&ckey)? {
            return Ok(found);
        }
        let mut pairs = Vec::new();
        self.contract_attributes(read, &mut pairs)?;
        let made = match form {
            Form::Items => {
                let attrs = PyDict::new(py);
                for (key, value) in &pairs {
                    attrs.set_item(key, value)?;
                }
                PyTuple::new(py, [self.helpers.attrs.bind(py).call1((attrs,))?])?.into_any()
            }
            Form::Proto => PyBytes::new(
                py,
                &proto::attributes(proto::AttributeField::Span, &attributes(&pairs, skipped)?),
            )
            .into_any(),
        };
        if kept.len() >= self.max_shared {
            kept.clear();
        }
        kept.set_item(&ckey, &made)?;
        Ok(made)
    }

    /// A parent when the trace had no root span: the first span a result points at.
    fn any_span_id(read: &Read<'_>) -> PyResult<Option<String>> {
        let py = read.verdict.py();
        for result in &read.results {
            for s in result.getattr(intern!(py, "span_ids"))?.try_iter()? {
                let s = s?;
                let Ok(text) = s.cast::<PyString>()?.to_str() else {
                    continue;
                };
                if span_id_shaped(text) {
                    return Ok(Some(text.to_owned()));
                }
            }
        }
        Ok(None)
    }

    /// The grade span's values; `trace` is the verdict's trace id (`trace_value`), `agent`
    /// and `generation` its agent's and its trajectory's labels.
    fn grade_span<'py>(
        &self,
        read: &Read<'py>,
        trace: Option<u128>,
        trajectory: &Bound<'py, PyAny>,
        agent: &Option<Bound<'py, PyAny>>,
        generation: &Generation<'py>,
        now: u64,
    ) -> PyResult<GradeSpan<'py>> {
        let py = trajectory.py();
        let verdict = &read.verdict;
        let n = &self.names;
        let name = |name: &Py<PyString>| name.bind(py).clone().into_any();
        let outcome = &read.outcome;
        let mut attrs = vec![
            (name(&n.verdict), outcome.clone()),
            (
                name(&n.checks),
                read.results.len().into_pyobject(py)?.into_any(),
            ),
        ];
        let [invariant, tolerated, exhausted, missing, errors] = &read.counts;
        let numbers = [
            (invariant.clone(), &n.invariant_failures),
            (tolerated.clone(), &n.tolerated_failures),
            (exhausted.clone(), &n.budget_exhausted),
            (missing.clone(), &n.missing_evidence),
            (errors.clone(), &n.errors),
        ];
        for (value, key) in &numbers {
            attrs.push((name(key), value.clone()));
        }
        // Each label is a non-empty `str` or None.
        if let Some(agent) = agent {
            attrs.push((name(&n.agent_name), agent.clone()));
        }
        let (provider, model) = generation;
        if let Some(provider) = provider {
            attrs.push((name(&n.provider_name), provider.clone()));
        }
        if let Some(model) = model {
            attrs.push((name(&n.request_model), model.clone()));
        }
        let pointed = match &read.root_span_id {
            Some(root) => Some(root.clone()),
            None => Self::any_span_id(read)?,
        };
        let (trace_id, parent_id) = match (trace, span_value(pointed.as_deref())) {
            (Some(t), Some(s)) => (t, Some(s)),
            _ => {
                let subject = self
                    .helpers
                    .subject_label
                    .bind(py)
                    .call1((verdict.getattr(intern!(py, "subject"))?,))?;
                if subject.is_truthy()? {
                    attrs.push((name(&n.subject), subject));
                }
                let t = (u128::from(self.next_random()) << 64) | u128::from(self.next_random());
                (t.max(1), None)
            }
        };
        let span_id = self.next_random().max(1);
        let failed = !outcome.cast::<PyString>().is_ok_and(|s| s == "pass");
        let duration = read.duration_ns.extract::<i128>()?.max(0);
        Ok(GradeSpan {
            trace_id,
            span_id,
            parent_id,
            name: format!(
                "{} {}",
                n.grade_span_prefix,
                str_text(&read.contract_id.str()?)?
            ),
            start: i128::from(now) - duration,
            attrs,
            status: if failed {
                Some(status_text(outcome, &numbers)?)
            } else {
                None
            },
        })
    }

    /// Writes the grade span `span` (ended `now`, an event per check) to `out`.
    fn write_span<'py>(
        &self,
        read: &Read<'py>,
        span: &GradeSpan<'py>,
        now: u64,
        checks: &[Check<'py>],
        out: &mut Out<'_, 'py>,
    ) -> PyResult<()> {
        let py = read.verdict.py();
        match out {
            Out::Items { spans, .. } => {
                let contract = self.contract_run(read, Form::Items, &mut Skipped::default())?;
                let end = now.into_pyobject(py)?.into_any();
                let events = PyList::empty(py);
                if self.span_events {
                    let name = self.names.evaluation_event.bind(py);
                    for check in checks {
                        let Run::Items(shared) = &check.shared else {
                            return Err(PyValueError::new_err("a check's runs of another form"));
                        };
                        events.append(self.helpers.event_item.make(
                            py,
                            [name.clone().into_any(), end.clone(), shared.get_item(1)?],
                        )?)?;
                    }
                }
                let attrs = PyDict::new(py);
                for (key, value) in &span.attrs {
                    attrs.set_item(key, value)?;
                }
                let (status_code, status_message) = match &span.status {
                    Some(text) => (STATUS_ERROR, PyString::new(py, text).into_any()),
                    None => (STATUS_UNSET, py.None().into_bound(py)),
                };
                let parent_id = match span.parent_id {
                    Some(id) => id.into_pyobject(py)?.into_any(),
                    None => py.None().into_bound(py),
                };
                spans.append(self.helpers.span_item.make(
                    py,
                    [
                        span.trace_id.into_pyobject(py)?.into_any(),
                        span.span_id.into_pyobject(py)?.into_any(),
                        parent_id,
                        PyString::new(py, &span.name).into_any(),
                        span.start.into_pyobject(py)?.into_any(),
                        end,
                        contract,
                        attrs.into_any(),
                        events.into_any(),
                        status_code.into_pyobject(py)?.into_any(),
                        status_message,
                    ],
                )?)?;
            }
            Out::Proto {
                spans,
                event_name,
                skipped,
                ..
            } => {
                let contract = self.contract_run(read, Form::Proto, skipped)?;
                let contract = contract.cast::<PyBytes>()?;
                let mut events = Vec::new();
                if self.span_events {
                    for check in checks {
                        let Run::Proto(shared) = &check.shared else {
                            return Err(PyValueError::new_err("a check's runs of another form"));
                        };
                        events.push(Event {
                            name: event_name,
                            time_ns: now,
                            attributes: vec![Piece::Encoded(&shared.event)],
                        });
                    }
                }
                let mut pieces = vec![Piece::Encoded(contract.as_bytes())];
                let own = attributes(&span.attrs, skipped)?;
                if !span.attrs.is_empty() {
                    pieces.push(Piece::Values(own));
                }
                spans.span(&Span {
                    trace_id: span.trace_id.to_be_bytes(),
                    span_id: span.span_id.to_be_bytes(),
                    parent_span_id: span.parent_id.map(u64::to_be_bytes),
                    name: &span.name,
                    start_ns: u64::try_from(span.start).map_err(|_| {
                        PyValueError::new_err(
                            "SpanItem.start: expected nanoseconds since the epoch",
                        )
                    })?,
                    end_ns: now,
                    attributes: pieces,
                    events,
                    status_code: if span.status.is_some() {
                        STATUS_ERROR
                    } else {
                        STATUS_UNSET
                    },
                    status_message: span.status.as_deref().unwrap_or(""),
                });
            }
        }
        Ok(())
    }

    /// Writes a log record per check to `out`; `trace` is the verdict's trace id
    /// (`trace_value`), when usable.
    fn log_records<'py>(
        &self,
        read: &Read<'py>,
        trace: Option<u128>,
        now: u64,
        checks: &[Check<'py>],
        out: &mut Out<'_, 'py>,
    ) -> PyResult<()> {
        let py = read.verdict.py();
        match out {
            Out::Items { logs, .. } => {
                let event = self.names.evaluation_event.bind(py).clone().into_any();
                // One int object of the verdict's trace id for every record: the encoder
                // converts a trace id once for consecutive records holding the same object.
                let trace = trace
                    .map(|t| t.into_pyobject(py).map(Bound::into_any))
                    .transpose()?;
                let now = now.into_pyobject(py)?.into_any();
                let zero = 0u8.into_pyobject(py)?.into_any();
                // The records of one verdict point at a few spans: each pair of ids made once.
                let mut made: Vec<(Option<&str>, Bound<'py, PyAny>, Bound<'py, PyAny>)> =
                    Vec::new();
                for check in checks {
                    let span_id = check.pointed().or(read.root_span_id.as_deref());
                    let at = match made.iter().position(|(s, _, _)| *s == span_id) {
                        Some(at) => at,
                        None => {
                            let pair = match (&trace, span_value(span_id)) {
                                (Some(t), Some(s)) => (t.clone(), s.into_pyobject(py)?.into_any()),
                                _ => (zero.clone(), zero.clone()),
                            };
                            made.push((span_id, pair.0, pair.1));
                            made.len() - 1
                        }
                    };
                    let (_, trace, span) = &made[at];
                    let Run::Items(shared) = &check.shared else {
                        return Err(PyValueError::new_err("a check's runs of another form"));
                    };
                    let extra = if check.extra.is_empty() {
                        py.None().into_bound(py)
                    } else {
                        let own = PyDict::new(py);
                        for (key, value) in &check.extra {
                            own.set_item(key, value)?;
                        }
                        own.into_any()
                    };
                    logs.append(self.helpers.log_item.make(
                        py,
                        [
                            now.clone(),
                            trace.clone(),
                            span.clone(),
                            shared.get_item(2)?,
                            shared.get_item(3)?,
                            event.clone(),
                            shared.get_item(0)?,
                            extra,
                        ],
                    )?)?;
                }
            }
            Out::Proto {
                logs,
                event_name,
                skipped,
                ..
            } => {
                // One vector of pieces and one of a record's own values for all the
                // verdict's records, taken back from each record once it is written (a
                // vector made and dropped for each was ~300 instructions a record).
                let mut pieces = Vec::with_capacity(2);
                let mut own = Vec::new();
                // Most records point at the root span (their result names no span): its id
                // read once for all of them.
                let root = span_value(read.root_span_id.as_deref());
                for check in checks {
                    let span = match check.pointed() {
                        Some(pointed) => span_value(Some(pointed)),
                        None => root,
                    };
                    let ids = match (trace, span) {
                        (Some(t), Some(s)) => Some((t.to_be_bytes(), s.to_be_bytes())),
                        _ => None,
                    };
                    let Run::Proto(shared) = &check.shared else {
                        return Err(PyValueError::new_err("a check's runs of another form"));
                    };
                    pieces.push(Piece::Encoded(&shared.log));
                    if !check.extra.is_empty() {
                        attributes_into(&check.extra, skipped, &mut own)?;
                        pieces.push(Piece::Values(std::mem::take(&mut own)));
                    }
                    let record = LogRecord {
                        time_ns: now,
                        trace_id: ids.map(|(t, _)| t),
                        span_id: ids.map(|(_, s)| s),
                        severity_number: shared.severity,
                        severity_text: &shared.severity_text,
                        event_name,
                        attributes: pieces,
                    };
                    logs.log_record(&record);
                    pieces = record.attributes;
                    if let Some(Piece::Values(mut values)) = pieces.pop() {
                        values.clear();
                        own = values;
                    }
                    pieces.clear();
                }
            }
        }
        Ok(())
    }
}

/// `fail: invariant_failures=1, missing_evidence=2`: the non-zero numbers.
fn status_text(
    outcome: &Bound<'_, PyAny>,
    numbers: &[(Bound<'_, PyAny>, &Py<PyString>); 5],
) -> PyResult<String> {
    let labels = [
        (0, "invariant_failures"),
        (2, "budget_exhausted"),
        (3, "missing_evidence"),
        (4, "errors"),
    ];
    let mut parts = Vec::new();
    for (at, label) in labels {
        let count = &numbers[at].0;
        if count.is_truthy()? {
            parts.push(format!("{label}={}", count.str()?.to_str()?));
        }
    }
    let outcome = outcome.str()?;
    let outcome = outcome.to_str()?;
    Ok(if parts.is_empty() {
        outcome.to_owned()
    } else {
        format!("{outcome}: {}", parts.join(", "))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<VerdictRecords>()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_take_hex_of_either_case_and_refuse_zero_and_other_shapes() {
        let t = "0123456789ABCDEF0123456789abcdef";
        assert_eq!(
            trace_value(Some(t)),
            Some(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef)
        );
        assert_eq!(span_value(Some("00000000000000FF")), Some(0xff));
        assert_eq!(span_value(Some("0000000000000000")), None);
        assert_eq!(span_value(Some("00000000000000f")), None);
        assert_eq!(span_value(Some("00000000000000fg")), None);
        assert_eq!(span_value(None), None);
        assert_eq!(trace_value(None), None);
        assert_eq!(trace_value(Some("")), None);
        assert_eq!(trace_value(Some(&"0".repeat(32))), None);
        assert_eq!(span_value(Some("00000000000000ff\n")), Some(0xff));
        assert_eq!(
            trace_value(Some("0123456789ABCDEF0123456789abcdef\n")),
            Some(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef)
        );
    }

    #[test]
    fn span_ids_are_lowercase_hex_only() {
        assert!(span_id_shaped("00000000000000ff"));
        assert!(!span_id_shaped("00000000000000FF"));
        assert!(!span_id_shaped("00000000000000ff\n\n"));
    }
}
