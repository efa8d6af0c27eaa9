//! The step filters of the evidence probes (`otel_oracles.grade.evidence.PROBES`): which
//! steps lack what a probe asks for (`probe_gaps`), in one call per probe and trajectory.
//!
//! Each probe was a Python comprehension over the trajectory's tool calls or model calls,
//! each step costing an `absent` call (a `redacted` lookup, an attribute read, the core's
//! placeholder test), the scope's tool-name match and a few more attribute reads: the
//! usual trajectory lacks nothing, so all of that was spent to find no step. Here the same
//! conditions are read through the C API in the order Python evaluated them, and only the
//! steps found go back to Python, which words the message (`list_steps`) as before.

use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFrozenSet, PyList, PyString, PyTuple};

use crate::pydict;

use super::{placeholder, StepFields};

/// What a probe asks of each step it reads.
#[derive(Clone, Copy, PartialEq)]
enum Probe {
    /// `tool_arguments`: arguments not captured, neither as a dict nor as raw text.
    Arguments,
    /// `tool_results`: result not captured on a call that did not fail.
    Result,
    /// `tool_outcomes`: no failure status, and no captured result to read one from.
    Outcomes,
    /// `tool_inputs`: neither arguments, nor a command, nor a path.
    Inputs,
    /// `token_usage`: input or output tokens not recorded (Python then sets aside the calls
    /// the model API refused, `refused_model_call`).
    Tokens,
    /// `file_edits`: a trace-derived file edit without its path or content.
    FileEdits,
}

impl Probe {
    fn named(name: &str) -> PyResult<Self> {
        Ok(match name {
            "arguments" => Probe::Arguments,
            "result" => Probe::Result,
            "outcomes" => Probe::Outcomes,
            "inputs" => Probe::Inputs,
            "tokens" => Probe::Tokens,
            "file_edits" => Probe::FileEdits,
            _ => return Err(PyValueError::new_err(format!("no probe named {name:?}"))),
        })
    }
}

/// `absent(step, name)`: `name` listed in the step's `redacted`, or its value a placeholder.
fn absent<'py>(
    fields: &StepFields<'py>,
    redacted: &Bound<'py, PyAny>,
    name: &Bound<'py, PyString>,
) -> PyResult<bool> {
    Ok(redacted.contains(name)? || placeholder(&fields.get(name)?, 0)?)
}

/// Whether a call's arguments were captured as text that is no JSON object (a repr,
/// `arguments_raw`): evidence of a kind, unless it is empty, a placeholder, or flagged as not
/// captured (`arguments` in `redacted`: a value a length limit cut, `mapping/_limits.py`,
/// kept as text for the scans, never whole).
fn raw_arguments_captured<'py>(
    fields: &StepFields<'py>,
    redacted: &Bound<'py, PyAny>,
) -> PyResult<bool> {
    let py = redacted.py();
    let raw = fields.get(intern!(py, "arguments_raw"))?;
    Ok(raw.is_truthy()? && !redacted.contains(intern!(py, "arguments"))? && !placeholder(&raw, 0)?)
}

/// Whether one step lacks what `probe` asks for.
fn lacks<'py>(
    probe: Probe,
    fields: &StepFields<'py>,
    answering: Option<&Bound<'py, PyFrozenSet>>,
) -> PyResult<bool> {
    let py = fields.step.py();
    let redacted = || fields.get(intern!(py, "redacted"));
    let raw_none = || -> PyResult<bool> { Ok(fields.get(intern!(py, "raw"))?.is_none()) };
    match probe {
        Probe::Arguments => {
            // AgentBench steps (``raw`` set) are taken as written.
            if !raw_none()? {
                return Ok(false);
            }
            let redacted = redacted()?;
            Ok(absent(fields, &redacted, intern!(py, "arguments"))?
                && !raw_arguments_captured(fields, &redacted)?)
        }
        Probe::Result => {
            if !raw_none()? {
                return Ok(false);
            }
            let redacted = redacted()?;
            // A failed call has no result by nature; its failure is the evidence.
            Ok(absent(fields, &redacted, intern!(py, "result"))?
                && !fields
                    .get(intern!(py, "status"))?
                    .eq(intern!(py, "error"))?)
        }
        Probe::Outcomes => {
            if !fields
                .get(intern!(py, "status"))?
                .eq(intern!(py, "unset"))?
            {
                return Ok(false);
            }
            if let Some(answering) = answering {
                let id = (fields.step.as_ptr() as usize).into_pyobject(py)?;
                if answering.contains(id)? {
                    return Ok(false);
                }
            }
            let redacted = redacted()?;
            let unknown = absent(fields, &redacted, intern!(py, "result"))?
                || pydict::get(
                    &fields.get(intern!(py, "attributes"))?,
                    intern!(py, "outcome_unknown"),
                )?
                .is_truthy()?;
            if !unknown {
                return Ok(false);
            }
            Ok(!(fields.get(intern!(py, "error_type"))?.is_truthy()?
                || fields.get(intern!(py, "error_message"))?.is_truthy()?
                || !fields.get(intern!(py, "documents"))?.is_none()))
        }
        Probe::Inputs => {
            if !raw_none()? {
                return Ok(false);
            }
            let redacted = redacted()?;
            if !absent(fields, &redacted, intern!(py, "arguments"))?
                || raw_arguments_captured(fields, &redacted)?
            {
                return Ok(false);
            }
            Ok(absent(fields, &redacted, intern!(py, "command"))?
                && absent(fields, &redacted, intern!(py, "path"))?)
        }
        Probe::Tokens => Ok(fields.get(intern!(py, "input_tokens"))?.is_none()
            || fields.get(intern!(py, "output_tokens"))?.is_none()),
        Probe::FileEdits => {
            if !raw_none()? {
                return Ok(false);
            }
            let redacted = redacted()?;
            Ok(absent(fields, &redacted, intern!(py, "path"))?
                || fields.get(intern!(py, "content"))?.is_none())
        }
    }
}

/// One probe asked of a walk over steps: what it asks of each step, and the tool-name glob
/// narrowing the steps it reads (with the tool names it was asked about, each once).
struct Ask<'py> {
    probe: Probe,
    scope: Option<(Bound<'py, PyString>, Bound<'py, PyDict>)>,
    read: usize,
    gaps: Bound<'py, PyList>,
}

/// Whether `ask`'s scope names `tool` (`matches(scope, tool, True)`, asked once per distinct
/// tool name and scope); an unscoped ask reads every step, a scoped one none without a tool.
fn in_scope<'py>(
    ask: &Ask<'py>,
    tool: &Bound<'py, PyAny>,
    matches: Option<&Bound<'py, PyAny>>,
) -> PyResult<bool> {
    let Some((scope, named)) = &ask.scope else {
        return Ok(true);
    };
    if tool.is_none() {
        return Ok(false);
    }
    if let Some(hit) = named.get_item(tool)? {
        return hit.is_truthy();
    }
    let matches = matches.ok_or_else(|| PyValueError::new_err("a scope needs matches"))?;
    let hit = matches.call1((scope, tool, true))?.is_truthy()?;
    named.set_item(tool, hit)?;
    Ok(hit)
}

/// Walks `steps` once for every probe of `asks`, in step order, each step's fields read
/// from its one `__dict__` (`StepFields`) by the probes that read it. `kind` (the
/// `file_edit` member) is the kind `file_edits` reads, by identity, else as Python
/// compares it.
fn walk<'py>(
    asks: &mut [Ask<'py>],
    steps: &Bound<'py, PyAny>,
    matches: Option<&Bound<'py, PyAny>>,
    answering: Option<&Bound<'py, PyFrozenSet>>,
    kind: Option<&Bound<'py, PyAny>>,
) -> PyResult<()> {
    let py = steps.py();
    let scoped = asks.iter().any(|ask| ask.scope.is_some());
    for step in steps.try_iter()? {
        let fields = StepFields::new(step?);
        let tool = if scoped {
            Some(fields.get(intern!(py, "tool"))?)
        } else {
            None
        };
        for ask in asks.iter_mut() {
            if ask.probe == Probe::FileEdits {
                let kind = kind
                    .ok_or_else(|| PyValueError::new_err("file_edits needs the kind it reads"))?;
                let own = fields.get(intern!(py, "kind"))?;
                if !(own.is(kind) || own.eq(kind)?) {
                    continue;
                }
            }
            if let Some(tool) = &tool {
                if !in_scope(ask, tool, matches)? {
                    continue;
                }
            }
            ask.read += 1;
            if lacks(ask.probe, &fields, answering)? {
                ask.gaps.append(&fields.step)?;
            }
        }
    }
    Ok(())
}

/// The asks of `(probe, scope)` pairs, refused as `probe_gaps` refuses them.
fn asks_of<'py>(
    py: Python<'py>,
    pairs: &[(String, Option<Bound<'py, PyString>>)],
    matches: Option<&Bound<'py, PyAny>>,
    kind: Option<&Bound<'py, PyAny>>,
) -> PyResult<Vec<Ask<'py>>> {
    pairs
        .iter()
        .map(|(probe, scope)| {
            let probe = Probe::named(probe)?;
            if scope.is_some() && matches.is_none() {
                return Err(PyValueError::new_err("a scope needs matches"));
            }
            if probe == Probe::FileEdits && kind.is_none() {
                return Err(PyValueError::new_err("file_edits needs the kind it reads"));
            }
            Ok(Ask {
                probe,
                scope: scope.clone().map(|scope| (scope, PyDict::new(py))),
                read: 0,
                gaps: PyList::empty(py),
            })
        })
        .collect()
}

/// `(read, gaps)`: how many of `steps` the probe named `probe` reads, and those of them
/// that lack what it asks for, in step order. `scope` (a tool-name glob) narrows the steps
/// to those whose `tool` is set and `matches(scope, tool, True)` (`model.tool_name
/// .tool_matches`) names, asked once per distinct tool name. `answering` (`id()`s of the
/// final-answer calls) are set aside by `outcomes`; `kind` (the `file_edit` member) is the
/// kind `file_edits` reads, by identity, else as Python compares it.
///
/// `probe`: `arguments`, `result`, `outcomes`, `inputs` (tool calls), `tokens` (model calls),
/// `file_edits` (every step). The conditions are `evidence`'s probes' own, read in their
/// order; the messages stay Python's.
#[pyfunction]
#[pyo3(signature = (probe, steps, /, scope=None, matches=None, answering=None, kind=None))]
fn probe_gaps<'py>(
    probe: String,
    steps: &Bound<'py, PyAny>,
    scope: Option<Bound<'py, PyString>>,
    matches: Option<&Bound<'py, PyAny>>,
    answering: Option<&Bound<'py, PyFrozenSet>>,
    kind: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyTuple>> {
    let py = steps.py();
    let mut asks = asks_of(py, &[(probe, scope)], matches, kind)?;
    walk(&mut asks, steps, matches, answering, kind)?;
    let ask = asks.remove(0);
    (ask.read, ask.gaps).into_pyobject(py)
}

/// `[(read, gaps), ...]`: `probe_gaps` of every `(probe, scope)` pair of `asks`, in their
/// order, found in one walk over `steps`: a contract asks several of the tool-call probes
/// (`tool_arguments`, `tool_outcomes`, `tool_inputs`, scoped ones), each a walk over the
/// same calls when asked alone.
#[pyfunction]
#[pyo3(signature = (asks, steps, /, matches=None, answering=None, kind=None))]
fn probe_gaps_of<'py>(
    asks: Vec<(String, Option<Bound<'py, PyString>>)>,
    steps: &Bound<'py, PyAny>,
    matches: Option<&Bound<'py, PyAny>>,
    answering: Option<&Bound<'py, PyFrozenSet>>,
    kind: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    let py = steps.py();
    let mut asks = asks_of(py, &asks, matches, kind)?;
    walk(&mut asks, steps, matches, answering, kind)?;
    let found = asks
        .into_iter()
        .map(|ask| (ask.read, ask.gaps).into_pyobject(py))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, found)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(probe_gaps, m)?)?;
    m.add_function(wrap_pyfunction!(probe_gaps_of, m)?)
}
