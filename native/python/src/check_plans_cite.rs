//! The plans of the citation checks, `citations_grounded` and `citation_required`, which
//! make every answer of their check (pass, failure, missing evidence), beside
//! `check_plans.rs`' usual answers and `check_plans_more.rs`' other whole checks. Made by
//! `CheckPlans.citations_grounded` and `.citation_required` and run by the same
//! `CheckPlan` (its `Kind::Cite`), so the evaluator's loop asks them as it asks every plan;
//! the oracle's Python `check` is the plan's `finding` (a plug-in's subclass and the tests
//! call it).
//!
//! The ids an answer cites are the evidence's memoized `("answer_cites", pattern)` (read
//! from its memo as `Evidence.memoized` keeps it), so both checks of one answer share one
//! search, as their Python bodies did. `citations_grounded` reads its sources as
//! `_Sources` did: the earlier calls' results (and documents), then the tool results each
//! earlier model call was handed, those read only when a search first gets past the
//! calls; each source's text made when the search first reaches it. The search is `evidence::citations::ground` (the one
//! `ground_ids` runs), the stand-in texts first and the made ones when those run past the
//! budget. A stand-in text is the result itself when it is a `str`, else written by the
//! core (`json_indented(value, 0)`, what `_search_text` asked of it) without a `str` made
//! for it, else `result_text`'s; the made texts (`_source_texts`, `result_text`) are
//! Python's, asked only for an id holding a break character, a second pass or a failure's
//! list of what the sources returned.
//!
//! The cited ids of a pattern that is a literal and a digit run (`doc-\d+`,
//! `otel_oracles_core::citations::IdPattern`) are found by the core; any other pattern,
//! and a text the core does not read (`plan_ids`), by `_cited_ids`. Whether a result was
//! captured (`absent`) and how messages name steps (`where`, `list_steps`) are the core's
//! (`evidence::naming`, which Python's functions of those names are).
//!
//! What only Python decides is handed in once, when the plan is made: the engine's cited
//! ids (`_cited_ids`), a source glob (`step_glob`), the results' texts (`result_text`,
//! `_source_texts`), the tool results a model call was handed (`tool_responses`), whether
//! a character continues an id (`_continues_id`), whether a run's work is invisible
//! (`work_invisible` and its words), the run's degradation (`find_degradation`) and the
//! error past the budget (`WorkBudgetExceeded`).

use otel_oracles_core::citations::{IdPattern, MAX_ID_TEXT};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt, PyList, PySet, PyString, PyTuple};

use crate::check_plans::{found, pointed, Budget, Text};
use crate::evidence::{
    self, field_absent, ground, listed_steps, memoized, plan_ids, where_text, CiteAsked,
    CiteSource, CiteText,
};
use crate::pydict::StepFields;
use crate::report_json::json_indented;
use crate::slots::SlotClass;

/// A plan of this module, by check.
pub(crate) enum Cite {
    /// `citations_grounded`.
    Grounded(Grounded),
    /// `citation_required`.
    Required(Required),
}

impl Cite {
    /// The check's finding on `evidence`, made by `finding`'s maker.
    pub(crate) fn run<'py>(
        &self,
        evidence: &Bound<'py, PyAny>,
        finding: &Py<SlotClass>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match self {
            Self::Grounded(grounded) => grounded.run(evidence, finding),
            Self::Required(required) => required.run(evidence, finding),
        }
    }
}

/// The ids a final answer cites under one pattern (`_answer_cites`): the evidence's
/// memoized search, shared by every citation check of the trajectory with that pattern.
struct Cites {
    pattern: Py<PyString>,
    /// `("answer_cites", pattern)`, the memo's key.
    key: Py<PyTuple>,
    /// The core's plan of the pattern, when it is a literal and a digit run.
    plan: Option<IdPattern>,
    /// `_cited_ids`: the regex engine's answer, for every other pattern or text.
    cited_ids: Py<PyAny>,
}

/// The final answer as a citation check reads it: its step (`None`: unknown) and a fresh
/// list of the ids it cites.
struct Answer<'py> {
    step: Option<Bound<'py, PyAny>>,
    ids: Bound<'py, PyList>,
}

impl Cites {
    fn new(pattern: Bound<'_, PyString>, cited_ids: Bound<'_, PyAny>) -> PyResult<Self> {
        let py = pattern.py();
        let key = PyTuple::new(py, [PyString::new(py, "answer_cites"), pattern.clone()])?;
        let plan = pattern.to_str().ok().and_then(IdPattern::of);
        Ok(Self {
            pattern: pattern.unbind(),
            key: key.unbind(),
            plan,
            cited_ids: cited_ids.unbind(),
        })
    }

    /// `_cited_ids(pattern, text)`: the core's answer where its plan of the pattern gives
    /// one, else the engine's.
    fn ids<'py>(&self, text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let py = text.py();
        if let (Some(plan), Ok(text)) = (&self.plan, text.cast::<PyString>()) {
            if let Some(ids) = plan_ids(plan, text)? {
                return Ok(ids);
            }
        }
        Ok(self
            .cited_ids
            .bind(py)
            .call1((self.pattern.bind(py), text))?
            .cast_into::<PyList>()?)
    }

    /// `_cited_ids(pattern, text)` of a text the core wrote, added to `into`: the core's
    /// answer read from the text itself where `plan_ids` would give one for it as a `str`,
    /// else the engine's.
    fn add_ids<'py>(&self, py: Python<'py>, text: &str, into: &Bound<'py, PySet>) -> PyResult<()> {
        let within = text.len() <= MAX_ID_TEXT || text.chars().count() <= MAX_ID_TEXT;
        if let Some(ids) = self
            .plan
            .as_ref()
            .filter(|_| within)
            .and_then(|plan| plan.ids(text))
        {
            for ident in ids {
                into.add(ident)?;
            }
            return Ok(());
        }
        for ident in self.ids(PyString::new(py, text).as_any())?.iter() {
            into.add(ident)?;
        }
        Ok(())
    }

    /// `evidence.final_output()` (its text known: the check declares `final_output`) and
    /// `_answer_cites` of it (a copy of the memoized list, as `list(ids)` made), the ids
    /// kept in the evidence's memo as `evidence.memoized` keeps them.
    fn answer<'py>(&self, evidence: &Bound<'py, PyAny>) -> PyResult<Answer<'py>> {
        let py = evidence.py();
        let out = evidence::final_output(evidence)?;
        let text = out.getattr(intern!(py, "text"))?;
        let step = out.getattr(intern!(py, "step"))?;
        let ids = memoized(evidence, self.key.bind(py), || {
            Ok(self.ids(&text)?.into_any())
        })?
        .cast_into::<PyList>()?;
        Ok(Answer {
            step: (!step.is_none()).then_some(step),
            ids: ids.get_slice(0, ids.len()),
        })
    }
}

impl<'py> Answer<'py> {
    /// `span_ids([out.step]) if out.step else ()`.
    fn spans(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let [spans, _] = pointed(py, self.step.iter().cloned())?;
        Ok(spans)
    }

    /// `[span_ids, indexes]` of the answer's step (both empty when it is unknown).
    fn pointers(&self, py: Python<'py>) -> PyResult<[Bound<'py, PyAny>; 2]> {
        pointed(py, self.step.iter().cloned())
    }

    /// `{"cited": ids}`.
    fn cited(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let details = PyDict::new(py);
        details.set_item(intern!(py, "cited"), &self.ids)?;
        Ok(details)
    }
}

/// `", ".join(ids)` into `text`.
fn listed<'py>(text: &mut Text<'py>, ids: impl IntoIterator<Item = Bound<'py, PyAny>>) {
    for (i, ident) in ids.into_iter().enumerate() {
        if i > 0 {
            text.push(format_args!(", "));
        }
        text.str(ident);
    }
}

/// The finding `status` with `message` and `details`, pointing at `pointers`.
fn made<'py>(
    finding: &Py<SlotClass>,
    status: &Bound<'py, PyString>,
    message: Bound<'py, PyString>,
    details: Bound<'py, PyDict>,
    pointers: [Bound<'py, PyAny>; 2],
    unseen: bool,
) -> PyResult<Bound<'py, PyAny>> {
    found(finding, status, message, details, pointers, 0, unseen)
}

/// `citations_grounded`'s Python deciders: `_cited_ids`, `step_glob`, `result_text`,
/// `_source_texts`, `tool_responses`, `work_invisible`, `WORK_INVISIBLE`'s text,
/// `_continues_id` and `WorkBudgetExceeded`.
pub(crate) type GroundedHelpers<'py> = (
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyString>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
);

/// `citations_grounded`'s plan: its params and the Python deciders it is handed.
pub(crate) struct Grounded {
    cites: Cites,
    /// The tool globs whose results count (`sources`; empty: every call).
    globs: Py<PyList>,
    /// `CITATION_SCAN_BUDGET` when the check was made, and as `f"{budget:,}"` shows it.
    budget: i64,
    budget_shown: Py<PyString>,
    step_glob: Py<PyAny>,
    result_text: Py<PyAny>,
    source_texts: Py<PyAny>,
    tool_responses: Py<PyAny>,
    work_invisible: Py<PyAny>,
    invisible: Py<PyString>,
    continues_id: Py<PyAny>,
    exceeded: Py<PyAny>,
}

impl Grounded {
    /// The plan of `pattern` and `sources` (the params), searching under `budget`.
    pub(crate) fn new(
        pattern: Bound<'_, PyString>,
        sources: Bound<'_, PyList>,
        budget: &Bound<'_, PyInt>,
        (
            cited_ids,
            step_glob,
            result_text,
            source_texts,
            tool_responses,
            work_invisible,
            invisible,
            continues_id,
            exceeded,
        ): GroundedHelpers<'_>,
    ) -> PyResult<Self> {
        let py = pattern.py();
        let shown = budget
            .call_method1(intern!(py, "__format__"), (",",))?
            .cast_into::<PyString>()?;
        Ok(Self {
            cites: Cites::new(pattern, cited_ids)?,
            globs: sources.unbind(),
            budget: budget.extract()?,
            budget_shown: shown.unbind(),
            step_glob: step_glob.unbind(),
            result_text: result_text.unbind(),
            source_texts: source_texts.unbind(),
            tool_responses: tool_responses.unbind(),
            work_invisible: work_invisible.unbind(),
            invisible: invisible.unbind(),
            continues_id: continues_id.unbind(),
            exceeded: exceeded.unbind(),
        })
    }

    fn run<'py>(
        &self,
        evidence: &Bound<'py, PyAny>,
        finding: &Py<SlotClass>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = evidence.py();
        let answer = self.cites.answer(evidence)?;
        let pass = intern!(py, "pass");
        if answer.ids.is_empty() {
            let message = intern!(py, "the final answer cites no ids").clone();
            let pointers = [answer.spans(py)?, PyTuple::empty(py).into_any()];
            return made(finding, pass, message, PyDict::new(py), pointers, false);
        }
        let earlier = Earlier::of(answer.step.as_ref())?;
        // A final-answer tool delivers the answer; its result (often the answer echoed)
        // grounds nothing.
        let answering = evidence::answering(evidence)?;
        let some_answer = answering.is_truthy()?;
        let globs = self.globs.bind(py);
        let every = evidence::every_call(evidence)?.into_any();
        let mut calls = Vec::new();
        for step in every.try_iter()? {
            let step = step?;
            if some_answer && answering.contains(step.as_ptr() as usize)? {
                continue;
            }
            if !globs.is_empty() && self.step_glob.bind(py).call1((&step, globs))?.is_none() {
                continue;
            }
            if earlier.holds(&step, false)? {
                calls.push(step);
            }
        }
        let mut sources = Sources {
            plan: self,
            evidence,
            earlier,
            values: vec![None; calls.len()],
            steps: calls,
            pending: true,
            made: Vec::new(),
        };
        let continues = self.continues_id.bind(py);
        let mut asked = CiteAsked::default();
        let mut grounded = ground(
            &answer.ids,
            |i, searched| sources.source(i, searched),
            continues,
            true,
            self.budget,
            &mut asked,
        )?;
        if grounded.is_none() {
            // The stand-in texts are longer than the made ones: whether the made texts run
            // past the budget is decided on them.
            grounded = ground(
                &answer.ids,
                |i, searched| sources.source(i, searched),
                continues,
                false,
                self.budget,
                &mut asked,
            )?;
        }
        let Some((hits, _)) = grounded else {
            let mut text = Text::new(py);
            text.push(format_args!("searching the earlier results for "));
            text.str(
                answer
                    .ids
                    .len()
                    .into_pyobject(py)?
                    .call_method1(intern!(py, "__format__"), (",",))?,
            );
            text.push(format_args!(" cited ids exceeds the check's budget of "));
            text.str(self.budget_shown.bind(py).clone().into_any());
            text.push(format_args!(" scanned characters; not graded"));
            let error = self.exceeded.bind(py).call1((text.finish()?,))?;
            return Err(PyErr::from_value(error));
        };
        let grounded_ids = PyDict::new(py);
        let ungrounded = PyList::empty(py);
        let mut by = Vec::new();
        for (ident, hit) in answer.ids.iter().zip(hits) {
            match hit {
                Some(i) => {
                    let step = sources.steps[i].clone();
                    let index = StepFields::new(step.clone()).get(intern!(py, "index"))?;
                    grounded_ids.set_item(&ident, index)?;
                    by.push((ident, step));
                }
                None => ungrounded.append(ident)?,
            }
        }
        let details = PyDict::new(py);
        details.set_item(intern!(py, "cited"), &answer.ids)?;
        details.set_item(intern!(py, "grounded"), grounded_ids)?;
        details.set_item(intern!(py, "ungrounded"), &ungrounded)?;
        if ungrounded.is_empty() {
            let mut text = Text::new(py);
            text.push(format_args!(
                "all {} cited id(s) appear in earlier results: ",
                answer.ids.len()
            ));
            for (k, (ident, step)) in by.iter().enumerate() {
                if k > 0 {
                    text.push(format_args!(", "));
                }
                text.str(ident.clone());
                text.push(format_args!(" ("));
                text.str(where_text(&StepFields::new(step.clone()))?.into_any());
                text.push(format_args!(")"));
            }
            let steps = by.into_iter().map(|(_, step)| step);
            let [spans, _] = pointed(py, steps.clone().chain(answer.step.iter().cloned()))?;
            let [_, indexes] = pointed(py, steps)?;
            return made(
                finding,
                pass,
                text.finish()?,
                details,
                [spans, indexes],
                false,
            );
        }
        self.ungrounded(&mut sources, asked, &answer, &ungrounded, details, finding)
    }

    /// The answer when some cited id is in no source: missing evidence when a source's
    /// text was not captured or the run's work is invisible, else the failure, listing the
    /// ids every source returns.
    fn ungrounded<'py>(
        &self,
        sources: &mut Sources<'_, 'py>,
        mut asked: CiteAsked<'py>,
        answer: &Answer<'py>,
        ungrounded: &Bound<'py, PyList>,
        details: Bound<'py, PyDict>,
        finding: &Py<SlotClass>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = sources.evidence.py();
        // The ids the sources returned are listed from the texts the search stood in with
        // when the pattern's literal finds the same ids in them as in the made texts (see
        // `IdPattern::breaks_run`): the texts the search kept, a structured result not
        // written again by Python's JSON encoder (`_source_texts`, `result_text`).
        let alike = self
            .cites
            .plan
            .as_ref()
            .is_some_and(|plan| !plan.breaks_run());
        let mut texts = Vec::new();
        let mut unknown = Vec::new();
        let mut i = 0;
        while sources.reaches(i)? {
            let text = if alike {
                match asked.take_searched(i) {
                    Some(None) => None,
                    Some(Some(CiteText::Utf8(text, _))) => Some(Stand::Str(text)),
                    Some(Some(CiteText::Made(text, _))) => Some(Stand::Made(text)),
                    // Not asked (the search ran past the budget before, the made texts
                    // searched after), or a `str` holding a lone surrogate, kept as bytes.
                    Some(Some(CiteText::Passed(..))) | None => sources.searched(i)?,
                }
            } else {
                sources.made(i)?.map(Stand::Str)
            };
            let step = &sources.steps[i];
            if text.is_none() && step.getattr(intern!(py, "status"))?.ne("error")? {
                unknown.push(step.clone());
            }
            texts.extend(text);
            i += 1;
        }
        let missing = intern!(py, "missing");
        let mut text = Text::new(py);
        text.push(format_args!("cannot tell whether "));
        listed(&mut text, ungrounded.iter());
        text.push(format_args!(" came from a tool: "));
        if !unknown.is_empty() {
            text.push(format_args!("results not captured for "));
            text.str(listed_steps(PyList::new(py, unknown)?.as_any())?.into_any());
            let pointers = [answer.spans(py)?, PyTuple::empty(py).into_any()];
            return made(finding, missing, text.finish()?, details, pointers, false);
        }
        let trajectory = sources.evidence.getattr(intern!(py, "trajectory"))?;
        if self
            .work_invisible
            .bind(py)
            .call1((trajectory,))?
            .is_truthy()?
        {
            // No result is in the trace because none of the run's work is: an id the
            // answer cites may have come from any tool (DESIGN section 8: fail closed).
            text.str(self.invisible.bind(py).clone().into_any());
            text.push(format_args!(
                ", so nothing shows what the run's tools returned"
            ));
            let pointers = [answer.spans(py)?, PyTuple::empty(py).into_any()];
            return made(finding, missing, text.finish()?, details, pointers, false);
        }
        let returned = PySet::empty(py)?;
        for text in texts {
            match text {
                Stand::Str(text) => {
                    if !text.is_empty()? {
                        for ident in self.cites.ids(text.as_any())?.iter() {
                            returned.add(ident)?;
                        }
                    }
                }
                Stand::Made(text) => self.cites.add_ids(py, &text, &returned)?,
            }
        }
        let returned = PyList::new(py, returned.iter())?;
        returned.sort()?;
        let mut text = Text::new(py);
        text.push(format_args!(
            "cited id(s) not returned by any earlier tool or retrieval: "
        ));
        listed(&mut text, ungrounded.iter());
        text.push(format_args!(" (ids returned: "));
        if returned.is_empty() {
            text.push(format_args!("none"));
        } else {
            listed(&mut text, returned.iter());
        }
        text.push(format_args!(")"));
        let failed = details.copy()?;
        failed.set_item(intern!(py, "returned"), returned)?;
        let pointers = answer.pointers(py)?;
        let fail = intern!(py, "fail");
        made(finding, fail, text.finish()?, failed, pointers, false)
    }
}

/// `_earlier`'s test of a step against the final answer's step: ended no later than it
/// when both record an end, else earlier in step order; every step when it is unknown.
struct Earlier<'py> {
    /// The answer's step, its `end_ns` and `index`.
    last: Option<(Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>)>,
}

impl<'py> Earlier<'py> {
    fn of(step: Option<&Bound<'py, PyAny>>) -> PyResult<Self> {
        let Some(step) = step else {
            return Ok(Self { last: None });
        };
        let py = step.py();
        let fields = StepFields::new(step.clone());
        let end = fields.get(intern!(py, "end_ns"))?;
        let index = fields.get(intern!(py, "index"))?;
        Ok(Self {
            last: Some((step.clone(), end, index)),
        })
    }

    /// Whether `step` is earlier than the answer's step (or is it, `with_final`).
    fn holds(&self, step: &Bound<'py, PyAny>, with_final: bool) -> PyResult<bool> {
        let Some((last, end, index)) = &self.last else {
            return Ok(true);
        };
        if step.is(last) {
            return Ok(with_final);
        }
        let py = step.py();
        let fields = StepFields::new(step.clone());
        if !end.is_none() {
            let own = fields.get(intern!(py, "end_ns"))?;
            if !own.is_none() {
                return own.le(end);
            }
        }
        fields.get(intern!(py, "index"))?.lt(index)
    }
}

/// What `citations_grounded` searches, in order (`_Sources`): the earlier calls' results,
/// then the tool results each earlier model call was handed (read when a search first gets
/// past the calls).
struct Sources<'a, 'py> {
    plan: &'a Grounded,
    evidence: &'a Bound<'py, PyAny>,
    earlier: Earlier<'py>,
    /// Each source's step: the call, or the model call handed the result.
    steps: Vec<Bound<'py, PyAny>>,
    /// Each source's value: `None` for a call's result, else the result handed in.
    values: Vec<Option<Bound<'py, PyAny>>>,
    /// Whether the model calls' inputs are still to be read.
    pending: bool,
    /// Each source's made text once asked (`None` inside: not captured).
    made: Vec<Option<Option<Bound<'py, PyString>>>>,
}

/// A stand-in text (`_search_text`): a `str` of Python's or a text the core wrote.
enum Stand<'py> {
    Str(Bound<'py, PyString>),
    Made(String),
}

impl<'py> Sources<'_, 'py> {
    /// Whether there is an `i`-th source (the model calls' inputs read on first ask).
    fn reaches(&mut self, i: usize) -> PyResult<bool> {
        if i < self.steps.len() {
            return Ok(true);
        }
        if !std::mem::take(&mut self.pending) {
            return Ok(false);
        }
        let py = self.evidence.py();
        let groups = evidence::view_of(self.evidence)?;
        let responses = self.plan.tool_responses.bind(py);
        for model in groups.getattr(intern!(py, "generations"))?.try_iter()? {
            let model = model?;
            if !self.earlier.holds(&model, true)? {
                continue;
            }
            for value in responses.call1((&model,))?.try_iter()? {
                self.steps.push(model.clone());
                self.values.push(Some(value?));
            }
        }
        Ok(i < self.steps.len())
    }

    /// What `ground` asks: the `i`-th source's stand-in text (`searched`) or made text.
    fn source(&mut self, i: usize, searched: bool) -> PyResult<CiteSource<'py>> {
        if !self.reaches(i)? {
            return Ok(CiteSource::End);
        }
        if !searched {
            return Ok(match self.made(i)? {
                None => CiteSource::Unknown,
                Some(text) => CiteSource::Text(CiteText::of(text)?),
            });
        }
        Ok(match self.searched(i)? {
            None => CiteSource::Unknown,
            Some(Stand::Str(text)) => CiteSource::Text(CiteText::of(text)?),
            Some(Stand::Made(text)) => CiteSource::Text(CiteText::made(text)),
        })
    }

    /// The `i`-th source's stand-in text (`_source_search`; `None`: not captured), made
    /// anew at each ask: the search asks it once (and keeps it), a failure's list of
    /// returned ids again only what the search did not keep.
    fn searched(&self, i: usize) -> PyResult<Option<Stand<'py>>> {
        let py = self.evidence.py();
        let step = &self.steps[i];
        Ok(if let Some(value) = &self.values[i] {
            Some(self.stand_in(value)?)
        } else {
            // `_source_search`: the documents' text, then the result's.
            let fields = StepFields::new(step.clone());
            let mut parts = Vec::with_capacity(2);
            let documents = fields.get(intern!(py, "documents"))?;
            if !documents.is_none()
                && !fields
                    .get(intern!(py, "redacted"))?
                    .contains(intern!(py, "documents"))?
            {
                parts.push(self.stand_in(&documents)?);
            }
            if !field_absent(&fields, intern!(py, "result"))? {
                parts.push(self.stand_in(&fields.get(intern!(py, "result"))?)?);
            }
            let second = parts.pop();
            match (parts.pop(), second) {
                (None, None) => None,
                (None, Some(one)) => Some(one),
                (Some(first), Some(second)) => Some(joined_lines(py, first, second)?),
                (Some(_), None) => unreachable!("the second part is popped first"),
            }
        })
    }

    /// `_search_text(value)`'s text: a `str` itself, else the core's `json_indented(value,
    /// 0)`, else `result_text(value)`.
    fn stand_in(&self, value: &Bound<'py, PyAny>) -> PyResult<Stand<'py>> {
        if let Ok(text) = value.cast::<PyString>() {
            return Ok(Stand::Str(text.clone()));
        }
        if let Some(text) = json_indented(value, 0, 0) {
            return Ok(Stand::Made(text));
        }
        let py = value.py();
        let text = self.plan.result_text.bind(py).call1((value,))?;
        Ok(Stand::Str(text.cast_into::<PyString>()?))
    }

    /// The `i`-th source's made text (`_source_texts` of a call, `result_text` of a
    /// result handed in), asked once; `None`: not captured.
    fn made(&mut self, i: usize) -> PyResult<Option<Bound<'py, PyString>>> {
        if self.made.len() <= i {
            self.made.resize(i + 1, None);
        }
        if let Some(text) = &self.made[i] {
            return Ok(text.clone());
        }
        let py = self.evidence.py();
        let text = match &self.values[i] {
            Some(value) => self.plan.result_text.bind(py).call1((value,))?,
            None => self
                .plan
                .source_texts
                .bind(py)
                .call1((self.evidence, &self.steps[i]))?,
        };
        let text = if text.is_none() {
            None
        } else {
            Some(text.cast_into::<PyString>()?)
        };
        self.made[i] = Some(text.clone());
        Ok(text)
    }
}

/// `"\n".join` of two stand-in texts: in the core when both are UTF-8, else Python's.
fn joined_lines<'py>(
    py: Python<'py>,
    first: Stand<'py>,
    second: Stand<'py>,
) -> PyResult<Stand<'py>> {
    let utf8 = |part: &Stand<'py>| -> Option<String> {
        match part {
            Stand::Made(text) => Some(text.clone()),
            Stand::Str(text) => text.to_str().ok().map(str::to_owned),
        }
    };
    if let (Some(a), Some(b)) = (utf8(&first), utf8(&second)) {
        return Ok(Stand::Made(a + "\n" + &b));
    }
    let as_str = |part: Stand<'py>| -> Bound<'py, PyString> {
        match part {
            Stand::Str(text) => text,
            Stand::Made(text) => PyString::new(py, &text),
        }
    };
    let parts = PyList::new(py, [as_str(first), as_str(second)])?;
    Ok(Stand::Str(
        intern!(py, "\n")
            .call_method1(intern!(py, "join"), (parts,))?
            .cast_into::<PyString>()?,
    ))
}

/// `citation_required`'s Python deciders: `_cited_ids` and `find_degradation`.
pub(crate) type RequiredHelpers<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>);

/// `citation_required`'s plan: its params and the Python deciders it is handed.
pub(crate) struct Required {
    cites: Cites,
    min: Budget,
    /// The params, as `find_degradation` reads them, when `unless_degraded`.
    unless_degraded: Option<Py<PyAny>>,
    find_degradation: Py<PyAny>,
}

impl Required {
    /// The plan of `params` (`CitationRequiredParams`).
    pub(crate) fn new(
        params: &Bound<'_, PyAny>,
        (cited_ids, find_degradation): RequiredHelpers<'_>,
    ) -> PyResult<Self> {
        let py = params.py();
        let pattern = params
            .getattr(intern!(py, "pattern"))?
            .cast_into::<PyString>()?;
        let min = params.getattr(intern!(py, "min"))?;
        let exempt = params
            .getattr(intern!(py, "unless_degraded"))?
            .is_truthy()?;
        Ok(Self {
            cites: Cites::new(pattern, cited_ids)?,
            min: Budget::of(min.cast::<PyInt>()?)?,
            unless_degraded: exempt.then(|| params.clone().unbind()),
            find_degradation: find_degradation.unbind(),
        })
    }

    fn run<'py>(
        &self,
        evidence: &Bound<'py, PyAny>,
        finding: &Py<SlotClass>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = evidence.py();
        let answer = self.cites.answer(evidence)?;
        let (pass, missing) = (intern!(py, "pass"), intern!(py, "missing"));
        let nowhere = || -> PyResult<[Bound<'py, PyAny>; 2]> {
            Ok([answer.spans(py)?, PyTuple::empty(py).into_any()])
        };
        if answer.ids.len() >= self.min.max {
            let mut text = Text::new(py);
            text.push(format_args!("the answer cites "));
            listed(&mut text, answer.ids.iter());
            let details = answer.cited(py)?;
            return made(finding, pass, text.finish()?, details, nowhere()?, false);
        }
        if let Some(params) = &self.unless_degraded {
            // The exemption needs to see which tools ran (only asked when it matters).
            let unknown = intern!(
                py,
                "no citation, and whether the run was degraded is unknown: "
            );
            let gaps = evidence.call_method1(
                intern!(py, "gaps"),
                (PyTuple::new(py, [intern!(py, "tool_names")])?,),
            )?;
            if gaps.is_truthy()? {
                let mut text = Text::new(py);
                text.str(unknown.clone().into_any());
                text.str(gaps.get_item(0)?.str()?.into_any());
                return made(
                    finding,
                    missing,
                    text.finish()?,
                    PyDict::new(py),
                    nowhere()?,
                    false,
                );
            }
            let deg = self
                .find_degradation
                .bind(py)
                .call1((evidence, params.bind(py)))?;
            if deg.getattr(intern!(py, "degraded"))?.is_truthy()? {
                let mut text = Text::new(py);
                text.push(format_args!(
                    "no citation, not required: the run was degraded ("
                ));
                text.str(deg.call_method0(intern!(py, "describe"))?);
                text.push(format_args!(")"));
                let details = answer.cited(py)?;
                return made(finding, pass, text.finish()?, details, nowhere()?, false);
            }
            let steps = deg.getattr(intern!(py, "unknown"))?;
            if steps.is_truthy()? {
                let mut text = Text::new(py);
                text.str(unknown.clone().into_any());
                text.push(format_args!("results not captured for "));
                text.str(listed_steps(&steps)?.into_any());
                return made(
                    finding,
                    missing,
                    text.finish()?,
                    PyDict::new(py),
                    nowhere()?,
                    false,
                );
            }
        }
        // With the degradation exemption, a span no convention recognised may be the
        // failed call that exempts the answer (unseen: missing evidence there).
        let mut text = Text::new(py);
        text.push(format_args!(
            "the answer cites {} id(s) matching /",
            answer.ids.len()
        ));
        text.str(self.cites.pattern.bind(py).clone().into_any());
        text.push(format_args!("/, at least {} required", self.min.shown));
        let details = answer.cited(py)?;
        let pointers = answer.pointers(py)?;
        let fail = intern!(py, "fail");
        let unseen = self.unless_degraded.is_some();
        made(finding, fail, text.finish()?, details, pointers, unseen)
    }
}
