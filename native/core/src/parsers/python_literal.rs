//! `python_literal`: a Python `repr` of a dict or list (`{'command': 'ls'}`, `[('x', 2)]`),
//! written by callback-style instrumentations (LangChain handlers, LlamaIndex, the
//! openai-agents instrumentation), read as data.
//!
//! The result is exactly what the Python parser it replaced returned: `ast.parse(text.strip(),
//! mode="eval")` then `ast.literal_eval`, the value made JSON-like (tuples and sets become
//! lists, sets sorted by `repr`, `bytes` decoded as UTF-8 with replacement, complex numbers
//! as their `str`, dict keys that are not strings as their `str`). So this module is a
//! tokenizer and parser of CPython 3.11's literal subset, with its corners:
//!
//! * only text whose first non-whitespace character is `{` or `[` is read (`'42'` or `'None'`
//!   as a payload is more likely text than a repr); the bounds of the Python parser come
//!   first: more than [`MAX_LITERAL_CHARS`] characters, or brackets outside quotes nesting
//!   past [`MAX_LITERAL_DEPTH`] (the same approximate scan, [`nesting_within`]), is no value;
//!   the tokenizer's own limit of 200 nested brackets holds where that scan is fooled;
//! * between tokens only spaces, tabs, form feeds, comments and `\` continuations; newlines
//!   inside brackets, and after the expression only blank or comment lines; `\r\n` and `\r`
//!   are newlines (in string literals too); a NUL anywhere is no value;
//! * strings: prefixes `r`, `u`, `b`, `br`/`rb` in any case (an f-string is no literal),
//!   single or triple quotes, adjacent literals concatenated (not bytes with text), every
//!   escape (`\x` needs two hex digits, `\u` four, `\U` eight up to U+10FFFF, octal up to
//!   `\777`, taken modulo 256 in bytes), unknown escapes kept with their backslash, bytes
//!   ASCII only;
//! * numbers: decimal (no leading zeros but `0`s), hex, octal, binary, underscores between
//!   digits, floats correctly rounded (`1e400` is `inf`), imaginary literals;
//! * `True`, `False`, `None`, `...`, `set()`; tuples (bare at the top: `[1], [2]`), lists,
//!   dicts, sets with trailing commas; a sign before a number (`-(1)` too, not `--1` or
//!   `-True`); `int_or_float ± imaginary` and nothing else with an operator;
//! * dict keys and set members compare as Python's (`1`, `1.0`, `True` and `1+0j` are one
//!   key; the first key is kept with the last value), unhashable ones make no value.
//!
//! What this module does not decide itself ([`Literal::Python`]: the binding then calls the
//! Python implementation, `ast.literal_eval`, on that text): `\N{...}` escapes (they need
//! Unicode's name table), `\u`/`\U` escapes of a surrogate (no Rust `str` holds one), and
//! integers past 127 bits (Python's big integers and their 4,300-digit limits).
//!
//! The input is untrusted: the work is linear in its size (dict keys and set members are
//! hashed; sorting a set is `n log n`), recursion is bounded by the nesting limit, and
//! nothing panics on any input (a seeded sweep checks it).

use std::borrow::Cow;
use std::hash::{Hash, Hasher};

use crate::content::is_py_space;
use crate::hashing::{FastMap, FastMapExt};
use crate::otlp_json::repr::repr_float;
use crate::pyrepr::py_repr;

/// Longer text (in characters) is left as text, as the Python parser left it.
pub const MAX_LITERAL_CHARS: usize = 256 * 1024;

/// Deeper bracket nesting (outside quotes, by [`nesting_within`]) is left as text.
pub const MAX_LITERAL_DEPTH: usize = 32;

/// CPython's tokenizer refuses more nested brackets than this ("too many nested
/// parentheses"); reached only where [`nesting_within`]'s quote tracking is fooled.
const MAX_BRACKET_LEVEL: usize = 200;

/// A value as the Python parser returned it (JSON-like).
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    None,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(Cow<'a, str>),
    /// `...` (Python's `Ellipsis`, kept as it is).
    Ellipsis,
    List(Vec<Value<'a>>),
    /// Keys distinct, in first-insertion order.
    Dict(Vec<(Cow<'a, str>, Value<'a>)>),
}

/// What the parser made of a text.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal<'a> {
    Value(Value<'a>),
    /// No literal of the kind read here: the caller keeps the text.
    NoValue,
    /// A corner this module leaves to Python's own parser (see the module's doc).
    Python,
}

/// Why a parse stopped.
enum Stop {
    /// Not a literal (a syntax error, a name, an operator, an unhashable key, ...).
    No,
    /// Decided by Python.
    Python,
}

type Res<T> = Result<T, Stop>;

/// The `python_literal` parser on a string (see the module's doc).
pub fn python_literal(text: &str) -> Literal<'_> {
    let first = text.chars().find(|c| !is_py_space(*c));
    if !matches!(first, Some('{' | '[')) {
        return Literal::NoValue;
    }
    if text.len() > MAX_LITERAL_CHARS && text.chars().count() > MAX_LITERAL_CHARS {
        return Literal::NoValue;
    }
    if !nesting_within(text, MAX_LITERAL_DEPTH) {
        return Literal::NoValue;
    }
    let source = crate::content::py_strip(text);
    if source.contains('\0') {
        // "source code string cannot contain null bytes"
        return Literal::NoValue;
    }
    if source.contains('\r') {
        // The tokenizer reads `\r\n` and a lone `\r` as `\n`, in string literals too.
        let translated = source.replace("\r\n", "\n").replace('\r', "\n");
        return match evaluate(&translated) {
            Ok(value) => Literal::Value(into_owned(value)),
            Err(Stop::No) => Literal::NoValue,
            Err(Stop::Python) => Literal::Python,
        };
    }
    match evaluate(source) {
        Ok(value) => Literal::Value(value),
        Err(Stop::No) => Literal::NoValue,
        Err(Stop::Python) => Literal::Python,
    }
}

/// Whether brackets outside string literals nest at most `limit` deep: the Python parser's
/// linear pre-check, kept as it is (it does not know prefixes, triple quotes or comments;
/// its wrong guesses only refuse or allow a parse the parser still bounds).
pub fn nesting_within(text: &str, limit: usize) -> bool {
    let mut depth: i64 = 0;
    let mut quote = 0u8;
    let mut escaped = false;
    for &b in text.as_bytes() {
        if quote != 0 {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == quote {
                quote = 0;
            }
            continue;
        }
        match b {
            b'\'' | b'"' => quote = b,
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > limit as i64 {
                    return false;
                }
            }
            b')' | b']' | b'}' => depth -= 1,
            _ => {}
        }
    }
    true
}

fn evaluate(source: &str) -> Res<Value<'_>> {
    let mut parser = Parser {
        s: source,
        b: source.as_bytes(),
        i: 0,
        level: 0,
    };
    let literal = parser.top()?;
    jsonable(literal)
}

/// A value as `ast.literal_eval` returns it, before it is made JSON-like. Dicts and sets
/// hold what was written, repeats included (they are merged as Python merges them when
/// made JSON-like).
#[derive(Debug)]
enum Lit<'a> {
    None,
    Bool(bool),
    Int(i128),
    Float(f64),
    Complex(f64, f64),
    Str(Cow<'a, str>),
    Bytes(Vec<u8>),
    Ellipsis,
    Tuple(Vec<Lit<'a>>),
    List(Vec<Lit<'a>>),
    Set(Vec<Lit<'a>>),
    Dict(Vec<(Lit<'a>, Lit<'a>)>),
}

/// Which AST node a parsed expression is, as far as `literal_eval`'s rules tell them apart.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Node {
    /// `ast.Constant` (parentheses around it change nothing).
    Constant,
    /// A `+`/`-` `UnaryOp` on a number.
    Signed,
    /// A container, `set()` or a complex `BinOp`.
    Other,
}

struct Parser<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
    /// Open brackets (the tokenizer's paren level: newlines inside are no line ends).
    level: usize,
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn is_ident_char(b: u8) -> bool {
    is_ident_start(b) || b.is_ascii_digit()
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn at(&self, offset: usize) -> Option<u8> {
        self.b.get(self.i + offset).copied()
    }

    /// Skips what lies between tokens: spaces, tabs, form feeds, comments, `\` + newline,
    /// and newlines inside brackets. A `\` before anything else is a syntax error.
    fn skip(&mut self) -> Res<()> {
        while let Some(b) = self.peek() {
            match b {
                b' ' | b'\t' | b'\x0c' => self.i += 1,
                b'\n' if self.level > 0 => self.i += 1,
                b'#' => {
                    while !matches!(self.peek(), None | Some(b'\n')) {
                        self.i += 1;
                    }
                }
                b'\\' => {
                    if self.at(1) != Some(b'\n') {
                        return Err(Stop::No);
                    }
                    self.i += 2;
                }
                _ => break,
            }
        }
        Ok(())
    }

    /// The whole text: one expression or a bare tuple, then only blank or comment lines.
    fn top(&mut self) -> Res<Lit<'a>> {
        let (first, _) = self.expr()?;
        self.skip()?;
        let value = if self.peek() == Some(b',') {
            let mut items = vec![first];
            while self.peek() == Some(b',') {
                self.i += 1;
                self.skip()?;
                if matches!(self.peek(), None | Some(b'\n')) {
                    break;
                }
                items.push(self.expr()?.0);
                self.skip()?;
            }
            Lit::Tuple(items)
        } else {
            first
        };
        loop {
            self.skip()?;
            match self.peek() {
                None => return Ok(value),
                Some(b'\n') => self.i += 1,
                Some(_) => return Err(Stop::No),
            }
        }
    }

    /// An expression as `literal_eval` accepts it: a signed value, or `int_or_float ±
    /// imaginary`.
    fn expr(&mut self) -> Res<(Lit<'a>, Node)> {
        let (left, left_node) = self.unary()?;
        self.skip()?;
        let minus = match self.peek() {
            Some(b'+') => false,
            Some(b'-') => true,
            _ => return Ok((left, left_node)),
        };
        self.i += 1;
        self.skip()?;
        let (right, right_node) = self.unary()?;
        let real = match (left, left_node) {
            (Lit::Int(n), Node::Constant | Node::Signed) => n as f64,
            (Lit::Float(f), Node::Constant | Node::Signed) => f,
            _ => return Err(Stop::No),
        };
        let (re, im) = match (right, right_node) {
            (Lit::Complex(re, im), Node::Constant) => (re, im),
            _ => return Err(Stop::No),
        };
        // Python adds a real to a complex as complex(real, 0.0) + (re, im).
        let (re, im) = if minus {
            (real - re, 0.0 - im)
        } else {
            (real + re, 0.0 + im)
        };
        if re.is_nan() || im.is_nan() {
            return Err(Stop::Python);
        }
        Ok((Lit::Complex(re, im), Node::Other))
    }

    /// A value with at most one sign, the sign only before a number constant.
    fn unary(&mut self) -> Res<(Lit<'a>, Node)> {
        let minus = match self.peek() {
            Some(b'-') => true,
            Some(b'+') => false,
            _ => return self.primary(),
        };
        self.i += 1;
        self.skip()?;
        if matches!(self.peek(), Some(b'-' | b'+')) {
            return Err(Stop::No);
        }
        let (operand, node) = self.primary()?;
        if node != Node::Constant {
            return Err(Stop::No);
        }
        let value = match (operand, minus) {
            (value @ (Lit::Int(_) | Lit::Float(_) | Lit::Complex(..)), false) => value,
            (Lit::Int(n), true) => Lit::Int(-n),
            (Lit::Float(f), true) => Lit::Float(-f),
            (Lit::Complex(re, im), true) => Lit::Complex(-re, -im),
            _ => return Err(Stop::No),
        };
        Ok((value, Node::Signed))
    }

    fn open(&mut self) -> Res<()> {
        self.i += 1;
        self.level += 1;
        if self.level > MAX_BRACKET_LEVEL {
            return Err(Stop::No);
        }
        self.skip()
    }

    fn close(&mut self, closer: u8) -> Res<()> {
        if self.peek() != Some(closer) {
            return Err(Stop::No);
        }
        self.i += 1;
        self.level -= 1;
        Ok(())
    }

    fn primary(&mut self) -> Res<(Lit<'a>, Node)> {
        let Some(b) = self.peek() else {
            return Err(Stop::No);
        };
        match b {
            b'(' => self.parenthesized(),
            b'[' => {
                self.open()?;
                let items = self.items(b']')?;
                self.close(b']')?;
                Ok((Lit::List(items), Node::Other))
            }
            b'{' => self.braces(),
            b'0'..=b'9' => Ok((self.number()?, Node::Constant)),
            b'.' if self.at(1).is_some_and(|d| d.is_ascii_digit()) => {
                Ok((self.number()?, Node::Constant))
            }
            b'.' if self.at(1) == Some(b'.') && self.at(2) == Some(b'.') => {
                self.i += 3;
                Ok((Lit::Ellipsis, Node::Constant))
            }
            b'\'' | b'"' => Ok((self.strings(None)?, Node::Constant)),
            b if is_ident_start(b) => self.name(),
            _ => Err(Stop::No),
        }
    }

    /// Comma-separated values up to `closer` (not consumed), a trailing comma allowed.
    fn items(&mut self, closer: u8) -> Res<Vec<Lit<'a>>> {
        let mut items = Vec::new();
        loop {
            if self.peek() == Some(closer) {
                return Ok(items);
            }
            items.push(self.expr()?.0);
            self.skip()?;
            if self.peek() != Some(b',') {
                return Ok(items);
            }
            self.i += 1;
            self.skip()?;
        }
    }

    /// `( )`, `(x)` (the node of `x`), `(x,)`, `(x, y)`.
    fn parenthesized(&mut self) -> Res<(Lit<'a>, Node)> {
        self.open()?;
        if self.peek() == Some(b')') {
            self.close(b')')?;
            return Ok((Lit::Tuple(Vec::new()), Node::Other));
        }
        let (first, node) = self.expr()?;
        self.skip()?;
        if self.peek() != Some(b',') {
            self.close(b')')?;
            return Ok((first, node));
        }
        self.i += 1;
        self.skip()?;
        let mut items = vec![first];
        items.extend(self.items(b')')?);
        self.close(b')')?;
        Ok((Lit::Tuple(items), Node::Other))
    }

    /// `{}`, a dict display or a set display.
    fn braces(&mut self) -> Res<(Lit<'a>, Node)> {
        self.open()?;
        if self.peek() == Some(b'}') {
            self.close(b'}')?;
            return Ok((Lit::Dict(Vec::new()), Node::Other));
        }
        let (first, _) = self.expr()?;
        self.skip()?;
        if self.peek() != Some(b':') {
            let mut items = vec![first];
            if self.peek() == Some(b',') {
                self.i += 1;
                self.skip()?;
                items.extend(self.items(b'}')?);
            }
            self.close(b'}')?;
            return Ok((Lit::Set(items), Node::Other));
        }
        let mut pairs = Vec::new();
        let mut key = first;
        loop {
            // At the `:` after `key`.
            self.i += 1;
            self.skip()?;
            let (value, _) = self.expr()?;
            pairs.push((key, value));
            self.skip()?;
            if self.peek() != Some(b',') {
                break;
            }
            self.i += 1;
            self.skip()?;
            if self.peek() == Some(b'}') {
                break;
            }
            key = self.expr()?.0;
            self.skip()?;
            if self.peek() != Some(b':') {
                return Err(Stop::No);
            }
        }
        self.close(b'}')?;
        Ok((Lit::Dict(pairs), Node::Other))
    }

    /// A name: a string prefix before a quote, `True`, `False`, `None`, or `set()`.
    fn name(&mut self) -> Res<(Lit<'a>, Node)> {
        let start = self.i;
        while self.peek().is_some_and(is_ident_char) {
            self.i += 1;
        }
        let word = &self.s[start..self.i];
        if matches!(self.peek(), Some(b'\'' | b'"')) {
            return Ok((self.strings(Some(word))?, Node::Constant));
        }
        match word {
            "True" => Ok((Lit::Bool(true), Node::Constant)),
            "False" => Ok((Lit::Bool(false), Node::Constant)),
            "None" => Ok((Lit::None, Node::Constant)),
            "set" => {
                self.skip()?;
                if self.peek() != Some(b'(') {
                    return Err(Stop::No);
                }
                self.open()?;
                self.close(b')')?;
                Ok((Lit::Set(Vec::new()), Node::Other))
            }
            _ => Err(Stop::No),
        }
    }

    /// One string literal or several adjacent ones, concatenated. `prefix` is the prefix of
    /// the first when it was already read.
    fn strings(&mut self, prefix: Option<&'a str>) -> Res<Lit<'a>> {
        let mut prefix = prefix.unwrap_or("");
        let mut text: Option<Cow<'a, str>> = None;
        let mut bytes: Option<Vec<u8>> = None;
        loop {
            let (raw, is_bytes) = match prefix.to_ascii_lowercase().as_str() {
                "" | "u" => (false, false),
                "r" => (true, false),
                "b" => (false, true),
                "br" | "rb" => (true, true),
                // f-strings are no literals; other names before a quote are syntax errors.
                _ => return Err(Stop::No),
            };
            let body = self.string_body()?;
            if is_bytes {
                if text.is_some() {
                    return Err(Stop::No);
                }
                let part = bytes_value(body, raw)?;
                bytes.get_or_insert_with(Vec::new).extend_from_slice(&part);
            } else {
                if bytes.is_some() {
                    return Err(Stop::No);
                }
                let part = if raw {
                    Cow::Borrowed(body)
                } else {
                    str_value(body)?
                };
                text = Some(match text {
                    None => part,
                    Some(before) => Cow::Owned(before.into_owned() + &part),
                });
            }
            // Another literal follows (a prefix and a quote), or the strings end.
            self.skip()?;
            match self.peek() {
                Some(b'\'' | b'"') => prefix = "",
                Some(b) if is_ident_start(b) => {
                    let start = self.i;
                    let mut end = start;
                    while self.b.get(end).copied().is_some_and(is_ident_char) {
                        end += 1;
                    }
                    if !matches!(self.b.get(end), Some(b'\'' | b'"')) {
                        // A name after a string: a syntax error.
                        return Err(Stop::No);
                    }
                    prefix = &self.s[start..end];
                    self.i = end;
                }
                _ => break,
            }
        }
        Ok(match (text, bytes) {
            (Some(text), _) => Lit::Str(text),
            (None, Some(bytes)) => Lit::Bytes(bytes),
            (None, None) => return Err(Stop::No),
        })
    }

    /// The text between the quotes of the literal starting at the quote under the cursor
    /// (escapes still written), the cursor moved past its closing quote.
    fn string_body(&mut self) -> Res<&'a str> {
        let quote = self.peek().ok_or(Stop::No)?;
        let triple = self.at(1) == Some(quote) && self.at(2) == Some(quote);
        let open = if triple { 3 } else { 1 };
        let start = self.i + open;
        let mut i = start;
        loop {
            match self.b.get(i).copied() {
                None => return Err(Stop::No),
                Some(b'\\') => i += 2,
                Some(b'\n') if !triple => return Err(Stop::No),
                Some(b) if b == quote => {
                    if !triple {
                        break;
                    }
                    if self.b.get(i + 1) == Some(&quote) && self.b.get(i + 2) == Some(&quote) {
                        break;
                    }
                    i += 1;
                }
                Some(_) => i += 1,
            }
        }
        // `i` is at an ASCII quote, so both ends are character boundaries.
        let body = self.s.get(start..i).ok_or(Stop::No)?;
        self.i = i + open;
        Ok(body)
    }

    /// A number token: an `int`, a `float` or an imaginary `complex`.
    fn number(&mut self) -> Res<Lit<'a>> {
        let b = self.b;
        let start = self.i;
        if b[start] == b'0' {
            let base = match self.at(1) {
                Some(b'x' | b'X') => 16,
                Some(b'o' | b'O') => 8,
                Some(b'b' | b'B') => 2,
                _ => 0,
            };
            if base != 0 {
                self.i += 2;
                let mut value: u128 = 0;
                let mut digits = 0;
                loop {
                    if self.peek() == Some(b'_') {
                        self.i += 1;
                    }
                    let Some(d) = self.peek().and_then(|c| (c as char).to_digit(base)) else {
                        // `0x`, `0x_`, `1_` and `0x1_` are syntax errors.
                        if digits == 0 || self.b[self.i - 1] == b'_' {
                            return Err(Stop::No);
                        }
                        break;
                    };
                    self.i += 1;
                    digits += 1;
                    value = match value
                        .checked_mul(u128::from(base))
                        .and_then(|v| v.checked_add(u128::from(d)))
                    {
                        Some(v) => v,
                        None => return Err(Stop::Python),
                    };
                }
                if self.peek().is_some_and(is_ident_char) {
                    return Err(Stop::No);
                }
                return int_value(value);
            }
        }
        // Decimal: integer part, fraction, exponent, `j`.
        let mut is_float = false;
        if self.peek() != Some(b'.') {
            self.digits()?;
        }
        if self.peek() == Some(b'.') {
            is_float = true;
            self.i += 1;
            if self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.digits()?;
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            let sign = usize::from(matches!(self.at(1), Some(b'+' | b'-')));
            if !self.at(1 + sign).is_some_and(|c| c.is_ascii_digit()) {
                return Err(Stop::No);
            }
            is_float = true;
            self.i += 1 + sign;
            self.digits()?;
        }
        let imaginary = matches!(self.peek(), Some(b'j' | b'J'));
        let end = self.i;
        if imaginary {
            self.i += 1;
        }
        if self.peek().is_some_and(is_ident_char) {
            return Err(Stop::No);
        }
        let token: String = self.s[start..end].chars().filter(|c| *c != '_').collect();
        if is_float || imaginary {
            let f: f64 = token.parse().map_err(|_| Stop::No)?;
            return Ok(if imaginary {
                Lit::Complex(0.0, f)
            } else {
                Lit::Float(f)
            });
        }
        let significant = token.trim_start_matches('0');
        if significant.len() != token.len() && !significant.is_empty() {
            // "leading zeros in decimal integer literals are not permitted"
            return Err(Stop::No);
        }
        if significant.is_empty() {
            return Ok(Lit::Int(0));
        }
        match significant.parse::<u128>() {
            Ok(value) => int_value(value),
            Err(_) => Err(Stop::Python),
        }
    }

    /// `[0-9](_?[0-9])*` at the cursor.
    fn digits(&mut self) -> Res<()> {
        if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
            return Err(Stop::No);
        }
        loop {
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.i += 1;
            }
            if self.peek() != Some(b'_') {
                return Ok(());
            }
            if !self.at(1).is_some_and(|c| c.is_ascii_digit()) {
                return Err(Stop::No);
            }
            self.i += 1;
        }
    }
}

/// An integer literal's value; past 127 bits Python's own integers decide.
fn int_value(value: u128) -> Res<Lit<'static>> {
    i128::try_from(value)
        .map(Lit::Int)
        .map_err(|_| Stop::Python)
}

fn hex_value(digits: &str) -> Option<u32> {
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(digits, 16).ok()
}

/// The value of a (not raw) `str` literal's text: its escapes decoded.
fn str_value(body: &str) -> Res<Cow<'_, str>> {
    if !body.contains('\\') {
        return Ok(Cow::Borrowed(body));
    }
    let mut out = String::with_capacity(body.len());
    let mut chars = body.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some((at, e)) = chars.next() else {
            return Err(Stop::No);
        };
        match e {
            '\n' => {}
            '\\' | '\'' | '"' => out.push(e),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\u{b}'),
            '0'..='7' => {
                let mut value = e as u32 - '0' as u32;
                for _ in 0..2 {
                    match chars.peek() {
                        Some(&(_, d @ '0'..='7')) => {
                            value = value * 8 + (d as u32 - '0' as u32);
                            chars.next();
                        }
                        _ => break,
                    }
                }
                out.push(char::from_u32(value).ok_or(Stop::No)?);
            }
            'x' | 'u' | 'U' => {
                let width = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let start = at + 1;
                let code = body
                    .get(start..start + width)
                    .and_then(hex_value)
                    .ok_or(Stop::No)?;
                for _ in 0..width {
                    chars.next();
                }
                if (0xd800..=0xdfff).contains(&code) {
                    return Err(Stop::Python);
                }
                out.push(char::from_u32(code).ok_or(Stop::No)?);
            }
            'N' => return Err(Stop::Python),
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    Ok(Cow::Owned(out))
}

/// The value of a `bytes` literal's text (ASCII only; escapes decoded unless raw).
fn bytes_value(body: &str, raw: bool) -> Res<Vec<u8>> {
    if !body.is_ascii() {
        return Err(Stop::No);
    }
    let b = body.as_bytes();
    if raw || !b.contains(&b'\\') {
        return Ok(b.to_vec());
    }
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        i += 1;
        if c != b'\\' {
            out.push(c);
            continue;
        }
        let Some(&e) = b.get(i) else {
            return Err(Stop::No);
        };
        i += 1;
        match e {
            b'\n' => {}
            b'\\' | b'\'' | b'"' => out.push(e),
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(11),
            b'0'..=b'7' => {
                let mut value = u32::from(e - b'0');
                for _ in 0..2 {
                    match b.get(i) {
                        Some(&d @ b'0'..=b'7') => {
                            value = value * 8 + u32::from(d - b'0');
                            i += 1;
                        }
                        _ => break,
                    }
                }
                out.push((value & 0xff) as u8);
            }
            b'x' => {
                let code = body.get(i..i + 2).and_then(hex_value).ok_or(Stop::No)?;
                i += 2;
                out.push(code as u8);
            }
            other => {
                out.push(b'\\');
                out.push(other);
            }
        }
    }
    Ok(out)
}

/// A number as Python's numeric equality and hash see it: `1`, `1.0`, `True` and `1+0j`
/// are one key.
#[derive(PartialEq, Eq, Hash)]
enum Real {
    Int(i128),
    Bits(u64),
}

fn real(f: f64) -> Real {
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 1.0e38 {
        Real::Int(f as i128)
    } else {
        Real::Bits(f.to_bits())
    }
}

fn imag_bits(f: f64) -> u64 {
    if f == 0.0 {
        0
    } else {
        f.to_bits()
    }
}

fn numeric(lit: &Lit<'_>) -> Option<(Real, u64)> {
    Some(match *lit {
        Lit::Bool(b) => (Real::Int(i128::from(b)), 0),
        Lit::Int(n) => (Real::Int(n), 0),
        Lit::Float(f) => (real(f), 0),
        Lit::Complex(re, im) => (real(re), imag_bits(im)),
        _ => return None,
    })
}

/// A hashable value as a dict key or set member: Python's `==` and a hash consistent with it.
struct Key<'r, 'a>(&'r Lit<'a>);

fn hashable(lit: &Lit<'_>) -> bool {
    match lit {
        Lit::List(_) | Lit::Dict(_) | Lit::Set(_) => false,
        Lit::Tuple(items) => items.iter().all(hashable),
        _ => true,
    }
}

fn python_eq(a: &Lit<'_>, b: &Lit<'_>) -> bool {
    if let (Some(x), Some(y)) = (numeric(a), numeric(b)) {
        return x == y;
    }
    match (a, b) {
        (Lit::Str(x), Lit::Str(y)) => x == y,
        (Lit::Bytes(x), Lit::Bytes(y)) => x == y,
        (Lit::None, Lit::None) | (Lit::Ellipsis, Lit::Ellipsis) => true,
        (Lit::Tuple(x), Lit::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| python_eq(p, q))
        }
        _ => false,
    }
}

fn python_hash<H: Hasher>(lit: &Lit<'_>, state: &mut H) {
    if let Some(number) = numeric(lit) {
        0u8.hash(state);
        number.hash(state);
        return;
    }
    match lit {
        Lit::Str(s) => {
            1u8.hash(state);
            s.hash(state);
        }
        Lit::Bytes(b) => {
            2u8.hash(state);
            b.hash(state);
        }
        Lit::None => 3u8.hash(state),
        Lit::Ellipsis => 4u8.hash(state),
        Lit::Tuple(items) => {
            5u8.hash(state);
            items.len().hash(state);
            for item in items {
                python_hash(item, state);
            }
        }
        // Unhashable: refused before hashing.
        _ => 6u8.hash(state),
    }
}

impl PartialEq for Key<'_, '_> {
    fn eq(&self, other: &Self) -> bool {
        python_eq(self.0, other.0)
    }
}

impl Eq for Key<'_, '_> {}

impl Hash for Key<'_, '_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        python_hash(self.0, state);
    }
}

/// A literal made JSON-like, as the Python parser's `_jsonable` did.
fn jsonable<'a>(lit: Lit<'a>) -> Res<Value<'a>> {
    Ok(match lit {
        Lit::None => Value::None,
        Lit::Bool(b) => Value::Bool(b),
        Lit::Int(n) => Value::Int(n),
        Lit::Float(f) => Value::Float(f),
        Lit::Complex(re, im) => Value::Str(Cow::Owned(complex_str(re, im))),
        Lit::Str(s) => Value::Str(s),
        Lit::Bytes(b) => Value::Str(Cow::Owned(String::from_utf8_lossy(&b).into_owned())),
        Lit::Ellipsis => Value::Ellipsis,
        Lit::Tuple(items) | Lit::List(items) => {
            Value::List(items.into_iter().map(jsonable).collect::<Res<Vec<_>>>()?)
        }
        Lit::Set(items) => set_value(items)?,
        Lit::Dict(pairs) => dict_value(pairs)?,
    })
}

/// A set: its distinct members (the first of equal ones), made JSON-like and sorted by
/// their `repr`.
fn set_value<'a>(items: Vec<Lit<'a>>) -> Res<Value<'a>> {
    if !items.iter().all(hashable) {
        return Err(Stop::No);
    }
    let mut seen: FastMap<Key<'_, '_>, ()> = FastMap::with_capacity(items.len());
    let mut keep = vec![false; items.len()];
    for (index, item) in items.iter().enumerate() {
        if seen.insert(Key(item), ()).is_none() {
            keep[index] = true;
        }
    }
    drop(seen);
    let mut members = Vec::new();
    for (item, kept) in items.into_iter().zip(keep) {
        if kept {
            let value = jsonable(item)?;
            let mut order = String::new();
            value_repr(&value, &mut order);
            members.push((order, value));
        }
    }
    members.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Value::List(members.into_iter().map(|(_, v)| v).collect()))
}

/// A dict: keys merged as Python merges them (first key, last value), then each key as its
/// `str` (merged again where two keys have the same text), values made JSON-like.
fn dict_value<'a>(pairs: Vec<(Lit<'a>, Lit<'a>)>) -> Res<Value<'a>> {
    if !pairs.iter().all(|(k, _)| hashable(k)) {
        return Err(Stop::No);
    }
    // For each pair, the index of the first pair with an equal key.
    let mut first_of: FastMap<Key<'_, '_>, usize> = FastMap::with_capacity(pairs.len());
    let mut slot = Vec::with_capacity(pairs.len());
    for (index, (key, _)) in pairs.iter().enumerate() {
        slot.push(*first_of.entry(Key(key)).or_insert(index));
    }
    drop(first_of);
    let mut keys: Vec<Option<Lit<'a>>> = Vec::with_capacity(pairs.len());
    let mut values: Vec<Option<Lit<'a>>> = Vec::with_capacity(pairs.len());
    for (key, value) in pairs {
        keys.push(Some(key));
        values.push(Some(value));
    }
    // The last value of each first key.
    let mut last: Vec<usize> = (0..slot.len()).collect();
    for (index, first) in slot.iter().enumerate() {
        last[*first] = index;
    }
    let mut out: Vec<(Cow<'a, str>, Value<'a>)> = Vec::new();
    let mut by_text: FastMap<String, usize> = FastMap::new();
    for (index, first) in slot.iter().enumerate() {
        if *first != index {
            continue;
        }
        let key = keys[index].take().ok_or(Stop::No)?;
        let value = values[last[index]].take().ok_or(Stop::No)?;
        let text = key_str(key);
        let value = jsonable(value)?;
        match by_text.get(text.as_ref()) {
            Some(&at) => out[at].1 = value,
            None => {
                by_text.insert(text.to_string(), out.len());
                out.push((text, value));
            }
        }
    }
    Ok(Value::Dict(out))
}

/// `str(key)`.
fn key_str<'a>(key: Lit<'a>) -> Cow<'a, str> {
    match key {
        Lit::Str(s) => s,
        other => {
            let mut text = String::new();
            lit_repr(&other, &mut text);
            Cow::Owned(text)
        }
    }
}

/// `repr` of a hashable literal (`str` and `repr` agree on all but strings).
fn lit_repr(lit: &Lit<'_>, out: &mut String) {
    match lit {
        Lit::None => out.push_str("None"),
        Lit::Bool(true) => out.push_str("True"),
        Lit::Bool(false) => out.push_str("False"),
        Lit::Int(n) => out.push_str(&n.to_string()),
        Lit::Float(f) => out.push_str(&repr_float(*f)),
        Lit::Complex(re, im) => out.push_str(&complex_str(*re, *im)),
        Lit::Str(s) => out.push_str(&py_repr(s)),
        Lit::Bytes(b) => bytes_repr(b, out),
        Lit::Ellipsis => out.push_str("Ellipsis"),
        Lit::Tuple(items) => {
            out.push('(');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push_str(", ");
                }
                lit_repr(item, out);
            }
            if items.len() == 1 {
                out.push(',');
            }
            out.push(')');
        }
        // Unhashable: never a key.
        Lit::List(_) | Lit::Dict(_) | Lit::Set(_) => {}
    }
}

/// `repr` of a JSON-like value (the order a set's members are sorted in).
fn value_repr(value: &Value<'_>, out: &mut String) {
    match value {
        Value::None => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Int(n) => out.push_str(&n.to_string()),
        Value::Float(f) => out.push_str(&repr_float(*f)),
        Value::Str(s) => out.push_str(&py_repr(s)),
        Value::Ellipsis => out.push_str("Ellipsis"),
        Value::List(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push_str(", ");
                }
                value_repr(item, out);
            }
            out.push(']');
        }
        Value::Dict(entries) => {
            out.push('{');
            for (index, (key, item)) in entries.iter().enumerate() {
                if index > 0 {
                    out.push_str(", ");
                }
                out.push_str(&py_repr(key));
                out.push_str(": ");
                value_repr(item, out);
            }
            out.push('}');
        }
    }
}

/// `repr(bytes)` as CPython writes it.
fn bytes_repr(bytes: &[u8], out: &mut String) {
    let quote = if bytes.contains(&b'\'') && !bytes.contains(&b'"') {
        b'"'
    } else {
        b'\''
    };
    out.push('b');
    out.push(quote as char);
    for &b in bytes {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b if b == quote => {
                out.push('\\');
                out.push(b as char);
            }
            0x20..=0x7e => out.push(b as char),
            b => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push(quote as char);
}

/// A float as `complex.__repr__` writes its parts: `repr` without a trailing `.0`.
fn complex_part(x: f64) -> String {
    let text = repr_float(x);
    match text.strip_suffix(".0") {
        Some(short) => short.to_string(),
        None => text,
    }
}

/// `str(complex(re, im))`: `2j`, `(1+2j)`, `(-0-1j)`, `(inf-infj)`.
fn complex_str(re: f64, im: f64) -> String {
    if re == 0.0 && re.is_sign_positive() {
        return format!("{}j", complex_part(im));
    }
    let imag = complex_part(im);
    let sign = if imag.starts_with('-') { "" } else { "+" };
    format!("({}{sign}{imag}j)", complex_part(re))
}

/// A value holding no borrowed text (for text parsed from a rewritten copy).
fn into_owned(value: Value<'_>) -> Value<'static> {
    match value {
        Value::None => Value::None,
        Value::Bool(b) => Value::Bool(b),
        Value::Int(n) => Value::Int(n),
        Value::Float(f) => Value::Float(f),
        Value::Str(s) => Value::Str(Cow::Owned(s.into_owned())),
        Value::Ellipsis => Value::Ellipsis,
        Value::List(items) => Value::List(items.into_iter().map(into_owned).collect()),
        Value::Dict(entries) => Value::Dict(
            entries
                .into_iter()
                .map(|(k, v)| (Cow::Owned(k.into_owned()), into_owned(v)))
                .collect(),
        ),
    }
}

mod repr;

pub use repr::python_repr;

#[cfg(test)]
mod tests;
