//! Message-content parsers: the text of an attribute value read as the mapping rules read it.
//!
//! Conventions name parsers in their `parse:` chains (`json`, `json_or_text`, ...). The
//! common ones live here as plain functions from a string to a value tree ([`J`], the JSON
//! tree of [`crate::otlp_json::value`]), so the Python mapper calls them through the
//! binding and a native mapper can call them directly. The results are exactly those of the
//! Python parsers they replaced (which read JSON with `orjson`), including the corners:
//!
//! * surrounding whitespace is what Python's `str.strip()` removes ([`py_strip`]), which is
//!   more than JSON's four characters;
//! * integers stay integers up to 64 bits (signed or unsigned) and become floats beyond,
//!   floats are read correctly rounded, `1e400` is no JSON (it overflows), `-0` is the
//!   integer `0` (serde_json would read a float `-0.0` there);
//! * `NaN` and `Infinity`, lone surrogates (escaped or raw), control characters and trailing
//!   text make the text "not JSON";
//! * repeated keys keep their first position and their last value (a Python `dict`);
//! * nesting is bounded ([`MAX_JSON_DEPTH`] levels, as `orjson`'s): deeper text is not JSON.
//!
//! The input is untrusted: the work is linear in its size and the recursion bounded.

use bumpalo::Bump;

use crate::otlp_json::value::{build_text, parse_text, Build, J};

pub use crate::otlp_json::value::MAX_JSON_DEPTH;

/// Whether Python's `str.isspace()` holds for `c`: the characters `str.strip()` removes.
/// Unicode's `White_Space` (Rust's `char::is_whitespace`) plus the ASCII separators
/// U+001C..U+001F, which Python counts as whitespace too.
pub fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// `text.strip()` as Python does it.
pub fn py_strip(text: &str) -> &str {
    text.trim_matches(is_py_space)
}

/// The `json` parser on a string: the JSON value of the text stripped of surrounding
/// whitespace, or `None` when that is not one JSON document (the caller then keeps the
/// string itself: producers send both JSON text and plain strings).
pub fn parse_json<'a>(text: &'a str, bump: &'a Bump) -> Option<J<'a>> {
    parse_document(py_strip(text), bump)
}

/// The `json_or_text` parser on a string: the value of a JSON object or array (the stripped
/// text starts with `{` or `[`), else `None` (the caller keeps the text: a tool's plain-text
/// result must not be read as a number or a literal). The whole text is parsed, so
/// whitespace JSON does not allow (a no-break space) around the brackets makes it text.
pub fn parse_json_or_text<'a>(text: &'a str, bump: &'a Bump) -> Option<J<'a>> {
    if !holds_container(text) {
        return None;
    }
    parse_document(text, bump)
}

/// The `json` parser on text already stripped (the `bytes` path, which strips ASCII
/// whitespace only): its JSON value, or `None`.
pub fn parse_json_stripped<'a>(text: &'a str, bump: &'a Bump) -> Option<J<'a>> {
    parse_document(text, bump)
}

/// [`parse_json`] with the values made by `build` (a host's own objects, no tree between).
pub fn build_json<B, V>(text: &str, build: &B) -> Option<V>
where
    B: for<'x> Build<'x, Value = V>,
{
    build_document(py_strip(text), build)
}

/// [`parse_json_or_text`] with the values made by `build`.
pub fn build_json_or_text<B, V>(text: &str, build: &B) -> Option<V>
where
    B: for<'x> Build<'x, Value = V>,
{
    if !holds_container(text) {
        return None;
    }
    build_document(text, build)
}

/// [`parse_json_stripped`] with the values made by `build`.
pub fn build_json_stripped<B, V>(text: &str, build: &B) -> Option<V>
where
    B: for<'x> Build<'x, Value = V>,
{
    build_document(text, build)
}

/// Whether the stripped text starts as a JSON object or array does.
fn holds_container(text: &str) -> bool {
    matches!(py_strip(text).as_bytes().first(), Some(b'{' | b'['))
}

fn parse_document<'a>(text: &'a str, bump: &'a Bump) -> Option<J<'a>> {
    match parse_text(text, bump) {
        Ok((parsed, false)) => Some(parsed),
        // Rare: parse again with the integers `-0` written as `0`.
        Ok((parsed, true)) => match negative_zero_rewritten(text) {
            Some(rewritten) => parse_text(bump.alloc_str(&rewritten), bump)
                .ok()
                .map(|(parsed, _)| parsed),
            None => Some(parsed),
        },
        Err(_) => None,
    }
}

/// [`parse_document`] through `build`: the same readers, the same `-0` rewriting.
fn build_document<B, V>(text: &str, build: &B) -> Option<V>
where
    B: for<'x> Build<'x, Value = V>,
{
    match build_text(text, build) {
        Ok((parsed, false)) => Some(parsed),
        // Rare: parse again with the integers `-0` written as `0`.
        Ok((parsed, true)) => match negative_zero_rewritten(text) {
            Some(rewritten) => build_text(&rewritten, build).ok().map(|(parsed, _)| parsed),
            None => Some(parsed),
        },
        Err(_) => None,
    }
}

/// `text` with every integer `-0` written ` 0`, so it parses to the integer `0` as the
/// Python parsers read it (serde_json reads it as the float `-0.0`), or `None` when it holds
/// none (a written `-0.0` is a float). Only numbers outside strings are touched (not an
/// exponent's `e-0`) and the length is kept.
fn negative_zero_rewritten(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out: Option<Vec<u8>> = None;
    let mut in_string = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
        } else if b == b'"' {
            in_string = true;
        } else if b == b'-'
            && !matches!(i.checked_sub(1).map(|j| bytes[j]), Some(b'e' | b'E'))
            && bytes.get(i + 1) == Some(&b'0')
            && !matches!(bytes.get(i + 2), Some(b'0'..=b'9' | b'.' | b'e' | b'E'))
        {
            out.get_or_insert_with(|| bytes.to_vec())[i] = b' ';
        }
        i += 1;
    }
    // Only an ASCII `-` was replaced by an ASCII space: still UTF-8.
    String::from_utf8(out?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> Option<String> {
        let bump = Bump::new();
        parse_json(text, &bump).map(|v| format!("{v:?}"))
    }

    #[test]
    fn strips_what_python_strips() {
        assert_eq!(py_strip("\u{1f}\u{a0} {} \u{3000}\u{85}"), "{}");
        assert_eq!(py_strip("\u{feff}1"), "\u{feff}1");
        assert_eq!(json("\u{2028}[1]\u{1c}"), Some("Arr([U64(1)])".into()));
        assert_eq!(json("\u{feff}1"), None);
    }

    #[test]
    fn numbers_read_as_python_reads_them() {
        assert_eq!(json("-0"), Some("U64(0)".into()));
        assert_eq!(
            json("[-0,-0.0,-0e1]"),
            Some("Arr([U64(0), F64(-0.0), F64(-0.0)])".into())
        );
        assert_eq!(json("\"-0\""), Some("Str(\"-0\")".into()));
        assert_eq!(
            json("18446744073709551615"),
            Some("U64(18446744073709551615)".into())
        );
        assert_eq!(
            json("18446744073709551616"),
            Some("F64(1.8446744073709552e19)".into())
        );
        assert_eq!(json("1e400"), None);
        assert_eq!(json("NaN"), None);
        assert_eq!(json("[Infinity]"), None);
        assert_eq!(json("-00"), None);
        assert_eq!(json("[1 -0]"), None);
        assert_eq!(
            json("[1e-0,2E-0]"),
            Some("Arr([F64(1.0), F64(2.0)])".into())
        );
    }

    #[test]
    fn not_json_is_none() {
        for text in [
            "",
            "abc",
            "[1] x",
            "\"\\ud800\"",
            "\"a\u{1}\"",
            "{'a': 1}",
            "tru",
        ] {
            assert_eq!(json(text), None, "{text:?}");
        }
    }

    #[test]
    fn json_or_text_reads_only_objects_and_arrays() {
        let bump = Bump::new();
        assert!(parse_json_or_text("  {\"a\": 1}\n", &bump).is_some());
        assert!(parse_json_or_text("1", &bump).is_none());
        assert!(parse_json_or_text("\"s\"", &bump).is_none());
        assert!(parse_json_or_text("\u{a0}[1]", &bump).is_none());
    }

    /// Seeded JSON-ish text (xorshift64*, the same on every machine): fragments that reach
    /// the number, escape, whitespace and nesting rules, glued in random order.
    fn sweep(seed: u64, count: usize) -> Vec<String> {
        const PIECES: [&str; 31] = [
            "[",
            "]",
            "{",
            "}",
            ",",
            ":",
            "\"a\"",
            "\"\\ud800\"",
            "\"\\u00e9\"",
            "-0",
            "-0.0",
            "0",
            "1e400",
            "1e-0",
            "18446744073709551616",
            "-9223372036854775809",
            "true",
            "nul",
            " ",
            "\u{a0}",
            "\u{1c}",
            "\n",
            "\"",
            "\\",
            "NaN",
            "1.5",
            ".",
            "e",
            "\"-0\"",
            "é",
            "\u{1}",
        ];
        let mut state = seed | 1;
        let mut next = move || {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            state.wrapping_mul(0x2545_f491_4f6c_dd1d)
        };
        (0..count)
            .map(|_| {
                let len = (next() % 12) as usize;
                (0..len)
                    .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
                    .collect()
            })
            .collect()
    }

    /// Our tree as serde_json's, zeros of every sign and kind as the integer `0` (serde_json
    /// reads `-0` as a float, the one difference the rewrite is for).
    fn comparable(value: &J<'_>) -> serde_json::Value {
        use serde_json::Value;
        zero_as_int(match *value {
            J::Null => Value::Null,
            J::Bool(b) => Value::Bool(b),
            J::U64(n) => n.into(),
            J::I64(n) => n.into(),
            J::F64(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
            J::Str(s) => s.into(),
            J::Arr(items) => Value::Array(items.iter().map(comparable).collect()),
            J::Obj(obj) => {
                Value::Object(obj.iter().map(|(k, v)| (k.into(), comparable(v))).collect())
            }
        })
    }

    fn zero_as_int(value: serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        match value {
            Value::Number(n) if n.as_f64() == Some(0.0) => Value::from(0),
            Value::Array(items) => Value::Array(items.into_iter().map(zero_as_int).collect()),
            Value::Object(map) => {
                Value::Object(map.into_iter().map(|(k, v)| (k, zero_as_int(v))).collect())
            }
            other => other,
        }
    }

    #[test]
    fn any_text_is_read_or_refused_as_serde_json_reads_it() {
        // Same acceptance as serde_json's own reader (shallow text: its limit is 128 levels),
        // and `-0` rewritten only where it is an integer: the rewrite never turns refused
        // text into a value or a string's content into another.
        let mut accepted = 0;
        for text in sweep(18, 200_000) {
            let bump = Bump::new();
            let ours = parse_json(&text, &bump);
            let theirs = serde_json::from_str::<serde_json::Value>(py_strip(&text));
            assert_eq!(ours.is_some(), theirs.is_ok(), "{text:?}");
            if let (Some(value), Ok(reference)) = (ours, theirs) {
                accepted += 1;
                assert_eq!(comparable(&value), zero_as_int(reference), "{text:?}");
            }
        }
        assert!(
            accepted > 1_000,
            "the sweep reaches values too ({accepted})"
        );
    }

    #[test]
    fn depth_is_bounded_as_orjson_bounds_it() {
        let bump = Bump::new();
        let at = "[".repeat(MAX_JSON_DEPTH) + &"]".repeat(MAX_JSON_DEPTH);
        let past = "[".repeat(MAX_JSON_DEPTH + 1) + &"]".repeat(MAX_JSON_DEPTH + 1);
        assert!(parse_json(&at, &bump).is_some());
        assert!(parse_json(&past, &bump).is_none());
        assert!(parse_json(&"[".repeat(1_000_000), &bump).is_none());
    }
}
