//! The cut length of a trace (`otel_oracles.mapping._limits`, `cut_length`): the longest
//! text values among the attributes the mapping reads, and whether enough different texts
//! share that length for it to be an SDK's value length limit.
//!
//! `SourceScan` is where one rule reads a span (`CompiledRule.source_attrs`,
//! `source_prefixes`, `source_events`), made once per rule; `cut_length` reads, for every
//! drafted span (drafts read here, no Python loop), the values of its rule's sources as recorded (attributes named by a source,
//! attributes under a source's prefix, the attributes of span events a source reads, never
//! log records, which the span limits do not cut) and every `str` nested in them in `dict`
//! values, `list`s and `tuple`s (exact types; keys left out). What it decides, as
//! `_limits.py` describes it:
//!
//! - the longest text: the greatest length (in code points, as `len()` counts) of the
//!   strings holding a space;
//! - its texts: the different strings of that length, compared with their ASCII digits
//!   removed (one message with a counter is one text), counted up to `min_values`;
//! - the longest word: the greatest length of the strings without a space (ids, names,
//!   hashes), which rules a cut out when longer than the longest text.
//!
//! The cut length is the longest text's length when it is at least `min_length`, at least
//! `min_values` different texts have it and no word is longer. Only the values of matching
//! keys are read (a decoder may convert values lazily), each string's length first: most
//! are shorter than the longest text seen and need no more.

use otel_oracles_core::hashing::FastSet;

use crate::draft::{draft_attr, draft_held, ATTRIBUTES, FIELDS, FOLLOWS, RULE, SPAN, SYNTHESIZED};
use crate::pydict;
use crate::slots::{span, span_held};
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyFrozenSet, PyInt, PyList, PyString, PyTuple};

/// Where one rule reads a span: attribute keys, key prefixes, span events.
#[pyclass(module = "otel_oracles._native", name = "SourceScan", frozen)]
pub struct SourceScan {
    /// The keys, looked up as Python looks them up.
    keys_py: Py<PyFrozenSet>,
    /// Whether every key is an exact `str`: an exact `str` is then looked up in `keys_py`
    /// by `str`'s own hash and comparison, no Python code run (`see_str_keyed`).
    plain: bool,
    /// The prefixes, as `str.startswith` tests them.
    prefixes: Vec<Py<PyString>>,
    /// The same, as a `str` subclass's own `startswith` takes them.
    prefixes_py: Py<PyTuple>,
    events: Vec<EventSource>,
}

/// One span-event source: the event names (the UTF-8 ones, and all as Python compares them)
/// and the attribute read (`None`: all of them).
struct EventSource {
    names: FastSet<String>,
    names_py: Py<PyFrozenSet>,
    key: Option<Py<PyString>>,
}

/// An event source as Python hands it over: its names and the attribute read.
type EventArg<'py> = (Vec<Bound<'py, PyString>>, Option<Bound<'py, PyString>>);

/// The UTF-8 texts among `items` (each a `str`).
fn utf8_texts<'py>(items: impl Iterator<Item = Bound<'py, PyAny>>) -> PyResult<Vec<String>> {
    let mut out = Vec::new();
    for item in items {
        if let Ok(text) = item.cast::<PyString>()?.to_str() {
            out.push(text.to_owned());
        }
    }
    Ok(out)
}

#[pymethods]
impl SourceScan {
    /// `keys`: attributes read (`attr`, `attrs`); `prefixes`: flattened attributes' prefixes
    /// (`attr_prefix`, matched as `str.startswith` matches); `events`: per span-event source
    /// its names and the attribute it reads, `None` for all of them.
    #[new]
    fn new(
        keys: Bound<'_, PyFrozenSet>,
        prefixes: Vec<Bound<'_, PyString>>,
        events: Vec<EventArg<'_>>,
    ) -> PyResult<Self> {
        let py = keys.py();
        let mut scan_events = Vec::new();
        for (names, key) in events {
            let names_py = PyFrozenSet::new(py, &names)?.unbind();
            let own = utf8_texts(names.into_iter().map(Bound::into_any))?;
            scan_events.push(EventSource {
                names: own.into_iter().collect(),
                names_py,
                key: key.map(Bound::unbind),
            });
        }
        Ok(Self {
            plain: keys
                .iter()
                .all(|key| key.is_exact_instance_of::<PyString>()),
            keys_py: keys.unbind(),
            prefixes_py: PyTuple::new(py, &prefixes)?.unbind(),
            prefixes: prefixes.into_iter().map(Bound::unbind).collect(),
            events: scan_events,
        })
    }
}

impl SourceScan {
    /// Whether the attribute `key` is one of the sources (`key in keys or
    /// key.startswith(prefixes)`). For an exact `str` key of a `plain` scan, no Python code
    /// runs and no object is made (the walk of a dict's lent pairs relies on it).
    fn reads(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        if !key.is_instance_of::<PyString>() {
            return Ok(false);
        }
        let py = key.py();
        // The set as Python looks it up: a key `str` caches its hash, and decoders make one
        // object per key, so this is one probe per key, no text hashed.
        if self.keys_py.bind(py).contains(key)? {
            return Ok(true);
        }
        if self.prefixes.is_empty() {
            return Ok(false);
        }
        if !key.is_exact_instance_of::<PyString>() {
            // A subclass: its own `startswith`, as Python calls it.
            return key
                .call_method1(intern!(py, "startswith"), (self.prefixes_py.bind(py),))?
                .is_truthy();
        }
        for prefix in &self.prefixes {
            // SAFETY: `key` and `prefix` are live `str`s. `PyUnicode_Tailmatch` is the test
            // `str.startswith` makes of each prefix, on the characters as they are (lone
            // surrogates too): nothing encoded, no object made, no exception but a failed
            // `str` check.
            match unsafe {
                ffi::PyUnicode_Tailmatch(key.as_ptr(), prefix.as_ptr(), 0, ffi::PY_SSIZE_T_MAX, -1)
            } {
                0 => {}
                1 => return Ok(true),
                _ => return Err(PyErr::fetch(py)),
            }
        }
        Ok(false)
    }
}

/// The longest texts seen.
struct Longest<'py> {
    longest: usize,
    longest_word: usize,
    /// The different texts of the longest length, at most `min_values`.
    at_longest: Vec<Seen<'py>>,
    min_values: usize,
    /// The containers `see` has still to read, kept from value to value (empty between
    /// them) so that a value allocates nothing.
    stack: Vec<Bound<'py, PyAny>>,
}

/// A text of the longest length. Its comparison key (the text with its ASCII digits
/// removed) is made only when another text of the same length has to be compared with it:
/// most texts that were the longest for a while are passed by a longer one before any tie.
enum Seen<'py> {
    /// A UTF-8 `str`, its key not made yet.
    Text(Bound<'py, PyString>),
    /// The key.
    Key(Vec<u8>),
}

/// Whether `value` is a container `Longest::see` reads: an exact `dict`, `list` or `tuple`.
#[inline]
fn holds_texts(value: &Bound<'_, PyAny>) -> bool {
    value.is_exact_instance_of::<PyDict>()
        || value.is_exact_instance_of::<PyList>()
        || value.is_exact_instance_of::<PyTuple>()
}

/// `raw` without its ASCII digits (one message with a counter is one text).
fn digitless(raw: &[u8]) -> Vec<u8> {
    let mut key = Vec::with_capacity(raw.len());
    for run in raw.split(u8::is_ascii_digit) {
        key.extend_from_slice(run);
    }
    key
}

impl<'py> Seen<'py> {
    fn key(&mut self) -> PyResult<&[u8]> {
        if let Seen::Text(text) = self {
            *self = Seen::Key(digitless(text.to_str()?.as_bytes()));
        }
        match self {
            Seen::Key(key) => Ok(key),
            Seen::Text(_) => unreachable!("made a key above"),
        }
    }
}

impl<'py> Longest<'py> {
    /// Every `str` in `value`, nested in `dict` values, `list`s and `tuple`s. Seeing a
    /// value again changes nothing (a text already among the longest is not added twice).
    fn see(&mut self, value: &Bound<'py, PyAny>) -> PyResult<()> {
        // Most values are a `str`: seen without a stack or a reference to take; a number or
        // any other value that holds no text is done with here.
        if let Ok(text) = value.cast_exact::<PyString>() {
            return self.see_str(text);
        }
        if !holds_texts(value) {
            return Ok(());
        }
        let mut stack = std::mem::take(&mut self.stack);
        stack.push(value.clone());
        let seen = self.see_stacked(&mut stack);
        stack.clear(); // after an error, what was left unread
        self.stack = stack;
        seen
    }

    /// The containers on `stack` and all they hold: a `str` item seen where it sits, a
    /// container item stacked (the order of the items does not change what is seen).
    fn see_stacked(&mut self, stack: &mut Vec<Bound<'py, PyAny>>) -> PyResult<()> {
        while let Some(item) = stack.pop() {
            if let Ok(dict) = item.cast_exact::<PyDict>() {
                // SAFETY: the dict is held (`item`) and its lent pairs are read only by code
                // that runs no Python code, as in `see_str_keyed`: an exact `str`'s length and
                // `see_text` of a UTF-8 text; a container is stacked with a reference of its
                // own. A text that is no UTF-8 (`see_text` says so after making an exception,
                // an allocation the collector may run finalizers on) is read again, held.
                let mut pairs = unsafe { pydict::lent_pairs(dict) };
                while let Some((key, value)) = pairs.next() {
                    if let Ok(text) = value.cast_exact::<PyString>() {
                        let size = pydict::code_points(&text);
                        if size >= self.longest && !self.see_text(&text, size)? {
                            let (_, value) = pairs.again(key.as_ptr())?;
                            self.see_item(&value, stack)?;
                        }
                    } else if holds_texts(&value) {
                        stack.push(value.to_owned());
                    }
                }
            } else if let Ok(list) = item.cast_exact::<PyList>() {
                for value in list.iter() {
                    self.see_item(&value, stack)?;
                }
            } else if let Ok(tuple) = item.cast_exact::<PyTuple>() {
                for value in tuple.iter() {
                    self.see_item(&value, stack)?;
                }
            }
        }
        Ok(())
    }

    /// One item of a container, held (a `str` with lone surrogates is read by `see_surrogates`,
    /// which may run Python code): a `str` seen, a container stacked, anything else left.
    #[inline]
    fn see_item(
        &mut self,
        value: &Bound<'py, PyAny>,
        stack: &mut Vec<Bound<'py, PyAny>>,
    ) -> PyResult<()> {
        if let Ok(text) = value.cast_exact::<PyString>() {
            return self.see_str(text);
        }
        if holds_texts(value) {
            stack.push(value.clone());
        }
        Ok(())
    }

    /// One `str`: only one at least as long as the longest text so far can change anything.
    fn see_str(&mut self, text: &Bound<'py, PyString>) -> PyResult<()> {
        let size = pydict::code_points(text);
        if size >= self.longest && !self.see_text(text, size)? {
            self.see_surrogates(text, size)?;
        }
        Ok(())
    }

    /// One `str` of `size` characters, at least as long as the longest text: `false` when
    /// it is no UTF-8 and was left unread, for `see_surrogates`. Telling so made an
    /// exception (`to_str`), an allocation on which a collection may run finalizers: the
    /// exception holds the text while it is made, but a text lent by a dict may be gone
    /// once it is dropped, and is read again, held, by the caller.
    fn see_text(&mut self, text: &Bound<'py, PyString>, size: usize) -> PyResult<bool> {
        // A text as long as the longest, once enough texts have that length, changes
        // nothing unless it is a word longer than the longest word: no need to read it.
        if size == self.longest
            && self.at_longest.len() >= self.min_values
            && size <= self.longest_word
        {
            return Ok(true);
        }
        let Ok(own) = text.to_str() else {
            return Ok(false);
        };
        self.see_read(text, size, own.contains(' '), None)?;
        Ok(true)
    }

    /// `see_text` of a text with lone surrogates (no UTF-8): Python's test, and its bytes
    /// with the surrogates kept.
    fn see_surrogates(&mut self, text: &Bound<'py, PyString>, size: usize) -> PyResult<()> {
        let py = text.py();
        let encoded = text
            .call_method1(intern!(py, "encode"), ("utf-8", "surrogatepass"))?
            .cast_into::<PyBytes>()?;
        let spaced = text.contains(" ")?;
        self.see_read(text, size, spaced, Some(encoded.as_bytes().to_vec()))
    }

    /// A text read: whether it holds a space, and its bytes when it is no UTF-8.
    fn see_read(
        &mut self,
        text: &Bound<'py, PyString>,
        size: usize,
        spaced: bool,
        bytes: Option<Vec<u8>>,
    ) -> PyResult<()> {
        if !spaced {
            self.longest_word = self.longest_word.max(size);
            return Ok(());
        }
        if size < self.longest || (size == self.longest && self.at_longest.len() >= self.min_values)
        {
            return Ok(());
        }
        let seen = match bytes {
            Some(bytes) => Seen::Key(digitless(&bytes)),
            None => Seen::Text(text.clone()),
        };
        if size > self.longest {
            self.longest = size;
            self.at_longest.clear();
            self.at_longest.push(seen);
            return Ok(());
        }
        let key = match seen {
            Seen::Key(key) => key,
            Seen::Text(text) => digitless(text.to_str()?.as_bytes()),
        };
        for other in &mut self.at_longest {
            if other.key()? == key.as_slice() {
                return Ok(());
            }
        }
        self.at_longest.push(Seen::Key(key));
        Ok(())
    }
}

/// What each rule's `SourceScan::reads` said of each attribute key, for one `cut_length`:
/// a trace's spans share their keys (a decoder makes one object per key) and a few rules,
/// so most keys are asked about again and again, and a key's answer costs a set probe and
/// a prefix walk. Asked by address, in a direct-mapped table (`MEMO_SLOTS` entries, one
/// multiply to place a pair: a hashed map's probe cost some 70 instructions an attribute);
/// a pair whose entry another took is asked of the scan again. `held` keeps every key asked
/// about alive for the call, so an address names one object throughout (the scans asked
/// with are held by `cut_length_with`'s list of them for the whole call).
struct ReadsMemo<'a, 'py> {
    table: &'a mut MemoTable,
    held: Vec<Bound<'py, PyAny>>,
}

/// `ReadsMemo`'s entries, kept from call to call (clearing 1,024 entries cost more than a
/// trace's lookups): an entry is the scan's address, the key's with its lowest bit (0 in an
/// object's address) set when the scan reads it, and the number of the call that wrote it;
/// only the current call's entries answer.
struct MemoTable {
    call: usize,
    said: Vec<[usize; 3]>,
}

impl MemoTable {
    const fn new() -> Self {
        Self {
            call: 0,
            said: Vec::new(),
        }
    }

    /// The table for a new call: no entry written before answers.
    fn next_call(&mut self) -> &mut Self {
        if self.said.is_empty() {
            self.said = vec![[0; 3]; MEMO_SLOTS];
        }
        self.call += 1;
        self
    }
}

thread_local! {
    /// The thread's `MemoTable` (a `cut_length` called again from inside one, through a
    /// key's own `startswith`, makes a table of its own).
    static MEMO: std::cell::RefCell<MemoTable> = const { std::cell::RefCell::new(MemoTable::new()) };
}

/// `ReadsMemo`'s entries (a power of two): a trace's spans name a few hundred different
/// (rule, key) pairs at most.
const MEMO_BITS: u32 = 10;
const MEMO_SLOTS: usize = 1 << MEMO_BITS;

impl<'py> ReadsMemo<'_, 'py> {
    #[inline]
    fn reads(&mut self, scan: &Bound<'py, SourceScan>, key: &Bound<'py, PyAny>) -> PyResult<bool> {
        let (at_scan, at_key) = (scan.as_ptr() as usize, key.as_ptr() as usize);
        // Fibonacci hashing of both addresses: the top bits of the product place the pair.
        let mixed = ((at_key ^ at_scan.rotate_left(29)) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let slot = (mixed >> (u64::BITS - MEMO_BITS)) as usize;
        let call = self.table.call;
        let [scan_held, key_held, written] = self.table.said[slot];
        if scan_held == at_scan && key_held & !1 == at_key && written == call {
            return Ok(key_held & 1 == 1);
        }
        // Held before the scan is asked, which may run Python code (a key looked up by a
        // `str` subclass's `__eq__`): the addresses are the objects' throughout.
        self.held.push(scan.clone().into_any());
        self.held.push(key.clone());
        let reads = scan.get().reads(key)?;
        self.table.said[slot] = [at_scan, at_key | usize::from(reads), call];
        Ok(reads)
    }
}

/// The values of `attributes` (a mapping) under the keys `scan` reads, each seen.
fn see_attributes<'py>(
    longest: &mut Longest<'py>,
    memo: &mut ReadsMemo<'_, 'py>,
    scan: &Bound<'py, SourceScan>,
    attributes: &Bound<'py, PyAny>,
) -> PyResult<()> {
    if let Ok(dict) = attributes.cast_exact::<PyDict>() {
        if see_str_keyed(longest, memo, scan, dict)? {
            return Ok(());
        }
        // A key that is no exact `str`, or a scan that compares its keys by their own code:
        // the whole dict again, each item with a reference of its own (values seen twice
        // change nothing), as Python iterates it.
        for pair in pydict::held_pairs(dict) {
            let (key, value) = pair?;
            if memo.reads(scan, &key)? {
                longest.see(&value)?;
            }
        }
        return Ok(());
    }
    for key in attributes.try_iter()? {
        let key = key?;
        if memo.reads(scan, &key)? {
            longest.see(&attributes.get_item(&key)?)?;
        }
    }
    Ok(())
}

/// `see_attributes` over an exact `dict` whose keys are exact `str`s (the decoders'), its
/// items as the dict lends them (`pydict::lent_pairs`: no reference taken or released per
/// key and value); `false` at the first key of any other type, before anything is done
/// with it, and for a scan whose keys are not all exact `str`s (looked up by their own
/// `__eq__`).
///
/// Lent pairs are read only by code that runs no Python code: `str`'s length, the memo and
/// `SourceScan::reads` (a `plain` scan: `str`'s own hash, comparison and prefix test),
/// `see_text` of a UTF-8 text. The two calls that may run some (through an allocation the
/// collector may run finalizers on, which can change the dict) are rare and made safe: a
/// text that is no UTF-8 (`see_text` says so after making an exception) is read again from
/// the dict, held; a container's values are walked held (`see`: a `dict`'s values are
/// listed), and the pair then checked still there. A dict whose keys changed meanwhile is
/// refused as iterating it in Python refuses it (`RuntimeError`).
fn see_str_keyed<'py>(
    longest: &mut Longest<'py>,
    memo: &mut ReadsMemo<'_, 'py>,
    scan: &Bound<'py, SourceScan>,
    dict: &Bound<'py, PyDict>,
) -> PyResult<bool> {
    if !scan.get().plain {
        return Ok(false);
    }
    // SAFETY: as above, no lent pair is read after a call that may run Python code.
    let mut pairs = unsafe { pydict::lent_pairs(dict) };
    while let Some((key, value)) = pairs.next() {
        if !key.is_exact_instance_of::<PyString>() {
            return Ok(false);
        }
        // An exact `str` shorter than the longest text changes nothing whether the scan
        // reads its key or not (`see_str`): most values are, once a trace's first long
        // text is seen, so their key is not asked about (the memo's probe was most of the
        // walk's cost an attribute).
        if let Ok(text) = value.cast_exact::<PyString>() {
            let size = pydict::code_points(&text);
            if size >= longest.longest
                && memo.reads(scan, &key)?
                && !longest.see_text(&text, size)?
            {
                let (_, value) = pairs.again(key.as_ptr())?;
                longest.see(&value)?;
            }
            continue;
        }
        // Any other value but a container holds no text: its key is not asked about.
        if !holds_texts(&value) {
            continue;
        }
        if memo.reads(scan, &key)? {
            let key = key.as_ptr();
            longest.see(&value)?;
            pairs.again(key)?;
        }
    }
    Ok(true)
}

/// The values of the span events `scan` reads (log-based events left out), each seen.
fn see_events<'py>(
    longest: &mut Longest<'py>,
    scan: &SourceScan,
    span: &Bound<'py, PyAny>,
) -> PyResult<()> {
    if scan.events.is_empty() {
        return Ok(());
    }
    let py = span.py();
    let events = span_held(span, span::EVENTS, intern!(py, "events"))?;
    if events.len().unwrap_or(1) == 0 {
        return Ok(());
    }
    for event in events.try_iter()? {
        let event = event?;
        let name = event.getattr(intern!(py, "name"))?;
        let text = name.cast::<PyString>().ok().map(|n| n.to_str());
        for source in &scan.events {
            let named = match &text {
                Some(Ok(text)) => source.names.contains(*text),
                _ => source.names_py.bind(py).contains(&name)?, // as Python compares it
            };
            if !named || event.getattr(intern!(py, "from_log"))?.is_truthy()? {
                continue;
            }
            let attributes = event.getattr(intern!(py, "attributes"))?;
            match &source.key {
                None => {
                    let values = match attributes.cast_exact::<PyDict>() {
                        Ok(dict) => dict.values().into_any(),
                        Err(_) => attributes.call_method0(intern!(py, "values"))?,
                    };
                    for value in values.try_iter()? {
                        longest.see(&value?)?;
                    }
                }
                Some(key) => {
                    let value = pydict::get(&attributes, key.bind(py))?;
                    longest.see(&value)?;
                }
            }
        }
    }
    Ok(())
}

/// The cut length of the spans of `drafts` (each a draft of `mapping._mapper`: its `span`,
/// `None` for a call seen only in a model's messages, `synthesized`, and its rule's
/// `source_scan`; synthesized drafts and drafts without a span are left out), or `None` when
/// they show none (the module's doc says how).
#[pyfunction]
pub(crate) fn cut_length(
    drafts: &Bound<'_, PyAny>,
    min_values: usize,
    min_length: usize,
) -> PyResult<Option<usize>> {
    cut_length_of(&pydict::items(drafts)?, min_values, min_length)
}

fn cut_length_of<'py>(
    drafts: &[Bound<'py, PyAny>],
    min_values: usize,
    min_length: usize,
) -> PyResult<Option<usize>> {
    let longest = Longest {
        longest: 0,
        longest_word: 0,
        at_longest: Vec::new(),
        min_values,
        stack: Vec::new(),
    };
    MEMO.with(|cell| match cell.try_borrow_mut() {
        Ok(mut table) => cut_length_with(drafts, longest, table.next_call(), min_length),
        Err(_) => cut_length_with(drafts, longest, MemoTable::new().next_call(), min_length),
    })
}

/// `cut_length_of` with the table the call's answers are kept in.
fn cut_length_with<'py>(
    drafts: &[Bound<'py, PyAny>],
    mut longest: Longest<'py>,
    table: &mut MemoTable,
    min_length: usize,
) -> PyResult<Option<usize>> {
    let min_values = longest.min_values;
    let mut memo = ReadsMemo {
        table,
        held: Vec::new(),
    };
    // Each rule's scan, read from the rule once per call (by the rule's address; the rule
    // is kept alive with it): a trace's drafts share a few rules, and a generic attribute
    // read of the rule cost more than the walk of its span's attributes.
    let mut scans: Vec<(Bound<'py, PyAny>, Bound<'py, SourceScan>)> = Vec::new();
    for draft in drafts {
        let py = draft.py();
        let span = draft_held(draft, SPAN, intern!(py, "span"))?;
        if span.is_none()
            || draft_held(draft, SYNTHESIZED, intern!(py, "synthesized"))?.is_truthy()?
        {
            continue;
        }
        let rule = draft_held(draft, RULE, intern!(py, "rule"))?;
        let scan = match scans.iter().find(|(held, _)| held.is(&*rule)) {
            Some((_, scan)) => scan.clone(),
            None => {
                let scan = rule
                    .getattr(intern!(py, "source_scan"))?
                    .cast_into::<SourceScan>()?;
                scans.push((rule.into_bound(), scan.clone()));
                scan
            }
        };
        let attributes = span_held(&span, span::ATTRIBUTES, intern!(py, "attributes"))?;
        see_attributes(&mut longest, &mut memo, &scan, &attributes)?;
        see_events(&mut longest, scan.get(), &span)?;
    }
    let cut = longest.longest >= min_length
        && longest.at_longest.len() >= min_values
        && longest.longest_word <= longest.longest;
    Ok(cut.then_some(longest.longest))
}

/// `value` with its strings exactly `length` long (code points, as `len()` counts) replaced
/// by `None`, or `None` when none is: a `str` itself, nested in the values of a `dict`
/// (subclasses read through their `items()`; the copy is a plain `dict`) and in `list`s and
/// `tuple`s (the copy is a `list`). A new container is made only where one changed.
fn without_cut<'py>(
    value: &Bound<'py, PyAny>,
    length: usize,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = value.py();
    if value.is_exact_instance_of::<PyString>() {
        return Ok((value.len()? == length).then(|| py.None().into_bound(py)));
    }
    if value.is_instance_of::<PyDict>() {
        let pairs: Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)> = match value.cast_exact::<PyDict>()
        {
            Ok(dict) => dict.iter().collect(),
            Err(_) => value
                .call_method0(intern!(py, "items"))?
                .try_iter()?
                .map(|pair| pair?.extract())
                .collect::<PyResult<_>>()?,
        };
        let mut changed = false;
        let mut kept = Vec::with_capacity(pairs.len());
        for (key, item) in pairs {
            match without_cut(&item, length)? {
                Some(new) => {
                    changed = true;
                    kept.push((key, new));
                }
                None => kept.push((key, item)),
            }
        }
        if !changed {
            return Ok(None);
        }
        let out = PyDict::new(py);
        for (key, item) in kept {
            out.set_item(key, item)?;
        }
        return Ok(Some(out.into_any()));
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let items = value.try_iter()?.collect::<PyResult<Vec<_>>>()?;
        let mut changed = false;
        let mut kept = Vec::with_capacity(items.len());
        for item in items {
            match without_cut(&item, length)? {
                Some(new) => {
                    changed = true;
                    kept.push(new);
                }
                None => kept.push(item),
            }
        }
        return Ok(changed
            .then(|| PyList::new(py, kept))
            .transpose()?
            .map(Bound::into_any));
    }
    Ok(None)
}

/// `count > 0` as Python answers it: an exact `int` (a decoder's count) compared here, read
/// in the object (a rich comparison through the interpreter cost ~130 instructions a span),
/// anything else compared by Python.
fn positive(count: &Bound<'_, PyAny>) -> PyResult<bool> {
    if count.is_exact_instance_of::<PyInt>() {
        if let Ok(count) = count.extract::<i64>() {
            return Ok(count > 0);
        }
    }
    count.gt(0)
}

/// What a trace's limits left out, made visible on its drafts (`mapping._limits`, whose
/// module doc says why): the names it writes and reads, given once by `_limits.py`.
#[pyclass(module = "otel_oracles._native", name = "LimitRules", frozen)]
pub struct LimitRules {
    /// The step fields holding content a cut value reaches (`CONTENT_FIELDS`).
    content_fields: Vec<Py<PyString>>,
    /// Content a mapping keeps among a step's attributes (`CONTENT_ATTRIBUTES`).
    content_attributes: Vec<Py<PyString>>,
    /// `CUT_ATTRIBUTE`, `DROPPED_ATTRIBUTES`, `DROPPED_EVENTS`.
    cut_attribute: Py<PyString>,
    dropped_attributes: Py<PyString>,
    dropped_events: Py<PyString>,
    /// `OVERWRITES_COUNTED`: SDK languages whose drop count also counts overwritten keys.
    overwrites_counted: Py<PyFrozenSet>,
    min_values: usize,
    min_length: usize,
}

#[pymethods]
impl LimitRules {
    #[new]
    #[allow(clippy::too_many_arguments)]
    fn new(
        content_fields: Vec<Py<PyString>>,
        content_attributes: Vec<Py<PyString>>,
        cut_attribute: Py<PyString>,
        dropped_attributes: Py<PyString>,
        dropped_events: Py<PyString>,
        overwrites_counted: Py<PyFrozenSet>,
        min_values: usize,
        min_length: usize,
    ) -> Self {
        Self {
            content_fields,
            content_attributes,
            cut_attribute,
            dropped_attributes,
            dropped_events,
            overwrites_counted,
            min_values,
            min_length,
        }
    }

    /// `apply_limits`: over `drafts` and the synthesized calls after each (`follows`), the
    /// cut length found, its values dropped (`drop_cut_values`), and the counts of
    /// attributes (`lost_attributes` of `spans`) and events lost recorded on the drafts of
    /// the spans that lost them.
    fn apply(&self, spans: &Bound<'_, PyAny>, drafts: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = spans.py();
        // The mapper's list of drafts: room for them all and a few synthesized calls, where
        // growing from empty reallocated some four times a trace.
        let room = drafts
            .cast_exact::<PyList>()
            .map_or(0, |list| list.len() + 4);
        let mut all = Vec::with_capacity(room);
        // The list read in place and each `follows` (a list, most of them empty) by its
        // length, where an iterator and a truth test through the interpreter were made.
        pydict::for_each_item(drafts, |draft| {
            let follows = draft_attr(&draft, FOLLOWS, intern!(py, "follows"))?;
            all.push(draft);
            all.extend(pydict::items_of(&follows)?);
            Ok(())
        })?;
        if let Some(length) = cut_length_of(&all, self.min_values, self.min_length)? {
            self.drop_cut(&all, length)?;
        }
        let lost = self.lost_attributes(spans)?;
        let (span_key, span_id) = (intern!(py, "span"), intern!(py, "span_id"));
        let events_key = intern!(py, "dropped_events");
        for draft in &all {
            let span = draft_held(draft, SPAN, span_key)?;
            if span.is_none() {
                continue;
            }
            let mut attributes = None;
            if !lost.is_empty() {
                if let Some(count) = lost.get_item(&*span_held(&span, span::SPAN_ID, span_id)?)? {
                    let own = draft_held(draft, ATTRIBUTES, intern!(py, "attributes"))?;
                    own.set_item(self.dropped_attributes.bind(py), count)?;
                    attributes = Some(own);
                }
            }
            let events = span_held(&span, span::DROPPED_EVENTS, events_key)?;
            if positive(&events)? {
                let own = match attributes {
                    Some(own) => own,
                    None => draft_held(draft, ATTRIBUTES, intern!(py, "attributes"))?,
                };
                own.set_item(self.dropped_events.bind(py), &*events)?;
            }
        }
        Ok(())
    }

    /// `drop_cut_values`: every content value exactly `length` long dropped from `drafts`.
    fn drop_cut_values(&self, drafts: &Bound<'_, PyAny>, length: usize) -> PyResult<()> {
        self.drop_cut(&pydict::items(drafts)?, length)
    }

    /// `lost_attributes`: span id -> attributes lost, for the spans whose reported drops
    /// are a loss.
    fn lost_attributes<'py>(&self, spans: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
        let py = spans.py();
        let out = PyDict::new(py);
        // A trace's spans are a `list`, read in place: collecting them through an iterator
        // asked Python for its length hint on each growth of the `Vec` (pyo3's `size_hint`,
        // ~1,000 instructions a call through `operator.length_hint`, ~4 a trace).
        let spans = pydict::items(spans)?;
        let dropped_key = intern!(py, "dropped_attributes");
        let mut reporting = Vec::new();
        for span in &spans {
            let dropped = span_held(span, span::DROPPED_ATTRIBUTES, dropped_key)?;
            if positive(&dropped)? {
                reporting.push((span, dropped.into_bound()));
            }
        }
        if reporting.is_empty() {
            return Ok(out);
        }
        let attributes_key = intern!(py, "attributes");
        let most = PyDict::new(py);
        for span in &spans {
            let key = service(span)?;
            let size = span.getattr(attributes_key)?.len()?;
            let before = match most.get_item(&key)? {
                Some(n) => n.extract::<usize>()?,
                None => 0,
            };
            most.set_item(key, before.max(size))?;
        }
        let overwrites = self.overwrites_counted.bind(py);
        for (span, dropped) in reporting {
            let language = pydict::get(
                &span.getattr(intern!(py, "resource"))?,
                intern!(py, "telemetry.sdk.language"),
            )?;
            let counts_overwrites = language.hash().is_ok() && overwrites.contains(&language)?;
            if !counts_overwrites
                || span.getattr(attributes_key)?.len()?
                    >= most.as_any().get_item(service(span)?)?.extract::<usize>()?
            {
                out.set_item(
                    span_held(span, span::SPAN_ID, intern!(py, "span_id"))?,
                    dropped,
                )?;
            }
        }
        Ok(out)
    }
}

/// A span's service, as the drop counts are compared (`_service`): its resource's
/// `service.name` and `telemetry.sdk.language`.
fn service<'py>(span: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
    let py = span.py();
    let resource = span.getattr(intern!(py, "resource"))?;
    PyTuple::new(
        py,
        [
            pydict::get(&resource, intern!(py, "service.name"))?,
            pydict::get(&resource, intern!(py, "telemetry.sdk.language"))?,
        ],
    )
}

impl LimitRules {
    fn drop_cut(&self, drafts: &[Bound<'_, PyAny>], length: usize) -> PyResult<()> {
        for draft in drafts {
            let py = draft.py();
            let fields = draft_held(draft, FIELDS, intern!(py, "fields"))?;
            let attributes = draft_held(draft, ATTRIBUTES, intern!(py, "attributes"))?;
            let mut cut = false;
            for name in &self.content_fields {
                let name = name.bind(py);
                let value = pydict::get(&fields, name)?;
                if value.is_none() {
                    continue;
                }
                if value.is_exact_instance_of::<PyString>() && name.to_str()? == "arguments" {
                    // A cut arguments object no longer parses and stays text
                    // (`arguments_raw`), flagged so that nothing reads it as the whole input.
                    if value.len()? == length {
                        draft
                            .getattr(intern!(py, "redacted"))?
                            .call_method1(intern!(py, "add"), (name,))?;
                        cut = true;
                    }
                    continue;
                }
                if let Some(kept) = without_cut(&value, length)? {
                    fields.set_item(name, kept)?;
                    draft
                        .getattr(intern!(py, "redacted"))?
                        .call_method1(intern!(py, "add"), (name,))?;
                    cut = true;
                }
            }
            for name in &self.content_attributes {
                let name = name.bind(py);
                let value = pydict::get(&attributes, name)?;
                if !value.is_none() && without_cut(&value, length)?.is_some() {
                    attributes.del_item(name)?;
                    cut = true;
                }
            }
            if cut {
                attributes.set_item(self.cut_attribute.bind(py), length)?;
            }
        }
        Ok(())
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SourceScan>()?;
    m.add_class::<LimitRules>()?;
    m.add_function(wrap_pyfunction!(cut_length, m)?)?;
    Ok(())
}
