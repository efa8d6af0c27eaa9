//! Scalar conversions of the OTLP/JSON encoding: ids (hex, or base64 as protobuf's generic
//! JSON printer writes them), 64-bit integers written as decimal strings, doubles with their
//! special names, and base64 bytes.
//!
//! The accepted spellings are those of the Python decoders this replaces (`int(s, 10)`,
//! `float(s)`, `base64.b64decode`), restricted to ASCII: Python also read digits of other
//! scripts (`"١٢"`), which no writer of OTLP produces.

/// Lowercase-or-uppercase hex of exactly `N` bytes.
pub fn hex_id<const N: usize>(text: &str) -> Option<[u8; N]> {
    let bytes = text.as_bytes();
    if bytes.len() != 2 * N {
        return None;
    }
    // Every digit through the table, the verdict once at the end: no branch per byte.
    let mut out = [0u8; N];
    let mut seen = 0u8;
    for (byte, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
        let (high, low) = (HEX[usize::from(pair[0])], HEX[usize::from(pair[1])]);
        seen |= high | low;
        *byte = (high << 4) | low;
    }
    (seen & NOT_HEX == 0).then_some(out)
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

fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// `int(text, 10)` over ASCII: surrounding whitespace, a sign, digits with single
/// underscores between them. `None` when Python would raise or the value exceeds 128 bits.
pub fn py_int(text: &str) -> Option<i128> {
    // The spelling OTLP/JSON writers use (times and `intValue`s as plain decimal strings,
    // 19 digits at most, which always fit 64 bits): read without the general path's
    // per-character trimming and 128-bit checked arithmetic, which were most of its cost.
    // Checked and read in one pass: a byte that is not a digit makes its `digit` 10 or
    // more, and the value (wrapping meanwhile) is then not used.
    let plain = text.as_bytes();
    if !plain.is_empty() && plain.len() <= 19 {
        let mut value = 0u64;
        let mut digits = true;
        for &b in plain {
            let digit = b.wrapping_sub(b'0');
            digits &= digit < 10;
            value = value.wrapping_mul(10).wrapping_add(u64::from(digit));
        }
        if digits {
            return Some(i128::from(value));
        }
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
