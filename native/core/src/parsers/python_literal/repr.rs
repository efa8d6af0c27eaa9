//! `python_repr`: the `repr` of Python objects (dataclasses, pydantic models, enums) read as
//! data, as the Python parser read it with `ast`: `<...>` reprs outside string literals
//! replaced first (an enum member by its value, anything else by `None`), then a constructor
//! call `a.b.Name(x, k=v)` becomes `{"__type__": "a.b.Name", "__args__": [x], "k": v}`, a
//! list, tuple or set display a list (in order, nothing merged), a dict display an object
//! whose keys are the `str` of the key's value, a literal its JSON-like value (as
//! [`super::python_literal`] makes it) and a name or attribute `None`.
//!
//! The core reads only what it can read exactly: any other expression (operators,
//! subscripts, comprehensions, lambdas, starred arguments, keywords used as names,
//! non-ASCII identifiers) and any text that is no expression at all is left to the Python
//! parser ([`Literal::Python`]), which reads the whole expression grammar; so is what
//! [`super::python_literal`] leaves to it. Only the bounds make "no value" here.

use std::borrow::Cow;

use super::{
    into_owned, is_ident_char, is_ident_start, jsonable, nesting_within, value_repr, Literal,
    Parser, Res, Stop, Value, MAX_LITERAL_CHARS, MAX_LITERAL_DEPTH,
};
use crate::content::py_strip;
use crate::hashing::FastMap;

/// Python's keywords: a name that is one is no name (the parser decides what it is).
const KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// The `python_repr` parser on a string (see the module's doc).
pub fn python_repr(text: &str) -> Literal<'_> {
    if text.len() > MAX_LITERAL_CHARS && text.chars().count() > MAX_LITERAL_CHARS {
        return Literal::NoValue;
    }
    let replaced = match without_angle_reprs(text) {
        Ok(replaced) => replaced,
        Err(_) => return Literal::Python,
    };
    if replaced.len() > MAX_LITERAL_CHARS && replaced.chars().count() > MAX_LITERAL_CHARS {
        return Literal::NoValue;
    }
    if !nesting_within(&replaced, MAX_LITERAL_DEPTH) {
        return Literal::NoValue;
    }
    let source = py_strip(&replaced);
    if source.contains('\0') {
        return Literal::NoValue;
    }
    let result = if source.contains('\r') {
        let translated = source.replace("\r\n", "\n").replace('\r', "\n");
        evaluate(&translated).map(into_owned)
    } else {
        evaluate(source).map(into_owned)
    };
    match result {
        Ok(value) => Literal::Value(value),
        Err(_) => Literal::Python,
    }
}

fn evaluate(source: &str) -> Res<Value<'_>> {
    let mut parser = Parser {
        s: source,
        b: source.as_bytes(),
        i: 0,
        level: 0,
    };
    parser.skip()?;
    let first = parser.r_expr()?;
    parser.skip()?;
    let value = if parser.peek() == Some(b',') {
        let mut items = vec![first];
        while parser.peek() == Some(b',') {
            parser.i += 1;
            parser.skip()?;
            if matches!(parser.peek(), None | Some(b'\n')) {
                break;
            }
            items.push(parser.r_expr()?);
            parser.skip()?;
        }
        Value::List(items)
    } else {
        first
    };
    loop {
        parser.skip()?;
        match parser.peek() {
            None => return Ok(value),
            Some(b'\n') => parser.i += 1,
            Some(_) => return Err(Stop::Python),
        }
    }
}

/// The state of the Python parser's quote tracking over one character: the open quote (0
/// outside a literal), whether the next character is escaped, and whether this one belongs
/// to a literal (its quotes included).
fn string_step(b: u8, quote: u8, escaped: bool) -> (u8, bool, bool) {
    if quote != 0 {
        if escaped {
            return (quote, false, true);
        }
        if b == b'\\' {
            return (quote, true, true);
        }
        return (if b == quote { 0 } else { quote }, false, true);
    }
    if b == b'\'' || b == b'"' {
        return (b, false, true);
    }
    (0, false, false)
}

/// Index just past the `>` closing the `<` at `start`, `None` when it is not closed.
fn angle_end(b: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let (mut quote, mut escaped) = (0u8, false);
    for (i, &c) in b.iter().enumerate().skip(start) {
        let in_string;
        (quote, escaped, in_string) = string_step(c, quote, escaped);
        if in_string {
            continue;
        }
        if c == b'<' {
            depth += 1;
        } else if c == b'>' {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                return Some(i + 1);
            }
        }
    }
    None
}

/// `text` with each `<...>` repr outside string literals replaced: an enum member
/// (`<ChatRole.USER: 'user'>`) by its value, anything else by `None`; unchanged when a `<` is
/// not closed. `Err` when an enum test would need Unicode's `isalnum`.
fn without_angle_reprs(text: &str) -> Res<Cow<'_, str>> {
    let b = text.as_bytes();
    if !b.contains(&b'<') {
        return Ok(Cow::Borrowed(text));
    }
    let mut out = String::with_capacity(text.len());
    let (mut quote, mut escaped) = (0u8, false);
    let mut copied = 0;
    let mut i = 0;
    while i < b.len() {
        let in_string;
        (quote, escaped, in_string) = string_step(b[i], quote, escaped);
        if !in_string && b[i] == b'<' {
            let Some(end) = angle_end(b, i) else {
                return Ok(Cow::Borrowed(text));
            };
            out.push_str(&text[copied..i]);
            // `<` and `>` are ASCII: both ends are character boundaries.
            let inner = &text[i + 1..end - 1];
            match inner.split_once(": ") {
                Some((name, value)) => {
                    if !name.is_ascii() {
                        return Err(Stop::Python);
                    }
                    let enum_member = name.bytes().any(|c| c.is_ascii_alphanumeric())
                        && name
                            .bytes()
                            .all(|c| c.is_ascii_alphanumeric() || c == b'.' || c == b'_');
                    out.push_str(if enum_member { value } else { "None" });
                }
                None => out.push_str("None"),
            }
            i = end;
            copied = end;
            continue;
        }
        i += 1;
    }
    out.push_str(&text[copied..]);
    Ok(Cow::Owned(out))
}

/// `str(value)` of a JSON-like value (a dict display's key).
fn key_text(value: Value<'_>) -> Cow<'_, str> {
    match value {
        Value::Str(s) => s,
        other => {
            let mut text = String::new();
            value_repr(&other, &mut text);
            Cow::Owned(text)
        }
    }
}

/// An object built in order: a repeated key keeps its first position and takes the last
/// value, as a Python `dict` does.
#[derive(Default)]
struct Object<'a> {
    entries: Vec<(Cow<'a, str>, Value<'a>)>,
    at: FastMap<String, usize>,
}

impl<'a> Object<'a> {
    fn insert(&mut self, key: Cow<'a, str>, value: Value<'a>) {
        match self.at.get(key.as_ref()) {
            Some(&index) => self.entries[index].1 = value,
            None => {
                self.at.insert(key.to_string(), self.entries.len());
                self.entries.push((key, value));
            }
        }
    }
}

impl<'a> Parser<'a> {
    /// An identifier at the cursor that is a plain ASCII name and no keyword.
    fn plain_name(&mut self) -> Res<&'a str> {
        let start = self.i;
        if !self.peek().is_some_and(is_ident_start) {
            return Err(Stop::Python);
        }
        while self.peek().is_some_and(is_ident_char) {
            self.i += 1;
        }
        let word = &self.s[start..self.i];
        if !word.is_ascii() || KEYWORDS.contains(&word) {
            return Err(Stop::Python);
        }
        Ok(word)
    }

    /// One expression as `_object_value` reads it.
    fn r_expr(&mut self) -> Res<Value<'a>> {
        let Some(b) = self.peek() else {
            return Err(Stop::Python);
        };
        match b {
            b'(' => self.r_parenthesized(),
            b'[' => {
                self.open()?;
                let items = self.r_items(b']')?;
                self.close(b']')?;
                Ok(Value::List(items))
            }
            b'{' => self.r_braces(),
            b if is_ident_start(b) && !self.before_literal() => self.r_name(),
            _ => {
                // A literal: a constant, a signed number, `int_or_float ± imaginary`.
                let (literal, _) = self.expr()?;
                jsonable(literal)
            }
        }
    }

    /// Whether the identifier at the cursor starts a literal (`True`, `False`, `None`, a
    /// string prefix before its quote).
    fn before_literal(&self) -> bool {
        let mut end = self.i;
        while self.b.get(end).copied().is_some_and(is_ident_char) {
            end += 1;
        }
        let word = &self.s[self.i..end];
        matches!(word, "True" | "False" | "None") || matches!(self.b.get(end), Some(b'\'' | b'"'))
    }

    /// A name or dotted name: `None` as a value, or a constructor call.
    fn r_name(&mut self) -> Res<Value<'a>> {
        let mut dotted = self.plain_name()?.to_string();
        loop {
            self.skip()?;
            if self.peek() != Some(b'.') {
                break;
            }
            self.i += 1;
            self.skip()?;
            dotted.push('.');
            dotted.push_str(self.plain_name()?);
        }
        if self.peek() != Some(b'(') {
            return Ok(Value::None);
        }
        self.open()?;
        let mut object = Object::default();
        object.insert(Cow::Borrowed("__type__"), Value::Str(Cow::Owned(dotted)));
        let mut args = Vec::new();
        let mut keywords: Vec<(&'a str, Value<'a>)> = Vec::new();
        loop {
            if self.peek() == Some(b')') {
                break;
            }
            if self.keyword_ahead() {
                let name = self.plain_name()?;
                self.skip()?;
                self.i += 1; // `=`
                self.skip()?;
                keywords.push((name, self.r_expr()?));
            } else {
                if !keywords.is_empty() {
                    return Err(Stop::Python);
                }
                args.push(self.r_expr()?);
            }
            self.skip()?;
            if self.peek() != Some(b',') {
                break;
            }
            self.i += 1;
            self.skip()?;
        }
        self.close(b')')?;
        if !args.is_empty() {
            object.insert(Cow::Borrowed("__args__"), Value::List(args));
        }
        for (name, value) in keywords {
            object.insert(Cow::Borrowed(name), value);
        }
        // A call's result called, indexed or read again is left to Python.
        self.skip()?;
        if matches!(self.peek(), Some(b'(' | b'[' | b'.')) {
            return Err(Stop::Python);
        }
        Ok(Value::Dict(object.entries))
    }

    /// Whether `name =` (not `==`) is at the cursor: a keyword argument.
    fn keyword_ahead(&self) -> bool {
        let mut i = self.i;
        if !self.b.get(i).copied().is_some_and(is_ident_start) {
            return false;
        }
        while self.b.get(i).copied().is_some_and(is_ident_char) {
            i += 1;
        }
        while matches!(self.b.get(i), Some(b' ' | b'\t' | b'\x0c' | b'\n')) {
            i += 1;
        }
        self.b.get(i) == Some(&b'=') && self.b.get(i + 1) != Some(&b'=')
    }

    /// Comma-separated expressions up to `closer` (not consumed), a trailing comma allowed.
    fn r_items(&mut self, closer: u8) -> Res<Vec<Value<'a>>> {
        let mut items = Vec::new();
        loop {
            if self.peek() == Some(closer) {
                return Ok(items);
            }
            items.push(self.r_expr()?);
            self.skip()?;
            if self.peek() != Some(b',') {
                return Ok(items);
            }
            self.i += 1;
            self.skip()?;
        }
    }

    fn r_parenthesized(&mut self) -> Res<Value<'a>> {
        self.open()?;
        if self.peek() == Some(b')') {
            self.close(b')')?;
            return Ok(Value::List(Vec::new()));
        }
        let first = self.r_expr()?;
        self.skip()?;
        if self.peek() != Some(b',') {
            self.close(b')')?;
            return Ok(first);
        }
        self.i += 1;
        self.skip()?;
        let mut items = vec![first];
        items.extend(self.r_items(b')')?);
        self.close(b')')?;
        Ok(Value::List(items))
    }

    /// `{}`, a dict display (keys as the `str` of their value) or a set display (a list).
    fn r_braces(&mut self) -> Res<Value<'a>> {
        self.open()?;
        if self.peek() == Some(b'}') {
            self.close(b'}')?;
            return Ok(Value::Dict(Vec::new()));
        }
        let first = self.r_expr()?;
        self.skip()?;
        if self.peek() != Some(b':') {
            let mut items = vec![first];
            if self.peek() == Some(b',') {
                self.i += 1;
                self.skip()?;
                items.extend(self.r_items(b'}')?);
            }
            self.close(b'}')?;
            return Ok(Value::List(items));
        }
        let mut object = Object::default();
        let mut key = first;
        loop {
            self.i += 1; // `:`
            self.skip()?;
            let value = self.r_expr()?;
            object.insert(key_text(key), value);
            self.skip()?;
            if self.peek() != Some(b',') {
                break;
            }
            self.i += 1;
            self.skip()?;
            if self.peek() == Some(b'}') {
                break;
            }
            key = self.r_expr()?;
            self.skip()?;
            if self.peek() != Some(b':') {
                return Err(Stop::Python);
            }
        }
        self.close(b'}')?;
        Ok(Value::Dict(object.entries))
    }
}
