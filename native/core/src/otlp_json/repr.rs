//! Python's `repr` of parsed JSON values, for problem messages.
//!
//! The problem messages name the offending value as the Python decoders did (`got 'xyz'`,
//! `got {'a': 1}`, `got 3.0`, `got None`), and tests and users read them that way, so the
//! native decoder writes them with Python's rules: quotes and escapes of `str.__repr__`,
//! the shortest round-trip float with Python's switch to exponent notation, `True`/`None`,
//! dicts and lists as Python prints them. Strings are quoted by [`crate::pyrepr`], the one
//! implementation of `str.__repr__` in the core.

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

/// [`repr_float`] appended to `out`, with no allocation: `zmij` (Schubfach) gives the
/// shortest round-trip digits, the nearest of them to `x` and the even one where two are
/// equally near, which is what Python's `repr` (David Gay's mode 0) writes; only its layout
/// differs, and is changed here where it does. A float is written this way wherever one
/// is (the scan text, the parsers' dumps, the report): `{:e}` through the formatter's
/// machinery, its halfway cases formatted again and parsed back, was ~1,200 instructions
/// a float, this a few dozen.
pub fn write_repr_float(x: f64, out: &mut Vec<u8>) {
    if x.is_nan() {
        out.extend_from_slice(b"nan");
        return;
    }
    if x.is_infinite() {
        out.extend_from_slice(if x > 0.0 { b"inf" } else { b"-inf" });
        return;
    }
    let mut buffer = zmij::Buffer::new();
    let text = buffer.format_finite(x).as_bytes();
    let (sign, body) = match text.split_first() {
        Some((b'-', rest)) => text.split_at(text.len() - rest.len()),
        _ => (&b""[..], text),
    };
    // zmij writes decimal exponents -5 to 15 in positional notation ("0.00001234",
    // "12.34", "1234.0", as Python from -4), others as "1.234e-7" and "1e+16" (Python
    // pads the exponent to two digits: "1.234e-07").
    if let Some(at) = body.iter().position(|b| *b == b'e') {
        let (mantissa, exp) = body.split_at(at + 2);
        out.extend_from_slice(sign);
        out.extend_from_slice(mantissa);
        if exp.len() < 2 {
            out.push(b'0');
        }
        out.extend_from_slice(exp);
    } else if let Some(digits) = body.strip_prefix(b"0.0000") {
        // Exponent -5 (`digits` are all the significant ones): Python's exponent notation.
        out.extend_from_slice(sign);
        if let Some((first, rest)) = digits.split_first() {
            out.push(*first);
            if !rest.is_empty() {
                out.push(b'.');
                out.extend_from_slice(rest);
            }
        }
        out.extend_from_slice(b"e-05");
    } else {
        out.extend_from_slice(text);
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
