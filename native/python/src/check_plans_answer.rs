//! The plans of the checks about the answer's grounds, beside `check_plans.rs`' usual
//! answers: `degraded_answer` (no dependency degraded, the answer voicing no uncertainty,
//! or voicing it untied to any degradation) and `evidence` (the declared evidence
//! captured). Run by the same `CheckPlan` as the others (its `Kind::Answer`), after the
//! evaluator's loop has found the check's declared evidence there (`final_output` and
//! `tool_names` for `degraded_answer`, the declared name for `evidence`): a gap is
//! `missing_evidence` before any plan is asked.
//!
//! `degraded_answer`'s plan decides `find_degradation` (`trace_answers`) as far as "nothing
//! degraded, nothing unknown": the dependencies' last calls (per agent and tool, by step
//! index), and the last calls of tools that may be a dependency under a namespace the
//! name does not show, each neither failed (`failed_calls`' table, memoized per pattern and
//! shared with `tool_errors` and `tool_retries`), nor without documents, nor seen empty by
//! the mapping, nor without a captured result (unless it holds documents), nor empty
//! (`is_empty_result`: an exact `dict`, `list` or `str` decided here, anything else by the
//! Python function), nor matching `empty_pattern`, nor of an unknown outcome. Anything
//! degraded or unknown is "not handled" (`None`): the Python body words which call and
//! why. The tool-name matching is the core's (`tool_glob::NamedBy`: `first_match` of
//! `model.tool_name`, handed in for patterns with a class and names it does not read).
//! What only Python decides is handed in once: the regex engine under its budget
//! (`safe_regex.search`) for the answer's searches the core's plan of words between word
//! boundaries does not answer (`otel_oracles_core::words`: the default `must_disclose`
//! and `uncertainty_pattern` over an ASCII answer are answered there), the degradation
//! attribute's lookup (`attribute_value`,
//! `_truthy`), `is_empty_result` for other values and the memoized result text
//! (`step_result_text`, for `empty_pattern`).

use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use otel_oracles_core::words::WordsPattern;

use crate::check_plans::{breached, joined, pointed};
use crate::evidence::{self, placeholder};
use crate::failures::Failures;
use crate::pydict::{self, StepFields};
use crate::slots::SlotClass;
use crate::tool_glob::NamedBy;

/// A plan of this module, by check.
pub(crate) enum Answer {
    /// `evidence`: its finding is the message its params make (`captured: ...`,
    /// `attribute ... present`), made once.
    Captured(Py<PyString>),
    /// `degraded_answer`.
    Degraded(Box<Degraded>),
}

impl Answer {
    /// The check's finding on `evidence` (`ctx.evidence`) when the plan decides it, else
    /// `None` (the Python body words it).
    pub(crate) fn run<'py>(
        &self,
        evidence: &Bound<'py, PyAny>,
        finding: &Py<SlotClass>,
        failures: &Failures,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = evidence.py();
        match self {
            Self::Captured(message) => {
                let empty = PyTuple::empty(py).into_any();
                let found = make(
                    finding,
                    intern!(py, "pass"),
                    message.bind(py).clone(),
                    PyDict::new(py),
                    [empty.clone(), empty],
                    false,
                    false,
                )?;
                Ok(Some(found))
            }
            Self::Degraded(degraded) => degraded.run(evidence, finding, failures),
        }
    }
}

/// The Python deciders `degraded_answer`'s plan is handed: `first_match`,
/// `safe_regex.search`, `attribute_value`, `_truthy`, `is_empty_result`,
/// `step_result_text`.
pub(crate) type DegradedHelpers<'py> = (
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
);

/// `degraded_answer`'s plan: its params (the optional ones `None` when not given or empty,
/// as the Python body tests them) and the Python deciders.
pub(crate) struct Degraded {
    /// `tuple(dependencies)` (empty: every tool is a dependency).
    dependencies: Py<PyTuple>,
    /// Whether a dependency names a tool (`first_match(tool, dependencies, lax)`).
    named_by: NamedBy,
    degraded_attribute: Option<Py<PyAny>>,
    error_pattern: Py<PyAny>,
    empty_pattern: Option<Py<PyAny>>,
    must_disclose: Option<Py<PyAny>>,
    uncertainty_pattern: Py<PyAny>,
    /// The core's plans of `must_disclose` and `uncertainty_pattern`, when they are words
    /// between word boundaries (`WordsPattern`).
    disclose_plan: Option<WordsPattern>,
    uncertainty_plan: Option<WordsPattern>,
    search: Py<PyAny>,
    attribute_value: Py<PyAny>,
    truthy: Py<PyAny>,
    is_empty_result: Py<PyAny>,
    result_text: Py<PyAny>,
}

impl Degraded {
    /// The plan of the check's params.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        dependencies: Bound<'_, PyTuple>,
        degraded_attribute: Option<Bound<'_, PyAny>>,
        error_pattern: Bound<'_, PyAny>,
        empty_pattern: Option<Bound<'_, PyAny>>,
        must_disclose: Option<Bound<'_, PyAny>>,
        uncertainty_pattern: Bound<'_, PyAny>,
        helpers: DegradedHelpers<'_>,
    ) -> Self {
        let (first_match, search, attribute_value, truthy, is_empty_result, result_text) = helpers;
        Self {
            disclose_plan: must_disclose.as_ref().and_then(words_plan),
            uncertainty_plan: words_plan(&uncertainty_pattern),
            named_by: NamedBy::new(dependencies.clone(), first_match),
            dependencies: dependencies.unbind(),
            degraded_attribute: degraded_attribute.map(Bound::unbind),
            error_pattern: error_pattern.unbind(),
            empty_pattern: empty_pattern.map(Bound::unbind),
            must_disclose: must_disclose.map(Bound::unbind),
            uncertainty_pattern: uncertainty_pattern.unbind(),
            search: search.unbind(),
            attribute_value: attribute_value.unbind(),
            truthy: truthy.unbind(),
            is_empty_result: is_empty_result.unbind(),
            result_text: result_text.unbind(),
        }
    }

    fn run<'py>(
        &self,
        evidence: &Bound<'py, PyAny>,
        finding: &Py<SlotClass>,
        failures: &Failures,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = evidence.py();
        let out = evidence::final_output(evidence)?;
        let text = out.getattr(intern!(py, "text"))?;
        if text.is_none() || !self.undegraded(evidence, failures)? {
            return Ok(None); // (no answer: the body's assertion; a degradation: its words)
        }
        let disclosure = match &self.must_disclose {
            Some(pattern) => self.said(pattern.bind(py), self.disclose_plan.as_ref(), &text)?,
            None => None,
        };
        let uncertainty = self.said(
            self.uncertainty_pattern.bind(py),
            self.uncertainty_plan.as_ref(),
            &text,
        )?;
        let none = || py.None().into_bound(py);
        let details = PyDict::new(py);
        details.set_item(intern!(py, "degraded"), PyList::empty(py))?;
        details.set_item(
            intern!(py, "disclosed"),
            disclosure.clone().unwrap_or_else(none),
        )?;
        details.set_item(
            intern!(py, "uncertainty"),
            uncertainty.clone().unwrap_or_else(none),
        )?;
        // `uncertainty or disclosure`: a match object is always true (an empty match too).
        let claim = uncertainty.or(disclosure);
        let empty = PyTuple::empty(py).into_any();
        let Some(claim) = claim else {
            // "No dependency degraded" is about every call: a span no convention recognised
            // may be the call that failed (unseen).
            let message = intern!(
                py,
                "no dependency degraded; the answer voices no uncertainty"
            );
            return make(
                finding,
                intern!(py, "pass"),
                message.clone(),
                details,
                [empty.clone(), empty],
                false,
                true,
            )
            .map(Some);
        };
        let quoted = claim.repr()?;
        let message = joined(
            py,
            [
                intern!(py, "the answer says ").clone().into_any(),
                quoted.into_any(),
                intern!(
                    py,
                    " but no dependency was degraded (uncertainty not tied to degraded evidence)"
                )
                .clone()
                .into_any(),
            ],
        )?;
        let step = out.getattr(intern!(py, "step"))?;
        let at = if step.is_truthy()? {
            pointed(py, [step])?
        } else {
            [empty.clone(), empty]
        };
        make(
            finding,
            intern!(py, "fail"),
            message,
            details,
            at,
            true,
            true,
        )
        .map(Some)
    }

    /// What `safe_regex.search(pattern, text)` matches (its `group(0)`), `None` for no
    /// match: the core's answer when `plan` gives one for `text` (an ASCII `str` within
    /// `MAX_WORDS_TEXT`), else the engine's.
    fn said<'py>(
        &self,
        pattern: &Bound<'py, PyAny>,
        plan: Option<&WordsPattern>,
        text: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = text.py();
        if let Some(answer) = plan.and_then(|plan| plan_search(plan, text)) {
            return Ok(answer.map(|said| PyString::new(py, said).into_any()));
        }
        let found = self.search.bind(py).call1((pattern, text))?;
        if found.is_none() {
            return Ok(None);
        }
        found.call_method1(intern!(py, "group"), (0,)).map(Some)
    }

    /// Whether `find_degradation` finds nothing degraded and nothing unknown: `false` as
    /// soon as one call (or the degradation attribute) says otherwise.
    fn undegraded(&self, evidence: &Bound<'_, PyAny>, failures: &Failures) -> PyResult<bool> {
        let py = evidence.py();
        if let Some(key) = &self.degraded_attribute {
            let trajectory = evidence.getattr(intern!(py, "trajectory"))?;
            let (found, value, _): (Bound<'_, PyAny>, Bound<'_, PyAny>, Bound<'_, PyAny>) = self
                .attribute_value
                .bind(py)
                .call1((trajectory, key.bind(py)))?
                .extract()?;
            if found.is_truthy()? && self.truthy.bind(py).call1((value,))?.is_truthy()? {
                return Ok(false);
            }
        }
        let calls = evidence::every_call(evidence)?;
        // `sorted(calls, key=index)` (stable), each with its fields.
        let mut sorted = Vec::with_capacity(calls.len());
        for call in calls.iter() {
            let fields = StepFields::new(call.clone());
            let Ok(index) = fields.get(intern!(py, "index"))?.extract::<i128>() else {
                return Ok(false); // an index that is no int: the Python body sorts
            };
            sorted.push((index, call, fields));
        }
        sorted.sort_by_key(|(index, _, _)| *index);
        // The last call per `(agent_name, tool)` of a dependency, and of a tool that may be
        // one under a namespace its name does not show.
        let (last, maybe) = (PyDict::new(py), PyDict::new(py));
        let every = self.dependencies.bind(py).is_empty();
        for (_, call, fields) in &sorted {
            let tool = fields.get(intern!(py, "tool"))?;
            let into = if every || self.glob(fields, &tool, false)? {
                &last
            } else if self.glob(fields, &tool, true)? {
                &maybe
            } else {
                continue;
            };
            let agent = fields.get(intern!(py, "agent_name"))?;
            into.set_item(PyTuple::new(py, [agent, tool])?, call)?;
        }
        if last.is_empty() && maybe.is_empty() {
            return Ok(true);
        }
        let failed = failures.failed(evidence, self.error_pattern.bind(py))?;
        for call in maybe.values().iter().chain(last.values().iter()) {
            if !self.healthy(evidence, &failed, &call)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// `step_glob(step, dependencies, lax) is not None`: a dependency names the step's tool,
    /// else the name an MCP server ran the call under (`attributes.mcp_tool`, a `str`).
    fn glob(&self, fields: &StepFields<'_>, tool: &Bound<'_, PyAny>, lax: bool) -> PyResult<bool> {
        let py = tool.py();
        if self.named_by.names(tool, lax)? {
            return Ok(true);
        }
        let attributes = fields.get(intern!(py, "attributes"))?;
        let served = pydict::get(&attributes, intern!(py, "mcp_tool"))?;
        Ok(served.is_instance_of::<PyString>() && self.named_by.names(&served, lax)?)
    }

    /// Whether `_judge_dependency` leaves the call `call` out of both `degraded` and
    /// `unknown`: it did not fail, its documents (when recorded) are some, the mapping did
    /// not see its result empty, its result was captured (or documents were) and is not
    /// empty, and its outcome is known.
    fn healthy<'py>(
        &self,
        evidence: &Bound<'py, PyAny>,
        failed: &Bound<'py, PyDict>,
        call: &Bound<'py, PyAny>,
    ) -> PyResult<bool> {
        let py = call.py();
        if failed.contains(call.as_ptr() as usize)? {
            return Ok(false);
        }
        let fields = StepFields::new(call.clone());
        let redacted = fields.get(intern!(py, "redacted"))?;
        let documents = if redacted.contains(intern!(py, "documents"))? {
            None
        } else {
            Some(fields.get(intern!(py, "documents"))?).filter(|documents| !documents.is_none())
        };
        if let Some(documents) = &documents {
            if !documents.is_truthy()? {
                return Ok(false); // returned no documents
            }
        }
        let attributes = fields.get(intern!(py, "attributes"))?;
        if pydict::get(&attributes, intern!(py, "result_empty"))?.is_truthy()? {
            return Ok(false);
        }
        let result = fields.get(intern!(py, "result"))?;
        if redacted.contains(intern!(py, "result"))? || placeholder(&result, 0)? {
            return Ok(documents.is_some()); // not captured: unknown unless documents were
        }
        if self.empty(&result)? {
            return Ok(false);
        }
        if let Some(pattern) = &self.empty_pattern {
            let text = self.result_text.bind(py).call1((evidence, call))?;
            if !self
                .search
                .bind(py)
                .call1((pattern.bind(py), text))?
                .is_none()
            {
                return Ok(false);
            }
        }
        Ok(!pydict::get(&attributes, intern!(py, "outcome_unknown"))?.is_truthy()?)
    }

    /// `is_empty_result(result)`: an exact `dict` (empty, or its lists, one at least, all
    /// empty, each an exact `list`), `list` (empty) or `str` that cannot be JSON of an
    /// empty value (its first character past JSON's whitespace printable ASCII and none of
    /// `n"[{`: JSON of a number, `true` or `false`, or no JSON, then the text itself, not
    /// blank) decided here; anything else by the Python function.
    fn empty(&self, result: &Bound<'_, PyAny>) -> PyResult<bool> {
        let py = result.py();
        let decided = if let Ok(dict) = result.cast_exact::<PyDict>() {
            let mut lists = Some(dict.is_empty());
            for value in dict.values().iter() {
                if let Ok(list) = value.cast_exact::<PyList>() {
                    if !list.is_empty() {
                        lists = Some(false);
                        break;
                    }
                    lists = Some(true);
                } else if value.is_instance_of::<PyList>() {
                    lists = None; // a subclass: its own `__len__`, as Python asks it
                    break;
                }
            }
            lists
        } else if let Ok(list) = result.cast_exact::<PyList>() {
            Some(list.is_empty())
        } else if let Ok(text) = result.cast_exact::<PyString>() {
            match first_past_json_space(text) {
                Some(c) if c.is_ascii_graphic() && !matches!(c, 'n' | '"' | '[' | '{') => {
                    Some(false)
                }
                _ => None,
            }
        } else {
            None
        };
        match decided {
            Some(empty) => Ok(empty),
            None => self.is_empty_result.bind(py).call1((result,))?.is_truthy(),
        }
    }
}

/// The first character of `text` past JSON's whitespace (`json.loads` skips ` \t\n\r`
/// before a value), read code point by code point; `None` when there is none or it is no
/// `char` (a lone surrogate).
fn first_past_json_space(text: &Bound<'_, PyString>) -> Option<char> {
    let ptr = text.as_ptr();
    // SAFETY: `ptr` is a live `str` held by `text` for the whole call; every index read is
    // below its length.
    let len = unsafe { ffi::PyUnicode_GetLength(ptr) };
    for i in 0..len {
        // SAFETY: as above, `i < len`.
        let code = unsafe { ffi::PyUnicode_ReadChar(ptr, i) };
        if !matches!(code, 0x20 | 0x09 | 0x0a | 0x0d) {
            return char::from_u32(code);
        }
    }
    None
}

/// A `Finding` of `status`, `message` and `details`, pointing at `[span_ids,
/// step_indexes]`, nothing used, a rule's breach when `rule`, `unseen` as given.
fn make<'py>(
    finding: &Py<SlotClass>,
    status: &Bound<'py, PyString>,
    message: Bound<'py, PyString>,
    details: Bound<'py, PyDict>,
    [spans, steps]: [Bound<'py, PyAny>; 2],
    rule: bool,
    unseen: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let py = status.py();
    let breach = if rule {
        intern!(py, "rule")
    } else {
        intern!(py, "budget")
    };
    breached(
        finding,
        status,
        message,
        details,
        [spans, steps],
        0,
        breach,
        unseen,
    )
}

/// The core's plan of a pattern param, when it is a `str` in `WordsPattern`'s subset.
fn words_plan(pattern: &Bound<'_, PyAny>) -> Option<WordsPattern> {
    let pattern = pattern.cast::<PyString>().ok()?;
    WordsPattern::of(pattern.to_str().ok()?)
}

/// `plan`'s answer for `text` (the matched text, `None` for no match), when it gives one:
/// `text` a `str` without lone surrogates that `WordsPattern::search` reads.
fn plan_search<'a>(plan: &WordsPattern, text: &'a Bound<'_, PyAny>) -> Option<Option<&'a str>> {
    let text = text.cast::<PyString>().ok()?;
    let utf8 = text.to_str().ok()?;
    let found = plan.search(utf8)?;
    Some(found.map(|(start, end)| &utf8[start..end]))
}

/// `safe_regex.search(pattern, text)`'s match as the core finds it, for `degraded_answer`'s
/// plan: `(start, end)`, `()` for no match, or `None` when the core does not answer
/// (`pattern` outside `otel_oracles_core::words::WordsPattern`'s subset, `text` beyond
/// ASCII or past `MAX_WORDS_TEXT` characters: the engine answers).
#[pyfunction]
#[pyo3(signature = (pattern, text, /))]
fn words_search<'py>(
    pattern: &Bound<'py, PyAny>,
    text: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyTuple>>> {
    let py = text.py();
    let Some(plan) = words_plan(pattern) else {
        return Ok(None);
    };
    let Some(found) = text
        .cast::<PyString>()
        .ok()
        .and_then(|text| text.to_str().ok())
        .and_then(|utf8| plan.search(utf8))
    else {
        return Ok(None);
    };
    match found {
        Some((start, end)) => PyTuple::new(py, [start, end]).map(Some),
        None => Ok(Some(PyTuple::empty(py))),
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(words_search, m)?)
}
