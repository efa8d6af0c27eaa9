//! The parser for well-formed documents: the values a [`Build`] makes (the tree
//! [`super::parse`] builds, or a host's own objects: the binding's `json` parser makes its
//! Python objects straight from the tokens), in one pass that scans strings sixteen bytes at
//! a time and hands every array and object over at its final size.
//!
//! Why beside serde_json: on a collector's JSON lines (attribute values that are JSON text
//! themselves, so a `\"` every few bytes) serde_json's string scan, its escape handling and
//! the growth of each container's vector were most of decoding. This parser only accepts;
//! it never words an error. Whatever it does not read plainly (any syntax error, a raw
//! control character, an unpaired surrogate, nesting past [`FAST_DEPTH`]) makes it give up
//! and the document is parsed again by serde_json, which gives the result or the located
//! error it always gave. Numbers other than plain non-negative integers and short decimal
//! fractions (whose `f64` is exact arithmetic away, [`short_decimal`]) are handed to
//! serde_json token by token, so their kinds and values (`-0`, `1e3`, integers past 64 bits
//! as floats) are serde_json's own.

use super::{Build, Flags, Refused};
#[cfg(target_arch = "x86_64")]
use crate::json_text::escape_lanes;
#[cfg(not(target_arch = "x86_64"))]
use crate::json_text::next_escape_by_word;
use crate::json_text::short_escape;
use crate::otlp_json::scalars::digits_u64;

/// Nesting this parser reads before leaving the document to serde_json (which bounds it at
/// [`super::MAX_JSON_DEPTH`] with the located message); OTLP nests about twenty levels.
const FAST_DEPTH: usize = 128;

/// The room the stacks of array items and object members take at their first use. A
/// parser is made per document (each message or tool argument text a span carries), and a
/// message document's stack of members (a message's, its part's, the part's arguments' and
/// their nested objects') reaches ten or so: growing from empty took three allocations
/// (4, 8, 16), the last two copying what was read (~20 M instructions of a data-2000 grade,
/// 56,671 documents).
const FIRST_ITEMS: usize = 8;
const FIRST_PAIRS: usize = 16;

/// Bytes compared at once while looking for the end of a string.
#[cfg(target_arch = "x86_64")]
const LANES: usize = 16;

/// `data` as text when it is UTF-8 throughout. The ASCII run it starts with (all of a
/// collector's JSON, as a rule) is checked sixty-four bytes a step, the rest by `is_ascii`
/// (words at a time: the last bytes of a body, or a protobuf string shorter than a step),
/// and `from_utf8` checks it only when it holds another byte: an ASCII byte is a whole
/// UTF-8 sequence, so the text is UTF-8 exactly when that rest is.
#[inline]
pub(super) fn utf8(data: &[u8]) -> Option<&str> {
    let ascii = ascii_prefix(data);
    let rest = &data[ascii..];
    if !rest.is_ascii() {
        std::str::from_utf8(rest).ok()?;
    }
    debug_assert!(data[..ascii].is_ascii());
    // SAFETY: `data[..ascii]` is ASCII and `data[ascii..]` was just found UTF-8.
    Some(unsafe { std::str::from_utf8_unchecked(data) })
}

/// The length of `data`'s leading whole steps of four lanes that hold ASCII only.
#[cfg(target_arch = "x86_64")]
#[inline]
fn ascii_prefix(data: &[u8]) -> usize {
    use std::arch::x86_64::{_mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128};
    const STEP: usize = 4 * LANES;
    let mut at = 0;
    while at + STEP <= data.len() {
        // SAFETY: the four unaligned 16-byte loads read `data[at..at + STEP]`, inside
        // `data`; SSE2 is part of the x86_64 target.
        let high = unsafe {
            let lane = |i: usize| _mm_loadu_si128(data.as_ptr().add(at + i * LANES).cast());
            let any = _mm_or_si128(
                _mm_or_si128(lane(0), lane(1)),
                _mm_or_si128(lane(2), lane(3)),
            );
            _mm_movemask_epi8(any)
        };
        if high != 0 {
            break;
        }
        at += STEP;
    }
    at
}

/// [`ascii_prefix`] where SSE2 is not at hand: none, `from_utf8` checks the whole body.
#[cfg(not(target_arch = "x86_64"))]
fn ascii_prefix(_data: &[u8]) -> usize {
    0
}

/// Parses `text` (a whole document) into `build`'s values or gives up with `None`; what it
/// notices goes to `flags`. A value `build` refuses makes it give up too (the builder keeps
/// its own error).
pub(super) fn parse<'a, B: Build<'a>>(text: &'a str, build: &B, flags: &Flags) -> Option<B::Value> {
    let mut parser = Parser::new(text, build, flags);
    parser.skip_ws();
    let value = parser.value(0)?;
    parser.skip_ws();
    (parser.pos == parser.bytes.len()).then_some(value)
}

pub(super) struct Parser<'a, 'c, B: Build<'a>> {
    text: &'a str,
    pub(super) bytes: &'a [u8],
    pub(super) pos: usize,
    build: &'c B,
    flags: &'c Flags,
    /// The elements of the arrays being read, innermost last (one stack for all of them,
    /// so an array is made once, at its final size: copied into the arena, or a list).
    items: Vec<B::Value>,
    /// The members of the objects being read, likewise.
    pairs: Vec<(B::Key, B::Value)>,
    /// A string with escapes, while it is unescaped (UTF-8 whenever a string is made of it).
    scratch: Vec<u8>,
}

/// The index of the first byte at or after `from` that ends the plain run of a string (its
/// closing quote, an escape, or a control character, which JSON forbids raw in a string:
/// the bytes JSON escapes, [`crate::json_text::needs_escape`]), or `bytes.len()`:
/// sixteen bytes a step with SSE2 (part of every x86-64 CPU). The first two steps are
/// inline (keys, ids of 32 hex digits, dotted attribute keys, roles end in them: ~95% of a
/// collector's strings); a string that runs past them goes on in [`string_stop_past_steps`].
/// Near the end of `bytes` the last sixteen bytes are read once ([`string_stop_tail`]),
/// not byte by byte.
#[cfg(target_arch = "x86_64")]
#[inline]
fn string_stop(bytes: &[u8], from: usize) -> usize {
    let mut at = from;
    for _ in 0..2 {
        if at + LANES > bytes.len() {
            return string_stop_tail(bytes, at);
        }
        if let Some(stop) = string_stop_in_step(bytes, at) {
            return stop;
        }
        at += LANES;
    }
    string_stop_past_steps(bytes, at)
}

/// The stop within the sixteen bytes at `at` (`at + LANES <= bytes.len()`), if any: one
/// SSE2 step of [`string_stop`] and [`string_stop_lanes`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn string_stop_in_step(bytes: &[u8], at: usize) -> Option<usize> {
    use std::arch::x86_64::_mm_loadu_si128;
    assert!(at + LANES <= bytes.len());
    // SAFETY: `at + LANES <= bytes.len()` (asserted), so the unaligned 16-byte load reads
    // inside `bytes`; SSE2 is part of the x86_64 target.
    let mask = unsafe { stops_mask(_mm_loadu_si128(bytes.as_ptr().add(at).cast())) };
    (mask != 0).then(|| at + mask.trailing_zeros() as usize)
}

/// [`string_stop`] of a string that did not end in its first thirty-two bytes: where
/// sixty-four bytes remain and the CPU has AVX2 (asked per such string; `std` keeps the
/// answer, so two loads), thirty-two and sixty-four bytes a step ([`string_stop_wide`]),
/// else sixteen a step. The long values are what the wide steps are for: parsed messages'
/// texts and tool results of hundreds of bytes, ~15 instructions per sixteen bytes with
/// SSE2, ~5 with AVX2. Going wide right after the first step cost more than it saved on
/// the decoder's strings of 17 to 32 bytes (a call and the AVX2 constants per string).
#[cfg(target_arch = "x86_64")]
#[inline(never)]
fn string_stop_past_steps(bytes: &[u8], at: usize) -> usize {
    if at + 4 * LANES <= bytes.len() && std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (just asked).
        return unsafe { string_stop_wide(bytes, at) };
    }
    string_stop_lanes(bytes, at)
}

/// [`string_stop`]'s SSE2 loop, sixteen bytes a step, then [`string_stop_tail`].
#[cfg(target_arch = "x86_64")]
#[inline]
fn string_stop_lanes(bytes: &[u8], from: usize) -> usize {
    let mut at = from;
    while at + LANES <= bytes.len() {
        if let Some(stop) = string_stop_in_step(bytes, at) {
            return stop;
        }
        at += LANES;
    }
    string_stop_tail(bytes, at)
}

/// [`string_stop`] from `from`, less than sixteen bytes before the end of `bytes`: the
/// last sixteen bytes of `bytes` read in one step, the lanes before `from` shifted out
/// (byte by byte only when `bytes` is shorter than a step).
#[cfg(target_arch = "x86_64")]
#[inline]
fn string_stop_tail(bytes: &[u8], from: usize) -> usize {
    use std::arch::x86_64::_mm_loadu_si128;
    debug_assert!(from + LANES > bytes.len());
    if from >= bytes.len() || bytes.len() < LANES {
        return string_stop_bytewise(bytes, from);
    }
    let base = bytes.len() - LANES;
    // SAFETY: `base + LANES == bytes.len()`, so the unaligned 16-byte load reads inside
    // `bytes`; SSE2 is part of the x86_64 target.
    let mask = unsafe { stops_mask(_mm_loadu_si128(bytes.as_ptr().add(base).cast())) };
    // `base < from < base + LANES`: the shift drops the lanes before `from`.
    let mask = (mask as u32) >> (from - base);
    if mask != 0 {
        from + mask.trailing_zeros() as usize
    } else {
        bytes.len()
    }
}

/// [`string_stop_past_steps`]'s loop with AVX2: one 32-byte step, then sixty-four bytes a
/// step (two 32-byte loads, their stops tested at once), then one 32-byte step, then
/// [`string_stop_lanes`].
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn string_stop_wide(bytes: &[u8], from: usize) -> usize {
    use std::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_max_epu8, _mm256_movemask_epi8,
        _mm256_or_si256, _mm256_set1_epi8,
    };
    /// Lanes of ones where a byte of the thirty-two at `at` ends a plain run.
    ///
    /// # Safety
    /// The CPU has AVX2; `at + 32 <= bytes.len()`.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn stops(bytes: &[u8], at: usize) -> __m256i {
        // SAFETY: the caller's CPU has AVX2 and the 32-byte unaligned load is inside `bytes`.
        unsafe {
            let v = _mm256_loadu_si256(bytes.as_ptr().add(at).cast());
            let below = _mm256_set1_epi8(0x1f);
            let control = _mm256_cmpeq_epi8(_mm256_max_epu8(v, below), below);
            let quote = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'"' as i8));
            let backslash = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'\\' as i8));
            _mm256_or_si256(control, _mm256_or_si256(quote, backslash))
        }
    }
    const WIDE: usize = 32;
    let mut at = from;
    // SAFETY (each call of `stops`): the CPU has AVX2 (this function's contract) and every
    // step's bytes end at or before `bytes.len()` (the loop conditions).
    unsafe {
        // One 32-byte step first: strings of 32 to 64 bytes end in it.
        if at + WIDE <= bytes.len() {
            let mask = _mm256_movemask_epi8(stops(bytes, at));
            if mask != 0 {
                return at + mask.trailing_zeros() as usize;
            }
            at += WIDE;
        }
        while at + 2 * WIDE <= bytes.len() {
            let (low, high) = (stops(bytes, at), stops(bytes, at + WIDE));
            if _mm256_movemask_epi8(_mm256_or_si256(low, high)) != 0 {
                let low = u64::from(_mm256_movemask_epi8(low) as u32);
                let high = u64::from(_mm256_movemask_epi8(high) as u32);
                return at + (low | high << 32).trailing_zeros() as usize;
            }
            at += 2 * WIDE;
        }
        if at + WIDE <= bytes.len() {
            let mask = _mm256_movemask_epi8(stops(bytes, at));
            if mask != 0 {
                return at + mask.trailing_zeros() as usize;
            }
            at += WIDE;
        }
    }
    string_stop_lanes(bytes, at)
}

/// Bit `i` set where byte `i` of `chunk` ends a string's plain run ([`escape_lanes`]).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn stops_mask(chunk: std::arch::x86_64::__m128i) -> i32 {
    use std::arch::x86_64::_mm_movemask_epi8;
    // SAFETY: this intrinsic only computes on registers, with SSE2, which the x86_64
    // target always has.
    unsafe { _mm_movemask_epi8(escape_lanes(chunk)) }
}

/// [`stops_mask`] of `chunk`, and bit `i` set where byte `i` is a backslash and byte `i + 1`
/// a quote (a `\"` wholly inside the chunk).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn stops_and_escaped_quotes(chunk: std::arch::x86_64::__m128i) -> (i32, i32) {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_movemask_epi8, _mm_set1_epi8};
    // SAFETY: these intrinsics only compute on registers, with SSE2, which the x86_64
    // target always has.
    unsafe {
        // The compares of `"` and `\\` are those `escape_lanes` makes (computed once).
        let quote = _mm_cmpeq_epi8(chunk, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(chunk, _mm_set1_epi8(b'\\' as i8));
        let stops = stops_mask(chunk);
        let quoted = _mm_movemask_epi8(backslash) & (_mm_movemask_epi8(quote) >> 1);
        (stops, quoted)
    }
}

/// [`string_stop`] where SSE2 is not at hand (aarch64 and the other release targets):
/// `json_text`'s scan eight bytes a step (which the tests run on x86-64 too).
#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn string_stop(bytes: &[u8], from: usize) -> usize {
    next_escape_by_word(bytes, from)
}

/// [`string_stop`] a byte at a time: the last bytes of the SSE2 scan, and the tests' model.
#[cfg(any(target_arch = "x86_64", test))]
fn string_stop_bytewise(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() && !crate::json_text::needs_escape(bytes[at]) {
        at += 1;
    }
    at
}

/// The string from `start` (just past its opening quote) unescaped into `out` (cleared
/// first); the index of its closing quote, or `None` where the fast parser gives up (a bad
/// escape, a raw control character, no closing quote).
///
/// Why its own loop: the strings with escapes are JSON text inside attribute values, a
/// `\"` every few bytes (three bytes between escapes, as a rule), so what each escape and
/// each run costs besides its bytes is most of the work. Here `out` is written through a
/// pointer, its room checked against plain integers and grown only by a call that is not
/// taken; a `\"` is told without the escape table; and the string's first run is scanned
/// again rather than copied by length (a byte or two as a rule, `[{` before `\"role\"`,
/// which one sixteen-byte step stores for less than a call to `memcpy`). Not generic: one
/// copy serves every builder, keys and values. About -13% of the escaped strings'
/// instructions on data-2000 (164.8 M -> 141.7 M with `escaped`'s own 3.4 M); a variant
/// that kept the length out of memory and began the run after a `\"` at its quote measured
/// no better.
///
/// Where the CPU has SSSE3 and POPCNT (asked per string; every x86-64 CPU of the last
/// fifteen years or so), a step whose stops are all `\"`s is stored packed, one shuffle
/// for all its escapes ([`Sink::run`]): 112.8 M -> 92.8 M on data-2000's decode. Where it
/// has AVX2 as well, a step first looks at thirty-two bytes and stores them at once when
/// they hold no stop (plain runs), else goes on with its first sixteen as before:
/// 92.8 M -> 80.4 M. Other CPUs and targets keep the loop below as it was.
#[inline(never)]
fn unescape_into(bytes: &[u8], start: usize, out: &mut Vec<u8>) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has AVX2 and POPCNT (just asked).
        return unsafe { unescape_into_wide(bytes, start, out) };
    }
    #[cfg(target_arch = "x86_64")]
    if packs_steps() {
        // SAFETY: the CPU has SSSE3 and POPCNT (`packs_steps` asked it).
        return unsafe { unescape_into_packing(bytes, start, out) };
    }
    unescape_with::<false, false>(bytes, start, out)
}

/// [`unescape_with`] with packed steps and plain runs thirty-two bytes a step, compiled for
/// AVX2 (which brings SSSE3) and POPCNT.
///
/// # Safety
/// The CPU has AVX2 and POPCNT.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn unescape_into_wide(bytes: &[u8], start: usize, out: &mut Vec<u8>) -> Option<usize> {
    unescape_with::<true, true>(bytes, start, out)
}

/// The stops (as [`stops_mask`]) and `\"` backslashes (as [`stops_and_escaped_quotes`]) of
/// the thirty-two bytes at `src`; when there is no stop, they are stored at `to` as well.
///
/// # Safety
/// The CPU has AVX2; `src..src + 32` may be read and `to..to + 32` written.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn wide_step(src: *const u8, to: *mut u8) -> (u32, u32) {
    use std::arch::x86_64::{
        _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_max_epu8, _mm256_movemask_epi8,
        _mm256_or_si256, _mm256_set1_epi8, _mm256_storeu_si256,
    };
    // SAFETY: the caller's CPU has AVX2, and the caller lets both ranges be used.
    unsafe {
        let v = _mm256_loadu_si256(src.cast());
        let below = _mm256_set1_epi8(0x1f);
        let control = _mm256_cmpeq_epi8(_mm256_max_epu8(v, below), below);
        let quote = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'"' as i8));
        let backslash = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'\\' as i8));
        let any = _mm256_or_si256(control, _mm256_or_si256(quote, backslash));
        let stops = _mm256_movemask_epi8(any) as u32;
        if stops == 0 {
            _mm256_storeu_si256(to.cast(), v);
            return (0, 0);
        }
        let quotes = _mm256_movemask_epi8(quote) as u32;
        (
            stops,
            _mm256_movemask_epi8(backslash) as u32 & (quotes >> 1),
        )
    }
}

/// Whether this CPU has what [`Sink::run`]'s packed steps use (SSSE3's byte shuffle and
/// POPCNT): every x86-64 CPU made since about 2008. `std` keeps the answer after the first
/// question, so asking costs two loads a string.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn packs_steps() -> bool {
    std::is_x86_feature_detected!("ssse3") && std::is_x86_feature_detected!("popcnt")
}

/// [`unescape_with`] with packed steps, compiled for SSSE3 and POPCNT.
///
/// # Safety
/// The CPU has SSSE3 and POPCNT ([`packs_steps`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3,popcnt")]
unsafe fn unescape_into_packing(bytes: &[u8], start: usize, out: &mut Vec<u8>) -> Option<usize> {
    unescape_with::<true, false>(bytes, start, out)
}

/// [`unescape_into`]'s loop; `PACK`: a step whose every stop is a `\"` is stored packed
/// ([`Sink::run`]), which only a CPU with SSSE3 and POPCNT may run.
#[inline(always)]
fn unescape_with<const PACK: bool, const WIDE: bool>(
    bytes: &[u8],
    start: usize,
    out: &mut Vec<u8>,
) -> Option<usize> {
    out.clear();
    let mut sink = Sink::new(out);
    let mut at = start;
    loop {
        // A plain run: stored sixteen bytes a step, the length moved to the stop.
        at = sink.run::<PACK, WIDE>(bytes, at);
        match bytes.get(at) {
            Some(b'\\') => {}
            Some(b'"') => {
                sink.finish();
                return Some(at);
            }
            _ => {
                sink.abandon();
                return None;
            }
        }
        // An escape: `at` is at its backslash.
        let letter = bytes.get(at + 1).copied().unwrap_or(0);
        let byte = if letter == b'"' {
            b'"'
        } else if letter == b'u' {
            match sink.unicode_escape(bytes, at + 1) {
                Some(next) => {
                    at = next;
                    continue;
                }
                None => {
                    sink.abandon();
                    return None;
                }
            }
        } else {
            match short_escape(letter) {
                Some(byte) => byte,
                None => {
                    sink.abandon();
                    return None;
                }
            }
        };
        sink.push(byte);
        at += 2;
    }
}

/// `out`'s buffer written through a pointer, its length kept here until [`Sink::finish`]
/// or [`Sink::abandon`] sets it.
struct Sink<'v> {
    out: &'v mut Vec<u8>,
    ptr: *mut u8,
    len: usize,
    cap: usize,
}

impl<'v> Sink<'v> {
    #[inline(always)]
    fn new(out: &'v mut Vec<u8>) -> Self {
        let (ptr, len, cap) = (out.as_mut_ptr(), out.len(), out.capacity());
        Sink { out, ptr, len, cap }
    }

    /// Makes room for `n` more bytes past the length.
    #[inline(always)]
    fn room(&mut self, n: usize) {
        if self.cap - self.len < n {
            self.grow(n);
        }
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, n: usize) {
        // SAFETY: the first `len` bytes were all written (by `push`, `run` and `extend`).
        unsafe { self.out.set_len(self.len) };
        self.out.reserve(n.max(64));
        self.ptr = self.out.as_mut_ptr();
        self.cap = self.out.capacity();
    }

    #[inline(always)]
    fn push(&mut self, byte: u8) {
        self.room(1);
        // SAFETY: `room` made `len < cap`.
        unsafe { self.ptr.add(self.len).write(byte) };
        self.len += 1;
    }

    fn extend(&mut self, bytes: &[u8]) {
        self.room(bytes.len());
        // SAFETY: `room` made `len + bytes.len() <= cap`; `bytes` is not `out`'s buffer
        // (`out` is only written through this sink).
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.ptr.add(self.len), bytes.len());
        }
        self.len += bytes.len();
    }

    /// Appends the plain run of a string from `from` and returns where it stops (as
    /// [`string_stop`]): each sixteen-byte step is stored whole as it is scanned and the
    /// length moved to the stop, so a run costs one pass over its bytes and no call. A
    /// `\"` met in a step is unescaped here and the run goes on past it: nearly every
    /// escape in data-2000's strings is one (2.0 M of 2.0 M, three bytes apart as a rule),
    /// and the way out to [`unescape_into`]'s dispatch and back cost about seven
    /// instructions each (its instructions on data-2000's decode 138.3 M -> 125.1 M).
    ///
    /// Every `\"` of a step is taken from the step's masks (a backslash whose next byte is
    /// a quote): after one, the bytes that follow it are stored again, one place back, and
    /// the step is not scanned again; the sink's pointer, length and capacity stay in
    /// locals (registers) through the steps, where `self`'s were read and written at each
    /// step. Both together: 125.1 M -> 112.8 M on data-2000's decode (2.6 M steps, 1.9 M
    /// escapes); the masks alone measured no better (a step scanned again cost about what
    /// the bookkeeping of the escapes within one step costs).
    ///
    /// `PACK` (a CPU with SSSE3 and POPCNT): a step whose every stop is the backslash or
    /// the quote of a `\"` wholly inside it (most steps with an escape: data-2000's
    /// escaped strings have 885 k such steps of 2.6 M, two or three escapes each) is
    /// stored at once without its backslashes ([`store_without`]), whatever their number.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn run<const PACK: bool, const WIDE: bool>(&mut self, bytes: &[u8], from: usize) -> usize {
        use std::arch::x86_64::{_mm_loadu_si128, _mm_storeu_si128};
        // The sink's fields in locals, written back at the end and around `grow`: kept in
        // registers through the steps, where `self`'s would be read and written each step.
        // A step needs room for itself and for the store after its last escape, which
        // starts at most `LANES` bytes further on.
        let (mut ptr, mut len, mut cap) = (self.ptr, self.len, self.cap);
        let mut at = from;
        'steps: while at + LANES <= bytes.len() {
            if len + 2 * LANES > cap {
                self.len = len;
                self.grow(2 * LANES);
                (ptr, cap) = (self.ptr, self.cap);
            }
            let (mut mask, quoted, chunk);
            if WIDE && at + 2 * LANES <= bytes.len() {
                // SAFETY: `WIDE` is only set where the CPU has AVX2 (`unescape_into_wide`);
                // the step reads `bytes[at..at + 2 * LANES]`, inside `bytes`, and writes
                // `2 * LANES` bytes from `len`, inside the room made.
                let (stops, wide_quoted) =
                    unsafe { wide_step(bytes.as_ptr().add(at), ptr.add(len)) };
                if stops == 0 {
                    len += 2 * LANES;
                    at += 2 * LANES;
                    continue;
                }
                // The first sixteen bytes taken as a step of their own: their masks are
                // the low halves, but for a `\"` across their end (no escape of theirs).
                mask = (stops & 0xffff) as i32;
                quoted = (wide_quoted & 0x7fff) as i32;
                // SAFETY: the load reads `bytes[at..at + LANES]`, inside `bytes`.
                chunk = unsafe { _mm_loadu_si128(bytes.as_ptr().add(at).cast()) };
            } else {
                // SAFETY: the load reads `bytes[at..at + LANES]`, inside `bytes`.
                chunk = unsafe { _mm_loadu_si128(bytes.as_ptr().add(at).cast()) };
                (mask, quoted) = stops_and_escaped_quotes(chunk);
            }
            if mask == 0 {
                // SAFETY: the store writes `LANES` bytes from `len`, inside the room made.
                unsafe { _mm_storeu_si128(ptr.add(len).cast(), chunk) };
                len += LANES;
                at += LANES;
                continue;
            }
            if PACK && mask == quoted | (quoted << 1) {
                // Every stop is a `\"`'s backslash or quote (a backslash in the step's
                // last byte is no `quoted` bit, so the step holds each escape whole, and
                // none of these backslashes is itself escaped: a step begins outside an
                // escape). SAFETY: `PACK` is only set where the CPU has SSSE3 and POPCNT
                // (`unescape_into_packing`); the stores write `LANES` bytes from `len`,
                // inside the room made.
                len += unsafe { store_without(chunk, quoted, ptr.add(len)) };
                at += LANES;
                continue;
            }
            // SAFETY: as the plain step's store.
            unsafe { _mm_storeu_si128(ptr.add(len).cast(), chunk) };
            // `bytes[src..at + LANES]` are stored from `len` on.
            let mut src = at;
            loop {
                let taken = mask.trailing_zeros() as usize;
                let stop = at + taken;
                if quoted & (1 << taken) == 0 {
                    // Another stop (or a backslash in the step's last byte): the caller's.
                    self.len = len + (stop - src);
                    return stop;
                }
                // A `\"`, most escapes (JSON text inside a string): its quote written over
                // the backslash and the bytes after it stored again from the byte after.
                len += stop - src;
                // SAFETY: `len` grew by `stop - src < LANES` in this step: inside the room.
                unsafe { ptr.add(len).write(b'"') };
                len += 1;
                src = stop + 2;
                // Both bits of the escape: `taken < LANES - 1`, `quoted`'s bit said so.
                mask ^= 3 << taken;
                if src + LANES > bytes.len() {
                    // Too near the end to load a step from `src`: scanned again from there.
                    at = src;
                    continue 'steps;
                }
                // SAFETY: the load reads `bytes[src..src + LANES]`, inside `bytes` (just
                // checked); the store writes `LANES` bytes from `len`, which grew by less
                // than `src - at <= LANES` in this step, inside the `2 * LANES` of room.
                unsafe {
                    let chunk = _mm_loadu_si128(bytes.as_ptr().add(src).cast());
                    _mm_storeu_si128(ptr.add(len).cast(), chunk);
                }
                if mask == 0 {
                    break;
                }
            }
            // `src <= at + LANES`: an escape's quote is inside the step.
            len += at + LANES - src;
            at += LANES;
        }
        self.len = len;
        let stop = string_stop_bytewise(bytes, at);
        self.extend(&bytes[at..stop]);
        stop
    }

    /// [`Sink::run`] where SSE2 is not at hand: the stop found, then the run copied (no
    /// packed steps: `PACK` is never set).
    #[cfg(not(target_arch = "x86_64"))]
    #[inline]
    fn run<const PACK: bool, const WIDE: bool>(&mut self, bytes: &[u8], from: usize) -> usize {
        let stop = string_stop(bytes, from);
        self.extend(&bytes[from..stop]);
        stop
    }

    /// A `\uXXXX` escape (a surrogate pair with the one after it) whose `u` is at `at`,
    /// appended; the index after it.
    #[inline(never)]
    fn unicode_escape(&mut self, bytes: &[u8], at: usize) -> Option<usize> {
        let unit = hex4(bytes, at + 1)?;
        let (c, next) = match unit {
            0xD800..=0xDBFF => {
                // A surrogate pair; an unpaired one is serde_json's to judge.
                if bytes.get(at + 5..at + 7)? != b"\\u" {
                    return None;
                }
                let low = hex4(bytes, at + 7)?;
                if !(0xDC00..=0xDFFF).contains(&low) {
                    return None;
                }
                let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                (char::from_u32(code)?, at + 11)
            }
            _ => (char::from_u32(unit)?, at + 5),
        };
        self.extend(c.encode_utf8(&mut [0; 4]).as_bytes());
        Some(next)
    }

    /// Sets `out`'s length to what was written.
    #[inline(always)]
    fn finish(self) {
        // SAFETY: the first `len` bytes were all written, within the capacity.
        unsafe { self.out.set_len(self.len) };
    }

    /// Leaves `out` empty (the parser gives up on the document).
    #[inline(always)]
    fn abandon(self) {
        self.out.clear();
    }
}

/// For each byte `keep` of eight bits, the shuffle that packs the bytes of an eight-byte
/// half whose bits are set to its front: their indices in order, then `0x80` (a zero byte).
#[cfg(target_arch = "x86_64")]
const PACK_SHUFFLES: [u64; 256] = {
    let mut table = [0u64; 256];
    let mut keep = 0;
    while keep < 256 {
        let mut shuffle = u64::MAX / 0xff * 0x80;
        let (mut from, mut to) = (0, 0);
        while from < 8 {
            if keep >> from & 1 == 1 {
                shuffle = shuffle & !(0xff << (8 * to)) | (from as u64) << (8 * to);
                to += 1;
            }
            from += 1;
        }
        table[keep] = shuffle;
        keep += 1;
    }
    table
};

/// Stores `chunk` at `to` without the bytes whose bits `drop` sets (sixteen bits), the
/// others packed in order; the number stored. Each eight-byte half is packed by one
/// shuffle from [`PACK_SHUFFLES`], the low half stored first and the high half after its
/// kept bytes. Writes sixteen bytes from `to` whatever it keeps.
///
/// # Safety
/// The CPU has SSSE3 and POPCNT; `to..to + 16` may be written.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3,popcnt")]
#[inline]
unsafe fn store_without(chunk: std::arch::x86_64::__m128i, drop: i32, to: *mut u8) -> usize {
    use std::arch::x86_64::{
        _mm_set_epi64x, _mm_shuffle_epi8, _mm_srli_si128, _mm_storel_epi64, _mm_storeu_si128,
    };
    let keep = !drop as u32 & 0xffff;
    let (low, high) = ((keep & 0xff) as usize, (keep >> 8) as usize);
    // SAFETY: the caller's CPU has SSSE3 (the shuffle) and lets `to..to + 16` be written;
    // the second store starts at most eight bytes in and writes eight.
    unsafe {
        // The high half's indices are 8 to 15: `0x80` plus 8 still makes a zero byte.
        let shuffle = _mm_set_epi64x(
            (PACK_SHUFFLES[high] + u64::MAX / 0xff * 8) as i64,
            PACK_SHUFFLES[low] as i64,
        );
        let packed = _mm_shuffle_epi8(chunk, shuffle);
        _mm_storeu_si128(to.cast(), packed);
        _mm_storel_epi64(
            to.add(low.count_ones() as usize).cast(),
            _mm_srli_si128(packed, 8),
        );
    }
    keep.count_ones() as usize
}

/// The four hex digits at `at` as a number.
fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
    let digits = bytes.get(at..at + 4)?;
    digits.iter().try_fold(0u32, |acc, &b| {
        let digit = char::from(b).to_digit(16)?;
        Some(acc * 16 + digit)
    })
}

impl<'a, 'c, B: Build<'a>> Parser<'a, 'c, B> {
    /// A parser at the start of `text`.
    pub(super) fn new(text: &'a str, build: &'c B, flags: &'c Flags) -> Self {
        Parser {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            build,
            flags,
            items: Vec::new(),
            pairs: Vec::new(),
            scratch: Vec::new(),
        }
    }

    #[inline]
    pub(super) fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// Past whitespace: the compact bodies exporters write have none, and pay one compare.
    #[inline]
    pub(super) fn skip_ws(&mut self) {
        if let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.pos = skip_ws_run(self.bytes, self.pos);
        }
    }

    /// One value. Strings, most of the values, are read in the caller's own loop; the
    /// containers and the rarer scalars are calls, so the recursion costs one frame per
    /// array or object rather than one per value.
    #[inline(always)]
    pub(super) fn value(&mut self, depth: usize) -> Option<B::Value> {
        match self.peek()? {
            b'"' => {
                self.pos += 1;
                self.string(B::borrowed_str, B::str)
            }
            b'{' => self.object(depth),
            b'[' => self.array(depth),
            _ => self.scalar(),
        }
    }

    /// A literal or a number.
    #[inline(never)]
    fn scalar(&mut self) -> Option<B::Value> {
        let made = match self.peek()? {
            b't' => self.literal("true").then(|| self.build.bool(true)),
            b'f' => self.literal("false").then(|| self.build.bool(false)),
            b'n' => self.literal("null").then(|| self.build.null()),
            b'-' | b'0'..=b'9' => return self.number(),
            _ => None,
        };
        made?.ok()
    }

    /// Whether `word` is next (then read).
    fn literal(&mut self, word: &str) -> bool {
        let end = self.pos + word.len();
        let found = self.bytes.get(self.pos..end) == Some(word.as_bytes());
        if found {
            self.pos = end;
        }
        found
    }

    #[inline(never)]
    fn array(&mut self, depth: usize) -> Option<B::Value> {
        if depth >= FAST_DEPTH {
            return None;
        }
        self.pos += 1;
        self.skip_ws();
        if self.items.capacity() == 0 {
            self.items.reserve(FIRST_ITEMS);
        }
        let start = self.items.len();
        if self.peek()? != b']' {
            loop {
                let item = self.value(depth + 1)?;
                self.items.push(item);
                self.skip_ws();
                match self.peek()? {
                    b',' => {
                        self.pos += 1;
                        self.skip_ws();
                    }
                    b']' => break,
                    _ => return None,
                }
            }
        }
        self.pos += 1;
        self.build.array(&mut self.items, start).ok()
    }

    #[inline(never)]
    fn object(&mut self, depth: usize) -> Option<B::Value> {
        if depth >= FAST_DEPTH {
            return None;
        }
        self.pos += 1;
        self.skip_ws();
        if self.pairs.capacity() == 0 {
            self.pairs.reserve(FIRST_PAIRS);
        }
        let start = self.pairs.len();
        if self.peek()? != b'}' {
            loop {
                if self.peek()? != b'"' {
                    return None;
                }
                self.pos += 1;
                let key = self.string(B::borrowed_key, B::key)?;
                self.skip_ws();
                if self.peek()? != b':' {
                    return None;
                }
                self.pos += 1;
                self.skip_ws();
                let value = self.value(depth + 1)?;
                self.pairs.push((key, value));
                self.skip_ws();
                match self.peek()? {
                    b',' => {
                        self.pos += 1;
                        self.skip_ws();
                    }
                    b'}' => break,
                    _ => return None,
                }
            }
        }
        self.pos += 1;
        self.build.object(&mut self.pairs, start).ok()
    }

    /// The string whose opening quote was just read, made by `borrowed` from the text when
    /// it holds no escape, else by `owned` from its unescaped copy (`B`'s methods for a value
    /// or for a key). The builder is called here and in [`Parser::escaped`], not by the
    /// callers, so that the containers' loops carry no second test of how it was read.
    #[inline(always)]
    pub(super) fn string<T>(
        &mut self,
        borrowed: impl FnOnce(&B, &'a str) -> Result<T, Refused>,
        owned: impl FnOnce(&B, &str) -> Result<T, Refused>,
    ) -> Option<T> {
        let start = self.pos;
        let stop = string_stop(self.bytes, start);
        match self.bytes.get(stop)? {
            b'"' => {
                self.pos = stop + 1;
                debug_assert!(
                    self.text.is_char_boundary(start) && self.text.is_char_boundary(stop)
                );
                // SAFETY: `start` follows the ASCII opening quote and `stop` is the ASCII
                // closing one (in bounds: it was just read), so both are char boundaries of
                // `text` and the slice is UTF-8; `get` would check both again per string.
                borrowed(self.build, unsafe { self.text.get_unchecked(start..stop) }).ok()
            }
            b'\\' => self.escaped(start, owned),
            _ => None,
        }
    }

    /// A string from `start` (past its opening quote) that holds an escape, unescaped in
    /// `scratch` by [`unescape_into`] and made by `owned` from there (the tree copies it into
    /// the arena at its final length).
    #[inline(never)]
    fn escaped<T>(
        &mut self,
        start: usize,
        owned: impl FnOnce(&B, &str) -> Result<T, Refused>,
    ) -> Option<T> {
        let mut out = std::mem::take(&mut self.scratch);
        let made = unescape_into(self.bytes, start, &mut out).and_then(|end| {
            self.pos = end + 1;
            // SAFETY: `out` holds runs of `text` that begin and end at ASCII bytes (char
            // boundaries, so whole UTF-8 sequences) and escapes written as ASCII bytes or
            // as a `char`'s UTF-8 encoding: it is UTF-8 throughout.
            let unescaped = unsafe { std::str::from_utf8_unchecked(&out) };
            owned(self.build, unescaped).ok()
        });
        self.scratch = out;
        made
    }

    /// A number: plain non-negative integers of up to 19 digits and short decimal fractions
    /// ([`short_decimal`]) here, the rest (other signed numbers, exponents, longer ones,
    /// malformed ones) by serde_json on the token.
    #[inline(never)]
    fn number(&mut self) -> Option<B::Value> {
        let start = self.pos;
        let mut end = start;
        while let Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') = self.bytes.get(end) {
            end += 1;
        }
        self.pos = end;
        let token = &self.bytes[start..end];
        if token.first() != Some(&b'0') || token.len() == 1 {
            if let Some(n) = digits_u64(token) {
                return self.build.u64(n).ok();
            }
        }
        if let Some(x) = short_decimal(token) {
            if x == 0.0 && x.is_sign_negative() {
                self.flags.negative_zero.set(true);
            }
            return self.build.f64(x).ok();
        }
        // serde_json's own number reading (its `Value` would hold the same), kept apart
        // from the tree-building `Seed` so that one's frames stay as small as before.
        let number: serde_json::Number = serde_json::from_str(self.text.get(start..end)?).ok()?;
        let made = if let Some(n) = number.as_u64() {
            self.build.u64(n)
        } else if let Some(n) = number.as_i64() {
            self.build.i64(n)
        } else {
            let x = number.as_f64()?;
            if x == 0.0 && x.is_sign_negative() {
                self.flags.negative_zero.set(true);
            }
            self.build.f64(x)
        };
        made.ok()
    }
}

/// Powers of ten up to 10^15, each exact as an `f64` (every power up to 10^22 is).
const POW10: [f64; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];

/// Digits a [`short_decimal`] may hold: their value stays below 10^15 < 2^53, exact as an
/// `f64`.
const SHORT_DECIMAL_DIGITS: usize = 15;

/// The token when it is a JSON decimal fraction without exponent, `-?(0|[1-9][0-9]*)\.[0-9]+`,
/// of at most [`SHORT_DECIMAL_DIGITS`] digits, as the `f64` nearest its value; `None` for any
/// other token (serde_json reads it).
///
/// Why: these are nearly all the fractions in model content (scores, probabilities:
/// 51,330 in data-2000's tool results), and serde_json's reading of a lone token (a
/// deserializer set up, the number read through `Number`) cost ~230 instructions each. Its
/// value is the same: the digits as an integer `m < 2^53` and the divisor `10^k` (`k <= 15`)
/// are both exact `f64`s, so `m / 10^k` is their quotient correctly rounded (IEEE 754
/// division), which is the nearest `f64` to the decimal, what serde_json's
/// `float_roundtrip` reading (correctly rounded) gives too; the sign is applied after, as
/// serde_json does (`-0.0` stays negative).
fn short_decimal(token: &[u8]) -> Option<f64> {
    let (negative, unsigned) = match token.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, token),
    };
    // The digits and one dot: no more than the digits allowed, so the value cannot overflow.
    if unsigned.len() > SHORT_DECIMAL_DIGITS + 1 {
        return None;
    }
    let mut significand = 0u64;
    let mut dot = None;
    for (at, &b) in unsigned.iter().enumerate() {
        let digit = b.wrapping_sub(b'0');
        if digit < 10 {
            significand = significand * 10 + u64::from(digit);
        } else if b == b'.' && dot.is_none() {
            dot = Some(at);
        } else {
            return None;
        }
    }
    let whole = dot?;
    let fraction = unsigned.len() - whole - 1;
    if whole == 0 || fraction == 0 || (unsigned[0] == b'0' && whole > 1) {
        return None;
    }
    let x = significand as f64 / POW10[fraction];
    Some(if negative { -x } else { x })
}

/// The position of the first byte at or past `pos` that is not JSON whitespace.
///
/// Why: pretty-printed bodies (indented JSON, as most captured files are) are half
/// indentation, a newline and a run of spaces before nearly every token; read a byte at a
/// time, skipping it cost more than reading the tokens. Sixteen bytes are classified at a
/// step with SSE2 (a newline and an indentation of up to fifteen spaces in one step; eight
/// spaces a step, the newline apart, took ~280 M instructions on the pretty-printed
/// data-2000), eight spaces a step in a `u64` where SSE2 is not at hand.
#[inline(never)]
pub(super) fn skip_ws_run(bytes: &[u8], pos: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        skip_ws_lanes(bytes, pos)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        skip_ws_words(bytes, pos)
    }
}

/// [`skip_ws_run`] sixteen bytes a step: a mask of the bytes that are whitespace, the first
/// clear bit the end of the run; the last few bytes one by one.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn skip_ws_lanes(bytes: &[u8], mut pos: usize) -> usize {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    while pos + LANES <= bytes.len() {
        // SAFETY: `pos + LANES <= bytes.len()`, so the unaligned 16-byte load reads inside
        // `bytes`; the rest only computes on registers, with SSE2, which the x86_64 target
        // always has.
        let blank = unsafe {
            let chunk = _mm_loadu_si128(bytes.as_ptr().add(pos).cast());
            let is = |b: u8| _mm_cmpeq_epi8(chunk, _mm_set1_epi8(b as i8));
            let spaces = _mm_or_si128(is(b' '), is(b'\n'));
            let others = _mm_or_si128(is(b'\r'), is(b'\t'));
            _mm_movemask_epi8(_mm_or_si128(spaces, others))
        };
        let other = !blank & 0xffff;
        if other != 0 {
            return pos + other.trailing_zeros() as usize;
        }
        pos += LANES;
    }
    skip_ws_bytewise(bytes, pos)
}

/// [`skip_ws_run`] where SSE2 is not at hand: runs of spaces eight bytes a step in a `u64`,
/// other whitespace one byte at a time. Compiled on every target so the tests run it on
/// x86-64 too, where SSE2 is used instead.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn skip_ws_words(bytes: &[u8], mut pos: usize) -> usize {
    const SPACES: u64 = u64::from_le_bytes([b' '; 8]);
    loop {
        while let Some(chunk) = bytes.get(pos..pos + 8) {
            let mut word = [0; 8];
            word.copy_from_slice(chunk);
            let other = u64::from_le_bytes(word) ^ SPACES;
            if other != 0 {
                // The first byte that is not a space (little-endian: the lowest set byte).
                pos += (other.trailing_zeros() / 8) as usize;
                break;
            }
            pos += 8;
        }
        match bytes.get(pos) {
            Some(b' ' | b'\n' | b'\r' | b'\t') => pos += 1,
            _ => return pos,
        }
    }
}

#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn skip_ws_bytewise(bytes: &[u8], mut pos: usize) -> usize {
    while let Some(b' ' | b'\n' | b'\r' | b'\t') = bytes.get(pos) {
        pos += 1;
    }
    pos
}

#[cfg(test)]
mod tests {
    use super::super::{parse_from, Flags, Tree, J};
    use bumpalo::Bump;

    /// The fast parser's tree, or `None` when it gives up.
    fn fast(text: &str) -> Option<(J<'_>, bool)> {
        let bump = Box::leak(Box::new(Bump::new()));
        let flags = Flags::default();
        super::parse(text, &Tree { bump }, &flags).map(|value| (value, flags.negative_zero.get()))
    }

    /// serde_json's tree of the same text, as `parse` gave it before this parser.
    fn serde(text: &str) -> (J<'_>, bool) {
        let bump = Box::leak(Box::new(Bump::new()));
        let flags = Flags::default();
        let de = serde_json::Deserializer::from_str(text);
        let value = parse_from(de, text.as_bytes(), &flags, &Tree { bump }).expect("valid JSON");
        (value, flags.negative_zero.get())
    }

    #[test]
    fn well_formed_documents_read_as_serde_json_reads_them() {
        let long_plain = "x".repeat(100);
        let long_escaped = "ab\\\"cd".repeat(40);
        let documents = [
            r#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"5b8efff798038103d269b633813fc60c","kind":2,"attributes":[{"key":"k","value":{"doubleValue":0.25}}]}]}]}]}"#.to_string(),
            " \t\r\n{ \"a\" : [ 1 , 2.5 , -3 , -0 , -0.0 , 1e3 , 18446744073709551615 , 18446744073709551616 , 0 ] } \n".to_string(),
            r#"[true,false,null,"",{},[],{"a":{"b":[[]]}}]"#.to_string(),
            r#"{"a":1,"b":2,"a":3}"#.to_string(),
            r#"["\"\\\/\b\f\n\r\t","\u00e9\u0000","\ud83d\ude00 x","é ü 漢字 \u6f22","[{\"role\":\"user\"}]"]"#.to_string(),
            format!(r#"["{long_plain}","{long_escaped}","{long_plain}\n{long_plain}"]"#),
            format!(r#"{{"{long_escaped}":"{long_plain}"}}"#),
            "12345678901234567890".to_string(),
            "\"short\"".to_string(),
        ];
        for text in &documents {
            let got = fast(text).unwrap_or_else(|| panic!("gave up on {text}"));
            assert_eq!(got, serde(text), "{text}");
        }
    }

    #[test]
    fn escapes_read_as_serde_json_reads_them_at_every_offset() {
        // Every escape, alone and in pairs, at every offset of the first steps and in the
        // last few bytes of the document (read byte by byte there), as a value and a key.
        let escapes = [
            "\\\"",
            "\\\\",
            "\\/",
            "\\n",
            "\\t",
            "\\b",
            "\\u00e9",
            "\\ud83d\\ude00",
            "\\\\\\\"",
            "\\\"\\\"",
            "\\\\\\\\",
        ];
        for escape in escapes {
            for before in 0..36 {
                for after in [0, 1, 15, 16, 17, 40] {
                    let text = format!("{}{escape}{}", "a".repeat(before), "b".repeat(after));
                    for document in [
                        format!("[\"{text}\"]"),
                        format!("\"{text}\""),
                        format!("{{\"{text}\":\"{text}{escape}\"}}"),
                    ] {
                        let got =
                            fast(&document).unwrap_or_else(|| panic!("gave up on {document}"));
                        assert_eq!(got, serde(&document), "{document}");
                    }
                }
            }
        }
        // A string longer than the scratch buffer's first growth, escapes throughout.
        let long = format!("[\"{}\"]", "ab\\\"cd\\\\".repeat(500));
        assert_eq!(fast(&long).unwrap(), serde(&long));
    }

    /// A fixed generator of numbers below the `n` asked (xorshift from `seed`).
    fn draws(seed: u64) -> impl FnMut(usize) -> usize {
        let mut state = seed;
        move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        }
    }

    #[test]
    fn strings_dense_with_escapes_read_as_serde_json_reads_them() {
        // Several escapes in one step, a `\"` across a step's end, escapes a step apart,
        // and the last step near the end of the document: pieces drawn by a fixed
        // generator, every mix of `\"` with other escapes and plain runs of 0 to 17 bytes.
        let pieces = [
            "\\\"",
            "\\\"",
            "\\\"",
            "\\\\",
            "\\n",
            "\\u00e9",
            "a",
            "bc",
            "defghij",
            "0123456789abcdefg",
            "é",
            "\\\\\\\"",
        ];
        let mut next = draws(0x2545_f491_4f6c_dd1d);
        for _ in 0..3000 {
            let count = next(40);
            let text: String = (0..count).map(|_| pieces[next(pieces.len())]).collect();
            let tail = " ".repeat(next(20));
            for document in [format!("[\"{text}\"{tail}]"), format!("\"{text}\"")] {
                let got = fast(&document).unwrap_or_else(|| panic!("gave up on {document}"));
                assert_eq!(got, serde(&document), "{document}");
            }
        }
    }

    #[test]
    fn packed_steps_unescape_as_the_step_by_escape_loop_does() {
        // Strings of `\"`s among plain bytes and the escapes a packed step must leave to
        // the loop (`\\`, `\n`, a `\"` across a step's end, a backslash escaped before a
        // quote), at every offset of a step: both loops (the packed one where this CPU
        // has SSSE3 and POPCNT) give serde_json's string and end at the closing quote.
        let pieces = [
            "\\\"",
            "\\\"",
            "\\\"",
            "\\\"",
            "a",
            "bcd",
            "\\\\",
            "\\n",
            "\\\\\\\"",
            "0123456789abcdefghijklmnopqrstuvwxyz0123",
        ];
        let mut next = draws(0x9e37_79b9_7f4a_7c15);
        for _ in 0..4000 {
            let count = next(30);
            let lead = "x".repeat(next(17));
            let text: String = (0..count).map(|_| pieces[next(pieces.len())]).collect();
            let document = format!("\"{lead}{text}\"{}", " ".repeat(next(20)));
            let expect: String = serde_json::from_str(document.trim_end()).expect("a string");
            let end = lead.len() + text.len() + 1;
            let mut out = Vec::new();
            assert_eq!(
                super::unescape_with::<false, false>(document.as_bytes(), 1, &mut out),
                Some(end)
            );
            assert_eq!(out, expect.as_bytes(), "{document}");
            #[cfg(target_arch = "x86_64")]
            if super::packs_steps() {
                out.clear();
                // SAFETY: `packs_steps` found SSSE3 and POPCNT.
                let got = unsafe { super::unescape_into_packing(document.as_bytes(), 1, &mut out) };
                assert_eq!(got, Some(end));
                assert_eq!(out, expect.as_bytes(), "{document}");
            }
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("popcnt") {
                out.clear();
                // SAFETY: the CPU has AVX2 and POPCNT (just asked).
                let got = unsafe { super::unescape_into_wide(document.as_bytes(), 1, &mut out) };
                assert_eq!(got, Some(end));
                assert_eq!(out, expect.as_bytes(), "{document}");
            }
        }
    }

    #[test]
    fn store_without_packs_every_drop_mask() {
        // Each of the 65,536 masks of bytes left out of a step: the bytes kept, in order.
        #[cfg(target_arch = "x86_64")]
        if super::packs_steps() {
            use std::arch::x86_64::_mm_loadu_si128;
            let bytes: Vec<u8> = (b'a'..b'a' + 16).collect();
            for drop in 0..=0xffff_i32 {
                let mut out = [0u8; 16];
                // SAFETY: `packs_steps` found SSSE3 and POPCNT; the load reads the sixteen
                // bytes of `bytes`, the stores the sixteen of `out`.
                let kept = unsafe {
                    let chunk = _mm_loadu_si128(bytes.as_ptr().cast());
                    super::store_without(chunk, drop, out.as_mut_ptr())
                };
                let expect: Vec<u8> = (0..16)
                    .filter(|i| drop >> i & 1 == 0)
                    .map(|i| bytes[i])
                    .collect();
                assert_eq!(&out[..kept], &expect[..], "{drop:#x}");
            }
        }
    }

    #[test]
    fn decimal_fractions_read_as_serde_json_reads_them() {
        // Whole and fraction parts of every length up to the short path's limit and past
        // it, digits drawn by a fixed generator (runs of nines and zeros among them), both
        // signs; then tokens near the short path's grammar that it must leave to serde_json.
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let mut tokens = vec![
            "0.0".to_string(),
            "-0.0".to_string(),
            "-0.000".to_string(),
            "0.1".to_string(),
            "0.30000000000000004".to_string(),
            "9007199254740993.0".to_string(),
            "999999999999999.9".to_string(),
            "0.000000000000001".to_string(),
            "1.5e3".to_string(),
            "-2.5E-3".to_string(),
        ];
        for whole in 1..=17 {
            for fraction in 1..=18 {
                for _ in 0..40 {
                    let sign = if next(2) == 0 { "-" } else { "" };
                    let style = next(4);
                    let mut digit = || match style {
                        0 => 9,
                        1 => 0,
                        _ => next(10),
                    };
                    let mut text: String = sign.to_string();
                    for at in 0..whole + fraction {
                        if at == whole {
                            text.push('.');
                        }
                        let d = match digit() {
                            // A whole part of several digits starts with one of 1 to 9.
                            0 if at == 0 && whole > 1 => 1,
                            d => d,
                        };
                        text.push(char::from(b'0' + d as u8));
                    }
                    tokens.push(text);
                }
            }
        }
        for token in &tokens {
            let document = format!("[{token},{{\"x\":{token}}}]");
            let (got, got_zero) = fast(&document).unwrap_or_else(|| panic!("gave up on {token}"));
            let (want, want_zero) = serde(&document);
            let first = |tree: &J<'_>| match tree {
                J::Arr(items) => match items[0] {
                    J::F64(x) => Some(x.to_bits()),
                    _ => None,
                },
                _ => None,
            };
            assert_eq!(first(&got), first(&want), "{token}");
            assert!(first(&got).is_some(), "{token}");
            assert_eq!((got, got_zero), (want, want_zero), "{token}");
        }
        for token in [
            "01.5", "1.", ".5", "-.5", "1..5", "1.5.", "--1.5", "+1.5", "1.5-",
        ] {
            assert_eq!(super::short_decimal(token.as_bytes()), None, "{token}");
            assert_eq!(fast(&format!("[{token}]")), None, "{token}");
        }
    }

    #[test]
    fn plain_strings_borrow_and_escaped_ones_do_not() {
        let text = r#"["plain text of some length","esc\"aped"]"#;
        let (J::Arr(items), _) = fast(text).unwrap() else {
            panic!("array expected")
        };
        let inside = |s: &str| text.as_bytes().as_ptr_range().contains(&s.as_ptr());
        assert!(matches!(items[0], J::Str(s) if inside(s)));
        assert!(matches!(items[1], J::Str(s) if s == "esc\"aped" && !inside(s)));
    }

    #[test]
    fn what_it_does_not_read_plainly_is_left_to_serde_json() {
        let deep = "[".repeat(super::FAST_DEPTH + 1) + &"]".repeat(super::FAST_DEPTH + 1);
        let give_up = [
            "",
            "{",
            "[1,]",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "{1:2}",
            "01",
            "1.",
            "-",
            "1e400",
            "tru",
            "nul",
            "{} x",
            "\"a\nb\"",
            "\"tab\there\"",
            "\"\\x\"",
            "\"\\ud800\"",
            "\"\\udc00\"",
            "\"\\ud800\\u0041\"",
            "\"\\u12\"",
            "\"unterminated",
            "\"unterminated\\\"",
            "\"ends at an escape\\",
            "\"x\\\"\u{1}\"",
            deep.as_str(),
        ];
        for text in give_up {
            assert_eq!(fast(text), None, "{text:?}");
        }
        // Nesting the fast parser leaves to serde_json is still read, by serde_json.
        assert!(super::super::parse(deep.as_bytes(), &Bump::new()).is_ok());
    }

    #[test]
    fn bodies_are_utf8_exactly_when_from_utf8_says_so() {
        // A byte past ASCII (or a broken sequence) at every offset of the first steps,
        // with ASCII before and after it.
        for len in 0..200 {
            for odd in ["é", "漢", "\u{1f600}", "\u{7f}"] {
                let text = format!("{}{odd}{}", "a".repeat(len), "b".repeat(len % 70));
                assert_eq!(super::utf8(text.as_bytes()), Some(text.as_str()));
            }
            for bad in [&b"\xff"[..], b"\xc3", b"\xe6\xbc", b"\xed\xa0\x80"] {
                let mut data = vec![b'a'; len];
                data.extend_from_slice(bad);
                data.extend(std::iter::repeat(b'b').take(len % 70));
                assert_eq!(super::utf8(&data), None, "{len} {bad:?}");
            }
        }
        assert_eq!(super::utf8(b""), Some(""));
    }

    #[test]
    fn string_ends_are_found_at_every_offset_of_a_step() {
        for len in 0..40 {
            for stop in ["\"", "\\n\"", "\u{1}"] {
                let text = format!("\"{}{stop}", "a".repeat(len));
                let found = super::string_stop(text.as_bytes(), 1);
                assert_eq!(found, len + 1, "{text:?}");
            }
        }
        assert_eq!(super::string_stop(b"\"abc", 1), 4);
    }

    #[test]
    fn whitespace_runs_end_at_the_same_byte_whatever_the_step() {
        // Runs of every length across both step sizes, of each whitespace byte and mixed,
        // ended by bytes next to whitespace (a vertical tab, a form feed, `!`, a high byte)
        // or by the end of the text, at every offset of a step.
        let blanks: [&[u8]; 5] = [b" ", b"\n", b"\r", b"\t", b"\n  \t\r   "];
        let ends: [&[u8]; 6] = [b"", b"\x0b", b"\x0c", b"!", b"\x80", b"\"x\" "];
        for lead in 0..17 {
            for len in 0..41 {
                for blank in blanks {
                    for end in ends {
                        let mut text = vec![b'x'; lead];
                        text.extend(blank.iter().copied().cycle().take(len));
                        text.extend_from_slice(end);
                        let expect = lead + len;
                        assert_eq!(super::skip_ws_run(&text, lead), expect, "{text:?}");
                        assert_eq!(super::skip_ws_words(&text, lead), expect, "{text:?}");
                        assert_eq!(super::skip_ws_bytewise(&text, lead), expect, "{text:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn long_and_tail_scans_find_the_same_end_as_the_bytewise_one() {
        // Runs across the first step, the wide steps (64 and 32 bytes), the SSE2 steps and
        // the last sixteen bytes read at once: every stopping byte (and bytes beside them)
        // at every position up to 200, from starts at every offset of a step, with 0 to 20
        // bytes after the stop (so the end of the text falls at every offset too).
        let stops = [b'"', b'\\', b'\x00', b'\x01', b'\x1f'];
        let fills = [b'a', b'\x20', b'!', b'#', b'[', b']', b'\x7f', b'\xe9'];
        for from in 0..17 {
            for len in 0..200 {
                let fill = fills[len % fills.len()];
                let plain: Vec<u8> = (0..from + len)
                    .map(|i| {
                        if i % 7 == 3 {
                            fills[i % fills.len()]
                        } else {
                            fill
                        }
                    })
                    .collect();
                let mut cases = vec![plain.clone()];
                for (n, &stop) in stops.iter().enumerate() {
                    let mut text = plain.clone();
                    text.push(stop);
                    text.extend(std::iter::repeat(b'"').take((len + n) % 21));
                    cases.push(text);
                }
                for text in &cases {
                    let expect = super::string_stop_bytewise(text, from);
                    assert_eq!(expect, from + len, "{from} {len} {text:?}");
                    assert_eq!(super::string_stop(text, from), expect, "{from} {len}");
                    #[cfg(target_arch = "x86_64")]
                    {
                        assert_eq!(super::string_stop_lanes(text, from), expect);
                        if std::is_x86_feature_detected!("avx2") {
                            // SAFETY: the CPU has AVX2 (just asked).
                            let wide = unsafe { super::string_stop_wide(text, from) };
                            assert_eq!(wide, expect, "{from} {len}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn every_scan_finds_the_same_end_as_the_bytewise_one() {
        // All stopping bytes, the bytes just beside them, and high bytes (UTF-8 runs), at
        // every offset of both step sizes, with and without a second stop after the first.
        let fillers = [
            b'a', b'!', b'#', b'[', b']', b'\x20', b'\x7f', b'\x80', b'\xe9', b'\xff',
        ];
        let stops = [b'"', b'\\', b'\x00', b'\x01', b'\x1f'];
        for len in 0..40 {
            for &fill in &fillers {
                let plain = vec![fill; len];
                let expect = super::string_stop_bytewise(&plain, 0);
                assert_eq!(super::string_stop(&plain, 0), expect);
                assert_eq!(crate::json_text::next_escape_by_word(&plain, 0), expect);
                for &stop in &stops {
                    let mut text = plain.clone();
                    text.push(stop);
                    text.extend_from_slice(&[fill, b'"', fill]);
                    let expect = super::string_stop_bytewise(&text, 0);
                    assert_eq!(expect, len, "{fill:#x} {stop:#x} {len}");
                    assert_eq!(super::string_stop(&text, 0), expect);
                    assert_eq!(crate::json_text::next_escape_by_word(&text, 0), expect);
                }
            }
        }
    }
}
