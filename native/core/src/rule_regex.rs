//! What the core can say about a rule-table regex without asking Python.
//!
//! The conventions' regexes are Python's (`otel_oracles.safe_regex`: the `regex` engine,
//! version 0, no flags, under a time budget), and that engine stays the one meaning of a
//! pattern. Calling it back costs a crossing into Python and a backtracking search per
//! distinct text, and some texts are distinct per span (whole output messages, metadata). So
//! when the table is built each pattern is analysed once into a [`RegexPlan`]:
//!
//! - [`RegexPlan::Exact`]: the pattern is inside a small subset whose meaning is plain (literal
//!   characters, `.`, simple character classes, `^`, `$`, groups, `|`, `?`, lookaheads) and
//!   expands to a few fixed-length alternatives; the core answers every text itself.
//! - [`RegexPlan::Filter`]: otherwise, what every match must contain (literal substrings, a
//!   literal prefix after `^`, a literal suffix before `$`), derived from the parts of the
//!   pattern the analysis understands.
//!   A text lacking it has no match: the core answers "no" natively and asks Python only
//!   for the texts that pass.
//!
//! The analysis is conservative: any syntax it does not model exactly (flags, escapes other
//! than escaped punctuation and `\n` `\t` `\r`, braces, nested or operator sets, a set holding
//! a class escape, lookbehinds, backreferences, atomic groups...) makes that part opaque (it contributes no literal and
//! rules out `Exact`), and anything that could change the meaning of the rest of the pattern
//! (an inline flag, a conditional, a comment, an unescaped `{`) leaves no plan at all: Python
//! answers every text, as before.
//!
//! Cost on untrusted text is linear: literal tests are `str::contains` / `starts_with`
//! (two-way search, linear), and an exact plan tests each candidate position against
//! alternatives whose total size is capped ([`MAX_EXACT_SIZE`]), so a text of n characters
//! costs at most n x that cap, never backtracking.

/// Alternatives an exact plan may expand to (an alternation of k choices times an optional
/// part doubles them).
pub const MAX_EXACT_ALTERNATIVES: usize = 32;

/// Items (characters, sets, assertions, lookahead alternatives' items) of an exact plan, all
/// alternatives together: the bound on the work per text position.
pub const MAX_EXACT_SIZE: usize = 1024;

/// Patterns longer than this (in characters) are not analysed.
pub const MAX_PATTERN: usize = 2048;

/// Group nesting past which a pattern is not analysed (the parser recurses per group).
const MAX_DEPTH: usize = 32;

/// Literal clauses a filter keeps, and needles per clause.
const MAX_CLAUSES: usize = 8;
const MAX_NEEDLES: usize = 16;

/// The parsed pattern, in the subset the analysis understands.
#[derive(Debug, Clone, PartialEq)]
enum Node {
    Char(char),
    Set(Set),
    /// `.`: any character but `\n` (no DOTALL).
    Any,
    /// `^`: the start of the text (no MULTILINE).
    Start,
    /// `$`: the end of the text, or before a `\n` that ends it (no MULTILINE).
    End,
    /// Something whose exact meaning the analysis does not model (`\w`, `\b`, a lookbehind,
    /// an atomic group...): it may consume characters or none.
    Opaque,
    /// `\s`: opaque to the analysis like [`Node::Opaque`] (it takes non-ASCII whitespace too),
    /// but told apart so that a [`MatchPlan`] can read the `^\s*` that starts a pattern.
    Space,
    Concat(Vec<Node>),
    Alt(Vec<Node>),
    /// `x*`, `x+`, `x?` (`max` 1 for `?`, `None` unbounded); `plain` without a lazy or
    /// possessive modifier.
    Repeat {
        node: Box<Node>,
        min: u32,
        max: Option<u32>,
        plain: bool,
    },
    /// `(?=...)` / `(?!...)`.
    Look {
        negative: bool,
        node: Box<Node>,
    },
}

/// A character class of single characters and ranges.
#[derive(Debug, Clone, PartialEq)]
pub struct Set {
    negated: bool,
    ranges: Vec<(char, char)>,
}

impl Set {
    fn contains(&self, c: char) -> bool {
        self.ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != self.negated
    }
}

/// Why a pattern gets no plan at all (Python answers every text).
struct Refused;

struct Parser {
    chars: Vec<char>,
    pos: usize,
    depth: usize,
    /// A leading `(?s)` was read: `.` takes every character, `\n` too.
    dotall: bool,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn alternation(&mut self) -> Result<Node, Refused> {
        let mut branches = vec![self.concat()?];
        while self.eat('|') {
            branches.push(self.concat()?);
        }
        Ok(if branches.len() == 1 {
            branches.pop().unwrap_or(Node::Concat(Vec::new()))
        } else {
            Node::Alt(branches)
        })
    }

    fn concat(&mut self) -> Result<Node, Refused> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let atom = self.atom()?;
            items.push(self.quantified(atom)?);
        }
        Ok(Node::Concat(items))
    }

    fn quantified(&mut self, atom: Node) -> Result<Node, Refused> {
        let (min, max) = match self.peek() {
            Some('*') => (0, None),
            Some('+') => (1, None),
            Some('?') => (0, Some(1)),
            Some('{') => return Err(Refused),
            _ => return Ok(atom),
        };
        self.pos += 1;
        if matches!(atom, Node::Start | Node::End | Node::Look { .. }) {
            return Err(Refused);
        }
        let plain = !(self.eat('?') || self.eat('+'));
        Ok(Node::Repeat {
            node: Box::new(atom),
            min,
            max,
            plain,
        })
    }

    fn group(&mut self) -> Result<Node, Refused> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Refused);
        }
        let node = if self.eat('?') {
            match (self.peek(), self.peek_at(1)) {
                (Some(':'), _) => {
                    self.pos += 1;
                    self.alternation()?
                }
                (Some('='), _) | (Some('!'), _) => {
                    let negative = self.peek() == Some('!');
                    self.pos += 1;
                    Node::Look {
                        negative,
                        node: Box::new(self.alternation()?),
                    }
                }
                (Some('<'), Some('=' | '!')) => {
                    self.pos += 2;
                    self.alternation()?;
                    Node::Opaque
                }
                (Some('>'), _) => {
                    self.pos += 1;
                    self.alternation()?;
                    Node::Opaque
                }
                (Some('P'), Some('<')) => {
                    self.pos += 2;
                    self.group_name()?;
                    self.alternation()?
                }
                (Some('<'), _) => {
                    self.pos += 1;
                    self.group_name()?;
                    self.alternation()?
                }
                _ => return Err(Refused),
            }
        } else {
            self.alternation()?
        };
        if !self.eat(')') {
            return Err(Refused);
        }
        self.depth -= 1;
        Ok(node)
    }

    fn group_name(&mut self) -> Result<(), Refused> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            self.pos += 1;
        }
        if self.pos == start || !self.eat('>') {
            return Err(Refused);
        }
        Ok(())
    }

    fn atom(&mut self) -> Result<Node, Refused> {
        let Some(c) = self.peek() else {
            return Err(Refused);
        };
        self.pos += 1;
        Ok(match c {
            '(' => self.group()?,
            '[' => match self.set()? {
                Some(set) => Node::Set(set),
                None => Node::Opaque,
            },
            // Under DOTALL `.` is the class of every character: the empty negated set.
            '.' if self.dotall => Node::Set(Set {
                negated: true,
                ranges: Vec::new(),
            }),
            '.' => Node::Any,
            '^' => Node::Start,
            '$' => Node::End,
            '\\' => match self.peek() {
                Some('s') => {
                    self.pos += 1;
                    Node::Space
                }
                Some('w' | 'd' | 'W' | 'S' | 'D' | 'b' | 'B') => {
                    self.pos += 1;
                    Node::Opaque
                }
                _ => Node::Char(self.escaped()?),
            },
            '*' | '+' | '?' | '{' | '}' | ']' | ')' | '|' => return Err(Refused),
            other => Node::Char(other),
        })
    }

    /// The character of an escape read after its backslash: escaped ASCII punctuation, `\n`,
    /// `\t`, `\r`; any other escape is refused.
    fn escaped(&mut self) -> Result<char, Refused> {
        let c = self.peek().ok_or(Refused)?;
        self.pos += 1;
        match c {
            'n' => Ok('\n'),
            't' => Ok('\t'),
            'r' => Ok('\r'),
            c if c.is_ascii_punctuation() => Ok(c),
            _ => Err(Refused),
        }
    }

    /// A class after its `[`: characters, escaped punctuation and ranges; nested sets and set
    /// operators are refused. A class escape (`\w`, `\d`, `\s` and their negations) makes
    /// the whole set opaque (`None`: what it takes is the engine's, Unicode included), read
    /// to its `]` all the same; one that would start a range (`[\w-z]`) is refused.
    fn set(&mut self) -> Result<Option<Set>, Refused> {
        let negated = self.eat('^');
        let mut ranges = Vec::new();
        let mut opaque = false;
        if self.peek() == Some(']') {
            return Err(Refused);
        }
        loop {
            let c = self.peek().ok_or(Refused)?;
            self.pos += 1;
            let lo = match c {
                ']' => break,
                '[' => return Err(Refused),
                '\\' if matches!(self.peek(), Some('w' | 'W' | 'd' | 'D' | 's' | 'S')) => {
                    self.pos += 1;
                    if self.peek() == Some('-') && self.peek_at(1).is_some_and(|n| n != ']') {
                        return Err(Refused);
                    }
                    opaque = true;
                    continue;
                }
                '\\' => self.escaped()?,
                '-' | '&' | '|' | '~' if self.peek() == Some(c) => return Err(Refused),
                other => other,
            };
            // A range is `lo-hi` whatever `lo` is, an escaped `\-` too (`[\--a]` is `-` to
            // `a`, as in Python); an unescaped `-` followed by `-` was refused above.
            let ranged =
                self.peek() == Some('-') && self.peek_at(1).is_some_and(|next| next != ']');
            if !ranged {
                ranges.push((lo, lo));
                continue;
            }
            self.pos += 1;
            let hi = match self.peek().ok_or(Refused)? {
                '[' | '-' => return Err(Refused),
                '\\' => {
                    self.pos += 1;
                    self.escaped()?
                }
                other => {
                    self.pos += 1;
                    other
                }
            };
            if hi < lo {
                return Err(Refused);
            }
            ranges.push((lo, hi));
        }
        Ok((!opaque).then_some(Set { negated, ranges }))
    }
}

/// `pattern` parsed; `dotall`: under a `(?s)` read before it.
fn parse(pattern: &str, dotall: bool) -> Result<Node, Refused> {
    let chars: Vec<char> = pattern.chars().collect();
    if chars.len() > MAX_PATTERN {
        return Err(Refused);
    }
    let mut parser = Parser {
        chars,
        pos: 0,
        depth: 0,
        dotall,
    };
    let node = parser.alternation()?;
    if parser.pos != parser.chars.len() {
        return Err(Refused);
    }
    Ok(node)
}

/// One step of an exact alternative.
#[derive(Debug, Clone, PartialEq)]
enum Item {
    Char(char),
    Set(Set),
    Any,
    Start,
    End,
    Look {
        negative: bool,
        alts: Vec<Vec<Item>>,
    },
}

fn size(alts: &[Vec<Item>]) -> usize {
    alts.iter()
        .flatten()
        .map(|item| match item {
            Item::Look { alts, .. } => 1 + size(alts),
            _ => 1,
        })
        .sum()
}

/// The one item `node` is, when it is a single character, set, `.` or anchor.
fn single(node: &Node) -> Option<Item> {
    Some(match node {
        Node::Char(c) => Item::Char(*c),
        Node::Set(set) => Item::Set(set.clone()),
        Node::Any => Item::Any,
        Node::Start => Item::Start,
        Node::End => Item::End,
        _ => return None,
    })
}

/// The fixed-length alternatives `node` is the union of, or `None` when it has an opaque
/// part, a repetition other than a plain `?`, or too many of them.
fn expand(node: &Node) -> Option<Vec<Vec<Item>>> {
    let alts = match node {
        Node::Char(c) => vec![vec![Item::Char(*c)]],
        Node::Set(set) => vec![vec![Item::Set(set.clone())]],
        Node::Any => vec![vec![Item::Any]],
        Node::Start => vec![vec![Item::Start]],
        Node::End => vec![vec![Item::End]],
        Node::Opaque | Node::Space => return None,
        Node::Alt(branches) => {
            let mut alts = Vec::new();
            for branch in branches {
                alts.extend(expand(branch)?);
                if alts.len() > MAX_EXACT_ALTERNATIVES {
                    return None;
                }
            }
            alts
        }
        Node::Concat(items) => {
            let mut alts: Vec<Vec<Item>> = vec![Vec::new()];
            // `size(&alts)`, kept as the items are appended.
            let mut total = 0;
            for item in items {
                // Most items are one character (a literal run): appended to every head in
                // place. Joining fresh copies of every head per item made a literal pattern
                // quadratic in its length (~14 M instructions of every start: the table's
                // patterns are planned when it is built).
                if let Some(single) = single(item) {
                    total += alts.len();
                    if total > MAX_EXACT_SIZE {
                        return None;
                    }
                    if let Some((last, heads)) = alts.split_last_mut() {
                        for head in heads {
                            head.push(single.clone());
                        }
                        last.push(single);
                    }
                    continue;
                }
                let tails = expand(item)?;
                if alts.len() * tails.len() > MAX_EXACT_ALTERNATIVES {
                    return None;
                }
                alts = if let [tail] = tails.as_slice() {
                    for head in &mut alts {
                        head.extend(tail.iter().cloned());
                    }
                    alts
                } else {
                    alts.iter()
                        .flat_map(|head| {
                            tails.iter().map(move |tail| {
                                let mut joined = head.clone();
                                joined.extend(tail.iter().cloned());
                                joined
                            })
                        })
                        .collect()
                };
                total = size(&alts);
                if total > MAX_EXACT_SIZE {
                    return None;
                }
            }
            alts
        }
        Node::Repeat {
            node,
            min: 0,
            max: Some(1),
            plain: true,
        } => {
            let mut alts = vec![Vec::new()];
            alts.extend(expand(node)?);
            alts
        }
        Node::Repeat { .. } => return None,
        Node::Look { negative, node } => vec![vec![Item::Look {
            negative: *negative,
            alts: expand(node)?,
        }]],
    };
    (alts.len() <= MAX_EXACT_ALTERNATIVES && size(&alts) <= MAX_EXACT_SIZE).then_some(alts)
}

/// One alternative of an exact plan: where it may start, its leading literal, the rest.
#[derive(Debug, Clone, PartialEq)]
pub struct Alternative {
    /// Starts with `^`: tried at position 0 only.
    anchored: bool,
    /// The literal characters it starts with (after `^` when anchored).
    lead: Box<str>,
    /// The lead's number among the table's literals ([`number_literals`]), when unanchored
    /// and not empty; [`UNNUMBERED`] otherwise.
    number: u8,
    /// The start it shares with other numbered literals, when it has one ([`Guard`]).
    guard: Option<Guard>,
    rest: Vec<Item>,
}

impl Alternative {
    fn of(items: Vec<Item>) -> Self {
        let anchored = items.first() == Some(&Item::Start);
        let skip = usize::from(anchored);
        let lead: String = items
            .iter()
            .skip(skip)
            .map_while(|item| match item {
                Item::Char(c) => Some(*c),
                _ => None,
            })
            .collect();
        let taken = skip + lead.chars().count();
        Self {
            anchored,
            lead: lead.into(),
            number: UNNUMBERED,
            guard: None,
            rest: items.into_iter().skip(taken).collect(),
        }
    }

    /// Whether `found` searches the text for the lead (`str::contains`).
    fn searched(&self) -> bool {
        !self.anchored && !self.lead.is_empty()
    }

    /// Whether a match of this alternative starts somewhere in `text` (`noted`: what the
    /// text was found to hold of the numbered literals).
    fn found(&self, text: &str, noted: &mut Noted) -> bool {
        if self.anchored {
            return text.starts_with(&*self.lead) && at(&self.rest, text, self.lead.len());
        }
        if self.lead.is_empty() {
            return text
                .char_indices()
                .map(|(pos, _)| pos)
                .chain(std::iter::once(text.len()))
                .any(|pos| at(&self.rest, text, pos));
        }
        // Most texts lack the lead (a content text tested for a marker): `str::contains`
        // tells so without preparing the two-way searcher `find` sets up per call (~900
        // instructions), by SIMD for a lead of up to 32 bytes.
        if !noted.contains(text, &self.lead, self.number, self.guard.as_ref()) {
            return false;
        }
        // Every occurrence of the lead, overlapping ones included (the rest may hold at a
        // later one only).
        let mut from = 0;
        while let Some(found) = text.get(from..).and_then(|tail| tail.find(&*self.lead)) {
            let start = from + found;
            if at(&self.rest, text, start + self.lead.len()) {
                return true;
            }
            let step = text
                .get(start..)
                .and_then(|tail| tail.chars().next())
                .map_or(1, char::len_utf8);
            from = start + step;
        }
        false
    }
}

/// Whether `items` match `text` from byte position `pos` (a character boundary).
fn at(items: &[Item], text: &str, mut pos: usize) -> bool {
    for item in items {
        let next = text.get(pos..).and_then(|tail| tail.chars().next());
        match item {
            Item::Char(c) => match next {
                Some(n) if n == *c => pos += n.len_utf8(),
                _ => return false,
            },
            Item::Set(set) => match next {
                Some(n) if set.contains(n) => pos += n.len_utf8(),
                _ => return false,
            },
            Item::Any => match next {
                Some(n) if n != '\n' => pos += n.len_utf8(),
                _ => return false,
            },
            Item::Start => {
                if pos != 0 {
                    return false;
                }
            }
            Item::End => {
                if !(pos == text.len() || text.get(pos..) == Some("\n")) {
                    return false;
                }
            }
            Item::Look { negative, alts } => {
                if alts.iter().any(|alt| at(alt, text, pos)) == *negative {
                    return false;
                }
            }
        }
    }
    true
}

/// A literal every match contains: anywhere, at the start of the text (`anchored`: it
/// follows `^`), or at its end (`at_end`: it precedes `$`, so the text ends with it or with it
/// and one `\n`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Needle {
    pub text: Box<str>,
    pub anchored: bool,
    pub at_end: bool,
    /// Its number among the table's literals ([`number_literals`]) when searched anywhere
    /// in the text; [`UNNUMBERED`] otherwise.
    pub number: u8,
    /// The start it shares with other numbered literals, when it has one ([`Guard`]).
    pub guard: Option<Guard>,
}

impl Needle {
    /// Whether `in_text` searches the whole text for it (`str::contains`).
    fn searched(&self) -> bool {
        !self.anchored && !self.at_end
    }

    fn in_text(&self, text: &str, noted: &mut Noted) -> bool {
        let needle = &*self.text;
        if self.anchored && !text.starts_with(needle) {
            return false;
        }
        if self.at_end {
            return text.ends_with(needle)
                || text
                    .strip_suffix('\n')
                    .is_some_and(|head| head.ends_with(needle));
        }
        self.anchored || noted.contains(text, needle, self.number, self.guard.as_ref())
    }
}

/// The number of a literal no text notes (searched each time it is asked).
pub const UNNUMBERED: u8 = u8::MAX;

/// Literals [`number_literals`] numbers (a bit each in [`Noted`]).
const NUMBERED: usize = 64;

/// What one text was found to hold or lack of the numbered literals, a bit per number, for
/// the plans asked about the same text: the rules that tell a chat span's kind search its
/// content (a whole reply) for the same markers (`[[ ## next_tool_name ## ]]` by two rules,
/// one a filter, one exact), and a literal a text lacks is then searched for once (~390
/// instructions a search), not once per regex.
/// The [`Guard`]s are noted alike, a bit per guard number.
#[derive(Debug, Clone, Copy, Default)]
pub struct Noted {
    searched: u64,
    held: u64,
    guards_searched: u64,
    guards_held: u64,
}

impl Noted {
    /// Whether `text` holds `literal`, whose number is `number` (this `Noted`'s text) and
    /// which starts with `guard`'s text: a text lacking the guard lacks the literal, and
    /// every other literal starting with it, found by one search.
    fn contains(&mut self, text: &str, literal: &str, number: u8, guard: Option<&Guard>) -> bool {
        if guard.is_some_and(|guard| !self.holds_guard(text, guard)) {
            return false;
        }
        let Some(bit) = 1u64.checked_shl(u32::from(number)) else {
            return text.contains(literal);
        };
        if self.searched & bit != 0 {
            return self.held & bit != 0;
        }
        let found = text.contains(literal);
        self.searched |= bit;
        if found {
            self.held |= bit;
        }
        found
    }

    /// How many searches of its text these notes stand for (a literal's or a guard's).
    #[cfg(test)]
    pub(crate) fn searches(&self) -> u32 {
        self.searched.count_ones() + self.guards_searched.count_ones()
    }

    /// Whether `text` holds `guard`'s text, searched once per text.
    fn holds_guard(&mut self, text: &str, guard: &Guard) -> bool {
        let Some(bit) = 1u64.checked_shl(u32::from(guard.number)) else {
            return text.contains(&*guard.text);
        };
        if self.guards_searched & bit != 0 {
            return self.guards_held & bit != 0;
        }
        let found = text.contains(&*guard.text);
        self.guards_searched |= bit;
        if found {
            self.guards_held |= bit;
        }
        found
    }
}

/// The start several searched literals share (at least [`MIN_GUARD`] bytes, shorter than
/// each; numbered or not), searched for before any of them: on data-2000 every chat span's reply is tested
/// for DSPy's `[[ ## next_tool_name ## ]]` and `[[ ## completed ## ]]` (two searches of the
/// whole reply, ~390 instructions each); a reply without `[[ ## ` lacks both, found by one.
/// Its number ([`NUMBERED`] at most) is its bit in [`Noted`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guard {
    text: Box<str>,
    number: u8,
}

/// The shortest start shared by literals that is worth a search of its own.
const MIN_GUARD: usize = 4;

/// The guard of `literal` among the table's searched `literals` (itself one of them): the
/// shortest start of at least [`MIN_GUARD`] bytes, shorter than `literal`, that it shares
/// with another (so a family of literals shares one guard, whatever longer starts some of
/// them share).
fn guard_text<'a>(literal: &'a str, literals: &[Box<str>]) -> Option<&'a str> {
    let shared = literals
        .iter()
        .filter(|other| ***other != *literal)
        .map(|other| {
            let mut len = literal
                .bytes()
                .zip(other.bytes())
                .take_while(|(a, b)| a == b)
                .count();
            while !literal.is_char_boundary(len) {
                len -= 1;
            }
            len
        })
        .filter(|len| (MIN_GUARD..literal.len()).contains(len))
        .min()?;
    literal.get(..shared)
}

/// Numbers the literals `plans` search for anywhere in a text (a filter's unanchored needles,
/// an exact alternative's unanchored lead), the same literal the same number, so that the
/// plans of one table asked about one text share what it was found to hold ([`Noted`]).
/// Literals found in most places are numbered first; past [`NUMBERED`] the rest stay
/// [`UNNUMBERED`].
pub fn number_literals(plans: &mut [RegexPlan]) {
    let mut counted: Vec<(&str, usize)> = Vec::new();
    for plan in plans.iter() {
        plan.each_literal(|literal| {
            match counted.iter_mut().find(|(known, _)| *known == literal) {
                Some((_, count)) => *count += 1,
                None => counted.push((literal, 1)),
            }
        });
    }
    counted.sort_by_key(|(_, count)| std::cmp::Reverse(*count));
    let numbered: Vec<Box<str>> = counted
        .iter()
        .take(NUMBERED)
        .map(|(literal, _)| (*literal).into())
        .collect();
    let number_of = |literal: &str| {
        numbered
            .iter()
            .position(|known| **known == *literal)
            .and_then(|at| u8::try_from(at).ok())
            .unwrap_or(UNNUMBERED)
    };
    let mut guards: Vec<Box<str>> = Vec::new();
    let literals: Vec<Box<str>> = counted
        .iter()
        .map(|(literal, _)| (*literal).into())
        .collect();
    let mut guard_of = |literal: &str| {
        let text = guard_text(literal, &literals)?;
        let at = match guards.iter().position(|known| **known == *text) {
            Some(at) => at,
            None if guards.len() < NUMBERED => {
                guards.push(text.into());
                guards.len() - 1
            }
            None => return None,
        };
        Some(Guard {
            text: text.into(),
            number: u8::try_from(at).ok()?,
        })
    };
    for plan in plans.iter_mut() {
        match plan {
            RegexPlan::Exact(alts) => {
                for alt in alts.iter_mut().filter(|alt| alt.searched()) {
                    alt.number = number_of(&alt.lead);
                    alt.guard = guard_of(&alt.lead);
                }
            }
            RegexPlan::Filter(clauses) => {
                for needle in clauses.iter_mut().flatten().filter(|n| n.searched()) {
                    needle.number = number_of(&needle.text);
                    needle.guard = guard_of(&needle.text);
                }
            }
        }
    }
}

/// At least one of these needles is in every matched text.
pub type Clause = Vec<Needle>;

/// What every match of `node` needs, as clauses that must all hold (a sound subset: only
/// parts every match goes through contribute).
fn needs(node: &Node) -> Vec<Clause> {
    match node {
        Node::Concat(items) => {
            let mut clauses = Vec::new();
            let mut run = String::new();
            let mut anchored = false;
            let flush = |run: &mut String, anchored: bool, at_end: bool, clauses: &mut Vec<_>| {
                if !run.is_empty() {
                    clauses.push(vec![Needle {
                        text: std::mem::take(run).into(),
                        anchored,
                        at_end,
                        number: UNNUMBERED,
                        guard: None,
                    }]);
                }
            };
            for item in items {
                if let Node::Char(c) = item {
                    run.push(*c);
                    continue;
                }
                flush(&mut run, anchored, matches!(item, Node::End), &mut clauses);
                anchored = matches!(item, Node::Start);
                clauses.extend(needs(item));
            }
            flush(&mut run, anchored, false, &mut clauses);
            clauses
        }
        Node::Alt(branches) => {
            // Every match goes through one branch: one clause of each, joined.
            let mut joined = Vec::new();
            for branch in branches {
                match needs(branch).into_iter().next() {
                    Some(clause) => joined.extend(clause),
                    None => return Vec::new(),
                }
            }
            if joined.len() > MAX_NEEDLES {
                return Vec::new();
            }
            vec![joined]
        }
        Node::Repeat { node, min, .. } if *min >= 1 => needs(node),
        _ => Vec::new(),
    }
}

/// What the core does with one regex of the table (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub enum RegexPlan {
    /// The core answers every text: a match iff one alternative is found.
    Exact(Vec<Alternative>),
    /// A text must hold every clause to possibly match; those that do are asked of the
    /// host. No clauses: every text is asked.
    Filter(Vec<Clause>),
}

impl RegexPlan {
    /// The plan of `pattern` (Python `regex` syntax, no flags).
    pub fn of(pattern: &str) -> Self {
        match parse(pattern, false) {
            Ok(node) => Self::of_node(&node),
            Err(Refused) => Self::host(),
        }
    }

    fn of_node(node: &Node) -> Self {
        if let Some(alts) = expand(node) {
            return Self::Exact(alts.into_iter().map(Alternative::of).collect());
        }
        let mut clauses = needs(node);
        clauses.truncate(MAX_CLAUSES);
        Self::Filter(clauses)
    }

    /// The plan that asks the host for every text.
    pub fn host() -> Self {
        Self::Filter(Vec::new())
    }

    /// Whether the core answers every text of this regex itself.
    pub fn is_exact(&self) -> bool {
        matches!(self, Self::Exact(_))
    }

    /// Calls `each` with every literal the plan searches for anywhere in a text.
    fn each_literal<'s>(&'s self, mut each: impl FnMut(&'s str)) {
        match self {
            Self::Exact(alts) => alts
                .iter()
                .filter(|alt| alt.searched())
                .for_each(|alt| each(&alt.lead)),
            Self::Filter(clauses) => clauses
                .iter()
                .flatten()
                .filter(|needle| needle.searched())
                .for_each(|needle| each(&needle.text)),
        }
    }

    /// The filter's clauses (empty for an exact plan).
    pub fn clauses(&self) -> &[Clause] {
        match self {
            Self::Exact(_) => &[],
            Self::Filter(clauses) => clauses,
        }
    }

    /// Whether the regex finds a match in `text`, when the core can tell; `None`: ask the
    /// host.
    pub fn answer(&self, text: &str) -> Option<bool> {
        self.answer_noted(text, &mut Noted::default())
    }

    /// [`RegexPlan::answer`], with what `text` was found to hold of the numbered literals
    /// (`noted`, kept for this text only) read and added to.
    pub fn answer_noted(&self, text: &str, noted: &mut Noted) -> Option<bool> {
        match self {
            Self::Exact(alts) => Some(alts.iter().any(|alt| alt.found(text, noted))),
            Self::Filter(clauses) => {
                if clauses
                    .iter()
                    .all(|clause| clause.iter().any(|needle| needle.in_text(text, noted)))
                {
                    None
                } else {
                    Some(false)
                }
            }
        }
    }
}

/// Whether `regex`'s `\s` (version 0) takes an ASCII character: `\t`, `\n`, `\v`, `\f`, `\r`
/// and space (not `\x1c`-`\x1f`, which Python's `str.isspace` counts).
fn is_ascii_space(c: char) -> bool {
    matches!(c, '\t'..='\r' | ' ')
}

/// The literals one of which every match of `node` starts with, from where `node` starts,
/// and whether `node` is exactly those literals (so a part after it may lengthen them).
/// `None` in the list's place: nothing is known (a part the analysis does not read comes
/// first, or there would be more than [`MAX_NEEDLES`]).
fn leads(node: &Node) -> (Option<Vec<String>>, bool) {
    match node {
        Node::Char(c) => (Some(vec![c.to_string()]), true),
        // Zero-width at the start of a match: it adds no character (a `^` past the start
        // fails every match, so reading it as nothing only keeps texts that cannot match).
        Node::Start => (Some(vec![String::new()]), true),
        Node::Concat(items) => {
            let mut known = vec![String::new()];
            for item in items {
                let (tails, whole) = leads(item);
                let Some(tails) = tails else {
                    return (Some(known), false);
                };
                if known.len() * tails.len() > MAX_NEEDLES {
                    return (Some(known), false);
                }
                known = known
                    .iter()
                    .flat_map(|head| tails.iter().map(move |tail| format!("{head}{tail}")))
                    .collect();
                if !whole {
                    return (Some(known), false);
                }
            }
            (Some(known), true)
        }
        Node::Alt(branches) => {
            let mut known = Vec::new();
            let mut all_whole = true;
            for branch in branches {
                let (tails, whole) = leads(branch);
                let Some(tails) = tails else {
                    return (None, false);
                };
                known.extend(tails);
                all_whole &= whole;
            }
            if known.len() > MAX_NEEDLES {
                return (None, false);
            }
            (Some(known), all_whole)
        }
        Node::Repeat {
            node,
            min: 0,
            max: Some(1),
            ..
        } => {
            // `x?`: nothing, or `x` (lazy or possessive too: either may be how a match goes).
            let (tails, whole) = leads(node);
            match tails {
                Some(mut tails) if tails.len() < MAX_NEEDLES => {
                    tails.insert(0, String::new());
                    (Some(tails), whole)
                }
                _ => (Some(vec![String::new()]), false),
            }
        }
        Node::Repeat { node, min, .. } if *min >= 1 => (leads(node).0, false),
        _ => (None, false),
    }
}

/// What the core can say about `regex.match(pattern, text)` (a match at the start of the
/// text; Python's `regex`, version 0, no flags but a leading `(?i)` or `(?s)`): the tool-result patterns
/// of the conventions (`error_pattern`, `empty_pattern`, `denied_pattern`), asked of every
/// text result a tool step returns, which are mostly literals after `^\s*`.
///
/// Without `(?i)` the pattern's [`RegexPlan`] as a match (`^(?:pattern)`) answers, exactly or
/// by its literals. Either way, when every match starts with one of a few literals (after the
/// whitespace a leading `^\s*` takes), a text that starts with none of them is "no match". With
/// `(?i)` those literals are ASCII and compared in either ASCII case, on ASCII texts only (a
/// non-ASCII character may fold to an ASCII letter: `ſ` to `s`, the Kelvin sign to `k`);
/// everything else is the engine's. A leading `(?s)` (DOTALL) changes only what `.` takes
/// (every character, `\n` too), and is read as such.
#[derive(Debug, Clone, PartialEq)]
pub struct MatchPlan {
    /// A leading `(?i)`: literals match either ASCII case, only ASCII texts are answered.
    fold: bool,
    /// The plan of `^(?:pattern)`, `(?i)` left out; unused when `fold`.
    plan: RegexPlan,
    /// A `^\s*` (or `\s+`) starts the pattern: the literals follow the whitespace it takes.
    skip_space: bool,
    /// One of these starts every match (after the whitespace, their own leading whitespace
    /// left out); empty: nothing known.
    leads: Vec<Box<str>>,
}

impl MatchPlan {
    /// The plan of `pattern` (Python `regex` syntax, no flags but a leading `(?i)`, `(?s)`,
    /// `(?is)` or `(?si)`, or several of them: at the start each is the pattern's own).
    pub fn of(pattern: &str) -> Self {
        let (mut fold, mut dotall, mut body) = (false, false, pattern);
        while let Some((flags, rest)) = body
            .strip_prefix("(?")
            .and_then(|tail| tail.split_once(')'))
            .filter(|(flags, _)| !flags.is_empty() && flags.chars().all(|f| f == 'i' || f == 's'))
        {
            fold |= flags.contains('i');
            dotall |= flags.contains('s');
            body = rest;
        }
        let Ok(node) = parse(body, dotall) else {
            return Self::host();
        };
        let plan = if fold {
            RegexPlan::host()
        } else {
            RegexPlan::of_node(&Node::Concat(vec![Node::Start, node.clone()]))
        };
        let mut items = match node {
            Node::Concat(items) => items,
            other => vec![other],
        };
        let starts = items
            .iter()
            .take_while(|item| **item == Node::Start)
            .count();
        items.drain(..starts);
        let skip_space = matches!(
            items.first(),
            Some(Node::Repeat { node, min: 0 | 1, max: None, .. }) if **node == Node::Space
        );
        if skip_space {
            items.remove(0);
        }
        let leads = match leads(&Node::Concat(items)).0 {
            Some(found) => Self::usable(found, fold, skip_space),
            None => Vec::new(),
        };
        Self {
            fold,
            plan,
            skip_space,
            leads,
        }
    }

    /// The plan that asks the host for every text.
    pub fn host() -> Self {
        Self {
            fold: false,
            plan: RegexPlan::host(),
            skip_space: false,
            leads: Vec::new(),
        }
    }

    /// The literals as [`MatchPlan::answer`] compares them, or none when one of them tells
    /// nothing: an empty one; after `\s*`, one whose leading whitespace is all it has or is
    /// followed by a character that may be whitespace too (non-ASCII: the engine decides);
    /// with `(?i)`, one that is not ASCII.
    fn usable(found: Vec<String>, fold: bool, skip_space: bool) -> Vec<Box<str>> {
        let mut usable = Vec::with_capacity(found.len());
        for lead in found {
            let lead = if skip_space {
                lead.trim_start_matches(is_ascii_space)
            } else {
                &lead
            };
            let first = lead.chars().next();
            if first.is_none()
                || (skip_space && first.is_some_and(|c| !c.is_ascii()))
                || (fold && !lead.is_ascii())
            {
                return Vec::new();
            }
            usable.push(lead.into());
        }
        usable
    }

    /// Whether the core answers no text of this pattern itself.
    pub fn is_host(&self) -> bool {
        self.leads.is_empty() && (self.fold || self.plan == RegexPlan::host())
    }

    /// Whether the pattern matches at the start of `text`, when the core can tell; `None`:
    /// ask the host.
    pub fn answer(&self, text: &str) -> Option<bool> {
        if self.fold && !text.is_ascii() {
            return None;
        }
        if !self.leads.is_empty() {
            let rest = if self.skip_space {
                text.trim_start_matches(is_ascii_space)
            } else {
                text
            };
            // After ASCII whitespace, a non-ASCII character may be whitespace `\s` takes.
            let unsure = self.skip_space && rest.chars().next().is_some_and(|c| !c.is_ascii());
            if !unsure && !self.leads.iter().any(|lead| self.starts(rest, lead)) {
                return Some(false);
            }
        }
        if self.fold {
            return None;
        }
        self.plan.answer(text)
    }

    fn starts(&self, text: &str, lead: &str) -> bool {
        if self.fold {
            return text
                .as_bytes()
                .get(..lead.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(lead.as_bytes()));
        }
        text.starts_with(lead)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needle(text: &str, anchored: bool) -> Needle {
        Needle {
            text: text.into(),
            anchored,
            at_end: false,
            number: UNNUMBERED,
            guard: None,
        }
    }

    fn exact(pattern: &str) -> RegexPlan {
        let plan = RegexPlan::of(pattern);
        assert!(plan.is_exact(), "{pattern} should be exact: {plan:?}");
        plan
    }

    fn check(pattern: &str, yes: &[&str], no: &[&str]) {
        let plan = exact(pattern);
        for text in yes {
            assert_eq!(plan.answer(text), Some(true), "{pattern} on {text:?}");
        }
        for text in no {
            assert_eq!(plan.answer(text), Some(false), "{pattern} on {text:?}");
        }
    }

    #[test]
    fn literals_and_anchors() {
        check(
            "openai_agents",
            &["x.openai_agents.y"],
            &["openai-agents", ""],
        );
        check(r"^mlflow\.", &["mlflow.x"], &["xmlflow.", "mlflowx"]);
        // `$` is the end, or before a final newline.
        check(
            r"^agent$",
            &["agent", "agent\n"],
            &["agent\n\n", "agents", " agent", "agent\r"],
        );
        check(
            r"OutputParser$",
            &["StrOutputParser", "OutputParser\n"],
            &["OutputParserX"],
        );
        check("", &["", "x"], &[]);
        check("^$", &["", "\n"], &["x", "\n\n"]);
    }

    #[test]
    fn alternation_optional_groups_and_sets() {
        check(
            r"^invoke_agent( |$)",
            &["invoke_agent", "invoke_agent x", "invoke_agent\n"],
            &["invoke_agents", "xinvoke_agent"],
        );
        check(
            r"^ai\.(generateText|streamText)$",
            &["ai.streamText", "ai.generateText\n"],
            &["ai.streamText.doStream", "ai.embed"],
        );
        check(
            r"^openinference\.instrumentation\.crewai(\._event_listener)?$",
            &[
                "openinference.instrumentation.crewai",
                "openinference.instrumentation.crewai._event_listener",
            ],
            &["openinference.instrumentation.crewai._x"],
        );
        check(
            r#""langgraph_node": "agent"[,}]"#,
            &[
                r#"{"a": 1, "langgraph_node": "agent"}"#,
                r#""langgraph_node": "agent","#,
            ],
            &[
                r#""langgraph_node": "agent" "#,
                r#""langgraph_node": "agents""#,
            ],
        );
        check("[^a-c]x", &["dx", "\nx"], &["ax", "x"]);
        check(
            "^transfer_to_.",
            &["transfer_to_a", "transfer_to_é"],
            &["transfer_to_", "transfer_to_\n"],
        );
        // Overlapping occurrences of the leading literal: the match is at the second one.
        check("aab", &["aaab"], &["abab"]);
        check("é.b", &["ééxb"], &["éb"]);
        // An escaped `-` starts a range like any other character (Python: `-` to `a`); an
        // unescaped `-` after a range is itself.
        check(r"[\--a]x", &["5x", "-x", "ax", ".x"], &["bx", "x", ",x"]);
        check(r"[a-c-e]", &["-", "e", "b"], &["d", "f"]);
    }

    #[test]
    fn lookaheads() {
        check(
            r"^(?!agent$)",
            &["agents", "", "agent\n\n"],
            &["agent", "agent\n"],
        );
        check(r"^(?!Runnable)", &["Chain"], &["RunnableSequence"]);
        check(
            r"^invoke_agent (?!agent$)",
            &["invoke_agent Bob"],
            &["invoke_agent agent", "invoke_agent"],
        );
        check(r"a(?=b)", &["ab"], &["a", "ac"]);
    }

    #[test]
    fn filters_name_what_every_match_needs() {
        let plan = RegexPlan::of(r#""langgraph_node":\s*"agent""#);
        assert_eq!(
            plan.clauses(),
            &[
                vec![needle(r#""langgraph_node":"#, false)],
                vec![needle(r#""agent""#, false)]
            ]
        );
        assert_eq!(plan.answer(r#"{"langgraph_node": "tools"}"#), Some(false));
        assert_eq!(plan.answer(r#"{"langgraph_node":  "agent"}"#), None);
        let plan = RegexPlan::of(r"^autogen \w*Runtime$");
        let at_end = |text: &str| Needle {
            at_end: true,
            ..needle(text, false)
        };
        assert_eq!(
            plan.clauses(),
            &[vec![needle("autogen ", true)], vec![at_end("Runtime")]]
        );
        assert_eq!(plan.answer("x autogen Runtime"), Some(false));
        assert_eq!(plan.answer("autogen Runtimes"), Some(false));
        assert_eq!(plan.answer("autogen SingleRuntime\n"), None);
        // A literal before `$`: the text ends with it, or with it and one newline.
        let plan = RegexPlan::of(r"^\w+\.a?call$");
        assert_eq!(
            plan.clauses(),
            &[vec![needle(".", false)], vec![at_end("call")]]
        );
        assert_eq!(plan.answer("llm.callback"), Some(false));
        assert_eq!(plan.answer("llm.call\n\n"), Some(false));
        assert_eq!(plan.answer("llm.acall\n"), None);
        assert_eq!(plan.answer("x.call"), None);
        // Both ends: the literal of `^...$` around an opaque part.
        let plan = RegexPlan::of(r"^ab$\w*");
        assert_eq!(
            plan.clauses(),
            &[vec![Needle {
                anchored: true,
                ..at_end("ab")
            }]]
        );
        assert_eq!(plan.answer("abx"), Some(false));
        assert_eq!(plan.answer("xab"), Some(false));
        assert_eq!(plan.answer("ab\n"), None);
        let plan = RegexPlan::of(r"(ab|c\d)+x\w");
        assert_eq!(
            plan.clauses(),
            &[
                vec![needle("ab", false), needle("c", false)],
                vec![needle("x", false)]
            ]
        );
        // A branch with nothing certain: the alternation contributes nothing.
        let plan = RegexPlan::of(r#"\[\[ ## next_tool_name ## \]\](\\n|\s)*finish(\\n|\s|")"#);
        assert_eq!(
            plan.clauses(),
            &[
                vec![needle("[[ ## next_tool_name ## ]]", false)],
                vec![needle("finish", false)]
            ]
        );
        // Optional and starred parts, lookarounds contribute nothing.
        assert_eq!(
            RegexPlan::of(r"(abc)*\d(?<=x)y?").clauses(),
            &[] as &[Clause]
        );
    }

    /// The plans of the DSPy ReAct rules (two search for the same header) and two more.
    fn react_plans() -> Vec<RegexPlan> {
        let mut plans: Vec<RegexPlan> = [
            r#"\[\[ ## next_tool_name ## \]\](\\n|\s)*finish(\\n|\s|")"#,
            r"\[\[ ## next_tool_name ## \]\]",
            r"\[\[ ## completed ## \]\]",
            r"^finish\w",
            r"\wcall$",
        ]
        .iter()
        .map(|pattern| RegexPlan::of(pattern))
        .collect();
        number_literals(&mut plans);
        plans
    }

    #[test]
    fn a_literal_is_numbered_alike_in_every_plan_that_searches_for_it() {
        let plans = react_plans();
        let RegexPlan::Filter(finish) = &plans[0] else {
            panic!("not a filter: {:?}", plans[0]);
        };
        let RegexPlan::Exact(step) = &plans[1] else {
            panic!("not exact: {:?}", plans[1]);
        };
        let RegexPlan::Exact(completed) = &plans[2] else {
            panic!("not exact: {:?}", plans[2]);
        };
        // The header is in both plans: numbered first, alike.
        assert_eq!(finish[0][0].number, 0);
        assert_eq!(step[0].number, 0);
        assert_eq!(finish[1][0].number, 1);
        assert_eq!(completed[0].number, 2);
        // An anchored needle or lead, or one at the end, is never searched for.
        let RegexPlan::Filter(anchored) = &plans[3] else {
            panic!("not a filter: {:?}", plans[3]);
        };
        assert_eq!(anchored[0][0].number, UNNUMBERED);
        let RegexPlan::Filter(at_end) = &plans[4] else {
            panic!("not a filter: {:?}", plans[4]);
        };
        assert!(at_end.iter().flatten().all(|n| n.number == UNNUMBERED));
    }

    #[test]
    fn literals_with_a_shared_start_are_guarded_by_it() {
        let plans = react_plans();
        let guard = |plan: &RegexPlan| match plan {
            RegexPlan::Exact(alts) => alts[0].guard.clone(),
            RegexPlan::Filter(clauses) => clauses[0][0].guard.clone(),
        };
        let shared = Some(Guard {
            text: "[[ ## ".into(),
            number: 0,
        });
        for plan in &plans[..3] {
            assert_eq!(guard(plan), shared, "{plan:?}");
        }
        // `finish` shares no start with another literal; anchored ones are not searched.
        let RegexPlan::Filter(finish) = &plans[0] else {
            panic!("not a filter: {:?}", plans[0]);
        };
        assert_eq!(finish[1][0].guard, None);
        assert_eq!(guard(&plans[3]), None);
        // A text without the shared start: one search (the guard's) answers all three.
        let mut noted = Noted::default();
        for plan in &plans[..3] {
            assert_eq!(
                plan.answer_noted("[[ # no header ## ]]", &mut noted),
                Some(false)
            );
        }
        assert_eq!((noted.guards_searched, noted.guards_held), (1, 0));
        assert_eq!((noted.searched, noted.held), (0, 0));
        // Guarded answers are those of plans that share nothing, on texts with and without
        // the start, a literal, or a literal split across it.
        let alone: Vec<RegexPlan> = [
            r#"\[\[ ## next_tool_name ## \]\](\\n|\s)*finish(\\n|\s|")"#,
            r"\[\[ ## next_tool_name ## \]\]",
            r"\[\[ ## completed ## \]\]",
        ]
        .iter()
        .map(|pattern| RegexPlan::of(pattern))
        .collect();
        let texts = [
            "",
            "[[ ## ",
            "[[ ## next_tool_name",
            "[[ ## completed ## ]][[ ## next_tool_name ## ]] finish ",
            "x[[ ## y [[ ## completed ## ]]",
            "[[ #  [[ ## next_tool_name ## ]]\nfinish\n",
        ];
        for text in texts {
            let mut noted = Noted::default();
            for (plan, alone) in plans.iter().zip(&alone) {
                assert_eq!(
                    plan.answer_noted(text, &mut noted),
                    alone.answer(text),
                    "{text:?}"
                );
            }
        }
    }

    #[test]
    fn what_a_text_was_found_to_lack_answers_the_next_plan() {
        let plans = react_plans();
        let header = "[[ ## next_tool_name ## ]]\nsearch";
        // Notes taken on a text without the header say so to the exact plan, which then
        // does not search (here a text that has it: notes belong to one text).
        let mut noted = Noted::default();
        assert_eq!(plans[0].answer_noted("no header", &mut noted), Some(false));
        assert_eq!(plans[1].answer(header), Some(true));
        assert_eq!(plans[1].answer_noted(header, &mut noted), Some(false));
        // What a text holds only lets the search through: the filter still needs `finish`.
        let mut noted = Noted::default();
        assert_eq!(plans[1].answer_noted(header, &mut noted), Some(true));
        assert_eq!(plans[0].answer_noted(header, &mut noted), Some(false));
        let finish = "[[ ## next_tool_name ## ]]\nfinish\n";
        let mut noted = Noted::default();
        assert_eq!(plans[1].answer_noted(finish, &mut noted), Some(true));
        assert_eq!(plans[0].answer_noted(finish, &mut noted), None);
    }

    #[test]
    fn noted_answers_are_the_plans_own() {
        let plans = react_plans();
        let texts = [
            "",
            "plain reply",
            "[[ ## next_tool_name ## ]]\nfinish\n",
            "[[ ## next_tool_name ## ]] search",
            "[[ ## next_tool_name ## ]]\\nfinish\"",
            "finish[[ ## completed ## ]]",
            "[[ ## completed ## ]]",
            "finishx [[ ## next_tool_name ## ]] stop",
            "[[ ## next_tool_name ## ]",
        ];
        for text in texts {
            let alone: Vec<_> = plans.iter().map(|plan| plan.answer(text)).collect();
            // Every order of the first three (the literals they share), the rest after.
            for order in [[0, 1, 2], [1, 0, 2], [2, 1, 0], [1, 2, 0]] {
                let mut noted = Noted::default();
                for index in order.into_iter().chain(3..plans.len()) {
                    let answer = plans[index].answer_noted(text, &mut noted);
                    assert_eq!(answer, alone[index], "{text:?} plan {index}");
                    // Asked again with the notes complete.
                    assert_eq!(plans[index].answer_noted(text, &mut noted), answer);
                }
            }
        }
    }

    #[test]
    fn literals_past_the_numbered_ones_are_searched_each_time() {
        let mut plans: Vec<RegexPlan> = (0..NUMBERED + 6)
            .map(|n| RegexPlan::of(&format!("lit{n:03}x")))
            .collect();
        // One literal in two plans: numbered first though it comes last.
        plans.push(RegexPlan::of("lit069x"));
        number_literals(&mut plans);
        let number = |plan: &RegexPlan| match plan {
            RegexPlan::Exact(alts) => alts[0].number,
            RegexPlan::Filter(_) => panic!("not exact: {plan:?}"),
        };
        assert_eq!(number(&plans[NUMBERED + 6]), 0);
        assert_eq!(number(&plans[69]), 0);
        let unnumbered = plans.iter().filter(|p| number(p) == UNNUMBERED).count();
        assert_eq!(unnumbered, 6);
        let text = "lit000x lit068x lit069x";
        let mut noted = Noted::default();
        for plan in &plans {
            assert_eq!(plan.answer_noted(text, &mut noted), plan.answer(text));
        }
    }

    #[test]
    fn what_is_not_modelled_gets_no_plan() {
        for pattern in [
            "(?i)^chat",
            "(?x)a b",
            "a{2}",
            "a{,}",
            r"\x41",
            r"\1",
            r"(a)\1",
            "(?P=n)",
            "[[:alpha:]]",
            "[a&&b]",
            "[a--b]",
            r"[\w]",
            "[]a]",
            "(?#c)a",
            "(?(1)a|b)",
            "a)",
            "(a",
            "*a",
            "a**",
            "^*",
            r"\p{L}",
            r"\N{DIGIT ONE}",
            r"\Aa",
            r"a\Z",
            "a}",
        ] {
            assert_eq!(RegexPlan::of(pattern), RegexPlan::host(), "{pattern}");
        }
        let deep = format!(
            "{}a{}",
            "(".repeat(MAX_DEPTH + 1),
            ")".repeat(MAX_DEPTH + 1)
        );
        assert_eq!(RegexPlan::of(&deep), RegexPlan::host());
        assert_eq!(
            RegexPlan::of(&"a".repeat(MAX_PATTERN + 1)),
            RegexPlan::host()
        );
    }

    #[test]
    fn class_escapes_in_sets_and_dotall() {
        // A set holding a class escape is read to its `]` and is opaque.
        assert_eq!(
            RegexPlan::of(r"[\w.]+@[\d-]+x").clauses(),
            &[vec![needle("@", false)], vec![needle("x", false)]]
        );
        assert_eq!(
            RegexPlan::of(r"[\]\s]ab").clauses(),
            &[vec![needle("ab", false)]]
        );
        // A class escape starting a range is refused, as an escape of a letter ending one.
        for pattern in [r"[\w-z]x", r"[a-\w]x", r"[\s-\d]x", r"[\w"] {
            assert_eq!(RegexPlan::of(pattern), RegexPlan::host(), "{pattern}");
        }
        assert!(!RegexPlan::of(r"[\w-]x").clauses().is_empty());
        // `(?s)`: `.` takes `\n` too; the rule table's plans take no flag.
        assert_eq!(RegexPlan::of("(?s)a.b"), RegexPlan::host());
        matches(
            "(?s)a.b",
            &["a\nb", "axb", "a\u{e9}b"],
            &["ab", "a\n\nb"],
            &[],
        );
        matches("a.b", &["axb"], &["a\nb"], &[]);
        matches("(?si)a.b", &[], &["b", "xa\nb"], &["A\nB", "a\u{e9}b"]);
        matches("(?i)(?s)x", &[], &["y", "\nx"], &["X", "x"]);
        let pydantic = r"(?s)^.*\n\nFix the errors and try again\.|^Unknown tool name: '";
        matches(
            pydantic,
            &[],
            &[
                "anything",
                "Fix the errors and try again.",
                "x Unknown tool name: 'y'",
            ],
            &[
                "bad\n\nFix the errors and try again.",
                "Unknown tool name: 'y'",
            ],
        );
        // Other flags, or a flag group that is no flag group, leave the pattern to the engine.
        for pattern in ["(?m)^x", "(?x)a b", "(?)x", "(?s:a.b)", "(?is-x)a"] {
            assert!(MatchPlan::of(pattern).is_host(), "{pattern}");
        }
    }

    #[test]
    fn exact_plans_are_bounded() {
        // 2^6 alternatives: past the cap, a filter instead.
        let plan = RegexPlan::of("a?b?c?d?e?f?gh");
        assert_eq!(plan.clauses(), &[vec![needle("gh", false)]]);
        assert!(!RegexPlan::of(&"x".repeat(MAX_EXACT_SIZE + 1)).is_exact());
        // Linear on long texts: a lead that occurs everywhere, a rest that fails late.
        let plan = exact("aaaaaaaaaaaaaaaa.b");
        let text = "a".repeat(200_000);
        assert_eq!(plan.answer(&text), Some(false));
    }

    fn matches(pattern: &str, yes: &[&str], no: &[&str], asked: &[&str]) {
        let plan = MatchPlan::of(pattern);
        for text in yes {
            assert_eq!(plan.answer(text), Some(true), "{pattern} on {text:?}");
        }
        for text in no {
            assert_eq!(plan.answer(text), Some(false), "{pattern} on {text:?}");
        }
        for text in asked {
            assert_eq!(plan.answer(text), None, "{pattern} on {text:?}");
        }
    }

    #[test]
    fn a_match_is_anchored_at_the_start() {
        // Exact: the pattern as `^(?:pattern)`.
        matches(
            "Tool not found$|Error",
            &["Tool not found", "Tool not found\n", "Errors"],
            &["x Tool not found", "An Error"],
            &[],
        );
        matches(
            "^Tool execution failed:",
            &["Tool execution failed: x"],
            &[" Tool execution failed:"],
            &[],
        );
        // A filter: texts that start with none of the leading literals are no match.
        matches(
            r"^Error executing tool\b|^Tool not found$",
            &[],
            &["Tool execution", "x Error executing tool"],
            &["Error executing tool x"],
        );
        matches(
            r"^Tool \S+ not found\.",
            &[],
            &["A Tool x not found."],
            &["Tool x not found."],
        );
    }

    #[test]
    fn leading_whitespace_and_ascii_case() {
        let denied = r"^\s*(?:Tool execution was not approved\.|(?:Error: )?Tool call invocation was rejected by user\.|tool cancelled by user\b)";
        matches(
            denied,
            &[],
            &[
                "Tool executed",
                "  \t Tool call rejected",
                "\x1cTool execution was not approved.",
                // After a whitespace the engine would decide, the literals every match needs.
                "\u{a0}anything",
            ],
            // `\s` takes U+00A0: the engine decides after it.
            &[
                " \nTool execution was not approved.",
                "Error: Tool call invocation was rejected by user.",
                "tool cancelled by user",
                "\u{a0}Tool execution was not approved.",
            ],
        );
        let empty =
            r"(?i)^\s*(?:no (?:results?|documents?)(?: found)?|nothing (?:was )?found|0 results)\b";
        matches(
            empty,
            &[],
            &[
                "Found 3 results",
                "  There were no results",
                "",
                "   ",
                "NOTHING",
            ],
            &[
                "No Results found",
                "\n nothing WAS found.",
                "0 results",
                "é",
                "ſ",
            ],
        );
        // Leads that tell nothing: the engine answers (or the plan without `(?i)`).
        assert!(MatchPlan::of(r"(?i)^\s*\w+").is_host());
        assert!(MatchPlan::of(r"(?i)^\s*(?:é|x)").is_host());
        assert!(MatchPlan::of(r"(?i)^\s*(?: x| )").is_host());
        // A class escape, inside a set or out, is opaque: the literals still filter.
        for error in [
            r"^\s*[\w.]*(?:Error|Exception)\b\s*:",
            r"^\s*[^\W\d]*(?:Error|Exception)\b\s*:",
        ] {
            matches(
                error,
                &[],
                &["KeyError", "Exception", "ok: fine", ""],
                &["KeyError: x", "x: an Exception"],
            );
        }
        matches(
            r"^\s*\w*(?:Error|Exception)\b\s*:",
            &[],
            &["KeyError"],
            &["KeyError: x"],
        );
    }
}
