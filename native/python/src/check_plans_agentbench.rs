//! The usual answers of three AgentBench checks, decided in the core beside
//! `check_plans.rs`' (run by the same `CheckPlan`, its `Kind::Bench`):
//!
//! - `no_network`: no scanned step holds a network pattern (the core's own search,
//!   `PatternSearch.violations`, asked directly) and the trace recorded no outbound
//!   request: `no network access in {n} steps`;
//! - `file_not_modified`: the file is the task's, no recorded edit wrote it, and no call
//!   replay did not apply names it: `{path} was never touched`;
//! - `assertion_exists`: no call replay did not apply may have written the file, and the
//!   in-memory replay holds no such file: `{path} does not exist in the replayed
//!   workspace`.
//!
//! Anything else (a violation or request found, an edit of the file, a call that may name
//! or write it, a file replayed, a replay on disk, no workspace) is "not handled" (`None`)
//! and the oracle's Python body decides, so each answer has one implementation.
//!
//! A call "may name" the file when one of its input strings (its arguments' string values
//! at any depth, its raw arguments, command and path: `_workspace._step_inputs`) holds the
//! file's name or a glob character (`*`, `?`): only such a text can name it
//! (`_workspace._text_names`). For `assertion_exists` a call whose shell command holds a
//! quote or a backslash may write a path its text does not spell, so it is left to Python
//! too; an unquoted command's written paths are pieces of it (`_workspace._may_name`). The
//! texts are the trace's: one Rust's text cannot hold (a lone surrogate) or arguments
//! nested past [`MAX_DEPTH`] leave the answer to Python.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use crate::check_plans::{found, joined};
use crate::evidence::view_of;
use crate::pydict::StepFields;
use crate::slots::SlotClass;

/// Deepest nesting of a call's arguments searched here; deeper ones are Python's to walk
/// (its recursion may refuse them, and the check's result says so).
const MAX_DEPTH: usize = 64;

/// A plan of this module, by check.
pub(crate) enum Bench {
    /// `no_network`.
    NoNetwork(NoNetwork),
    /// `file_not_modified`.
    Untouched(Untouched),
    /// `assertion_exists`.
    Asserted(Asserted),
}

impl Bench {
    /// `no_network`'s plan: `search` (its patterns' `PatternSearch`) and what its
    /// `violations` is given (`Trajectory.find_network_violations`), and the evidence's
    /// outbound requests (`network.outbound_requests`).
    pub(crate) fn no_network(
        search: Bound<'_, PyAny>,
        scan: &Bound<'_, PyTuple>,
        outbound: Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let (fields, toolish, fallback, digits) = scan.extract()?;
        Ok(Self::NoNetwork(NoNetwork {
            search: search.unbind(),
            fields,
            toolish,
            fallback,
            digits,
            outbound: outbound.unbind(),
        }))
    }

    /// `file_not_modified`'s plan for `path` (as given), `target` (normalized) and `name`
    /// (its last component); `file_edit` is `StepKind.FILE_EDIT`.
    pub(crate) fn file_not_modified(
        path: Bound<'_, PyString>,
        target: Bound<'_, PyString>,
        name: &Bound<'_, PyString>,
        file_edit: Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let py = path.py();
        let message = joined(
            py,
            [
                path.into_any(),
                intern!(py, " was never touched").clone().into_any(),
            ],
        )?;
        Ok(Self::Untouched(Untouched {
            file: File::new(target, name, file_edit)?,
            message: message.unbind(),
        }))
    }

    /// `assertion_exists`' plan for `path` (as given), `target` (normalized) and `name`
    /// (its last component); `file_edit` is `StepKind.FILE_EDIT`, `command_keys`
    /// `COMMAND_KEYS`.
    pub(crate) fn assertion_exists(
        path: Bound<'_, PyString>,
        target: Bound<'_, PyString>,
        name: &Bound<'_, PyString>,
        file_edit: Bound<'_, PyAny>,
        command_keys: Bound<'_, PyTuple>,
    ) -> PyResult<Self> {
        let py = path.py();
        let suffix = intern!(py, " does not exist in the replayed workspace");
        let message = joined(py, [path.clone().into_any(), suffix.clone().into_any()])?;
        Ok(Self::Asserted(Asserted {
            file: File::new(target, name, file_edit)?,
            path: path.unbind(),
            command_keys: command_keys.unbind(),
            message: message.unbind(),
        }))
    }

    /// The check's usual answer on `ctx` (its `evidence` read), else `None`.
    pub(crate) fn run<'py>(
        &self,
        ctx: &Bound<'py, PyAny>,
        evidence: &Bound<'py, PyAny>,
        finding: &Py<SlotClass>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self {
            Self::NoNetwork(plan) => plan.run(ctx, evidence, finding),
            Self::Untouched(plan) => plan.run(ctx, evidence, finding),
            Self::Asserted(plan) => plan.run(ctx, evidence, finding),
        }
    }
}

/// `no_network`'s plan (see the module's text).
pub(crate) struct NoNetwork {
    search: Py<PyAny>,
    fields: Py<PyAny>,
    toolish: Py<PyAny>,
    fallback: Py<PyAny>,
    /// `sys.get_int_max_str_digits` (asked on every run, as the Python body did).
    digits: Py<PyAny>,
    outbound: Py<PyAny>,
}

impl NoNetwork {
    fn run<'py>(
        &self,
        ctx: &Bound<'py, PyAny>,
        evidence: &Bound<'py, PyAny>,
        finding: &Py<SlotClass>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = ctx.py();
        let steps = ctx
            .getattr(intern!(py, "trajectory"))?
            .getattr(intern!(py, "steps"))?;
        let hits = self.search.bind(py).call_method1(
            intern!(py, "violations"),
            (
                &steps,
                self.fields.bind(py),
                self.digits.bind(py).call0()?,
                self.toolish.bind(py),
                self.fallback.bind(py),
            ),
        )?;
        if hits.is_truthy()? {
            return Ok(None); // a violation: the Python body words it
        }
        let count = steps.len()?;
        // An outbound request is a step of the `other` kind: a trajectory whose steps are
        // all calls, model calls, agents and handoffs (the view's groups) records none.
        let view = view_of(evidence)?;
        let mut grouped = 0;
        for group in [
            intern!(py, "calls"),
            intern!(py, "generations"),
            intern!(py, "agents"),
            intern!(py, "handoffs"),
        ] {
            grouped += view.getattr(group)?.len()?;
        }
        if grouped != count && self.outbound.bind(py).call1((evidence,))?.is_truthy()? {
            return Ok(None);
        }
        let message = format!("no network access in {count} steps");
        let empty = PyTuple::empty(py).into_any();
        found(
            finding,
            intern!(py, "pass"),
            PyString::new(py, &message),
            PyDict::new(py),
            [empty.clone(), empty],
            0,
            false,
        )
        .map(Some)
    }
}

/// The file a workspace check judges: its normalized path, its name and what tells a
/// recorded edit.
struct File {
    target: Py<PyString>,
    /// The last component of `target` (`posixpath.basename`), as UTF-8.
    name: String,
    file_edit: Py<PyAny>,
}

/// What the calls replay did not apply may have done to a file, as far as the core tells.
enum Hidden {
    /// No recorded edit wrote the file, and no other call may have.
    Untouched,
    /// No other call after the last recorded edit of the file may have written it.
    AfterEdits,
    /// Python decides (an edit of the file for `file_not_modified`, a call that may name
    /// or write it, a text Rust cannot read).
    Unknown,
}

impl File {
    fn new(
        target: Bound<'_, PyString>,
        name: &Bound<'_, PyString>,
        file_edit: Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        Ok(Self {
            target: target.unbind(),
            // (A contract's name Rust's text cannot hold: every call "may name" it.)
            name: name.to_str().map_or_else(|_| String::new(), str::to_owned),
            file_edit: file_edit.unbind(),
        })
    }

    /// Whether `ctx.has_workspace` (its property, as the Python body asks it).
    fn has_workspace(ctx: &Bound<'_, PyAny>) -> PyResult<bool> {
        ctx.getattr(intern!(ctx.py(), "has_workspace"))?.is_truthy()
    }

    /// The trace-derived calls (no `raw`) that are no recorded edit (`file_edit` with a
    /// path), after the file's last recorded edit (by index, `_unreplayed_steps`), each
    /// asked `may` (a final-answer call is asked too, which only leaves more to Python).
    /// A recorded edit of the file is `Unknown` unless `edits_judged` (the check then
    /// judges the replayed file).
    fn hidden<'py>(
        &self,
        evidence: &Bound<'py, PyAny>,
        edits_judged: bool,
        may: impl Fn(&StepFields<'py>) -> PyResult<bool>,
    ) -> PyResult<Hidden> {
        let py = evidence.py();
        let calls = view_of(evidence)?.getattr(intern!(py, "calls"))?;
        let calls = calls.cast::<PyTuple>()?;
        let (kind_key, path_key) = (intern!(py, "kind"), intern!(py, "path"));
        let (raw_key, index_key) = (intern!(py, "raw"), intern!(py, "index"));
        let (target, file_edit) = (self.target.bind(py), self.file_edit.bind(py));
        let mut last: Option<Bound<'py, PyAny>> = None;
        let mut steps = Vec::with_capacity(calls.len());
        for step in calls.iter() {
            let fields = StepFields::new(step);
            let kind = fields.get(kind_key)?;
            if kind.is(file_edit) || kind.eq(file_edit)? {
                let path = fields.get(path_key)?;
                if path.is_truthy()? {
                    // A recorded edit, which replay applied.
                    if path.eq(target)? {
                        if !edits_judged {
                            return Ok(Hidden::Unknown);
                        }
                        let index = fields.get(index_key)?;
                        if match &last {
                            Some(last) => index.gt(last)?,
                            None => true,
                        } {
                            last = Some(index);
                        }
                    }
                    continue;
                }
            }
            if !fields.get(raw_key)?.is_none() {
                continue; // an AgentBench step: only file edits change files there
            }
            steps.push((fields.get(index_key)?, fields));
        }
        for (index, fields) in &steps {
            if let Some(last) = &last {
                if !index.gt(last)? {
                    continue;
                }
            }
            if may(fields)? {
                return Ok(Hidden::Unknown);
            }
        }
        Ok(if last.is_some() {
            Hidden::AfterEdits
        } else {
            Hidden::Untouched
        })
    }

    /// Whether `text` may name the file: it holds its name or a glob character, or is
    /// no `str` Rust reads. The glob characters are ASCII, whose bytes stand for nothing
    /// else in UTF-8: they are searched as bytes (`[u8]::contains`, a word at a time), not
    /// as characters decoded one by one (`str::contains` of a `char` array: ~20 M
    /// instructions over data-2000's call inputs, which hold the files written).
    fn may_name(&self, text: &Bound<'_, PyAny>) -> bool {
        let Ok(text) = text.cast::<PyString>() else {
            return true;
        };
        match text.to_str() {
            Ok(text) => {
                let bytes = text.as_bytes();
                self.name.is_empty()
                    || text.contains(self.name.as_str())
                    || bytes.contains(&b'*')
                    || bytes.contains(&b'?')
            }
            Err(_) => true,
        }
    }

    /// Whether an input of `step` (`_step_inputs`) may name the file.
    fn inputs_may_name(&self, py: Python<'_>, step: &StepFields<'_>) -> PyResult<bool> {
        if self.value_may_name(&step.get(intern!(py, "arguments"))?, 0)? {
            return Ok(true);
        }
        for key in [
            intern!(py, "arguments_raw"),
            intern!(py, "command"),
            intern!(py, "path"),
        ] {
            let text = step.get(key)?;
            if text.is_truthy()? && self.may_name(&text) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether a string inside `value` (`_collect_strings`: the `str`s of dicts' values,
    /// lists and tuples at any depth) may name the file.
    fn value_may_name(&self, value: &Bound<'_, PyAny>, depth: usize) -> PyResult<bool> {
        if depth > MAX_DEPTH {
            return Ok(true);
        }
        if value.is_instance_of::<PyString>() {
            return Ok(self.may_name(value));
        }
        if let Ok(dict) = value.cast::<PyDict>() {
            for item in dict.values() {
                if self.value_may_name(&item, depth + 1)? {
                    return Ok(true);
                }
            }
        } else if let Ok(list) = value.cast::<PyList>() {
            for item in list.iter() {
                if self.value_may_name(&item, depth + 1)? {
                    return Ok(true);
                }
            }
        } else if let Ok(tuple) = value.cast::<PyTuple>() {
            for item in tuple.iter() {
                if self.value_may_name(&item, depth + 1)? {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }
}

/// `file_not_modified`'s plan (see the module's text).
pub(crate) struct Untouched {
    file: File,
    /// `"{path} was never touched"`.
    message: Py<PyString>,
}

impl Untouched {
    fn run<'py>(
        &self,
        ctx: &Bound<'py, PyAny>,
        evidence: &Bound<'py, PyAny>,
        finding: &Py<SlotClass>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = ctx.py();
        if !File::has_workspace(ctx)? {
            return Ok(None);
        }
        // The task's file, its key as normalized (a key written otherwise, or none: the
        // Python body normalizes every key, or says the task names no such file).
        let initial = ctx.getattr(intern!(py, "initial_workspace"))?;
        let Ok(initial) = initial.cast::<PyDict>() else {
            return Ok(None);
        };
        if !initial.contains(self.file.target.bind(py))? {
            return Ok(None);
        }
        let file = &self.file;
        let hidden = file.hidden(evidence, false, |step| file.inputs_may_name(py, step))?;
        if !matches!(hidden, Hidden::Untouched) {
            return Ok(None);
        }
        let empty = PyTuple::empty(py).into_any();
        found(
            finding,
            intern!(py, "pass"),
            self.message.bind(py).clone(),
            PyDict::new(py),
            [empty.clone(), empty],
            0,
            false,
        )
        .map(Some)
    }
}

/// `assertion_exists`' plan (see the module's text).
pub(crate) struct Asserted {
    file: File,
    path: Py<PyString>,
    command_keys: Py<PyTuple>,
    /// `"{path} does not exist in the replayed workspace"`.
    message: Py<PyString>,
}

impl Asserted {
    fn run<'py>(
        &self,
        ctx: &Bound<'py, PyAny>,
        evidence: &Bound<'py, PyAny>,
        finding: &Py<SlotClass>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = ctx.py();
        if !File::has_workspace(ctx)? {
            return Ok(None);
        }
        let file = &self.file;
        let hidden = file.hidden(evidence, true, |step| {
            Ok(file.inputs_may_name(py, step)? || !self.plain_command(py, step)?)
        })?;
        if matches!(hidden, Hidden::Unknown) {
            return Ok(None);
        }
        let path = self.path.bind(py);
        let replayed = ctx.call_method1(intern!(py, "replayed_file"), (path, path))?;
        let (known, data): (bool, Bound<'py, PyAny>) = replayed.extract()?;
        if !known || !data.is_none() {
            return Ok(None); // on disk, or a file the pattern is searched in: Python's
        }
        let empty = PyTuple::empty(py).into_any();
        found(
            finding,
            intern!(py, "fail"),
            self.message.bind(py).clone(),
            PyDict::new(py),
            [empty.clone(), empty],
            0,
            true,
        )
        .map(Some)
    }

    /// `_workspace._plain_command`: the step ran no shell command (`_step_command`: its
    /// `command`, else a non-empty `str` under one of `COMMAND_KEYS` of its arguments), or
    /// one without quotes or backslashes. A value Rust does not read is not plain.
    fn plain_command(&self, py: Python<'_>, step: &StepFields<'_>) -> PyResult<bool> {
        let mut command = step.get(intern!(py, "command"))?;
        if !command.is_truthy()? {
            let arguments = step.get(intern!(py, "arguments"))?;
            if arguments.is_none() {
                return Ok(true);
            }
            let Ok(arguments) = arguments.cast::<PyDict>() else {
                return Ok(false);
            };
            let mut given = None;
            for key in self.command_keys.bind(py).iter() {
                if let Some(value) = arguments.get_item(key)? {
                    if value.is_instance_of::<PyString>() && value.is_truthy()? {
                        given = Some(value);
                        break;
                    }
                }
            }
            let Some(value) = given else {
                return Ok(true);
            };
            command = value;
        }
        let Ok(command) = command.cast::<PyString>() else {
            return Ok(false);
        };
        Ok(command
            .to_str()
            .is_ok_and(|text| !text.contains(['\'', '"', '\\'])))
    }
}
