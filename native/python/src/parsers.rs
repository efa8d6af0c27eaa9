//! The message-content parsers of `otel_oracles_core::content` as the registered `json` and
//! `json_or_text` parsers of `otel_oracles.mapping.parsers.scalars`, and the message parsers
//! of `otel_oracles_core::parsers` (`genai_messages`, `openinference_messages`,
//! `python_literal`, `python_repr`).
//!
//! Each takes any value as a `parse:` chain hands it over and returns exactly what the
//! Python parsers returned: the parsed value as new Python objects (`dict` in key order,
//! `int`, `float`, `bool`, `None`, `str`, `list`), or the very object it was given when the
//! value is no JSON text of the kind the parser reads (already structured, plain text, or a
//! `str` holding lone surrogates, which is no UTF-8 and so no JSON).

use std::cell::{Cell, RefCell, UnsafeCell};

use bumpalo::Bump;
use otel_oracles_core::content;
use otel_oracles_core::otlp_json::value::{Build, Refused, J};
use otel_oracles_core::parsers::python_literal::{self, Literal, Value};
use otel_oracles_core::parsers::{genai, openinference, Out};
use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyList, PyString, PyTuple};

use crate::pytree::{emit, Emit, PyValue};

/// `bytes` as the parsers read them: stripped of ASCII whitespace, then UTF-8 with invalid
/// sequences replaced (what `value.strip().decode("utf-8", "replace")` gives).
fn bytes_text<'py>(value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyString>> {
    Ok(value
        .call_method0("strip")?
        .call_method1("decode", ("utf-8", "replace"))?
        .cast_into::<PyString>()?)
}

/// `json`: a JSON string (stripped of surrounding whitespace as `str.strip()` does) becomes
/// its value; anything else is returned unchanged. `bytes` are stripped of ASCII whitespace
/// and read as UTF-8 (invalid sequences replaced) first.
///
/// The text is read by the project's tokenizer, which makes the Python objects straight from
/// its tokens (`PyBuild`, no tree between): serde_json reads only what the tokenizer gives up
/// on (it read every text before, ~180 M of a data-2000 `stage map`).
#[pyfunction]
pub(crate) fn parse_json<'py>(value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if let Ok(source) = value.cast::<PyString>() {
        let Ok(text) = source.to_str() else {
            return Ok(value.clone());
        };
        let build = PyBuild::over(source, text);
        let parsed = content::build_json(text, &build);
        return Ok(build.finish(parsed)?.unwrap_or_else(|| value.clone()));
    }
    if value.is_instance_of::<PyBytes>() {
        let decoded = bytes_text(value)?;
        let Ok(text) = decoded.to_str() else {
            return Ok(value.clone());
        };
        let build = PyBuild::over(&decoded, text);
        let parsed = content::build_json_stripped(text, &build);
        return Ok(build.finish(parsed)?.unwrap_or_else(|| value.clone()));
    }
    Ok(value.clone())
}

/// `json_or_text`: a string holding a JSON object or array becomes its value; any other
/// value (other strings included) is returned unchanged.
#[pyfunction]
pub(crate) fn parse_json_or_text<'py>(value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let Ok(text) = value.cast::<PyString>() else {
        return Ok(value.clone());
    };
    let Ok(utf8) = text.to_str() else {
        return Ok(value.clone());
    };
    let build = PyBuild::over(text, utf8);
    let parsed = content::build_json_or_text(utf8, &build);
    Ok(build.finish(parsed)?.unwrap_or_else(|| value.clone()))
}

/// The Python objects of a JSON document made as the core's readers read it
/// (`otlp_json::value::Build`: the project's tokenizer, serde_json where that one gives up),
/// with no tree in between: the objects `to_python` makes of the tree, `dict` keys shared
/// through `dict_key`, an array or object made at its final size off the tokenizer's stack. A repeated key set again keeps its first
/// position and takes the later value, as the tree's objects do. An error raised while
/// building (out of memory) stops the parse and is raised by `finish`.
struct PyBuild<'py> {
    py: Python<'py>,
    error: RefCell<Option<PyErr>>,
    /// The parsed text's own `str`, when it is ASCII: its long strings are cut from it.
    source: Option<AsciiSource<'py>>,
}

impl<'py> PyBuild<'py> {
    /// A builder of the values of `utf8`, the UTF-8 text of `text` (`text.to_str()`, or a
    /// part of it): strings read without escapes are made from `text` itself when it is
    /// ASCII ([`AsciiSource`]).
    fn over(text: &Bound<'py, PyString>, utf8: &str) -> Self {
        Self {
            py: text.py(),
            error: RefCell::new(None),
            source: AsciiSource::of(text, utf8),
        }
    }

    /// A string borrowed from the parsed text: a short one shared ([`text`]), a longer one
    /// cut from the source `str` when there is one ([`AsciiSource`]).
    fn borrowed_text(&self, v: &str) -> Result<Bound<'py, PyAny>, Refused> {
        if v.len() > MAX_SHARED_TEXT {
            if let Some(source) = &self.source {
                if let Some(made) = source.slice(v) {
                    return self.kept(made);
                }
            }
        }
        Ok(text(self.py, v))
    }

    /// `parsed`, or the error that stopped the parse.
    fn finish<T>(self, parsed: Option<T>) -> PyResult<Option<T>> {
        match self.error.into_inner() {
            Some(err) => Err(err),
            None => Ok(parsed),
        }
    }

    /// `made`'s value, its error kept for `finish`.
    fn kept<T>(&self, made: PyResult<T>) -> Result<T, Refused> {
        made.map_err(|err| {
            self.error.borrow_mut().get_or_insert(err);
            Refused
        })
    }
}

impl<'py> Build<'_> for PyBuild<'py> {
    type Value = Bound<'py, PyAny>;
    type Key = Bound<'py, PyString>;
    type Seq = Vec<Bound<'py, PyAny>>;
    type Map = Bound<'py, PyDict>;

    fn null(&self) -> Result<Self::Value, Refused> {
        Ok(self.py.None().into_bound(self.py))
    }

    fn bool(&self, v: bool) -> Result<Self::Value, Refused> {
        Ok(PyBool::new(self.py, v).to_owned().into_any())
    }

    fn u64(&self, v: u64) -> Result<Self::Value, Refused> {
        self.kept(
            v.into_pyobject(self.py)
                .map(Bound::into_any)
                .map_err(PyErr::from),
        )
    }

    fn i64(&self, v: i64) -> Result<Self::Value, Refused> {
        self.kept(
            v.into_pyobject(self.py)
                .map(Bound::into_any)
                .map_err(PyErr::from),
        )
    }

    fn f64(&self, v: f64) -> Result<Self::Value, Refused> {
        Ok(PyFloat::new(self.py, v).into_any())
    }

    fn borrowed_str(&self, v: &str) -> Result<Self::Value, Refused> {
        self.borrowed_text(v)
    }

    fn str(&self, v: &str) -> Result<Self::Value, Refused> {
        Ok(text(self.py, v))
    }

    fn borrowed_key(&self, v: &str) -> Result<Self::Key, Refused> {
        Ok(dict_key(self.py, v))
    }

    fn key(&self, v: &str) -> Result<Self::Key, Refused> {
        Ok(dict_key(self.py, v))
    }

    fn seq(&self) -> Self::Seq {
        Vec::new()
    }

    fn push(&self, seq: &mut Self::Seq, item: Self::Value) {
        seq.push(item);
    }

    fn end_seq(&self, seq: Self::Seq) -> Result<Self::Value, Refused> {
        self.kept(PyList::new(self.py, seq).map(Bound::into_any))
    }

    fn map(&self) -> Self::Map {
        PyDict::new(self.py)
    }

    fn insert(
        &self,
        map: &mut Self::Map,
        key: Self::Key,
        value: Self::Value,
    ) -> Result<(), Refused> {
        self.kept(dict_set(map, &key, &value))
    }

    fn end_map(&self, map: Self::Map) -> Result<Self::Value, Refused> {
        Ok(map.into_any())
    }

    fn array(
        &self,
        items: &mut Vec<Bound<'py, PyAny>>,
        start: usize,
    ) -> Result<Self::Value, Refused> {
        self.kept(PyList::new(self.py, items.drain(start..)).map(Bound::into_any))
    }

    fn object(
        &self,
        pairs: &mut Vec<(Bound<'py, PyString>, Bound<'py, PyAny>)>,
        start: usize,
    ) -> Result<Self::Value, Refused> {
        let dict = PyDict::new(self.py);
        for (key, value) in pairs.drain(start..) {
            self.kept(dict_set(&dict, &key, &value))?;
        }
        Ok(dict.into_any())
    }
}

/// `genai_messages`: `gen_ai.input.messages` / `gen_ai.output.messages` (JSON text, `bytes`
/// or the structured value) as the normalised message list, or `None` when the value holds
/// no message list or object.
#[pyfunction]
pub(crate) fn parse_genai_messages<'py>(value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = value.py();
    if let Ok(source) = value.cast::<PyString>() {
        let Ok(text) = source.to_str() else {
            return Ok(py.None().into_bound(py));
        };
        if let Some(messages) =
            kept_messages(source, text, |build| content::build_json(text, build))?
        {
            return Ok(messages);
        }
        return with_arena(|bump| {
            let messages = genai::genai_messages_text(text, bump)
                .map_err(|e| PyTypeError::new_err(e.to_string()))?;
            messages_to_python(py, messages.as_deref())
        });
    }
    if value.is_instance_of::<PyBytes>() {
        let decoded = bytes_text(value)?;
        let Ok(text) = decoded.to_str() else {
            return Ok(py.None().into_bound(py));
        };
        if let Some(messages) = kept_messages(&decoded, text, |build| {
            content::build_json_stripped(text, build)
        })? {
            return Ok(messages);
        }
        return with_arena(|bump| {
            let Some(parsed) = content::parse_json_stripped(text, bump) else {
                return Ok(py.None().into_bound(py));
            };
            let messages = genai::genai_messages_json(bump.alloc(parsed), bump)
                .map_err(|e| PyTypeError::new_err(e.to_string()))?;
            messages_to_python(py, messages.as_deref())
        });
    }
    if !(value.is_instance_of::<PyDict>() || value.is_instance_of::<PyList>()) {
        return Ok(py.None().into_bound(py));
    }
    let tree = PyValue::read(value)?;
    with_arena(|bump| {
        let messages = genai::genai_messages(&tree, bump).map_err(|failure| failure.0)?;
        messages_to_python(py, messages.as_deref())
    })
}

/// `genai_messages` of JSON text read once, straight into Python objects, when the
/// normaliser would give the text's value back as it is: a list (or one object) of messages
/// each kept whole (`genai::message_keys_kept`, `role_kept`, every part an object of
/// `PartShape::Kept`), what instrumentations following the semconv write (every
/// `gen_ai.output.messages` of data-2000). The tree path parsed the text into the arena,
/// normalised it and converted the result (~250 M instructions of a data-2000 map); here
/// `MessagesBuild` tells each object's shape as it makes it, from the keys it already holds
/// as text, so nothing is walked twice. `None` when the value needs the normaliser (the
/// objects made here are dropped and the text read again by the tree path); `Some(None)`
/// when the text is no JSON or holds a scalar (no messages).
fn kept_messages<'py>(
    text: &Bound<'py, PyString>,
    utf8: &str,
    parse: impl FnOnce(&MessagesBuild<'py>) -> Option<(Bound<'py, PyAny>, u8)>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = text.py();
    let build = MessagesBuild(PyBuild::over(text, utf8));
    let parsed = parse(&build);
    let Some((parsed, shape)) = build.0.finish(parsed)? else {
        return Ok(Some(py.None().into_bound(py)));
    };
    if parsed.is_exact_instance_of::<PyList>() {
        return Ok((shape & ALL_MESSAGES != 0).then_some(parsed));
    }
    if parsed.is_exact_instance_of::<PyDict>() {
        if shape & KEPT_MESSAGE == 0 {
            return Ok(None);
        }
        return Ok(Some(PyList::new(py, [parsed])?.into_any()));
    }
    Ok(Some(py.None().into_bound(py)))
}

/// [`MessagesBuild`]'s shape bits: an object `genai_messages` keeps as it is as a part, or
/// as a message; a list whose every item is such a part, or such a message (an empty list
/// is both).
const KEPT_PART: u8 = 1;
const KEPT_MESSAGE: u8 = 2;
const ALL_PARTS: u8 = 4;
const ALL_MESSAGES: u8 = 8;

/// The keys `genai_messages` reads of a message or part object; any other is `Other`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum KeyName {
    Role,
    Parts,
    FinishReason,
    Name,
    Type,
    Arguments,
    Response,
    Result,
    Text,
    Other,
}

impl KeyName {
    fn of(key: &str) -> Self {
        match key {
            "role" => KeyName::Role,
            "parts" => KeyName::Parts,
            "finish_reason" => KeyName::FinishReason,
            "name" => KeyName::Name,
            "type" => KeyName::Type,
            "arguments" => KeyName::Arguments,
            "response" => KeyName::Response,
            "result" => KeyName::Result,
            "text" => KeyName::Text,
            _ => KeyName::Other,
        }
    }

    /// The key's text when a normalised message may hold it.
    fn message_key(self) -> Option<&'static str> {
        match self {
            KeyName::Role => Some("role"),
            KeyName::Parts => Some("parts"),
            KeyName::FinishReason => Some("finish_reason"),
            KeyName::Name => Some("name"),
            _ => None,
        }
    }

    fn bit(self) -> u16 {
        1 << self as u16
    }
}

/// [`PyBuild`] telling, of every object and list it makes, whether `genai_messages` would
/// keep it as it is (the shape bits above): read off the keys' text as the tokenizer hands
/// them over and the values' own bits, so the check costs a few comparisons per key. An
/// object or list made through serde_json (the text the tokenizer gives up on) has no bits:
/// the tree path reads it.
struct MessagesBuild<'py>(PyBuild<'py>);

type Shaped<'py> = (Bound<'py, PyAny>, u8);

impl<'py> MessagesBuild<'py> {
    fn plain(made: Result<Bound<'py, PyAny>, Refused>) -> Result<Shaped<'py>, Refused> {
        made.map(|value| (value, 0))
    }
}

/// The shape bits of an object of `pairs`: a kept part, a kept message, or neither. A key
/// `genai_messages` reads given twice leaves it to the tree path.
fn object_shape(pairs: &[((Bound<'_, PyString>, KeyName), Shaped<'_>)]) -> u8 {
    let mut seen = 0u16;
    let mut kind = None;
    let mut arguments_text = false;
    let mut role_kept = true;
    let mut parts_kept = false;
    let mut keys = [("", false); 4];
    let mut listed = 0;
    let mut message_keys_only = true;
    for ((_, name), (value, shape)) in pairs {
        if *name != KeyName::Other {
            if seen & name.bit() != 0 {
                return 0;
            }
            seen |= name.bit();
        }
        match name {
            KeyName::Type => kind = Some(value),
            KeyName::Arguments => arguments_text = value.is_instance_of::<PyString>(),
            KeyName::Role => {
                role_kept = match value.cast_exact::<PyString>() {
                    Ok(role) => role.to_str().is_ok_and(genai::role_kept),
                    Err(_) => true,
                };
            }
            KeyName::Parts => parts_kept = shape & ALL_PARTS != 0,
            _ => {}
        }
        match (name.message_key(), keys.get_mut(listed)) {
            (Some(key), Some(slot)) => {
                *slot = (key, value.is_none());
                listed += 1;
            }
            _ => message_keys_only = false,
        }
    }
    let mut shape = 0;
    if message_keys_only
        && role_kept
        && parts_kept
        && genai::message_keys_kept(keys.into_iter().take(listed))
    {
        shape |= KEPT_MESSAGE;
    }
    let kind = match kind {
        None => genai::PartType::Missing,
        Some(kind) if kind.is_none() => genai::PartType::Missing,
        Some(kind) => match kind.cast_exact::<PyString>() {
            Ok(text) => match text.to_str() {
                Ok(text) => genai::PartType::Str(text),
                Err(_) => return shape,
            },
            Err(_) => genai::PartType::Other,
        },
    };
    // `part_shape` asks of keys `KeyName` tells apart (an `Other` key is not noted in `seen`).
    let has = |key: &str| seen & KeyName::of(key).bit() != 0;
    if genai::part_shape(kind, arguments_text, has) == genai::PartShape::Kept {
        shape |= KEPT_PART;
    }
    shape
}

impl<'py> Build<'_> for MessagesBuild<'py> {
    type Value = Shaped<'py>;
    type Key = (Bound<'py, PyString>, KeyName);
    type Seq = Vec<Bound<'py, PyAny>>;
    type Map = Bound<'py, PyDict>;

    fn null(&self) -> Result<Self::Value, Refused> {
        Self::plain(self.0.null())
    }

    fn bool(&self, v: bool) -> Result<Self::Value, Refused> {
        Self::plain(self.0.bool(v))
    }

    fn u64(&self, v: u64) -> Result<Self::Value, Refused> {
        Self::plain(self.0.u64(v))
    }

    fn i64(&self, v: i64) -> Result<Self::Value, Refused> {
        Self::plain(self.0.i64(v))
    }

    fn f64(&self, v: f64) -> Result<Self::Value, Refused> {
        Self::plain(self.0.f64(v))
    }

    fn borrowed_str(&self, v: &str) -> Result<Self::Value, Refused> {
        Self::plain(self.0.borrowed_text(v))
    }

    fn str(&self, v: &str) -> Result<Self::Value, Refused> {
        Self::plain(self.0.str(v))
    }

    fn borrowed_key(&self, v: &str) -> Result<Self::Key, Refused> {
        Ok((dict_key(self.0.py, v), KeyName::of(v)))
    }

    fn key(&self, v: &str) -> Result<Self::Key, Refused> {
        Ok((dict_key(self.0.py, v), KeyName::of(v)))
    }

    fn seq(&self) -> Self::Seq {
        self.0.seq()
    }

    fn push(&self, seq: &mut Self::Seq, item: Self::Value) {
        self.0.push(seq, item.0);
    }

    fn end_seq(&self, seq: Self::Seq) -> Result<Self::Value, Refused> {
        Self::plain(self.0.end_seq(seq))
    }

    fn map(&self) -> Self::Map {
        self.0.map()
    }

    fn insert(
        &self,
        map: &mut Self::Map,
        key: Self::Key,
        value: Self::Value,
    ) -> Result<(), Refused> {
        self.0.insert(map, key.0, value.0)
    }

    fn end_map(&self, map: Self::Map) -> Result<Self::Value, Refused> {
        Self::plain(self.0.end_map(map))
    }

    fn array(&self, items: &mut Vec<Self::Value>, start: usize) -> Result<Self::Value, Refused> {
        let mut shape = ALL_PARTS | ALL_MESSAGES;
        for (_, item) in &items[start..] {
            if item & KEPT_PART == 0 {
                shape &= !ALL_PARTS;
            }
            if item & KEPT_MESSAGE == 0 {
                shape &= !ALL_MESSAGES;
            }
        }
        let list = self.0.kept(PyList::new(
            self.0.py,
            items.drain(start..).map(|(item, _)| item),
        ))?;
        Ok((list.into_any(), shape))
    }

    fn object(
        &self,
        pairs: &mut Vec<(Self::Key, Self::Value)>,
        start: usize,
    ) -> Result<Self::Value, Refused> {
        let shape = object_shape(&pairs[start..]);
        let dict = PyDict::new(self.0.py);
        for ((key, _), (value, _)) in pairs.drain(start..) {
            self.0.kept(dict_set(&dict, &key, &value))?;
        }
        Ok((dict.into_any(), shape))
    }
}

/// `openinference_messages`: OpenInference's flattened `llm.*_messages` attributes (a mapping
/// of the keys under the prefix) as the normalised message list, or `None` when there is no
/// message (or no mapping).
#[pyfunction]
pub(crate) fn parse_openinference_messages<'py>(
    value: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = value.py();
    let dict = if value.is_instance_of::<PyDict>() {
        value.clone()
    } else if value.is_instance(&mapping_type(py)?)? {
        PyDict::from_sequence(&value.call_method0("items")?)?.into_any()
    } else {
        return Ok(py.None().into_bound(py));
    };
    let tree = PyValue::read(&dict)?;
    with_arena(|bump| {
        let messages =
            openinference::openinference_messages(&tree, bump).map_err(|failure| failure.0)?;
        messages_to_python(py, messages.as_deref())
    })
}

/// `string_list`: `["stop"]`, `"stop"` or a JSON array text as a list of strings: a `str`
/// starting with `[` read by `json` first; then a `str` is a list of itself, a list or tuple
/// the `str()` of each item that is not `None` (an exact `str` the very object), anything
/// else (`None` included) `None`.
#[pyfunction]
pub(crate) fn parse_string_list<'py>(value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = value.py();
    let mut value = value.clone();
    if let Ok(text) = value.cast::<PyString>() {
        // A `str` holding lone surrogates is no JSON: `json` would return it unchanged.
        if text.to_str().is_ok_and(|t| t.starts_with('[')) {
            value = parse_json(&value)?;
        }
    }
    if value.is_none() {
        return Ok(value);
    }
    if value.is_instance_of::<PyString>() {
        return Ok(PyList::new(py, [value])?.into_any());
    }
    if !(value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>()) {
        return Ok(py.None().into_bound(py));
    }
    if let Some(copied) = exact_strings_copied(&value)? {
        return Ok(copied);
    }
    let out = PyList::empty(py);
    for item in value.try_iter()? {
        let item = item?;
        if item.is_none() {
            continue;
        }
        if item.is_exact_instance_of::<PyString>() {
            out.append(item)?;
        } else {
            out.append(item.str()?)?;
        }
    }
    Ok(out.into_any())
}

/// A new `list` of the items of `value`, an exact `list` or `tuple`, when every item is an
/// exact `str` (what `string_list` would make of them, each kept as it is and none left
/// out), in one C call (`PyList_GetSlice`, `PySequence_List`) instead of an iterator and an
/// append per item: `gen_ai.response.finish_reasons` is read on every model call (~19,300
/// a data-2000 grade), nearly always such a list of one or two reasons. `None` for any other
/// value, which is read item by item.
fn exact_strings_copied<'py>(value: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = value.py();
    let copy = if let Ok(list) = value.cast_exact::<PyList>() {
        if !list
            .iter()
            .all(|item| item.is_exact_instance_of::<PyString>())
        {
            return Ok(None);
        }
        // SAFETY: `list` is a live `list`; `PyList_GetSlice` returns a new list holding new
        // references to the items in `[0, len)` (the bound is clamped to the list's length),
        // or NULL with an exception set. No Python code ran since the items were tested.
        unsafe { ffi::PyList_GetSlice(list.as_ptr(), 0, ffi::PY_SSIZE_T_MAX) }
    } else if let Ok(tuple) = value.cast_exact::<PyTuple>() {
        if !tuple
            .iter()
            .all(|item| item.is_exact_instance_of::<PyString>())
        {
            return Ok(None);
        }
        // SAFETY: `tuple` is a live `tuple`; `PySequence_List` returns a new list of its
        // items (new references), or NULL with an exception set.
        unsafe { ffi::PySequence_List(tuple.as_ptr()) }
    } else {
        return Ok(None);
    };
    // SAFETY: `copy` is a new reference or NULL with an exception set (both calls above).
    Ok(Some(unsafe { Bound::from_owned_ptr_or_err(py, copy)? }))
}

/// `mapping.get(key)` as Python calls it: a plain `dict` read directly, any other object
/// through its own `get`.
fn get_key<'py>(mapping: &Bound<'py, PyAny>, key: &str) -> PyResult<Bound<'py, PyAny>> {
    let py = mapping.py();
    if let Ok(dict) = mapping.cast_exact::<PyDict>() {
        return Ok(dict
            .get_item(key)?
            .unwrap_or_else(|| py.None().into_bound(py)));
    }
    mapping.call_method1("get", (key,))
}

/// `streamed_partials`: a model call's output messages without the partial chunks of a
/// stream that its last message assembles: when every message but the last is a `dict`
/// whose `finish_reason` equals `""` (a chunk the stream had not finished) and the last is a
/// `dict` with a truthy one, a list of the last alone. Google ADK with
/// `StreamingMode.SSE` records every partial event of the call as an output message before
/// the aggregated one; read whole, one requested call would count as several. Anything else
/// (a list of fewer than two items, no list) is returned unchanged.
#[pyfunction]
pub(crate) fn parse_streamed_partials<'py>(
    value: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let Ok(list) = value.cast::<PyList>() else {
        return Ok(value.clone());
    };
    // An exact list of fewer than two messages holds no partial before a last message
    // (nearly every model call's output: one message), told without copying its items out.
    if list.is_exact_instance_of::<PyList>() && list.len() < 2 {
        return Ok(value.clone());
    }
    let items: Vec<Bound<'py, PyAny>> = if list.is_exact_instance_of::<PyList>() {
        list.iter().collect()
    } else {
        value.try_iter()?.collect::<PyResult<_>>()?
    };
    let Some((last, partials)) = items.split_last() else {
        return Ok(value.clone());
    };
    if partials.is_empty() || !last.is_instance_of::<PyDict>() {
        return Ok(value.clone());
    }
    if !get_key(last, "finish_reason")?.is_truthy()? {
        return Ok(value.clone());
    }
    for message in partials {
        if !message.is_instance_of::<PyDict>() {
            return Ok(value.clone());
        }
        let reason = get_key(message, "finish_reason")?;
        let empty = match reason.cast_exact::<PyString>() {
            Ok(text) => text.to_str().is_ok_and(str::is_empty),
            Err(_) => reason.eq("")?,
        };
        if !empty {
            return Ok(value.clone());
        }
    }
    Ok(PyList::new(value.py(), [last])?.into_any())
}

/// `python_literal`: a `str` holding the Python `repr` of a dict or list (`{'a': (1, 2)}`)
/// as its JSON-like value (tuples and sets as lists, dict keys as strings); any other value,
/// and text that is no such literal, is returned unchanged. The corners the core leaves to
/// Python (`\N{...}` escapes, surrogate escapes, integers past 127 bits, and a `str` holding
/// lone surrogates) are read by `parse_python_literal_by_ast`, the `ast.literal_eval` path.
#[pyfunction]
pub(crate) fn parse_python_literal<'py>(value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = value.py();
    let Ok(text) = value.cast::<PyString>() else {
        return Ok(value.clone());
    };
    let Ok(text) = text.to_str() else {
        return by_ast(value, "parse_python_literal_by_ast");
    };
    match python_literal::python_literal(text) {
        Literal::Value(parsed) => literal_to_python(py, &parsed),
        Literal::NoValue => Ok(value.clone()),
        Literal::Python => by_ast(value, "parse_python_literal_by_ast"),
    }
}

/// `python_repr`: a `str` holding the `repr` of Python objects (constructor calls, enums,
/// `<...>` reprs) as data: `{"__type__": name, "__args__": [...], keyword: value}` per call,
/// lists for tuples and sets, literals as `python_literal` reads them, other names `None`;
/// other values returned unchanged. What the core does not read itself (any other
/// expression, text that is no expression, the corners `python_literal` leaves to Python)
/// is read by `parse_python_repr_by_ast`.
#[pyfunction]
pub(crate) fn parse_python_repr<'py>(value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = value.py();
    let Ok(text) = value.cast::<PyString>() else {
        return Ok(value.clone());
    };
    let Ok(text) = text.to_str() else {
        return by_ast(value, "parse_python_repr_by_ast");
    };
    match python_literal::python_repr(text) {
        Literal::Value(parsed) => literal_to_python(py, &parsed),
        Literal::NoValue => Ok(value.clone()),
        Literal::Python => by_ast(value, "parse_python_repr_by_ast"),
    }
}

/// The Python objects of a literal's value. Recursion is bounded by the parser's nesting
/// limit (200 levels).
fn literal_to_python<'py>(py: Python<'py>, value: &Value<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::None => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Int(n) => match i64::try_from(*n) {
            Ok(small) => small.into_pyobject(py)?.into_any(),
            Err(_) => n.into_pyobject(py)?.into_any(),
        },
        Value::Float(f) => PyFloat::new(py, *f).into_any(),
        Value::Str(s) => PyString::new(py, s).into_any(),
        Value::Ellipsis => py.Ellipsis().into_bound(py),
        Value::List(items) => {
            let items = items
                .iter()
                .map(|item| literal_to_python(py, item))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
        Value::Dict(entries) => {
            let dict = PyDict::new(py);
            for (key, item) in entries {
                dict.set_item(dict_key(py, key), literal_to_python(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

/// `name(value)`, a function of `otel_oracles.mapping.parsers.python_literals` (the `ast`
/// path), the module imported on first use (it imports this one).
fn by_ast<'py>(value: &Bound<'py, PyAny>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    let py = value.py();
    MODULE
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(
                PyModule::import(py, "otel_oracles.mapping.parsers.python_literals")?.unbind(),
            )
        })?
        .bind(py)
        .getattr(name)?
        .call1((value,))
}

/// `collections.abc.Mapping`, imported once.
fn mapping_type(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    static MAPPING: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    Ok(MAPPING
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(
                PyModule::import(py, "collections.abc")?
                    .getattr("Mapping")?
                    .unbind(),
            )
        })?
        .bind(py)
        .clone())
}

fn messages_to_python<'py, V: Emit<'py>>(
    py: Python<'py>,
    messages: Option<&[Out<'_, V>]>,
) -> PyResult<Bound<'py, PyAny>> {
    let Some(messages) = messages else {
        return Ok(py.None().into_bound(py));
    };
    let items = messages
        .iter()
        .map(|message| emit(py, message))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyList::new(py, items)?.into_any())
}

/// An arena kept above this size after a parse is dropped rather than kept for the next.
const MAX_KEPT_ARENA: usize = 1 << 20;

thread_local! {
    /// The parse tree's arena, reset between values: most values need one small chunk,
    /// which is then allocated once per thread instead of once per value.
    static ARENA: RefCell<Bump> = RefCell::new(Bump::new());
}

/// Runs `parse` with this thread's arena, or a fresh one when it is in use (building the
/// Python objects can run a garbage collection, whose finalizers may parse again).
fn with_arena<R>(parse: impl FnOnce(&Bump) -> R) -> R {
    ARENA.with(|cell| match cell.try_borrow_mut() {
        Ok(mut bump) => {
            let result = parse(&bump);
            if bump.allocated_bytes() > MAX_KEPT_ARENA {
                *bump = Bump::new();
            } else {
                bump.reset();
            }
            result
        }
        Err(_) => parse(&Bump::new()),
    })
}

/// The Python objects of a parsed value. Recursion is bounded by the parser's depth limit.
pub(crate) fn to_python<'py>(py: Python<'py>, value: &J<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match *value {
        J::Null => py.None().into_bound(py),
        J::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        J::U64(n) => n.into_pyobject(py)?.into_any(),
        J::I64(n) => n.into_pyobject(py)?.into_any(),
        J::F64(f) => f.into_pyobject(py)?.into_any(),
        J::Str(s) => text(py, s),
        J::Arr(items) => crate::pydict::filled_list(
            py,
            items.len(),
            items.iter().map(|item| to_python(py, item)),
        )?
        .into_any(),
        J::Obj(obj) => {
            let dict = PyDict::new(py);
            for (key, item) in obj.iter() {
                dict_set(&dict, &dict_key(py, key), &to_python(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

/// A parsed text value as a `str`. A short text is most often a repeated one (a role, a part
/// type, a finish reason, an enum-like argument): shared like a key, immutable as it is.
fn text<'py>(py: Python<'py>, s: &str) -> Bound<'py, PyAny> {
    if s.len() <= MAX_SHARED_TEXT {
        dict_key(py, s).into_any()
    } else {
        PyString::new(py, s).into_any()
    }
}

/// A parsed text's own `str` when every character of it is ASCII, and where its UTF-8 lies
/// (`PyUnicode_AsUTF8AndSize`'s buffer, which for an ASCII `str` is its own data).
///
/// Why: a string value read without escapes is a slice of the text, and for an ASCII text
/// the slice's byte offsets are its character offsets, so `PyUnicode_Substring` makes it:
/// a copy of the characters (`_PyUnicode_FromASCII`, the source known ASCII), where
/// `PyUnicode_FromStringAndSize` checks every byte again as it decodes them (`ascii_decode`,
/// ~1 instruction a byte; data-2000's parsed content holds ~30 MB of such strings). The
/// limited API has no constructor that takes bytes known to be ASCII without that check.
struct AsciiSource<'py> {
    text: Bound<'py, PyString>,
    /// The address of the UTF-8 buffer's first byte, and its length.
    start: usize,
    len: usize,
}

impl<'py> AsciiSource<'py> {
    /// `text`'s source when it is ASCII: its length in characters equals the length of its
    /// UTF-8 `utf8` (a character past ASCII takes two bytes or more). `utf8` must be `text`'s
    /// UTF-8 buffer (as `to_str` lends it): slices of it are cut from `text` by their offset
    /// in it.
    fn of(text: &Bound<'py, PyString>, utf8: &str) -> Option<Self> {
        // SAFETY: `text` is a live `str` (`PyUnicode_GetLength` fails only for other types).
        let chars = unsafe { ffi::PyUnicode_GetLength(text.as_ptr()) };
        (usize::try_from(chars).ok()? == utf8.len()).then(|| Self {
            text: text.clone(),
            start: utf8.as_ptr() as usize,
            len: utf8.len(),
        })
    }

    /// `v` as a new `str` cut from the source, when `v` lies inside its UTF-8 buffer.
    #[inline]
    fn slice(&self, v: &str) -> Option<PyResult<Bound<'py, PyAny>>> {
        let at = (v.as_ptr() as usize).wrapping_sub(self.start);
        if at > self.len || v.len() > self.len - at {
            return None;
        }
        let py = self.text.py();
        // SAFETY: `text` is a live `str`, and `0 <= at <= at + v.len() <= len(text)` (the
        // buffer's offsets are character offsets: the text is ASCII; a slice's bounds are at
        // most `isize::MAX`, so the casts keep them). The call returns a new reference, or
        // NULL with an exception set (out of memory).
        let made = unsafe {
            ffi::PyUnicode_Substring(
                self.text.as_ptr(),
                at as ffi::Py_ssize_t,
                (at + v.len()) as ffi::Py_ssize_t,
            )
        };
        if made.is_null() {
            return Some(Err(PyErr::fetch(py)));
        }
        // SAFETY: `made` is the call's new reference, not NULL.
        Some(Ok(unsafe { Bound::from_owned_ptr(py, made) }))
    }
}

/// `dict[key] = value` through `PyDict_SetItem` itself (which takes its own references),
/// without pyo3's conversion of both arguments into owned objects (the step builder sets
/// ~15 items per step, the parsed messages' dicts one per key).
pub(crate) fn dict_set<K, V>(
    dict: &Bound<'_, PyDict>,
    key: &Bound<'_, K>,
    value: &Bound<'_, V>,
) -> PyResult<()> {
    // SAFETY: three live objects, `dict` a dict; the call returns -1 with an exception set
    // on failure (an unhashable key).
    if unsafe { ffi::PyDict_SetItem(dict.as_ptr(), key.as_ptr(), value.as_ptr()) } < 0 {
        return Err(PyErr::fetch(dict.py()));
    }
    Ok(())
}

/// Parsed text values up to this length are shared through the key cache (`to_python`).
const MAX_SHARED_TEXT: usize = 16;

/// Keys longer than this are not cached (message keys are short: `role`, `parts`, `type`).
const MAX_CACHED_KEY: usize = 64;

/// Slots of the key cache (a power of two).
const KEY_SLOTS: usize = 1024;

/// The key cache. Used only with the GIL held (through a `Python` token): the module is
/// built for the stable ABI, which no free-threaded CPython loads, so one thread at a time
/// runs in it, and a lookup is a flag rather than a lock taken and released per key (or a
/// thread-local's address looked up): ~800,000 lookups on a data-2000 map. The slots are
/// a fixed array in the module's zeroed data (48 KiB), so a lookup reads no vector's
/// pointer and length and makes nothing on first use.
static KEYS: KeyCache = KeyCache {
    busy: Cell::new(false),
    slots: UnsafeCell::new([const { None }; KEY_SLOTS]),
};

/// Each short key's (and short text's) `str` made once and shared, its hash computed once
/// too: direct-mapped and bounded, a colliding key simply replaces the slot's. The strings
/// are kept for the process.
struct KeyCache {
    /// Set while a miss ([`dict_key_missed`]) changes `slots`.
    busy: Cell<bool>,
    slots: UnsafeCell<[Option<KeySlot>; KEY_SLOTS]>,
}

/// A key cache slot: the key's [`KeySign`], its text when the sign does not spell it
/// whole (a key over `SIGNED_KEY` bytes), and its `str`.
struct KeySlot {
    sign: KeySign,
    rest: Box<str>,
    text: Py<PyString>,
}

/// Keys up to this length are told apart by their [`KeySign`] alone: no text is kept for
/// them and no bytes compared (nearly every key and short text is this short).
const SIGNED_KEY: usize = 16;

/// A key's length and two words of its bytes: the first and last 8 (overlapping in keys
/// under 16 bytes), 4 at a time for keys under 8, single bytes under 4. For a key of at
/// most `SIGNED_KEY` bytes the words hold every byte, so equal signs are equal keys.
#[derive(Clone, Copy, PartialEq, Eq)]
struct KeySign {
    len: usize,
    first: u64,
    last: u64,
}

impl KeySign {
    #[inline(always)]
    fn of(key: &str) -> Self {
        let bytes = key.as_bytes();
        let len = bytes.len();
        let (first, last) = if let (Some(first), Some(last)) =
            (bytes.first_chunk::<8>(), bytes.last_chunk::<8>())
        {
            (u64::from_le_bytes(*first), u64::from_le_bytes(*last))
        } else if let (Some(first), Some(last)) =
            (bytes.first_chunk::<4>(), bytes.last_chunk::<4>())
        {
            (
                u64::from(u32::from_le_bytes(*first)),
                u64::from(u32::from_le_bytes(*last)),
            )
        } else if let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) {
            (
                u64::from(first) | u64::from(bytes[len / 2]) << 8,
                u64::from(last),
            )
        } else {
            (0, 0)
        };
        Self { len, first, last }
    }

    /// The key's slot: its sign (and, past 16 bytes, its middle word) mixed FxHash-style.
    /// A collision only costs a string made anew; hashing every byte made most of a
    /// lookup's cost.
    #[inline(always)]
    fn slot(&self, key: &str) -> usize {
        const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        let middle = match self.len {
            17.. => key
                .as_bytes()
                .get((self.len - 8) / 2..(self.len - 8) / 2 + 8)
                .map_or(0, |w| u64::from_le_bytes(w.try_into().unwrap_or_default())),
            _ => 0,
        };
        let first = self.first ^ middle.rotate_left(17);
        let hash = ((first ^ self.last.rotate_left(32) ^ self.len as u64).wrapping_mul(SEED)) >> 32;
        hash as usize & (KEY_SLOTS - 1)
    }
}

// SAFETY: `KeyCache` is only used through `dict_key`, which takes a `Python` token: the GIL
// is held (no free-threaded interpreter loads a stable-ABI module), so no two threads are
// in it at once; `busy` keeps a re-entered lookup (were it ever) off the slots in use.
unsafe impl Sync for KeyCache {}

/// The `str` of a dict key (or short text) of the objects the parsers make: keys repeat
/// across every message and span, so each short one is made once and shared (`KeyCache`).
/// A key of at most `SIGNED_KEY` bytes is found by its sign (three words compared, no text
/// kept), so a hit reads no bytes but the key's and a miss allocates nothing but the `str`.
///
/// Inline, a hit of such a key is the sign, the slot, the compare and the reference taken
/// (~30 instructions, no registers saved): the hits are ~93% of ~800,000 lookups a
/// data-2000 grade. Everything else (a miss, a longer key, a lookup while a miss is under
/// way) is [`dict_key_missed`].
#[inline]
pub(crate) fn dict_key<'py>(py: Python<'py>, key: &str) -> Bound<'py, PyString> {
    if key.len() <= SIGNED_KEY && !KEYS.busy.get() {
        let sign = KeySign::of(key);
        // SAFETY: the GIL is held (`py`) and `busy` is clear, so no `&mut` to the slots
        // exists (only a miss makes one, and it sets `busy` first); this shared borrow ends
        // before anything else runs (taking a reference runs no Python code).
        let slots = unsafe { &*KEYS.slots.get() };
        if let Some(slot) = &slots[sign.slot(key)] {
            if slot.sign == sign {
                return slot.text.bind(py).clone();
            }
        }
    }
    dict_key_missed(py, key)
}

/// [`dict_key`] past its inline hit: the key made and put in its slot (up to
/// `MAX_CACHED_KEY` bytes; longer keys compared by their kept text too), or made without
/// the cache. Nothing in the cache's section runs Python code (making a `str`, releasing
/// one); were it ever re-entered, the key would simply be made without the cache.
#[inline(never)]
fn dict_key_missed<'py>(py: Python<'py>, key: &str) -> Bound<'py, PyString> {
    if key.len() > MAX_CACHED_KEY || KEYS.busy.replace(true) {
        return PyString::new(py, key);
    }
    // SAFETY: the GIL is held (`py`) and `busy` was clear: no other reference to the slots
    // exists until `busy` is cleared below.
    let slots = unsafe { &mut *KEYS.slots.get() };
    let sign = KeySign::of(key);
    let slot = &mut slots[sign.slot(key)];
    let text = match slot {
        Some(slot) if slot.sign == sign && (sign.len <= SIGNED_KEY || *slot.rest == *key) => {
            slot.text.bind(py).clone()
        }
        slot => {
            let text = PyString::new(py, key);
            let rest = if sign.len <= SIGNED_KEY {
                Box::default()
            } else {
                key.into()
            };
            *slot = Some(KeySlot {
                sign,
                rest,
                text: text.clone().unbind(),
            });
            text
        }
    };
    KEYS.busy.set(false);
    text
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(parse_json, m)?)?;
    m.add_function(wrap_pyfunction!(parse_json_or_text, m)?)?;
    m.add_function(wrap_pyfunction!(parse_genai_messages, m)?)?;
    m.add_function(wrap_pyfunction!(parse_openinference_messages, m)?)?;
    m.add_function(wrap_pyfunction!(parse_python_literal, m)?)?;
    m.add_function(wrap_pyfunction!(parse_string_list, m)?)?;
    m.add_function(wrap_pyfunction!(parse_streamed_partials, m)?)?;
    m.add_function(wrap_pyfunction!(parse_python_repr, m)?)?;
    Ok(())
}
