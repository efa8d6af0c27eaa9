//! Why each tool call of a trajectory failed, one table per trajectory and error pattern
//! (`trace_common.call_failures`, `failed_calls` and `call_failure`, which are these).
//! `tool_errors`, `tool_retries` and `degraded_answer` of every contract ask the same of the
//! same calls, most of them with the default pattern, so the table is made on the first ask
//! and kept in the evidence's memo (`Evidence.memoized`'s table, under the keys the Python
//! used: `("call_failures", pattern)`, every call's answer, and `("failed_calls",
//! pattern)`, the calls that failed). The plans read it without a Python frame; before,
//! each ask was two Python frames (`failed_calls`, `memoized`) and each table eight more
//! around the core's judging of the calls.
//!
//! A call's answer is `evidence::call_failure`'s; only a search of a pattern other than
//! the default one in a result's text runs Python (`search`, under `safe_regex`'s budget).

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use crate::evidence::{call_failure, memoized, view_of};
use crate::pydict::StepFields;

/// How a call's failure is judged: the pieces of `trace_common` the judging reads.
pub(crate) struct Failures {
    /// `trace_common._matches(evidence, step, pattern)`: whether `pattern` matches the
    /// step's result text (made once per step).
    search: Py<PyAny>,
    /// `trace_common.DENIED`: why a call an approval step refused did not run.
    denied: Py<PyString>,
    /// `trace_common.DEFAULT_ERROR_PATTERN`.
    default: Py<PyString>,
}

impl Failures {
    pub(crate) fn new(
        search: Bound<'_, PyAny>,
        denied: Bound<'_, PyString>,
        default: Bound<'_, PyString>,
    ) -> Self {
        Self {
            search: search.unbind(),
            denied: denied.unbind(),
            default: default.unbind(),
        }
    }

    /// `trace_common.DENIED`.
    pub(crate) fn denied<'py>(&self, py: Python<'py>) -> &Bound<'py, PyString> {
        self.denied.bind(py)
    }

    /// `failed_calls(evidence, pattern)`: `id()` of each call of the trajectory that failed
    /// -> why, in step order (empty in most runs), made once per pattern.
    pub(crate) fn failed<'py>(
        &self,
        evidence: &Bound<'py, PyAny>,
        pattern: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let py = evidence.py();
        let key = memo_key(py, intern!(py, "failed_calls"), pattern)?;
        let failed = memoized(evidence, &key, || {
            let failed = PyDict::new(py);
            for (call, why) in self.table(evidence, pattern)?.iter() {
                if !why.is_none() {
                    failed.set_item(call, why)?;
                }
            }
            Ok(failed.into_any())
        })?;
        Ok(failed.cast_into::<PyDict>()?)
    }

    /// `call_failures(evidence, pattern)`: `id()` of each call of the trajectory
    /// (`evidence.groups.calls`) -> why it failed, or `None`, made once per pattern.
    pub(crate) fn every<'py>(
        &self,
        evidence: &Bound<'py, PyAny>,
        pattern: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        self.table(evidence, pattern)
    }

    /// `call_failure(evidence, step, pattern)`: the table's answer for a call of the
    /// trajectory, else `step` judged on its own (a step from elsewhere).
    pub(crate) fn of<'py>(
        &self,
        evidence: &Bound<'py, PyAny>,
        step: Bound<'py, PyAny>,
        pattern: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let table = self.every(evidence, pattern)?;
        if let Some(why) = table.get_item(step.as_ptr() as usize)? {
            return Ok(why);
        }
        let py = evidence.py();
        let mode = self.mode(pattern)?;
        let judged = self.judge(evidence, &StepFields::new(step), pattern, mode)?;
        Ok(judged.unwrap_or_else(|| py.None().into_bound(py)))
    }

    /// The table of `pattern` (`("call_failures", pattern)` in the evidence's memo), made
    /// on its first ask.
    fn table<'py>(
        &self,
        evidence: &Bound<'py, PyAny>,
        pattern: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let py = evidence.py();
        let key = memo_key(py, intern!(py, "call_failures"), pattern)?;
        let table = memoized(evidence, &key, || {
            let view = view_of(evidence)?;
            let calls = view.get().calls.bind(py);
            let mode = self.mode(pattern)?;
            let table = PyDict::new(py);
            for call in calls.iter() {
                // `id(call)`: the object's address, as CPython's `id` gives it. (A step's
                // `id()` cannot name another live step, and the trajectory keeps its steps
                // alive while the evidence exists.)
                let id = call.as_ptr() as usize;
                let why = self.judge(evidence, &StepFields::new(call), pattern, mode)?;
                table.set_item(id, why)?;
            }
            Ok(table.into_any())
        })?;
        Ok(table.cast_into::<PyDict>()?)
    }

    /// How `pattern` is searched, decided once per table: `(given, plain)`, whether a
    /// pattern is given (not empty) and whether it is none or the default one (a
    /// structured result then judged without its text). The comparison with the default
    /// is a Python `==` (the pattern may be any object a check was given).
    fn mode(&self, pattern: &Bound<'_, PyAny>) -> PyResult<(bool, bool)> {
        let given = pattern.is_truthy()?;
        let plain = !given || pattern.eq(self.default.bind(pattern.py()))?;
        Ok((given, plain))
    }

    /// Why the call `fields` failed under `pattern` (`evidence::call_failure`), searched as
    /// `mode` (`Failures::mode`) says.
    fn judge<'py>(
        &self,
        evidence: &Bound<'py, PyAny>,
        fields: &StepFields<'py>,
        pattern: &Bound<'py, PyAny>,
        (given, plain): (bool, bool),
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = evidence.py();
        let search = self.search.bind(py);
        let mut matches = |step: &Bound<'py, PyAny>| -> PyResult<bool> {
            search.call1((evidence, step, pattern))?.is_truthy()
        };
        call_failure(fields, given, plain, &mut matches, self.denied.bind(py))
    }
}

/// The memo key `(name, pattern)`, as the Python callers of `Evidence.memoized` wrote it.
fn memo_key<'py>(
    py: Python<'py>,
    name: &Bound<'py, PyString>,
    pattern: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, [name.clone().into_any(), pattern.clone()])
}
