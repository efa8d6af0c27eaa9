//! `RuleTable`: the core's mapping rule table (`otel_oracles_core::rules`) over Python span
//! records, for `otel_oracles.mapping._compile`.
//!
//! The table arrives as plain data (`_compile.rule_table_data`): per rule `(all, any)`, each
//! condition a `(tag, a, b)` tuple naming attribute keys, regexes and value lists by number.
//! `select` maps every span of a trace to its rule's number in one call. Each regex is
//! analysed into the core's `RegexPlan` when the table is built: the core answers the texts
//! it can prove the answer for, and asks Python (`safe_regex.search`, through the `search`
//! callable the table was given) for the others, once per distinct text; a search error (a
//! regex over its time budget) propagates as it did.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, TryLockError};

use otel_oracles_core::hashing::{FastMap, FastMapExt};
use otel_oracles_core::rule_regex::RegexPlan;
use otel_oracles_core::rules::{
    AttrTest, Condition, Match, RegexMemo, RuleTable as CoreTable, Searcher, SpanAccess, Subject,
    Text, Value,
};
use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFrozenSet, PyInt, PyList, PyString};
use std::cell::{OnceCell, RefCell};

use crate::fields::{leading, origin, Origin, RawReader};
use crate::slots::{span, span_held, span_peek};

#[pyclass(module = "otel_oracles._native", name = "RuleTable", frozen)]
pub struct RuleTable {
    table: CoreTable,
    /// The attribute keys as interned `str`s (their hashes computed once).
    keys: Vec<Py<PyString>>,
    /// The same keys -> their numbers, to list a span's keys the table tests from its own
    /// attributes (`present_keys`); content keys are left out (never read from a span).
    numbers: Py<PyDict>,
    /// The value lists of `equals` conditions whose values are not all text.
    host_lists: Vec<Py<PyList>>,
    /// `search(regex_number, text) -> bool`.
    search: Py<PyAny>,
    memo: Mutex<RegexMemo>,
    /// Attribute key `str`s met in spans, by identity (see [`SeenKeys`]).
    seen: Mutex<SeenKeys>,
    /// How many times `search` was called.
    host_searches: AtomicU64,
    /// The content the rules' `field` conditions test, `None` when none has one.
    content: Option<Content>,
}

/// `RuleTable`'s `content` argument: per read its key number and its sources'
/// `(tag, a, b)`, the redaction placeholders, `dumps`.
type ContentData<'py> = (
    Vec<(usize, Bound<'py, PyAny>)>,
    Bound<'py, PyFrozenSet>,
    Py<PyAny>,
);

/// The content `field` conditions test (`_compile.ContentReads`): an attribute key stands
/// for each distinct list of sources, and a span's value under it is the content those
/// sources read on the span (`RawReader::content`, the field reader's raw read), worked out
/// when a condition first tests it. A span's own attribute under such a key is never read.
struct Content {
    /// Per attribute key number, the sources of the content it stands for (`None`: a plain
    /// attribute).
    origins: Vec<Option<Vec<Origin>>>,
    /// The content key numbers as a bit set (`present_keys` sets them on every span).
    keys: Box<[u64]>,
    reader: RawReader,
    /// `dumps(value)`: the JSON text of a structured value (`json.dumps` as `_compile`
    /// calls it).
    dumps: Py<PyAny>,
}

impl RuleTable {
    /// The sources of the content key number `key` stands for, with the table's content
    /// reading; `None` for a plain attribute key.
    fn content_of(&self, key: u32) -> Option<(&[Origin], &Content)> {
        let content = self.content.as_ref()?;
        let origins = content.origins.get(key as usize)?.as_deref()?;
        Some((origins, content))
    }
}

/// Slots of a [`SeenKeys`] (a power of two).
const SEEN_SLOTS: usize = 2048;

/// The table's key number of each attribute key `str` met in a span's dict (`None`: a key
/// no condition tests), by the object's address. The decoder shares one `str` per short
/// key across spans (`parsers::dict_key`), so listing a span's keys is a lookup of a
/// pointer per attribute rather than a hash-table probe in Python and an `int` conversion.
/// Direct-mapped (a multiply and a compare per attribute, where a hashed map probed): a
/// key whose slot another holds is looked up in `numbers` again and takes the slot. Each key is held (a strong reference) while it is in its slot, so its address
/// cannot be reused by another object meanwhile.
/// Beside the keys, the memo row of each span name or scope `str` met (`texts`), by the
/// object's address in the same way: the decoder shares one `str` per short text too, so a
/// span's name finds its row without its text hashed (`SpanAccess::noted_row`).
#[derive(Default)]
struct SeenKeys {
    slots: Vec<Option<SeenKey>>,
    texts: Vec<Option<SeenText>>,
}

/// A [`SeenKeys`] text slot: the text's address, the memo generation and row noted for it,
/// the text itself (held, so the address stays its own).
struct SeenText {
    address: usize,
    generation: u64,
    row: usize,
    _text: Py<PyAny>,
}

/// Text slots of a [`SeenKeys`] (a power of two).
const TEXT_SLOTS: usize = 1024;

/// A [`SeenKeys`] slot: the key's address, its number, the key itself (held).
struct SeenKey {
    address: usize,
    number: Option<u32>,
    _key: Py<PyString>,
}

impl SeenKeys {
    /// The slot of the key at `address`.
    fn slot(address: usize) -> usize {
        const SEED: u64 = 0x9e37_79b9_7f4a_7c15;
        ((address as u64).wrapping_mul(SEED) >> (64 - SEEN_SLOTS.trailing_zeros())) as usize
    }

    /// The text slot of the text at `address`.
    fn text_slot(address: usize) -> usize {
        const SEED: u64 = 0x9e37_79b9_7f4a_7c15;
        ((address as u64).wrapping_mul(SEED) >> (64 - TEXT_SLOTS.trailing_zeros())) as usize
    }

    /// The memo row noted for the text at `address` under `generation`.
    fn text_row(&self, address: usize, generation: u64) -> Option<usize> {
        match self.texts.get(Self::text_slot(address)) {
            Some(Some(seen)) if seen.address == address && seen.generation == generation => {
                Some(seen.row)
            }
            _ => None,
        }
    }

    /// Notes `row` as the memo row of `text` under `generation` (taking its slot).
    fn note_text(&mut self, text: &Bound<'_, PyAny>, generation: u64, row: usize) {
        if self.texts.is_empty() {
            self.texts.resize_with(TEXT_SLOTS, || None);
        }
        let address = text.as_ptr() as usize;
        if let Some(slot) = self.texts.get_mut(Self::text_slot(address)) {
            *slot = Some(SeenText {
                address,
                generation,
                row,
                _text: text.clone().unbind(),
            });
        }
    }

    /// The table's number of `key` (an exact `str`) when its slot holds it.
    fn known(&self, key: *mut ffi::PyObject) -> Option<Option<u32>> {
        let address = key as usize;
        match self.slots.get(Self::slot(address)) {
            Some(Some(seen)) if seen.address == address => Some(seen.number),
            _ => None,
        }
    }

    /// The table's number of `key` (an exact `str`), looked up in `numbers` and kept in
    /// its slot.
    fn number(
        &mut self,
        key: &Bound<'_, PyString>,
        numbers: &Bound<'_, PyDict>,
    ) -> PyResult<Option<u32>> {
        if let Some(number) = self.known(key.as_ptr()) {
            return Ok(number);
        }
        let number = match numbers.get_item(key)? {
            Some(number) => Some(number.extract::<u32>()?),
            None => None,
        };
        if self.slots.is_empty() {
            self.slots.resize_with(SEEN_SLOTS, || None);
        }
        let address = key.as_ptr() as usize;
        if let Some(slot) = self.slots.get_mut(Self::slot(address)) {
            *slot = Some(SeenKey {
                address,
                number,
                _key: key.clone().unbind(),
            });
        }
        Ok(number)
    }
}

/// The names of the record fields the table reads (interned for the process).
struct Names<'py> {
    name: Bound<'py, PyString>,
    scope_name: Bound<'py, PyString>,
    kind: Bound<'py, PyString>,
    status_code: Bound<'py, PyString>,
    attributes: Bound<'py, PyString>,
    span_id: Bound<'py, PyString>,
    parent_span_id: Bound<'py, PyString>,
}

/// The spans of the trace being selected, for parent conditions: by span id (the first span
/// of an id), indexed on the first parent lookup, so a table without parent conditions
/// never builds it.
struct Family<'py> {
    spans: Vec<Bound<'py, PyAny>>,
    by_id: OnceCell<FastMap<String, usize>>,
}

impl<'py> Family<'py> {
    /// The span whose id is `span_id`, if the trace holds one.
    fn span(&self, names: &Names<'py>, span_id: &str) -> PyResult<Option<&Bound<'py, PyAny>>> {
        if self.by_id.get().is_none() {
            let mut by_id = FastMap::with_capacity(self.spans.len());
            for (index, span) in self.spans.iter().enumerate() {
                let id = span_held(span, span::SPAN_ID, &names.span_id)?;
                if let Ok(id) = id.cast::<PyString>() {
                    if let Ok(id) = id.to_str() {
                        by_id.entry(id.to_owned()).or_insert(index);
                    }
                }
            }
            let _ = self.by_id.set(by_id);
        }
        Ok(self
            .by_id
            .get()
            .and_then(|by_id| by_id.get(span_id))
            .and_then(|&index| self.spans.get(index)))
    }
}

/// A span's attributes under the table's keys: (key number, value) pairs.
type Listed<'py> = Vec<(u32, Bound<'py, PyAny>)>;

/// A span's attributes and content read so far: (key number, value or `None` for absent).
type Read<'py> = Vec<(u32, Option<Bound<'py, PyAny>>)>;

/// Buffers handed from span to span of a `select` call: a span takes one when it first
/// needs it and its drop gives it back emptied, as a span's lists made anew cost an
/// allocation (and a growth or two) and their release each.
struct Spare<'py> {
    /// For `present_keys`' listing.
    listed: Listed<'py>,
    /// For `attr`'s reads (about half the spans read content).
    read: Read<'py>,
}

/// One `SpanRecord` (or any object with its fields) as the core's `SpanAccess`.
struct PySpan<'a, 'py> {
    table: &'a RuleTable,
    names: &'a Names<'py>,
    span: Bound<'py, PyAny>,
    attributes: Bound<'py, PyAny>,
    /// `Some` when the attributes are a plain `dict` (the fast path), else any mapping.
    dict: Option<Bound<'py, PyDict>>,
    /// `trace.children`, or `None` for a child or parent (seen without children).
    children: Option<&'a Bound<'py, PyDict>>,
    /// The trace's spans, or `None` for a child or parent (seen without parent).
    family: Option<&'a Family<'py>>,
    /// The key numbers of the key objects met so far (`present_keys`).
    seen: &'a RefCell<SeenKeys>,
    /// Buffers handed from span to span (see [`Spare`]).
    spare: &'a RefCell<Spare<'py>>,
    name: OnceCell<Bound<'py, PyAny>>,
    scope: OnceCell<Bound<'py, PyAny>>,
    kind: OnceCell<i64>,
    status: OnceCell<i64>,
    /// The attributes read so far by key number (`None`: absent), and the content worked out
    /// for content keys: a few per span, searched in order. (A slot per table key cost more
    /// to allocate, fill and drop per span than the lookups it saved.)
    read: RefCell<Read<'py>>,
    /// Once `present_keys` listed the attributes: the table's keys the span has, with their
    /// values (a handful), and every other key is absent; `read` then holds content only.
    listed: RefCell<Option<Listed<'py>>>,
    child_list: OnceCell<Option<Bound<'py, PyList>>>,
}

impl<'a, 'py> PySpan<'a, 'py> {
    fn new(
        table: &'a RuleTable,
        names: &'a Names<'py>,
        span: Bound<'py, PyAny>,
        children: Option<&'a Bound<'py, PyDict>>,
        family: Option<&'a Family<'py>>,
        seen: &'a RefCell<SeenKeys>,
        spare: &'a RefCell<Spare<'py>>,
    ) -> PyResult<Self> {
        let attributes = span_held(&span, span::ATTRIBUTES, &names.attributes)?.into_bound();
        let dict = attributes.cast::<PyDict>().ok().cloned();
        Ok(Self {
            table,
            names,
            span,
            attributes,
            dict,
            children,
            family,
            seen,
            spare,
            name: OnceCell::new(),
            scope: OnceCell::new(),
            kind: OnceCell::new(),
            status: OnceCell::new(),
            read: RefCell::new(Vec::new()),
            listed: RefCell::new(None),
            child_list: OnceCell::new(),
        })
    }

    /// The attribute under key number `key`, or `None` when absent: read from the mapping
    /// once per span, as many rules test the same few keys.
    fn attr(&self, key: u32) -> PyResult<Option<Bound<'py, PyAny>>> {
        let content = self.table.content_of(key);
        if content.is_none() {
            if let Some(found) = self.listed.borrow().as_ref() {
                return Ok(found
                    .iter()
                    .find(|(number, _)| *number == key)
                    .map(|(_, value)| value.clone()));
            }
        }
        if let Some((_, known)) = self.read.borrow().iter().find(|(number, _)| *number == key) {
            return Ok(known.clone());
        }
        let value = match content {
            Some((origins, content)) => {
                content
                    .reader
                    .content(&self.span, origins, &content.dumps)?
            }
            None => self.read_attr(key as usize)?,
        };
        let mut read = self.read.borrow_mut();
        if read.capacity() == 0 {
            if let Ok(mut spare) = self.spare.try_borrow_mut() {
                *read = std::mem::take(&mut spare.read);
            }
        }
        read.push((key, value.clone()));
        Ok(value)
    }

    fn read_attr(&self, slot: usize) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = self.span.py();
        let Some(name) = self.table.keys.get(slot) else {
            return Ok(None);
        };
        let name = name.bind(py);
        match &self.dict {
            Some(dict) => dict.get_item(name),
            None => {
                if self.attributes.contains(name)? {
                    self.attributes.get_item(name).map(Some)
                } else {
                    Ok(None)
                }
            }
        }
    }

    fn children(&self) -> PyResult<Option<&Bound<'py, PyList>>> {
        if let Some(list) = self.child_list.get() {
            return Ok(list.as_ref());
        }
        let list = match self.children {
            None => None,
            Some(children) => {
                let span_id = span_held(&self.span, span::SPAN_ID, &self.names.span_id)?;
                match children.get_item(&span_id)? {
                    Some(list) => Some(list.cast_into::<PyList>()?),
                    None => None,
                }
            }
        };
        Ok(self.child_list.get_or_init(|| list).as_ref())
    }

    /// `span.<name>` (`span::NAMES[field]`) read in the record's memory (`span_held`): a
    /// `getattr` through the type's lookup and the member descriptor cost ~240 instructions
    /// a read, and every span has its name and scope read.
    fn field(&self, field: usize, name: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyAny>> {
        span_held(&self.span, field, name).map(|held| held.into_bound())
    }

    fn search_object(&self, regex: u32, text: &Bound<'py, PyAny>) -> PyResult<bool> {
        self.table.host_searches.fetch_add(1, Ordering::Relaxed);
        self.table
            .search
            .bind(text.py())
            .call1((regex, text))?
            .is_truthy()
    }
}

impl Drop for PySpan<'_, '_> {
    /// Gives the span's buffers back (emptied) for the next span.
    fn drop(&mut self) {
        let Ok(mut spare) = self.spare.try_borrow_mut() else {
            return;
        };
        if let Some(mut listed) = self.listed.get_mut().take() {
            listed.clear();
            if spare.listed.capacity() < listed.capacity() {
                spare.listed = listed;
            }
        }
        let read = self.read.get_mut();
        if read.capacity() > spare.read.capacity() {
            read.clear();
            spare.read = std::mem::take(read);
        }
    }
}

/// A `str` as the core's `Text`: UTF-8, or opaque (lone surrogates); anything else is no
/// text (`None`).
fn text<'b>(value: &'b Bound<'_, PyAny>) -> Option<Text<'b>> {
    let text = value.cast::<PyString>().ok()?;
    Some(match text.to_str() {
        Ok(text) => Text::Utf8(text),
        Err(_) => Text::Opaque,
    })
}

/// `int(value)` as a span kind or status code; a value beyond i64 (or none at all) is
/// `i64::MIN`, which no condition names.
fn code(value: &Bound<'_, PyAny>) -> PyResult<i64> {
    if let Ok(code) = value.extract::<i64>() {
        return Ok(code);
    }
    let as_int = value.py().get_type::<PyInt>().call1((value,))?;
    Ok(as_int.extract::<i64>().unwrap_or(i64::MIN))
}

impl<'py> SpanAccess for PySpan<'_, 'py> {
    type Error = PyErr;

    fn name(&self) -> PyResult<Text<'_>> {
        let value = match self.name.get() {
            Some(value) => value,
            None => {
                let value = self.field(span::NAME, &self.names.name)?;
                self.name.get_or_init(|| value)
            }
        };
        Ok(text(value).unwrap_or(Text::Opaque))
    }

    fn scope(&self) -> PyResult<Text<'_>> {
        let value = match self.scope.get() {
            Some(value) => value,
            None => {
                let value = self.field(span::SCOPE_NAME, &self.names.scope_name)?;
                self.scope.get_or_init(|| value)
            }
        };
        Ok(text(value).unwrap_or(Text::Opaque))
    }

    fn kind(&self) -> PyResult<i64> {
        if let Some(kind) = self.kind.get() {
            return Ok(*kind);
        }
        let kind = span_held(&self.span, span::KIND, &self.names.kind)?;
        let kind = code(&kind)?;
        Ok(*self.kind.get_or_init(|| kind))
    }

    fn status(&self) -> PyResult<i64> {
        if let Some(status) = self.status.get() {
            return Ok(*status);
        }
        let status = span_held(&self.span, span::STATUS_CODE, &self.names.status_code)?;
        let status = code(&status)?;
        Ok(*self.status.get_or_init(|| status))
    }

    fn with_attr<R>(&self, key: u32, f: impl FnOnce(Value<'_>) -> R) -> PyResult<R> {
        let value = self.attr(key)?;
        Ok(match &value {
            None => f(Value::Absent),
            Some(value) => match text(value) {
                Some(text) => f(Value::Text(text)),
                None => f(Value::Other),
            },
        })
    }

    fn attr_equals_host(&self, key: u32, list: u32) -> PyResult<bool> {
        let (Some(value), Some(accepted)) =
            (self.attr(key)?, self.table.host_lists.get(list as usize))
        else {
            return Ok(false);
        };
        accepted.bind(value.py()).contains(value)
    }

    fn search_opaque(&self, subject: Subject, regex: u32) -> PyResult<bool> {
        let value = match subject {
            Subject::Name => self.field(span::NAME, &self.names.name)?,
            Subject::Scope => self.field(span::SCOPE_NAME, &self.names.scope_name)?,
            Subject::Attr(key) => match self.attr(key)? {
                Some(value) => value,
                None => return Ok(false),
            },
        };
        // A `name` or `scope_name` that is no `str` at all (a record built wrongly in
        // Python) raises in the search, as it did.
        self.search_object(regex, &value)
    }

    fn noted_row(&self, subject: Subject, generation: u64) -> Option<usize> {
        let field = match subject {
            Subject::Name => span::NAME,
            Subject::Scope => span::SCOPE_NAME,
            Subject::Attr(_) => return None,
        };
        let text = span_peek(&self.span, field)?;
        self.seen
            .try_borrow()
            .ok()?
            .text_row(text as usize, generation)
    }

    fn note_row(&self, subject: Subject, generation: u64, row: usize) {
        let text = match subject {
            Subject::Name => self.name.get(),
            Subject::Scope => self.scope.get(),
            Subject::Attr(_) => None,
        };
        if let (Some(text), Ok(mut seen)) = (text, self.seen.try_borrow_mut()) {
            seen.note_text(text, generation, row);
        }
    }

    fn child_count(&self) -> PyResult<usize> {
        Ok(self.children()?.map_or(0, |list| list.len()))
    }

    fn child(&self, index: usize) -> PyResult<Self> {
        let Some(list) = self.children()? else {
            return Err(PyValueError::new_err("span has no children"));
        };
        PySpan::new(
            self.table,
            self.names,
            list.get_item(index)?,
            None,
            None,
            self.seen,
            self.spare,
        )
    }

    /// The span of the trace whose id is this span's `parent_span_id` (a `str`); none for a
    /// root (an empty or missing id) or an id no span of the trace has.
    fn parent(&self) -> PyResult<Option<Self>> {
        let Some(family) = self.family else {
            return Ok(None);
        };
        let parent_id = self.field(span::PARENT_SPAN_ID, &self.names.parent_span_id)?;
        let Ok(parent_id) = parent_id.cast::<PyString>() else {
            return Ok(None);
        };
        let Ok(parent_id) = parent_id.to_str() else {
            return Ok(None);
        };
        if parent_id.is_empty() {
            return Ok(None);
        }
        match family.span(self.names, parent_id)? {
            Some(parent) => Ok(Some(PySpan::new(
                self.table,
                self.names,
                parent.clone(),
                None,
                None,
                self.seen,
                self.spare,
            )?)),
            None => Ok(None),
        }
    }

    /// From one pass over a plain `dict` of `str` keys (a span has a few tens of
    /// attributes; the table tests about a hundred keys): the keys present, whose values
    /// are kept, so the conditions then read no attribute from Python. Other mappings, or a
    /// key of another type (compared by its own `__eq__`), list nothing.
    fn present_keys(&self, _keys: usize, present: &mut [u64]) -> PyResult<bool> {
        let Some(dict) = &self.dict else {
            return Ok(false);
        };
        let py = dict.py();
        let numbers = self.table.numbers.bind(py);
        let mut seen = self.seen.borrow_mut();
        let mut found = std::mem::take(&mut self.spare.borrow_mut().listed);
        found.clear();
        let mut at: ffi::Py_ssize_t = 0;
        let mut key: *mut ffi::PyObject = std::ptr::null_mut();
        let mut value: *mut ffi::PyObject = std::ptr::null_mut();
        // SAFETY: `dict` is a live dict; `PyDict_Next` lends its key and value, which stay
        // alive while the dict is not changed, and nothing in the loop runs Python code or
        // makes an object (a collection could run finalizers on one): a key is an exact
        // `str`, known by address or looked up in `numbers`, whose keys are the table's own
        // exact `str`s (`str`'s hash and comparison; a slot taken over releases an exact
        // `str`, which runs nothing); the value kept is taken as a new reference. This walk
        // is `RuleTable::select`'s hottest loop: it stays on the bare lent walk.
        while unsafe { ffi::PyDict_Next(dict.as_ptr(), &mut at, &mut key, &mut value) } != 0 {
            if unsafe { ffi::PyUnicode_CheckExact(key) } == 0 {
                present.fill(0);
                self.spare.borrow_mut().listed = found;
                return Ok(false);
            }
            let number = match seen.known(key) {
                Some(number) => number,
                None => {
                    let key = unsafe { Bound::from_borrowed_ptr(py, key) };
                    seen.number(key.cast::<PyString>()?, numbers)?
                }
            };
            // `None` too for a content key (left out of `numbers`): the span's own attribute
            // under it is not read.
            let Some(number) = number else {
                continue;
            };
            if let Some(word) = present.get_mut(number as usize / 64) {
                *word |= 1 << (number % 64);
                found.push((number, unsafe { Bound::from_borrowed_ptr(py, value) }));
            }
        }
        // Content is worked out only when a condition tests it: until then it may be there.
        if let Some(content) = &self.table.content {
            for (word, content) in present.iter_mut().zip(content.keys.iter()) {
                *word |= content;
            }
        }
        *self.listed.borrow_mut() = Some(found);
        Ok(true)
    }
}

/// The Python `search` callable as the core's `Searcher`.
struct PySearcher<'a, 'py> {
    py: Python<'py>,
    search: &'a Py<PyAny>,
    calls: &'a AtomicU64,
}

impl Searcher for PySearcher<'_, '_> {
    type Error = PyErr;
    fn search(&mut self, regex: u32, text: &str) -> PyResult<bool> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.search.bind(self.py).call1((regex, text))?.is_truthy()
    }
}

fn condition(item: &Bound<'_, PyAny>, depth: usize) -> PyResult<Condition> {
    let [tag, a, b] = leading::<3>(item)?;
    let tag: String = tag.extract()?;
    Ok(match tag.as_str() {
        "exists" => Condition::Attr {
            key: a.extract()?,
            test: AttrTest::Exists(b.extract()?),
        },
        "equals" => Condition::Attr {
            key: a.extract()?,
            test: AttrTest::EqualsText(
                b.extract::<Vec<String>>()?
                    .into_iter()
                    .map(String::into_boxed_str)
                    .collect(),
            ),
        },
        "equals_host" => Condition::Attr {
            key: a.extract()?,
            test: AttrTest::EqualsHost(b.extract()?),
        },
        "regex" => Condition::Attr {
            key: a.extract()?,
            test: AttrTest::Regex(b.extract()?),
        },
        "span_name" => Condition::SpanName(a.extract()?),
        "scope" => Condition::Scope(a.extract()?),
        "kinds" => Condition::Kinds(a.extract()?),
        "status" => Condition::Status(a.extract()?),
        "child" => Condition::Child(Box::new(match_of(&a, depth + 1)?)),
        "parent" => Condition::Parent(Box::new(match_of(&a, depth + 1)?)),
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown condition {other:?}"
            )))
        }
    })
}

fn match_of(item: &Bound<'_, PyAny>, depth: usize) -> PyResult<Match> {
    if depth > otel_oracles_core::rules::MAX_CHILD_DEPTH + 1 {
        return Err(PyValueError::new_err("child conditions nested too deep"));
    }
    let [all, any] = leading::<2>(item)?;
    let conditions = |list: &Bound<'_, PyAny>| -> PyResult<Vec<Condition>> {
        list.try_iter()?
            .map(|cond| condition(&cond?, depth))
            .collect()
    };
    Ok(Match {
        all: conditions(&all)?,
        any: conditions(&any)?,
    })
}

#[pymethods]
impl RuleTable {
    /// `rules`: per rule in priority order `(all, any)`; `keys`: the attribute keys
    /// conditions name by number; `host_lists`: the `equals` value lists that are not all
    /// text; `regexes`: the patterns by number, which `search(number, text)` runs. A pattern
    /// that is no UTF-8 (lone surrogates) gets no plan: Python answers all its texts.
    /// `content`: `(reads, placeholders, dumps)` when a rule tests content: per read the
    /// key number that stands for it and its sources (`(tag, a, b)`, as in a read plan).
    #[new]
    #[pyo3(signature = (rules, keys, host_lists, regexes, search, content=None))]
    fn new(
        rules: &Bound<'_, PyAny>,
        keys: Vec<String>,
        host_lists: Vec<Bound<'_, PyList>>,
        regexes: Vec<Bound<'_, PyString>>,
        search: Py<PyAny>,
        content: Option<ContentData<'_>>,
    ) -> PyResult<Self> {
        let plans = regexes
            .iter()
            .map(|pattern| match pattern.to_str() {
                Ok(pattern) => RegexPlan::of(pattern),
                Err(_) => RegexPlan::host(),
            })
            .collect();
        let py = rules.py();
        let matches = rules
            .try_iter()?
            .map(|rule| match_of(&rule?, 0))
            .collect::<PyResult<Vec<_>>>()?;
        let interned: Vec<Py<PyString>> = keys
            .iter()
            .map(|key| PyString::intern(py, key).unbind())
            .collect();
        let content = match content {
            None => None,
            Some((reads, placeholders, dumps)) => {
                let mut origins: Vec<Option<Vec<Origin>>> = Vec::new();
                origins.resize_with(keys.len(), || None);
                for (number, sources) in reads {
                    let Some(slot) = origins.get_mut(number) else {
                        return Err(PyValueError::new_err("content read of no key"));
                    };
                    *slot = Some(
                        sources
                            .try_iter()?
                            .map(|source| origin(&source?))
                            .collect::<PyResult<Vec<_>>>()?,
                    );
                }
                let mut content_keys = vec![0u64; keys.len().div_ceil(64)].into_boxed_slice();
                for (number, origins) in origins.iter().enumerate() {
                    if let (Some(_), Some(word)) = (origins, content_keys.get_mut(number / 64)) {
                        *word |= 1 << (number % 64);
                    }
                }
                Some(Content {
                    keys: content_keys,
                    origins,
                    reader: RawReader::new(placeholders),
                    dumps,
                })
            }
        };
        // A content key is left out: a span's own attribute under it is never read, so the
        // listing passes it over as it does a key no condition tests.
        let numbers = PyDict::new(py);
        for (number, key) in interned.iter().enumerate() {
            let stands_for_content = content
                .as_ref()
                .and_then(|content| content.origins.get(number))
                .is_some_and(Option::is_some);
            if !stands_for_content {
                numbers.set_item(key.bind(py), number)?;
            }
        }
        let lists = u32::try_from(host_lists.len())
            .map_err(|_| PyValueError::new_err("too many value lists"))?;
        let mut table = CoreTable::new(
            matches,
            keys.into_iter().map(String::into_boxed_str).collect(),
            plans,
            lists,
        )
        .map_err(|err| PyValueError::new_err(err.0))?;
        // A content key is listed on every span (`present_keys`) whether or not its content
        // is there: the walk tests its conditions itself.
        if let Some(content) = &content {
            let unsure: Vec<u32> = (0u32..)
                .zip(content.origins.iter())
                .filter_map(|(number, origins)| origins.as_ref().map(|_| number))
                .collect();
            table.recheck_keys(&unsure);
        }
        Ok(Self {
            table,
            keys: interned,
            numbers: numbers.unbind(),
            host_lists: host_lists.into_iter().map(Bound::unbind).collect(),
            search,
            memo: Mutex::new(RegexMemo::new()),
            seen: Mutex::new(SeenKeys::default()),
            host_searches: AtomicU64::new(0),
            content,
        })
    }

    /// Per span of `spans`, the number of the first rule it matches, or -1. `children` is
    /// `Trace.children` (span id -> direct children), read by child conditions only; parent
    /// conditions look a span's `parent_span_id` up among `spans` (their `span_id`s).
    fn select(&self, spans: &Bound<'_, PyAny>, children: &Bound<'_, PyDict>) -> PyResult<Vec<i64>> {
        let py = spans.py();
        // Interned once for the process (`intern!`): made per call, they cost ~5,000
        // instructions a trace.
        let names = Names {
            name: intern!(py, "name").clone(),
            scope_name: intern!(py, "scope_name").clone(),
            kind: intern!(py, "kind").clone(),
            status_code: intern!(py, "status_code").clone(),
            attributes: intern!(py, "attributes").clone(),
            span_id: intern!(py, "span_id").clone(),
            parent_span_id: intern!(py, "parent_span_id").clone(),
        };
        // `trace.spans` is a list: read it as one (a generic iterator asks the list for its
        // length hint through a Python call).
        let spans = match spans.cast::<PyList>() {
            Ok(list) => list.iter().collect(),
            Err(_) => spans.try_iter()?.collect::<PyResult<Vec<_>>>()?,
        };
        let family = Family {
            spans,
            by_id: OnceCell::new(),
        };
        let mut searcher = PySearcher {
            py,
            search: &self.search,
            calls: &self.host_searches,
        };
        // The searcher runs Python code, which may let another thread select with this
        // table: that thread then uses a memo of its own rather than wait for this one.
        let mut own = RegexMemo::new();
        let mut guard = match self.memo.try_lock() {
            Ok(memo) => Some(memo),
            Err(TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        };
        let memo = match guard.as_deref_mut() {
            Some(memo) => memo,
            None => &mut own,
        };
        // The same for the key numbers (taken out of the lock for the call, put back after).
        let mut seen_guard = match self.seen.try_lock() {
            Ok(seen) => Some(seen),
            Err(TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        };
        let seen = RefCell::new(
            seen_guard
                .as_deref_mut()
                .map(std::mem::take)
                .unwrap_or_default(),
        );
        let spare = RefCell::new(Spare {
            listed: Vec::with_capacity(8),
            read: Vec::new(),
        });
        let mut out = Vec::with_capacity(family.spans.len());
        let mut found = Ok(());
        for span in &family.spans {
            let index = PySpan::new(
                self,
                &names,
                span.clone(),
                Some(children),
                Some(&family),
                &seen,
                &spare,
            )
            .and_then(|span| self.table.select(&span, &mut searcher, memo));
            match index {
                Ok(index) => out.push(index.map_or(-1, |i| i64::try_from(i).unwrap_or(-1))),
                Err(err) => {
                    found = Err(err);
                    break;
                }
            }
        }
        if let Some(kept) = seen_guard.as_deref_mut() {
            *kept = seen.into_inner();
        }
        found.map(|()| out)
    }

    /// How many distinct texts the regex memo holds now (at most `RULE_MEMO_TEXTS`).
    #[getter]
    fn remembered_texts(&self) -> usize {
        self.memo.try_lock().map_or(0, |memo| memo.len())
    }

    /// How many times the table has called `search` (the texts its regex plans could not
    /// answer and its memo did not remember).
    #[getter]
    fn host_searches(&self) -> u64 {
        self.host_searches.load(Ordering::Relaxed)
    }

    /// How many rules the table holds.
    fn __len__(&self) -> usize {
        self.table.len()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("RULE_MEMO_TEXTS", otel_oracles_core::rules::MEMO_TEXTS)?;
    m.add_class::<RuleTable>()
}
