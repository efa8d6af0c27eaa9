//! JSON spellings shared by the core's JSON writers: strings as Python's
//! `json.dumps(ensure_ascii=False)` escapes them (the scan text, the JSON report and the
//! message parsers' dumps must match it byte for byte; the OTLP/JSON encoder escapes the same
//! way) and floats as `float.__repr__` writes them; and the one table of JSON's
//! single-letter escapes its readers (the OTLP/JSON tokenizer, the scan's reader of JSON
//! inside strings) decode.

use std::ops::{Index, Range};

use crate::otlp_json::repr::write_repr_float;

/// The byte a single-letter escape stands for (`n` in `\n`: a newline), or `None` for
/// `u` (four hex digits follow) and anything JSON does not allow after a backslash. A load
/// from [`SHORT_ESCAPES`] rather than a `match`, which compiled to a jump table: an indirect
/// jump per escape, and a table address the tokenizer's escape loop kept in a register.
#[inline]
pub fn short_escape(letter: u8) -> Option<u8> {
    match SHORT_ESCAPES[usize::from(letter)] {
        0 => None,
        byte => Some(byte),
    }
}

/// [`short_escape`]'s answers by letter, 0 for none (no escape stands for a NUL byte but
/// `\u0000`, which is no short one).
const SHORT_ESCAPES: [u8; 256] = {
    let mut table = [0; 256];
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table[b'/' as usize] = b'/';
    table[b'b' as usize] = 0x08;
    table[b'f' as usize] = 0x0c;
    table[b'n' as usize] = b'\n';
    table[b'r' as usize] = b'\r';
    table[b't' as usize] = b'\t';
    table
};

/// Where a JSON string is written: bytes (`Vec<u8>`, whose input may be surrogate-extended
/// UTF-8, see `crate::scan`) or text (`String`, whose input is a `str`). The escaper hands
/// the sink pieces of its input cut only next to ASCII bytes, and ASCII escapes, so neither
/// sink checks or converts anything.
pub trait JsonSink {
    /// The text a string is read from: `[u8]` for bytes, `str` for text.
    type Text: ?Sized + AsRef<[u8]> + Index<Range<usize>, Output = Self::Text>;

    /// Appends a piece of the input.
    fn put(&mut self, piece: &Self::Text);

    /// Appends ASCII text (quotes and escapes).
    fn put_ascii(&mut self, ascii: &str);

    /// Appends `piece` between quotes: a string with nothing to escape.
    fn put_quoted(&mut self, piece: &Self::Text) {
        self.put_ascii("\"");
        self.put(piece);
        self.put_ascii("\"");
    }
}

impl JsonSink for Vec<u8> {
    type Text = [u8];

    fn put(&mut self, piece: &[u8]) {
        self.extend_from_slice(piece);
    }

    fn put_ascii(&mut self, ascii: &str) {
        self.extend_from_slice(ascii.as_bytes());
    }

    /// One reservation for the quotes and the text, and a text of at most [`SHORT`] bytes
    /// copied by a few overlapping word moves rather than a call to `memcpy` (most strings
    /// a JSON text holds are keys and ids of a few bytes).
    #[inline]
    fn put_quoted(&mut self, piece: &[u8]) {
        let len = piece.len();
        self.reserve(len + 2);
        let at = self.len();
        // SAFETY: `reserve` made room for `len + 2` bytes after `at`; the quotes and the
        // `len` bytes of `piece` (a slice distinct from the vector's spare room) are written
        // there, every byte inside the new length set.
        unsafe {
            let dst = self.as_mut_ptr().add(at);
            *dst = b'"';
            copy_text(piece, dst.add(1));
            *dst.add(1 + len) = b'"';
            self.set_len(at + len + 2);
        }
    }
}

/// Longest text [`escape_free_short`] tests and `put_quoted` copies by overlapping words.
const SHORT: usize = 32;

/// The eight bytes of `bytes` at `at`, little-endian (one unaligned load: the callers test
/// the bounds first, so the slice's own check folds away).
#[inline(always)]
fn word_at(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

/// The four bytes of `bytes` at `at`, little-endian.
#[inline(always)]
fn half_at(bytes: &[u8], at: usize) -> u64 {
    let mut half = [0; 4];
    half.copy_from_slice(&bytes[at..at + 4]);
    u64::from(u32::from_le_bytes(half))
}

/// Whether a text of at most [`SHORT`] bytes holds nothing [`needs_escape`]: the text read
/// as two to four words (or two half words, or three bytes) that overlap rather than run
/// past its end, so with no loop and no byte-at-a-time tail. `None` for a longer text.
/// A word of bytes all from the text, tested by [`escapes_in`], has a mark exactly when one
/// of its bytes needs an escape (a borrow only marks a byte after a marked one).
#[inline]
pub(crate) fn escape_free_short(bytes: &[u8]) -> Option<bool> {
    let len = bytes.len();
    if len > SHORT {
        return None;
    }
    let marks = if len >= 16 {
        escapes_in(word_at(bytes, 0))
            | escapes_in(word_at(bytes, 8))
            | escapes_in(word_at(bytes, len - 16))
            | escapes_in(word_at(bytes, len - 8))
    } else if len >= 8 {
        escapes_in(word_at(bytes, 0)) | escapes_in(word_at(bytes, len - 8))
    } else if len >= 4 {
        escapes_in(half_at(bytes, 0) | (half_at(bytes, len - 4) << 32))
    } else if len > 0 {
        let (a, b, c) = (bytes[0], bytes[len / 2], bytes[len - 1]);
        u64::from(needs_escape(a) | needs_escape(b) | needs_escape(c))
    } else {
        0
    };
    Some(marks == 0)
}

/// Copies `src` to `dst`: a text of at most [`SHORT`] bytes by overlapping word moves
/// (the same bytes written twice where they overlap), a longer one by `memcpy`.
///
/// # Safety
/// `dst` is valid for `src.len()` bytes of writes and does not overlap `src`.
#[inline(always)]
unsafe fn copy_text(src: &[u8], dst: *mut u8) {
    let len = src.len();
    let store = |at: usize, word: u64| {
        // SAFETY: each caller below stores inside `dst`'s `len` bytes.
        unsafe { dst.add(at).cast::<u64>().write_unaligned(word.to_le()) }
    };
    let store_half = |at: usize, half: u64| {
        // SAFETY: as `store`.
        unsafe {
            dst.add(at)
                .cast::<u32>()
                .write_unaligned((half as u32).to_le())
        }
    };
    // SAFETY (each store): the bounds tested just before it keep every store inside `dst`'s
    // `len` bytes (the reads are bounds-checked).
    unsafe {
        if len > SHORT {
            std::ptr::copy_nonoverlapping(src.as_ptr(), dst, len);
        } else if len >= 16 {
            let (a, b) = (word_at(src, 0), word_at(src, 8));
            let (c, d) = (word_at(src, len - 16), word_at(src, len - 8));
            store(0, a);
            store(8, b);
            store(len - 16, c);
            store(len - 8, d);
        } else if len >= 8 {
            let (a, b) = (word_at(src, 0), word_at(src, len - 8));
            store(0, a);
            store(len - 8, b);
        } else if len >= 4 {
            let (a, b) = (half_at(src, 0), half_at(src, len - 4));
            store_half(0, a);
            store_half(len - 4, b);
        } else if len > 0 {
            *dst = src[0];
            *dst.add(len / 2) = src[len / 2];
            *dst.add(len - 1) = src[len - 1];
        }
    }
}

impl JsonSink for String {
    type Text = str;

    fn put(&mut self, piece: &str) {
        self.push_str(piece);
    }

    fn put_ascii(&mut self, ascii: &str) {
        self.push_str(ascii);
    }
}

/// The escape of each control character, by its value: `json`'s short escapes where it has
/// one, else `\u00xx`.
const CONTROL_ESCAPES: [&str; 32] = [
    "\\u0000", "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005", "\\u0006", "\\u0007", //
    "\\b", "\\t", "\\n", "\\u000b", "\\f", "\\r", "\\u000e", "\\u000f", //
    "\\u0010", "\\u0011", "\\u0012", "\\u0013", "\\u0014", "\\u0015", "\\u0016", "\\u0017", //
    "\\u0018", "\\u0019", "\\u001a", "\\u001b", "\\u001c", "\\u001d", "\\u001e", "\\u001f",
];

/// Whether JSON writes `b` escaped: a control character, `"` or `\\` (the one test of it;
/// the word and block scans below answer it for eight and sixteen bytes at once). The
/// same bytes end the plain run of a string a JSON reader scans. Non-short-circuit `|`:
/// three compares and no branch.
#[inline(always)]
pub const fn needs_escape(b: u8) -> bool {
    (b < 0x20) | (b == b'"') | (b == b'\\')
}

/// Whether `text` is written as it is between the quotes (nothing in it [`needs_escape`]),
/// found by the scan [`write_string`] runs.
#[inline]
pub fn written_as_is(text: &[u8]) -> bool {
    next_escape(text, 0) == text.len()
}

/// Eight copies of a byte, for the word-at-a-time scans.
pub(crate) const fn splat(b: u8) -> u64 {
    u64::from_ne_bytes([b; 8])
}

/// The high bit of each byte of `word` (eight bytes read little-endian) that must be
/// escaped: below 0x20, `"` or `\\`. The classic "has a zero / has less than" tests: a
/// byte's borrow can only mark bytes after a byte that is itself marked, so the lowest mark
/// is always exact, which is all `write_string` reads (a caller that only asks whether any
/// byte is marked may read them all).
#[inline]
pub(crate) fn escapes_in(word: u64) -> u64 {
    let control = word.wrapping_sub(splat(0x20)) & !word;
    let quote = word ^ splat(b'"');
    let quote = quote.wrapping_sub(splat(1)) & !quote;
    let backslash = word ^ splat(b'\\');
    let backslash = backslash.wrapping_sub(splat(1)) & !backslash;
    (control | quote | backslash) & splat(0x80)
}

/// The index of the first byte at or after `from` that must be escaped, or `bytes.len()`.
/// Sixteen bytes at a time where the text is that long (see [`next_marked16`]), else eight,
/// so runs of plain text (most of any text) cost a few instructions per word rather than a
/// branch per byte.
#[inline]
pub(crate) fn next_escape(bytes: &[u8], from: usize) -> usize {
    if let Some(at) = next_marked16::<false>(bytes, from) {
        return at;
    }
    next_escape_by_word(bytes, from)
}

/// `next_escape` eight bytes at a time, then a byte at a time: texts shorter than sixteen
/// bytes (and every text where the wide scan is not compiled).
#[inline]
pub(crate) fn next_escape_by_word(bytes: &[u8], mut from: usize) -> usize {
    while let Some(chunk) = bytes.get(from..from + 8) {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let marks = escapes_in(u64::from_le_bytes(word));
        if marks != 0 {
            return from + (marks.trailing_zeros() / 8) as usize;
        }
        from += 8;
    }
    bytes[from..]
        .iter()
        .position(|&b| needs_escape(b))
        .map_or(bytes.len(), |i| from + i)
}

/// [`needs_escape`] of each of sixteen bytes: a lane of ones where the byte must be escaped.
/// SSE2, which every x86-64 processor has: a byte is a control character when the unsigned
/// maximum of it and `0x1f` is `0x1f`; the others are equalities.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn escape_lanes(v: std::arch::x86_64::__m128i) -> std::arch::x86_64::__m128i {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_max_epu8, _mm_or_si128, _mm_set1_epi8};
    // SAFETY: SSE2 is part of the x86-64 baseline; these read and write registers only.
    unsafe {
        let below = _mm_set1_epi8(0x1f);
        _mm_or_si128(
            _mm_cmpeq_epi8(_mm_max_epu8(v, below), below),
            _mm_or_si128(
                _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)),
                _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8)),
            ),
        )
    }
}

/// A bit for each of the sixteen bytes at `at` that `next_escape` stops at (and, `SHOWN`,
/// `next_shown_escape`: DEL and the lead bytes `C2`, `E2` too), lowest bit first
/// ([`escape_lanes`], and equalities).
///
/// # Safety
/// `at + 16 <= bytes.len()`.
#[cfg(target_arch = "x86_64")]
#[inline]
unsafe fn marks16<const SHOWN: bool>(bytes: &[u8], at: usize) -> u32 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    // SAFETY: the caller keeps the sixteen bytes inside `bytes` (an unaligned load); SSE2
    // is part of the x86-64 baseline.
    unsafe {
        let v = _mm_loadu_si128(bytes.as_ptr().add(at).cast::<__m128i>());
        let eq = |b: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8));
        let mut marks = escape_lanes(v);
        if SHOWN {
            marks = _mm_or_si128(
                marks,
                _mm_or_si128(eq(0x7f), _mm_or_si128(eq(0xc2), eq(0xe2))),
            );
        }
        _mm_movemask_epi8(marks) as u32
    }
}

/// The first byte at or after `from` that [`marks16`] marks, or `bytes.len()`, sixteen bytes
/// at a time; the last block is the text's last sixteen bytes (overlapping bytes already
/// read, whose marks are dropped), so no byte is read twice a byte at a time. `None` for a
/// text shorter than sixteen bytes (a block would read past it), and where SSE2 is not
/// compiled.
#[inline]
fn next_marked16<const SHOWN: bool>(bytes: &[u8], from: usize) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        let mut from = from;
        let len = bytes.len();
        if len < 16 {
            return None;
        }
        while from + 16 <= len {
            // SAFETY: the block ends at or before the text's end.
            let marks = unsafe { marks16::<SHOWN>(bytes, from) };
            if marks != 0 {
                return Some(from + marks.trailing_zeros() as usize);
            }
            from += 16;
        }
        if from >= len {
            return Some(len);
        }
        let last = len - 16;
        // SAFETY: `len >= 16`: the block is the text's last sixteen bytes.
        let marks = unsafe { marks16::<SHOWN>(bytes, last) } >> (from - last);
        Some(if marks != 0 {
            from + marks.trailing_zeros() as usize
        } else {
            len
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (bytes, from);
        None
    }
}

/// `text` as a JSON string the way `json.dumps(..., ensure_ascii=False)` writes it: `"`, `\`
/// and the control characters escaped (`\n`, `\r`, `\t`, `\b`, `\f`, else `\u00xx`), every
/// other character copied. Runs without an escape are found sixteen bytes (short texts
/// eight) at a time and copied whole. Only ASCII bytes are ever escaped, so any multi-byte sequence (a surrogate code
/// point in extended UTF-8 included) passes through unchanged and every cut falls on a
/// character boundary.
pub fn write_string<S: JsonSink>(text: &S::Text, out: &mut S) {
    let bytes = text.as_ref();
    // A short string with nothing to escape (keys, ids, names: most of a JSON text's
    // strings) tested and copied without the scan's loops and tails.
    if escape_free_short(bytes) == Some(true) {
        out.put_quoted(text);
        return;
    }
    out.put_ascii("\"");
    let mut start = 0;
    loop {
        let i = next_escape(bytes, start);
        if i == bytes.len() {
            break;
        }
        let escape = match bytes[i] {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b => CONTROL_ESCAPES[usize::from(b)],
        };
        out.put(&text[start..i]);
        out.put_ascii(escape);
        start = i + 1;
    }
    out.put(&text[start..bytes.len()]);
    out.put_ascii("\"");
}

/// The high bit of each byte of `word` that starts something `write_shown_string` escapes
/// beyond `escapes_in`: DEL, and the lead bytes of the C1 controls (`C2`) and of the
/// bidirectional overrides and isolates (`E2`). As there, the lowest mark is exact.
#[inline]
fn shown_escapes_in(word: u64) -> u64 {
    let mut marks = escapes_in(word);
    for b in [0x7f, 0xc2, 0xe2] {
        let x = word ^ splat(b);
        marks |= x.wrapping_sub(splat(1)) & !x & splat(0x80);
    }
    marks & splat(0x80)
}

/// `next_escape` for `write_shown_string`: the first byte at or after `from` that may start
/// an escape (a lead byte `C2`/`E2` is only a candidate; the caller reads what follows).
#[inline]
fn next_shown_escape(bytes: &[u8], mut from: usize) -> usize {
    if let Some(at) = next_marked16::<true>(bytes, from) {
        return at;
    }
    while let Some(chunk) = bytes.get(from..from + 8) {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let marks = shown_escapes_in(u64::from_le_bytes(word));
        if marks != 0 {
            return from + (marks.trailing_zeros() / 8) as usize;
        }
        from += 8;
    }
    bytes[from..]
        .iter()
        .position(|&b| SHOWN_CANDIDATES[usize::from(b)])
        .map_or(bytes.len(), |i| from + i)
}

/// The bytes `next_shown_escape` stops at, by value: one load a byte for the short strings
/// (most of a report's: names, outcomes, ids) that never fill a word.
const SHOWN_CANDIDATES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = needs_escape(b as u8) || matches!(b as u8, 0x7f | 0xc2 | 0xe2);
        b += 1;
    }
    table
};

/// `n` in decimal, as `int.__repr__` writes it, without an intermediate `String`.
pub fn write_int(n: i64, out: &mut Vec<u8>) {
    let mut digits = [0; 20];
    let at = int_digits(n, &mut digits);
    out.extend_from_slice(&digits[at..]);
}

/// `n`'s decimal text, as `str(n)` spells it, written at the end of `digits` (20 bytes
/// hold any `i64`'s, sign included) with no formatting machinery or allocation: the one
/// writer of integers for the reports, the scan text and the messages.
pub fn int_text(n: i64, digits: &mut [u8; 20]) -> &str {
    let at = int_digits(n, digits);
    // ASCII digits and a sign: always UTF-8.
    std::str::from_utf8(&digits[at..]).unwrap_or_default()
}

/// The digits of every number below 100, two bytes each.
const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// `int_text`'s bytes: `n`'s decimal text at the end of `digits`, from the index returned.
/// Two digits a step (one division by 100 instead of two by 10); `write_int` copies them
/// as they are, with no UTF-8 check of what is ASCII by construction.
#[inline]
fn int_digits(n: i64, digits: &mut [u8; 20]) -> usize {
    let mut at = digits.len();
    let mut rest = n.unsigned_abs();
    while rest >= 100 {
        let pair = (rest % 100) as usize * 2;
        rest /= 100;
        at -= 2;
        digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if rest >= 10 {
        let pair = rest as usize * 2;
        at -= 2;
        digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    } else {
        at -= 1;
        digits[at] = b'0' + rest as u8;
    }
    if n < 0 {
        at -= 1;
        digits[at] = b'-';
    }
    at
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// `write_string` of UTF-8 `text`, with the characters a terminal or a diff view acts on
/// instead of showing written as `\uXXXX` (lower-case hex) as well: DEL, the C1 controls
/// (U+0080 to U+009F) and the bidirectional overrides (U+202A to U+202E) and isolates
/// (U+2066 to U+2069). This is the report's `json_safe` applied to the string as it is
/// written: outside its strings a JSON text is ASCII, and inside them these characters
/// are never part of an escape, so escaping them here gives the text `json_safe` gives
/// of the whole document.
pub fn write_shown_string(text: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    let mut start = 0;
    let mut from = 0;
    loop {
        let i = next_shown_escape(text, from);
        if i == text.len() {
            break;
        }
        let b = text[i];
        // The escaped character's code point and its length in bytes, or None for a lead
        // byte of another character (scanning goes on after it).
        let shown: Option<(u32, usize)> = match b {
            0xc2 => match text.get(i + 1) {
                Some(&c @ 0x80..=0x9f) => Some((u32::from(c), 2)),
                _ => None,
            },
            0xe2 => match (text.get(i + 1), text.get(i + 2)) {
                (Some(0x80), Some(&c @ 0xaa..=0xae)) => Some((0x2000 + u32::from(c - 0x80), 3)),
                (Some(0x81), Some(&c @ 0xa6..=0xa9)) => Some((0x2040 + u32::from(c - 0x80), 3)),
                _ => None,
            },
            0x7f => Some((0x7f, 1)),
            _ => {
                let escape = match b {
                    b'"' => "\\\"",
                    b'\\' => "\\\\",
                    b => CONTROL_ESCAPES[usize::from(b)],
                };
                out.extend_from_slice(&text[start..i]);
                out.extend_from_slice(escape.as_bytes());
                start = i + 1;
                from = start;
                continue;
            }
        };
        match shown {
            Some((code, len)) => {
                out.extend_from_slice(&text[start..i]);
                out.extend_from_slice(b"\\u");
                for shift in [12, 8, 4, 0] {
                    out.push(HEX[((code >> shift) & 0xf) as usize]);
                }
                start = i + len;
                from = start;
            }
            None => from = i + 1,
        }
    }
    out.extend_from_slice(&text[start..]);
    out.push(b'"');
}

/// `text` (a string's code points encoded as UTF-8 with surrogates allowed: Python's
/// `encode("utf-8", "surrogatepass")`) with every surrogate code point written as its
/// `\uXXXX` escape (lower-case hex), appended to `out` as valid UTF-8. A surrogate is no
/// character and has no UTF-8 text; a `str` holds one when an application made it (Python's
/// `surrogateescape` decoding of bytes that are not UTF-8, `os.fsdecode`), and what a trace
/// says must be written, not refused. Inside a JSON string the escape is JSON's (the same
/// text `json.dumps` writes by default, parsed back to the same `str`); in shown text it is
/// Python's own escape of the code point, as the reports write every character they cannot
/// show. Valid UTF-8 holds no `ED A0..BF` sequence, so nothing else changes.
pub fn escape_surrogates(text: &[u8], out: &mut Vec<u8>) {
    let mut start = 0;
    let mut i = 0;
    while i + 2 < text.len() {
        if text[i] == 0xed && (0xa0..=0xbf).contains(&text[i + 1]) {
            let code =
                0xd000 | (u32::from(text[i + 1] & 0x3f) << 6) | u32::from(text[i + 2] & 0x3f);
            out.extend_from_slice(&text[start..i]);
            out.extend_from_slice(b"\\u");
            for shift in [12, 8, 4, 0] {
                out.push(HEX[((code >> shift) & 0xf) as usize]);
            }
            i += 3;
            start = i;
        } else {
            i += 1;
        }
    }
    out.extend_from_slice(&text[start..]);
}

/// The JSON spelling of a float as `json.dumps` writes it (`repr`; `NaN`, `Infinity`,
/// `-Infinity` for the others).
pub fn float_text(x: f64) -> String {
    let mut out = Vec::with_capacity(24);
    write_float_text(x, &mut out);
    String::from_utf8(out).unwrap_or_default()
}

/// [`float_text`] appended to `out`, with no allocation.
pub fn write_float_text(x: f64, out: &mut Vec<u8>) {
    if x.is_nan() {
        out.extend_from_slice(b"NaN");
    } else if x.is_infinite() {
        out.extend_from_slice(if x > 0.0 { b"Infinity" } else { b"-Infinity" });
    } else {
        write_repr_float(x, out);
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn surrogates_are_written_as_escapes_and_other_text_unchanged() {
        // "a\udcffé\ud800" as `encode("utf-8", "surrogatepass")` gives it.
        let text = b"a\xed\xb3\xbf\xc3\xa9\xed\xa0\x80z";
        let mut out = Vec::new();
        escape_surrogates(text, &mut out);
        assert_eq!(out, "a\\udcff\u{e9}\\ud800z".as_bytes());
        // A pair spelled as two surrogates is two escapes, as Python's `str` holds two.
        let mut pair = Vec::new();
        escape_surrogates(b"\xed\xa0\xbd\xed\xb8\x80", &mut pair);
        assert_eq!(pair, b"\\ud83d\\ude00");
        let valid = "plain \u{e9}\u{20ac}\u{d7ff}\u{e000}\u{1f600}".as_bytes();
        let mut same = Vec::new();
        escape_surrogates(valid, &mut same);
        assert_eq!(same, valid);
    }
    use std::fmt::Write as _;

    use super::*;

    fn written(text: &str) -> String {
        let mut out = Vec::new();
        write_string(text.as_bytes(), &mut out);
        String::from_utf8(out).expect("utf-8 in, utf-8 out")
    }

    #[test]
    fn short_escapes_are_the_letters_serde_json_reads() {
        for letter in 0..=u8::MAX {
            let text = [b'"', b'\\', letter, b'"'];
            let read = serde_json::from_slice::<String>(&text).ok();
            let expected = read.filter(|_| letter != b'u').map(|s| s.as_bytes()[0]);
            assert_eq!(short_escape(letter), expected, "{letter:#x}");
        }
    }

    #[test]
    fn strings_are_escaped_as_json_dumps_escapes_them() {
        assert_eq!(written(""), r#""""#);
        assert_eq!(written("plain é 😀"), "\"plain é 😀\"");
        assert_eq!(written("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(written("\n\r\t\u{8}\u{c}"), r#""\n\r\t\b\f""#);
        assert_eq!(written("\u{0}\u{1f}\u{7f}"), "\"\\u0000\\u001f\u{7f}\"");
        // `json.dumps("\u2028\u2029\x0b\x1b/", ensure_ascii=False)`: the line separators and
        // `/` are not escaped.
        assert_eq!(
            written("\u{2028}\u{2029}\u{b}\u{1b}/"),
            "\"\u{2028}\u{2029}\\u000b\\u001b/\""
        );
    }

    /// The former byte writer (scan text, JSON report, OTLP/JSON), as it was.
    fn former_bytes(text: &[u8], out: &mut Vec<u8>) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        out.push(b'"');
        let mut start = 0;
        for (i, &b) in text.iter().enumerate() {
            let escape: &[u8] = match b {
                b'"' => b"\\\"",
                b'\\' => b"\\\\",
                b'\n' => b"\\n",
                b'\r' => b"\\r",
                b'\t' => b"\\t",
                0x08 => b"\\b",
                0x0c => b"\\f",
                0..=0x1f => &[],
                _ => continue,
            };
            out.extend_from_slice(&text[start..i]);
            if escape.is_empty() {
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 0xf)]);
            } else {
                out.extend_from_slice(escape);
            }
            start = i + 1;
        }
        out.extend_from_slice(&text[start..]);
        out.push(b'"');
    }

    /// The message parsers' former text writer (`parsers/dump.rs`), as it was.
    fn former_text(text: &str, out: &mut String) {
        out.push('"');
        for c in text.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c if u32::from(c) < 0x20 => {
                    // Writing to a String cannot fail.
                    let _ = write!(out, "\\u{:04x}", u32::from(c));
                }
                c => out.push(c),
            }
        }
        out.push('"');
    }

    /// Every ASCII character alone and between multi-byte ones, runs of escapes, quotes and
    /// backslashes at the ends, and non-ASCII up to four bytes (U+2028 included).
    fn tricky() -> Vec<String> {
        let mut cases: Vec<String> = (0u8..0x80).map(|b| char::from(b).to_string()).collect();
        cases.extend((0u8..0x80).map(|b| format!("é{}\u{2028}", char::from(b))));
        let all_ascii: String = (0u8..0x80).map(char::from).collect();
        cases.push(all_ascii.clone());
        cases.push(all_ascii.chars().rev().collect());
        for text in [
            "",
            "\"",
            "\\",
            "\\\"",
            "\"\\\"",
            "a\"",
            "\\a",
            "\u{0}\u{0}\n\n\u{1f}",
            "é😀中\u{7f}\u{80}\u{9f}\u{a0}\u{ad}\u{2028}\u{2029}\u{feff}\u{fffd}\u{10ffff}",
            "line\u{2028}sep\r\n\ttab \"q\" \\ \u{b}\u{1b}",
        ] {
            cases.push(text.into());
        }
        cases
    }

    #[test]
    fn both_sinks_write_what_their_former_writers_wrote() {
        for text in tricky() {
            let mut bytes = Vec::new();
            write_string(text.as_bytes(), &mut bytes);
            let mut expected = Vec::new();
            former_bytes(text.as_bytes(), &mut expected);
            assert_eq!(bytes, expected, "bytes of {text:?}");

            let mut string = String::new();
            write_string(text.as_str(), &mut string);
            let mut expected = String::new();
            former_text(&text, &mut expected);
            assert_eq!(string, expected, "text of {text:?}");
            assert_eq!(string.as_bytes(), bytes.as_slice());
        }
    }

    /// Every byte value at every offset of texts up to two and a half blocks of sixteen,
    /// between plain text, escapes and multi-byte characters: the block and word scans must
    /// stop exactly where the byte-at-a-time writer escaped, whatever the byte's neighbours
    /// borrow, at either side of each 8- and 16-byte boundary and in the last, overlapping
    /// block.
    #[test]
    fn every_byte_at_every_offset_is_written_as_before() {
        let fillers: [&[u8]; 4] = [
            b"abcdefgh",
            b"\x00\x01\x1f\x20",
            b"\"\\\x21\x5b",
            b"\xc3\xa9\xff\x80",
        ];
        for filler in fillers {
            for len in 0..40 {
                let base: Vec<u8> = filler.iter().copied().cycle().take(len).collect();
                for at in 0..=len {
                    for b in 0..=255u8 {
                        let mut text = base.clone();
                        text.insert(at, b);
                        let mut out = Vec::new();
                        write_string(&text[..], &mut out);
                        let mut expected = Vec::new();
                        former_bytes(&text, &mut expected);
                        assert_eq!(out, expected, "{text:?}");
                    }
                }
            }
        }
    }

    /// Short plain strings (copied by overlapping word moves) appended after what the
    /// vector already holds, at every length around the word sizes: each lands right after
    /// it, whole, between its quotes, with nothing after.
    #[test]
    fn short_strings_are_appended_whole() {
        let plain: Vec<u8> = (0..48).map(|i| b'a' + (i % 26) as u8).collect();
        for held in [0, 1, 7, 30] {
            for len in 0..=plain.len() {
                let mut out = vec![b'x'; held];
                write_string(&plain[..len], &mut out);
                let mut expected = vec![b'x'; held];
                former_bytes(&plain[..len], &mut expected);
                assert_eq!(out, expected, "{held} then {len}");
                let mut text = "x".repeat(held);
                write_string(std::str::from_utf8(&plain[..len]).unwrap(), &mut text);
                assert_eq!(text.as_bytes(), expected.as_slice());
            }
        }
    }

    #[test]
    fn lone_surrogates_pass_through_the_byte_sink() {
        // `"\ud800"` as the scan text carries it (surrogatepass UTF-8: ED A0 80), between an
        // escape and a quote; no `str` can hold it, so only the byte sink meets it.
        let text = b"\n\xed\xa0\x80\"\xed\xbf\xbf";
        let mut out = Vec::new();
        write_string(&text[..], &mut out);
        assert_eq!(out, b"\"\\n\xed\xa0\x80\\\"\xed\xbf\xbf\"");
        let mut expected = Vec::new();
        former_bytes(text, &mut expected);
        assert_eq!(out, expected);
    }

    /// `write_shown_string` of `text` is `json_safe` of what `write_string` writes.
    fn assert_shown_is_json_safe(text: &str) {
        let mut out = Vec::new();
        write_shown_string(text.as_bytes(), &mut out);
        let mut plain = Vec::new();
        write_string(text.as_bytes(), &mut plain);
        let expected = json_safe(&String::from_utf8(plain).expect("utf-8"));
        assert_eq!(String::from_utf8(out).expect("utf-8"), expected, "{text:?}");
    }

    /// The report's `json_safe`, as Python applies it to a whole text.
    fn json_safe(text: &str) -> String {
        text.chars()
            .map(|c| match u32::from(c) {
                0x7f..=0x9f | 0x202a..=0x202e | 0x2066..=0x2069 => {
                    format!("\\u{:04x}", u32::from(c))
                }
                _ => c.to_string(),
            })
            .collect()
    }

    #[test]
    fn shown_strings_are_written_strings_made_json_safe() {
        let mut cases = tricky();
        // Every character near the escaped ranges, alone, between others, and as runs longer
        // than a word (the lead bytes of the neighbours share `C2`/`E2`).
        let near: Vec<char> = (0x70..0x100)
            .chain(0x2000..0x2080)
            .chain([0x7ff, 0x800, 0xffff, 0x1f600])
            .filter_map(char::from_u32)
            .collect();
        for &c in &near {
            cases.push(c.to_string());
            cases.push(format!("ab{c}cd\"{c}{c}"));
            cases.push(format!("{c}0123456789{c}"));
        }
        cases.push(near.iter().collect());
        cases.push("\u{202e}evil\u{2066}x\u{85}\u{9f}\u{a0}\u{7f}\n\u{2069}".into());
        for text in cases {
            assert_shown_is_json_safe(&text);
        }
    }

    /// Every character `write_shown_string` escapes or stops at (each ASCII byte, and the
    /// characters in and next to the escaped ranges, whose lead bytes are `C2`/`E2`) at every
    /// offset of texts up to two and a half blocks long, in plain text and next to other
    /// multi-byte characters: the block scan must find each where the text `json_safe` gives
    /// escapes it, including in the last, overlapping block.
    #[test]
    fn every_shown_character_at_every_offset_is_written_json_safe() {
        let mut specials: Vec<char> = (0u8..0x80).map(char::from).collect();
        specials.extend(
            (0x7e..=0xa1)
                .chain(0x2000..=0x2001)
                .chain(0x2028..=0x202f)
                .chain(0x2065..=0x206a)
                .chain([0xe9, 0x20ac, 0x1f600])
                .filter_map(char::from_u32),
        );
        for filler in ["abcdefgh", "é中x😀", "\u{85}a\u{2029}"] {
            let mut base_chars = filler.chars().cycle();
            let mut base = String::new();
            while base.len() < 40 {
                let texts_at: Vec<usize> = base
                    .char_indices()
                    .map(|(i, _)| i)
                    .chain([base.len()])
                    .collect();
                for &at in &texts_at {
                    for &c in &specials {
                        let mut text = base.clone();
                        text.insert(at, c);
                        assert_shown_is_json_safe(&text);
                    }
                }
                base.push(base_chars.next().expect("a cycle"));
            }
        }
    }

    #[test]
    fn integers_are_spelled_as_to_string_spells_them() {
        let cases = [12345, i64::MAX, i64::MIN, i64::MIN + 1];
        let around = (0..19).flat_map(|p| {
            let ten = 10_i64.pow(p);
            [ten - 1, ten, ten + 1, -ten, -ten + 1, ten * 5 + 7]
        });
        for n in cases.into_iter().chain(around).chain(-1000..1000) {
            let mut out = b"x".to_vec();
            write_int(n, &mut out);
            assert_eq!(out, format!("x{n}").into_bytes());
            assert_eq!(int_text(n, &mut [0; 20]), n.to_string());
        }
    }

    #[test]
    fn floats_are_spelled_as_json_dumps_spells_them() {
        assert_eq!(float_text(f64::NAN), "NaN");
        assert_eq!(float_text(f64::INFINITY), "Infinity");
        assert_eq!(float_text(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(float_text(1e22), "1e+22");
        assert_eq!(float_text(-0.0), "-0.0");
        assert_eq!(float_text(0.1), "0.1");
    }
}
