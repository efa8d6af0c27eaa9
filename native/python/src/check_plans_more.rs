//! The plans of the built-in checks whose every answer (not only the usual one) the core
//! makes, beside `check_plans.rs`' usual answers: `tool_sequence` (the calls taking part,
//! the alignment of `evidence::sequence`, the finding). Made by `CheckPlans`' methods and
//! run by the same `CheckPlan` as the others (its `Kind::More`), so the evaluator's loop
//! asks them as it asks every plan; a plan here never leaves a trajectory to the Python
//! body, which is the plan's `finding` (`OracleCheck.check` for a plug-in's subclass and
//! the tests).
//!
//! What only Python decides is handed in once, when the plan is made: whether a contract's
//! tool name names a recorded one (`model.tool_name.first_match`, asked only for what the
//! core's `tool_glob::NamedBy` leaves to it: a character class, a name it does not read),
//! why a call's arguments miss an item's constraints (`args_mismatch_why`, `args_mismatch`),
//! the unordered modes' assignment (`scipy`'s, imported when first asked), whether a requested
//! call shows it ran (`shown_run`, asked of the calls seen only as requests), which
//! nameless calls are a named call's twin (`nameless_twins`, asked only when a required
//! transfer is not seen) and a glob holding a character class (`fnmatch.fnmatchcase`). How
//! a message names steps is the core's own (`evidence::where_text`, `listed_steps`: the
//! functions Python's `where` and `list_steps` are), called directly.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt, PyList, PyString, PyTuple};

use crate::check_plans::{found, joined, pointed, Budget};
use crate::evidence::{
    self, items_named_by, items_subsets, listed_steps, sequence_diff, where_text, Subset,
};
use crate::pydict::{self, StepFields};
use crate::slots::SlotClass;
use crate::tool_glob::NamedBy;

/// A plan of this module, by check.
pub(crate) enum More {
    /// `tool_sequence` (boxed: the largest plan, made once per check).
    Sequence(Box<Sequence>),
    /// `tool_called`.
    Called(Called),
    /// `handoff`.
    Handoff(Handoff),
}

impl More {
    /// The check's finding on `ctx`'s `evidence`, made by `finding`'s maker.
    pub(crate) fn run<'py>(
        &self,
        evidence: &Bound<'py, PyAny>,
        finding: &Py<SlotClass>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match self {
            Self::Sequence(sequence) => sequence.run(evidence, finding),
            Self::Called(called) => called.run(evidence, finding),
            Self::Handoff(handoff) => handoff.run(evidence, finding),
        }
    }
}

/// `tool_sequence`'s modes as its finding reads them: which counts its failure's summary
/// names, and whether calls the trace did not show could make a failed sequence hold.
#[derive(Clone, Copy)]
enum Mode {
    Exact,
    InOrder,
    AnyOrder,
    Subset,
    Superset,
}

/// The counts a failure's summary may name, in the order it names them.
const OPS: [&str; 3] = ["missing", "unexpected", "args_mismatch"];

impl Mode {
    fn named(name: &str) -> Option<Self> {
        Some(match name {
            "exact" => Self::Exact,
            "in_order" => Self::InOrder,
            "any_order" => Self::AnyOrder,
            "subset" => Self::Subset,
            "superset" => Self::Superset,
            _ => return None,
        })
    }

    /// Whether the failure's summary names `OPS[op]` (`missing`, `unexpected`,
    /// `args_mismatch`): extra calls are allowed in `in_order` and `superset`, missing
    /// ones in `subset`.
    fn names(self, op: usize) -> bool {
        match self {
            Self::Exact | Self::AnyOrder => true,
            Self::InOrder | Self::Superset => op != 1,
            Self::Subset => op != 0,
        }
    }

    /// Whether calls the trace did not show could make the failed sequence hold (then the
    /// failure is `unseen`): in `in_order` and `superset` every failure is an expected call
    /// not seen (or seen with other arguments); in `exact` and `any_order` only a shortfall
    /// with nothing unexpected and no arguments amiss; in `subset` never (a call seen).
    fn curable(self, [missing, unexpected, args_mismatch]: [usize; 3]) -> bool {
        match self {
            Self::InOrder | Self::Superset => true,
            Self::Exact | Self::AnyOrder => missing > 0 && unexpected == 0 && args_mismatch == 0,
            Self::Subset => false,
        }
    }
}

/// `tool_sequence`'s plan: its params as the alignment reads them (made once per check,
/// `trace_tools.sequence_items`) and the Python deciders it is handed.
pub(crate) struct Sequence {
    mode: Mode,
    /// The mode's name, as the params hold it.
    name: Py<PyString>,
    /// `(item, (tool,), constrains_args)` per expected item.
    items: Py<PyTuple>,
    /// The expected items' tools.
    named: Py<PyTuple>,
    /// The tool globs left out of the calls aligned.
    ignore: Py<PyTuple>,
    /// Whether `ignore`, and `named`, name a call's tool (`first_match`).
    ignored_by: NamedBy,
    named_by: NamedBy,
    /// Per item, whether its tool names a call's (`items_named_by`).
    items_named: Vec<NamedBy>,
    /// Per item, its arguments' test when the core decides it (`items_subsets`).
    items_subset: Vec<Option<Subset>>,
    why_of: Py<PyAny>,
    assign: Py<PyAny>,
    /// `"tool sequence ({mode}) holds: "`.
    holds: Py<PyString>,
    /// `"tool sequence ({mode}) does not hold: "`.
    fails: Py<PyString>,
}

impl Sequence {
    /// The plan of `mode` (its name), `items`, their tools (`named`) and `ignore`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        mode: &Bound<'_, PyString>,
        items: Bound<'_, PyTuple>,
        named: Bound<'_, PyTuple>,
        ignore: Bound<'_, PyTuple>,
        first_match: Bound<'_, PyAny>,
        why_of: Bound<'_, PyAny>,
        assign: Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let py = mode.py();
        let text = mode.to_str()?;
        let kind = Mode::named(text).ok_or_else(|| {
            pyo3::exceptions::PyValueError::new_err(format!("no sequence mode named {text:?}"))
        })?;
        Ok(Self {
            mode: kind,
            holds: PyString::new(py, &format!("tool sequence ({text}) holds: ")).unbind(),
            fails: PyString::new(py, &format!("tool sequence ({text}) does not hold: ")).unbind(),
            name: mode.clone().unbind(),
            ignored_by: NamedBy::new(ignore.clone(), first_match.clone()),
            named_by: NamedBy::new(named.clone(), first_match.clone()),
            items_named: items_named_by(&items, &first_match)?,
            items_subset: items_subsets(&items)?,
            items: items.unbind(),
            named: named.unbind(),
            ignore: ignore.unbind(),
            why_of: why_of.unbind(),
            assign: assign.unbind(),
        })
    }

    /// `step_glob(step, patterns) is not None`: a pattern names the step's tool, else the
    /// name an MCP server ran the call under (`attributes.mcp_tool`, a `str`).
    fn glob(step: &Bound<'_, PyAny>, patterns: &NamedBy) -> PyResult<bool> {
        let py = step.py();
        let tool = step.getattr(intern!(py, "tool"))?;
        if patterns.names(&tool, false)? {
            return Ok(true);
        }
        let attributes = step.getattr(intern!(py, "attributes"))?;
        let served = pydict::get(&attributes, intern!(py, "mcp_tool"))?;
        Ok(served.is_instance_of::<PyString>() && patterns.names(&served, false)?)
    }

    fn run<'py>(
        &self,
        evidence: &Bound<'py, PyAny>,
        finding: &Py<SlotClass>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = evidence.py();
        let (named, ignore) = (self.named.bind(py), self.ignore.bind(py));
        let answering = evidence::answering(evidence)?;
        let every = evidence::every_call(evidence)?.into_any();
        let some_answer = answering.is_truthy()?;
        // A call matched by `ignore` takes no part; nor does a final-answer call (the
        // answer's delivery, not work) unless an expected item names its tool.
        let calls = if ignore.is_empty() && !some_answer {
            every
        } else {
            let kept = PyList::empty(py);
            for step in every.try_iter()? {
                let step = step?;
                if !ignore.is_empty() && Self::glob(&step, &self.ignored_by)? {
                    continue;
                }
                if some_answer
                    && answering.contains(step.as_ptr() as usize)?
                    && !Self::glob(&step, &self.named_by)?
                {
                    continue;
                }
                kept.append(step)?;
            }
            kept.into_any()
        };
        let (holds, counts, actual, diff, steps, text) = sequence_diff(
            self.name.bind(py).to_str()?,
            self.items.bind(py),
            named,
            &calls,
            &self.items_named,
            &self.items_subset,
            self.why_of.bind(py),
            self.assign.bind(py),
        )?;
        let details = PyDict::new(py);
        details.set_item(intern!(py, "mode"), self.name.bind(py))?;
        details.set_item(intern!(py, "expected"), PyList::new(py, named)?)?;
        details.set_item(intern!(py, "actual"), actual)?;
        details.set_item(intern!(py, "diff"), diff)?;
        let pointed = pointed(py, steps.iter())?;
        if holds {
            let message = self.holds.bind(py).add(text)?.cast_into::<PyString>()?;
            return found(
                finding,
                intern!(py, "pass"),
                message,
                details,
                pointed,
                0,
                false,
            );
        }
        let mut counted = [0usize; 3];
        for (count, op) in counted.iter_mut().zip(OPS) {
            *count = counts
                .get_item(op)?
                .map(|n| n.extract())
                .transpose()?
                .unwrap_or(0);
        }
        let summary = OPS
            .iter()
            .zip(counted)
            .enumerate()
            .filter(|&(i, (_, count))| self.mode.names(i) && count > 0)
            .map(|(_, (op, count))| format!("{count} {}", op.replace('_', " ")))
            .collect::<Vec<_>>()
            .join(", ");
        let summary = if summary.is_empty() && matches!(self.mode, Mode::Exact) {
            "order differs".to_owned()
        } else {
            summary
        };
        let message = self
            .fails
            .bind(py)
            .add(format!("{summary}\n"))?
            .add(text)?
            .cast_into::<PyString>()?;
        found(
            finding,
            intern!(py, "fail"),
            message,
            details,
            pointed,
            0,
            self.mode.curable(counted),
        )
    }
}

/// `tool_called`'s plan: its params (the tool, the bounds, whether and how the arguments
/// are constrained) and the Python deciders it is handed.
pub(crate) struct Called {
    /// The tool (name or glob), as given.
    tool: Py<PyString>,
    /// `(tool,)`, the selection `calls_of` is asked.
    tools: Py<PyTuple>,
    min: Budget,
    max: Option<Budget>,
    /// `"at least {min}"`, and `" and at most {max}"` when bounded.
    bound: String,
    /// The params when they constrain the arguments (`ArgsMatch.constrains_args`), what
    /// `args_mismatch` is asked with.
    constraints: Option<Py<PyAny>>,
    args_mismatch: Py<PyAny>,
    shown_run: Py<PyAny>,
    /// `trace_common.DENIED`: why a refused call never ran.
    denied: Py<PyString>,
}

/// `tool_called`'s Python deciders: `args_mismatch`, `shown_run`, and `DENIED`'s text.
pub(crate) type CalledHelpers<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyString>);

impl Called {
    /// The plan of `params` (`ToolCalledParams`: `tool`, `min`, `max`), whose arguments
    /// are constrained when `constrains`.
    pub(crate) fn new(
        params: &Bound<'_, PyAny>,
        constrains: bool,
        (args_mismatch, shown_run, denied): CalledHelpers<'_>,
    ) -> PyResult<Self> {
        let py = params.py();
        let tool = params
            .getattr(intern!(py, "tool"))?
            .cast_into::<PyString>()?;
        let min = Budget::of(params.getattr(intern!(py, "min"))?.cast::<PyInt>()?)?;
        let max = params.getattr(intern!(py, "max"))?;
        let max = if max.is_none() {
            None
        } else {
            Some(Budget::of(max.cast::<PyInt>()?)?)
        };
        let bound = match &max {
            Some(max) => format!("at least {} and at most {}", min.shown, max.shown),
            None => format!("at least {}", min.shown),
        };
        Ok(Self {
            tools: PyTuple::new(py, [&tool])?.unbind(),
            tool: tool.unbind(),
            min,
            max,
            bound,
            constraints: constrains.then(|| params.clone().unbind()),
            args_mismatch: args_mismatch.unbind(),
            shown_run: shown_run.unbind(),
            denied: denied.unbind(),
        })
    }

    fn run<'py>(
        &self,
        evidence: &Bound<'py, PyAny>,
        finding: &Py<SlotClass>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = evidence.py();
        // A call an approval step refused never ran: asking is not calling (`is_denied`).
        let asked = evidence::calls_of(evidence, self.tools.bind(py), false)?;
        let (denied_key, true_) = (intern!(py, "denied"), pyo3::types::PyBool::new(py, true));
        let mut calls = Vec::with_capacity(asked.len());
        for step in asked.iter() {
            let attributes = step.getattr(intern!(py, "attributes"))?;
            if !pydict::get(&attributes, denied_key)?.is(&*true_) {
                calls.push(step);
            }
        }
        let refused = asked.len() - calls.len();
        let mut matching = Vec::with_capacity(calls.len());
        let mut rejected = Vec::new();
        for step in &calls {
            let why = match &self.constraints {
                Some(spec) => self.args_mismatch.bind(py).call1((spec, step))?,
                None => py.None().into_bound(py),
            };
            if why.is_none() {
                matching.push(step.clone());
            } else {
                rejected.push((step.clone(), why));
            }
        }
        // A request nothing shows ran (`shown_run`: only a call seen as the model's
        // request, `synthesized`, may not) counts against an upper bound but never
        // towards the lower one.
        let mut unshown = Vec::new();
        for step in &matching {
            if step.getattr(intern!(py, "synthesized"))?.is_truthy()?
                && !self.shown_run.bind(py).call1((step,))?.is_truthy()?
            {
                unshown.push(step.clone());
            }
        }
        let n = matching.len() - unshown.len();
        let details = PyDict::new(py);
        details.set_item(intern!(py, "matching_calls"), n)?;
        details.set_item(intern!(py, "calls_of_tool"), calls.len())?;
        if refused > 0 {
            details.set_item(intern!(py, "denied_calls"), refused)?;
        }
        if !unshown.is_empty() {
            details.set_item(intern!(py, "calls_not_shown_run"), unshown.len())?;
        }
        let (tool, bound) = (self.tool.bind(py).clone().into_any(), &self.bound);
        let text = |s: String| PyString::new(py, &s).into_any();
        if n < self.min.max && n + unshown.len() >= self.min.max {
            let listed = listed_steps(PyList::new(py, &unshown)?.as_any())?.into_any();
            let message = joined(
                py,
                [
                    tool,
                    text(format!(
                        " shown called {n} time(s), expected {bound}; {} more requested, but \
                         nothing shows that they ran (no span of the tool, no result \
                         captured): ",
                        unshown.len()
                    )),
                    listed,
                ],
            )?;
            let pointed = pointed(py, unshown.iter().cloned())?;
            return found(
                finding,
                intern!(py, "missing"),
                message,
                details,
                pointed,
                0,
                false,
            );
        }
        if n < self.min.max {
            let mut parts = vec![tool, text(format!(" called {n} time(s)"))];
            if self.constraints.is_some() {
                parts.push(text(" with matching arguments".to_owned()));
            }
            parts.push(text(format!(", expected {bound}")));
            if !rejected.is_empty() {
                parts.push(text(" (non-matching: ".to_owned()));
                for (i, (step, why)) in rejected.iter().take(3).enumerate() {
                    if i > 0 {
                        parts.push(text("; ".to_owned()));
                    }
                    parts.push(where_of(step)?);
                    parts.push(text(": ".to_owned()));
                    parts.push(why.clone());
                }
                parts.push(text(")".to_owned()));
            }
            if refused > 0 {
                parts.push(text(format!("; {refused} more requested and ")));
                parts.push(self.denied.bind(py).clone().into_any());
            }
            let steps = PyList::new(py, rejected.iter().map(|(step, _)| step))?;
            let pointed = pointed(py, steps.iter())?;
            // The calls not seen may be in spans no convention recognised.
            let message = joined(py, parts)?;
            return found(
                finding,
                intern!(py, "fail"),
                message,
                details,
                pointed,
                0,
                true,
            );
        }
        if let Some(max) = &self.max {
            if matching.len() > max.max {
                let extra = PyList::new(py, &matching[max.max..])?;
                let listed = listed_steps(extra.as_any())?.into_any();
                let message = joined(
                    py,
                    [
                        tool,
                        text(format!(
                            " called {} time(s), expected {bound}; extra: ",
                            matching.len()
                        )),
                        listed,
                    ],
                )?;
                let pointed = pointed(py, extra.iter())?;
                return found(
                    finding,
                    intern!(py, "fail"),
                    message,
                    details,
                    pointed,
                    0,
                    false,
                );
            }
        }
        let message = joined(py, [tool, text(format!(" called {n} time(s) ({bound})"))])?;
        let pointed = pointed(py, matching.iter().cloned())?;
        found(
            finding,
            intern!(py, "pass"),
            message,
            details,
            pointed,
            0,
            false,
        )
    }
}

/// A transfer rule of `handoff` (`Transfer`): globs of the agent handing over and the one
/// taking over.
struct Rule {
    from: Glob,
    to: Glob,
    /// `str(rule)`: `"{from} -> {to}"`.
    text: Py<PyString>,
}

/// A glob of agent names as `fnmatch.fnmatchcase` reads it: `*` and `?` matched here,
/// character for character; a glob with a class (`[`) or not UTF-8 text asked of Python.
struct Glob {
    pattern: Py<PyString>,
    chars: Option<Vec<char>>,
}

impl Glob {
    fn new(pattern: Bound<'_, PyString>) -> Self {
        let chars = pattern
            .to_str()
            .ok()
            .filter(|text| !text.contains('['))
            .map(|text| text.chars().collect());
        Self {
            pattern: pattern.unbind(),
            chars,
        }
    }

    /// `fnmatch.fnmatchcase(name, pattern)`.
    fn matches(&self, name: &Bound<'_, PyAny>, fnmatch: &Bound<'_, PyAny>) -> PyResult<bool> {
        if let Some(pattern) = &self.chars {
            if let Some(text) = name.cast::<PyString>().ok().and_then(|n| n.to_str().ok()) {
                return Ok(wildcard(pattern, &text.chars().collect::<Vec<_>>()));
            }
        }
        fnmatch
            .call1((name, self.pattern.bind(name.py())))?
            .is_truthy()
    }
}

/// Whether `name` matches `pattern`, whose `*` stands for any run of characters and `?`
/// for any one (what `fnmatch` translates them to: `.*` and `.` with `DOTALL`), every
/// other character for itself.
fn wildcard(pattern: &[char], name: &[char]) -> bool {
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        if p < pattern.len() && (pattern[p] == '?' || pattern[p] == name[n]) && pattern[p] != '*' {
            p += 1;
            n += 1;
        } else if p < pattern.len() && pattern[p] == '*' {
            star = Some((p, n));
            p += 1;
        } else if let Some((sp, sn)) = star {
            p = sp + 1;
            n = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

/// A transfer the trace shows (`SeenTransfer`): who (`?` when not recorded) to whom, the
/// step, and how.
struct Seen<'py> {
    from: Bound<'py, PyAny>,
    to: Bound<'py, PyAny>,
    step: Bound<'py, PyAny>,
    via: &'static str,
}

impl Seen<'_> {
    /// Whether an agent of it was not recorded (`"?"`).
    fn unnamed(&self) -> PyResult<bool> {
        Ok(self.from.eq("?")? || self.to.eq("?")?)
    }
}

/// `handoff`'s plan: its rules and the Python deciders it is handed.
pub(crate) struct Handoff {
    required: Vec<Rule>,
    forbidden: Vec<Rule>,
    fnmatch: Py<PyAny>,
    nameless_twins: Py<PyAny>,
}

/// `handoff`'s Python deciders: `fnmatch.fnmatchcase`, `nameless_twins`.
pub(crate) type HandoffHelpers<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>);

impl Handoff {
    /// The plan of `required` and `forbidden` (`Transfer`s).
    pub(crate) fn new(
        required: &Bound<'_, PyAny>,
        forbidden: &Bound<'_, PyAny>,
        (fnmatch, nameless_twins): HandoffHelpers<'_>,
    ) -> PyResult<Self> {
        let rules = |given: &Bound<'_, PyAny>| -> PyResult<Vec<Rule>> {
            let py = given.py();
            let mut rules = Vec::new();
            for rule in given.try_iter()? {
                let rule = rule?;
                rules.push(Rule {
                    from: Glob::new(rule.getattr(intern!(py, "from_"))?.cast_into()?),
                    to: Glob::new(rule.getattr(intern!(py, "to"))?.cast_into()?),
                    text: rule.str()?.unbind(),
                });
            }
            Ok(rules)
        };
        Ok(Self {
            required: rules(required)?,
            forbidden: rules(forbidden)?,
            fnmatch: fnmatch.unbind(),
            nameless_twins: nameless_twins.unbind(),
        })
    }

    /// `_hits`: the transfers `rule` names, in the order seen.
    fn hits<'a, 'py>(&self, rule: &Rule, seen: &'a [Seen<'py>]) -> PyResult<Vec<&'a Seen<'py>>> {
        let mut hits = Vec::new();
        for s in seen {
            let fnmatch = self.fnmatch.bind(s.step.py());
            if rule.from.matches(&s.from, fnmatch)? && rule.to.matches(&s.to, fnmatch)? {
                hits.push(s);
            }
        }
        Ok(hits)
    }

    /// `_could_be`: whether a transfer with an unrecorded agent may be the one `rule`
    /// names.
    fn could_be(&self, rule: &Rule, s: &Seen<'_>) -> PyResult<bool> {
        let fnmatch = self.fnmatch.bind(s.step.py());
        Ok((s.from.eq("?")? || rule.from.matches(&s.from, fnmatch)?)
            && (s.to.eq("?")? || rule.to.matches(&s.to, fnmatch)?))
    }

    fn run<'py>(
        &self,
        evidence: &Bound<'py, PyAny>,
        finding: &Py<SlotClass>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = evidence.py();
        let seen = transfers(evidence)?;
        let text = |s: &str| PyString::new(py, s).into_any();
        let mut listed = Vec::new();
        let rows = PyList::empty(py);
        for (i, s) in seen.iter().enumerate() {
            if i > 0 {
                listed.push(text(", "));
            }
            listed.extend([s.from.clone(), text(" -> "), s.to.clone(), text(" (")]);
            listed.extend([text(s.via), text(", "), where_of(&s.step)?, text(")")]);
            let row = PyDict::new(py);
            row.set_item(intern!(py, "from"), &s.from)?;
            row.set_item(intern!(py, "to"), &s.to)?;
            row.set_item(intern!(py, "via"), s.via)?;
            rows.append(row)?;
        }
        let listed = joined(py, listed)?;
        let listed_or_none = if listed.is_empty()? {
            text("none")
        } else {
            listed.clone().into_any()
        };
        let details = PyDict::new(py);
        details.set_item(intern!(py, "transfers"), rows)?;
        // A transfer whose agents were not recorded may be the one a rule names: that rule
        // can be neither confirmed nor refuted.
        let mut named_none: Vec<&Seen<'py>> = Vec::new();
        for s in &seen {
            if s.unnamed()? {
                named_none.push(s);
            }
        }
        let mut unnamed: Vec<Bound<'py, PyAny>> =
            named_none.iter().map(|s| s.step.clone()).collect();
        let mut undecided: Vec<&Rule> = Vec::new();
        let mut missing: Vec<&Rule> = Vec::new();
        for (required, rule) in self
            .required
            .iter()
            .map(|r| (true, r))
            .chain(self.forbidden.iter().map(|r| (false, r)))
        {
            if !self.hits(rule, &seen)?.is_empty() {
                continue;
            }
            let mut could = false;
            for s in &named_none {
                if self.could_be(rule, s)? {
                    could = true;
                    break;
                }
            }
            if could {
                undecided.push(rule);
            } else if required {
                missing.push(rule);
            }
        }
        // A required transfer not seen may be one of the calls whose tool the trace did
        // not name (a native handoff is a tool call); a nameless call that is a named
        // call's twin is no other call.
        let mut nameless: Vec<Bound<'py, PyAny>> = Vec::new();
        if !missing.is_empty() {
            let twinned = self
                .nameless_twins
                .bind(py)
                .call1((evidence,))?
                .getattr(intern!(py, "twinned"))?;
            let view = evidence::view_of(evidence)?;
            for step in view.get().nameless.bind(py).iter() {
                if !twinned.contains(step.as_ptr() as usize)? {
                    nameless.push(step);
                }
            }
        }
        if !nameless.is_empty() {
            undecided.append(&mut missing);
            unnamed.extend(nameless.iter().cloned());
        }
        let mut bad: Vec<&Seen<'py>> = Vec::new();
        for rule in &self.forbidden {
            bad.extend(self.hits(rule, &seen)?);
        }
        let mut problems = Vec::new();
        for rule in &missing {
            problems.push(text("required transfer "));
            problems.push(rule.text.bind(py).clone().into_any());
            problems.push(text(" did not happen"));
            problems.push(text("; "));
        }
        for h in &bad {
            problems.extend([text("forbidden transfer "), h.from.clone(), text(" -> ")]);
            problems.extend([h.to.clone(), text(" ("), where_of(&h.step)?, text(")")]);
            problems.push(text("; "));
        }
        problems.pop(); // the last separator
        if problems.is_empty() && !undecided.is_empty() {
            let mut parts = vec![text("cannot tell whether ")];
            for (i, rule) in undecided.iter().enumerate() {
                if i > 0 {
                    parts.push(text(", "));
                }
                parts.push(rule.text.bind(py).clone().into_any());
            }
            parts.push(text(" happened: "));
            if nameless.is_empty() {
                parts.extend([
                    text("transfers seen without agent names ("),
                    listed.into_any(),
                ]);
                parts.push(text(")"));
            } else {
                parts.push(text(&format!(
                    "{} tool call(s) without a recorded tool name, any of which may be the \
                     transfer (",
                    nameless.len()
                )));
                parts.extend([where_of(&nameless[0])?, text("; transfers seen: ")]);
                parts.extend([listed_or_none, text(")")]);
            }
            let pointed = pointed(py, unnamed.iter().cloned())?;
            let message = joined(py, parts)?;
            return found(
                finding,
                intern!(py, "missing"),
                message,
                details,
                pointed,
                0,
                false,
            );
        }
        if !problems.is_empty() {
            problems.extend([text(" (transfers seen: "), listed_or_none, text(")")]);
            let steps = PyList::new(py, bad.iter().map(|h| &h.step))?;
            let pointed = pointed(py, steps.iter())?;
            // A required transfer not seen may be in spans no convention recognised; a
            // forbidden one seen is a failure whatever else the trace holds.
            let message = joined(py, problems)?;
            let unseen = bad.is_empty();
            return found(
                finding,
                intern!(py, "fail"),
                message,
                details,
                pointed,
                0,
                unseen,
            );
        }
        let hits = PyList::empty(py);
        for rule in &self.required {
            for h in self.hits(rule, &seen)? {
                hits.append(&h.step)?;
            }
        }
        let message = joined(py, [text("transfers as required: "), listed_or_none])?;
        found(
            finding,
            intern!(py, "pass"),
            message,
            details,
            pointed(py, hits.iter())?,
            0,
            false,
        )
    }
}

/// `evidence.where(step)`: how a message points at `step`.
fn where_of<'py>(step: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    Ok(where_text(&StepFields::new(step.clone()))?.into_any())
}

/// `find_transfers`: the handoff steps (`from_agent -> to_agent`), then delegation (an
/// agent step running inside another named agent's time span: the latest-starting such
/// agent, the first of equals, hands over), the first of each (from, to) pair kept.
fn transfers<'py>(evidence: &Bound<'py, PyAny>) -> PyResult<Vec<Seen<'py>>> {
    let py = evidence.py();
    let groups = evidence::view_of(evidence)?;
    let or_unknown = |value: Bound<'py, PyAny>| -> PyResult<Bound<'py, PyAny>> {
        Ok(if value.is_truthy()? {
            value
        } else {
            intern!(py, "?").clone().into_any()
        })
    };
    let mut seen = Vec::new();
    for h in groups.getattr(intern!(py, "handoffs"))?.try_iter()? {
        let h = h?;
        seen.push(Seen {
            from: or_unknown(h.getattr(intern!(py, "from_agent"))?)?,
            to: or_unknown(h.getattr(intern!(py, "to_agent"))?)?,
            step: h,
            via: "handoff",
        });
    }
    // The named agents with both times: (step, name, start, end).
    let mut agents = Vec::new();
    for a in groups.getattr(intern!(py, "agents"))?.try_iter()? {
        let a = a?;
        let name = a.getattr(intern!(py, "agent_name"))?;
        let start = a.getattr(intern!(py, "start_ns"))?;
        let end = a.getattr(intern!(py, "end_ns"))?;
        if name.is_truthy()? && !start.is_none() && !end.is_none() {
            agents.push((a, name, start, end));
        }
    }
    for (i, (inner, name, start, end)) in agents.iter().enumerate() {
        let mut parent: Option<usize> = None;
        for (j, (_, other, o_start, o_end)) in agents.iter().enumerate() {
            if j == i || other.eq(name)? || !o_start.le(start)? || !end.le(o_end)? {
                continue;
            }
            // `max(outers, key=start_ns)`: the first of the latest starts.
            let later = match parent {
                None => true,
                Some(p) => o_start.gt(&agents[p].2)?,
            };
            if later {
                parent = Some(j);
            }
        }
        if let Some(p) = parent {
            seen.push(Seen {
                from: agents[p].1.clone(),
                to: name.clone(),
                step: inner.clone(),
                via: "delegation",
            });
        }
    }
    let mut unique: Vec<Seen<'py>> = Vec::with_capacity(seen.len());
    for s in seen {
        let mut repeated = false;
        for u in &unique {
            if u.from.eq(&s.from)? && u.to.eq(&s.to)? {
                repeated = true;
                break;
            }
        }
        if !repeated {
            unique.push(s);
        }
    }
    Ok(unique)
}

#[cfg(test)]
mod tests {
    use super::wildcard;

    fn glob(pattern: &str, name: &str) -> bool {
        let chars = |text: &str| text.chars().collect::<Vec<_>>();
        wildcard(&chars(pattern), &chars(name))
    }

    #[test]
    fn matches_as_fnmatch_translates_stars_and_marks() {
        assert!(glob("*", ""));
        assert!(glob("*", "researcher"));
        assert!(glob("research*", "research_assistant"));
        assert!(glob("*assistant", "research_assistant"));
        assert!(glob("r*s*t", "research_assistant"));
        assert!(glob("?esearcher", "researcher"));
        assert!(glob("a?c", "a\nc")); // `?` is `.` under DOTALL
        assert!(glob("**a**", "bab"));
        assert!(glob("é*", "éa"));
        assert!(!glob("?esearcher", "esearcher"));
        assert!(!glob("research*", "researc"));
        assert!(!glob("*assistant", "assistant_x"));
        assert!(!glob("", "a"));
        assert!(!glob("a*b*c", "abca_b"));
        assert!(glob("a*b*c", "aXbYbZc"));
    }
}
