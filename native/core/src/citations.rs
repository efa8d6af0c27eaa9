//! `citations_grounded`'s search for a cited id in the earlier results' texts
//! (`otel_oracles.grade.oracles.trace_answers`): whether the id occurs as a whole id, not
//! preceded or followed by a character that would continue it (`[\w-]`), under the check's
//! budget of scanned characters.
//!
//! Texts are Python strings as bytes: UTF-8, or, for a string holding a lone surrogate,
//! Python's `surrogatepass` encoding of it (a surrogate as the three bytes UTF-8 would give
//! its code point). Either way a character's bytes start with a byte that is no
//! continuation byte, so a non-empty id found at a byte offset is found at a character
//! boundary, as `str.find` finds it, and the occurrences come in the same order.
//!
//! Which character continues an id is the regex engine's answer for `\w` beyond ASCII: the
//! caller answers those (`continues`); ASCII is decided here (`[A-Za-z0-9_-]`).

use crate::hashing::{FastSet, FastSetExt};

/// What one occurrence whose neighbours are tested is charged, in scanned characters.
pub const OCCURRENCE_COST: i64 = 1_000;

/// The characters a check may still scan (the check's `CITATION_SCAN_BUDGET` to start).
#[derive(Debug)]
pub struct Budget {
    left: i64,
}

/// Why a search stopped before answering.
#[derive(Debug, PartialEq, Eq)]
pub enum Stop<E> {
    /// The budget ran out.
    OverBudget,
    /// The caller's `continues` failed.
    Failed(E),
}

impl Budget {
    /// A budget of `left` characters.
    pub fn of(left: i64) -> Self {
        Budget { left }
    }

    /// What is left (below 0 once run out).
    pub fn left(&self) -> i64 {
        self.left
    }

    /// Charges `chars`; out of budget once less than nothing is left.
    pub fn spend<E>(&mut self, chars: i64) -> Result<(), Stop<E>> {
        self.left = self.left.saturating_sub(chars);
        if self.left < 0 {
            return Err(Stop::OverBudget);
        }
        Ok(())
    }
}

/// Whether `id` holds a character that may stand between two JSON tokens (`_RUN_BREAKS`:
/// space, newline, `,`, brackets and braces): only an id without one is found alike in a
/// result's compact JSON and in the indented JSON searched for it.
pub fn breaks_run(id: &[u8]) -> bool {
    id.iter()
        .any(|b| matches!(b, b' ' | b'\n' | b',' | b'[' | b']' | b'{' | b'}'))
}

/// A cited id as the search looks for it: its bytes and, per byte value, how far a window
/// whose last byte is that value may move on (Horspool's table: an id's occurrences in a
/// result are mostly near misses, `doc-4` among `doc-12`, `doc-31` ..., which a scan for
/// the first byte would stop at every time). Made once per id.
pub struct Needle<'a> {
    bytes: &'a [u8],
    shift: [u32; 256],
}

impl<'a> Needle<'a> {
    /// The needle of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
        let mut shift = [len.max(1); 256];
        if let Some((_, head)) = bytes.split_last() {
            for (k, &b) in head.iter().enumerate() {
                shift[usize::from(b)] = len - 1 - k as u32;
            }
        }
        Needle { bytes, shift }
    }

    /// The needle's bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The first occurrence in `hay` at or after byte `from` (the leftmost: a window moves
    /// by no more than the distance to the next place its last byte occurs in the needle).
    fn find_from(&self, hay: &[u8], from: usize) -> Option<usize> {
        let needle = self.bytes;
        let (&last, head) = needle.split_last()?;
        let m = needle.len();
        let mut at = from;
        while at.checked_add(m)? <= hay.len() {
            let end = hay[at + m - 1];
            if end == last && &hay[at..at + m - 1] == head {
                return Some(at);
            }
            at += self.shift[usize::from(end)] as usize;
        }
        None
    }
}

/// The code point whose bytes start at `at` (UTF-8, surrogates allowed).
fn decode_at(text: &[u8], at: usize) -> u32 {
    let lead = text[at];
    let (len, bits) = match lead {
        0x00..=0x7f => return u32::from(lead),
        0xc0..=0xdf => (2, u32::from(lead & 0x1f)),
        0xe0..=0xef => (3, u32::from(lead & 0x0f)),
        _ => (4, u32::from(lead & 0x07)),
    };
    text[at + 1..(at + len).min(text.len())]
        .iter()
        .fold(bits, |cp, &b| (cp << 6) | u32::from(b & 0x3f))
}

/// The code point whose bytes end just before `end`.
fn decode_before(text: &[u8], end: usize) -> u32 {
    let mut at = end - 1;
    while at > 0 && text[at] & 0xc0 == 0x80 {
        at -= 1;
    }
    decode_at(text, at)
}

/// Whether `cp` would continue an id: ASCII decided here, the rest by `continues`.
fn continues_id<E>(cp: u32, continues: &mut impl FnMut(u32) -> Result<bool, E>) -> Result<bool, E> {
    match u8::try_from(cp) {
        Ok(b) if b.is_ascii() => Ok(b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
        _ => continues(cp),
    }
}

/// Whether the non-empty `id` occurs in `text` (`chars` characters long) as a whole id,
/// charging `budget` the text's characters, then `OCCURRENCE_COST` for each occurrence
/// tested, in the order Python's search charged them.
pub fn cites_whole_id<E>(
    id: &Needle<'_>,
    text: &[u8],
    chars: usize,
    budget: &mut Budget,
    mut continues: impl FnMut(u32) -> Result<bool, E>,
) -> Result<bool, Stop<E>> {
    budget.spend(i64::try_from(chars).unwrap_or(i64::MAX))?;
    if id.bytes.is_empty() {
        return Ok(false); // never asked: the answer's ids are never empty
    }
    let mut from = 0;
    while let Some(start) = id.find_from(text, from) {
        budget.spend(OCCURRENCE_COST)?;
        let after = start + id.bytes.len();
        let whole = (start == 0
            || !continues_id(decode_before(text, start), &mut continues).map_err(Stop::Failed)?)
            && (after == text.len()
                || !continues_id(decode_at(text, after), &mut continues).map_err(Stop::Failed)?);
        if whole {
            return Ok(true);
        }
        from = start + 1;
    }
    Ok(false)
}

/// Characters of a text past which [`IdPattern::ids`] does not answer. The engine's
/// search of such a pattern is linear (a few milliseconds for this many characters at
/// the worst, a text of nothing but near misses), far within `safe_regex`'s budget of a
/// second, which therefore cannot change its answer; a longer text goes to the engine
/// under that budget, as before.
pub const MAX_ID_TEXT: usize = 100_000;

/// Which characters the run after an [`IdPattern`]'s literal takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Run {
    /// `\d`: a decimal digit, any of Unicode's (the engine's `\d` on a `str`, no flags).
    /// Only ASCII ones are read here: a non-ASCII character where the run could take it
    /// leaves the text to the engine.
    Digits,
    /// `[0-9]`: an ASCII digit.
    Ascii,
}

/// Which part of a match is the id (`_cited_ids`: the first group when the pattern has
/// one, else the match).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Taken {
    /// The match: `doc-\d+` or `(doc-\d+)`.
    Match,
    /// The run: `doc-(\d+)`.
    Run,
}

/// A citation pattern of the one shape the core answers itself (`_cited_ids` in
/// `otel_oracles.grade.oracles.trace_answers`): a non-empty literal followed by a greedy
/// run of digits, `doc-\d+` (also `doc-[0-9]+`, the whole or the run in a group). Its
/// matches are plain: the literal cannot be part of the run, so at each place the literal
/// occurs the engine's leftmost, greedy match is the literal and every digit after it
/// (none: no match there, the search moves on by one character), and the next match is
/// looked for past it. Nothing backtracks.
///
/// The literal is characters that mean themselves in the engine's syntax with no flags:
/// ASCII letters and digits, a space, and the ASCII punctuation that is no operator, or
/// an operator escaped with `\`. Any other pattern gets no plan (`of` is `None`): the
/// engine answers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdPattern {
    literal: String,
    run: Run,
    taken: Taken,
}

/// ASCII punctuation that means itself unescaped (no operator, nor `#` which `VERBOSE`
/// would read: the engine runs these patterns without flags, but kept out all the same).
const PLAIN_PUNCTUATION: &[u8] = b"-_:/@=!,;'\"%&~<>`";

/// ASCII punctuation that means itself escaped (an operator, or plain punctuation: `\<`,
/// `\>` and letters are kept out, other engines read some of them as assertions).
const ESCAPED_PUNCTUATION: &[u8] = b"-_:/@=!,;'\"%&~.^$*+?{}[]()|\\# ";

impl IdPattern {
    /// The plan of `pattern`, when it has the shape.
    pub fn of(pattern: &str) -> Option<Self> {
        let (body, whole) = match pattern.strip_prefix('(').and_then(|p| p.strip_suffix(')')) {
            Some(inner) if !inner.starts_with('?') => (inner, true),
            _ => (pattern, false),
        };
        let runs = [
            (r"(\d+)", Run::Digits, Taken::Run),
            (r"\d+", Run::Digits, Taken::Match),
            ("([0-9]+)", Run::Ascii, Taken::Run),
            ("[0-9]+", Run::Ascii, Taken::Match),
        ];
        let (head, run, taken) = runs
            .iter()
            .find_map(|&(tail, run, taken)| body.strip_suffix(tail).map(|h| (h, run, taken)))?;
        if whole && taken == Taken::Run {
            return None; // a group inside a group: the first is the match
        }
        let mut literal = String::with_capacity(head.len());
        let mut bytes = head.bytes();
        while let Some(b) = bytes.next() {
            let c = match b {
                b'\\' => bytes.next().filter(|e| ESCAPED_PUNCTUATION.contains(e))?,
                b if b.is_ascii_alphanumeric() || b == b' ' || PLAIN_PUNCTUATION.contains(&b) => b,
                _ => return None,
            };
            literal.push(char::from(c));
        }
        if literal.is_empty() {
            return None;
        }
        Some(IdPattern {
            literal,
            run,
            taken,
        })
    }

    /// Whether the literal holds a character that may stand between two JSON tokens
    /// ([`breaks_run`]). Only without one does a result's indented JSON (`json_indented`,
    /// the text the search stands in with) cite the ids its compact JSON (`result_text`)
    /// cites: the two differ only in those characters between tokens (a space or a newline
    /// after a comma, a newline inside a non-empty container's brackets), so the runs
    /// between break characters are the same in both, and a match, the literal and its
    /// digits, lies within one run.
    pub fn breaks_run(&self) -> bool {
        breaks_run(self.literal.as_bytes())
    }

    /// The ids `text` cites, in first-seen order, each once; `None` when a non-ASCII
    /// character stands where a `\d` run could take it (the engine decides which are
    /// digits).
    pub fn ids<'t>(&self, text: &'t str) -> Option<Vec<&'t str>> {
        let bytes = text.as_bytes();
        let mut ids: Vec<&'t str> = Vec::new();
        let mut seen: FastSet<&'t str> = FastSet::new();
        let mut from = 0;
        while let Some(found) = text.get(from..).and_then(|rest| rest.find(&self.literal)) {
            let start = from + found;
            let after = start + self.literal.len();
            let mut end = after;
            while end < bytes.len() && bytes[end].is_ascii_digit() {
                end += 1;
            }
            if self.run == Run::Digits && bytes.get(end).is_some_and(|b| !b.is_ascii()) {
                return None;
            }
            if end == after {
                // No digit: no match here. The next place the literal occurs may overlap
                // this one (`aa` in `aaa1`); `start + 1` may fall inside a character, which
                // `get` refuses, so the search moves on to the next character boundary.
                from = start + 1;
                while !text.is_char_boundary(from) {
                    from += 1;
                }
                continue;
            }
            let id = match self.taken {
                Taken::Match => &text[start..end],
                Taken::Run => &text[after..end],
            };
            if seen.insert(id) {
                ids.push(id);
            }
            from = end;
        }
        Some(ids)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cites(id: &str, text: &str) -> bool {
        let mut budget = Budget::of(2_000_000_000);
        // beyond ASCII: letters and digits continue an id
        let continues = |cp: u32| -> Result<bool, ()> {
            Ok(char::from_u32(cp).is_some_and(char::is_alphanumeric))
        };
        cites_whole_id(
            &Needle::new(id.as_bytes()),
            text.as_bytes(),
            text.chars().count(),
            &mut budget,
            continues,
        )
        .unwrap()
    }

    #[test]
    fn whole_ids_only() {
        assert!(cites("doc-4", "see doc-4."));
        assert!(cites("doc-4", "doc-4"));
        assert!(!cites("doc-4", "doc-42"));
        assert!(!cites("doc-4", "xdoc-4"));
        assert!(!cites("doc-4", "doc-4_"));
        assert!(!cites("doc-4", "doc-4-"));
        assert!(!cites("doc-4", ""));
        // a later occurrence counts when an earlier one is part of a longer id
        assert!(cites("doc-4", "doc-42 doc-4"));
        // overlapping occurrences are each tested
        assert!(cites("aa", "aaa aa"));
    }

    #[test]
    fn unicode_neighbours_ask_the_caller() {
        assert!(!cites("doc-4", "ädoc-4"));
        assert!(!cites("doc-4", "doc-4é"));
        assert!(cites("doc-4", "«doc-4»"));
        assert!(cites("doc-4", "文書 doc-4 文書"));
        assert!(!cites("doc-4", "文書doc-4"));
        // a multi-byte id
        assert!(cites("文書-7", "見よ: 文書-7."));
        assert!(!cites("文書-7", "見よ: 古文書-7."));
    }

    #[test]
    fn surrogates_pass_through() {
        // Python's surrogatepass bytes of "\ud800doc-1 doc-1": a lone surrogate before the
        // first occurrence, which the caller is asked about.
        let text = b"\xed\xa0\x80doc-1 doc-1";
        let mut asked = Vec::new();
        let mut budget = Budget::of(2_000_000_000);
        let found = cites_whole_id(
            &Needle::new(b"doc-1"),
            text,
            11,
            &mut budget,
            |cp| -> Result<bool, ()> {
                asked.push(cp);
                Ok(true)
            },
        );
        assert_eq!(found, Ok(true));
        assert_eq!(asked, vec![0xd800]);
    }

    #[test]
    fn budget_is_charged_as_python_charged_it() {
        // the text's characters, then an occurrence
        let mut budget = Budget::of(10 + OCCURRENCE_COST);
        let never = |_: u32| -> Result<bool, ()> { Ok(false) };
        assert_eq!(
            cites_whole_id(&Needle::new(b"ab"), b"xxxxxxx ab", 10, &mut budget, never),
            Ok(true)
        );
        let mut budget = Budget::of(10 + OCCURRENCE_COST - 1);
        assert_eq!(
            cites_whole_id(&Needle::new(b"ab"), b"xxxxxxx ab", 10, &mut budget, never),
            Err(Stop::OverBudget)
        );
        // the text alone over budget: stops before searching
        let mut budget = Budget::of(9);
        assert_eq!(
            cites_whole_id(&Needle::new(b"ab"), b"xxxxxxx ab", 10, &mut budget, never),
            Err(Stop::OverBudget)
        );
        // a failing caller stops the search
        let mut budget = Budget::of(2_000_000_000);
        let failing = |_: u32| -> Result<bool, &str> { Err("boom") };
        assert_eq!(
            cites_whole_id(
                &Needle::new(b"ab"),
                "éab".as_bytes(),
                3,
                &mut budget,
                failing
            ),
            Err(Stop::Failed("boom"))
        );
    }

    #[test]
    fn run_breaks() {
        assert!(!breaks_run(b"doc-4"));
        assert!(breaks_run(b"doc 4"));
        assert!(breaks_run(b"[4]"));
        assert!(!breaks_run("文書".as_bytes()));
    }

    #[test]
    fn find_from_finds_overlaps_and_bounds() {
        let aa = Needle::new(b"aa");
        assert_eq!(aa.find_from(b"aaa", 0), Some(0));
        assert_eq!(aa.find_from(b"aaa", 1), Some(1));
        assert_eq!(aa.find_from(b"aaa", 2), None);
        assert_eq!(Needle::new(b"abc").find_from(b"ab", 0), None);
        assert_eq!(Needle::new(b"b").find_from(b"ab", 5), None);
        assert_eq!(Needle::new(b"b").find_from(b"ab", 0), Some(1));
        assert_eq!(Needle::new(b"").find_from(b"ab", 0), None);
    }

    /// Horspool's search finds every occurrence the plain scan finds, in order, on texts
    /// drawn from a small alphabet (many near misses and overlaps).
    #[test]
    fn find_from_agrees_with_the_plain_scan() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n) as usize
        };
        let alphabet = b"doc-4";
        for _ in 0..3000 {
            let hay: Vec<u8> = (0..next(40)).map(|_| alphabet[next(5)]).collect();
            let needle: Vec<u8> = (0..1 + next(4)).map(|_| alphabet[next(5)]).collect();
            let fast = Needle::new(&needle);
            for from in 0..=hay.len() + 1 {
                let plain = (from..=hay.len().saturating_sub(needle.len()))
                    .find(|&at| at + needle.len() <= hay.len() && hay[at..].starts_with(&needle));
                assert_eq!(
                    fast.find_from(&hay, from),
                    plain,
                    "{hay:?} {needle:?} {from}"
                );
            }
        }
    }

    /// A long text without the id is scanned once: 10 MB of near misses.
    #[test]
    fn long_text_of_near_misses() {
        let text = "doc-".repeat(2_500_000);
        assert!(!cites("doc-4", &text));
        assert!(cites("doc-4", &(text + " doc-4")));
    }

    fn ids<'t>(pattern: &str, text: &'t str) -> Option<Vec<&'t str>> {
        IdPattern::of(pattern).expect("a plan").ids(text)
    }

    #[test]
    fn id_patterns_of_the_shape_only() {
        for pattern in [
            r"doc-\d+",
            r"(doc-\d+)",
            r"doc-(\d+)",
            "doc-[0-9]+",
            r"\[\d+",
            r"a\.b\d+",
        ] {
            assert!(IdPattern::of(pattern).is_some(), "{pattern}");
        }
        for pattern in [
            r"\d+",
            r"doc-\d+?",
            r"doc-\d++",
            r"doc-\d*",
            r"(?i)doc-\d+",
            r"((doc-(\d+)))",
            r"(doc-(\d+))",
            r"doc.\d+",
            r"doc-\w+",
            r"doc-\\d+",
            r"doc#\d+",
            r"doc-\d+\d+",
            r"do(c)-\d+",
            r"doc-\d{2}",
            "dóc-\\d+",
            r"(doc|ref)-\d+",
            r"doc-\d+)",
            r"\<\d+",
        ] {
            assert!(IdPattern::of(pattern).is_none(), "{pattern}");
        }
    }

    #[test]
    fn literals_breaking_a_run() {
        for pattern in [r"doc-\d+", r#""id":(\d+)"#, r"a\.b\d+", "doc:[0-9]+"] {
            assert!(
                !IdPattern::of(pattern).expect("a plan").breaks_run(),
                "{pattern}"
            );
        }
        for pattern in [
            r"doc \d+",
            r#""id": (\d+)"#,
            r",(\d+)",
            r"\[\d+",
            r"\]\d+",
            r"\{\d+",
            r"\}\d+",
        ] {
            assert!(
                IdPattern::of(pattern).expect("a plan").breaks_run(),
                "{pattern}"
            );
        }
    }

    #[test]
    fn ids_as_the_engine_finds_them() {
        assert_eq!(
            ids(r"doc-\d+", "see doc-12, doc-3 and doc-12"),
            Some(vec!["doc-12", "doc-3"])
        );
        assert_eq!(ids(r"doc-(\d+)", "doc-12 doc-3"), Some(vec!["12", "3"]));
        assert_eq!(ids(r"(doc-\d+)", "doc-12"), Some(vec!["doc-12"]));
        assert_eq!(ids(r"doc-\d+", "doc- doc-x doc-"), Some(vec![]));
        assert_eq!(ids(r"doc-\d+", "doc-doc-7"), Some(vec!["doc-7"]));
        assert_eq!(ids(r"aa\d+", "aaa1"), Some(vec!["aa1"]));
        assert_eq!(ids(r"doc-\d+", "é doc-4é"), None); // é may be a digit: the engine's
        assert_eq!(ids(r"doc-\d+", "doc-é"), None);
        assert_eq!(ids("doc-[0-9]+", "doc-4é doc-é"), Some(vec!["doc-4"]));
        assert_eq!(ids(r"doc-\d+", "é doc-4 é"), Some(vec!["doc-4"]));
        assert_eq!(ids(r"doc-\d+", ""), Some(vec![]));
    }
}
