//! Log records attached to a trace's spans as events (`otel_oracles.assemble.build_trace`),
//! and the traces of a joined run merged into one (`merge_traces`).
//!
//! Attaching reads, of each log record, whether it names an event (`event_name`, or the
//! legacy `event.name` attribute, already resolved by the decoders), whether it belongs to
//! the trace, the span it links to and its time; of the trace, which span ids it holds and a
//! span's children with their times. Equality of two records' contents (body and
//! attributes) is the caller's to answer: hosts compare their own values.
//!
//! - A record that names no event, belongs to another trace or links to no span of this
//!   trace is unattached (counted).
//! - Else it is attached to the span it was emitted in ([`emitting_span`]): the linked span,
//!   or the one child of it (then grandchild ...) running at the record's time.
//! - A record equal to one already attached (same span, event name and time, and the caller
//!   says same content) is attached once: a retried export, or a file set holding both the
//!   raw bodies and the canonical JSON of one run, is one event.
//! - Per span, the attached records in arrival order ([`Attachment::per_span`], spans in the
//!   order they first got one); the host merges them with the span's own events by time
//!   ([`merge_by_time`]).

use std::hash::Hash;

use crate::hashing::{FastMap, FastMapExt};

/// What attaching reads of one log record: `K` names spans, `N` events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRef<K, N> {
    /// Whether it names an event (a non-empty event name).
    pub named: bool,
    /// Whether its trace id is the trace's.
    pub in_trace: bool,
    /// The span it links to.
    pub span: K,
    /// Its event name.
    pub event: N,
    /// Its time.
    pub time: i128,
}

/// A child span as [`emitting_span`] reads it: its id and its window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kid<K> {
    pub id: K,
    pub start: i128,
    pub end: i128,
}

/// Where the records went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment<K> {
    /// (span id, positions of the records attached to it in arrival order), spans in the
    /// order they first got a record.
    pub per_span: Vec<(K, Vec<usize>)>,
    /// Records attached nowhere.
    pub unattached: usize,
}

/// The span a log-based event was emitted in: `span`, or the one child of it (then
/// grandchild ...) that was running at `time` (`kids` lists a span's children).
///
/// Some instrumentations start their model-call span without making it current, so the
/// events they emit for that call carry the enclosing span's id (OpenLLMetry's Anthropic
/// events mode links every message event to the application span around the calls). A record
/// emitted while exactly one child was open belongs to that child; when none or several
/// children were open (concurrent calls) the link is kept as recorded. A child without an end
/// time (0) has no known window: it is open only at times between its start and 0.
pub fn emitting_span<K: Clone, E>(
    span: &K,
    time: i128,
    mut kids: impl FnMut(&K) -> Result<Vec<Kid<K>>, E>,
) -> Result<K, E> {
    let mut span = span.clone();
    loop {
        let mut open = kids(&span)?
            .into_iter()
            .filter(|kid| kid.start <= time && time <= kid.end);
        match (open.next(), open.next()) {
            (Some(only), None) => span = only.id,
            _ => return Ok(span),
        }
    }
}

/// Attach `logs` (arrival order) to the spans `has_span` knows, as the module says; `same(a,
/// b)` tells whether records `a` and `b` (positions in `logs`) carry the same body and
/// attributes, asked only of records of one span, event name and time.
pub fn attach<K: Clone + Eq + Hash, N: Clone + Eq + Hash, E>(
    logs: &[LogRef<K, N>],
    has_span: impl Fn(&K) -> bool,
    mut kids: impl FnMut(&K) -> Result<Vec<Kid<K>>, E>,
    mut same: impl FnMut(usize, usize) -> Result<bool, E>,
) -> Result<Attachment<K>, E> {
    let mut unattached = 0;
    let mut slot_of: FastMap<K, usize> = FastMap::new();
    let mut per_span: Vec<(K, Vec<usize>)> = Vec::new();
    let mut seen: FastMap<(K, N, i128), Vec<usize>> = FastMap::new();
    for (index, log) in logs.iter().enumerate() {
        if !(log.named && log.in_trace && has_span(&log.span)) {
            unattached += 1;
            continue;
        }
        let span = emitting_span(&log.span, log.time, &mut kids)?;
        let twins = seen
            .entry((span.clone(), log.event.clone(), log.time))
            .or_default();
        let mut repeated = false;
        for &twin in twins.iter() {
            if same(index, twin)? {
                repeated = true;
                break;
            }
        }
        if repeated {
            continue;
        }
        twins.push(index);
        let slot = *slot_of.entry(span.clone()).or_insert_with(|| {
            per_span.push((span, Vec::new()));
            per_span.len() - 1
        });
        per_span[slot].1.push(index);
    }
    Ok(Attachment {
        per_span,
        unattached,
    })
}

/// Positions of `times` (a span's own events, then its log-based ones) by time, ties in the
/// order given: the span's events list after attaching.
pub fn merge_by_time(times: &[i128]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..times.len()).collect();
    order.sort_by_key(|&index| times[index]); // stable
    order
}

/// The order a joined run's traces are merged in (`merge_traces`): by the start of their
/// earliest span (`first_starts`, 0 for a trace without spans), ties in the order given;
/// the first names the run.
pub fn merge_order(first_starts: &[i128]) -> Vec<usize> {
    merge_by_time(first_starts)
}

/// When the earliest of `starts` started (0 for none): joined traces are ordered by it.
pub fn first_start(starts: impl IntoIterator<Item = i128>) -> i128 {
    starts.into_iter().min().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::convert::Infallible;

    type Log = LogRef<&'static str, &'static str>;

    fn log(span: &'static str, event: &'static str, time: i128) -> Log {
        LogRef {
            named: true,
            in_trace: true,
            span,
            event,
            time,
        }
    }

    /// r (0..100) holding a (10..20) and b (15..30); a holding g (12..14); c (40, no end).
    fn kids_of(span: &&'static str) -> Result<Vec<Kid<&'static str>>, Infallible> {
        let kid = |id, start, end| Kid { id, start, end };
        Ok(match *span {
            "r" => vec![kid("a", 10, 20), kid("b", 15, 30), kid("c", 40, 0)],
            "a" => vec![kid("g", 12, 14)],
            _ => vec![],
        })
    }

    fn known(span: &&'static str) -> bool {
        ["r", "a", "b", "c", "g"].contains(span)
    }

    fn attach_all(
        logs: &[Log],
        same: impl FnMut(usize, usize) -> Result<bool, Infallible>,
    ) -> Attachment<&'static str> {
        match attach(logs, known, kids_of, same) {
            Ok(found) => found,
            Err(never) => match never {},
        }
    }

    #[test]
    fn a_record_goes_to_the_one_child_open_at_its_time() {
        let found = |time| match emitting_span(&"r", time, kids_of) {
            Ok(span) => span,
            Err(never) => match never {},
        };
        assert_eq!(found(11), "a"); // only a open
        assert_eq!(found(13), "g"); // a open, and in it g
        assert_eq!(found(17), "r"); // a and b open: kept
        assert_eq!(found(25), "b");
        assert_eq!(found(50), "r"); // c has no end: never open
        assert_eq!(found(5), "r");
    }

    #[test]
    fn unnamed_foreign_and_unknown_records_are_unattached() {
        let mut unnamed = log("r", "", 1);
        unnamed.named = false;
        let mut foreign = log("r", "e", 1);
        foreign.in_trace = false;
        let logs = [unnamed, foreign, log("x", "e", 1), log("r", "e", 1)];
        let found = attach_all(&logs, |_, _| Ok(false));
        assert_eq!(found.unattached, 3);
        assert_eq!(found.per_span, [("r", vec![3])]);
    }

    #[test]
    fn equal_records_attach_once_and_are_asked_only_within_a_key() {
        let logs = [
            log("r", "e", 1),
            log("r", "e", 1), // same content as 0
            log("r", "e", 1), // other content
            log("r", "f", 1), // other name: not compared
            log("b", "e", 25),
            log("r", "e", 25), // emitted in b: compared with 4
        ];
        let mut asked = Vec::new();
        let contents: HashMap<usize, u8> = [(0, 1), (1, 1), (2, 2), (3, 1), (4, 3), (5, 3)].into();
        let found = attach_all(&logs, |a, b| {
            asked.push((a, b));
            Ok(contents[&a] == contents[&b])
        });
        assert_eq!(found.per_span, [("r", vec![0, 2, 3]), ("b", vec![4])]);
        assert_eq!(found.unattached, 0);
        assert_eq!(asked, [(1, 0), (2, 0), (5, 4)]);
    }

    #[test]
    fn spans_are_listed_in_the_order_they_first_got_a_record() {
        let logs = [log("b", "e", 1), log("r", "e", 2), log("b", "e", 3)];
        let found = attach_all(&logs, |_, _| Ok(false));
        assert_eq!(found.per_span, [("b", vec![0, 2]), ("r", vec![1])]);
    }

    #[test]
    fn merging_by_time_keeps_ties_in_the_order_given() {
        assert_eq!(merge_by_time(&[5, 1, 5, 0, 1]), [3, 1, 4, 0, 2]);
        assert_eq!(merge_order(&[]), Vec::<usize>::new());
        assert_eq!(first_start([7, 3, 9]), 3);
        assert_eq!(first_start([]), 0);
    }
}
