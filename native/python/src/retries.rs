//! `tool_retries`' retries (`CheckPlans.find_retries`, `trace_tools.find_retries`): a call
//! of a tool within the same agent whose previous call of that tool failed, unless the two
//! were asked for together (`evidence::tool_repeats`). Found once per trajectory, tools and
//! error pattern, in the evidence's memo (`Evidence.memoized`'s table, under the key the
//! Python used, `("retries", tools, error_pattern)`), from the repeats of the failed calls
//! found once per trajectory and pattern (`("repeats", error_pattern)`): each `tools` only
//! asks which of them it counts. Before, each was a Python frame or three per check
//! (`find_retries`, `memoized`, `_retries`, `_repeats`), on ~1,300 runs with failed calls a
//! grade of data-2000.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyTuple};

use crate::evidence::{self, memoized, tool_repeats};
use crate::failures::Failures;
use crate::pydict::{self, StepFields};

/// `(retry, failed call it repeats, why that call failed)` for the calls of `tools` (every
/// call when empty; `calls_of(tools, True)`) failed under `error_pattern`
/// (`failed_calls(evidence, error_pattern)`, the helper's memoized table), memoized.
pub(crate) fn find_retries<'py>(
    evidence: &Bound<'py, PyAny>,
    tools: &Bound<'py, PyAny>,
    error_pattern: &Bound<'py, PyAny>,
    failures: &Failures,
) -> PyResult<Bound<'py, PyTuple>> {
    let py = evidence.py();
    let key = PyTuple::new(
        py,
        [
            intern!(py, "retries").clone().into_any(),
            tools.clone(),
            error_pattern.clone(),
        ],
    )?;
    let found = memoized(evidence, key.as_any(), || {
        Ok(retries(evidence, tools, error_pattern, failures)?.into_any())
    })?;
    Ok(found.cast_into::<PyTuple>()?)
}

/// `_retries`: the repeats whose earlier call failed (and was not refused), the later
/// call one of `tools`' calls.
fn retries<'py>(
    evidence: &Bound<'py, PyAny>,
    tools: &Bound<'py, PyAny>,
    error_pattern: &Bound<'py, PyAny>,
    failures: &Failures,
) -> PyResult<Bound<'py, PyTuple>> {
    let py = evidence.py();
    let failed = failures.failed(evidence, error_pattern)?;
    if failed.is_empty() {
        // No call failed (most trajectories): nothing to retry, no pairs needed.
        return Ok(PyTuple::empty(py));
    }
    let key = PyTuple::new(
        py,
        [
            intern!(py, "repeats").clone().into_any(),
            error_pattern.clone(),
        ],
    )?;
    let repeats = memoized(evidence, key.as_any(), || {
        Ok(repeats_of(evidence, &failed)?.into_any())
    })?;
    let chosen: Option<Vec<usize>> = if tools.is_truthy()? {
        let calls = evidence::calls_of(evidence, tools.cast::<PyTuple>()?, true)?;
        let mut ids = Vec::with_capacity(calls.len());
        for call in calls.iter() {
            ids.push(call.as_ptr() as usize);
        }
        ids.sort_unstable();
        Some(ids)
    } else {
        None
    };
    let mut out = Vec::new();
    for pair in repeats.try_iter()? {
        let (call, prev): (Bound<'py, PyAny>, Bound<'py, PyAny>) = pair?.extract()?;
        let Some(why) = failed.get_item(prev.as_ptr() as usize)? else {
            continue;
        };
        if why.is_none() || denied(&prev)? {
            continue; // a refusal is no failure to retry
        }
        let id = call.as_ptr() as usize;
        let wanted = match &chosen {
            Some(ids) => ids.binary_search(&id).is_ok(),
            None => true,
        };
        if wanted {
            out.push(PyTuple::new(py, [call, prev, why])?);
        }
    }
    PyTuple::new(py, out)
}

/// `_repeats(evidence, failed)`: `tool_repeats` of every call sorted by index, the model
/// calls, and `failed` (only the pairs whose earlier call failed).
fn repeats_of<'py>(
    evidence: &Bound<'py, PyAny>,
    failed: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyList>> {
    let py = evidence.py();
    let groups = evidence::view_of(evidence)?;
    let calls = groups.get().calls.bind(py).clone();
    // `sorted(calls, key=attrgetter("index"))`: stable; a `Step`'s index is an `int`.
    let mut sorted = Vec::with_capacity(calls.len());
    for call in calls.iter() {
        let index: i128 = StepFields::new(call.clone())
            .get(intern!(py, "index"))?
            .extract()?;
        sorted.push((index, call));
    }
    sorted.sort_by_key(|(index, _)| *index);
    let sorted = PyList::new(py, sorted.into_iter().map(|(_, call)| call))?;
    let generations = groups.getattr(intern!(py, "generations"))?;
    tool_repeats(sorted.as_any(), &generations, Some(failed.as_any()))
}

/// `trace_common.is_denied`: `step.attributes.get("denied") is True`.
fn denied(step: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = step.py();
    let attributes = StepFields::new(step.clone()).get(intern!(py, "attributes"))?;
    let denied = pydict::get(&attributes, intern!(py, "denied"))?;
    Ok(denied.is(&*PyBool::new(py, true)))
}
