//! JSON text of a parsed value, written as the two Python serialisers the message parsers
//! used write it, so the strings they put into messages do not change:
//!
//! * [`sorted`]: `json.dumps(value, ensure_ascii=False, sort_keys=True)` (a text part whose
//!   content was structured): `", "` and `": "` separators, keys sorted by code point, floats
//!   as `repr`, `None` where Python's encoder runs out of recursion ([`MAX_SORTED_DEPTH`]);
//! * [`compact`]: `orjson.dumps(value)` (a Bedrock Converse `json` block): no spaces, keys in
//!   order, floats in exponent notation below 1e-5 and from 1e16, `TypeError` past
//!   [`MAX_COMPACT_DEPTH`] levels.
//!
//! Both escape strings as `crate::json_text::write_string` does (`"`, `\` and the control
//! characters, nothing else). The depth is counted, never recursed past its bound.

use super::{Out, OutKey, ParserError};
use crate::json_text::write_string;
use crate::otlp_json::repr::repr_float;
use crate::otlp_json::value::J;

/// Deepest list/dict nesting `json.dumps` encodes from the mapper: Python's recursion limit
/// (1,000 frames) less the frames below the parser. Deeper values have no string.
pub const MAX_SORTED_DEPTH: usize = 990;

/// Deepest list/dict nesting `orjson.dumps` encodes (deeper raises `TypeError`).
pub const MAX_COMPACT_DEPTH: usize = 254;

/// `json.dumps(value, ensure_ascii=False, sort_keys=True)`, `None` past [`MAX_SORTED_DEPTH`].
pub fn sorted(value: &J<'_>) -> Option<String> {
    if depth_exceeds(value, MAX_SORTED_DEPTH) {
        return None;
    }
    let mut out = String::new();
    write_sorted(value, &mut out);
    Some(out)
}

/// [`sorted`] of an object a parser built over parsed JSON: its keys sorted, its values
/// written as [`sorted`] writes them (a value too deep for it makes the whole `None`).
pub fn sorted_built(value: &Out<'_, J<'_>>) -> Option<String> {
    let mut out = String::new();
    write_built(value, &mut out, 0).then_some(out)
}

/// Recursion follows the built levels (a few), then [`sorted`]'s own bound.
fn write_built(value: &Out<'_, J<'_>>, out: &mut String, depth: usize) -> bool {
    match value {
        Out::In(j) => write_bounded(j, out, depth),
        Out::Parsed(j) => write_bounded(j, out, depth),
        Out::Null => {
            out.push_str("null");
            true
        }
        Out::Static(s) => {
            write_string(*s, out);
            true
        }
        Out::Text(s) => {
            write_string(s.as_str(), out);
            true
        }
        Out::Arr(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                if !write_built(item, out, depth + 1) {
                    return false;
                }
            }
            out.push(']');
            true
        }
        Out::Obj(entries) => {
            let mut entries: Vec<(&str, &Out<'_, J<'_>>)> = entries
                .iter()
                .map(|(k, v)| {
                    let key: &str = match k {
                        OutKey::Static(s) | OutKey::Str(s) => s,
                        OutKey::In(k) => k,
                    };
                    (key, v)
                })
                .collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_string(key, out);
                out.push_str(": ");
                if !write_built(item, out, depth + 1) {
                    return false;
                }
            }
            out.push('}');
            true
        }
    }
}

fn write_bounded(value: &J<'_>, out: &mut String, depth: usize) -> bool {
    if depth_exceeds(value, MAX_SORTED_DEPTH.saturating_sub(depth)) {
        return false;
    }
    write_sorted(value, out);
    true
}

/// `orjson.dumps(value).decode()`.
pub fn compact(value: &J<'_>) -> Result<String, ParserError> {
    if depth_exceeds(value, MAX_COMPACT_DEPTH) {
        return Err(ParserError::Type("Recursion limit reached".into()));
    }
    let mut out = String::new();
    write_compact(value, &mut out);
    Ok(out)
}

/// Whether lists/dicts nest more than `limit` levels (iteratively: the value may nest as
/// deep as the JSON reader allows).
fn depth_exceeds(value: &J<'_>, limit: usize) -> bool {
    let mut stack: Vec<(&J<'_>, usize)> = vec![(value, 1)];
    while let Some((node, depth)) = stack.pop() {
        let children: &mut dyn Iterator<Item = &J<'_>> = match node {
            J::Arr(items) => &mut items.iter(),
            J::Obj(obj) => &mut obj.entries().iter().map(|(_, v)| v),
            _ => continue,
        };
        if depth > limit {
            return true;
        }
        for child in children {
            stack.push((child, depth + 1));
        }
    }
    false
}

/// How a dump is spelled: `json.dumps(sort_keys=True, ensure_ascii=False)` or `orjson.dumps`.
struct Style {
    item_separator: &'static str,
    key_separator: &'static str,
    sort_keys: bool,
    float: fn(f64) -> String,
}

/// `json.dumps(..., sort_keys=True, ensure_ascii=False)`.
const SORTED: Style = Style {
    item_separator: ", ",
    key_separator: ": ",
    sort_keys: true,
    // A parsed value holds no NaN or infinity (the reader refuses them).
    float: repr_float,
};

/// `orjson.dumps`.
const COMPACT: Style = Style {
    item_separator: ",",
    key_separator: ":",
    sort_keys: false,
    float: orjson_float,
};

fn write_sorted(value: &J<'_>, out: &mut String) {
    write_value(value, &SORTED, out);
}

fn write_compact(value: &J<'_>, out: &mut String) {
    write_value(value, &COMPACT, out);
}

/// Recursion here is bounded by the depth checked before.
fn write_value(value: &J<'_>, style: &Style, out: &mut String) {
    match value {
        J::Null => out.push_str("null"),
        J::Bool(true) => out.push_str("true"),
        J::Bool(false) => out.push_str("false"),
        J::U64(n) => out.push_str(&n.to_string()),
        J::I64(n) => out.push_str(&n.to_string()),
        J::F64(f) => out.push_str(&(style.float)(*f)),
        J::Str(s) => write_string(*s, out),
        J::Arr(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(style.item_separator);
                }
                write_value(item, style, out);
            }
            out.push(']');
        }
        J::Obj(obj) => {
            let mut entries: Vec<&(&str, J<'_>)> = obj.entries().iter().collect();
            if style.sort_keys {
                entries.sort_by(|a, b| a.0.cmp(b.0));
            }
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(style.item_separator);
                }
                write_string(*key, out);
                out.push_str(style.key_separator);
                write_value(item, style, out);
            }
            out.push('}');
        }
    }
}

/// A float as `orjson` writes it: Python's `repr` digits, but fixed notation down to 1e-5
/// and a negative exponent without padding (`1e-7`, not `1e-07`).
fn orjson_float(x: f64) -> String {
    if !x.is_finite() {
        return "null".into();
    }
    let sci = format!("{x:e}"); // shortest round-trip digits, e.g. "-1.25e-7"
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-5..-4).contains(&exp) {
        // Python's repr switches to exponent notation at 1e-4, orjson at 1e-5.
        let (sign, mantissa) = match mantissa.strip_prefix('-') {
            Some(rest) => ("-", rest),
            None => ("", mantissa),
        };
        let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
        return format!("{sign}0.0000{digits}");
    }
    let repr = repr_float(x);
    match repr.split_once("e-") {
        Some((mantissa, exp)) => format!("{mantissa}e-{}", exp.trim_start_matches('0')),
        None => repr,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bumpalo::Bump;

    fn parsed<'a>(text: &'a str, bump: &'a Bump) -> J<'a> {
        crate::content::parse_json(text, bump).expect("test JSON")
    }

    #[test]
    fn sorted_writes_what_json_dumps_writes() {
        let bump = Bump::new();
        let value = parsed(
            r#"{"b": [1, 2.5, 1e20, -0.0, true, null], "a": "\u00e9\n\"\u001f\u007f", "": {}}"#,
            &bump,
        );
        assert_eq!(
            sorted(&value).as_deref(),
            Some(
                "{\"\": {}, \"a\": \"\u{e9}\\n\\\"\\u001f\u{7f}\", \"b\": [1, 2.5, 1e+20, -0.0, true, null]}"
            )
        );
    }

    #[test]
    fn compact_writes_what_orjson_writes() {
        let bump = Bump::new();
        let value = parsed(
            r#"[1e-7, 2.5e-5, 1e-5, 1e-4, 1e16, 1e15, 0.1, -1.5e-10, 18446744073709551615, {"k": "\b\f"}]"#,
            &bump,
        );
        assert_eq!(
            compact(&value).as_deref(),
            Ok("[1e-7,0.000025,0.00001,0.0001,1e+16,1000000000000000.0,0.1,-1.5e-10,18446744073709551615,{\"k\":\"\\b\\f\"}]")
        );
    }

    #[test]
    fn depth_is_bounded_as_the_python_serialisers_bound_it() {
        let bump = Bump::new();
        let nest = |n: usize| "[".repeat(n) + &"]".repeat(n);
        let at = nest(MAX_COMPACT_DEPTH);
        let past = nest(MAX_COMPACT_DEPTH + 1);
        assert!(compact(&parsed(&at, &bump)).is_ok());
        assert!(compact(&parsed(&past, &bump)).is_err());
        let at = nest(MAX_SORTED_DEPTH);
        let past = nest(MAX_SORTED_DEPTH + 1);
        assert!(sorted(&parsed(&at, &bump)).is_some());
        assert!(sorted(&parsed(&past, &bump)).is_none());
    }
}
