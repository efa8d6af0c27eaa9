//! Tool-call linking (`otel_oracles.mapping._mapper`, `map_trace`'s `link_tool_calls` pass):
//! each tool call a model call asked for (a `tool_call` part of its output) paired with the
//! tool, retrieval or handoff step that ran it, per agent scope (call ids repeat across
//! agents), by call id, else (steps without an id) by tool name in order; a request no step
//! of its scope ran, with a step of another scope that started after the model call; what is
//! left, synthesized where the rule says so. `_link_tool_calls`'s docstring in `_mapper.py`
//! says what each search takes and for which framework; each function here names the Python
//! one it replaced (until 3 December 2026), with the same operations in the same order.
//!
//! The searches are indexed so that linking costs what the trace holds, not its square (a
//! trace decides how many calls one model call asks for, and how many model calls follow):
//! steps by call id and by name (`Executors`), the rejections of a scope's model calls
//! (`Executors::first_for`), the model calls' answers by call id and by position, read
//! once per model call (`Answers`), and the first later model call carrying a conversation
//! on (`FirstAbove`, a segment tree of maxima).
//!
//! Values are read as Python reads them: a plain `dict`'s items and a plain `list`'s through
//! the C API, any other object (a subclass, a value a plug-in parser made) through its own
//! `get`, iteration and `==`; the indexes are Python dicts, so call ids and tool names are
//! hashed and compared as Python compares them (an unhashable one equals no step's id).
//! What a found result means stays Python's, through the `Linker`'s functions: the model
//! call's answers by call id (`_responses`), a result taken by a step (`message_result` and
//! `judge_result`), a synthesized call and a placeholder for hidden calls (new `Draft`s).

use otel_oracles_core::hashing::{FastMap, FastMapExt, FastSet, FastSetExt};

use crate::draft::{
    draft_attr, draft_held, draft_set, ATTRIBUTES, CLAIMED, FIELDS, FOLLOWS, KIND, REDACTED, RULE,
    SCOPE, SPAN, STATUS, SYNTHESIZED,
};
use crate::pydict::{eq_text, for_each_item, for_each_item_of, get, items, items_of};
use crate::slots::{span, span_held, ClassSlots, Held};
use pyo3::exceptions::{PyAssertionError, PyTypeError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PySet, PyString};

/// Where a `CompiledRule` holds the two flags linking reads, probed on first use: asked per
/// model call and per linked step (~36,000 asks a grade of data-2000), each ~160
/// instructions by name.
static RULE_SLOTS: ClassSlots = ClassSlots::new(
    "otel_oracles.mapping._compile",
    "CompiledRule",
    &["synthesize", "result_from_messages"],
);
const SYNTHESIZE: usize = 0;
const RESULT_FROM_MESSAGES: usize = 1;

/// A draft's kind, as linking tells them apart.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Generation,
    ToolCall,
    Retrieval,
    Handoff,
    Agent,
    Other,
    Else,
}

impl Kind {
    fn of(kind: &Bound<'_, PyAny>) -> Self {
        let Ok(text) = kind.cast::<PyString>() else {
            return Self::Else;
        };
        match text.to_str() {
            Ok("generation") => Self::Generation,
            Ok("tool_call") => Self::ToolCall,
            Ok("retrieval") => Self::Retrieval,
            Ok("handoff") => Self::Handoff,
            Ok("agent") => Self::Agent,
            Ok("other") => Self::Other,
            _ => Self::Else,
        }
    }

    /// `TOOLISH`: a step that can have run a requested call.
    fn toolish(self) -> bool {
        matches!(self, Self::ToolCall | Self::Retrieval | Self::Handoff)
    }
}

/// What linking reads of one draft, once (none of it changes while linking).
struct Info<'py> {
    obj: Bound<'py, PyAny>,
    kind: Kind,
    /// The scope's number (drafts of one scope share it: scopes compared as Python `str`s).
    scope: usize,
    /// The span's start and end, when the draft has a span.
    times: Option<(i128, i128)>,
    synthesized: bool,
    claimed: bool,
}

/// A span time: an `int` (any size a decoder made).
pub(crate) fn nanos(value: &Bound<'_, PyAny>) -> PyResult<i128> {
    match value.extract::<i64>() {
        Ok(n) => Ok(i128::from(n)),
        Err(_) => value.extract::<i128>(),
    }
}

/// `fields.get(name) or []`, as a list of its items.
pub(crate) fn field_items<'py>(
    fields: &Bound<'py, PyAny>,
    name: &Bound<'py, PyString>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    items_of(&get(fields, name)?)
}

/// `_parts(msg)`: a message's `parts` that are `dict`s, or none when it has no list of parts.
pub(crate) fn parts<'py>(msg: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let py = msg.py();
    let parts = get(msg, intern!(py, "parts"))?;
    if !parts.is_instance_of::<PyList>() {
        return Ok(Vec::new());
    }
    Ok(items(&parts)?
        .into_iter()
        .filter(|p| p.is_instance_of::<PyDict>())
        .collect())
}

/// `_has_role(message)`: whether a recorded message says whose turn it is.
fn has_role(message: &Bound<'_, PyAny>) -> PyResult<bool> {
    if !message.is_instance_of::<PyDict>() {
        return Ok(false);
    }
    get(message, intern!(message.py(), "role"))?.is_truthy()
}

/// The calls a model call asked for (`_requested_calls`): the `tool_call` parts with a name
/// of its output messages, in order.
pub(crate) fn requested_of<'py>(draft: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let mut calls = Vec::new();
    push_requested(draft, &mut calls)?;
    Ok(calls)
}

/// [`requested_of`], appended to `calls`. The messages and their parts are read in place,
/// as `_requested_calls`' loops read them: no list of them is copied per model call.
fn push_requested<'py>(
    draft: &Bound<'py, PyAny>,
    calls: &mut Vec<Bound<'py, PyAny>>,
) -> PyResult<()> {
    let py = draft.py();
    let fields = draft_held(draft, FIELDS, intern!(py, "fields"))?;
    let messages = get(&fields, intern!(py, "output_messages"))?;
    for_each_item_of(&messages, |msg| {
        let parts = get(&msg, intern!(py, "parts"))?;
        if !parts.is_instance_of::<PyList>() {
            return Ok(());
        }
        for_each_item(&parts, |part| {
            if part.is_instance_of::<PyDict>()
                && eq_text(&get(&part, intern!(py, "type"))?, intern!(py, "tool_call"))?
                && get(&part, intern!(py, "name"))?.is_truthy()?
            {
                calls.push(part);
            }
            Ok(())
        })
    })
}

/// The tool calls a model call (a `Draft`) asked for: the `tool_call` parts with a name in
/// its output messages, in order (`requests_from_next_input` in `passes.rs` reads them too).
#[pyfunction]
fn requested_calls<'py>(draft: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyAny>>> {
    requested_of(draft)
}

/// Whether `a` and `b` are exact `str`s, the same one or of one UTF-8 text: keys a dict
/// finds equal (an exact `str` hashes and compares by its text alone, running no code).
fn same_text(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> bool {
    let (Ok(a), Ok(b)) = (a.cast_exact::<PyString>(), b.cast_exact::<PyString>()) else {
        return false;
    };
    a.is(b) || matches!((a.to_str(), b.to_str()), (Ok(a), Ok(b)) if a == b)
}

/// Python's `bisect_right` over ascending positions.
fn bisect_right(positions: &[usize], x: isize) -> usize {
    positions.partition_point(|&p| (p as isize) <= x)
}

/// A key's UTF-8 text, borrowed from an exact `str` its [`Index`] holds a reference to
/// (`Index::held`): the text `PyUnicode_AsUTF8AndSize` keeps inside the immutable object for
/// as long as the object lives, so the index keys its map with no copy.
#[derive(Clone, Copy)]
struct HeldText(*const str);

impl HeldText {
    fn text(&self) -> &str {
        // SAFETY: the pointer is a `str`'s own UTF-8 text, and the `str` is held by the
        // index whose map holds this key (`Index::held`), released only with the map.
        unsafe { &*self.0 }
    }
}

impl PartialEq for HeldText {
    fn eq(&self, other: &Self) -> bool {
        self.text() == other.text()
    }
}

impl Eq for HeldText {}

impl std::hash::Hash for HeldText {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.text().hash(state);
    }
}

impl std::borrow::Borrow<str> for HeldText {
    fn borrow(&self) -> &str {
        self.text()
    }
}

/// The ascending positions of one key. Most keys (call ids) have one: it is kept in place,
/// with no allocation.
enum Positions {
    /// None (`None`) or one position.
    Inline(Option<usize>),
    Many(Vec<usize>),
}

impl Positions {
    fn as_slice(&self) -> &[usize] {
        match self {
            Self::Inline(one) => one.as_slice(),
            Self::Many(all) => all,
        }
    }

    fn push(&mut self, pos: usize) {
        match self {
            Self::Inline(None) => *self = Self::Inline(Some(pos)),
            Self::Inline(Some(first)) => {
                // Room for a few more: a tool name called twice in a trace is mostly called
                // again (growing from two moved the list at the third).
                let mut all = Vec::with_capacity(4);
                all.extend([*first, pos]);
                *self = Self::Many(all);
            }
            Self::Many(all) => all.push(pos),
        }
    }

    fn remove(&mut self, i: usize) {
        match self {
            Self::Inline(one) => {
                if i == 0 {
                    *one = None;
                }
            }
            Self::Many(all) => {
                all.remove(i);
            }
        }
    }
}

/// Keys (call ids, tool names) -> positions, as Python's `dict` keys them; an unhashable key
/// is never stored and never found (`_index_at`, `_index_of`). While every key met is an
/// exact UTF-8 `str` (call ids and tool names are), the keys are their texts in a Rust map,
/// borrowed from the `str`s the index holds: an exact `str` equals another exactly when
/// their texts do, so this finds what the dict would, without a Python dict made, probed and
/// filled (and an `int` made and read back) per key, nor a text copied; `None` (a step
/// without a tool name), equal to itself only, has a slot of its own. The first key of
/// another kind (an `int` id, a `str` subclass with an `__eq__` of its own) moves every key
/// into a Python dict, which keys everything from then on.
struct Index<'py> {
    py: Python<'py>,
    texts: FastMap<HeldText, usize>,
    /// The `str`s whose texts key `texts`, with their slots.
    held: Vec<(Bound<'py, PyAny>, usize)>,
    /// The slot of `None`, while the texts key the index.
    none: Option<usize>,
    /// Every key, once one that is no exact UTF-8 `str` was met.
    map: Option<Bound<'py, PyDict>>,
    lists: Vec<Positions>,
}

impl<'py> Index<'py> {
    fn new(py: Python<'py>) -> Self {
        Self::with_capacity(py, 0)
    }

    /// An index with room for `keys` keys: the executors' indexes are sized by the trace's
    /// tool steps, so filling them grows no map or list (a growth rehashed the texts and
    /// moved the lists, several times a trace).
    fn with_capacity(py: Python<'py>, keys: usize) -> Self {
        Self {
            py,
            texts: FastMap::with_capacity(keys),
            held: Vec::with_capacity(keys),
            none: None,
            map: None,
            lists: Vec::with_capacity(keys),
        }
    }

    /// The text of `key` when the texts still key the index and it is an exact UTF-8 `str`.
    fn text_of<'k>(&self, key: &'k Bound<'py, PyAny>) -> Option<&'k str> {
        if self.map.is_some() || !key.is_exact_instance_of::<PyString>() {
            return None;
        }
        key.cast::<PyString>().ok()?.to_str().ok()
    }

    /// The Python dict keying the index (made, with the held `str`s moved in, on first use).
    fn dict(&mut self) -> PyResult<Bound<'py, PyDict>> {
        if let Some(map) = &self.map {
            return Ok(map.clone());
        }
        let map = PyDict::new(self.py);
        self.texts.clear();
        for (key, slot) in self.held.drain(..) {
            map.set_item(key, slot)?;
        }
        if let Some(slot) = self.none.take() {
            map.set_item(self.py.None(), slot)?;
        }
        self.map = Some(map.clone());
        Ok(map)
    }

    /// The slot of `key`'s positions, `None` when it has none or is unhashable.
    fn slot(&mut self, key: &Bound<'py, PyAny>) -> PyResult<Option<usize>> {
        if let Some(text) = self.text_of(key) {
            return Ok(self.texts.get(text).copied());
        }
        if self.map.is_none() && key.is_none() {
            return Ok(self.none);
        }
        match self.dict()?.get_item(key) {
            Ok(Some(slot)) => Ok(Some(slot.extract()?)),
            Ok(None) => Ok(None),
            Err(e) if e.is_instance_of::<PyTypeError>(key.py()) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// `_index_at`: `pos` appended to `key`'s positions.
    fn at(&mut self, key: &Bound<'py, PyAny>, pos: usize) -> PyResult<()> {
        if let Some(text) = self.text_of(key) {
            match self.texts.get(text) {
                Some(&slot) => self.lists[slot].push(pos),
                None => {
                    let slot = self.lists.len();
                    // The key is held with the map entry that borrows its text.
                    self.held.push((key.clone(), slot));
                    self.texts.insert(HeldText(text), slot);
                    self.lists.push(Positions::Inline(Some(pos)));
                }
            }
            return Ok(());
        }
        if self.map.is_none() && key.is_none() {
            match self.none {
                Some(slot) => self.lists[slot].push(pos),
                None => {
                    self.none = Some(self.lists.len());
                    self.lists.push(Positions::Inline(Some(pos)));
                }
            }
            return Ok(());
        }
        if let Some(slot) = self.slot(key)? {
            self.lists[slot].push(pos);
            return Ok(());
        }
        match self.dict()?.set_item(key, self.lists.len()) {
            Ok(()) => {
                self.lists.push(Positions::Inline(Some(pos)));
                Ok(())
            }
            Err(e) if e.is_instance_of::<PyTypeError>(key.py()) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

/// Which index a list of positions is in (the key of a scope's rejections).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Which {
    ById,
    ByName,
    ByNameWithId,
    NamelessHandoffs,
}

type ListRef = (Which, usize);

/// What a step must be for a search (`accept`).
enum Accept {
    Any,
    /// Not ended before a model call started (`_still_running`).
    Running(i128),
    /// Its id no model call of the drafts asked for (`with_own_id`).
    OwnId,
    /// Of another scope, not synthesized, not ended before the start (`_match_outside_scope`).
    ElsewhereRunning(usize, i128),
    /// Of another scope, with a span that started at or after the start, not synthesized.
    ElsewhereAfter(usize, i128),
}

/// `_Executors`: the tool, retrieval and handoff steps of a list of drafts, indexed for
/// linking by call id, and (steps without a call id) by tool name, each in list order, plus
/// the handoffs that name no tool. Linking asks for the first unclaimed step after a
/// position with a given id or name; scanning every later step per requested call made a
/// run of 10,000 tool calls cost minutes. A claimed step never becomes unclaimed, and an
/// unclaimed step's id and name do not change while linking, so a claimed entry is dropped
/// from an index the first time a lookup meets it.
///
/// By name, a step is the call of the earliest model call before it that asked for that
/// tool and is still unanswered, never one past a later model call of the scope that asked
/// for the tool again (`asks`): that call's own request is the one it answers. Without the
/// bound, a step went to the first request of its name however far back (a call the
/// framework refused before running it took the next call's span: its arguments and its
/// failure lost).
///
/// `asks` and `by_name_with_id` serve a search by name only, which a request found by its
/// id never makes (most of a grade's: those two indexes were ~16 M of data-2000's ~35 M
/// spent making the executors): each is made at its first use, from what is left pending.
struct Executors<'py> {
    /// Positions -> draft numbers.
    steps: Vec<usize>,
    /// The model calls' (position, requests), not yet in `asks` ([`Linking::asks`]).
    askers: Vec<(usize, Requests)>,
    asks: Index<'py>,
    by_id: Index<'py>,
    by_name: Index<'py>,
    /// The (position, tool name) of the steps with a call id, not yet in `by_name_with_id`
    /// ([`Executors::by_name_with_id`]).
    named_with_id: Vec<(usize, Bound<'py, PyAny>)>,
    by_name_with_id: Index<'py>,
    nameless_handoffs: Positions,
    /// The call ids the drafts' model calls asked for, read at the first search that needs
    /// them (`with_own_id`).
    asked: Option<Bound<'py, PySet>>,
    rejected: FastMap<(ListRef, usize), (isize, i128)>,
}

impl<'py> Executors<'py> {
    /// `by_name_with_id`: the tool names of the steps with a call id -> their positions,
    /// made at the first search by name of a request without an id (`with_own_id`).
    fn by_name_with_id(&mut self) -> PyResult<&mut Index<'py>> {
        if !self.named_with_id.is_empty() {
            let mut index = Index::with_capacity(self.by_id.py, self.named_with_id.len());
            for (pos, tool) in self.named_with_id.drain(..) {
                index.at(&tool, pos)?;
            }
            self.by_name_with_id = index;
        }
        Ok(&mut self.by_name_with_id)
    }
}

/// The state of one `link` call.
struct Linking<'a, 'py> {
    py: Python<'py>,
    linker: &'a Linker,
    results: Bound<'py, PyAny>,
    drafts: Vec<Info<'py>>,
    /// Each draft's requests, read once (`_requested_calls`: outputs do not change here):
    /// its place in `requests`, which holds every model call's read, one after another (one
    /// list for the trace, rather than a list per model call copied to each reader).
    requested: Vec<Option<Requests>>,
    requests: Vec<Bound<'py, PyAny>>,
    /// `_Answers` per scope number.
    answers: Vec<Answers<'py>>,
    /// `_responses` of a draft, per scope number whose memo read it (`_Answers.responses`).
    responses: FastMap<(usize, usize), Bound<'py, PyAny>>,
    /// `_Beyond`: draft (by identity) -> its last position, and call id -> the positions of
    /// the model calls answering it, made at the first search.
    beyond: Option<(FastMap<usize, usize>, Index<'py>)>,
}

/// Call id -> the slot of its answers: (member position, response part), in member order.
type Answered<'py> = (Bound<'py, PyDict>, Vec<Vec<(usize, Bound<'py, PyAny>)>>);

/// `_CallsAbove`: agent drafts by span id, and the tool and retrieval steps by scope number.
type Above<'py> = (Bound<'py, PyDict>, FastMap<usize, Vec<usize>>);

/// `_Answers`: what linking reads of a scope's model calls for every call they requested,
/// read once per model call and kept for the scope's linking: each request's position among
/// its model call's requests, the results a later call's input answers them with, by call
/// id and by position, and the turns each input shows. A trace controls how many calls one
/// model call requests: read again per request, one output of 8,000 tool calls took 23 s to
/// link (quadratic). Linking changes no model call's messages, so what is read stays true
/// while the scope is linked; what `_responses` read is kept per scope memo, as it was.
struct Answers<'py> {
    members: Vec<usize>,
    positions: FastMap<usize, FastMap<usize, usize>>,
    by_position: FastMap<usize, Option<Vec<Bound<'py, PyAny>>>>,
    answered: Option<Answered<'py>>,
    turns: Option<(Vec<usize>, FirstAbove)>,
}

/// `_ROLELESS`: the turns counted for an input holding a message without a role.
const ROLELESS: i64 = i64::MAX;

/// `_FirstAbove`: the first of a list of counts, at or after an index, that exceeds a bound,
/// in logarithmic time (a segment tree of maxima).
struct FirstAbove {
    size: usize,
    tree: Vec<i64>,
}

impl FirstAbove {
    fn new(counts: &[i64]) -> Self {
        let mut size = 1;
        while size < counts.len() {
            size *= 2;
        }
        let mut tree = vec![-1; 2 * size];
        tree[size..size + counts.len()].copy_from_slice(counts);
        for i in (1..size).rev() {
            tree[i] = tree[2 * i].max(tree[2 * i + 1]);
        }
        Self { size, tree }
    }

    fn find(&self, start: usize, bound: i64) -> Option<usize> {
        let (size, tree) = (self.size, &self.tree);
        if start >= size {
            return None;
        }
        let mut i = start + size;
        while tree[i] <= bound {
            while i & 1 == 1 {
                if i == 1 {
                    return None;
                }
                i >>= 1;
            }
            i += 1;
        }
        while i < size {
            i = if tree[2 * i] > bound {
                2 * i
            } else {
                2 * i + 1
            };
        }
        Some(i - size)
    }
}

/// A model call's requests: `Linking::requests[from..to]`.
#[derive(Clone, Copy)]
struct Requests {
    from: usize,
    to: usize,
}

impl Requests {
    fn range(self) -> std::ops::Range<usize> {
        self.from..self.to
    }

    fn is_empty(self) -> bool {
        self.from == self.to
    }

    fn len(self) -> usize {
        self.to - self.from
    }
}

/// `Later`: the steps of a scope after a position.
#[derive(Clone, Copy)]
struct Later {
    scope: usize,
    start: usize,
}

impl<'a, 'py> Linking<'a, 'py> {
    /// Draft `d`'s requests, read at the first ask.
    fn requested(&mut self, d: usize) -> PyResult<Requests> {
        if let Some(found) = self.requested[d] {
            return Ok(found);
        }
        let from = self.requests.len();
        push_requested(&self.drafts[d].obj, &mut self.requests)?;
        let found = Requests {
            from,
            to: self.requests.len(),
        };
        self.requested[d] = Some(found);
        Ok(found)
    }

    /// The requests `of` reads.
    fn requests(&self, of: Requests) -> &[Bound<'py, PyAny>] {
        &self.requests[of.range()]
    }

    fn fields(&self, d: usize) -> PyResult<Held<'_, 'py>> {
        draft_held(&self.drafts[d].obj, FIELDS, intern!(self.py, "fields"))
    }

    /// `draft.rule.<name>` of draft `d`, `name` being the rule's slot `slot` ([`RULE_SLOTS`]).
    fn rule_flag(&self, d: usize, slot: usize, name: &Bound<'py, PyString>) -> PyResult<bool> {
        let rule = draft_held(&self.drafts[d].obj, RULE, intern!(self.py, "rule"))?;
        RULE_SLOTS.get(&rule, slot, name)?.is_truthy()
    }

    fn claim_flag(&mut self, d: usize) -> PyResult<()> {
        self.drafts[d].claimed = true;
        draft_set(
            &self.drafts[d].obj,
            CLAIMED,
            intern!(self.py, "claimed"),
            PyBool::new(self.py, true).as_any(),
        )
    }

    // ---- `_Executors` ----------------------------------------------------------------

    fn executors(
        &self,
        steps: Vec<usize>,
        asked: &[(usize, usize, Requests)],
    ) -> PyResult<Executors<'py>> {
        let py = self.py;
        // The tool steps' ids and names first, so each index is made with room for its keys.
        let mut tools = Vec::new();
        for (pos, &d) in steps.iter().enumerate() {
            let info = &self.drafts[d];
            if !info.kind.toolish() {
                continue;
            }
            let fields = self.fields(d)?;
            let call_id = get(&fields, intern!(py, "call_id"))?;
            let tool = get(&fields, intern!(py, "tool"))?;
            let with_id = call_id.is_truthy()?;
            tools.push((pos, info.kind, call_id, tool, with_id));
        }
        let with_id = tools.iter().filter(|tool| tool.4).count();
        let mut ex = Executors {
            steps: Vec::new(),
            askers: asked
                .iter()
                .map(|&(pos, _, requests)| (pos, requests))
                .collect(),
            asks: Index::new(py),
            by_id: Index::with_capacity(py, with_id),
            by_name: Index::with_capacity(py, tools.len() - with_id),
            named_with_id: Vec::with_capacity(with_id),
            by_name_with_id: Index::new(py),
            nameless_handoffs: Positions::Many(Vec::new()),
            asked: None,
            rejected: FastMap::new(),
        };
        for (pos, kind, call_id, tool, with_id) in tools {
            if kind == Kind::Handoff && !tool.is_truthy()? {
                ex.nameless_handoffs.push(pos);
            }
            if with_id {
                ex.by_id.at(&call_id, pos)?;
                ex.named_with_id.push((pos, tool));
            } else {
                ex.by_name.at(&tool, pos)?;
            }
        }
        ex.steps = steps;
        Ok(ex)
    }

    /// `ex.asks`: each tool name the model calls asked for -> their positions (once a
    /// position), made at the first search by name.
    fn asks<'e>(&self, ex: &'e mut Executors<'py>) -> PyResult<&'e mut Index<'py>> {
        let py = self.py;
        for (pos, requests) in std::mem::take(&mut ex.askers) {
            for req in self.requests(requests) {
                let name = get(req, intern!(py, "name"))?;
                let last = ex
                    .asks
                    .slot(&name)?
                    .and_then(|s| ex.asks.lists[s].as_slice().last().copied());
                if last != Some(pos) {
                    ex.asks.at(&name, pos)?;
                }
            }
        }
        Ok(&mut ex.asks)
    }

    /// Whether `accept` takes draft `d`.
    fn accepts(&self, ex: &mut Executors<'py>, d: usize, accept: &Accept) -> PyResult<bool> {
        let info = &self.drafts[d];
        Ok(match *accept {
            Accept::Any => true,
            Accept::Running(started) => info.times.is_some_and(|(_, end)| end >= started),
            Accept::ElsewhereRunning(scope, started) => {
                info.scope != scope
                    && !info.synthesized
                    && info.times.is_some_and(|(_, end)| end >= started)
            }
            Accept::ElsewhereAfter(scope, start) => {
                info.scope != scope
                    && info.times.is_some_and(|(s, _)| s >= start)
                    && !info.synthesized
            }
            Accept::OwnId => {
                if ex.asked.is_none() {
                    ex.asked = Some(self.asked_ids(&ex.steps)?);
                }
                let call_id = self
                    .fields(d)?
                    .get_item(intern!(self.py, "call_id"))?
                    .str()?;
                let asked = ex.asked.as_ref().map(|a| a.contains(&call_id));
                !asked.transpose()?.unwrap_or(false)
            }
        })
    }

    /// The ids (as `str`) of the calls the model calls among `steps` asked for.
    fn asked_ids(&self, steps: &[usize]) -> PyResult<Bound<'py, PySet>> {
        let py = self.py;
        let set = PySet::empty(py)?;
        for &d in steps {
            if self.drafts[d].kind != Kind::Generation {
                continue;
            }
            let read;
            let calls = match self.requested[d] {
                Some(calls) => self.requests(calls),
                None => {
                    read = requested_of(&self.drafts[d].obj)?;
                    &read
                }
            };
            for req in calls {
                if get(req, intern!(py, "id"))?.is_truthy()? {
                    set.add(req.get_item(intern!(py, "id"))?.str()?)?;
                }
            }
        }
        Ok(set)
    }

    fn list<'e>(ex: &'e mut Executors<'py>, list: ListRef) -> &'e mut Positions {
        let (which, slot) = list;
        match which {
            Which::ById => &mut ex.by_id.lists[slot],
            Which::ByName => &mut ex.by_name.lists[slot],
            Which::ByNameWithId => &mut ex.by_name_with_id.lists[slot],
            Which::NamelessHandoffs => &mut ex.nameless_handoffs,
        }
    }

    /// `_Executors.first`: the first unclaimed step listed after position `after` (and not
    /// after `before`) that `accept` takes; claimed entries met are dropped.
    fn first(
        &self,
        ex: &mut Executors<'py>,
        list: Option<ListRef>,
        after: isize,
        accept: &Accept,
        before: Option<usize>,
    ) -> PyResult<Option<usize>> {
        let Some(list) = list else {
            return Ok(None);
        };
        let mut i = bisect_right(Self::list(ex, list).as_slice(), after);
        loop {
            let Some(&pos) = Self::list(ex, list).as_slice().get(i) else {
                return Ok(None);
            };
            if before.is_some_and(|b| pos > b) {
                return Ok(None);
            }
            let d = ex.steps[pos];
            if self.drafts[d].claimed {
                Self::list(ex, list).remove(i);
                continue;
            }
            if self.accepts(ex, d, accept)? {
                return Ok(Some(d));
            }
            i += 1;
        }
    }

    /// `_Executors.first_for`: `first(list, -1, accept)` for a model call of scope `scope`
    /// that started at `started`, where `accept` rejects a step for the scope (a step of
    /// it, or synthesized), for having started or ended before `started`, or claimed: a step
    /// rejected for one model call of a scope stays rejected for the scope's later ones, so
    /// their requests resume after the steps passed over. Walking them again per request
    /// made linking quadratic in what a trace decides: 8,000 requests of one model call, or
    /// 4,000 model calls asking one call each, that no step of their scope ran cost 8 s and
    /// 11 s, growing with their square.
    fn first_for(
        &self,
        ex: &mut Executors<'py>,
        scope: usize,
        started: i128,
        list: Option<ListRef>,
        accept: &Accept,
    ) -> PyResult<Option<usize>> {
        let Some(list) = list else {
            return Ok(None);
        };
        let key = (list, scope);
        let (mut passed, since) = ex.rejected.get(&key).copied().unwrap_or((-1, started));
        if since > started {
            passed = -1;
        }
        let mut i = bisect_right(Self::list(ex, list).as_slice(), passed);
        loop {
            let Some(&pos) = Self::list(ex, list).as_slice().get(i) else {
                return Ok(None);
            };
            let d = ex.steps[pos];
            if self.drafts[d].claimed {
                Self::list(ex, list).remove(i);
                continue;
            }
            if self.accepts(ex, d, accept)? {
                return Ok(Some(d));
            }
            ex.rejected.insert(key, (pos as isize, started));
            i += 1;
        }
    }

    /// `_Executors.match`: the step of this scope after `after` that executed `req`.
    fn find(
        &self,
        ex: &mut Executors<'py>,
        req: &Bound<'py, PyAny>,
        after: usize,
        started: Option<i128>,
    ) -> PyResult<Option<usize>> {
        let py = self.py;
        let after_i = after as isize;
        let call_id = get(req, intern!(py, "id"))?;
        let has_id = call_id.is_truthy()?;
        if has_id {
            let list = ex.by_id.slot(&call_id)?.map(|s| (Which::ById, s));
            let mut found = self.first(ex, list, after_i, &Accept::Any, None)?;
            if found.is_none() {
                if let Some(started) = started {
                    let list = ex.by_id.slot(&call_id)?.map(|s| (Which::ById, s));
                    found = self.first(ex, list, -1, &Accept::Running(started), None)?;
                }
            }
            if found.is_some() {
                return Ok(found);
            }
        }
        let name = get(req, intern!(py, "name"))?;
        let asks = self.asks(ex)?;
        let before = match asks.slot(&name)? {
            Some(s) => {
                let asks = asks.lists[s].as_slice();
                asks.get(bisect_right(asks, after_i)).copied()
            }
            None => None,
        };
        let list = ex.by_name.slot(&name)?.map(|s| (Which::ByName, s));
        if let Some(found) = self.first(ex, list, after_i, &Accept::Any, before)? {
            return Ok(Some(found));
        }
        if !has_id {
            let list = ex
                .by_name_with_id()?
                .slot(&name)?
                .map(|s| (Which::ByNameWithId, s));
            if let Some(found) = self.first(ex, list, after_i, &Accept::OwnId, before)? {
                return Ok(Some(found));
            }
        }
        // A handoff step carries no tool name in some instrumentations (openai-agents'
        // agent_handoff span): a requested call left over when a handoff follows is that
        // handoff.
        let list = Some((Which::NamelessHandoffs, 0));
        let found = self.first(ex, list, after_i, &Accept::Any, None)?;
        if let Some(d) = found {
            self.fields(d)?.set_item(intern!(py, "tool"), name)?;
        }
        Ok(found)
    }

    /// `_match_outside_scope`: for a request no step of its scope answered, an unclaimed
    /// step of another scope that started after the model call, by id, else by name.
    fn outside(
        &self,
        ex: &mut Executors<'py>,
        req: &Bound<'py, PyAny>,
        gen: usize,
    ) -> PyResult<Option<usize>> {
        let py = self.py;
        let Some((start, _)) = self.drafts[gen].times else {
            return Err(PyAssertionError::new_err(()));
        };
        let scope = self.drafts[gen].scope;
        let call_id = get(req, intern!(py, "id"))?;
        if call_id.is_truthy()? {
            let list = ex.by_id.slot(&call_id)?.map(|s| (Which::ById, s));
            let accept = Accept::ElsewhereRunning(scope, start);
            if let Some(found) = self.first_for(ex, scope, start, list, &accept)? {
                return Ok(Some(found));
            }
        }
        let name = get(req, intern!(py, "name"))?;
        let list = ex.by_name.slot(&name)?.map(|s| (Which::ByName, s));
        self.first_for(
            ex,
            scope,
            start,
            list,
            &Accept::ElsewhereAfter(scope, start),
        )
    }

    // ---- `_claim` and results --------------------------------------------------------

    /// `_claim`: `target` executed the requested call `req` of model call `gen`.
    fn claim(&mut self, target: usize, req: &Bound<'py, PyAny>, gen: usize) -> PyResult<()> {
        let py = self.py;
        self.claim_flag(target)?;
        let obj = self.drafts[target].obj.clone();
        let fields = draft_held(&obj, FIELDS, intern!(py, "fields"))?;
        // Each id is read once: nothing below changes either before its last test (the
        // first branch writes the draft's attributes, not its fields or the request).
        let req_id = get(req, intern!(py, "id"))?.is_truthy()?;
        let own_id = get(&fields, intern!(py, "call_id"))?.is_truthy()?;
        if !req_id && !own_id {
            let span = draft_held(&self.drafts[gen].obj, SPAN, intern!(py, "span"))?;
            if !span.is_none() {
                draft_held(&obj, ATTRIBUTES, intern!(py, "attributes"))?.set_item(
                    intern!(py, "requested_in"),
                    span_held(&span, span::SPAN_ID, intern!(py, "span_id"))?,
                )?;
            }
        }
        if req_id && !own_id {
            let id = req.get_item(intern!(py, "id"))?.str()?;
            fields.set_item(intern!(py, "call_id"), id)?;
        } else if !req_id && own_id {
            let id = fields.get_item(intern!(py, "call_id"))?.str()?;
            req.set_item(intern!(py, "id"), id)?;
        }
        let arguments = intern!(py, "arguments");
        if req.contains(arguments)?
            && !fields.contains(arguments)?
            && !draft_attr(&obj, REDACTED, intern!(py, "redacted"))?.contains(arguments)?
        {
            fields.set_item(arguments, req.get_item(arguments)?)?;
        }
        Ok(())
    }

    /// `_Answers.responses`: `_responses(d)`, read once per scope memo.
    fn responses(&mut self, scope: usize, d: usize) -> PyResult<Bound<'py, PyAny>> {
        if let Some(found) = self.responses.get(&(scope, d)) {
            return Ok(found.clone());
        }
        let found = self
            .linker
            .responses
            .bind(self.py)
            .call1((&self.drafts[d].obj,))?;
        self.responses.insert((scope, d), found.clone());
        Ok(found)
    }

    /// `_Answers.by_id`: the response to `call_id` in the input of the first model call of
    /// `later` whose input answers it.
    fn by_id(
        &mut self,
        call_id: &Bound<'py, PyAny>,
        later: Later,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let scope = later.scope;
        if self.answers[scope].answered.is_none() {
            let map = PyDict::new(self.py);
            let mut lists: Vec<Vec<(usize, Bound<'py, PyAny>)>> = Vec::new();
            let members = self.answers[scope].members.clone();
            for (pos, &d) in members.iter().enumerate() {
                if self.drafts[d].kind != Kind::Generation {
                    continue;
                }
                let responses = self.responses(scope, d)?;
                for item in responses
                    .call_method0(intern!(self.py, "items"))?
                    .try_iter()?
                {
                    let (cid, part): (Bound<'py, PyAny>, Bound<'py, PyAny>) = item?.extract()?;
                    match map.get_item(&cid)? {
                        Some(slot) => lists[slot.extract::<usize>()?].push((pos, part)),
                        None => {
                            map.set_item(&cid, lists.len())?;
                            lists.push(vec![(pos, part)]);
                        }
                    }
                }
            }
            self.answers[scope].answered = Some((map, lists));
        }
        let Some((map, lists)) = &self.answers[scope].answered else {
            return Ok(None);
        };
        let Some(slot) = map.get_item(call_id)? else {
            return Ok(None);
        };
        let found = &lists[slot.extract::<usize>()?];
        let i = found.partition_point(|(pos, _)| *pos < later.start);
        Ok(found.get(i).map(|(_, part)| part.clone()))
    }

    /// `_Beyond.response` (through `_response_beyond`): the response to `call_id` in the
    /// input of the first model call of another scope than `gen`'s after it that answers it.
    /// Where a run paused for approval resumes as a new agent run (pydantic-ai's deferred
    /// tool results, LangGraph's resumed interrupt, the OpenAI Agents SDK's resumed
    /// `RunState`), the result the model was handed for a call of the first run is in the
    /// second run's input; only a call id ties one to the other. The answers are indexed by
    /// call id once: walking every later step per call made one model call's 8,000 requests
    /// cost 2 s, growing with their square.
    fn beyond(
        &mut self,
        call_id: &Bound<'py, PyAny>,
        gen: usize,
        scope: usize,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        if !call_id.is_truthy()? {
            return Ok(None);
        }
        let call_id = call_id.str()?.into_any();
        if self.beyond.is_none() {
            let mut position = FastMap::new();
            for (i, info) in self.drafts.iter().enumerate() {
                position.insert(info.obj.as_ptr() as usize, i);
            }
            let mut answered = Index::new(self.py);
            for d in 0..self.drafts.len() {
                if self.drafts[d].kind != Kind::Generation {
                    continue;
                }
                let responses = self.responses(scope, d)?;
                for cid in responses.try_iter()? {
                    answered.at(&cid?, d)?;
                }
            }
            self.beyond = Some((position, answered));
        }
        let Some((position, answered)) = &mut self.beyond else {
            return Ok(None);
        };
        let Some(&start) = position.get(&(self.drafts[gen].obj.as_ptr() as usize)) else {
            return Ok(None);
        };
        let Some(slot) = answered.slot(&call_id)? else {
            return Ok(None);
        };
        let found = answered.lists[slot].as_slice().to_vec();
        let from = bisect_right(&found, start as isize);
        for &nxt in &found[from..] {
            if self.drafts[nxt].scope != self.drafts[gen].scope {
                let responses = self.responses(scope, nxt)?;
                return Ok(
                    Some(get(&responses, call_id.cast::<PyString>()?)?).filter(|r| !r.is_none())
                );
            }
        }
        Ok(None)
    }

    /// `_Answers.carrying_on`: the first model call at or after member position `start`
    /// whose input records more than `shown` assistant turns, or a message without a role.
    /// The turns are counted once per scope: counting them again per model call made 4,000
    /// model calls whose inputs never carry the conversation on cost 11 s to link.
    fn carrying_on(&mut self, scope: usize, start: usize, shown: i64) -> PyResult<Option<usize>> {
        let py = self.py;
        if self.answers[scope].turns.is_none() {
            let mut positions = Vec::new();
            let mut counts = Vec::new();
            for (pos, &d) in self.answers[scope].members.iter().enumerate() {
                if self.drafts[d].kind != Kind::Generation {
                    continue;
                }
                let history = field_items(&*self.fields(d)?, intern!(py, "input_messages"))?;
                positions.push(pos);
                let mut roleless = false;
                for m in &history {
                    if !has_role(m)? {
                        roleless = true;
                        break;
                    }
                }
                counts.push(if roleless {
                    ROLELESS
                } else {
                    let mut n = 0;
                    for m in &history {
                        if eq_text(&get(m, intern!(py, "role"))?, intern!(py, "assistant"))? {
                            n += 1;
                        }
                    }
                    n
                });
            }
            let first = FirstAbove::new(&counts);
            self.answers[scope].turns = Some((positions, first));
        }
        let answers = &self.answers[scope];
        let Some((positions, first)) = &answers.turns else {
            return Ok(None);
        };
        let found = first.find(positions.partition_point(|&p| p < start), shown);
        Ok(found.map(|i| answers.members[positions[i]]))
    }

    /// `_answers_by_position`: the results of `gen`'s calls, in the order of its requests,
    /// for calls recorded without any id (the Mistral OpenInference instrumentation keeps
    /// neither call ids nor `tool_call_id`): the next model call that carries the
    /// conversation on holds `gen`'s answer as the assistant message after the ones `gen`
    /// was shown, and chat APIs require the results right after it, in the order of the
    /// calls. Linked only when that message asks for the same tools in the same order, or
    /// records no call at all (AgentOps) and exactly as many results follow it as `gen`
    /// asked for. A message recorded without a role could be any turn: nothing is linked by
    /// position across it. `None` when none can be linked.
    fn answers_by_position(
        &mut self,
        gen: usize,
        later: Later,
    ) -> PyResult<Option<Vec<Bound<'py, PyAny>>>> {
        let py = self.py;
        let role = intern!(py, "role");
        let assistant = intern!(py, "assistant");
        let asked = self.requested(gen)?;
        let mine = field_items(&*self.fields(gen)?, intern!(py, "input_messages"))?;
        for m in &mine {
            if !get(m, role)?.is_truthy()? {
                return Ok(None);
            }
        }
        let mut shown: i64 = 0;
        for m in &mine {
            if eq_text(&get(m, role)?, assistant)? {
                shown += 1;
            }
        }
        let Some(nxt) = self.carrying_on(later.scope, later.start, shown)? else {
            return Ok(None);
        };
        let history = field_items(&*self.fields(nxt)?, intern!(py, "input_messages"))?;
        for m in &history {
            if !has_role(m)? {
                return Ok(None);
            }
        }
        let mut turns = Vec::new();
        for (i, m) in history.iter().enumerate() {
            if eq_text(&get(m, role)?, assistant)? {
                turns.push(i);
            }
        }
        let Some(&start) = usize::try_from(shown).ok().and_then(|s| turns.get(s)) else {
            return Err(pyo3::exceptions::PyIndexError::new_err(
                "list index out of range",
            ));
        };
        let mut calls = Vec::new();
        for p in parts(&history[start])? {
            if eq_text(&get(&p, intern!(py, "type"))?, intern!(py, "tool_call"))? {
                calls.push(p);
            }
        }
        if !calls.is_empty() {
            let name = intern!(py, "name");
            let theirs = PyList::empty(py);
            for c in &calls {
                theirs.append(get(c, name)?)?;
            }
            let ours = PyList::empty(py);
            for c in self.requests(asked) {
                ours.append(get(c, name)?)?;
            }
            if !PyAnyMethods::eq(theirs.as_any(), &ours)? {
                return Ok(None);
            }
        }
        let mut answers = Vec::new();
        for msg in &history[start + 1..] {
            if eq_text(&get(msg, role)?, assistant)? {
                break;
            }
            for p in parts(msg)? {
                if eq_text(
                    &get(&p, intern!(py, "type"))?,
                    intern!(py, "tool_call_response"),
                )? {
                    answers.push(p);
                }
            }
        }
        if calls.is_empty() && answers.len() != asked.len() {
            return Ok(None); // the turn's calls were not recorded: only a full set of results fits
        }
        Ok(Some(answers))
    }

    /// `_response_by_position`: `gen`'s request `req`'s result by its position, or `None`.
    fn by_position(
        &mut self,
        gen: usize,
        req: &Bound<'py, PyAny>,
        later: Later,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let scope = later.scope;
        if !self.answers[scope].positions.contains_key(&gen) {
            let mut positions = FastMap::new();
            let asked = self.requested(gen)?;
            for (i, call) in self.requests(asked).iter().enumerate() {
                positions.entry(call.as_ptr() as usize).or_insert(i);
            }
            self.answers[scope].positions.insert(gen, positions);
        }
        let Some(&index) = self.answers[scope].positions[&gen].get(&(req.as_ptr() as usize)) else {
            return Ok(None);
        };
        if !self.answers[scope].by_position.contains_key(&gen) {
            let found = self.answers_by_position(gen, later)?;
            self.answers[scope].by_position.insert(gen, found);
        }
        let Some(Some(answers)) = self.answers[scope].by_position.get(&gen) else {
            return Ok(None);
        };
        let Some(answer) = answers.get(index).cloned() else {
            return Ok(None);
        };
        if get(&answer, intern!(self.py, "id"))?.is_truthy()? {
            return Ok(None);
        }
        Ok(Some(answer))
    }

    /// The response the model was handed for `req` (by its id, in this scope's later input,
    /// else another scope's after `gen`), or, for a request without an id (`by_position`,
    /// also after an id that found none), by its position.
    fn response(
        &mut self,
        gen: usize,
        req: &Bound<'py, PyAny>,
        later: Later,
        position_after_id: bool,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = self.py;
        let call_id = get(req, intern!(py, "id"))?;
        if call_id.is_truthy()? {
            let key = req.get_item(intern!(py, "id"))?;
            let mut found = self.by_id(&key.str()?.into_any(), later)?;
            if found.is_none() {
                found = self.beyond(&key, gen, later.scope)?;
            }
            if found.is_some() || !position_after_id {
                return Ok(found);
            }
        }
        self.by_position(gen, req, later)
    }

    /// `_result_from_messages`: a tool step of a rule with `result_from_messages` whose span
    /// recorded no result takes the one the model was handed for the same call.
    fn result_from_messages(
        &mut self,
        target: usize,
        gen: usize,
        req: &Bound<'py, PyAny>,
        later: Later,
    ) -> PyResult<()> {
        let py = self.py;
        if !self.rule_flag(
            target,
            RESULT_FROM_MESSAGES,
            intern!(py, "result_from_messages"),
        )? {
            return Ok(());
        }
        let obj = self.drafts[target].obj.clone();
        let result = intern!(py, "result");
        if draft_held(&obj, FIELDS, intern!(py, "fields"))?.contains(result)?
            || draft_attr(&obj, REDACTED, intern!(py, "redacted"))?.contains(result)?
        {
            return Ok(());
        }
        if let Some(response) = self.response(gen, req, later, false)? {
            self.linker
                .take_result
                .bind(py)
                .call1((obj, response, &self.results))?;
        }
        Ok(())
    }

    // ---- the pass --------------------------------------------------------------------

    /// Whether a model call's finish reason says it asked for tools (`reasons`: the finish
    /// reasons that mean "tool calls").
    fn says_tool_calls(&self, gen: usize, reasons: &Bound<'py, PyAny>) -> PyResult<bool> {
        let fields = self.fields(gen)?;
        for r in field_items(&fields, intern!(self.py, "finish_reasons"))? {
            if reasons.contains(r)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether a model call records a finish reason (any).
    fn records_finish(&self, gen: usize) -> PyResult<bool> {
        let fields = self.fields(gen)?;
        Ok(!field_items(&fields, intern!(self.py, "finish_reasons"))?.is_empty())
    }

    /// Whether a model call's output is flagged as not captured (`redacted`: content off, a
    /// placeholder, a value cut): what it asked for was there and is hidden. An output merely
    /// absent is not enough: tracers that record no output for some calls (DSPy's ReAct
    /// through MLflow or Langtrace, LangGraph's structured-answer call) would lose runs
    /// whose calls they show.
    fn output_hidden(&self, gen: usize) -> PyResult<bool> {
        let py = self.py;
        let redacted = draft_attr(&self.drafts[gen].obj, REDACTED, intern!(py, "redacted"))?;
        redacted.contains(intern!(py, "output_messages"))
    }

    /// `_hides_tool_calls`: whether a model call that shows no tool call may have asked for
    /// some. `tools_seen`: its scope has a tool step; `calls_shown`: a model call of its
    /// scope shows a tool request (not one read from its reply text: such a read shows only
    /// that reply's requests) or a finish reason asking for tools.
    ///
    /// Without either, a model call the loop calls again right after may have asked for a
    /// tool in a way nothing reads: its output was not captured, or its reply text held the
    /// request (Langroid's default tool mode writes `{"request": "<tool>", ...}` in the text
    /// and hands the result back as a user message; a ReAct prompt's `Action:` lines): the
    /// placeholder makes the checks on tool calls missing evidence, never a run shown to
    /// call no tool. Where the scope shows its calls, a captured output shows this call's.
    fn hides_tool_calls(
        &self,
        gen: usize,
        later: Later,
        reasons: &Bound<'py, PyAny>,
        tools_seen: bool,
        calls_shown: bool,
        finish_unrecorded: bool,
    ) -> PyResult<bool> {
        let py = self.py;
        let fields = self.fields(gen)?;
        let said = self.says_tool_calls(gen, reasons)?;
        let members = &self.answers[later.scope].members;
        if !said {
            // Where the scope shows its tools, a model call's requests show in its output or
            // its finish reason, unless neither was recorded: content hid the output and the
            // tracer writes no finish reason (`finish_unrecorded`: no model call of the scope
            // has one). Then a model call the loop calls again right after, with no step
            // between, may have asked for a tool no step ran (one the agent does not have):
            // unnamed, never "no such call".
            if tools_seen && !(finish_unrecorded && self.output_hidden(gen)?) {
                return Ok(false);
            }
            // `_called_again_unseen`
            if calls_shown && get(&fields, intern!(py, "output_messages"))?.is_truthy()? {
                return Ok(false);
            }
            // A model call that failed returned nothing, so it asked for nothing: the call
            // right after it is a retry (Langroid retries a failed completion with the same
            // input), not the next turn of a loop whose requests content hid.
            let status = draft_attr(&self.drafts[gen].obj, STATUS, intern!(py, "status"))?;
            if status.eq(intern!(py, "error"))? {
                return Ok(false);
            }
            let Some((_, end)) = self.drafts[gen].times else {
                return Ok(false);
            };
            for &nxt in &members[later.start.min(members.len())..] {
                let info = &self.drafts[nxt];
                if info.kind == Kind::Other && info.times.is_some_and(|(s, _)| s < end) {
                    continue;
                }
                return Ok(
                    info.kind == Kind::Generation && info.times.is_some_and(|(s, _)| s >= end)
                );
            }
            return Ok(false);
        }
        for &d in &members[later.start.min(members.len())..] {
            let attributes =
                draft_held(&self.drafts[d].obj, ATTRIBUTES, intern!(py, "attributes"))?;
            if get(&attributes, intern!(py, "failed_attempt"))?.is_truthy()? {
                continue; // a failed try of this very call (`_stacked`), not the next model call
            }
            if self.drafts[d].kind == Kind::Generation {
                break;
            }
            if self.drafts[d].kind.toolish() {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// `_CallsAbove.take`: whether a tool step of an enclosing agent's scope, run within the
    /// sub-agent's run and not ended when `gen` started, ran the call `gen` asked for (then
    /// claimed). OpenLIT's Claude Agent SDK instrumentation writes a sub-agent's model calls
    /// under the sub-agent's `invoke_agent` span and its tool calls under the run's. Only a
    /// call that ran wholly within the sub-agent's run is taken (never the handoff that
    /// started it, nor a step around it), and never a step of a sibling agent's scope:
    /// agents running side by side would hide each other's calls. `above`: agent drafts by
    /// span id, and the scopes' tool steps.
    fn take_above(&mut self, above: &Above<'py>, gen: usize) -> PyResult<bool> {
        let py = self.py;
        let (agents, tools) = above;
        let scope_of = |info: &Info<'py>| draft_attr(&info.obj, SCOPE, intern!(py, "scope"));
        let Some(run) = agents.get_item(scope_of(&self.drafts[gen])?)? else {
            return Ok(false);
        };
        let run: usize = run.extract()?;
        let (Some((first, last)), Some((started, _))) =
            (self.drafts[run].times, self.drafts[gen].times)
        else {
            return Ok(false);
        };
        // The scopes walked: `run`'s, then the scope of the agent making it, and so on.
        let mut scope = Some((self.drafts[run].scope, scope_of(&self.drafts[run])?));
        let mut seen = FastSet::new();
        while let Some((number, text)) = scope {
            if !seen.insert(number) {
                break;
            }
            for &d in tools.get(&number).map(Vec::as_slice).unwrap_or(&[]) {
                let Some((start, end)) = self.drafts[d].times else {
                    continue;
                };
                if self.drafts[d].claimed || end < started {
                    continue;
                }
                if first <= start && end <= last {
                    self.claim_flag(d)?;
                    return Ok(true);
                }
            }
            scope = match agents.get_item(&text)? {
                Some(outer) => {
                    let outer = &self.drafts[outer.extract::<usize>()?];
                    Some((outer.scope, scope_of(outer)?))
                }
                None => None,
            };
        }
        Ok(false)
    }

    /// `_CallsAbove`'s indexes: agent drafts by span id (the last of one id), tool and
    /// retrieval steps (not synthesized, with a span) by scope.
    fn calls_above(&self) -> PyResult<Above<'py>> {
        let py = self.py;
        let agents = PyDict::new(py);
        let mut tools: FastMap<usize, Vec<usize>> = FastMap::new();
        for (d, info) in self.drafts.iter().enumerate() {
            let span = draft_held(&info.obj, SPAN, intern!(py, "span"))?;
            if info.kind == Kind::Agent && span.is_truthy()? {
                agents.set_item(span_held(&span, span::SPAN_ID, intern!(py, "span_id"))?, d)?;
            }
            if matches!(info.kind, Kind::ToolCall | Kind::Retrieval)
                && !info.synthesized
                && info.times.is_some()
            {
                tools.entry(info.scope).or_default().push(d);
            }
        }
        Ok((agents, tools))
    }
}

/// Tool-call linking for `map_trace`, with the Python functions it hands a found result
/// and a new step to.
#[pyclass(module = "otel_oracles._native", name = "Linker", frozen)]
pub struct Linker {
    /// `_responses(gen)`: a model call's input's tool results by call id.
    responses: Py<PyAny>,
    /// `take_result(target, response, results)`: a step takes a response as its result.
    take_result: Py<PyAny>,
    /// `synthesized(gen, req, response, results)`: the step of a call no span recorded.
    synthesized: Py<PyAny>,
    /// `hidden_call(gen)`: the placeholder of calls a model call made without showing them.
    hidden_call: Py<PyAny>,
}

#[pymethods]
impl Linker {
    #[new]
    fn new(
        responses: Bound<'_, PyAny>,
        take_result: Bound<'_, PyAny>,
        synthesized: Bound<'_, PyAny>,
        hidden_call: Bound<'_, PyAny>,
    ) -> Self {
        Self {
            responses: responses.unbind(),
            take_result: take_result.unbind(),
            synthesized: synthesized.unbind(),
            hidden_call: hidden_call.unbind(),
        }
    }

    /// Link the tool calls of a trace's `drafts` (in place): claims, call ids, arguments
    /// and results on the steps that ran them, synthesized and hidden calls appended to
    /// their model call's `follows`. `finish_reasons`: the finish reasons that mean "tool
    /// calls"; `results`: the tool-result rules (`ToolResultRules`), for the functions.
    fn link<'py>(
        &self,
        drafts: &Bound<'py, PyList>,
        finish_reasons: &Bound<'py, PyAny>,
        results: &Bound<'py, PyAny>,
    ) -> PyResult<()> {
        let py = drafts.py();
        let scope_numbers = PyDict::new(py);
        let mut infos = Vec::with_capacity(drafts.len());
        let mut scopes: Vec<Vec<usize>> = Vec::new();
        // The scope numbered last: a draft's scope mostly is its predecessor's, and an exact
        // `str` of the same text is the key the dict would find, so it is not looked up.
        let mut last: Option<(Bound<'py, PyAny>, usize)> = None;
        for (d, obj) in drafts.iter().enumerate() {
            let scope_text = draft_attr(&obj, SCOPE, intern!(py, "scope"))?;
            let scope = match &last {
                Some((text, n)) if same_text(text, &scope_text) => *n,
                _ => {
                    let n = match scope_numbers.get_item(&scope_text)? {
                        Some(n) => n.extract::<usize>()?,
                        None => {
                            scope_numbers.set_item(&scope_text, scopes.len())?;
                            scopes.push(Vec::new());
                            scopes.len() - 1
                        }
                    };
                    last = Some((scope_text.clone(), n));
                    n
                }
            };
            scopes[scope].push(d);
            let span = draft_held(&obj, SPAN, intern!(py, "span"))?;
            let times = if span.is_none() {
                None
            } else {
                Some((
                    nanos(&*span_held(&span, span::START_NS, intern!(py, "start_ns"))?)?,
                    nanos(&*span_held(&span, span::END_NS, intern!(py, "end_ns"))?)?,
                ))
            };
            infos.push(Info {
                kind: Kind::of(&draft_attr(&obj, KIND, intern!(py, "kind"))?),
                scope,
                times,
                synthesized: draft_held(&obj, SYNTHESIZED, intern!(py, "synthesized"))?
                    .is_truthy()?,
                claimed: draft_attr(&obj, CLAIMED, intern!(py, "claimed"))?.is_truthy()?,
                obj,
            });
        }
        let n = infos.len();
        let mut link = Linking {
            py,
            linker: self,
            results: results.clone(),
            drafts: infos,
            requested: vec![None; n],
            requests: Vec::new(),
            answers: Vec::new(),
            responses: FastMap::new(),
            beyond: None,
        };
        let mut unmatched: Vec<(usize, Bound<'py, PyAny>, Later)> = Vec::new();
        let mut above = None;
        for (scope, members) in scopes.iter().enumerate() {
            let tools_seen = members.iter().any(|&d| link.drafts[d].kind.toolish());
            let mut asked = Vec::new();
            for (pos, &gen) in members.iter().enumerate() {
                if link.drafts[gen].kind == Kind::Generation {
                    asked.push((pos, gen, link.requested(gen)?));
                }
            }
            // A request read from the reply text (`in_text`, `_text_requests.py`) shows only
            // that call's: another reply of the scope may hold one the parse was not sure of.
            let mut calls_shown = false;
            for req in asked.iter().flat_map(|&(_, _, r)| link.requests(r)) {
                if !get(req, intern!(py, "in_text"))?.is_truthy()? {
                    calls_shown = true;
                    break;
                }
            }
            for (_, gen, _) in &asked {
                if calls_shown {
                    break;
                }
                calls_shown = link.says_tool_calls(*gen, finish_reasons)?;
            }
            let mut finish_unrecorded = true;
            for (_, gen, _) in &asked {
                if link.records_finish(*gen)? {
                    finish_unrecorded = false;
                    break;
                }
            }
            let mut executors = link.executors(members.clone(), &asked)?;
            link.answers.push(Answers {
                members: members.clone(),
                positions: FastMap::new(),
                by_position: FastMap::new(),
                answered: None,
                turns: None,
            });
            for &(pos, gen, requests) in &asked {
                let synthesize = link.rule_flag(gen, SYNTHESIZE, intern!(py, "synthesize"))?;
                if requests.is_empty() && !synthesize {
                    continue;
                }
                let later = Later {
                    scope,
                    start: pos + 1,
                };
                let started = link.drafts[gen].times.map(|(s, _)| s);
                for at in requests.range() {
                    // Held apart from `requests`, which linking may read more into.
                    let req = link.requests[at].clone();
                    match link.find(&mut executors, &req, pos, started)? {
                        None => unmatched.push((gen, req, later)),
                        Some(target) => {
                            link.claim(target, &req, gen)?;
                            link.result_from_messages(target, gen, &req, later)?;
                        }
                    }
                }
                if requests.is_empty()
                    && synthesize
                    && link.hides_tool_calls(
                        gen,
                        later,
                        finish_reasons,
                        tools_seen,
                        calls_shown,
                        finish_unrecorded,
                    )?
                {
                    if above.is_none() {
                        above = Some(link.calls_above()?);
                    }
                    let taken = match &above {
                        Some(above) => link.take_above(above, gen)?,
                        None => false,
                    };
                    if !taken {
                        let obj = link.drafts[gen].obj.clone();
                        let hidden = self.hidden_call.bind(py).call1((&obj,))?;
                        draft_held(&obj, FOLLOWS, intern!(py, "follows"))?
                            .call_method1(intern!(py, "append"), (hidden,))?;
                    }
                }
            }
        }
        if unmatched.is_empty() {
            return Ok(());
        }
        let mut outside = link.executors((0..n).collect(), &[])?;
        for (gen, req, later) in unmatched {
            if let Some(target) = link.outside(&mut outside, &req, gen)? {
                link.claim(target, &req, gen)?;
                link.result_from_messages(target, gen, &req, later)?;
            } else if link.rule_flag(gen, SYNTHESIZE, intern!(py, "synthesize"))? {
                let response = link.response(gen, &req, later, true)?;
                let obj = link.drafts[gen].obj.clone();
                let made = self
                    .synthesized
                    .bind(py)
                    .call1((&obj, &req, response, results))?;
                draft_held(&obj, FOLLOWS, intern!(py, "follows"))?
                    .call_method1(intern!(py, "append"), (made,))?;
            }
        }
        Ok(())
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(requested_calls, m)?)?;
    m.add_class::<Linker>()
}
