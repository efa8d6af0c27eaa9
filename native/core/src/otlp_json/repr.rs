//! Python's `repr` of parsed JSON values, for problem messages.
//!
//! The problem messages name the offending value as the Python decoders did (`got 'xyz'`,
//! `got {'a': 1}`, `got 3.0`, `got None`), and tests and users read them that way, so the
//! native decoder writes them with Python's rules: quotes and escapes of `str.__repr__`,
//! the shortest round-trip float with Python's switch to exponent notation, `True`/`None`,
//! dicts and lists as Python prints them. Strings are quoted by [`crate::pyrepr`], the one
//! implementation of `str.__repr__` in the core.

use std::fmt::Write as _;

use super::value::J;
use crate::pyrepr::py_repr;

/// Longest `show`n value, in characters (as `_show` in the Python decoders).
pub const SHOW_LIMIT: usize = 60;

/// `repr(value)` cut to [`SHOW_LIMIT`] characters with `...`; a huge value is not written
/// out in full only to be cut.
pub fn show(value: &J<'_>) -> String {
    let mut out = Limited::new(SHOW_LIMIT + 1);
    write_repr(value, &mut out);
    if out.chars <= SHOW_LIMIT {
        out.text
    } else {
        let cut: String = out.text.chars().take(SHOW_LIMIT - 3).collect();
        cut + "..."
    }
}

/// The full `repr(value)`.
pub fn repr(value: &J<'_>) -> String {
    let mut out = Limited::new(usize::MAX);
    write_repr(value, &mut out);
    out.text
}

/// `repr` of a string.
pub fn repr_str(text: &str) -> String {
    py_repr(text)
}

/// `str(value)`: a string as it is, anything else as its `repr`.
pub fn py_str(value: &J<'_>) -> String {
    match value {
        J::Str(s) => s.to_string(),
        other => repr(other),
    }
}

/// The Python type name of a parsed JSON value (`type(x).__name__`).
pub fn type_name(value: &J<'_>) -> &'static str {
    match value {
        J::Null => "NoneType",
        J::Bool(_) => "bool",
        J::U64(_) | J::I64(_) => "int",
        J::F64(_) => "float",
        J::Str(_) => "str",
        J::Arr(_) => "list",
        J::Obj(_) => "dict",
    }
}

/// `repr(float)`: shortest round-trip digits; exponent notation below 1e-4 and from 1e16.
pub fn repr_float(x: f64) -> String {
    let mut out = Vec::with_capacity(24);
    write_repr_float(x, &mut out);
    String::from_utf8(out).unwrap_or_default()
}

/// [`repr_float`] appended to `out`, with no allocation: Rust's `{:e}` gives the shortest
/// round-trip digits and their exponent (into a buffer on the stack; Python's even digit
/// where two shortest forms are equally near, [`nearest_of_shortest`]), which are then laid
/// out as Python does. A float is written this way wherever one is (the scan text, the
/// parsers' dumps, the report), so the formatter's machinery is entered once per float.
pub fn write_repr_float(x: f64, out: &mut Vec<u8>) {
    if x.is_nan() {
        out.extend_from_slice(b"nan");
        return;
    }
    if x.is_infinite() {
        out.extend_from_slice(if x > 0.0 { b"inf" } else { b"-inf" });
        return;
    }
    let mut sci = StackText::default();
    // `{:e}` of a finite f64: "-1.2345e-7"; at most 24 bytes ("-2.2250738585072014e-308").
    if write!(sci, "{x:e}").is_err() {
        return;
    }
    let nearest = nearest_of_shortest(x, &sci);
    let sci = nearest.as_ref().unwrap_or(&sci);
    let sci = &sci.bytes[..sci.len];
    let (mantissa, exp) = match sci.iter().position(|b| *b == b'e') {
        Some(at) => (&sci[..at], &sci[at + 1..]),
        None => (sci, &b"0"[..]),
    };
    let (negative_exp, exp_digits) = match exp.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, exp),
    };
    let magnitude = exp_digits
        .iter()
        .fold(0i32, |n, d| n * 10 + i32::from(d.wrapping_sub(b'0')));
    let exp = if negative_exp { -magnitude } else { magnitude };
    let mantissa = match mantissa.split_first() {
        Some((b'-', rest)) => {
            out.push(b'-');
            rest
        }
        _ => mantissa,
    };
    let mut digits = [0u8; 24];
    let mut n = 0;
    for d in mantissa.iter().filter(|d| **d != b'.') {
        digits[n] = *d;
        n += 1;
    }
    let digits = &digits[..n];
    let n = n as i32;
    let decpt = exp + 1;
    if !(-4..16).contains(&exp) {
        out.push(digits[0]);
        if digits.len() > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        out.extend_from_slice(if exp < 0 { b"e-" } else { b"e+" });
        let abs = exp.unsigned_abs();
        if abs < 10 {
            out.push(b'0');
        }
        let mut spelled = [0u8; 3];
        let mut at = spelled.len();
        let mut rest = abs;
        loop {
            at -= 1;
            spelled[at] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        out.extend_from_slice(&spelled[at..]);
    } else if decpt <= 0 {
        out.extend_from_slice(b"0.");
        out.resize(out.len() + (-decpt) as usize, b'0');
        out.extend_from_slice(digits);
    } else if decpt >= n {
        out.extend_from_slice(digits);
        out.resize(out.len() + (decpt - n) as usize, b'0');
        out.extend_from_slice(b".0");
    } else {
        let (int, frac) = digits.split_at(decpt as usize);
        out.extend_from_slice(int);
        out.push(b'.');
        out.extend_from_slice(frac);
    }
}

/// Python's choice where `{:e}`'s differs: when `x` lies exactly halfway between two
/// decimals of the shortest length that reads back as `x`, `repr` takes the even one (the
/// correctly rounded digits, David Gay's mode 0), while `{:e}`'s shortest mode may take the
/// other (`834400034008635.25` is written `...635.3`, Python `...635.2`). `{:.N$e}` rounds
/// exactly, half to even, so the digits at the shortest length are formatted that way and
/// kept if they read back as `x` (at a power of two the nearer decimal can fall outside the
/// narrower side of the rounding interval; then the shortest mode's is the only one).
/// Halfway cases need a binary spacing as coarse as the last decimal digit, which only
/// 16- and 17-digit shortest forms have, so shorter ones are not formatted again.
fn nearest_of_shortest(x: f64, sci: &StackText) -> Option<StackText> {
    let text = &sci.bytes[..sci.len];
    let mantissa = &text[..text.iter().position(|b| *b == b'e').unwrap_or(text.len())];
    let digits = mantissa.iter().filter(|b| b.is_ascii_digit()).count();
    if digits < 16 {
        return None;
    }
    let mut exact = StackText::default();
    write!(exact, "{:.*e}", digits - 1, x).ok()?;
    let exact_text = &exact.bytes[..exact.len];
    let reads_back = std::str::from_utf8(exact_text)
        .ok()
        .and_then(|t| t.parse::<f64>().ok())
        == Some(x);
    (exact_text != text && reads_back).then_some(exact)
}

/// A short text written on the stack (`{:e}` of a float).
#[derive(Default)]
struct StackText {
    bytes: [u8; 32],
    len: usize,
}

impl std::fmt::Write for StackText {
    fn write_str(&mut self, piece: &str) -> std::fmt::Result {
        let end = self.len + piece.len();
        self.bytes
            .get_mut(self.len..end)
            .ok_or(std::fmt::Error)?
            .copy_from_slice(piece.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// A string being written that stops growing past `limit` characters.
struct Limited {
    text: String,
    chars: usize,
    limit: usize,
}

impl Limited {
    fn new(limit: usize) -> Self {
        Limited {
            text: String::new(),
            chars: 0,
            limit,
        }
    }

    fn full(&self) -> bool {
        self.chars >= self.limit
    }

    fn push_str(&mut self, s: &str) {
        for c in s.chars() {
            self.push(c);
        }
    }

    fn push(&mut self, c: char) {
        if !self.full() {
            self.text.push(c);
            self.chars += 1;
        }
    }
}

fn write_repr(value: &J<'_>, out: &mut Limited) {
    if out.full() {
        return;
    }
    match value {
        J::Null => out.push_str("None"),
        J::Bool(true) => out.push_str("True"),
        J::Bool(false) => out.push_str("False"),
        J::U64(n) => out.push_str(&n.to_string()),
        J::I64(n) => out.push_str(&n.to_string()),
        J::F64(x) => out.push_str(&repr_float(*x)),
        J::Str(s) => write_str(s, out),
        J::Arr(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if out.full() {
                    return;
                }
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(item, out);
            }
            out.push(']');
        }
        J::Obj(obj) => {
            out.push('{');
            for (i, (key, item)) in obj.iter().enumerate() {
                if out.full() {
                    return;
                }
                if i > 0 {
                    out.push_str(", ");
                }
                write_str(key, out);
                out.push_str(": ");
                write_repr(item, out);
            }
            out.push('}');
        }
    }
}

fn write_str(text: &str, out: &mut Limited) {
    out.push_str(&py_repr(text));
}

#[cfg(test)]
mod tests {
    use super::super::value::ParseError;
    use super::*;

    /// Parses into an arena that lives as long as the test process.
    fn parse(data: &[u8]) -> Result<J<'_>, ParseError> {
        super::super::value::parse(data, Box::leak(Box::new(bumpalo::Bump::new())))
    }

    fn r(json: &str) -> String {
        repr(&parse(json.as_bytes()).unwrap())
    }

    #[test]
    fn scalars_print_as_python_does() {
        assert_eq!(r("null"), "None");
        assert_eq!(r("true"), "True");
        assert_eq!(r("-3"), "-3");
        assert_eq!(r("3.0"), "3.0");
        assert_eq!(r("0.5"), "0.5");
        assert_eq!(r("1e16"), "1e+16");
        assert_eq!(r("1e15"), "1000000000000000.0");
        assert_eq!(r("0.0001"), "0.0001");
        assert_eq!(r("0.00001"), "1e-05");
        assert_eq!(r("123456789012345678"), "123456789012345678");
        assert_eq!(r("1.2345678901234568e+17"), "1.2345678901234568e+17");
        assert_eq!(r("-0.0"), "-0.0");
        assert_eq!(r("1.5e-300"), "1.5e-300");
    }

    #[test]
    fn halfway_floats_take_the_even_digit_as_python_does() {
        // Exactly halfway between two shortest forms: Python's `repr` (correctly rounded,
        // half to even) against `{:e}`'s shortest mode, which writes the odd one here. The
        // values are whole numbers over a power of two (834400034008635.25 and so on), exact.
        assert_eq!(
            repr_float(6_675_200_272_069_082.0 / 8.0),
            "834400034008635.2"
        );
        assert_eq!(
            repr_float(-8_610_192_060_993_577.0 / 4.0),
            "-2152548015248394.2"
        );
        assert_eq!(
            repr_float(1_871_134_174_267_437.0 / 8.0),
            "233891771783429.62"
        );
        // Not halfway: the shortest form as it is.
        assert_eq!(repr_float(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(repr_float(f64::MAX), "1.7976931348623157e+308");
        assert_eq!(repr_float(f64::MIN_POSITIVE), "2.2250738585072014e-308");
        assert_eq!(repr_float(5e-324), "5e-324");
        assert_eq!(repr_float(9_007_199_254_740_992.0), "9007199254740992.0");
    }

    #[test]
    fn strings_quote_and_escape_as_python_does() {
        assert_eq!(r(r#""xyz""#), "'xyz'");
        assert_eq!(r(r#""it's""#), "\"it's\"");
        assert_eq!(r(r#""it's \"q\"""#), r#"'it\'s "q"'"#);
        assert_eq!(r(r#""a\nb\tc\\""#), r"'a\nb\tc\\'");
        assert_eq!(r(r#""\u0001\u007f""#), r"'\x01\x7f'");
        assert_eq!(r(r#""é\u00a0\u200b😀""#), r"'é\xa0\u200b😀'");
        assert_eq!(
            r(r#""\u0378""#),
            r"'\u0378'",
            "unassigned code points are escaped"
        );
    }

    #[test]
    fn containers_print_as_python_does() {
        assert_eq!(
            r(r#"{"a": [1, "x", {}], "b": null}"#),
            "{'a': [1, 'x', {}], 'b': None}"
        );
        assert_eq!(r("[]"), "[]");
    }

    #[test]
    fn show_cuts_long_values_to_sixty_characters() {
        let long = format!("[{}]", vec!["1"; 1000].join(", "));
        let shown = show(&parse(long.as_bytes()).unwrap());
        assert_eq!(shown.chars().count(), 60);
        assert!(shown.ends_with("..."));
        let exact = format!("'{}'", "x".repeat(58));
        assert_eq!(
            show(&parse(format!("\"{}\"", "x".repeat(58)).as_bytes()).unwrap()),
            exact
        );
    }

    #[test]
    fn python_str_and_type_names() {
        assert_eq!(py_str(&parse(b"\"s\"").unwrap()), "s");
        assert_eq!(py_str(&parse(b"[1]").unwrap()), "[1]");
        assert_eq!(type_name(&parse(b"[1]").unwrap()), "list");
        assert_eq!(type_name(&parse(b"null").unwrap()), "NoneType");
    }
}
