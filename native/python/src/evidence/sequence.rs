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
//! miss an item whose constraints are `args` in `subset` mode and regexes the core can
//! answer is decided here, [`Subset`]) and, for the unordered modes, the optimal assignment
//! (`assign`). The rest was a Python loop per (item, call) cell, per diff entry and per
//! line; the lines and the text of a sequence that holds are written in Rust where their
//! parts are plain text ([`Lines`], `order_text`).

use otel_oracles_core::hashing::{FastMap, FastMapExt};
use otel_oracles_core::rule_regex::RegexPlan;
use otel_oracles_core::sequence::{self, Cell, Counts, Entry, Mode};
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use crate::pydict::{self, StepFields};
use crate::tool_glob::NamedBy;

use super::naming::{plain, shown_name, step_place, write_where};
use super::{placeholder, where_text};

/// An expected item whose constraints on a call's arguments are `args` in `subset` mode
/// and `args_regex` (no `args_schema`, no `args` in `exact` mode): whether a call's
/// arguments miss it is decided here as `args_mismatch_why` decides it, without calling it
/// (~10,000 instructions a call, for every call whose name the item matches): the arguments
/// not a placeholder, each wanted key in them with a value that is not `!=` the wanted one,
/// then each regex's field in them, a `str` the regex finds a match in. A regex is the
/// `regex` engine's (`safe_regex.search`, no flags), answered here only where its
/// [`RegexPlan`] proves that engine's answer (a literal, anchors, alternations of them; "no
/// match" for a text lacking a literal every match needs), as the conventions' rule table
/// answers it. Its message is asked of `args_mismatch_why` only for the pairs the diff
/// shows. A call whose `arguments` are `None` (an AgentBench step's own fields may stand for
/// them: `effective_args`) or not an exact `dict`, a wanted key that is not an exact `str`,
/// a regex's field whose value is not an exact `str` (its JSON text is searched) or a regex
/// the plan cannot answer for its text is left to it; the constraints are read in
/// `args_mismatch_why`'s order, and the first one left to it leaves the whole call to it
/// (it may raise on that one: a regex over its budget).
pub(crate) struct Subset {
    /// The item's `args` (`subset` mode), read at each call (it is the item's own dict);
    /// `None` when it gives none.
    args: Option<Py<PyDict>>,
    /// The item's `args_regex`, in its order: each field, and its pattern's plan.
    regexes: Vec<(Py<PyString>, RegexPlan)>,
}

impl Subset {
    /// `item`'s, when it is such an item (its fields read as `args_mismatch_why` reads
    /// them, as attributes), else `None`.
    fn of<'py>(item: &Bound<'py, PyAny>) -> Option<Self> {
        let py = item.py();
        let read = |name: &Bound<'py, PyString>| item.getattr(name).ok();
        let args = read(intern!(py, "args"))?;
        let args = if args.is_none() {
            None
        } else {
            let mode = read(intern!(py, "args_mode"))?;
            let subset = mode
                .cast_exact::<PyString>()
                .is_ok_and(|mode| mode.to_str().is_ok_and(|mode| mode == "subset"));
            if !subset {
                return None;
            }
            Some(args.cast_into_exact::<PyDict>().ok()?.unbind())
        };
        let mut regexes = Vec::new();
        let patterns = read(intern!(py, "args_regex"))?
            .cast_into_exact::<PyDict>()
            .ok()?;
        for (key, pattern) in patterns.iter() {
            let key = key.cast_into_exact::<PyString>().ok()?;
            let plan = RegexPlan::of(pattern.cast_exact::<PyString>().ok()?.to_str().ok()?);
            if plan == RegexPlan::host() {
                return None; // Python answers every text: nothing to decide here
            }
            regexes.push((key.unbind(), plan));
        }
        let no_schema = read(intern!(py, "args_schema"))?.is_none();
        (no_schema && (args.is_some() || !regexes.is_empty())).then_some(Self { args, regexes })
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
        for (key, want) in self.args.iter().flat_map(|wanted| wanted.bind(py).iter()) {
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
        for (key, plan) in &self.regexes {
            let Some(value) = args.get_item(key.bind(py))? else {
                return Ok(Some(false)); // `key not in args`
            };
            let Some(text) = plain(&value) else {
                return Ok(None);
            };
            match plan.answer(text) {
                Some(true) => {}
                Some(false) => return Ok(Some(false)),
                None => return Ok(None),
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

/// The text of `entry`'s op (`Entry::op`), the same `str` for every row.
fn op_text<'py>(py: Python<'py>, entry: &Entry) -> &'py Bound<'py, PyString> {
    match entry {
        Entry::Paired { full: true, .. } => intern!(py, "match"),
        Entry::Paired { full: false, .. } => intern!(py, "args_mismatch"),
        Entry::Missing(_) => intern!(py, "missing"),
        Entry::Unexpected(_) => intern!(py, "unexpected"),
    }
}

/// The text of a sequence that holds: the calls' tools joined by ` -> ` (`?` for a tool
/// that is not truthy), `no calls` for none; written in Rust when every tool is `None` or
/// plain text, else joined by Python's `str.join`.
fn order_text<'py>(
    py: Python<'py>,
    names: &[(Bound<'py, PyAny>, Bound<'py, PyAny>)],
) -> PyResult<Bound<'py, PyAny>> {
    if names.is_empty() {
        return Ok(intern!(py, "no calls").clone().into_any());
    }
    let mut text = String::new();
    for (tool, _) in names {
        let shown = if tool.is_none() {
            Some("?")
        } else {
            plain(tool).map(|t| if t.is_empty() { "?" } else { t })
        };
        let Some(shown) = shown else {
            text.clear();
            break;
        };
        if !text.is_empty() {
            text.push_str(" -> ");
        }
        text.push_str(shown);
    }
    if !text.is_empty() {
        return Ok(PyString::new(py, &text).into_any());
    }
    let order = PyList::empty(py);
    for (tool, _) in names {
        if tool.is_truthy()? {
            order.append(tool)?;
        } else {
            order.append(intern!(py, "?"))?;
        }
    }
    intern!(py, " -> ").call_method1(intern!(py, "join"), (order,))
}

/// The lines of a failed sequence's message, joined by `\n` as `"\n".join(lines)` joins
/// them: each written in Rust when its parts are plain text (`write_line`); a line whose
/// parts are not (a `str` subclass, a lone surrogate, a tool that is no `str`) is formatted
/// by Python (`diff_line`) and kept as its `str`, the lines written before it as one `str`.
#[derive(Default)]
struct Lines<'py> {
    /// The lines written since the last one Python formatted, joined (lines are never
    /// empty: empty means none).
    text: String,
    /// The pieces joined at the end, once Python formatted a line.
    pieces: Option<Bound<'py, PyList>>,
}

impl<'py> Lines<'py> {
    /// Adds `entry`'s line (`tool`: the expected item's tool; `call`: the call; `note`: why
    /// its arguments do not match).
    fn push(
        &mut self,
        entry: &Entry,
        tool: Option<Bound<'py, PyAny>>,
        call: Option<&Placed<'_, 'py>>,
        note: &Bound<'py, PyAny>,
    ) -> PyResult<()> {
        let before = self.text.len();
        if before > 0 {
            self.text.push('\n');
        }
        if write_line(&mut self.text, entry, tool.as_ref(), call, note)? {
            return Ok(());
        }
        self.text.truncate(before);
        let py = note.py();
        let call = call
            .map(|(step, _, _)| where_text(step).map(Bound::into_any))
            .transpose()?;
        let line = diff_line(entry, tool, call, note)?;
        let pieces = self.pieces.get_or_insert_with(|| PyList::empty(py));
        if !self.text.is_empty() {
            pieces.append(PyString::new(py, &self.text))?;
            self.text.clear();
        }
        pieces.append(line)
    }

    /// The lines joined by `\n`.
    fn joined(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let Some(pieces) = self.pieces else {
            return Ok(PyString::new(py, &self.text).into_any());
        };
        if !self.text.is_empty() {
            pieces.append(PyString::new(py, &self.text))?;
        }
        intern!(py, "\n").call_method1(intern!(py, "join"), (pieces,))
    }
}

/// A diff entry's call: the call, and its `index` and span id (`step_place`), read once for
/// its row and its line.
type Placed<'a, 'py> = (
    &'a StepFields<'py>,
    Bound<'py, PyAny>,
    Option<Bound<'py, PyAny>>,
);

/// `diff_line`'s text written at the end of `out` when its parts are plain text (the tool
/// and the note exact UTF-8 `str`s, the call's `where` written in Rust: `write_where`):
/// `true`; else `false`, `out` holding a part of it (the caller cuts it).
fn write_line(
    out: &mut String,
    entry: &Entry,
    tool: Option<&Bound<'_, PyAny>>,
    call: Option<&Placed<'_, '_>>,
    note: &Bound<'_, PyAny>,
) -> PyResult<bool> {
    let (mark, tool) = match entry {
        Entry::Paired { full: true, .. } => ("  = ", tool),
        Entry::Paired { full: false, .. } => ("  ~ ", tool),
        Entry::Missing(_) => ("  - ", tool),
        Entry::Unexpected(_) => ("  + ", None), // the tool column left blank
    };
    let tool = match tool {
        None => "",
        Some(tool) => match plain(tool) {
            Some(tool) => tool,
            None => return Ok(false),
        },
    };
    out.push_str(mark);
    out.push_str(tool);
    // `{:<24}`: padded with spaces to 24 characters (code points), never cut.
    for _ in tool.chars().count()..24 {
        out.push(' ');
    }
    out.push(' ');
    if let Entry::Missing(_) = entry {
        out.push_str("(expected, not called)");
        return Ok(true);
    }
    if let Some((step, index, span)) = call {
        if write_where(&shown_name(step)?, index, span.as_ref(), out)?.is_some() {
            return Ok(false);
        }
    }
    match entry {
        Entry::Paired { full: false, .. } => {
            let Some(note) = plain(note) else {
                return Ok(false);
            };
            out.push_str(": ");
            out.push_str(note);
        }
        Entry::Unexpected(_) => out.push_str(" (not expected)"),
        _ => {}
    }
    Ok(true)
}

/// `entry`'s line in a failed sequence's message where `write_line` cannot write it
/// (`tool`: the expected item's tool, padded to 24 characters, never cut; `call`:
/// `where_text` of the call; `note`: why its arguments do not match), formatted by Python's
/// `str.format` as the f-strings did.
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

/// The templates of a diff's rows, by shape (bit 0: the row has `expected`, bit 1: `actual`,
/// bit 2: `note`), of their `expected` dicts, and of their `actual` dicts (without, with a
/// `span_id`): see `keyed`.
static ROWS: [PyOnceLock<Py<PyDict>>; 8] = [const { PyOnceLock::new() }; 8];
static EXPECTED: PyOnceLock<Py<PyDict>> = PyOnceLock::new();
static ACTUAL: [PyOnceLock<Py<PyDict>>; 2] = [const { PyOnceLock::new() }; 2];

/// A new dict of `keys()` in their order, each `None` until the caller puts its value in: a
/// copy (`PyDict_Copy`: the table cloned whole, keys and hashes with it) of the dict of them
/// kept in `template`, made the first time. A row filled entry by entry from an empty dict
/// cost ~220 instructions an insert, its first one allocating the table; a value put in on a
/// key the copy holds replaces the `None`. The template is never handed out, so never
/// changed.
fn keyed<'py, 'k>(
    py: Python<'py>,
    template: &'static PyOnceLock<Py<PyDict>>,
    keys: impl FnOnce() -> Vec<&'k Bound<'py, PyString>>,
) -> PyResult<Bound<'py, PyDict>>
where
    'py: 'k,
{
    let template = template.get_or_try_init(py, || {
        let dict = PyDict::new(py);
        for key in keys() {
            dict.set_item(key, py.None())?;
        }
        Ok::<_, PyErr>(dict.unbind())
    })?;
    template.bind(py).copy()
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
    // The plans hand a list or the view's tuple: read in place (`pydict::items`), not
    // through an iterator whose length hint is asked again each time the vector grows
    // (~1,000 instructions each).
    let steps: Vec<StepFields<'py>> = pydict::items(calls)?
        .into_iter()
        .map(StepFields::new)
        .collect();
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
    let note_key = intern!(py, "note");
    let shown = PyList::empty(py);
    let picked = PyList::empty(py);
    let mut lines = Lines::default();
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
        let noted = note.is_truthy()?;
        let shape = usize::from(item.is_some())
            | usize::from(call.is_some()) << 1
            | usize::from(noted) << 2;
        let row = keyed(py, &ROWS[shape], || {
            let mut keys = vec![op_key];
            keys.extend(item.map(|_| expected_key));
            keys.extend(call.map(|_| actual_key));
            keys.extend(noted.then_some(note_key));
            keys
        })?;
        row.set_item(op_key, op_text(py, entry))?;
        let tool = item.map(|i| tools.get_item(i)).transpose()?;
        if let (Some(i), Some(tool)) = (item, &tool) {
            let expected = keyed(py, &EXPECTED, || vec![position_key, tool_key])?;
            expected.set_item(position_key, i)?;
            expected.set_item(tool_key, tool)?;
            row.set_item(expected_key, expected)?;
        }
        let place = match call {
            Some(j) => {
                let step = &steps[j];
                let (index, span) = step_place(step)?;
                let called = keyed(py, &ACTUAL[usize::from(span.is_some())], || {
                    let mut keys = vec![step_key, tool_key];
                    keys.extend(span.as_ref().map(|_| span_key));
                    keys
                })?;
                called.set_item(step_key, &index)?;
                called.set_item(tool_key, &names[j].0)?;
                if let Some(span) = &span {
                    called.set_item(span_key, span)?;
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
                Some((step, index, span))
            }
            None => None,
        };
        if noted {
            row.set_item(note_key, &note)?;
        }
        shown.append(row)?;
        if !holds {
            lines.push(entry, tool, place.as_ref(), &note)?;
        }
    }
    let text = if holds {
        order_text(py, &names)?
    } else {
        lines.joined(py)?
    };
    Ok((holds, counted, actual, shown, picked, text))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(tool_sequence_diff, m)?)
}
