//! What a redaction placeholder is: the one definition the evidence probes and the checks of
//! `otel_oracles.grade` judge a captured value by (`otel_oracles.grade.evidence.is_placeholder`,
//! bound in `native/python/src/evidence.rs`).
//!
//! A text is a placeholder when, stripped of Python's whitespace (`str.strip()`), it is empty
//! (content dropped, not content), one of [`PLACEHOLDER_WORDS`] in any ASCII case, or three
//! or more `*`. The test is linear in the text: trace content is untrusted, and the regex it
//! once was (`^\s*(...)?\s*$`) backtracked quadratically over long runs of whitespace.
//!
//! Comparing ASCII case-insensitively is Python's `str.lower()` comparison exactly: the only
//! character outside ASCII whose `lower()` is ASCII is U+212A KELVIN SIGN (`k`), and no
//! placeholder holds a `k`.

use crate::content::is_py_space;

/// The placeholder spellings, lower-case.
pub const PLACEHOLDER_WORDS: [&str; 7] = [
    "__redacted__",
    "[redacted]",
    "<redacted>",
    "redacted",
    "[filtered]",
    "<omitted>",
    "<elided>",
];

/// The longest of [`PLACEHOLDER_WORDS`], in characters.
pub const LONGEST_PLACEHOLDER: usize = 12;

/// The first characters of the spellings (and of `***`): a text starting with any other
/// character that is not whitespace is no placeholder, decided without reading the rest.
const FIRST: [u32; 6] = [
    b'_' as u32,
    b'[' as u32,
    b'<' as u32,
    b'*' as u32,
    b'r' as u32,
    b'R' as u32,
];

const STAR: u32 = b'*' as u32;

fn space(c: u32) -> bool {
    char::from_u32(c).is_some_and(is_py_space)
}

/// Whether the text of `len` code points, the `i`-th read by `at(i)`, is a placeholder.
///
/// Code points rather than a `&str`: a Python string may hold lone surrogates, which are
/// characters like any other here (neither whitespace nor part of a spelling), and reading
/// them one by one spares encoding a long text that the first character already decides.
pub fn is_placeholder_text(len: usize, at: impl Fn(usize) -> u32) -> bool {
    if len == 0 {
        return true;
    }
    let first = at(0);
    if !FIRST.contains(&first) && !space(first) {
        return false;
    }
    let mut start = 0;
    while start < len && space(at(start)) {
        start += 1;
    }
    let mut end = len;
    while end > start && space(at(end - 1)) {
        end -= 1;
    }
    let core = end - start;
    if core == 0 {
        return true;
    }
    if core > LONGEST_PLACEHOLDER {
        return (start..end).all(|i| at(i) == STAR);
    }
    let mut word = [0u8; LONGEST_PLACEHOLDER];
    for (slot, i) in word.iter_mut().zip(start..end) {
        match u8::try_from(at(i)) {
            Ok(byte) if byte.is_ascii() => *slot = byte.to_ascii_lowercase(),
            _ => return false,
        }
    }
    let word = &word[..core];
    (core >= 3 && word.iter().all(|&b| b == b'*'))
        || PLACEHOLDER_WORDS.iter().any(|w| w.as_bytes() == word)
}

/// [`is_placeholder_text`] of a Rust string.
pub fn is_placeholder_str(text: &str) -> bool {
    let chars: Vec<u32> = text.chars().map(u32::from).collect();
    is_placeholder_text(chars.len(), |i| chars[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_in_any_case_within_python_whitespace_are_placeholders() {
        for text in [
            "",
            "   ",
            "__REDACTED__",
            " [Redacted]\t",
            "<redacted>",
            "\u{3000}REDACTED\u{1f}",
            "[filtered]",
            "<omitted>",
            "<ELIDED>",
            "***",
            "\n**********************\n",
        ] {
            assert!(is_placeholder_str(text), "{text:?}");
        }
    }

    #[test]
    fn content_is_no_placeholder() {
        for text in [
            "x",
            "redacted text",
            "**",
            "*** ***",
            "\u{200b}",
            "\u{180e}redacted",
            "redacte\u{212a}",
            "r\u{0130}dacted",
            "<omitted>.",
            "_",
        ] {
            assert!(!is_placeholder_str(text), "{text:?}");
        }
    }

    #[test]
    fn a_lone_surrogate_is_a_character_like_any_other() {
        let text = [0x20, 0xd800, 0x20];
        assert!(!is_placeholder_text(text.len(), |i| text[i]));
        let spaced = [0x20, 0x20];
        assert!(is_placeholder_text(spaced.len(), |i| spaced[i]));
    }

    #[test]
    fn long_whitespace_is_read_once() {
        let mut text = " ".repeat(400_000);
        text.push_str("[REDACTED]");
        text.push_str(&"\t".repeat(400_000));
        assert!(is_placeholder_str(&text));
        text.push('x');
        assert!(!is_placeholder_str(&text));
    }
}
