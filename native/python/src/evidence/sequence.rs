//! `tool_sequence`'s per-call work (`otel_oracles.grade.oracles.trace_tools`): how each call
//! matches each expected item, the alignment (`otel_oracles_core::sequence`), and the diff
//! as the result shows it (its details, the message's lines, the steps it points at), in
//! one call per check.
//!
//! Python still decides what only Python knows: whether a contract's tool name names a
//! recorded one where the core's `NamedBy` does not answer (`first_match`, asked once per
//! item and distinct (tool, MCP tool) pair of names: a character class, a name that is no
//! UTF-8 `str`), why a call's arguments miss an item's constraints (`args_mismatch_why`, asked
//! for the pairs whose names match, its message made only for the pairs kept; whether they
//! miss an item whose one constraint is `args` in `subset` mode is decided here, [`Subset`])
//! and, for the unordered modes, the optimal assignment (`assign`). The rest was a Python
//! loop per (item, call) cell, per diff entry and per line.

use otel_oracles_core::hashing::{FastMap, FastMapExt};
use otel_oracles_core::sequence::{self, Cell, Counts, Entry, Mode};
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use crate::pydict::{self, StepFields};
use crate::tool_glob::NamedBy;

use super::{placeholder, where_text};

/// An expected item whose one constraint on a call's arguments is `args` in `subset` mode
/// (no `args_regex`, no `args_schema`): whether a call's arguments miss it is decided
/// here as `args_mismatch_why` decides it, without calling it (~2,500 instructions a call,
/// for every call whose name the item matches): the arguments not a placeholder, each
/// wanted key in them with a value that is not `!=` the wanted one. Its message is asked of
/// `args_mismatch_why` only for the pairs the diff shows. A call whose `arguments` are
/// `None` (an AgentBench step's own fields may stand for them: `effective_args`) or not an
/// exact `dict`, or a wanted key that is not an exact `str`, is left to it.
pub(crate) struct Subset {
    /// The item's `args`, read at each call (it is the item's own dict).
    args: Py<PyDict>,
}

impl Subset {
    /// `item`'s, when it is such an item (its fields read as `args_mismatch_why` reads
    /// them, as attributes), else `None`.
    fn of<'py>(item: &Bound<'py, PyAny>) -> Option<Self> {
        let py = item.py();
        let read = |name: &Bound<'py, PyString>| item.getattr(name).ok();
        let args = read(intern!(py, "args"))?
            .cast_into_exact::<PyDict>()
            .ok()?;
        let mode = read(intern!(py, "args_mode"))?;
        let subset = mode
            .cast_exact::<PyString>()
            .is_ok_and(|mode| mode.to_str().is_ok_and(|mode| mode == "subset"));
        let no_regex = read(intern!(py, "args_regex"))?
            .cast_exact::<PyDict>()
            .is_ok_and(|regexes| regexes.is_empty());
        let no_schema = read(intern!(py, "args_schema"))?.is_none();
        (subset && no_regex && no_schema).then(|| Self {
            args: args.unbind(),
        })
    }

    /// Whether `step`'s arguments satisfy the item (`args_mismatch_why` answering `None`),
    /// or `None` where it is left to `args_mismatch_why`.
    fn satisfied(&self, step: &StepFields<'_>) -> PyResult<Option<bool>> {
        let py = step.step.py();
        let args = step.get(intern!(py, "arguments"))?;
        if args.is_none() {
            return Ok(None);
        }
        if placeholder(&args, 0)? {
            return Ok(Some(false)); // "arguments not captured"
        }
        let Ok(args) = args.cast_exact::<PyDict>() else {
            return Ok(None);
        };
        for (key, want) in self.args.bind(py).iter() {
            let Ok(key) = key.cast_exact::<PyString>() else {
                return Ok(None);
            };
            // `key not in args`, then `args[key] != want`: an exact `dict` looked up by an
            // exact `str`, then Python's `!=` and truth.
            match args.get_item(key)? {
                None => return Ok(Some(false)),
                Some(value) if value.ne(&want)? => return Ok(Some(false)),
                Some(_) => {}
            }
        }
        Ok(Some(true))
    }
}

/// Per item of `items`, its [`Subset`] when it is one: made once per plan.
pub(crate) fn items_subsets(items: &Bound<'_, PyTuple>) -> PyResult<Vec<Option<Subset>>> {
    items
        .iter()
        .map(|spec| Ok(Subset::of(&spec.cast_into::<PyTuple>()?.get_item(0)?)))
        .collect()
}

/// A call's names as the items' tools are matched against them: its tool, and the name an
/// MCP server ran it under (`attributes.mcp_tool`, when a `str`); `None` for a name that is
/// not UTF-8 text, which is then asked of `first_match` every time.
type NameKey = (Option<String>, Option<String>);

fn text_of(value: &Bound<'_, PyAny>) -> Option<String> {
    value
        .cast::<PyString>()
        .ok()
        .and_then(|t| t.to_str().ok())
        .map(str::to_owned)
}

/// `entry`'s line in a failed sequence's message (`tool`: the expected item's tool, padded
/// to 24 characters, never cut; `call`: `where_text` of the call; `note`: why its arguments
/// do not match), formatted by Python's `str.format` as the f-strings did.
fn diff_line<'py>(
    entry: &Entry,
    tool: Option<Bound<'py, PyAny>>,
    call: Option<Bound<'py, PyAny>>,
    note: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = note.py();
    let format = intern!(py, "format");
    let empty = || PyString::new(py, "").into_any();
    let tool = tool.unwrap_or_else(empty);
    let call = call.unwrap_or_else(empty);
    match entry {
        Entry::Paired { full: true, .. } => {
            intern!(py, "  = {:<24} {}").call_method1(format, (tool, call))
        }
        Entry::Paired { full: false, .. } => {
            intern!(py, "  ~ {:<24} {}: {}").call_method1(format, (tool, call, note))
        }
        Entry::Missing(_) => {
            intern!(py, "  - {:<24} (expected, not called)").call_method1(format, (tool,))
        }
        Entry::Unexpected(_) => {
            intern!(py, "  + {:<24} {} (not expected)").call_method1(format, ("", call))
        }
    }
}

/// `tool_sequence_diff`'s answer: `(holds, counts, actual, diff, steps, text)`.
type SequenceDiff<'py> = (
    bool,
    Bound<'py, PyDict>,
    Bound<'py, PyList>,
    Bound<'py, PyList>,
    Bound<'py, PyList>,
    Bound<'py, PyAny>,
);

/// `(holds, counts, actual, diff, steps, text)` of a `tool_sequence` check in `mode` of
/// `items` (`(item, tool patterns, whether it constrains the arguments)`, the item's tool
/// `tools[i]`) against `calls`:
///
/// - `holds`: whether the sequence holds;
/// - `counts`: each op (`match`, `args_mismatch`, `missing`, `unexpected`) -> how many
///   entries of the diff have it;
/// - `actual`: the calls' tools;
/// - `diff`: per entry its `op`, the expected item (`position`, `tool`), the call (`step`,
///   `tool`, and `span_id` for a trace-derived step) and the `note` (why the arguments do
///   not match, when not empty);
/// - `steps`: the calls of the full matches when the sequence holds, else the calls of the
///   entries that break it;
/// - `text`: when it holds, the calls' tools joined by ` -> ` (`?` for no tool; `no calls`
///   for none), else the diff's lines (`diff_line`).
///
/// `first_match(name, patterns)` names an item's tool in a recorded name (`None`: no);
/// `why_of(item, call)` is `args_mismatch_why`; `assign(weights)` an optimal assignment
/// maximizing the weights (`(rows, cols)`), asked only in the unordered modes with items
/// and calls on both sides.
#[pyfunction]
#[pyo3(signature = (mode, items, tools, calls, first_match, why_of, assign, /))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn tool_sequence_diff<'py>(
    mode: &str,
    items: &Bound<'py, PyTuple>,
    tools: &Bound<'py, PyTuple>,
    calls: &Bound<'py, PyAny>,
    first_match: &Bound<'py, PyAny>,
    why_of: &Bound<'py, PyAny>,
    assign: &Bound<'py, PyAny>,
) -> PyResult<SequenceDiff<'py>> {
    let named = items_named_by(items, first_match)?;
    let subsets = items_subsets(items)?;
    sequence_diff(mode, items, tools, calls, &named, &subsets, why_of, assign)
}

/// Per item of `items`, whether its tool patterns name a recorded tool (`first_match`
/// asked only for what the core's `NamedBy` leaves to it): made once per plan.
pub(crate) fn items_named_by(
    items: &Bound<'_, PyTuple>,
    first_match: &Bound<'_, PyAny>,
) -> PyResult<Vec<NamedBy>> {
    items
        .iter()
        .map(|spec| {
            let patterns = spec.get_item(1)?.cast_into::<PyTuple>()?;
            Ok(NamedBy::new(patterns, first_match.clone()))
        })
        .collect()
}

/// `tool_sequence_diff` with each item's `NamedBy` and `Subset` made (`items_named_by`,
/// `items_subsets`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn sequence_diff<'py>(
    mode: &str,
    items: &Bound<'py, PyTuple>,
    tools: &Bound<'py, PyTuple>,
    calls: &Bound<'py, PyAny>,
    items_named: &[NamedBy],
    items_subset: &[Option<Subset>],
    why_of: &Bound<'py, PyAny>,
    assign: &Bound<'py, PyAny>,
) -> PyResult<SequenceDiff<'py>> {
    let py = items.py();
    let mode = Mode::named(mode)
        .ok_or_else(|| PyValueError::new_err(format!("no sequence mode named {mode:?}")))?;
    let (tool_key, attributes_key) = (intern!(py, "tool"), intern!(py, "attributes"));
    let steps: Vec<StepFields<'py>> = calls
        .try_iter()?
        .map(|c| c.map(StepFields::new))
        .collect::<PyResult<_>>()?;
    let (n, m) = (items.len(), steps.len());
    if tools.len() != n || items_named.len() != n || items_subset.len() != n {
        return Err(PyValueError::new_err("one tool per expected item"));
    }

    // Each call's names, and the distinct pairs of them (a sequence repeats its tools).
    let mut classes: FastMap<NameKey, usize> = FastMap::new();
    let mut call_class: Vec<Option<usize>> = Vec::with_capacity(m);
    let mut names: Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)> = Vec::with_capacity(m);
    for step in &steps {
        let tool = step.get(tool_key)?;
        let served = pydict::get(&step.get(attributes_key)?, intern!(py, "mcp_tool"))?;
        let served_text = if served.is_instance_of::<PyString>() {
            text_of(&served).map(Some)
        } else {
            Some(None)
        };
        let tool_text = if tool.is_none() {
            Some(None)
        } else {
            text_of(&tool).map(Some)
        };
        call_class.push(match (tool_text, served_text) {
            (Some(t), Some(s)) => {
                let next = classes.len();
                Some(*classes.entry((t, s)).or_insert(next))
            }
            _ => None,
        });
        names.push((tool, served));
    }
    // `step_glob(call, patterns) is not None`: the tool named, else the MCP tool.
    let glob = |patterns: &NamedBy, j: usize| -> PyResult<bool> {
        let (tool, served) = &names[j];
        if patterns.names(tool, false)? {
            return Ok(true);
        }
        Ok(served.is_instance_of::<PyString>() && patterns.names(served, false)?)
    };
    let mut named: Vec<Option<bool>> = vec![None; n * classes.len()];
    let mut cells: Vec<Cell> = Vec::with_capacity(n * m);
    let mut whys: FastMap<usize, Bound<'py, PyAny>> = FastMap::new();
    for (i, spec) in items.iter().enumerate() {
        let spec = spec.cast_into::<PyTuple>()?;
        let (item, patterns) = (spec.get_item(0)?, &items_named[i]);
        let constrains = spec.get_item(2)?.is_truthy()?;
        for j in 0..m {
            let hit = match call_class[j] {
                Some(class) => match named[i * classes.len() + class] {
                    Some(hit) => hit,
                    None => {
                        let hit = glob(patterns, j)?;
                        named[i * classes.len() + class] = Some(hit);
                        hit
                    }
                },
                None => glob(patterns, j)?,
            };
            cells.push(if !hit {
                Cell::No
            } else if !constrains {
                Cell::Full
            } else {
                let decided = match &items_subset[i] {
                    Some(subset) => subset.satisfied(&steps[j])?,
                    None => None,
                };
                match decided {
                    Some(true) => Cell::Full,
                    Some(false) => Cell::Name, // its message made if shown (below)
                    None => {
                        let why = why_of.call1((&item, &steps[j].step))?;
                        if why.is_none() {
                            Cell::Full
                        } else {
                            whys.insert(i * m + j, why);
                            Cell::Name
                        }
                    }
                }
            });
        }
    }

    let diff = if mode.ordered() {
        sequence::align_ordered(&cells, n, m)
    } else {
        let mut pairs = Vec::new();
        if n > 0 && m > 0 {
            let big = n + m + 1;
            let weights = PyList::empty(py);
            for i in 0..n {
                let row = cells[i * m..(i + 1) * m].iter().map(|c| match c {
                    Cell::No => 0,
                    Cell::Name => 1,
                    Cell::Full => big,
                });
                weights.append(PyList::new(py, row)?)?;
            }
            let assigned = assign.call1((weights,))?;
            let (rows, cols) = (assigned.get_item(0)?, assigned.get_item(1)?);
            for (i, j) in rows.try_iter()?.zip(cols.try_iter()?) {
                pairs.push((i?.extract::<usize>()?, j?.extract::<usize>()?));
            }
            if pairs.iter().any(|&(i, j)| i >= n || j >= m) {
                return Err(PyValueError::new_err("an assigned pair out of range"));
            }
        }
        let indexes: Vec<i64> = steps
            .iter()
            .map(|s| s.get(intern!(py, "index"))?.extract())
            .collect::<PyResult<_>>()?;
        sequence::unordered(&cells, n, m, &pairs, &indexes)
    };

    let holds = mode.holds(&diff);
    let counts = Counts::of(&diff);
    let counted = PyDict::new(py);
    counted.set_item(intern!(py, "match"), counts.matched)?;
    counted.set_item(intern!(py, "args_mismatch"), counts.args_mismatch)?;
    counted.set_item(intern!(py, "missing"), counts.missing)?;
    counted.set_item(intern!(py, "unexpected"), counts.unexpected)?;
    let actual = PyList::new(py, names.iter().map(|(tool, _)| tool))?;

    let (op_key, expected_key) = (intern!(py, "op"), intern!(py, "expected"));
    let (position_key, actual_key) = (intern!(py, "position"), intern!(py, "actual"));
    let (step_key, span_key) = (intern!(py, "step"), intern!(py, "span_id"));
    let (source_key, index_key) = (intern!(py, "source"), intern!(py, "index"));
    let note_key = intern!(py, "note");
    let shown = PyList::empty(py);
    let picked = PyList::empty(py);
    let lines = PyList::empty(py);
    for entry in &diff {
        let (item, call) = match *entry {
            Entry::Paired { item, call, .. } => (Some(item), Some(call)),
            Entry::Missing(item) => (Some(item), None),
            Entry::Unexpected(call) => (None, Some(call)),
        };
        let note = match *entry {
            Entry::Paired {
                item,
                call,
                full: false,
            } => match whys.get(&(item * m + call)) {
                Some(why) => why.call0()?,
                None => {
                    // A pair a `Subset` found amiss: `args_mismatch_why` words it.
                    let spec = items.get_item(item)?.cast_into::<PyTuple>()?.get_item(0)?;
                    let why = why_of.call1((spec, &steps[call].step))?;
                    if why.is_none() {
                        return Err(PyValueError::new_err(
                            "args_mismatch_why found no mismatch where the core found one",
                        ));
                    }
                    why.call0()?
                }
            },
            _ => PyString::new(py, "").into_any(),
        };
        let row = PyDict::new(py);
        row.set_item(op_key, entry.op())?;
        if let Some(i) = item {
            let expected = PyDict::new(py);
            expected.set_item(position_key, i)?;
            expected.set_item(tool_key, tools.get_item(i)?)?;
            row.set_item(expected_key, expected)?;
        }
        if let Some(j) = call {
            let step = &steps[j];
            let called = PyDict::new(py);
            called.set_item(step_key, step.get(index_key)?)?;
            called.set_item(tool_key, &names[j].0)?;
            let source = step.get(source_key)?;
            if !source.is_none() {
                called.set_item(span_key, source.getattr(span_key)?)?;
            }
            row.set_item(actual_key, called)?;
            let wanted = if holds {
                matches!(entry, Entry::Paired { full: true, .. })
            } else {
                mode.breaks(entry)
            };
            if wanted {
                picked.append(&step.step)?;
            }
        }
        if note.is_truthy()? {
            row.set_item(note_key, &note)?;
        }
        shown.append(row)?;
        if !holds {
            let tool = item.map(|i| tools.get_item(i)).transpose()?;
            let at = call
                .map(|j| where_text(&steps[j]).map(Bound::into_any))
                .transpose()?;
            lines.append(diff_line(entry, tool, at, &note)?)?;
        }
    }
    let join = intern!(py, "join");
    let text = if holds {
        let order = PyList::empty(py);
        for (tool, _) in &names {
            if tool.is_truthy()? {
                order.append(tool)?;
            } else {
                order.append(intern!(py, "?"))?;
            }
        }
        if order.is_empty() {
            intern!(py, "no calls").clone().into_any()
        } else {
            intern!(py, " -> ").call_method1(join, (order,))?
        }
    } else {
        intern!(py, "\n").call_method1(join, (lines,))?
    };
    Ok((holds, counted, actual, shown, picked, text))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(tool_sequence_diff, m)?)
}
