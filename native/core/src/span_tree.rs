//! One trace's spans into a tree (`otel_oracles.assemble.build_trace`): children by parent,
//! roots, orphans, and every span once in start order.
//!
//! The builder never looks inside a span beyond what ordering needs: callers hand it each
//! span's id, parent id, whether the parent is remote, start and end times and scope name,
//! in arrival order, and get positions back. The Python binding reads those from records
//! (offline, a released trace's records as they are built; online and for joined runs,
//! records built elsewhere), so one tree builder serves every caller.
//!
//! - `children[parent]` lists a span's children by start time, ties in arrival order within
//!   one instrumentation scope and by end time across scopes ([`order_ties`]).
//! - `roots`: spans without a parent id or whose missing parent is another process's
//!   (`parent_is_remote`), then orphans (parent id names no span here, and nothing says it
//!   is remote), then spans caught in a parent cycle (each treated as an orphan so nothing
//!   is lost), each group by start time.
//! - `ordered`: every span once, by start time, ties in tree order (parent before child,
//!   siblings in `children` order).
//! - A span id seen twice keeps its first record (exporters retry whole batches).

use crate::hashing::{FastMap, FastMapExt, FastSet};
use std::hash::Hash;

/// What the tree builder reads of one span. `parent` is `None` for an empty parent id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeSpan<K> {
    pub id: K,
    pub parent: Option<K>,
    pub parent_is_remote: bool,
    pub start: i128,
    pub end: i128,
    pub scope: K,
}

/// The tree over positions in the spans given (only the first span of each id is used).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tree {
    /// Every kept span once, by start time, ties in tree order.
    pub ordered: Vec<usize>,
    /// Top spans, then orphans (`orphans` is the tail of `roots`).
    pub roots: Vec<usize>,
    /// How many of `roots` are orphans (at its end).
    pub orphans: usize,
    /// (parent, its children in order), parents in the order they first got a child (the
    /// order of the Python `children` dict).
    pub children: Vec<(usize, Vec<usize>)>,
}

/// A span without an end (or one ending before its start) ends after every other.
const UNENDED: i128 = 1 << 64;

fn end_of<K>(span: &TreeSpan<K>) -> i128 {
    if span.end != 0 && span.end >= span.start {
        span.end
    } else {
        UNENDED
    }
}

/// Build the tree of `spans` (arrival order). Never fails: broken trees (missing parents,
/// cycles, repeated ids) keep every span.
pub fn build<K: Eq + Hash>(spans: &[TreeSpan<K>]) -> Tree {
    // The first record of each id, in arrival order.
    let mut by_id: FastMap<&K, usize> = FastMap::with_capacity(spans.len());
    let mut unique: Vec<usize> = Vec::with_capacity(spans.len());
    for (index, span) in spans.iter().enumerate() {
        if let std::collections::hash_map::Entry::Vacant(slot) = by_id.entry(&span.id) {
            slot.insert(index);
            unique.push(index);
        }
    }

    // Children per parent position, parents in first-child order.
    let mut slot_of: FastMap<usize, usize> = FastMap::new();
    let mut children: Vec<(usize, Vec<usize>)> = Vec::new();
    let mut top: Vec<usize> = Vec::new();
    let mut orphans: Vec<usize> = Vec::new();
    for &index in &unique {
        let span = &spans[index];
        match &span.parent {
            None => top.push(index),
            Some(parent) => {
                let is_self = *parent == span.id;
                match by_id.get(parent) {
                    Some(&parent_index) if !is_self => {
                        let slot = *slot_of.entry(parent_index).or_insert_with(|| {
                            children.push((parent_index, Vec::new()));
                            children.len() - 1
                        });
                        children[slot].1.push(index);
                    }
                    _ if span.parent_is_remote && !is_self => top.push(index),
                    _ => orphans.push(index),
                }
            }
        }
    }
    let start = |index: &usize| spans[*index].start;
    for (_, kids) in &mut children {
        if kids.len() > 1 {
            kids.sort_by_key(start); // stable: ties keep arrival order
            order_ties(spans, kids);
        }
    }
    top.sort_by_key(start);
    orphans.sort_by_key(start);

    let kids_of = |index: usize| -> &[usize] {
        slot_of
            .get(&index)
            .map_or(&[][..], |slot| children[*slot].1.as_slice())
    };
    let mut ordered: Vec<usize> = Vec::with_capacity(unique.len());
    walk(&top, &kids_of, &mut ordered, None);
    walk(&orphans, &kids_of, &mut ordered, None);
    if ordered.len() < unique.len() {
        // Only spans on a parent cycle are unreachable from a root or an orphan; keep them,
        // each cycle entered at its earliest span, as orphans.
        let mut reached: FastSet<usize> = ordered.iter().copied().collect();
        let mut by_start = unique.clone();
        by_start.sort_by_key(start);
        for index in by_start {
            if !reached.contains(&index) {
                orphans.push(index);
                walk(&[index], &kids_of, &mut ordered, Some(&mut reached));
            }
        }
    }
    ordered.sort_by_key(start); // stable: ties keep tree order

    let orphan_count = orphans.len();
    let mut roots = top;
    roots.extend(orphans);
    Tree {
        ordered,
        roots,
        orphans: orphan_count,
        children,
    }
}

/// Pre-order depth-first walk, iterative (agent traces can nest deeply). Without parent
/// cycles every span is reached once; `stop` guards the walk into a cycle.
fn walk<'a>(
    starts: &[usize],
    kids_of: &impl Fn(usize) -> &'a [usize],
    out: &mut Vec<usize>,
    mut stop: Option<&mut FastSet<usize>>,
) {
    let mut stack: Vec<usize> = starts.iter().rev().copied().collect();
    while let Some(index) = stack.pop() {
        if let Some(stop) = stop.as_deref_mut() {
            if !stop.insert(index) {
                continue;
            }
        }
        out.push(index);
        stack.extend(kids_of(index).iter().rev());
    }
}

/// Reorder, in place, siblings sorted by start time whose start times are equal.
///
/// OpenTelemetry's JavaScript SDKs keep a span's start time to the millisecond, so a tool
/// span and the model call the loop makes right after it often start at the same time. An
/// exporter sends spans as they end, but OTLP groups each batch by instrumentation scope
/// (every model call of one scope, then every tool of another), so arrival order is the
/// order the spans ended within one scope only. Ties are therefore merged: each scope's
/// spans keep their arrival order, and between scopes the span that ended first goes first
/// (of two siblings that ran one after the other, the first ended before the second
/// started). Siblings that really ran at once have no order to keep; a span with no end
/// (or one before its start) ends last.
fn order_ties<K: Eq>(spans: &[TreeSpan<K>], kids: &mut [usize]) {
    let mut i = 0;
    while i < kids.len() {
        let mut j = i + 1;
        while j < kids.len() && spans[kids[j]].start == spans[kids[i]].start {
            j += 1;
        }
        if j - i > 1 {
            merge_by_scope(spans, &mut kids[i..j]);
        }
        i = j;
    }
}

/// `tied` (equal start times, in arrival order) merged per [`order_ties`].
fn merge_by_scope<K: Eq>(spans: &[TreeSpan<K>], tied: &mut [usize]) {
    // Queues per scope, in the order each scope first appears.
    let mut queues: Vec<(&K, Vec<usize>)> = Vec::new();
    for &index in tied.iter() {
        let scope = &spans[index].scope;
        match queues.iter_mut().find(|(s, _)| *s == scope) {
            Some((_, queue)) => queue.push(index),
            None => queues.push((scope, vec![index])),
        }
    }
    if queues.len() == 1 {
        return;
    }
    let mut heads: Vec<std::collections::VecDeque<usize>> =
        queues.into_iter().map(|(_, q)| q.into()).collect();
    let mut out = Vec::with_capacity(tied.len());
    while !heads.is_empty() {
        let mut best = 0;
        for q in 1..heads.len() {
            if end_of(&spans[heads[q][0]]) < end_of(&spans[heads[best][0]]) {
                best = q; // strictly earlier: the first queue wins ties
            }
        }
        if let Some(index) = heads[best].pop_front() {
            out.push(index);
        }
        if heads[best].is_empty() {
            heads.remove(best);
        }
    }
    tied.copy_from_slice(&out);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(id: &'static str, parent: &'static str, start: i128) -> TreeSpan<&'static str> {
        TreeSpan {
            id,
            parent: (!parent.is_empty()).then_some(parent),
            parent_is_remote: false,
            start,
            end: start + 10,
            scope: "s",
        }
    }

    fn ids(spans: &[TreeSpan<&'static str>], positions: &[usize]) -> Vec<&'static str> {
        positions.iter().map(|&p| spans[p].id).collect()
    }

    #[test]
    fn children_roots_and_start_order() {
        let spans = [
            span("c2", "r", 30),
            span("c1", "r", 20),
            span("r", "", 10),
            span("g", "c1", 25),
        ];
        let tree = build(&spans);
        assert_eq!(ids(&spans, &tree.roots), ["r"]);
        assert_eq!(tree.orphans, 0);
        assert_eq!(ids(&spans, &tree.ordered), ["r", "c1", "g", "c2"]);
        let r_kids: Vec<_> = tree
            .children
            .iter()
            .find(|(p, _)| *p == 2)
            .unwrap()
            .1
            .clone();
        assert_eq!(ids(&spans, &r_kids), ["c1", "c2"]);
        // Parents listed in the order they first got a child.
        assert_eq!(
            tree.children
                .iter()
                .map(|(p, _)| spans[*p].id)
                .collect::<Vec<_>>(),
            ["r", "c1"]
        );
    }

    #[test]
    fn missing_parent_is_an_orphan_unless_remote() {
        let mut remote = span("b", "gone", 5);
        remote.parent_is_remote = true;
        let spans = [span("a", "lost", 1), remote, span("r", "", 3)];
        let tree = build(&spans);
        assert_eq!(ids(&spans, &tree.roots), ["r", "b", "a"]);
        assert_eq!(tree.orphans, 1);
    }

    #[test]
    fn self_parent_is_an_orphan_even_when_remote() {
        let mut own = span("a", "a", 1);
        own.parent_is_remote = true;
        let spans = [own];
        let tree = build(&spans);
        assert_eq!(ids(&spans, &tree.roots), ["a"]);
        assert_eq!(tree.orphans, 1);
        assert!(tree.children.is_empty());
    }

    #[test]
    fn repeated_id_keeps_the_first_record() {
        let spans = [span("r", "", 1), span("r", "", 0), span("c", "r", 2)];
        let tree = build(&spans);
        assert_eq!(tree.ordered, [0, 2]);
        assert_eq!(tree.roots, [0]);
    }

    #[test]
    fn cycle_members_are_kept_as_orphans_entered_at_the_earliest() {
        let spans = [span("x", "y", 7), span("y", "x", 3), span("r", "", 1)];
        let tree = build(&spans);
        assert_eq!(ids(&spans, &tree.roots), ["r", "y"]);
        assert_eq!(tree.orphans, 1);
        assert_eq!(ids(&spans, &tree.ordered), ["r", "y", "x"]);
    }

    #[test]
    fn equal_starts_merge_scopes_by_end_keeping_arrival_within_a_scope() {
        let mut a = span("a", "r", 5); // scope m, ends 40
        a.scope = "m";
        a.end = 40;
        let mut b = span("b", "r", 5); // scope m, ends 20 (after a in arrival)
        b.scope = "m";
        b.end = 20;
        let mut t = span("t", "r", 5); // scope t, ends 30
        t.scope = "t";
        t.end = 30;
        let mut u = span("u", "r", 5); // scope t, no end: last
        u.scope = "t";
        u.end = 0;
        let spans = [span("r", "", 0), a, b, t, u];
        let tree = build(&spans);
        let kids = &tree.children[0].1;
        // Heads a (40) and t (30): t first; then a (40) against u (unended): a, b, u.
        assert_eq!(ids(&spans, kids), ["t", "a", "b", "u"]);
    }

    #[test]
    fn equal_ends_keep_the_first_scope() {
        let mut a = span("a", "r", 5);
        a.scope = "m";
        let mut t = span("t", "r", 5);
        t.scope = "t";
        let spans = [span("r", "", 0), t, a];
        let tree = build(&spans);
        assert_eq!(ids(&spans, &tree.children[0].1), ["t", "a"]);
    }

    #[test]
    fn deep_chains_do_not_recurse() {
        let names: Vec<String> = (0..100_000).map(|i| format!("s{i}")).collect();
        let spans: Vec<TreeSpan<&str>> = names
            .iter()
            .enumerate()
            .map(|(i, id)| TreeSpan {
                id: id.as_str(),
                parent: (i > 0).then(|| names[i - 1].as_str()),
                parent_is_remote: false,
                start: i as i128,
                end: 0,
                scope: "s",
            })
            .collect();
        let tree = build(&spans);
        assert_eq!(tree.ordered.len(), 100_000);
        assert_eq!(tree.roots, [0]);
    }
}
