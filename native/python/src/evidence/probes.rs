//! The evidence probes of `otel_oracles.grade.evidence` done by the core: which of a
//! contract's evidence names a trajectory lacks, and the steps that lack each, in one call
//! per evidence-name tuple and trajectory (`EvidencePlan.lacking`).
//!
//! Each probe was a Python function over the trajectory's steps, its tool calls or its
//! model calls, reached through `Evidence.lacking`, a plan of the tool-call names and a
//! lookup per name: the usual trajectory lacks nothing, so all of that dispatch was spent to
//! find no step. Here a plan made once per name tuple (a compiled contract's or check's,
//! kept on it) knows which probe each name is; one call reads the tool calls once for every
//! tool-call probe (`tool_arguments`, `tool_results`, `tool_outcomes`, `tool_inputs`, scoped
//! or not), the model calls for `token_usage`, the steps once for `file_edits` and `timing`,
//! and the view's groups for `steps`, `agents` and the usual answer of `tool_names`. Each
//! walk's answer is kept in the view (`Answers`), so the next contract's plan asking the same
//! name reads it there. The conditions are read through the C API in the order Python
//! evaluated them; only the names found lacking go back to Python, with the steps they name,
//! and Python words each message (`list_steps`) as before.

use std::sync::{Mutex, MutexGuard};

use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFrozenSet, PyList, PyString, PyTuple};

use crate::pydict::{self, StepFields};

use super::messages::messages_empty;
use super::placeholder;
use super::view::StepView;

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
    /// `input_messages`, `output_messages`: a model call's messages not captured, or
    /// captured as structure only (`messages_empty`).
    InputMessages,
    OutputMessages,
    /// `file_edits`: a trace-derived file edit without its path or content.
    FileEdits,
    /// `timing`: a step from a span (not `synthesized`) without its start or end time.
    Timing,
    /// `steps`: the trajectory has no steps.
    Steps,
    /// `agents`: the trajectory has neither agent nor handoff steps.
    Agents,
    /// `tool_names`: which tools ran is not shown (`EvidencePlan.lacking`).
    ToolNames,
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
            "input_messages" => Probe::InputMessages,
            "output_messages" => Probe::OutputMessages,
            "timing" => Probe::Timing,
            "steps" => Probe::Steps,
            "agents" => Probe::Agents,
            "names" => Probe::ToolNames,
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
                && !pydict::eq_text(&fields.get(intern!(py, "status"))?, intern!(py, "error"))?)
        }
        Probe::Outcomes => {
            if !pydict::eq_text(&fields.get(intern!(py, "status"))?, intern!(py, "unset"))? {
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
        Probe::InputMessages | Probe::OutputMessages => {
            let name = if probe == Probe::InputMessages {
                intern!(py, "input_messages")
            } else {
                intern!(py, "output_messages")
            };
            let redacted = redacted()?;
            Ok(absent(fields, &redacted, name)? || messages_empty(&fields.get(name)?)?)
        }
        Probe::Timing => Ok(!fields.get(intern!(py, "synthesized"))?.is_truthy()?
            && (fields.get(intern!(py, "start_ns"))?.is_none()
                || fields.get(intern!(py, "end_ns"))?.is_none())),
        // Asked of the view's groups, never of a step (`EvidencePlan.lacking`).
        Probe::Steps | Probe::Agents | Probe::ToolNames => Ok(false),
    }
}

/// One probe asked of a walk over steps: what it asks of each step, and the tool-name glob
/// narrowing the steps it reads (with its entry's answers per tool name, `Entry::named`).
struct Ask<'py> {
    probe: Probe,
    scope: Option<(Bound<'py, PyString>, Bound<'py, PyDict>)>,
    read: usize,
    /// The steps found lacking, made on the first (most asks find none).
    gaps: Option<Bound<'py, PyList>>,
}

impl<'py> Ask<'py> {
    fn new(py: Python<'py>, probe: Probe, scope: Option<&(Py<PyString>, Py<PyDict>)>) -> Self {
        Ask {
            probe,
            scope: scope.map(|(scope, named)| (scope.bind(py).clone(), named.bind(py).clone())),
            read: 0,
            gaps: None,
        }
    }
}

/// Whether `ask`'s scope names `tool` (`matches(scope, tool, True)`, asked once per distinct
/// tool name and plan entry, up to `NAMED_TOOLS` names: the answer is the same for every
/// trajectory, and a grade's traces call a few tools); an unscoped ask reads every step, a
/// scoped one none without a tool.
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
    if named.len() < NAMED_TOOLS {
        named.set_item(tool, hit)?;
    }
    Ok(hit)
}

/// Walks `steps` once for every probe of `asks`, in step order, each step's fields read
/// from its one `__dict__` (`StepFields`) by the probes that read it. `kind` (the
/// `file_edit` member) is the kind `file_edits` reads, by identity, else as Python
/// compares it; `matches` is the tool-name test of the scoped asks.
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
                ask.gaps
                    .get_or_insert_with(|| PyList::empty(py))
                    .append(&fields.step)?;
            }
        }
    }
    Ok(())
}

/// One walk's answer for one probe, kept in the trajectory's view (`Answers`).
struct Kept {
    probe: Probe,
    scope: Option<Py<PyString>>,
    /// What the answer was read against besides the view, compared by identity: the
    /// `steps` a step walk read (`file_edits`, `timing`), the `answering` set `outcomes` set
    /// aside; `None` for the probes that read only the view's groups.
    source: Option<Py<PyAny>>,
    read: usize,
    gaps: Option<Py<PyList>>,
}

/// The answers the probes' walks found over one trajectory's view, per probe and scope
/// (`StepView.answers`): a contract's plan asks the names another contract's plan asked
/// already (`tool_arguments`, `tool_outcomes`), and a check's plan, where its contract's
/// names are not all there, asks its contract's again; each is walked once per view. A
/// handful of entries, searched in order. The lock is held only to read or add entries,
/// never while Python code runs (a walk compares and hashes through Python).
#[derive(Default)]
pub(super) struct Answers(Mutex<Vec<Kept>>);

/// Whether two scopes are the same glob: the same object (the names are split once,
/// `split_name`), else the same text.
fn same_scope(py: Python<'_>, a: Option<&Py<PyString>>, b: Option<&Py<PyString>>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            a.as_ptr() == b.as_ptr()
                || matches!(
                    (a.bind(py).to_str(), b.bind(py).to_str()),
                    (Ok(a), Ok(b)) if a == b
                )
        }
        _ => false,
    }
}

impl Answers {
    fn entries(&self) -> MutexGuard<'_, Vec<Kept>> {
        // A poisoned lock held a complete list: entries are pushed whole.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// `(read, gaps)` of `probe` with `scope` over `source`, if a walk found it.
    fn find<'py>(
        &self,
        py: Python<'py>,
        probe: Probe,
        scope: Option<&Py<PyString>>,
        source: Option<&Bound<'py, PyAny>>,
    ) -> Option<(usize, Option<Bound<'py, PyList>>)> {
        let entries = self.entries();
        let kept = entries.iter().find(|kept| {
            kept.probe == probe
                && kept.source.as_ref().map(Py::as_ptr) == source.map(Bound::as_ptr)
                && same_scope(py, kept.scope.as_ref(), scope)
        })?;
        Some((
            kept.read,
            kept.gaps.as_ref().map(|gaps| gaps.bind(py).clone()),
        ))
    }

    fn keep(&self, ask: &Ask<'_>, source: Option<&Bound<'_, PyAny>>) {
        let kept = Kept {
            probe: ask.probe,
            scope: ask.scope.as_ref().map(|(scope, _)| scope.clone().unbind()),
            source: source.map(|source| source.clone().unbind()),
            read: ask.read,
            gaps: ask.gaps.as_ref().map(|gaps| gaps.clone().unbind()),
        };
        self.entries().push(kept);
    }
}

/// The most tool names whose scope answers an entry keeps (`Entry::named`): names come
/// from traces, the plan lives as long as its contract.
const NAMED_TOOLS: usize = 1024;

/// One evidence name of a plan: its position in the plan's name tuple, its probe, and the
/// tool-name glob of a scoped tool-call name with what it answered per tool name (`in_scope`),
/// kept with the plan: before, each walk asked `matches` again of every tool it met (~5,200
/// Python calls a grade of data-2000).
struct Entry {
    pos: usize,
    probe: Probe,
    scope: Option<(Py<PyString>, Py<PyDict>)>,
}

/// What a plan's answer says of one name it found lacking: `(position, read, gaps)`.
pub(crate) type Lack<'py> = (usize, usize, Option<Bound<'py, PyList>>);

/// The core's evidence names of an evidence-name tuple (a compiled check's or contract's),
/// each with its probe, made once per tuple (`evidence._plan`, cached), and asked of each
/// trajectory in one call (`lacking`).
#[pyclass(module = "otel_oracles._native", name = "EvidencePlan", frozen)]
pub struct EvidencePlan {
    entries: Vec<Entry>,
    /// `model.tool_name.tool_matches`, asked of scoped names.
    matches: Py<PyAny>,
    /// The `file_edit` member, the kind `file_edits` reads.
    file_edit: Py<PyAny>,
    /// Whether `tool_outcomes` is among the names: the one probe that reads the final-answer
    /// calls (`answering`).
    #[pyo3(get)]
    outcomes: bool,
}

impl EvidencePlan {
    /// `(position, read, gaps)` of each entry whose probe is one of `probes`, read from
    /// `answers` where a walk of this view found it already, else found by one walk of
    /// `steps` for all the others (and kept in `answers`). `source(probe)` is what an
    /// answer depends on besides the view (`Kept::source`).
    #[allow(clippy::too_many_arguments)]
    fn answer<'py>(
        &self,
        answers: &Answers,
        probes: &[Probe],
        steps: &Bound<'py, PyAny>,
        matches: Option<&Bound<'py, PyAny>>,
        answering: Option<&Bound<'py, PyFrozenSet>>,
        kind: Option<&Bound<'py, PyAny>>,
        source: impl Fn(Probe) -> Option<Bound<'py, PyAny>>,
    ) -> PyResult<Vec<Lack<'py>>> {
        let py = steps.py();
        let mut answered = Vec::new();
        let mut positions = Vec::new();
        let mut asks = Vec::new();
        for entry in self.entries.iter().filter(|e| probes.contains(&e.probe)) {
            let from = source(entry.probe);
            let scope = entry.scope.as_ref().map(|(scope, _)| scope);
            match answers.find(py, entry.probe, scope, from.as_ref()) {
                Some((read, gaps)) => answered.push((entry.pos, read, gaps)),
                None => {
                    positions.push(entry.pos);
                    asks.push(Ask::new(py, entry.probe, entry.scope.as_ref()));
                }
            }
        }
        if !asks.is_empty() {
            walk(&mut asks, steps, matches, answering, kind)?;
            for (pos, ask) in positions.into_iter().zip(asks) {
                answers.keep(&ask, source(ask.probe).as_ref());
                answered.push((pos, ask.read, ask.gaps));
            }
        }
        Ok(answered)
    }
}

#[pymethods]
impl EvidencePlan {
    /// `entries`: `(position, probe, scope)` of each name the core probes: `arguments`,
    /// `result`, `outcomes`, `inputs` (the tool calls, narrowed by `scope`, a tool-name
    /// glob, to those `matches(scope, tool, True)` names), `tokens` (the model calls),
    /// `input_messages`, `output_messages` (the model calls), `file_edits` (the steps of kind
    /// `file_edit`), `timing` (every step), `steps`, `agents` and `names` (the view's
    /// groups). Only the tool-call probes read a scope.
    #[new]
    #[pyo3(signature = (entries, matches, file_edit, /))]
    fn new(
        py: Python<'_>,
        entries: Vec<(usize, String, Option<Py<PyString>>)>,
        matches: Py<PyAny>,
        file_edit: Py<PyAny>,
    ) -> PyResult<Self> {
        let entries = entries
            .into_iter()
            .map(|(pos, probe, scope)| {
                let probe = Probe::named(&probe)?;
                let calls = matches!(
                    probe,
                    Probe::Arguments | Probe::Result | Probe::Outcomes | Probe::Inputs
                );
                Ok(Entry {
                    pos,
                    probe,
                    scope: scope
                        .filter(|_| calls)
                        .map(|scope| (scope, PyDict::new(py).unbind())),
                })
            })
            .collect::<PyResult<Vec<_>>>()?;
        let outcomes = entries.iter().any(|entry| entry.probe == Probe::Outcomes);
        Ok(EvidencePlan {
            entries,
            matches,
            file_edit,
            outcomes,
        })
    }

    /// `((position, read, gaps), ...)` for each of the plan's names that `view` (the
    /// trajectory's `StepView`) and `steps` (its steps) lack, by position; `()` when none
    /// does. `read` is how many steps the probe read (the calls its scope covers, the
    /// model calls; 0 for `steps` and `agents`, and for a model-call probe without model
    /// calls), `gaps` the steps lacking what it asks for, in step order (`None` for `steps`
    /// and `agents`, and for a model-call probe without model calls). `answering` (`id()`s of the
    /// final-answer calls) is what `outcomes` sets aside; a plan with `outcomes` needs it.
    ///
    /// `names` (`tool_names`) lacks with the nameless calls as `gaps` (`read` their count)
    /// when there are any; else with `read` 0 and `gaps` `None` when `fragmented` (the
    /// trace is a fragment of a run, `fragment_gap`) or when neither tool spans nor an
    /// AgentBench trajectory list every call (`tool_spans`, `all_raw`), for Python to word
    /// or to clear (it reads the model calls' messages then); else it does not lack.
    ///
    /// Each walk's answers are kept in `view` (`Answers`): a name another plan asked of the
    /// same view is read there, not walked again.
    #[pyo3(signature = (view, steps, answering, fragmented = false, /))]
    fn lacking<'py>(
        &self,
        view: &Bound<'py, StepView>,
        steps: &Bound<'py, PyAny>,
        answering: Option<&Bound<'py, PyFrozenSet>>,
        fragmented: bool,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let found = self.lacks(view.get(), steps, answering, fragmented)?;
        if found.is_empty() {
            return Ok(PyTuple::empty(steps.py()));
        }
        PyTuple::new(steps.py(), found)
    }
}

impl EvidencePlan {
    /// `lacking`'s answer as Rust values, by position: what `evidence::lacking_of` words.
    pub(crate) fn lacks<'py>(
        &self,
        view: &StepView,
        steps: &Bound<'py, PyAny>,
        answering: Option<&Bound<'py, PyFrozenSet>>,
        fragmented: bool,
    ) -> PyResult<Vec<Lack<'py>>> {
        let py = steps.py();
        let answers = &view.answers;
        let mut found: Vec<Lack<'py>> = Vec::new();
        if self.outcomes && answering.is_none() {
            return Err(PyValueError::new_err("outcomes needs the answering calls"));
        }
        let calls = [
            Probe::Arguments,
            Probe::Result,
            Probe::Outcomes,
            Probe::Inputs,
        ];
        let answered = self.answer(
            answers,
            &calls,
            view.calls.bind(py).as_any(),
            Some(self.matches.bind(py)),
            answering,
            None,
            |probe| {
                answering
                    .filter(|_| probe == Probe::Outcomes)
                    .map(|answering| answering.as_any().clone())
            },
        )?;
        found.extend(answered.into_iter().filter(|lack| lack.2.is_some()));
        let generations = [Probe::Tokens, Probe::InputMessages, Probe::OutputMessages];
        let answered = self.answer(
            answers,
            &generations,
            view.generations.bind(py).as_any(),
            None,
            None,
            None,
            |_| None,
        )?;
        found.extend(
            answered
                .into_iter()
                .filter(|lack| lack.1 == 0 || lack.2.is_some()),
        );
        let answered = self.answer(
            answers,
            &[Probe::FileEdits, Probe::Timing],
            steps,
            None,
            None,
            Some(self.file_edit.bind(py)),
            |_| Some(steps.clone()),
        )?;
        found.extend(answered.into_iter().filter(|lack| lack.2.is_some()));
        for entry in &self.entries {
            let lack = match entry.probe {
                Probe::Steps => (!steps.is_truthy()?).then_some((entry.pos, 0, None)),
                Probe::Agents => (view.agents.bind(py).is_empty()
                    && view.handoffs.bind(py).is_empty())
                .then_some((entry.pos, 0, None)),
                Probe::ToolNames => {
                    let nameless = view.nameless.bind(py);
                    if !nameless.is_empty() {
                        let gaps = PyList::new(py, nameless)?;
                        Some((entry.pos, nameless.len(), Some(gaps)))
                    } else if fragmented || !(view.tool_spans || view.all_raw) {
                        Some((entry.pos, 0, None))
                    } else {
                        None
                    }
                }
                _ => None,
            };
            found.extend(lack);
        }
        found.sort_unstable_by_key(|lack| lack.0);
        Ok(found)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<EvidencePlan>()
}
