//! Offline trace assembly: spans and log records, read in order, grouped into traces with
//! memory bound by the traces in flight (`otel_oracles.assemble.assemble_offline`).
//!
//! The assembler never looks inside a record: callers hand it each record's trace id (and,
//! for a span, whether it is a root) with an opaque handle `H`, and get the handles back,
//! grouped, when a trace is released. The Python binding's handles point into the decoded
//! `Batch`es (so spans stay native while they wait, and only a released trace's spans ever
//! become Python records), or hold Python records a caller built itself; a native mapper can
//! read a released trace through the same handles.
//!
//! Release policy (docs/ingest.md): traces wait in three queues ordered by last activity —
//! rooted (the root span has arrived), unrooted (spans, no root yet) and logs-only (trace
//! ids seen only in log records so far, e.g. a logs file read before its spans file). After
//! each batch, a rooted trace idle for `idle` records is released, an unrooted one after
//! `idle * UNROOTED_IDLE_FACTOR`; logs-only ones wait for their spans. Over the memory cap
//! the trace idle longest is released early (incomplete), or a logs-only one dropped (its
//! logs counted unattached). Records for a released trace are late (counted, a sample of
//! ids kept); released ids are remembered up to `REMEMBERED_TRACE_IDS`. At the end of the
//! input every waiting trace is released in first-seen order.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use crate::hashing::{FastMap, FastMapExt, FastSet, FastSetExt};
use crate::model::hex;

/// A trace waiting without a root waits this many times the idle window: its root may
/// still come (long agent runs export children long before the root ends), and releasing
/// it early would split it.
pub const UNROOTED_IDLE_FACTOR: u64 = 4;

/// How many released trace ids are remembered to recognise late records (about 30 MB in
/// the Python assembler this replaced; 17 bytes plus hash-set overhead each here). Records
/// of a trace released longer ago start a new, partial trace, which shows up as orphans.
pub const REMEMBERED_TRACE_IDS: usize = 200_000;

/// How many distinct trace ids that received late records are kept for the report.
pub const LATE_SAMPLE_SIZE: usize = 20;

/// A trace id as the assembler groups by: the 16 bytes the decoders checked, or, for
/// records built outside the decoders whose id is not 32 lowercase hex digits, its text
/// (so such records group exactly as their text compares).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TraceKey {
    Id([u8; 16]),
    Text(Arc<str>),
}

impl TraceKey {
    /// The key of a trace id given as text: bytes when it is canonical lowercase hex (what
    /// the decoders produce), so it groups with the same id decoded natively.
    pub fn from_text(text: &str) -> Self {
        let bytes = text.as_bytes();
        if bytes.len() == 32 {
            let mut id = [0u8; 16];
            let mut ok = true;
            for (slot, pair) in id.iter_mut().zip(bytes.chunks_exact(2)) {
                match (lower_hex(pair[0]), lower_hex(pair[1])) {
                    (Some(hi), Some(lo)) => *slot = (hi << 4) | lo,
                    _ => {
                        ok = false;
                        break;
                    }
                }
            }
            if ok {
                return Self::Id(id);
            }
        }
        Self::Text(Arc::from(text))
    }

    /// The id as records carry it: lowercase hex, or the text it came as.
    pub fn to_text(&self) -> String {
        match self {
            Self::Id(id) => hex(id),
            Self::Text(text) => text.to_string(),
        }
    }
}

fn lower_hex(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        _ => None,
    }
}

/// What assembly did so far (`AssemblyStats` of the Python stage, which adds the tree
/// builder's unattached log records to `unattached_logs`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    pub spans_read: u64,
    pub logs_read: u64,
    /// Traces released.
    pub traces: u64,
    /// Spans that arrived after their trace was released.
    pub late_spans: u64,
    /// Log records that arrived after their trace was released.
    pub late_logs: u64,
    /// The first `LATE_SAMPLE_SIZE` distinct trace ids that received late records.
    pub late_trace_ids: Vec<TraceKey>,
    /// Traces released early (incomplete) to stay under the cap.
    pub evicted_traces: u64,
    /// Log records without a trace id, and those of traces that never showed a span.
    pub unattached_logs: u64,
    /// Spans and log records held right now.
    pub buffered_spans: u64,
    pub peak_buffered_spans: u64,
}

/// A trace released: its spans' and log records' handles in arrival order.
#[derive(Debug)]
pub struct Release<H> {
    pub trace_id: TraceKey,
    pub spans: Vec<H>,
    pub logs: Vec<H>,
    /// Released early to stay under the cap.
    pub incomplete: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Queue {
    Rooted = 0,
    Unrooted = 1,
    Waiting = 2,
}

#[derive(Debug)]
struct Pending<H> {
    spans: Vec<H>,
    logs: Vec<H>,
    first_seen: u64,
    last_seen: u64,
    has_root: bool,
    queue: Queue,
    /// Position in its queue (larger = touched later).
    order: u64,
}

/// Where releasing stands between two calls of [`Assembler::next_release`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Waiting for the next batch.
    Input,
    /// Releasing idle rooted traces, then idle unrooted ones, then evicting.
    IdleRooted,
    IdleUnrooted,
    Evict,
    /// End of input: releasing what is left in first-seen order.
    End,
    Done,
}

/// Why a configuration is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

/// The offline assembler. Feed a batch with [`Assembler::span`] / [`Assembler::log`] for
/// each record (spans before logs, as a batch lists them), close it with
/// [`Assembler::end_batch`], then call [`Assembler::next_release`] until it returns `None`;
/// after the last batch call [`Assembler::finish`] and drain the same way.
#[derive(Debug)]
pub struct Assembler<H> {
    idle: u64,
    unrooted_idle: u64,
    cap: Option<u64>,
    pending: FastMap<TraceKey, Pending<H>>,
    queues: [BTreeMap<u64, TraceKey>; 3],
    next_order: u64,
    released: FastSet<TraceKey>,
    released_order: VecDeque<TraceKey>,
    clock: u64,
    stats: Stats,
    phase: Phase,
    end_order: VecDeque<TraceKey>,
    // Per batch: records added, records read, and the trace of the previous span (spans of
    // one trace usually come together; `last_live` false = that trace was released).
    added: u64,
    batch_spans: u64,
    batch_logs: u64,
    last_span_key: Option<TraceKey>,
    last_live: bool,
}

impl<H> Assembler<H> {
    /// `idle`: records read with none for a rooted trace before it is released (>= 1);
    /// `cap`: most records held (>= 1), `None` for no cap. Signed, so a negative setting
    /// is refused with its value rather than failing to convert.
    pub fn new(idle: i64, cap: Option<i64>) -> Result<Self, ConfigError> {
        let cap = match cap {
            Some(cap) if cap < 1 => {
                return Err(ConfigError(format!(
                    "max_buffered_spans must be >= 1, got {cap}"
                )))
            }
            Some(cap) => Some(cap.unsigned_abs()),
            None => None,
        };
        if idle < 1 {
            return Err(ConfigError(format!("idle_spans must be >= 1, got {idle}")));
        }
        let idle = idle.unsigned_abs();
        Ok(Self {
            idle,
            unrooted_idle: idle.saturating_mul(UNROOTED_IDLE_FACTOR),
            cap,
            pending: FastMap::new(),
            queues: [BTreeMap::new(), BTreeMap::new(), BTreeMap::new()],
            next_order: 0,
            released: FastSet::new(),
            released_order: VecDeque::new(),
            clock: 0,
            stats: Stats::default(),
            phase: Phase::Input,
            end_order: VecDeque::new(),
            added: 0,
            batch_spans: 0,
            batch_logs: 0,
            last_span_key: None,
            last_live: false,
        })
    }

    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// True once `finish` was called and every trace released.
    pub fn is_done(&self) -> bool {
        self.phase == Phase::Done
    }

    fn move_to(&mut self, key: &TraceKey, queue: Queue) {
        let order = self.next_order;
        self.next_order += 1;
        if let Some(pending) = self.pending.get_mut(key) {
            self.queues[pending.queue as usize].remove(&pending.order);
            pending.queue = queue;
            pending.order = order;
            self.queues[queue as usize].insert(order, key.clone());
        }
    }

    /// Looks up (or starts) the trace a record of `key` belongs to, touching it; `false`
    /// when it was released (the record is late).
    fn touch(&mut self, key: &TraceKey, span: bool) -> bool {
        if let Some(pending) = self.pending.get(key) {
            let queue = match pending.queue {
                Queue::Waiting if span => Queue::Unrooted,
                other => other,
            };
            self.move_to(key, queue);
            return true;
        }
        if self.released.contains(key) {
            return false;
        }
        let queue = if span {
            Queue::Unrooted
        } else {
            Queue::Waiting
        };
        let order = self.next_order;
        self.next_order += 1;
        self.pending.insert(
            key.clone(),
            Pending {
                spans: Vec::new(),
                logs: Vec::new(),
                first_seen: self.clock,
                last_seen: self.clock,
                has_root: false,
                queue,
                order,
            },
        );
        self.queues[queue as usize].insert(order, key.clone());
        true
    }

    fn late(&mut self, key: &TraceKey) {
        let sample = &mut self.stats.late_trace_ids;
        if sample.len() < LATE_SAMPLE_SIZE && !sample.contains(key) {
            sample.push(key.clone());
        }
    }

    /// A span of the current batch.
    pub fn span(&mut self, key: TraceKey, is_root: bool, handle: H) {
        self.batch_spans += 1;
        if self.last_span_key.as_ref() != Some(&key) {
            self.last_live = self.touch(&key, true);
            self.last_span_key = Some(key.clone());
        }
        self.clock += 1;
        if !self.last_live {
            self.stats.late_spans += 1;
            self.late(&key);
            return;
        }
        let clock = self.clock;
        let mut now_rooted = false;
        if let Some(pending) = self.pending.get_mut(&key) {
            pending.spans.push(handle);
            pending.last_seen = clock;
            if is_root && !pending.has_root {
                pending.has_root = true;
                now_rooted = true;
            }
        }
        self.added += 1;
        if now_rooted {
            self.move_to(&key, Queue::Rooted);
        }
    }

    /// A log record of the current batch (`None`: it has no trace id).
    pub fn log(&mut self, key: Option<TraceKey>, handle: H) {
        self.batch_logs += 1;
        self.clock += 1;
        let Some(key) = key else {
            self.stats.unattached_logs += 1;
            return;
        };
        if !self.touch(&key, false) {
            self.stats.late_logs += 1;
            self.late(&key);
            return;
        }
        let clock = self.clock;
        if let Some(pending) = self.pending.get_mut(&key) {
            pending.logs.push(handle);
            pending.last_seen = clock;
        }
        self.added += 1;
    }

    /// Closes the current batch: its counts are taken and releasing may start.
    pub fn end_batch(&mut self) {
        self.stats.spans_read += self.batch_spans;
        self.stats.logs_read += self.batch_logs;
        self.stats.buffered_spans += self.added;
        self.batch_spans = 0;
        self.batch_logs = 0;
        self.added = 0;
        self.last_span_key = None;
        self.last_live = false;
        self.phase = Phase::IdleRooted;
    }

    /// No more input: what waits is released by `next_release`, in first-seen order.
    pub fn finish(&mut self) {
        if matches!(self.phase, Phase::End | Phase::Done) {
            return;
        }
        self.phase = Phase::End;
        let mut rest: Vec<(u64, TraceKey)> = Vec::new();
        for queue in [Queue::Rooted, Queue::Unrooted] {
            for key in self.queues[queue as usize].values() {
                if let Some(pending) = self.pending.get(key) {
                    rest.push((pending.first_seen, key.clone()));
                }
            }
        }
        rest.sort_by_key(|(first_seen, _)| *first_seen);
        let waiting = std::mem::take(&mut self.queues[Queue::Waiting as usize]);
        for key in waiting.values() {
            if let Some(pending) = self.pending.remove(key) {
                self.drop_logs_only(&pending);
            }
        }
        self.queues[Queue::Rooted as usize].clear();
        self.queues[Queue::Unrooted as usize].clear();
        self.end_order = rest.into_iter().map(|(_, key)| key).collect();
    }

    fn drop_logs_only(&mut self, pending: &Pending<H>) {
        let logs = pending.logs.len() as u64;
        self.stats.buffered_spans = self.stats.buffered_spans.saturating_sub(logs);
        self.stats.unattached_logs += logs;
    }

    fn release(&mut self, key: TraceKey, pending: Pending<H>, incomplete: bool) -> Release<H> {
        let held = (pending.spans.len() + pending.logs.len()) as u64;
        self.stats.buffered_spans = self.stats.buffered_spans.saturating_sub(held);
        if self.released.insert(key.clone()) {
            self.released_order.push_back(key.clone());
        }
        if self.released_order.len() > REMEMBERED_TRACE_IDS {
            if let Some(oldest) = self.released_order.pop_front() {
                self.released.remove(&oldest);
            }
        }
        self.stats.traces += 1;
        Release {
            trace_id: key,
            spans: pending.spans,
            logs: pending.logs,
            incomplete,
        }
    }

    /// Takes the front of `queue` out of the assembler.
    fn pop_front(&mut self, queue: Queue) -> Option<(TraceKey, Pending<H>)> {
        let (_, key) = self.queues[queue as usize].pop_first()?;
        let pending = self.pending.remove(&key)?;
        Some((key, pending))
    }

    fn front_last_seen(&self, queue: Queue) -> Option<u64> {
        let (_, key) = self.queues[queue as usize].first_key_value()?;
        self.pending.get(key).map(|p| p.last_seen)
    }

    /// The next trace to release now, or `None` when the assembler needs the next batch
    /// (or, after `finish`, has released everything).
    pub fn next_release(&mut self) -> Option<Release<H>> {
        loop {
            match self.phase {
                Phase::Input | Phase::Done => return None,
                Phase::IdleRooted | Phase::IdleUnrooted => {
                    let (queue, wait) = if self.phase == Phase::IdleRooted {
                        (Queue::Rooted, self.idle)
                    } else {
                        (Queue::Unrooted, self.unrooted_idle)
                    };
                    match self.front_last_seen(queue) {
                        Some(last_seen) if self.clock - last_seen >= wait => {
                            if let Some((key, pending)) = self.pop_front(queue) {
                                return Some(self.release(key, pending, false));
                            }
                        }
                        _ => {
                            if self.phase == Phase::IdleRooted {
                                self.phase = Phase::IdleUnrooted;
                            } else {
                                self.stats.peak_buffered_spans = self
                                    .stats
                                    .peak_buffered_spans
                                    .max(self.stats.buffered_spans);
                                self.phase = Phase::Evict;
                            }
                        }
                    }
                }
                Phase::Evict => {
                    let over = self.cap.is_some_and(|cap| self.stats.buffered_spans > cap);
                    let oldest = if over { self.oldest_queue() } else { None };
                    let Some(queue) = oldest else {
                        self.phase = Phase::Input;
                        return None;
                    };
                    if let Some((key, pending)) = self.pop_front(queue) {
                        if pending.spans.is_empty() {
                            self.drop_logs_only(&pending);
                            continue;
                        }
                        self.stats.evicted_traces += 1;
                        return Some(self.release(key, pending, true));
                    }
                }
                Phase::End => {
                    let Some(key) = self.end_order.pop_front() else {
                        self.phase = Phase::Done;
                        return None;
                    };
                    if let Some(pending) = self.pending.remove(&key) {
                        return Some(self.release(key, pending, false));
                    }
                }
            }
        }
    }

    /// The non-empty queue whose front trace has been idle longest (the first of equals in
    /// rooted, unrooted, logs-only order).
    fn oldest_queue(&self) -> Option<Queue> {
        let mut best: Option<(u64, Queue)> = None;
        for queue in [Queue::Rooted, Queue::Unrooted, Queue::Waiting] {
            if let Some(last_seen) = self.front_last_seen(queue) {
                if best.map_or(true, |(seen, _)| last_seen < seen) {
                    best = Some((last_seen, queue));
                }
            }
        }
        best.map(|(_, queue)| queue)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u8) -> TraceKey {
        TraceKey::Id([n; 16])
    }

    /// Feeds one batch of `(trace, is_root)` spans and `trace` logs (`None`: no trace id),
    /// handles numbered from `first`; returns what it released, as (trace byte, spans,
    /// logs, incomplete).
    fn feed(
        a: &mut Assembler<u32>,
        first: u32,
        spans: &[(u8, bool)],
        logs: &[Option<u8>],
    ) -> Vec<(u8, Vec<u32>, Vec<u32>, bool)> {
        let mut handle = first;
        for &(trace, root) in spans {
            a.span(key(trace), root, handle);
            handle += 1;
        }
        for &trace in logs {
            a.log(trace.map(key), handle);
            handle += 1;
        }
        a.end_batch();
        drain(a)
    }

    fn drain(a: &mut Assembler<u32>) -> Vec<(u8, Vec<u32>, Vec<u32>, bool)> {
        let mut out = Vec::new();
        while let Some(release) = a.next_release() {
            let TraceKey::Id(id) = release.trace_id else {
                panic!("text key")
            };
            out.push((id[0], release.spans, release.logs, release.incomplete));
        }
        out
    }

    #[test]
    fn text_keys_of_canonical_hex_group_with_decoded_ids() {
        assert_eq!(
            TraceKey::from_text(&"ab".repeat(16)),
            TraceKey::Id([0xab; 16])
        );
        assert!(matches!(
            TraceKey::from_text(&"AB".repeat(16)),
            TraceKey::Text(_)
        ));
        assert!(matches!(TraceKey::from_text("t1"), TraceKey::Text(_)));
        assert_eq!(TraceKey::Id([0xab; 16]).to_text(), "ab".repeat(16));
        assert_eq!(TraceKey::from_text("t1").to_text(), "t1");
    }

    #[test]
    fn bad_config_is_refused() {
        assert!(Assembler::<u32>::new(0, None).is_err());
        assert!(Assembler::<u32>::new(1, Some(0)).is_err());
    }

    #[test]
    fn rooted_trace_released_after_idle_window_unrooted_after_four() {
        let mut a = Assembler::new(2, None).unwrap();
        assert!(feed(&mut a, 0, &[(1, false), (1, true)], &[]).is_empty());
        assert!(feed(&mut a, 10, &[(2, false)], &[]).is_empty());
        // Trace 1 idle for 2 records now (clock 4, last seen 2).
        let out = feed(&mut a, 20, &[(3, false)], &[]);
        assert_eq!(out, vec![(1, vec![0, 1], vec![], false)]);
        // Trace 2 has no root: released once idle for 8 records.
        for i in 0..6 {
            assert!(
                feed(&mut a, 30 + i, &[(4, false)], &[]).is_empty(),
                "batch {i}"
            );
        }
        let out = feed(&mut a, 40, &[(4, false)], &[]);
        assert_eq!(out, vec![(2, vec![10], vec![], false)]);
        assert_eq!(a.stats().traces, 2);
        assert_eq!(a.stats().spans_read, 11);
        assert_eq!(a.stats().buffered_spans, 8);
        assert_eq!(a.stats().peak_buffered_spans, 8);
    }

    #[test]
    fn late_records_are_counted_and_sampled() {
        let mut a = Assembler::new(1, None).unwrap();
        feed(&mut a, 0, &[(1, true)], &[]);
        assert_eq!(feed(&mut a, 1, &[(2, true)], &[]).len(), 1);
        feed(&mut a, 2, &[(1, false), (1, false)], &[Some(1), None]);
        let s = a.stats();
        assert_eq!((s.late_spans, s.late_logs, s.unattached_logs), (2, 1, 1));
        assert_eq!(s.late_trace_ids, vec![key(1)]);
        assert_eq!((s.spans_read, s.logs_read), (4, 2));
    }

    #[test]
    fn late_sample_is_bounded() {
        let mut a = Assembler::new(1, None).unwrap();
        for t in 0..30u8 {
            feed(&mut a, 0, &[(t, true)], &[]);
        }
        feed(&mut a, 0, &[(200, true)], &[]);
        for t in 0..30u8 {
            feed(&mut a, 0, &[(t, false)], &[]);
        }
        assert_eq!(a.stats().late_trace_ids.len(), LATE_SAMPLE_SIZE);
        assert_eq!(a.stats().late_spans, 30);
    }

    #[test]
    fn logs_wait_for_their_spans_and_are_dropped_unattached_at_the_end() {
        let mut a = Assembler::new(1, None).unwrap();
        // Logs read before their spans wait however long it takes.
        feed(&mut a, 0, &[], &[Some(1), Some(2)]);
        for i in 0..5 {
            assert!(feed(&mut a, 10 + i, &[(9, false)], &[]).is_empty());
        }
        let out = feed(&mut a, 20, &[(1, true)], &[]);
        assert!(out.is_empty());
        a.finish();
        let out = drain(&mut a);
        // End of input: first-seen order (trace 1 was first seen through its log record).
        assert_eq!(
            out,
            vec![
                (1, vec![20], vec![0], false),
                (9, vec![10, 11, 12, 13, 14], vec![], false)
            ]
        );
        assert_eq!(a.stats().unattached_logs, 1);
        assert_eq!(a.stats().buffered_spans, 0);
        assert!(a.is_done());
    }

    #[test]
    fn end_of_input_releases_in_first_seen_order() {
        let mut a = Assembler::new(100, None).unwrap();
        feed(&mut a, 0, &[(3, false), (1, true), (2, false)], &[]);
        feed(&mut a, 10, &[(2, true), (3, false)], &[]);
        a.finish();
        let order: Vec<u8> = drain(&mut a).into_iter().map(|r| r.0).collect();
        assert_eq!(order, vec![3, 1, 2]);
        assert_eq!(a.stats().traces, 3);
    }

    #[test]
    fn over_the_cap_the_longest_idle_is_released_incomplete() {
        let mut a = Assembler::new(1000, Some(4)).unwrap();
        assert!(feed(&mut a, 0, &[(1, true), (2, false)], &[]).is_empty());
        assert!(feed(&mut a, 10, &[(3, false)], &[Some(4)]).is_empty());
        // 5 held > 4: trace 1 (idle longest) goes, marked incomplete.
        let out = feed(&mut a, 20, &[(2, false)], &[]);
        assert_eq!(out, vec![(1, vec![0], vec![], true)]);
        // The logs-only trace is the oldest now: dropped as unattached, not a trace.
        let out = feed(&mut a, 30, &[(5, false), (5, false)], &[]);
        assert_eq!(out, vec![(3, vec![10], vec![], true)]);
        let s = a.stats();
        assert_eq!((s.evicted_traces, s.unattached_logs, s.traces), (2, 1, 2));
        assert_eq!(s.buffered_spans, 4);
        assert_eq!(s.peak_buffered_spans, 6);
    }

    #[test]
    fn remembered_ids_are_bounded() {
        let mut a = Assembler::new(1, None).unwrap();
        for n in 0..(REMEMBERED_TRACE_IDS as u32 + 2) {
            let mut id = [0u8; 16];
            id[..4].copy_from_slice(&n.to_be_bytes());
            a.span(TraceKey::Id(id), true, n);
            a.end_batch();
            while a.next_release().is_some() {}
        }
        assert_eq!(a.released.len(), REMEMBERED_TRACE_IDS);
        // The first id was forgotten: its spans start a new trace instead of being late.
        a.span(TraceKey::Id([0; 16]), false, 0);
        a.end_batch();
        assert_eq!(a.stats().late_spans, 0);
    }
}
