//! Message parsers of the conventions' `parse:` chains that rebuild structure (message lists
//! in the GenAI parts format), as plain functions over a value tree.
//!
//! A parser reads either text it parses itself (a JSON attribute value, read with
//! [`crate::content`]) or a value the caller already holds in structured form (an OTLP
//! `AnyValue` array, a Python object). Both are seen through [`Tree`]: the JSON tree [`J`]
//! implements it here, and the binding implements it over Python objects, so the rules are
//! written once. The result is an [`Out`] tree that refers to the input's nodes where a value
//! is kept as it is (the binding then hands back the very Python object it was given, as the
//! Python parsers did) and holds new nodes only where the parser built something.
//!
//! The input is untrusted: the parsers look a fixed number of levels into it, every loop is
//! over the input's own items, and what they serialise (a `json` block, a text part's
//! structured content) is bounded as the Python serialisers were.

mod digits_table;
pub mod dump;
pub mod genai;
pub mod openinference;
pub mod python_literal;
pub mod tools;

use crate::otlp_json::repr::repr_float;
use crate::otlp_json::value::J;

/// What a parser sees of a value: the kinds whose contents it reads, and for everything else
/// (booleans, numbers, objects of other types) only what Python's truthiness and iteration
/// would tell it.
pub enum Kind<'v, V: Tree> {
    /// `None` / JSON `null`.
    Null,
    /// A `str` (valid UTF-8).
    Str(&'v str),
    /// A `list` (not a tuple: the parsers test `isinstance(x, list)`).
    Arr(&'v [V]),
    /// A `dict`: its entries in order, keys distinct.
    Obj(&'v [(V::Key, V)]),
    /// Anything else.
    Other {
        /// `bool(value)`.
        truthy: bool,
        /// What iterating over it yields.
        iteration: Iteration<'v, V>,
    },
}

/// What `for item in value` does with a value of [`Kind::Other`].
pub enum Iteration<'v, V> {
    /// Raises `TypeError` (numbers, booleans).
    Fails,
    /// Yields no `dict` (`bytes`, sets, a string that was no UTF-8).
    NoDicts,
    /// Yields these items (a tuple).
    Items(&'v [V]),
}

/// Why a parser raised (as the Python parser raised; the chain then has no value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParserError {
    /// `TypeError`: iterating over a number (a truthy non-list `tool_calls`), or a value
    /// nested past what `orjson.dumps` encodes.
    Type(String),
    /// `ValueError`: `int()` of an index key it does not read.
    Value(String),
    /// `AttributeError`: a flattened key that is no string.
    Attribute(String),
}

impl std::fmt::Display for ParserError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParserError::Type(message)
            | ParserError::Value(message)
            | ParserError::Attribute(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for ParserError {}

/// A value tree a parser can read: [`J`] (parsed JSON) here, Python objects in the binding.
pub trait Tree: Sized {
    /// An object key (kept, so a rebuilt object carries the input's own keys).
    type Key;
    /// What the tree's own operations raise; parser errors convert into it.
    type Error: From<ParserError>;

    fn kind(&self) -> Kind<'_, Self>;

    /// The key as text, `None` for a key that is not a string (never equal to a name).
    fn key_str(key: &Self::Key) -> Option<&str>;

    /// `str(value)` of a value of [`Kind::Other`]; `None` when that is the value itself (a
    /// `str` that is no UTF-8).
    fn display(&self) -> Result<Option<String>, Self::Error>;

    /// `json.dumps(value, ensure_ascii=False, sort_keys=True)` of a list or dict, `None`
    /// where Python's encoder would run out of recursion.
    fn dumps_sorted(&self) -> Result<Option<String>, Self::Error>;

    /// `orjson.dumps(value).decode()`.
    fn dumps_compact(&self) -> Result<String, Self::Error>;

    /// `json.dumps(value, ensure_ascii=False, sort_keys=True)` of an object a parser built
    /// (holding values of the tree), `None` where Python's encoder would run out of recursion.
    fn dumps_built(value: &Out<'_, Self>) -> Result<Option<String>, Self::Error>;
}

impl<'a> Tree for J<'a> {
    type Key = &'a str;
    type Error = ParserError;

    fn kind(&self) -> Kind<'_, Self> {
        let other = |truthy| Kind::Other {
            truthy,
            iteration: Iteration::Fails,
        };
        match *self {
            J::Null => Kind::Null,
            J::Str(s) => Kind::Str(s),
            J::Arr(items) => Kind::Arr(items),
            J::Obj(obj) => Kind::Obj(obj.entries()),
            J::Bool(b) => other(b),
            J::U64(n) => other(n != 0),
            J::I64(n) => other(n != 0),
            J::F64(f) => other(f != 0.0),
        }
    }

    fn key_str<'k>(key: &'k &'a str) -> Option<&'k str> {
        Some(key)
    }

    fn display(&self) -> Result<Option<String>, ParserError> {
        Ok(Some(match *self {
            J::Null => "None".into(),
            J::Bool(true) => "True".into(),
            J::Bool(false) => "False".into(),
            J::U64(n) => n.to_string(),
            J::I64(n) => n.to_string(),
            J::F64(f) => repr_float(f),
            J::Str(s) => s.into(),
            J::Arr(_) | J::Obj(_) => dump::sorted(self).unwrap_or_default(),
        }))
    }

    fn dumps_sorted(&self) -> Result<Option<String>, ParserError> {
        Ok(dump::sorted(self))
    }

    fn dumps_compact(&self) -> Result<String, ParserError> {
        dump::compact(self)
    }

    fn dumps_built(value: &Out<'_, Self>) -> Result<Option<String>, ParserError> {
        Ok(dump::sorted_built(value))
    }
}

/// A parser's result: new nodes where it built something, references where it kept a value.
pub enum Out<'v, V: Tree> {
    /// A value of the input, as it is.
    In(&'v V),
    /// A value parsed from text the input held (a JSON string inside a structured value).
    Parsed(J<'v>),
    Null,
    /// A string the parser made (a constant or a serialisation).
    Static(&'static str),
    Text(String),
    Obj(Vec<(OutKey<'v, V>, Out<'v, V>)>),
    Arr(Vec<Out<'v, V>>),
}

/// A key of a built object.
pub enum OutKey<'v, V: Tree> {
    Static(&'static str),
    /// A key of the input, kept.
    In(&'v V::Key),
    /// A key of parsed text.
    Str(&'v str),
}

impl<'v, V: Tree> Out<'v, V> {
    /// An object of constant keys.
    pub(crate) fn obj(entries: Vec<(&'static str, Out<'v, V>)>) -> Self {
        Out::Obj(
            entries
                .into_iter()
                .map(|(k, v)| (OutKey::Static(k), v))
                .collect(),
        )
    }

    /// Whether this is an object whose `key` is the string `text` (built, kept or parsed).
    pub(crate) fn field_is(&self, key: &str, text: &str) -> bool {
        match self {
            Out::Obj(entries) => entries.iter().any(|(k, v)| {
                let name = match k {
                    OutKey::Static(s) | OutKey::Str(s) => Some(*s),
                    OutKey::In(k) => V::key_str(k),
                };
                name == Some(key) && v.is_str(text)
            }),
            Out::In(value) => match value.kind() {
                Kind::Obj(entries) => entries
                    .iter()
                    .find(|(k, _)| V::key_str(k) == Some(key))
                    .is_some_and(|(_, v)| matches!(v.kind(), Kind::Str(s) if s == text)),
                _ => false,
            },
            Out::Parsed(J::Obj(obj)) => matches!(obj.get(key), Some(J::Str(s)) if *s == text),
            _ => false,
        }
    }

    /// Whether this is the string `text`.
    pub(crate) fn is_str(&self, text: &str) -> bool {
        match self {
            Out::Static(s) => *s == text,
            Out::Text(s) => s == text,
            Out::In(v) => matches!(v.kind(), Kind::Str(s) if s == text),
            Out::Parsed(J::Str(s)) => *s == text,
            _ => false,
        }
    }
}

/// A result over parsed text as a result over the caller's tree (its nodes become parsed
/// values).
pub(crate) fn lift<'v, V: Tree>(out: Out<'v, J<'v>>) -> Out<'v, V> {
    match out {
        Out::In(j) => Out::Parsed(*j),
        Out::Parsed(j) => Out::Parsed(j),
        Out::Null => Out::Null,
        Out::Static(s) => Out::Static(s),
        Out::Text(s) => Out::Text(s),
        Out::Obj(entries) => Out::Obj(
            entries
                .into_iter()
                .map(|(k, v)| {
                    let key = match k {
                        OutKey::Static(s) => OutKey::Static(s),
                        OutKey::In(s) => OutKey::Str(s),
                        OutKey::Str(s) => OutKey::Str(s),
                    };
                    (key, lift(v))
                })
                .collect(),
        ),
        Out::Arr(items) => Out::Arr(items.into_iter().map(lift).collect()),
    }
}

/// Python's truthiness of a value.
pub(crate) fn truthy<V: Tree>(value: &V) -> bool {
    match value.kind() {
        Kind::Null => false,
        Kind::Str(s) => !s.is_empty(),
        Kind::Arr(items) => !items.is_empty(),
        Kind::Obj(entries) => !entries.is_empty(),
        Kind::Other { truthy, .. } => truthy,
    }
}
