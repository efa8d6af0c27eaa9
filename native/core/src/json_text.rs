//! JSON spellings shared by the core's JSON writers: strings as Python's
//! `json.dumps(ensure_ascii=False)` escapes them (the scan text and the JSON report must
//! match it byte for byte; the OTLP/JSON encoder escapes the same way) and floats as
//! `float.__repr__` writes them.

use crate::otlp_json::repr::repr_float;

/// `text` as a JSON string the way `json.dumps(..., ensure_ascii=False)` writes it: `"`, `\`
/// and the control characters escaped (`\n`, `\r`, `\t`, `\b`, `\f`, else `\u00xx`), every
/// other byte copied. Runs without an escape are copied whole. `text` may be UTF-8 extended
/// with surrogate code points (see `crate::scan`): only ASCII bytes are ever escaped, so any
/// multi-byte sequence passes through unchanged.
pub fn write_string(text: &[u8], out: &mut Vec<u8>) {
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

/// The JSON spelling of a float as `json.dumps` writes it (`repr`; `NaN`, `Infinity`,
/// `-Infinity` for the others).
pub fn float_text(x: f64) -> String {
    if x.is_nan() {
        "NaN".into()
    } else if x.is_infinite() {
        if x > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        repr_float(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(text: &str) -> String {
        let mut out = Vec::new();
        write_string(text.as_bytes(), &mut out);
        String::from_utf8(out).expect("utf-8 in, utf-8 out")
    }

    #[test]
    fn strings_are_escaped_as_json_dumps_escapes_them() {
        assert_eq!(written(""), r#""""#);
        assert_eq!(written("plain é 😀"), "\"plain é 😀\"");
        assert_eq!(written("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(written("\n\r\t\u{8}\u{c}"), r#""\n\r\t\b\f""#);
        assert_eq!(written("\u{0}\u{1f}\u{7f}"), "\"\\u0000\\u001f\u{7f}\"");
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
