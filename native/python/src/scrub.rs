//! The report's privacy filter, in the core: what of a result may be shown (`emit._explain`).
//!
//! Every result a report shows (tens of thousands in a large grade, most of them passes whose
//! details are a few counts) goes through the filter twice: its message is rebuilt from a
//! template per outcome plus allow-listed values, and its details are scrubbed. [`ShownFilter`]
//! is the filter's one implementation: `emit.explain` and `emit.scrub_details` call it, the
//! JSON report's writer (`report_json.rs`) applies it to each result as it writes it, with
//! no Python call and no scrubbed dict in between, and the emitter's record builder
//! (`emit_records.rs`) asks it for every check's explanation and error type. Numbers and booleans are kept,
//! values under the identifier keys are kept when identifier-shaped (secret-shaped ones and
//! others replaced), everything else is dropped. What is an identifier, and what looks like
//! a secret, stay Python functions (`emit.safe_identifier`/`looks_secret`, the regexes that
//! the emitter and the fixtures share), asked here; the strings `safe_identifier` gave back
//! are remembered, so the same check names, detail keys and tool names of every result cost
//! a set lookup.

use std::borrow::Cow;
use std::convert::Infallible;
use std::sync::Mutex;

use otel_oracles_core::json_text::{escape_surrogates, int_text, write_shown_string};
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{
    PyBool, PyBytes, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PySet, PySlice, PyString, PyTuple,
};

/// A piece of an outcome's template: text as it is, or the check's name or budget.
enum Piece {
    Text(String),
    Name,
    Budget,
}

/// `template.format(name=..., budget=...)` split once: only `{name}` and `{budget}` may stand
/// in braces.
fn pieces(template: &str) -> PyResult<Vec<Piece>> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find(['{', '}']) {
        if !rest[..open].is_empty() {
            out.push(Piece::Text(rest[..open].to_owned()));
        }
        let tail = &rest[open..];
        if let Some(after) = tail.strip_prefix("{name}") {
            out.push(Piece::Name);
            rest = after;
        } else if let Some(after) = tail.strip_prefix("{budget}") {
            out.push(Piece::Budget);
            rest = after;
        } else {
            return Err(PyValueError::new_err(format!(
                "a template may hold only {{name}} and {{budget}}: {template:?}"
            )));
        }
    }
    if !rest.is_empty() {
        out.push(Piece::Text(rest.to_owned()));
    }
    Ok(out)
}

/// `text` cut to `limit` characters, its last one an ellipsis when cut (`emit._cap`).
fn cap(text: String, limit: usize) -> String {
    // A text of at most `limit` bytes has at most `limit` characters: nothing to count.
    if text.len() <= limit {
        return text;
    }
    match text.char_indices().nth(limit) {
        None => text,
        Some(_) => {
            let end = text
                .char_indices()
                .nth(limit.saturating_sub(1))
                .map_or(text.len(), |(i, _)| i);
            let mut capped = text[..end].to_owned();
            capped.push('\u{2026}');
            capped
        }
    }
}

/// `cap(text, limit)` appended to `out`, `text` borrowed: what a detail's value is shown as.
fn push_capped(text: &str, limit: usize, out: &mut String) {
    if text.len() <= limit {
        out.push_str(text);
        return;
    }
    match text.char_indices().nth(limit) {
        None => out.push_str(text),
        Some(_) => {
            let end = text
                .char_indices()
                .nth(limit.saturating_sub(1))
                .map_or(text.len(), |(i, _)| i);
            out.push_str(&text[..end]);
            out.push('\u{2026}');
        }
    }
}

/// `text`'s code points as UTF-8 with its surrogates kept (`encode("utf-8",
/// "surrogatepass")`): what a `str` that has no UTF-8 text is made of, for
/// `escape_surrogates`. Asked only after `to_str` refused the string.
pub(crate) fn surrogatepass_bytes<'py>(
    text: &Bound<'py, PyString>,
) -> PyResult<Bound<'py, PyBytes>> {
    let py = text.py();
    Ok(text
        .call_method1(
            intern!(py, "encode"),
            (intern!(py, "utf-8"), intern!(py, "surrogatepass")),
        )?
        .cast_into::<PyBytes>()?)
}

/// `text` as Rust text: itself when it is valid UTF-8 (every string a decoder made), else
/// with each surrogate written as its escape (`\udcff`), as the reports write every
/// character they cannot show: a trace's text is shown, never refused
/// (`escape_surrogates`).
pub(crate) fn str_text<'a>(text: &'a Bound<'_, PyString>) -> PyResult<Cow<'a, str>> {
    if let Ok(valid) = text.to_str() {
        return Ok(Cow::Borrowed(valid));
    }
    let raw = surrogatepass_bytes(text)?;
    let mut out = Vec::with_capacity(raw.as_bytes().len() + 16);
    escape_surrogates(raw.as_bytes(), &mut out);
    String::from_utf8(out)
        .map(Cow::Owned)
        .map_err(|err| PyValueError::new_err(err.to_string()))
}

/// `text` itself when it is valid UTF-8 (nearly every string), else a new `str` with each
/// surrogate written as its escape (`str_text`): what the in-process reader hands the SDK's
/// OTLP encoder, which has no UTF-8 text for a surrogate (`inprocess/_sdk_records.py`). One
/// escaper for the reports, the emitter and the in-process reader; the caller tells a text
/// that held a surrogate by the object coming back being a new one.
#[pyfunction(name = "escape_surrogates")]
fn escaped_surrogates<'py>(text: Bound<'py, PyString>) -> PyResult<Bound<'py, PyString>> {
    if text.to_str().is_ok() {
        return Ok(text);
    }
    let escaped = str_text(&text)?;
    Ok(PyString::new(text.py(), &escaped))
}

/// `str(value)`, as an f-string or `str.join` of `str`s spells an integer: exact ones in the
/// core, others (a subclass) asked.
fn int_str(value: &Bound<'_, PyAny>) -> PyResult<String> {
    let mut text = String::new();
    push_int_str(value, &mut text)?;
    Ok(text)
}

/// `int_str(value)` appended to `out`.
fn push_int_str(value: &Bound<'_, PyAny>, out: &mut String) -> PyResult<()> {
    if value.is_exact_instance_of::<PyInt>() {
        if let Ok(n) = value.extract::<i64>() {
            out.push_str(int_text(n, &mut [0; 20]));
            return Ok(());
        }
    }
    out.push_str(&str_text(&value.str()?)?);
    Ok(())
}

/// A detail's value as a template shows it (before its cap): a boolean's or an exact
/// integer's text without a `String` made for it, anything else's made.
enum Rendered {
    Flag(bool),
    Int(i64),
    Text(String),
}

impl Rendered {
    /// The value's text appended to `out`, capped at `limit` characters (`cap`).
    fn push(&self, limit: usize, out: &mut String) {
        match self {
            Rendered::Flag(flag) => push_capped(if *flag { "true" } else { "false" }, limit, out),
            Rendered::Int(n) => push_capped(int_text(*n, &mut [0; 20]), limit, out),
            Rendered::Text(text) => push_capped(text, limit, out),
        }
    }
}

/// The fields of a result the filter reads, each a `T`: the values themselves ([`Judged`],
/// [`ReadFields`]), their names, or where they stand among a model's field values
/// ([`JudgedAt`]). One record for all of them, so that which field is which is written in
/// one place ([`each`](Self::each)) and every way of reaching a result's fields goes
/// through it.
pub(crate) struct JudgedFields<T> {
    pub(crate) name: T,
    pub(crate) oracle_type: T,
    pub(crate) outcome: T,
    pub(crate) used: T,
    pub(crate) budget: T,
    pub(crate) steps: T,
    pub(crate) details: T,
    pub(crate) message: T,
}

/// The fields of a result the filter reads, borrowed where they are held (a report's
/// field values, a record's reads): the filter only reads them.
pub(crate) type Judged<'a, 'py> = JudgedFields<&'a Bound<'py, PyAny>>;

/// A result's fields the filter reads, read as attributes (`judged` lends them).
pub(crate) type ReadFields<'py> = JudgedFields<Bound<'py, PyAny>>;

/// Where the fields the filter reads stand among a result model's field values, found once
/// by a report's writer (`find`), which lends a result's values through them (`of`).
pub(crate) type JudgedAt = JudgedFields<usize>;

/// The model's name of each field the filter reads (`OracleResult`'s).
const JUDGED_NAMES: JudgedFields<&str> = JudgedFields {
    name: "name",
    oracle_type: "oracle_type",
    outcome: "outcome",
    used: "used",
    budget: "budget",
    steps: "step_indexes",
    details: "details",
    message: "message",
};

impl<T> JudgedFields<T> {
    /// `f` of each field, in the fields' order, stopping at its first error: the one place
    /// that pairs the fields of one record with those of another.
    #[inline]
    fn each<'s, U, E>(
        &'s self,
        mut f: impl FnMut(&'s T) -> Result<U, E>,
    ) -> Result<JudgedFields<U>, E> {
        Ok(JudgedFields {
            name: f(&self.name)?,
            oracle_type: f(&self.oracle_type)?,
            outcome: f(&self.outcome)?,
            used: f(&self.used)?,
            budget: f(&self.budget)?,
            steps: f(&self.steps)?,
            details: f(&self.details)?,
            message: f(&self.message)?,
        })
    }

    /// `f` of each field (`each`, for an `f` that cannot fail).
    #[inline]
    fn map<'s, U>(&'s self, mut f: impl FnMut(&'s T) -> U) -> JudgedFields<U> {
        match self.each(|field| Ok::<U, Infallible>(f(field))) {
            Ok(mapped) => mapped,
            Err(never) => match never {},
        }
    }
}

impl JudgedAt {
    /// Where each field stands, as `position` finds a name among the model's fields (which
    /// refuses a model without one).
    pub(crate) fn find(mut position: impl FnMut(&str) -> PyResult<usize>) -> PyResult<Self> {
        JUDGED_NAMES.each(|name| position(name))
    }

    /// What the filter reads of a result, borrowed from its field values (`values`, in the
    /// model's order).
    #[inline]
    pub(crate) fn of<'a, 'py>(&self, values: &'a [Bound<'py, PyAny>]) -> Judged<'a, 'py> {
        self.map(|&at| &values[at])
    }
}

/// The names of the fields the filter reads, interned once (`ReadFields::read`).
static JUDGED_KEYS: PyOnceLock<JudgedFields<Py<PyString>>> = PyOnceLock::new();

impl<'py> ReadFields<'py> {
    pub(crate) fn read(result: &Bound<'py, PyAny>) -> PyResult<Self> {
        let py = result.py();
        let keys = JUDGED_KEYS.get_or_init(py, || {
            JUDGED_NAMES.map(|name| PyString::intern(py, name).unbind())
        });
        keys.each(|key| result.getattr(key.bind(py)))
    }

    pub(crate) fn judged(&self) -> Judged<'_, 'py> {
        self.map(|value| value)
    }
}

/// The privacy filter with its allow-lists and templates: see the module's text. Built once
/// by `otel_oracles.emit._explain`.
#[pyclass(module = "otel_oracles._native", name = "ShownFilter", frozen)]
pub(crate) struct ShownFilter {
    /// Detail keys whose string values are identifiers (`IDENTIFIER_DETAIL_KEYS`).
    identifier_keys: Py<PyFrozenSet>,
    /// `emit.safe_identifier`: a value, or `None` when it is not a short identifier free
    /// of secret shapes.
    safe_identifier: Py<PyAny>,
    /// `emit.looks_secret`: whether a (capped) check name that is not an identifier looks
    /// like a secret.
    looks_secret: Py<PyAny>,
    /// What replaces a value that is not shown (`REDACTED`).
    redacted: Py<PyString>,
    /// `slice(0, max_items)`: the items of a list (or a dict's first pairs) shown.
    head: Py<PySlice>,
    max_items: usize,
    /// Exact `str`s `safe_identifier` gave back, up to `max_known` of them.
    known: Py<PySet>,
    max_known: usize,
    /// Each outcome with its template, split.
    templates: Vec<(Py<PyAny>, Vec<Piece>)>,
    /// Where the pass and the error outcomes stand in `templates`.
    pass_at: usize,
    pub(crate) error_at: usize,
    /// Error types whose message a template shows (`SHOWN_ERROR_TYPES`).
    shown_error_types: Py<PyFrozenSet>,
    /// Caps: a whole explanation, a shown value (and a name that is not an identifier).
    max_chars: usize,
    max_value_chars: usize,
    /// The heads of explanations written before (see [`Heads`]); a call finding it taken
    /// renders without.
    heads: Mutex<Heads>,
}

/// What a head's `{budget}` reads: nothing (a template without one), or the budget (None or
/// an exact `int`) and what was used (an exact `int`).
type Numbers = Option<(Option<i64>, i64)>;

/// Slots of [`Heads`]: a grade's heads are its checks' names times their outcomes (and
/// budgets), a few hundred.
const HEAD_SLOTS: usize = 512;

/// A result's head as rendered before, with what it was rendered of.
struct Head {
    /// The check's name, held: no other string can take its address while the slot stands
    /// for it, and a `str`'s text never changes.
    name: Py<PyString>,
    at: usize,
    numbers: Numbers,
    /// The outcome's template with the name and the budget (`text` before its steps, error
    /// and details).
    text: String,
    /// `shown_message` of a result with nothing more: the text capped, its name cut off.
    bare: String,
    /// `bare` as the JSON report writes it (`write_shown_string`): most results of a report
    /// are such passes, their message copied instead of scanned for escapes each time.
    bare_shown: Vec<u8>,
}

/// The heads of explanations by the check name's address, its outcome and its numbers: most
/// results of a report are the same few checks passing (`name: holds`), and a hit is a few
/// compares and a copy instead of asking whether the name is an identifier, reading its
/// text and filling the template. Direct-mapped: a head whose slot another took is rendered
/// and takes it back; only names that are identifiers (whose text is the name's own, with
/// no other field read) are kept.
struct Heads {
    slots: Vec<Option<Head>>,
}

impl Heads {
    /// The head kept for `name`, `at`, `numbers`.
    fn find(&self, name: &Bound<'_, PyAny>, at: usize, numbers: Numbers) -> Option<&Head> {
        let head = self.slots[Self::slot(name.as_ptr() as usize, at, numbers)].as_ref()?;
        (head.name.as_ptr() == name.as_ptr() && head.at == at && head.numbers == numbers)
            .then_some(head)
    }

    fn slot(name: usize, at: usize, numbers: Numbers) -> usize {
        let (budget, used) = numbers.map_or((0, 0), |(b, u)| (b.map_or(-1, |b| b ^ 0x55), u));
        let key = ((name >> 4) as u64)
            ^ (at as u64).wrapping_mul(0x2545_f491_4f6c_dd1d)
            ^ (budget as u64).wrapping_mul(0x9e37_79b9)
            ^ (used as u64).rotate_left(32);
        let mixed = key.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (mixed >> (64 - HEAD_SLOTS.trailing_zeros())) as usize
    }
}

#[pymethods]
impl ShownFilter {
    #[new]
    #[allow(clippy::too_many_arguments)]
    fn new(
        identifier_keys: Bound<'_, PyFrozenSet>,
        safe_identifier: Bound<'_, PyAny>,
        looks_secret: Bound<'_, PyAny>,
        redacted: Bound<'_, PyString>,
        max_items: usize,
        max_known: usize,
        templates: Vec<(Bound<'_, PyAny>, String)>,
        pass_outcome: Bound<'_, PyAny>,
        error_outcome: Bound<'_, PyAny>,
        shown_error_types: Bound<'_, PyFrozenSet>,
        max_chars: usize,
        max_value_chars: usize,
    ) -> PyResult<Self> {
        let py = identifier_keys.py();
        let find = |outcome: &Bound<'_, PyAny>| {
            templates
                .iter()
                .position(|(o, _)| o.is(outcome))
                .ok_or_else(|| PyValueError::new_err("an outcome without a template"))
        };
        let pass_at = find(&pass_outcome)?;
        let error_at = find(&error_outcome)?;
        let mut split = Vec::with_capacity(templates.len());
        for (outcome, template) in templates {
            split.push((outcome.unbind(), pieces(&template)?));
        }
        Ok(ShownFilter {
            identifier_keys: identifier_keys.unbind(),
            safe_identifier: safe_identifier.unbind(),
            looks_secret: looks_secret.unbind(),
            redacted: redacted.unbind(),
            head: PySlice::new(py, 0, isize::try_from(max_items)?, 1).unbind(),
            max_items,
            known: PySet::empty(py)?.unbind(),
            max_known,
            templates: split,
            pass_at,
            error_at,
            shown_error_types: shown_error_types.unbind(),
            max_chars,
            max_value_chars,
            heads: Mutex::new(Heads {
                slots: (0..HEAD_SLOTS).map(|_| None).collect(),
            }),
        })
    }

    /// The details a report may show by default (`emit.scrub_details`): a new dict of the
    /// numbers and booleans of `details` whose keys are identifiers, and, under the
    /// identifier keys, strings, lists' first items and dicts' first name-count pairs with
    /// each string kept when an identifier, else `redacted`. Anything else is dropped.
    pub(crate) fn scrub<'py>(&self, details: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
        let py = details.py();
        let out = PyDict::new(py);
        if let Ok(dict) = details.cast_exact::<PyDict>() {
            for (key, value) in dict.iter() {
                self.entry(&out, &key, &value)?;
            }
        } else {
            for item in details.call_method0(intern!(py, "items"))?.try_iter()? {
                let (key, value) = item?.extract::<(Bound<'py, PyAny>, Bound<'py, PyAny>)>()?;
                self.entry(&out, &key, &value)?;
            }
        }
        Ok(out)
    }

    /// The template explanation of `result` (`emit.explain` in `template` mode): the
    /// outcome's template with the check's name and budget, the error type (and a shown
    /// error's message), the first steps and, unless it passed, the allow-listed details
    /// as `key=value` sorted by key; capped.
    fn explain(&self, result: &Bound<'_, PyAny>) -> PyResult<String> {
        self.text(&ReadFields::read(result)?.judged())
    }

    /// The message a report shows of `result` (`emit.shown_message` in `template` mode):
    /// its template explanation without the check's name, a pass's from the kept heads.
    #[pyo3(name = "shown_message")]
    fn shown_message_of(&self, result: &Bound<'_, PyAny>) -> PyResult<String> {
        self.shown_message(&ReadFields::read(result)?.judged())
    }
}

impl ShownFilter {
    /// `safe_identifier(value)`: an exact `str` it gave back before is not asked again.
    pub(crate) fn safe<'py>(
        &self,
        value: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = value.py();
        let exact = value.is_exact_instance_of::<PyString>();
        let known = self.known.bind(py);
        if exact && known.contains(value)? {
            return Ok(Some(value.clone()));
        }
        let safe = self.safe_identifier.bind(py).call1((value,))?;
        if safe.is_none() {
            return Ok(None);
        }
        if exact && safe.is(value) && known.len() < self.max_known {
            known.add(value)?;
        }
        Ok(Some(safe))
    }

    /// `safe_identifier(value) or redacted`.
    pub(crate) fn shown<'py>(&self, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        match self.safe(value)? {
            Some(safe) if safe.is_truthy()? => Ok(safe),
            _ => Ok(self.redacted.bind(value.py()).clone().into_any()),
        }
    }

    /// `shown(value)` as text.
    fn shown_text(&self, value: &Bound<'_, PyAny>) -> PyResult<String> {
        Ok(str_text(&self.shown(value)?.str()?)?.into_owned())
    }

    /// Whether `key` is one of the identifier keys.
    pub(crate) fn identifier_key(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.identifier_keys.bind(key.py()).contains(key)
    }

    /// The items of a list (a dict's pairs) shown: `value[:max_items]`.
    pub(crate) fn head<'py>(&self, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        value.get_item(self.head.bind(value.py()))
    }

    /// A dict's first `max_items` pairs, as `list(value.items())[:max_items]`.
    pub(crate) fn first_pairs<'py>(
        &self,
        dict: &Bound<'py, PyDict>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let pairs = if let Ok(exact) = dict.cast_exact::<PyDict>() {
            exact.items()
        } else {
            let items = dict.call_method0(intern!(dict.py(), "items"))?;
            PyList::new(dict.py(), items.try_iter()?.collect::<PyResult<Vec<_>>>()?)?
        };
        Ok(pairs.iter().take(self.max_items).collect())
    }

    /// One detail into `out`, when shown.
    fn entry<'py>(
        &self,
        out: &Bound<'py, PyDict>,
        key: &Bound<'py, PyAny>,
        value: &Bound<'py, PyAny>,
    ) -> PyResult<()> {
        if self.safe(key)?.is_none() {
            return Ok(());
        }
        // Numbers and booleans (`bool` is an `int`): counts, lengths, exit codes.
        if value.is_instance_of::<PyInt>() || value.is_instance_of::<PyFloat>() {
            return out.set_item(key, value);
        }
        let py = key.py();
        if !self.identifier_key(key)? {
            return Ok(());
        }
        if value.is_instance_of::<PyString>() {
            out.set_item(key, self.shown(value)?)
        } else if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
            let items = PyList::empty(py);
            for item in self.head(value)?.try_iter()? {
                items.append(self.shown(&item?)?)?;
            }
            out.set_item(key, items)
        } else if let Ok(dict) = value.cast::<PyDict>() {
            // name -> count (e.g. unclassified span names): its first pairs, counts only.
            let counts = PyDict::new(py);
            for pair in self.first_pairs(dict)? {
                let (name, n) = pair.extract::<(Bound<'py, PyAny>, Bound<'py, PyAny>)>()?;
                if n.is_instance_of::<PyInt>() {
                    counts.set_item(self.shown(&name)?, n)?;
                }
            }
            out.set_item(key, counts)
        } else {
            Ok(())
        }
    }

    /// Where `outcome` stands in `templates` (the member itself, or one equal to it).
    pub(crate) fn outcome_at(&self, outcome: &Bound<'_, PyAny>) -> PyResult<usize> {
        let py = outcome.py();
        if let Some(at) = self
            .templates
            .iter()
            .position(|(o, _)| o.bind(py).is(outcome))
        {
            return Ok(at);
        }
        for (at, (o, _)) in self.templates.iter().enumerate() {
            if o.bind(py).eq(outcome)? {
                return Ok(at);
            }
        }
        Err(PyKeyError::new_err(outcome.clone().unbind()))
    }

    /// `error.type` for an errored check (`emit.error_type`): the exception class name
    /// when it is a plain identifier, else `_OTHER`.
    pub(crate) fn error_type(&self, details: &Bound<'_, PyAny>) -> PyResult<String> {
        let py = details.py();
        let value = match details.cast_exact::<PyDict>() {
            Ok(dict) => dict.get_item(intern!(py, "error.type"))?,
            Err(_) => Some(details.call_method1(intern!(py, "get"), (intern!(py, "error.type"),))?),
        };
        let safe = match value {
            Some(value) => self.safe(&value)?,
            None => None,
        };
        match safe {
            Some(safe) if safe.is_truthy()? => Ok(str_text(&safe.str()?)?.into_owned()),
            _ => Ok("_OTHER".to_owned()),
        }
    }

    /// The template explanation of a result (`explain` above).
    pub(crate) fn text(&self, j: &Judged<'_, '_>) -> PyResult<String> {
        self.text_at(self.outcome_at(j.outcome)?, j)
    }

    /// What a head reads of a result's numbers, or None when it is not kept (a number that
    /// is not an exact `int` or beyond 64 bits).
    fn numbers(&self, at: usize, j: &Judged<'_, '_>) -> Option<Numbers> {
        if !self.templates[at]
            .1
            .iter()
            .any(|p| matches!(p, Piece::Budget))
        {
            return Some(None);
        }
        let exact = |value: &Bound<'_, PyAny>| {
            if value.is_exact_instance_of::<PyInt>() {
                value.extract::<i64>().ok()
            } else {
                None
            }
        };
        let budget = if j.budget.is_none() {
            None
        } else {
            Some(exact(j.budget)?)
        };
        Some(Some((budget, exact(j.used)?)))
    }

    /// Appends the text of the head kept for `name`, `at`, `numbers`; false when none is.
    fn push_kept(
        &self,
        name: &Bound<'_, PyAny>,
        at: usize,
        numbers: Numbers,
        text: &mut String,
    ) -> bool {
        let Ok(heads) = self.heads.try_lock() else {
            return false;
        };
        match heads.find(name, at, numbers) {
            Some(head) => {
                text.push_str(&head.text);
                true
            }
            None => false,
        }
    }

    /// Keeps the head `text` of an exact `str` `name`.
    fn keep(
        &self,
        name: &Bound<'_, PyString>,
        at: usize,
        numbers: Numbers,
        text: &str,
    ) -> PyResult<()> {
        let bare = shown_of(cap(text.to_owned(), self.max_chars), &str_text(name)?);
        let mut bare_shown = Vec::with_capacity(bare.len() + 2);
        write_shown_string(bare.as_bytes(), &mut bare_shown);
        if let Ok(mut heads) = self.heads.try_lock() {
            let slot = Heads::slot(name.as_ptr() as usize, at, numbers);
            heads.slots[slot] = Some(Head {
                name: name.clone().unbind(),
                at,
                numbers,
                text: text.to_owned(),
                bare,
                bare_shown,
            });
        }
        Ok(())
    }

    /// Appends the outcome's template with the check's name and budget: kept by name,
    /// outcome and numbers when the name is an exact `str`.
    fn push_head(&self, at: usize, j: &Judged<'_, '_>, text: &mut String) -> PyResult<()> {
        let key = match j.name.cast_exact::<PyString>() {
            Ok(name) => self.numbers(at, j).map(|numbers| (name, numbers)),
            Err(_) => None,
        };
        if let Some((name, numbers)) = key {
            if self.push_kept(name, at, numbers, text) {
                return Ok(());
            }
        }
        let (head, identifier) = self.render_head(at, j)?;
        if let (Some((name, numbers)), true) = (key, identifier) {
            self.keep(name, at, numbers, &head)?;
        }
        text.push_str(&head);
        Ok(())
    }

    /// The head rendered, and whether the name was an identifier (the text then reads no
    /// field but the name, the outcome and the numbers).
    fn render_head(&self, at: usize, j: &Judged<'_, '_>) -> PyResult<(String, bool)> {
        let py = j.name.py();
        let safe = self.safe(j.name)?;
        let identifier = safe.is_some();
        let name = match safe {
            Some(safe) => str_text(&safe.str()?)?.into_owned(),
            None => {
                let capped = cap(
                    str_text(j.name.cast::<PyString>()?)?.into_owned(),
                    self.max_value_chars,
                );
                if self.looks_secret.bind(py).call1((&capped,))?.is_truthy()? {
                    if self.safe(j.oracle_type)?.is_some() {
                        str_text(&j.oracle_type.str()?)?.into_owned()
                    } else {
                        "check".to_owned()
                    }
                } else {
                    capped
                }
            }
        };
        let mut text = String::with_capacity(64);
        for piece in &self.templates[at].1 {
            match piece {
                Piece::Text(part) => text.push_str(part),
                Piece::Name => text.push_str(&name),
                Piece::Budget => {
                    if !j.budget.is_none() || j.used.is_truthy()? {
                        let limit = if j.budget.is_none() {
                            "?".to_owned()
                        } else {
                            int_str(j.budget)?
                        };
                        text.push_str(" (used ");
                        text.push_str(&int_str(j.used)?);
                        text.push_str(" of ");
                        text.push_str(&limit);
                        text.push(')');
                    }
                }
            }
        }
        Ok((text, identifier))
    }

    /// The explanation of a result whose outcome stands at `at` in `templates`.
    pub(crate) fn text_at(&self, at: usize, j: &Judged<'_, '_>) -> PyResult<String> {
        let mut text = String::with_capacity(128);
        self.push_text(at, j, &mut text)?;
        Ok(cap(text, self.max_chars))
    }

    /// `text_at`'s text before its cap, appended to `text`: each piece written in place (a
    /// kept head, step numbers, `key=value` of details), no `String` made per piece.
    fn push_text(&self, at: usize, j: &Judged<'_, '_>, text: &mut String) -> PyResult<()> {
        let py = j.name.py();
        self.push_head(at, j, text)?;
        if at == self.error_at {
            let error_type = self.error_type(j.details)?;
            let shown = self
                .shown_error_types
                .bind(py)
                .contains(PyString::new(py, &error_type))?;
            text.push_str("; error.type=");
            text.push_str(&error_type);
            if shown {
                text.push_str("; ");
                text.push_str(&str_text(j.message.cast::<PyString>()?)?);
            }
        }
        if j.steps.is_truthy()? {
            text.push_str("; steps=");
            if let Ok(steps) = j.steps.cast_exact::<PyList>() {
                // An exact list's first items read in place (`steps[:max_items]`'s).
                for i in 0..steps.len().min(self.max_items) {
                    if i > 0 {
                        text.push(',');
                    }
                    push_int_str(&steps.get_item(i)?, text)?;
                }
            } else {
                for (i, step) in self.head(j.steps)?.try_iter()?.enumerate() {
                    if i > 0 {
                        text.push(',');
                    }
                    push_int_str(&step?, text)?;
                }
            }
            if j.steps.len()? > self.max_items {
                text.push_str(",\u{2026}");
            }
        }
        if at != self.pass_at {
            self.push_details(j.details, text)?;
        }
        Ok(())
    }

    /// The allow-listed details as `; key=value`, sorted by key, `error.type` left out (the
    /// error's part says it).
    fn push_details(&self, details: &Bound<'_, PyAny>, text: &mut String) -> PyResult<()> {
        let py = details.py();
        // Most details are an exact dict keyed by exact `str`s of UTF-8 text: their pairs
        // read in place and put in order by the keys' texts (whose byte order is the code
        // point order `sorted` puts `str`s in), no list of keys made, sorted through
        // Python's comparisons and each value looked up again. Anything else as `sorted`
        // and `details[key]` read it (a surrogate, a key of another type, a mapping).
        if let Ok(dict) = details.cast_exact::<PyDict>() {
            let pairs: Vec<_> = dict.iter().collect();
            let mut order = Vec::with_capacity(pairs.len());
            for (at, (key, _)) in pairs.iter().enumerate() {
                match key.cast_exact::<PyString>().map(|key| key.to_str()) {
                    Ok(Ok(key_text)) => order.push((key_text, at)),
                    _ => break,
                }
            }
            if order.len() == pairs.len() {
                order.sort_unstable_by(|a, b| a.0.cmp(b.0));
                for (key_text, at) in order {
                    let (key, value) = &pairs[at];
                    if self.safe(key)?.is_none() {
                        continue;
                    }
                    if let Some(rendered) = self.detail_value(key, value)? {
                        self.push_item(key_text, &rendered, text);
                    }
                }
                return Ok(());
            }
        }
        let keys = PyList::new(py, details.try_iter()?.collect::<PyResult<Vec<_>>>()?)?;
        keys.sort()?;
        for key in keys.iter() {
            if self.safe(&key)?.is_none() {
                continue;
            }
            let key_text = str_text(&key.str()?)?.into_owned();
            if let Some(rendered) = self.detail_value(&key, &details.get_item(&key)?)? {
                self.push_item(&key_text, &rendered, text);
            }
        }
        Ok(())
    }

    /// `; key=value` of a detail shown (`rendered`, capped), `error.type` left out (the
    /// error's part says it): any item whose text `key=value` starts with `error.type=`,
    /// which is a key `error.type` or one starting with `error.type=`.
    fn push_item(&self, key_text: &str, rendered: &Rendered, text: &mut String) {
        if key_text == "error.type" || key_text.starts_with("error.type=") {
            return;
        }
        text.push_str("; ");
        text.push_str(key_text);
        text.push('=');
        rendered.push(self.max_value_chars, text);
    }

    /// The allow-listed rendering of one detail value, or None to drop it.
    fn detail_value(
        &self,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<Option<Rendered>> {
        if value.is_exact_instance_of::<PyInt>() {
            if let Ok(n) = value.extract::<i64>() {
                return Ok(Some(Rendered::Int(n)));
            }
        }
        if let Ok(flag) = value.cast::<PyBool>() {
            return Ok(Some(Rendered::Flag(flag.is_true())));
        }
        if value.is_instance_of::<PyInt>() || value.is_instance_of::<PyFloat>() {
            return Ok(Some(Rendered::Text(str_text(&value.repr()?)?.into_owned())));
        }
        if !self.identifier_key(key)? {
            return Ok(None);
        }
        if value.is_instance_of::<PyString>() {
            return Ok(Some(Rendered::Text(self.shown_text(value)?)));
        }
        let more = |len: usize| {
            if len > self.max_items {
                ", \u{2026}"
            } else {
                ""
            }
        };
        if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
            let mut items = Vec::with_capacity(self.max_items);
            for item in self.head(value)?.try_iter()? {
                items.push(self.shown_text(&item?)?);
            }
            return Ok(Some(Rendered::Text(format!(
                "[{}{}]",
                items.join(", "),
                more(value.len()?)
            ))));
        }
        if let Ok(dict) = value.cast::<PyDict>() {
            let mut items = Vec::with_capacity(self.max_items);
            for pair in self.first_pairs(dict)? {
                let (name, n) = pair.extract::<(Bound<'_, PyAny>, Bound<'_, PyAny>)>()?;
                if n.is_instance_of::<PyInt>() {
                    let count = int_str(&n)?;
                    items.push(format!("{} x{count}", self.shown_text(&name)?));
                }
            }
            return Ok(Some(Rendered::Text(format!(
                "{{{}{}}}",
                items.join(", "),
                more(dict.len())
            ))));
        }
        Ok(None)
    }

    /// The message a report shows of a result: its template explanation without the
    /// check's name (`emit.shown_message`; reports print the name next to it).
    pub(crate) fn shown_message(&self, j: &Judged<'_, '_>) -> PyResult<String> {
        let at = self.outcome_at(j.outcome)?;
        if let Some(bare) = self.bare(at, j, |head| head.bare.clone()) {
            return Ok(bare);
        }
        self.message_at(at, j)
    }

    /// `shown_message` written as the JSON report writes it (`write_shown_string`), with no
    /// copy of a kept one, and a rendered one written from the one text it is rendered in.
    pub(crate) fn write_shown_message(
        &self,
        j: &Judged<'_, '_>,
        out: &mut Vec<u8>,
    ) -> PyResult<()> {
        let at = self.outcome_at(j.outcome)?;
        if self
            .bare(at, j, |head| out.extend_from_slice(&head.bare_shown))
            .is_none()
        {
            let mut text = String::with_capacity(128);
            self.push_text(at, j, &mut text)?;
            let text = cap(text, self.max_chars);
            let name = str_text(j.name.cast::<PyString>()?)?;
            write_shown_string(shown_part(&text, &name).as_bytes(), out);
        }
        Ok(())
    }

    /// `shown_message` of a result whose outcome stands at `at`, rendered.
    fn message_at(&self, at: usize, j: &Judged<'_, '_>) -> PyResult<String> {
        let text = self.text_at(at, j)?;
        Ok(shown_of(text, &str_text(j.name.cast::<PyString>()?)?))
    }

    /// `read` of the shown message of a pass without steps, which is its head alone
    /// (`name: holds`), when its head is kept; None otherwise.
    fn bare<R>(&self, at: usize, j: &Judged<'_, '_>, read: impl FnOnce(&Head) -> R) -> Option<R> {
        if at != self.pass_at || !j.steps.cast_exact::<PyList>().is_ok_and(|s| s.is_empty()) {
            return None;
        }
        let numbers = self.numbers(at, j)?;
        let heads = self.heads.try_lock().ok()?;
        Some(read(heads.find(j.name, at, numbers)?))
    }
}

/// An explanation without the check's name in front (`name: `), when it starts with it.
fn shown_of(text: String, name: &str) -> String {
    match shown_rest(&text, name) {
        Some(rest) => rest.to_owned(),
        None => text,
    }
}

/// `shown_of`, borrowed.
fn shown_part<'t>(text: &'t str, name: &str) -> &'t str {
    shown_rest(text, name).unwrap_or(text)
}

/// What follows `name: ` at the start of `text`.
fn shown_rest<'t>(text: &'t str, name: &str) -> Option<&'t str> {
    text.strip_prefix(name)
        .and_then(|rest| rest.strip_prefix(": "))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ShownFilter>()?;
    m.add_function(wrap_pyfunction!(escaped_surrogates, m)?)?;
    Ok(())
}
