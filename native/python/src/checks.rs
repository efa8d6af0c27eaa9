//! The evaluator's loop over a contract's checks (`otel_oracles.grade.evaluator`): each
//! check's finding made its `OracleResult`, one core call per contract and trajectory.
//!
//! A check's own work (its `check` method, the evidence it lacks, the gaps its result is
//! held against) stays Python; what the evaluator adds around it per check (the finding's
//! outcome and whether it lets the trace pass, the type test that lets the result skip
//! validation, the result itself) used to be ~a third of a check's cost in interpreted
//! code. The semantics are `run_compiled`'s as it was in Python, operation for operation:
//!
//! 1. a check whose oracle could not be built reports that (`fails_with`);
//! 2. unless the contract's evidence is known to be all there (`clear`), the evaluator's
//!    `gapped` decides whether the check lacks any (or the trace is incomplete): its
//!    `missing` finding;
//! 3. else a check that runs commands asks the policy (`refuse_commands`), and the oracle's
//!    `check` runs;
//! 4. unless the trajectory is known to have no gap (`gapless`), a finding that rests on
//!    something unseen, or a pass of a check that needs full coverage, goes through
//!    `fail_closed`;
//! 5. the outcome is the layer/finding table; anything raised in 2-5 is the check's `error`
//!    (`fails_with`), except `KeyboardInterrupt` and the lazy replay's own failure. A
//!    plug-in's finding (`CompiledCheck.foreign`) whose `details` nest deeper than
//!    `MAX_DETAILS_DEPTH` counts as raised there: no report could write it (a plug-in's bug,
//!    refused at the boundary it crosses rather than as a traceback from whichever writer
//!    meets it first). The built-ins' details are shallow by construction and not walked.
//!    Likewise a check's finding that validation refuses when its result is built (a
//!    plug-in's `details=None`, a message that is no `str`) is that check's `error`
//!    (`unwritable`), never the whole verdict's.
//!
//! The result is built without validation when every value is of its field's exact type
//! (`plain_finding`; the model's instance state filled as pydantic's `__setstate__` fills
//! it, which `otel_oracles.model.result` verifies at import), else validated.

use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyDict, PyFrozenSet, PyInt, PyList, PyMapping, PySet, PyString, PyTuple, PyType,
};

use crate::check_plans::CheckPlan;
use crate::draft::equals;
use crate::pydict::StepFields;
use crate::slots::{blank, object_new, SlotLayout};

/// How deeply a finding's `details` may nest, counting `details` itself as level 1 and each
/// `dict`, `list`, `tuple`, `set` or `frozenset` inside as one more. Above every built-in
/// check's need (a tool argument the content parsers accept nests at most 128 levels, and a
/// check puts one a few levels down), below what the report's writers can dump: pydantic's
/// serializer stops at 255 levels (the JSON report, `--explain full`) and `json.dumps` at
/// the interpreter's recursion limit (the HTML report).
pub const MAX_DETAILS_DEPTH: usize = 200;

/// Whether `value` (at `depth`, 1 for the details themselves) nests containers deeper than
/// `MAX_DETAILS_DEPTH`. Bounded by the limit, so a container holding itself ends the walk
/// (refused, as no writer could dump it either). Only values are walked: a key is hashable,
/// so it is a scalar or a tuple, which pydantic writes as text.
fn nests_too_deep(value: &Bound<'_, PyAny>, depth: usize) -> PyResult<bool> {
    if depth > MAX_DETAILS_DEPTH {
        return Ok(true);
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        for (_, item) in dict.iter() {
            if nests_too_deep(&item, depth + 1)? {
                return Ok(true);
            }
        }
    } else if let Ok(list) = value.cast::<PyList>() {
        for item in list.iter() {
            if nests_too_deep(&item, depth + 1)? {
                return Ok(true);
            }
        }
    } else if value.is_instance_of::<PyTuple>()
        || value.is_instance_of::<PySet>()
        || value.is_instance_of::<PyFrozenSet>()
    {
        for item in value.try_iter()? {
            if nests_too_deep(&item?, depth + 1)? {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// The outcomes a check's finding may have (`error` is `fails_with`'s), in `Outcome`'s
/// order: `PASS`, `TOLERATED`, `INVARIANT_FAILURE`, `BUDGET_EXHAUSTED`, `MISSING_EVIDENCE`.
struct Outcomes {
    pass: Py<PyAny>,
    tolerated: Py<PyAny>,
    invariant_failure: Py<PyAny>,
    budget_exhausted: Py<PyAny>,
    missing_evidence: Py<PyAny>,
}

/// What the evaluator runs each contract's checks with: the result model and how to build
/// it, the outcomes, and the evaluator's Python helpers for the paths off the usual one.
#[pyclass(module = "otel_oracles._native", name = "CheckRunner", frozen)]
pub struct CheckRunner {
    /// How an `OracleResult` is built (`model.result.RESULTS`), its fields in
    /// `RESULT_FIELDS`' order.
    results: Py<ModelFill>,
    outcomes: Outcomes,
    /// `_fails_with(exc) -> (finding, outcome, error_details)`.
    fails_with: Py<PyAny>,
    /// `_unwritable(exc) -> (finding, outcome, error_details)`: a check's own finding that no
    /// result could be built of.
    unwritable: Py<PyAny>,
    /// `_gapped(check, ctx) -> Finding | None`.
    gapped: Py<PyAny>,
    /// `_refuse_commands(ctx)`: raises when the policy runs no commands.
    refuse_commands: Py<PyAny>,
    /// `_fail_closed(finding, oracle, ctx) -> Finding`.
    fail_closed: Py<PyAny>,
    /// Where `Finding`'s fields sit in its instances (`FINDING_FIELDS`), when its class
    /// lets them be read there: each check's finding is read eight times.
    finding: Option<SlotLayout>,
    /// Where a `CompiledCheck` holds its `head`, when its class lets it be read there (a
    /// `Frozen` record's slot, set once when the check is compiled): read once a result.
    head: Option<SlotLayout>,
    /// The verdict's epilogue (`model.result.VERDICTS`): the tally and the verdict built.
    verdicts: Py<Verdicts>,
    /// `trace_complete(contract, trajectory) -> [OracleResult]`: asked only of a trajectory
    /// with orphan spans (it adds no result to any other).
    complete: Py<PyAny>,
    /// `time.perf_counter_ns`, the clock `grade` starts each verdict's duration by.
    clock: Py<PyAny>,
    /// The compiled contracts' `VerdictHead`s, by the first verdict of each.
    heads: Mutex<Vec<VerdictHead>>,
}

/// `Finding`'s fields in the order `CheckRunner::finding` reads them (its slot numbers):
/// its declaration order, which is also its `__slots__`' order that `SlotClass` fills
/// positionally (`check_plans`).
pub(crate) const FINDING_FIELDS: [&str; 8] = [
    "status",
    "message",
    "details",
    "span_ids",
    "step_indexes",
    "used",
    "breach",
    "unseen",
];
const STATUS: usize = 0;
const MESSAGE: usize = 1;
const DETAILS: usize = 2;
const SPAN_IDS: usize = 3;
const STEP_INDEXES: usize = 4;
const USED: usize = 5;
const BREACH: usize = 6;
const UNSEEN: usize = 7;

/// `OracleResult`'s fields in the order `CheckRunner::result` sets them (the model's own
/// order, which validation leaves them in and the report's writer reads them in).
const RESULT_FIELDS: [&str; 16] = [
    "oracle_type",
    "name",
    "layer",
    "outcome",
    "passed",
    "message",
    "details",
    "params",
    "span_ids",
    "step_indexes",
    "used",
    "budget",
    "why",
    "contract_id",
    "contract_version",
    "duration_ns",
];
const ORACLE_TYPE: usize = 0;
const NAME: usize = 1;
const LAYER: usize = 2;
const OUTCOME: usize = 3;
const PASSED: usize = 4;
const RESULT_MESSAGE: usize = 5;
const RESULT_DETAILS: usize = 6;
const PARAMS: usize = 7;
const RESULT_SPAN_IDS: usize = 8;
const RESULT_STEP_INDEXES: usize = 9;
const RESULT_USED: usize = 10;
const BUDGET: usize = 11;
const WHY: usize = 12;
const CONTRACT_ID: usize = 13;
const CONTRACT_VERSION: usize = 14;
const DURATION_NS: usize = 15;

/// What a contract gives each of its results, read once per `run` (the contract is a
/// frozen pydantic model: each attribute read goes through its `__getattr__` hook).
struct ContractFields<'py> {
    contract: Bound<'py, PyAny>,
    id: Bound<'py, PyAny>,
    version: Bound<'py, PyAny>,
    /// Whether `id` is exactly a `str` and `version` exactly an `int` (a contract built by
    /// `model_construct` may hold anything: its results are then validated).
    plain: bool,
    /// The context's `evidence`, what the checks' plans ask (`CheckPlan::run`).
    evidence: Bound<'py, PyAny>,
}

/// A result made and, when it was filled unvalidated, the `passed` and outcome it holds
/// as they were put in (the tally counts them without reading the result again).
type Made<'py> = (Bound<'py, PyAny>, Option<(bool, Bound<'py, PyAny>)>);

/// A check's finding, its outcome and the details an error adds.
type Judged<'py> = (
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Option<Bound<'py, PyAny>>,
);

#[pymethods]
impl CheckRunner {
    #[new]
    #[allow(clippy::too_many_arguments)]
    fn new(
        results: Bound<'_, ModelFill>,
        outcomes: Bound<'_, PyTuple>,
        fails_with: Bound<'_, PyAny>,
        unwritable: Bound<'_, PyAny>,
        gapped: Bound<'_, PyAny>,
        refuse_commands: Bound<'_, PyAny>,
        fail_closed: Bound<'_, PyAny>,
        finding: Bound<'_, PyType>,
        compiled_check: Bound<'_, PyType>,
        verdicts: Bound<'_, Verdicts>,
        complete: Bound<'_, PyAny>,
        clock: Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let outcome = |i: usize| outcomes.get_item(i).map(Bound::unbind);
        let py = results.py();
        results.get().expect_fields(py, &RESULT_FIELDS)?;
        let names = FINDING_FIELDS.map(|name| PyString::intern(py, name));
        let finding = SlotLayout::probe(&finding, &names, object_new()?)?;
        let head = [intern!(py, "head").clone()];
        let head = SlotLayout::probe(&compiled_check, &head, object_new()?)?;
        Ok(Self {
            results: results.unbind(),
            outcomes: Outcomes {
                pass: outcome(0)?,
                tolerated: outcome(1)?,
                invariant_failure: outcome(2)?,
                budget_exhausted: outcome(3)?,
                missing_evidence: outcome(4)?,
            },
            fails_with: fails_with.unbind(),
            unwritable: unwritable.unbind(),
            gapped: gapped.unbind(),
            refuse_commands: refuse_commands.unbind(),
            fail_closed: fail_closed.unbind(),
            finding,
            head,
            verdicts: verdicts.unbind(),
            complete: complete.unbind(),
            clock: clock.unbind(),
            heads: Mutex::new(Vec::new()),
        })
    }

    /// One result per check of `checks` (`CompiledCheck`s of `ctx.contract`), in order, and
    /// their tally, counted as they are made (`verdict` counts only what is added after).
    fn run<'py>(
        &self,
        checks: &Bound<'py, PyAny>,
        ctx: &Bound<'py, PyAny>,
        clear: bool,
        gapless: bool,
    ) -> PyResult<(Bound<'py, PyList>, Tally)> {
        let py = ctx.py();
        let contract = ctx.getattr(intern!(py, "contract"))?;
        let id = contract.getattr(intern!(py, "id"))?;
        let version = contract.getattr(intern!(py, "version"))?;
        let plain =
            id.is_exact_instance_of::<PyString>() && version.is_exact_instance_of::<PyInt>();
        let contract = ContractFields {
            contract,
            id,
            version,
            plain,
            evidence: ctx.getattr(intern!(py, "evidence"))?,
        };
        let verdicts = self.verdicts.get();
        let results = PyList::empty(py);
        let mut tally = Tally::default();
        for check in checks.try_iter()? {
            let (result, read) = self.one(&check?, ctx, &contract, clear, gapless)?;
            match read {
                Some((passed, outcome)) => verdicts.count(&mut tally, passed, &outcome)?,
                None => verdicts.count_result(&mut tally, &result)?,
            }
            results.append(result)?;
        }
        Ok((results, tally))
    }

    /// The verdict of `compiled` (a `CompiledContract`) on `trajectory` holding `results`
    /// (this call's to keep: the verdict holds the list itself), `trace_complete`'s result
    /// appended when the trajectory has orphan spans, timed from `start` (`clock`'s): what
    /// `grade` returns. `tally` is `run`'s of the results it made, which begin `results`:
    /// only the results after them are read again. Built unvalidated when every value it
    /// copies is of its field's exact type (`ModelFill::finish`), else validated; its
    /// dict a copy of the compiled contract's `VerdictHead`'s.
    #[pyo3(signature = (compiled, trajectory, results, start, tally = None))]
    fn verdict<'py>(
        &self,
        compiled: &Bound<'py, PyAny>,
        trajectory: &Bound<'py, PyAny>,
        results: &Bound<'py, PyList>,
        start: &Bound<'py, PyAny>,
        tally: Option<PyRef<'py, Tally>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = compiled.py();
        let contract = compiled.getattr(intern!(py, "contract"))?;
        if trajectory
            .getattr(intern!(py, "orphan_spans"))?
            .is_truthy()?
        {
            let more = self.complete.bind(py).call1((&contract, trajectory))?;
            for result in more.try_iter()? {
                results.append(result?)?;
            }
        }
        let verdicts = self.verdicts.get();
        // A tally of more results than there are is no count of them: all are read.
        let tally = tally
            .as_deref()
            .filter(|tally| tally.results <= results.len());
        let (passed, counts) = verdicts.tally(results.as_any(), tally)?;
        let trace_id = trajectory.getattr(intern!(py, "trace_id"))?;
        let mut subject = trace_id.clone();
        if !subject.is_truthy()? {
            subject = trajectory.getattr(intern!(py, "source"))?;
            if !subject.is_truthy()? {
                subject = intern!(py, "<trajectory>").clone().into_any();
            }
        }
        let names = [
            trace_id,
            trajectory.getattr(intern!(py, "root_span_id"))?,
            trajectory.getattr(intern!(py, "root_name"))?,
            trajectory.getattr(intern!(py, "agent_name"))?,
        ];
        let plain = subject.is_exact_instance_of::<PyString>()
            && names
                .iter()
                .all(|name| name.is_none() || name.is_exact_instance_of::<PyString>())
            && results
                .iter()
                .all(|result| result.get_type().is(verdicts.result.bind(py)));
        let duration = self.clock.bind(py).call0()?.sub(start)?;
        let [trace_id, root_span_id, root_name, agent_name] = names;
        let fill = verdicts.verdict.get();
        let (dict, contract_plain) = self.verdict_head(fill, compiled, &contract)?;
        let plain = plain && contract_plain;
        let values = [
            subject,
            trace_id,
            root_span_id,
            root_name,
            agent_name,
            PyBool::new(py, passed).to_owned().into_any(),
            results.clone().into_any(),
            counts,
            duration,
        ];
        for (name, value) in fill.names[CONTRACT_VALUES..].iter().zip(values) {
            set_item(&dict, name.bind(py), &value)?;
        }
        fill.finish(py, dict, plain, None)
    }
}

/// How many compiled contracts' `VerdictHead`s a runner keeps (a grade has a few; a
/// server reloading its contracts compiles new ones: past this many, the kept are let go).
const HEADS: usize = 16;

/// What every verdict of one compiled contract starts with (`CheckRunner::verdict_head`):
/// whether its contract's values are of their fields' exact types (`CompiledContract.
/// plain`), and `Verdict`'s template with the four of them set (`contract_id`,
/// `contract_version`, `contract_hash`, `contract_name`), read once instead of four
/// attribute reads of the contract and four values set per verdict.
struct VerdictHead {
    /// The `CompiledContract`, held (so no other object takes its address); told by
    /// identity, as a compiled contract and its contract are immutable.
    compiled: Py<PyAny>,
    plain: bool,
    dict: Py<PyDict>,
}

/// How many of `Verdict`'s fields come first from the contract (`VerdictHead`).
const CONTRACT_VALUES: usize = 4;

impl CheckRunner {
    /// A new `__dict__` for a verdict of `compiled` (whose `contract` is given): a copy of
    /// its `VerdictHead`'s, made and kept by its first verdict; and whether the contract's
    /// values are plain. No lock is held while Python code may run (attribute reads, the
    /// copy).
    fn verdict_head<'py>(
        &self,
        fill: &ModelFill,
        compiled: &Bound<'py, PyAny>,
        contract: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyDict>, bool)> {
        let py = compiled.py();
        let kept = match self.heads.lock() {
            Ok(heads) => heads
                .iter()
                .find(|head| head.compiled.bind(py).is(compiled))
                .map(|head| (head.dict.clone_ref(py), head.plain)),
            Err(_) => None,
        };
        if let Some((dict, plain)) = kept {
            return Ok((dict.bind(py).copy()?, plain));
        }
        let plain = compiled.getattr(intern!(py, "plain"))?.is_truthy()?;
        let dict = fill.template.bind(py).copy()?;
        for (name, field) in fill.names[..CONTRACT_VALUES].iter().zip([
            intern!(py, "id"),
            intern!(py, "version"),
            intern!(py, "content_hash"),
            intern!(py, "name"),
        ]) {
            set_item(&dict, name.bind(py), &contract.getattr(field)?)?;
        }
        let head = VerdictHead {
            compiled: compiled.clone().unbind(),
            plain,
            dict: dict.clone().unbind(),
        };
        let let_go = match self.heads.lock() {
            Ok(mut heads) => {
                let let_go = if heads.len() >= HEADS {
                    std::mem::take(&mut *heads)
                } else {
                    Vec::new()
                };
                heads.push(head);
                let_go
            }
            Err(_) => Vec::new(),
        };
        // Released after the lock: a released value's finalizer may run Python code, which
        // may grade again.
        drop(let_go);
        Ok((dict.copy()?, plain))
    }

    /// Field number `slot` of a check's finding (`FINDING_FIELDS`): read in the instance's
    /// memory when it is exactly a `Finding` (`SlotLayout::get`), else by name.
    #[inline(always)]
    fn finding<'py>(
        &self,
        finding: &Bound<'py, PyAny>,
        slot: usize,
        name: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match &self.finding {
            Some(layout) => layout.get(finding, slot, name),
            None => finding.getattr(name),
        }
    }

    /// A check's `head` (`CompiledCheck.head`): read in the instance's memory when it is
    /// exactly a `CompiledCheck` (`SlotLayout::get`), else by name. A reference of its own
    /// is taken: the check's own code runs while the head is read.
    #[inline(always)]
    fn head<'py>(&self, check: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let name = intern!(check.py(), "head");
        match &self.head {
            Some(layout) => layout.get(check, 0, name),
            None => check.getattr(name),
        }
    }

    fn one<'py>(
        &self,
        check: &Bound<'py, PyAny>,
        ctx: &Bound<'py, PyAny>,
        contract: &ContractFields<'py>,
        clear: bool,
        gapless: bool,
    ) -> PyResult<Made<'py>> {
        let py = ctx.py();
        let start = Instant::now();
        let head = self.head(check)?;
        let head = head.cast::<CheckHead>()?.get();
        if let Some(setup_error) = &head.setup_error {
            return self.result(head, contract, self.failed(setup_error.bind(py))?, start);
        }
        let judged = match self.judge(check, head, ctx, contract, clear, gapless) {
            Ok((finding, outcome)) => (finding, outcome, None),
            Err(err) => {
                if err.is_instance_of::<PyKeyboardInterrupt>(py) {
                    return Err(err); // Ctrl-C stops the run: the user's, no check's failure
                }
                let exc = err.value(py);
                if exc.is(&ctx.getattr(intern!(py, "replay_error"))?) {
                    return Err(err); // the lazy replay failed: the verdict's replay error
                }
                return self.result(head, contract, self.failed(exc.as_any())?, start);
            }
        };
        // A check's own finding that no result can be built of (a plug-in's `details=None`,
        // a message that is no text: refused by validation) is that check's error, as if
        // its `check` had raised: the other checks keep their results. The error's own
        // finding is the evaluator's, so the second build cannot fail the same way.
        match self.result(head, contract, judged, start) {
            Err(err) if !err.is_instance_of::<PyKeyboardInterrupt>(py) => {
                let unwritable = self.unwritable.bind(py).call1((err.value(py),))?;
                let (finding, outcome, details) = unwritable.extract()?;
                self.result(head, contract, (finding, outcome, Some(details)), start)
            }
            built => built,
        }
    }

    /// The `OracleResult` of a check's judged finding, timed from `start`.
    fn result<'py>(
        &self,
        head: &CheckHead,
        contract: &ContractFields<'py>,
        (finding, outcome, error_details): Judged<'py>,
        start: Instant,
    ) -> PyResult<Made<'py>> {
        let py = finding.py();
        let o = &self.outcomes;
        // The outcome's place among the five the runner decides (an error's is not one of
        // them): with `passed`, which of a check's kept dicts already holds both.
        let (passed, decided) = if outcome.is(o.pass.bind(py)) {
            (true, Some(0))
        } else if outcome.is(o.tolerated.bind(py)) {
            (true, Some(1))
        } else if outcome.is(o.invariant_failure.bind(py)) {
            (false, Some(2))
        } else if outcome.is(o.budget_exhausted.bind(py)) {
            (false, Some(3))
        } else if outcome.is(o.missing_evidence.bind(py)) {
            let warn = contract
                .contract
                .getattr(intern!(py, "on_missing_evidence"))?
                .eq(intern!(py, "warn"))?;
            (warn, Some(if warn { 5 } else { 4 }))
        } else {
            (false, None)
        };
        let message = self.finding(&finding, MESSAGE, intern!(py, "message"))?;
        let details = self.finding(&finding, DETAILS, intern!(py, "details"))?;
        let span_ids = self.finding(&finding, SPAN_IDS, intern!(py, "span_ids"))?;
        let step_indexes = self.finding(&finding, STEP_INDEXES, intern!(py, "step_indexes"))?;
        let used = self.finding(&finding, USED, intern!(py, "used"))?;
        let trusted = head.is_layer
            && contract.plain
            && plain_finding(&message, &details, &span_ids, &step_indexes, &used)?;
        let (details, params, span_ids, step_indexes) = if trusted {
            // The per-check fields come from the validated contract and the finding's values
            // were just type-checked: nothing to validate. The containers are copied, as
            // validation copies them, so no result shares one with the finding or the spec.
            // `details` is an exact dict (`plain_finding`): copied in one call, as is an
            // exact dict of params; what a plug-in's spec holds otherwise, item by item.
            // Details that only the finding holds, a finding only this call holds (a plan's
            // or a check's new finding, dropped when its result is made), are the result's
            // as they are: nothing else can reach them, as with a copy, without making one
            // and freeing the finding's. Only an exact `Finding`'s, read from its own slot:
            // then the finding is the holder of the second reference. Any other finding's
            // `details` is read by name, which may answer a dict something else holds (a
            // property), with the same count (`test_trusted_results`).
            let own = self
                .finding
                .as_ref()
                .is_some_and(|layout| layout.holds(&finding));
            let copied = if own && sole(&finding, 1) && sole(&details, 2) {
                details.cast_into::<PyDict>()?
            } else {
                details.cast::<PyDict>()?.copy()?
            };
            if let Some(extra) = &error_details {
                copied.update(extra.cast::<PyMapping>()?)?;
            }
            let params = head.params.bind(py);
            let params = match params.cast_exact::<PyDict>() {
                Ok(params) => params.copy()?,
                Err(_) => {
                    let copied = PyDict::new(py);
                    copied.update(params.cast::<PyMapping>()?)?;
                    copied
                }
            };
            (
                copied.into_any(),
                params.into_any(),
                list_of(span_ids.cast::<PyTuple>()?)?,
                list_of(step_indexes.cast::<PyTuple>()?)?,
            )
        } else {
            let details = match &error_details {
                None => details,
                Some(extra) => {
                    let merged = PyDict::new(py);
                    merged.update(details.cast::<PyMapping>()?)?;
                    merged.update(extra.cast::<PyMapping>()?)?;
                    merged.into_any()
                }
            };
            (
                details,
                head.params.bind(py).clone(),
                span_ids,
                step_indexes,
            )
        };
        let elapsed = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        // The per-check and per-contract fields are in the head's dict already, and the
        // outcome and `passed` too when the outcome is one of the five: what the finding
        // decides beyond them is set in a copy of it.
        let results = self.results.get();
        let flag = PyBool::new(py, passed).to_owned().into_any();
        let Kept {
            dict,
            decided,
            holds_used,
            holds_message,
        } = head.result_fields(results, contract, decided, &outcome, &flag, &used, &message)?;
        if !decided {
            set_item(&dict, results.names[OUTCOME].bind(py), &outcome)?;
            set_item(&dict, results.names[PASSED].bind(py), &flag)?;
        }
        if !holds_used {
            set_item(&dict, results.names[RESULT_USED].bind(py), &used)?;
        }
        if !holds_message {
            set_item(&dict, results.names[RESULT_MESSAGE].bind(py), &message)?;
        }
        for (field, value) in [
            (RESULT_DETAILS, details),
            (PARAMS, params),
            (RESULT_SPAN_IDS, span_ids),
            (RESULT_STEP_INDEXES, step_indexes),
            (DURATION_NS, elapsed.into_pyobject(py)?.into_any()),
        ] {
            set_item(&dict, results.names[field].bind(py), &value)?;
        }
        // Filled, the result holds `passed` and the outcome as put in; validated, what
        // validation made of them is read back by the tally.
        let read = (trusted && results.trusted).then_some((passed, outcome));
        Ok((results.finish(py, dict, trusted, None)?, read))
    }

    /// `_fails_with(exc)`: the error finding, its outcome and details.
    fn failed<'py>(&self, exc: &Bound<'py, PyAny>) -> PyResult<Judged<'py>> {
        let failed = self.fails_with.bind(exc.py()).call1((exc,))?;
        let (finding, outcome, details) = failed.extract()?;
        Ok((finding, outcome, Some(details)))
    }

    /// The check's finding and outcome: steps 2-5 of the module's list, any error raised.
    fn judge<'py>(
        &self,
        check: &Bound<'py, PyAny>,
        head: &CheckHead,
        ctx: &Bound<'py, PyAny>,
        contract: &ContractFields<'py>,
        clear: bool,
        gapless: bool,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let py = ctx.py();
        let oracle = head.oracle.bind(py);
        let gapped = if clear {
            None
        } else {
            Some(self.gapped.bind(py).call1((check, ctx))?).filter(|found| !found.is_none())
        };
        let mut finding = match gapped {
            Some(missing) => missing,
            None => {
                if head.runs_commands {
                    // Checked before the check runs, so a plug-in cannot run anything here.
                    self.refuse_commands.bind(py).call1((ctx,))?;
                }
                // A built-in check's usual answer is its plan's, made here without entering
                // Python (`check_plans`); anything else is its `check` method's.
                let planned = match &head.plan {
                    Some(plan) => plan.get().run(ctx, &contract.evidence)?,
                    None => None,
                };
                let found = match planned {
                    Some(found) => found,
                    None => oracle.call_method1(intern!(py, "check"), (ctx,))?,
                };
                if head.foreign
                    && nests_too_deep(&self.finding(&found, DETAILS, intern!(py, "details"))?, 1)?
                {
                    return Err(PyValueError::new_err(format!(
                        "the finding's details nest deeper than {MAX_DETAILS_DEPTH} levels, \
                         more than a report can write"
                    )));
                }
                found
            }
        };
        let mut status = self.finding(&finding, STATUS, intern!(py, "status"))?;
        let (missing, pass) = (intern!(py, "missing"), intern!(py, "pass"));
        if !gapless
            && (self
                .finding(&finding, UNSEEN, intern!(py, "unseen"))?
                .is_truthy()?
                || (is_text(&status, pass)? && head.needs_full_coverage))
        {
            finding = self.fail_closed.bind(py).call1((&finding, oracle, ctx))?;
            status = self.finding(&finding, STATUS, intern!(py, "status"))?;
        }
        let o = &self.outcomes;
        let outcome = if is_text(&status, missing)? {
            &o.missing_evidence
        } else if !head.tolerance {
            if is_text(&status, pass)? {
                &o.pass
            } else {
                &o.invariant_failure
            }
        } else if is_text(&status, intern!(py, "fail"))? {
            if is_text(
                &self.finding(&finding, BREACH, intern!(py, "breach"))?,
                intern!(py, "rule"),
            )? {
                &o.invariant_failure
            } else {
                &o.budget_exhausted
            }
        } else if self.finding(&finding, USED, intern!(py, "used"))?.gt(0)? {
            &o.tolerated
        } else {
            &o.pass
        };
        Ok((finding, outcome.bind(py).clone()))
    }
}

/// `dict[name] = value` (the dict takes its own references), straight through the C API:
/// each result sets its sixteen fields so.
#[inline(always)]
fn set_item<'py>(
    dict: &Bound<'py, PyDict>,
    name: &Bound<'py, PyString>,
    value: &Bound<'py, PyAny>,
) -> PyResult<()> {
    // SAFETY: three live objects; `PyDict_SetItem` returns 0, or -1 with an exception set.
    if unsafe { ffi::PyDict_SetItem(dict.as_ptr(), name.as_ptr(), value.as_ptr()) } != 0 {
        return Err(PyErr::fetch(dict.py()));
    }
    Ok(())
}

/// `value == text`, `text` an interned `str`: by identity first, as a finding's status
/// and breach are the interned texts themselves (the literals of `Finding`'s makers, the
/// plans' `intern!`s), no comparison called; else compared as `draft::equals` compares.
#[inline(always)]
fn is_text(value: &Bound<'_, PyAny>, text: &Bound<'_, PyString>) -> PyResult<bool> {
    if value.is(text) {
        return Ok(true);
    }
    equals(value, text.to_str()?)
}

/// Whether `object` has `references` references, those the caller knows of.
fn sole(object: &Bound<'_, PyAny>, references: isize) -> bool {
    // SAFETY: `object` is a live object; its reference count is only read.
    unsafe { ffi::Py_REFCNT(object.as_ptr()) == references }
}

/// A new list of `tuple`'s items, as `list(tuple)` makes it (a finding's span ids and step
/// indexes, the result's lists), filled slot by slot (`pydict::filled_list`); empty, three
/// in four of data-2000's, at once.
fn list_of<'py>(tuple: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyAny>> {
    Ok(crate::pydict::filled_list(tuple.py(), tuple.len(), tuple.iter().map(Ok))?.into_any())
}

/// Whether `layer` is one of the three (`fields["layer"] in _LAYERS`).
fn is_layer(layer: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = layer.py();
    for name in [
        intern!(py, "evidence"),
        intern!(py, "invariant"),
        intern!(py, "tolerance"),
    ] {
        if layer.eq(name)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether a finding's values are exactly of the types its result holds (`str`, a `dict`
/// keyed by `str`, tuples of `str` and of `int`, an `int`), so that validating the result
/// could change nothing but make the tuples lists. Subclasses (`bool` for `int`, `StrEnum`
/// members for `str`) and anything else, as a plug-in may return, are validated (where they
/// are converted or refused as they always were).
fn plain_finding(
    message: &Bound<'_, PyAny>,
    details: &Bound<'_, PyAny>,
    span_ids: &Bound<'_, PyAny>,
    step_indexes: &Bound<'_, PyAny>,
    used: &Bound<'_, PyAny>,
) -> PyResult<bool> {
    if !message.is_exact_instance_of::<PyString>() {
        return Ok(false);
    }
    let (Ok(details), Ok(span_ids), Ok(step_indexes)) = (
        details.cast_exact::<PyDict>(),
        span_ids.cast_exact::<PyTuple>(),
        step_indexes.cast_exact::<PyTuple>(),
    ) else {
        return Ok(false);
    };
    // The keys read in place as the dict lends them (`PyDict_Next`), not copied into a list
    // first nor a reference taken of each.
    // SAFETY: no Python code runs during the walk (a type test of each key).
    if !unsafe { crate::pydict::lent_pairs(details) }
        .all(|(key, _)| key.is_exact_instance_of::<PyString>())
    {
        return Ok(false);
    }
    if !span_ids
        .iter()
        .all(|id| id.is_exact_instance_of::<PyString>())
    {
        return Ok(false);
    }
    if !step_indexes
        .iter()
        .all(|index| index.is_exact_instance_of::<PyInt>())
    {
        return Ok(false);
    }
    Ok(used.is_exact_instance_of::<PyInt>())
}

/// What the runner reads of a check for each of its results, read once when the check is
/// compiled (`CompiledCheck.head`, made by its `__init__`): the result's per-check fields
/// (read off the spec, a pydantic model whose every attribute read goes through its
/// `__getattr__` hook), whether its layer is one of the three and is `tolerance`, and of
/// its oracle what the loop asks (`runs_commands`, `needs_full_coverage`: class-level
/// flags), each a field here rather than a Python attribute read per result.
#[pyclass(module = "otel_oracles._native", name = "CheckHead", frozen)]
pub struct CheckHead {
    #[pyo3(get)]
    oracle_type: Py<PyAny>,
    #[pyo3(get)]
    name: Py<PyAny>,
    #[pyo3(get)]
    layer: Py<PyAny>,
    /// The spec's params as results carry them (copied into each trusted result).
    #[pyo3(get)]
    params: Py<PyAny>,
    #[pyo3(get)]
    budget: Py<PyAny>,
    #[pyo3(get)]
    why: Py<PyAny>,
    /// The check's oracle, or `None` when it could not be built (then `setup_error`).
    oracle: Py<PyAny>,
    setup_error: Option<Py<PyAny>>,
    foreign: bool,
    /// `layer in _LAYERS`: a result of another layer is validated (and refused).
    is_layer: bool,
    /// `layer == "tolerance"`.
    tolerance: bool,
    runs_commands: bool,
    needs_full_coverage: bool,
    /// The oracle's `native_plan` (`check_plans`), a built-in's only: a plug-in's class
    /// (`foreign`), even one subclassing a built-in, is always asked through its `check`.
    plan: Option<Py<CheckPlan>>,
    /// Its results' `__dict__` as far as neither the finding nor the clock decides it
    /// (`RESULT_FIELDS`' order, the others `None`, `used` the first result's), for the
    /// contract first graded with: each result's is one copy of it and nine values set, not
    /// sixteen (five for most: see `HeadFields::decided`, `HeadFields::used`). Made by the first
    /// result (the runner holds the result model's template), never replaced.
    fields: OnceLock<HeadFields>,
}

/// The outcomes whose results' dicts a check keeps with the outcome and `passed` set
/// (`HeadFields::decided`): pass, tolerated, invariant failure, exhausted budget, and
/// missing evidence failing and passing (`on_missing_evidence: warn`).
const DECIDED: usize = 6;

/// A new `__dict__` for a result (`CheckHead::result_fields`) and which of the values the
/// finding decides it holds already.
struct Kept<'py> {
    dict: Bound<'py, PyDict>,
    /// The outcome and `passed`.
    decided: bool,
    holds_used: bool,
    holds_message: bool,
}

/// A check's results' fixed fields (`CheckHead::fields`) and the contract values they hold.
struct HeadFields {
    /// The contract's `id` and `version` put in `dict`: another contract's (by identity)
    /// are not in it.
    id: Py<PyAny>,
    version: Py<PyAny>,
    dict: Py<PyDict>,
    /// `dict` with the outcome and `passed` set as well, by the outcome's place
    /// (`CheckRunner::result`): a check's results take one or two of these, so each result
    /// sets seven values instead of nine. Each made by the first result of its outcome,
    /// with that result's message, which it keeps beside: a later result whose message is
    /// that very object (a passing check's is mostly the one `holds` text the plans
    /// intern) leaves it as copied, one value less set.
    decided: [OnceLock<(Py<PyDict>, Py<PyAny>)>; DECIDED],
    /// The `used` `dict` holds (the first result's): a result whose finding's `used` is
    /// this very object, as nearly every one is (a finding's `used` is `0`, an int
    /// CPython keeps one object of), leaves it as copied, one value less set (~180
    /// instructions, 22,696 of data-2000's 25,000 results).
    used: Py<PyAny>,
}

impl CheckHead {
    /// A new `__dict__` for a result of this check under `contract`: the template of
    /// `results` with the check's own fields and the contract's set, as a copy of the dict
    /// kept for the contract first seen (any other contract's made afresh: a compiled check
    /// belongs to one contract), whether `outcome` and `passed` are set in it too (they
    /// are when the outcome stands at `decided`, `HeadFields::decided`, and the contract is
    /// the kept one), and whether it holds `used` already (`HeadFields::used`: the kept
    /// dict's is that object, or the dict was made afresh with it), and whether it holds
    /// `message` (`HeadFields::decided`'s, that very object). Nothing but a dict's
    /// construction runs while a cell is set, so no lock is held around Python code.
    #[allow(clippy::too_many_arguments)]
    fn result_fields<'py>(
        &self,
        results: &ModelFill,
        contract: &ContractFields<'py>,
        decided: Option<usize>,
        outcome: &Bound<'py, PyAny>,
        passed: &Bound<'py, PyAny>,
        used: &Bound<'py, PyAny>,
        message: &Bound<'py, PyAny>,
    ) -> PyResult<Kept<'py>> {
        let py = contract.id.py();
        if let Some(kept) = self.fields.get() {
            if kept.id.bind(py).is(&contract.id) && kept.version.bind(py).is(&contract.version) {
                let holds_used = kept.used.bind(py).is(used);
                let Some(at) = decided else {
                    return Ok(Kept {
                        dict: kept.dict.bind(py).copy()?,
                        decided: false,
                        holds_used,
                        holds_message: false,
                    });
                };
                if let Some((dict, held)) = kept.decided[at].get() {
                    return Ok(Kept {
                        dict: dict.bind(py).copy()?,
                        decided: true,
                        holds_used,
                        holds_message: held.bind(py).is(message),
                    });
                }
                let dict = kept.dict.bind(py).copy()?;
                set_item(&dict, results.names[OUTCOME].bind(py), outcome)?;
                set_item(&dict, results.names[PASSED].bind(py), passed)?;
                set_item(&dict, results.names[RESULT_MESSAGE].bind(py), message)?;
                // Lost to another thread's set: that one is kept, this dict only used here.
                let _ = kept.decided[at].set((dict.clone().unbind(), message.clone().unbind()));
                return Ok(Kept {
                    dict: dict.copy()?,
                    decided: true,
                    holds_used,
                    holds_message: true,
                });
            }
        }
        let dict = results.template.bind(py).copy()?;
        for (field, value) in [
            (ORACLE_TYPE, &self.oracle_type),
            (NAME, &self.name),
            (LAYER, &self.layer),
            (BUDGET, &self.budget),
            (WHY, &self.why),
        ] {
            set_item(&dict, results.names[field].bind(py), value.bind(py))?;
        }
        set_item(&dict, results.names[CONTRACT_ID].bind(py), &contract.id)?;
        set_item(
            &dict,
            results.names[CONTRACT_VERSION].bind(py),
            &contract.version,
        )?;
        set_item(&dict, results.names[RESULT_USED].bind(py), used)?;
        if self.fields.get().is_none() {
            // Lost to another thread's set: that one is kept, this dict only used here.
            let _ = self.fields.set(HeadFields {
                id: contract.id.clone().unbind(),
                version: contract.version.clone().unbind(),
                dict: dict.clone().unbind(),
                decided: Default::default(),
                used: used.clone().unbind(),
            });
        }
        Ok(Kept {
            dict: dict.copy()?,
            decided: false,
            holds_used: true,
            holds_message: false,
        })
    }
}

#[pymethods]
impl CheckHead {
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (
        oracle_type, name, layer, params, budget, why, oracle, setup_error, foreign, /
    ))]
    fn new(
        oracle_type: Bound<'_, PyAny>,
        name: Bound<'_, PyAny>,
        layer: Bound<'_, PyAny>,
        params: Bound<'_, PyAny>,
        budget: Bound<'_, PyAny>,
        why: Bound<'_, PyAny>,
        oracle: Bound<'_, PyAny>,
        setup_error: Option<Bound<'_, PyAny>>,
        foreign: bool,
    ) -> PyResult<Self> {
        let py = layer.py();
        let flag = |name: &Bound<'_, PyString>| -> PyResult<bool> {
            if oracle.is_none() {
                return Ok(false);
            }
            oracle.getattr(name)?.is_truthy()
        };
        let plan = if foreign || oracle.is_none() {
            None
        } else {
            let plan = oracle.getattr(intern!(py, "native_plan"))?;
            plan.cast::<CheckPlan>()
                .ok()
                .map(|plan| plan.clone().unbind())
        };
        Ok(Self {
            plan,
            is_layer: is_layer(&layer)?,
            tolerance: layer.eq(intern!(py, "tolerance"))?,
            runs_commands: flag(intern!(py, "runs_commands"))?,
            needs_full_coverage: flag(intern!(py, "needs_full_coverage"))?,
            oracle_type: oracle_type.unbind(),
            name: name.unbind(),
            layer: layer.unbind(),
            params: params.unbind(),
            budget: budget.unbind(),
            why: why.unbind(),
            oracle: oracle.unbind(),
            setup_error: setup_error.map(Bound::unbind),
            foreign,
            fields: OnceLock::new(),
        })
    }
}

/// How one pydantic model's instances are built of values the caller has in field order:
/// a copy of a `{field: None}` template with the values put in (the dict made at its final
/// size in one copy of its keys, not grown and rehashed while the keys go in one by one),
/// then filled unvalidated (`fill`) when the caller vouches for every value and the model
/// is kept as `fill` builds it (`trusted`, checked by `model.result` at import), else
/// validated. One type for the three models the evaluator builds: a check's
/// `OracleResult` (`CheckRunner`), the `Verdict` and its `Counts` (`Verdicts`).
#[pyclass(module = "otel_oracles._native", name = "ModelFill", frozen)]
pub struct ModelFill {
    model: Py<PyType>,
    /// Every field name but the last, and the last (`None` for a model of no field): an
    /// instance's fields set is a fresh `set` of the first with the last added
    /// (`fields_set`).
    fields: Py<PyFrozenSet>,
    last: Option<Py<PyString>>,
    /// The field names in declaration order, interned once.
    names: Vec<Py<PyString>>,
    /// `{name: None}` in field order: keyed as the model's instances share their keys
    /// (`shared_template`) where that is the smaller dict, so every instance's `__dict__`,
    /// a copy of it, is too.
    template: Py<PyDict>,
    /// Whether an instance may be built by filling its state.
    trusted: bool,
    /// `model.__pydantic_validator__.validate_python`.
    validate: Py<PyAny>,
    /// `object.__new__`'s slot, read once.
    new: ffi::newfunc,
    /// The model's `tp_alloc` when `object.__new__` would do no more than call it and set up
    /// the instance's own attribute storage (`fresh`), else `None`.
    alloc: Option<ffi::allocfunc>,
    /// Where instances of exactly `model` hold `MEMBERS` (found once), stored in memory
    /// by `fill_with` instead of through `object.__setattr__`; `None` when not found.
    members: Option<SlotLayout>,
}

/// The slots of `pydantic.BaseModel` besides `__dict__`, in the order `fill_with` sets them.
const MEMBERS: [&str; 3] = [
    "__pydantic_fields_set__",
    "__pydantic_extra__",
    "__pydantic_private__",
];

#[pymethods]
impl ModelFill {
    /// The builder of `model` (a pydantic model class), filling unvalidated only when
    /// `trusted`; what is not filled goes to `validate` (the model's own validation unless
    /// given: the tests give one that tells them it was asked).
    #[new]
    #[pyo3(signature = (model, trusted, validate = None))]
    fn new(
        model: Bound<'_, PyType>,
        trusted: bool,
        validate: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let py = model.py();
        let mut names = Vec::new();
        for name in model.getattr(intern!(py, "model_fields"))?.try_iter()? {
            let name = PyString::intern(py, name?.cast::<PyString>()?.to_str()?);
            names.push(name.unbind());
        }
        let (fields, last) = match names.split_last() {
            Some((last, first)) => (first, Some(last.clone_ref(py))),
            None => (&names[..], None),
        };
        let fields = PyFrozenSet::new(py, fields)?;
        let validate = match validate {
            Some(validate) => validate,
            None => model
                .getattr(intern!(py, "__pydantic_validator__"))?
                .getattr(intern!(py, "validate_python"))?,
        };
        let new = object_new()?;
        let alloc = plain_alloc(&model, new);
        let template = PyDict::new(py);
        for name in &names {
            template.set_item(name.bind(py), py.None())?;
        }
        let shared = match alloc {
            Some(_) => shared_template(&model, &names, new)?,
            None => None,
        };
        // The shared layout only where it is the smaller (its values array is sized for
        // every key the class may share, more than a few fields' own table: `Counts`).
        let size = |dict: &Bound<'_, PyDict>| -> PyResult<usize> {
            dict.call_method0(intern!(py, "__sizeof__"))?.extract()
        };
        let template = match shared {
            Some(shared) if size(&shared)? < size(&template)? => shared,
            _ => template,
        };
        let members = MEMBERS.map(|name| PyString::intern(py, name));
        let members = SlotLayout::probe_members(&model, &members, new)?;
        Ok(Self {
            model: model.unbind(),
            fields: fields.unbind(),
            last,
            names,
            template: template.unbind(),
            trusted,
            validate: validate.unbind(),
            new,
            alloc,
            members,
        })
    }
}

impl ModelFill {
    /// Refuses a model whose fields are not `expected`, in order: the caller gives values
    /// by position.
    fn expect_fields(&self, py: Python<'_>, expected: &[&str]) -> PyResult<()> {
        let same = self.names.len() == expected.len()
            && self
                .names
                .iter()
                .zip(expected)
                .all(|(name, want)| name.bind(py).to_str().is_ok_and(|got| got == *want));
        if same {
            return Ok(());
        }
        Err(PyValueError::new_err(format!(
            "{} has fields other than {expected:?}",
            self.model.bind(py).name()?
        )))
    }

    /// An instance of `values` (every field's, in declaration order): filled when `plain`
    /// (the caller's word that each is of its field's exact type) and the model allows,
    /// its fields set `set_fields` (a new set of names the instance takes; every field
    /// when `None`), else validated.
    fn build<'py, const N: usize>(
        &self,
        py: Python<'py>,
        values: [Bound<'py, PyAny>; N],
        plain: bool,
        set_fields: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        debug_assert_eq!(self.names.len(), N);
        let dict = self.template.bind(py).copy()?;
        for (name, value) in self.names.iter().zip(values) {
            set_item(&dict, name.bind(py), &value)?;
        }
        self.finish(py, dict, plain, set_fields)
    }

    /// An instance of `dict` (every field's value, in declaration order: a copy of the
    /// template with each set), filled or validated as `build` says.
    fn finish<'py>(
        &self,
        py: Python<'py>,
        dict: Bound<'py, PyDict>,
        plain: bool,
        set_fields: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if plain && self.trusted {
            let fields = match set_fields {
                Some(fields) => fields,
                None => self.fields_set(py)?,
            };
            let model = self.model.bind(py);
            let built = match self.alloc {
                Some(alloc) => fresh(alloc, model)?,
                None => blank(self.new, model)?,
            };
            return fill_with(built, &dict, fields, self.members.as_ref());
        }
        self.validate.bind(py).call1((dict,))
    }

    /// A new set of every field name: a copy of the frozenset of all but the last, the last
    /// added. The same items as a copy of a frozenset of all (what `model_construct`'s set
    /// holds), in half the table for sixteen names (`OracleResult`): `PySet_New` sizes the
    /// copy's table for twice the items it copies, rounded up to the next power of two above
    /// (16 names: 64 slots, a 1 KB block past the small-object allocator, cleared and filled
    /// name by name), where 15 take 32 slots, the frozenset's own size, so the slots are
    /// copied as they are; the sixteenth fits without growing it. ~450 instructions less a
    /// result (`PySet_New`, then freed at the result's end).
    fn fields_set<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let set = new_set(self.fields.bind(py).as_any())?;
        if let Some(last) = &self.last {
            // SAFETY: a set made here and a live key; 0, or -1 with an exception set.
            if unsafe { ffi::PySet_Add(set.as_ptr(), last.as_ptr()) } != 0 {
                return Err(PyErr::fetch(py));
            }
        }
        Ok(set)
    }
}

/// `{name: None for name in names}` keyed as the model's instances key their attributes:
/// the `__dict__` of an instance made by `object.__new__` (`new`, the model's own `tp_new`:
/// `plain_alloc`) with each name set to `None` in order, as `object.__setattr__` sets it.
/// CPython (3.11 on) keeps such an instance's attributes in an array of values for keys
/// the class shares among its instances, and its `__dict__` is a dict of that layout (a
/// split table), as is every copy of it: a copy takes a reference to the shared keys and
/// copies sixteen values, where a dict of its own keys (the `{name: None}` made otherwise)
/// is copied with its keys table, each key's reference taken, and each released again when
/// the copy is freed. The same items in the same order either way; `None` (then the caller
/// makes `{name: None}`) when a name is found on the class (a descriptor there could take
/// the value elsewhere) or the instance's dict does not come out as exactly those items.
fn shared_template<'py>(
    model: &Bound<'py, PyType>,
    names: &[Py<PyString>],
    new: ffi::newfunc,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let py = model.py();
    for name in names {
        if model.hasattr(name.bind(py))? {
            return Ok(None);
        }
    }
    let blank = blank(new, model)?;
    let none = py.None();
    for name in names {
        // SAFETY: live objects; `PyObject_GenericSetAttr` is `object.__setattr__` (no
        // descriptor on the class by that name: checked above); 0 or -1 with an exception.
        let status =
            unsafe { ffi::PyObject_GenericSetAttr(blank.as_ptr(), name.as_ptr(), none.as_ptr()) };
        if status != 0 {
            return Err(PyErr::fetch(py));
        }
    }
    let Some(dict) = crate::pydict::instance_dict(&blank) else {
        return Ok(None);
    };
    let same = dict.is_exact_instance_of::<PyDict>()
        && dict.len() == names.len()
        && dict
            .iter()
            .zip(names)
            .all(|((key, value), name)| key.is(name.bind(py)) && value.is_none());
    Ok(same.then_some(dict))
}

/// A new `set` of `items`' items (`PySet_New`).
fn new_set<'py>(items: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: a new set of the iterable's items; null only on failure (then fetched).
    unsafe { Bound::from_owned_ptr_or_err(items.py(), ffi::PySet_New(items.as_ptr())) }
}

/// `model`'s `tp_alloc` when `object.__new__(model)` is that call and the instance's
/// attribute storage set up (`new`, object's `tp_new`, is the model's; no abstract
/// methods to refuse it for), else `None`.
fn plain_alloc(model: &Bound<'_, PyType>, new: ffi::newfunc) -> Option<ffi::allocfunc> {
    let ty = model.as_type_ptr();
    // SAFETY: a live class; `PyType_GetSlot` reads a heap type's slot (a static type's too
    // from 3.10), a function pointer or NULL, and `Option<fn>` has the pointer's layout.
    let (own_new, alloc, flags) = unsafe {
        let own_new: Option<ffi::newfunc> =
            std::mem::transmute(ffi::PyType_GetSlot(ty, ffi::Py_tp_new));
        let alloc: Option<ffi::allocfunc> =
            std::mem::transmute(ffi::PyType_GetSlot(ty, ffi::Py_tp_alloc));
        (own_new, alloc, ffi::PyType_GetFlags(ty))
    };
    let own_new = own_new? as usize;
    (own_new == new as usize && flags & ffi::Py_TPFLAGS_IS_ABSTRACT == 0)
        .then_some(alloc)
        .flatten()
}

/// A new instance of `model` as its `tp_alloc` (`plain_alloc`) makes it, its attribute
/// storage not set up: `fill_with` gives it its `__dict__` at once. `object.__new__` would
/// first set up storage of its own for the attributes (CPython 3.11: an array of values
/// for the class's shared keys), which setting `__dict__` turns into a dict and frees
/// again: ~400 instructions a result for nothing.
fn fresh<'py>(alloc: ffi::allocfunc, model: &Bound<'py, PyType>) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: `alloc` is `model`'s own `tp_alloc`, called as `object.__new__` calls it; a
    // new reference, or NULL with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(model.py(), alloc(model.as_type_ptr(), 0)) }
}

/// `Verdict`'s fields in declaration order (`CheckRunner::verdict` sets them, the first
/// `CONTRACT_VALUES` through its `VerdictHead`).
const VERDICT_FIELDS: [&str; 13] = [
    "contract_id",
    "contract_version",
    "contract_hash",
    "contract_name",
    "subject",
    "trace_id",
    "root_span_id",
    "root_name",
    "agent_name",
    "passed",
    "results",
    "counts",
    "duration_ns",
];

/// The verdict's epilogue (`model.result`): the results' tally and the `Verdict` built of
/// values the caller vouches for, unvalidated where pydantic keeps the model as `fill`
/// builds it, else validated. One implementation, which the evaluator's
/// `CheckRunner::verdict` calls directly and `model.result` exposes as `verdict_tally`.
#[pyclass(module = "otel_oracles._native", name = "Verdicts", frozen)]
pub struct Verdicts {
    /// How a `Verdict` is built (`VERDICT_FIELDS`).
    verdict: Py<ModelFill>,
    /// How the tally's `Counts` is built.
    counts: Py<ModelFill>,
    /// `_COUNTED`: outcome -> the `Counts` field it adds to.
    counted: Py<PyDict>,
    /// Whether every value of `counted` names a field of `Counts`, so a tally holds no
    /// other key and may be filled (else it is validated, and refused).
    counted_fields: bool,
    /// `counted`'s outcomes, each with the place in `COUNTS_FIELDS` of the field it adds
    /// to (when `counted_fields`): a result's outcome is one of them itself (the
    /// evaluator's results hold the `Outcome` members), found by identity, not hashed.
    counted_at: Vec<(Py<PyAny>, usize)>,
    /// `Outcome.PASS`, which adds to no count (told apart by identity first).
    pass: Py<PyAny>,
    /// `OracleResult`: a result of exactly this class has its fields in its `__dict__`.
    result: Py<PyType>,
    /// Where the first of `outcome` and `passed` stands among `result`'s fields, its
    /// results' `__dict__` read from there (`StepFields::read`); 0 when the model lacks one.
    read_at: isize,
    /// `Counts`' template with every count `0`: a tally's dict is a copy of it with the
    /// counts that are not zero set (one or none for most verdicts, not all five).
    zeros: Py<PyDict>,
}

impl Verdicts {
    /// Whether every result lets its trace pass, and the results' `Counts`: each result's
    /// `passed` and `outcome` (`passed_outcome`) counted (`count`) after those `from`
    /// counted already (`CheckRunner::run`'s, the first results of `results`); the `Counts`
    /// of the tally (the fields counted set, as validating the tally's `dict` sets them),
    /// filled, or, where that is not kept as validation keeps it (`counted_fields`,
    /// `trusted`), the tally's `dict` validated. Filled, the tally is five numbers here,
    /// not a `dict` of Python ints counted up.
    fn tally<'py>(
        &self,
        results: &Bound<'py, PyAny>,
        from: Option<&Tally>,
    ) -> PyResult<(bool, Bound<'py, PyAny>)> {
        let py = results.py();
        let counts = self.counts.get();
        if !(self.counted_fields && counts.trusted) {
            return self.tally_validated(results);
        }
        let mut tally = from.cloned().unwrap_or_default();
        for result in results.try_iter()?.skip(tally.results) {
            self.count_result(&mut tally, &result?)?;
        }
        // SAFETY: a new empty set; null only on failure (then fetched).
        let set =
            unsafe { Bound::from_owned_ptr_or_err(py, ffi::PySet_New(std::ptr::null_mut()))? };
        for (at, name) in counts.names.iter().enumerate() {
            // SAFETY: a set made here and a live key; 0, or -1 with an exception set.
            if tally.n[at] > 0 && unsafe { ffi::PySet_Add(set.as_ptr(), name.as_ptr()) } != 0 {
                return Err(PyErr::fetch(py));
            }
        }
        // The counts a verdict has not (most, of a passing one all) are the kept zeros.
        let dict = self.zeros.bind(py).copy()?;
        for (at, name) in counts.names.iter().enumerate() {
            if tally.n[at] > 0 {
                set_item(
                    &dict,
                    name.bind(py),
                    tally.n[at].into_pyobject(py)?.as_any(),
                )?;
            }
        }
        Ok((tally.passed, counts.finish(py, dict, true, Some(set))?))
    }

    /// `result` counted into `tally`: its `passed` and `outcome` read (`passed_outcome`).
    fn count_result(&self, tally: &mut Tally, result: &Bound<'_, PyAny>) -> PyResult<()> {
        let (ok, outcome) = self.passed_outcome(result)?;
        self.count(tally, ok.is_truthy()?, &outcome)
    }

    /// A result of `passed` and `outcome` counted into `tally`: into the count of the field
    /// its outcome adds to (`adds_to`), when that is one of `COUNTS_FIELDS`.
    fn count(&self, tally: &mut Tally, passed: bool, outcome: &Bound<'_, PyAny>) -> PyResult<()> {
        tally.results += 1;
        tally.passed &= passed;
        let at = match self.adds_to(outcome)? {
            Some(AddsTo::At(at)) => Some(at),
            Some(AddsTo::Field(field)) => {
                let field = field.cast_into::<PyString>()?;
                COUNTS_FIELDS.iter().position(|name| field == *name)
            }
            None => None,
        };
        if let Some(at) = at {
            tally.n[at] += 1;
        }
        Ok(())
    }

    /// The field a result's `outcome` adds to, or None for `Outcome.PASS` (told apart by
    /// identity first) and an outcome `_COUNTED` lacks: the place of its field when the
    /// outcome is one of `counted_at`'s itself (found by identity), else the field
    /// `_COUNTED.get(outcome)` names. What both tallies (`count`, `tally_validated`) count.
    #[inline]
    fn adds_to<'py>(&self, outcome: &Bound<'py, PyAny>) -> PyResult<Option<AddsTo<'py>>> {
        let py = outcome.py();
        if outcome.is(self.pass.bind(py)) {
            return Ok(None);
        }
        if let Some(&(_, at)) = self.counted_at.iter().find(|(key, _)| key.is(outcome)) {
            return Ok(Some(AddsTo::At(at)));
        }
        Ok(self.counted.bind(py).get_item(outcome)?.map(AddsTo::Field))
    }

    /// `tally` with the tally a `dict` of the fields counted, validated into `Counts`.
    fn tally_validated<'py>(
        &self,
        results: &Bound<'py, PyAny>,
    ) -> PyResult<(bool, Bound<'py, PyAny>)> {
        let py = results.py();
        let counts = self.counts.get();
        let tally = PyDict::new(py);
        let mut passed = true;
        for result in results.try_iter()? {
            let (ok, outcome) = self.passed_outcome(&result?)?;
            passed &= ok.is_truthy()?;
            let field = match self.adds_to(&outcome)? {
                // A place in `COUNTS_FIELDS`, whose names the model's are (`expect_fields`):
                // its name equals the one `_COUNTED` gives.
                Some(AddsTo::At(at)) => counts.names[at].bind(py).clone().into_any(),
                Some(AddsTo::Field(field)) => field,
                None => continue,
            };
            let now = match tally.get_item(&field)? {
                Some(n) => n.add(1)?,
                None => 1i64.into_pyobject(py)?.into_any(),
            };
            tally.set_item(field, now)?;
        }
        Ok((passed, counts.validate.bind(py).call1((tally,))?))
    }

    /// A result's `passed` and `outcome`: read from its `__dict__` in place when it is
    /// exactly an `OracleResult` (`StepFields::read` from their entries), else by name.
    fn passed_outcome<'py>(
        &self,
        result: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let py = result.py();
        let (passed, outcome) = (intern!(py, "passed"), intern!(py, "outcome"));
        if !result.get_type().is(self.result.bind(py)) {
            return Ok((result.getattr(passed)?, result.getattr(outcome)?));
        }
        let [outcome, passed] =
            StepFields::new(result.clone()).read(self.read_at, [outcome, passed])?;
        Ok((passed, outcome))
    }
}

/// The tally of the results `CheckRunner::run` made, counted as it made them (`Verdicts::
/// count`), which `CheckRunner::verdict` goes on from: how many results it counted, whether
/// each lets its trace pass, and each `Counts` field's count (`COUNTS_FIELDS`' order).
#[pyclass(module = "otel_oracles._native", name = "Tally", frozen)]
#[derive(Clone)]
pub struct Tally {
    results: usize,
    passed: bool,
    n: [usize; COUNTS_FIELDS.len()],
}

impl Default for Tally {
    fn default() -> Self {
        Self {
            results: 0,
            passed: true,
            n: [0; COUNTS_FIELDS.len()],
        }
    }
}

/// The `Counts` field a result's outcome adds to (`Verdicts::adds_to`): its place in
/// `COUNTS_FIELDS`, or, for an outcome not found by identity, the value `_COUNTED` holds.
enum AddsTo<'py> {
    At(usize),
    Field(Bound<'py, PyAny>),
}

/// `Counts`' fields in declaration order.
const COUNTS_FIELDS: [&str; 5] = [
    "invariant_failures",
    "tolerated_failures",
    "budget_exhausted",
    "missing_evidence",
    "errors",
];

#[pymethods]
impl Verdicts {
    #[new]
    #[pyo3(signature = (verdict, counts, counted, pass_, result, /))]
    fn new(
        verdict: Bound<'_, ModelFill>,
        counts: Bound<'_, ModelFill>,
        counted: Bound<'_, PyDict>,
        pass_: Bound<'_, PyAny>,
        result: Bound<'_, PyType>,
    ) -> PyResult<Self> {
        let py = verdict.py();
        verdict.get().expect_fields(py, &VERDICT_FIELDS)?;
        counts.get().expect_fields(py, &COUNTS_FIELDS)?;
        let mut counted_fields = true;
        let mut counted_at = Vec::new();
        for (outcome, field) in counted.iter() {
            let at = match field.cast::<PyString>() {
                Ok(name) if field.is_exact_instance_of::<PyString>() => {
                    let name = name.to_str()?;
                    COUNTS_FIELDS.iter().position(|field| *field == name)
                }
                _ => None,
            };
            match at {
                Some(at) => counted_at.push((outcome.unbind(), at)),
                None => counted_fields = false,
            }
        }
        // Where the first of `outcome` and `passed` stands among the result model's fields
        // (a class without `model_fields` or without both: 0, its results' dicts read
        // from their first entry).
        let mut places = [None, None];
        if let Ok(fields) = result.getattr(intern!(py, "model_fields")) {
            for (at, name) in fields.try_iter()?.enumerate() {
                let name = name?;
                let at = isize::try_from(at)?;
                if name.eq(intern!(py, "outcome"))? {
                    places[0] = Some(at);
                } else if name.eq(intern!(py, "passed"))? {
                    places[1] = Some(at);
                }
            }
        }
        let read_at = match places {
            [Some(outcome), Some(passed)] => outcome.min(passed),
            _ => 0,
        };
        let zeros = {
            let fill = counts.get();
            let dict = fill.template.bind(py).copy()?;
            for name in &fill.names {
                set_item(&dict, name.bind(py), 0u8.into_pyobject(py)?.as_any())?;
            }
            dict.unbind()
        };
        Ok(Self {
            verdict: verdict.unbind(),
            counts: counts.unbind(),
            counted: counted.unbind(),
            counted_fields,
            counted_at,
            pass: pass_.unbind(),
            result: result.unbind(),
            read_at,
            zeros,
        })
    }

    /// `(passed, counts)` of `results` (`model.result.verdict_tally`).
    #[pyo3(name = "tally")]
    fn py_tally<'py>(&self, results: &Bound<'py, PyAny>) -> PyResult<(bool, Bound<'py, PyAny>)> {
        self.tally(results, None)
    }

    /// A `Verdict` of values the caller knows are valid (every field of `Verdict`, in
    /// declaration order), unvalidated where the model allows: `results` is kept as given,
    /// so give a list nothing else holds. What `CheckRunner.verdict` builds each verdict
    /// with, open to the tests that compare it with validation.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (
        contract_id, contract_version, contract_hash, contract_name, subject, trace_id,
        root_span_id, root_name, agent_name, passed, results, counts, duration_ns, /
    ))]
    fn trusted<'py>(
        &self,
        contract_id: Bound<'py, PyAny>,
        contract_version: Bound<'py, PyAny>,
        contract_hash: Bound<'py, PyAny>,
        contract_name: Bound<'py, PyAny>,
        subject: Bound<'py, PyAny>,
        trace_id: Bound<'py, PyAny>,
        root_span_id: Bound<'py, PyAny>,
        root_name: Bound<'py, PyAny>,
        agent_name: Bound<'py, PyAny>,
        passed: Bound<'py, PyAny>,
        results: Bound<'py, PyAny>,
        counts: Bound<'py, PyAny>,
        duration_ns: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = subject.py();
        let values = [
            contract_id,
            contract_version,
            contract_hash,
            contract_name,
            subject,
            trace_id,
            root_span_id,
            root_name,
            agent_name,
            passed,
            results,
            counts,
            duration_ns,
        ];
        self.verdict.get().build(py, values, true, None)
    }
}

/// An instance of the pydantic model `model` holding `values` as validation leaves them
/// (`model.result._filled`, which verifies it at import): a new instance (`object.__new__`)
/// whose four slots are set as `object.__setattr__` (and pydantic's `__setstate__`) sets
/// them: the values, a fresh set of `fields`' items (the names validation saw given), no
/// extra and no private values.
#[pyfunction(name = "fill_model")]
fn fill<'py>(
    model: &Bound<'py, PyType>,
    values: &Bound<'py, PyDict>,
    fields: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let new = object_new()?;
    let built = match plain_alloc(model, new) {
        Some(alloc) => fresh(alloc, model)?,
        None => blank(new, model)?,
    };
    fill_with(built, values, new_set(fields)?, None)
}

/// `fill` of `built`, a new instance (`fresh`'s, or `object.__new__`'s), and `fields_set`,
/// a new set: when the caller probed them (`members`, `ModelFill`), the three `MEMBERS`
/// slots stored in the instance's memory (what `object.__setattr__` stores there, without
/// finding each member descriptor by name and calling it) and its `__dict__` set as its
/// descriptor sets it (`PyObject_GenericSetDict`).
fn fill_with<'py>(
    built: Bound<'py, PyAny>,
    values: &Bound<'py, PyDict>,
    fields_set: Bound<'py, PyAny>,
    members: Option<&SlotLayout>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = built.py();
    let none = py.None().into_bound(py);
    if let Some(members) = members.filter(|members| members.holds(&built)) {
        // SAFETY: live objects; `values` is a dict, which the instance's `__dict__` is set
        // to (a reference of its own); 0 or -1 with an exception set.
        let status = unsafe {
            ffi::PyObject_GenericSetDict(built.as_ptr(), values.as_ptr(), std::ptr::null_mut())
        };
        if status != 0 {
            return Err(PyErr::fetch(py));
        }
        members.store_fresh(&built, [fields_set, none.clone(), none])?;
        return Ok(built);
    }
    for (name, value) in [
        (intern!(py, "__dict__"), values.as_any()),
        (intern!(py, "__pydantic_fields_set__"), &fields_set),
        (intern!(py, "__pydantic_extra__"), &none),
        (intern!(py, "__pydantic_private__"), &none),
    ] {
        // SAFETY: all three are live objects; `PyObject_GenericSetAttr` is
        // `object.__setattr__`, which sets a slot or the `__dict__` through its descriptor.
        let status =
            unsafe { ffi::PyObject_GenericSetAttr(built.as_ptr(), name.as_ptr(), value.as_ptr()) };
        if status != 0 {
            return Err(PyErr::fetch(py));
        }
    }
    Ok(built)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fill, m)?)?;
    m.add_class::<CheckHead>()?;
    m.add_class::<ModelFill>()?;
    m.add_class::<Verdicts>()?;
    m.add_class::<Tally>()?;
    m.add_class::<CheckRunner>()
}
