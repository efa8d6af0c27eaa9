//! `tool_sequence`'s alignment of a contract's expected calls with a trace's calls, and the
//! verdict read from it (`otel_oracles.grade.oracles.trace_tools`).
//!
//! Which call matches which expected item (by name, and by arguments) is decided by the
//! caller ([`Cell`]s, row by row: item `i`'s cells for calls `0..m`); this module finds the
//! pairs kept and the diff's order. The ordered modes (`exact`, `in_order`) align with a
//! weighted longest common subsequence: a full match weighs `n + m + 1` (more than every
//! name-only match together), a name-only match 1, and a pair that does not match is never
//! taken. The unordered modes take an optimal assignment made by the caller
//! ([`unordered`] lists its pairs, the items and calls left over, in step order).
//!
//! Bounds: the ordered alignment takes time proportional to `n * m` (expected items times
//! calls) and keeps 2 bits a cell (which way the best alignment goes) plus two rows of
//! `m + 1` running weights: about `n * m / 4` bytes besides the `n * m` cells the caller
//! hands in. The weights fit in a `u64` (at most `n * (n + m + 1)`).

/// How a call matches an expected item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cell {
    /// The call is not of the item's tool.
    No,
    /// The call is of the item's tool, its arguments are not what the item asks.
    Name,
    /// Name and arguments match.
    Full,
}

/// One entry of a sequence's diff.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// Item `item` paired with call `call` (`full`: arguments too, else name only: an
    /// `args_mismatch`).
    Paired {
        item: usize,
        call: usize,
        full: bool,
    },
    /// Item `item` not called.
    Missing(usize),
    /// Call `call` not expected.
    Unexpected(usize),
}

/// A sequence check's mode (`ToolSequenceParams.mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Exact,
    InOrder,
    AnyOrder,
    Subset,
    Superset,
}

/// How many entries of each op a diff has.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub matched: usize,
    pub args_mismatch: usize,
    pub missing: usize,
    pub unexpected: usize,
}

impl Entry {
    /// The entry's op as the check's details name it.
    pub fn op(&self) -> &'static str {
        match self {
            Entry::Paired { full: true, .. } => "match",
            Entry::Paired { full: false, .. } => "args_mismatch",
            Entry::Missing(_) => "missing",
            Entry::Unexpected(_) => "unexpected",
        }
    }
}

impl Counts {
    /// The counts of `diff`'s ops.
    pub fn of(diff: &[Entry]) -> Counts {
        let mut counts = Counts::default();
        for entry in diff {
            match entry {
                Entry::Paired { full: true, .. } => counts.matched += 1,
                Entry::Paired { full: false, .. } => counts.args_mismatch += 1,
                Entry::Missing(_) => counts.missing += 1,
                Entry::Unexpected(_) => counts.unexpected += 1,
            }
        }
        counts
    }
}

impl Mode {
    /// The mode named `name`, if any.
    pub fn named(name: &str) -> Option<Mode> {
        Some(match name {
            "exact" => Mode::Exact,
            "in_order" => Mode::InOrder,
            "any_order" => Mode::AnyOrder,
            "subset" => Mode::Subset,
            "superset" => Mode::Superset,
            _ => return None,
        })
    }

    /// Whether the mode keeps the calls' order (aligned by [`align_ordered`]).
    pub fn ordered(self) -> bool {
        matches!(self, Mode::Exact | Mode::InOrder)
    }

    /// Whether an entry of `entry`'s op breaks a sequence of this mode: `exact` and
    /// `any_order` allow only matches; `in_order` and `superset` allow calls not expected;
    /// `subset` allows expected calls not made.
    pub fn breaks(self, entry: &Entry) -> bool {
        match entry {
            Entry::Paired { full: true, .. } => false,
            Entry::Paired { full: false, .. } => true,
            Entry::Missing(_) => !matches!(self, Mode::Subset),
            Entry::Unexpected(_) => matches!(self, Mode::Exact | Mode::AnyOrder | Mode::Subset),
        }
    }

    /// Whether the sequence holds: no entry breaks it.
    pub fn holds(self, diff: &[Entry]) -> bool {
        !diff.iter().any(|e| self.breaks(e))
    }
}

/// Which way the best alignment of items `i..` with calls `j..` goes from `(i, j)`, in the
/// order it is preferred: pair them, leave the item out, leave the call out.
const PAIR: u8 = 0;
const SKIP_ITEM: u8 = 1;
const SKIP_CALL: u8 = 2;

/// Order-preserving alignment of `n` items with `m` calls (`cells[i * m + j]`: how call `j`
/// matches item `i`), maximizing full matches first, then name-only matches; ties go to a
/// pair, then to leaving the item out (listed as missing before the calls after it). Every
/// item and call is in the diff once, in order.
///
/// # Panics
/// When `cells` is not `n * m` long.
pub fn align_ordered(cells: &[Cell], n: usize, m: usize) -> Vec<Entry> {
    assert_eq!(cells.len(), n * m, "cells must be n * m");
    let big = (n + m + 1) as u64;
    let weight = |cell: Cell| match cell {
        Cell::No => 0,
        Cell::Name => 1,
        Cell::Full => big,
    };
    // `below[j]`: the best weight aligning items i + 1.. with calls j.. (row n: 0); `row`
    // the same for items i.., made right to left. The way taken at each cell is kept in two
    // bits, the weights only for the row below.
    let mut below = vec![0u64; m + 1];
    let mut row = vec![0u64; m + 1];
    let mut ways = vec![0u8; (n * m).div_ceil(4)];
    for i in (0..n).rev() {
        row[m] = 0;
        for j in (0..m).rev() {
            let w = weight(cells[i * m + j]);
            let skip_item = below[j];
            let skip_call = row[j + 1];
            let mut value = skip_item.max(skip_call);
            if w > 0 {
                value = value.max(below[j + 1] + w);
            }
            row[j] = value;
            let way = if w > 0 && value == below[j + 1] + w {
                PAIR
            } else if value == skip_item {
                SKIP_ITEM
            } else {
                SKIP_CALL
            };
            let at = i * m + j;
            ways[at / 4] |= way << (2 * (at % 4));
        }
        std::mem::swap(&mut below, &mut row);
    }
    let mut out = Vec::with_capacity(n + m);
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        let at = i * m + j;
        match (ways[at / 4] >> (2 * (at % 4))) & 3 {
            PAIR => {
                out.push(Entry::Paired {
                    item: i,
                    call: j,
                    full: cells[at] == Cell::Full,
                });
                i += 1;
                j += 1;
            }
            SKIP_ITEM => {
                out.push(Entry::Missing(i));
                i += 1;
            }
            _ => {
                out.push(Entry::Unexpected(j));
                j += 1;
            }
        }
    }
    out.extend((i..n).map(Entry::Missing));
    out.extend((j..m).map(Entry::Unexpected));
    out
}

/// The diff of an unordered sequence from an assignment's `pairs` (item, call): the pairs
/// that match (by name at least), then the items and the calls no such pair holds, listed
/// by their call's step (`steps[j]`: call `j`'s step index; an item without a call after
/// every call), then by item, ties kept in that order; with no items or no calls, the
/// items, then the calls, in their own order.
///
/// # Panics
/// When `cells` is not `n * m` long, `steps` not `m` long, or a pair is out of range.
pub fn unordered(
    cells: &[Cell],
    n: usize,
    m: usize,
    pairs: &[(usize, usize)],
    steps: &[i64],
) -> Vec<Entry> {
    assert_eq!(cells.len(), n * m, "cells must be n * m");
    assert_eq!(steps.len(), m, "one step index per call");
    let mut used_items = vec![false; n];
    let mut used_calls = vec![false; m];
    let mut out = Vec::with_capacity(n + m);
    for &(i, j) in pairs {
        let cell = cells[i * m + j];
        if cell == Cell::No {
            continue;
        }
        used_items[i] = true;
        used_calls[j] = true;
        out.push(Entry::Paired {
            item: i,
            call: j,
            full: cell == Cell::Full,
        });
    }
    out.extend((0..n).filter(|&i| !used_items[i]).map(Entry::Missing));
    out.extend((0..m).filter(|&j| !used_calls[j]).map(Entry::Unexpected));
    if n == 0 || m == 0 {
        return out; // nothing to pair: the items, then the calls, as given
    }
    out.sort_by_key(|e| match *e {
        Entry::Paired { item, call, .. } => (steps[call], item),
        Entry::Missing(item) => (1_000_000_000, item),
        Entry::Unexpected(call) => (steps[call], 0),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use Cell::{Full, Name, No};

    fn ops(diff: &[Entry]) -> Vec<&'static str> {
        diff.iter().map(Entry::op).collect()
    }

    #[test]
    fn empty_sides() {
        assert!(align_ordered(&[], 0, 0).is_empty());
        assert_eq!(
            align_ordered(&[], 2, 0),
            vec![Entry::Missing(0), Entry::Missing(1)]
        );
        assert_eq!(
            align_ordered(&[], 0, 2),
            vec![Entry::Unexpected(0), Entry::Unexpected(1)]
        );
        assert_eq!(unordered(&[], 0, 0, &[], &[]), vec![]);
    }

    #[test]
    fn full_match_outweighs_every_name_match() {
        // item 0 matches calls 0..3 by name only and call 3 fully: the full match is kept,
        // though taking call 0 would leave calls 1.. to no one either way.
        let cells = [Name, Name, Name, Full];
        let diff = align_ordered(&cells, 1, 4);
        assert_eq!(
            ops(&diff),
            ["unexpected", "unexpected", "unexpected", "match"]
        );
        // two items, name-only matches beat none
        let cells = [Name, No, No, Name];
        assert_eq!(
            ops(&align_ordered(&cells, 2, 2)),
            ["args_mismatch", "args_mismatch"]
        );
    }

    #[test]
    fn repeated_tools_pair_in_order() {
        // items a, a; calls a, b, a
        let cells = [Full, No, Full, Full, No, Full];
        let diff = align_ordered(&cells, 2, 3);
        assert_eq!(
            diff,
            vec![
                Entry::Paired {
                    item: 0,
                    call: 0,
                    full: true
                },
                Entry::Unexpected(1),
                Entry::Paired {
                    item: 1,
                    call: 2,
                    full: true
                },
            ]
        );
    }

    #[test]
    fn out_of_order_keeps_the_longest_ordered_part() {
        // items a, b, c; calls c, a, b
        let cells = [No, Full, No, No, No, Full, Full, No, No];
        let diff = align_ordered(&cells, 3, 3);
        assert_eq!(
            diff,
            vec![
                Entry::Unexpected(0),
                Entry::Paired {
                    item: 0,
                    call: 1,
                    full: true
                },
                Entry::Paired {
                    item: 1,
                    call: 2,
                    full: true
                },
                Entry::Missing(2),
            ]
        );
        assert!(!Mode::Exact.holds(&diff));
        assert!(!Mode::InOrder.holds(&diff));
        assert!(!Mode::Subset.holds(&diff));
    }

    #[test]
    fn ties_prefer_missing_before_unexpected() {
        // item a, call b: nothing matches; the item is listed first
        assert_eq!(ops(&align_ordered(&[No], 1, 1)), ["missing", "unexpected"]);
    }

    #[test]
    fn modes_judge_ops() {
        let extra = [
            Entry::Paired {
                item: 0,
                call: 0,
                full: true,
            },
            Entry::Unexpected(1),
        ];
        assert!(Mode::InOrder.holds(&extra) && Mode::Superset.holds(&extra));
        assert!(!Mode::Exact.holds(&extra) && !Mode::AnyOrder.holds(&extra));
        assert!(!Mode::Subset.holds(&extra));
        let short = [
            Entry::Paired {
                item: 0,
                call: 0,
                full: true,
            },
            Entry::Missing(1),
        ];
        assert!(Mode::Subset.holds(&short) && !Mode::InOrder.holds(&short));
        let mismatch = [Entry::Paired {
            item: 0,
            call: 0,
            full: false,
        }];
        assert!([
            Mode::Exact,
            Mode::InOrder,
            Mode::AnyOrder,
            Mode::Subset,
            Mode::Superset
        ]
        .iter()
        .all(|m| !m.holds(&mismatch)));
        assert_eq!(Mode::named("any_order"), Some(Mode::AnyOrder));
        assert_eq!(Mode::named("sideways"), None);
        assert_eq!(
            Counts::of(&[extra[0], extra[1], short[1], mismatch[0]]),
            Counts {
                matched: 1,
                args_mismatch: 1,
                missing: 1,
                unexpected: 1
            }
        );
    }

    #[test]
    fn unordered_lists_by_step_then_item() {
        // items a, b; calls b (step 4), x (step 5), a (step 9); the assignment pairs
        // (0, 2), (1, 0) and (an unmatched pair) nothing else.
        let cells = [No, No, Full, Name, No, No];
        let diff = unordered(&cells, 2, 3, &[(0, 2), (1, 0)], &[4, 5, 9]);
        assert_eq!(
            diff,
            vec![
                Entry::Paired {
                    item: 1,
                    call: 0,
                    full: false
                },
                Entry::Unexpected(1),
                Entry::Paired {
                    item: 0,
                    call: 2,
                    full: true
                },
            ]
        );
        // a pair the assignment made without a match counts as no pair
        let diff = unordered(&[No], 1, 1, &[(0, 0)], &[3]);
        assert_eq!(diff, vec![Entry::Unexpected(0), Entry::Missing(0)]);
    }

    /// The alignment is the weighted LCS: checked against the plain recursion on every
    /// sequence of up to 4 items and 4 calls over cells drawn from a small generator.
    #[test]
    fn best_weight_matches_the_recursion() {
        fn best(cells: &[Cell], n: usize, m: usize, i: usize, j: usize) -> u64 {
            if i == n || j == m {
                return 0;
            }
            let big = (n + m + 1) as u64;
            let w = match cells[i * m + j] {
                No => 0,
                Name => 1,
                Full => big,
            };
            let mut v = best(cells, n, m, i + 1, j).max(best(cells, n, m, i, j + 1));
            if w > 0 {
                v = v.max(best(cells, n, m, i + 1, j + 1) + w);
            }
            v
        }
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for n in 0..5 {
            for m in 0..5 {
                for _ in 0..50 {
                    let cells: Vec<Cell> = (0..n * m)
                        .map(|_| {
                            seed ^= seed << 13;
                            seed ^= seed >> 7;
                            seed ^= seed << 17;
                            [No, No, Name, Full][(seed % 4) as usize]
                        })
                        .collect();
                    let diff = align_ordered(&cells, n, m);
                    let big = (n + m + 1) as u64;
                    let got: u64 = diff
                        .iter()
                        .map(|e| match e {
                            Entry::Paired { full: true, .. } => big,
                            Entry::Paired { full: false, .. } => 1,
                            _ => 0,
                        })
                        .sum();
                    assert_eq!(got, best(&cells, n, m, 0, 0));
                    // every item and call once, in order
                    let items: Vec<usize> = diff
                        .iter()
                        .filter_map(|e| match *e {
                            Entry::Paired { item, .. } | Entry::Missing(item) => Some(item),
                            Entry::Unexpected(_) => None,
                        })
                        .collect();
                    assert_eq!(items, (0..n).collect::<Vec<_>>());
                    let calls: Vec<usize> = diff
                        .iter()
                        .filter_map(|e| match *e {
                            Entry::Paired { call, .. } | Entry::Unexpected(call) => Some(call),
                            Entry::Missing(_) => None,
                        })
                        .collect();
                    assert_eq!(calls, (0..m).collect::<Vec<_>>());
                }
            }
        }
    }

    /// A long sequence stays linear in its cells: 20 items against 200,000 calls (4 million
    /// cells, 1 MB of ways) with every 10,000th call of an item's tool.
    #[test]
    fn huge_sequence() {
        let (n, m) = (20, 200_000);
        let mut cells = vec![No; n * m];
        for i in 0..n {
            cells[i * m + i * 10_000 + 5] = Full;
        }
        let diff = align_ordered(&cells, n, m);
        assert_eq!(diff.len(), m);
        assert_eq!(Counts::of(&diff).matched, n);
        assert!(Mode::InOrder.holds(&diff));
    }
}
