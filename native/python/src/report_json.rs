//! The JSON report's text: `json.dumps(value, indent=2, ensure_ascii=False)`, written in the
//! core.
//!
//! Python's encoder takes its pure-Python path whenever an indent is asked for, and the JSON
//! report dumps every verdict with one, so writing it was a large share of grading many
//! small traces. [`json_indented`] writes the same bytes for the values
//! `model_dump(mode="json")` makes: `None`, `bool`, `int`, `float`, `str`, and exact `list`,
//! `tuple` and `dict` with `str` keys. Anything else (another key or value type, a subclass
//! of a container, a string with lone surrogates, an integer beyond 64 bits, nesting deeper
//! than [`MAX_DEPTH`]) answers `None`, and its callers (grading oracles searching a value's
//! text) fall back to their own text.
//!
//! [`VerdictJson`] writes a whole verdict of the report straight from its model objects
//! (their `__dict__`s, read in field order), with each result's message and details passed
//! through the report's privacy filter ([`ShownFilter`]) as they are written (the message
//! rendered from its template, the details scrubbed into the text with no dict between),
//! and the report's `json_safe` applied as each
//! string is written: the report's text without Python building a dict of every verdict,
//! nor a `str` to be scanned and encoded. It is the report's only writer of verdicts, so it
//! writes every value as `json.dumps` does (big integers, NaN, subclasses, non-string keys)
//! and refuses what `json.dumps` refuses with the same error (a value of no JSON type, a
//! cycle); a model held otherwise than validation leaves it, and details or params that are
//! not plain JSON data, are first dumped by pydantic, as `model_dump(mode="json")` would.

use std::borrow::Cow;
use std::sync::Mutex;

use otel_oracles_core::json_text::{
    escape_surrogates, write_float_text, write_int, write_shown_string, write_string,
};
use pyo3::exceptions::{PyRecursionError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::pydict::instance_dict;
use crate::scrub::{surrogatepass_bytes, JudgedAt, ReadFields, ShownFilter};

/// Deepest nesting `json_indented` writes; deeper values are left to its caller (a value's
/// arguments are a few levels deep, so this bound only meets hostile or cyclic data).
const MAX_DEPTH: usize = 64;

/// Deepest nesting a verdict's text holds: deeper, the writer refuses with `RecursionError`,
/// as `json.dumps` (a generator per level) does past the interpreter's recursion limit. A
/// cycle is found before (`Circular reference detected`).
const REPORT_MAX_DEPTH: usize = 512;

/// What a [`Writer`] writes: `json_indented`'s plain data (anything else left), only what
/// the report's `_plain` called plain JSON data (anything else left to pydantic's dump), or
/// all `json.dumps` writes (its refusals raised).
const LEAVE: u8 = 0;
const PLAIN: u8 = 1;
const FULL: u8 = 2;

/// `json.dumps(value, indent=indent, ensure_ascii=False)`, or `None` when the value holds
/// anything this writer leaves to Python (see the module's text). With a `level`, every line
/// after the first is indented `level` more steps: the text as it sits inside `level`
/// enclosing containers.
#[pyfunction]
#[pyo3(signature = (value, indent, level = 0))]
pub(crate) fn json_indented(
    value: &Bound<'_, PyAny>,
    indent: usize,
    level: usize,
) -> Option<String> {
    let mut out = Vec::with_capacity(1024);
    let mut writer = Writer {
        indent,
        level,
        shown: false,
        open: Vec::new(),
        cache: None,
        lines: None,
        spare: Vec::new(),
    };
    writer.write::<LEAVE>(value, 0, &mut out).ok()?;
    // Every byte written came from a `str` read as UTF-8 or from ASCII; checked all the
    // same (~5% of writing the text), so that no writer change can make an invalid `String`.
    String::from_utf8(out).ok()
}

/// The report's text of `value`: `json.dumps(value, indent=2, ensure_ascii=False)` at
/// `level`, `json_safe`, as UTF-8, raising what `json.dumps` raises (a surrogate, which has
/// no UTF-8 text, written as its escape). The parts of the document around its
/// verdicts (input problems, notes, the exit code) are written with it.
#[pyfunction]
#[pyo3(signature = (value, level = 0))]
fn report_text<'py>(value: &Bound<'py, PyAny>, level: usize) -> PyResult<Bound<'py, PyBytes>> {
    let mut out = Vec::with_capacity(256);
    let mut writer = Writer {
        indent: INDENT,
        level,
        shown: true,
        open: Vec::new(),
        cache: None,
        lines: None,
        spare: Vec::new(),
    };
    match writer.write::<FULL>(value, 0, &mut out) {
        Ok(()) => Ok(PyBytes::new(value.py(), &out)),
        Err(Stop::Raised(err)) => Err(err),
        Err(Stop::Left) => Err(PyValueError::new_err("a value's text was left unwritten")),
    }
}

/// Why a text was not written: something in it is left to another writer, or writing it
/// (or asking for a result's shown fields) raised.
enum Stop {
    Left,
    Raised(PyErr),
}

impl From<PyErr> for Stop {
    fn from(err: PyErr) -> Self {
        Stop::Raised(err)
    }
}

/// A text left (`Stop::Left`) or an error raised.
type Written = Result<(), Stop>;

struct Writer {
    indent: usize,
    level: usize,
    /// Whether strings are written `json_safe` (`write_shown_string`), as the report's
    /// verdicts are, or as `json.dumps` writes them.
    shown: bool,
    /// The containers being written (`FULL`), by address: `json.dumps`'s markers.
    open: Vec<usize>,
    /// The shown texts of strings written before (`VerdictJson`'s writer only).
    cache: Option<Box<ShownCache>>,
    /// The lines of result fields and object members written before (`VerdictJson`'s
    /// writer only).
    lines: Option<Box<LineCache>>,
    /// A buffer kept from result to result (a result's shown message).
    spare: Vec<u8>,
}

/// A newline and the deepest indent [`Writer::newline`] copies whole.
const LINE: &[u8; 64] = b"\n                                                               ";

impl Writer {
    /// A newline and the indent of `depth`: inlined (a call per line of a report
    /// otherwise).
    #[inline]
    fn newline(&self, depth: usize, out: &mut Vec<u8>) {
        let spaces = self.indent * (self.level + depth);
        if spaces < LINE.len() {
            // A copy of a constant length (a few vector moves) then the length cut to the
            // indent: a `resize` was a call to `memset` for every line of the report.
            put_prefix(out, LINE, 1 + spaces);
        } else {
            out.push(b'\n');
            out.resize(out.len() + spaces, b' ');
        }
    }

    /// A string's text; one holding a surrogate (no UTF-8 text) is left by `json_indented`
    /// and otherwise written with each surrogate as its JSON escape (`escape_surrogates`:
    /// what `json.dumps` writes by default, parsed back to the same `str`), so a report of
    /// results whose text an application made stays written.
    fn string<const M: u8>(&mut self, text: &Bound<'_, PyString>, out: &mut Vec<u8>) -> Written {
        if let Some(cache) = self.cache.as_deref_mut() {
            if cache.put(text, out) {
                return Ok(());
            }
        }
        let bytes = match text.to_str() {
            Ok(text) => text.as_bytes(),
            Err(_) if M == LEAVE => return Err(Stop::Left),
            Err(_) => return self.surrogate_string(text, out),
        };
        let start = out.len();
        if self.shown {
            write_shown_string(bytes, out);
        } else {
            write_string(bytes, out);
        }
        if let Some(cache) = self.cache.as_deref_mut() {
            cache.keep(text, &out[start..]);
        }
        Ok(())
    }

    /// `string` of a `str` holding a surrogate: written from its `surrogatepass` bytes,
    /// then each surrogate's bytes replaced by its escape. Never kept in the cache.
    #[cold]
    fn surrogate_string(&self, text: &Bound<'_, PyString>, out: &mut Vec<u8>) -> Written {
        let raw = surrogatepass_bytes(text)?;
        let mut written = Vec::with_capacity(raw.as_bytes().len() + 2);
        if self.shown {
            write_shown_string(raw.as_bytes(), &mut written);
        } else {
            write_string(raw.as_bytes(), &mut written);
        }
        escape_surrogates(&written, out);
        Ok(())
    }

    /// `value`'s text as mode `M` writes it (see [`LEAVE`], [`PLAIN`], [`FULL`]). `PLAIN`
    /// writes exact `str`, `int`, `bool`, `None`, finite exact `float`, exact `list` and
    /// `dict` with exact `str` keys (what pydantic's dump leaves as it is); anything else
    /// is left (a tuple's or an enum member's text would be the same, NaN's would not).
    fn write<const M: u8>(
        &mut self,
        value: &Bound<'_, PyAny>,
        depth: usize,
        out: &mut Vec<u8>,
    ) -> Written {
        if depth
            > if M == LEAVE {
                MAX_DEPTH
            } else {
                REPORT_MAX_DEPTH
            }
        {
            if M == FULL {
                return Err(Stop::Raised(PyRecursionError::new_err(
                    "maximum recursion depth exceeded while encoding a JSON object",
                )));
            }
            return Err(Stop::Left);
        }
        // The exact types most values are, each by one compare of its type (the tests below
        // read the type's flags, a call each under the stable ABI): what they write is what
        // the tests below write of them.
        if value.is_exact_instance_of::<PyString>() {
            // SAFETY: an exact `str`.
            return self.string::<M>(unsafe { value.cast_unchecked::<PyString>() }, out);
        }
        if value.is_exact_instance_of::<PyInt>() {
            // SAFETY: an exact `int`.
            let number = unsafe { value.cast_unchecked::<PyInt>() };
            match number.extract::<i64>() {
                Ok(n) => write_int(n, out),
                Err(_) if M == LEAVE => return Err(Stop::Left),
                Err(_) => int_text(value, out)?,
            }
            return Ok(());
        }
        if value.is_none() {
            out.extend_from_slice(b"null");
            return Ok(());
        }
        if value.is_exact_instance_of::<PyBool>() {
            // SAFETY: a `bool` (a type nothing derives from: the only booleans).
            let flag = unsafe { value.cast_unchecked::<PyBool>() };
            out.extend_from_slice(if flag.is_true() { b"true" } else { b"false" });
            return Ok(());
        }
        // Exact lists and dicts, then the order of `json`'s own type tests for the rest:
        // str, int, float, list/tuple, dict (None and bool are above).
        if value.is_exact_instance_of::<PyList>() {
            let list = value.cast::<PyList>().map_err(PyErr::from)?;
            let (len, items) = (list.len(), list.iter().map(Ok::<_, PyErr>));
            self.container::<M>(value, out, |w, out| w.items::<M>(items, len, depth, out))?;
        } else if value.is_exact_instance_of::<PyDict>() {
            // SAFETY: an exact `dict`.
            let dict = unsafe { value.cast_unchecked::<PyDict>() };
            self.container::<M>(value, out, |w, out| w.dict_object::<M>(dict, depth, out))?;
        } else if let Ok(text) = value.cast::<PyString>() {
            if M == PLAIN && !value.is_exact_instance_of::<PyString>() {
                return Err(Stop::Left);
            }
            self.string::<M>(text, out)?;
        } else if let Ok(number) = value.cast::<PyInt>() {
            if M == PLAIN && !value.is_exact_instance_of::<PyInt>() {
                return Err(Stop::Left);
            }
            // `int.__repr__` of an int subclass (an `IntEnum`) is its number, as here.
            match number.extract::<i64>() {
                Ok(n) => write_int(n, out),
                Err(_) if M == LEAVE => return Err(Stop::Left),
                Err(_) => int_text(value, out)?,
            }
        } else if let Ok(number) = value.cast::<PyFloat>() {
            let x = number.value();
            if M == PLAIN && !(x.is_finite() && value.is_exact_instance_of::<PyFloat>()) {
                return Err(Stop::Left);
            }
            write_float_text(x, out);
        } else if M != PLAIN && value.is_exact_instance_of::<PyTuple>() {
            let tuple = value.cast::<PyTuple>().map_err(PyErr::from)?;
            let (len, items) = (tuple.len(), tuple.iter().map(Ok::<_, PyErr>));
            self.container::<M>(value, out, |w, out| w.items::<M>(items, len, depth, out))?;
        } else if M != FULL {
            return Err(Stop::Left);
        } else if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
            // A subclass, read as `json` reads it: its truth, then its iteration.
            let len = usize::from(value.is_truthy()?);
            let items = value.try_iter()?;
            self.container::<M>(value, out, |w, out| w.items::<M>(items, len, depth, out))?;
        } else if value.is_instance_of::<PyDict>() {
            let len = usize::from(value.is_truthy()?);
            let pairs = value
                .call_method0(intern!(value.py(), "items"))?
                .try_iter()?;
            let items = pairs.map(|pair| pair.and_then(|pair| pair.extract()));
            self.container::<M>(value, out, |w, out| w.object::<M>(items, len, depth, out))?;
        } else {
            let kind = value.get_type().name()?;
            return Err(Stop::Raised(PyTypeError::new_err(format!(
                "Object of type {kind} is not JSON serializable"
            ))));
        }
        Ok(())
    }

    /// `write_items` for a container, which `FULL` marks open while it is written: one met
    /// again inside itself is a cycle, refused as `json.dumps` refuses it.
    fn container<const M: u8>(
        &mut self,
        value: &Bound<'_, PyAny>,
        out: &mut Vec<u8>,
        write_items: impl FnOnce(&mut Self, &mut Vec<u8>) -> Written,
    ) -> Written {
        if M != FULL {
            return write_items(self, out);
        }
        let id = value.as_ptr() as usize;
        if self.open.contains(&id) {
            return Err(Stop::Raised(PyValueError::new_err(
                "Circular reference detected",
            )));
        }
        self.open.push(id);
        let written = write_items(self, out);
        self.open.pop();
        written
    }

    /// A list's items; `len` is 0 for an empty one (only its emptiness is read).
    fn items<'py, const M: u8>(
        &mut self,
        items: impl Iterator<Item = PyResult<Bound<'py, PyAny>>>,
        len: usize,
        depth: usize,
        out: &mut Vec<u8>,
    ) -> Written {
        if len == 0 {
            out.extend_from_slice(b"[]");
            return Ok(());
        }
        out.push(b'[');
        for (i, item) in items.enumerate() {
            if i > 0 {
                out.push(b',');
            }
            self.newline(depth + 1, out);
            self.write::<M>(&item?, depth + 1, out)?;
        }
        self.newline(depth, out);
        out.push(b']');
        Ok(())
    }

    /// A dict's pairs; `len` is 0 for an empty one (only its emptiness is read).
    fn object<'py, const M: u8>(
        &mut self,
        items: impl Iterator<Item = PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)>>,
        len: usize,
        depth: usize,
        out: &mut Vec<u8>,
    ) -> Written {
        if len == 0 {
            out.extend_from_slice(b"{}");
            return Ok(());
        }
        out.push(b'{');
        for (i, pair) in items.enumerate() {
            let (key, item) = pair?;
            if i > 0 {
                out.push(b',');
            }
            if let Some(lines) = self.lines.as_deref() {
                if lines.put(key.as_ptr() as usize, &item, depth, out) {
                    continue;
                }
            }
            self.member::<M>(&key, &item, depth, out)?;
        }
        self.newline(depth, out);
        out.push(b'}');
        Ok(())
    }

    /// `object` of an exact dict, its pairs read with `PyDict_Next` itself: a pair whose
    /// line the cache holds is written from the pointers the dict lends (only their
    /// addresses and a list's items are read, and nothing runs that could change the dict),
    /// with no reference taken nor dropped and no `PyDict_Size` per pair, as pyo3's iterator
    /// has; any other pair through `member`, holding references of its own. Writing a value
    /// can run Python code (a subclass's `__bool__`, `__iter__` or `items`, or a finalizer
    /// the collector runs on an allocation) that can change the dict: `PyDict_Next` stays
    /// safe whatever it does, and a dict whose size changed, or that gave more pairs than
    /// it had, is refused as iterating it in Python refuses it (`RuntimeError`) rather than
    /// written half old, half new.
    fn dict_object<const M: u8>(
        &mut self,
        dict: &Bound<'_, PyDict>,
        depth: usize,
        out: &mut Vec<u8>,
    ) -> Written {
        let py = dict.py();
        let len = dict.len();
        if len == 0 {
            out.extend_from_slice(b"{}");
            return Ok(());
        }
        out.push(b'{');
        let mut at: ffi::Py_ssize_t = 0;
        let mut read = 0;
        loop {
            let mut key = std::ptr::null_mut();
            let mut item = std::ptr::null_mut();
            // SAFETY: `dict` is a live dict (held by the caller); `PyDict_Next` lends its key
            // and value (no reference taken), or answers 0 at the end.
            if unsafe { ffi::PyDict_Next(dict.as_ptr(), &mut at, &mut key, &mut item) } == 0 {
                break;
            }
            read += 1;
            if read > len {
                return Err(Stop::Raised(PyRuntimeError::new_err(
                    "dictionary keys changed during iteration",
                )));
            }
            if read > 1 {
                out.push(b',');
            }
            if let Some(lines) = self.lines.as_deref() {
                // SAFETY: lent by the dict, which nothing changes before the line is put.
                let lent = unsafe { Borrowed::from_ptr(py, item) };
                if lines.put(key as usize, &lent, depth, out) {
                    continue;
                }
            }
            // SAFETY: lent by the dict and still in it; each made a reference of its own
            // before anything runs.
            let (key, item) = unsafe {
                (
                    Bound::from_borrowed_ptr(py, key),
                    Bound::from_borrowed_ptr(py, item),
                )
            };
            self.member::<M>(&key, &item, depth, out)?;
            if dict.len() != len {
                return Err(Stop::Raised(PyRuntimeError::new_err(
                    "dictionary changed size during iteration",
                )));
            }
        }
        self.newline(depth, out);
        out.push(b'}');
        Ok(())
    }

    /// A dict's pair `key: item` (its line not in the cache), `depth` deep: its newline,
    /// key and value, the line kept when it may be.
    fn member<const M: u8>(
        &mut self,
        key: &Bound<'_, PyAny>,
        item: &Bound<'_, PyAny>,
        depth: usize,
        out: &mut Vec<u8>,
    ) -> Written {
        let start = out.len();
        self.newline(depth + 1, out);
        self.key::<M>(key, out)?;
        out.extend_from_slice(b": ");
        self.write::<M>(item, depth + 1, out)?;
        if let Some(lines) = self.lines.as_deref_mut() {
            if key.is_exact_instance_of::<PyString>() {
                let at = key.as_ptr() as usize;
                if member_kept(item) {
                    lines.keep(at, Some(key), item, None, depth, &out[start..]);
                } else if let Some(items) = list_kept(item) {
                    lines.keep(at, Some(key), item, Some(items), depth, &out[start..]);
                }
            }
        }
        Ok(())
    }

    /// A key's text: a `str`, or (`FULL`) what `json.dumps` makes a key of: a float's,
    /// a boolean's, None's or an integer's JSON text, as a string; any other key refused.
    fn key<const M: u8>(&mut self, key: &Bound<'_, PyAny>, out: &mut Vec<u8>) -> Written {
        if key.is_exact_instance_of::<PyString>() {
            return self.string::<M>(key.cast::<PyString>().map_err(PyErr::from)?, out);
        }
        if M != FULL {
            // Other key types are spelled by `json`'s own rules: left to it.
            return Err(Stop::Left);
        }
        if let Ok(text) = key.cast::<PyString>() {
            return self.string::<M>(text, out);
        }
        // `json`'s order: str, float, True, False, None, int.
        let mut spelled = Vec::new();
        if let Ok(number) = key.cast::<PyFloat>() {
            write_float_text(number.value(), &mut spelled);
        } else if let Ok(flag) = key.cast::<PyBool>() {
            spelled.extend_from_slice(if flag.is_true() { b"true" } else { b"false" });
        } else if key.is_none() {
            spelled.extend_from_slice(b"null");
        } else if key.is_instance_of::<PyInt>() {
            int_text(key, &mut spelled)?;
        } else {
            let kind = key.get_type().name()?;
            return Err(Stop::Raised(PyTypeError::new_err(format!(
                "keys must be str, int, float, bool or None, not {kind}"
            ))));
        }
        // Digits, signs, letters and dots: nothing to escape.
        out.push(b'"');
        out.extend_from_slice(&spelled);
        out.push(b'"');
        Ok(())
    }
}

/// Appends the first `len` bytes of `text` (`len <= N`) by copying all `N` (a constant
/// length, so a few vector moves rather than a call to `memcpy`) and cutting the length.
#[inline]
fn put_prefix<const N: usize>(out: &mut Vec<u8>, text: &[u8; N], len: usize) {
    debug_assert!(len <= N);
    out.reserve(N);
    let at = out.len();
    // SAFETY: `reserve` made room for `N` more bytes after `at`; all `N` are written before
    // the length grows by `len <= N` of them, so every byte inside the length is set.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), out.as_mut_ptr().add(at), N);
        out.set_len(at + len.min(N));
    }
}

/// Slots of a [`ShownCache`]: a verdict's repeated strings (field names of details and
/// params, check names, outcomes, layers, contract ids) are a few hundred at most.
const SHOWN_SLOTS: usize = 1024;

/// Longest shown text (quotes included) a [`ShownCache`] slot holds.
const SHOWN_BYTES: usize = 48;

/// A string's shown text as last written, held with the string itself.
struct Shown {
    string: Option<Py<PyString>>,
    len: usize,
    text: [u8; SHOWN_BYTES],
}

/// The shown texts (`write_shown_string`, quotes included) of the short strings written
/// before, by the string's address: most strings of a report are the same few objects
/// (interned field names, an oracle's name and layer, `"pass"`), and a hit is a compare
/// and a copy instead of reading the string's UTF-8 and scanning it. A slot holds a
/// reference to its string, so no other string can take its address while the slot
/// stands for it, and a `str`'s text never changes: a hit is always the string's text.
/// Direct-mapped: a string whose slot another one took is written and takes it back.
struct ShownCache {
    slots: Vec<Shown>,
}

impl ShownCache {
    fn new() -> Box<Self> {
        let slots = (0..SHOWN_SLOTS)
            .map(|_| Shown {
                string: None,
                len: 0,
                text: [0; SHOWN_BYTES],
            })
            .collect();
        Box::new(ShownCache { slots })
    }

    /// The slot of the string at `address` (objects are 16-byte aligned: the low bits
    /// carry nothing; a multiply spreads the rest).
    fn slot(address: usize) -> usize {
        let mixed = ((address >> 4) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (mixed >> (64 - SHOWN_SLOTS.trailing_zeros())) as usize
    }

    /// Appends `string`'s shown text when its slot holds it; false otherwise.
    #[inline]
    fn put(&self, string: &Bound<'_, PyString>, out: &mut Vec<u8>) -> bool {
        let shown = &self.slots[Self::slot(string.as_ptr() as usize)];
        match &shown.string {
            Some(held) if held.as_ptr() == string.as_ptr() => {
                put_prefix(out, &shown.text, shown.len);
                true
            }
            _ => false,
        }
    }

    /// Keeps `text`, just written of an exact `string`, in its slot when it fits.
    fn keep(&mut self, string: &Bound<'_, PyString>, text: &[u8]) {
        if text.len() > SHOWN_BYTES || !string.is_exact_instance_of::<PyString>() {
            return;
        }
        let shown = &mut self.slots[Self::slot(string.as_ptr() as usize)];
        shown.string = Some(string.clone().unbind());
        shown.len = text.len();
        shown.text[..text.len()].copy_from_slice(text);
    }
}

/// Slots of a [`LineCache`]: a report's repeated lines (a check's name, layer and outcome,
/// its params' members) are a few hundred; its unrepeated ones are not kept.
const LINE_SLOTS: usize = 1024;

/// Longest line (newline, indent, key and value) a [`LineCache`] slot holds: a short list's
/// lines too (a check's params' `"tool": ["delete_records"]` is about 70 bytes).
const LINE_BYTES: usize = 128;

/// Most items of a list whose lines a [`LineCache`] keeps (`list_kept`).
const LIST_ITEMS: usize = 4;

/// The `depth` a [`LineCache`] keeps a result field's line at (an object's members are at
/// most [`REPORT_MAX_DEPTH`] deep).
const FIELD_LINE: usize = usize::MAX;

/// A line as last written: what it was written of, and its text.
struct Line {
    /// A result field's index, or the address of an object member's key.
    at: usize,
    /// The value's address.
    of: usize,
    depth: usize,
    /// The key and the value, held so that no other object takes their addresses while the
    /// slot stands for them (only held, never read).
    _held: Option<(Option<Py<PyAny>>, Py<PyAny>)>,
    /// A list's items as they were when its lines were written, held likewise (a list can
    /// change: its lines stand only while it holds these very items); `None` for a value
    /// that is no list.
    items: Option<Vec<Py<PyAny>>>,
    len: usize,
    text: [u8; LINE_BYTES],
}

/// The texts of the lines written before, by what they were written of: a result field's
/// line (the comma ending the field before, the newline, the indent, the key and the value)
/// by the field and the value's address, an object member's (newline, indent, key, value)
/// by the key's and the value's addresses and the depth. Most of a report's lines are the
/// same few (a check's `"name": "max_tool_calls"`, `"outcome": "pass"`, `"budget": null`,
/// its params' members, which are the same objects in each of its results): a hit is a few
/// compares and one copy instead of the type tests of the generic writer, the key and the
/// value's text. Only immutable values whose text is the same in every mode the report
/// writes them are kept (strings, `None`, booleans and the small integers CPython shares;
/// a result field's `str` subclass, an outcome, too), each slot holding a reference to its
/// key and value, so a hit is always their text; and short exact lists of such values (a
/// check's params' tool lists: each result's params are a shallow copy of the check's, so
/// the same list objects), whose slot holds their items too and is a hit only while the
/// list holds the same items. Direct-mapped, as [`ShownCache`].
struct LineCache {
    slots: Vec<Line>,
    /// The texts of runs of a result's fields (`field_runs`), by the run's first field and
    /// its values' addresses: a check's name, type, layer, outcome and `passed` are the
    /// same few objects in each of its results, as are its budget, reason and contract.
    runs: Vec<RunLines>,
}

/// Slots of a [`LineCache`]'s runs: a report's checks times their outcomes, a few hundred.
const RUN_SLOTS: usize = 512;

/// Most fields of a run ([`field_runs`] splits longer ones).
const RUN_FIELDS: usize = 6;

/// The lines of a run of a result's fields as last written: the values' addresses, the
/// values themselves (held, so that no other object takes their addresses while the slot
/// stands for them), and the text.
struct RunLines {
    start: usize,
    of: [usize; RUN_FIELDS],
    _held: Vec<Py<PyAny>>,
    text: Vec<u8>,
}

impl LineCache {
    fn new() -> Box<Self> {
        let slots = (0..LINE_SLOTS)
            .map(|_| Line {
                at: 0,
                of: 0,
                depth: 0,
                _held: None,
                items: None,
                len: 0,
                text: [0; LINE_BYTES],
            })
            .collect();
        let runs = (0..RUN_SLOTS)
            .map(|_| RunLines {
                start: 0,
                of: [0; RUN_FIELDS],
                _held: Vec::new(),
                text: Vec::new(),
            })
            .collect();
        Box::new(LineCache { slots, runs })
    }

    /// The addresses of a run's values (`values.len() <= RUN_FIELDS`, the rest 0) and its
    /// slot.
    fn run_slot(start: usize, values: &[Bound<'_, PyAny>]) -> ([usize; RUN_FIELDS], usize) {
        let mut of = [0; RUN_FIELDS];
        let mut mixed = start as u64;
        for (k, value) in values.iter().enumerate() {
            of[k] = value.as_ptr() as usize;
            mixed = (mixed ^ (of[k] >> 4) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
        (of, (mixed >> (64 - RUN_SLOTS.trailing_zeros())) as usize)
    }

    /// Appends the text of the run from the `start`-th field with `values` when its slot
    /// holds it; false otherwise. A slot never written holds no address (0).
    #[inline]
    fn put_run(&self, start: usize, values: &[Bound<'_, PyAny>], out: &mut Vec<u8>) -> bool {
        let (of, slot) = Self::run_slot(start, values);
        let run = &self.runs[slot];
        if run.of != of || run.start != start {
            return false;
        }
        out.extend_from_slice(&run.text);
        true
    }

    /// Keeps `text`, the lines just written of the run from the `start`-th field with
    /// `values` (each one `field_kept` keeps).
    fn keep_run(&mut self, start: usize, values: &[Bound<'_, PyAny>], text: &[u8]) {
        let (of, slot) = Self::run_slot(start, values);
        let run = &mut self.runs[slot];
        run._held = values.iter().map(|value| value.clone().unbind()).collect();
        run.start = start;
        run.of = of;
        run.text.clear();
        run.text.extend_from_slice(text);
    }

    fn slot(at: usize, of: usize, depth: usize) -> usize {
        let mixed =
            ((at ^ (of >> 4).rotate_left(29) ^ depth) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (mixed >> (64 - LINE_SLOTS.trailing_zeros())) as usize
    }

    /// Appends the line of `value` at `at` and `depth` when its slot holds it (a list's:
    /// with the items it holds now); false otherwise. Inlined in its two callers (a call
    /// per line of a report otherwise); a list's compare is out of line (`same_items`).
    #[inline(always)]
    fn put(&self, at: usize, value: &Bound<'_, PyAny>, depth: usize, out: &mut Vec<u8>) -> bool {
        let of = value.as_ptr() as usize;
        let line = &self.slots[Self::slot(at, of, depth)];
        // A slot never written holds `of == 0`, no object's address: a slot whose `of` is
        // `value`'s was kept of it (and holds it).
        if line.of != of || line.at != at || line.depth != depth {
            return false;
        }
        if let Some(items) = &line.items {
            if !same_items(items, value) {
                return false;
            }
        }
        put_prefix(out, &line.text, line.len);
        true
    }

    /// Keeps `text`, the line just written of `value` (under `key`, an object member's) at
    /// `at` and `depth`, when it fits; `items`: a list's items, as written.
    fn keep(
        &mut self,
        at: usize,
        key: Option<&Bound<'_, PyAny>>,
        value: &Bound<'_, PyAny>,
        items: Option<Vec<Py<PyAny>>>,
        depth: usize,
        text: &[u8],
    ) {
        if text.len() > LINE_BYTES {
            return;
        }
        let of = value.as_ptr() as usize;
        let line = &mut self.slots[Self::slot(at, of, depth)];
        line._held = Some((key.map(|key| key.clone().unbind()), value.clone().unbind()));
        line.items = items;
        line.at = at;
        line.of = of;
        line.depth = depth;
        line.len = text.len();
        line.text[..text.len()].copy_from_slice(text);
    }
}

/// Whether `value`, the very list a [`LineCache`] slot holds (its address, held), holds
/// `items` now (each the same object): a list can change, its lines stand only while it
/// does. Out of line: most lines are of no list, and the inlined `put` stays a few compares.
#[cold]
#[inline(never)]
fn same_items(items: &[Py<PyAny>], value: &Bound<'_, PyAny>) -> bool {
    let Ok(list) = value.cast_exact::<PyList>() else {
        return false;
    };
    list.len() == items.len()
        && items
            .iter()
            .enumerate()
            .all(|(i, item)| list.get_item(i).is_ok_and(|now| now.is(item)))
}

/// Whether an object member's value may be kept in a [`LineCache`]: an exact `str`, `None`,
/// a boolean or one of the small integers CPython shares (-5 to 256; any other is a new
/// object each time, never met again). Each is written the same by the report's plain and
/// full modes, and none can change.
fn member_kept(value: &Bound<'_, PyAny>) -> bool {
    if value.is_exact_instance_of::<PyString>() || value.is_none() {
        return true;
    }
    if value.is_exact_instance_of::<PyBool>() {
        return true;
    }
    value.is_exact_instance_of::<PyInt>()
        && value
            .cast::<PyInt>()
            .is_ok_and(|n| n.extract::<i64>().is_ok_and(shared_int))
}

/// Whether CPython shares the `int` of `n` (-5 to 256: one object, met again; any other is
/// a new object each time).
fn shared_int(n: i64) -> bool {
    (-5..=256).contains(&n)
}

/// A list's items when its lines may be kept in a [`LineCache`]: an exact list of at most
/// [`LIST_ITEMS`] values that `member_kept` keeps (its text is then theirs, in every mode
/// the report writes it, as long as it holds them).
fn list_kept(value: &Bound<'_, PyAny>) -> Option<Vec<Py<PyAny>>> {
    let list = value.cast_exact::<PyList>().ok()?;
    if list.len() > LIST_ITEMS {
        return None;
    }
    list.iter()
        .map(|item| member_kept(&item).then(|| item.unbind()))
        .collect()
}

/// Whether a result field's value may be kept in a [`LineCache`]: what `member_kept` keeps,
/// and a `str` subclass's (an outcome: its text is its string's, which cannot change).
fn field_kept(value: &Bound<'_, PyAny>) -> bool {
    member_kept(value) || value.is_instance_of::<PyString>()
}

/// The runs of a result's `fields` fields whose lines [`LineCache`] keeps together: the
/// longest stretches of two or more fields written by their lines alone and most often the
/// same objects from result to result, none of the fields at the places `apart` (the
/// message, details and params, written otherwise; the span ids, step indexes and duration,
/// new objects each time), at most [`RUN_FIELDS`] each: for each field, the end of the run
/// starting there (0: none).
fn field_runs(fields: usize, apart: &[usize]) -> Vec<usize> {
    let mut run_end = vec![0; fields];
    let mut start = 0;
    for i in 0..=fields {
        let runs = i < fields && !apart.contains(&i);
        if runs && i - start < RUN_FIELDS {
            continue;
        }
        if i - start >= 2 {
            run_end[start] = i;
        }
        start = if runs { i } else { i + 1 };
    }
    run_end
}

/// `int.__repr__(value)`: the decimal text `json.dumps` writes of any integer (one beyond
/// 64 bits, or an `IntEnum` member, as its number).
fn int_text(value: &Bound<'_, PyAny>, out: &mut Vec<u8>) -> PyResult<()> {
    let py = value.py();
    let text = py
        .get_type::<PyInt>()
        .getattr(intern!(py, "__repr__"))?
        .call1((value,))?;
    out.extend_from_slice(text.cast::<PyString>()?.to_str()?.as_bytes());
    Ok(())
}

/// `model.model_dump(mode="json")`: how a model held otherwise than validation leaves it is
/// read (its values come out in their JSON form already).
fn model_dump<'py>(model: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    let py = model.py();
    let kwargs = PyDict::new(py);
    kwargs.set_item(intern!(py, "mode"), intern!(py, "json"))?;
    let dumped = model.call_method(intern!(py, "model_dump"), (), Some(&kwargs))?;
    Ok(dumped.cast_into::<PyDict>()?)
}

/// A model's field names in declaration order: what its `__dict__` holds, in that order,
/// once validated (or built by the trusted constructors), and each name's text as a key
/// (`"name": `).
pub(crate) struct Fields {
    pub(crate) names: Vec<Py<PyString>>,
    pub(crate) keys: Vec<Vec<u8>>,
}

/// A model's values as the report reads them: its fields' values, in declaration order, or
/// (a model held otherwise) pydantic's dump of it, keys and all.
pub(crate) enum Held<'py> {
    Fields(Vec<Bound<'py, PyAny>>),
    Dumped(Bound<'py, PyDict>),
}

impl Fields {
    pub(crate) fn new(names: Vec<Bound<'_, PyString>>) -> PyResult<Self> {
        let mut keys = Vec::with_capacity(names.len());
        for name in &names {
            keys.push(key_text(name.to_str()?));
        }
        Ok(Fields {
            names: names.into_iter().map(Bound::unbind).collect(),
            keys,
        })
    }

    pub(crate) fn position(&self, name: &str) -> PyResult<usize> {
        let key = key_text(name);
        self.keys
            .iter()
            .position(|k| *k == key)
            .ok_or_else(|| PyValueError::new_err(format!("no field {name:?}")))
    }

    /// `model`'s field values in declaration order, or its dump when its `__dict__` holds
    /// anything else.
    pub(crate) fn values<'py>(&self, model: &Bound<'py, PyAny>) -> PyResult<Held<'py>> {
        let mut values = Vec::with_capacity(self.names.len());
        if self.read_into(model, &mut values)? {
            Ok(Held::Fields(values))
        } else {
            Ok(Held::Dumped(model_dump(model)?))
        }
    }

    /// `values` into `values` (emptied first), so that a caller reading many models fills
    /// one buffer (a report's results: one allocation per verdict, not per result); false,
    /// with `values` left as it stands, when the model is to be read through its dump.
    pub(crate) fn read_into<'py>(
        &self,
        model: &Bound<'py, PyAny>,
        values: &mut Vec<Bound<'py, PyAny>>,
    ) -> PyResult<bool> {
        let py = model.py();
        values.clear();
        // A model's `__dict__` as `object`'s descriptor gives it (`instance_dict`), without
        // looking the name up through the type's dicts; an object it refuses is asked by
        // name, as before, for the error (or a `__dict__` of its own).
        let dict = match instance_dict(model) {
            Some(dict) => dict,
            None => match model
                .getattr(intern!(py, "__dict__"))?
                .cast_into::<PyDict>()
            {
                Ok(dict) => dict,
                Err(_) => return Ok(false),
            },
        };
        if dict.len() != self.names.len() {
            return Ok(false);
        }
        values.reserve(self.names.len());
        let mut at: ffi::Py_ssize_t = 0;
        for name in &self.names {
            let mut key = std::ptr::null_mut();
            let mut value = std::ptr::null_mut();
            // SAFETY: `dict` is a live dict; `PyDict_Next` lends its key and value (no
            // reference taken), each made a `Bound` (a reference of its own) before anything
            // else runs; it answers 0 at the end, which the length above rules out unless a
            // comparison changed the dict.
            if unsafe { ffi::PyDict_Next(dict.as_ptr(), &mut at, &mut key, &mut value) } == 0 {
                return Ok(false);
            }
            // SAFETY: as above, lent by the dict and still in it: held before the key is
            // compared, since a key's own `__eq__` (a `str` subclass's) can change the dict
            // and free the value.
            values.push(unsafe { Bound::from_borrowed_ptr(py, value) });
            // Field names are interned: the same object (a compare of addresses, no reference
            // taken of the key), but compared by value otherwise.
            if key != name.as_ptr() {
                // SAFETY: as above, lent by the dict and still in it.
                let key = unsafe { Bound::from_borrowed_ptr(py, key) };
                if !key.eq(name.bind(py))? {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }
}

/// `"name": ` as the report writes a key.
fn key_text(name: &str) -> Vec<u8> {
    let mut key = Vec::new();
    write_shown_string(name.as_bytes(), &mut key);
    key.extend_from_slice(b": ");
    key
}

/// What stands under a key of a verdict or of a result being written.
enum Slot<'py> {
    /// A value written as `json.dumps` writes it.
    Value(Bound<'py, PyAny>),
    /// Details or params: plain JSON data as it is, anything else as pydantic dumps it.
    Data(Bound<'py, PyAny>),
    /// The verdict's results: the field's value, or (a verdict read through its dump)
    /// read from the verdict.
    Results(Option<Bound<'py, PyAny>>),
    /// The verdict's counts, likewise.
    Counts(Option<Bound<'py, PyAny>>),
}

/// An object's entries in order: each key's text (`"name": `, the model's own for its
/// fields) and what it holds.
type Entries<'k, 'py> = Vec<(Cow<'k, [u8]>, Slot<'py>)>;

/// Sets `key` in `entries` as a dict's `data[key] = slot` does: in place when present, else
/// at the end.
fn set_entry<'k, 'py>(entries: &mut Entries<'k, 'py>, key: &'k [u8], slot: Slot<'py>) {
    match entries.iter_mut().find(|(k, _)| k.as_ref() == key) {
        Some(entry) => entry.1 = slot,
        None => entries.push((Cow::Borrowed(key), slot)),
    }
}

/// The text of one verdict of the JSON report: `json.dumps` of `model_dump(mode="json")`
/// of the verdict (each result's message and details being what `shown` gives) plus its
/// derived `verdict`, with `indent=2, ensure_ascii=False`, at `level`, `json_safe`, encoded
/// as UTF-8. Built once with the models' field names and pydantic's dump of a
/// `dict[str, Any]` field (`dump`), which makes details or params that are not plain JSON
/// data what `model_dump` makes of them.
#[pyclass(module = "otel_oracles._native", name = "VerdictJson", frozen)]
pub(crate) struct VerdictJson {
    verdict: Fields,
    result: Fields,
    counts: Fields,
    /// The verdict fields holding the results and the counts.
    results_at: usize,
    counts_at: usize,
    /// The result fields the filter reads, among them the two a report shows through the
    /// privacy boundary (message and details).
    judged_at: JudgedAt,
    /// The other `dict[str, Any]` result field (params).
    params_at: usize,
    /// The verdict's `passed` and the counts `Verdict.verdict` reads (`derived_verdict`).
    passed_at: usize,
    derived_counts: [usize; 4],
    level: usize,
    dump: Py<PyAny>,
    /// `"verdict": `, the derived value's key, and the verdict field written under it, if
    /// any (a model of fields has its keys' places known: no search per verdict).
    verdict_key: Vec<u8>,
    verdict_at: Option<usize>,
    /// What precedes each result field's value, by field: the comma ending the one before
    /// (after the first), the newline, the indent of a result's fields and the key; one
    /// copy instead of four pieces.
    result_lines: Vec<Vec<u8>>,
    /// For each result field, the end of the run of fields starting there whose lines are
    /// kept together (`field_runs`), or 0.
    run_end: Vec<usize>,
    /// The shown texts of the strings and the lines written before, and the buffer a
    /// verdict's text is written in (one allocation of a few kilobytes fewer per verdict),
    /// kept from verdict to verdict (taken by the call writing one; a call meeting them
    /// taken writes without).
    cache: Mutex<Option<Kept>>,
}

/// What a [`VerdictJson`] keeps from verdict to verdict.
struct Kept {
    cache: Box<ShownCache>,
    lines: Box<LineCache>,
    out: Vec<u8>,
    /// The writer's `spare` (a result's shown message).
    spare: Vec<u8>,
}

/// Largest buffer kept from one verdict's text to the next: a report's verdicts are a few
/// kilobytes each; one much larger is let go rather than held for the process.
const KEPT_OUT: usize = 1 << 20;

const INDENT: usize = 2;

#[pymethods]
impl VerdictJson {
    #[new]
    fn new(
        verdict_fields: Vec<Bound<'_, PyString>>,
        result_fields: Vec<Bound<'_, PyString>>,
        counts_fields: Vec<Bound<'_, PyString>>,
        level: usize,
        dump: Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let verdict = Fields::new(verdict_fields)?;
        let result = Fields::new(result_fields)?;
        let counts = Fields::new(counts_fields)?;
        // A result's fields sit 3 deep in a verdict (verdict, results, result).
        let indent = INDENT * (level + 3);
        let result_lines = result
            .keys
            .iter()
            .enumerate()
            .map(|(i, key)| {
                let mut line = Vec::with_capacity(2 + indent + key.len());
                if i > 0 {
                    line.push(b',');
                }
                line.push(b'\n');
                line.resize(line.len() + indent, b' ');
                line.extend_from_slice(key);
                line
            })
            .collect();
        let judged_at = JudgedAt::find(|name| result.position(name))?;
        let params_at = result.position("params")?;
        let run_end = field_runs(
            result.keys.len(),
            &[
                judged_at.message,
                judged_at.details,
                params_at,
                result.position("span_ids")?,
                judged_at.steps,
                result.position("duration_ns")?,
            ],
        );
        let verdict_key = key_text("verdict");
        let verdict_at = verdict.keys.iter().position(|key| *key == verdict_key);
        Ok(VerdictJson {
            result_lines,
            run_end,
            results_at: verdict.position("results")?,
            counts_at: verdict.position("counts")?,
            judged_at,
            params_at,
            passed_at: verdict.position("passed")?,
            derived_counts: [
                counts.position("invariant_failures")?,
                counts.position("budget_exhausted")?,
                counts.position("missing_evidence")?,
                counts.position("errors")?,
            ],
            verdict,
            result,
            counts,
            level,
            dump: dump.unbind(),
            verdict_key,
            verdict_at,
            cache: Mutex::new(Some(Kept {
                cache: ShownCache::new(),
                lines: LineCache::new(),
                out: Vec::with_capacity(8192),
                spare: Vec::new(),
            })),
        })
    }

    /// `verdict`'s text, each result's message and details passed through `shown` (the
    /// privacy filter) when it is given. Raises what `json.dumps` raises for a value it
    /// cannot write, and what the filter raises.
    #[pyo3(signature = (verdict, shown = None))]
    fn write<'py>(
        &self,
        verdict: &Bound<'py, PyAny>,
        shown: Option<&Bound<'py, ShownFilter>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let (text, _) = self.text(verdict, shown.map(Bound::get))?;
        Ok(text)
    }
}

/// A verdict's values as the reports read them once for all of them ([`crate::report_markup`]'s
/// `VerdictReports`): its counts' and each result's field values, each result's shown message
/// (the privacy filter's, when one is given) and the derived `verdict`.
pub(crate) struct ReadVerdict<'a, 'py> {
    pub(crate) counts: &'a [Bound<'py, PyAny>],
    pub(crate) results: Vec<&'a [Bound<'py, PyAny>]>,
    pub(crate) messages: &'a [Vec<u8>],
    /// Each result's details as the filter scrubbed them, when they were (for the page).
    pub(crate) scrubbed: Option<&'a [Bound<'py, PyDict>]>,
    pub(crate) derived: &'static str,
}

/// `Verdict.verdict` from the verdict's `passed` and its counts' invariant failures,
/// exhausted budgets, missing evidence and errors: `pass`, else `error` for a harness error
/// with no agent failure, else `fail`.
pub(crate) fn derived_verdict(
    passed: &Bound<'_, PyAny>,
    [invariant, exhausted, missing, errors]: [&Bound<'_, PyAny>; 4],
) -> PyResult<&'static str> {
    if passed.is_truthy()? {
        return Ok("pass");
    }
    let agent_fail = invariant.is_truthy()? || exhausted.is_truthy()? || missing.is_truthy()?;
    Ok(if errors.is_truthy()? && !agent_fail {
        "error"
    } else {
        "fail"
    })
}

/// `derived` (`derived_verdict`'s) as a `str` interned once per process, not per verdict.
fn derived_text<'py>(py: Python<'py>, derived: &'static str) -> &'py Bound<'py, PyString> {
    match derived {
        "pass" => intern!(py, "pass"),
        "fail" => intern!(py, "fail"),
        _ => {
            debug_assert_eq!(derived, "error");
            intern!(py, "error")
        }
    }
}

impl VerdictJson {
    /// The verdict's text from its values `held` (its fields' values, or its dump), and,
    /// given `read`, its counts, results, shown messages and derived `verdict` as read
    /// before, instead of read again; with the derived `verdict` it wrote (which the run's
    /// tally counts by, not asking the property again).
    pub(crate) fn verdict_text<'py>(
        &self,
        verdict: &Bound<'py, PyAny>,
        held: Held<'py>,
        read: Option<&ReadVerdict<'_, 'py>>,
        shown: Option<&ShownFilter>,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyAny>)> {
        let kept = match self.cache.lock() {
            Ok(mut held) => held.take(),
            Err(_) => None,
        };
        let (cache, lines, mut out, spare) = match kept {
            Some(Kept {
                cache,
                lines,
                mut out,
                spare,
            }) => {
                out.clear();
                (Some(cache), Some(lines), out, spare)
            }
            None => (None, None, Vec::with_capacity(8192), Vec::new()),
        };
        let mut w = Writer {
            indent: INDENT,
            level: self.level,
            shown: true,
            open: Vec::new(),
            cache,
            lines,
            spare,
        };
        let written = self.write_verdict(&mut w, verdict, held, read, shown, &mut out);
        let text = written.map(|derived| (PyBytes::new(verdict.py(), &out), derived));
        if let (Some(cache), Some(lines), Ok(mut held)) =
            (w.cache.take(), w.lines.take(), self.cache.lock())
        {
            if out.capacity() > KEPT_OUT {
                out = Vec::with_capacity(8192);
            }
            *held = Some(Kept {
                cache,
                lines,
                out,
                spare: std::mem::take(&mut w.spare),
            });
        }
        match text {
            Ok(text) => Ok(text),
            Err(Stop::Raised(err)) => Err(err),
            Err(Stop::Left) => Err(PyValueError::new_err("a verdict's text was left unwritten")),
        }
    }

    /// The verdict's text, all of it read here, and its derived `verdict`.
    pub(crate) fn text<'py>(
        &self,
        verdict: &Bound<'py, PyAny>,
        shown: Option<&ShownFilter>,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyAny>)> {
        self.verdict_text(verdict, self.verdict.values(verdict)?, None, shown)
    }

    /// Whether the verdict, counts and result field names are `names`' (the same models).
    pub(crate) fn same_fields(&self, names: [&Fields; 3]) -> bool {
        [&self.verdict, &self.counts, &self.result]
            .iter()
            .zip(names)
            .all(|(mine, theirs)| mine.keys == theirs.keys)
    }

    /// The verdict's text appended to `out`; its derived `verdict` (as written) returned.
    fn write_verdict<'py>(
        &self,
        w: &mut Writer,
        verdict: &Bound<'py, PyAny>,
        held: Held<'py>,
        read: Option<&ReadVerdict<'_, 'py>>,
        shown: Option<&ShownFilter>,
        out: &mut Vec<u8>,
    ) -> Result<Bound<'py, PyAny>, Stop> {
        let py = verdict.py();
        // The derived `verdict` ("pass", "fail", "error"), as the report adds it: from the
        // values read (the property's definition, `derived_verdict`), else the property.
        // The counts' values read for it are the ones written below (read once).
        let mut counts_read = None;
        let derived = match (read, &held) {
            (Some(read), _) => Some(read.derived),
            (None, Held::Fields(values)) => match self.counts.values(&values[self.counts_at])? {
                Held::Fields(counts) => {
                    let derived = derived_verdict(
                        &values[self.passed_at],
                        self.derived_counts.map(|at| &counts[at]),
                    )?;
                    counts_read = Some(counts);
                    Some(derived)
                }
                Held::Dumped(_) => None,
            },
            (None, Held::Dumped(_)) => None,
        };
        let fields = matches!(held, Held::Fields(_));
        let mut entries: Entries<'_, '_> = match held {
            Held::Fields(values) => {
                // Room for the derived `verdict` too (added below): no regrowth per verdict.
                let mut entries = Vec::with_capacity(values.len() + 1);
                entries.extend(values.into_iter().enumerate().map(|(i, value)| {
                    let slot = if i == self.results_at {
                        Slot::Results(Some(value))
                    } else if i == self.counts_at {
                        Slot::Counts(Some(value))
                    } else {
                        Slot::Value(value)
                    };
                    (Cow::Borrowed(self.verdict.keys[i].as_slice()), slot)
                }));
                entries
            }
            Held::Dumped(dumped) => {
                let mut entries: Entries<'_, '_> = dumped_entries(w, &dumped)?;
                set_entry(
                    &mut entries,
                    &self.verdict.keys[self.results_at],
                    Slot::Results(None),
                );
                set_entry(
                    &mut entries,
                    &self.verdict.keys[self.counts_at],
                    Slot::Counts(None),
                );
                entries
            }
        };
        let derived = match derived {
            Some(derived) => derived_text(py, derived).clone().into_any(),
            None => verdict.getattr(intern!(py, "verdict"))?,
        };
        let written = Slot::Value(derived.clone());
        if fields {
            // The entries are the fields in order: the key's place is known.
            match self.verdict_at {
                Some(at) => entries[at].1 = written,
                None => entries.push((Cow::Borrowed(self.verdict_key.as_slice()), written)),
            }
        } else {
            set_entry(&mut entries, &self.verdict_key, written);
        }
        out.push(b'{');
        for (i, (key, slot)) in entries.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            w.newline(1, out);
            out.extend_from_slice(key);
            match slot {
                Slot::Results(_) if read.is_some() => {
                    let Some(read) = read else { unreachable!() };
                    self.write_read_results(w, read, shown, out)?;
                }
                Slot::Results(held) => {
                    let results = match held {
                        Some(results) => results.clone(),
                        None => verdict.getattr(intern!(py, "results"))?,
                    };
                    self.write_results(w, &results, shown, out)?;
                }
                Slot::Counts(held) => {
                    let counts = match held {
                        Some(counts) => counts.clone(),
                        None => verdict.getattr(intern!(py, "counts"))?,
                    };
                    let held = match (read, counts_read.take()) {
                        (Some(read), _) => Held::Fields(read.counts.to_vec()),
                        (None, Some(values)) => Held::Fields(values),
                        (None, None) => self.counts.values(&counts)?,
                    };
                    let entries = match held {
                        Held::Fields(values) => self
                            .counts
                            .keys
                            .iter()
                            .map(|key| Cow::Borrowed(key.as_slice()))
                            .zip(values.into_iter().map(Slot::Value))
                            .collect(),
                        Held::Dumped(dumped) => dumped_entries(w, &dumped)?,
                    };
                    self.write_entries(w, &entries, 1, out)?;
                }
                Slot::Value(value) | Slot::Data(value) => w.write::<FULL>(value, 1, out)?,
            }
        }
        w.newline(0, out);
        out.push(b'}');
        Ok(derived)
    }

    /// The results as the report lists them: each one read from `results` in turn.
    fn write_results(
        &self,
        w: &mut Writer,
        results: &Bound<'_, PyAny>,
        shown: Option<&ShownFilter>,
        out: &mut Vec<u8>,
    ) -> Written {
        let mut any = false;
        // Each result's field values, read into one buffer.
        let mut values = Vec::with_capacity(self.result.names.len());
        for result in results.try_iter()? {
            out.push(if any { b',' } else { b'[' });
            any = true;
            w.newline(2, out);
            self.write_result(w, &result?, &mut values, shown, out)?;
        }
        if any {
            w.newline(1, out);
            out.push(b']');
        } else {
            out.extend_from_slice(b"[]");
        }
        Ok(())
    }

    /// The results as read before (`ReadVerdict`), as `write_results` writes them.
    fn write_read_results(
        &self,
        w: &mut Writer,
        read: &ReadVerdict<'_, '_>,
        shown: Option<&ShownFilter>,
        out: &mut Vec<u8>,
    ) -> Written {
        if read.results.is_empty() {
            out.extend_from_slice(b"[]");
            return Ok(());
        }
        for (k, values) in read.results.iter().enumerate() {
            out.push(if k > 0 { b',' } else { b'[' });
            w.newline(2, out);
            let message = shown.map(|_| read.messages[k].as_slice());
            let scrubbed = read.scrubbed.map(|scrubbed| &scrubbed[k]);
            self.write_result_values(w, values, message, scrubbed, shown, out)?;
        }
        w.newline(1, out);
        out.push(b']');
        Ok(())
    }

    /// A result from its field values; with `shown`, its message and details are the
    /// filter's: `message` and `scrubbed` when they were made before, else made here (the
    /// details scrubbed as they are written).
    fn write_result_values(
        &self,
        w: &mut Writer,
        values: &[Bound<'_, PyAny>],
        message: Option<&[u8]>,
        scrubbed: Option<&Bound<'_, PyDict>>,
        shown: Option<&ShownFilter>,
        out: &mut Vec<u8>,
    ) -> Written {
        // The shown message, written first (its text is rendered before the details are
        // read) into the writer's spare buffer, then copied into its place.
        let mut text = std::mem::take(&mut w.spare);
        text.clear();
        match (shown, message) {
            (Some(_), Some(message)) => write_shown_string(message, &mut text),
            (Some(filter), None) => {
                filter.write_shown_message(&self.judged_at.of(values), &mut text)?
            }
            (None, _) => {}
        }
        out.push(b'{');
        let mut written_to = 0;
        for (i, value) in values.iter().enumerate() {
            if i < written_to {
                continue;
            }
            let end = self.run_end[i];
            if end > 0 {
                self.write_run(w, i, &values[i..end], out)?;
                written_to = end;
                continue;
            }
            // Details and params (plain data or dumped), and a shown message, are written
            // below; every other field by its line.
            let data = i == self.judged_at.details || i == self.params_at;
            let shown_message = shown.is_some() && i == self.judged_at.message;
            if !data && !shown_message {
                self.write_field(w, i, value, out)?;
                continue;
            }
            out.extend_from_slice(&self.result_lines[i]);
            match shown {
                Some(_) if i == self.judged_at.message => out.extend_from_slice(&text),
                Some(filter) if i == self.judged_at.details => match scrubbed {
                    Some(scrubbed) => self.write_data(w, scrubbed.as_any(), 3, out)?,
                    None => self.write_scrubbed(w, filter, value, 3, out)?,
                },
                _ => self.write_data(w, value, 3, out)?,
            }
        }
        w.spare = text;
        w.newline(2, out);
        out.push(b'}');
        Ok(())
    }

    /// The lines of a run of a result's fields from the `start`-th (`values`, theirs): as
    /// written before when the line cache holds the run's values (one lookup and one copy
    /// instead of one of each per field), else field by field, the run's text then kept
    /// when every value may be.
    fn write_run(
        &self,
        w: &mut Writer,
        start: usize,
        values: &[Bound<'_, PyAny>],
        out: &mut Vec<u8>,
    ) -> Written {
        if let Some(lines) = w.lines.as_deref() {
            if lines.put_run(start, values, out) {
                return Ok(());
            }
        }
        let from = out.len();
        for (k, value) in values.iter().enumerate() {
            self.write_field(w, start + k, value, out)?;
        }
        if let Some(lines) = w.lines.as_deref_mut() {
            if values.iter().all(field_kept) {
                lines.keep_run(start, values, &out[from..]);
            }
        }
        Ok(())
    }

    /// The `i`-th field's line of a result (see `result_lines`) with `value`, its value: an
    /// empty list as such, an integer by its digits (as written before when the line cache
    /// holds it: a shared small one), anything else as written before when the line cache
    /// holds it, else by the generic writer. The lists and integers are tested first: most
    /// are the result's span ids, step indexes and duration, new objects each time, which
    /// the line cache never holds.
    #[inline]
    fn write_field(
        &self,
        w: &mut Writer,
        i: usize,
        value: &Bound<'_, PyAny>,
        out: &mut Vec<u8>,
    ) -> Written {
        // (An exact type's compare: a failed `cast_exact` takes and drops a reference to
        // the type.)
        if value.is_exact_instance_of::<PyList>() {
            // SAFETY: an exact `list`.
            if unsafe { value.cast_unchecked::<PyList>() }.is_empty() {
                out.extend_from_slice(&self.result_lines[i]);
                out.extend_from_slice(b"[]");
                return Ok(());
            }
        } else if value.is_exact_instance_of::<PyInt>() {
            // A result's duration (and a budget or a count past the shared small integers):
            // a new `int` each time, never kept; written as the generic writer writes it,
            // without its type tests, nor `field_kept`'s.
            // SAFETY: an exact `int`.
            if let Ok(n) = unsafe { value.cast_unchecked::<PyInt>() }.extract::<i64>() {
                let shared = shared_int(n);
                if let (Some(lines), true) = (w.lines.as_deref(), shared) {
                    if lines.put(i, value, FIELD_LINE, out) {
                        return Ok(());
                    }
                }
                let start = out.len();
                out.extend_from_slice(&self.result_lines[i]);
                write_int(n, out);
                if let (Some(lines), true) = (w.lines.as_deref_mut(), shared) {
                    lines.keep(i, None, value, None, FIELD_LINE, &out[start..]);
                }
                return Ok(());
            }
        }
        if let Some(lines) = w.lines.as_deref() {
            if lines.put(i, value, FIELD_LINE, out) {
                return Ok(());
            }
        }
        let start = out.len();
        out.extend_from_slice(&self.result_lines[i]);
        w.write::<FULL>(value, 3, out)?;
        if let Some(lines) = w.lines.as_deref_mut() {
            if field_kept(value) {
                lines.keep(i, None, value, None, FIELD_LINE, &out[start..]);
            }
        }
        Ok(())
    }

    /// A result read from its model (its field values read into `values`).
    fn write_result<'py>(
        &self,
        w: &mut Writer,
        result: &Bound<'py, PyAny>,
        values: &mut Vec<Bound<'py, PyAny>>,
        shown: Option<&ShownFilter>,
        out: &mut Vec<u8>,
    ) -> Written {
        let message_key = &self.result.keys[self.judged_at.message];
        let details_key = &self.result.keys[self.judged_at.details];
        let params_key = &self.result.keys[self.params_at];
        // The common case written straight from the field values.
        if self.result.read_into(result, values)? {
            return self.write_result_values(w, values, None, None, shown, out);
        }
        let mut entries: Entries<'_, '_> = dumped_entries(w, &model_dump(result)?)?;
        for (key, slot) in &mut entries {
            if key.as_ref() == details_key.as_slice() || key.as_ref() == params_key.as_slice() {
                if let Slot::Value(value) = slot {
                    *slot = Slot::Data(value.clone());
                }
            }
        }
        if let Some(filter) = shown {
            // A result held otherwise: its fields read as attributes, as `explain` reads them.
            let fields = ReadFields::read(result)?;
            let judged = fields.judged();
            let message = PyString::new(result.py(), &filter.shown_message(&judged)?);
            set_entry(&mut entries, message_key, Slot::Value(message.into_any()));
            let details = filter.scrub(judged.details)?;
            set_entry(&mut entries, details_key, Slot::Data(details.into_any()));
        }
        self.write_entries(w, &entries, 2, out)
    }

    /// Details as `filter.scrub(details)` shows them, written as they are scrubbed: the
    /// same text as writing the scrubbed dict (`write_data`), without building it. Details
    /// that are not an exact dict with exact `str` keys, or whose shown values are not plain
    /// JSON data (a subclass, NaN), are scrubbed into a dict and written as before.
    fn write_scrubbed(
        &self,
        w: &mut Writer,
        filter: &ShownFilter,
        details: &Bound<'_, PyAny>,
        depth: usize,
        out: &mut Vec<u8>,
    ) -> Written {
        let start = out.len();
        match write_scrubbed_plain(w, filter, details, depth, out) {
            Err(Stop::Left) => {
                out.truncate(start);
                let scrubbed = filter.scrub(details)?;
                self.write_data(w, scrubbed.as_any(), depth, out)
            }
            written => written,
        }
    }

    /// An object of `entries`, `depth` deep.
    fn write_entries(
        &self,
        w: &mut Writer,
        entries: &Entries<'_, '_>,
        depth: usize,
        out: &mut Vec<u8>,
    ) -> Written {
        if entries.is_empty() {
            out.extend_from_slice(b"{}");
            return Ok(());
        }
        out.push(b'{');
        for (i, (key, slot)) in entries.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            w.newline(depth + 1, out);
            out.extend_from_slice(key);
            match slot {
                Slot::Data(value) => self.write_data(w, value, depth + 1, out)?,
                Slot::Value(value) => w.write::<FULL>(value, depth + 1, out)?,
                Slot::Results(_) | Slot::Counts(_) => unreachable!("only a verdict holds these"),
            }
        }
        w.newline(depth, out);
        out.push(b'}');
        Ok(())
    }

    /// Details or params: as they are when plain JSON data (most are), else pydantic's
    /// dump of them (`dump`), as `model_dump(mode="json")` dumps the field.
    fn write_data(
        &self,
        w: &mut Writer,
        value: &Bound<'_, PyAny>,
        depth: usize,
        out: &mut Vec<u8>,
    ) -> Written {
        let start = out.len();
        match w.write::<PLAIN>(value, depth, out) {
            Err(Stop::Left) => {
                out.truncate(start);
                let dumped = self.dump.bind(value.py()).call1((value,))?;
                w.write::<FULL>(&dumped, depth, out)
            }
            written => written,
        }
    }
}

/// `write_scrubbed` when everything shown is plain JSON data (see there), else left.
fn write_scrubbed_plain(
    w: &mut Writer,
    filter: &ShownFilter,
    details: &Bound<'_, PyAny>,
    depth: usize,
    out: &mut Vec<u8>,
) -> Written {
    let Ok(dict) = details.cast_exact::<PyDict>() else {
        return Err(Stop::Left);
    };
    let mut any = false;
    for (key, value) in dict.iter() {
        if !key.is_exact_instance_of::<PyString>() {
            return Err(Stop::Left);
        }
        if filter.safe(&key)?.is_none() {
            continue;
        }
        let mark = out.len();
        out.push(if any { b',' } else { b'{' });
        w.newline(depth + 1, out);
        w.key::<PLAIN>(&key, out)?;
        out.extend_from_slice(b": ");
        // The exact types first, each one compare (the subclass tests read the type's flags,
        // a call under the stable ABI, or walk its bases).
        let text = value.is_exact_instance_of::<PyString>();
        // Numbers and booleans (`bool` is an `int`): counts, lengths, exit codes.
        if value.is_exact_instance_of::<PyInt>()
            || (!text && (value.is_instance_of::<PyInt>() || value.is_instance_of::<PyFloat>()))
        {
            w.write::<PLAIN>(&value, depth + 1, out)?;
        } else if !filter.identifier_key(&key)? {
            out.truncate(mark);
            continue;
        } else if text || value.is_instance_of::<PyString>() {
            w.write::<PLAIN>(&filter.shown(&value)?, depth + 1, out)?;
        } else if value.is_exact_instance_of::<PyList>()
            || value.is_instance_of::<PyList>()
            || value.is_instance_of::<PyTuple>()
        {
            let mut items = false;
            for item in filter.head(&value)?.try_iter()? {
                out.push(if items { b',' } else { b'[' });
                items = true;
                w.newline(depth + 2, out);
                w.write::<PLAIN>(&filter.shown(&item?)?, depth + 2, out)?;
            }
            if items {
                w.newline(depth + 1, out);
                out.push(b']');
            } else {
                out.extend_from_slice(b"[]");
            }
        } else if let Ok(counts) = value.cast::<PyDict>() {
            // name -> count: its first pairs, counts only, as a dict keeps them (a name
            // shown as another one before takes its place, with the later count).
            let mut shown: Vec<(Bound<'_, PyAny>, Bound<'_, PyAny>)> = Vec::new();
            for pair in filter.first_pairs(counts)? {
                let (name, n) = pair.extract::<(Bound<'_, PyAny>, Bound<'_, PyAny>)>()?;
                if !n.is_instance_of::<PyInt>() {
                    continue;
                }
                let name = filter.shown(&name)?;
                let mut found = false;
                for entry in &mut shown {
                    if entry.0.eq(&name)? {
                        entry.1 = n.clone();
                        found = true;
                        break;
                    }
                }
                if !found {
                    shown.push((name, n));
                }
            }
            if shown.is_empty() {
                out.extend_from_slice(b"{}");
            } else {
                for (i, (name, n)) in shown.iter().enumerate() {
                    out.push(if i > 0 { b',' } else { b'{' });
                    w.newline(depth + 2, out);
                    w.key::<PLAIN>(name, out)?;
                    out.extend_from_slice(b": ");
                    w.write::<PLAIN>(n, depth + 2, out)?;
                }
                w.newline(depth + 1, out);
                out.push(b'}');
            }
        } else {
            out.truncate(mark);
            continue;
        }
        any = true;
    }
    if any {
        w.newline(depth, out);
        out.push(b'}');
    } else {
        out.extend_from_slice(b"{}");
    }
    Ok(())
}

/// A dumped model's entries: its keys written as the report writes keys.
fn dumped_entries<'py>(
    w: &mut Writer,
    dumped: &Bound<'py, PyDict>,
) -> Result<Entries<'static, 'py>, Stop> {
    let mut entries = Vec::with_capacity(dumped.len());
    for (key, value) in dumped.iter() {
        let mut text = Vec::new();
        w.key::<FULL>(&key, &mut text)?;
        text.extend_from_slice(b": ");
        entries.push((Cow::Owned(text), Slot::Value(value)));
    }
    Ok(entries)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(json_indented, m)?)?;
    m.add_function(wrap_pyfunction!(report_text, m)?)?;
    m.add_class::<VerdictJson>()?;
    Ok(())
}
