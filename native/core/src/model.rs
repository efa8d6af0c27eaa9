//! Decoded OTLP records: what every decoder produces and every later stage reads.
//!
//! They mirror the Python records of `otel_oracles.model.span` field for field, so turning
//! one into the other is a copy, never an interpretation. Ids are kept as bytes (hex only
//! when handed to Python); a span's resource and scope are shared by every span of its
//! `ResourceSpans`/`ScopeSpans`, as on the wire. Attribute keys and string values are
//! [`Text`]s, the short ones allocated once per body by the decoder's [`Interner`].

use crate::hashing::{FastMap, FastMapExt, FastSet};
use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// An attribute key or string value: immutable text shared by reference count.
///
/// Why not `String`: a decoded batch holds one per attribute key and string value, and
/// most repeat (the same few dozen keys on every span, model names, roles, operation
/// names). Built through one body's [`Interner`], each distinct short text is allocated
/// once per body and every repeat is a reference-count increment; cloning a record's
/// attributes (own-telemetry filtering, the Python layer's copies) copies no text.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Text(Arc<str>);

impl Text {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether both are the same allocation (one interned text), not only equal.
    pub fn ptr_eq(a: &Text, b: &Text) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

impl Deref for Text {
    type Target = str;

    #[inline]
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Text {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Self {
        Text(Arc::from(text))
    }
}

impl From<String> for Text {
    fn from(text: String) -> Self {
        Text(Arc::from(text))
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

/// The [`Text`]s of one request body being decoded: each distinct short text (keys, and
/// values up to [`Interner::MAX_SHARED`] bytes) is allocated once and shared by every
/// record of the body. Per body, not per process, so what a sender can make it hold is
/// bounded by its body and freed with its records.
///
/// In front of the map, a small table of the texts met last by a slot of their length and
/// end words: the same few dozen keys and values come back on every span, and a hit there
/// is one comparison where the map hashed the whole text (`foldhash`'s long-input path
/// for keys like `gen_ai.usage.input_tokens`) and probed its groups, ~100 instructions a
/// text. The table holds the map's own `Text`s, so what a text is shared with is the same.
///
/// The table grows with the body, from [`Interner::MIN_SLOTS`] to [`Interner::MAX_SLOTS`]:
/// a collector's body of a megabyte holds some 670 distinct short texts, which thrashed
/// 128 slots (a quarter of the repeats went to the map, ~170 instructions each), while a
/// small body should not clear a large table.
pub struct Interner<'a> {
    seen: FastMap<&'a str, Text>,
    recent: Vec<Option<Recent>>,
    /// `64 - log2(recent.len())`: the mixed hash shifted by it is a slot.
    shift: u32,
}

impl Default for Interner<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'a> Interner<'a> {
    /// Longer texts (prompts, messages, tool output) rarely repeat within a body: they are
    /// allocated each without being hashed.
    pub const MAX_SHARED: usize = 64;

    /// The fewest slots of the front table (a power of two).
    pub const MIN_SLOTS: usize = 128;
    /// The most slots of the front table (a power of two): 32 KiB.
    pub const MAX_SLOTS: usize = 1024;
    /// Body bytes per slot when sizing the front table: one slot per 512 bytes, so the
    /// table is cleared for about a sixtieth of the cost of reading the body.
    const BYTES_PER_SLOT: usize = 512;

    /// An interner for a body of unknown size (the smallest table).
    pub fn new() -> Self {
        Self::with_slots(Self::MIN_SLOTS)
    }

    /// An interner for a body of `len` bytes, its front table sized to it.
    pub fn for_body(len: usize) -> Self {
        let slots = (len / Self::BYTES_PER_SLOT)
            .next_power_of_two()
            .clamp(Self::MIN_SLOTS, Self::MAX_SLOTS);
        Self::with_slots(slots)
    }

    fn with_slots(slots: usize) -> Self {
        debug_assert!(slots.is_power_of_two());
        let mut recent = Vec::new();
        recent.resize_with(slots, || None);
        Interner {
            seen: FastMap::with_capacity(64),
            recent,
            shift: 64 - slots.trailing_zeros(),
        }
    }

    /// Slots of the front table.
    pub fn slots(&self) -> usize {
        self.recent.len()
    }

    /// `text` as a [`Text`], shared with its earlier occurrences in this body.
    pub fn text(&mut self, text: &'a str) -> Text {
        let bytes = text.as_bytes();
        if bytes.len() > Self::MAX_SHARED {
            return long_text(text);
        }
        let ends = Ends::of(bytes);
        let slot = ends.slot(bytes.len(), self.shift);
        if let Some(Some(met)) = self.recent.get(slot) {
            if met.ends == ends && same_middle(met.shared.as_bytes(), bytes) {
                return met.shared.clone();
            }
        }
        self.text_from_map(text, ends, slot)
    }

    /// [`Interner::text`] past the front table: from the map (made there the first time)
    /// and put in the table's slot. Apart so that a hit, nine texts in ten, saves no
    /// registers for it.
    #[inline(never)]
    fn text_from_map(&mut self, text: &'a str, ends: Ends, slot: usize) -> Text {
        let shared = self
            .seen
            .entry(text)
            .or_insert_with(|| Text::from(text))
            .clone();
        if let Some(entry) = self.recent.get_mut(slot) {
            *entry = Some(Recent {
                ends,
                shared: shared.clone(),
            });
        }
        shared
    }
}

/// A text longer than [`Interner::MAX_SHARED`], allocated as it is. Apart so that a short
/// text, nearly every one, saves no registers for the allocation: a front-table hit lost
/// most of its register saves and restores (`Interner::text` 40.8 M -> 32.8 M on
/// data-2000's OTLP/JSON decode; 42.7 M -> 35.0 M with `long_text` on its protobuf).
#[inline(never)]
fn long_text(text: &str) -> Text {
    Text::from(text)
}

/// A slot of [`Interner`]'s front table: a text and its [`Ends`], kept so that a hit
/// compares two words in registers with two in the entry rather than loading both texts'
/// (a text of up to sixteen bytes is then wholly compared). With the map's path apart
/// ([`Interner::text_from_map`]): `Interner::text` 58.8 M -> 50.1 M on data-2000's
/// OTLP/JSON decode, 61.1 M -> 52.0 M on its protobuf (696 k texts, nine in ten hits).
struct Recent {
    ends: Ends,
    shared: Text,
}

/// The first and last (up to) eight bytes of a text of at most [`Interner::MAX_SHARED`]
/// bytes as two words: eight-byte words from eight bytes on, four-byte ones from four,
/// the bytes themselves below. Two texts of one length up to sixteen bytes are the same
/// exactly when their ends are; longer ones when their middles are too ([`same_middle`]).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Ends {
    first: u64,
    last: u64,
}

impl Ends {
    #[inline(always)]
    fn of(bytes: &[u8]) -> Self {
        let n = bytes.len();
        let (first, last) = if n >= 8 {
            let (mut first, mut last) = ([0u8; 8], [0u8; 8]);
            first.copy_from_slice(&bytes[..8]);
            last.copy_from_slice(&bytes[n - 8..]);
            (u64::from_le_bytes(first), u64::from_le_bytes(last))
        } else if n >= 4 {
            let (mut first, mut last) = ([0u8; 4], [0u8; 4]);
            first.copy_from_slice(&bytes[..4]);
            last.copy_from_slice(&bytes[n - 4..]);
            (
                u64::from(u32::from_le_bytes(first)),
                u64::from(u32::from_le_bytes(last)),
            )
        } else {
            let byte = |at: usize| bytes.get(at).copied().map_or(0, u64::from);
            (byte(0) | byte(1) << 8 | byte(2) << 16, 0)
        };
        Ends { first, last }
    }

    /// The slot in [`Interner`]'s front table of a text of `n` bytes with these ends:
    /// both words and the length mixed, the top bits kept (`64 - shift` of them). A
    /// collision only sends a text to the map.
    #[inline(always)]
    fn slot(self, n: usize, shift: u32) -> usize {
        let mixed =
            (self.first ^ self.last.rotate_left(29) ^ n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (mixed >> shift) as usize
    }
}

/// Whether `a` and `b`, at most [`Interner::MAX_SHARED`] bytes with the same [`Ends`],
/// hold the same bytes: of one length, and the words between their first and last eight
/// bytes compared a word at a time (the last one overlapping the last eight bytes).
///
/// Why not `==`: a call to `memcmp`, about as much as the rest of a front-table hit on
/// the short keys and values it compares (a few dozen bytes).
#[inline(always)]
fn same_middle(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |bytes: &[u8], at: usize| {
        let mut word = [0u8; 8];
        word.copy_from_slice(&bytes[at..at + 8]);
        u64::from_le_bytes(word)
    };
    let mut at = 8;
    while at + 8 < n {
        if word(a, at) != word(b, at) {
            return false;
        }
        at += 8;
    }
    true
}

/// Whether `a` and `b` (at most [`Interner::MAX_SHARED`] bytes) are the same text by the
/// front table's test: their ends, then their middles.
#[cfg(test)]
fn same_short(a: &[u8], b: &[u8]) -> bool {
    Ends::of(a) == Ends::of(b) && same_middle(a, b)
}

/// The slot of `bytes` in a front table of `64 - shift` bits.
#[cfg(test)]
fn recent_slot(bytes: &[u8], shift: u32) -> usize {
    Ends::of(bytes).slot(bytes.len(), shift)
}

/// An OTLP `AnyValue`. `Empty` is a value with none of its fields set (Python `None`).
#[derive(Debug, Clone, Default, PartialEq)]
pub enum AnyValue {
    #[default]
    Empty,
    Str(Text),
    Bool(bool),
    Int(i64),
    Double(f64),
    Bytes(Vec<u8>),
    Array(Vec<AnyValue>),
    KvList(Vec<KeyValue>),
}

/// One attribute. Attribute lists keep wire order and duplicates; the Python side builds a
/// dict from them, so the last duplicate wins there as it always did.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyValue {
    pub key: Text,
    pub value: AnyValue,
}

pub type Attributes = Vec<KeyValue>;

/// The resource of a `ResourceSpans`/`ResourceLogs`, shared by its records.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resource {
    pub attributes: Attributes,
}

/// The instrumentation scope of a `ScopeSpans`/`ScopeLogs`, shared by its records.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scope {
    pub name: String,
    pub version: String,
}

/// A span event. `dropped_attributes_count` is what the sender says it left out of
/// `attributes` (an SDK's attribute limit), as every `dropped_*` count below.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub name: String,
    pub time_ns: u64,
    pub attributes: Attributes,
    pub dropped_attributes_count: u32,
}

/// A span link. Its ids are kept as they came (any length, empty when absent): links are
/// not checked, and a link with a malformed id still names what it pointed at.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    pub trace_id: Vec<u8>,
    pub span_id: Vec<u8>,
    pub attributes: Attributes,
    pub dropped_attributes_count: u32,
}

/// A span that passed the decoder's checks (16-byte trace id, 8-byte span id, a parent id
/// of 8 bytes or none); enums out of range were read as unspecified.
///
/// The `dropped_*` counts are OTLP's: how many attributes, events and links the sender
/// left out of this span (an SDK's span limits), 0 when it said nothing. They are carried,
/// never interpreted, here: a span that lost data still looks whole by its lists alone.
///
/// `flags` is OTLP's `Span.flags` as sent (0 when absent): the W3C trace flags in bits 0-7
/// and, from senders that know it, whether the parent span context was remote (bit 8 says
/// bit 9 is set, bit 9 that the parent is remote). Carried, not interpreted, here.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    pub parent_span_id: Option<[u8; 8]>,
    pub name: String,
    pub kind: u8,
    pub start_ns: u64,
    pub end_ns: u64,
    pub status_code: u8,
    pub status_message: String,
    pub attributes: Attributes,
    pub events: Vec<Event>,
    pub links: Vec<Link>,
    pub resource: Arc<Resource>,
    pub scope: Arc<Scope>,
    pub dropped_attributes_count: u32,
    pub dropped_events_count: u32,
    pub dropped_links_count: u32,
    pub flags: u32,
}

/// A log record. Those with an event name and a span context become events of their span
/// during assembly; ids are `None` when absent. `dropped_attributes_count` as a span's.
#[derive(Debug, Clone, PartialEq)]
pub struct LogRecord {
    pub trace_id: Option<[u8; 16]>,
    pub span_id: Option<[u8; 8]>,
    pub event_name: String,
    pub time_ns: u64,
    pub attributes: Attributes,
    pub body: AnyValue,
    pub severity_number: i32,
    pub resource: Arc<Resource>,
    pub scope: Arc<Scope>,
    pub dropped_attributes_count: u32,
}

/// Lowercase hex of an id, as records carry ids once they leave the core (link ids may
/// have any length).
pub fn hex(id: &[u8]) -> String {
    let mut text = String::with_capacity(2 * id.len());
    for chunk in id.chunks(STACKED_ID) {
        with_hex(chunk, |digits| text.push_str(digits));
    }
    text
}

/// The longest id [`with_hex`] writes on the stack: a trace id's 16 bytes.
const STACKED_ID: usize = 16;

/// `f` of the lowercase hex of `id`, written on the stack when it is a span's or a trace's
/// (at most 16 bytes), four bytes a step ([`hex_word`]): no allocation and no UTF-8 check,
/// where pushing a looked-up digit per nibble into a new `String` cost ~260 instructions a
/// span id. A reader that keeps the text copies it once, into what it keeps (an `Arc<str>`,
/// a Python `str`).
pub fn with_hex<R>(id: &[u8], f: impl FnOnce(&str) -> R) -> R {
    let mut buffer = [0u8; 2 * STACKED_ID];
    let Some(out) = buffer.get_mut(..2 * id.len()) else {
        return f(&hex(id));
    };
    let mut words = id.chunks_exact(4);
    let mut digits = out.chunks_exact_mut(8);
    for (word, eight) in (&mut words).zip(&mut digits) {
        let word = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        eight.copy_from_slice(&hex_word(word).to_be_bytes());
    }
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for (pair, byte) in digits
        .into_remainder()
        .chunks_exact_mut(2)
        .zip(words.remainder())
    {
        pair[0] = DIGITS[usize::from(byte >> 4)];
        pair[1] = DIGITS[usize::from(byte & 0x0f)];
    }
    // SAFETY: every byte of `out` was written above as one of `0-9a-f` (`hex_word`, or
    // `DIGITS`), so it is ASCII and therefore UTF-8.
    f(unsafe { std::str::from_utf8_unchecked(out) })
}

/// The eight lowercase hex digits of `word`, most significant first, as the bytes of a
/// big-endian `u64`: each nibble spread into a byte of its own, then the bytes of those
/// over 9 moved from the digits to the letters, all eight at once.
#[inline]
fn hex_word(word: u32) -> u64 {
    const ONES: u64 = u64::MAX / 255;
    let mut spread = u64::from(word);
    spread = (spread | spread << 16) & 0x0000_ffff_0000_ffff;
    spread = (spread | spread << 8) & 0x00ff_00ff_00ff_00ff;
    spread = (spread | spread << 4) & (ONES * 0x0f);
    // A nibble of 10 or more carries into bit 4 when 6 is added (no byte overflows: at
    // most 21); such a byte takes `'a' - '0' - 10` more.
    let letters = ((spread + ONES * 6) >> 4) & ONES;
    spread + ONES * u64::from(b'0') + letters * u64::from(b'a' - b'0' - 10)
}

/// The most problem messages one batch lists; the rest are counted (as the Python
/// `Problems` list does, so a body of many bad spans cannot grow the messages without bound).
pub const MAX_LISTED_PROBLEMS: usize = 10;

/// What was wrong inside an otherwise readable request, each message naming its place
/// (`resourceSpans[0].scopeSpans[0].spans[3].kind`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Problems {
    pub listed: Vec<String>,
    pub omitted: usize,
}

impl Problems {
    pub fn push(&mut self, message: impl Into<String>) {
        if self.listed.len() < MAX_LISTED_PROBLEMS {
            self.listed.push(message.into());
        } else {
            self.omitted += 1;
        }
    }

    pub fn total(&self) -> usize {
        self.listed.len() + self.omitted
    }
}

/// The records of one request body (one file, one JSON line or one frame).
///
/// `ignored` counts records of signals that are not graded (metrics); `rejected` counts
/// spans and log records the decoder dropped (what OTLP partial success reports).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Batch {
    pub spans: Vec<Span>,
    pub logs: Vec<LogRecord>,
    pub ignored: usize,
    pub rejected: usize,
    pub problems: Problems,
}

impl Batch {
    /// This batch without the records `own` recognises, or `None` when it holds none (the
    /// usual case: nothing is copied; a batch mixing the grader's own output with an
    /// agent's is rare, and copied once).
    pub fn without_own(&self, own: &OwnTelemetry) -> Option<Batch> {
        let spans_own = self.spans.iter().any(|s| own.owns_span(s));
        let logs_own = self.logs.iter().any(|l| own.owns_log(l));
        if !spans_own && !logs_own {
            return None;
        }
        Some(Batch {
            spans: (self.spans.iter())
                .filter(|s| !own.owns_span(s))
                .cloned()
                .collect(),
            logs: (self.logs.iter())
                .filter(|l| !own.owns_log(l))
                .cloned()
                .collect(),
            ignored: self.ignored,
            rejected: self.rejected,
            problems: self.problems.clone(),
        })
    }
}

/// The grader's own telemetry, as `otel_oracles.emit.is_own_telemetry` recognises it:
/// marked as its own (its instrumentation scope, or a resource `service.name` it uses) and
/// shaped as its own (`OwnShape`). The markers and the shape come from Python
/// (`emit.own_markers`, `emit.OWN_SHAPE`), so they are defined once.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OwnTelemetry {
    pub scope: String,
    pub services: FastSet<String>,
    pub shape: OwnShape,
}

impl OwnTelemetry {
    /// The scope name matches, or the resource's `service.name` (the last of duplicate
    /// keys, as in the Python resource dict; a string, as the services are) is a service.
    /// Necessary, never sufficient: any sender can write these strings.
    pub fn marked(&self, scope: &Scope, resource: &Resource) -> bool {
        if scope.name == self.scope {
            return true;
        }
        let service = (resource.attributes.iter().rev()).find(|kv| kv.key == "service.name");
        matches!(service, Some(KeyValue { value: AnyValue::Str(name), .. }) if self.services.contains(name.as_str()))
    }

    /// A grade span under the grader's markers.
    pub fn owns_span(&self, span: &Span) -> bool {
        self.marked(&span.scope, &span.resource) && self.shape.is_grade_span(span)
    }

    /// An evaluation log record under the grader's markers.
    pub fn owns_log(&self, log: &LogRecord) -> bool {
        self.marked(&log.scope, &log.resource) && self.shape.is_evaluation_log(log)
    }
}

/// What a grade span and an evaluation log record hold, as `otel_oracles.emit.OWN_SHAPE`
/// defines it: the keys every one carries (`*_required`, the contract id first) and every
/// key one may carry (`*_allowed`). A record of this shape says nothing about what an agent
/// did, so leaving it out cannot hide an agent's step; the empty shape matches nothing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OwnShape {
    pub span_prefix: String,
    pub span_required: Vec<String>,
    pub span_allowed: FastSet<String>,
    pub event_name: String,
    pub event_allowed: FastSet<String>,
    pub log_required: Vec<String>,
    pub log_allowed: FastSet<String>,
}

impl OwnShape {
    fn keys_fit(attributes: &Attributes, required: &[String], allowed: &FastSet<String>) -> bool {
        required
            .iter()
            .all(|key| attributes.iter().any(|kv| &kv.key == key))
            && attributes
                .iter()
                .all(|kv| allowed.contains(kv.key.as_str()))
    }

    /// Named `{span_prefix}{contract id}` (the id a string), no links, only grade
    /// attributes, only evaluation events.
    pub fn is_grade_span(&self, span: &Span) -> bool {
        let Some(id_key) = self.span_required.first() else {
            return false;
        };
        let contract = (span.attributes.iter().rev()).find(|kv| &kv.key == id_key);
        let Some(KeyValue {
            value: AnyValue::Str(contract),
            ..
        }) = contract
        else {
            return false;
        };
        span.name.strip_prefix(self.span_prefix.as_str()) == Some(contract.as_str())
            && span.links.is_empty()
            && Self::keys_fit(&span.attributes, &self.span_required, &self.span_allowed)
            && span.events.iter().all(|event| {
                event.name == self.event_name
                    && (event.attributes.iter())
                        .all(|kv| self.event_allowed.contains(kv.key.as_str()))
            })
    }

    /// A body-less evaluation event record with only evaluation attributes.
    pub fn is_evaluation_log(&self, log: &LogRecord) -> bool {
        let bodyless = match &log.body {
            AnyValue::Empty => true,
            AnyValue::Str(text) => text.is_empty(),
            _ => false,
        };
        !self.event_name.is_empty()
            && log.event_name == self.event_name
            && bodyless
            && Self::keys_fit(&log.attributes, &self.log_required, &self.log_allowed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_word_writes_the_digits_of_every_nibble() {
        let words = [
            0u32,
            1,
            9,
            10,
            15,
            16,
            0x0123_4567,
            0x89ab_cdef,
            0xfedc_ba98,
            u32::MAX,
        ];
        let every_nibble = (0..16u32).map(|n| n * 0x1111_1111);
        for word in words.into_iter().chain(every_nibble) {
            let digits = hex_word(word).to_be_bytes();
            assert_eq!(std::str::from_utf8(&digits).unwrap(), format!("{word:08x}"));
            assert_eq!(hex(&word.to_be_bytes()), format!("{word:08x}"));
        }
    }

    #[test]
    fn hex_writes_ids_of_every_length() {
        for len in 0..=40usize {
            let id: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            let expected: String = id.iter().map(|byte| format!("{byte:02x}")).collect();
            assert_eq!(hex(&id), expected);
            with_hex(&id, |text| assert_eq!(text, expected));
        }
    }
    use crate::hashing::FastSetExt;

    fn span(scope: &Arc<Scope>, service: Option<AnyValue>) -> Span {
        let attributes = service
            .map(|value| {
                vec![
                    KeyValue {
                        key: "service.name".into(),
                        value: AnyValue::Str("first".into()),
                    },
                    KeyValue {
                        key: "service.name".into(),
                        value,
                    },
                ]
            })
            .unwrap_or_default();
        Span {
            trace_id: [1; 16],
            span_id: [2; 8],
            parent_span_id: None,
            name: "s".into(),
            kind: 1,
            start_ns: 0,
            end_ns: 0,
            status_code: 0,
            status_message: String::new(),
            attributes: Vec::new(),
            events: Vec::new(),
            links: Vec::new(),
            resource: Arc::new(Resource { attributes }),
            scope: Arc::clone(scope),
            dropped_attributes_count: 0,
            dropped_events_count: 0,
            dropped_links_count: 0,
            flags: 0,
        }
    }

    fn shape() -> OwnShape {
        let keys = |keys: &[&str]| keys.iter().map(|k| k.to_string()).collect::<FastSet<_>>();
        OwnShape {
            span_prefix: "grade ".into(),
            span_required: vec!["contract".into(), "verdict".into()],
            span_allowed: keys(&["contract", "verdict"]),
            event_name: "evaluation".into(),
            event_allowed: keys(&["check"]),
            log_required: vec!["check".into()],
            log_allowed: keys(&["check"]),
        }
    }

    fn str_kv(key: &str, value: &str) -> KeyValue {
        KeyValue {
            key: key.into(),
            value: AnyValue::Str(value.into()),
        }
    }

    /// A grade span of contract `c` (as the emitter writes it) from `span`.
    fn graded(mut span: Span) -> Span {
        span.name = "grade c".into();
        span.attributes = vec![str_kv("contract", "c"), str_kv("verdict", "pass")];
        span.events = vec![Event {
            name: "evaluation".into(),
            time_ns: 0,
            attributes: vec![str_kv("check", "x")],
            dropped_attributes_count: 0,
        }];
        span
    }

    #[test]
    fn own_telemetry_is_dropped_by_scope_or_last_service_name() {
        let own = OwnTelemetry {
            scope: "otel-oracles".into(),
            services: FastSet::from_iter(["otel-oracles".to_string()]),
            shape: shape(),
        };
        let ours = Arc::new(Scope {
            name: "otel-oracles".into(),
            version: String::new(),
        });
        let agent = Arc::new(Scope::default());
        let batch = Batch {
            spans: vec![
                graded(span(&ours, None)),
                graded(span(&agent, Some(AnyValue::Str("otel-oracles".into())))),
                graded(span(&agent, Some(AnyValue::Int(1)))),
                graded(span(&agent, None)),
            ],
            ..Batch::default()
        };
        let kept = batch.without_own(&own).expect("own records found");
        assert_eq!(kept.spans, batch.spans[2..].to_vec());
        assert_eq!(
            kept.without_own(&own),
            None,
            "nothing left to drop: no copy"
        );
    }

    #[test]
    fn a_marked_span_not_shaped_as_a_grade_span_is_kept() {
        let own = OwnTelemetry {
            scope: "otel-oracles".into(),
            services: FastSet::new(),
            shape: shape(),
        };
        let ours = Arc::new(Scope {
            name: "otel-oracles".into(),
            version: String::new(),
        });
        let grade = graded(span(&ours, None));
        let mut tool = grade.clone();
        tool.attributes
            .push(str_kv("gen_ai.tool.name", "delete_records"));
        let mut renamed = grade.clone();
        renamed.name = "delete_records".into();
        let mut other_event = grade.clone();
        other_event.events[0].name = "gen_ai.tool.message".into();
        let mut missing = grade.clone();
        missing.attributes.pop();
        let forged = vec![tool, renamed, other_event, missing, span(&ours, None)];
        let mut spans = forged.clone();
        spans.push(grade);
        let kept = Batch {
            spans,
            ..Batch::default()
        }
        .without_own(&own)
        .expect("the grade span is dropped");
        assert_eq!(kept.spans, forged, "every forged span is kept, in order");
        let log = |body: AnyValue, extra: Option<KeyValue>| LogRecord {
            trace_id: None,
            span_id: None,
            event_name: "evaluation".into(),
            time_ns: 0,
            attributes: [Some(str_kv("check", "x")), extra]
                .into_iter()
                .flatten()
                .collect(),
            body,
            severity_number: 0,
            resource: Arc::new(Resource::default()),
            scope: Arc::clone(&ours),
            dropped_attributes_count: 0,
        };
        assert!(own.owns_log(&log(AnyValue::Empty, None)));
        assert!(!own.owns_log(&log(AnyValue::Str("rm -rf".into()), None)));
        assert!(!own.owns_log(&log(AnyValue::Empty, Some(str_kv("gen_ai.tool.name", "t")))));
        assert!(!OwnTelemetry::default().owns_log(&log(AnyValue::Empty, None)));
    }

    #[test]
    fn a_body_shares_each_short_text_and_copies_long_ones() {
        let body = format!("gen_ai.system gen_ai.system {0} {0}", "x".repeat(65));
        let words: Vec<&str> = body.split(' ').collect();
        let mut texts = Interner::new();
        let (a, b) = (texts.text(words[0]), texts.text(words[1]));
        assert_eq!((a.as_str(), &a), ("gen_ai.system", &b));
        assert!(Text::ptr_eq(&a, &b), "one allocation for a repeated key");
        let (c, d) = (texts.text(words[2]), texts.text(words[3]));
        assert_eq!(c, d);
        assert!(!Text::ptr_eq(&c, &d), "past MAX_SHARED bytes: never hashed");
        let other = Interner::new().text(words[0]);
        assert!(!Text::ptr_eq(&a, &other), "nothing is shared across bodies");
        // Texts that share a front slot (all of these, of one length and the same first
        // and last eight bytes, or of any slot) still map to their own one allocation.
        let many: Vec<String> = (0..600)
            .map(|i| format!("gen_ai.{}.x.{}_tokens", i % 300, "y".repeat(i % 7)))
            .collect();
        let mut texts = Interner::new();
        let first: Vec<Text> = many.iter().map(|t| texts.text(t)).collect();
        for (text, shared) in many.iter().zip(&first) {
            let again = texts.text(text);
            assert_eq!(again.as_str(), text.as_str());
            let original = first.iter().find(|t| t.as_str() == text.as_str()).unwrap();
            assert!(Text::ptr_eq(&again, original), "{text}");
            assert!(Text::ptr_eq(shared, original), "{text}");
        }
    }

    #[test]
    fn short_texts_are_the_same_exactly_when_every_byte_is() {
        // Every length a shared text has, one byte changed at each position (the words
        // compared, the overlapping last one, the short ones byte by byte), and lengths apart.
        for n in 0..=Interner::MAX_SHARED {
            let a: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
            assert!(same_short(&a, &a.clone()), "{n}");
            for at in 0..n {
                let mut b = a.clone();
                b[at] ^= 0x20;
                assert!(!same_short(&a, &b), "{n} {at}");
                assert!(!same_short(&b, &a), "{n} {at}");
            }
            let mut longer = a.clone();
            longer.push(b'a');
            assert!(!same_short(&a, &longer), "{n}");
        }
        // Through the interner: a text after one that differs in one byte (same slot when
        // the byte is in the middle) is itself, and its repeat is the first one's text.
        for n in 0..=Interner::MAX_SHARED {
            let a: String = (0..n).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
            let others: Vec<String> = (0..n)
                .map(|at| {
                    let mut b = a.clone().into_bytes();
                    b[at] ^= 0x20;
                    String::from_utf8(b).unwrap()
                })
                .collect();
            let mut texts = Interner::new();
            let first = texts.text(&a);
            for b in &others {
                let (tb, ta) = (texts.text(b), texts.text(&a));
                assert_eq!((tb.as_str(), ta.as_str()), (b.as_str(), a.as_str()));
                assert!(Text::ptr_eq(&ta, &first), "{n} {b}");
                assert!(Text::ptr_eq(&texts.text(b), &tb), "{n} {b}");
            }
        }
        // Texts of one front slot (same length, first and last eight bytes) that differ
        // only in the middle stay apart.
        let (x, y) = ("gen_ai.usage.input__tokens", "gen_ai.usage.output_tokens");
        let (x, y) = (x.replace("input_", "aaaaaa"), y.replace("output", "aaaaab"));
        let mut texts = Interner::new();
        let (tx, ty) = (texts.text(&x), texts.text(&y));
        assert_eq!((tx.as_str(), ty.as_str()), (x.as_str(), y.as_str()));
    }

    #[test]
    fn the_front_table_grows_with_the_body_within_bounds() {
        assert_eq!(Interner::new().slots(), Interner::MIN_SLOTS);
        assert_eq!(Interner::for_body(0).slots(), Interner::MIN_SLOTS);
        assert_eq!(Interner::for_body(64 << 10).slots(), Interner::MIN_SLOTS);
        assert_eq!(Interner::for_body(200 << 10).slots(), 512);
        assert_eq!(Interner::for_body(1 << 20).slots(), Interner::MAX_SLOTS);
        assert_eq!(
            Interner::for_body(usize::MAX / 2).slots(),
            Interner::MAX_SLOTS
        );
        // Every slot is reachable and none past the table, at each size.
        for slots in [Interner::MIN_SLOTS, 256, Interner::MAX_SLOTS] {
            let texts = Interner::with_slots(slots);
            let mut hit = vec![false; slots];
            for i in 0..(slots * 64) {
                let text = format!("k{i}.{}", "v".repeat(i % 13));
                hit[recent_slot(text.as_bytes(), texts.shift)] = true;
            }
            assert!(hit.iter().all(|h| *h), "{slots}");
        }
        // Sharing does not depend on the size: a large table shares as the small one.
        let body = "a.b c.d a.b c.d";
        let mut texts = Interner::for_body(1 << 20);
        let words: Vec<Text> = body.split(' ').map(|w| texts.text(w)).collect();
        assert!(Text::ptr_eq(&words[0], &words[2]) && Text::ptr_eq(&words[1], &words[3]));
    }

    #[test]
    fn problems_are_bounded_and_counted() {
        let mut problems = Problems::default();
        for i in 0..(MAX_LISTED_PROBLEMS + 5) {
            problems.push(format!("problem {i}"));
        }
        assert_eq!(problems.listed.len(), MAX_LISTED_PROBLEMS);
        assert_eq!(problems.omitted, 5);
        assert_eq!(problems.total(), MAX_LISTED_PROBLEMS + 5);
        assert_eq!(problems.listed[0], "problem 0");
    }
}
