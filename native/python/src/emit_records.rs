//! The emitter's grade spans and evaluation log records built from verdicts
//! (`otel_oracles.emit._otel`), one call for a run of verdicts.
//!
//! Why here: building the records was the largest part of emitting in Python (a few
//! dict and object builds and lookups per check, with an interpreter step each), and it
//! runs for every check of every graded trace in `serve`'s workers. The records are the
//! emitter's own (`otel_oracles.emit._records`: `Attrs`, `SpanItem`, `EventItem`, `LogItem`),
//! so the encoders and the SDK adapter read them as before. The explanations and error types
//! are the privacy filter's (`ShownFilter`, `scrub.rs`), asked directly; what stays in Python
//! is called from here: the oracle's own message of `full` explanations (`explain`), the
//! label rules of the grade span (`agent_label`, `generation_labels`, the subject), the
//! attribute names (`_names`) and the severities.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::Mutex;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt, PyList, PyString, PyTuple};

use crate::evidence::StepFields;
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

/// The privacy filter, `explain` (for `full` explanations), `agent_label`,
/// `generation_labels` and the subject label, as the emitter passes them.
type HelperFns = (Py<ShownFilter>, Py<PyAny>, Py<PyAny>, Py<PyAny>, Py<PyAny>);

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
    agent_label: Py<PyAny>,
    generation_labels: Py<PyAny>,
    subject_label: Py<PyAny>,
}

/// One check's records: the runs every result with the same check, outcome and
/// explanation shares (a tuple `(log runs, event runs, severity, severity text)`), the
/// result's own attributes, and the span it points at.
struct Check<'py> {
    shared: Bound<'py, PyTuple>,
    extra: Option<Bound<'py, PyDict>>,
    pointed: Option<String>,
}

/// A verdict's fields the records read more than once.
struct Read<'py> {
    verdict: Bound<'py, PyAny>,
    contract_id: Bound<'py, PyAny>,
    contract_version: Bound<'py, PyAny>,
    contract_hash: Bound<'py, PyAny>,
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

/// A shared run's key: everything `shared_check` reads (the contract's id, hash and
/// version, the check's name, type and layer, where its outcome stands, whether it passed,
/// its explanation and error type). `S` is `&str` for a lookup (no string copied) and
/// `String` for a kept key. Only exact `str`s, `int`s and `bool`s make one: a run of other
/// values is made and not kept.
#[derive(PartialEq, Eq, Hash)]
struct SharedKey<S> {
    texts: [S; 6],
    version: i64,
    at: usize,
    passed: bool,
    error: Option<S>,
}

impl<'a> SharedKey<&'a str> {
    /// The key of a check's runs and its hash, or None when a part is of another type.
    fn of<'py>(
        read: &'a Read<'py>,
        j: &'a Judged<'py>,
        parts: &Shared<'a, 'py>,
    ) -> PyResult<Option<(u64, Self)>> {
        let text = |value: &'a Bound<'py, PyAny>| -> PyResult<Option<&'a str>> {
            // A str holding a surrogate has no `&str`: its runs are made, not kept.
            Ok(value
                .cast_exact::<PyString>()
                .ok()
                .and_then(|s| s.to_str().ok()))
        };
        let (Some(contract_id), Some(contract_hash), Some(name), Some(oracle_type), Some(layer)) = (
            text(&read.contract_id)?,
            text(&read.contract_hash)?,
            text(&j.name)?,
            text(&j.oracle_type)?,
            text(parts.layer)?,
        ) else {
            return Ok(None);
        };
        let Some(version) = read
            .contract_version
            .cast_exact::<PyInt>()
            .ok()
            .and_then(|v| v.extract::<i64>().ok())
        else {
            return Ok(None);
        };
        let Ok(passed) = parts.passed.cast_exact::<PyBool>() else {
            return Ok(None);
        };
        let key = SharedKey {
            texts: [
                contract_id,
                contract_hash,
                name,
                oracle_type,
                layer,
                parts.explanation,
            ],
            version,
            at: parts.at,
            passed: passed.is_true(),
            error: parts.error,
        };
        let mut hasher = FxHasher::default();
        key.hash(&mut hasher);
        Ok(Some((hasher.finish(), key)))
    }

    fn owned(&self) -> SharedKey<String> {
        SharedKey {
            texts: self.texts.map(str::to_owned),
            version: self.version,
            at: self.at,
            passed: self.passed,
            error: self.error.map(str::to_owned),
        }
    }
}

impl SharedKey<String> {
    fn borrowed(&self) -> SharedKey<&str> {
        SharedKey {
            texts: [
                &self.texts[0],
                &self.texts[1],
                &self.texts[2],
                &self.texts[3],
                &self.texts[4],
                &self.texts[5],
            ],
            version: self.version,
            at: self.at,
            passed: self.passed,
            error: self.error.as_deref(),
        }
    }
}

/// Runs kept under one hash, each with its key.
type Runs = Vec<(SharedKey<String>, Py<PyTuple>)>;

/// The shared runs kept, by their key's hash.
#[derive(Default)]
struct SharedRuns {
    by_hash: HashMap<u64, Runs, BuildHasherDefault<FxHasher>>,
    len: usize,
}

/// FxHash (rustc's): a rotate, a xor and a multiply an 8-byte word. A check's key is a
/// hundred bytes or more of names and text, hashed for every check; SipHash (std's default)
/// cost ~1,300 instructions a key. The keys are the emitter's own, not chosen by a peer.
#[derive(Default)]
struct FxHasher(u64);

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let mut eight = [0u8; 8];
            eight.copy_from_slice(word);
            self.add(u64::from_le_bytes(eight));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut eight = [0u8; 8];
            eight[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(eight));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
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
    /// The shared runs of both event forms, by what they are made of (see [`SharedKey`]).
    shared: Mutex<SharedRuns>,
    /// Per (contract id, version, hash): the grade span's contract run.
    contracts: Py<PyDict>,
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
        let (filter, explain, agent_label, generation_labels, subject_label) = helpers;
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
                agent_label,
                generation_labels,
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
            random: AtomicU64::new(seed),
        })
    }

    /// Appends the records of `results[start:]` (pairs of a verdict and its trajectory or
    /// None) to `spans` and `logs`, each verdict's at one time stamp, and returns the index
    /// after the last verdict built: the first after which `spans` or `logs` holds at least
    /// `batch` records (the caller ships them then), else `len(results)`.
    fn build(
        &self,
        results: &Bound<'_, PyList>,
        start: usize,
        spans: &Bound<'_, PyList>,
        logs: &Bound<'_, PyList>,
        batch: usize,
    ) -> PyResult<usize> {
        let py = results.py();
        let mut labels: Option<(Bound<'_, PyAny>, Bound<'_, PyAny>)> = None;
        let total = results.len();
        let mut i = start;
        while i < total {
            let pair = results.get_item(i)?;
            let (verdict, trajectory) = pair.extract::<(Bound<'_, PyAny>, Bound<'_, PyAny>)>()?;
            i += 1;
            let now = now_ns();
            let read = self.read(&verdict)?;
            // One int object of the verdict's trace id for its grade span and every record:
            // the encoder converts a trace id once for consecutive records holding the same
            // object.
            let trace = trace_value(read.trace_id.as_deref())
                .map(|t| t.into_pyobject(py).map(Bound::into_any))
                .transpose()?;
            let checks = if self.log_events || (self.grade_span && self.span_events) {
                read.results
                    .iter()
                    .map(|r| self.check(&read, r))
                    .collect::<PyResult<Vec<_>>>()?
            } else {
                Vec::new()
            };
            if self.grade_span {
                let generation = match &labels {
                    Some((held, found)) if held.is(&trajectory) => found.clone(),
                    _ => {
                        let found = self
                            .helpers
                            .generation_labels
                            .bind(py)
                            .call1((&trajectory,))?;
                        labels = Some((trajectory.clone(), found.clone()));
                        found
                    }
                };
                let span = self.grade_span(
                    &read,
                    trace.as_ref(),
                    &trajectory,
                    &generation,
                    now,
                    &checks,
                )?;
                spans.append(span)?;
            }
            if self.log_events {
                self.log_records(&read, trace.as_ref(), now, &checks, logs)?;
            }
            if spans.len() >= batch || logs.len() >= batch {
                break;
            }
        }
        Ok(i)
    }
}

impl VerdictRecords {
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

    fn read<'py>(&self, verdict: &Bound<'py, PyAny>) -> PyResult<Read<'py>> {
        let py = verdict.py();
        let results = verdict.getattr(intern!(py, "results"))?;
        let results = results
            .cast::<PyList>()
            .map_err(|_| PyValueError::new_err("Verdict.results: expected a list"))?
            .iter()
            .collect();
        Ok(Read {
            contract_id: verdict.getattr(intern!(py, "contract_id"))?,
            contract_version: verdict.getattr(intern!(py, "contract_version"))?,
            contract_hash: verdict.getattr(intern!(py, "contract_hash"))?,
            trace_id: optional_text(&verdict.getattr(intern!(py, "trace_id"))?)?,
            root_span_id: optional_text(&verdict.getattr(intern!(py, "root_span_id"))?)?,
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
    fn check<'py>(&self, read: &Read<'py>, result: &Bound<'py, PyAny>) -> PyResult<Check<'py>> {
        let py = result.py();
        let f = StepFields::new(result.clone());
        let j = Judged {
            name: f.get(intern!(py, "name"))?,
            oracle_type: f.get(intern!(py, "oracle_type"))?,
            outcome: f.get(intern!(py, "outcome"))?,
            used: f.get(intern!(py, "used"))?,
            budget: f.get(intern!(py, "budget"))?,
            steps: f.get(intern!(py, "step_indexes"))?,
            details: f.get(intern!(py, "details"))?,
            message: f.get(intern!(py, "message"))?,
        };
        let layer = f.get(intern!(py, "layer"))?;
        let passed = f.get(intern!(py, "passed"))?;
        let filter = self.helpers.filter.get();
        let at = filter.outcome_at(&j.outcome)?;
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
            Some(filter.error_type(&j.details)?)
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
        let key = SharedKey::of(read, &j, &parts)?;
        let found = match &key {
            Some((hash, key)) => self.found(py, *hash, key),
            None => None,
        };
        let shared = match found {
            Some(found) => found,
            None => {
                let made = self.shared_check(read, &j, &parts)?;
                if let Some((hash, key)) = key {
                    self.keep(hash, key.owned(), &made);
                }
                made
            }
        };
        let budget = &j.budget;
        let n = &self.names;
        let mut extra: Option<Bound<'py, PyDict>> = None;
        let tolerance = layer.cast::<PyString>().is_ok_and(|s| s == "tolerance");
        if tolerance || !budget.is_none() {
            let own = PyDict::new(py);
            own.set_item(n.budget_used.bind(py), &j.used)?;
            if !budget.is_none() {
                own.set_item(n.budget_limit.bind(py), budget)?;
            }
            extra = Some(own);
        }
        let steps = j
            .steps
            .cast::<PyList>()
            .map_err(|_| PyValueError::new_err("OracleResult.step_indexes: expected a list"))?;
        if !steps.is_empty() {
            let own = extra.get_or_insert_with(|| PyDict::new(py));
            own.set_item(n.step_indexes.bind(py), steps.get_slice(0, self.max_list))?;
        }
        let mut pointed = None;
        let span_ids = f.get(intern!(py, "span_ids"))?;
        let span_ids = span_ids
            .cast::<PyList>()
            .map_err(|_| PyValueError::new_err("OracleResult.span_ids: expected a list"))?;
        if !span_ids.is_empty() {
            let mut shown = Vec::new();
            let mut first = None;
            for (at, item) in span_ids.iter().enumerate() {
                if at >= self.max_list && !shown.is_empty() {
                    break;
                }
                // A str with a surrogate is no span id either.
                let Ok(text) = item.cast::<PyString>()?.to_str() else {
                    continue;
                };
                if !span_id_shaped(text) {
                    continue;
                }
                if first.is_none() {
                    first = Some(text.to_owned());
                }
                if at >= self.max_list {
                    // none of the first ones: the first id past them is pointed at
                    break;
                }
                shown.push(item);
            }
            if !shown.is_empty() {
                let own = extra.get_or_insert_with(|| PyDict::new(py));
                own.set_item(n.evaluated_span_ids.bind(py), PyList::new(py, shown)?)?;
            }
            pointed = first;
        }
        Ok(Check {
            shared,
            extra,
            pointed,
        })
    }

    /// The runs a check's records share (see `check`), made of `parts`.
    fn shared_check<'py>(
        &self,
        read: &Read<'py>,
        j: &Judged<'py>,
        parts: &Shared<'_, 'py>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let py = j.name.py();
        let n = &self.names;
        let outcome = &j.outcome;
        let value = outcome.getattr(intern!(py, "value"))?;
        let score = if self.passing.iter().any(|p| p.bind(py).is(outcome)) {
            1.0f64
        } else {
            0.0
        };
        let explanation = PyString::new(py, parts.explanation);
        let log = PyDict::new(py);
        log.set_item(n.evaluation_name.bind(py), &j.name)?;
        self.contract_attributes(read, &log)?;
        log.set_item(n.oracle_type.bind(py), &j.oracle_type)?;
        log.set_item(n.layer.bind(py), parts.layer)?;
        // Span events carry only the gen_ai.evaluation.* core (and error.type): the
        // contract attributes are on the span itself, and the log form carries the full set.
        let event = PyDict::new(py);
        event.set_item(n.evaluation_name.bind(py), &j.name)?;
        for form in [&log, &event] {
            form.set_item(n.score_value.bind(py), score)?;
            form.set_item(n.score_label.bind(py), &value)?;
            form.set_item(n.explanation.bind(py), &explanation)?;
        }
        log.set_item(n.outcome.bind(py), &value)?;
        log.set_item(n.passed.bind(py), parts.passed)?;
        if let Some(error) = parts.error {
            let error = PyString::new(py, error);
            log.set_item(n.error_type.bind(py), &error)?;
            event.set_item(n.error_type.bind(py), &error)?;
        }
        let (severity, severity_text) = self
            .severities
            .bind(py)
            .get_item(outcome)?
            .ok_or_else(|| PyValueError::new_err("an outcome without a severity"))?
            .extract::<(Bound<'py, PyAny>, Bound<'py, PyAny>)>()?;
        let attrs = self.helpers.attrs.bind(py);
        let log_runs = PyTuple::new(py, [attrs.call1((log,))?])?;
        let event_runs = PyTuple::new(py, [attrs.call1((event,))?])?;
        PyTuple::new(
            py,
            [
                log_runs.into_any(),
                event_runs.into_any(),
                severity,
                severity_text,
            ],
        )
    }

    /// The runs kept under `key` (of hash `hash`).
    fn found<'py>(
        &self,
        py: Python<'py>,
        hash: u64,
        key: &SharedKey<&str>,
    ) -> Option<Bound<'py, PyTuple>> {
        let runs = self.shared.lock().ok()?;
        let kept = runs.by_hash.get(&hash)?;
        kept.iter()
            .find(|(k, _)| k.borrowed() == *key)
            .map(|(_, run)| run.bind(py).clone())
    }

    /// Keeps `run` under `key`: every run is dropped first when `max_shared` are kept
    /// (explanations repeat: templates).
    fn keep(&self, hash: u64, key: SharedKey<String>, run: &Bound<'_, PyTuple>) {
        let Ok(mut runs) = self.shared.lock() else {
            return;
        };
        if runs.len >= self.max_shared {
            runs.by_hash.clear();
            runs.len = 0;
        }
        runs.by_hash
            .entry(hash)
            .or_default()
            .push((key, run.clone().unbind()));
        runs.len += 1;
    }

    fn contract_attributes(&self, read: &Read<'_>, into: &Bound<'_, PyDict>) -> PyResult<()> {
        let py = into.py();
        let n = &self.names;
        into.set_item(n.contract_id.bind(py), &read.contract_id)?;
        into.set_item(n.contract_version.bind(py), &read.contract_version)?;
        if read.contract_hash.is_truthy()? {
            into.set_item(n.contract_hash.bind(py), &read.contract_hash)?;
        }
        Ok(())
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

    /// `trace` is the verdict's trace id (`trace_value`) as an int, when usable.
    fn grade_span<'py>(
        &self,
        read: &Read<'py>,
        trace: Option<&Bound<'py, PyAny>>,
        trajectory: &Bound<'py, PyAny>,
        generation: &Bound<'py, PyAny>,
        now: u64,
        checks: &[Check<'py>],
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = trajectory.py();
        let verdict = &read.verdict;
        let ckey = PyTuple::new(
            py,
            [
                &read.contract_id,
                &read.contract_version,
                &read.contract_hash,
            ],
        )?;
        let contracts = self.contracts.bind(py);
        let contract = match contracts.get_item(&ckey)? {
            Some(found) => found,
            None => {
                let attrs = PyDict::new(py);
                self.contract_attributes(read, &attrs)?;
                let made =
                    PyTuple::new(py, [self.helpers.attrs.bind(py).call1((attrs,))?])?.into_any();
                if contracts.len() >= self.max_shared {
                    contracts.clear();
                }
                contracts.set_item(&ckey, &made)?;
                made
            }
        };
        let n = &self.names;
        let counts = verdict.getattr(intern!(py, "counts"))?;
        let count = |field: &Bound<'py, PyString>| counts.getattr(field);
        let outcome = verdict.getattr(intern!(py, "verdict"))?;
        let attrs = PyDict::new(py);
        attrs.set_item(n.verdict.bind(py), &outcome)?;
        attrs.set_item(n.checks.bind(py), read.results.len())?;
        let numbers = [
            (
                count(intern!(py, "invariant_failures"))?,
                &n.invariant_failures,
            ),
            (
                count(intern!(py, "tolerated_failures"))?,
                &n.tolerated_failures,
            ),
            (count(intern!(py, "budget_exhausted"))?, &n.budget_exhausted),
            (count(intern!(py, "missing_evidence"))?, &n.missing_evidence),
            (count(intern!(py, "errors"))?, &n.errors),
        ];
        for (value, name) in &numbers {
            attrs.set_item(name.bind(py), value)?;
        }
        let agent = self
            .helpers
            .agent_label
            .bind(py)
            .call1((verdict, trajectory))?;
        if agent.is_truthy()? {
            attrs.set_item(n.agent_name.bind(py), agent)?;
        }
        let (provider, model) = generation.extract::<(Bound<'py, PyAny>, Bound<'py, PyAny>)>()?;
        if provider.is_truthy()? {
            attrs.set_item(n.provider_name.bind(py), provider)?;
        }
        if model.is_truthy()? {
            attrs.set_item(n.request_model.bind(py), model)?;
        }
        let pointed = match &read.root_span_id {
            Some(root) => Some(root.clone()),
            None => Self::any_span_id(read)?,
        };
        let (trace_id, parent_id) = match (trace, span_value(pointed.as_deref())) {
            (Some(t), Some(s)) => (t.clone(), Some(s)),
            _ => {
                let subject = self
                    .helpers
                    .subject_label
                    .bind(py)
                    .call1((verdict.getattr(intern!(py, "subject"))?,))?;
                if subject.is_truthy()? {
                    attrs.set_item(n.subject.bind(py), subject)?;
                }
                let t = (u128::from(self.next_random()) << 64) | u128::from(self.next_random());
                (t.max(1).into_pyobject(py)?.into_any(), None)
            }
        };
        let span_id = self.next_random().max(1);
        let end = now.into_pyobject(py)?.into_any();
        let events = PyList::empty(py);
        if self.span_events {
            let name = n.evaluation_event.bind(py);
            for check in checks {
                events.append(self.helpers.event_item.make(
                    py,
                    [
                        name.clone().into_any(),
                        end.clone(),
                        check.shared.get_item(1)?,
                    ],
                )?)?;
            }
        }
        let failed = !outcome.cast::<PyString>().is_ok_and(|s| s == "pass");
        let duration = verdict
            .getattr(intern!(py, "duration_ns"))?
            .extract::<i128>()?
            .max(0);
        let name = format!(
            "{} {}",
            n.grade_span_prefix,
            str_text(&read.contract_id.str()?)?
        );
        let (status_code, status_message) = if failed {
            (
                STATUS_ERROR,
                PyString::new(py, &status_text(&outcome, &numbers)?).into_any(),
            )
        } else {
            (STATUS_UNSET, py.None().into_bound(py))
        };
        let parent_id = match parent_id {
            Some(id) => id.into_pyobject(py)?.into_any(),
            None => py.None().into_bound(py),
        };
        self.helpers.span_item.make(
            py,
            [
                trace_id,
                span_id.into_pyobject(py)?.into_any(),
                parent_id,
                PyString::new(py, &name).into_any(),
                (i128::from(now) - duration).into_pyobject(py)?.into_any(),
                end,
                contract,
                attrs.into_any(),
                events.into_any(),
                status_code.into_pyobject(py)?.into_any(),
                status_message,
            ],
        )
    }

    /// `trace` is the verdict's trace id (`trace_value`) as an int, when usable.
    fn log_records<'py>(
        &self,
        read: &Read<'py>,
        trace: Option<&Bound<'py, PyAny>>,
        now: u64,
        checks: &[Check<'py>],
        logs: &Bound<'py, PyList>,
    ) -> PyResult<()> {
        let py = logs.py();
        let event = self.names.evaluation_event.bind(py).clone().into_any();
        let now = now.into_pyobject(py)?.into_any();
        let zero = 0u8.into_pyobject(py)?.into_any();
        // The records of one verdict point at a few spans: each pair of ids made once.
        let mut made: Vec<(Option<&str>, Bound<'py, PyAny>, Bound<'py, PyAny>)> = Vec::new();
        for check in checks {
            let span_id = check.pointed.as_deref().or(read.root_span_id.as_deref());
            let at = match made.iter().position(|(s, _, _)| *s == span_id) {
                Some(at) => at,
                None => {
                    let pair = match (trace, span_value(span_id)) {
                        (Some(t), Some(s)) => (t.clone(), s.into_pyobject(py)?.into_any()),
                        _ => (zero.clone(), zero.clone()),
                    };
                    made.push((span_id, pair.0, pair.1));
                    made.len() - 1
                }
            };
            let (_, trace, span) = &made[at];
            let shared = &check.shared;
            let extra = match &check.extra {
                Some(own) => own.clone().into_any(),
                None => py.None().into_bound(py),
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
