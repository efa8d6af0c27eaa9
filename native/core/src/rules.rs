//! The mapping rule table: which rule of a convention set a span matches.
//!
//! The conventions' YAML is read, validated and compiled in Python (error messages, plug-in
//! parsers); what reaches the core is plain data: per rule, in priority order, its match
//! (`all` and `any` conditions on attributes, span name, span kind, instrumentation scope,
//! status, direct children, the direct parent). [`RuleTable::select`] evaluates it per span over any
//! [`SpanAccess`] and returns the first rule whose match holds.
//!
//! Regular expressions keep one meaning, Python's: conventions are written in Python's `re`
//! syntax (lookarounds, inline flags) and run under a time budget by
//! `otel_oracles.safe_regex`, and a second engine would disagree on some texts. Each regex
//! has a [`RegexPlan`] (see [`crate::rule_regex`]): for patterns in a small subset with a
//! plain meaning (literals, anchors, alternations of them...) the core answers itself; for
//! the others it answers "no match" when a text lacks a literal every match needs. Only the
//! remaining texts are asked of the [`Searcher`], and the answer is remembered per (regex,
//! text) in a bounded [`RegexMemo`]: span names and scope names repeat across spans, so the
//! host is asked once per distinct text, not once per span. For span and scope names the
//! core's own answers are remembered too: most rules start with their file's scope
//! condition, so a span would otherwise work out the same few answers once per rule.
//!
//! Before any rule is tried, a span's candidates are narrowed by what needs no rule walk
//! (see [`RuleTable::select`]): the rules whose span-name or scope regex the core proves
//! false for the span's texts (remembered per text, like the answers), and, when its access
//! can list its attributes, the rules that test an attribute the span does not have (worked
//! out once per set of keys: spans of one kind share theirs) and those whose `exists` /
//! `equals` tests of a key fail on the span's value (the rules indexed by that key, worked
//! out once per value). The narrowing only drops rules whose match cannot hold, so the
//! outcome is the walk's.
//!
//! Work per span is bounded by the table: every condition is evaluated at most once per rule,
//! a child condition looks at the span's direct children only (a child's own child
//! conditions see no children) and a parent condition at its direct parent only (seen
//! without parent or children), so a trace costs at most rules x conditions x spans tests.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::hashing::FastMap;
use crate::rule_regex::{number_literals, Noted, RegexPlan};

/// What a condition tests on one attribute.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrTest {
    /// Present (true) or absent (false).
    Exists(bool),
    /// A text value equal to one of these.
    EqualsText(Vec<Box<str>>),
    /// Equal to one of a list of values that are not all text (`equals: [1, true]`): the
    /// span access compares them, by the number of the list in its host's table.
    EqualsHost(u32),
    /// A text value in which this regex finds a match.
    Regex(u32),
}

/// One condition of a match, exactly one subject (the `Condition` of `mapping/config.py`).
#[derive(Debug, Clone, PartialEq)]
pub enum Condition {
    /// A test on the attribute with this key number (see [`RuleTable::keys`]).
    Attr { key: u32, test: AttrTest },
    /// The regex finds a match in the span name.
    SpanName(u32),
    /// The regex finds a match in the instrumentation scope name.
    Scope(u32),
    /// The span kind is one of these (OTLP numbers).
    Kinds(Vec<i64>),
    /// The status code is this (OTLP number).
    Status(i64),
    /// At least one direct child span satisfies this match.
    Child(Box<Match>),
    /// The direct parent span, in the same trace, satisfies this match. A span without one
    /// (a root, or a span whose parent never arrived) never does: the rule fails closed.
    Parent(Box<Match>),
}

impl Condition {
    /// Whether the condition looks at another span (a child or the parent): tested after
    /// the conditions on the span itself, and never a run's lead condition.
    fn related(&self) -> bool {
        matches!(self, Condition::Child(_) | Condition::Parent(_))
    }
}

/// All of `all` and, when `any` is not empty, at least one of `any`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Match {
    pub all: Vec<Condition>,
    pub any: Vec<Condition>,
}

/// A text as a span holds it: UTF-8, or a value the core cannot read as UTF-8 (a Python
/// `str` with lone surrogates) that only the span access can hand to the searcher.
#[derive(Debug, Clone, Copy)]
pub enum Text<'a> {
    Utf8(&'a str),
    Opaque,
}

/// An attribute value as conditions see it.
#[derive(Debug, Clone, Copy)]
pub enum Value<'a> {
    Absent,
    Text(Text<'a>),
    /// Present, of another type (number, bool, list, bytes...).
    Other,
}

/// What a condition may ask of a text the core cannot read (see [`Text::Opaque`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    Name,
    Scope,
    Attr(u32),
}

/// Read access to one span for rule selection. The adapters (Python records, native
/// records) keep whatever per-span memo they need; the table asks each thing at most once
/// per condition.
pub trait SpanAccess: Sized {
    type Error;
    fn name(&self) -> Result<Text<'_>, Self::Error>;
    fn scope(&self) -> Result<Text<'_>, Self::Error>;
    fn kind(&self) -> Result<i64, Self::Error>;
    fn status(&self) -> Result<i64, Self::Error>;
    /// The attribute with key number `key`, as [`Value`], passed to `f`. A text handed over
    /// stays where it is, unchanged, for as long as the access lives: the table keeps what a
    /// text was found to hold by its address and length (a span's content keys often read
    /// one text), so another text must not take its place meanwhile.
    fn with_attr<R>(&self, key: u32, f: impl FnOnce(Value<'_>) -> R) -> Result<R, Self::Error>;
    /// Whether the attribute equals one of the host's list `list` (absent: false).
    fn attr_equals_host(&self, key: u32, list: u32) -> Result<bool, Self::Error>;
    /// Whether `regex` finds a match in an opaque text of the span.
    fn search_opaque(&self, subject: Subject, regex: u32) -> Result<bool, Self::Error>;
    /// How many direct children the span has.
    fn child_count(&self) -> Result<usize, Self::Error>;
    /// Access to child `index` (`< child_count()`), itself seen without children.
    fn child(&self, index: usize) -> Result<Self, Self::Error>;
    /// Access to the direct parent span when it is in the trace, itself seen without parent
    /// and children; `None` for a root or a parent that is not in the trace.
    fn parent(&self) -> Result<Option<Self>, Self::Error>;
    /// Which of the table's `keys` attribute keys the span has, as a bit set (key `k` is
    /// bit `k % 64` of `present[k / 64]`, which arrives zeroed), when the access can list
    /// them cheaply: then `true`. The default, `false`, narrows nothing by attributes.
    fn present_keys(&self, keys: usize, present: &mut [u64]) -> Result<bool, Self::Error> {
        let _ = (keys, present);
        Ok(false)
    }
    /// The memo row the access noted ([`Self::note_row`]) for this span's name or scope
    /// text (`subject`) under the memo's `generation`, when it can tell the text is the one
    /// it noted (the same text object, held meanwhile): the table then neither reads nor
    /// hashes the text to find its row. The default, `None`, has the table look it up.
    fn noted_row(&self, subject: Subject, generation: u64) -> Option<usize> {
        let _ = (subject, generation);
        None
    }
    /// `row` is the memo row of this span's name or scope text (`subject`, read just
    /// before) under `generation`, for [`Self::noted_row`] of later spans.
    fn note_row(&self, subject: Subject, generation: u64, row: usize) {
        let _ = (subject, generation, row);
    }
}

/// Runs the table's regexes (`safe_regex.search` in Python).
pub trait Searcher {
    type Error;
    fn search(&mut self, regex: u32, text: &str) -> Result<bool, Self::Error>;
}

/// Distinct texts whose answers a [`RegexMemo`] keeps; past it, it starts over (a server
/// meets ever new span names: new tools, new models).
pub const MEMO_TEXTS: usize = 4096;

/// Key sets a span's keys are compared with before `RegexMemo::keyset_rows` is asked.
const KEYSETS_COMPARED: usize = 8;

/// Texts longer than this are searched every time, not remembered (names are short; a long
/// attribute value would make the memo's memory grow with the input).
pub const MEMO_MAX_TEXT: usize = 1024;

/// Per text, per regex: not asked yet (0), no match (1), a match (2). Texts are numbered
/// rows, so a span looks its name and scope up once and each regex condition on them is an
/// index. A memo serves one table (it also remembers which of that table's rules a text
/// rules out).
#[derive(Debug)]
pub struct RegexMemo {
    /// Names this memo's row numbering (see [`SpanAccess::noted_row`]): unique in the
    /// process, a fresh one whenever the rows start over.
    generation: u64,
    index: FastMap<Box<str>, usize>,
    rows: Vec<Vec<u8>>,
    /// Per row, per subject (scope, span name), the rules its scope or name conditions do
    /// not rule out for that text (see [`RuleTable::select`]), once worked out; for a span
    /// name, followed by the piecewise `any`s it may satisfy (`RuleTable::name_any`).
    survivors: Vec<[Option<Box<[u64]>>; 2]>,
    /// The candidate rules of the span being selected (reused, not allocated per span).
    candidates: Vec<u64>,
    /// The attribute keys the span being selected has (reused).
    present: Vec<u64>,
    /// The piecewise `any`s the span being selected may satisfy (reused; see
    /// [`RuleTable::select`]).
    any_may: Vec<u64>,
    /// Per set of attribute keys a span has (the `present` bits), what its keys alone tell
    /// (see [`KeySet`]): spans of one kind share their key set. Bounded like the rows:
    /// emptied when a new entry would pass `MEMO_TEXTS`. A span finds its set among the first
    /// [`KEYSETS_COMPARED`] by comparing a word or two with each (a trace's spans are of a
    /// handful of kinds), and only past those through `keyset_rows` (a hash and a probe,
    /// ~60 instructions).
    keysets: Vec<(Box<[u64]>, KeySet)>,
    /// The position in `keysets` of each set past the first [`KEYSETS_COMPARED`].
    keyset_rows: FastMap<Box<[u64]>, usize>,
    /// Per [`KeyIndex`] of the table (by position), per text value of its key, the rules
    /// that value leaves possible.
    values: Vec<FastMap<Box<str>, Box<[u64]>>>,
}

/// The last generation handed to a [`RegexMemo`]'s rows.
static GENERATIONS: AtomicU64 = AtomicU64::new(0);

fn next_generation() -> u64 {
    GENERATIONS.fetch_add(1, Ordering::Relaxed) + 1
}

impl Default for RegexMemo {
    fn default() -> Self {
        Self {
            generation: next_generation(),
            index: FastMap::default(),
            rows: Vec::new(),
            survivors: Vec::new(),
            candidates: Vec::new(),
            present: Vec::new(),
            any_may: Vec::new(),
            keysets: Vec::new(),
            keyset_rows: FastMap::default(),
            values: Vec::new(),
        }
    }
}

impl RegexMemo {
    pub fn new() -> Self {
        Self::default()
    }

    /// How many texts are remembered.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Before each span: start over when full (row numbers stay valid within a span).
    fn begin_span(&mut self) {
        if self.rows.len() >= MEMO_TEXTS {
            self.index.clear();
            self.rows.clear();
            self.survivors.clear();
            self.generation = next_generation();
        }
    }

    /// The row of `text`, or `None` when it is not remembered: too long, or the memo is at
    /// twice its size within one span (a span with very many children).
    fn row(&mut self, text: &str) -> Option<usize> {
        if text.len() > MEMO_MAX_TEXT {
            return None;
        }
        if let Some(&row) = self.index.get(text) {
            return Some(row);
        }
        if self.rows.len() >= 2 * MEMO_TEXTS {
            return None;
        }
        let row = self.rows.len();
        self.rows.push(Vec::new());
        self.survivors.push([None, None]);
        self.index.insert(text.into(), row);
        Some(row)
    }

    /// The remembered answer of `regex` on the text of `row`, if asked before.
    fn known(&self, row: Option<Option<usize>>, regex: u32) -> Option<bool> {
        match self.rows.get(row??)?.get(regex as usize)? {
            1 => Some(false),
            2 => Some(true),
            _ => None,
        }
    }

    /// Remembers `found` as the answer of `regex` on the text of `row`.
    fn remember(&mut self, row: usize, regex: u32, found: bool) {
        let slot = regex as usize;
        if let Some(cells) = self.rows.get_mut(row) {
            if cells.len() <= slot {
                cells.resize(slot + 1, 0);
            }
            if let Some(cell) = cells.get_mut(slot) {
                *cell = if found { 2 } else { 1 };
            }
        }
    }

    /// The searcher's answer of `regex` on `text` (the text of `row`), remembered.
    fn search<E>(
        &mut self,
        searcher: &mut impl Searcher<Error = E>,
        row: Option<usize>,
        regex: u32,
        text: &str,
    ) -> Result<bool, E> {
        self.answer(row, regex, || searcher.search(regex, text))
    }

    /// The answer of `regex` on the text of `row`: remembered, else `find`'s (then
    /// remembered; a text without a row is not).
    fn answer<E>(
        &mut self,
        row: Option<usize>,
        regex: u32,
        find: impl FnOnce() -> Result<bool, E>,
    ) -> Result<bool, E> {
        let Some(row) = row else {
            return find();
        };
        let slot = regex as usize;
        if let Some(cells) = self.rows.get(row) {
            match cells.get(slot) {
                Some(1) => return Ok(false),
                Some(2) => return Ok(true),
                _ => {}
            }
        }
        let found = find()?;
        self.remember(row, regex, found);
        Ok(found)
    }
}

/// What a set of attribute keys tells before any value is read (see
/// [`RuleTable::select`]).
#[derive(Debug)]
struct KeySet {
    /// The rules the keys leave possible.
    keep: Box<[u64]>,
    /// The piecewise `any`s a test of an absent key, or a presence-decided test of a present
    /// one, satisfies.
    any_yes: Box<[u64]>,
    /// The [`KeyIndex`]es (by position) whose key is present and whose tests compare its
    /// value: only these are read per span.
    by_value: Box<[u32]>,
}

/// The memo rows of one span's name and scope, looked up on first use, and what the
/// span's first few attribute texts tested by regex were found to hold of the table's
/// literals. By the text's address and length, not its key: content keys of different
/// sources (DSPy's `react_prediction` reads its reply through sources of its own) often
/// read the same `str`, whose notes then serve both. The span access keeps every value it
/// hands over alive for the span (its reads are remembered), so an address names one text
/// for as long as these notes live.
#[derive(Default)]
struct Rows {
    name: Option<Option<usize>>,
    scope: Option<Option<usize>>,
    noted: [Option<((usize, usize), Noted)>; NOTED_TEXTS],
    /// [`BY_SCOPE`] and / or [`BY_NAME`] once [`RuleTable::narrow`] worked on that text
    /// (see [`Decided`]).
    decided: u8,
}

/// Attribute texts per span whose literals are noted (a chat span's content tests a text or
/// two); past them a text's literals are searched each time.
const NOTED_TEXTS: usize = 4;

impl Rows {
    /// `regex`'s own answer on `text` (an attribute or content text of the span), with that
    /// text's notes.
    fn native_on(&mut self, plans: &[RegexPlan], regex: u32, text: &str) -> Option<bool> {
        let plan = plans.get(regex as usize)?;
        let mut spare = Noted::default();
        let id = (text.as_ptr() as usize, text.len());
        let noted = match self.noted.iter().position(|slot| match slot {
            Some((known, _)) => *known == id,
            None => true,
        }) {
            Some(at) => match &mut self.noted[at] {
                Some((_, noted)) => noted,
                empty => &mut empty.insert((id, Noted::default())).1,
            },
            None => &mut spare,
        };
        plan.answer_noted(text, noted)
    }
}

/// Why a table could not be built (the Python compiler built it wrong).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableError(pub String);

/// The rules of one convention set, in priority order, with the numbers their conditions
/// use for attribute keys and regexes.
#[derive(Debug, Clone, Default)]
pub struct RuleTable {
    rules: Vec<Match>,
    /// Per rule, the number of the first later rule that does not start with the same
    /// condition (see [`RuleTable::select`]).
    group_end: Vec<usize>,
    keys: Vec<Box<str>>,
    /// Per regex number, what the core answers itself.
    regexes: Vec<RegexPlan>,
    host_lists: u32,
    /// Per rule, the attribute keys its `all` conditions need present (a value test fails
    /// on an absent attribute).
    needs: Vec<Box<[u32]>>,
    /// Per rule, the keys one of which must be present when every `any` condition tests a
    /// value (empty: no such need).
    needs_one: Vec<Box<[u32]>>,
    /// Per regex of a top-level `all` condition on the span name: the rules (a bit set)
    /// that cannot hold when it finds no match in the name.
    name_needs: Vec<(u32, Box<[u64]>)>,
    /// The same for the instrumentation scope name.
    scope_needs: Vec<(u32, Box<[u64]>)>,
    /// Per attribute key that `exists` / `equals` conditions test, what its value decides.
    key_index: Vec<KeyIndex>,
    /// The rules whose `any` is decided piecewise ([`piecewise`]): it holds when a test of
    /// one of its keys does (the key's [`KeyIndex`]) or one of its span-name regexes does
    /// (`name_any`).
    piecewise: Box<[u64]>,
    /// The words of `piecewise` from its first nonzero one to its last (only those are
    /// applied per span).
    piecewise_words: Range<usize>,
    /// Per regex of a span-name condition in such an `any`, the rules holding it.
    name_any: Vec<(u32, Box<[u64]>)>,
    /// Per rule, the tests its [`KeyIndex`] clauses decide (see [`Decided`]).
    decided: Vec<Decided>,
}

/// The tests of one rule that the narrowing decides before the walk (a candidate left
/// after it holds them all), so the walk does not try them again, each marked by what
/// decides it:
/// - [`BY_KEYS`]: an `exists` / `equals` (text) test, when the access lists the span's keys
///   ([`RuleTable::narrow_by_keys`]; a read and a comparison per test, for every candidate
///   of every span). Tests of a key the access cannot list for certain (see
///   [`RuleTable::recheck_keys`]) are tested again.
/// - [`BY_SCOPE`] / [`BY_NAME`]: a top-level scope or span-name regex whose plan is exact,
///   when [`RuleTable::narrow`] worked on the span's text (UTF-8): it cleared every rule
///   whose regex the plan found no match for, so a candidate's holds. Nearly every rule
///   starts with its file's scope regex, asked again (a memo lookup) on each candidate.
#[derive(Debug, Clone, Default)]
struct Decided {
    /// Per `all` condition (by position), what decides it (a union of the marks above).
    all: Box<[u8]>,
    /// What decides the whole `any` ([`BY_KEYS`] when it is a clause of tests of one key).
    any: u8,
}

/// A test [`Decided`] by the span's listed keys and values.
const BY_KEYS: u8 = 1;
/// A test [`Decided`] by the narrowing on the span's scope text.
const BY_SCOPE: u8 = 2;
/// A test [`Decided`] by the narrowing on the span's name.
const BY_NAME: u8 = 4;

impl Decided {
    /// The `exists` / `equals` (text) tests of `rule` that [`key_tests`] indexes (each
    /// top-level `all` one, and an `any` made of such tests of one key only), and its
    /// top-level scope and span-name regexes with an exact plan (in `plans`).
    fn of(rule: &Match, plans: &[RegexPlan]) -> Self {
        let exact = |regex: &u32| plans.get(*regex as usize).is_some_and(RegexPlan::is_exact);
        let all = rule
            .all
            .iter()
            .map(|cond| match cond {
                Condition::Attr { test, .. } if indexable(test) => BY_KEYS,
                Condition::Scope(regex) if exact(regex) => BY_SCOPE,
                Condition::SpanName(regex) if exact(regex) => BY_NAME,
                _ => 0,
            })
            .collect();
        Self {
            all,
            any: if one_key_clause(rule).is_some() {
                BY_KEYS
            } else {
                0
            },
        }
    }
}

/// The key of a rule's `any` when its conditions are all `exists` / `equals` (text) tests
/// of that one key (the clause a [`KeyIndex`] decides), with those tests.
fn one_key_clause(rule: &Match) -> Option<(u32, Vec<AttrTest>)> {
    let one_key = rule.any.first().and_then(|cond| match cond {
        Condition::Attr { key, .. } => Some(*key),
        _ => None,
    })?;
    let tests = rule
        .any
        .iter()
        .map(|cond| match cond {
            Condition::Attr { key, test } if *key == one_key && indexable(test) => {
                Some(test.clone())
            }
            _ => None,
        })
        .collect::<Option<Vec<AttrTest>>>()?;
    Some((one_key, tests))
}

/// One rule's clauses on a key (see [`KeyIndex`]): its number, and per clause the tests of
/// which one must hold.
type RuleClauses = (usize, Vec<Vec<AttrTest>>);

/// A span's attribute as the tests a [`KeyIndex`] holds see it.
#[derive(Debug, Clone, Copy)]
enum Seen<'a> {
    Absent,
    /// Present with a value that is no text the core can read (no `equals` accepts it).
    Other,
    Text(&'a str),
}

/// The rules' tests of one attribute key that its value alone decides: each top-level `all`
/// condition `exists` / `equals` (text) on the key, and an `any` whose conditions are all
/// such tests of this one key. A rule whose tests fail for the span's value cannot hold, so
/// the value rules it out before the walk, as `holds` would one condition at a time.
#[derive(Debug, Clone)]
struct KeyIndex {
    key: u32,
    /// The rules holding such tests (a bit set).
    rules: Box<[u64]>,
    /// The words of `rules` from its first nonzero one to its last: outside them a mask of
    /// this key keeps every rule and satisfies no `any` (see [`KeyIndex::mask`]), so a span
    /// reads and applies only these (a key's rules are mostly a few files', not all six
    /// words of the bundled table's).
    words: Range<usize>,
    /// Per rule (its number), its clauses: each holds when one of its tests does.
    clauses: Vec<RuleClauses>,
    /// Per rule whose `any` is decided piecewise (see [`RuleTable::select`]), its `any`'s
    /// tests of this key.
    any_tests: Vec<(usize, Vec<AttrTest>)>,
    /// The rules left possible when the key is absent, then (from word `words` on) the rules
    /// of `any_tests` one of whose tests holds: see [`KeyIndex::mask`].
    absent: Box<[u64]>,
    /// The same when the value is [`Seen::Other`]; when no test is an `equals` (`by_value`
    /// false), for any present value.
    other: Box<[u64]>,
    /// Whether some test compares the value (else presence alone decides).
    by_value: bool,
}

impl KeyIndex {
    /// The rules left possible when the key's value is `seen` (every rule without a test of
    /// the key included), followed by (`words` more words) the rules whose piecewise `any`
    /// has a test of the key that holds for `seen`.
    fn mask(&self, seen: Seen<'_>, words: usize) -> Box<[u64]> {
        let mut mask = vec![u64::MAX; words];
        mask.resize(2 * words, 0);
        for (rule, clauses) in &self.clauses {
            let holds = clauses
                .iter()
                .all(|clause| clause.iter().any(|test| test_holds(test, seen)));
            if !holds {
                if let Some(word) = mask.get_mut(rule / 64) {
                    *word &= !(1 << (rule % 64));
                }
            }
        }
        for (rule, tests) in &self.any_tests {
            if tests.iter().any(|test| test_holds(test, seen)) {
                set(&mut mask[words..], *rule);
            }
        }
        mask.into_boxed_slice()
    }
}

/// An `exists` or `equals` (text) test on a value seen as `seen`: what `holds` answers.
fn test_holds(test: &AttrTest, seen: Seen<'_>) -> bool {
    match test {
        AttrTest::Exists(wanted) => !matches!(seen, Seen::Absent) == *wanted,
        AttrTest::EqualsText(accepted) => match seen {
            Seen::Text(text) => accepted.iter().any(|a| **a == *text),
            _ => false,
        },
        // Never indexed (`key_tests`): a regex or a host list needs the searcher or host.
        AttrTest::EqualsHost(_) | AttrTest::Regex(_) => true,
    }
}

/// A test a [`KeyIndex`] can hold: its answer follows from the value alone.
fn indexable(test: &AttrTest) -> bool {
    matches!(test, AttrTest::Exists(_) | AttrTest::EqualsText(_))
}

/// Whether a rule's `any` is decided piecewise before the walk: each of its conditions an
/// `exists` / `equals` (text) test of an attribute or a span-name regex, and not all of them
/// tests of one key (a [`KeyIndex`] clause decides those).
fn piecewise(m: &Match) -> bool {
    let one_key = m.any.first().and_then(|cond| match cond {
        Condition::Attr { key, .. } => Some(*key),
        _ => None,
    });
    let mut other_subject = false;
    let decidable = m.any.iter().all(|cond| match cond {
        Condition::Attr { key, test } => {
            other_subject |= Some(*key) != one_key;
            indexable(test)
        }
        Condition::SpanName(_) => {
            other_subject = true;
            true
        }
        _ => false,
    });
    !m.any.is_empty() && decidable && other_subject
}

/// Per key, the [`KeyIndex`] of `rules`' value-decided tests, in key order.
fn key_tests(rules: &[Match], words: usize) -> Vec<KeyIndex> {
    let mut by_key: FastMap<u32, Vec<RuleClauses>> = FastMap::default();
    let mut any_by_key: FastMap<u32, Vec<(usize, Vec<AttrTest>)>> = FastMap::default();
    for (index, rule) in rules.iter().enumerate() {
        if piecewise(rule) {
            for cond in &rule.any {
                if let Condition::Attr { key, test } = cond {
                    let of_key = any_by_key.entry(*key).or_default();
                    match of_key.last_mut() {
                        Some((rule, tests)) if *rule == index => tests.push(test.clone()),
                        _ => of_key.push((index, vec![test.clone()])),
                    }
                    by_key.entry(*key).or_default();
                }
            }
        }
        let mut clauses: Vec<(u32, Vec<AttrTest>)> = rule
            .all
            .iter()
            .filter_map(|cond| match cond {
                Condition::Attr { key, test } if indexable(test) => {
                    Some((*key, vec![test.clone()]))
                }
                _ => None,
            })
            .collect();
        if let Some(clause) = one_key_clause(rule) {
            clauses.push(clause);
        }
        for (key, clause) in clauses {
            let of_key = by_key.entry(key).or_default();
            match of_key.last_mut() {
                Some((rule, held)) if *rule == index => held.push(clause),
                _ => of_key.push((index, vec![clause])),
            }
        }
    }
    let mut index: Vec<KeyIndex> = by_key
        .into_iter()
        .map(|(key, clauses)| {
            let any_tests = any_by_key.remove(&key).unwrap_or_default();
            let mut rules = vec![0u64; words].into_boxed_slice();
            for rule in clauses
                .iter()
                .map(|c| c.0)
                .chain(any_tests.iter().map(|t| t.0))
            {
                set(&mut rules, rule);
            }
            let by_value = clauses
                .iter()
                .flat_map(|(_, held)| held.iter().flatten())
                .chain(any_tests.iter().flat_map(|(_, tests)| tests))
                .any(|test| matches!(test, AttrTest::EqualsText(_)));
            let mut index = KeyIndex {
                key,
                words: nonzero_words(&rules),
                rules,
                clauses,
                any_tests,
                absent: Box::default(),
                other: Box::default(),
                by_value,
            };
            index.absent = index.mask(Seen::Absent, words);
            index.other = index.mask(Seen::Other, words);
            index
        })
        .collect();
    index.sort_by_key(|index| index.key);
    index
}

/// Whether a test on an attribute fails when the attribute is absent.
fn needs_value(test: &AttrTest) -> bool {
    !matches!(test, AttrTest::Exists(false))
}

/// Per regex of the `all` conditions selected by `pick` (a span-name or scope condition),
/// the bit set of the rules holding such a condition.
fn regex_needs(
    rules: &[Match],
    words: usize,
    pick: impl Fn(&Condition) -> Option<u32>,
) -> Vec<(u32, Box<[u64]>)> {
    let mut out: Vec<(u32, Box<[u64]>)> = Vec::new();
    for (index, rule) in rules.iter().enumerate() {
        for regex in rule.all.iter().filter_map(&pick) {
            set_for(&mut out, regex, words, index);
        }
    }
    out
}

/// The first set bit at or after `from` in `bits`, if any.
fn next_set(bits: &[u64], from: usize) -> Option<usize> {
    let mut word = from / 64;
    let mut current = bits.get(word)? & (u64::MAX << (from % 64));
    loop {
        if current != 0 {
            return Some(word * 64 + current.trailing_zeros() as usize);
        }
        word += 1;
        current = *bits.get(word)?;
    }
}

/// A [`KeyIndex`] mask (`words` words of rules kept, then as many of piecewise `any`s
/// satisfied; see [`KeyIndex::mask`]) applied to a span's `candidates` and `any_may`, in the
/// index's `range` of words only (outside it the mask keeps all and satisfies none).
fn apply_mask(mask: &[u64], range: Range<usize>, candidates: &mut [u64], any_may: &mut [u64]) {
    let (keep, yes) = mask.split_at(candidates.len().min(mask.len()));
    if let (Some(held), Some(keep)) = (candidates.get_mut(range.clone()), keep.get(range.clone())) {
        for (word, keep) in held.iter_mut().zip(keep) {
            *word &= keep;
        }
    }
    if let (Some(may), Some(yes)) = (any_may.get_mut(range.clone()), yes.get(range)) {
        for (word, yes) in may.iter_mut().zip(yes) {
            *word |= yes;
        }
    }
}

/// `bits` made `len` words of `value`, in the memory it has (a span's bit sets are as long
/// as the last span's, so `fill` writes them, where `clear` then `resize` writes them
/// element by element: +1.6 M instructions of `select` on data-2000, 67.1 -> 68.7 M).
fn reset(bits: &mut Vec<u64>, len: usize, value: u64) {
    bits.truncate(len);
    bits.fill(value);
    bits.resize(len, value);
}

/// The words of `bits` from its first non-zero word to its last (empty when all are zero):
/// the only words a mask of them changes.
fn nonzero_words(bits: &[u64]) -> Range<usize> {
    let first = bits.iter().position(|&word| word != 0).unwrap_or(0);
    let end = bits
        .iter()
        .rposition(|&word| word != 0)
        .map_or(0, |last| last + 1);
    first..end.max(first)
}

/// Whether two bit sets hold the same words (a word at a time: a key set is a word or two,
/// where a slice comparison calls `memcmp`).
fn same_words(a: &[u64], b: &[u64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

fn has(bits: &[u64], index: u32) -> bool {
    let index = index as usize;
    bits.get(index / 64)
        .is_some_and(|word| word & (1 << (index % 64)) != 0)
}

/// Sets bit `index` of `bits` (key `k` is bit `k % 64` of `bits[k / 64]`; none past the end).
fn set(bits: &mut [u64], index: usize) {
    if let Some(word) = bits.get_mut(index / 64) {
        *word |= 1 << (index % 64);
    }
}

/// Sets bit `index` in the bit set (of `words` words) kept for `regex` in `sets`, made
/// empty on its first bit.
fn set_for(sets: &mut Vec<(u32, Box<[u64]>)>, regex: u32, words: usize, index: usize) {
    let at = match sets.iter().position(|(r, _)| *r == regex) {
        Some(at) => at,
        None => {
            sets.push((regex, vec![0; words].into_boxed_slice()));
            sets.len() - 1
        }
    };
    set(&mut sets[at].1, index);
}

impl RuleTable {
    /// A table of `rules` (priority order) over the attribute `keys`, the plans of the
    /// `regexes` (by number) and `host_lists` host value lists; every number a condition uses
    /// must be in range.
    pub fn new(
        rules: Vec<Match>,
        keys: Vec<Box<str>>,
        mut regexes: Vec<RegexPlan>,
        host_lists: u32,
    ) -> Result<Self, TableError> {
        number_literals(&mut regexes);
        let group_end = (0..rules.len())
            .map(|index| {
                let Some(lead) = lead(&rules[index]) else {
                    return index + 1;
                };
                rules[index + 1..]
                    .iter()
                    .position(|rule| self::lead(rule) != Some(lead))
                    .map_or(rules.len(), |offset| index + 1 + offset)
            })
            .collect();
        let needs = rules
            .iter()
            .map(|rule| {
                let mut keys: Vec<u32> = rule
                    .all
                    .iter()
                    .filter_map(|cond| match cond {
                        Condition::Attr { key, test } if needs_value(test) => Some(*key),
                        _ => None,
                    })
                    .collect();
                keys.sort_unstable();
                keys.dedup();
                keys.into_boxed_slice()
            })
            .collect();
        let needs_one = rules
            .iter()
            .map(|rule| {
                let keys: Option<Vec<u32>> = rule
                    .any
                    .iter()
                    .map(|cond| match cond {
                        Condition::Attr { key, test } if needs_value(test) => Some(*key),
                        _ => None,
                    })
                    .collect();
                keys.unwrap_or_default().into_boxed_slice()
            })
            .collect();
        let words = rules.len().div_ceil(64);
        let name_needs = regex_needs(&rules, words, |cond| match cond {
            Condition::SpanName(regex) => Some(*regex),
            _ => None,
        });
        let scope_needs = regex_needs(&rules, words, |cond| match cond {
            Condition::Scope(regex) => Some(*regex),
            _ => None,
        });
        let key_index = key_tests(&rules, words);
        let mut piecewise = vec![0u64; words].into_boxed_slice();
        let mut name_any: Vec<(u32, Box<[u64]>)> = Vec::new();
        for (index, rule) in rules.iter().enumerate() {
            if !self::piecewise(rule) {
                continue;
            }
            set(&mut piecewise, index);
            for cond in &rule.any {
                if let Condition::SpanName(regex) = cond {
                    set_for(&mut name_any, *regex, words, index);
                }
            }
        }
        let decided = rules
            .iter()
            .map(|rule| Decided::of(rule, &regexes))
            .collect();
        let table = Self {
            piecewise_words: nonzero_words(&piecewise),
            decided,
            rules,
            group_end,
            keys,
            regexes,
            host_lists,
            needs,
            needs_one,
            name_needs,
            scope_needs,
            key_index,
            piecewise,
            name_any,
        };
        for (index, rule) in table.rules.iter().enumerate() {
            table
                .check(rule, 0)
                .map_err(|why| TableError(format!("rule {index}: {why}")))?;
        }
        Ok(table)
    }

    /// Marks `keys` as keys an access sets in `present_keys` without knowing whether the span
    /// has them (content worked out only when tested): the walk tests their conditions
    /// again, as no listing decided them.
    pub fn recheck_keys(&mut self, keys: &[u32]) {
        let unsure =
            |cond: &Condition| matches!(cond, Condition::Attr { key, .. } if keys.contains(key));
        for (rule, decided) in self.rules.iter().zip(self.decided.iter_mut()) {
            for (cond, by) in rule.all.iter().zip(decided.all.iter_mut()) {
                if unsure(cond) {
                    *by &= !BY_KEYS;
                }
            }
            if rule.any.iter().any(unsure) {
                decided.any &= !BY_KEYS;
            }
        }
    }

    /// Attribute keys by number.
    pub fn keys(&self) -> &[Box<str>] {
        &self.keys
    }

    pub fn len(&self) -> usize {
        self.rules.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    fn check(&self, m: &Match, depth: usize) -> Result<(), String> {
        if m.all.is_empty() && m.any.is_empty() {
            return Err("a match needs at least one condition".into());
        }
        if depth > MAX_CHILD_DEPTH {
            return Err("child conditions nested too deep".into());
        }
        for cond in m.all.iter().chain(&m.any) {
            match cond {
                Condition::Attr { key, test } => {
                    if *key as usize >= self.keys.len() {
                        return Err(format!("attribute key {key} out of range"));
                    }
                    match test {
                        AttrTest::Regex(rx) if *rx as usize >= self.regexes.len() => {
                            return Err(format!("regex {rx} out of range"))
                        }
                        AttrTest::EqualsHost(list) if *list >= self.host_lists => {
                            return Err(format!("value list {list} out of range"))
                        }
                        _ => {}
                    }
                }
                Condition::SpanName(rx) | Condition::Scope(rx)
                    if *rx as usize >= self.regexes.len() =>
                {
                    return Err(format!("regex {rx} out of range"))
                }
                Condition::Child(nested) | Condition::Parent(nested) => {
                    self.check(nested, depth + 1)?
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The number of the first rule whose match holds for `span`, or `None`.
    ///
    /// The rules tried are the candidates left once the span's name and scope texts and
    /// its attributes have ruled the others out: a rule with a span-name or scope regex
    /// the core's plan proves false for the text (an answer only the host could give rules
    /// nothing out, so the host is asked no more often than by the walk), and, when the
    /// access lists the span's keys, a rule testing the value of an attribute the span
    /// lacks, one whose `any` conditions all test values of absent attributes, or one whose
    /// `exists` / `equals` tests of a key (see [`KeyIndex`]) fail on the span's value. What
    /// the texts rule out is remembered per text with its answers, what the keys rule out per
    /// set of keys, and what an `equals` value rules out per value, so a span costs a few
    /// lookups rather than a test per rule.
    /// Rules come in runs that start with the same condition (a file's rules all test its
    /// instrumentation scope first): when that condition fails, the rest of the run is
    /// passed over, as each of them would fail on it in turn.
    pub fn select<S: SpanAccess>(
        &self,
        span: &S,
        searcher: &mut impl Searcher<Error = S::Error>,
        memo: &mut RegexMemo,
    ) -> Result<Option<usize>, S::Error> {
        memo.begin_span();
        let mut rows = Rows::default();
        let words = self.rules.len().div_ceil(64);
        let mut candidates = std::mem::take(&mut memo.candidates);
        reset(&mut candidates, words, u64::MAX);
        let mut present = std::mem::take(&mut memo.present);
        reset(&mut present, self.keys.len().div_ceil(64), 0);
        let mut any_may = std::mem::take(&mut memo.any_may);
        reset(&mut any_may, words, 0);
        let found = self
            .narrow(span, &mut rows, memo, &mut candidates, &mut any_may)
            .and_then(|()| {
                let keyed = span.present_keys(self.keys.len(), &mut present)?;
                if keyed {
                    self.narrow_by_keys(span, &present, memo, &mut candidates, &mut any_may)?;
                }
                self.walk(span, &candidates, keyed, &mut rows, searcher, memo)
            });
        memo.candidates = candidates;
        memo.present = present;
        memo.any_may = any_may;
        found
    }

    /// Clears from `candidates` the rules the span's keys (`present`) rule out, those whose
    /// value-decided tests of a key fail on the span's value, and those whose piecewise
    /// `any` neither a key's test nor a span-name regex (`any_may`, from [`Self::narrow`])
    /// can satisfy.
    fn narrow_by_keys<S: SpanAccess>(
        &self,
        span: &S,
        present: &[u64],
        memo: &mut RegexMemo,
        candidates: &mut [u64],
        any_may: &mut [u64],
    ) -> Result<(), S::Error> {
        let words = candidates.len();
        let compared = memo
            .keysets
            .iter()
            .take(KEYSETS_COMPARED)
            .position(|(keys, _)| same_words(keys, present));
        let row = match compared {
            Some(row) => row,
            None => match memo.keyset_rows.get(present) {
                Some(&row) => row,
                None => {
                    if memo.keysets.len() >= MEMO_TEXTS {
                        memo.keysets.clear();
                        memo.keyset_rows.clear();
                    }
                    let row = memo.keysets.len();
                    memo.keysets
                        .push((present.into(), self.keyset(present, words)));
                    if row >= KEYSETS_COMPARED {
                        memo.keyset_rows.insert(present.into(), row);
                    }
                    row
                }
            },
        };
        let Some((_, set)) = memo.keysets.get(row) else {
            return Ok(());
        };
        for (word, keep) in candidates.iter_mut().zip(set.keep.iter()) {
            *word &= keep;
        }
        for (word, yes) in any_may.iter_mut().zip(set.any_yes.iter()) {
            *word |= yes;
        }
        if memo.values.len() < self.key_index.len() {
            memo.values
                .resize_with(self.key_index.len(), FastMap::default);
        }
        for &slot in set.by_value.iter() {
            let slot = slot as usize;
            let Some(index) = self.key_index.get(slot) else {
                continue;
            };
            let range = index.words.clone();
            let (Some(held), Some(rules)) = (
                candidates.get(range.clone()),
                index.rules.get(range.clone()),
            ) else {
                continue;
            };
            if !held.iter().zip(rules).any(|(c, r)| c & r != 0) {
                continue;
            }
            let values = memo.values.get_mut(slot);
            span.with_attr(index.key, |value| {
                let fresh;
                let mask: &[u64] = match value {
                    Value::Absent => &index.absent,
                    Value::Text(Text::Utf8(text)) => match values {
                        Some(values) if text.len() <= MEMO_MAX_TEXT => match values.get(text) {
                            Some(mask) => mask,
                            None => {
                                if values.len() >= MEMO_TEXTS {
                                    values.clear();
                                }
                                values
                                    .entry(text.into())
                                    .or_insert_with(|| index.mask(Seen::Text(text), words))
                            }
                        },
                        _ => {
                            fresh = index.mask(Seen::Text(text), words);
                            &fresh
                        }
                    },
                    Value::Text(Text::Opaque) | Value::Other => &index.other,
                };
                apply_mask(mask, range.clone(), candidates, any_may);
            })?;
        }
        let range = self.piecewise_words.clone();
        if let (Some(held), Some(piecewise), Some(may)) = (
            candidates.get_mut(range.clone()),
            self.piecewise.get(range.clone()),
            any_may.get(range),
        ) {
            for ((word, piecewise), may) in held.iter_mut().zip(piecewise).zip(may) {
                *word &= !piecewise | may;
            }
        }
        Ok(())
    }

    /// What a span with the attribute keys `present` can match as far as its keys tell:
    /// every value test of `all` on a present key, one of `any`'s when all of them test
    /// values, and each [`KeyIndex`]'s tests of an absent key (or, when presence alone
    /// decides them, of a present one); the piecewise `any`s those tests satisfy; and the
    /// indexes left to read a value for.
    fn keyset(&self, present: &[u64], words: usize) -> KeySet {
        let mut keep = vec![0u64; words].into_boxed_slice();
        for index in 0..self.rules.len() {
            let needs = self.needs.get(index).map_or(&[][..], |k| &k[..]);
            let one = self.needs_one.get(index).map_or(&[][..], |k| &k[..]);
            if needs.iter().all(|&key| has(present, key))
                && (one.is_empty() || one.iter().any(|&key| has(present, key)))
            {
                set(&mut keep, index);
            }
        }
        let mut any_yes = vec![0u64; words].into_boxed_slice();
        let mut by_value = Vec::new();
        for (slot, index) in self.key_index.iter().enumerate() {
            let by_key: &[u64] = if !has(present, index.key) {
                &index.absent
            } else if !index.by_value {
                &index.other
            } else {
                by_value.extend(u32::try_from(slot).ok());
                continue;
            };
            let (by_key, yes) = by_key.split_at(words.min(by_key.len()));
            for (word, by_key) in keep.iter_mut().zip(by_key) {
                *word &= by_key;
            }
            for (word, yes) in any_yes.iter_mut().zip(yes) {
                *word |= yes;
            }
        }
        KeySet {
            keep,
            any_yes,
            by_value: by_value.into_boxed_slice(),
        }
    }

    /// The candidate rules in order, each tried; `keyed`: the candidates are what
    /// [`Self::narrow_by_keys`] left, so their [`BY_KEYS`] tests hold and are not tried (nor
    /// the [`BY_SCOPE`] / [`BY_NAME`] ones, when [`Self::narrow`] worked on those texts:
    /// `rows.decided`).
    fn walk<S: SpanAccess>(
        &self,
        span: &S,
        candidates: &[u64],
        keyed: bool,
        rows: &mut Rows,
        searcher: &mut impl Searcher<Error = S::Error>,
        memo: &mut RegexMemo,
    ) -> Result<Option<usize>, S::Error> {
        let by = rows.decided | if keyed { BY_KEYS } else { 0 };
        let mut from = 0;
        while let Some(index) = next_set(candidates, from) {
            let Some(rule) = self.rules.get(index) else {
                break;
            };
            let decided = self.decided.get(index).map(|decided| (decided, by));
            from = match outcome(rule, decided, span, &self.regexes, rows, searcher, memo)? {
                Outcome::Holds => return Ok(Some(index)),
                Outcome::LeadFails => self.group_end.get(index).copied().unwrap_or(index + 1),
                Outcome::Fails => index + 1,
            };
        }
        Ok(None)
    }

    /// Clears from `candidates` the rules whose span-name or scope regex the core proves
    /// false on the span's texts, and sets in `any_may` the piecewise `any`s whose span-name
    /// regex holds or is not known to fail (the host's answer, or an opaque name).
    fn narrow<S: SpanAccess>(
        &self,
        span: &S,
        rows: &mut Rows,
        memo: &mut RegexMemo,
        candidates: &mut [u64],
        any_may: &mut [u64],
    ) -> Result<(), S::Error> {
        let words = candidates.len();
        let no_any: &[(u32, Box<[u64]>)] = &[];
        for (slot, needs, any) in [
            (0, &self.scope_needs, no_any),
            (1, &self.name_needs, &self.name_any[..]),
        ] {
            if needs.is_empty() && any.is_empty() {
                continue;
            }
            let (subject, cell) = if slot == 0 {
                (Subject::Scope, &mut rows.scope)
            } else {
                (Subject::Name, &mut rows.name)
            };
            // A text object met before has its row noted by the access: when that row's
            // survivors are worked out, the text is not read at all.
            if cell.is_none() {
                if let Some(row) = span.noted_row(subject, memo.generation) {
                    if row < memo.rows.len() {
                        *cell = Some(Some(row));
                    }
                }
            }
            let noted = cell
                .flatten()
                .and_then(|row| memo.survivors.get(row))
                .and_then(|pair| pair[slot].as_deref());
            let by = if slot == 0 { BY_SCOPE } else { BY_NAME };
            if let Some(known) = noted {
                narrow_by(known, words, candidates, any_may);
                rows.decided |= by;
                continue;
            }
            let text = if slot == 0 {
                span.scope()?
            } else {
                span.name()?
            };
            let Text::Utf8(text) = text else {
                if !any.is_empty() {
                    any_may.fill(u64::MAX);
                }
                continue;
            };
            let cell = if slot == 0 {
                &mut rows.scope
            } else {
                &mut rows.name
            };
            let row = *cell.get_or_insert_with(|| {
                let row = memo.row(text);
                if let Some(row) = row {
                    span.note_row(subject, memo.generation, row);
                }
                row
            });
            let known = row
                .and_then(|row| memo.survivors.get(row))
                .and_then(|pair| pair[slot].as_deref());
            if let Some(known) = known {
                narrow_by(known, words, candidates, any_may);
                rows.decided |= by;
                continue;
            }
            let answer = |regex: u32, memo: &mut RegexMemo| match memo.known(Some(row), regex) {
                Some(found) => Some(found),
                None => {
                    let found = native(&self.regexes, regex, text);
                    if let (Some(found), Some(row)) = (found, row) {
                        memo.remember(row, regex, found);
                    }
                    found
                }
            };
            let mut keep = vec![u64::MAX; words];
            for (regex, rules) in needs {
                if answer(*regex, memo) == Some(false) {
                    for (word, rules) in keep.iter_mut().zip(rules.iter()) {
                        *word &= !rules;
                    }
                }
            }
            if slot == 1 {
                let mut may = vec![0u64; words];
                for (regex, rules) in any {
                    if answer(*regex, memo) != Some(false) {
                        for (word, rules) in may.iter_mut().zip(rules.iter()) {
                            *word |= rules;
                        }
                    }
                }
                keep.extend(may);
            }
            for (word, keep) in candidates.iter_mut().zip(keep.iter()) {
                *word &= keep;
            }
            for (word, may) in any_may.iter_mut().zip(keep.iter().skip(words)) {
                *word |= may;
            }
            if let Some(pair) = row.and_then(|row| memo.survivors.get_mut(row)) {
                pair[slot] = Some(keep.into_boxed_slice());
            }
            rows.decided |= by;
        }
        Ok(())
    }
}

/// Applies a text's remembered survivors (`known`: the rules kept, then the piecewise
/// `any`s it may satisfy; see [`RegexMemo::survivors`]) to the span's candidates.
fn narrow_by(known: &[u64], words: usize, candidates: &mut [u64], any_may: &mut [u64]) {
    let (keep, may) = known.split_at(words.min(known.len()));
    for (word, keep) in candidates.iter_mut().zip(keep) {
        *word &= keep;
    }
    for (word, may) in any_may.iter_mut().zip(may) {
        *word |= may;
    }
}

/// The condition a match tests first (`outcome` leaves child and parent conditions to the
/// end).
fn lead(m: &Match) -> Option<&Condition> {
    m.all.first().filter(|c| !c.related())
}

/// Whether a match holds, and when not, whether its lead condition was the one that failed.
enum Outcome {
    Holds,
    LeadFails,
    Fails,
}

/// Child conditions may nest (a child's child condition); past this the table is refused.
pub const MAX_CHILD_DEPTH: usize = 8;

/// Whether a match holds, telling a failure of its lead condition apart. Cheap tests
/// first: `all` conditions on the span itself, then `any`, then the `all` conditions on
/// children and the parent (the outcome is that of the conditions in any order).
/// `decided`: the rule's [`Decided`] tests and which of them are known to hold already
/// (skipped): those marked by one of the bits given.
fn outcome<S: SpanAccess>(
    m: &Match,
    decided: Option<(&Decided, u8)>,
    span: &S,
    plans: &[RegexPlan],
    rows: &mut Rows,
    searcher: &mut impl Searcher<Error = S::Error>,
    memo: &mut RegexMemo,
) -> Result<Outcome, S::Error> {
    let (skip, by) = decided.map_or((&[][..], 0), |(decided, by)| (&decided.all[..], by));
    for (position, cond) in m.all.iter().enumerate() {
        if skip.get(position).is_some_and(|of| of & by != 0) {
            continue;
        }
        if !cond.related() && !holds(cond, span, plans, rows, searcher, memo)? {
            return Ok(if position == 0 {
                Outcome::LeadFails
            } else {
                Outcome::Fails
            });
        }
    }
    if !m.any.is_empty() && !decided.is_some_and(|(decided, by)| decided.any & by != 0) {
        let mut any = false;
        for cond in &m.any {
            if holds(cond, span, plans, rows, searcher, memo)? {
                any = true;
                break;
            }
        }
        if !any {
            return Ok(Outcome::Fails);
        }
    }
    for cond in &m.all {
        if cond.related() && !holds(cond, span, plans, rows, searcher, memo)? {
            return Ok(Outcome::Fails);
        }
    }
    Ok(Outcome::Holds)
}

/// The core's own answer for `regex` on `text`, or `None` when the host must be asked.
fn native(plans: &[RegexPlan], regex: u32, text: &str) -> Option<bool> {
    plans.get(regex as usize)?.answer(text)
}

/// `regex` on a span or scope name (the text of `row`): the core's own answers are
/// remembered like the searcher's. A name is tested by many rules (most rules start with
/// their file's scope condition) and repeats across spans, so each (regex, name) is worked
/// out once, not once per rule and span.
fn name_answer<E>(
    plans: &[RegexPlan],
    row: Option<usize>,
    regex: u32,
    text: &str,
    searcher: &mut impl Searcher<Error = E>,
    memo: &mut RegexMemo,
) -> Result<bool, E> {
    memo.answer(row, regex, || match native(plans, regex, text) {
        Some(found) => Ok(found),
        None => searcher.search(regex, text),
    })
}

fn holds<S: SpanAccess>(
    cond: &Condition,
    span: &S,
    plans: &[RegexPlan],
    rows: &mut Rows,
    searcher: &mut impl Searcher<Error = S::Error>,
    memo: &mut RegexMemo,
) -> Result<bool, S::Error> {
    match cond {
        Condition::Attr { key, test } => match test {
            AttrTest::Exists(wanted) => {
                let present = span.with_attr(*key, |v| !matches!(v, Value::Absent))?;
                Ok(present == *wanted)
            }
            AttrTest::EqualsText(accepted) => span.with_attr(*key, |v| match v {
                Value::Text(Text::Utf8(text)) => accepted.iter().any(|a| **a == *text),
                _ => false,
            }),
            AttrTest::EqualsHost(list) => span.attr_equals_host(*key, *list),
            AttrTest::Regex(regex) => span.with_attr(*key, |v| match v {
                Value::Text(Text::Utf8(text)) => {
                    if let Some(found) = rows.native_on(plans, *regex, text) {
                        return Ok(found);
                    }
                    let row = memo.row(text);
                    memo.search(searcher, row, *regex, text)
                }
                Value::Text(Text::Opaque) => span.search_opaque(Subject::Attr(*key), *regex),
                _ => Ok(false),
            })?,
        },
        // Once the span's text has its row, a regex asked before is answered without
        // reading the text again.
        Condition::SpanName(regex) if memo.known(rows.name, *regex).is_some() => {
            Ok(memo.known(rows.name, *regex) == Some(true))
        }
        Condition::Scope(regex) if memo.known(rows.scope, *regex).is_some() => {
            Ok(memo.known(rows.scope, *regex) == Some(true))
        }
        Condition::SpanName(regex) => match span.name()? {
            Text::Utf8(text) => {
                let row = *rows.name.get_or_insert_with(|| memo.row(text));
                name_answer(plans, row, *regex, text, searcher, memo)
            }
            Text::Opaque => span.search_opaque(Subject::Name, *regex),
        },
        Condition::Scope(regex) => match span.scope()? {
            Text::Utf8(text) => {
                let row = *rows.scope.get_or_insert_with(|| memo.row(text));
                name_answer(plans, row, *regex, text, searcher, memo)
            }
            Text::Opaque => span.search_opaque(Subject::Scope, *regex),
        },
        Condition::Kinds(kinds) => {
            let kind = span.kind()?;
            Ok(kinds.contains(&kind))
        }
        Condition::Status(code) => Ok(span.status()? == *code),
        Condition::Child(nested) => {
            for index in 0..span.child_count()? {
                let child = span.child(index)?;
                let rows = &mut Rows::default();
                if let Outcome::Holds = outcome(nested, None, &child, plans, rows, searcher, memo)?
                {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        Condition::Parent(nested) => {
            let Some(parent) = span.parent()? else {
                return Ok(false);
            };
            let rows = &mut Rows::default();
            Ok(matches!(
                outcome(nested, None, &parent, plans, rows, searcher, memo)?,
                Outcome::Holds
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// A plain span for the tests: attributes are text or "other" values.
    #[derive(Clone, Default)]
    struct Span {
        name: String,
        scope: String,
        kind: i64,
        status: i64,
        attrs: Vec<(u32, Option<String>)>,
        children: Vec<Span>,
        parent: Option<Box<Span>>,
        opaque_name: bool,
        /// Whether `present_keys` lists the attributes (else the table walks every rule).
        lists_keys: bool,
        /// Where `note_row` notes name and scope rows (text, generation, row) for
        /// `noted_row` of later spans (else nothing is noted).
        notebook: Option<Notebook>,
        /// Counts the attribute reads (`with_attr`), when set.
        reads: Option<Rc<std::cell::Cell<usize>>>,
        /// Keys `present_keys` sets though the span may lack them (content keys).
        unsure: Vec<u32>,
    }

    /// Noted name and scope rows: (text, generation, row).
    type Notebook = Rc<RefCell<Vec<(String, u64, usize)>>>;

    impl Span {
        fn text_of(&self, subject: Subject) -> &str {
            match subject {
                Subject::Name => &self.name,
                _ => &self.scope,
            }
        }
    }

    impl SpanAccess for Span {
        type Error = String;
        fn name(&self) -> Result<Text<'_>, String> {
            Ok(if self.opaque_name {
                Text::Opaque
            } else {
                Text::Utf8(&self.name)
            })
        }
        fn scope(&self) -> Result<Text<'_>, String> {
            Ok(Text::Utf8(&self.scope))
        }
        fn kind(&self) -> Result<i64, String> {
            Ok(self.kind)
        }
        fn status(&self) -> Result<i64, String> {
            Ok(self.status)
        }
        fn with_attr<R>(&self, key: u32, f: impl FnOnce(Value<'_>) -> R) -> Result<R, String> {
            if let Some(reads) = &self.reads {
                reads.set(reads.get() + 1);
            }
            Ok(f(match self.attrs.iter().find(|(k, _)| *k == key) {
                None => Value::Absent,
                Some((_, Some(text))) => Value::Text(Text::Utf8(text)),
                Some((_, None)) => Value::Other,
            }))
        }
        fn attr_equals_host(&self, key: u32, list: u32) -> Result<bool, String> {
            // Host list 0 accepts any non-text value.
            self.with_attr(key, |v| list == 0 && matches!(v, Value::Other))
        }
        fn search_opaque(&self, _subject: Subject, _regex: u32) -> Result<bool, String> {
            Err("opaque".into())
        }
        fn child_count(&self) -> Result<usize, String> {
            Ok(self.children.len())
        }
        fn child(&self, index: usize) -> Result<Self, String> {
            let mut child = self.children.get(index).cloned().ok_or("no child")?;
            child.children.clear();
            child.parent = None;
            Ok(child)
        }
        fn parent(&self) -> Result<Option<Self>, String> {
            Ok(self.parent.as_deref().map(|parent| Span {
                children: Vec::new(),
                parent: None,
                ..parent.clone()
            }))
        }
        fn noted_row(&self, subject: Subject, generation: u64) -> Option<usize> {
            let notebook = self.notebook.as_ref()?.borrow();
            let text = self.text_of(subject);
            notebook
                .iter()
                .find(|(noted, g, _)| noted == text && *g == generation)
                .map(|(_, _, row)| *row)
        }
        fn note_row(&self, subject: Subject, generation: u64, row: usize) {
            if let Some(notebook) = &self.notebook {
                let text = self.text_of(subject).to_owned();
                let mut notebook = notebook.borrow_mut();
                notebook.retain(|(noted, g, _)| !(*noted == text && *g == generation));
                notebook.push((text, generation, row));
            }
        }
        fn present_keys(&self, keys: usize, present: &mut [u64]) -> Result<bool, String> {
            if !self.lists_keys {
                return Ok(false);
            }
            for key in self.attrs.iter().map(|(key, _)| key).chain(&self.unsure) {
                if (*key as usize) < keys {
                    present[*key as usize / 64] |= 1 << (key % 64);
                }
            }
            Ok(true)
        }
    }

    /// Regex n matches texts containing `needles[n]`; counts the calls.
    struct Needles {
        needles: Vec<&'static str>,
        calls: usize,
    }

    impl Searcher for Needles {
        type Error = String;
        fn search(&mut self, regex: u32, text: &str) -> Result<bool, String> {
            self.calls += 1;
            let needle = self.needles.get(regex as usize).ok_or("no regex")?;
            if *needle == "!" {
                return Err("budget".into());
            }
            Ok(text.contains(needle))
        }
    }

    fn attr(key: u32, test: AttrTest) -> Condition {
        Condition::Attr { key, test }
    }

    fn all(conds: Vec<Condition>) -> Match {
        Match {
            all: conds,
            any: vec![],
        }
    }

    fn text(key: u32, value: &str) -> (u32, Option<String>) {
        (key, Some(value.to_owned()))
    }

    fn keys(n: usize) -> Vec<Box<str>> {
        (0..n).map(|i| format!("k{i}").into()).collect()
    }

    fn select(
        table: &RuleTable,
        span: &Span,
        needles: &mut Needles,
    ) -> Result<Option<usize>, String> {
        table.select(span, needles, &mut RegexMemo::new())
    }

    /// `n` regexes the host answers for every text.
    fn asked(n: usize) -> Vec<RegexPlan> {
        vec![RegexPlan::host(); n]
    }

    fn needles(list: &[&'static str]) -> Needles {
        Needles {
            needles: list.to_vec(),
            calls: 0,
        }
    }

    #[test]
    fn first_matching_rule_in_priority_order() {
        let rules = vec![
            all(vec![attr(0, AttrTest::EqualsText(vec!["chat".into()]))]),
            all(vec![attr(1, AttrTest::Exists(true))]),
            all(vec![attr(1, AttrTest::Exists(false))]),
        ];
        let table = RuleTable::new(rules, keys(2), asked(0), 0).unwrap();
        let mut n = needles(&[]);
        let both = Span {
            attrs: vec![text(0, "chat"), text(1, "x")],
            ..Span::default()
        };
        assert_eq!(select(&table, &both, &mut n), Ok(Some(0)));
        let second = Span {
            attrs: vec![text(0, "embed"), (1, None)],
            ..Span::default()
        };
        assert_eq!(select(&table, &second, &mut n), Ok(Some(1)));
        assert_eq!(select(&table, &Span::default(), &mut n), Ok(Some(2)));
    }

    #[test]
    fn each_condition_kind() {
        let cases: Vec<(Condition, Span, bool)> = vec![
            (
                attr(0, AttrTest::EqualsText(vec!["a".into(), "b".into()])),
                Span {
                    attrs: vec![text(0, "b")],
                    ..Span::default()
                },
                true,
            ),
            (
                attr(0, AttrTest::EqualsText(vec!["a".into()])),
                Span {
                    attrs: vec![(0, None)],
                    ..Span::default()
                },
                false,
            ),
            (
                attr(0, AttrTest::EqualsHost(0)),
                Span {
                    attrs: vec![(0, None)],
                    ..Span::default()
                },
                true,
            ),
            (attr(0, AttrTest::EqualsHost(0)), Span::default(), false),
            (
                attr(0, AttrTest::Regex(0)),
                Span {
                    attrs: vec![text(0, "xfooy")],
                    ..Span::default()
                },
                true,
            ),
            (
                attr(0, AttrTest::Regex(0)),
                Span {
                    attrs: vec![(0, None)],
                    ..Span::default()
                },
                false,
            ),
            (
                attr(0, AttrTest::Exists(true)),
                Span {
                    attrs: vec![(0, None)],
                    ..Span::default()
                },
                true,
            ),
            (
                attr(0, AttrTest::Exists(false)),
                Span {
                    attrs: vec![(0, None)],
                    ..Span::default()
                },
                false,
            ),
            (
                Condition::SpanName(0),
                Span {
                    name: "foo bar".into(),
                    ..Span::default()
                },
                true,
            ),
            (
                Condition::SpanName(0),
                Span {
                    name: "bar".into(),
                    ..Span::default()
                },
                false,
            ),
            (
                Condition::Scope(1),
                Span {
                    scope: "openai.agents".into(),
                    ..Span::default()
                },
                true,
            ),
            (
                Condition::Kinds(vec![1, 3]),
                Span {
                    kind: 3,
                    ..Span::default()
                },
                true,
            ),
            (
                Condition::Kinds(vec![1, 3]),
                Span {
                    kind: 2,
                    ..Span::default()
                },
                false,
            ),
            (
                Condition::Status(2),
                Span {
                    status: 2,
                    ..Span::default()
                },
                true,
            ),
            (
                Condition::Status(2),
                Span {
                    status: 1,
                    ..Span::default()
                },
                false,
            ),
        ];
        for (index, (cond, span, expected)) in cases.into_iter().enumerate() {
            let table = RuleTable::new(vec![all(vec![cond])], keys(1), asked(2), 1).unwrap();
            let got = select(&table, &span, &mut needles(&["foo", "agents"])).unwrap();
            assert_eq!(got.is_some(), expected, "case {index}");
        }
    }

    #[test]
    fn any_needs_one_and_all_needs_every() {
        let rule = Match {
            all: vec![attr(0, AttrTest::Exists(true))],
            any: vec![Condition::Status(2), Condition::Kinds(vec![3])],
        };
        let table = RuleTable::new(vec![rule], keys(1), asked(0), 0).unwrap();
        let mut n = needles(&[]);
        let base = Span {
            attrs: vec![(0, None)],
            ..Span::default()
        };
        assert_eq!(select(&table, &base, &mut n), Ok(None));
        let client = Span {
            kind: 3,
            ..base.clone()
        };
        assert_eq!(select(&table, &client, &mut n), Ok(Some(0)));
        let without = Span {
            kind: 3,
            ..Span::default()
        };
        assert_eq!(select(&table, &without, &mut n), Ok(None));
    }

    #[test]
    fn parent_conditions_see_the_direct_parent_only() {
        let under_agent = all(vec![attr(0, AttrTest::EqualsText(vec!["AGENT".into()]))]);
        let rules = vec![
            all(vec![
                Condition::Parent(Box::new(under_agent.clone())),
                attr(1, AttrTest::Exists(true)),
            ]),
            all(vec![Condition::Parent(Box::new(all(vec![
                Condition::Parent(Box::new(under_agent)),
            ])))]),
        ];
        let table = RuleTable::new(rules, keys(2), asked(0), 0).unwrap();
        let mut n = needles(&[]);
        let agent = Span {
            attrs: vec![text(0, "AGENT")],
            ..Span::default()
        };
        let chain = Span {
            attrs: vec![text(0, "CHAIN")],
            parent: Some(Box::new(agent.clone())),
            ..Span::default()
        };
        let llm = |parent: Option<&Span>| Span {
            attrs: vec![(1, None)],
            parent: parent.map(|p| Box::new(p.clone())),
            ..Span::default()
        };
        // Directly under the agent: the rule holds.
        assert_eq!(select(&table, &llm(Some(&agent)), &mut n), Ok(Some(0)));
        // Under a step span under the agent: the parent is the step; a grandparent test
        // sees no parent of the parent, so neither rule holds.
        assert_eq!(select(&table, &llm(Some(&chain)), &mut n), Ok(None));
        // A root, or a span whose parent is not in the trace: fails closed.
        assert_eq!(select(&table, &llm(None), &mut n), Ok(None));
        // The parent's own conditions are on the parent, not on the span.
        let agent_itself = Span {
            attrs: vec![text(0, "AGENT"), (1, None)],
            ..Span::default()
        };
        assert_eq!(select(&table, &agent_itself, &mut n), Ok(None));
    }

    #[test]
    fn child_conditions_see_direct_children_without_their_children() {
        let agent_child = all(vec![attr(0, AttrTest::EqualsText(vec!["agent".into()]))]);
        let grandchild = all(vec![Condition::Child(Box::new(agent_child.clone()))]);
        let rules = vec![
            all(vec![
                attr(1, AttrTest::Exists(true)),
                Condition::Child(Box::new(agent_child)),
            ]),
            all(vec![Condition::Child(Box::new(grandchild))]),
        ];
        let table = RuleTable::new(rules, keys(2), asked(0), 0).unwrap();
        let mut n = needles(&[]);
        let agent = Span {
            attrs: vec![text(0, "agent")],
            ..Span::default()
        };
        let tool = Span {
            attrs: vec![(1, None)],
            children: vec![Span::default(), agent.clone()],
            ..Span::default()
        };
        assert_eq!(select(&table, &tool, &mut n), Ok(Some(0)));
        let leaf = Span {
            attrs: vec![(1, None)],
            ..Span::default()
        };
        assert_eq!(select(&table, &leaf, &mut n), Ok(None));
        // A grandchild is not a child: the nested child condition sees no children.
        let outer = Span {
            children: vec![Span {
                children: vec![agent],
                ..Span::default()
            }],
            ..Span::default()
        };
        assert_eq!(select(&table, &outer, &mut n), Ok(None));
    }

    #[test]
    fn regex_answers_are_remembered_per_text_and_bounded() {
        let table = RuleTable::new(
            vec![all(vec![Condition::SpanName(0)])],
            keys(0),
            asked(1),
            0,
        )
        .unwrap();
        let mut n = needles(&["tool"]);
        let mut memo = RegexMemo::new();
        let span = Span {
            name: "execute_tool search".into(),
            ..Span::default()
        };
        for _ in 0..3 {
            assert_eq!(table.select(&span, &mut n, &mut memo), Ok(Some(0)));
        }
        assert_eq!(n.calls, 1);
        for i in 0..(MEMO_TEXTS + 10) {
            let span = Span {
                name: format!("name {i}"),
                ..Span::default()
            };
            assert_eq!(table.select(&span, &mut n, &mut memo), Ok(None));
            assert!(memo.len() <= MEMO_TEXTS);
        }
        let long = Span {
            name: "tool".repeat(MEMO_MAX_TEXT),
            ..Span::default()
        };
        let before = memo.len();
        assert_eq!(table.select(&long, &mut n, &mut memo), Ok(Some(0)));
        assert_eq!(memo.len(), before, "a long text is not remembered");
    }

    #[test]
    fn key_sets_and_equals_values_are_remembered_and_bounded() {
        // Rule 0 needs k0 to be "chat", rule 1 k0 absent or "tool", rule 2 k1 present.
        let rules = vec![
            all(vec![attr(0, AttrTest::EqualsText(vec!["chat".into()]))]),
            Match {
                all: vec![],
                any: vec![
                    attr(0, AttrTest::Exists(false)),
                    attr(0, AttrTest::EqualsText(vec!["tool".into()])),
                ],
            },
            all(vec![attr(1, AttrTest::Exists(true))]),
        ];
        let table = RuleTable::new(rules, keys(2), vec![], 0).unwrap();
        let mut n = needles(&[]);
        let mut memo = RegexMemo::new();
        let span = |attrs: Vec<(u32, Option<String>)>| Span {
            attrs,
            lists_keys: true,
            ..Span::default()
        };
        let cases = [
            (vec![text(0, "chat")], Some(0)),
            (vec![text(0, "tool")], Some(1)),
            (vec![], Some(1)),
            (vec![(0, None)], None),
            (vec![text(0, "x"), (1, None)], Some(2)),
        ];
        for _ in 0..2 {
            for (attrs, want) in cases.clone() {
                assert_eq!(table.select(&span(attrs), &mut n, &mut memo), Ok(want));
            }
        }
        assert_eq!(memo.keysets.len(), 3, "one entry per set of keys");
        for i in 0..(MEMO_TEXTS + 10) {
            let value = vec![text(0, &format!("value {i}"))];
            assert_eq!(table.select(&span(value), &mut n, &mut memo), Ok(None));
            assert!(memo.values.iter().all(|values| values.len() <= MEMO_TEXTS));
        }
    }

    #[test]
    fn key_sets_past_the_compared_ones_are_found_by_their_words() {
        // Rule i needs key i: a span matches the first key it has.
        let rules = (0..5)
            .map(|key| all(vec![attr(key, AttrTest::Exists(true))]))
            .collect();
        let table = RuleTable::new(rules, keys(5), vec![], 0).unwrap();
        let mut n = needles(&[]);
        let mut memo = RegexMemo::new();
        for _ in 0..2 {
            for set in 0u32..32 {
                let span = Span {
                    attrs: (0..5)
                        .filter(|key| set & (1 << key) != 0)
                        .map(|key| text(key, "x"))
                        .collect(),
                    lists_keys: true,
                    ..Span::default()
                };
                let want = (0..5)
                    .find(|key| set & (1 << key) != 0)
                    .map(|key| key as usize);
                assert_eq!(
                    table.select(&span, &mut n, &mut memo),
                    Ok(want),
                    "keys {set:05b}"
                );
            }
        }
        assert_eq!(memo.keysets.len(), 32, "one entry per set of keys");
        assert_eq!(memo.keyset_rows.len(), 32 - KEYSETS_COMPARED);
    }

    #[test]
    fn the_cores_own_answers_on_names_are_remembered_per_text() {
        // Every rule starts with the scope regex 0, which the core answers itself.
        let plans = vec![RegexPlan::of("^openai"), RegexPlan::of("^chat")];
        let rules = vec![
            all(vec![Condition::Scope(0), attr(0, AttrTest::Exists(true))]),
            all(vec![Condition::Scope(0), Condition::SpanName(1)]),
            all(vec![Condition::SpanName(1)]),
        ];
        let table = RuleTable::new(rules, keys(1), plans, 0).unwrap();
        let mut n = needles(&["never", "never"]);
        let mut memo = RegexMemo::new();
        let span = |scope: &str, name: &str| Span {
            scope: scope.into(),
            name: name.into(),
            ..Span::default()
        };
        let mut select = |s: &Span| table.select(s, &mut n, &mut memo);
        assert_eq!(select(&span("openai.agents", "chat x")), Ok(Some(1)));
        assert_eq!(select(&span("openai.agents", "run")), Ok(None));
        assert_eq!(select(&span("langchain", "chat y")), Ok(Some(2)));
        assert_eq!(select(&span("openai.agents", "chat x")), Ok(Some(1)));
        assert_eq!(n.calls, 0, "the host is never asked");
        // Rows for "openai.agents", "chat x", "run", "langchain", "chat y".
        assert_eq!(memo.len(), 5);
    }

    #[test]
    fn a_run_of_rules_with_a_failing_lead_is_passed_over_with_the_same_outcome() {
        // Rules 0-2 start with scope regex 0; rule 3 starts with a child condition, which is
        // tested last, so it has no lead; rule 5 starts with regex 0 again, after another.
        let child = Condition::Child(Box::new(all(vec![attr(0, AttrTest::Exists(true))])));
        let rules = vec![
            all(vec![Condition::Scope(0), attr(0, AttrTest::Exists(true))]),
            all(vec![Condition::Scope(0), attr(1, AttrTest::Exists(true))]),
            all(vec![Condition::Scope(0)]),
            all(vec![child, Condition::SpanName(1)]),
            all(vec![attr(1, AttrTest::Exists(true))]),
            all(vec![Condition::Scope(0), Condition::SpanName(1)]),
        ];
        let table = RuleTable::new(rules, keys(2), asked(2), 0).unwrap();
        assert_eq!(table.group_end, vec![3, 3, 3, 4, 5, 6]);
        let span = |scope: &str, attrs: Vec<(u32, Option<String>)>, kids: Vec<Span>| Span {
            scope: scope.into(),
            name: "chat".into(),
            attrs,
            children: kids,
            ..Span::default()
        };
        let kid = span("x", vec![text(0, "y")], vec![]);
        let cases = [
            (span("openai", vec![text(1, "x")], vec![]), Some(1)),
            (span("openai", vec![], vec![]), Some(2)),
            (span("other", vec![text(1, "x")], vec![]), Some(4)),
            (span("other", vec![], vec![kid.clone()]), Some(3)),
            (span("other", vec![], vec![]), None),
        ];
        for (case, expected) in &cases {
            let mut n = needles(&["openai", "chat"]);
            assert_eq!(select(&table, case, &mut n), Ok(*expected));
            // Every rule in turn, as the table did before it passed runs over.
            let mut memo = RegexMemo::new();
            let mut rows = Rows::default();
            let each = (0..table.rules.len()).find(|&i| {
                matches!(
                    outcome(
                        &table.rules[i],
                        None,
                        case,
                        &table.regexes,
                        &mut rows,
                        &mut n,
                        &mut memo
                    ),
                    Ok(Outcome::Holds)
                )
            });
            assert_eq!(each, *expected);
        }
        // A host error on a lead still reaches the caller.
        let mut failing = needles(&["!", "chat"]);
        assert!(select(&table, &span("openai", vec![], vec![]), &mut failing).is_err());
    }

    #[test]
    fn the_core_answers_what_its_plans_prove_and_asks_the_rest() {
        // Regex 0 is exact (a literal prefix); regex 1 needs "tool" before the host is asked.
        let plans = vec![RegexPlan::of("^execute_tool"), RegexPlan::of(r"tool\w")];
        let rules = vec![
            all(vec![Condition::SpanName(0)]),
            all(vec![attr(0, AttrTest::Regex(1))]),
        ];
        let table = RuleTable::new(rules, keys(1), plans, 0).unwrap();
        // The host's answers are wrong on purpose: a call would show in the selection.
        let mut n = needles(&["never", "s"]);
        let mut memo = RegexMemo::new();
        let span = |name: &str, value: &str| Span {
            name: name.into(),
            attrs: vec![text(0, value)],
            ..Span::default()
        };
        let mut select = |s: &Span| table.select(s, &mut n, &mut memo);
        assert_eq!(select(&span("execute_tool x", "")), Ok(Some(0)));
        assert_eq!(select(&span("chat", "no such word")), Ok(None));
        assert_eq!(select(&span("chat", "tools")), Ok(Some(1)));
        assert_eq!(n.calls, 1, "only the text with the needed literal is asked");
    }

    #[test]
    fn a_texts_notes_serve_every_key_that_reads_it() {
        // DSPy's `react_step` and `react_prediction` read one reply through two content keys.
        let mut plans = vec![
            RegexPlan::of(r"\[\[ ## next_tool_name ## \]\]"),
            RegexPlan::of(r"\[\[ ## completed ## \]\]"),
        ];
        number_literals(&mut plans);
        let searches = |rows: &Rows| -> Vec<u32> {
            rows.noted
                .iter()
                .flatten()
                .map(|(_, noted)| noted.searches())
                .collect()
        };
        let reply = String::from("a plain reply");
        let mut rows = Rows::default();
        assert_eq!(rows.native_on(&plans, 0, &reply), Some(false));
        assert_eq!(rows.native_on(&plans, 1, &reply), Some(false));
        assert_eq!(
            searches(&rows),
            [1],
            "one search of `[[ ## ` answers both keys"
        );
        // An equal text elsewhere, and a shorter text at the same address, are texts of
        // their own.
        let copy = reply.clone();
        assert_eq!(rows.native_on(&plans, 1, &copy), Some(false));
        assert_eq!(rows.native_on(&plans, 1, &reply[..5]), Some(false));
        assert_eq!(searches(&rows), [1, 1, 1]);
        // A text with one marker: the plans' own answers, each literal searched once.
        let completed = String::from("[[ ## completed ## ]]");
        assert_eq!(rows.native_on(&plans, 0, &completed), Some(false));
        assert_eq!(rows.native_on(&plans, 1, &completed), Some(true));
        assert_eq!(rows.native_on(&plans, 0, &completed), Some(false));
        assert_eq!(searches(&rows), [1, 1, 1, 3]);
        // Past the noted texts a text is searched each time, with the same answers.
        let more = String::from("[[ ## next_tool_name ## ]]");
        assert_eq!(rows.native_on(&plans, 0, &more), Some(true));
        assert_eq!(rows.native_on(&plans, 1, &more), Some(false));
        assert_eq!(searches(&rows), [1, 1, 1, 3]);
    }

    #[test]
    fn host_errors_and_opaque_texts_reach_the_caller() {
        let table = RuleTable::new(
            vec![all(vec![Condition::SpanName(0)])],
            keys(0),
            asked(1),
            0,
        )
        .unwrap();
        let span = Span {
            name: "x".into(),
            ..Span::default()
        };
        assert_eq!(
            select(&table, &span, &mut needles(&["!"])),
            Err("budget".into())
        );
        let odd = Span {
            opaque_name: true,
            ..Span::default()
        };
        assert_eq!(
            select(&table, &odd, &mut needles(&["x"])),
            Err("opaque".into())
        );
        // A regex the core answers is proved by the narrowing on a UTF-8 name only: an
        // opaque one is still asked of the access when the walk reaches it.
        let exact = RuleTable::new(
            vec![all(vec![Condition::SpanName(0)])],
            keys(0),
            vec![RegexPlan::of("^x")],
            0,
        )
        .unwrap();
        assert_eq!(select(&exact, &span, &mut needles(&[])), Ok(Some(0)));
        assert_eq!(
            select(&exact, &odd, &mut needles(&[])),
            Err("opaque".into())
        );
    }

    /// A small deterministic generator (no dependency for the tests).
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) % n as u64) as usize
        }
    }

    #[test]
    fn the_walk_reads_no_attribute_the_listed_keys_decided() {
        // Rule 0 fails on its scope; rule 1's tests are all decided by the span's keys and
        // its `equals` value (read once, before the walk); rule 2's `any` is one key's.
        let rules = vec![
            all(vec![
                Condition::Scope(0),
                attr(0, AttrTest::EqualsText(vec!["a".into()])),
            ]),
            all(vec![
                attr(0, AttrTest::EqualsText(vec!["b".into()])),
                attr(1, AttrTest::Exists(true)),
            ]),
            Match {
                all: vec![],
                any: vec![
                    attr(0, AttrTest::EqualsText(vec!["a".into()])),
                    attr(0, AttrTest::Exists(false)),
                ],
            },
        ];
        let table = RuleTable::new(rules, keys(3), vec![RegexPlan::of("^x")], 0).unwrap();
        let reads = Rc::new(std::cell::Cell::new(0));
        let span = |value: &str, lists_keys: bool| Span {
            scope: "s".into(),
            attrs: vec![text(0, value), text(1, "yes")],
            lists_keys,
            reads: Some(reads.clone()),
            ..Span::default()
        };
        for (value, expected) in [("b", Some(1)), ("a", Some(2)), ("c", None)] {
            reads.set(0);
            let mut n = needles(&[]);
            assert_eq!(select(&table, &span(value, true), &mut n), Ok(expected));
            assert_eq!(reads.get(), 1, "only the value index reads key 0 ({value})");
            // Without the keys listed, the walk tests every condition itself.
            reads.set(0);
            assert_eq!(select(&table, &span(value, false), &mut n), Ok(expected));
            assert!(reads.get() > 1, "{value}");
        }
        // A key listed though the span may lack it (a content key) is tested again.
        let mut unsure = Span {
            scope: "s".into(),
            attrs: vec![text(0, "b")],
            lists_keys: true,
            unsure: vec![1],
            ..Span::default()
        };
        let mut table = table;
        let mut n = needles(&[]);
        assert_eq!(
            select(&table, &unsure, &mut n),
            Ok(Some(1)),
            "decided by listing"
        );
        table.recheck_keys(&[1]);
        assert_eq!(select(&table, &unsure, &mut n), Ok(None));
        unsure.attrs.push(text(1, "yes"));
        assert_eq!(select(&table, &unsure, &mut n), Ok(Some(1)));
    }

    #[test]
    fn narrowing_by_texts_and_keys_keeps_the_walks_outcome() {
        // Regexes 0-3 the core answers (exact literals), 4-5 only the host (needle search).
        let mut plans: Vec<RegexPlan> = ["^chat", "tool", "^openai", "agent$"]
            .iter()
            .map(|p| RegexPlan::of(p))
            .collect();
        plans.extend(asked(2));
        let words = [
            "chat",
            "tool",
            "openai",
            "agent",
            "x",
            "chat tool",
            "openai agent",
            "",
        ];
        let mut rng = Lcg(7);
        for round in 0..600 {
            // Every other table draws its keys from 4, so spans often hold the keys the
            // rules test (the value index decides), the others from 70.
            let space = if round % 2 == 0 { 70 } else { 4 };
            let condition = |rng: &mut Lcg| -> Condition {
                match rng.below(9) {
                    0 => attr(rng.below(space) as u32, AttrTest::Exists(rng.below(2) == 0)),
                    1 => attr(
                        rng.below(space) as u32,
                        AttrTest::EqualsText(vec![words[rng.below(words.len())].into()]),
                    ),
                    2 => attr(
                        rng.below(space) as u32,
                        AttrTest::Regex(rng.below(6) as u32),
                    ),
                    3 | 4 => Condition::SpanName(rng.below(6) as u32),
                    5 | 6 => Condition::Scope(rng.below(6) as u32),
                    7 => Condition::Kinds(vec![rng.below(3) as i64]),
                    _ => Condition::Child(Box::new(all(vec![attr(
                        rng.below(space) as u32,
                        AttrTest::Exists(true),
                    )]))),
                }
            };
            // An `any` of tests of one key, as `any: [{attr: k, equals: ..}, {attr: k,
            // exists: false}]` (the value index holds it as one clause).
            let one_key_any = |rng: &mut Lcg| -> Vec<Condition> {
                let key = rng.below(space) as u32;
                (0..1 + rng.below(3))
                    .map(|_| match rng.below(3) {
                        0 => attr(key, AttrTest::Exists(rng.below(2) == 0)),
                        _ => attr(
                            key,
                            AttrTest::EqualsText(vec![
                                words[rng.below(words.len())].into(),
                                words[rng.below(words.len())].into(),
                            ]),
                        ),
                    })
                    .collect()
            };
            // An `any` decided piecewise: tests of a few keys and span-name regexes (one
            // the core answers, one only the host).
            let piecewise_any = |rng: &mut Lcg| -> Vec<Condition> {
                (0..2 + rng.below(3))
                    .map(|_| match rng.below(4) {
                        0 => attr(rng.below(space) as u32, AttrTest::Exists(rng.below(2) == 0)),
                        1 => Condition::SpanName(rng.below(6) as u32),
                        _ => attr(
                            rng.below(space) as u32,
                            AttrTest::EqualsText(vec![words[rng.below(words.len())].into()]),
                        ),
                    })
                    .collect()
            };
            let rules: Vec<Match> = (0..rng.below(150) + 1)
                .map(|_| {
                    let all_n = rng.below(3);
                    let any_n = if all_n == 0 {
                        1 + rng.below(2)
                    } else {
                        rng.below(2)
                    };
                    Match {
                        all: (0..all_n).map(|_| condition(&mut rng)).collect(),
                        any: if any_n > 0 && rng.below(3) == 0 {
                            one_key_any(&mut rng)
                        } else if any_n > 0 && rng.below(2) == 0 {
                            piecewise_any(&mut rng)
                        } else {
                            (0..any_n).map(|_| condition(&mut rng)).collect()
                        },
                    }
                })
                .collect();
            let table = RuleTable::new(rules, keys(70), plans.clone(), 0).unwrap();
            let mut memo = RegexMemo::new();
            // Spans note their name and scope rows (for later spans of the same texts);
            // now and then the memo is a fresh one, whose rows the notes do not name.
            let notebook = Rc::new(RefCell::new(Vec::new()));
            for _ in 0..20 {
                if rng.below(7) == 0 {
                    memo = RegexMemo::new();
                }
                let attrs = (0..rng.below(6))
                    .map(|_| {
                        let key = rng.below(space) as u32;
                        match rng.below(3) {
                            0 => (key, None),
                            _ => text(key, words[rng.below(words.len())]),
                        }
                    })
                    .collect();
                let kid = Span {
                    attrs: vec![text(rng.below(space) as u32, "x")],
                    ..Span::default()
                };
                let span = Span {
                    name: words[rng.below(words.len())].into(),
                    scope: words[rng.below(words.len())].into(),
                    kind: rng.below(3) as i64,
                    attrs,
                    children: if rng.below(2) == 0 { vec![kid] } else { vec![] },
                    lists_keys: round % 3 != 0,
                    notebook: (round % 2 == 0).then(|| notebook.clone()),
                    ..Span::default()
                };
                let mut n = needles(&["", "", "", "", "chat", "agent"]);
                let got = table.select(&span, &mut n, &mut memo);
                let mut each_memo = RegexMemo::new();
                let mut each_n = needles(&["", "", "", "", "chat", "agent"]);
                let each = (0..table.rules.len()).find(|&i| {
                    matches!(
                        outcome(
                            &table.rules[i],
                            None,
                            &span,
                            &table.regexes,
                            &mut Rows::default(),
                            &mut each_n,
                            &mut each_memo
                        ),
                        Ok(Outcome::Holds)
                    )
                });
                assert_eq!(got, Ok(each), "round {round}");
                assert!(
                    n.calls <= each_n.calls,
                    "the host is asked no more than by the walk"
                );
            }
        }
    }

    #[test]
    fn numbers_out_of_range_and_empty_matches_are_refused() {
        let bad = |rules: Vec<Match>| RuleTable::new(rules, keys(1), asked(1), 1).is_err();
        assert!(bad(vec![all(vec![attr(1, AttrTest::Exists(true))])]));
        assert!(bad(vec![all(vec![attr(0, AttrTest::Regex(1))])]));
        assert!(bad(vec![all(vec![attr(0, AttrTest::EqualsHost(1))])]));
        assert!(bad(vec![all(vec![Condition::Scope(1)])]));
        assert!(bad(vec![Match::default()]));
        let mut deep = all(vec![Condition::Status(0)]);
        for _ in 0..=MAX_CHILD_DEPTH + 1 {
            deep = all(vec![Condition::Child(Box::new(deep))]);
        }
        assert!(bad(vec![deep]));
    }
}
