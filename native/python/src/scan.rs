//! The scan text of a step (`Step.scan_text`, `Step.raw_json`) and the pattern search over
//! it (`Trajectory.find_network_violations`), from `otel_oracles_core::scan`.
//!
//! The text is written straight from the Python values into the buffer searched, with no
//! tree between: the sorted JSON in one walk (each dict's entries sorted by key as they are
//! written), then, for a step's scan text, the strings in a second walk in insertion order
//! (`scan::collect_str` for each, which also reads a string holding JSON). Only values whose
//! JSON form is certain without asking Python are written: exact `str`, `int`, `float`,
//! `bool`, `None`, `list`, `tuple` and `dict` with exact `str` keys, nested at most
//! [`MAX_READ_DEPTH`] levels. At anything else (subclasses, enums in values, `bytes`, sets,
//! other keys, deeper or cyclic values) the buffer is put back as it was and the writer
//! answers that it did not write, and the caller asks the library whose rules define the
//! text (pydantic's `model_dump(mode="json")` for a step's fields, `json.dumps(default=str)`
//! for an AgentBench object): the text is theirs by construction.
//!
//! A search whose patterns all occur within strings only (`scan::within_strings`, proved in
//! `scan`'s notes) needs no JSON: the same walk, refusing the same values, writes only the
//! pieces ([`Writer::pieces`]): every string and key between its quotes as the JSON writes
//! it, and after them the lines of strings the JSON does not hold as a piece (those of
//! strings with escapes, and those holding JSON with the strings inside); a line of a
//! string written unescaped is that string's piece, already there. Each piece of the scan
//! text is then a piece of what is searched, and nothing else is, all between quotes and
//! line breaks: the same patterns occur. No key is sorted and no number written.

use std::borrow::Cow;
use std::sync::{Mutex, OnceLock};

use bumpalo::Bump;
use otel_oracles_core::json_text::{write_float_text, write_int, write_string, written_as_is};
use otel_oracles_core::otlp_json::repr::write_repr_float;
use otel_oracles_core::scan::{self, Limits, Patterns};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use pyo3::PyTypeInfo;

use crate::pydict::{self, instance_dict};

/// Deepest nesting written from a step's fields or an AgentBench object: below pydantic's
/// own serialization limit (it refuses values nested about 255 levels deep) and
/// `json.dumps`'s recursion limit, so whatever is written is what they would have written,
/// and deeper values are theirs to write or refuse.
const MAX_READ_DEPTH: usize = 200;

/// Deepest nesting written from `model_dump`'s output: past pydantic's limit, so all of it.
const MAX_DUMP_DEPTH: usize = 300;

/// How non-finite floats are written: `model_dump(mode="json")` makes them `None`,
/// `json.dumps` writes `NaN`, `Infinity`, `-Infinity`.
#[derive(Clone, Copy, PartialEq)]
enum Floats {
    PydanticJson,
    JsonDumps,
}

/// Writes the sorted JSON of plain Python values (see the module notes).
struct Writer<'b> {
    floats: Floats,
    max_depth: usize,
    /// Only the pieces a search of patterns that occur within strings needs
    /// ([`PatternSearch::violations`], `scan::within_strings`): each string and key
    /// written between its quotes as the JSON writes it, in the values' own order, with no
    /// punctuation, numbers or literals (and no sorting of keys), and the lines the
    /// [`Aside`] takes. Which values are written, or refused, is the same. The pieces
    /// are written with their ASCII letters lower-cased, ready to be searched
    /// (`scan::write_lowered_string`); the lines aside are not.
    pieces: bool,
    /// Whether a piece written is not all ASCII (the text is then lower-cased by Python).
    non_ascii: bool,
    /// Whether the line aside of a string written with escapes is left out where the
    /// string's piece holds the patterns it holds (`json_text::written_as_is` of every
    /// pattern, and `scan::lowers_alone`): pieces only.
    escaped_alone: bool,
    /// The patterns in the keys met before ([`KeyHits`]), and the search they are of: a
    /// key known there is not written (pieces only).
    keys: Option<(&'b mut KeyHits, &'b PatternSearch)>,
    /// What Python raised while a value was written (the digits of an integer longer than
    /// it converts): the value is then not written, and `scan_data` raises it as
    /// `json.dumps` did.
    error: Option<PyErr>,
    /// Where the strings a search needs besides the JSON go, as they are met.
    aside: Option<Aside<'b>>,
}

/// The strings of a value that its JSON does not hold verbatim, collected while the JSON is
/// written, for a search of patterns none of which holds a line break
/// ([`PatternSearch::violations`]).
///
/// The scan text is the JSON, then every string and key on a line of its own (and the
/// strings of the JSON a string holds). A pattern without a line break that occurs in that
/// tail occurs within one of its lines. A line that is an ASCII string written in the JSON
/// unescaped (no `"`, `\` or control character) and holding no JSON object or array is in
/// the JSON as it is, between quotes, and lower-cases the same there (ASCII letters
/// lower-case alone, whatever surrounds them): the pattern occurs in the JSON too. Only the
/// other lines are written: strings with escapes, non-ASCII ones (whose lower-casing by
/// Python is left to it, in its context, as before) and those holding JSON, through
/// `scan::collect_str` as the whole walk does, at the depths it has. Which patterns occur
/// is the same; the text searched is shorter by about half.
struct Aside<'b> {
    limits: Limits,
    bump: &'b Bump,
    out: &'b mut Vec<u8>,
}

/// Whether a string or key is in the JSON as it is: ASCII, and written between quotes with
/// nothing escaped (`written` bytes for its `text`).
fn verbatim(text: &[u8], written: usize) -> bool {
    written == text.len() + 2 && text.is_ascii()
}

impl<'b> Writer<'b> {
    fn new(floats: Floats, max_depth: usize) -> Self {
        Self {
            floats,
            max_depth,
            pieces: false,
            non_ascii: false,
            escaped_alone: false,
            keys: None,
            error: None,
            aside: None,
        }
    }

    /// A writer of the pieces alone (see [`Writer::pieces`]).
    fn pieces(floats: Floats, max_depth: usize) -> Self {
        Self {
            pieces: true,
            ..Self::new(floats, max_depth)
        }
    }

    /// A string or key between its quotes, as the JSON writes it (lower-cased, a piece).
    fn quoted(&mut self, text: &[u8], out: &mut Vec<u8>) {
        if self.pieces {
            self.non_ascii |= !scan::write_lowered_string(text, out);
        } else {
            write_string(text, out);
        }
    }

    /// A string (at nesting `depth`), and its line aside when the JSON does not hold it
    /// verbatim.
    fn string(&mut self, text: &[u8], depth: usize, out: &mut Vec<u8>) {
        let before = out.len();
        self.quoted(text, out);
        if let Some(aside) = &mut self.aside {
            let written = out.len() - before;
            if self.pieces {
                // Written pieces are lower-cased alone whatever their characters, so a
                // piece already holds what the line of an unescaped string would; and, for
                // the patterns `escaped_alone` is for, what that of an escaped one would.
                let as_is = written == text.len() + 2;
                if as_is || (self.escaped_alone && scan::lowers_alone(text)) {
                    scan::collect_nested(text, depth, aside.limits, aside.bump, aside.out);
                } else {
                    scan::collect_str(text, depth, aside.limits, aside.bump, aside.out);
                }
            } else if !verbatim(text, written) || scan::holds_container(text) {
                scan::collect_str(text, depth, aside.limits, aside.bump, aside.out);
            }
        }
    }

    /// `object` (at nesting `depth`) appended to `out` as `json.dumps(ensure_ascii=False,
    /// sort_keys=True)` writes it; `false` where it is not plain data (`out` then holds a
    /// part of it: the caller cuts it off).
    fn json(&mut self, object: &Bound<'_, PyAny>, depth: usize, out: &mut Vec<u8>) -> bool {
        if depth > self.max_depth {
            return false;
        }
        if let Ok(text) = object.cast_exact::<PyString>() {
            return match str_bytes(text) {
                Ok(bytes) => {
                    self.string(&bytes, depth, out);
                    true
                }
                Err(_) => false,
            };
        }
        if object.is_none() {
            if !self.pieces {
                out.extend_from_slice(b"null");
            }
            return true;
        }
        if object.is_exact_instance_of::<PyBool>() {
            if !self.pieces {
                let truth = object.is(PyBool::new(object.py(), true));
                out.extend_from_slice(if truth { b"true" } else { b"false" });
            }
            return true;
        }
        if object.is_exact_instance_of::<PyInt>() {
            return match object.extract::<i64>() {
                Ok(_) if self.pieces => true,
                Ok(n) => {
                    write_int(n, out);
                    true
                }
                // Python's own digits (it refuses more than `sys.get_int_max_str_digits()`).
                Err(_) => match object.str() {
                    Ok(digits) => match digits.to_str() {
                        Ok(_) if self.pieces => true,
                        Ok(digits) => {
                            out.extend_from_slice(digits.as_bytes());
                            true
                        }
                        Err(_) => false,
                    },
                    Err(error) => {
                        self.error = Some(error);
                        false
                    }
                },
            };
        }
        if let Ok(float) = object.cast_exact::<PyFloat>() {
            if self.pieces {
                return true;
            }
            let x = float.value();
            match self.floats {
                Floats::PydanticJson if !x.is_finite() => out.extend_from_slice(b"null"),
                Floats::PydanticJson => write_repr_float(x, out),
                Floats::JsonDumps => write_float_text(x, out),
            }
            return true;
        }
        if let Ok(list) = object.cast_exact::<PyList>() {
            return self.items(list.iter(), depth, out);
        }
        if let Ok(tuple) = object.cast_exact::<PyTuple>() {
            return self.items(tuple.iter(), depth, out);
        }
        if let Ok(dict) = object.cast_exact::<PyDict>() {
            return self.dict(dict, depth, out);
        }
        false
    }

    /// An array's items (at `depth` + 1).
    fn items<'py>(
        &mut self,
        items: impl Iterator<Item = Bound<'py, PyAny>>,
        depth: usize,
        out: &mut Vec<u8>,
    ) -> bool {
        if self.pieces {
            return items
                .into_iter()
                .all(|item| self.json(&item, depth + 1, out));
        }
        out.push(b'[');
        for (i, item) in items.enumerate() {
            if i > 0 {
                out.extend_from_slice(b", ");
            }
            if !self.json(&item, depth + 1, out) {
                return false;
            }
        }
        out.push(b']');
        true
    }

    /// A key's bytes as the JSON is written from them: its UTF-8, or its `surrogatepass`
    /// bytes where it holds a lone surrogate; `None` where the text cannot be written
    /// (pydantic cannot write such a key: it raises).
    fn key_bytes<'k>(&self, key: &'k Bound<'_, PyString>) -> Option<Cow<'k, [u8]>> {
        match key.to_str() {
            Ok(text) => Some(Cow::Borrowed(text.as_bytes())),
            Err(_) if self.floats == Floats::PydanticJson => None,
            Err(_) => str_bytes(key).ok(),
        }
    }

    /// A dict (at `depth`; its values at `depth` + 1), its entries written in the order of
    /// their keys' code points.
    fn dict(&mut self, dict: &Bound<'_, PyDict>, depth: usize, out: &mut Vec<u8>) -> bool {
        if self.pieces {
            return self.dict_pieces(dict, depth, out);
        }
        let mut keys: Vec<(Bound<'_, PyString>, Bound<'_, PyAny>)> = Vec::with_capacity(dict.len());
        for (key, item) in dict.iter() {
            let Ok(key) = key.cast_into_exact::<PyString>() else {
                return false;
            };
            keys.push((key, item));
        }
        let mut entries: Vec<(Cow<'_, [u8]>, &Bound<'_, PyAny>)> = Vec::with_capacity(keys.len());
        for (key, item) in &keys {
            let Some(bytes) = self.key_bytes(key) else {
                return false;
            };
            entries.push((bytes, item));
        }
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        out.push(b'{');
        for (i, (key, item)) in entries.iter().enumerate() {
            if i > 0 {
                out.extend_from_slice(b", ");
            }
            let before = out.len();
            write_string(&**key, out);
            if let Some(aside) = &mut self.aside {
                if depth <= scan::SCAN_MAX_DEPTH && !verbatim(key, out.len() - before) {
                    aside.out.push(b'\n');
                    aside.out.extend_from_slice(key);
                }
            }
            out.extend_from_slice(b": ");
            if !self.json(item, depth + 1, out) {
                return false;
            }
        }
        out.push(b'}');
        true
    }

    /// [`Writer::dict`]'s pieces: its keys and values in the dict's order, each key
    /// refused where `dict` refuses it.
    ///
    /// The dict's pairs are read as it lends them (`pydict::lent_pairs`): the usual pair, a
    /// key kept in [`KeyHits`] with its patterns and an exact `str` that is UTF-8, is
    /// written by `str`'s own C code alone, with no reference taken or released. Any other
    /// pair (a container or a number, walked or converted by code that may run Python's; a
    /// key met first, searched by Python) is given references of its own first, and a dict
    /// whose size then changed is refused, as iterating it in Python refuses it.
    fn dict_pieces(&mut self, dict: &Bound<'_, PyDict>, depth: usize, out: &mut Vec<u8>) -> bool {
        let len = dict.len();
        // SAFETY: a pair is read lent only where its key is kept with its patterns and its
        // value is an exact `str`: the key is then compared by address and its patterns
        // noted, the value read as UTF-8, and no Python code runs that could change the
        // dict. A value that is no UTF-8 is known so only once `to_str` has made an
        // exception, an allocation on which a collection may run finalizers that change the
        // dict: the pair is then read again, held (`again`). Any other pair is made
        // references of its own before anything else is done with it.
        let mut pairs = unsafe { pydict::lent_pairs(dict) };
        while let Some((key, item)) = pairs.next() {
            let Ok(key) = key.cast_exact::<PyString>() else {
                return false;
            };
            if let (true, Ok(text)) = (depth < self.max_depth, item.cast_exact::<PyString>()) {
                let known = match &mut self.keys {
                    Some((keys, _)) => keys.known_kept(&key),
                    None => false,
                };
                if known {
                    if let Ok(text) = text.to_str() {
                        self.string(text.as_bytes(), depth + 1, out);
                        continue;
                    }
                    let Ok((_, item)) = pairs.again(key.as_ptr()) else {
                        return false;
                    };
                    if !self.json(&item, depth + 1, out) || dict.len() != len {
                        return false;
                    }
                    continue;
                }
            }
            let (key, item) = (key.to_owned(), item.to_owned());
            if !self.piece(&key, &item, depth, out) || dict.len() != len {
                return false;
            }
        }
        true
    }

    /// A dict's pair `key: item` (at `depth`) as [`Writer::dict_pieces`] writes it.
    fn piece(
        &mut self,
        key: &Bound<'_, PyString>,
        item: &Bound<'_, PyAny>,
        depth: usize,
        out: &mut Vec<u8>,
    ) -> bool {
        let known = match &mut self.keys {
            Some((keys, search)) => keys.known(key, search),
            None => false,
        };
        if known {
            return self.json(item, depth + 1, out);
        }
        let Some(bytes) = self.key_bytes(key) else {
            return false;
        };
        let before = out.len();
        self.quoted(&bytes, out);
        if let Some(aside) = &mut self.aside {
            if depth <= scan::SCAN_MAX_DEPTH
                && out.len() - before != bytes.len() + 2
                && !(self.escaped_alone && scan::lowers_alone(&bytes))
            {
                aside.out.push(b'\n');
                aside.out.extend_from_slice(&bytes);
            }
        }
        self.json(item, depth + 1, out)
    }
}

/// The patterns of a search in the keys of the dicts it walks, by the key object. The keys
/// of steps' arguments and results are a few objects met again and again (a decoder makes
/// one object of each key it reads often: 344,546 keys in data-2000's scanned steps are
/// about 25 objects), and a key written without an escape is a piece of its own, which
/// lower-cases alone and holds no pattern across its quotes (the proof in `scan`'s notes):
/// its patterns are worked out when it is first met, and it is not written again. Slots
/// are picked by the key's address, and each holds its key (a reference of its own: no
/// other object takes that address while it is kept); a key met in a taken slot takes it.
/// A [`PatternSearch`] keeps its table from call to call (the keys of one trajectory are
/// those of the next).
struct KeyHits {
    slots: Vec<KeySlot>,
    /// The patterns in the known keys met since [`KeyHits::found`] was last emptied.
    found: Vec<usize>,
}

/// A key met, and the patterns in it (`None` where it is written as before).
type KeySlot = Option<(Py<PyString>, Option<Box<[usize]>>)>;

/// [`KeyHits`]' slots: a power of two, many more than the keys a search usually meets.
const KEY_SLOTS: usize = 256;

/// The longest key (in characters) [`KeyHits`] keeps: its slots live as long as the
/// search, so a key from a trace is kept only when it is small (field names are); a longer
/// one is written each time, as before keys were kept.
const KEY_KEPT_MAX_CHARS: usize = 256;

impl KeyHits {
    fn new() -> Self {
        Self {
            slots: (0..KEY_SLOTS).map(|_| None).collect(),
            found: Vec::new(),
        }
    }

    /// Whether `key`'s patterns in `search` are known (they are then added to
    /// [`KeyHits::found`] and the key need not be written): not for a key the JSON writes
    /// with an escape, longer than [`KEY_KEPT_MAX_CHARS`], or that is not UTF-8 (it is
    /// written, or refused, as before).
    fn known(&mut self, key: &Bound<'_, PyString>, search: &PatternSearch) -> bool {
        let slot = Self::slot(key);
        if !self.holds(key) {
            if key.len().map_or(true, |chars| chars > KEY_KEPT_MAX_CHARS) {
                return false;
            }
            let Ok(hits) = search.hits_of_key(key) else {
                return false;
            };
            self.slots[slot] = Some((key.clone().unbind(), hits));
        }
        match &self.slots[slot] {
            Some((_, Some(hits))) => {
                self.found.extend_from_slice(hits);
                true
            }
            _ => false,
        }
    }

    /// `known` of a key that is kept with its patterns (compared by address: nothing of it
    /// is read, no Python code runs); `false`, nothing done, for any other.
    fn known_kept(&mut self, key: &Bound<'_, PyString>) -> bool {
        match &self.slots[Self::slot(key)] {
            Some((kept, Some(hits))) if kept.as_ptr() == key.as_ptr() => {
                self.found.extend_from_slice(hits);
                true
            }
            _ => false,
        }
    }

    /// Whether `key` itself is kept (compared by address: nothing of it is read).
    fn holds(&self, key: &Bound<'_, PyString>) -> bool {
        matches!(&self.slots[Self::slot(key)], Some((kept, _)) if kept.as_ptr() == key.as_ptr())
    }

    /// `key`'s slot, picked by its address, whose bits are mixed (Fibonacci hashing):
    /// objects of one size sit at a fixed stride in their pools, which its low bits alone
    /// would map to a few slots.
    fn slot(key: &Bound<'_, PyString>) -> usize {
        let mixed = (key.as_ptr() as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (mixed >> (64 - KEY_SLOTS.trailing_zeros())) as usize
    }
}

/// Every string leaf and key of `object` (at nesting `depth`), in insertion order, as
/// `scan::collect_strings` walks a value: for a value the [`Writer`] wrote, so plain data
/// (anything else holds no string and is passed over).
fn strings(
    object: &Bound<'_, PyAny>,
    depth: usize,
    limits: Limits,
    bump: &Bump,
    out: &mut Vec<u8>,
) {
    if depth > scan::SCAN_MAX_DEPTH {
        return;
    }
    if let Ok(text) = object.cast::<PyString>() {
        if let Ok(bytes) = str_bytes(text) {
            scan::collect_str(&bytes, depth, limits, bump, out);
        }
    } else if let Ok(dict) = object.cast_exact::<PyDict>() {
        for (key, item) in dict.iter() {
            if let Ok(key) = key.cast::<PyString>() {
                if let Ok(bytes) = str_bytes(key) {
                    out.push(b'\n');
                    out.extend_from_slice(&bytes);
                }
            }
            strings(&item, depth + 1, limits, bump, out);
        }
    } else if let Ok(list) = object.cast_exact::<PyList>() {
        for item in list.iter() {
            strings(&item, depth + 1, limits, bump, out);
        }
    } else if let Ok(tuple) = object.cast_exact::<PyTuple>() {
        for item in tuple.iter() {
            strings(&item, depth + 1, limits, bump, out);
        }
    }
}

/// An exact `str` as surrogate-extended UTF-8: borrowed when it is UTF-8, else encoded with
/// `surrogatepass` (it holds lone surrogates).
fn str_bytes<'s>(text: &'s Bound<'_, PyString>) -> PyResult<Cow<'s, [u8]>> {
    match text.to_str() {
        Ok(text) => Ok(Cow::Borrowed(text.as_bytes())),
        Err(_) => {
            let py = text.py();
            let encoded = text.call_method1(
                intern!(py, "encode"),
                (intern!(py, "utf-8"), intern!(py, "surrogatepass")),
            )?;
            Ok(Cow::Owned(encoded.cast::<PyBytes>()?.as_bytes().to_vec()))
        }
    }
}

/// Surrogate-extended UTF-8 as a `str`.
fn to_str<'py>(py: Python<'py>, bytes: &[u8]) -> PyResult<Bound<'py, PyString>> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(PyString::new(py, text)),
        Err(_) => Ok(PyBytes::new(py, bytes)
            .call_method1(
                intern!(py, "decode"),
                (intern!(py, "utf-8"), intern!(py, "surrogatepass")),
            )?
            .cast_into::<PyString>()?),
    }
}

/// What a step field's declared type lets through unchanged to `model_dump(mode="json")`:
/// a value of exactly that type is dumped as the reader reads it; another value is dumped
/// by pydantic's rules for the mismatch (a `bool` in an `int` field becomes `1`), so the
/// whole step is left to pydantic.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Code {
    /// `Any`: any plain value.
    Any,
    /// `str` (or a `Literal` of strings).
    Str,
    /// `int` (not `bool`).
    Int,
    Bool,
    /// A member of the given enum class, dumped as its `value` (a `str`).
    Enum,
    /// `tuple[str, ...]`, dumped as a list.
    StrTuple,
    /// `list[str]`.
    StrList,
    /// `dict[str, Any]`.
    Dict,
    /// `list[dict[str, Any]]`.
    DictList,
}

impl Code {
    fn from_name(name: &str) -> PyResult<Self> {
        Ok(match name {
            "any" => Code::Any,
            "str" => Code::Str,
            "int" => Code::Int,
            "bool" => Code::Bool,
            "enum" => Code::Enum,
            "str_tuple" => Code::StrTuple,
            "str_list" => Code::StrList,
            "dict" => Code::Dict,
            "dict_list" => Code::DictList,
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown field type {other:?}"
                )))
            }
        })
    }
}

/// A behaviour field of `Step`: its name (as the `__dict__` key and as bytes) and type.
struct Field {
    name: Py<PyString>,
    bytes: Vec<u8>,
    code: Code,
    enum_class: Option<Py<PyAny>>,
}

/// A field's value as it is written: a step's own data, or the `str` an enum member is
/// dumped as.
enum FieldValue<'py> {
    Data(Bound<'py, PyAny>),
    Text(Bound<'py, PyString>),
}

/// The behaviour fields of `Step` (declaration order, provenance left out) and their types,
/// given once by `otel_oracles.model.step`: the scan text of a step read from its fields.
#[pyclass(module = "otel_oracles._native", name = "ScanFields", frozen)]
pub struct ScanFields {
    fields: Vec<Field>,
    /// Indexes of `fields` in the order of their names' code points (the JSON's order).
    sorted: Vec<usize>,
    /// `(hash of the name, index in fields)`, by hash: a key of a step's `__dict__` that is
    /// not one of the names themselves is looked up here as the dict would look it up.
    by_hash: Vec<(isize, usize)>,
}

#[pymethods]
impl ScanFields {
    /// `fields`: `(name, type, enum class or None)` triples, type one of `any`, `str`,
    /// `int`, `bool`, `enum`, `str_tuple`, `str_list`, `dict`, `dict_list`.
    #[new]
    fn new(
        py: Python<'_>,
        fields: Vec<(Bound<'_, PyString>, String, Option<Bound<'_, PyAny>>)>,
    ) -> PyResult<Self> {
        let fields = fields
            .into_iter()
            .map(|(name, code, enum_class)| {
                let code = Code::from_name(&code)?;
                if (code == Code::Enum) != enum_class.is_some() {
                    return Err(PyValueError::new_err(
                        "an enum class goes with type 'enum' only",
                    ));
                }
                let bytes = name
                    .to_str()
                    .map_err(|_| PyValueError::new_err("a field name is no UTF-8"))?
                    .as_bytes()
                    .to_vec();
                Ok(Field {
                    name: name.unbind(),
                    bytes,
                    code,
                    enum_class: enum_class.map(Bound::unbind),
                })
            })
            .collect::<PyResult<Vec<_>>>()?;
        let mut sorted: Vec<usize> = (0..fields.len()).collect();
        sorted.sort_by(|a, b| fields[*a].bytes.cmp(&fields[*b].bytes));
        let mut by_hash = fields
            .iter()
            .enumerate()
            .map(|(i, field)| Ok((field.name.bind(py).hash()?, i)))
            .collect::<PyResult<Vec<_>>>()?;
        by_hash.sort_unstable();
        Ok(Self {
            fields,
            sorted,
            by_hash,
        })
    }

    /// The scan text of a step whose field values are `values` (its `__dict__`), fields
    /// that are `None` left out (only its sorted JSON unless `with_strings`), or `None`
    /// when a value is not of its field's exact type or not plain data (the caller then
    /// dumps the step with pydantic and calls [`scan_data`]). `int_max_str_digits`:
    /// `sys.get_int_max_str_digits()`.
    fn scan_text<'py>(
        &self,
        values: &Bound<'py, PyDict>,
        int_max_str_digits: usize,
        with_strings: bool,
    ) -> PyResult<Option<Bound<'py, PyString>>> {
        let mut out = Vec::new();
        let strings_of = if with_strings {
            Strings::All(Limits { int_max_str_digits })
        } else {
            Strings::Left
        };
        if self.write_into(values, strings_of, &Bump::new(), &mut out)? {
            to_str(values.py(), &out).map(Some)
        } else {
            Ok(None)
        }
    }
}

impl ScanFields {
    /// The value of each field in `values` (a step's `__dict__`), by field index, `None`
    /// where it is missing or `None`: what `values.get(name)` answers for each name, read
    /// in one pass over the dict instead of one lookup a field. Its keys are the names
    /// themselves, in the fields' order (pydantic fills it from `Step.model_fields`, whose
    /// names Python interns), so each key is first compared by identity with the field
    /// expected next; any other exact `str` key (provenance fields, an equal copy of a
    /// name) is looked up by its hash and compared as the dict compares it. A key of another
    /// type (whose hash and equality would be its own code, run while the dict is walked)
    /// sends the step back to a lookup per field. The entries are borrowed (`PyDict_Next`:
    /// no reference taken or released per key and value): a lookup a field costs about
    /// twice as much as a step of the walk.
    fn values_of<'py>(
        &self,
        values: &Bound<'py, PyDict>,
    ) -> PyResult<Vec<Option<Bound<'py, PyAny>>>> {
        let mut found: Vec<Option<Bound<'py, PyAny>>> = vec![None; self.fields.len()];
        let mut next = 0;
        // SAFETY: nothing in the loop runs Python code that could change the dict: a key is
        // compared by identity, or is an exact `str` (whose hash and equality are `str`'s
        // own), and a value is only compared with `None` and kept with a reference of its
        // own.
        for (key, value) in unsafe { pydict::lent_pairs(values) } {
            let index = match self.fields.get(next) {
                Some(field) if key.as_ptr() == field.name.as_ptr() => next,
                _ => {
                    let Ok(key) = key.cast_exact::<PyString>() else {
                        return self.values_by_name(values);
                    };
                    match self.field_named(&key)? {
                        Some(index) => index,
                        None => continue,
                    }
                }
            };
            next = index + 1;
            if !value.is_none() {
                found[index] = Some(value.to_owned());
            }
        }
        Ok(found)
    }

    /// [`ScanFields::values_of`] by one lookup a field.
    fn values_by_name<'py>(
        &self,
        values: &Bound<'py, PyDict>,
    ) -> PyResult<Vec<Option<Bound<'py, PyAny>>>> {
        let py = values.py();
        self.fields
            .iter()
            .map(|field| {
                Ok(values
                    .get_item(field.name.bind(py))?
                    .filter(|value| !value.is_none()))
            })
            .collect()
    }

    /// The index of the field named `key` (an exact `str`), found as a dict finds a key:
    /// the same hash, then the same object or equal text.
    fn field_named(&self, key: &Bound<'_, PyString>) -> PyResult<Option<usize>> {
        let hash = key.hash()?;
        let from = self.by_hash.partition_point(|&(h, _)| h < hash);
        for &(h, index) in &self.by_hash[from..] {
            if h != hash {
                break;
            }
            let name = self.fields[index].name.bind(key.py());
            if key.is(name) || key.as_any().eq(name)? {
                return Ok(Some(index));
            }
        }
        Ok(None)
    }

    /// [`ScanFields::scan_text`] appended to `out` (the JSON, then the `strings` asked
    /// for), strings inside strings read into `bump`: whether it was written (`out` is
    /// left as it was when not). A walk over many steps hands every step the same buffers
    /// and arena, so they grow to the largest step once instead of being made again per
    /// step.
    fn write_into(
        &self,
        values: &Bound<'_, PyDict>,
        strings_of: Strings<'_>,
        bump: &Bump,
        out: &mut Vec<u8>,
    ) -> PyResult<bool> {
        let mut present: Vec<Option<FieldValue<'_>>> = Vec::with_capacity(self.fields.len());
        for (field, value) in self.fields.iter().zip(self.values_of(values)?) {
            let Some(value) = value else {
                present.push(None);
                continue;
            };
            let Some(value) = field.admit(value)? else {
                return Ok(false);
            };
            present.push(Some(value));
        }
        let start = out.len();
        let pieces = matches!(strings_of, Strings::Pieces { .. });
        let mut writer = if pieces {
            Writer::pieces(Floats::PydanticJson, MAX_READ_DEPTH)
        } else {
            Writer::new(Floats::PydanticJson, MAX_READ_DEPTH)
        };
        let (in_order, aside, mut names, non_ascii) = match strings_of {
            Strings::Left => (None, None, None, None),
            Strings::All(limits) => (Some(limits), None, None, None),
            Strings::Searched(limits, aside) => (None, Some((limits, aside)), None, None),
            Strings::Pieces {
                limits,
                aside,
                names,
                named,
                non_ascii,
                escaped_alone,
                keys,
            } => {
                writer.escaped_alone = escaped_alone;
                writer.keys = Some(keys);
                (
                    None,
                    Some((limits, aside)),
                    Some((names, named)),
                    Some(non_ascii),
                )
            }
        };
        let aside_start = aside.as_ref().map_or(0, |(_, aside)| aside.len());
        if let Some((limits, aside)) = aside {
            writer.aside = Some(Aside {
                limits,
                bump,
                out: aside,
            });
        }
        if !pieces {
            out.push(b'{');
        }
        let mut first = true;
        for &i in &self.sorted {
            let Some(value) = &present[i] else {
                continue;
            };
            if !first && !pieces {
                out.extend_from_slice(b", ");
            }
            first = false;
            let known = match &mut names {
                Some((of_field, found)) => match &of_field[i] {
                    Some(hits) => {
                        found.extend_from_slice(hits);
                        true
                    }
                    None => false,
                },
                None => false,
            };
            if !known {
                let name = &self.fields[i].bytes;
                let before = out.len();
                writer.quoted(name, out);
                if let Some(aside) = &mut writer.aside {
                    if !verbatim(name, out.len() - before) {
                        aside.out.push(b'\n');
                        aside.out.extend_from_slice(name);
                    }
                }
            }
            if !pieces {
                out.extend_from_slice(b": ");
            }
            let written = match value {
                FieldValue::Data(data) => writer.json(data, 1, out),
                FieldValue::Text(text) => match str_bytes(text) {
                    Ok(bytes) => {
                        writer.string(&bytes, 1, out);
                        true
                    }
                    Err(_) => false,
                },
            };
            if !written {
                out.truncate(start);
                if let Some(aside) = writer.aside {
                    aside.out.truncate(aside_start);
                }
                return Ok(false);
            }
        }
        if !pieces {
            out.push(b'}');
        }
        if let Some(non_ascii) = non_ascii {
            *non_ascii = writer.non_ascii;
        }
        if let Some(limits) = in_order {
            for (field, value) in self.fields.iter().zip(&present) {
                let Some(value) = value else {
                    continue;
                };
                out.push(b'\n');
                out.extend_from_slice(&field.bytes);
                match value {
                    FieldValue::Data(data) => strings(data, 1, limits, bump, out),
                    FieldValue::Text(text) => strings(text.as_any(), 1, limits, bump, out),
                }
            }
        }
        Ok(true)
    }
}

/// Which strings follow a step's JSON in the text [`ScanFields::write_into`] writes.
enum Strings<'b> {
    /// None: the JSON alone (`Step.raw_json`).
    Left,
    /// Every string leaf and key, in insertion order: the scan text (`Step.scan_text`).
    All(Limits),
    /// Only those the JSON does not hold verbatim, appended to the buffer given as they are
    /// met, for a search of patterns none of which holds a line break ([`Aside`]).
    Searched(Limits, &'b mut Vec<u8>),
    /// No JSON: only its pieces (each string and key between its quotes, as written), and
    /// the lines the JSON does not hold as a piece, appended to the buffer `aside`, for a
    /// search of patterns that occur within strings only ([`Writer::pieces`]).
    Pieces {
        limits: Limits,
        aside: &'b mut Vec<u8>,
        /// The patterns each field's name holds, known beforehand: such a name is not
        /// written (a piece alone, it holds the same patterns in every step).
        names: &'b NameHits,
        /// Where the patterns in the names of the fields present go.
        named: &'b mut Vec<usize>,
        /// Set to whether a piece written is not all ASCII (the pieces are lower-cased as
        /// they are written, [`Writer::pieces`]; the lines aside are not).
        non_ascii: &'b mut bool,
        /// [`Writer::escaped_alone`].
        escaped_alone: bool,
        /// [`Writer::keys`].
        keys: (&'b mut KeyHits, &'b PatternSearch),
    },
}

/// For each field of a [`ScanFields`], by index, the patterns of a search occurring in its
/// name as a piece of the scan text (`"name"`), ascending; `None` for a name the JSON
/// escapes, which is written as before.
type NameHits = [Option<Box<[usize]>>];

impl Field {
    /// `value` (not `None`) as it is written, when it is of exactly the field's type (a
    /// value of plain data inside it is checked as it is written), else `None`.
    fn admit<'py>(&self, value: Bound<'py, PyAny>) -> PyResult<Option<FieldValue<'py>>> {
        let admitted = match self.code {
            Code::Any => true,
            Code::Str => value.is_exact_instance_of::<PyString>(),
            Code::Int => value.is_exact_instance_of::<PyInt>(),
            Code::Bool => value.is_exact_instance_of::<PyBool>(),
            Code::Dict => value.is_exact_instance_of::<PyDict>(),
            Code::StrTuple => match value.cast_exact::<PyTuple>() {
                Ok(tuple) => all_exact::<PyString>(tuple.iter()),
                Err(_) => false,
            },
            Code::StrList => match value.cast_exact::<PyList>() {
                Ok(list) => all_exact::<PyString>(list.iter()),
                Err(_) => false,
            },
            Code::DictList => match value.cast_exact::<PyList>() {
                Ok(list) => all_exact::<PyDict>(list.iter()),
                Err(_) => false,
            },
            Code::Enum => {
                let py = value.py();
                return Ok(match &self.enum_class {
                    Some(class) if value.get_type().is(class.bind(py)) => {
                        match value.cast_into::<PyString>() {
                            // A `StrEnum` member is the `str` of its value.
                            Ok(text) => Some(FieldValue::Text(text)),
                            Err(error) => {
                                let member = error.into_inner();
                                let inner = member.getattr(intern!(py, "value"))?;
                                inner
                                    .cast_into_exact::<PyString>()
                                    .ok()
                                    .map(FieldValue::Text)
                            }
                        }
                    }
                    _ => None,
                });
            }
        };
        Ok(admitted.then_some(FieldValue::Data(value)))
    }
}

/// Whether every item is exactly of type `T`.
fn all_exact<'py, T: PyTypeInfo>(mut items: impl Iterator<Item = Bound<'py, PyAny>>) -> bool {
    items.all(|item| item.is_exact_instance_of::<T>())
}

/// The scan text of a step's fields as `model_dump(mode="json", exclude_none=True)` gave
/// them (`data`, plain data by pydantic's making). A `TypeError` if `data` is not.
#[pyfunction]
fn scan_data<'py>(
    data: &Bound<'py, PyDict>,
    int_max_str_digits: usize,
    with_strings: bool,
) -> PyResult<Bound<'py, PyString>> {
    let mut writer = Writer::new(Floats::PydanticJson, MAX_DUMP_DEPTH);
    let mut out = Vec::new();
    if !writer.dict(data, 0, &mut out) {
        return Err(writer.error.take().unwrap_or_else(|| {
            PyTypeError::new_err("scan_data: the step's dump is not plain JSON data")
        }));
    }
    if with_strings {
        let limits = Limits { int_max_str_digits };
        strings(data.as_any(), 0, limits, &Bump::new(), &mut out);
    }
    to_str(data.py(), &out)
}

/// `json.dumps(raw, ensure_ascii=False, sort_keys=True)` of an AgentBench step object made
/// of plain data, or `None` for anything else (the caller then calls `json.dumps` itself).
#[pyfunction]
fn raw_json<'py>(raw: &Bound<'py, PyDict>) -> PyResult<Option<Bound<'py, PyString>>> {
    let mut out = Vec::new();
    if raw_json_into(raw, false, &mut out).is_some() {
        to_str(raw.py(), &out).map(Some)
    } else {
        Ok(None)
    }
}

/// [`raw_json`] appended to `out` (only its pieces, lower-cased, when `pieces`:
/// [`Writer::pieces`]): `None` where it was not written (`out` is then left as it was),
/// else whether a piece written is not all ASCII.
fn raw_json_into(raw: &Bound<'_, PyDict>, pieces: bool, out: &mut Vec<u8>) -> Option<bool> {
    let start = out.len();
    let mut writer = if pieces {
        Writer::pieces(Floats::JsonDumps, MAX_READ_DEPTH)
    } else {
        Writer::new(Floats::JsonDumps, MAX_READ_DEPTH)
    };
    if writer.json(raw.as_any(), 0, out) {
        Some(writer.non_ascii)
    } else {
        out.truncate(start);
        None
    }
}

/// Which of some patterns occur in a text, ignoring case as `str.lower()` does: the
/// patterns are lower-cased once here, a text is searched as it is when it is ASCII and
/// lower-cased by Python otherwise (so the case mapping is the interpreter's own).
#[pyclass(module = "otel_oracles._native", name = "PatternSearch", frozen)]
pub struct PatternSearch {
    patterns: Patterns,
    /// Whether a pattern holds a line break (it may then span a scan text's lines, and a
    /// step's whole text is searched, not only the lines its JSON lacks: [`Aside`]).
    spans_lines: bool,
    /// Whether every pattern occurs within strings only (`scan::within_strings`): a step's
    /// pieces are then searched instead of its text ([`Strings::Pieces`]).
    strings_only: bool,
    /// The patterns in the names of a `ScanFields`' fields, for the one searched
    /// ([`PatternSearch::name_hits`]).
    names: OnceLock<(Py<ScanFields>, Box<NameHits>)>,
    /// Whether, searching pieces, no pattern holds a byte the JSON escapes
    /// (`json_text::written_as_is` of each): the line of a string written with escapes is then
    /// left out where its piece holds what it would ([`Writer::escaped_alone`]).
    escaped_alone: bool,
    /// The patterns in the keys met by the searches so far ([`KeyHits`]): taken by one
    /// search at a time (another, on another thread or inside a `fallback`, makes a table
    /// of its own for its call).
    keys: Mutex<KeyHits>,
}

#[pymethods]
impl PatternSearch {
    #[new]
    fn new(patterns: Vec<Bound<'_, PyString>>) -> PyResult<Self> {
        let lowered = patterns
            .iter()
            .map(|p| {
                let lower = p
                    .call_method0(intern!(p.py(), "lower"))?
                    .cast_into::<PyString>()?;
                Ok(str_bytes(&lower)?.into_owned())
            })
            .collect::<PyResult<Vec<Vec<u8>>>>()?;
        let spans_lines = lowered.iter().any(|p| p.contains(&b'\n'));
        let strings_only = lowered
            .iter()
            .all(|p| scan::within_strings(&p.to_ascii_lowercase()));
        let escaped_alone = strings_only
            && lowered
                .iter()
                .all(|p| written_as_is(&p.to_ascii_lowercase()));
        let patterns = Patterns::new(&lowered).map_err(PyValueError::new_err)?;
        Ok(Self {
            patterns,
            spans_lines,
            strings_only,
            names: OnceLock::new(),
            escaped_alone,
            keys: Mutex::new(KeyHits::new()),
        })
    }

    /// Whether every pattern occurs, wherever it does, within one string of a scan text
    /// (never in or across its JSON syntax, numbers or literals), so that `violations`
    /// searches a step's strings instead of its written text.
    #[getter]
    fn strings_only(&self) -> bool {
        self.strings_only
    }

    /// Indexes of the patterns that occur in `text` (case-insensitively), ascending.
    fn occurring(&self, text: &Bound<'_, PyString>) -> PyResult<Vec<usize>> {
        self.occurring_in(text)
    }

    /// `Trajectory.find_network_violations` over `steps` in one call: for every step that
    /// is scanned (an AgentBench step, whose `raw` is set, or a trace-derived step whose
    /// `kind` is in `toolish`), its scan text, then the patterns occurring in it, as
    /// `(step.index, step.tool, pattern index)` in step order and, within a step,
    /// ascending pattern order.
    ///
    /// A step's text is written from its fields by `fields` (with its strings) or from
    /// its raw object as [`raw_json`] does, into one buffer the walk reuses, and searched
    /// there. When no pattern holds a line break, of the strings after the JSON only those
    /// the JSON does not hold verbatim are written ([`Aside`]: the same patterns occur);
    /// when every pattern occurs within strings only (the usual lists:
    /// `scan::within_strings`), no JSON is written, only the strings' pieces
    /// ([`Strings::Pieces`]: the same patterns occur, by the proof in `scan`'s notes),
    /// lower-cased as they are copied, a key met before not written ([`KeyHits`]).
    /// The text searched: an ASCII text (the usual one) is lower-cased (pieces as they are
    /// written, the rest in place) and never becomes a Python string; any other text is
    /// made one and lower-cased by Python ([`PatternSearch::occurring`]). Where a writer does not write (a value that is not
    /// plain data) the text is `fallback(step)` (`Step.scan_text`, which lets the library
    /// whose rules define the text write it). No text is kept: writing a step's text again
    /// for another pattern list costs less than making and keeping a Python string of it.
    #[pyo3(signature = (steps, fields, int_max_str_digits, toolish, fallback))]
    fn violations<'py>(
        &self,
        steps: &Bound<'py, PyAny>,
        fields: &Bound<'py, ScanFields>,
        int_max_str_digits: usize,
        toolish: &Bound<'py, PyAny>,
        fallback: &Bound<'py, PyAny>,
    ) -> PyResult<Vec<Violation<'py>>> {
        let py = steps.py();
        let mut found = Vec::new();
        let mut text: Vec<u8> = Vec::new();
        let mut aside: Vec<u8> = Vec::new();
        let mut bump = Bump::new();
        let limits = Limits { int_max_str_digits };
        // The patterns in the names of the fields present, searched apart (`Pieces`).
        let names = if self.strings_only {
            Some(self.name_hits(fields)?)
        } else {
            None
        };
        let mut named: Vec<usize> = Vec::new();
        let mut kept = self.keys.try_lock();
        let mut own = None;
        let keys = match &mut kept {
            Ok(kept) => &mut **kept,
            Err(_) => own.insert(KeyHits::new()),
        };
        let fields = fields.get();
        for step in steps.try_iter()? {
            let step = step?;
            // The dict read directly, not looked up through the class (`instance_dict`); a
            // step without one is asked for its `__dict__` as before, for the error.
            let values = match instance_dict(&step) {
                Some(values) => values,
                None => step
                    .getattr(intern!(py, "__dict__"))?
                    .cast_into::<PyDict>()?,
            };
            let raw = values
                .get_item(intern!(py, "raw"))?
                .filter(|raw| !raw.is_none());
            if raw.is_none() {
                let kind = values
                    .get_item(intern!(py, "kind"))?
                    .unwrap_or_else(|| py.None().into_bound(py));
                if !toolish.contains(kind)? {
                    continue;
                }
            }
            text.clear();
            aside.clear();
            named.clear();
            keys.found.clear();
            bump.reset();
            let written = match &raw {
                Some(raw) => match raw.cast::<PyDict>() {
                    Ok(raw) => match raw_json_into(raw, self.strings_only, &mut text) {
                        Some(non_ascii) if self.strings_only => Written::Pieces {
                            lowered: text.len(),
                            non_ascii,
                        },
                        Some(_) => Written::Text,
                        None => Written::Not,
                    },
                    Err(_) => Written::Not,
                },
                None if self.spans_lines => Written::text(fields.write_into(
                    &values,
                    Strings::All(limits),
                    &bump,
                    &mut text,
                )?),
                None => {
                    let mut non_ascii = false;
                    let pieces = names.is_some();
                    let strings_of = if let Some(of_field) = &names {
                        Strings::Pieces {
                            limits,
                            aside: &mut aside,
                            names: of_field,
                            named: &mut named,
                            non_ascii: &mut non_ascii,
                            escaped_alone: self.escaped_alone,
                            keys: (&mut *keys, self),
                        }
                    } else {
                        Strings::Searched(limits, &mut aside)
                    };
                    let done = fields.write_into(&values, strings_of, &bump, &mut text)?;
                    let lowered = text.len();
                    text.extend_from_slice(&aside);
                    match done {
                        true if pieces => Written::Pieces { lowered, non_ascii },
                        done => Written::text(done),
                    }
                }
            };
            let mut hits = match written {
                Written::Not => {
                    let made = fallback.call1((&step,))?.cast_into::<PyString>()?;
                    self.occurring_in(&made)?
                }
                Written::Text if text.is_ascii() => self.patterns.occurring_in_place(&mut text),
                Written::Text => self.occurring_in(&to_str(py, &text)?)?,
                Written::Pieces { lowered, non_ascii } => {
                    let lines = &mut text[lowered..];
                    lines.make_ascii_lowercase();
                    if !non_ascii && lines.is_ascii() {
                        self.patterns.occurring_lowered(&text)
                    } else {
                        self.occurring_in(&to_str(py, &text)?)?
                    }
                }
            };
            named.append(&mut keys.found);
            if !matches!(written, Written::Not) && !named.is_empty() {
                hits.append(&mut named);
                hits.sort_unstable();
                hits.dedup();
            }
            if !hits.is_empty() {
                let index = values
                    .get_item(intern!(py, "index"))?
                    .unwrap_or_else(|| py.None().into_bound(py));
                let tool = values
                    .get_item(intern!(py, "tool"))?
                    .unwrap_or_else(|| py.None().into_bound(py));
                found.extend(hits.into_iter().map(|i| (index.clone(), tool.clone(), i)));
            }
        }
        Ok(found)
    }
}

/// `(step.index, step.tool, pattern index)` of a pattern found in a step's scan text.
type Violation<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>, usize);

/// What [`PatternSearch::violations`] wrote of a step.
enum Written {
    /// Nothing: a value that is not plain data (the step's text is then `fallback`'s).
    Not,
    /// Its text (or the part of it searched), as it is.
    Text,
    /// Its pieces, lower-cased as they were written, up to `lowered`, then the lines aside
    /// as they are; `non_ascii`: whether a piece is not all ASCII.
    Pieces { lowered: usize, non_ascii: bool },
}

impl Written {
    fn text(written: bool) -> Self {
        if written {
            Written::Text
        } else {
            Written::Not
        }
    }
}

impl PatternSearch {
    /// The patterns in each name of `fields` ([`NameHits`]): worked out on the first search
    /// and kept for the `ScanFields` given then (the one `Step` has), else for this search.
    fn name_hits<'s>(&'s self, fields: &Bound<'_, ScanFields>) -> PyResult<Cow<'s, NameHits>> {
        if let Some((owner, hits)) = self.names.get() {
            if owner.as_ptr() == fields.as_ptr() {
                return Ok(Cow::Borrowed(&**hits));
            }
            return Ok(Cow::Owned(self.hits_of_names(fields)?));
        }
        let hits = self.hits_of_names(fields)?;
        let (owner, kept) = self
            .names
            .get_or_init(|| (fields.clone().unbind(), hits.into_boxed_slice()));
        if owner.as_ptr() == fields.as_ptr() {
            Ok(Cow::Borrowed(&**kept))
        } else {
            Ok(Cow::Owned(self.hits_of_names(fields)?))
        }
    }

    /// [`PatternSearch::name_hits`] worked out: a name is searched as a text of its own
    /// where it is a piece alone, written between quotes unescaped (what the proof in
    /// `scan`'s notes asks of a piece: it lower-cases alone, and no pattern holds `"`).
    fn hits_of_names(&self, fields: &Bound<'_, ScanFields>) -> PyResult<Vec<Option<Box<[usize]>>>> {
        let py = fields.py();
        fields
            .get()
            .fields
            .iter()
            .map(|field| {
                if !written_as_is(&field.bytes) {
                    return Ok(None);
                }
                let hits = self.occurring_in(field.name.bind(py))?;
                Ok(Some(hits.into_boxed_slice()))
            })
            .collect()
    }

    /// The patterns in `key` as a piece of a text searched ([`KeyHits`]): `None` where the
    /// JSON writes it with an escape, or it is not UTF-8.
    fn hits_of_key(&self, key: &Bound<'_, PyString>) -> PyResult<Option<Box<[usize]>>> {
        let Ok(text) = key.to_str() else {
            return Ok(None);
        };
        if !written_as_is(text.as_bytes()) {
            return Ok(None);
        }
        Ok(Some(self.occurring_in(key)?.into_boxed_slice()))
    }

    fn occurring_in(&self, text: &Bound<'_, PyString>) -> PyResult<Vec<usize>> {
        if let Ok(plain) = text.to_str() {
            if plain.is_ascii() {
                return Ok(self.patterns.occurring(plain.as_bytes()));
            }
        }
        let lower = text
            .call_method0(intern!(text.py(), "lower"))?
            .cast_into::<PyString>()?;
        Ok(self.patterns.occurring(&str_bytes(&lower)?))
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ScanFields>()?;
    m.add_class::<PatternSearch>()?;
    m.add_function(wrap_pyfunction!(scan_data, m)?)?;
    m.add_function(wrap_pyfunction!(raw_json, m)?)?;
    Ok(())
}
