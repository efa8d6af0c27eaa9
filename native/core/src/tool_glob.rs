//! Whether a contract's tool name (a glob) names a recorded tool: `first_match` of
//! `otel_oracles.model.tool_name` (its `tool_matches` per pattern), for the patterns that
//! hold no character class, so the plans that ask it of every call need no Python call.
//!
//! The rules are the module docstring's there, followed step for step:
//!
//! - A recorded name loses a trailing special method (`\.__[a-z][a-z0-9_]*__$`: `.__call__`)
//!   unless nothing is left, then splits at the separators `__`, `-`, `.`, `/` (the split's
//!   alternation tries `__` first at each place), empty segments dropped; no segment at all
//!   leaves the name whole as its one segment. A pattern splits the same way, without the
//!   special method's removal.
//! - A pattern names a recorded name when it matches it whole, or its segments match the
//!   name's last ones one by one; when the pattern has more segments than the name, only
//!   when failing closed (`unknown_namespace_matches`), with the pattern's last ones. Failing
//!   closed, a one-segment pattern also names a name any of whose segments it matches, or
//!   ends in it after a `_` (`fnmatch.fnmatchcase(segment, "*_" + pattern)`).
//! - A glob is `fnmatch.fnmatchcase`'s: `*` any run of characters, `?` any one character
//!   (line breaks too: `fnmatch` translates with `DOTALL`), anything else itself, compared
//!   by code point. A `[` (a class, or a lone bracket, which `fnmatch` reads its own way)
//!   makes no plan: Python answers.
//!
//! A recorded name is untrusted: matching is linear in it for a plain pattern and at most
//! its length times the pattern's for a glob (the usual star-backtracking walk, which never
//! backtracks past the last star), and a name longer than [`MAX_TOOL_NAME`] bytes, or one
//! ending in a line break (where `$` may also match before it), is left to Python.

/// The longest recorded name (in bytes) matched here.
pub const MAX_TOOL_NAME: usize = 4096;

/// One item of a glob.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    /// `*`.
    Star,
    /// `?`.
    Any,
    /// A character standing for itself (its code point).
    Char(u32),
}

/// A glob: its text, and its items when it holds a wildcard (a plain name is compared as
/// text).
#[derive(Debug, Clone)]
struct Glob {
    text: Box<str>,
    toks: Option<Box<[Tok]>>,
}

impl Glob {
    fn new(text: &str) -> Self {
        let wild = text.contains(['*', '?']);
        Self {
            text: text.into(),
            toks: wild.then(|| toks_of(text).collect()),
        }
    }

    /// `fnmatch.fnmatchcase(name, self)`.
    fn matches(&self, name: &str) -> bool {
        match &self.toks {
            None => *self.text == *name,
            Some(toks) => wildcard_str(toks, name),
        }
    }

    /// `fnmatch.fnmatchcase(name, "*_" + self)`: `name` ends in a `_` and then a match of
    /// this glob.
    fn matches_after_underscore(&self, name: &str) -> bool {
        match &self.toks {
            None => {
                let head = name.len().checked_sub(self.text.len() + 1);
                head.is_some_and(|head| {
                    name.as_bytes()[head] == b'_' && name[head + 1..] == *self.text
                })
            }
            Some(toks) => {
                let under: Vec<Tok> = [Tok::Star, Tok::Char(u32::from('_'))]
                    .into_iter()
                    .chain(toks.iter().copied())
                    .collect();
                wildcard_str(&under, name)
            }
        }
    }
}

fn toks_of(text: &str) -> impl Iterator<Item = Tok> + '_ {
    text.chars().map(|c| match c {
        '*' => Tok::Star,
        '?' => Tok::Any,
        c => Tok::Char(u32::from(c)),
    })
}

/// A contract's tool name: the glob whole and its segments.
#[derive(Debug, Clone)]
struct Pattern {
    whole: Glob,
    segments: Vec<Glob>,
}

/// The patterns of one `first_match` tuple, in order.
#[derive(Debug, Clone)]
pub struct ToolGlobs {
    patterns: Vec<Pattern>,
}

impl ToolGlobs {
    /// The plan of `patterns`, or `None` when one holds a `[` (Python's `fnmatch` reads
    /// classes, and unclosed brackets, its own way).
    pub fn of<'a>(patterns: impl IntoIterator<Item = &'a str>) -> Option<Self> {
        let mut out = Vec::new();
        for pattern in patterns {
            if pattern.contains('[') {
                return None;
            }
            out.push(Pattern {
                whole: Glob::new(pattern),
                segments: split(pattern).map(Glob::new).collect(),
            });
        }
        Some(Self { patterns: out })
    }

    /// `first_match(recorded, patterns, unknown_namespace_matches)`: the index of the first
    /// pattern naming `recorded` (`Some(None)`: none does), or `None` when the name is left
    /// to Python (past [`MAX_TOOL_NAME`], or ending in a line break).
    pub fn first_match(
        &self,
        recorded: &str,
        unknown_namespace_matches: bool,
    ) -> Option<Option<usize>> {
        if recorded.len() > MAX_TOOL_NAME || recorded.ends_with('\n') {
            return None;
        }
        let mut have: Vec<&str> = split(without_special_method(recorded)).collect();
        if have.is_empty() {
            have.push(recorded);
        }
        Some(
            self.patterns
                .iter()
                .position(|p| p.names(recorded, &have, unknown_namespace_matches)),
        )
    }
}

impl Pattern {
    /// `tool_matches(self, recorded, lax)`, `have` the recorded name's segments.
    fn names(&self, recorded: &str, have: &[&str], lax: bool) -> bool {
        if self.whole.matches(recorded) {
            return true;
        }
        let mut want = &self.segments[..];
        if want.is_empty() {
            return false;
        }
        if want.len() > have.len() {
            if !lax {
                return false;
            }
            want = &want[want.len() - have.len()..];
        }
        let tail = &have[have.len() - want.len()..];
        if want.iter().zip(tail).all(|(w, h)| w.matches(h)) {
            return true;
        }
        lax && want.len() == 1
            && have
                .iter()
                .any(|h| want[0].matches(h) || want[0].matches_after_underscore(h))
    }
}

/// `raw` without a trailing `.__name__` (`_DUNDER_CALL`), unless nothing would be left.
/// The method's name holds no `.`, so only the last `.` can start it.
fn without_special_method(raw: &str) -> &str {
    let Some(dot) = raw.rfind('.') else {
        return raw;
    };
    let Some(name) = raw[dot + 1..].strip_prefix("__") else {
        return raw;
    };
    let bytes = name.as_bytes();
    let special = bytes.len() >= 3
        && bytes[0].is_ascii_lowercase()
        && name.ends_with("__")
        && bytes
            .iter()
            .all(|&b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if special && dot > 0 {
        &raw[..dot]
    } else {
        raw
    }
}

/// `text`'s segments between the separators, the empty ones left out (`_SPLIT.split`: at
/// each place `__` is tried before `-`, `.` and `/`).
fn split(text: &str) -> impl Iterator<Item = &str> + '_ {
    let bytes = text.as_bytes();
    let (mut start, mut at) = (0, 0);
    std::iter::from_fn(move || {
        while at < bytes.len() {
            let width = match bytes[at] {
                b'_' if bytes.get(at + 1) == Some(&b'_') => 2,
                b'-' | b'.' | b'/' => 1,
                _ => 0,
            };
            if width == 0 {
                at += 1;
                continue;
            }
            let piece = &text[start..at];
            at += width;
            start = at;
            if !piece.is_empty() {
                return Some(piece);
            }
        }
        if start < bytes.len() {
            let piece = &text[start..];
            start = bytes.len();
            return Some(piece);
        }
        None
    })
}

/// Whether `name` matches the glob `toks`, by code point (by byte for an ASCII name, where
/// a byte is a code point).
fn wildcard_str(toks: &[Tok], name: &str) -> bool {
    if name.is_ascii() {
        wildcard(toks, name.as_bytes())
    } else {
        wildcard(toks, &name.chars().collect::<Vec<_>>())
    }
}

/// The glob walk: characters and `?` advance both sides; at a `*` the walk remembers where
/// it stood and first lets the star take nothing; on a mismatch it returns to the last star
/// and lets it take one more character. Only the last star is ever returned to (a match
/// found past it with the star taking more is found with the later stars taking it),
/// so the walk is at most `name.len()` times `toks.len()` steps.
fn wildcard<T: Copy + Into<u32>>(toks: &[Tok], name: &[T]) -> bool {
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match toks.get(p) {
            Some(Tok::Star) => {
                star = Some((p, n));
                p += 1;
                continue;
            }
            Some(Tok::Any) => {
                p += 1;
                n += 1;
                continue;
            }
            Some(&Tok::Char(c)) if c == name[n].into() => {
                p += 1;
                n += 1;
                continue;
            }
            _ => {}
        }
        match star {
            Some((sp, sn)) => {
                p = sp + 1;
                n = sn + 1;
                star = Some((sp, sn + 1));
            }
            None => return false,
        }
    }
    toks[p..].iter().all(|&t| t == Tok::Star)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(patterns: &[&str], recorded: &str, lax: bool) -> Option<usize> {
        ToolGlobs::of(patterns.iter().copied())
            .unwrap()
            .first_match(recorded, lax)
            .unwrap()
    }

    #[test]
    fn a_bare_name_names_every_qualified_form() {
        for recorded in [
            "delete_records",
            "SupportTools-delete_records",
            "mcp__crm__delete_records",
            "toolset.delete_records",
            "server/delete_records",
            "delete_records.__call__",
            "crm.delete_records.__acall__",
        ] {
            assert_eq!(
                first(&["delete_records"], recorded, false),
                Some(0),
                "{recorded}"
            );
            assert_eq!(
                first(&["x", "delete_*"], recorded, false),
                Some(1),
                "{recorded}"
            );
        }
        assert_eq!(
            first(&["delete_records"], "delete_records_audit", false),
            None
        );
        assert_eq!(first(&["delete_records"], "records", false), None);
    }

    #[test]
    fn a_qualified_name_names_its_namespace_only() {
        let crm = ["crm.delete_records"];
        assert_eq!(first(&crm, "mcp__crm__delete_records", false), Some(0));
        assert_eq!(first(&crm, "crm-delete_records", false), Some(0));
        assert_eq!(first(&crm, "billing.delete_records", false), None);
        assert_eq!(first(&crm, "delete_records", false), None);
        assert_eq!(first(&crm, "delete_records", true), Some(0));
        assert_eq!(first(&crm, "delete_records.acall", true), None);
    }

    #[test]
    fn failing_closed_a_bare_name_names_any_segment_and_underscored_prefixes() {
        for recorded in [
            "delete_records.acall",
            "docs_delete_records",
            "x/bulk_delete_records",
        ] {
            assert_eq!(
                first(&["delete_records"], recorded, true),
                Some(0),
                "{recorded}"
            );
            assert_eq!(
                first(&["delete_records"], recorded, false),
                None,
                "{recorded}"
            );
        }
        assert_eq!(first(&["delete_*"], "docs_delete_all", true), Some(0));
        assert_eq!(first(&["delete_records"], "_delete_records", true), Some(0));
        assert_eq!(first(&["delete_records"], "xdelete_records", true), None);
    }

    #[test]
    fn names_split_as_the_regex_splits_them() {
        assert_eq!(split("a___b").collect::<Vec<_>>(), ["a", "_b"]);
        assert_eq!(split("__a--b./c__").collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(split("___").collect::<Vec<_>>(), ["_"]);
        assert!(split("__-./").next().is_none());
        assert_eq!(without_special_method("f.__call__"), "f");
        assert_eq!(without_special_method(".__call__"), ".__call__");
        assert_eq!(without_special_method("f.__Call__"), "f.__Call__");
        assert_eq!(without_special_method("f.__1x__"), "f.__1x__");
        assert_eq!(without_special_method("f.__a__"), "f");
        assert_eq!(without_special_method("f.__a_"), "f.__a_");
        assert_eq!(without_special_method("g.__x__.y"), "g.__x__.y");
        assert_eq!(first(&["__"], "__", false), Some(0));
    }

    #[test]
    fn globs_match_as_fnmatch_translates_stars_and_marks() {
        let glob = |pattern: &str, name: &str| Glob::new(pattern).matches(name);
        assert!(glob("*", ""));
        assert!(glob("r*s*t", "research_assistant"));
        assert!(glob("?esearcher", "researcher"));
        assert!(glob("a?c", "a\nc"));
        assert!(glob("**a**", "bab"));
        assert!(glob("\u{e9}*?", "\u{e9}a\u{1f600}"));
        assert!(!glob("?", "\u{e9}\u{e9}"));
        assert!(!glob("a*b*c", "abca_b"));
        assert!(glob("a*b*c", "aXbYbZc"));
        assert!(!glob("", "a"));
        assert!(Glob::new("x").matches_after_underscore("a_x"));
        assert!(!Glob::new("x").matches_after_underscore("_x_x1"));
        assert!(Glob::new("x?").matches_after_underscore("_x_x1"));
    }

    #[test]
    fn leaves_classes_long_names_and_line_breaks_to_python() {
        assert!(ToolGlobs::of(["a", "search_[a-z]*"]).is_none());
        let plan = ToolGlobs::of(["a"]).unwrap();
        assert_eq!(
            plan.first_match(&"a".repeat(MAX_TOOL_NAME + 1), false),
            None
        );
        assert_eq!(plan.first_match("a\n", false), None);
        assert_eq!(plan.first_match("b", false), Some(None));
    }
}
