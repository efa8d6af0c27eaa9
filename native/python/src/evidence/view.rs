//! A trajectory's steps read once into typed records (`StepView`): the groups the checks
//! select from (`Evidence.groups`) and the facts `otel_oracles.grade.evidence` derives
//! from the steps' kinds, times, indexes and statuses on every trajectory (the run's last
//! model call, the error that ended the run, the last run's agents, the work left unread
//! after the last model call).
//!
//! Before, each of those facts was a Python pass over the step objects, each reading the
//! same fields again (`start_ns`, `end_ns`, `index`, `status`, `agent_name` ...): several
//! passes per trajectory, each attribute read a dictionary lookup. Here the one pass that
//! sorts the steps into groups keeps those fields as Rust values, and the facts are worked
//! out over the records; what is compared as Python compares it (a status, a tool name, a
//! span id) is read through the C API only where a fact needs it.
//!
//! Times and indexes are Python `int`s: read as `i64`, or as `i128` past that (an OTLP time
//! is an unsigned 64-bit number); a value that is no integer (a `Step` never holds one) is a
//! `TypeError`.

use pyo3::exceptions::PyOverflowError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFrozenSet, PyInt, PyList, PySet, PyString, PyTuple};
use std::sync::OnceLock;

use super::messages::{assistant_text, call_ids, messages_empty, tool_names};
use crate::pydict::{self, items_of, StepFields};
use crate::tool_glob::{self, NamedBy};

use super::probes::Answers;
use super::{placeholder, Group, Kinds};

/// A fact found for the Python that words it: `(found, step, value)` (`final_output`,
/// `fragment`).
type Finding<'py> = (
    Bound<'py, PyString>,
    Option<Bound<'py, PyAny>>,
    Option<Bound<'py, PyAny>>,
);

/// What the facts read of one step, typed.
pub(crate) struct Rec {
    pub(crate) step: Py<PyAny>,
    /// The step's place in the trajectory's steps (what the checks count in order).
    pub(crate) pos: usize,
    index: i128,
    start: Option<i128>,
    end: Option<i128>,
    /// `bool(step.synthesized)` (calls).
    synthesized: bool,
    /// `step.status == "error"` (agents).
    error: bool,
    /// `bool(step.agent_name)` (agents).
    named: bool,
    /// `step.tool` (calls; `None` for the others).
    tool: Py<PyAny>,
}

/// A Python `int` (or `None`) as a number: `i64` first (one C call), `i128` past it.
fn number(value: &Bound<'_, PyAny>) -> PyResult<i128> {
    match value.extract::<i64>() {
        Ok(n) => Ok(i128::from(n)),
        Err(err) if err.is_instance_of::<PyOverflowError>(value.py()) => value.extract::<i128>(),
        Err(err) => Err(err),
    }
}

fn optional_number(value: &Bound<'_, PyAny>) -> PyResult<Option<i128>> {
    if value.is_none() {
        return Ok(None);
    }
    number(value).map(Some)
}

/// A trajectory's steps sorted by what the checks and probes select (the selections
/// `Trajectory` defines, in step order) and the per-trajectory facts the evidence helpers
/// read, made in one pass over the steps (`evidence.group_steps`, once per trajectory by
/// `Evidence.groups`, which is this view).
#[pyclass(module = "otel_oracles._native", name = "StepView", frozen)]
pub struct StepView {
    // The groups are read as members (`Py_T_OBJECT_EX` at the field's offset, as a slot of
    // a Python class is): the checks read them ~46,000 times a grade, and a getter
    // function would cost a call through PyO3's trampoline on each read.
    /// The tool calls (`Step.is_tool`: tool calls, file edits, commands, retrievals), in
    /// step order.
    #[pyo3(get)]
    pub(crate) calls: Py<PyTuple>,
    /// The model calls, in step order.
    #[pyo3(get)]
    pub(super) generations: Py<PyTuple>,
    /// The agent steps, in step order.
    #[pyo3(get)]
    pub(super) agents: Py<PyTuple>,
    /// The handoffs, in step order.
    #[pyo3(get)]
    pub(super) handoffs: Py<PyTuple>,
    /// The trace-derived calls whose tool name was not recorded: no `raw` object, a
    /// placeholder `tool` (`is_placeholder`).
    #[pyo3(get)]
    pub(crate) nameless: Py<PyTuple>,
    pub(super) tool_spans: bool,
    pub(super) all_raw: bool,
    call_recs: Vec<Rec>,
    generation_recs: Vec<Rec>,
    agent_recs: Vec<Rec>,
    /// The steps whose kind is the `other` member itself (`_structured_objects`).
    others: Vec<Py<PyAny>>,
    /// The run's extent over every step's times, as `latency` (trace scope) reads it.
    pub(crate) extent: Extent,
    /// The leaf model calls and their tokens (`leaves`), found on first ask.
    leaves: OnceLock<Leaves>,
    /// Each call's `loop_detected` screen (`evidence::candidates`), by its place in
    /// `call_recs`, made on first ask: the trajectory's loop checks, whatever their tools
    /// and thresholds, read each call's screen once.
    screens: Box<[OnceLock<Option<u64>>]>,
    /// What the evidence probes' walks found, per probe and scope (`EvidencePlan.lacking`):
    /// the contracts graded on a trajectory ask the same names (`tool_arguments`,
    /// `tool_outcomes`), and each contract's plan, and each check's where the contract's
    /// names are not all there, reads them here instead of walking the steps again.
    pub(super) answers: Answers,
}

/// The run's extent read off every step with both times, as the `latency` check (trace
/// scope) reads it: a step whose end is unset (`0`, OTLP's unset: a span that never ended)
/// is `unset` and counts by its start alone; any other end before its start is a clock at
/// fault and the two instants swap. Kept in the one pass that groups the steps, so the
/// check's usual answer (`check_plans.rs`) reads no step again.
#[derive(Clone, Copy, Default)]
pub(crate) struct Extent {
    /// `(earliest instant, latest instant)`, `None` when no step has both times.
    pub(crate) span: Option<(i128, i128)>,
    /// Whether a step's end is unset.
    pub(crate) unset: bool,
}

impl Extent {
    fn add(&mut self, start: Option<i128>, end: Option<i128>) {
        let (Some(mut start), Some(mut end)) = (start, end) else {
            return;
        };
        if end == 0 && 0 < start {
            self.unset = true;
            end = start;
        } else if end < start {
            (start, end) = (end, start);
        }
        self.span = Some(match self.span {
            None => (start, end),
            Some((first, last)) => (first.min(start), last.max(end)),
        });
    }
}

/// The leaf model calls (`StepView.leaf_generations`) and what `tokens` sums over them,
/// found once per view: the check of every contract graded on the trajectory, its usual
/// answer and its failure read them here, not each leaf's fields again.
pub(crate) struct Leaves {
    /// Their places in `generation_recs`, in step order.
    pub(crate) at: Vec<usize>,
    /// Each leaf's `(input_tokens or 0, output_tokens or 0)`, in the order of `at`; `None`
    /// when a value is neither `None` nor an exact `int` within `i64` (the check then sums
    /// the Python values as Python does).
    pub(crate) tokens: Option<Vec<[i64; 2]>>,
}

/// `value or 0` of a token count as an `i64`: `None` for a value that is no exact `int`
/// within `i64` (nor `None`).
fn tokens_of(value: &Bound<'_, PyAny>) -> Option<i64> {
    if value.is_none() {
        return Some(0);
    }
    if !value.is_exact_instance_of::<PyInt>() {
        return None;
    }
    value.extract::<i64>().ok()
}

/// `(end_ns if end_ns is not None else -1, index)`: `evidence._order_key`.
fn order_key(rec: &Rec) -> (i128, i128) {
    (rec.end.unwrap_or(-1), rec.index)
}

impl StepView {
    /// `_not_followed_while_open`: the model calls no later call started during (all of
    /// them when every call was followed so).
    fn not_followed_while_open(&self) -> Vec<&Rec> {
        let gens = &self.generation_recs;
        let mut starts: Vec<i128> = gens.iter().filter_map(|g| g.start).collect();
        starts.sort_unstable();
        let kept: Vec<&Rec> = gens
            .iter()
            .filter(|g| match (g.start, g.end) {
                (Some(start), Some(end)) => {
                    // bisect_right: the first start after this one.
                    let after = starts.partition_point(|&s| s <= start);
                    !(after < starts.len() && starts[after] < end)
                }
                _ => true,
            })
            .collect();
        if kept.is_empty() {
            gens.iter().collect()
        } else {
            kept
        }
    }

    /// The run's last model call (`last_generation`), or `None`.
    pub(crate) fn last_generation_step<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        match self.last_generation_rec() {
            Some(g) => g.step.bind(py).clone(),
            None => py.None().into_bound(py),
        }
    }

    fn last_generation_rec(&self) -> Option<&Rec> {
        // `sorted(..., key=_order_key)[-1]`: the last of the greatest keys in order.
        let mut best: Option<&Rec> = None;
        for g in self.not_followed_while_open() {
            if best.map_or(true, |b| order_key(g) >= order_key(b)) {
                best = Some(g);
            }
        }
        best
    }

    /// `run_error_step`'s answer.
    pub(crate) fn run_error_of<'py>(
        &self,
        py: Python<'py>,
        last: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let mut after = None;
        if let Some(last) = last {
            let fields = StepFields::new(last);
            let error = intern!(py, "error");
            if fields.get(intern!(py, "status"))?.eq(error)? {
                return Ok(Some(fields.step));
            }
            let reasons = fields.get(intern!(py, "finish_reasons"))?;
            if reasons.is_truthy()? && reasons.contains(error)? {
                return Ok(Some(fields.step));
            }
            after = optional_number(&fields.get(intern!(py, "end_ns"))?)?;
        }
        let ending: Vec<&Rec> = self
            .agent_recs
            .iter()
            .filter(|a| after.map_or(true, |after| a.end.is_some_and(|end| end >= after)))
            .collect();
        let named: Vec<&Rec> = ending.iter().copied().filter(|a| a.named).collect();
        let named = if named.is_empty() { ending } else { named };
        let key = |a: &Rec| (a.start.unwrap_or(0), -a.end.unwrap_or(0), a.index);
        let mut run: Option<&Rec> = None;
        for a in named {
            if run.map_or(true, |r| key(a) < key(r)) {
                run = Some(a);
            }
        }
        Ok(match run {
            Some(run) if run.error => Some(run.step.bind(py).clone()),
            _ => None,
        })
    }

    /// The leaf model calls and their tokens (`Leaves`), found on first ask: the model calls
    /// that contain no other model call in time, in step order, without the wrappers
    /// (`attributes.usage_aggregated`). A call contains another when the other starts no
    /// earlier and ends no later and the two intervals differ; a call with an unknown start
    /// or end contains nothing and is contained by nothing, and a failed attempt
    /// (`attributes.failed_attempt`) is contained by nothing. One sort of the intervals
    /// (per start, the earliest end; then the earliest end among later starts), not a test
    /// of every pair; each call's fields read once, from its instance dict, with its token
    /// counts: `tokens`' usual answer and its failure read the sums here instead of each
    /// leaf's `input_tokens` and `output_tokens` as attributes (and again in Python).
    pub(crate) fn leaves(&self, py: Python<'_>) -> PyResult<&Leaves> {
        if let Some(leaves) = self.leaves.get() {
            return Ok(leaves);
        }
        let attributes_key = intern!(py, "attributes");
        let failed_key = intern!(py, "failed_attempt");
        let aggregated_key = intern!(py, "usage_aggregated");
        let (input_key, output_key) = (intern!(py, "input_tokens"), intern!(py, "output_tokens"));
        let count = self.generation_recs.len();
        let mut wrappers: Vec<bool> = Vec::with_capacity(count);
        let mut counts: Option<Vec<[i64; 2]>> = Some(Vec::with_capacity(count));
        let mut intervals: Vec<(i128, i128)> = Vec::with_capacity(count);
        for g in &self.generation_recs {
            let fields = StepFields::new(g.step.bind(py).clone());
            let attributes = fields.get(attributes_key)?;
            wrappers.push(pydict::get(&attributes, aggregated_key)?.is_truthy()?);
            if let Some(kept) = &mut counts {
                let input = tokens_of(&fields.get(input_key)?);
                let output = tokens_of(&fields.get(output_key)?);
                match (input, output) {
                    (Some(input), Some(output)) => kept.push([input, output]),
                    _ => counts = None,
                }
            }
            if pydict::get(&attributes, failed_key)?.is_truthy()? {
                continue;
            }
            if let (Some(start), Some(end)) = (g.start, g.end) {
                intervals.push((start, end));
            }
        }
        // Per start, the earliest end of a call starting then (the first after sorting).
        intervals.sort_unstable();
        intervals.dedup_by_key(|interval| interval.0);
        // `[i]`: the earliest end of a call starting at or after `intervals[i]`'s start
        // (`None` past the last: no such call).
        let mut earliest_end_from: Vec<Option<i128>> = vec![None; intervals.len() + 1];
        for i in (0..intervals.len()).rev() {
            let end = intervals[i].1;
            earliest_end_from[i] = Some(earliest_end_from[i + 1].map_or(end, |e| e.min(end)));
        }
        let is_leaf = |g: &Rec| -> bool {
            let (Some(start), Some(end)) = (g.start, g.end) else {
                return true; // no known interval
            };
            let Ok(at) = intervals.binary_search_by_key(&start, |interval| interval.0) else {
                return true; // only failed attempts start then (left out above)
            };
            // Another call starting later and ending no later, or starting at the same time
            // and ending earlier (an identical interval is not containment).
            earliest_end_from[at + 1].map_or(true, |e| e > end) && intervals[at].1 >= end
        };
        let at: Vec<usize> = self
            .generation_recs
            .iter()
            .zip(wrappers)
            .enumerate()
            .filter(|(_, (g, wrapper))| !wrapper && is_leaf(g))
            .map(|(at, _)| at)
            .collect();
        let tokens = counts.map(|counts| at.iter().map(|&at| counts[at]).collect());
        // Kept once (another thread that found them while Python code ran above kept the
        // same answer, which stays).
        let _ = self.leaves.set(Leaves { at, tokens });
        self.leaves
            .get()
            .ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("leaves not kept"))
    }

    /// The step of a model call's record (`generation_recs[at]`, a leaf's `Leaves::at`).
    pub(crate) fn generation_step<'py>(&self, py: Python<'py>, at: usize) -> &Bound<'py, PyAny> {
        self.generation_recs[at].step.bind(py)
    }

    /// The records of the groups asked for (the tool calls, the model calls, the agents),
    /// in step order: what `max_steps` counts when its kinds are whole groups.
    pub(crate) fn records_of(&self, calls: bool, generations: bool, agents: bool) -> Vec<&Rec> {
        let mut out: Vec<&Rec> = Vec::new();
        for (wanted, recs) in [
            (calls, &self.call_recs),
            (generations, &self.generation_recs),
            (agents, &self.agent_recs),
        ] {
            if wanted {
                out.extend(recs.iter());
            }
        }
        out.sort_unstable_by_key(|rec| rec.pos); // each step is in one group: no ties
        out
    }

    /// The tool calls, in step order, whose tool, or whose `attributes.mcp_tool` (the MCP
    /// server's own name for a call a framework qualified), one of `names` names
    /// (`bool(first_match(name, names, unknown_namespace_matches))`, answered by `named`,
    /// the names tuple's `NamedBy`: the core's matching, remembered per name for the
    /// process): `evidence::calls_of`'s selection. `mcp_tool` is read only of a call whose
    /// tool matched none.
    pub(crate) fn calls_named<'py>(
        &self,
        py: Python<'py>,
        named: &NamedBy,
        unknown_namespace_matches: bool,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let (attributes_key, served_key) = (intern!(py, "attributes"), intern!(py, "mcp_tool"));
        let mut out = Vec::new();
        for c in &self.call_recs {
            let step = c.step.bind(py);
            if named.names_truly(c.tool.bind(py), unknown_namespace_matches)? {
                out.push(step.clone());
                continue;
            }
            let attributes = StepFields::new(step.clone()).get(attributes_key)?;
            let served = pydict::get(&attributes, served_key)?;
            if !served.is_none() && named.names_truly(&served, unknown_namespace_matches)? {
                out.push(step.clone());
            }
        }
        Ok(out)
    }

    /// The place in `call_recs` of the call `step` (by identity), looked for from `from` on
    /// (the calls a check selects come in step order, so the next is mostly there), then
    /// before it; `None` for a step that is none of the trajectory's calls.
    pub(crate) fn call_at(&self, step: &Bound<'_, PyAny>, from: usize) -> Option<usize> {
        let ptr = step.as_ptr();
        let at = |recs: &[Rec]| recs.iter().position(|c| c.step.as_ptr() == ptr);
        let from = from.min(self.call_recs.len());
        at(&self.call_recs[from..])
            .map(|i| from + i)
            .or_else(|| at(&self.call_recs[..from]))
    }

    /// The tool of the call at `at` in `call_recs` (`step.tool`, read when the view was made).
    pub(crate) fn call_tool<'py>(&self, py: Python<'py>, at: usize) -> &Bound<'py, PyAny> {
        self.call_recs[at].tool.bind(py)
    }

    /// The screen of the call at `at` in `call_recs`: kept, or made by `make` and kept.
    pub(crate) fn call_screen(
        &self,
        at: usize,
        make: impl FnOnce() -> PyResult<Option<u64>>,
    ) -> PyResult<Option<u64>> {
        if let Some(&screen) = self.screens[at].get() {
            return Ok(screen);
        }
        let screen = make()?;
        // Another thread that made it while Python code ran in `make` made the same.
        let _ = self.screens[at].set(screen);
        Ok(screen)
    }

    /// How many records the groups asked for hold (`records_of(...).len()`).
    pub(crate) fn count_of(&self, calls: bool, generations: bool, agents: bool) -> usize {
        usize::from(calls) * self.call_recs.len()
            + usize::from(generations) * self.generation_recs.len()
            + usize::from(agents) * self.agent_recs.len()
    }

    /// `last_run_agents`' records, outermost first.
    fn last_run_agent_recs(&self) -> Vec<&Rec> {
        let mut ordered: Vec<&Rec> = self.agent_recs.iter().collect();
        ordered.sort_by_key(|a| (a.start.unwrap_or(0), a.index));
        let mut last: Option<&Rec> = None;
        let key = |a: &Rec| (a.end.unwrap_or(0), -a.start.unwrap_or(0));
        for a in ordered.iter().filter(|a| a.end.is_some()) {
            if last.map_or(true, |l| key(a) > key(l)) {
                last = Some(a);
            }
        }
        let from = last.map_or(i128::MIN, |l| l.start.unwrap_or(0));
        ordered
            .into_iter()
            .filter(|a| last.is_none() || a.start.unwrap_or(0) >= from)
            .collect()
    }
}

#[pymethods]
impl StepView {
    /// Sorts `steps` by kind (`toolish` kinds are calls; the members given by identity,
    /// anything else as Python compares it) and reads the fields the facts need.
    #[new]
    fn new<'py>(
        steps: &Bound<'py, PyAny>,
        toolish: &Bound<'py, PyFrozenSet>,
        generation: &Bound<'py, PyAny>,
        agent: &Bound<'py, PyAny>,
        handoff: &Bound<'py, PyAny>,
        other: &Bound<'py, PyAny>,
    ) -> PyResult<Self> {
        let py = steps.py();
        // Pushed one by one: collecting the set's iterator asks its length hint through
        // `operator.length_hint` (~1,000 instructions under the limited API).
        let mut members: Vec<(Bound<'py, PyAny>, Group)> = Vec::with_capacity(toolish.len() + 3);
        for kind in toolish.iter() {
            members.push((kind, Group::Call));
        }
        members.push((generation.clone(), Group::Generation));
        members.push((agent.clone(), Group::Agent));
        members.push((handoff.clone(), Group::Handoff));
        let kinds = Kinds {
            toolish: toolish.clone(),
            members,
        };
        let (kind_key, raw_key) = (intern!(py, "kind"), intern!(py, "raw"));
        let (synthesized_key, tool_key) = (intern!(py, "synthesized"), intern!(py, "tool"));
        let (index_key, start_key) = (intern!(py, "index"), intern!(py, "start_ns"));
        let (end_key, status_key) = (intern!(py, "end_ns"), intern!(py, "status"));
        let agent_key = intern!(py, "agent_name");
        let error = intern!(py, "error");
        // Room for every step in the groups most steps fall in (calls and model calls):
        // a trajectory's few dozen steps, each pushed without a reallocation.
        // A trajectory's steps (a list or tuple) read in place, not through an iterator.
        let steps = pydict::items(steps)?;
        let room = steps.len();
        let mut calls = Vec::with_capacity(room);
        let mut generations = Vec::with_capacity(room);
        let mut agents = Vec::new();
        let mut handoffs = Vec::new();
        let mut nameless = Vec::new();
        let mut call_recs = Vec::with_capacity(room);
        let mut generation_recs = Vec::with_capacity(room);
        let mut agent_recs = Vec::new();
        let mut others = Vec::new();
        let mut tool_spans = false;
        let mut all_raw = true;
        let mut any = false;
        let mut extent = Extent::default();
        for (pos, step) in steps.into_iter().enumerate() {
            let fields = StepFields::new(step);
            any = true;
            let raw_none = fields.get(raw_key)?.is_none();
            if raw_none {
                all_raw = false;
            }
            let kind = fields.get(kind_key)?;
            let group = kinds.group(&kind)?;
            let start = optional_number(&fields.get(start_key)?)?;
            let end = optional_number(&fields.get(end_key)?)?;
            extent.add(start, end);
            if matches!(group, Group::Handoff | Group::Other) {
                if group == Group::Handoff {
                    handoffs.push(fields.step);
                } else if kind.is(other) {
                    others.push(fields.step.unbind());
                }
                continue;
            }
            let mut rec = Rec {
                step: fields.step.clone().unbind(),
                pos,
                index: number(&fields.get(index_key)?)?,
                start,
                end,
                synthesized: false,
                error: false,
                named: false,
                tool: py.None(),
            };
            match group {
                Group::Call => {
                    rec.synthesized = fields.get(synthesized_key)?.is_truthy()?;
                    if !rec.synthesized {
                        tool_spans = true;
                    }
                    let tool = fields.get(tool_key)?;
                    if raw_none && placeholder(&tool, 0)? {
                        nameless.push(fields.step.clone());
                    }
                    rec.tool = tool.unbind();
                    calls.push(fields.step);
                    call_recs.push(rec);
                }
                Group::Generation => {
                    generations.push(fields.step);
                    generation_recs.push(rec);
                }
                _ => {
                    rec.error = fields.get(status_key)?.eq(error)?;
                    rec.named = fields.get(agent_key)?.is_truthy()?;
                    agents.push(fields.step);
                    agent_recs.push(rec);
                }
            }
        }
        Ok(StepView {
            calls: PyTuple::new(py, calls)?.unbind(),
            generations: PyTuple::new(py, generations)?.unbind(),
            agents: PyTuple::new(py, agents)?.unbind(),
            handoffs: PyTuple::new(py, handoffs)?.unbind(),
            nameless: PyTuple::new(py, nameless)?.unbind(),
            tool_spans,
            all_raw: any && all_raw,
            screens: call_recs.iter().map(|_| OnceLock::new()).collect(),
            call_recs,
            generation_recs,
            agent_recs,
            others,
            extent,
            leaves: OnceLock::new(),
            answers: Answers::default(),
        })
    }

    /// Whether a call is not `synthesized`.
    #[getter]
    fn tool_spans(&self) -> bool {
        self.tool_spans
    }

    /// Whether there are steps and each has a `raw` object.
    #[getter]
    fn all_raw(&self) -> bool {
        self.all_raw
    }

    /// `evidence._last_generation`: the model call that ended last (end time, then index)
    /// among those no later call started during, or `None`.
    fn last_generation(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.last_generation_rec().map(|g| g.step.clone_ref(py))
    }

    /// `trace_budget.leaf_generations`: the model calls that contain no other model call in
    /// time, in step order, without the calls the mapping marked as wrappers
    /// (`attributes.usage_aggregated`); found once per view (`leaves`).
    fn leaf_generations<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let leaves = self.leaves(py)?;
        PyList::new(
            py,
            leaves
                .at
                .iter()
                .map(|&at| self.generation_recs[at].step.bind(py)),
        )
    }

    /// `evidence._run_error_step(last, agents)`: `last` when it failed (status `error`, or
    /// the finish reason `error`), else the run's agent span (the one starting first, then
    /// ending last, then first in step order, among the agents ending when or after `last`
    /// ended, named ones preferred) when it failed, else `None`.
    #[pyo3(signature = (last, /))]
    fn run_error_step<'py>(
        &self,
        py: Python<'py>,
        last: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.run_error_of(py, last)
    }

    /// `evidence._last_run_agents`: the agent steps of the run that ended last, outermost
    /// first (start order, then step index): the agent ending last (of those ending
    /// together, the one starting first) and every agent starting within it; every agent
    /// when none records an end.
    fn last_run_agents<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(
            py,
            self.last_run_agent_recs()
                .into_iter()
                .map(|a| a.step.bind(py)),
        )
    }

    /// `evidence.final_answer_calls`: the calls a convention rule marks as answering
    /// (`attributes.delivers_answer`), the calls of a tool `names` names (`first_match(tool,
    /// names) is not None`, answered by the tuple's `NamedBy` kept for the process,
    /// `tool_glob::kept`: `first_match` is called only for what the core leaves to it), and
    /// the synthesized calls whose
    /// arguments are a structured answer (`structured_output` of an agent, or of an `other`
    /// step, that did not fail), sorted by end time (none: -1), then index.
    #[pyo3(signature = (names, first_match, /))]
    pub(crate) fn final_answer_calls<'py>(
        &self,
        names: &Bound<'py, PyTuple>,
        first_match: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let py = names.py();
        let (attributes_key, status_key) = (intern!(py, "attributes"), intern!(py, "status"));
        let structured_key = intern!(py, "structured_output");
        let error = intern!(py, "error");
        let delivered = PyList::empty(py);
        for a in &self.agent_recs {
            let fields = StepFields::new(a.step.bind(py).clone());
            let answer = pydict::get(&fields.get(attributes_key)?, structured_key)?;
            if !a.error && answer.is_instance_of::<PyDict>() {
                delivered.append(answer)?;
            }
        }
        for step in &self.others {
            let fields = StepFields::new(step.bind(py).clone());
            if fields.get(status_key)?.eq(error)? {
                continue;
            }
            let answer = pydict::get(&fields.get(attributes_key)?, structured_key)?;
            if answer.is_instance_of::<PyDict>() {
                delivered.append(answer)?;
            }
        }
        let (answers_key, arguments_key) =
            (intern!(py, "delivers_answer"), intern!(py, "arguments"));
        let mut found: Vec<&Rec> = Vec::new();
        // The names tuple's `NamedBy` for the process (the conventions' tuple, the same for
        // every trajectory): each tool name is matched once, not once per trajectory.
        let named = (!names.is_empty())
            .then(|| tool_glob::kept(names, first_match))
            .transpose()?;
        let names_tool = |tool: &Bound<'py, PyAny>| -> PyResult<bool> {
            match &named {
                Some(named) => named.get().named().names(tool, false),
                None => Ok(false),
            }
        };
        for c in &self.call_recs {
            let fields = StepFields::new(c.step.bind(py).clone());
            let answering = pydict::get(&fields.get(attributes_key)?, answers_key)?.is_truthy()?
                || names_tool(c.tool.bind(py))?
                || (!delivered.is_empty() && c.synthesized && {
                    let arguments = fields.get(arguments_key)?;
                    !arguments.is_none() && delivered.contains(arguments)?
                });
            if answering {
                found.push(c);
            }
        }
        found.sort_by_key(|c| order_key(c));
        PyList::new(py, found.iter().map(|c| c.step.bind(py)))
    }

    /// `evidence._final_output_of` once no final-answer call delivered the answer: what
    /// the answer is, or which fact says it is missing, as `(found, step, value)` for the
    /// Python that words it (`last`: the run's last model call, `last_generation`):
    ///
    /// - `("error", last, failed)`: the run ended in an error at `failed`
    ///   (`run_error_step(last)`);
    /// - `("structured", agent, answer)`: the structured answer (`structured_output`, a
    ///   non-placeholder `dict`) of an agent of the last run (`last_run_agents`, outermost
    ///   first) that did not fail;
    /// - `("cut", last, reason)`: `last`'s first finish reason whose `lower()` is in `cut`;
    /// - `("thoughts", last, parts)`: `last`'s answer is `parts` (more than one) text
    ///   parts and its convention marks the tracer as writing thoughts as text parts
    ///   (`attributes.thoughts_unmarked`);
    /// - `("text", step, text)`: the answer text of `last`'s output messages
    ///   (`assistant_text`), else of a last-run agent that did not fail (its output
    ///   messages, else its `result` when that is a `str` and no placeholder);
    /// - `("none", None, None)`: no model call; `("absent", last, None)`: `last`'s output
    ///   messages not captured (`redacted`, or a placeholder); `("empty", last, None)`:
    ///   they carry no text.
    ///
    /// Each message list is walked once; before, the Python read each fact through its own
    /// attribute lookups and function calls.
    #[pyo3(signature = (cut, /))]
    fn final_output<'py>(
        &self,
        py: Python<'py>,
        cut: &Bound<'py, PyDict>,
    ) -> PyResult<Finding<'py>> {
        let last = self.last_generation_rec().map(|g| g.step.bind(py).clone());
        if let Some(failed) = self.run_error_of(py, last.clone())? {
            return Ok((intern!(py, "error").clone(), last, Some(failed)));
        }
        let agents = self.last_run_agent_recs();
        let attributes_key = intern!(py, "attributes");
        let output_key = intern!(py, "output_messages");
        for a in &agents {
            let fields = StepFields::new(a.step.bind(py).clone());
            let answer = pydict::get(
                &fields.get(attributes_key)?,
                intern!(py, "structured_output"),
            )?;
            if !a.error && answer.is_instance_of::<PyDict>() && !placeholder(&answer, 0)? {
                return Ok((
                    intern!(py, "structured").clone(),
                    Some(fields.step),
                    Some(answer),
                ));
            }
        }
        if let Some(last) = &last {
            let fields = StepFields::new(last.clone());
            let mut first_cut = None;
            for reason in items_of(&fields.get(intern!(py, "finish_reasons"))?)? {
                let lower = reason.call_method0(intern!(py, "lower"))?;
                if first_cut.is_none() && cut.contains(lower)? {
                    first_cut = Some(reason);
                }
            }
            if let Some(reason) = first_cut {
                return Ok((intern!(py, "cut").clone(), Some(last.clone()), Some(reason)));
            }
            let attributes = fields.get(attributes_key)?;
            let thoughts =
                pydict::get(&attributes, intern!(py, "thoughts_unmarked"))?.is_truthy()?;
            let (text, parts) = assistant_text(&fields.get(output_key)?)?;
            if thoughts && parts > 1 {
                let parts = parts.into_pyobject(py)?.into_any();
                return Ok((
                    intern!(py, "thoughts").clone(),
                    Some(last.clone()),
                    Some(parts),
                ));
            }
            if text.is_some() {
                return Ok((intern!(py, "text").clone(), Some(last.clone()), text));
            }
        }
        for a in &agents {
            if a.error {
                continue; // a run that ended in an error returned no answer
            }
            let fields = StepFields::new(a.step.bind(py).clone());
            let (mut text, _) = assistant_text(&fields.get(output_key)?)?;
            if text.is_none() {
                let result = fields.get(intern!(py, "result"))?;
                if result.is_instance_of::<PyString>() && !placeholder(&result, 0)? {
                    text = Some(result);
                }
            }
            if text.is_some() {
                return Ok((intern!(py, "text").clone(), Some(fields.step), text));
            }
        }
        let Some(last) = last else {
            return Ok((intern!(py, "none").clone(), None, None));
        };
        let fields = StepFields::new(last);
        let absent = fields.get(intern!(py, "redacted"))?.contains(output_key)?
            || placeholder(&fields.get(output_key)?, 0)?;
        let found = if absent {
            intern!(py, "absent")
        } else {
            intern!(py, "empty")
        };
        Ok((found.clone(), Some(fields.step), None))
    }

    /// `Evidence.fragment_gap` once the trace shows no orphan span: why the trace
    /// holds only part of a run, as `(found, step, value)` for the Python that words it, or
    /// `None`:
    ///
    /// - `("outside", None, ids)`: the call ids model input refers to (`history_ids` of
    ///   each model call's input, when it has one: the ids the assistant requested and
    ///   those of the results handed back) that no step made (a tool call's or handoff's
    ///   `call_id`, a call a model call's output requested), in first-seen order, when
    ///   there are more of them than steps without a call id;
    /// - `("unanswered", last, names)`: the trace's root span (`root_span_id`) is a model
    ///   call, the model call of the greatest index (`last`) requested tool calls (`names`,
    ///   from its output messages, else the tools of the synthesized calls after it: `?`
    ///   for one without a name; or a finish reason whose `lower()` is in `asks_tools`) and
    ///   no tool span or handoff after it runs or answers them;
    /// - `("unstarted", root, None)`: the root model call's input was not captured
    ///   (`redacted`, a placeholder, or messages that are structure only).
    ///
    /// A model call without input is not walked (most of a trace whose content capture
    /// records only the output), and the root is looked for only when the first check
    /// found nothing.
    #[pyo3(signature = (root_span_id, asks_tools, history_ids, /))]
    pub(crate) fn fragment<'py>(
        &self,
        py: Python<'py>,
        root_span_id: &Bound<'py, PyAny>,
        asks_tools: &Bound<'py, PyFrozenSet>,
        history_ids: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Finding<'py>>> {
        let (input_key, output_key) = (
            intern!(py, "input_messages"),
            intern!(py, "output_messages"),
        );
        let call_id_key = intern!(py, "call_id");
        let referenced = PyDict::new(py);
        for g in &self.generation_recs {
            let input = StepFields::new(g.step.bind(py).clone()).get(input_key)?;
            if !input.is_truthy()? {
                continue;
            }
            let (requested, answered): (Bound<'py, PyAny>, Bound<'py, PyAny>) =
                history_ids.call1((input,))?.extract()?;
            for id in requested.try_iter()?.chain(answered.try_iter()?) {
                let id = id?;
                if !referenced.contains(&id)? {
                    referenced.set_item(id, py.None())?;
                }
            }
        }
        if !referenced.is_empty() {
            let known = PySet::empty(py)?;
            let mut anonymous = 0usize;
            let executors = self.call_recs.iter().map(|c| c.step.bind(py).clone());
            for step in executors.chain(self.handoffs.bind(py).iter()) {
                let call_id = StepFields::new(step).get(call_id_key)?;
                if call_id.is_truthy()? {
                    known.add(call_id)?;
                } else {
                    anonymous += 1;
                }
            }
            let mut ids = Vec::new();
            for g in &self.generation_recs {
                let output = StepFields::new(g.step.bind(py).clone()).get(output_key)?;
                call_ids(&output, &mut ids)?;
            }
            for id in ids {
                known.add(id)?;
            }
            let mut unknown = Vec::new();
            for id in referenced.keys() {
                if !known.contains(&id)? {
                    unknown.push(id);
                }
            }
            if unknown.len() > anonymous {
                let ids = PyList::new(py, unknown)?.into_any();
                return Ok(Some((intern!(py, "outside").clone(), None, Some(ids))));
            }
        }
        let (source_key, span_key) = (intern!(py, "source"), intern!(py, "span_id"));
        let mut root = None;
        for g in &self.generation_recs {
            let source = StepFields::new(g.step.bind(py).clone()).get(source_key)?;
            // `span_id` read as an attribute: asking a `SpanRef` for its `__dict__` would make
            // one it does not otherwise have.
            if !source.is_none() && source.getattr(span_key)?.eq(root_span_id)? {
                root = Some(g);
                break;
            }
        }
        let Some(root) = root else {
            return Ok(None);
        };
        // `max(generations, key=index)`: the first of the greatest index.
        let mut last = root;
        for g in &self.generation_recs {
            if g.index > last.index {
                last = g;
            }
        }
        let fields = StepFields::new(last.step.bind(py).clone());
        let mut asks = false;
        for reason in items_of(&fields.get(intern!(py, "finish_reasons"))?)? {
            asks |= asks_tools.contains(reason.call_method0(intern!(py, "lower"))?)?;
        }
        let mut requested = tool_names(&fields.get(output_key)?)?;
        if requested.is_empty() {
            for c in &self.call_recs {
                if c.synthesized && c.index > last.index {
                    let tool = c.tool.bind(py);
                    requested.push(if tool.is_truthy()? {
                        tool.clone()
                    } else {
                        intern!(py, "?").clone().into_any()
                    });
                }
            }
        }
        if !requested.is_empty() || asks {
            let mut executed = self
                .call_recs
                .iter()
                .any(|c| c.index > last.index && !c.synthesized);
            if !executed {
                let index_key = intern!(py, "index");
                for handoff in self.handoffs.bind(py).iter() {
                    if number(&StepFields::new(handoff).get(index_key)?)? > last.index {
                        executed = true;
                        break;
                    }
                }
            }
            if !executed {
                let names = PyList::new(py, requested)?.into_any();
                let last = Some(fields.step);
                return Ok(Some((intern!(py, "unanswered").clone(), last, Some(names))));
            }
        }
        let root_fields = StepFields::new(root.step.bind(py).clone());
        let input = root_fields.get(input_key)?;
        if root_fields
            .get(intern!(py, "redacted"))?
            .contains(input_key)?
            || placeholder(&input, 0)?
            || messages_empty(&input)?
        {
            return Ok(Some((
                intern!(py, "unstarted").clone(),
                Some(root_fields.step),
                None,
            )));
        }
        Ok(None)
    }

    /// The calls `stopped_short` finds left unread after the run's last model call `last`
    /// (whose `source` and `end_ns` are set): calls of a tool a span ran (not synthesized)
    /// that ended by the time `last` ended, that are no final-answer call (`id()` not in
    /// `answering`), and that `last` asked for (synthesized from its span) or that started
    /// when or after it ended. Tools are compared as Python's `set` compares them.
    #[pyo3(signature = (last, answering, /))]
    pub(crate) fn unread_work<'py>(
        &self,
        last: &Bound<'py, PyAny>,
        answering: &Bound<'py, PyFrozenSet>,
    ) -> PyResult<Bound<'py, PyList>> {
        let py = last.py();
        let out = PyList::empty(py);
        let fields = StepFields::new(last.clone());
        let Some(after) = optional_number(&fields.get(intern!(py, "end_ns"))?)? else {
            return Ok(out);
        };
        let earlier = PySet::empty(py)?;
        for c in &self.call_recs {
            if !c.synthesized && !c.tool.is_none(py) && c.end.is_some_and(|end| end <= after) {
                earlier.add(c.tool.bind(py))?;
            }
        }
        if earlier.is_empty() {
            return Ok(out);
        }
        let (source_key, span_key) = (intern!(py, "source"), intern!(py, "span_id"));
        let mut last_span: Option<Bound<'py, PyAny>> = None;
        for c in &self.call_recs {
            let step = c.step.bind(py);
            if !earlier.contains(c.tool.bind(py))? || answering.contains(step.as_ptr() as usize)? {
                continue;
            }
            let unread = if c.synthesized {
                let source = StepFields::new(step.clone()).get(source_key)?;
                if source.is_none() {
                    false
                } else {
                    let span = match &last_span {
                        Some(span) => span.clone(),
                        None => last_span
                            .insert(fields.get(source_key)?.getattr(span_key)?)
                            .clone(),
                    };
                    source.getattr(span_key)?.eq(span)?
                }
            } else {
                c.start.is_some_and(|start| start >= after)
            };
            if unread {
                out.append(step)?;
            }
        }
        Ok(out)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<StepView>()
}
