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

use std::time::Instant;

use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyDict, PyFrozenSet, PyInt, PyList, PyMapping, PySet, PyString, PyTuple, PyType,
};

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
    /// `OracleResult`.
    model: Py<PyType>,
    /// Every field name of `OracleResult` (a fresh `set` of them per result).
    fields: Py<PyFrozenSet>,
    /// `{name: None}` of the result's fields in the order they are set (`RESULT_FIELDS`):
    /// each result's values are a copy of it with the values put in, so the dict is made
    /// at its final size in one copy of its keys, not grown (and rehashed) twice while
    /// sixteen keys are inserted one by one.
    template: Py<PyDict>,
    /// Whether a result may be built by filling its state (`model.result._TRUSTED`).
    trusted: bool,
    /// `OracleResult.__pydantic_validator__.validate_python`.
    validate: Py<PyAny>,
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
}

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

/// What a contract gives each of its results, read once per `run` (the contract is a
/// frozen pydantic model: each attribute read goes through its `__getattr__` hook).
struct ContractFields<'py> {
    contract: Bound<'py, PyAny>,
    id: Bound<'py, PyAny>,
    version: Bound<'py, PyAny>,
    /// Whether `id` is exactly a `str` and `version` exactly an `int` (a contract built by
    /// `model_construct` may hold anything: its results are then validated).
    plain: bool,
}

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
        model: Bound<'_, PyType>,
        fields: Bound<'_, PyFrozenSet>,
        trusted: bool,
        validate: Bound<'_, PyAny>,
        outcomes: Bound<'_, PyTuple>,
        fails_with: Bound<'_, PyAny>,
        unwritable: Bound<'_, PyAny>,
        gapped: Bound<'_, PyAny>,
        refuse_commands: Bound<'_, PyAny>,
        fail_closed: Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let outcome = |i: usize| outcomes.get_item(i).map(Bound::unbind);
        let py = model.py();
        let template = PyDict::new(py);
        for name in RESULT_FIELDS {
            template.set_item(PyString::intern(py, name), py.None())?;
        }
        Ok(Self {
            model: model.unbind(),
            fields: fields.unbind(),
            template: template.unbind(),
            trusted,
            validate: validate.unbind(),
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
        })
    }

    /// One result per check of `checks` (`CompiledCheck`s of `ctx.contract`), in order.
    fn run<'py>(
        &self,
        checks: &Bound<'py, PyAny>,
        ctx: &Bound<'py, PyAny>,
        clear: bool,
        gapless: bool,
    ) -> PyResult<Bound<'py, PyList>> {
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
        };
        let results = PyList::empty(py);
        for check in checks.try_iter()? {
            results.append(self.one(&check?, ctx, &contract, clear, gapless)?)?;
        }
        Ok(results)
    }
}

impl CheckRunner {
    fn one<'py>(
        &self,
        check: &Bound<'py, PyAny>,
        ctx: &Bound<'py, PyAny>,
        contract: &ContractFields<'py>,
        clear: bool,
        gapless: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = ctx.py();
        let start = Instant::now();
        let setup_error = check.getattr(intern!(py, "setup_error"))?;
        if !setup_error.is_none() {
            return self.result(check, contract, self.failed(&setup_error)?, start);
        }
        let judged = match self.judge(check, ctx, clear, gapless) {
            Ok((finding, outcome)) => (finding, outcome, None),
            Err(err) => {
                if err.is_instance_of::<PyKeyboardInterrupt>(py) {
                    return Err(err); // Ctrl-C stops the run: the user's, no check's failure
                }
                let exc = err.value(py);
                if exc.is(&ctx.getattr(intern!(py, "replay_error"))?) {
                    return Err(err); // the lazy replay failed: the verdict's replay error
                }
                return self.result(check, contract, self.failed(exc.as_any())?, start);
            }
        };
        // A check's own finding that no result can be built of (a plug-in's `details=None`,
        // a message that is no text: refused by validation) is that check's error, as if
        // its `check` had raised: the other checks keep their results. The error's own
        // finding is the evaluator's, so the second build cannot fail the same way.
        match self.result(check, contract, judged, start) {
            Err(err) if !err.is_instance_of::<PyKeyboardInterrupt>(py) => {
                let unwritable = self.unwritable.bind(py).call1((err.value(py),))?;
                let (finding, outcome, details) = unwritable.extract()?;
                self.result(check, contract, (finding, outcome, Some(details)), start)
            }
            built => built,
        }
    }

    /// The `OracleResult` of a check's judged finding, timed from `start`.
    fn result<'py>(
        &self,
        check: &Bound<'py, PyAny>,
        contract: &ContractFields<'py>,
        (finding, outcome, error_details): Judged<'py>,
        start: Instant,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = check.py();
        let o = &self.outcomes;
        let passed = outcome.is(o.pass.bind(py))
            || outcome.is(o.tolerated.bind(py))
            || (outcome.is(o.missing_evidence.bind(py))
                && contract
                    .contract
                    .getattr(intern!(py, "on_missing_evidence"))?
                    .eq(intern!(py, "warn"))?);
        let message = finding.getattr(intern!(py, "message"))?;
        let details = finding.getattr(intern!(py, "details"))?;
        let span_ids = finding.getattr(intern!(py, "span_ids"))?;
        let step_indexes = finding.getattr(intern!(py, "step_indexes"))?;
        let used = finding.getattr(intern!(py, "used"))?;
        let fields = check.getattr(intern!(py, "result_fields"))?;
        let field = |name: &Bound<'py, PyString>| fields.get_item(name);
        let layer = field(intern!(py, "layer"))?;
        let values = self.template.bind(py).copy()?;
        let set =
            |name: &Bound<'py, PyString>, value: &Bound<'py, PyAny>| values.set_item(name, value);
        set(
            intern!(py, "oracle_type"),
            &field(intern!(py, "oracle_type"))?,
        )?;
        set(intern!(py, "name"), &field(intern!(py, "name"))?)?;
        set(intern!(py, "layer"), &layer)?;
        set(intern!(py, "outcome"), &outcome)?;
        set(
            intern!(py, "passed"),
            &PyBool::new(py, passed).to_owned().into_any(),
        )?;
        set(intern!(py, "message"), &message)?;
        let trusted = is_layer(&layer)?
            && contract.plain
            && plain_finding(&message, &details, &span_ids, &step_indexes, &used)?;
        if trusted {
            // The per-check fields come from the validated contract and the finding's values
            // were just type-checked: nothing to validate. The containers are copied, as
            // validation copies them, so no result shares one with the finding or the spec.
            let copied = PyDict::new(py);
            copied.update(details.cast::<PyMapping>()?)?;
            if let Some(extra) = &error_details {
                copied.update(extra.cast::<PyMapping>()?)?;
            }
            set(intern!(py, "details"), copied.as_any())?;
            let params = PyDict::new(py);
            params.update(field(intern!(py, "params"))?.cast::<PyMapping>()?)?;
            set(intern!(py, "params"), params.as_any())?;
            set(
                intern!(py, "span_ids"),
                span_ids.cast::<PyTuple>()?.to_list().as_any(),
            )?;
            let indexes = step_indexes.cast::<PyTuple>()?.to_list();
            set(intern!(py, "step_indexes"), indexes.as_any())?;
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
            set(intern!(py, "details"), &details)?;
            set(intern!(py, "params"), &field(intern!(py, "params"))?)?;
            set(intern!(py, "span_ids"), &span_ids)?;
            set(intern!(py, "step_indexes"), &step_indexes)?;
        }
        set(intern!(py, "used"), &used)?;
        set(intern!(py, "budget"), &field(intern!(py, "budget"))?)?;
        set(intern!(py, "why"), &field(intern!(py, "why"))?)?;
        set(intern!(py, "contract_id"), &contract.id)?;
        set(intern!(py, "contract_version"), &contract.version)?;
        let elapsed = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        set(
            intern!(py, "duration_ns"),
            elapsed.into_pyobject(py)?.as_any(),
        )?;
        if trusted && self.trusted {
            return fill(self.model.bind(py), &values, self.fields.bind(py));
        }
        self.validate.bind(py).call1((values,))
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
        ctx: &Bound<'py, PyAny>,
        clear: bool,
        gapless: bool,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let py = ctx.py();
        let oracle = check.getattr(intern!(py, "oracle"))?;
        let gapped = if clear {
            None
        } else {
            Some(self.gapped.bind(py).call1((check, ctx))?).filter(|found| !found.is_none())
        };
        let mut finding = match gapped {
            Some(missing) => missing,
            None => {
                if oracle.getattr(intern!(py, "runs_commands"))?.is_truthy()? {
                    // Checked before the check runs, so a plug-in cannot run anything here.
                    self.refuse_commands.bind(py).call1((ctx,))?;
                }
                let found = oracle.call_method1(intern!(py, "check"), (ctx,))?;
                if check.getattr(intern!(py, "foreign"))?.is_truthy()?
                    && nests_too_deep(&found.getattr(intern!(py, "details"))?, 1)?
                {
                    return Err(PyValueError::new_err(format!(
                        "the finding's details nest deeper than {MAX_DETAILS_DEPTH} levels, \
                         more than a report can write"
                    )));
                }
                found
            }
        };
        let mut status = finding.getattr(intern!(py, "status"))?;
        let (missing, pass) = (intern!(py, "missing"), intern!(py, "pass"));
        if !gapless
            && (finding.getattr(intern!(py, "unseen"))?.is_truthy()?
                || (status.eq(pass)?
                    && oracle
                        .getattr(intern!(py, "needs_full_coverage"))?
                        .is_truthy()?))
        {
            finding = self.fail_closed.bind(py).call1((&finding, &oracle, ctx))?;
            status = finding.getattr(intern!(py, "status"))?;
        }
        let o = &self.outcomes;
        let outcome = if status.eq(missing)? {
            &o.missing_evidence
        } else if !check
            .getattr(intern!(py, "layer"))?
            .eq(intern!(py, "tolerance"))?
        {
            if status.eq(pass)? {
                &o.pass
            } else {
                &o.invariant_failure
            }
        } else if status.eq(intern!(py, "fail"))? {
            if finding
                .getattr(intern!(py, "breach"))?
                .eq(intern!(py, "rule"))?
            {
                &o.invariant_failure
            } else {
                &o.budget_exhausted
            }
        } else if finding.getattr(intern!(py, "used"))?.gt(0)? {
            &o.tolerated
        } else {
            &o.pass
        };
        Ok((finding, outcome.bind(py).clone()))
    }
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
    if !details
        .keys()
        .iter()
        .all(|key| key.is_exact_instance_of::<PyString>())
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

/// An instance of the pydantic model `model` holding `values` as validation leaves them
/// (`model.result._filled`, which verifies it at import): a new instance (`object.__new__`)
/// whose four slots are set as `object.__setattr__` (and pydantic's `__setstate__`) sets
/// them: the values, a fresh set of `fields`, no extra and no private values.
#[pyfunction(name = "fill_model")]
fn fill<'py>(
    model: &Bound<'py, PyType>,
    values: &Bound<'py, PyDict>,
    fields: &Bound<'py, PyFrozenSet>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = model.py();
    let args = PyTuple::empty(py);
    // SAFETY: `PyBaseObject_Type` is `object`, whose `tp_new` slot is `object.__new__`;
    // called with a type and an empty argument tuple as `object.__new__(model)` calls it.
    let built = unsafe {
        let new = ffi::PyType_GetSlot(
            std::ptr::addr_of_mut!(ffi::PyBaseObject_Type),
            ffi::Py_tp_new,
        );
        if new.is_null() {
            return Err(PyErr::fetch(py));
        }
        let new = std::mem::transmute::<*mut std::ffi::c_void, ffi::newfunc>(new);
        let raw = new(
            model.as_ptr().cast::<ffi::PyTypeObject>(),
            args.as_ptr(),
            std::ptr::null_mut(),
        );
        Bound::from_owned_ptr_or_err(py, raw)?
    };
    // SAFETY: a new set of the frozenset's items; null only on failure (then fetched).
    let fields_set = unsafe { Bound::from_owned_ptr_or_err(py, ffi::PySet_New(fields.as_ptr()))? };
    let none = py.None().into_bound(py);
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
    m.add_class::<CheckRunner>()
}
