//! Python's `repr` of a string, for problem messages that quote untrusted names.
//!
//! The Python decoders wrote `f"... ({span.name!r}) ..."`; the native ones write the same
//! text, so messages (and the tests and tools that read them) do not change with the
//! decoder. Quoting and escapes follow CPython's `unicode_repr`; which non-ASCII characters
//! are escaped comes from the generated table of [`crate::pyrepr_table`].

use std::fmt::Write;

use crate::pyrepr_table::NON_PRINTABLE;

/// `repr(text)` as CPython writes it.
pub fn py_repr(text: &str) -> String {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(text.len() + 2);
    out.push(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            c if c.is_ascii() || !printable(c) => {
                let cp = u32::from(c);
                // Writing to a String cannot fail.
                let _ = match cp {
                    0..=0xff => write!(out, "\\x{cp:02x}"),
                    0x100..=0xffff => write!(out, "\\u{cp:04x}"),
                    _ => write!(out, "\\U{cp:08x}"),
                };
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

fn printable(c: char) -> bool {
    let cp = u32::from(c);
    let after = NON_PRINTABLE.partition_point(|&(start, _)| start <= cp);
    after == 0 || NON_PRINTABLE[after - 1].1 < cp
}

#[cfg(test)]
mod tests {
    use super::py_repr;

    #[test]
    fn quotes_and_escapes_as_python_does() {
        assert_eq!(py_repr("chat gpt-4"), "'chat gpt-4'");
        assert_eq!(py_repr("it's"), "\"it's\"");
        assert_eq!(py_repr("'\""), "'\\'\"'");
        assert_eq!(py_repr("a\\b\tc\nd\re"), "'a\\\\b\\tc\\nd\\re'");
        assert_eq!(py_repr("\u{0}\u{7f}"), "'\\x00\\x7f'");
        assert_eq!(py_repr("é→😀"), "'é→😀'");
        assert_eq!(py_repr("\u{85}\u{a0}\u{ad}"), "'\\x85\\xa0\\xad'");
        assert_eq!(py_repr("\u{2028}\u{feff}"), "'\\u2028\\ufeff'");
        assert_eq!(py_repr("\u{e0001}\u{10ffff}"), "'\\U000e0001\\U0010ffff'");
    }
}
