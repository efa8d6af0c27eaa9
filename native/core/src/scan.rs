//! The text command and network checks search in a step, and the search itself.
//!
//! `no_network`, `network_access` and `package_install` look for substrings (`curl`,
//! `http://`, `pip install` ...) case-insensitively in one text per step, its *scan text*:
//!
//! * for an AgentBench step, its raw JSON object written as
//!   `json.dumps(raw, ensure_ascii=False, sort_keys=True)` writes it ([`write_sorted`]);
//! * for a trace-derived step, the JSON of its behaviour fields written the same way, then,
//!   one per line, every string leaf and key it holds, in order, unescaped, and the strings
//!   inside strings that hold a JSON object or array, read as Python's `json.loads` reads
//!   them ([`parse_nested`]: `NaN` and `Infinity` allowed, lone surrogates kept, a repeated
//!   key at its first position with its last value), down to [`SCAN_MAX_DEPTH`] levels and
//!   for strings of at most [`SCAN_NESTED_JSON_CHARS`] characters ([`collect_strings`],
//!   whose string case [`collect_str`] a walker of other values calls: the Python side
//!   writes a step's text straight from its field values, `python/src/scan.rs`).
//!
//! Strings are bytes here, not `str`: Python strings may hold lone surrogates (a JSON
//! `"\ud800"` escape makes one), which no UTF-8 text can. They are carried as UTF-8 extended
//! to encode a surrogate code point as its three bytes (what Python's `surrogatepass` error
//! handler writes and reads back), so byte order is code point order and a byte substring
//! of the text is a character substring.
//!
//! [`Patterns`] answers which of several patterns occur in a text in one linear pass
//! (Aho-Corasick), instead of one substring search per pattern.
//!
//! # Where a pattern can occur: the strings alone
//!
//! Which patterns occur in a scan text is what `no_network` asks of every scanned step,
//! and writing the sorted JSON costs more than searching it. [`within_strings`] says of a
//! pattern (lower-cased as [`Patterns`] holds it) that wherever it occurs in a scan text
//! it occurs inside one *piece*: one string's or key's content as the JSON writes it
//! (between its quotes, escapes written), or one line of the strings after the JSON. When
//! every pattern of a search is such, the search may be made over the pieces alone, in
//! any order, each between separators no pattern holds, with no JSON written. The proof:
//!
//! 1. A scan text is, in order: the JSON, gaps and pieces in turn, each piece between
//!    the quotes that open and close its string (escaped quotes inside it are the
//!    piece's); then, per line of strings, a line break and the line. A gap holds only the
//!    JSON's punctuation `{` `}` `[` `]` `,` `:`, spaces, and the text of numbers (digits,
//!    `-`, `+`, `.`, `e` or `E` in Python's spellings, `NaN`, `Infinity`) and of `true`,
//!    `false`, `null`.
//! 2. So every piece is bounded on each side by a quote or a line break (or the text's
//!    end), and a pattern holding neither contains no bound: an occurrence lies inside
//!    one piece or inside one gap.
//! 3. Inside a gap, lower-cased, the ASCII letters come in whole runs that are among
//!    `null`, `true`, `false`, `nan`, `infinity` and `e` ([`GAP_WORDS`]); the other bytes
//!    are punctuation, spaces, digits, `-`, `+`, `.`. A pattern holding another byte, or
//!    a run of letters (bounded in the pattern by other bytes or its ends) that is in no
//!    gap word, does not occur in a gap.
//! 4. Case: a text whose bytes are ASCII is lower-cased byte by byte (what `str.lower`
//!    does to ASCII characters), another by Python's `str.lower`: character by character
//!    except for `Σ`, which becomes `ς` or `σ` by the cased and case-ignorable characters
//!    around it. A quote and a line break are neither cased nor case-ignorable, so that
//!    look stops at a piece's bounds (a `:`, which is case-ignorable, never touches a
//!    piece: the key's closing quote stands between). A piece therefore lower-cases the
//!    same alone, between such bounds, as in the text, and the lower-cased text is its
//!    lower-cased pieces and gaps put together: the same patterns occur in the pieces,
//!    searched between quotes and line breaks, as in the text.
//!
//! A string that the JSON writes with escapes (a quote, a backslash, a control
//! character) is searched as written: an escape's letters can complete a pattern (`\npm
//! install` holds `npm install`), and the line of strings holding it unescaped is a piece
//! too. A pattern holding a quote, a line break, or only gap text (`null`, `1.5`, `: `,
//! `in`) leaves the search to the written text.
//!
//! That line need not be searched when no pattern holds a byte the JSON escapes
//! ([`crate::json_text::written_as_is`] of each pattern) and the string holds no `Σ` ([`lowers_alone`]). The line is
//! runs of other bytes between bytes the JSON escapes; the piece is the same runs between
//! the escapes written. A pattern holding no escaped byte occurs in the line inside one
//! run (lower-casing makes no such byte: only ASCII bytes are escaped, and the ASCII a
//! character lower-cases to is a letter). Without `Σ` every character lower-cases alone,
//! so the run lower-cases in the piece as in the line, and the pattern occurs in the piece
//! too. (With `Σ` it may not: `A\nΣ` lower-cases written to `a\nς`, the `n` before it
//! being cased, and unescaped to `a`, a line break and `σ`.) A string written without an
//! escape is its own line, whatever its characters (point 4). The strings of the JSON a
//! string holds are other text: they are still written.
//!
//! The input is untrusted: the values walked are bounded in depth by their readers,
//! the nested-JSON reader keeps an explicit stack (no recursion on the input's nesting) and
//! refuses text nested past [`NESTED_JSON_MAX_DEPTH`] levels, and the output is at most
//! [`SCAN_MAX_DEPTH`] + 1 times the size of the strings read.

use aho_corasick::automaton::{Automaton, StateID};
use aho_corasick::{dfa, nfa::contiguous, packed, Anchored, MatchKind, Span};
use bumpalo::Bump;

use crate::hashing::{FastMap, FastMapExt};
use crate::json_text::{escapes_in, needs_escape, next_escape, short_escape, splat, write_string};

/// Deepest nesting walked when collecting strings (the value itself is level 0).
pub const SCAN_MAX_DEPTH: usize = 32;

/// Longest string, in characters, read again as JSON while collecting strings (longer ones
/// are scanned as text only).
pub const SCAN_NESTED_JSON_CHARS: usize = 1 << 20;

/// Deepest nesting of arrays/objects a string's JSON may have to be read as JSON. Python's
/// `json.loads` gave up (`RecursionError`) where the interpreter's recursion limit ran out,
/// about 950 levels less the stack in use; this bound is fixed instead.
pub const NESTED_JSON_MAX_DEPTH: usize = 900;

/// A JSON-shaped value whose text is searched. Numbers are their JSON spelling (the reader
/// chooses it: Python's `repr`, `NaN` ...); strings are surrogate-extended UTF-8 bytes.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    Number(&'a [u8]),
    Str(&'a [u8]),
    Arr(Vec<Value<'a>>),
    /// Keys unique, in insertion order.
    Obj(Vec<(&'a [u8], Value<'a>)>),
}

/// `value` as `json.dumps(value, ensure_ascii=False, sort_keys=True)` writes it: `", "` and
/// `": "` separators, keys sorted by code point, `"`, `\` and the control characters
/// escaped and nothing else. Recursion follows the tree, whose depth its reader bounded.
pub fn write_sorted(value: &Value<'_>, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(text) => out.extend_from_slice(text),
        Value::Str(text) => write_string(*text, out),
        Value::Arr(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                write_sorted(item, out);
            }
            out.push(b']');
        }
        Value::Obj(entries) => {
            let mut order: Vec<&(&[u8], Value<'_>)> = entries.iter().collect();
            order.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push(b'{');
            for (i, (key, item)) in order.into_iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                write_string(*key, out);
                out.extend_from_slice(b": ");
                write_sorted(item, out);
            }
            out.push(b'}');
        }
    }
}

/// The lower-cased runs of ASCII letters a scan text holds outside its strings: `null`,
/// `true`, `false`, the `NaN` and `Infinity` `json.dumps` writes, and the exponent of a
/// float (`1e+16`). See the module notes, point 3.
pub const GAP_WORDS: [&[u8]; 6] = [b"null", b"true", b"false", b"nan", b"infinity", b"e"];

/// Whether every occurrence of `pattern` (bytes of lower-cased text, as [`Patterns`] holds
/// them) in a scan text lies inside one string's written content or one line of strings,
/// never in or across the JSON around them (the module notes' proof): it holds no quote
/// and no line break, and cannot occur in the text between strings (a byte no such text
/// holds, or a run of letters that is in no [`GAP_WORDS`]). The empty pattern occurs in
/// any text, so anywhere it is searched.
pub fn within_strings(pattern: &[u8]) -> bool {
    if pattern.is_empty() {
        return true;
    }
    if pattern.iter().any(|b| matches!(b, b'"' | b'\n')) {
        return false;
    }
    let in_gaps = |b: &u8| b.is_ascii_alphanumeric() || b"{}[],: -+.".contains(b);
    if !pattern.iter().all(in_gaps) {
        return true;
    }
    pattern
        .split(|b| !b.is_ascii_alphabetic())
        .filter(|run| !run.is_empty())
        .any(|run| {
            let run = run.to_ascii_lowercase();
            !GAP_WORDS
                .iter()
                .any(|word| word.windows(run.len()).any(|w| w == run.as_slice()))
        })
}

/// Appends `text` as [`write_string`] writes it (between quotes, `"`, `\` and the control
/// characters escaped) with its ASCII letters lower-cased, and answers whether what it
/// appended is all ASCII: a piece of a search's text ([`within_strings`]) made ready for
/// [`Patterns::occurring_lowered`] in the pass that copies it, instead of a copy, then
/// a pass to lower-case it, then one to see whether Python must lower-case it instead.
///
/// Lower-casing ASCII letters first changes nothing Python's `str.lower` would then make
/// of the text: it maps each ASCII letter alone, and the one mapping that looks around
/// (`Σ` at a word's end) asks only whether the neighbours are cased or case-ignorable,
/// which an ASCII letter is in either case.
///
/// A text with nothing to escape (the usual one) is copied sixteen bytes at a time
/// (eight, then one, for short texts) with the escapes looked for in the same pass; a text
/// with one is written by [`write_string`] and lower-cased where it was written.
pub fn write_lowered_string(text: &[u8], out: &mut Vec<u8>) -> bool {
    let start = out.len();
    out.reserve(text.len() + 2);
    let spare = &mut out.spare_capacity_mut()[..text.len() + 2];
    spare[0].write(b'"');
    let body = &mut spare[1..=text.len()];
    let seen = copy_lowered(text, body);
    if seen.escapes == 0 {
        spare[text.len() + 1].write(b'"');
        // SAFETY: the `text.len() + 2` bytes after `start` were all written above (the
        // quotes, and `copy_lowered` writes every byte of `body`).
        unsafe { out.set_len(start + text.len() + 2) };
        return seen.high == 0;
    }
    write_string(text, out);
    let written = &mut out[start..];
    written.make_ascii_lowercase();
    written.is_ascii()
}

/// What [`copy_lowered`] saw: non-zero `escapes` where a byte must be escaped, non-zero
/// `high` where one is not ASCII.
struct Seen {
    escapes: u64,
    high: u64,
}

/// Writes `text` into `into` (of the same length), ASCII letters lower-cased.
fn copy_lowered(text: &[u8], into: &mut [std::mem::MaybeUninit<u8>]) -> Seen {
    debug_assert_eq!(text.len(), into.len());
    #[cfg(target_arch = "x86_64")]
    {
        if text.len() >= 16 {
            return copy_lowered16(text, into);
        }
        if text.len() >= 4 {
            return copy_lowered_short(text, into);
        }
    }
    copy_lowered_portable(text, into)
}

/// [`copy_lowered`] without SSE2: eight bytes at a time, else one at a time (on x86-64 only
/// for texts shorter than four bytes; a test runs the rest there too).
fn copy_lowered_portable(text: &[u8], into: &mut [std::mem::MaybeUninit<u8>]) -> Seen {
    if text.len() >= 8 {
        return copy_lowered8(text, into);
    }
    let mut seen = Seen {
        escapes: 0,
        high: 0,
    };
    for (b, slot) in text.iter().zip(into.iter_mut()) {
        let b = *b;
        seen.escapes |= u64::from(needs_escape(b));
        seen.high |= u64::from(b & 0x80);
        slot.write(b.to_ascii_lowercase());
    }
    seen
}

/// [`copy_lowered`] eight bytes at a time (the last word overlapping the one before it
/// where the length is no multiple of eight; it is written again with the same bytes):
/// `text.len() >= 8`. The bytes to escape are those of `json_text`'s word test ([`escapes_in`]);
/// an ASCII byte is an upper-case letter when adding `0x80 - 'A'` to it sets its high bit
/// and adding `0x7f - 'Z'` does not (no sum carries into the next byte).
fn copy_lowered8(text: &[u8], into: &mut [std::mem::MaybeUninit<u8>]) -> Seen {
    let len = text.len();
    let mut seen = Seen {
        escapes: 0,
        high: 0,
    };
    let mut at = 0;
    loop {
        let at_word = at.min(len - 8);
        let mut bytes = [0; 8];
        bytes.copy_from_slice(&text[at_word..at_word + 8]);
        let word = u64::from_le_bytes(bytes);
        seen.escapes |= escapes_in(word);
        seen.high |= word & splat(0x80);
        let low7 = word & splat(0x7f);
        let from_a = low7 + splat(0x80 - b'A');
        let past_z = low7 + splat(0x7f - b'Z');
        let upper = (from_a ^ past_z) & !word & splat(0x80);
        let lowered = (word | (upper >> 2)).to_le_bytes();
        let slots = &mut into[at_word..at_word + 8];
        // SAFETY: `slots` is eight bytes long (checked by the indexing above); an unaligned
        // write of initialized bytes into `MaybeUninit` slots.
        unsafe {
            slots
                .as_mut_ptr()
                .cast::<[u8; 8]>()
                .write_unaligned(lowered)
        };
        at = at_word + 8;
        if at >= len {
            return seen;
        }
    }
}

/// Sixteen bytes as [`copy_lowered`] treats them, with SSE2, which every x86-64 processor
/// has: the bytes to escape ([`crate::json_text::escape_lanes`]) and the block lower-cased (an
/// upper-case letter when, read signed, it is above `@` and below `[`: a non-ASCII byte
/// reads negative).
#[cfg(target_arch = "x86_64")]
#[inline]
fn lowered_block(
    block: std::arch::x86_64::__m128i,
) -> (std::arch::x86_64::__m128i, std::arch::x86_64::__m128i) {
    use std::arch::x86_64::{
        _mm_and_si128, _mm_cmpgt_epi8, _mm_cmplt_epi8, _mm_or_si128, _mm_set1_epi8,
    };

    use crate::json_text::escape_lanes;
    // SAFETY: SSE2 is part of x86-64; these read and write registers only.
    unsafe {
        let upper = _mm_and_si128(
            _mm_cmpgt_epi8(block, _mm_set1_epi8((b'A' - 1) as i8)),
            _mm_cmplt_epi8(block, _mm_set1_epi8((b'Z' + 1) as i8)),
        );
        let lowered = _mm_or_si128(block, _mm_and_si128(upper, _mm_set1_epi8(0x20)));
        (escape_lanes(block), lowered)
    }
}

/// [`copy_lowered`] sixteen bytes at a time (the last block overlapping the one before
/// it, as in [`copy_lowered8`]): `text.len() >= 16`.
#[cfg(target_arch = "x86_64")]
fn copy_lowered16(text: &[u8], into: &mut [std::mem::MaybeUninit<u8>]) -> Seen {
    use std::arch::x86_64::{
        _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_setzero_si128, _mm_storeu_si128,
    };
    let len = text.len();
    assert!(len >= 16 && into.len() == len);
    // SAFETY: SSE2 is part of x86-64. Every block read or written is the sixteen bytes at
    // `at <= len - 16` of `text` or of `into` (both `len` long), unaligned loads and
    // stores; a store writes initialized bytes into `MaybeUninit` slots.
    unsafe {
        let mut escapes = _mm_setzero_si128();
        let mut high = _mm_setzero_si128();
        let mut at = 0;
        loop {
            let at_block = at.min(len - 16);
            let block = _mm_loadu_si128(text.as_ptr().add(at_block).cast());
            let (to_escape, lowered) = lowered_block(block);
            escapes = _mm_or_si128(escapes, to_escape);
            high = _mm_or_si128(high, block);
            _mm_storeu_si128(into.as_mut_ptr().add(at_block).cast(), lowered);
            at = at_block + 16;
            if at >= len {
                break;
            }
        }
        Seen {
            escapes: u64::from(_mm_movemask_epi8(escapes) as u32),
            high: u64::from(_mm_movemask_epi8(high) as u32),
        }
    }
}

/// [`copy_lowered`] of 4 to 15 bytes in one block: its first and last eight bytes (four
/// when shorter than eight) side by side, overlapping in the text where it is shorter than
/// sixteen (eight), and written back to where they were read (the overlap twice, the same
/// bytes). Most keys and many values are this short.
#[cfg(target_arch = "x86_64")]
fn copy_lowered_short(text: &[u8], into: &mut [std::mem::MaybeUninit<u8>]) -> Seen {
    use std::arch::x86_64::{
        _mm_cvtsi128_si32, _mm_cvtsi128_si64, _mm_movemask_epi8, _mm_set_epi32, _mm_set_epi64x,
        _mm_srli_si128,
    };
    let len = text.len();
    assert!((4..16).contains(&len) && into.len() == len);
    let word = |at: usize| -> u64 {
        let mut bytes = [0; 8];
        bytes.copy_from_slice(&text[at..at + 8]);
        u64::from_le_bytes(bytes)
    };
    let half = |at: usize| -> u32 {
        let mut bytes = [0; 4];
        bytes.copy_from_slice(&text[at..at + 4]);
        u32::from_le_bytes(bytes)
    };
    // SAFETY: SSE2 is part of x86-64 (register operations only). The writes are of 8 (4)
    // bytes at 0 and at `len - 8` (`len - 4`), inside `into` (`len` long, `len >= 8`
    // (`4`)), unaligned, of initialized bytes into `MaybeUninit` slots.
    unsafe {
        let wide = len >= 8;
        let block = if wide {
            _mm_set_epi64x(word(len - 8) as i64, word(0) as i64)
        } else {
            _mm_set_epi32(0, 0, half(len - 4) as i32, half(0) as i32)
        };
        let (to_escape, lowered) = lowered_block(block);
        // The four zero bytes above two halves are no text.
        let lanes: u32 = if wide { 0xffff } else { 0xff };
        let out = into.as_mut_ptr().cast::<u8>();
        if wide {
            out.cast::<i64>()
                .write_unaligned(_mm_cvtsi128_si64(lowered));
            let last = _mm_cvtsi128_si64(_mm_srli_si128::<8>(lowered));
            out.add(len - 8).cast::<i64>().write_unaligned(last);
        } else {
            out.cast::<i32>()
                .write_unaligned(_mm_cvtsi128_si32(lowered));
            let last = _mm_cvtsi128_si32(_mm_srli_si128::<4>(lowered));
            out.add(len - 4).cast::<i32>().write_unaligned(last);
        }
        Seen {
            escapes: u64::from(_mm_movemask_epi8(to_escape) as u32 & lanes),
            high: u64::from(_mm_movemask_epi8(block) as u32 & lanes),
        }
    }
}

/// What the nested-JSON reader needs to know of the interpreter: Python refuses to read an
/// integer of more than `int_max_str_digits` digits (`sys.get_int_max_str_digits()`, 0 for
/// no limit), and a string holding one is then not read as JSON.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub int_max_str_digits: usize,
}

/// Appends `"\n"` and each string leaf and key of `value` (at nesting `depth`), in order;
/// a string holding a JSON object or array is also walked as data, one level deeper.
/// Nothing deeper than [`SCAN_MAX_DEPTH`] is visited.
pub fn collect_strings<'a>(
    value: &Value<'a>,
    depth: usize,
    limits: Limits,
    bump: &'a Bump,
    out: &mut Vec<u8>,
) {
    if depth > SCAN_MAX_DEPTH {
        return;
    }
    match value {
        Value::Str(text) => collect_str(text, depth, limits, bump, out),
        Value::Obj(entries) => {
            for (key, item) in entries {
                out.push(b'\n');
                out.extend_from_slice(key);
                collect_strings(item, depth + 1, limits, bump, out);
            }
        }
        Value::Arr(items) => {
            for item in items {
                collect_strings(item, depth + 1, limits, bump, out);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Appends `"\n"` and `text`, a string leaf or key at nesting `depth`, then, when it holds
/// a JSON object or array, that value's strings one level deeper ([`collect_strings`]): the
/// string case of the walk, for a caller walking values of its own (the Python objects of a
/// step's fields, `python/src/scan.rs`). Nothing deeper than [`SCAN_MAX_DEPTH`] is visited.
pub fn collect_str(text: &[u8], depth: usize, limits: Limits, bump: &Bump, out: &mut Vec<u8>) {
    if depth > SCAN_MAX_DEPTH {
        return;
    }
    out.push(b'\n');
    out.extend_from_slice(text);
    collect_nested(text, depth, limits, bump, out);
}

/// [`collect_str`] but for the line of `text` itself: the strings of the JSON object or
/// array `text` holds, one level deeper, if any. For a search that holds the line already
/// (a string's piece: the module notes' last point).
///
/// Inlined into the walks that call it for every string: the usual string opens no
/// container, which its first bytes tell, so its answer costs no call.
#[inline]
pub fn collect_nested(text: &[u8], depth: usize, limits: Limits, bump: &Bump, out: &mut Vec<u8>) {
    if depth < SCAN_MAX_DEPTH && opens_container(text) {
        collect_parsed(text, depth, limits, bump, out);
    }
}

/// [`collect_nested`] of a string that opens a container.
#[inline(never)]
fn collect_parsed(text: &[u8], depth: usize, limits: Limits, bump: &Bump, out: &mut Vec<u8>) {
    if holds_container(text) {
        if let Some(parsed) = parse_nested(text, depth + 1, limits, bump) {
            collect_strings(&parsed, depth + 1, limits, bump, out);
        }
    }
}

/// Whether Python lower-cases `text` (surrogate-extended UTF-8) character by character,
/// whatever surrounds each: it holds no `Σ` (U+03A3, bytes `CE A3`), the one character
/// `str.lower` maps by its neighbours (the module notes, point 4).
pub fn lowers_alone(text: &[u8]) -> bool {
    let mut from = 0;
    while let Some(at) = text[from..].iter().position(|&b| b == 0xce) {
        if text.get(from + at + 1) == Some(&0xa3) {
            return false;
        }
        from += at + 1;
    }
    true
}

/// Whether `text` may be a JSON object or array Python would read: it starts, after JSON's
/// whitespace, with `{` or `[` (a string whose first non-space character is another one is
/// no container however Python strips it), and has at most [`SCAN_NESTED_JSON_CHARS`]
/// characters.
pub fn holds_container(text: &[u8]) -> bool {
    if !opens_container(text) {
        return false;
    }
    if text.len() <= SCAN_NESTED_JSON_CHARS {
        return true;
    }
    // One lead byte per character (continuation bytes are 0b10xx_xxxx).
    let chars = text.iter().filter(|b| (**b & 0xc0) != 0x80).count();
    chars <= SCAN_NESTED_JSON_CHARS
}

/// Whether `text` starts, after JSON's whitespace, with `{` or `[`.
#[inline]
fn opens_container(text: &[u8]) -> bool {
    let head = text.iter().find(|b| !is_json_space(**b));
    matches!(head, Some(b'{' | b'['))
}

fn is_json_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// A container being read by [`parse_nested`].
enum Open<'a> {
    Arr(Vec<Value<'a>>),
    Obj {
        entries: Vec<(&'a [u8], Value<'a>)>,
        /// Key -> position, once the object has enough keys for a linear search to cost.
        index: Option<FastMap<&'a [u8], usize>>,
        key: &'a [u8],
    },
    /// Deeper than anything the walk visits: read only to know the text is JSON.
    Skipped {
        object: bool,
    },
}

const INDEX_FROM: usize = 8;

/// `text` read as Python's `json.loads` reads it, as the tree the walk needs: containers
/// deeper than [`SCAN_MAX_DEPTH`] (the root being at `depth`) are checked but not kept.
/// `None` where `json.loads` raises (invalid JSON, an integer longer than Python converts,
/// nesting past [`NESTED_JSON_MAX_DEPTH`]) or the value is no object or array.
pub fn parse_nested<'a>(
    text: &[u8],
    depth: usize,
    limits: Limits,
    bump: &'a Bump,
) -> Option<Value<'a>> {
    let mut reader = Reader {
        text,
        pos: 0,
        limits,
        bump,
    };
    reader.skip_space();
    if !matches!(reader.peek(), Some(b'{' | b'[')) {
        return None;
    }
    let value = reader.document(depth)?;
    reader.skip_space();
    (reader.pos == text.len()).then_some(value)
}

struct Reader<'t, 'a> {
    text: &'t [u8],
    pos: usize,
    limits: Limits,
    bump: &'a Bump,
}

impl<'a> Reader<'_, 'a> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(is_json_space) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, literal: &[u8]) -> Option<()> {
        let end = self.pos.checked_add(literal.len())?;
        (self.text.get(self.pos..end)? == literal).then(|| self.pos = end)
    }

    /// One value whose containers are tracked on an explicit stack.
    fn document(&mut self, depth: usize) -> Option<Value<'a>> {
        let mut stack: Vec<Open<'a>> = Vec::new();
        loop {
            // Expecting a value.
            self.skip_space();
            let keep = depth + stack.len() <= SCAN_MAX_DEPTH;
            let mut done = match self.peek()? {
                b'[' | b'{' => {
                    if stack.len() >= NESTED_JSON_MAX_DEPTH {
                        return None;
                    }
                    let object = self.peek() == Some(b'{');
                    self.pos += 1;
                    self.skip_space();
                    let close = if object { b'}' } else { b']' };
                    if self.peek() == Some(close) {
                        self.pos += 1;
                        if !keep {
                            Value::Null
                        } else if object {
                            Value::Obj(Vec::new())
                        } else {
                            Value::Arr(Vec::new())
                        }
                    } else {
                        let open = if !keep {
                            Open::Skipped { object }
                        } else if object {
                            Open::Obj {
                                entries: Vec::new(),
                                index: None,
                                key: b"",
                            }
                        } else {
                            Open::Arr(Vec::new())
                        };
                        stack.push(open);
                        if object {
                            self.object_key(&mut stack)?;
                        }
                        continue;
                    }
                }
                b'"' => {
                    self.pos += 1;
                    Value::Str(self.string(keep)?)
                }
                b'n' => self.eat(b"null").map(|()| Value::Null)?,
                b't' => self.eat(b"true").map(|()| Value::Bool(true))?,
                b'f' => self.eat(b"false").map(|()| Value::Bool(false))?,
                b'N' => self.eat(b"NaN").map(|()| Value::Number(b""))?,
                b'I' => self.eat(b"Infinity").map(|()| Value::Number(b""))?,
                b'-' if self.text.get(self.pos + 1) == Some(&b'I') => {
                    self.pos += 1;
                    self.eat(b"Infinity").map(|()| Value::Number(b""))?
                }
                b'-' | b'0'..=b'9' => {
                    self.number()?;
                    Value::Number(b"")
                }
                _ => return None,
            };
            // A value is complete: hand it to its container, closing those that end.
            loop {
                let Some(top) = stack.last_mut() else {
                    return Some(done);
                };
                add(top, done);
                self.skip_space();
                let object = matches!(top, Open::Obj { .. } | Open::Skipped { object: true });
                match self.peek()? {
                    b',' => {
                        self.pos += 1;
                        if object {
                            self.object_key(&mut stack)?;
                        }
                        break;
                    }
                    b']' if !object => {}
                    b'}' if object => {}
                    _ => return None,
                }
                self.pos += 1;
                done = match stack.pop()? {
                    Open::Arr(items) => Value::Arr(items),
                    Open::Obj { entries, .. } => Value::Obj(entries),
                    Open::Skipped { .. } => Value::Null,
                };
            }
        }
    }

    /// `"key"` and `:` of the object on top of the stack.
    fn object_key(&mut self, stack: &mut [Open<'a>]) -> Option<()> {
        self.skip_space();
        if self.peek()? != b'"' {
            return None;
        }
        self.pos += 1;
        let top = stack.last_mut()?;
        let keep = matches!(top, Open::Obj { .. });
        let text = self.string(keep)?;
        if let Open::Obj { key, .. } = top {
            *key = text;
        }
        self.skip_space();
        self.eat(b":")
    }

    /// The rest of a string after its opening quote, unescaped (`json.loads`, strict: no
    /// raw control characters; an escaped surrogate pair is one character, a lone escaped
    /// surrogate is kept). Only checked, not kept, when `keep` is false.
    fn string(&mut self, keep: bool) -> Option<&'a [u8]> {
        let start = self.pos;
        let rest = self.text.get(start..)?;
        // The common case: no escape before the closing quote (the bytes that end a plain
        // run are those JSON escapes).
        let end = next_escape(rest, 0);
        if *rest.get(end)? == b'"' {
            self.pos = start + end + 1;
            return Some(if keep {
                self.bump.alloc_slice_copy(&rest[..end])
            } else {
                b""
            });
        }
        let mut out: Vec<u8> = Vec::new();
        loop {
            let b = self.peek()?;
            self.pos += 1;
            match b {
                b'"' => break,
                0..=0x1f => return None,
                b'\\' => {
                    let e = self.peek()?;
                    self.pos += 1;
                    let c: u8 = match e {
                        b'u' => {
                            let mut code = self.hex4()?;
                            if (0xd800..0xdc00).contains(&code)
                                && self.text.get(self.pos..self.pos + 2) == Some(b"\\u")
                            {
                                let save = self.pos;
                                self.pos += 2;
                                let low = self.hex4()?;
                                if (0xdc00..0xe000).contains(&low) {
                                    code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
                                } else {
                                    self.pos = save;
                                }
                            }
                            push_code_point(code, &mut out);
                            continue;
                        }
                        _ => short_escape(e)?,
                    };
                    out.push(c);
                }
                _ => out.push(b),
            }
        }
        Some(if keep {
            self.bump.alloc_slice_copy(&out)
        } else {
            b""
        })
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.text.get(self.pos..self.pos + 4)?;
        let mut code = 0;
        for d in digits {
            code = code * 16 + char::from(*d).to_digit(16)?;
        }
        self.pos += 4;
        Some(code)
    }

    /// A number as Python's scanner reads it: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?`
    /// (a `.` or exponent without digits is left for the caller, which then fails). An
    /// integer longer than the interpreter converts fails the whole text.
    fn number(&mut self) -> Option<()> {
        let digit = |r: &Self, at: usize| r.text.get(at).is_some_and(u8::is_ascii_digit);
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        let int_start = self.pos;
        match self.peek()? {
            b'0' => self.pos += 1,
            b'1'..=b'9' => {
                while digit(self, self.pos) {
                    self.pos += 1;
                }
            }
            _ => return None,
        }
        let int_digits = self.pos - int_start;
        let mut float = false;
        if self.peek() == Some(b'.') && digit(self, self.pos + 1) {
            float = true;
            self.pos += 1;
            while digit(self, self.pos) {
                self.pos += 1;
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            let mut at = self.pos + 1;
            if matches!(self.text.get(at), Some(b'-' | b'+')) {
                at += 1;
            }
            if digit(self, at) {
                float = true;
                while digit(self, at) {
                    at += 1;
                }
                self.pos = at;
            }
        }
        let limit = self.limits.int_max_str_digits;
        if !float && limit > 0 && int_digits > limit {
            return None;
        }
        Some(())
    }
}

/// Adds a complete value to the open container (an object's under its pending key: a
/// repeated key keeps its first position and takes the new value, as a `dict` does).
fn add<'a>(open: &mut Open<'a>, value: Value<'a>) {
    match open {
        Open::Arr(items) => items.push(value),
        Open::Obj {
            entries,
            index,
            key,
        } => {
            let at = match index {
                Some(index) => index.get(key).copied(),
                None => entries.iter().position(|(k, _)| k == key),
            };
            match at {
                Some(at) => entries[at].1 = value,
                None => {
                    if let Some(index) = index {
                        index.insert(key, entries.len());
                    }
                    entries.push((key, value));
                    if index.is_none() && entries.len() >= INDEX_FROM {
                        *index = Some(
                            entries
                                .iter()
                                .enumerate()
                                .map(|(i, (k, _))| (*k, i))
                                .collect(),
                        );
                    }
                }
            }
        }
        Open::Skipped { .. } => {}
    }
}

/// A code point as surrogate-extended UTF-8 (a surrogate as its own three bytes).
fn push_code_point(code: u32, out: &mut Vec<u8>) {
    match char::from_u32(code) {
        Some(c) => {
            let mut buf = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
        None => {
            // Only surrogates (0xd800..0xe000) are no `char` among 16-bit codes.
            out.push(0xe0 | ((code >> 12) & 0x0f) as u8);
            out.push(0x80 | ((code >> 6) & 0x3f) as u8);
            out.push(0x80 | (code & 0x3f) as u8);
        }
    }
}

/// Which of a list of patterns occur in a text, in one pass over it. The patterns are
/// given lower-cased (`str.lower()`), and texts must be ASCII or lower-cased: matching
/// ignores ASCII case, which on ASCII text is what lower-casing it would do and on
/// lower-cased text changes nothing.
///
/// Case is ignored by lower-casing ASCII letters on both sides and matching exactly, so a
/// vectorised literal search (Teddy, [`packed::Searcher`]) can skip to the next place a
/// pattern may start; the overlapping automaton walks only from there until nothing is
/// under way again. Bytes where no pattern starts are never stepped through one by one.
#[derive(Debug)]
pub struct Patterns {
    machine: Option<Machine>,
    /// Where the next pattern starts (leftmost), when the CPU has Teddy and the patterns are
    /// few enough for it; without it the automaton walks every byte.
    skip: Option<packed::Searcher>,
    /// Automaton pattern -> the given patterns equal to it.
    owners: Vec<Vec<usize>>,
    /// Given patterns that are empty (they occur in every text).
    empty: Vec<usize>,
    count: usize,
}

/// The overlapping automaton: a DFA for the usual few patterns (what `AhoCorasick` picks up
/// to 100), the contiguous NFA for more (a DFA's size grows with their number).
#[derive(Debug)]
enum Machine {
    /// The DFA and its unanchored start state.
    Dfa(dfa::DFA, StateID),
    /// The NFA and its unanchored start state.
    Nfa(contiguous::NFA, StateID),
}

/// Patterns up to which the automaton is a DFA.
const DFA_MAX_PATTERNS: usize = 100;

impl Patterns {
    /// The matcher of `patterns` (bytes of lower-cased text); an error names a pattern set
    /// too large to compile.
    pub fn new<P: AsRef<[u8]>>(patterns: &[P]) -> Result<Self, String> {
        let mut unique: FastMap<Vec<u8>, usize> = FastMap::new();
        let mut owners: Vec<Vec<usize>> = Vec::new();
        let mut distinct: Vec<Vec<u8>> = Vec::new();
        let mut empty = Vec::new();
        for (i, pattern) in patterns.iter().enumerate() {
            let bytes = pattern.as_ref().to_ascii_lowercase();
            if bytes.is_empty() {
                empty.push(i);
                continue;
            }
            let slot = *unique.entry(bytes).or_insert_with_key(|bytes| {
                distinct.push(bytes.clone());
                owners.push(Vec::new());
                owners.len() - 1
            });
            owners[slot].push(i);
        }
        let machine = if distinct.is_empty() {
            None
        } else if distinct.len() <= DFA_MAX_PATTERNS {
            let built = dfa::DFA::builder()
                .match_kind(MatchKind::Standard)
                .prefilter(false)
                .build(&distinct);
            let built = built.map_err(|e| e.to_string())?;
            let start = built.start_state(Anchored::No).map_err(|e| e.to_string())?;
            Some(Machine::Dfa(built, start))
        } else {
            let built = contiguous::NFA::builder()
                .match_kind(MatchKind::Standard)
                .prefilter(false)
                .build(&distinct);
            let built = built.map_err(|e| e.to_string())?;
            let start = built.start_state(Anchored::No).map_err(|e| e.to_string())?;
            Some(Machine::Nfa(built, start))
        };
        let skip = if distinct.is_empty() {
            None
        } else {
            packed::Config::new()
                .match_kind(packed::MatchKind::LeftmostFirst)
                .builder()
                .extend(&distinct)
                .build()
        };
        Ok(Self {
            machine,
            skip,
            owners,
            empty,
            count: patterns.len(),
        })
    }

    /// Indexes of the patterns occurring in `text`, ascending. Linear in the text (the
    /// search stops once every pattern is found).
    pub fn occurring(&self, text: &[u8]) -> Vec<usize> {
        if self.machine.is_none() {
            return self.occurring_lowered(text);
        }
        self.occurring_lowered(&text.to_ascii_lowercase())
    }

    /// [`Patterns::occurring`] in a text of the caller's that it may change: its ASCII
    /// letters are lower-cased where they are, instead of in a copy.
    pub fn occurring_in_place(&self, text: &mut [u8]) -> Vec<usize> {
        text.make_ascii_lowercase();
        self.occurring_lowered(text)
    }

    /// [`Patterns::occurring`] in a text whose ASCII letters are lower-case already (as
    /// [`write_lowered_string`] writes them).
    pub fn occurring_lowered(&self, lowered: &[u8]) -> Vec<usize> {
        let mut hit = vec![false; self.count];
        for &i in &self.empty {
            hit[i] = true;
        }
        if let Some(machine) = &self.machine {
            let mut left = self.owners.len();
            let mut seen = vec![false; self.owners.len()];
            let mut found = |slot: usize| {
                if !seen[slot] {
                    seen[slot] = true;
                    for &i in &self.owners[slot] {
                        hit[i] = true;
                    }
                    left -= 1;
                }
                left == 0
            };
            match machine {
                Machine::Dfa(dfa, start) => {
                    walk(dfa, *start, self.skip.as_ref(), lowered, &mut found);
                }
                Machine::Nfa(nfa, start) => {
                    walk(nfa, *start, self.skip.as_ref(), lowered, &mut found);
                }
            }
        }
        hit.iter()
            .enumerate()
            .filter_map(|(i, h)| h.then_some(i))
            .collect()
    }
}

/// Every pattern ending anywhere in `text` handed to `found` (which answers whether to
/// stop), by the overlapping automaton `machine` from its unanchored `start` state.
/// Whenever it is back in that state no
/// match is under way, so the walk may resume where `skip` finds the next pattern start:
/// the bytes skipped start no pattern, so no match is lost (what the automaton's own
/// prefilter does, which case-insensitive or overlapping kinds cannot have).
fn walk<A: Automaton>(
    machine: &A,
    start: StateID,
    skip: Option<&packed::Searcher>,
    text: &[u8],
    found: &mut impl FnMut(usize) -> bool,
) {
    let mut state = start;
    let mut at = 0;
    while at < text.len() {
        if state == start {
            if let Some(skip) = skip {
                match skip.find_in(text, Span::from(at..text.len())) {
                    Some(next) => at = next.start(),
                    None => return,
                }
            }
        }
        state = machine.next_state(Anchored::No, state, text[at]);
        at += 1;
        if machine.is_match(state) {
            for index in 0..machine.match_len(state) {
                if found(machine.match_pattern(state, index).as_usize()) {
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json_text::written_as_is;

    const LIMITS: Limits = Limits {
        int_max_str_digits: 4300,
    };

    fn nested(text: &str) -> Option<Vec<String>> {
        let bump = Bump::new();
        let value = parse_nested(text.as_bytes(), 1, LIMITS, &bump)?;
        let mut out = Vec::new();
        collect_strings(&value, 1, LIMITS, &bump, &mut out);
        Some(
            out.split(|b| *b == b'\n')
                .skip(1)
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect(),
        )
    }

    fn sorted(value: &Value<'_>) -> String {
        let mut out = Vec::new();
        write_sorted(value, &mut out);
        String::from_utf8(out).expect("UTF-8")
    }

    #[test]
    fn writes_what_json_dumps_sorted_writes() {
        let value = Value::Obj(vec![
            (b"b", Value::Arr(vec![Value::Number(b"1.5"), Value::Null])),
            (b"a", Value::Str(b"\"\\\n\r\t\x08\x0c\x01\x1f\x7f\xc3\xa9")),
            (b"", Value::Obj(vec![])),
            ("\u{e000}".as_bytes(), Value::Bool(true)),
            // A lone surrogate (U+D800) sorts between U+D7FF and U+E000, as code points do.
            (b"\xed\xa0\x80", Value::Bool(false)),
            ("\u{d7ff}".as_bytes(), Value::Arr(vec![])),
        ]);
        let mut out = Vec::new();
        write_sorted(&value, &mut out);
        assert_eq!(
            out,
            [
                &b"{\"\": {}, \"a\": \"\\\"\\\\\\n\\r\\t\\b\\f\\u0001\\u001f\x7f\xc3\xa9\", "[..],
                &b"\"b\": [1.5, null], \"\xed\x9f\xbf\": [], \"\xed\xa0\x80\": false, "[..],
                &b"\"\xee\x80\x80\": true}"[..],
            ]
            .concat()
        );
    }

    #[test]
    fn reads_strings_inside_strings_as_json_loads_does() {
        assert_eq!(
            nested(r#"{"a": NaN, "b": [Infinity, -Infinity, 1e400, -0, 0.5E-3], "c": "x"}"#),
            Some(vec!["a".into(), "b".into(), "c".into(), "x".into()])
        );
        // A repeated key: its first position, its last value.
        assert_eq!(
            nested(r#"{"k": "one", "z": 1, "k": "two"}"#),
            Some(vec!["k".into(), "two".into(), "z".into()])
        );
        let many: Vec<String> = (0..20).map(|i| format!("\"k{}\": {i}", i % 10)).collect();
        let keys = nested(&format!("{{{}}}", many.join(", "))).expect("JSON");
        assert_eq!(keys.len(), 10);
        assert_eq!(
            nested(r#"["c\u0075rl", "\/"]"#),
            Some(vec!["curl".into(), "/".into()])
        );
        // Escaped surrogates: a pair is one character, a lone one is kept as itself.
        let bump = Bump::new();
        let value = parse_nested(
            br#"["\ud83d\ude00", "\ud800x", "\udc00\ud800"]"#,
            1,
            LIMITS,
            &bump,
        );
        assert_eq!(
            value,
            Some(Value::Arr(vec![
                Value::Str("\u{1f600}".as_bytes()),
                Value::Str(b"\xed\xa0\x80x"),
                Value::Str(b"\xed\xb0\x80\xed\xa0\x80"),
            ]))
        );
        // A string holding JSON inside JSON is read again, one level deeper.
        assert_eq!(
            nested(r#"["[\"w\\u0067et\"]"]"#),
            Some(vec!["[\"w\\u0067et\"]".into(), "wget".into()])
        );
    }

    #[test]
    fn refuses_what_json_loads_refuses() {
        for text in [
            "[1,]",
            "[01]",
            "[1.]",
            "[1e]",
            "[-]",
            "[-Inf]",
            "[nul]",
            "{'a': 1}",
            "{\"a\" 1}",
            "{\"a\": 1,}",
            "[\"\\x\"]",
            "[\"\\u12\"]",
            "[\"tab\there\"]",
            "[1] x",
            "[\"open]",
            "{",
            "[",
        ] {
            assert_eq!(nested(text), None, "{text:?}");
        }
        // Whitespace: JSON's four characters only.
        assert!(nested(" \t\r\n[1] \n").is_some());
        assert!(!holds_container("\u{a0}[1]".as_bytes()));
        assert!(!holds_container("\u{feff}[1]".as_bytes()));
        assert!(!holds_container(b"\"[1]\""));
    }

    #[test]
    fn integers_longer_than_python_converts_make_the_text_no_json() {
        let digits = "1".repeat(700);
        let text = format!("[{digits}, \"x\"]");
        let bump = Bump::new();
        let read = |limit| {
            parse_nested(
                text.as_bytes(),
                1,
                Limits {
                    int_max_str_digits: limit,
                },
                &bump,
            )
        };
        assert!(read(640).is_none());
        assert!(read(700).is_some());
        assert!(read(0).is_some());
        // Floats have no such limit.
        let float = format!("[{digits}.5]");
        assert!(parse_nested(
            float.as_bytes(),
            1,
            Limits {
                int_max_str_digits: 640
            },
            &bump
        )
        .is_some());
    }

    #[test]
    fn nesting_is_bounded_without_recursion() {
        let nest = |n: usize| "[".repeat(n) + &"]".repeat(n);
        let bump = Bump::new();
        assert!(parse_nested(nest(NESTED_JSON_MAX_DEPTH).as_bytes(), 1, LIMITS, &bump).is_some());
        assert!(
            parse_nested(nest(NESTED_JSON_MAX_DEPTH + 1).as_bytes(), 1, LIMITS, &bump).is_none()
        );
        assert!(parse_nested("[".repeat(1_000_000).as_bytes(), 1, LIMITS, &bump).is_none());
        // Only the levels the walk visits are kept.
        let deep = "[".repeat(100) + "\"leaf\"" + &"]".repeat(100);
        assert_eq!(nested(&deep), Some(vec![]));
        let shallow = "[".repeat(31) + "\"leaf\"" + &"]".repeat(31);
        assert_eq!(nested(&shallow), Some(vec!["leaf".into()]));
    }

    #[test]
    fn the_walk_stops_at_its_depth() {
        // A string at level 32 is collected; at level 33 it is not.
        let mut at_32 = Value::Str(b"leaf");
        for _ in 0..32 {
            at_32 = Value::Arr(vec![at_32]);
        }
        let at_33 = Value::Arr(vec![at_32.clone()]);
        let bump = Bump::new();
        let mut out = Vec::new();
        collect_strings(&at_32, 0, LIMITS, &bump, &mut out);
        assert_eq!(out, b"\nleaf");
        out.clear();
        collect_strings(&at_33, 0, LIMITS, &bump, &mut out);
        assert_eq!(out, b"");
        // A string at level 32 holding JSON is not read again (its content would be at 33).
        let mut holder = Value::Str(b"[\"inner\"]");
        for _ in 0..32 {
            holder = Value::Arr(vec![holder]);
        }
        collect_strings(&holder, 0, LIMITS, &bump, &mut out);
        assert_eq!(out, b"\n[\"inner\"]");
    }

    #[test]
    fn long_strings_are_counted_in_characters() {
        let fits = "[\"".to_string() + &"\u{e9}".repeat(SCAN_NESTED_JSON_CHARS - 4) + "\"]";
        assert!(fits.len() > SCAN_NESTED_JSON_CHARS);
        assert!(holds_container(fits.as_bytes()));
        let too_long = "[\"".to_string() + &"\u{e9}".repeat(SCAN_NESTED_JSON_CHARS - 3) + "\"]";
        assert!(!holds_container(too_long.as_bytes()));
    }

    #[test]
    fn scan_text_is_the_json_then_the_strings() {
        let fields = Value::Obj(vec![
            (b"kind", Value::Str(b"command")),
            (
                b"arguments",
                Value::Obj(vec![(b"cmd", Value::Str(b"[\"c\\u0075rl\"]"))]),
            ),
        ]);
        let mut out = Vec::new();
        write_sorted(&fields, &mut out);
        let bump = Bump::new();
        collect_strings(&fields, 0, LIMITS, &bump, &mut out);
        assert_eq!(
            String::from_utf8(out).expect("UTF-8"),
            format!(
                "{}\nkind\ncommand\narguments\ncmd\n[\"c\\u0075rl\"]\ncurl",
                sorted(&fields)
            )
        );
        // A string handed alone is the walk's string case.
        let mut alone = Vec::new();
        collect_str(br#"["c\u0075rl"]"#, 1, LIMITS, &bump, &mut alone);
        assert_eq!(alone, b"\n[\"c\\u0075rl\"]\ncurl");
        alone.clear();
        collect_str(b"[\"x\"]", SCAN_MAX_DEPTH + 1, LIMITS, &bump, &mut alone);
        assert_eq!(alone, b"");
    }

    #[test]
    fn which_patterns_occur_within_strings_only() {
        // The no_network list: each holds a byte or a run of letters no gap holds
        // (`yarn install` is letters and a space only, but `yarn` is no gap word).
        for pattern in [
            "curl",
            "fetch(",
            "https://",
            "requests.",
            "yarn install",
            "go get",
            "k",
            "rue x",
            "\\u",
            "é",
            "",
        ] {
            assert!(within_strings(pattern.as_bytes()), "{pattern:?}");
        }
        // A quote or a line break crosses a bound; the others occur in gaps.
        for pattern in [
            "\"",
            "a\nb",
            "null",
            "ull",
            "rue",
            "nan",
            "in",
            "infinity",
            "-infinity",
            "e",
            "1e+5",
            "1.5",
            "-",
            ", ",
            ": ",
            "[]",
            "{",
            "} ",
            "true, false",
            "nan, null",
        ] {
            assert!(!within_strings(pattern.as_bytes()), "{pattern:?}");
        }
        // Every gap text a writer makes is made of gap words and gap bytes only.
        let gaps = "{}[], : 0123456789-+.e E NaN Infinity -Infinity true false null 1e+16 5e-324";
        for run in gaps.as_bytes().split(|b| !b.is_ascii_alphabetic()) {
            if !run.is_empty() {
                assert!(!within_strings(&run.to_ascii_lowercase()), "{run:?}");
            }
        }
    }

    /// Random values written as their sorted JSON and as their pieces (strings and keys
    /// between quotes, escaped, in the values' order, no punctuation): a pattern that
    /// occurs within strings only occurs in one exactly when in the other.
    #[test]
    fn patterns_within_strings_occur_in_the_pieces_as_in_the_json() {
        struct Random<'a> {
            state: u64,
            bump: &'a Bump,
        }
        impl<'a> Random<'a> {
            fn below(&mut self, n: usize) -> usize {
                self.state ^= self.state << 13;
                self.state ^= self.state >> 7;
                self.state ^= self.state << 17;
                (self.state % n as u64) as usize
            }
            fn text(&mut self) -> &'a [u8] {
                const WORDS: [&[u8]; 15] = [
                    b"curl", b"yarn", b" ", b"install", b"\\", b"\"", b"\n", b"npm", b"pm", b"x",
                    b"null", b"e", b"1", b":", b"\x01",
                ];
                let parts: Vec<u8> = (0..self.below(4))
                    .flat_map(|_| WORDS[self.below(WORDS.len())].to_vec())
                    .collect();
                self.bump.alloc_slice_copy(&parts)
            }
            fn leaf(&mut self) -> Value<'a> {
                const NUMBERS: [&[u8]; 6] =
                    [b"1", b"-0.5", b"1e+16", b"NaN", b"-Infinity", b"5e-324"];
                match self.below(5) {
                    0 => Value::Null,
                    1 => Value::Bool(self.below(2) == 0),
                    2 => Value::Number(NUMBERS[self.below(NUMBERS.len())]),
                    _ => Value::Str(self.text()),
                }
            }
        }
        fn pieces(value: &Value<'_>, out: &mut Vec<u8>) {
            match value {
                Value::Str(text) => write_string(*text, out),
                Value::Arr(items) => items.iter().for_each(|item| pieces(item, out)),
                Value::Obj(entries) => {
                    for (key, item) in entries {
                        write_string(*key, out);
                        pieces(item, out);
                    }
                }
                Value::Null | Value::Bool(_) | Value::Number(_) => {}
            }
        }
        let given = [
            "yarn install",
            "npm install",
            "curl",
            "x:",
            "\\\"",
            "pm",
            "null",
            "1e",
        ];
        let patterns = Patterns::new(&given).expect("patterns");
        let only: Vec<bool> = given.iter().map(|p| within_strings(p.as_bytes())).collect();
        assert_eq!(only, [true, true, true, true, false, true, false, false]);
        let bump = Bump::new();
        let mut random = Random {
            state: 0x2545_f491_4f6c_dd1d,
            bump: &bump,
        };
        let mut differ = 0;
        for _ in 0..3000 {
            let items: Vec<Value<'_>> = (0..random.below(5)).map(|_| random.leaf()).collect();
            let mut entries: Vec<(&[u8], Value<'_>)> = vec![(b"list", Value::Arr(items))];
            for _ in 0..random.below(5) {
                let key = random.text();
                if entries.iter().all(|(k, _)| *k != key) {
                    let leaf = random.leaf();
                    entries.push((key, leaf));
                }
            }
            let value = Value::Obj(entries);
            let mut json = Vec::new();
            write_sorted(&value, &mut json);
            let mut written = Vec::new();
            pieces(&value, &mut written);
            let (in_json, in_pieces) = (patterns.occurring(&json), patterns.occurring(&written));
            differ += usize::from(in_json != in_pieces);
            let keep = |found: Vec<usize>| -> Vec<usize> {
                found.into_iter().filter(|&i| only[i]).collect()
            };
            let shown = String::from_utf8_lossy(&json).into_owned();
            assert_eq!(keep(in_json), keep(in_pieces), "{shown}");
        }
        // The test can fail: the patterns that may occur in the JSON around the strings
        // are found in one and not the other.
        assert!(differ > 100, "{differ}");
    }

    /// Texts of every length up to 80 made of bytes each path treats apart (letters at and
    /// past the ends of `A`..`Z`, the bytes to escape, DEL, non-ASCII ones, a lone
    /// surrogate's bytes), written lower-cased: exactly what `write_string` writes then
    /// lower-cased, appended after what the buffer held, and ASCII exactly when it is.
    #[test]
    fn lowered_strings_are_the_json_strings_lower_cased() {
        const PARTS: [&[u8]; 16] = [
            b"A",
            b"Z",
            b"@",
            b"[",
            b"a",
            b"z",
            b"`",
            b"{",
            b"\"",
            b"\\",
            b"\n",
            b"\x1f",
            b"\x7f",
            "\u{c9}\u{3a3}".as_bytes(),
            b"\xed\xa0\x80",
            b"curl HTTP://",
        ];
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let mut plain = 0;
        for round in 0..20_000 {
            let len = round % 81;
            let mut text = Vec::new();
            while text.len() < len {
                // Mostly letters, so that many texts have nothing to escape.
                let part = if next(4) == 0 {
                    PARTS[next(PARTS.len())]
                } else {
                    PARTS[next(8)]
                };
                text.extend_from_slice(part);
            }
            text.truncate(len);
            let mut expected = b"kept".to_vec();
            write_string(&*text, &mut expected);
            expected.make_ascii_lowercase();
            let mut out = b"kept".to_vec();
            let ascii = write_lowered_string(&text, &mut out);
            assert_eq!(out, expected, "{text:?}");
            assert_eq!(ascii, out.is_ascii(), "{text:?}");
            plain += usize::from(expected.len() == text.len() + 6);
        }
        // Both paths were taken.
        assert!(plain > 2_000 && plain < 18_000, "{plain}");
    }

    /// The portable copy (the one other targets run; on x86-64 only below four bytes) on
    /// every byte at every offset of texts up to three words long: each byte lower-cased
    /// alone, and the bytes to escape and the non-ASCII ones seen exactly when there are any.
    #[test]
    fn the_portable_copy_lowers_and_sees_as_the_bytes_say() {
        for filler in [&b"abcdXYZ@"[..], b"[`{AZaz ", b"\xc3\xa9\xe2\x80"] {
            for len in 0..25 {
                let base: Vec<u8> = filler.iter().copied().cycle().take(len).collect();
                for at in 0..=len {
                    for b in 0..=u8::MAX {
                        let mut text = base.clone();
                        text.insert(at, b);
                        let mut into = vec![std::mem::MaybeUninit::new(0u8); text.len()];
                        let seen = copy_lowered_portable(&text, &mut into);
                        // SAFETY: every slot was initialized (with 0) when made.
                        let copied: Vec<u8> = into
                            .iter()
                            .map(|slot| unsafe { slot.assume_init() })
                            .collect();
                        assert_eq!(copied, text.to_ascii_lowercase(), "{text:?}");
                        let escapes = text.iter().any(|&b| needs_escape(b));
                        assert_eq!(seen.escapes != 0, escapes, "{text:?}");
                        assert_eq!(seen.high != 0, !text.is_ascii(), "{text:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn lines_are_matched_in_their_pieces() {
        for pattern in ["curl", "npm install", "\u{e9}", "k", "u00", ""] {
            assert!(written_as_is(pattern.as_bytes()), "{pattern:?}");
        }
        for pattern in ["\"", "\\", "a\nb", "\t", "\u{1}", "x\\n"] {
            assert!(!written_as_is(pattern.as_bytes()), "{pattern:?}");
        }
        assert!(lowers_alone(
            "plain \u{e9}\u{3c3}\u{3c2} \u{ce0}".as_bytes()
        ));
        assert!(lowers_alone(b"\xce"));
        assert!(!lowers_alone("A\u{3a3}".as_bytes()));
        assert!(!lowers_alone("\u{e9}\u{3a3}\u{e9}".as_bytes()));
        // Strings of letters and bytes to escape: whatever a pattern without such a byte
        // finds in a string's line, it finds in the string as written; the escapes' own
        // letters find more.
        let given = ["curl", "npm install", "url", "nurl", "tcurl", "u001f"];
        let patterns = Patterns::new(&given).expect("patterns");
        assert!(given.iter().all(|p| written_as_is(p.as_bytes())));
        const PARTS: [&[u8]; 8] = [
            b"cu",
            b"rl",
            b"CURL",
            b"\n",
            b"\t",
            b"\"",
            b"\x1f",
            b"pm install",
        ];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut more = 0;
        for _ in 0..5000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let line: Vec<u8> = (0..state % 6)
                .flat_map(|i| PARTS[((state >> (8 * i + 8)) % 8) as usize].to_vec())
                .collect();
            let mut piece = Vec::new();
            write_string(&*line, &mut piece);
            let (in_line, in_piece) = (patterns.occurring(&line), patterns.occurring(&piece));
            assert!(in_line.iter().all(|i| in_piece.contains(i)), "{line:?}");
            more += usize::from(in_piece.len() > in_line.len());
        }
        assert!(more > 100, "{more}");
    }

    #[test]
    fn patterns_found_once_each_in_given_order() {
        let patterns =
            Patterns::new(&["curl", "pip install", "install", "curl", "", "é"]).expect("patterns");
        assert_eq!(
            patterns.occurring(b"PIP INSTALL x; Curl"),
            vec![0, 1, 2, 3, 4]
        );
        assert_eq!(patterns.occurring("é".as_bytes()), vec![4, 5]);
        assert_eq!(patterns.occurring(b""), vec![4]);
        let mut text = b"PIP INSTALL x; Curl".to_vec();
        assert_eq!(patterns.occurring_in_place(&mut text), vec![0, 1, 2, 3, 4]);
        assert_eq!(text, b"pip install x; curl");
        // ASCII case is ignored on both sides; other letters match as given.
        let mixed = Patterns::new(&["CuRL", "É", "x-Y"]).expect("patterns");
        assert_eq!(mixed.occurring(b"cUrl X-y"), vec![0, 2]);
        assert_eq!(mixed.occurring("é É".as_bytes()), vec![1]);
        assert_eq!(mixed.occurring("é".as_bytes()), Vec::<usize>::new());
        let none = Patterns::new::<&str>(&[]).expect("patterns");
        assert_eq!(none.occurring(b"anything"), Vec::<usize>::new());
    }

    /// The `no_network` patterns (some inside others: `npm install` in `pnpm install`,
    /// `go install` in `cargo install`) against texts of their own letters in mixed case:
    /// exactly the patterns a substring test of the ASCII-lower-cased text finds.
    #[test]
    fn patterns_found_are_those_a_substring_test_finds() {
        let given = [
            "curl",
            "wget",
            "fetch(",
            "http://",
            "https://",
            "pip install",
            "npm install",
            "npm ci",
            "pnpm install",
            "pnpm add",
            "cargo add",
            "cargo install",
            "go get",
            "go install",
            "Go Install",
            "é",
            "",
        ];
        let patterns = Patterns::new(&given).expect("patterns");
        let alphabet = "pnmPNMgoGOcarCARinstalINSTAL l:/htHTé(";
        let letters: Vec<char> = alphabet.chars().collect();
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..4000 {
            let len = (next() % 200) as usize;
            let mut text: String = (0..len)
                .map(|_| letters[(next() % letters.len() as u64) as usize])
                .collect();
            if round % 3 == 0 {
                let pick = given[(next() % given.len() as u64) as usize];
                let at = text
                    .char_indices()
                    .nth(len / 2)
                    .map_or(text.len(), |(i, _)| i);
                text.insert_str(at, &pick.to_uppercase());
            }
            let lowered = text.as_bytes().to_ascii_lowercase();
            let expected: Vec<usize> = given
                .iter()
                .enumerate()
                .filter(|(_, p)| {
                    let p = p.as_bytes().to_ascii_lowercase();
                    p.is_empty() || lowered.windows(p.len()).any(|w| w == p.as_slice())
                })
                .map(|(i, _)| i)
                .collect();
            assert_eq!(patterns.occurring(text.as_bytes()), expected, "{text:?}");
        }
    }

    /// More patterns than a DFA is made for: the NFA answers the same.
    #[test]
    fn many_patterns_found_as_a_substring_test_finds() {
        let given: Vec<String> = (0..150).map(|i| format!("w{i}.")).collect();
        let patterns = Patterns::new(&given).expect("patterns");
        let text = "W7. w12 w149.w1.. W99W100.".repeat(5);
        let lowered = text.to_ascii_lowercase();
        let expected: Vec<usize> = (0..given.len())
            .filter(|&i| lowered.contains(given[i].as_str()))
            .collect();
        assert_eq!(expected, vec![1, 7, 100, 149]);
        assert_eq!(patterns.occurring(text.as_bytes()), expected);
    }

    #[test]
    fn pattern_search_is_linear() {
        // Overlapping matches everywhere: still one pass, and every pattern reported once.
        let patterns = Patterns::new(&["a", "aa", "aaa", "b"]).expect("patterns");
        let text = vec![b'a'; 1_000_000];
        assert_eq!(patterns.occurring(&text), vec![0, 1, 2]);
    }
}
