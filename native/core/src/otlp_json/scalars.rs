//! Scalar conversions of the OTLP/JSON encoding: ids (hex, or base64 as protobuf's generic
//! JSON printer writes them), 64-bit integers written as decimal strings, doubles with their
//! special names, and base64 bytes.
//!
//! The accepted spellings are those of the Python decoders this replaces (`int(s, 10)`,
//! `float(s)`, `base64.b64decode`), restricted to ASCII: Python also read digits of other
//! scripts (`"١٢"`), which no writer of OTLP produces.

/// Lowercase-or-uppercase hex of exactly `N` bytes.
///
/// Span and trace ids (8 and 16 bytes, three ids a span) are read sixteen digits a step
/// with SSE2 where it is at hand; any other size, and other targets, through the table.
pub fn hex_id<const N: usize>(text: &str) -> Option<[u8; N]> {
    hex_id_bytes(text.as_bytes())
}

/// [`hex_id`] of any bytes (the tests give it bytes no `str` holds).
fn hex_id_bytes<const N: usize>(bytes: &[u8]) -> Option<[u8; N]> {
    if bytes.len() != 2 * N {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    if N % 8 == 0 {
        let mut out = [0u8; N];
        let mut valid = true;
        for (digits, eight) in bytes.chunks_exact(16).zip(out.chunks_exact_mut(8)) {
            let (value, ok) = hex16(digits);
            eight.copy_from_slice(&value.to_le_bytes());
            valid &= ok;
        }
        return valid.then_some(out);
    }
    hex_id_table(bytes)
}

/// [`hex_id`] a byte at a time through [`HEX`]: every digit through the table, the verdict
/// once at the end, no branch per byte. Used for every size on other targets; the tests
/// compare the two readings on x86-64.
fn hex_id_table<const N: usize>(bytes: &[u8]) -> Option<[u8; N]> {
    if bytes.len() != 2 * N {
        return None;
    }
    let mut out = [0u8; N];
    let mut seen = 0u8;
    for (byte, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
        let (high, low) = (HEX[usize::from(pair[0])], HEX[usize::from(pair[1])]);
        seen |= high | low;
        *byte = (high << 4) | low;
    }
    (seen & NOT_HEX == 0).then_some(out)
}

/// The eight bytes that the sixteen hex digits `digits` spell (first byte lowest), and
/// whether all sixteen are hex digits: each digit's value is its low nibble, plus 9 for a
/// letter, and the pairs are joined in 16-bit lanes and packed.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn hex16(digits: &[u8]) -> (u64, bool) {
    use std::arch::x86_64::{
        _mm_and_si128, _mm_cmpgt_epi8, _mm_cvtsi128_si64, _mm_loadu_si128, _mm_movemask_epi8,
        _mm_or_si128, _mm_packus_epi16, _mm_set1_epi16, _mm_set1_epi8, _mm_setzero_si128,
        _mm_slli_epi16, _mm_srli_epi16,
    };
    assert!(digits.len() >= 16);
    // SAFETY: the unaligned load reads `digits[..16]`, in bounds (just asserted); the rest
    // computes on registers; SSE2 is part of the x86_64 target.
    unsafe {
        let c = _mm_loadu_si128(digits.as_ptr().cast());
        // Signed comparisons: a byte past ASCII is negative and so neither digit nor letter.
        let above = |x, floor: u8| _mm_cmpgt_epi8(x, _mm_set1_epi8(floor as i8));
        let below = |x, ceiling: u8| _mm_cmpgt_epi8(_mm_set1_epi8(ceiling as i8), x);
        let digit = _mm_and_si128(above(c, b'0' - 1), below(c, b'9' + 1));
        let lower = _mm_or_si128(c, _mm_set1_epi8(0x20));
        let letter = _mm_and_si128(above(lower, b'a' - 1), below(lower, b'f' + 1));
        let valid = _mm_movemask_epi8(_mm_or_si128(digit, letter)) == 0xffff;
        let nibbles = std::arch::x86_64::_mm_add_epi8(
            _mm_and_si128(c, _mm_set1_epi8(0x0f)),
            _mm_and_si128(letter, _mm_set1_epi8(9)),
        );
        // Lane i holds digit 2i (low byte) and digit 2i+1 (high byte): byte i is their
        // `high << 4 | low`.
        let high = _mm_slli_epi16(_mm_and_si128(nibbles, _mm_set1_epi16(0x00ff)), 4);
        let pairs = _mm_or_si128(high, _mm_srli_epi16(nibbles, 8));
        let packed = _mm_packus_epi16(pairs, _mm_setzero_si128());
        (_mm_cvtsi128_si64(packed) as u64, valid)
    }
}

/// [`HEX`]'s mark of a byte that is no hex digit (a bit no digit's value has).
const NOT_HEX: u8 = 0x80;

/// Each byte's value as a hex digit (either case), or [`NOT_HEX`].
static HEX: [u8; 256] = {
    let mut table = [NOT_HEX; 256];
    let mut i = 0;
    while i < 10 {
        table[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        table[b'a' as usize + i] = 10 + i as u8;
        table[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    table
};

fn b64_digit(b: u8) -> Option<u32> {
    match b {
        b'A'..=b'Z' => Some(u32::from(b - b'A')),
        b'a'..=b'z' => Some(u32::from(b - b'a') + 26),
        b'0'..=b'9' => Some(u32::from(b - b'0') + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// `base64.b64decode(text, validate=True)`: the standard alphabet, padded correctly, nothing
/// else.
pub fn b64_strict(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    if bytes.len() % 4 != 0 {
        return None;
    }
    let pad = bytes.iter().rev().take_while(|&&b| b == b'=').count();
    if pad > 2 {
        return None;
    }
    let data = &bytes[..bytes.len() - pad];
    if data.len() % 4 == 1 {
        return None;
    }
    decode_digits(data)
}

/// `base64.urlsafe_b64decode(text)` after a strict decode failed: `-`/`_` read as `+`/`/`,
/// other characters outside the alphabet skipped, decoding stops at complete padding, and
/// the data must end on a whole group or be padded to one.
pub fn b64_lenient(text: &str) -> Option<Vec<u8>> {
    if !text.is_ascii() {
        return None;
    }
    let mut data = Vec::with_capacity(text.len());
    let mut pads = 0;
    for b in text.bytes() {
        let b = match b {
            b'-' => b'+',
            b'_' => b'/',
            other => other,
        };
        if b == b'=' {
            let quad = data.len() % 4;
            if quad >= 2 {
                pads += 1;
                if quad + pads >= 4 {
                    return decode_digits(&data);
                }
            }
            continue;
        }
        if b64_digit(b).is_some() {
            data.push(b);
            pads = 0;
        }
    }
    if data.len() % 4 != 0 {
        return None;
    }
    decode_digits(&data)
}

/// Standard base64 first, then the lenient URL-safe reading (what OTLP/JSON `bytesValue`
/// accepted).
pub fn b64_bytes(text: &str) -> Option<Vec<u8>> {
    b64_strict(text).or_else(|| b64_lenient(text))
}

/// Decodes unpadded digits (length not 1 mod 4).
fn decode_digits(data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(data.len() / 4 * 3 + 2);
    for group in data.chunks(4) {
        let mut acc = 0u32;
        for &b in group {
            acc = (acc << 6) | b64_digit(b)?;
        }
        match group.len() {
            4 => out.extend_from_slice(&[(acc >> 16) as u8, (acc >> 8) as u8, acc as u8]),
            3 => out.extend_from_slice(&[(acc >> 10) as u8, (acc >> 2) as u8]),
            2 => out.push((acc >> 4) as u8),
            _ => return None,
        }
    }
    Some(out)
}

/// The value of `digits` when it is 1 to 19 ASCII digits (leading zeros allowed), which
/// always fits 64 bits; `None` for anything else.
///
/// Why eight digits a step: a time in nanoseconds is 19 digits, two of them a span, and a
/// digit at a time cost about five instructions each. The first `len % 8` digits are read
/// one by one, then each eight as one word: checked all digits together, and joined in
/// three multiply-and-mask steps (pairs, fours, eights). Checked and read in one pass: a
/// byte that is not a digit fails the check, and the value (wrapping meanwhile) is then
/// not used.
#[inline]
pub fn digits_u64(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    let (head, words) = digits.split_at(digits.len() % 8);
    let mut value = 0u64;
    let mut all = true;
    for &b in head {
        let digit = b.wrapping_sub(b'0');
        all &= digit < 10;
        value = value.wrapping_mul(10).wrapping_add(u64::from(digit));
    }
    for eight in words.chunks_exact(8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(eight);
        let word = u64::from_le_bytes(word);
        all &= eight_digits_valid(word);
        value = value
            .wrapping_mul(100_000_000)
            .wrapping_add(eight_digits(word));
    }
    all.then_some(value)
}

/// Whether every byte of `word` is an ASCII digit: its high nibble is 3 and adding 6 does
/// not carry out of its low nibble. (A byte that carries into the next one is at least
/// 0xfa, which the high nibble check already fails.)
#[inline(always)]
fn eight_digits_valid(word: u64) -> bool {
    const HIGH: u64 = 0xf0f0_f0f0_f0f0_f0f0;
    let carried = word.wrapping_add(0x0606_0606_0606_0606) & HIGH;
    (word & HIGH) | (carried >> 4) == 0x3333_3333_3333_3333
}

/// The number eight ASCII digits spell, the first (most significant) in the lowest byte.
#[inline(always)]
fn eight_digits(word: u64) -> u64 {
    let w = word & 0x0f0f_0f0f_0f0f_0f0f;
    let w = (w.wrapping_mul(10).wrapping_add(w >> 8)) & 0x00ff_00ff_00ff_00ff;
    let w = (w.wrapping_mul(100).wrapping_add(w >> 16)) & 0x0000_ffff_0000_ffff;
    (w.wrapping_mul(10_000).wrapping_add(w >> 32)) & 0xffff_ffff
}

fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// `int(text, 10)` over ASCII: surrounding whitespace, a sign, digits with single
/// underscores between them. `None` when Python would raise or the value exceeds 128 bits.
pub fn py_int(text: &str) -> Option<i128> {
    // The spelling OTLP/JSON writers use (times and `intValue`s as plain decimal strings,
    // 19 digits at most, which always fit 64 bits): read without the general path's
    // per-character trimming and 128-bit checked arithmetic, which were most of its cost.
    if let Some(value) = digits_u64(text.as_bytes()) {
        return Some(i128::from(value));
    }
    let t = text.trim_matches(is_py_space);
    let (negative, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let bytes = digits.as_bytes();
    if bytes.is_empty() || bytes[0] == b'_' || bytes[bytes.len() - 1] == b'_' {
        return None;
    }
    let mut value: i128 = 0;
    let mut last_underscore = false;
    for &b in bytes {
        if b == b'_' {
            if last_underscore {
                return None;
            }
            last_underscore = true;
            continue;
        }
        last_underscore = false;
        if !b.is_ascii_digit() {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(i128::from(b - b'0'))?;
    }
    Some(if negative { -value } else { value })
}

/// `float(text)` over ASCII: surrounding whitespace, decimal or exponent notation,
/// `inf`/`infinity`/`nan` in any case with a sign, single underscores between digits.
pub fn py_float(text: &str) -> Option<f64> {
    let t = text.trim_matches(is_py_space);
    if t.is_empty() || !t.is_ascii() {
        return None;
    }
    let bytes = t.as_bytes();
    let mut cleaned = String::with_capacity(t.len());
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'_' {
            let between = i > 0
                && i + 1 < bytes.len()
                && bytes[i - 1].is_ascii_digit()
                && bytes[i + 1].is_ascii_digit();
            if !between {
                return None;
            }
            continue;
        }
        cleaned.push(b as char);
    }
    cleaned.parse::<f64>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_ids_of_the_exact_size_in_either_case() {
        assert_eq!(hex_id::<2>("0aFf"), Some([0x0a, 0xff]));
        assert_eq!(hex_id::<2>("0aF"), None);
        assert_eq!(hex_id::<2>("0aFg"), None);
        // The table judges every ASCII byte as `to_digit(16)` does, in either place of a pair.
        for b in 0u8..128 {
            let digit = char::from(b).to_digit(16).map(|d| d as u8);
            let high = String::from_utf8(vec![b, b'1']).unwrap();
            let low = String::from_utf8(vec![b'1', b]).unwrap();
            assert_eq!(hex_id::<1>(&high), digit.map(|d| [d << 4 | 1]), "{b:#x}");
            assert_eq!(hex_id::<1>(&low), digit.map(|d| [0x10 | d]), "{b:#x}");
        }
        assert_eq!(hex_id::<1>("é"), None);
    }

    #[test]
    fn span_and_trace_ids_read_as_the_table_reads_them() {
        // Every byte value (digits, letters of both cases, their neighbours, bytes past
        // ASCII) at every position of both sizes, in ids otherwise of every digit.
        let base = "0123456789abcdefABCDEF0f1e2d3c4b";
        for at in 0..32 {
            for b in 0u8..=255 {
                let mut text = base.as_bytes().to_vec();
                text[at] = b;
                assert_eq!(
                    hex_id_bytes::<16>(&text),
                    hex_id_table::<16>(&text),
                    "{text:?}"
                );
                if at < 16 {
                    let half = &text[..16];
                    assert_eq!(hex_id_bytes::<8>(half), hex_id_table::<8>(half), "{half:?}");
                }
            }
        }
        for text in ["é123456789abcdef", "0123456789abcdé"] {
            assert_eq!(hex_id::<8>(text), None, "{text:?}");
        }
        assert_eq!(
            hex_id::<16>("5B8EFFF798038103d269b633813fc60c"),
            Some(0x5b8efff798038103d269b633813fc60c_u128.to_be_bytes())
        );
        assert_eq!(hex_id::<8>("ffffffffffffffff"), Some([0xff; 8]));
        assert_eq!(hex_id::<8>("0000000000000000"), Some([0; 8]));
    }

    #[test]
    fn strict_base64_needs_the_standard_alphabet_and_padding() {
        assert_eq!(b64_strict("AP8="), Some(vec![0, 255]));
        assert_eq!(b64_strict(""), Some(vec![]));
        assert_eq!(b64_strict("AP8"), None);
        assert_eq!(b64_strict("AP-_"), None);
        assert_eq!(b64_strict("A==="), None);
    }

    #[test]
    fn lenient_base64_reads_url_safe_and_skips_junk() {
        assert_eq!(b64_lenient("-_8="), Some(vec![0xfb, 0xff]));
        assert_eq!(b64_lenient("AP8=rest ignored"), Some(vec![0, 255]));
        assert_eq!(b64_lenient("A P 8 ="), Some(vec![0, 255]));
        assert_eq!(b64_lenient("AP8"), None, "incorrect padding");
        assert_eq!(b64_lenient("A"), None);
        assert_eq!(b64_lenient("é"), None);
    }

    #[test]
    fn python_int_spellings() {
        assert_eq!(py_int("12"), Some(12));
        // The plain spelling, to its longest, and a stray byte anywhere in it.
        assert_eq!(
            py_int("9999999999999999999"),
            Some(9_999_999_999_999_999_999)
        );
        assert_eq!(py_int("0000000000000000007"), Some(7));
        assert_eq!(
            py_int("99999999999999999999"),
            Some(99_999_999_999_999_999_999)
        );
        for at in 0..19 {
            let mut text = b"1544712660000000000".to_vec();
            for stray in [b'/', b':', b' ', b'_', b'a', 0xff - 0x80] {
                text[at] = stray;
                let text = String::from_utf8(text.clone()).unwrap();
                let python = text.trim().replace('_', "").parse::<i128>().ok();
                let inner = at > 0 && at < 18;
                let valid = (stray == b'_' && inner) || (stray == b' ' && !inner);
                let expected = if valid { python } else { None };
                assert_eq!(py_int(&text), expected, "{text:?}");
            }
        }
        assert_eq!(py_int(" -12\n"), Some(-12));
        assert_eq!(py_int("+1_000"), Some(1000));
        assert_eq!(py_int("1__0"), None);
        assert_eq!(py_int("_1"), None);
        assert_eq!(py_int("0x10"), None);
        assert_eq!(py_int("1.0"), None);
        assert_eq!(py_int(""), None);
        assert_eq!(py_int("-"), None);
    }

    #[test]
    fn plain_digit_strings_read_alike_at_every_length() {
        // The 19-digit fast path and the general path meet at 20 digits and at u64's top.
        assert_eq!(py_int("0007"), Some(7));
        assert_eq!(
            py_int("1700000000123456789"),
            Some(1_700_000_000_123_456_789)
        );
        assert_eq!(
            py_int("9999999999999999999"),
            Some(9_999_999_999_999_999_999)
        );
        assert_eq!(py_int("18446744073709551615"), Some(i128::from(u64::MAX)));
        assert_eq!(
            py_int("18446744073709551616"),
            Some(i128::from(u64::MAX) + 1)
        );
        assert_eq!(py_int(&"9".repeat(38)), Some(10i128.pow(38) - 1));
        assert_eq!(py_int(&"9".repeat(40)), None);
        assert_eq!(py_int("12 "), Some(12));
        assert_eq!(py_int("1٢"), None);
    }

    #[test]
    fn digit_runs_read_as_parse_reads_them() {
        // Every length to 19, a stray byte (every value) at every place of the longest and
        // of one of each length; 20 digits and more are not read here.
        let digits = b"1234567890987654321";
        for len in 1..=19 {
            let text = &digits[..len];
            let expected = std::str::from_utf8(text).unwrap().parse::<u64>().ok();
            assert_eq!(digits_u64(text), expected, "{len}");
            for at in 0..len {
                for stray in 0u8..=255 {
                    let mut text = text.to_vec();
                    text[at] = stray;
                    let parsed = std::str::from_utf8(&text).ok().and_then(|t| {
                        t.bytes()
                            .all(|b| b.is_ascii_digit())
                            .then(|| t.parse::<u64>().ok())
                            .flatten()
                    });
                    assert_eq!(digits_u64(&text), parsed, "{text:?}");
                }
            }
        }
        assert_eq!(
            digits_u64(b"9999999999999999999"),
            Some(9_999_999_999_999_999_999)
        );
        assert_eq!(digits_u64(b"0000000000000000000"), Some(0));
        assert_eq!(digits_u64(b"00000000"), Some(0));
        assert_eq!(digits_u64(b"99999999"), Some(99_999_999));
        assert_eq!(digits_u64(b"18446744073709551615"), None);
        assert_eq!(digits_u64(b""), None);
        assert_eq!(digits_u64(b"+1"), None);
        assert_eq!(digits_u64(b"-1"), None);
    }

    #[test]
    fn python_float_spellings() {
        assert_eq!(py_float("1.5"), Some(1.5));
        assert_eq!(py_float(" 1_0.5 "), Some(10.5));
        assert_eq!(py_float("-Infinity"), Some(f64::NEG_INFINITY));
        assert!(py_float("nan").unwrap().is_nan());
        assert_eq!(py_float("1e3"), Some(1000.0));
        assert_eq!(py_float("abc"), None);
        assert_eq!(py_float("_1"), None);
    }
}
