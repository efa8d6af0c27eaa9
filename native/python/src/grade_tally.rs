//! The grader's verdict metrics counted in the core (`otel_oracles.emit._metrics.Tally`):
//! traces per verdict, the four failure counts, results per (check, oracle type, outcome)
//! and the grading durations' histogram, per set of labels (contract, agent, provider,
//! model, service version).
//!
//! Why here: the emitter counted each verdict in Python (a dict key a result) and recorded
//! each verdict's duration through the SDK's `Histogram.record` (its attribute dict hashed,
//! its lock, its bucket search, a measurement object), the largest part of emission after
//! the records (docs/performance-history.md). A run of verdicts is counted here in one call;
//! what leaves is plain data per label set (`state`), which the Python side adds to its
//! metric series once per set, and which `serve`'s workers pickle to the receiving process.
//! The labels of a verdict are `labels(verdict, trajectory)`'s, asked once per run of
//! verdicts of one trajectory, contract and agent name: the emitter passes `VerdictLabels`,
//! the label rules in the core (below), which the tally asks without a Python call. The
//! emitter's records' builder (`VerdictRecords.build`, `emit_records.rs`) counts each verdict
//! it builds (`GradeTally::count`) from the fields, results and labels it read for the
//! records: a second pass read them all again and applied the label rules twice.

use otel_oracles_core::hashing::{FastMap, FastMapExt};

use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PySlice, PyString, PyTuple};

use crate::pydict::StepFields;

/// A histogram of grading seconds with explicit bounds, as the SDK's explicit-bucket
/// aggregation keeps one: a value goes to the first bucket whose bound is not below it.
#[derive(Clone)]
struct Durations {
    buckets: Vec<u64>,
    sum: f64,
    min: f64,
    max: f64,
}

impl Durations {
    fn new(bounds: usize) -> Self {
        Durations {
            buckets: vec![0; bounds + 1],
            sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
        }
    }

    fn record(&mut self, bounds: &[f64], seconds: f64) {
        self.buckets[bounds.partition_point(|b| *b < seconds)] += 1;
        self.sum += seconds;
        self.min = self.min.min(seconds);
        self.max = self.max.max(seconds);
    }
}

/// A (check name, oracle type, outcome) and its count.
type Counted = (Py<PyAny>, Py<PyAny>, Py<PyAny>, u64);

/// What is counted under one set of labels.
struct Group {
    labels: Py<PyAny>,
    /// Traces per verdict (`pass`, `fail`, `error`), in first-seen order.
    verdicts: Vec<(Py<PyString>, u64)>,
    /// Invariant failures, tolerated failures, budgets exhausted, missing evidence.
    counts: [u64; 4],
    /// (check name, oracle type, outcome) by its length-prefixed UTF-8 bytes -> its place
    /// in `results`.
    result_index: FastMap<Vec<u8>, usize>,
    results: Vec<Counted>,
    durations: Durations,
}

impl Group {
    fn new(labels: Py<PyAny>, bounds: usize) -> Self {
        Group {
            labels,
            verdicts: Vec::new(),
            counts: [0; 4],
            result_index: FastMap::new(),
            results: Vec::new(),
            durations: Durations::new(bounds),
        }
    }

    fn add_verdict(&mut self, verdict: &Bound<'_, PyString>, count: u64) -> PyResult<()> {
        for (known, n) in &mut self.verdicts {
            if PyAnyMethods::eq(known.bind(verdict.py()).as_any(), verdict)? {
                *n += count;
                return Ok(());
            }
        }
        self.verdicts.push((verdict.clone().unbind(), count));
        Ok(())
    }

    /// Counts `count` results of `key` (see `result_index`), the strings made only for a
    /// key not seen before.
    fn add_result<'py>(
        &mut self,
        key: &[u8],
        count: u64,
        parts: impl FnOnce() -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>)>,
    ) -> PyResult<()> {
        if let Some(&at) = self.result_index.get(key) {
            self.results[at].3 += count;
            return Ok(());
        }
        let (name, oracle_type, outcome) = parts()?;
        self.result_index.insert(key.to_vec(), self.results.len());
        self.results
            .push((name.unbind(), oracle_type.unbind(), outcome.unbind(), count));
        Ok(())
    }
}

/// Appends `text`'s bytes to `key`, after their length (so no two triples share a key): its
/// UTF-8, or for a `str` holding a lone surrogate (which has none) the `surrogatepass`
/// encoding, which is the UTF-8 of every other `str`, so each `str` has its own bytes.
fn key_part(key: &mut Vec<u8>, text: &Bound<'_, PyAny>, what: &str) -> PyResult<()> {
    let text = text
        .cast::<PyString>()
        .map_err(|_| PyValueError::new_err(format!("{what}: expected a str")))?;
    let passed;
    let bytes = match text.to_str() {
        Ok(s) => s.as_bytes(),
        Err(_) => {
            let py = text.py();
            passed = text
                .call_method1(intern!(py, "encode"), ("utf-8", "surrogatepass"))?
                .cast_into::<PyBytes>()?;
            passed.as_bytes()
        }
    };
    key.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    key.extend_from_slice(bytes);
    Ok(())
}

/// The last run's identity: the trajectory, contract id, contract version and verdict agent
/// name objects (held, so their addresses are not reused) and the group they map to.
struct Last {
    objects: [Py<PyAny>; 4],
    group: usize,
}

/// Counts of verdicts per label set (see the module's text). Not thread-safe: one per batch,
/// on one thread, as `Tally` is.
#[pyclass(module = "otel_oracles._native", name = "GradeTally")]
pub(crate) struct GradeTally {
    /// `labels(verdict, trajectory) -> tuple of (key, value)`.
    labels: Py<PyAny>,
    /// `labels` when it is the core's `VerdictLabels`, asked directly.
    rules: Option<Py<VerdictLabels>>,
    bounds: Vec<f64>,
    /// Labels tuple -> index in `groups`.
    index: Py<PyDict>,
    groups: Vec<Group>,
    last: Option<Last>,
    key: Vec<u8>,
}

#[pymethods]
impl GradeTally {
    #[new]
    fn new(py: Python<'_>, labels: Py<PyAny>, bounds: Vec<f64>) -> PyResult<Self> {
        if bounds.windows(2).any(|w| w[0] >= w[1]) || bounds.iter().any(|b| !b.is_finite()) {
            return Err(PyValueError::new_err(
                "GradeTally: bounds must be finite and strictly increasing",
            ));
        }
        let rules = labels
            .bind(py)
            .cast::<VerdictLabels>()
            .ok()
            .map(|r| r.clone().unbind());
        Ok(GradeTally {
            labels,
            rules,
            bounds,
            index: PyDict::new(py).unbind(),
            groups: Vec::new(),
            last: None,
            key: Vec::new(),
        })
    }

    /// The histogram's bucket bounds (seconds).
    #[getter]
    fn bounds(&self) -> Vec<f64> {
        self.bounds.clone()
    }

    fn __len__(&self) -> usize {
        self.groups.len()
    }

    /// Counts every `(verdict, trajectory)` pair of `pairs` (a list).
    fn add(&mut self, pairs: &Bound<'_, PyList>) -> PyResult<()> {
        for pair in pairs.iter() {
            let (verdict, trajectory) = pair.extract::<(Bound<'_, PyAny>, Bound<'_, PyAny>)>()?;
            self.add_one(&verdict, &trajectory)?;
        }
        Ok(())
    }

    /// The counts as plain data, one tuple per label set in first-seen order: `(labels,
    /// {verdict: traces}, [invariant, tolerated, exhausted, missing], {(check, oracle type,
    /// outcome): results}, (bucket counts, sum, min, max))`.
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for g in &self.groups {
            let verdicts = PyDict::new(py);
            for (verdict, n) in &g.verdicts {
                verdicts.set_item(verdict.bind(py), n)?;
            }
            let results = PyDict::new(py);
            for (name, oracle_type, outcome, n) in &g.results {
                results.set_item(
                    PyTuple::new(py, [name.bind(py), oracle_type.bind(py), outcome.bind(py)])?,
                    n,
                )?;
            }
            let d = &g.durations;
            let durations = (PyList::new(py, &d.buckets)?, d.sum, d.min, d.max);
            out.append((
                g.labels.bind(py),
                verdicts,
                PyList::new(py, g.counts)?,
                results,
                durations,
            ))?;
        }
        Ok(out)
    }

    /// Adds a `state` made elsewhere (another tally, another process) with the same bounds.
    fn merge(&mut self, state: &Bound<'_, PyAny>) -> PyResult<()> {
        for group in state.try_iter()? {
            let group = group?;
            let (labels, verdicts, counts, results, durations) = group.extract::<(
                Bound<'_, PyAny>,
                Bound<'_, PyDict>,
                [u64; 4],
                Bound<'_, PyDict>,
                (Vec<u64>, f64, f64, f64),
            )>()?;
            if durations.0.len() != self.bounds.len() + 1 {
                return Err(PyValueError::new_err(
                    "GradeTally.merge: the durations were counted with other bounds",
                ));
            }
            let at = self.group_of(&labels)?;
            let mut key = std::mem::take(&mut self.key);
            let g = &mut self.groups[at];
            for (verdict, n) in verdicts.iter() {
                let verdict = verdict
                    .cast_into::<PyString>()
                    .map_err(|_| PyValueError::new_err("GradeTally.merge: a verdict not a str"))?;
                g.add_verdict(&verdict, n.extract()?)?;
            }
            for (total, n) in g.counts.iter_mut().zip(counts) {
                *total += n;
            }
            for (triple, n) in results.iter() {
                let (name, oracle_type, outcome) =
                    triple.extract::<(Bound<'_, PyAny>, Bound<'_, PyAny>, Bound<'_, PyAny>)>()?;
                key.clear();
                key_part(&mut key, &name, "check name")?;
                key_part(&mut key, &oracle_type, "oracle type")?;
                key_part(&mut key, &outcome, "outcome")?;
                g.add_result(&key, n.extract()?, || Ok((name, oracle_type, outcome)))?;
            }
            let (buckets, sum, min, max) = durations;
            let d = &mut g.durations;
            for (total, n) in d.buckets.iter_mut().zip(buckets) {
                *total += n;
            }
            d.sum += sum;
            d.min = d.min.min(min);
            d.max = d.max.max(max);
            self.key = key;
        }
        Ok(())
    }

    /// `state`, then counts anew.
    fn take<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = self.state(py)?;
        self.groups.clear();
        self.index.bind(py).clear();
        self.last = None;
        Ok(out)
    }
}

impl GradeTally {
    /// The group of `labels` (made when new).
    fn group_of(&mut self, labels: &Bound<'_, PyAny>) -> PyResult<usize> {
        let index = self.index.bind(labels.py());
        if let Some(at) = index.get_item(labels)? {
            return at.extract();
        }
        let at = self.groups.len();
        index.set_item(labels, at)?;
        self.groups
            .push(Group::new(labels.clone().unbind(), self.bounds.len()));
        Ok(at)
    }

    fn add_one(
        &mut self,
        verdict: &Bound<'_, PyAny>,
        trajectory: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let py = verdict.py();
        let f = StepFields::new(verdict.clone());
        let counts = StepFields::new(f.get(intern!(py, "counts"))?);
        let [invariant, tolerated, exhausted, missing] = count_fields(py);
        let read = Tallied {
            verdict,
            trajectory,
            contract_id: &f.get(intern!(py, "contract_id"))?,
            contract_version: &f.get(intern!(py, "contract_version"))?,
            agent: &f.get(intern!(py, "agent_name"))?,
            outcome: &f.get(intern!(py, "verdict"))?,
            counts: [
                &counts.get(invariant)?,
                &counts.get(tolerated)?,
                &counts.get(exhausted)?,
                &counts.get(missing)?,
            ],
            duration_ns: &f.get(intern!(py, "duration_ns"))?,
        };
        let results = f.get(intern!(py, "results"))?;
        let results = results
            .cast::<PyList>()
            .map_err(|_| PyValueError::new_err("Verdict.results: expected a list"))?;
        self.count(
            &read,
            None,
            results.iter().map(|result| {
                let r = StepFields::new(result);
                Ok((
                    r.get(intern!(py, "name"))?,
                    r.get(intern!(py, "oracle_type"))?,
                    r.get(intern!(py, "outcome"))?,
                ))
            }),
        )
    }

    /// Whether the labels are `rules`' (so a caller that applied them may hand over what
    /// they gave: `count`'s `known`).
    pub(crate) fn asks(&self, rules: &Py<VerdictLabels>) -> bool {
        self.rules.as_ref().is_some_and(|own| own.is(rules))
    }

    /// Counts one verdict of fields `v` and results `results` (each a check name, oracle
    /// type and outcome). `known`: the agent label and the (provider, model) labels, when
    /// the caller applied the tally's own rules already (`asks`: the records' builder, for
    /// the grade span), so only the service version is read for a new run's labels.
    pub(crate) fn count<'py>(
        &mut self,
        v: &Tallied<'_, 'py>,
        known: Option<(&Option<Bound<'py, PyAny>>, &Generation<'py>)>,
        results: impl Iterator<Item = PyResult<ResultKey<'py>>>,
    ) -> PyResult<()> {
        let py = v.verdict.py();
        let same = self.last.as_ref().is_some_and(|last| {
            last.objects[0].bind(py).is(v.trajectory)
                && last.objects[1].bind(py).is(v.contract_id)
                && last.objects[2].bind(py).is(v.contract_version)
                && last.objects[3].bind(py).is(v.agent)
        });
        let cached = if same {
            self.last.as_ref().map(|last| last.group)
        } else {
            None
        };
        let at = match cached {
            Some(group) => group,
            None => {
                let labels = match (&self.rules, known) {
                    (Some(rules), Some((agent, (provider, model)))) => rules
                        .get()
                        .labels_of(
                            v.contract_id,
                            v.contract_version,
                            [agent.clone(), provider.clone(), model.clone()],
                            v.trajectory,
                        )?
                        .into_any(),
                    (Some(rules), None) => {
                        let rules = rules.get();
                        let agent = rules.agent_of(v.agent, v.trajectory)?;
                        let (provider, model) = rules.generation(v.trajectory)?;
                        rules
                            .labels_of(
                                v.contract_id,
                                v.contract_version,
                                [agent, provider, model],
                                v.trajectory,
                            )?
                            .into_any()
                    }
                    (None, _) => self.labels.bind(py).call1((v.verdict, v.trajectory))?,
                };
                let group = self.group_of(&labels)?;
                self.last = Some(Last {
                    objects: [
                        v.trajectory.clone().unbind(),
                        v.contract_id.clone().unbind(),
                        v.contract_version.clone().unbind(),
                        v.agent.clone().unbind(),
                    ],
                    group,
                });
                group
            }
        };
        let outcome = v
            .outcome
            .cast::<PyString>()
            .map_err(|_| PyValueError::new_err("Verdict.verdict: expected a str"))?;
        let mut counted = [0u64; 4];
        for (n, value) in counted.iter_mut().zip(v.counts) {
            *n = value.extract()?;
        }
        let duration_ns = v.duration_ns.extract::<i64>()?;
        let mut key = std::mem::take(&mut self.key);
        let bounds = &self.bounds;
        let g = &mut self.groups[at];
        g.add_verdict(outcome, 1)?;
        for (total, n) in g.counts.iter_mut().zip(counted) {
            *total += n;
        }
        // The seconds as Python's `duration_ns / 1e9` makes them (a true division).
        g.durations.record(bounds, duration_ns as f64 / 1e9);
        for triple in results {
            let (name, oracle_type, outcome) = triple?;
            key.clear();
            key_part(&mut key, &name, "OracleResult.name")?;
            key_part(&mut key, &oracle_type, "OracleResult.oracle_type")?;
            key_part(&mut key, &outcome, "OracleResult.outcome")?;
            g.add_result(&key, 1, || {
                // The outcome's plain string (an `Outcome` is a `StrEnum`), as an attribute.
                let value = outcome.getattr(intern!(py, "_value_"))?;
                Ok((name, oracle_type, value))
            })?;
        }
        self.key = key;
        Ok(())
    }
}

/// A result's check name, oracle type and outcome, as the tally counts it.
pub(crate) type ResultKey<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>);

/// A trajectory's provider and model labels (`VerdictLabels::generation`).
pub(crate) type Generation<'py> = (Option<Bound<'py, PyAny>>, Option<Bound<'py, PyAny>>);

/// A verdict's `counts` fields the tally counts, in the order of `Tally`'s counts. Each name
/// interned once (`intern!`): a fresh `str` interned per name and verdict was ~0.4 k
/// instructions a verdict.
pub(crate) fn count_fields(py: Python<'_>) -> [&Bound<'_, PyString>; 4] {
    [
        intern!(py, "invariant_failures"),
        intern!(py, "tolerated_failures"),
        intern!(py, "budget_exhausted"),
        intern!(py, "missing_evidence"),
    ]
}

/// A verdict's fields the tally counts (`GradeTally::count`): read by `add`, or handed over
/// by the records' builder (`VerdictRecords.build`), which read them for the grade span.
pub(crate) struct Tallied<'a, 'py> {
    pub(crate) verdict: &'a Bound<'py, PyAny>,
    pub(crate) trajectory: &'a Bound<'py, PyAny>,
    pub(crate) contract_id: &'a Bound<'py, PyAny>,
    pub(crate) contract_version: &'a Bound<'py, PyAny>,
    /// The verdict's own `agent_name`.
    pub(crate) agent: &'a Bound<'py, PyAny>,
    /// `Verdict.verdict` (`pass`, `fail`, `error`).
    pub(crate) outcome: &'a Bound<'py, PyAny>,
    /// The `count_fields` of `Verdict.counts`.
    pub(crate) counts: [&'a Bound<'py, PyAny>; 4],
    pub(crate) duration_ns: &'a Bound<'py, PyAny>,
}

/// The label rules of the verdict metrics and the grade span, in the core
/// (`otel_oracles.emit._metrics`: `trace_label`, `agent_label`, `generation_labels` and the
/// tally's labels are this object's methods).
///
/// Why here: the emitter asked Python for them twice a verdict, the grade span's agent
/// and generation labels (`VerdictRecords`) and the tally's whole label set (`GradeTally`),
/// ~17 k instructions a verdict of interpreter steps for a few attribute reads; read here
/// they cost a few hundred. The rules: a value taken from a trace is a label when it is a
/// non-empty `str`, cut to `max_chars` characters (the last one an ellipsis) when longer;
/// the agent is the verdict's agent name, else the trajectory's; the provider and the model
/// are the first of the trajectory's generation steps (`kind` equal to `generation`) to name
/// each, in step order; the service version is the trajectory's resource's
/// `service.version`.
#[pyclass(module = "otel_oracles._native", name = "VerdictLabels", frozen)]
pub(crate) struct VerdictLabels {
    /// Contract id, contract version, agent name, provider, model, service version: the
    /// label keys, in the order a label set holds them.
    keys: [Py<PyString>; 6],
    /// The generation step kind (`model.step.GENERATION`).
    generation: Py<PyAny>,
    max_chars: usize,
}

#[pymethods]
impl VerdictLabels {
    #[new]
    fn new(names: &Bound<'_, PyAny>, generation: Py<PyAny>, max_chars: usize) -> PyResult<Self> {
        if max_chars == 0 {
            return Err(PyValueError::new_err(
                "VerdictLabels: max_chars must be >= 1",
            ));
        }
        let get = |name: &str| -> PyResult<Py<PyString>> {
            Ok(names.getattr(name)?.cast_into::<PyString>()?.unbind())
        };
        Ok(VerdictLabels {
            keys: [
                get("CONTRACT_ID")?,
                get("CONTRACT_VERSION")?,
                get("AGENT_NAME")?,
                get("PROVIDER_NAME")?,
                get("REQUEST_MODEL")?,
                get("SUBJECT_SERVICE_VERSION")?,
            ],
            generation,
            max_chars,
        })
    }

    /// The verdict's labels: contract id and version, then the agent, provider, model and
    /// service version each when it has one.
    fn __call__<'py>(
        &self,
        verdict: &Bound<'py, PyAny>,
        trajectory: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let py = verdict.py();
        let f = StepFields::new(verdict.clone());
        let contract_id = f.get(intern!(py, "contract_id"))?;
        let contract_version = f.get(intern!(py, "contract_version"))?;
        self.labels(&f, trajectory, &contract_id, &contract_version)
    }

    /// `value` as a label, or None.
    fn label<'py>(&self, value: Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
        if !value.is_instance_of::<PyString>() || !value.is_truthy()? {
            return Ok(None);
        }
        if value.len()? <= self.max_chars {
            return Ok(Some(value));
        }
        let py = value.py();
        let head = value.get_item(PySlice::new(py, 0, self.max_chars as isize - 1, 1))?;
        Ok(Some(head.add("\u{2026}")?))
    }

    /// The agent's label: the verdict's agent name, else the trajectory's (None or not).
    pub(crate) fn agent<'py>(
        &self,
        verdict: &Bound<'py, PyAny>,
        trajectory: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = verdict.py();
        self.agent_of(
            &StepFields::new(verdict.clone()).get(intern!(py, "agent_name"))?,
            trajectory,
        )
    }

    /// The labels of the provider and the model of the trajectory's (None or not) first
    /// generations that name them.
    #[allow(clippy::type_complexity)]
    pub(crate) fn generation<'py>(
        &self,
        trajectory: &Bound<'py, PyAny>,
    ) -> PyResult<(Option<Bound<'py, PyAny>>, Option<Bound<'py, PyAny>>)> {
        if trajectory.is_none() {
            return Ok((None, None));
        }
        let py = trajectory.py();
        let steps = StepFields::new(trajectory.clone()).get(intern!(py, "steps"))?;
        let generation = self.generation.bind(py);
        let (mut provider, mut model): (Option<Bound<'py, PyAny>>, Option<Bound<'py, PyAny>>) =
            (None, None);
        let truthy = |v: &Option<Bound<'py, PyAny>>| -> PyResult<bool> {
            v.as_ref().map_or(Ok(false), |v| v.is_truthy())
        };
        for step in steps.try_iter()? {
            let step = StepFields::new(step?);
            let kind = step.get(intern!(py, "kind"))?;
            if !kind.is(generation) && kind.ne(generation)? {
                continue;
            }
            if !truthy(&provider)? {
                provider = Some(step.get(intern!(py, "provider"))?);
            }
            if !truthy(&model)? {
                model = Some(step.get(intern!(py, "model"))?);
            }
            if truthy(&provider)? && truthy(&model)? {
                break;
            }
        }
        let label = |v: Option<Bound<'py, PyAny>>| v.map_or(Ok(None), |v| self.label(v));
        Ok((label(provider)?, label(model)?))
    }
}

impl VerdictLabels {
    /// `agent` with the verdict's agent name read.
    pub(crate) fn agent_of<'py>(
        &self,
        own: &Bound<'py, PyAny>,
        trajectory: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        if own.is_truthy()? {
            return self.label(own.clone());
        }
        if !trajectory.is_truthy()? {
            return Ok(None);
        }
        let py = own.py();
        self.label(StepFields::new(trajectory.clone()).get(intern!(py, "agent_name"))?)
    }

    /// The graded service's version label: a deploy starts new series, so a rise in
    /// missing evidence (or failures) after it shows per version.
    fn version<'py>(&self, trajectory: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
        if !trajectory.is_truthy()? {
            return Ok(None);
        }
        let py = trajectory.py();
        let resource = StepFields::new(trajectory.clone()).get(intern!(py, "resource"))?;
        let key = intern!(py, "service.version");
        let value = match resource.cast::<PyDict>() {
            Ok(d) if d.is_exact_instance_of::<PyDict>() => d.get_item(key)?,
            _ => Some(resource.call_method1(intern!(py, "get"), (key,))?),
        };
        value.map_or(Ok(None), |v| self.label(v))
    }

    /// `__call__` with the verdict's fields (`f`) and its contract id and version read.
    pub(crate) fn labels<'py>(
        &self,
        f: &StepFields<'py>,
        trajectory: &Bound<'py, PyAny>,
        contract_id: &Bound<'py, PyAny>,
        contract_version: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let py = trajectory.py();
        let agent = self.agent_of(&f.get(intern!(py, "agent_name"))?, trajectory)?;
        let (provider, model) = self.generation(trajectory)?;
        self.labels_of(
            contract_id,
            contract_version,
            [agent, provider, model],
            trajectory,
        )
    }

    /// The label set of a verdict whose agent, provider and model labels are `found`: the
    /// service version read from `trajectory`.
    pub(crate) fn labels_of<'py>(
        &self,
        contract_id: &Bound<'py, PyAny>,
        contract_version: &Bound<'py, PyAny>,
        found: [Option<Bound<'py, PyAny>>; 3],
        trajectory: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let py = trajectory.py();
        let [agent, provider, model] = found;
        let version = self.version(trajectory)?;
        let k = &self.keys;
        let mut found: Vec<Bound<'py, PyTuple>> = vec![
            PyTuple::new(py, [k[0].bind(py).as_any(), contract_id])?,
            PyTuple::new(py, [k[1].bind(py).as_any(), contract_version])?,
        ];
        for (key, value) in k[2..].iter().zip([agent, provider, model, version]) {
            if let Some(value) = value {
                found.push(PyTuple::new(py, [key.bind(py).as_any(), &value])?);
            }
        }
        PyTuple::new(py, found)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<GradeTally>()?;
    m.add_class::<VerdictLabels>()?;
    Ok(())
}
