//! Built-in checks' usual answers, decided in the core (`CheckPlan`): what most
//! trajectories get from `tool_not_called`, `tool_errors`, `tool_retries`, `loop_detected`,
//! `max_tool_calls`, `max_steps`, `tokens` and `latency` (nothing forbidden called, no call
//! failed, no retry, no loop, calls, steps, tokens and time within their bounds) is a
//! memoized evidence ask or two and a finding whose message the params and a count decide;
//! `max_tool_calls`, `max_steps` (its kinds whole groups of the step view), `tokens` and
//! `latency` also word their failures (a count, sum or duration over its bound), the steps
//! over the limit listed as `evidence.list_steps` lists them (`evidence::listed_steps`,
//! called directly); `tool_errors` its failed calls within `max` or over it (no call
//! nameless), and `tool_retries` (retries within `max` and `max_per_tool` or over one),
//! `tool_not_called` (the forbidden calls within `max` or over it) and `loop_detected` (the
//! loops within `max` or over it) every answer. What a plan reads of the steps is the step
//! view's records (`StepView`: its groups' sizes and records, the leaf model calls and their token
//! counts, the run's extent), read once per trajectory; the few steps a finding points at
//! are read from their instance dicts. Made once per check
//! from its params (`CheckPlans`, when its oracle is built), a plan is run by the
//! evaluator's loop (`CheckRunner`, `checks.rs`) instead of the oracle's Python `check`, the
//! finding built in its memory (`SlotClass`); anything else (a forbidden call found,
//! candidates for a loop, steps over `max` of kinds the view's groups do not make, tokens
//! over a limit counted by values other than `int`s within `i64`, an unset end, an
//! answering or nameless call, a merged model call) is "not handled" (`None`) and the
//! Python body runs, which starts by asking the same plan (and ends on its `within` where
//! it finds a count within the bound), so each finding has one implementation.
//!
//! The evidence is read through `Evidence`'s own memoized answers, from its memo and its
//! view without a Python frame (`evidence::calls_of`, `answering`, `stopped_short`, the
//! view's nameless calls and leaf model calls, `repeated_args_candidates`' screens
//! (`evidence::candidates`); then the `step_normalized_args` helper of `trace_common`, the
//! failed calls' table `failures.rs` keeps and the retries `retries.rs` finds in the same
//! memo), so a plan and a Python body that ask after it share every answer.

use std::fmt::{self, Write as _};
use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PySet, PyString, PyTuple, PyType,
};

use crate::check_plans_agentbench::Bench;
use crate::check_plans_answer::{Answer, Degraded, DegradedHelpers};
use crate::check_plans_cite::{Cite, Grounded, GroundedHelpers, Required, RequiredHelpers};
use crate::check_plans_more::{Called, CalledHelpers, Handoff, HandoffHelpers, More, Sequence};
use crate::checks::FINDING_FIELDS;
use crate::evidence::{self, listed_steps, view_of, where_text, ScreenRules, StepView};
use crate::failures::Failures;
use crate::pydict::{self, StepFields};
use crate::retries::find_retries;
use crate::slots::{Fallback, SlotClass};

/// What a plan decides and the params it reads (the check's, copied once).
enum Kind {
    /// `tool_not_called`: none of `tools` called (`calls_of(tools, True)` empty), else
    /// the calls found within `max` or over it.
    NotCalled {
        tools: Py<PyTuple>,
        /// `"none of {', '.join(tools)} was called"`.
        message: Py<PyString>,
        max: Budget,
    },
    /// `tool_errors`: the calls of `tools` that failed under `pattern` (`failed_calls`; none
    /// in most runs), those an approval step refused left out, within `max` or over it, when
    /// no call is nameless (no nameless twin whose failure is a named call's).
    Errors {
        pattern: Py<PyAny>,
        tools: Py<PyTuple>,
        max: Budget,
    },
    /// `tool_retries`: no call failed under `pattern`, so none was retried; else the retries
    /// found (`retries::find_retries`, memoized) within `max` and `per_tool` or over one.
    Retries {
        pattern: Py<PyAny>,
        tools: Py<PyTuple>,
        max: Budget,
        per_tool: Option<Budget>,
    },
    /// `loop_detected`: fewer than `threshold` calls of `tools`, or none that may repeat
    /// another's arguments often enough (`repeated_args_candidates` empty); else the
    /// candidates grouped by tool and normalized arguments (`normalized`,
    /// `trace_common.step_normalized_args`), the groups of `threshold` calls or more the
    /// loops, within `max` or over it.
    Loop {
        tools: Py<PyTuple>,
        threshold: Budget,
        max: Budget,
        normalized: Py<PyAny>,
        /// `"no tool called {threshold}+ times with the same arguments"`.
        message: Py<PyString>,
    },
    /// `latency` (trace scope): every step's end set, and the run's extent (first instant
    /// to last, `StepView`'s `Extent`) within `max_ms`.
    Latency {
        max_ms: f64,
        /// `f"{max_ms:g}"` (Python's own formatting, once).
        limit: String,
        /// The runs over `max_ms` tolerated (the check's `max`): past none, a run over
        /// `max_ms` fails; else it passes, one budgeted exception used.
        tolerated: Budget,
    },
    /// `max_tool_calls`: the count of `tools`' calls within `max` or over it, when no call
    /// answers and none is nameless (no call to leave out of the count).
    MaxCalls { tools: Py<PyTuple>, max: Budget },
    /// `tokens`: the leaf model calls' input, output and total tokens within each limit
    /// given (`max_input_tokens`, `max_output_tokens`, `max_total_tokens`).
    Tokens { limits: [Option<Py<PyAny>>; 3] },
    /// `max_steps`: at most `max` steps of `kinds`, when no call is nameless (no twin to
    /// leave out), no counted step stands for several model calls, and model calls are
    /// recorded where `kinds` counts them and something drove them.
    MaxSteps {
        kinds: Py<PyFrozenSet>,
        /// The kinds' values, sorted (each finding's `details["kinds"]` is a copy).
        names: Py<PyList>,
        /// Whether `kinds` holds the model call's kind (`StepKind.GENERATION`).
        generations: bool,
        /// Which of the step view's groups `kinds` is made of, `[tool calls, model calls,
        /// agents]`, when it is made of whole groups (every tool-call kind or none, no
        /// handoff or other step): the count is then the groups' sizes and the steps
        /// counted their records, no step's kind read again. `None`: each step's kind is
        /// read.
        groups: Option<[bool; 3]>,
        max: Budget,
    },
    /// A plan that answers every trajectory (`check_plans_more`).
    More(More),
    /// A citation check's plan, which answers every trajectory (`check_plans_cite`).
    Cite(Cite),
    /// `degraded_answer`'s and `evidence`'s plans (`check_plans_answer`).
    Answer(Answer),
    /// An AgentBench check's usual answer (`check_plans_agentbench`).
    Bench(Bench),
}

/// A contract's number (`max`, `min`, `threshold`: an `int` of any size, `>= 0` by its
/// validation): compared with a count as a `usize` (past every count when larger), shown
/// as Python shows it. Taking a `usize` instead would make `max: 10**30`, which the Python
/// body judged, an error building the check.
pub(crate) struct Budget {
    pub(crate) max: usize,
    pub(crate) shown: String,
}

impl Budget {
    pub(crate) fn of(value: &Bound<'_, PyInt>) -> PyResult<Self> {
        let max = match value.extract() {
            Ok(max) => max,
            Err(_) if value.gt(0)? => usize::MAX,
            Err(err) => return Err(err),
        };
        Ok(Self {
            max,
            shown: value.str()?.to_str()?.to_owned(),
        })
    }
}

/// The plans' shared parts: how a `Finding` is made, why each call failed (`Failures`:
/// `trace_common.call_failures`' table, which these plans and the Python read), what
/// `trace_common.repeated_args_candidates`' screens read (`ScreenRules`: the plans find
/// the candidates in the core, without that wrapper's frame) and the evidence helper the
/// plans ask (`step_normalized_args`). One per process (`trace_common.PLANS`); its
/// methods make each check's plan.
#[pyclass(module = "otel_oracles._native", name = "CheckPlans", frozen)]
pub struct CheckPlans {
    finding: Py<SlotClass>,
    failures: Arc<Failures>,
    screens: Arc<ScreenRules>,
    normalized: Py<PyAny>,
}

#[pymethods]
impl CheckPlans {
    #[new]
    fn new(
        finding: &Bound<'_, PyType>,
        screens: (Bound<'_, PyFrozenSet>, Vec<Bound<'_, PyAny>>),
        step_normalized_args: Bound<'_, PyAny>,
        failures: (Bound<'_, PyAny>, Bound<'_, PyString>, Bound<'_, PyString>),
    ) -> PyResult<Self> {
        let maker = SlotClass::load(finding, &FINDING_FIELDS, Fallback::Positional)?;
        let (search, denied, default) = failures;
        let (meta, plain) = screens;
        Ok(Self {
            finding: Py::new(finding.py(), maker)?,
            failures: Arc::new(Failures::new(search, denied, default)),
            screens: Arc::new(ScreenRules::new(meta, plain)),
            normalized: step_normalized_args.unbind(),
        })
    }

    /// `call_failures(evidence, error_pattern)`: `id()` of each tool call of `evidence`'s
    /// trajectory -> why it failed, or `None` (`Failures::every`, memoized).
    fn call_failures<'py>(
        &self,
        evidence: &Bound<'py, PyAny>,
        error_pattern: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        self.failures.every(evidence, error_pattern)
    }

    /// `failed_calls(evidence, error_pattern)`: the failed entries of `call_failures`
    /// (`Failures::failed`, memoized).
    fn failed_calls<'py>(
        &self,
        evidence: &Bound<'py, PyAny>,
        error_pattern: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        self.failures.failed(evidence, error_pattern)
    }

    /// `call_failure(evidence, step, error_pattern)`: why `step` failed, or `None`
    /// (`Failures::of`).
    fn call_failure<'py>(
        &self,
        evidence: &Bound<'py, PyAny>,
        step: Bound<'py, PyAny>,
        error_pattern: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.failures.of(evidence, step, error_pattern)
    }

    /// `tool_not_called`'s plan for `tools` (its names or globs, as given) and `max`.
    fn tool_not_called(
        &self,
        py: Python<'_>,
        tools: Bound<'_, PyTuple>,
        max: &Bound<'_, PyInt>,
    ) -> PyResult<CheckPlan> {
        // The names as given (any `str`), joined as the Python f-string joined them.
        let mut text = Text::new(py);
        text.push(format_args!("none of "));
        for (i, name) in tools.iter().enumerate() {
            if i > 0 {
                text.push(format_args!(", "));
            }
            text.str(name);
        }
        text.push(format_args!(" was called"));
        self.plan(
            py,
            Kind::NotCalled {
                message: text.finish()?.unbind(),
                tools: tools.unbind(),
                max: Budget::of(max)?,
            },
        )
    }

    /// `tool_errors`' plan for `error_pattern`, `tools` and `max`.
    fn tool_errors(
        &self,
        py: Python<'_>,
        error_pattern: Bound<'_, PyAny>,
        tools: Bound<'_, PyTuple>,
        max: &Bound<'_, PyInt>,
    ) -> PyResult<CheckPlan> {
        self.plan(
            py,
            Kind::Errors {
                pattern: error_pattern.unbind(),
                tools: tools.unbind(),
                max: Budget::of(max)?,
            },
        )
    }

    /// `tool_retries`' plan for `error_pattern`, `tools`, `max` and `max_per_tool`.
    #[pyo3(signature = (error_pattern, tools, max, max_per_tool))]
    fn tool_retries(
        &self,
        py: Python<'_>,
        error_pattern: Bound<'_, PyAny>,
        tools: Bound<'_, PyTuple>,
        max: &Bound<'_, PyInt>,
        max_per_tool: Option<&Bound<'_, PyInt>>,
    ) -> PyResult<CheckPlan> {
        self.plan(
            py,
            Kind::Retries {
                pattern: error_pattern.unbind(),
                tools: tools.unbind(),
                max: Budget::of(max)?,
                per_tool: max_per_tool.map(Budget::of).transpose()?,
            },
        )
    }

    /// `(retry, failed call it repeats, why)` of `tools`' calls failed under
    /// `error_pattern` on `evidence`, memoized (`retries::find_retries`; what
    /// `trace_tools.find_retries` is).
    fn find_retries<'py>(
        &self,
        evidence: &Bound<'py, PyAny>,
        tools: &Bound<'py, PyAny>,
        error_pattern: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        find_retries(evidence, tools, error_pattern, &self.failures)
    }

    /// `loop_detected`'s plan for `tools`, `threshold` and `max`.
    fn loop_detected(
        &self,
        py: Python<'_>,
        tools: Bound<'_, PyTuple>,
        threshold: &Bound<'_, PyInt>,
        max: &Bound<'_, PyInt>,
    ) -> PyResult<CheckPlan> {
        let threshold = Budget::of(threshold)?;
        let message = format!(
            "no tool called {}+ times with the same arguments",
            threshold.shown
        );
        self.plan(
            py,
            Kind::Loop {
                tools: tools.unbind(),
                threshold,
                max: Budget::of(max)?,
                normalized: self.normalized.clone_ref(py),
                message: PyString::new(py, &message).unbind(),
            },
        )
    }

    /// `tokens`' plan for its three limits (`None` where not given).
    #[pyo3(signature = (max_input_tokens, max_output_tokens, max_total_tokens))]
    fn tokens(
        &self,
        py: Python<'_>,
        max_input_tokens: Option<Bound<'_, PyAny>>,
        max_output_tokens: Option<Bound<'_, PyAny>>,
        max_total_tokens: Option<Bound<'_, PyAny>>,
    ) -> PyResult<CheckPlan> {
        let limits = [max_input_tokens, max_output_tokens, max_total_tokens];
        self.plan(
            py,
            Kind::Tokens {
                limits: limits.map(|limit| limit.map(Bound::unbind)),
            },
        )
    }

    /// `max_steps`' plan for `kinds` (`StepKind`s), `generation` (`StepKind.GENERATION`)
    /// and `max`; `toolish` (`TOOLISH_KINDS`) and `agent` (`StepKind.AGENT`) are the kinds
    /// of the step view's other groups.
    fn max_steps(
        &self,
        py: Python<'_>,
        kinds: Bound<'_, PyFrozenSet>,
        generation: Bound<'_, PyAny>,
        max: &Bound<'_, PyInt>,
        toolish: Bound<'_, PyFrozenSet>,
        agent: Bound<'_, PyAny>,
    ) -> PyResult<CheckPlan> {
        let mut names: Vec<String> = Vec::new();
        for kind in kinds.iter() {
            names.push(kind.getattr(intern!(py, "value"))?.extract()?);
        }
        names.sort_unstable();
        let mut calls = 0usize;
        for kind in toolish.iter() {
            calls += usize::from(kinds.contains(kind)?);
        }
        let generations = kinds.contains(generation)?;
        let agents = kinds.contains(agent)?;
        let whole = (calls == 0 || calls == toolish.len())
            && kinds.len() == calls + usize::from(generations) + usize::from(agents);
        self.plan(
            py,
            Kind::MaxSteps {
                generations,
                groups: whole.then_some([calls > 0, generations, agents]),
                names: PyList::new(py, names)?.unbind(),
                kinds: kinds.unbind(),
                max: Budget::of(max)?,
            },
        )
    }

    /// `latency`'s plan for its trace scope, `max_ms` and `max` (the runs over `max_ms`
    /// tolerated; the other scopes time each call in Python).
    fn latency(
        &self,
        py: Python<'_>,
        max_ms: Bound<'_, PyFloat>,
        max: &Bound<'_, PyInt>,
    ) -> PyResult<CheckPlan> {
        let limit = max_ms
            .call_method1(intern!(py, "__format__"), ("g",))?
            .extract()?;
        self.plan(
            py,
            Kind::Latency {
                max_ms: max_ms.value(),
                limit,
                tolerated: Budget::of(max)?,
            },
        )
    }

    /// `max_tool_calls`' plan for `tools` and `max`.
    #[pyo3(name = "max_tool_calls")]
    fn max_calls(
        &self,
        py: Python<'_>,
        tools: Bound<'_, PyTuple>,
        max: &Bound<'_, PyInt>,
    ) -> PyResult<CheckPlan> {
        self.plan(
            py,
            Kind::MaxCalls {
                tools: tools.unbind(),
                max: Budget::of(max)?,
            },
        )
    }

    /// `tool_sequence`'s plan (`check_plans_more::Sequence`).
    #[allow(clippy::too_many_arguments)]
    fn tool_sequence(
        &self,
        py: Python<'_>,
        mode: Bound<'_, PyString>,
        items: Bound<'_, PyTuple>,
        named: Bound<'_, PyTuple>,
        ignore: Bound<'_, PyTuple>,
        first_match: Bound<'_, PyAny>,
        why_of: Bound<'_, PyAny>,
        assign: Bound<'_, PyAny>,
    ) -> PyResult<CheckPlan> {
        let plan = Sequence::new(&mode, items, named, ignore, first_match, why_of, assign)?;
        self.plan(py, Kind::More(More::Sequence(Box::new(plan))))
    }

    /// `tool_called`'s plan for `params` (`check_plans_more::Called`).
    fn tool_called(
        &self,
        py: Python<'_>,
        params: Bound<'_, PyAny>,
        constrains: bool,
        helpers: CalledHelpers<'_>,
    ) -> PyResult<CheckPlan> {
        let plan = Called::new(&params, constrains, helpers)?;
        self.plan(py, Kind::More(More::Called(plan)))
    }

    /// `handoff`'s plan for its `required` and `forbidden` transfers
    /// (`check_plans_more::Handoff`).
    fn handoff(
        &self,
        py: Python<'_>,
        required: Bound<'_, PyAny>,
        forbidden: Bound<'_, PyAny>,
        helpers: HandoffHelpers<'_>,
    ) -> PyResult<CheckPlan> {
        let plan = Handoff::new(&required, &forbidden, helpers)?;
        self.plan(py, Kind::More(More::Handoff(plan)))
    }

    /// `citations_grounded`'s plan for its `pattern` and `sources`, searching under
    /// `budget` (`check_plans_cite::Grounded`).
    fn citations_grounded(
        &self,
        py: Python<'_>,
        pattern: Bound<'_, PyString>,
        sources: Bound<'_, PyList>,
        budget: &Bound<'_, PyInt>,
        helpers: GroundedHelpers<'_>,
    ) -> PyResult<CheckPlan> {
        let plan = Grounded::new(pattern, sources, budget, helpers)?;
        self.plan(py, Kind::Cite(Cite::Grounded(plan)))
    }

    /// `citation_required`'s plan for `params` (`check_plans_cite::Required`).
    fn citation_required(
        &self,
        py: Python<'_>,
        params: Bound<'_, PyAny>,
        helpers: RequiredHelpers<'_>,
    ) -> PyResult<CheckPlan> {
        let plan = Required::new(&params, helpers)?;
        self.plan(py, Kind::Cite(Cite::Required(plan)))
    }

    /// `degraded_answer`'s plan (`check_plans_answer::Degraded`): the optional params
    /// `None` when not given or empty.
    #[allow(clippy::too_many_arguments)]
    fn degraded_answer(
        &self,
        py: Python<'_>,
        dependencies: Bound<'_, PyTuple>,
        degraded_attribute: Option<Bound<'_, PyAny>>,
        error_pattern: Bound<'_, PyAny>,
        empty_pattern: Option<Bound<'_, PyAny>>,
        must_disclose: Option<Bound<'_, PyAny>>,
        uncertainty_pattern: Bound<'_, PyAny>,
        helpers: DegradedHelpers<'_>,
    ) -> PyResult<CheckPlan> {
        let plan = Degraded::new(
            dependencies,
            degraded_attribute,
            error_pattern,
            empty_pattern,
            must_disclose,
            uncertainty_pattern,
            helpers,
        );
        self.plan(py, Kind::Answer(Answer::Degraded(Box::new(plan))))
    }

    /// `evidence`'s plan: its pass says `message`.
    fn evidence(&self, py: Python<'_>, message: Bound<'_, PyString>) -> PyResult<CheckPlan> {
        self.plan(py, Kind::Answer(Answer::Captured(message.unbind())))
    }

    /// `no_network`'s plan (`check_plans_agentbench::Bench::no_network`).
    fn no_network(
        &self,
        py: Python<'_>,
        search: Bound<'_, PyAny>,
        scan: &Bound<'_, PyTuple>,
        outbound: Bound<'_, PyAny>,
    ) -> PyResult<CheckPlan> {
        let plan = Bench::no_network(search, scan, outbound)?;
        self.plan(py, Kind::Bench(plan))
    }

    /// `file_not_modified`'s plan (`check_plans_agentbench::Bench::file_not_modified`).
    fn file_not_modified(
        &self,
        py: Python<'_>,
        path: Bound<'_, PyString>,
        target: Bound<'_, PyString>,
        name: &Bound<'_, PyString>,
        file_edit: Bound<'_, PyAny>,
    ) -> PyResult<CheckPlan> {
        let plan = Bench::file_not_modified(path, target, name, file_edit)?;
        self.plan(py, Kind::Bench(plan))
    }

    /// `assertion_exists`' plan (`check_plans_agentbench::Bench::assertion_exists`).
    fn assertion_exists(
        &self,
        py: Python<'_>,
        path: Bound<'_, PyString>,
        target: Bound<'_, PyString>,
        name: &Bound<'_, PyString>,
        file_edit: Bound<'_, PyAny>,
        command_keys: Bound<'_, PyTuple>,
    ) -> PyResult<CheckPlan> {
        let plan = Bench::assertion_exists(path, target, name, file_edit, command_keys)?;
        self.plan(py, Kind::Bench(plan))
    }
}

impl CheckPlans {
    fn plan(&self, py: Python<'_>, kind: Kind) -> PyResult<CheckPlan> {
        Ok(CheckPlan {
            kind,
            finding: self.finding.clone_ref(py),
            failures: Arc::clone(&self.failures),
            screens: Arc::clone(&self.screens),
        })
    }
}

/// One check's plan (see the module's text): `finding` is its usual answer or `None`;
/// `within` the finding of a trajectory with nothing over the check's bound, which the
/// Python body returns where it finds so on a path the plan leaves to it.
#[pyclass(module = "otel_oracles._native", name = "CheckPlan", frozen)]
pub struct CheckPlan {
    kind: Kind,
    finding: Py<SlotClass>,
    failures: Arc<Failures>,
    screens: Arc<ScreenRules>,
}

#[pymethods]
impl CheckPlan {
    /// The check's finding on `ctx` (a `GradeContext`) when it is the usual answer, else
    /// `None` (the Python body decides).
    #[pyo3(name = "finding")]
    fn py_finding<'py>(&self, ctx: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.run(ctx, &ctx.getattr(intern!(ctx.py(), "evidence"))?)
    }

    /// The finding of `ctx` with nothing over the check's bound, `count` calls counted
    /// (`max_tool_calls`; the other checks count nothing here).
    fn within<'py>(&self, ctx: &Bound<'py, PyAny>, count: usize) -> PyResult<Bound<'py, PyAny>> {
        let evidence = ctx.getattr(intern!(ctx.py(), "evidence"))?;
        self.settled(&evidence, count)
    }

    /// `max_tool_calls`' failure, `calls` (every one counted) over the check's `max`: the
    /// Python body's answer when it left answering or nameless calls out of the count.
    #[pyo3(name = "over")]
    fn py_over<'py>(&self, calls: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyAny>> {
        match &self.kind {
            Kind::MaxCalls { max, .. } if calls.len() > max.max => self.over(calls, max.max),
            _ => Err(PyValueError::new_err(
                "over: only max_tool_calls' plan words a count over its max",
            )),
        }
    }
}

impl CheckPlan {
    /// The usual answer (`finding`) on `ctx` and its `evidence` (`ctx.evidence`, which the
    /// evaluator's loop reads once for every check of a contract), what the loop asks first.
    pub(crate) fn run<'py>(
        &self,
        ctx: &Bound<'py, PyAny>,
        evidence: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = ctx.py();
        let handled = match &self.kind {
            Kind::NotCalled { tools, max, .. } => {
                let calls = self.calls_of(evidence, tools)?;
                if !calls.is_empty() {
                    return self.forbidden(&calls, max).map(Some);
                }
                true
            }
            Kind::Errors {
                pattern,
                tools,
                max,
            } => {
                let failed = self.failed(evidence, pattern)?;
                if failed.is_empty() {
                    true
                } else if nameless(evidence)? {
                    return Ok(None); // a failure a nameless twin recorded: the Python body's
                } else {
                    return self.errors(evidence, &failed, tools, max).map(Some);
                }
            }
            Kind::Retries {
                pattern,
                tools,
                max,
                per_tool,
            } => {
                if self.failed(evidence, pattern)?.is_empty() {
                    true
                } else {
                    let tools = tools.bind(py).as_any();
                    let failures = &self.failures;
                    let retries = find_retries(evidence, tools, pattern.bind(py), failures)?;
                    if retries.is_empty() {
                        true // calls failed, none was retried: within any budget
                    } else {
                        return retried(py, &self.finding, &retries, max, per_tool).map(Some);
                    }
                }
            }
            Kind::Loop {
                tools,
                threshold,
                max,
                normalized,
                ..
            } => {
                let calls = self.calls_of(evidence, tools)?;
                if calls.len() < threshold.max {
                    true // fewer calls in all make no loop
                } else {
                    let calls = calls.as_any();
                    let candidates =
                        evidence::candidates(evidence, calls, threshold.max, &self.screens)?;
                    if !candidates.is_empty() {
                        let loops = loops(evidence, candidates.as_any(), threshold, normalized)?;
                        if !loops.is_empty() {
                            return self.looped(evidence, &loops, max).map(Some);
                        }
                    }
                    true // no candidates, or their normalized arguments differ
                }
            }
            Kind::MaxCalls { tools, max } => {
                let quiet = !evidence::answering(evidence)?.is_truthy()? && !nameless(evidence)?;
                if !quiet {
                    return Ok(None);
                }
                let calls = self.calls_of(evidence, tools)?;
                if calls.len() > max.max {
                    return self.over(&calls, max.max).map(Some);
                }
                return self.settled(evidence, calls.len()).map(Some);
            }
            Kind::MaxSteps {
                kinds,
                generations,
                groups,
                max,
                ..
            } => {
                if nameless(evidence)? {
                    return Ok(None);
                }
                let merged_key = intern!(py, "merged_model_calls");
                let attributes_key = intern!(py, "attributes");
                let count = if let Some([calls, gens, agents]) = *groups {
                    // Whole groups: counted from the view, each counted step's attributes
                    // read from its instance dict only when the count is within `max`.
                    let view = view_of(evidence)?;
                    let view = view.get();
                    let count = view.count_of(calls, gens, agents);
                    if count > max.max {
                        let counted = view.records_of(calls, gens, agents);
                        let extra = counted[max.max..].iter().map(|rec| rec.step.bind(py));
                        return self
                            .steps_over(py, count, PyTuple::new(py, extra)?)
                            .map(Some);
                    }
                    for rec in view.records_of(calls, gens, agents) {
                        let fields = StepFields::new(rec.step.bind(py).clone());
                        let attributes = fields.get(attributes_key)?;
                        if pydict::get(&attributes, merged_key)?.is_truthy()? {
                            return Ok(None); // a lower bound the Python body words
                        }
                    }
                    count
                } else {
                    let kinds = kinds.bind(py);
                    let steps = ctx.getattr(intern!(py, "trajectory"))?;
                    let mut count = 0usize;
                    for step in steps.getattr(intern!(py, "steps"))?.try_iter()? {
                        let fields = StepFields::new(step?);
                        if !kinds.contains(fields.get(intern!(py, "kind"))?)? {
                            continue;
                        }
                        count += 1;
                        let attributes = fields.get(attributes_key)?;
                        if pydict::get(&attributes, merged_key)?.is_truthy()? {
                            return Ok(None); // a lower bound the Python body words
                        }
                    }
                    if count > max.max {
                        return Ok(None);
                    }
                    count
                };
                if *generations {
                    let groups = view_of(evidence)?;
                    let none = |name: &Bound<'py, PyString>| -> PyResult<bool> {
                        Ok(!groups.getattr(name)?.is_truthy()?)
                    };
                    if none(intern!(py, "generations"))?
                        && !(none(intern!(py, "calls"))? && none(intern!(py, "agents"))?)
                    {
                        return Ok(None); // model calls drove the run but none is recorded
                    }
                }
                return self.settled(evidence, count).map(Some);
            }
            Kind::More(more) => return more.run(evidence, &self.finding).map(Some),
            Kind::Cite(cite) => return cite.run(evidence, &self.finding).map(Some),
            Kind::Answer(answer) => return answer.run(evidence, &self.finding, &self.failures),
            Kind::Bench(bench) => return bench.run(ctx, evidence, &self.finding),
            Kind::Latency {
                max_ms,
                limit,
                tolerated,
            } => {
                return latency(evidence, *max_ms, limit, tolerated, &self.finding);
            }
            Kind::Tokens { limits } => return self.tokens(evidence, limits),
        };
        if handled {
            self.settled(evidence, 0).map(Some)
        } else {
            Ok(None)
        }
    }

    /// `evidence.calls_of(tools, unknown_namespace_matches=True)` (`evidence::calls_of`).
    fn calls_of<'py>(
        &self,
        evidence: &Bound<'py, PyAny>,
        tools: &Py<PyTuple>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        evidence::calls_of(evidence, tools.bind(evidence.py()), true)
    }

    /// `failed_calls(evidence, pattern)`: `id()` of each failed call -> why (memoized).
    fn failed<'py>(
        &self,
        evidence: &Bound<'py, PyAny>,
        pattern: &Py<PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        self.failures.failed(evidence, pattern.bind(evidence.py()))
    }

    /// `tool_not_called`'s answer when some of `calls` (`calls_of(tools, True)`) were
    /// called: the tools' names (`tool or "?"`, sorted as Python sorts `str`s) and the
    /// calls within `max` or over it, saying how many of them an approval step refused (a
    /// refused call is still the agent's request for the tool: the check is about what the
    /// agent did, and the refusal is another safeguard's work).
    fn forbidden<'py>(
        &self,
        calls: &Bound<'py, PyTuple>,
        max: &Budget,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = calls.py();
        let unknown = intern!(py, "?");
        let named = PySet::empty(py)?;
        let mut refused = 0usize;
        for call in calls.iter() {
            let tool = StepFields::new(call.clone()).get(intern!(py, "tool"))?;
            if tool.is_truthy()? {
                named.add(tool)?;
            } else {
                named.add(unknown)?;
            }
            refused += usize::from(denied(&call)?);
        }
        let names = PyList::new(py, named.iter())?;
        names.sort()?;
        let n = calls.len();
        let mut text = Text::new(py);
        let status = if n > max.max {
            text.push(format_args!("forbidden tool called: "));
            text.joined(names.iter());
            text.push(format_args!(" ("));
            text.str(listed_steps(calls.as_any())?.into_any());
            text.push(format_args!(")"));
            if max.max > 0 {
                text.push(format_args!("; {} call(s) tolerated", max.shown));
            }
            if refused > 0 {
                text.push(format_args!("; {refused} of them requested, then "));
                text.str(self.failures.denied(py).clone().into_any());
            }
            intern!(py, "fail")
        } else {
            text.push(format_args!("{n} call(s) of "));
            text.joined(names.iter());
            text.push(format_args!(" within {}", max.shown));
            intern!(py, "pass")
        };
        let details = PyDict::new(py);
        details.set_item(intern!(py, "calls"), n)?;
        details.set_item(intern!(py, "tools"), names)?;
        let steps = pointed(py, calls.iter())?;
        found(
            &self.finding,
            status,
            text.finish()?,
            details,
            steps,
            n,
            false,
        )
    }

    /// `loop_detected`'s answer on `loops` (the groups of calls of one tool with the same
    /// normalized arguments, at least `threshold` of them each): over `max`, a failure;
    /// within it, a pass, or a lower bound when a framework's limit cut the run off (the
    /// calls it cut off may have made another loop).
    fn looped<'py>(
        &self,
        evidence: &Bound<'py, PyAny>,
        loops: &[Vec<Bound<'py, PyAny>>],
        max: &Budget,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = evidence.py();
        let (tool_key, index_key) = (intern!(py, "tool"), intern!(py, "index"));
        let listed = PyList::empty(py);
        // `"; ".join(f"{tool} x{n} with identical arguments (steps {i}, {j}, ...)" ...)`:
        // a tool name (any `str`, or `None`) and a step index as `format` shows them.
        let mut desc = Text::new(py);
        for (i, calls) in loops.iter().enumerate() {
            let tool = StepFields::new(calls[0].clone()).get(tool_key)?;
            let entry = PyDict::new(py);
            entry.set_item(tool_key, &tool)?;
            entry.set_item(intern!(py, "calls"), calls.len())?;
            listed.append(entry)?;
            if i > 0 {
                desc.push(format_args!("; "));
            }
            desc.str(tool.str()?.into_any());
            desc.push(format_args!(
                " x{} with identical arguments (steps ",
                calls.len()
            ));
            for (j, call) in calls.iter().enumerate() {
                if j > 0 {
                    desc.push(format_args!(", "));
                }
                let index = StepFields::new(call.clone()).get(index_key)?;
                desc.str(index.str()?.into_any());
            }
            desc.push(format_args!(")"));
        }
        let desc = desc.finish()?.into_any();
        let n = loops.len();
        let mut text = Text::new(py);
        let status = if n > max.max {
            text.push(format_args!("loop detected: "));
            text.str(desc);
            intern!(py, "fail")
        } else {
            text.push(format_args!("{n} loop(s) within {}: ", max.shown));
            text.str(desc);
            match stopped(evidence)? {
                None => intern!(py, "pass"),
                Some(why) => {
                    text.push(format_args!(" before "));
                    text.str(why);
                    intern!(py, "missing")
                }
            }
        };
        let details = PyDict::new(py);
        details.set_item(intern!(py, "loops"), listed)?;
        let steps = pointed(py, loops.iter().flatten().cloned())?;
        found(
            &self.finding,
            status,
            text.finish()?,
            details,
            steps,
            n,
            false,
        )
    }

    /// `tool_errors`' answer when some call failed (`failed`, `failed_calls`' table) and no
    /// call is nameless: the calls of `tools` in `failed`, those an approval step refused
    /// left out (they never ran), within `max` or over it (the first three listed).
    fn errors<'py>(
        &self,
        evidence: &Bound<'py, PyAny>,
        failed: &Bound<'py, PyDict>,
        tools: &Py<PyTuple>,
        max: &Budget,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = evidence.py();
        let mut failing = Vec::new();
        for call in self.calls_of(evidence, tools)?.iter() {
            if let Some(why) = failed.get_item(call.as_ptr() as usize)? {
                if !denied(&call)? {
                    failing.push((call, why));
                }
            }
        }
        if failing.is_empty() {
            return self.settled(evidence, 0); // other tools' failures, or refusals
        }
        let n = failing.len();
        let listed = PyList::empty(py);
        for (call, why) in &failing {
            let entry = PyDict::new(py);
            entry.set_item(intern!(py, "step"), call.getattr(intern!(py, "index"))?)?;
            entry.set_item(intern!(py, "tool"), call.getattr(intern!(py, "tool"))?)?;
            entry.set_item(intern!(py, "why"), why)?;
            listed.append(entry)?;
        }
        let details = PyDict::new(py);
        details.set_item(intern!(py, "failed"), listed)?;
        let mut text = Text::new(py);
        let status = if n > max.max {
            text.push(format_args!(
                "{n} failed tool call(s), budget {}: ",
                max.shown
            ));
            for (i, (call, why)) in failing.iter().take(3).enumerate() {
                if i > 0 {
                    text.push(format_args!("; "));
                }
                text.str(where_is(call)?);
                text.push(format_args!(": "));
                text.str(why.clone());
            }
            intern!(py, "fail")
        } else {
            text.push(format_args!(
                "{n} failed tool call(s) within budget {}",
                max.shown
            ));
            intern!(py, "pass")
        };
        let calls = failing.into_iter().map(|(call, _)| call);
        found(
            &self.finding,
            status,
            text.finish()?,
            details,
            pointed(py, calls)?,
            n,
            false,
        )
    }

    /// The finding with nothing over the bound (`within`).
    fn settled<'py>(
        &self,
        evidence: &Bound<'py, PyAny>,
        count: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = evidence.py();
        let details = PyDict::new(py);
        match &self.kind {
            Kind::NotCalled { message, .. } => {
                details.set_item(intern!(py, "calls"), 0)?;
                details.set_item(intern!(py, "tools"), PyList::empty(py))?;
                self.make(py, intern!(py, "pass"), message.bind(py).clone(), details)
            }
            Kind::Errors { .. } => {
                details.set_item(intern!(py, "failed"), PyList::empty(py))?;
                let message = intern!(py, "no failed tool calls").clone();
                self.make(py, intern!(py, "pass"), message, details)
            }
            Kind::Retries { .. } => {
                details.set_item(intern!(py, "retries"), 0)?;
                details.set_item(intern!(py, "per_tool"), PyDict::new(py))?;
                details.set_item(intern!(py, "retried_after"), PyList::empty(py))?;
                self.make(
                    py,
                    intern!(py, "pass"),
                    intern!(py, "no retries").clone(),
                    details,
                )
            }
            Kind::Loop { message, .. } => {
                details.set_item(intern!(py, "loops"), PyList::empty(py))?;
                // The calls a framework's limit cut off may have made a loop.
                match stopped(evidence)? {
                    None => self.make(py, intern!(py, "pass"), message.bind(py).clone(), details),
                    Some(why) => {
                        let mut text = Text::new(py);
                        text.str(message.bind(py).clone().into_any());
                        text.push(format_args!(" before "));
                        text.str(why);
                        self.make(py, intern!(py, "missing"), text.finish()?, details)
                    }
                }
            }
            Kind::MaxSteps { names, max, .. } => {
                details.set_item(intern!(py, "steps"), count)?;
                details.set_item(intern!(py, "kinds"), PyList::new(py, names.bind(py))?)?;
                // A lower bound when a framework's limit cut the run off.
                match stopped(evidence)? {
                    None => {
                        let text = format!("{count} steps (at most {})", max.shown);
                        self.make(py, intern!(py, "pass"), PyString::new(py, &text), details)
                    }
                    Some(why) => {
                        let mut text = Text::new(py);
                        text.push(format_args!(
                            "at least {count} steps (at most {} allowed), but ",
                            max.shown
                        ));
                        text.str(why);
                        text.push(format_args!(
                            ": how many the agent would have taken is not shown"
                        ));
                        self.make(py, intern!(py, "missing"), text.finish()?, details)
                    }
                }
            }
            Kind::Tokens { .. } => {
                let view = view_of(evidence)?;
                let (calls, sums) = token_sums(py, view.get())?;
                tokens_within(py, &self.finding, calls, sums)
            }
            Kind::Latency { .. } => Err(PyValueError::new_err(
                "latency's plan has no finding within a bound to give",
            )),
            Kind::Bench(_) => Err(PyValueError::new_err(
                "within: an AgentBench check's plan counts nothing",
            )),
            Kind::More(_) | Kind::Cite(_) => Err(PyValueError::new_err(
                "a plan that answers every trajectory has no finding within a bound to give",
            )),
            Kind::Answer(_) => Err(PyValueError::new_err(
                "an answer's plan has no finding within a bound to give",
            )),
            Kind::MaxCalls { max, .. } => {
                details.set_item(intern!(py, "tool_calls"), count)?;
                // A lower bound when a framework's limit cut the run off.
                match stopped(evidence)? {
                    None => {
                        let text = format!("{count} tool calls (at most {})", max.shown);
                        self.make(py, intern!(py, "pass"), PyString::new(py, &text), details)
                    }
                    Some(why) => {
                        let mut text = Text::new(py);
                        text.push(format_args!(
                            "at least {count} tool calls (at most {} allowed), but ",
                            max.shown
                        ));
                        text.str(why);
                        text.push(format_args!(
                            ": how many the agent would have made is not shown"
                        ));
                        self.make(py, intern!(py, "missing"), text.finish()?, details)
                    }
                }
            }
        }
    }

    /// `max_tool_calls`' failure: `calls` (every one counted) over `max`, the steps past the
    /// first `max` pointed at and listed.
    fn over<'py>(&self, calls: &Bound<'py, PyTuple>, max: usize) -> PyResult<Bound<'py, PyAny>> {
        let py = calls.py();
        let extra = calls.get_slice(max, calls.len());
        // The steps as `list_steps` words them: their tool names are any `str`.
        let mut text = Text::new(py);
        text.push(format_args!(
            "{} tool calls, at most {max} allowed; over the limit: ",
            calls.len()
        ));
        let details = PyDict::new(py);
        details.set_item(intern!(py, "tool_calls"), calls.len())?;
        self.listed_over(text, &extra, details)
    }

    /// A limit's failure: `text` (what was counted against the limit) followed by the
    /// steps past the limit as `list_steps` words them, those steps pointed at.
    fn listed_over<'py>(
        &self,
        mut text: Text<'py>,
        extra: &Bound<'py, PyTuple>,
        details: Bound<'py, PyDict>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = extra.py();
        text.str(listed_steps(extra.as_any())?.into_any());
        found(
            &self.finding,
            intern!(py, "fail"),
            text.finish()?,
            details,
            pointed(py, extra.iter())?,
            0,
            false,
        )
    }

    /// `max_steps`' failure: `count` steps counted, `extra` (those past the first `max`)
    /// pointed at and listed, as the Python body words it.
    fn steps_over<'py>(
        &self,
        py: Python<'py>,
        count: usize,
        extra: Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let Kind::MaxSteps { names, max, .. } = &self.kind else {
            return Err(PyValueError::new_err("steps_over: only max_steps' plan"));
        };
        // The steps as `list_steps` words them: their tool names are any `str`.
        let mut text = Text::new(py);
        text.push(format_args!(
            "{count} steps, at most {} allowed; over the limit: ",
            max.shown
        ));
        let details = PyDict::new(py);
        details.set_item(intern!(py, "steps"), count)?;
        details.set_item(intern!(py, "kinds"), PyList::new(py, names.bind(py))?)?;
        self.listed_over(text, &extra, details)
    }

    /// `tokens`' answer from the leaf model calls the step view found (`StepView.leaves`):
    /// the pass within every limit, or the failure naming each limit exceeded and pointing
    /// at the five heaviest calls. `None` where a token count is no `int` within `i64` and
    /// a limit is exceeded (the Python body sums and words those).
    fn tokens<'py>(
        &self,
        evidence: &Bound<'py, PyAny>,
        limits: &[Option<Py<PyAny>>; 3],
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = evidence.py();
        let view = view_of(evidence)?;
        let view = view.get();
        let (calls, sums) = token_sums(py, view)?;
        let leaves = view.leaves(py)?;
        let mut over = Vec::new();
        for ((sum, limit), name) in sums.iter().zip(limits).zip(["input", "output", "total"]) {
            if let Some(limit) = limit {
                let limit = limit.bind(py);
                if sum.gt(limit)? {
                    over.push(format!("{name} {sum} > {limit}"));
                }
            }
        }
        if over.is_empty() {
            return tokens_within(py, &self.finding, calls, sums).map(Some);
        }
        let Some(counts) = &leaves.tokens else {
            return Ok(None); // counts Python holds otherwise: the Python body words them
        };
        // `sorted(leaves, key=lambda g: -(input + output))[:5]`: the five heaviest, the
        // earlier first among equals (a stable sort).
        let mut heavy: Vec<(i128, usize)> = Vec::with_capacity(6);
        for (at, [i, o]) in counts.iter().enumerate() {
            let weight = i128::from(*i) + i128::from(*o);
            if heavy.len() == 5 && heavy[4].0 >= weight {
                continue;
            }
            let place = heavy.partition_point(|(w, _)| *w >= weight);
            heavy.insert(place, (weight, at));
            heavy.truncate(5);
        }
        let text = format!(
            "token budget exceeded over {} model call(s): {}",
            leaves.at.len(),
            over.join("; ")
        );
        let details = tokens_details(py, leaves.at.len(), sums)?;
        let steps = heavy
            .iter()
            .map(|&(_, at)| view.generation_step(py, leaves.at[at]).clone());
        found(
            &self.finding,
            intern!(py, "fail"),
            PyString::new(py, &text),
            details,
            pointed(py, steps)?,
            0,
            false,
        )
        .map(Some)
    }

    /// A `Finding` of `status`, `message` and `details`, nothing pointed at, nothing used:
    /// every finding a plan makes but `max_tool_calls`' failure (`over`).
    fn make<'py>(
        &self,
        py: Python<'py>,
        status: &Bound<'py, PyString>,
        message: Bound<'py, PyString>,
        details: Bound<'py, PyDict>,
    ) -> PyResult<Bound<'py, PyAny>> {
        make(py, &self.finding, status, message, details)
    }
}

/// `CheckPlan::make` of `finding`'s maker.
fn make<'py>(
    py: Python<'py>,
    finding: &Py<SlotClass>,
    status: &Bound<'py, PyString>,
    message: Bound<'py, PyString>,
    details: Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyAny>> {
    let empty = PyTuple::empty(py).into_any();
    found(
        finding,
        status,
        message,
        details,
        [empty.clone(), empty],
        0,
        false,
    )
}

/// The `Finding` every plan makes (`check_plans_more`'s too): `status`, `message` and
/// `details`, pointing at `[span_ids, step_indexes]` (tuples), `used` of the budget, a
/// budget's breach, `unseen` as given.
pub(crate) fn found<'py>(
    finding: &Py<SlotClass>,
    status: &Bound<'py, PyString>,
    message: Bound<'py, PyString>,
    details: Bound<'py, PyDict>,
    [spans, steps]: [Bound<'py, PyAny>; 2],
    used: usize,
    unseen: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let budget = intern!(status.py(), "budget");
    breached(
        finding,
        status,
        message,
        details,
        [spans, steps],
        used,
        budget,
        unseen,
    )
}

/// `found`, with the breach named (`"budget"` or `"rule"`): a check whose failure breaks a
/// rule rather than a budget (`degraded_answer`'s) words it the same way.
#[allow(clippy::too_many_arguments)]
pub(crate) fn breached<'py>(
    finding: &Py<SlotClass>,
    status: &Bound<'py, PyString>,
    message: Bound<'py, PyString>,
    details: Bound<'py, PyDict>,
    [spans, steps]: [Bound<'py, PyAny>; 2],
    used: usize,
    breach: &Bound<'py, PyString>,
    unseen: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let py = status.py();
    finding.get().make(
        py,
        [
            status.clone().into_any(),
            message.into_any(),
            details.into_any(),
            spans,
            steps,
            used.into_pyobject(py)?.into_any(),
            breach.clone().into_any(),
            PyBool::new(py, unseen).to_owned().into_any(),
        ],
    )
}

/// Where a finding points (`trace_common.span_ids` and `indexes`): the steps' source span
/// ids, first seen, no repeats, and every step's index in order. The ids are told apart as
/// the Python did, by a `set` of the `str`s themselves (their hash cached, no text copied):
/// a failing trace of thousands of calls lists every call past `max_tool_calls`' `max`.
pub(crate) fn pointed<'py>(
    py: Python<'py>,
    steps: impl IntoIterator<Item = Bound<'py, PyAny>>,
) -> PyResult<[Bound<'py, PyAny>; 2]> {
    let steps = steps.into_iter();
    let (index_key, source_key) = (intern!(py, "index"), intern!(py, "source"));
    let seen = PySet::empty(py)?;
    let mut spans = Vec::new();
    let mut indexes = Vec::with_capacity(steps.size_hint().0);
    for step in steps {
        // Each step's fields read from its instance dict; `span_id` as an attribute:
        // asking a `SpanRef` for its `__dict__` would make one it does not otherwise have.
        let fields = StepFields::new(step);
        indexes.push(fields.get(index_key)?);
        let source = fields.get(source_key)?;
        if !source.is_none() {
            let span = source.getattr(intern!(py, "span_id"))?;
            if !seen.contains(&span)? {
                seen.add(&span)?;
                spans.push(span);
            }
        }
    }
    Ok([
        PyTuple::new(py, spans)?.into_any(),
        PyTuple::new(py, indexes)?.into_any(),
    ])
}

/// `loop_detected`'s loops among `candidates` (`repeated_args_candidates`, in step order):
/// the calls grouped by their tool and normalized arguments (`normalized`,
/// `trace_common.step_normalized_args`, made once per step), first seen first, each in step
/// order; the groups of `threshold` calls or more.
fn loops<'py>(
    evidence: &Bound<'py, PyAny>,
    candidates: &Bound<'py, PyAny>,
    threshold: &Budget,
    normalized: &Py<PyAny>,
) -> PyResult<Vec<Vec<Bound<'py, PyAny>>>> {
    let py = evidence.py();
    let normalized = normalized.bind(py);
    // (tool, normalized arguments) -> its group, keyed as the Python's `dict` keyed them.
    let at = PyDict::new(py);
    let mut groups: Vec<Vec<Bound<'py, PyAny>>> = Vec::new();
    for call in candidates.try_iter()? {
        let call = call?;
        let tool = StepFields::new(call.clone()).get(intern!(py, "tool"))?;
        let args = normalized.call1((evidence, &call))?;
        let key = PyTuple::new(py, [tool, args])?;
        match at.get_item(&key)? {
            Some(group) => groups[group.extract::<usize>()?].push(call),
            None => {
                at.set_item(key, groups.len())?;
                groups.push(vec![call]);
            }
        }
    }
    groups.retain(|calls| calls.len() >= threshold.max);
    Ok(groups)
}

/// `tool_retries`' answer on `retries` (`(retry, failed call it repeats, why)`, at least
/// one): counted per tool (`tool or "?"`, first seen first), a fail over `max` in all or
/// over `per_tool` for a tool, else within, naming where the first retried call failed.
fn retried<'py>(
    py: Python<'py>,
    finding: &Py<SlotClass>,
    retries: &Bound<'py, PyTuple>,
    max: &Budget,
    per_tool: &Option<Budget>,
) -> PyResult<Bound<'py, PyAny>> {
    let counts = PyDict::new(py);
    let after = PyList::empty(py);
    let mut steps = Vec::with_capacity(retries.len());
    for retry in retries.iter() {
        let (call, prev, why): (Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>) =
            retry.extract()?;
        let tool = call.getattr(intern!(py, "tool"))?;
        let tool = if tool.is_truthy()? {
            tool
        } else {
            intern!(py, "?").clone().into_any()
        };
        let n = match counts.get_item(&tool)? {
            Some(n) => n.extract::<usize>()?,
            None => 0,
        };
        counts.set_item(&tool, n + 1)?;
        let entry = PyDict::new(py);
        entry.set_item(
            intern!(py, "retry_step"),
            call.getattr(intern!(py, "index"))?,
        )?;
        entry.set_item(
            intern!(py, "failed_step"),
            prev.getattr(intern!(py, "index"))?,
        )?;
        entry.set_item(intern!(py, "failure"), why)?;
        after.append(entry)?;
        steps.push(call);
    }
    // Per tool, sorted as Python sorts the names (`str`s compared as they are).
    let names = counts.keys();
    names.sort()?;
    let mut tally = Vec::with_capacity(names.len());
    for name in names.iter() {
        let n: usize = counts.get_item(&name)?.map_or(Ok(0), |n| n.extract())?;
        tally.push((name, n));
    }
    let total = steps.len();
    let mut text = Text::new(py);
    let status = if total > max.max {
        text.push(format_args!("{total} retries ("));
        text.tally(tally.iter());
        text.push(format_args!("), budget {}", max.shown));
        intern!(py, "fail")
    } else if let Some(limit) = per_tool
        .as_ref()
        .filter(|limit| tally.iter().any(|(_, n)| *n > limit.max))
    {
        text.push(format_args!(
            "retries over the per-tool budget {}: ",
            limit.shown
        ));
        text.tally(tally.iter().filter(|(_, n)| *n > limit.max));
        intern!(py, "fail")
    } else {
        let plural = if total == 1 { "y" } else { "ies" };
        text.push(format_args!("{total} retr{plural} ("));
        text.tally(tally.iter());
        text.push(format_args!(") within budget {}; first after ", max.shown));
        let (_, prev, why): (Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>) =
            retries.get_item(0)?.extract()?;
        text.str(where_is(&prev)?);
        text.push(format_args!(" failed: "));
        text.str(why);
        intern!(py, "pass")
    };
    let details = PyDict::new(py);
    details.set_item(intern!(py, "retries"), total)?;
    details.set_item(intern!(py, "per_tool"), counts)?;
    details.set_item(intern!(py, "retried_after"), after)?;
    found(
        finding,
        status,
        text.finish()?,
        details,
        pointed(py, steps)?,
        total,
        false,
    )
}

/// A message of Rust text and Python `str`s taken as they are (tool names, where a step is,
/// why a call failed: any `str`, lone surrogates too, which Rust's text cannot hold), joined
/// once, as Python's f-string made it.
pub(crate) struct Text<'py> {
    py: Python<'py>,
    parts: Vec<Bound<'py, PyAny>>,
    buf: String,
}

impl<'py> Text<'py> {
    pub(crate) fn new(py: Python<'py>) -> Self {
        Self {
            py,
            parts: Vec::new(),
            buf: String::new(),
        }
    }

    pub(crate) fn push(&mut self, args: fmt::Arguments<'_>) {
        let _ = self.buf.write_fmt(args); // writing to a `String` does not fail
    }

    fn flush(&mut self) {
        if !self.buf.is_empty() {
            self.parts
                .push(PyString::new(self.py, &self.buf).into_any());
            self.buf.clear();
        }
    }

    /// A `str` as it is.
    pub(crate) fn str(&mut self, text: Bound<'py, PyAny>) {
        self.flush();
        self.parts.push(text);
    }

    /// `", ".join(names)` of `str`s.
    fn joined(&mut self, names: impl Iterator<Item = Bound<'py, PyAny>>) {
        for (i, name) in names.enumerate() {
            if i > 0 {
                self.push(format_args!(", "));
            }
            self.str(name);
        }
    }

    /// `", ".join(f"{tool} x{n}" ...)` of per-tool counts.
    fn tally<'a>(&mut self, counts: impl Iterator<Item = &'a (Bound<'py, PyAny>, usize)>)
    where
        'py: 'a,
    {
        for (i, (name, n)) in counts.enumerate() {
            if i > 0 {
                self.push(format_args!(", "));
            }
            self.str(name.clone());
            self.push(format_args!(" x{n}"));
        }
    }

    pub(crate) fn finish(mut self) -> PyResult<Bound<'py, PyString>> {
        self.flush();
        joined(self.py, self.parts)
    }
}

/// `"".join(parts)`: a message of the params' and the trace's own `str`s (any text, lone
/// surrogates included, which Rust's text cannot hold) and the plan's words.
pub(crate) fn joined<'py>(
    py: Python<'py>,
    parts: impl IntoIterator<Item = Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyString>> {
    let parts = PyList::new(py, parts)?;
    Ok(intern!(py, "")
        .call_method1(intern!(py, "join"), (parts,))?
        .cast_into::<PyString>()?)
}

/// `evidence.where(step)` (`step 3 (search_docs, span ab12...)`).
fn where_is<'py>(step: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    Ok(where_text(&StepFields::new(step.clone()))?.into_any())
}

/// `trace_common.is_denied`: `step.attributes.get("denied") is True` (an approval step
/// refused the call: it never ran, so it failed nothing).
fn denied(step: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = step.py();
    let denied = step
        .getattr(intern!(py, "attributes"))?
        .call_method1(intern!(py, "get"), (intern!(py, "denied"),))?;
    Ok(denied.is(&*PyBool::new(py, true)))
}

/// The input, output and total tokens of `leaves` (leaf model calls), each
/// `input_tokens or 0` summed as Python sums them (ints of any size): where a count is no
/// `int` within `i64` (`Leaves::tokens`).
fn python_token_sums<'py, 'a>(
    py: Python<'py>,
    leaves: impl Iterator<Item = &'a Bound<'py, PyAny>>,
) -> PyResult<[Bound<'py, PyAny>; 3]>
where
    'py: 'a,
{
    let zero = 0i64.into_pyobject(py)?.into_any();
    let (mut input, mut output) = (zero.clone(), zero);
    for leaf in leaves {
        let fields = StepFields::new(leaf.clone());
        for (sum, field) in [
            (&mut input, intern!(py, "input_tokens")),
            (&mut output, intern!(py, "output_tokens")),
        ] {
            let tokens = fields.get(field)?;
            if tokens.is_truthy()? {
                *sum = sum.add(tokens)?;
            }
        }
    }
    let total = input.add(&output)?;
    Ok([input, output, total])
}

/// The leaf model calls' count and their input, output and total tokens (`input_tokens or
/// 0` ...), from the counts the view read (`Leaves::tokens`), else summed as Python sums
/// the values it holds (a `bool`, an `int` past `i64`).
fn token_sums<'py>(py: Python<'py>, view: &StepView) -> PyResult<(usize, [Bound<'py, PyAny>; 3])> {
    let leaves = view.leaves(py)?;
    let Some(counts) = &leaves.tokens else {
        let steps = leaves.at.iter().map(|&at| view.generation_step(py, at));
        return Ok((leaves.at.len(), python_token_sums(py, steps)?));
    };
    let (mut input, mut output) = (0i128, 0i128);
    for [i, o] in counts {
        input += i128::from(*i);
        output += i128::from(*o);
    }
    let total = input + output;
    Ok((
        leaves.at.len(),
        [
            input.into_pyobject(py)?.into_any(),
            output.into_pyobject(py)?.into_any(),
            total.into_pyobject(py)?.into_any(),
        ],
    ))
}

/// `{"model_calls": calls, "input_tokens": ..., "output_tokens": ..., "total_tokens": ...}`.
fn tokens_details<'py>(
    py: Python<'py>,
    calls: usize,
    [input, output, total]: [Bound<'py, PyAny>; 3],
) -> PyResult<Bound<'py, PyDict>> {
    let details = PyDict::new(py);
    details.set_item(intern!(py, "model_calls"), calls)?;
    details.set_item(intern!(py, "input_tokens"), input)?;
    details.set_item(intern!(py, "output_tokens"), output)?;
    details.set_item(intern!(py, "total_tokens"), total)?;
    Ok(details)
}

/// `tokens`' pass: its sums over `calls` leaf model calls.
fn tokens_within<'py>(
    py: Python<'py>,
    finding: &Py<SlotClass>,
    calls: usize,
    [input, output, total]: [Bound<'py, PyAny>; 3],
) -> PyResult<Bound<'py, PyAny>> {
    let message = format!("{input} input + {output} output tokens over {calls} model call(s)");
    let details = tokens_details(py, calls, [input, output, total])?;
    make(
        py,
        finding,
        intern!(py, "pass"),
        PyString::new(py, &message),
        details,
    )
}

/// Largest duration in nanoseconds a `f64` holds exactly (2**53): below it Python's
/// `(last - first) / 1_000_000` is the `f64` division done here; past it (a run of over
/// 104 days) the Python body divides.
const EXACT_NS: i128 = 1 << 53;

/// `f"{ms:.{places}f}"` (`places` 1 to 5) of `ms`, the `f64` division `ns / 1e6` of a
/// duration of `ns` nanoseconds, written from the integer `ns`: Rust's exact formatting
/// of the float was ~2,500 instructions a number, the latency check's largest cost. Below
/// `EXACT_NS` the division errs by at most `ns * 2**-53 < 1` nanosecond and a rounding
/// boundary is a whole number of nanoseconds, so `ms` rounds to the side `ns` does, but
/// when `ns` is the boundary itself: that one, and a duration out of the range, are the
/// float's formatting.
fn ms_text(ns: i128, ms: f64, places: usize) -> String {
    debug_assert!((1..=5).contains(&places));
    let scale = [1, 10, 100, 1_000, 10_000, 100_000][places];
    let unit = 1_000_000 / scale;
    match u64::try_from(ns) {
        Ok(ns) if i128::from(ns) < EXACT_NS && 2 * (ns % unit) != unit => {
            let units = ns / unit + u64::from(2 * (ns % unit) > unit);
            format!("{}.{:0places$}", units / scale, units % scale)
        }
        _ => format!("{ms:.places$}"),
    }
}

/// `latency`'s answer (trace scope) from the extent `StepView` kept: the pass within
/// `max_ms`; over it, the failure, or the pass that uses one of `tolerated` exceptions.
/// `None` (the Python body words it) when a step's end is unset or no step has both times.
/// `:.1f` and `round(ms, 3)` are Rust's exact decimal formatting, which rounds as CPython's
/// does (the correctly rounded decimal, ties to even).
fn latency<'py>(
    evidence: &Bound<'py, PyAny>,
    max_ms: f64,
    limit: &str,
    tolerated: &Budget,
    finding: &Py<SlotClass>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = evidence.py();
    let extent = view_of(evidence)?.get().extent;
    let Some((first, last)) = extent.span else {
        return Ok(None);
    };
    let ns = last - first;
    if extent.unset || ns >= EXACT_NS {
        return Ok(None);
    }
    #[allow(clippy::cast_precision_loss)] // below 2**53: exact
    let ms = ns as f64 / 1e6;
    let rounded: f64 = ms_text(ns, ms, 3)
        .parse()
        .map_err(|_| PyValueError::new_err("a duration that formats as no number"))?;
    let details = PyDict::new(py);
    details.set_item(intern!(py, "duration_ms"), rounded)?;
    let took = ms_text(ns, ms, 1);
    // (Neither is NaN: `max_ms > 0` was validated.)
    let (status, message, used) = if ms <= max_ms {
        let message = format!("trace took {took} ms (limit {limit} ms)");
        (intern!(py, "pass"), message, 0)
    } else if tolerated.max < 1 {
        let message = format!("trace took {took} ms, limit {limit} ms");
        (intern!(py, "fail"), message, 1)
    } else {
        let message = format!("trace took {took} ms, over {limit} ms but tolerated");
        (intern!(py, "pass"), message, 1)
    };
    let empty = PyTuple::empty(py).into_any();
    found(
        finding,
        status,
        PyString::new(py, &message),
        details,
        [empty.clone(), empty],
        used,
        false,
    )
    .map(Some)
}

/// Whether the trajectory has calls whose tool name was not recorded
/// (`evidence.nameless_calls()`, the view's `nameless`).
fn nameless(evidence: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(!view_of(evidence)?
        .get()
        .nameless
        .bind(evidence.py())
        .is_empty())
}

/// `evidence.stopped_short()`: why a framework's limit ended the run (the trace's words,
/// any `str`), or `None`.
fn stopped<'py>(evidence: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let why = evidence::stopped_short(evidence)?;
    if why.is_none() {
        return Ok(None);
    }
    Ok(Some(why.str()?.into_any()))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CheckPlans>()?;
    m.add_class::<CheckPlan>()
}

#[cfg(test)]
mod tests {
    use super::{ms_text, EXACT_NS};

    /// `ms_text` against the float's own formatting, which it stands in for.
    fn agrees(ns: i128) {
        #[allow(clippy::cast_precision_loss)] // the latency check's own division
        let ms = ns as f64 / 1e6;
        for places in 1..=5 {
            assert_eq!(
                ms_text(ns, ms, places),
                format!("{ms:.places$}"),
                "{ns} ns to {places} places"
            );
        }
    }

    #[test]
    fn writes_the_floats_digits_from_the_nanoseconds() {
        for ns in 0..120_000 {
            agrees(ns);
        }
        // Spread over the range (xorshift), each beside a boundary of every precision:
        // halfway (the float's formatting) and a nanosecond either side of it.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let ns = i128::from(x % (1 << 53));
            agrees(ns);
            for unit in [1_000_000, 100_000, 1_000] {
                let half = ns - ns % unit + unit / 2;
                for near in [half - 1, half, half + 1] {
                    if (0..EXACT_NS).contains(&near) {
                        agrees(near);
                    }
                }
            }
        }
        for ns in [
            EXACT_NS - 1,
            EXACT_NS - 500,
            EXACT_NS,
            EXACT_NS + 1,
            -1,
            -1_500_000,
        ] {
            agrees(ns);
        }
    }
}
