//! A JSON document parsed into borrowed values, with nesting bounded.
//!
//! Why not `serde_json::Value`: strings without escapes borrow from the input instead of
//! being copied, the tree lives in an arena (one bump allocation per node and one free for
//! the whole body: allocating and freeing the nodes one by one was a quarter of the decoder's
//! time), objects are small slices rather than maps (OTLP objects have a handful of keys),
//! and the nesting depth is counted here so a hostile document is refused with the
//! located message the project has always given (`JSON nests more than 256 levels deep (at
//! byte N)`) rather than serde_json's own limit of 128 with another wording. Objects keep
//! Python `dict` semantics, which the problem messages and the tolerant rules were written
//! against: a repeated key keeps its first position and its last value.
//!
//! Well-formed text is read by `value/fast.rs`, the project's own tokenizer; serde_json (through
//! the `Seed` below) reads what that one gives up on, and words every error.

use crate::hashing::{FastMap, FastMapExt};
use crate::model::{Interner, Text};
use std::cell::Cell;
use std::fmt;

use bumpalo::collections::Vec as BumpVec;
use bumpalo::Bump;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

mod fast;

/// Most nested arrays/objects a document may have; deeper ones are refused whole (the limit
/// of the JSON parser the Python decoders used). Real OTLP nests about ten levels plus three
/// per level of an attribute value, whose own bound (64 levels,
/// [`super::MAX_ANY_VALUE_DEPTH`]) reads a deep value as `None` long before this one.
pub const MAX_JSON_DEPTH: usize = 1024;

/// The nesting depth the refusal message names as the culprit, with its byte offset (the
/// message users and tests know: `JSON nests more than 256 levels deep (at byte N)`).
pub const MAX_REPORTED_DEPTH: usize = 256;

/// One JSON value; numbers as serde_json reads them (integers beyond 64 bits as floats).
/// Strings borrow from the input (or the arena, when they held escapes); arrays and objects
/// are slices in the arena.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum J<'a> {
    Null,
    Bool(bool),
    U64(u64),
    I64(i64),
    F64(f64),
    Str(&'a str),
    Arr(&'a [J<'a>]),
    Obj(Obj<'a>),
}

/// A JSON object with distinct keys in first-seen order (each with its last value).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Obj<'a>(&'a [(&'a str, J<'a>)]);

impl<'a> Obj<'a> {
    /// The value under `key`, `None` when absent (a JSON `null` is `Some(J::Null)`).
    pub fn get(&self, key: &str) -> Option<&'a J<'a>> {
        self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// The value under `key` as Python's `dict.get` sees it: absent and `null` are both `None`.
    pub fn get_some(&self, key: &str) -> Option<&'a J<'a>> {
        match self.get(key) {
            Some(J::Null) | None => None,
            found => found,
        }
    }

    pub fn contains(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&'a str, &'a J<'a>)> {
        self.0.iter().map(|(k, v)| (*k, v))
    }

    /// The key/value pairs in order, as a slice.
    pub fn entries(&self) -> &'a [(&'a str, J<'a>)] {
        self.0
    }

    /// Builds an object from key/value pairs in document order, with dict semantics.
    fn from_pairs(bump: &'a Bump, pairs: BumpVec<'a, (&'a str, J<'a>)>) -> Self {
        if !has_duplicate_keys(&pairs) {
            return Obj(pairs.into_bump_slice());
        }
        let deduped = dedupe_last_wins(pairs.iter().copied().collect::<Vec<_>>());
        Obj(BumpVec::from_iter_in(deduped, bump).into_bump_slice())
    }

    /// [`Obj::from_pairs`] from a slice, copied into `bump` at its final size.
    #[inline]
    fn from_slice(bump: &'a Bump, pairs: &[(&'a str, J<'a>)]) -> Self {
        if !has_duplicate_keys(pairs) {
            // Pair by pair rather than `alloc_slice_copy`: most objects have one or two
            // pairs, which this copies with a few moves instead of a call to `memcpy`.
            return Obj(bump.alloc_slice_fill_iter(pairs.iter().copied()));
        }
        let deduped = dedupe_last_wins(pairs.to_vec());
        Obj(bump.alloc_slice_copy(&deduped))
    }
}

/// Whether a key of `pairs` repeats: [`duplicate_keys`] as a yes or no, for the object being
/// built. Most OTLP objects have one key (an `AnyValue`) or two (a `KeyValue`), answered
/// here with no comparison or one, without a call.
#[inline]
fn has_duplicate_keys<V>(pairs: &[(&str, V)]) -> bool {
    match pairs {
        [] | [_] => false,
        [(a, _), (b, _)] => a == b,
        _ => !duplicate_keys(pairs).is_empty(),
    }
}

/// Spreads a key's tag over the bits of [`duplicate_keys`]'s word (Fibonacci hashing: the
/// top six bits of the product).
const TAG_MIX: u64 = 0x9E37_79B9_7F4A_7C15;

/// `(later index, first index)` of every repeated key; empty (and not allocated) for the
/// usual object. Quadratic only for small lists; large ones are indexed, so a hostile object
/// of many keys costs linear time.
fn duplicate_keys<K: AsRef<str>, V>(pairs: &[(K, V)]) -> Vec<(usize, usize)> {
    const SCAN: usize = 16;
    let n = pairs.len();
    let mut moves = Vec::new();
    if n < 2 {
        return moves;
    }
    if n <= SCAN {
        // Length and last byte first, one word per key: distinct keys of one OTLP object
        // (`spanId`, `status`, `events`) mostly differ there. Each tag sets one bit of a
        // word; only a key whose bit an earlier key set is compared with the keys before
        // it (a repeat always is: equal keys have equal tags), so a span's or an attribute
        // list's dozen distinct keys cost a few operations each rather than a comparison
        // with every earlier key.
        let mut tags = [0u64; SCAN];
        let mut seen = 0u64;
        for (i, (key, _)) in pairs.iter().enumerate() {
            let key = key.as_ref();
            let bytes = key.as_bytes();
            let tag = ((bytes.len() as u64) << 8) | u64::from(bytes.last().copied().unwrap_or(0));
            tags[i] = tag;
            let bit = 1u64 << (tag.wrapping_mul(TAG_MIX) >> 58);
            if seen & bit != 0 {
                if let Some(j) = (0..i).find(|&j| tags[j] == tag && pairs[j].0.as_ref() == key) {
                    moves.push((i, j));
                }
            }
            seen |= bit;
        }
    } else {
        let mut first: FastMap<&str, usize> = FastMap::with_capacity(n);
        for (i, (k, _)) in pairs.iter().enumerate() {
            match first.get(k.as_ref()) {
                Some(&j) => moves.push((i, j)),
                None => {
                    first.insert(k.as_ref(), i);
                }
            }
        }
    }
    moves
}

/// Whether a key of `pairs` repeats (then [`dedupe_last_wins`] has work to do).
pub fn has_repeated_key<K: AsRef<str>, V>(pairs: &[(K, V)]) -> bool {
    !duplicate_keys(pairs).is_empty()
}

/// Keeps the first position and the last value of every repeated key (Python `dict`).
pub fn dedupe_last_wins<K: AsRef<str>, V>(mut pairs: Vec<(K, V)>) -> Vec<(K, V)> {
    let moves = duplicate_keys(&pairs);
    if moves.is_empty() {
        return pairs;
    }
    let n = pairs.len();
    let mut keep = vec![true; n];
    for &(i, _) in &moves {
        keep[i] = false;
    }
    // Later duplicates overwrite the first one's value, in document order.
    let mut slots: Vec<Option<(K, V)>> = pairs.drain(..).map(Some).collect();
    for &(i, j) in &moves {
        if let Some((_, value)) = slots[i].take() {
            if let Some(entry) = slots[j].as_mut() {
                entry.1 = value;
            }
        }
    }
    slots
        .into_iter()
        .zip(keep)
        .filter_map(|(slot, kept)| if kept { slot } else { None })
        .collect()
}

/// Why a document could not be parsed.
#[derive(Debug, Clone, PartialEq)]
pub enum ParseError {
    /// Not JSON: where and what, as serde_json words it.
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
    /// Nested past [`MAX_JSON_DEPTH`]: the located one-line message.
    TooDeep(String),
}

/// Parses a whole document (surrounding whitespace allowed, nothing else after it) into
/// `bump`, which holds the tree until the caller drops it.
///
/// The bytes are checked for UTF-8 once, as a whole: then serde_json reads them as text and
/// checks no string again (checking each string on its own was a tenth of decoding a
/// collector's JSON line, most strings being a few bytes long). Only a body that is not
/// UTF-8 throughout is read as bytes, so its error names the string, line and column as
/// before.
pub fn parse<'a>(data: &'a [u8], bump: &'a Bump) -> Result<J<'a>, ParseError> {
    let flags = Flags::default();
    match fast::utf8(data) {
        Some(text) => parse_str(text, &flags, bump),
        None => parse_from(
            serde_json::Deserializer::from_slice(data),
            data,
            &flags,
            &Tree { bump },
        ),
    }
}

/// `data` as text when it is UTF-8 throughout (checked as [`parse`] checks it).
#[inline]
pub fn utf8(data: &[u8]) -> Option<&str> {
    fast::utf8(data)
}

/// [`parse`] of text already known to be UTF-8 (not checked again).
pub fn parse_utf8<'a>(text: &'a str, bump: &'a Bump) -> Result<J<'a>, ParseError> {
    parse_str(text, &Flags::default(), bump)
}

/// Calls `read` with a cursor at the start of `text` (a document known to be UTF-8), whose
/// strings and values are made in `bump` as [`parse`] makes them.
///
/// Why: a reader that expects one shape of document (OTLP/JSON's `resourceSpans` ->
/// `scopeSpans` -> `spans`) walks the tokens itself and builds its own records from them,
/// with no tree between, and asks for a tree only of the members it leaves to the tree's
/// readers. Every token is read by the same code as `value/fast.rs`'s, so what the cursor
/// reads is what [`parse`] would have put in the tree; the cursor only accepts (any `None`
/// means "not read here", never an error, which [`parse`] words).
pub fn read_tokens<'a, R>(
    text: &'a str,
    bump: &'a Bump,
    read: impl FnOnce(&mut Tokens<'a, '_>) -> R,
) -> R {
    let tree = Tree { bump };
    let flags = Flags::default();
    let mut tokens = Tokens {
        parser: fast::Parser::new(text, &tree, &flags),
        spaced: [SpacedForm::default(); SPACED_FORMS],
    };
    read(&mut tokens)
}

/// Where `literal` ends when it is at `pos` of `bytes` with whitespace between its tokens
/// (never inside its strings), or `None`.
fn literal_spaced_end(bytes: &[u8], mut pos: usize, literal: &[u8]) -> Option<usize> {
    let mut in_string = false;
    for &want in literal {
        if !in_string {
            if let Some(b' ' | b'\n' | b'\r' | b'\t') = bytes.get(pos) {
                pos = fast::skip_ws_run(bytes, pos);
            }
        }
        if bytes.get(pos) != Some(&want) {
            return None;
        }
        pos += 1;
        if want == b'"' {
            in_string = !in_string;
        }
    }
    Some(pos)
}

/// A cursor over a document's tokens (see [`read_tokens`]).
pub struct Tokens<'a, 'c> {
    parser: fast::Parser<'a, 'c, Tree<'a>>,
    /// Where each literal read with whitespace was last found ([`Tokens::literal_spaced`]),
    /// by the literal's length: the literals the reader spells differ in it.
    spaced: [SpacedForm; SPACED_FORMS],
}

/// Slots of [`Tokens`]' table of spaced forms.
const SPACED_FORMS: usize = 16;

/// The bytes of the document, `at..at + width`, that matched the `len`-byte literal at
/// address `literal` with whitespace between its tokens.
#[derive(Clone, Copy, Default)]
struct SpacedForm {
    literal: usize,
    len: usize,
    at: usize,
    width: usize,
}

impl<'a> Tokens<'a, '_> {
    /// The next byte past whitespace, not read.
    #[inline(always)]
    pub fn peek(&mut self) -> Option<u8> {
        self.parser.skip_ws();
        self.parser.peek()
    }

    /// Reads `byte` when it comes next (past whitespace).
    #[inline(always)]
    pub fn eat(&mut self, byte: u8) -> bool {
        let found = self.peek() == Some(byte);
        if found {
            self.parser.pos += 1;
        }
        found
    }

    /// Where the cursor is, for [`Tokens::rewind`].
    #[inline(always)]
    pub fn mark(&self) -> usize {
        self.parser.pos
    }

    /// Moves the cursor back to `mark` (a reader that tried one spelling and reads another).
    #[inline(always)]
    pub fn rewind(&mut self, mark: usize) {
        self.parser.pos = mark;
    }

    /// Reads `literal` when the bytes at the cursor are exactly it (no whitespace skipped):
    /// a fixed run of punctuation and keys, checked at once.
    #[inline(always)]
    pub fn literal(&mut self, literal: &[u8]) -> bool {
        let rest = self.parser.bytes.get(self.parser.pos..).unwrap_or_default();
        let found = rest.starts_with(literal);
        if found {
            self.parser.pos += literal.len();
        }
        found
    }

    /// [`Tokens::literal`] with whitespace allowed between its tokens (`{ "key": "` for
    /// `{"key":"`): each byte of a key is still matched exactly, whitespace is skipped only
    /// outside the literal's strings; nothing is read when it does not match.
    ///
    /// Why: pretty-printed bodies (indented JSON, as most captured files are) spell the
    /// same keys and punctuation as exporters' compact bodies with whitespace between; read
    /// so, they take the same fixed-bytes reads as a compact body rather than the generic
    /// member-by-member read.
    #[inline]
    pub fn literal_spaced(&mut self, literal: &'static [u8]) -> bool {
        if self.literal(literal) {
            return true;
        }
        // The bytes this literal matched last time, compared at once.
        //
        // Why: an indented body spells a literal the same way wherever it stands at the
        // same depth (the attributes of a list, one after another), so a literal is nearly
        // always its last spelling again. Token by token, skipping the whitespace before
        // each, the literals were ~350 M instructions of decoding the pretty-printed
        // data-2000.
        let seen = self.spaced[literal.len() % SPACED_FORMS];
        // A `'static` literal's address and length name its bytes for the whole run.
        if seen.literal == literal.as_ptr() as usize && seen.len == literal.len() {
            let bytes = self.parser.bytes;
            let pos = self.parser.pos;
            if let (Some(form), Some(rest)) =
                (bytes.get(seen.at..seen.at + seen.width), bytes.get(pos..))
            {
                if rest.starts_with(form) {
                    self.parser.pos = pos + seen.width;
                    return true;
                }
            }
        }
        self.literal_spaced_slow(literal)
    }

    /// [`Tokens::literal_spaced`] token by token, remembered when found.
    #[inline(never)]
    fn literal_spaced_slow(&mut self, literal: &'static [u8]) -> bool {
        let pos = self.parser.pos;
        let Some(end) = literal_spaced_end(self.parser.bytes, pos, literal) else {
            return false;
        };
        self.spaced[literal.len() % SPACED_FORMS] = SpacedForm {
            literal: literal.as_ptr() as usize,
            len: literal.len(),
            at: pos,
            width: end - pos,
        };
        self.parser.pos = end;
        true
    }

    /// The byte at the cursor (no whitespace skipped), not read.
    #[inline(always)]
    pub fn next_byte(&self) -> Option<u8> {
        self.parser.peek()
    }

    /// The byte `ahead` bytes past the cursor (no whitespace skipped), not read.
    #[inline(always)]
    pub fn byte_ahead(&self, ahead: usize) -> Option<u8> {
        self.parser.bytes.get(self.parser.pos + ahead).copied()
    }

    /// The rest of a string whose opening quote was just read.
    #[inline(always)]
    pub fn string_rest(&mut self) -> Option<&'a str> {
        self.parser.string(
            <Tree<'a> as Build<'a>>::borrowed_key,
            <Tree<'a> as Build<'a>>::key,
        )
    }

    /// The rest of a string whose opening quote was just read, as a [`Text`] of `texts`.
    ///
    /// Why not [`Tokens::string_rest`] and then [`Interner::text`]: a string with escapes
    /// (JSON text inside an attribute value, most of a collector's bytes) would be copied
    /// from the unescaping buffer into the arena and from there into its `Text`; one longer
    /// than [`Interner::MAX_SHARED`] is never shared, so it is made from the buffer at once
    /// (data-2000's 57,000 such values, 41 MB, were one copy more).
    #[inline(always)]
    pub fn string_text(&mut self, texts: &mut Interner<'a>) -> Option<Text> {
        /// A string as it was read: borrowed (the input's, or the arena's for a short one
        /// with escapes), or already a `Text`.
        enum Read<'a> {
            Borrowed(&'a str),
            Made(Text),
        }
        let read = self.parser.string(
            |_, plain: &'a str| Ok(Read::Borrowed(plain)),
            |tree: &Tree<'a>, unescaped: &str| {
                Ok(if unescaped.len() > Interner::MAX_SHARED {
                    Read::Made(Text::from(unescaped))
                } else {
                    Read::Borrowed(tree.key(unescaped)?)
                })
            },
        )?;
        Some(match read {
            Read::Borrowed(text) => texts.text(text),
            Read::Made(text) => text,
        })
    }

    /// A string (unescaped into the arena when it holds an escape).
    #[inline(always)]
    pub fn string(&mut self) -> Option<&'a str> {
        if !self.eat(b'"') {
            return None;
        }
        self.string_rest()
    }

    /// Any value as a tree, `depth` being the containers around it (the fast parser's
    /// bound counts from there).
    #[inline(always)]
    pub fn value(&mut self, depth: usize) -> Option<J<'a>> {
        self.parser.skip_ws();
        self.parser.value(depth)
    }

    /// Whether only whitespace is left.
    pub fn at_end(&mut self) -> bool {
        self.parser.skip_ws();
        self.parser.pos == self.parser.bytes.len()
    }

    /// Reads an object, calling `member` with each key to read its value (a repeated key
    /// is handed over again: what it means is the caller's to say).
    #[inline(always)]
    pub fn members(
        &mut self,
        mut member: impl FnMut(&mut Self, &'a str) -> Option<()>,
    ) -> Option<()> {
        if !self.eat(b'{') {
            return None;
        }
        if self.eat(b'}') {
            return Some(());
        }
        loop {
            let key = self.string()?;
            if !self.eat(b':') {
                return None;
            }
            member(self, key)?;
            if !self.eat(b',') {
                return self.eat(b'}').then_some(());
            }
        }
    }

    /// Reads an array, calling `element` to read each element.
    #[inline(always)]
    pub fn elements(&mut self, mut element: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        if !self.eat(b'[') {
            return None;
        }
        if self.eat(b']') {
            return Some(());
        }
        loop {
            element(self)?;
            if !self.eat(b',') {
                return self.eat(b']').then_some(());
            }
        }
    }
}

/// [`parse`] for text already known to be UTF-8 (not validated again), with whether the
/// tree holds a float `-0.0`: serde_json reads the integer `-0` as one, which readers that
/// keep Python's number kinds must tell from a written `-0.0`.
pub fn parse_text<'a>(text: &'a str, bump: &'a Bump) -> Result<(J<'a>, bool), ParseError> {
    build_text(text, &Tree { bump })
}

/// `text` parsed by `value/fast.rs`, or by serde_json when that one gives up (then the
/// result or error is serde_json's). What the fast parser noticed counts only when it
/// finished: a document it gave up on is read again from the start.
fn parse_str<'a>(text: &'a str, flags: &Flags, bump: &'a Bump) -> Result<J<'a>, ParseError> {
    let noticed = Flags::default();
    if let Some(value) = fast::parse(text, &Tree { bump }, &noticed) {
        flags.negative_zero.set(noticed.negative_zero.get());
        return Ok(value);
    }
    parse_from(
        serde_json::Deserializer::from_str(text),
        text.as_bytes(),
        flags,
        &Tree { bump },
    )
}

/// [`parse_text`] into any [`Build`]: the same readers (`value/fast.rs`, then serde_json
/// when that one gives up; nesting bound, trailing text refused, the `-0.0` notice), the
/// values made by `build` as serde_json reads them. Well-formed text is read once, straight
/// into `build`'s values.
pub fn build_text<'a, B: Build<'a>>(
    text: &'a str,
    build: &B,
) -> Result<(B::Value, bool), ParseError> {
    let noticed = Flags::default();
    if let Some(value) = fast::parse(text, build, &noticed) {
        return Ok((value, noticed.negative_zero.get()));
    }
    let flags = Flags::default();
    let data = text.as_bytes();
    let parsed = parse_from(
        serde_json::Deserializer::from_str(text),
        data,
        &flags,
        build,
    )?;
    Ok((parsed, flags.negative_zero.get()))
}

/// A builder refused a value (it keeps its own error); the parse stops there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused;

/// What a parse makes of the document, value by value: the tree [`J`] in an arena
/// ([`Tree`]), or a host's own objects (the binding's `json` parser makes its Python objects
/// here, with no tree between). Both readers (`value/fast.rs` and serde_json through `Seed`)
/// build through it, so the nesting bound, the trailing-text refusal and the `-0.0` notice
/// hold for every output. A repeated key is handed to `insert` (or to `object`) again: the
/// builder keeps Python `dict` semantics (its first position, its last value).
pub trait Build<'a> {
    type Value;
    type Key;
    type Seq;
    type Map;
    fn null(&self) -> Result<Self::Value, Refused>;
    fn bool(&self, v: bool) -> Result<Self::Value, Refused>;
    fn u64(&self, v: u64) -> Result<Self::Value, Refused>;
    fn i64(&self, v: i64) -> Result<Self::Value, Refused>;
    fn f64(&self, v: f64) -> Result<Self::Value, Refused>;
    /// A string borrowed from the input (it held no escapes).
    fn borrowed_str(&self, v: &'a str) -> Result<Self::Value, Refused>;
    /// A string serde_json unescaped into its own buffer, valid during the call only.
    fn str(&self, v: &str) -> Result<Self::Value, Refused>;
    fn borrowed_key(&self, v: &'a str) -> Result<Self::Key, Refused>;
    fn key(&self, v: &str) -> Result<Self::Key, Refused>;
    fn seq(&self) -> Self::Seq;
    fn push(&self, seq: &mut Self::Seq, item: Self::Value);
    fn end_seq(&self, seq: Self::Seq) -> Result<Self::Value, Refused>;
    fn map(&self) -> Self::Map;
    fn insert(
        &self,
        map: &mut Self::Map,
        key: Self::Key,
        value: Self::Value,
    ) -> Result<(), Refused>;
    fn end_map(&self, map: Self::Map) -> Result<Self::Value, Refused>;
    /// An array of `items[start..]`, all read, which it takes off the end of `items` (the
    /// fast reader's stack, shared by the arrays being read): by default through `seq`,
    /// `push` and `end_seq`.
    fn array(&self, items: &mut Vec<Self::Value>, start: usize) -> Result<Self::Value, Refused> {
        let mut seq = self.seq();
        for item in items.drain(start..) {
            self.push(&mut seq, item);
        }
        self.end_seq(seq)
    }
    /// An object of `pairs[start..]`, all read (a key may repeat, as for `insert`), which it
    /// takes off the end of `pairs`: by default through `map`, `insert` and `end_map`.
    fn object(
        &self,
        pairs: &mut Vec<(Self::Key, Self::Value)>,
        start: usize,
    ) -> Result<Self::Value, Refused> {
        let mut map = self.map();
        for (key, value) in pairs.drain(start..) {
            self.insert(&mut map, key, value)?;
        }
        self.end_map(map)
    }
}

/// The tree [`J`] in `bump`: strings without escapes borrowed from the input, objects
/// with their repeated keys folded (`Obj::from_pairs`).
struct Tree<'a> {
    bump: &'a Bump,
}

impl<'a> Build<'a> for Tree<'a> {
    type Value = J<'a>;
    type Key = &'a str;
    type Seq = BumpVec<'a, J<'a>>;
    type Map = BumpVec<'a, (&'a str, J<'a>)>;

    #[inline(always)]
    fn null(&self) -> Result<J<'a>, Refused> {
        Ok(J::Null)
    }

    #[inline(always)]
    fn bool(&self, v: bool) -> Result<J<'a>, Refused> {
        Ok(J::Bool(v))
    }

    #[inline(always)]
    fn u64(&self, v: u64) -> Result<J<'a>, Refused> {
        Ok(J::U64(v))
    }

    #[inline(always)]
    fn i64(&self, v: i64) -> Result<J<'a>, Refused> {
        Ok(J::I64(v))
    }

    #[inline(always)]
    fn f64(&self, v: f64) -> Result<J<'a>, Refused> {
        Ok(J::F64(v))
    }

    #[inline(always)]
    fn borrowed_str(&self, v: &'a str) -> Result<J<'a>, Refused> {
        Ok(J::Str(v))
    }

    #[inline(always)]
    fn str(&self, v: &str) -> Result<J<'a>, Refused> {
        Ok(J::Str(self.bump.alloc_str(v)))
    }

    #[inline(always)]
    fn borrowed_key(&self, v: &'a str) -> Result<&'a str, Refused> {
        Ok(v)
    }

    #[inline(always)]
    fn key(&self, v: &str) -> Result<&'a str, Refused> {
        Ok(self.bump.alloc_str(v))
    }

    fn seq(&self) -> Self::Seq {
        BumpVec::new_in(self.bump)
    }

    fn push(&self, seq: &mut Self::Seq, item: J<'a>) {
        seq.push(item);
    }

    fn end_seq(&self, seq: Self::Seq) -> Result<J<'a>, Refused> {
        Ok(J::Arr(seq.into_bump_slice()))
    }

    fn map(&self) -> Self::Map {
        BumpVec::new_in(self.bump)
    }

    fn insert(&self, map: &mut Self::Map, key: &'a str, value: J<'a>) -> Result<(), Refused> {
        map.push((key, value));
        Ok(())
    }

    fn end_map(&self, map: Self::Map) -> Result<J<'a>, Refused> {
        Ok(J::Obj(Obj::from_pairs(self.bump, map)))
    }

    /// Copied into the arena once, at its final size.
    #[inline(always)]
    fn array(&self, items: &mut Vec<J<'a>>, start: usize) -> Result<J<'a>, Refused> {
        let slice = self.bump.alloc_slice_copy(&items[start..]);
        items.truncate(start);
        Ok(J::Arr(slice))
    }

    /// Copied into the arena once, at its final size, repeated keys folded.
    #[inline(always)]
    fn object(&self, pairs: &mut Vec<(&'a str, J<'a>)>, start: usize) -> Result<J<'a>, Refused> {
        let obj = Obj::from_slice(self.bump, &pairs[start..]);
        pairs.truncate(start);
        Ok(J::Obj(obj))
    }
}

/// What the seeds noticed while parsing.
#[derive(Default)]
struct Flags {
    /// Nesting passed [`MAX_JSON_DEPTH`] (the error is then that one).
    too_deep: Cell<bool>,
    /// A float `-0.0` was read (or an integer `-0`, which serde_json reads as one).
    negative_zero: Cell<bool>,
}

fn parse_from<'a, R: serde_json::de::Read<'a>, B: Build<'a>>(
    mut de: serde_json::Deserializer<R>,
    data: &[u8],
    flags: &Flags,
    build: &B,
) -> Result<B::Value, ParseError> {
    // The depth is bounded by `Seed` below, at a limit above serde_json's 128.
    de.disable_recursion_limit();
    let parsed = Seed {
        depth: 0,
        flags,
        build,
    }
    .deserialize(&mut de)
    .and_then(|value| de.end().map(|()| value));
    parsed.map_err(|err| {
        if flags.too_deep.get() {
            ParseError::TooDeep(too_deep_message(data))
        } else {
            syntax_error(&err, data)
        }
    })
}

fn syntax_error(err: &serde_json::Error, data: &[u8]) -> ParseError {
    let text = err.to_string();
    let suffix = format!(" at line {} column {}", err.line(), err.column());
    let message = text.strip_suffix(&suffix).unwrap_or(&text).to_string();
    let (mut line, mut column) = (err.line(), err.column());
    if column == 0 && line > 1 {
        // serde_json stands just past a newline (a raw newline inside a string): name the
        // newline itself, at the end of the line before, as a 1-based column.
        line -= 1;
        let text_line = data
            .split(|&b| b == b'\n')
            .nth(line - 1)
            .unwrap_or_default();
        column = String::from_utf8_lossy(text_line).chars().count() + 1;
    }
    ParseError::Syntax {
        line,
        column,
        message,
    }
}

/// Names the byte offset where nesting passed [`MAX_REPORTED_DEPTH`], counting brackets
/// outside strings (an iterative scan: it runs exactly when recursion stopped).
pub fn too_deep_message(data: &[u8]) -> String {
    let mut depth = 0usize;
    let mut deepest = 0usize;
    let mut i = 0;
    while i < data.len() {
        match data[i] {
            b'"' => {
                // Skip a complete string; an unterminated one is not a string token.
                let mut j = i + 1;
                let mut closed = false;
                while j < data.len() {
                    match data[j] {
                        b'\\' => j += 2,
                        b'"' => {
                            closed = true;
                            break;
                        }
                        _ => j += 1,
                    }
                }
                if closed {
                    i = j + 1;
                    continue;
                }
            }
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
                if depth > MAX_REPORTED_DEPTH {
                    return format!(
                        "JSON nests more than {MAX_REPORTED_DEPTH} levels deep (at byte {i})"
                    );
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    format!("JSON nests too deeply to decode ({deepest} levels)")
}

/// Deserializes one value `depth` containers deep through `build`.
struct Seed<'c, B> {
    depth: usize,
    flags: &'c Flags,
    build: &'c B,
}

impl<B> Clone for Seed<'_, B> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<B> Copy for Seed<'_, B> {}

impl<B> Seed<'_, B> {
    fn nested<E: de::Error>(self) -> Result<Self, E> {
        if self.depth >= MAX_JSON_DEPTH {
            self.flags.too_deep.set(true);
            return Err(E::custom("nesting too deep"));
        }
        Ok(Seed {
            depth: self.depth + 1,
            ..self
        })
    }
}

/// A builder's refusal as serde's error (the builder holds the reason).
fn refused<E: de::Error>(_: Refused) -> E {
    E::custom("the value could not be built")
}

impl<'a, B: Build<'a>> DeserializeSeed<'a> for Seed<'_, B> {
    type Value = B::Value;

    fn deserialize<D: Deserializer<'a>>(self, deserializer: D) -> Result<B::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'a, B: Build<'a>> Visitor<'a> for Seed<'_, B> {
    type Value = B::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<B::Value, E> {
        self.build.null().map_err(refused)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<B::Value, E> {
        self.build.bool(v).map_err(refused)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<B::Value, E> {
        self.build.u64(v).map_err(refused)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<B::Value, E> {
        self.build.i64(v).map_err(refused)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<B::Value, E> {
        if v == 0.0 && v.is_sign_negative() {
            self.flags.negative_zero.set(true);
        }
        self.build.f64(v).map_err(refused)
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'a str) -> Result<B::Value, E> {
        self.build.borrowed_str(v).map_err(refused)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<B::Value, E> {
        self.build.str(v).map_err(refused)
    }

    fn visit_seq<A: SeqAccess<'a>>(self, mut seq: A) -> Result<B::Value, A::Error> {
        let inner = self.nested()?;
        let mut items = self.build.seq();
        while let Some(item) = seq.next_element_seed(inner)? {
            self.build.push(&mut items, item);
        }
        self.build.end_seq(items).map_err(refused)
    }

    fn visit_map<A: MapAccess<'a>>(self, mut map: A) -> Result<B::Value, A::Error> {
        let inner = self.nested()?;
        let mut pairs = self.build.map();
        while let Some(key) = map.next_key_seed(KeySeed(self.build))? {
            let value = map.next_value_seed(inner)?;
            self.build.insert(&mut pairs, key, value).map_err(refused)?;
        }
        self.build.end_map(pairs).map_err(refused)
    }
}

/// Object keys, borrowed from the input when they hold no escapes.
struct KeySeed<'c, B>(&'c B);

impl<'a, B: Build<'a>> DeserializeSeed<'a> for KeySeed<'_, B> {
    type Value = B::Key;

    fn deserialize<D: Deserializer<'a>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'a, B: Build<'a>> Visitor<'a> for KeySeed<'_, B> {
    type Value = B::Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'a str) -> Result<Self::Value, E> {
        self.0.borrowed_key(v).map_err(refused)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        self.0.key(v).map_err(refused)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses into an arena that lives as long as the test process.
    fn parse(data: &[u8]) -> Result<J<'_>, ParseError> {
        super::parse(data, Box::leak(Box::new(Bump::new())))
    }

    fn nested(levels: usize) -> String {
        "[".repeat(levels) + &"]".repeat(levels)
    }

    #[test]
    fn repeated_keys_keep_first_position_and_last_value() {
        let J::Obj(obj) = parse(br#"{"a":1,"a":2}"#).unwrap() else {
            panic!("object expected")
        };
        assert_eq!(obj.entries(), &[("a", J::U64(2))]);
        let J::Obj(obj) = parse(br#"{"a":1,"b":2,"a":3}"#).unwrap() else {
            panic!("object expected")
        };
        let keys: Vec<_> = obj.iter().map(|(k, _)| k.to_string()).collect();
        assert_eq!(keys, ["a", "b"]);
        assert_eq!(obj.get("a"), Some(&J::U64(3)));
        // Keys alike in length and last byte are still told apart, and matched when equal.
        let J::Obj(obj) = parse(br#"{"xa":1,"ya":2,"xa":3}"#).unwrap() else {
            panic!("object expected")
        };
        assert_eq!(obj.entries(), &[("xa", J::U64(3)), ("ya", J::U64(2))]);
        let many: String = (0..40).map(|i| format!("\"k{}\":{i},", i % 20)).collect();
        let text = format!("{{{}\"z\":0}}", many);
        let J::Obj(obj) = parse(text.as_bytes()).unwrap() else {
            panic!("object expected")
        };
        assert_eq!(obj.len(), 21);
        assert_eq!(obj.get("k3"), Some(&J::U64(23)));
    }

    #[test]
    fn repeated_keys_are_found_at_every_pair_of_places() {
        // Keys alike in length and last byte (one tag), and keys of other tags, at every
        // pair of places of objects of up to sixteen keys; a third copy names the first.
        let alike: Vec<String> = (0..16)
            .map(|i| format!("k{}x", char::from(b'a' + i)))
            .collect();
        let other: Vec<String> = (0..16usize).map(|i| "y".repeat(i + 1)).collect();
        for names in [&alike, &other] {
            for n in 2..=16 {
                let distinct: Vec<(&str, ())> =
                    names[..n].iter().map(|k| (k.as_str(), ())).collect();
                assert!(duplicate_keys(&distinct).is_empty());
                for i in 0..n {
                    for j in i + 1..n {
                        let mut pairs = distinct.clone();
                        pairs[j].0 = pairs[i].0;
                        assert_eq!(duplicate_keys(&pairs), vec![(j, i)], "{n} {i} {j}");
                        if let Some(k) = (j + 1..n).next() {
                            pairs[k].0 = pairs[i].0;
                            assert_eq!(duplicate_keys(&pairs), vec![(j, i), (k, i)]);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn strings_without_escapes_borrow_from_the_input() {
        let input = br#"["plain","esc\"aped"]"#;
        let J::Arr(items) = parse(input).unwrap() else {
            panic!("array expected")
        };
        let inside = |s: &str| input.as_ptr_range().contains(&s.as_ptr());
        assert!(matches!(items[0], J::Str(s) if s == "plain" && inside(s)));
        assert!(matches!(items[1], J::Str(s) if s == "esc\"aped" && !inside(s)));
    }

    #[test]
    fn nesting_to_the_limit_parses_and_past_it_is_located() {
        assert!(parse(nested(MAX_JSON_DEPTH).as_bytes()).is_ok());
        assert!(matches!(
            parse(nested(MAX_JSON_DEPTH + 1).as_bytes()),
            Err(ParseError::TooDeep(_))
        ));
        let deep = format!("  {}", nested(10_000));
        assert_eq!(
            parse(deep.as_bytes()),
            Err(ParseError::TooDeep(
                "JSON nests more than 256 levels deep (at byte 258)".into()
            ))
        );
    }

    #[test]
    fn a_spaced_literal_is_read_as_token_by_token_whether_or_not_spelled_as_last_time() {
        // Each text holds the literal spelled some way, then a byte that is not its: read
        // one after another, some spellings are the last one's again (read by comparing the
        // remembered bytes), others new, others not the literal at all (nothing read).
        const KEY: &[u8] = b"{\"key\":\"";
        const END: &[u8] = b"}}";
        let spellings: [(&[u8], &str); 9] = [
            (KEY, "{\n  \"key\": \"x"),
            (KEY, "{\n  \"key\": \"x"),
            (KEY, "{\n    \"key\" : \"x"),
            (KEY, "{\n  \"key\": \"x"),
            (KEY, "{\n  \"kex\": \"x"),
            (KEY, "{\n  \"key\":  \"x"),
            (KEY, "{\n  \"key\":\t\"x"),
            (END, "\n}\n}x"),
            (END, "\n}\n x"),
        ];
        let text: String = spellings.iter().map(|(_, s)| *s).collect();
        let bump = Bump::new();
        read_tokens(&text, &bump, |tokens| {
            let mut at = 0;
            for (literal, spelled) in spellings {
                tokens.rewind(at);
                let expect = literal_spaced_end(text.as_bytes(), at, literal);
                assert_eq!(
                    tokens.literal_spaced(literal),
                    expect.is_some(),
                    "{spelled:?}"
                );
                assert_eq!(tokens.mark(), expect.unwrap_or(at), "{spelled:?}");
                if let Some(end) = expect {
                    assert_eq!(tokens.next_byte(), Some(b'x'), "{spelled:?}");
                    assert!(end < at + spelled.len());
                }
                at += spelled.len();
            }
        });
    }

    #[test]
    fn whitespace_runs_of_any_length_and_kind_are_skipped_to_the_next_token() {
        for run in [
            "",
            " ",
            "\n",
            "\r\n\t",
            "        ",
            "         ",
            "\n                   \t  ",
        ] {
            for after in ["", "x", "\"", "{ }"] {
                let text = format!("{run}{after}");
                let end = super::fast::skip_ws_run(text.as_bytes(), 0);
                assert_eq!(end, run.len(), "{text:?}");
            }
        }
        // A byte under a space (a control character) is not whitespace.
        assert_eq!(super::fast::skip_ws_run(b"         \x0b  ", 0), 9);
    }

    #[test]
    fn brackets_inside_strings_do_not_count_toward_depth() {
        let text = format!("[\"{}\"]", "[".repeat(1000));
        assert!(parse(text.as_bytes()).is_ok());
    }

    #[test]
    fn the_depth_limit_needs_little_stack() {
        // A thread with a small stack still parses a document at the limit: the recursion
        // per level is bounded (under 512 bytes a level in a release build; unoptimised
        // frames are several times larger). The built extension is held to the same budget
        // by tests/decode/test_json_depth_stack.py.
        let stack = if cfg!(debug_assertions) {
            16 << 20
        } else {
            512 << 10
        };
        let text = nested(MAX_JSON_DEPTH);
        let ok = std::thread::Builder::new()
            .stack_size(stack)
            .spawn(move || parse(text.as_bytes()).is_ok())
            .unwrap()
            .join()
            .unwrap();
        assert!(ok);
    }

    #[test]
    fn syntax_errors_give_line_column_and_the_reason_without_the_location() {
        let Err(ParseError::Syntax {
            line,
            column,
            message,
        }) = parse(b"{\"a\": [\n  {,}]}")
        else {
            panic!("syntax error expected")
        };
        assert_eq!((line, column), (2, 4));
        assert!(!message.contains("line"), "{message}");
        assert!(matches!(
            parse(b"{} x"),
            Err(ParseError::Syntax { line: 1, .. })
        ));
        assert!(matches!(parse(b""), Err(ParseError::Syntax { .. })));
        assert!(matches!(parse(b"1e400"), Err(ParseError::Syntax { .. })));
        assert!(matches!(
            parse(b"\"\\ud800\""),
            Err(ParseError::Syntax { .. })
        ));
        assert!(matches!(parse(b"\"\xff\""), Err(ParseError::Syntax { .. })));
        // A raw newline inside a string is named where it stands, not at column 0 after it.
        assert!(matches!(
            parse(b"{\n  \"a\": \"x\ny\"}"),
            Err(ParseError::Syntax {
                line: 2,
                column: 10,
                ..
            })
        ));
    }

    #[test]
    fn bytes_that_are_not_utf8_are_refused_where_they_stand() {
        // The whole-body UTF-8 check falls back to reading bytes: the error still names
        // the string's place, and UTF-8 elsewhere in the body reads as text.
        let body = "{\"a\": \"é\",\n \"b\": \"x\u{7f}y\", \"c\": \"";
        let mut data = body.as_bytes().to_vec();
        data.extend_from_slice(b"\xffz\"}");
        let Err(ParseError::Syntax {
            line,
            column,
            message,
        }) = parse(&data)
        else {
            panic!("syntax error expected")
        };
        assert_eq!(
            (line, column, message.as_str()),
            (2, 20, "invalid unicode code point")
        );
        let text = body.replace(", \"c\": \"", "}");
        let J::Obj(obj) = parse(text.as_bytes()).unwrap() else {
            panic!("object expected")
        };
        assert_eq!(obj.get("a"), Some(&J::Str("é")));
        assert_eq!(obj.get("b"), Some(&J::Str("x\u{7f}y")));
    }

    #[test]
    fn numbers_keep_their_kind() {
        assert_eq!(parse(b"7").unwrap(), J::U64(7));
        assert_eq!(parse(b"-7").unwrap(), J::I64(-7));
        assert_eq!(parse(b"7.0").unwrap(), J::F64(7.0));
        assert_eq!(
            parse(b"9007199254740993").unwrap(),
            J::U64(9007199254740993)
        );
        assert!(matches!(
            parse(b"99999999999999999999999").unwrap(),
            J::F64(_)
        ));
    }
}
