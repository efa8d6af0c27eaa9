//! `degraded_answer`'s two searches of the answer (`must_disclose`, `uncertainty_pattern`,
//! `otel_oracles.grade.oracles.trace_answers`): patterns such as
//! `(?i)\b(degraded|timed? ?out|could not (?:retrieve|find))\b`, words and their
//! alternatives between word boundaries, answered here where the answer is provably the
//! `regex` engine's (version 0, the one `safe_regex` runs).
//!
//! A pattern is read only within a small subset: an optional leading `(?i)`; literal ASCII
//! characters (letters, digits, space and punctuation that is no operator, or `\` before
//! ASCII punctuation); `\b`; groups (`(...)`, `(?:...)`) and `|`; a greedy `?` after a
//! literal or a group. Anything else (classes, repeats, other flags, lookarounds, lazy or
//! possessive `?`) is no plan: the engine answers. Such a pattern has finitely many
//! spellings; they are listed in the order a backtracking engine tries them (a concatenation
//! varies its last choice fastest, an alternation tries its branches left to right, a
//! greedy `?` tries the item before its absence), so the first spelling that matches at the
//! leftmost position that has one is the engine's match.
//!
//! Only ASCII texts are read (`search` answers `None` for any other): there `\b` is between
//! `[A-Za-z0-9_]` and anything else (the engine's Unicode `\w` restricted to ASCII) and
//! `(?i)` pairs each ASCII letter with its other case alone. Beyond ASCII the engine's case
//! folding (`K`, U+212A, is a `k`; `ſ`, U+017F, an `s`) and Unicode `\w` would have to be
//! copied exactly, so the engine keeps those texts.
//!
//! A match starts where its spelling's characters (the `\b`s take no room) stand in the
//! text, so a vectorised search for those texts (Teddy, `aho_corasick::packed`, over the
//! text lower-cased when case is ignored) skips to the next place a match may start; only
//! there are the spellings tried, in order. Without Teddy (another CPU, more than its 64
//! texts) every byte is looked up in the table of first characters instead.

use aho_corasick::packed;
use aho_corasick::Span;

/// The longest text (in characters) the plan answers: past it the engine answers, under
/// `safe_regex`'s time budget, which may stop it (as `citations::MAX_ID_TEXT`).
pub const MAX_WORDS_TEXT: usize = 100_000;

/// The most spellings a pattern may have for the plan to take it: past it the engine's own
/// search is the cheaper one.
const MAX_SPELLINGS: usize = 256;

/// One item of a spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item {
    /// An ASCII character (lower-cased when the pattern ignores case).
    Char(u8),
    /// `\b`.
    Boundary,
}

/// A pattern of words between word boundaries, as its spellings in the engine's order.
#[derive(Debug, Clone)]
pub struct WordsPattern {
    ignore_case: bool,
    spellings: Vec<Vec<Item>>,
    /// By a text's byte (lower-cased when ignoring case), the spellings whose first
    /// character it is, in order: the only ones that may match where that byte starts.
    /// `None` when a spelling has no character (an empty match): every spelling is tried.
    by_first: Option<Vec<Vec<usize>>>,
    /// The next place a spelling's characters stand in a text (lower-cased when ignoring
    /// case): where a match may start. `None` with `by_first` `None`, or without Teddy.
    skip: Option<packed::Searcher>,
}

impl PartialEq for WordsPattern {
    /// Equal patterns have equal spellings (`skip` is made from them).
    fn eq(&self, other: &Self) -> bool {
        self.ignore_case == other.ignore_case && self.spellings == other.spellings
    }
}

impl Eq for WordsPattern {}

/// Why a pattern is outside the subset (never shown: the engine answers).
struct NotWords;

/// A reader of the subset, yielding each node's spellings.
struct Reader<'a> {
    text: &'a [u8],
    pos: usize,
    depth: usize,
    ignore_case: bool,
}

/// Characters that are operators outside a class (or, `#`, in verbose mode), so never a
/// literal of the subset unescaped.
const OPERATORS: &[u8] = b".^$*+?{}[]\\|()#";

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    /// `a|b|...`: the branches' spellings, left branch first.
    fn alternation(&mut self) -> Result<Vec<Vec<Item>>, NotWords> {
        let mut out = self.concat()?;
        while self.peek() == Some(b'|') {
            self.pos += 1;
            out.extend(self.concat()?);
            if out.len() > MAX_SPELLINGS {
                return Err(NotWords);
            }
        }
        Ok(out)
    }

    /// A concatenation: every choice of each item, the last item's varying fastest.
    fn concat(&mut self) -> Result<Vec<Vec<Item>>, NotWords> {
        let mut out: Vec<Vec<Item>> = vec![Vec::new()];
        while let Some(c) = self.peek() {
            if c == b'|' || c == b')' {
                break;
            }
            let mut item = self.atom()?;
            if self.peek() == Some(b'?') {
                self.pos += 1;
                if matches!(self.peek(), Some(b'?' | b'+')) {
                    return Err(NotWords); // lazy or possessive
                }
                if !item.iter().any(Vec::is_empty) {
                    item.push(Vec::new()); // greedy: the item first, then its absence
                } else {
                    return Err(NotWords); // an optional empty choice: not worth proving
                }
            }
            if matches!(self.peek(), Some(b'*' | b'+' | b'{' | b'?')) {
                return Err(NotWords);
            }
            let mut next = Vec::with_capacity(out.len() * item.len());
            for head in &out {
                for tail in &item {
                    let mut spelling = head.clone();
                    spelling.extend_from_slice(tail);
                    next.push(spelling);
                }
            }
            if next.len() > MAX_SPELLINGS {
                return Err(NotWords);
            }
            out = next;
        }
        Ok(out)
    }

    /// A literal, `\b`, an escaped punctuation character or a group.
    fn atom(&mut self) -> Result<Vec<Vec<Item>>, NotWords> {
        let c = self.peek().ok_or(NotWords)?;
        self.pos += 1;
        match c {
            b'(' => {
                if self.peek() == Some(b'?') {
                    if self.text.get(self.pos + 1) != Some(&b':') {
                        return Err(NotWords);
                    }
                    self.pos += 2;
                }
                self.depth += 1;
                if self.depth > 16 {
                    return Err(NotWords);
                }
                let body = self.alternation()?;
                self.depth -= 1;
                if self.peek() != Some(b')') {
                    return Err(NotWords);
                }
                self.pos += 1;
                Ok(body)
            }
            b'\\' => {
                let e = self.peek().ok_or(NotWords)?;
                self.pos += 1;
                if e == b'b' {
                    Ok(vec![vec![Item::Boundary]])
                } else if e.is_ascii_punctuation() {
                    Ok(vec![vec![self.char(e)]])
                } else {
                    Err(NotWords) // classes, anchors, references, \x.., \N{..} and the like
                }
            }
            _ if OPERATORS.contains(&c) => Err(NotWords),
            _ if c.is_ascii_alphanumeric() || c == b' ' || c.is_ascii_punctuation() => {
                Ok(vec![vec![self.char(c)]])
            }
            _ => Err(NotWords), // control characters, whitespace other than space, non-ASCII
        }
    }

    fn char(&self, c: u8) -> Item {
        Item::Char(if self.ignore_case {
            c.to_ascii_lowercase()
        } else {
            c
        })
    }
}

/// Whether `c` is a word character (`\w`) of an ASCII text.
fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

impl WordsPattern {
    /// The plan of `pattern`, when it is in the subset (module docs).
    pub fn of(pattern: &str) -> Option<Self> {
        let (ignore_case, rest) = match pattern.strip_prefix("(?i)") {
            Some(rest) => (true, rest),
            None => (false, pattern),
        };
        let mut reader = Reader {
            text: rest.as_bytes(),
            pos: 0,
            depth: 0,
            ignore_case,
        };
        let spellings = reader.alternation().ok()?;
        if reader.pos != reader.text.len() {
            return None; // an unbalanced `)`
        }
        let mut by_first = Some(vec![Vec::new(); 256]);
        // Each spelling's characters, once each (a spelling's match starts where they stand).
        let mut texts: Vec<Vec<u8>> = Vec::new();
        for (index, spelling) in spellings.iter().enumerate() {
            let chars: Vec<u8> = spelling
                .iter()
                .filter_map(|item| match *item {
                    Item::Char(c) => Some(c),
                    Item::Boundary => None,
                })
                .collect();
            if !chars.is_empty() && !texts.contains(&chars) {
                texts.push(chars);
            }
            let first = spelling.iter().find_map(|item| match *item {
                Item::Char(c) => Some(c),
                Item::Boundary => None,
            });
            match (first, by_first.as_mut()) {
                (Some(c), Some(table)) => table[usize::from(c)].push(index),
                _ => by_first = None,
            }
        }
        let skip = by_first.as_ref().and_then(|_| {
            packed::Config::new()
                .match_kind(packed::MatchKind::LeftmostFirst)
                .builder()
                .extend(&texts)
                .build()
        });
        Some(WordsPattern {
            ignore_case,
            spellings,
            by_first,
            skip,
        })
    }

    /// The engine's `search(pattern, text)`: `Some(Some((start, end)))` for the match (the
    /// offsets are characters and bytes alike), `Some(None)` for none, and `None` when the
    /// plan does not answer (a text beyond ASCII or past `MAX_WORDS_TEXT`).
    pub fn search(&self, text: &str) -> Option<Option<(usize, usize)>> {
        let bytes = text.as_bytes();
        if bytes.len() > MAX_WORDS_TEXT || !text.is_ascii() {
            return None;
        }
        let Some(by_first) = &self.by_first else {
            for start in 0..=bytes.len() {
                for spelling in &self.spellings {
                    if let Some(end) = self.spelled(bytes, start, spelling) {
                        return Some(Some((start, end)));
                    }
                }
            }
            return Some(None);
        };
        // Every spelling eats a character, the first of its own: only those whose first
        // character starts there are tried at a position (no match starts at the end).
        if let Some(skip) = &self.skip {
            let lowered;
            let hay = if self.ignore_case {
                lowered = bytes.to_ascii_lowercase();
                &lowered[..]
            } else {
                bytes
            };
            // `skip` finds the leftmost place at or after `at` where a spelling's
            // characters stand: no match starts before it.
            let mut at = 0;
            while let Some(next) = skip.find_in(hay, Span::from(at..hay.len())) {
                let start = next.start();
                for &index in &by_first[usize::from(hay[start])] {
                    if let Some(end) = self.spelled(bytes, start, &self.spellings[index]) {
                        return Some(Some((start, end)));
                    }
                }
                at = start + 1;
            }
            return Some(None);
        }
        for (start, &c) in bytes.iter().enumerate() {
            let c = if self.ignore_case {
                c.to_ascii_lowercase()
            } else {
                c
            };
            for &index in &by_first[usize::from(c)] {
                if let Some(end) = self.spelled(bytes, start, &self.spellings[index]) {
                    return Some(Some((start, end)));
                }
            }
        }
        Some(None)
    }

    /// Where `spelling` ends when it matches `text` at `start`.
    fn spelled(&self, text: &[u8], start: usize, spelling: &[Item]) -> Option<usize> {
        let mut at = start;
        for item in spelling {
            match *item {
                Item::Char(want) => {
                    let got = *text.get(at)?;
                    let got = if self.ignore_case {
                        got.to_ascii_lowercase()
                    } else {
                        got
                    };
                    if got != want {
                        return None;
                    }
                    at += 1;
                }
                Item::Boundary => {
                    let before = at > 0 && is_word(text[at - 1]);
                    let after = text.get(at).is_some_and(|&c| is_word(c));
                    if before == after {
                        return None;
                    }
                }
            }
        }
        Some(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DISCLOSURE: &str = r"(?i)\b(degraded|unavailable|outage|failed|failing|timed? ?out|no results|could not (?:retrieve|find|reach)|incomplete)\b";

    #[test]
    fn finds_the_leftmost_first_spelling() {
        let plan = WordsPattern::of(DISCLOSURE).unwrap();
        assert_eq!(plan.search("The call TIMED OUT."), Some(Some((9, 18))));
        assert_eq!(plan.search("timeout"), Some(Some((0, 7))));
        assert_eq!(plan.search("failedx failing"), Some(Some((8, 15))));
        assert_eq!(plan.search("all fine"), Some(None));
        assert_eq!(plan.search("caf\u{e9} failed"), None);
        let greedy = WordsPattern::of("ab?").unwrap();
        assert_eq!(greedy.search("xab"), Some(Some((1, 3))));
        assert_eq!(
            WordsPattern::of("a|ab").unwrap().search("ab"),
            Some(Some((0, 1)))
        );
    }

    #[test]
    fn skipping_to_possible_starts_finds_what_trying_every_byte_finds() {
        let patterns = [
            DISCLOSURE,
            r"\bfail(?:ed)?\b|FAIL",
            r"(?i)(?:a|ab)(c|bcd)?\b",
            r"(?i)k\b|s",
        ];
        let pieces = [
            "fail", "ed", " ", "_", "1", "K", "k", "s", "a", "bcd", "timed", " out", "FAIL", "x",
        ];
        // A small linear congruential generator: the texts are the same on every run.
        let mut state: u64 = 18;
        let mut next = |n: usize| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            usize::try_from(state >> 33).unwrap_or(0) % n
        };
        for pattern in patterns {
            let plan = WordsPattern::of(pattern).unwrap();
            assert!(plan.skip.is_some(), "{pattern}");
            let every_byte = WordsPattern {
                skip: None,
                ..plan.clone()
            };
            for _ in 0..400 {
                let text: String = (0..next(60)).map(|_| pieces[next(pieces.len())]).collect();
                assert_eq!(
                    plan.search(&text),
                    every_byte.search(&text),
                    "{pattern} {text}"
                );
            }
        }
    }

    #[test]
    fn refuses_what_it_does_not_prove() {
        for pattern in [
            r"\d+", "a*", "[ab]", "(?s)a", "a??", "a?+", "(?=a)", "a{2}", "(a", "a)", "\u{e9}",
            r"\w", "(a?)?", "a\tb", "#",
        ] {
            assert_eq!(WordsPattern::of(pattern), None, "{pattern}");
        }
    }
}
