//! What the evidence probes of `otel_oracles.grade.evidence` and the checks compute per
//! trajectory: the placeholder test (`is_placeholder`, the one implementation of
//! `otel_oracles_core::placeholder` over Python values), a trajectory's steps read once
//! into typed records (`view::StepView`, read as `Evidence.groups`: the groups the
//! checks select from and the facts derived from the steps' kinds, times and statuses), the
//! evidence names a trajectory lacks and the steps lacking each (`probes::EvidencePlan`), the
//! repeated calls `tool_retries` judges (`tool_repeats`), the calls `loop_detected` must
//! normalize (`repeated_args_candidates`), `tool_sequence`'s diff (`sequence`),
//! `citations_grounded`'s search for the cited ids (`citations`) and how messages name
//! steps and whether a step's field was captured (`naming`: `where`, `list_steps`,
//! `absent`).
//!
//! The placeholder test reads the values as Python holds them and calls no Python code: a `str` (or
//! a subclass: its characters, never its methods) is read code point by code point through
//! the stable ABI, a `dict` or `list` (or a subclass) through its own storage. The last two
//! compare, hash and look up values as the Python they replaced did (through the C API's
//! comparisons and `dict`s, a subclass's own `get`), and hand only what they do not model
//! (a non-ASCII text's whitespace and case folding) to Python's own methods.

mod citations;
mod messages;
mod naming;
mod probes;
mod sequence;
mod view;

pub(crate) use citations::{
    ground, plan_ids, Asked as CiteAsked, Source as CiteSource, Text as CiteText,
};
pub(crate) use naming::{field_absent, listed_steps, where_text};
pub(crate) use sequence::{items_named_by, items_subsets, sequence_diff, Subset};
pub(crate) use view::StepView;

use probes::EvidencePlan;

use std::collections::HashMap;

use otel_oracles_core::placeholder::is_placeholder_text;
use otel_oracles_core::screen::{bytes_hash, mix64, squeezed_hash, squeezed_lower_hash};
use pyo3::exceptions::{PyKeyboardInterrupt, PyRecursionError};
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFrozenSet, PyList, PySet, PySlice, PyString, PyTuple};

use crate::pydict::{self, StepFields};
use crate::slots::ClassSlots;
use crate::tool_glob;

/// Deepest nesting of lists and dicts `is_placeholder` descends into. Python's recursive
/// version stopped at its recursion limit, about 500 levels, with a `RecursionError`; this
/// one answers to twice that depth and raises the same error past it (a cycle, say).
const MAX_DEPTH: usize = 1000;

/// Whether the text of `text` is a placeholder (`is_placeholder_text`), read code point by
/// code point: a long text is decided by its first character without being encoded.
fn text_is_placeholder(text: &Bound<'_, PyString>) -> bool {
    let ptr = text.as_ptr();
    // SAFETY: `ptr` is a live `str` (a `PyString` cast succeeded) held by `text` for the
    // whole call; every index read is below its length.
    let len = unsafe { ffi::PyUnicode_GetLength(ptr) };
    let Ok(len) = usize::try_from(len) else {
        return false; // unreachable for a str: GetLength fails only for other types
    };
    is_placeholder_text(len, |i| {
        // SAFETY: as above; `i < len` fits `Py_ssize_t`, which `len` came from.
        unsafe { ffi::PyUnicode_ReadChar(ptr, i as ffi::Py_ssize_t) }
    })
}

/// Where an `Evidence` holds the slots the core reads (`groups`, `memo`, `trajectory`),
/// probed on first use: the checks' plans read them some fifteen times a check.
static EVIDENCE_SLOTS: ClassSlots = ClassSlots::new(
    "otel_oracles.grade.evidence",
    "Evidence",
    &["groups", "memo", "trajectory"],
);
const GROUPS: usize = 0;
const MEMO: usize = 1;
const TRAJECTORY: usize = 2;

/// Where an `evidence.Plan` holds its six slots, probed on first use: `lacking_of` reads
/// four or five of them per contract and trajectory (~3,500 asks a grade of data-2000),
/// each ~190 instructions by name.
static PLAN_SLOTS: ClassSlots = ClassSlots::new(
    "otel_oracles.grade.evidence",
    "Plan",
    &[
        "core",
        "names",
        "outcomes",
        "python",
        "tool_names",
        "wordings",
    ],
);
const PLAN_CORE: usize = 0;
const PLAN_NAMES: usize = 1;
const PLAN_OUTCOMES: usize = 2;
const PLAN_PYTHON: usize = 3;
const PLAN_TOOL_NAMES: usize = 4;
const PLAN_WORDINGS: usize = 5;

/// `evidence.trajectory.<field>` (a `Trajectory`'s field, read from its `__dict__`).
fn trajectory_field<'py>(
    evidence: &Bound<'py, PyAny>,
    field: &Bound<'py, PyString>,
) -> PyResult<Bound<'py, PyAny>> {
    let name = intern!(evidence.py(), "trajectory");
    StepFields::new(EVIDENCE_SLOTS.get(evidence, TRAJECTORY, name)?).get(field)
}

/// The evidence's memo (`Evidence.memo`): every answer kept for the trajectory, the
/// Python checks' (`Evidence.memoized`), the class's facts (`"Evidence.<method>"`) and the
/// plans' tables. The one place the core reads it.
fn memo_of<'py>(evidence: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    let name = intern!(evidence.py(), "memo");
    Ok(EVIDENCE_SLOTS
        .get(evidence, MEMO, name)?
        .cast_into::<PyDict>()?)
}

/// `evidence.memoized`'s answer under `key`, made by `make` on the first ask and kept in
/// the evidence's memo (`memo_of`), so a plan and the Python checks share one answer per
/// trajectory.
pub(crate) fn memoized<'py>(
    evidence: &Bound<'py, PyAny>,
    key: &Bound<'py, PyAny>,
    make: impl FnOnce() -> PyResult<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let memo = memo_of(evidence)?;
    if let Some(found) = memo.get_item(key)? {
        return Ok(found);
    }
    let made = make()?;
    memo.set_item(key, &made)?;
    Ok(made)
}

/// `otel_oracles.grade.evidence`'s `name`: a constant the facts below read, or the Python
/// function that words what they found (the wording stays with the probes' other messages).
/// The module imports the core, so it is imported on first use, not when the core loads.
fn evidence_item<'py>(py: Python<'py>, name: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyAny>> {
    static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    MODULE
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(PyModule::import(py, "otel_oracles.grade.evidence")?.unbind())
        })?
        .bind(py)
        .getattr(name)
}

/// `Evidence._answer_calls()`: the calls of the trajectory's final-answer tools, in answer
/// order (`StepView.final_answer_calls` over `trajectory.final_answer_tools`), kept under
/// `"Evidence.final_answer_calls"` (a list the Python callers copy).
pub(crate) fn answer_calls<'py>(evidence: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = evidence.py();
    memoized(
        evidence,
        intern!(py, "Evidence.final_answer_calls").as_any(),
        || {
            let tools = trajectory_field(evidence, intern!(py, "final_answer_tools"))?;
            let view = view_of(evidence)?;
            let calls = view
                .get()
                .final_answer_calls(tools.cast::<PyTuple>()?, first_match(py)?)?;
            Ok(calls.into_any())
        },
    )
}

/// `evidence.answering()`: `id()` of each final-answer call (`answer_calls`), a
/// `frozenset` kept under `"Evidence.answering"`.
pub(crate) fn answering<'py>(evidence: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = evidence.py();
    memoized(evidence, intern!(py, "Evidence.answering").as_any(), || {
        let calls = answer_calls(evidence)?;
        // `id(step)`: the object's address as an unsigned int, as CPython's `id` makes it.
        let ids = calls
            .try_iter()?
            .map(|step| Ok(step?.as_ptr() as usize))
            .collect::<PyResult<Vec<usize>>>()?;
        Ok(PyFrozenSet::new(py, ids)?.into_any())
    })
}

/// `evidence.last_generation()`: the run's last model call (`StepView.last_generation`),
/// or `None`, kept under `"Evidence.last_generation"`.
pub(crate) fn last_generation<'py>(evidence: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = evidence.py();
    memoized(
        evidence,
        intern!(py, "Evidence.last_generation").as_any(),
        || Ok(view_of(evidence)?.get().last_generation_step(py)),
    )
}

/// `evidence.fragment_gap()`: why the trace holds only part of its run, or `None`, kept
/// under `"Evidence.fragment_gap"` (asked by `known_clear` for every contract). Spans
/// naming a parent that never arrived (`trajectory.orphan_spans`) decide it first; else the
/// core's walk of the model calls' messages (`StepView.fragment`, reading each call's input
/// through `_history_ids`). What it finds is worded by `_fragment_words` (Python), called
/// only when there is something to say.
pub(crate) fn fragment_gap<'py>(evidence: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = evidence.py();
    memoized(
        evidence,
        intern!(py, "Evidence.fragment_gap").as_any(),
        || {
            let words = || evidence_item(py, intern!(py, "_fragment_words"));
            if trajectory_field(evidence, intern!(py, "orphan_spans"))?.is_truthy()? {
                return words()?.call1((evidence, py.None()));
            }
            let root = trajectory_field(evidence, intern!(py, "root_span_id"))?;
            let asks_tools = evidence_item(py, intern!(py, "TOOL_CALL_FINISH_REASONS"))?;
            let history_ids = evidence_item(py, intern!(py, "_history_ids"))?;
            let view = view_of(evidence)?;
            match view
                .get()
                .fragment(py, &root, asks_tools.cast::<PyFrozenSet>()?, &history_ids)?
            {
                None => Ok(py.None().into_bound(py)),
                Some(found) => words()?.call1((evidence, found)),
            }
        },
    )
}

/// `evidence.stopped_short()`: why the run did not end because the agent had finished (its
/// framework's limit ended it), or `None`, kept under `"Evidence.stopped_short"`. Decided
/// here in the order the Python's `_stopped_words` documents (the error that ended the run,
/// a limit's request for a final answer, no model call at all, a forced answer, work left
/// unread); what it finds is worded by `_stopped_words`, and the two rarer tests that read
/// more of the trajectory (`_run_end_unrecorded`, and `_forced_answer` for a last call
/// that offered no tools and whose input is not shown) are the Python's, asked only then.
pub(crate) fn stopped_short<'py>(evidence: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = evidence.py();
    memoized(
        evidence,
        intern!(py, "Evidence.stopped_short").as_any(),
        || {
            let words = |kind: &Bound<'py, PyString>,
                         step: &Bound<'py, PyAny>,
                         value: Bound<'py, PyAny>| {
                evidence_item(py, intern!(py, "_stopped_words"))?
                    .call1((evidence, kind, step, value))
            };
            let none = || py.None().into_bound(py);
            let run_limit = intern!(py, "run_limit");
            let attributes = intern!(py, "attributes");
            let last = last_generation(evidence)?;
            let view = view_of(evidence)?;
            let last = (!last.is_none()).then_some(last);
            if let Some(failed) = view.get().run_error_of(py, last.clone())? {
                let limit =
                    pydict::get(&StepFields::new(failed.clone()).get(attributes)?, run_limit)?;
                if limit.is_none() {
                    return Ok(none());
                }
                return words(intern!(py, "limit_error"), &failed, limit);
            }
            let Some(last) = last else {
                return evidence_item(py, intern!(py, "_run_end_unrecorded"))?.call1((evidence,));
            };
            let fields = StepFields::new(last.clone());
            let limit = pydict::get(&fields.get(attributes)?, run_limit)?;
            if !limit.is_none() {
                return words(intern!(py, "limit_prompt"), &last, limit);
            }
            // `_forced_answer`'s own first test, asked here so that the usual last call (one
            // that offered tools, or whose request is shown) costs no Python call:
            // `last.tools_offered != ()`, or its input captured.
            let offered = fields.get(intern!(py, "tools_offered"))?;
            let offers = match offered.cast_exact::<PyTuple>() {
                Ok(tuple) => !tuple.is_empty(),
                Err(_) => offered.ne(PyTuple::empty(py))?,
            };
            let input_key = intern!(py, "input_messages");
            let shown = || -> PyResult<bool> {
                Ok(!fields.get(input_key)?.is_none()
                    && !fields.get(intern!(py, "redacted"))?.contains(input_key)?)
            };
            if !offers && !shown()? {
                let forced =
                    evidence_item(py, intern!(py, "_forced_answer"))?.call1((evidence, &last))?;
                if !forced.is_none() {
                    return Ok(forced);
                }
            }
            if fields.get(intern!(py, "source"))?.is_none()
                || fields.get(intern!(py, "end_ns"))?.is_none()
            {
                return Ok(none());
            }
            let answering = answering(evidence)?;
            let unread = view
                .get()
                .unread_work(&last, answering.cast::<PyFrozenSet>()?)?;
            if unread.is_empty() {
                return Ok(none());
            }
            words(intern!(py, "unread"), &last, unread.into_any())
        },
    )
}

/// `evidence.final_output()`: the run's final answer (a `FinalOutput`), from the memo once
/// made; the Python method makes and keeps it on the first ask.
pub(crate) fn final_output<'py>(evidence: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = evidence.py();
    if let Some(found) = memo_of(evidence)?.get_item(intern!(py, "Evidence.final_output"))? {
        return Ok(found);
    }
    evidence.call_method0(intern!(py, "final_output"))
}

/// The trajectory's step view (`evidence.groups`, a plain attribute: no Python frame).
pub(crate) fn view_of<'py>(evidence: &Bound<'py, PyAny>) -> PyResult<Bound<'py, StepView>> {
    let name = intern!(evidence.py(), "groups");
    Ok(EVIDENCE_SLOTS
        .get(evidence, GROUPS, name)?
        .cast_into::<StepView>()?)
}

/// Every tool call of the trajectory, in step order (`groups.calls`, the step view's own
/// tuple: no copy).
pub(crate) fn every_call<'py>(evidence: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
    Ok(view_of(evidence)?.get().calls.bind(evidence.py()).clone())
}

/// `otel_oracles.model.tool_name.first_match`, imported on first use (that module imports
/// none of the core's callers): how a contract's names and globs name a recorded tool, one
/// remembered answer per (name, names, mode).
fn first_match(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static FIRST_MATCH: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    Ok(FIRST_MATCH
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(
                PyModule::import(py, "otel_oracles.model.tool_name")?
                    .getattr("first_match")?
                    .unbind(),
            )
        })?
        .bind(py))
}

/// `Evidence.calls_of(names, unknown_namespace_matches)`: the tool calls (`groups.calls`,
/// in step order) whose tool, or the MCP server's own name for a call a framework qualified
/// (`attributes.mcp_tool`), one of `names` names (`first_match`, answered by the tuple's
/// `NamedBy` kept for the process: `tool_glob::kept`); every call when `names` is empty.
/// Found once per selection and kept in the evidence's memo under
/// `("Evidence.calls_of", names, unknown_namespace_matches)`, so the Python checks and the
/// plans share each selection (the same tuple each time). Before, each ask from a plan was
/// a Python frame (~12,000 a grade) and each selection a Python loop (~3,200); then each
/// selection asked Python's `first_match` once per distinct tool (~9,900 asks a grade).
pub(crate) fn calls_of<'py>(
    evidence: &Bound<'py, PyAny>,
    names: &Bound<'py, PyTuple>,
    unknown_namespace_matches: bool,
) -> PyResult<Bound<'py, PyTuple>> {
    let py = evidence.py();
    if names.is_empty() {
        return every_call(evidence);
    }
    let view = view_of(evidence)?;
    let view = view.get();
    let key = PyTuple::new(
        py,
        [
            intern!(py, "Evidence.calls_of").as_any(),
            names.as_any(),
            PyBool::new(py, unknown_namespace_matches).as_any(),
        ],
    )?;
    let found = memoized(evidence, key.as_any(), || {
        let named = tool_glob::kept(names, first_match(py)?)?;
        let steps = view.calls_named(py, named.get().named(), unknown_namespace_matches)?;
        Ok(PyTuple::new(py, steps)?.into_any())
    })?;
    Ok(found.cast_into::<PyTuple>()?)
}

/// `Evidence.lacking_of(plan)`: `(name, message)` for every evidence name of `plan` (an
/// `evidence.Plan`: its `names`, its core plan `core`, whether that asks `outcomes` and
/// `tool_names`, the `wordings` per position, the Python-probed names `python` with their
/// positions) the trajectory lacks, in position order, made once per plan and kept in the
/// evidence's memo under the plan itself (hashed by identity). The core plan's lacking
/// names are worded by their `wordings` (Python: only when something lacks), the Python
/// names each asked of `evidence.probed` (once per name and trajectory). Asked once per
/// contract and trajectory by `known_clear` (~3,500 times a grade, every one a first ask)
/// and by the checks of a contract whose evidence is not known clear; before, each was the
/// Python method's frame and its ~30 bytecodes, called from `_known_clear`'s frame.
pub(crate) fn lacking_of<'py>(
    evidence: &Bound<'py, PyAny>,
    plan: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyTuple>> {
    let py = evidence.py();
    let memo = memo_of(evidence)?;
    if let Some(found) = memo.get_item(plan)? {
        return Ok(found.cast_into::<PyTuple>()?);
    }
    let names = || PLAN_SLOTS.get(plan, PLAN_NAMES, intern!(py, "names"));
    let mut found: Vec<(usize, Bound<'py, PyAny>, Bound<'py, PyAny>)> = Vec::new();
    let core = PLAN_SLOTS.get(plan, PLAN_CORE, intern!(py, "core"))?;
    if !core.is_none() {
        let core = core.cast_into::<EvidencePlan>()?;
        let view = view_of(evidence)?;
        let answering = if PLAN_SLOTS
            .get(plan, PLAN_OUTCOMES, intern!(py, "outcomes"))?
            .is_truthy()?
        {
            Some(answering(evidence)?.cast_into::<PyFrozenSet>()?)
        } else {
            None
        };
        let fragmented = PLAN_SLOTS
            .get(plan, PLAN_TOOL_NAMES, intern!(py, "tool_names"))?
            .is_truthy()?
            && view.get().nameless.bind(py).is_empty()
            && !fragment_gap(evidence)?.is_none();
        let steps = trajectory_field(evidence, intern!(py, "steps"))?;
        let lacks = core
            .get()
            .lacks(view.get(), &steps, answering.as_ref(), fragmented)?;
        if !lacks.is_empty() {
            let wordings = PLAN_SLOTS.get(plan, PLAN_WORDINGS, intern!(py, "wordings"))?;
            let names = names()?;
            for (pos, read, gaps) in lacks {
                let message = wordings.get_item(pos)?.call1((evidence, read, gaps))?;
                if message.is_truthy()? {
                    found.push((pos, names.get_item(pos)?, message));
                }
            }
        }
    }
    let python = PLAN_SLOTS.get(plan, PLAN_PYTHON, intern!(py, "python"))?;
    if python.is_truthy()? {
        let core_found = !found.is_empty();
        for item in python.try_iter()? {
            let (pos, name): (usize, Bound<'py, PyAny>) = item?.extract()?;
            let message = evidence.call_method1(intern!(py, "probed"), (&name,))?;
            if message.is_truthy()? {
                found.push((pos, name, message));
            }
        }
        if core_found {
            found.sort_by_key(|lack| lack.0);
        }
    }
    let kept = if found.is_empty() {
        PyTuple::empty(py)
    } else {
        PyTuple::new(
            py,
            found
                .into_iter()
                .map(|(_, name, message)| PyTuple::new(py, [name, message]))
                .collect::<PyResult<Vec<_>>>()?,
        )?
    };
    memo.set_item(plan, &kept)?;
    Ok(kept)
}

/// `Evidence.lacking_of` (`lacking_of`), for the Python.
#[pyfunction(name = "lacking_of")]
#[pyo3(signature = (evidence, plan, /))]
fn py_lacking_of<'py>(
    evidence: &Bound<'py, PyAny>,
    plan: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyTuple>> {
    lacking_of(evidence, plan)
}

/// `evaluator._known_clear`: what every check of a contract would ask of the trajectory,
/// asked once per contract: `(clear, gapless)`. `clear`: the trajectory is complete
/// (`incomplete` false: not graded on timeout) and lacks none of the contract's evidence
/// names (`lacking_of(evidence, plan)` empty). `gapless`: it has neither a fragment gap
/// (`Evidence.fragment_gap`, from the memo once made) nor a coverage gap (none without
/// unmapped spans, else `Evidence.coverage_gap`). Either is false when working it out
/// raises anything but `KeyboardInterrupt` (the checks that ask then raise it themselves,
/// each as its own `error` result). Called by `grade` once per contract and trajectory.
#[pyfunction]
#[pyo3(signature = (evidence, plan, incomplete, /))]
fn known_clear(
    evidence: &Bound<'_, PyAny>,
    plan: &Bound<'_, PyAny>,
    incomplete: &Bound<'_, PyAny>,
) -> PyResult<(bool, bool)> {
    let py = evidence.py();
    if incomplete.is_truthy()? {
        return Ok((false, false));
    }
    // A failure is each asking check's own; an interrupt stops the run.
    let settled = |answer: PyResult<bool>| match answer {
        Err(err) if err.is_instance_of::<PyKeyboardInterrupt>(py) => Err(err),
        answer => Ok(answer.unwrap_or(false)),
    };
    let clear = settled(lacking_of(evidence, plan).map(|lacking| lacking.is_empty()))?;
    let gapless = settled((|| {
        if !fragment_gap(evidence)?.is_none() {
            return Ok(false);
        }
        let unmapped = trajectory_field(evidence, intern!(py, "unmapped_spans"))?;
        if !unmapped.is_truthy()? {
            return Ok(true);
        }
        Ok(evidence
            .call_method0(intern!(py, "coverage_gap"))?
            .is_none())
    })())?;
    Ok((clear, gapless))
}

/// `Evidence._answer_calls` (`answer_calls`), for the Python.
#[pyfunction(name = "answer_calls")]
#[pyo3(signature = (evidence, /))]
fn py_answer_calls<'py>(evidence: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    answer_calls(evidence)
}

/// `Evidence.answering` (`answering`), for the Python.
#[pyfunction(name = "answering")]
#[pyo3(signature = (evidence, /))]
fn py_answering<'py>(evidence: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    answering(evidence)
}

/// `Evidence.last_generation` (`last_generation`), for the Python.
#[pyfunction(name = "last_generation")]
#[pyo3(signature = (evidence, /))]
fn py_last_generation<'py>(evidence: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    last_generation(evidence)
}

/// `Evidence.fragment_gap` (`fragment_gap`), for the Python.
#[pyfunction(name = "fragment_gap")]
#[pyo3(signature = (evidence, /))]
fn py_fragment_gap<'py>(evidence: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    fragment_gap(evidence)
}

/// `Evidence.stopped_short` (`stopped_short`), for the Python.
#[pyfunction(name = "stopped_short")]
#[pyo3(signature = (evidence, /))]
fn py_stopped_short<'py>(evidence: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    stopped_short(evidence)
}

/// `Evidence.calls_of` (`calls_of`), for the Python checks.
#[pyfunction(name = "calls_of")]
#[pyo3(signature = (evidence, names, unknown_namespace_matches=false, /))]
fn py_calls_of<'py>(
    evidence: &Bound<'py, PyAny>,
    names: &Bound<'py, PyTuple>,
    unknown_namespace_matches: bool,
) -> PyResult<Bound<'py, PyTuple>> {
    calls_of(evidence, names, unknown_namespace_matches)
}

pub(crate) fn placeholder(value: &Bound<'_, PyAny>, depth: usize) -> PyResult<bool> {
    if value.is_none() {
        return Ok(true);
    }
    if let Ok(text) = value.cast::<PyString>() {
        return Ok(text_is_placeholder(text));
    }
    if depth >= MAX_DEPTH {
        return Err(PyRecursionError::new_err(
            "maximum recursion depth exceeded while checking for a placeholder",
        ));
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        if dict.is_empty() {
            return Ok(false);
        }
        for (_, item) in dict.iter() {
            if !placeholder(&item, depth + 1)? {
                return Ok(false);
            }
        }
        return Ok(true);
    }
    if let Ok(list) = value.cast::<PyList>() {
        if list.is_empty() {
            return Ok(false);
        }
        for item in list.iter() {
            if !placeholder(&item, depth + 1)? {
                return Ok(false);
            }
        }
        return Ok(true);
    }
    Ok(false)
}

/// True for a redaction placeholder or an empty string (content dropped, not content):
/// `None`; a `str` that `otel_oracles_core::placeholder` calls one; a non-empty `dict` whose
/// values, or a non-empty `list` whose items, are all placeholders. An empty `dict` or
/// `list` is a real value (a tool called with no arguments), as is anything else.
#[pyfunction]
fn is_placeholder(value: &Bound<'_, PyAny>) -> PyResult<bool> {
    placeholder(value, 0)
}

/// Which group a step's kind puts it in.
#[derive(Clone, Copy, PartialEq)]
enum Group {
    Call,
    Generation,
    Agent,
    Handoff,
    Other,
}

/// Sorts kinds into groups: the members given (the usual case: a step's kind is the
/// `StepKind` member itself) by identity, anything else as Python compares it (`kind in
/// toolish`, then `kind == generation` ...), so a kind given as its plain string value sorts
/// as its member does.
struct Kinds<'py> {
    toolish: Bound<'py, PyFrozenSet>,
    members: Vec<(Bound<'py, PyAny>, Group)>,
}

impl<'py> Kinds<'py> {
    fn group(&self, kind: &Bound<'py, PyAny>) -> PyResult<Group> {
        if let Some((_, group)) = self.members.iter().find(|(member, _)| member.is(kind)) {
            return Ok(*group);
        }
        if self.toolish.contains(kind)? {
            return Ok(Group::Call);
        }
        for (member, group) in &self.members {
            if *group != Group::Call && kind.eq(member)? {
                return Ok(*group);
            }
        }
        Ok(Group::Other)
    }
}

/// `trace_tools._requesting_turns`: call id -> the index of the model call whose output
/// requested it (a `tool_call` part with a non-empty `str` id), `None` for an id several
/// model calls requested.
fn requesting_turns<'py>(generations: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    let py = generations.py();
    let turns = PyDict::new(py);
    let (output_key, index_key) = (intern!(py, "output_messages"), intern!(py, "index"));
    let (parts_key, type_key, id_key) =
        (intern!(py, "parts"), intern!(py, "type"), intern!(py, "id"));
    for generation in generations.try_iter()? {
        let generation = StepFields::new(generation?);
        let messages = generation.get(output_key)?;
        if !messages.is_truthy()? {
            continue;
        }
        let mut index: Option<Bound<'py, PyAny>> = None;
        for message in messages.try_iter()? {
            let parts = pydict::get(&message?, parts_key)?;
            if !parts.is_truthy()? {
                continue;
            }
            for part in parts.try_iter()? {
                let part = part?;
                if !part.is_instance_of::<PyDict>() {
                    continue;
                }
                let kind = pydict::get(&part, type_key)?;
                let is_call = match kind.cast_exact::<PyString>() {
                    Ok(text) => text.to_cow().is_ok_and(|t| t == "tool_call"),
                    Err(_) => kind.eq(intern!(py, "tool_call"))?,
                };
                if !is_call {
                    continue;
                }
                let call_id = pydict::get(&part, id_key)?;
                if !call_id.is_instance_of::<PyString>() || !call_id.is_truthy()? {
                    continue;
                }
                let at = match &index {
                    Some(at) => at.clone(),
                    None => index.insert(generation.get(index_key)?).clone(),
                };
                let value = match turns.get_item(&call_id)? {
                    Some(known) if !known.eq(&at)? => py.None().into_bound(py),
                    _ => at,
                };
                turns.set_item(&call_id, value)?;
            }
        }
    }
    Ok(turns)
}

/// `trace_tools._repeats`: (call, the previous call of its tool in its agent) for every
/// call of `calls` (sorted by index), leaving out a pair the model asked for together, as
/// `_asked_together` decided it: the later started before the earlier ended; both read
/// from the output of one model call's span that records one turn (`one_turn`: a
/// generation's span without `merged_model_calls`); different call ids requested by the
/// same model call (`requesting_turns`); or the same `requested_in` of such a span. With
/// `after` (a container of `id()`s), only the pairs whose earlier call is in it: `tool_retries`
/// asks only for the repeats of failed calls, so the other pairs are never judged, and the
/// model calls are read (`Turns`) only when a pair first needs them.
#[pyfunction]
#[pyo3(signature = (calls, generations, after=None, /))]
pub(crate) fn tool_repeats<'py>(
    calls: &Bound<'py, PyAny>,
    generations: &Bound<'py, PyAny>,
    after: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    let py = calls.py();
    let mut turns = Turns {
        generations,
        requested: None,
        one_turn: None,
    };
    let (agent_key, tool_key) = (intern!(py, "agent_name"), intern!(py, "tool"));
    let last = PyDict::new(py);
    let out = PyList::empty(py);
    for call in calls.try_iter()? {
        let call = call?;
        let fields = StepFields::new(call.clone());
        let key = PyTuple::new(py, [fields.get(agent_key)?, fields.get(tool_key)?])?;
        if let Some(prev) = last.get_item(&key)? {
            let wanted = match after {
                Some(after) => after.contains(prev.as_ptr() as usize)?,
                None => true,
            };
            if wanted {
                let earlier = StepFields::new(prev.clone());
                if !asked_together(&earlier, &fields, &mut turns)? {
                    out.append(PyTuple::new(py, [call.clone(), prev])?)?;
                }
            }
        }
        last.set_item(key, &call)?;
    }
    Ok(out)
}

/// What `asked_together` reads of the model calls, each read on its first need: most pairs
/// are decided by their own times and ids first.
struct Turns<'a, 'py> {
    generations: &'a Bound<'py, PyAny>,
    /// `requesting_turns(generations)`.
    requested: Option<Bound<'py, PyDict>>,
    /// The span ids of the model calls whose span records one turn.
    one_turn: Option<Bound<'py, PySet>>,
}

impl<'py> Turns<'_, 'py> {
    fn requested(&mut self) -> PyResult<&Bound<'py, PyDict>> {
        if self.requested.is_none() {
            self.requested = Some(requesting_turns(self.generations)?);
        }
        Ok(self.requested.as_ref().expect("made above"))
    }

    fn one_turn(&mut self) -> PyResult<&Bound<'py, PySet>> {
        if self.one_turn.is_none() {
            self.one_turn = Some(one_turn_spans(self.generations)?);
        }
        Ok(self.one_turn.as_ref().expect("made above"))
    }
}

/// The span ids of the model calls of `generations` whose span records one turn (no
/// `merged_model_calls`).
fn one_turn_spans<'py>(generations: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PySet>> {
    let py = generations.py();
    let (source_key, attributes_key) = (intern!(py, "source"), intern!(py, "attributes"));
    let span_key = intern!(py, "span_id");
    let one_turn = PySet::empty(py)?;
    for generation in generations.try_iter()? {
        let generation = StepFields::new(generation?);
        let source = generation.get(source_key)?;
        if source.is_none() {
            continue;
        }
        let merged = pydict::get(
            &generation.get(attributes_key)?,
            intern!(py, "merged_model_calls"),
        )?;
        if !merged.is_truthy()? {
            one_turn.add(source.getattr(span_key)?)?;
        }
    }
    Ok(one_turn)
}

fn asked_together<'py>(
    earlier: &StepFields<'py>,
    later: &StepFields<'py>,
    turns: &mut Turns<'_, 'py>,
) -> PyResult<bool> {
    let py = earlier.step.py();
    let started = later.get(intern!(py, "start_ns"))?;
    let ended = earlier.get(intern!(py, "end_ns"))?;
    if !started.is_none() && !ended.is_none() && started.lt(&ended)? {
        return Ok(true);
    }
    let synthesized = intern!(py, "synthesized");
    if earlier.get(synthesized)?.is_truthy()? && later.get(synthesized)?.is_truthy()? {
        let source_key = intern!(py, "source");
        let (first, second) = (earlier.get(source_key)?, later.get(source_key)?);
        if !first.is_none() && !second.is_none() {
            let span_key = intern!(py, "span_id");
            let span = first.getattr(span_key)?;
            if span.eq(second.getattr(span_key)?)? && turns.one_turn()?.contains(&span)? {
                return Ok(true);
            }
        }
    }
    let call_id_key = intern!(py, "call_id");
    let first_id = earlier.get(call_id_key)?;
    if first_id.is_truthy()? {
        let second_id = later.get(call_id_key)?;
        if second_id.is_truthy()? && first_id.ne(&second_id)? {
            let requested = turns.requested()?;
            let Some(turn) = requested.get_item(&first_id)? else {
                return Ok(false);
            };
            if turn.is_none() {
                return Ok(false);
            }
            return match requested.get_item(&second_id)? {
                Some(other) => turn.eq(other),
                None => turn.eq(py.None()),
            };
        }
    }
    let attributes_key = intern!(py, "attributes");
    let requested_in = intern!(py, "requested_in");
    let asked_in = pydict::get(&earlier.get(attributes_key)?, requested_in)?;
    if asked_in.is_none() {
        return Ok(false);
    }
    Ok(
        asked_in.eq(pydict::get(&later.get(attributes_key)?, requested_in)?)?
            && turns.one_turn()?.contains(&asked_in)?,
    )
}

/// `" ".join(text.split()).casefold()` of a text that is not ASCII, through Python's own
/// methods (its whitespace and case folding).
fn normalized_text_py<'py>(text: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyString>> {
    let py = text.py();
    let joined = intern!(py, " ").call_method1(
        intern!(py, "join"),
        (text.call_method0(intern!(py, "split"))?,),
    )?;
    Ok(joined
        .call_method0(intern!(py, "casefold"))?
        .cast_into::<PyString>()?)
}

/// A hash of a `str` that is a function of its text alone: its UTF-8 bytes'
/// (`screen::bytes_hash`), or, for a text holding a lone surrogate (no UTF-8), Python's own
/// `hash()` of it, mixed (such a text equals no UTF-8 one; a clash of the two kinds only
/// costs a screen).
fn text_hash(text: &Bound<'_, PyString>) -> PyResult<u64> {
    match text.to_str() {
        Ok(chars) => Ok(bytes_hash(chars.as_bytes())),
        Err(_) => Ok(mix64(text.hash()? as u64 ^ 0x5bd1_e995_5bd1_e995)),
    }
}

/// A hash of `" ".join(text.split()).casefold()` without its bytes below `!` (its spaces,
/// and control characters: `core::screen`, a function of the normalized text read eight
/// bytes a step): an ASCII text squeezed natively, any other normalized through Python's
/// methods first. Equal normalized texts hash alike whichever way each was made: a text
/// that is not ASCII may normalize to an ASCII one (`ß` to `ss`), and both hashes are of
/// the normalized text's bytes but those.
fn normalized_hash(text: &Bound<'_, PyString>) -> PyResult<u64> {
    if let Ok(chars) = text.to_str() {
        if chars.is_ascii() {
            return Ok(squeezed_lower_hash(chars.as_bytes()));
        }
    }
    let normalized = normalized_text_py(text)?;
    match normalized.to_str() {
        Ok(chars) => Ok(squeezed_hash(chars.as_bytes())),
        Err(_) => text_hash(&normalized),
    }
}

/// `trace_common` screen of one call: a hash of its effective arguments' normalized
/// top-level strings (spaces and control bytes left out: `normalized_hash`) as a set of `(key, text)` (each
/// pair hashed, the pairs' hashes summed:
/// a set's hash, whatever the order; a dict's keys are distinct, so no pair counts twice),
/// or `None` when they are no plain JSON object (none captured, not an exact `dict`, a key
/// that is no exact `str`, a value not of an exact plain type). Equal sets hash alike; two
/// sets that clash only keep more calls for the full normalization. Made without a Python
/// object per string: the screens were most of what `loop_detected` cost.
fn leaf_screen<'py>(
    step: &Bound<'py, PyAny>,
    meta: &Bound<'py, PyFrozenSet>,
    plain: &[Py<PyAny>],
) -> PyResult<Option<u64>> {
    let py = step.py();
    let fields = StepFields::new(step.clone());
    let arguments = fields.get(intern!(py, "arguments"))?;
    let mut screen: u64 = 0;
    if !arguments.is_none() {
        let Ok(args) = arguments.cast_exact::<PyDict>() else {
            return Ok(None);
        };
        // The dict's own pairs (`PyDict_Next`), no list of item tuples made.
        for (key, value) in args.iter() {
            match pair_screen(&key, &value, plain)? {
                Some(pair) => screen = screen.wrapping_add(pair),
                None => return Ok(None),
            }
        }
        return Ok(Some(screen));
    }
    let raw = fields.get(intern!(py, "raw"))?;
    if raw.is_none() {
        return Ok(None);
    }
    let items = raw.call_method0(intern!(py, "items"))?;
    let items: Vec<Bound<'py, PyAny>> = items.try_iter()?.collect::<PyResult<_>>()?;
    for item in items {
        let (key, value): (Bound<'py, PyAny>, Bound<'py, PyAny>) = item.extract()?;
        if meta.contains(&key)? {
            continue;
        }
        match pair_screen(&key, &value, plain)? {
            Some(pair) => screen = screen.wrapping_add(pair),
            None => return Ok(None),
        }
    }
    Ok(Some(screen))
}

/// One argument's part of `leaf_screen`: the hash of `(key, normalized text)` for a text,
/// 0 for another plain value, `None` when the pair is not plain JSON.
fn pair_screen<'py>(
    key: &Bound<'py, PyAny>,
    value: &Bound<'py, PyAny>,
    plain: &[Py<PyAny>],
) -> PyResult<Option<u64>> {
    let kind = value.get_type();
    let Ok(key) = key.cast_exact::<PyString>() else {
        return Ok(None);
    };
    if !plain.iter().any(|p| p.is(&kind)) {
        return Ok(None);
    }
    match value.cast_exact::<PyString>() {
        Ok(text) => Ok(Some(mix64(
            text_hash(key)?.rotate_left(32) ^ normalized_hash(text)?,
        ))),
        Err(_) => Ok(Some(0)),
    }
}

/// `trace_common.repeated_args_candidates(evidence, calls, threshold)`: the calls of `calls`
/// (in order) that may share normalized arguments with `threshold - 1` other calls of their
/// tool (`candidates`), `meta` and `plain` what the screens read (`ScreenRules`).
#[pyfunction]
fn repeated_args_candidates<'py>(
    evidence: &Bound<'py, PyAny>,
    calls: &Bound<'py, PyAny>,
    threshold: usize,
    meta: Bound<'py, PyFrozenSet>,
    plain: Vec<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    candidates(evidence, calls, threshold, &ScreenRules::new(meta, plain))
}

/// What a call's screen (`leaf_screen`) reads besides the call: the raw step's meta keys
/// (`trace_common.RAW_STEP_META`) and the exact types of a top-level argument value a
/// screen can vouch for (`trace_common._PLAIN_VALUES`), handed to `CheckPlans` once.
pub(crate) struct ScreenRules {
    meta: Py<PyFrozenSet>,
    plain: Vec<Py<PyAny>>,
}

impl ScreenRules {
    pub(crate) fn new(meta: Bound<'_, PyFrozenSet>, plain: Vec<Bound<'_, PyAny>>) -> Self {
        Self {
            meta: meta.unbind(),
            plain: plain.into_iter().map(Bound::unbind).collect(),
        }
    }
}

/// `trace_common.repeated_args_candidates`: the calls of `calls` (in order) that may share
/// normalized arguments with `threshold - 1` other calls of their tool (`loop_detected`'s
/// plan, ~2,500 asks a grade of data-2000, and the Python body). A tool's calls are split
/// by their screens (`leaf_screen`) only when it has `threshold` calls or more; a tool with
/// a call whose arguments are no plain JSON object keeps all its calls.
///
/// Each call's screen is made once per trajectory and kept in the evidence's step view
/// (`StepView::call_screen`, by the call's place among the trajectory's calls), so every
/// loop check of the trajectory, whatever its tools and threshold, reads it there; a step
/// that is none of the trajectory's calls has its screen made each time. The calls are
/// grouped by the tool the view read of them, compared as a `dict` compares its keys (a
/// tool that is neither `None` nor a `str` with UTF-8 text: through a `dict`), and the
/// counts compared as `usize`s: no Python object is made for a call's place, screen or
/// count.
pub(crate) fn candidates<'py>(
    evidence: &Bound<'py, PyAny>,
    calls: &Bound<'py, PyAny>,
    threshold: usize,
    rules: &ScreenRules,
) -> PyResult<Bound<'py, PyList>> {
    let py = evidence.py();
    let view = view_of(evidence)?;
    let view = view.get();
    // A tuple or list read through its own iterator: collecting a Python iterator asks
    // its length hint (a method call) at each growth of the vector.
    let calls: Vec<Bound<'py, PyAny>> = if let Ok(tuple) = calls.cast::<PyTuple>() {
        tuple.iter().collect()
    } else if let Ok(list) = calls.cast::<PyList>() {
        list.iter().collect()
    } else {
        calls.try_iter()?.collect::<PyResult<_>>()?
    };
    let mut places = Vec::with_capacity(calls.len());
    let mut tools = Vec::with_capacity(calls.len());
    let mut next = 0;
    for call in &calls {
        let at = view.call_at(call, next);
        tools.push(match at {
            Some(at) => {
                next = at + 1;
                view.call_tool(py, at).clone()
            }
            None => StepFields::new(call.clone()).get(intern!(py, "tool"))?,
        });
        places.push(at);
    }
    let (meta, plain) = (rules.meta.bind(py), &rules.plain[..]);
    let mut keep = vec![false; calls.len()];
    let mut screens: Vec<u64> = Vec::new();
    for group in by_tool(&tools)? {
        if group.len() < threshold {
            continue;
        }
        screens.clear();
        let mut any_none = false;
        for &at in &group {
            let make = || leaf_screen(&calls[at], meta, plain);
            let screen = match places[at] {
                Some(place) => view.call_screen(place, make)?,
                None => make()?,
            };
            // Every call's screen is made (and kept) even after one that is `None`, as
            // before: the other checks of the trajectory read them.
            match screen {
                Some(screen) => screens.push(screen),
                None => any_none = true,
            }
        }
        if any_none {
            for &at in &group {
                keep[at] = true;
            }
            continue;
        }
        let mut sizes: HashMap<u64, usize> = HashMap::with_capacity(screens.len());
        for &screen in &screens {
            *sizes.entry(screen).or_insert(0) += 1;
        }
        for (&at, screen) in group.iter().zip(&screens) {
            if sizes[screen] >= threshold {
                keep[at] = true;
            }
        }
    }
    PyList::new(
        py,
        calls
            .into_iter()
            .zip(keep)
            .filter_map(|(call, k)| k.then_some(call)),
    )
}

/// The places in `tools` of each tool's calls, grouped as a `dict` keyed by the tool
/// groups them, in first-seen order: `None` and a `str` with UTF-8 text (every tool a
/// trajectory's mapping records) compared in Rust, by identity and by text; when a tool is
/// anything else, every tool through a `dict` (its hash and equality, a `str` subclass
/// equal to a `str` included).
fn by_tool(tools: &[Bound<'_, PyAny>]) -> PyResult<Vec<Vec<usize>>> {
    let mut groups: Vec<(Option<&str>, Vec<usize>)> = Vec::new();
    for (at, tool) in tools.iter().enumerate() {
        let key = if tool.is_none() {
            None
        } else if let Some(text) = tool
            .cast_exact::<PyString>()
            .ok()
            .and_then(|text| text.to_str().ok())
        {
            Some(text)
        } else {
            return by_tool_dict(tools);
        };
        match groups.iter_mut().find(|(seen, _)| *seen == key) {
            Some((_, group)) => group.push(at),
            None => groups.push((key, vec![at])),
        }
    }
    Ok(groups.into_iter().map(|(_, group)| group).collect())
}

/// `by_tool` through a `dict` keyed by the tools.
#[cold]
fn by_tool_dict(tools: &[Bound<'_, PyAny>]) -> PyResult<Vec<Vec<usize>>> {
    let Some(first) = tools.first() else {
        return Ok(Vec::new());
    };
    let by_tool = PyDict::new(first.py());
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (at, tool) in tools.iter().enumerate() {
        match by_tool.get_item(tool)? {
            Some(group) => groups[group.extract::<usize>()?].push(at),
            None => {
                by_tool.set_item(tool, groups.len())?;
                groups.push(vec![at]);
            }
        }
    }
    Ok(groups)
}

/// Why the tool call `fields` failed (`trace_common.call_failure`, the rows of
/// `failures::Failures`' table), or `None` when nothing says it did. Signals, in order: the
/// call was refused by an approval step (`attributes.denied is True`: `denied`, the text
/// given), span status `error` (`status ERROR`, with the `error.type` when one is
/// recorded), `error.type`, an error message (its first 120 characters), and a captured
/// result that says so: a `dict` with a truthy `error`, or one matching the check's error
/// pattern. Under no pattern or the default one (`structured_plain`) a result that is no
/// `str` matches when it is a non-empty `dict` whose first key is the `str` `"error"` (what
/// the default pattern finds at the start of its JSON text), so it is never serialized;
/// whether the result was captured (`absent`) is then asked only of a `dict` that says the
/// call failed. Otherwise (`pattern`: the pattern is not empty) `search(step)` says whether
/// the pattern matches the result's text (the `regex` engine's answer, under its time
/// budget, in Python).
pub(crate) fn call_failure<'py>(
    fields: &StepFields<'py>,
    pattern: bool,
    structured_plain: bool,
    search: &mut impl FnMut(&Bound<'py, PyAny>) -> PyResult<bool>,
    denied: &Bound<'py, PyString>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = fields.step.py();
    let attributes = fields.get(intern!(py, "attributes"))?;
    if pydict::get(&attributes, intern!(py, "denied"))?.is(PyBool::new(py, true).as_any()) {
        return Ok(Some(denied.clone().into_any()));
    }
    let error_type = fields.get(intern!(py, "error_type"))?;
    let typed = error_type.is_truthy()?;
    if fields
        .get(intern!(py, "status"))?
        .eq(intern!(py, "error"))?
    {
        let status = intern!(py, "status ERROR").clone().into_any();
        if !typed {
            return Ok(Some(status));
        }
        return Ok(Some(status.add(" (")?.add(error_type)?.add(")")?));
    }
    if typed {
        return Ok(Some(intern!(py, "error.type ").add(error_type)?));
    }
    let message = fields.get(intern!(py, "error_message"))?;
    if message.is_truthy()? {
        let head = message.get_item(PySlice::new(py, 0, 120, 1))?;
        return Ok(Some(intern!(py, "exception: ").add(head)?));
    }
    let result = fields.get(intern!(py, "result"))?;
    let carries = intern!(py, "result carries an error");
    let matches = intern!(py, "result matches the error pattern");
    let error = intern!(py, "error");
    let is_dict = result.is_instance_of::<PyDict>();
    if structured_plain && !result.is_instance_of::<PyString>() {
        if !is_dict {
            return Ok(None);
        }
        let why = if pydict::get(&result, error)?.is_truthy()? {
            carries
        } else if pattern && first_key_is(&result, error)? {
            matches
        } else {
            return Ok(None);
        };
        return Ok(if absent_result(fields, &result)? {
            None
        } else {
            Some(why.clone().into_any())
        });
    }
    if absent_result(fields, &result)? {
        return Ok(None);
    }
    if is_dict && pydict::get(&result, error)?.is_truthy()? {
        return Ok(Some(carries.clone().into_any()));
    }
    if pattern && search(&fields.step)? {
        return Ok(Some(matches.clone().into_any()));
    }
    Ok(None)
}

/// `absent(step, "result")`: `"result"` in the step's `redacted`, or the result a
/// placeholder.
fn absent_result<'py>(fields: &StepFields<'py>, result: &Bound<'py, PyAny>) -> PyResult<bool> {
    let py = result.py();
    Ok(fields
        .get(intern!(py, "redacted"))?
        .contains(intern!(py, "result"))?
        || placeholder(result, 0)?)
}

/// Whether `value` (a `dict`) is non-empty and its first key (`next(iter(value))`) is the
/// `str` `key`.
fn first_key_is<'py>(value: &Bound<'py, PyAny>, key: &Bound<'py, PyString>) -> PyResult<bool> {
    if !value.is_truthy()? {
        return Ok(false);
    }
    match value.try_iter()?.next() {
        Some(first) => {
            let first = first?;
            Ok(first.is_instance_of::<PyString>() && first.eq(key)?)
        }
        None => Ok(false),
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(is_placeholder, m)?)?;
    m.add_function(wrap_pyfunction!(py_calls_of, m)?)?;
    m.add_function(wrap_pyfunction!(py_answer_calls, m)?)?;
    m.add_function(wrap_pyfunction!(py_answering, m)?)?;
    m.add_function(wrap_pyfunction!(py_last_generation, m)?)?;
    m.add_function(wrap_pyfunction!(py_fragment_gap, m)?)?;
    m.add_function(wrap_pyfunction!(py_stopped_short, m)?)?;
    m.add_function(wrap_pyfunction!(py_lacking_of, m)?)?;
    m.add_function(wrap_pyfunction!(known_clear, m)?)?;
    view::register(m)?;
    messages::register(m)?;
    naming::register(m)?;
    probes::register(m)?;
    citations::register(m)?;
    sequence::register(m)?;
    m.add_function(wrap_pyfunction!(tool_repeats, m)?)?;
    m.add_function(wrap_pyfunction!(repeated_args_candidates, m)?)
}
