//! Python's `repr` of parsed JSON values, for problem messages.
//!
//! The problem messages name the offending value as the Python decoders did (`got 'xyz'`,
//! `got {'a': 1}`, `got 3.0`, `got None`), and tests and users read them that way, so the
//! native decoder writes them with Python's rules: quotes and escapes of `str.__repr__`,
//! the shortest round-trip float with Python's switch to exponent notation, `True`/`None`,
//! dicts and lists as Python prints them. One approximation: which non-ASCII characters are
//! escaped follows a table of the common unprintable ranges (controls, format characters,
//! separators, private use), not the whole Unicode database.

use std::fmt::Write;

use super::value::J;

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
    let mut out = Limited::new(usize::MAX);
    write_str(text, &mut out);
    out.text
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
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    let sci = format!("{x:e}"); // e.g. "-1.2345e-7", shortest round-trip digits
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let n = digits.len() as i32;
    let decpt = exp + 1;
    let body = if !(-4..16).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let frac = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{first}{frac}e{esign}{:02}", exp.abs())
    } else if decpt <= 0 {
        format!("0.{}{digits}", "0".repeat((-decpt) as usize))
    } else if decpt >= n {
        format!("{digits}{}.0", "0".repeat((decpt - n) as usize))
    } else {
        let (int, frac) = digits.split_at(decpt as usize);
        format!("{int}.{frac}")
    };
    format!("{sign}{body}")
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
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in text.chars() {
        if out.full() {
            return;
        }
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_ascii() || printable(c) => out.push(c),
            c => {
                let code = c as u32;
                let mut escaped = String::new();
                let _ = if code <= 0xff {
                    write!(escaped, "\\x{code:02x}")
                } else if code <= 0xffff {
                    write!(escaped, "\\u{code:04x}")
                } else {
                    write!(escaped, "\\U{code:08x}")
                };
                out.push_str(&escaped);
            }
        }
    }
    out.push(quote);
}

/// `str.isprintable()` for a non-ASCII character, from the ranges of categories Cc, Cf,
/// Co, Zl, Zp and Zs that occur in practice (see the module doc).
fn printable(c: char) -> bool {
    const UNPRINTABLE: &[(u32, u32)] = &[
        (0x80, 0xa0),
        (0xad, 0xad),
        (0x600, 0x605),
        (0x61c, 0x61c),
        (0x6dd, 0x6dd),
        (0x70f, 0x70f),
        (0x180e, 0x180e),
        (0x1680, 0x1680),
        (0x2000, 0x200f),
        (0x2028, 0x202f),
        (0x205f, 0x2064),
        (0x2066, 0x206f),
        (0x3000, 0x3000),
        (0xe000, 0xf8ff),
        (0xfeff, 0xfeff),
        (0xfff9, 0xfffb),
        (0xfffe, 0xffff),
        (0x110bd, 0x110bd),
        (0x1bca0, 0x1bca3),
        (0x1d173, 0x1d17a),
        (0xe0001, 0xe0001),
        (0xe0020, 0xe007f),
        (0xf0000, 0x10ffff),
    ];
    let code = c as u32;
    !UNPRINTABLE.iter().any(|&(lo, hi)| lo <= code && code <= hi)
}

#[cfg(test)]
mod tests {
    use super::super::value::parse;
    use super::*;

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
    fn strings_quote_and_escape_as_python_does() {
        assert_eq!(r(r#""xyz""#), "'xyz'");
        assert_eq!(r(r#""it's""#), "\"it's\"");
        assert_eq!(r(r#""it's \"q\"""#), r#"'it\'s "q"'"#);
        assert_eq!(r(r#""a\nb\tc\\""#), r"'a\nb\tc\\'");
        assert_eq!(r(r#""\u0001\u007f""#), r"'\x01\x7f'");
        assert_eq!(r(r#""é\u00a0\u200b😀""#), r"'é\xa0\u200b😀'");
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
