//! Online trace assembly for `serve`: spans arrive in pieces, traces leave whole (or marked
//! incomplete).
//!
//! The policy (module docstring of `otel_oracles/assemble/online.py`, docs/serve.md
//! "Backpressure and memory"), in short:
//!
//! * a trace is *complete* once its root span (no parent) has ended and nothing of it arrived
//!   for `decision_wait`; a trace open `max_trace_age` after its first record is released
//!   anyway, marked incomplete; released ids go into a bounded decision cache, and what
//!   arrives for them later is counted as *late*, not buffered;
//! * admission is all or nothing per request: a refused request ([`Refused`]) buffered
//!   nothing, and its parts are remembered as *owed* (a [`Fingerprint`] per trace, in a
//!   bounded table): a trace with an owed part is not complete until the part comes back;
//! * at a hard cap the oldest *stuck* traces (no root, or a part owed, and quiet for
//!   `decision_wait`) are *evicted*: released at once, marked incomplete, so a retry fits.
//!
//! The buffer is generic over what it keeps per span (`S`) and per log record (`L`): the
//! Python binding keeps compact entries (ids, times, a position in the request body) for
//! the spans `serve` decodes, and the Python objects themselves otherwise. Times are
//! monotonic seconds given by the caller (`now`), so the policy is tested without a clock.
//!
//! Orders the policy needs: every trace by first arrival (age limit, eviction), the active
//! traces by last arrival (the front has been idle longest), the evicted ones in eviction
//! order, the decision cache and the owed table in insertion order (the oldest go first).
//! Each is a `BTreeMap` keyed by a sequence number the trace remembers, so moving a trace
//! to the back or taking it out from the middle is `O(log n)`.

use crate::hashing::{FastMap, FastMapExt, FastSet, FastSetExt};
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

/// Why a trace was released. `SpanLimit`: complete, but spans over `max_spans_per_trace`
/// were dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    Complete,
    MaxAge,
    SpanLimit,
    Evicted,
    Shutdown,
}

impl Reason {
    /// The name `serve` reports (`ReadyTrace.reason`, `/stats`).
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Complete => "complete",
            Reason::MaxAge => "max_age",
            Reason::SpanLimit => "span_limit",
            Reason::Evicted => "evicted",
            Reason::Shutdown => "shutdown",
        }
    }
}

/// What the buffer needs to know of a buffered span.
pub trait BufferedSpan {
    /// A root span (no parent) that has ended (an end time set).
    fn ends_root(&self) -> bool;
}

/// Identifies one request's part of a trace across retries (a sender re-sends the same
/// request): its first record (the span id, or `span_id/time_ns` of a first log record) and
/// how many spans and log records it holds.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Fingerprint {
    pub first: String,
    pub spans: usize,
    pub logs: usize,
}

/// One request's records of one trace, in arrival order.
pub struct Part<S, L> {
    pub trace_id: String,
    pub spans: Vec<S>,
    pub logs: Vec<L>,
    pub fingerprint: Fingerprint,
}

/// The limits of one buffer (`assembly.*` of `serve`'s configuration).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    pub decision_wait: f64,
    pub max_trace_age: f64,
    pub max_traces: usize,
    pub overflow_traces: usize,
    pub max_buffered_spans: usize,
    pub max_spans_per_trace: usize,
    pub decision_cache_size: usize,
}

/// What `offer` did with one request.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Admission {
    /// Spans and log records buffered.
    pub accepted: usize,
    /// Refused for good (over `max_spans_per_trace`).
    pub rejected: usize,
    /// For traces already released: counted, not buffered.
    pub late: usize,
    /// Admitted beyond `max_traces` (within `overflow_traces`).
    pub overflow: bool,
    /// The trace ids this request added to (not those it was late for), in request order.
    pub traces: Vec<String>,
}

/// A refused request: nothing of it was buffered; the sender retries it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// The limit that refused it: `"spans"` or `"traces"`.
    pub what: &'static str,
    /// Traces and records buffered when it was refused (for the message).
    pub traces: usize,
    pub items: usize,
}

/// A trace released for grading.
#[derive(Debug, PartialEq)]
pub struct Released<S, L> {
    pub trace_id: String,
    pub spans: Vec<S>,
    pub logs: Vec<L>,
    pub reason: Reason,
    /// When the trace became gradable (end of its decision wait, its age limit, or its
    /// eviction): the start of the completion-to-verdict latency.
    pub due_at: f64,
    pub dropped: usize,
}

/// Where a buffered trace waits, besides the first-arrival order every trace is in.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Place {
    /// In `active` under this sequence number.
    Active(u64),
    /// Idle past `decision_wait` without its root (or with a part owed): only its age, an
    /// eviction or new data moves it.
    Stalled,
    /// In `evicted` under this sequence number.
    Evicted(u64),
    /// Taken out of its place, about to be put back or released.
    Nowhere,
}

struct Pending<S, L> {
    first: f64,
    last: f64,
    spans: Vec<S>,
    logs: Vec<L>,
    root_ended: bool,
    dropped: usize,
    evicted_at: Option<f64>,
    all_seq: u64,
    place: Place,
}

impl<S, L> Pending<S, L> {
    fn size(&self) -> usize {
        self.spans.len() + self.logs.len()
    }

    /// Leaves the buffer without more data: its root ended (or it lost spans to the
    /// per-trace limit, so it does not wait for a root), or it was evicted.
    fn draining(&self) -> bool {
        self.root_ended || self.dropped > 0 || self.evicted_at.is_some()
    }
}

/// The owed parts of one trace and its place in the owed table's insertion order.
struct Owed {
    seq: u64,
    parts: FastSet<Fingerprint>,
}

/// Buffers records per trace id and releases traces by the policy in the module doc. Not
/// thread-safe by design: `serve` drives it from its one event-loop thread.
pub struct OnlineBuffer<S, L> {
    limits: Limits,
    traces: FastMap<Arc<str>, Pending<S, L>>,
    /// Every buffered trace by first arrival (`max_trace_age` is the same for all, so this is
    /// also deadline order).
    all: BTreeMap<u64, Arc<str>>,
    /// Not stalled, not evicted, by last arrival: the front is the trace idle longest.
    active: BTreeMap<u64, Arc<str>>,
    /// Evicted, waiting for a grading slot; released before anything else.
    evicted: BTreeMap<u64, Arc<str>>,
    decided: FastSet<Arc<str>>,
    decided_order: VecDeque<Arc<str>>,
    owed: FastMap<Arc<str>, Owed>,
    owed_order: BTreeMap<u64, Arc<str>>,
    owed_limit: usize,
    seq: u64,
    buffered_items: usize,
    draining_traces: usize,
    draining_items: usize,
    evictions: usize,
}

impl<S: BufferedSpan, L> OnlineBuffer<S, L> {
    /// An empty buffer. The owed table holds at most `4 * (max_traces + overflow_traces) +
    /// 1024` traces (the oldest entry goes first).
    pub fn new(limits: Limits) -> Self {
        Self {
            limits,
            traces: FastMap::new(),
            all: BTreeMap::new(),
            active: BTreeMap::new(),
            evicted: BTreeMap::new(),
            decided: FastSet::new(),
            decided_order: VecDeque::new(),
            owed: FastMap::new(),
            owed_order: BTreeMap::new(),
            owed_limit: 4 * (limits.max_traces + limits.overflow_traces) + 1024,
            seq: 0,
            buffered_items: 0,
            draining_traces: 0,
            draining_items: 0,
            evictions: 0,
        }
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Traces being assembled.
    pub fn buffered_traces(&self) -> usize {
        self.traces.len()
    }

    /// Spans and log records buffered.
    pub fn buffered_items(&self) -> usize {
        self.buffered_items
    }

    /// Buffered traces that leave without more data (root ended, over the span limit, or
    /// evicted), and the records they hold.
    pub fn draining(&self) -> (usize, usize) {
        (self.draining_traces, self.draining_items)
    }

    /// Traces evicted at a hard cap so far.
    pub fn evictions(&self) -> usize {
        self.evictions
    }

    /// Whether `trace_id` is being assembled (buffered, not yet released).
    pub fn holds(&self, trace_id: &str) -> bool {
        self.traces.contains_key(trace_id)
    }

    /// Parts owed by refused requests, over all traces (for tests and accounting).
    pub fn owed_parts(&self) -> usize {
        self.owed.values().map(|o| o.parts.len()).sum()
    }

    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Buffer one request's parts, all or nothing, at time `now`.
    ///
    /// Refused (nothing buffered, every part remembered as owed) by the admission policy; an
    /// empty buffer always takes a request, so one request larger than the limits cannot
    /// livelock its sender.
    pub fn offer(&mut self, parts: Vec<Part<S, L>>, now: f64) -> Result<Admission, Refused> {
        let mut result = Admission::default();
        let mut kept = Vec::with_capacity(parts.len());
        let mut new_traces = 0usize;
        let mut new_items = 0usize;
        let mut continues = false;
        for part in parts {
            let n = part.spans.len() + part.logs.len();
            if self.decided.contains(part.trace_id.as_str()) {
                result.late += n;
                continue;
            }
            if self.traces.contains_key(part.trace_id.as_str()) {
                continues = true;
            } else {
                new_traces += 1;
            }
            new_items += n;
            kept.push(part);
        }
        if !self.traces.is_empty() && !kept.is_empty() {
            match self.admit(new_traces, new_items, continues, now) {
                Ok(overflow) => result.overflow = overflow,
                Err(refused) => {
                    for part in &kept {
                        self.owe(&part.trace_id, part.fingerprint.clone());
                    }
                    return Err(refused);
                }
            }
        }
        let limit = self.limits.max_spans_per_trace;
        result.traces = kept.iter().map(|p| p.trace_id.clone()).collect();
        for part in kept {
            if !self.owed.is_empty() {
                self.settle_owed(&part.trace_id, &part.fingerprint);
            }
            let (n, over) = self.buffer_part(part, now, limit);
            result.accepted += n;
            result.rejected += over;
        }
        Ok(result)
    }

    /// Add one part to its trace (creating it); returns (records taken, records dropped
    /// over the per-trace limit).
    fn buffer_part(&mut self, part: Part<S, L>, now: f64, limit: usize) -> (usize, usize) {
        let Part {
            trace_id,
            mut spans,
            mut logs,
            ..
        } = part;
        let fresh = !self.traces.contains_key(trace_id.as_str());
        let key: Arc<str> = if fresh {
            let key: Arc<str> = Arc::from(trace_id.as_str());
            let all_seq = self.next_seq();
            self.all.insert(all_seq, key.clone());
            self.traces.insert(
                key.clone(),
                Pending {
                    first: now,
                    last: now,
                    spans: Vec::new(),
                    logs: Vec::new(),
                    root_ended: false,
                    dropped: 0,
                    evicted_at: None,
                    all_seq,
                    place: Place::Nowhere,
                },
            );
            key
        } else {
            self.unplace(&trace_id);
            match self.traces.get_key_value(trace_id.as_str()) {
                Some((key, _)) => key.clone(),
                None => return (0, 0),
            }
        };
        let Some(p) = self.traces.get_mut(&key) else {
            return (0, 0);
        };
        let was_draining = p.draining();
        p.last = now;
        let room = if fresh {
            limit
        } else {
            limit.saturating_sub(p.size())
        };
        let total = spans.len() + logs.len();
        let mut over = 0;
        if total > room {
            spans.truncate(room);
            logs.truncate(room - spans.len());
            over = total - spans.len() - logs.len();
            p.dropped += over;
        }
        if !p.root_ended && spans.iter().any(BufferedSpan::ends_root) {
            p.root_ended = true;
        }
        let n = spans.len() + logs.len();
        if fresh {
            p.spans = spans;
        } else {
            p.spans.append(&mut spans);
        }
        p.logs.append(&mut logs);
        self.buffered_items += n;
        if was_draining {
            self.draining_items += n;
        } else if p.draining() {
            self.draining_traces += 1;
            self.draining_items += p.size();
        }
        if p.evicted_at.is_none() {
            // (Re)inserted at the back: the most recent arrival.
            self.seq += 1;
            let seq = self.seq;
            p.place = Place::Active(seq);
            self.active.insert(seq, key);
        }
        (n, over)
    }

    /// Take a buffered trace out of `active` or `stalled` (an evicted one stays evicted).
    fn unplace(&mut self, trace_id: &str) {
        if let Some(p) = self.traces.get_mut(trace_id) {
            match p.place {
                Place::Active(seq) => {
                    self.active.remove(&seq);
                    p.place = Place::Nowhere;
                }
                Place::Stalled => p.place = Place::Nowhere,
                Place::Evicted(_) | Place::Nowhere => {}
            }
        }
    }

    fn owe(&mut self, trace_id: &str, fingerprint: Fingerprint) {
        if !self.owed.contains_key(trace_id) {
            let key: Arc<str> = match self.traces.get_key_value(trace_id) {
                Some((key, _)) => key.clone(),
                None => Arc::from(trace_id),
            };
            let seq = self.next_seq();
            self.owed_order.insert(seq, key.clone());
            self.owed.insert(
                key,
                Owed {
                    seq,
                    parts: FastSet::new(),
                },
            );
            if self.owed.len() > self.owed_limit {
                if let Some((_, oldest)) = self.owed_order.pop_first() {
                    self.owed.remove(&oldest);
                }
            }
        }
        if let Some(owed) = self.owed.get_mut(trace_id) {
            owed.parts.insert(fingerprint);
        }
    }

    /// A part of a refused request came back: it is owed no more.
    fn settle_owed(&mut self, trace_id: &str, fingerprint: &Fingerprint) {
        let Some(owed) = self.owed.get_mut(trace_id) else {
            return;
        };
        owed.parts.remove(fingerprint);
        if owed.parts.is_empty() {
            self.forget_owed(trace_id);
        }
    }

    fn forget_owed(&mut self, trace_id: &str) {
        if let Some(owed) = self.owed.remove(trace_id) {
            self.owed_order.remove(&owed.seq);
        }
    }

    /// `Err` unless the policy admits the request; `Ok(true)` when it is admitted beyond
    /// `max_traces` (overflow).
    fn admit(
        &mut self,
        new_traces: usize,
        new_items: usize,
        continues: bool,
        now: f64,
    ) -> Result<bool, Refused> {
        let l = self.limits;
        if self.buffered_items + new_items > l.max_buffered_spans {
            self.evict_blocked(0, new_items, now);
            return Err(self.refuse("spans"));
        }
        let traces = self.traces.len();
        if new_traces == 0 || traces + new_traces <= l.max_traces {
            return Ok(false);
        }
        if continues {
            // Refusing would hold the continued traces' completion hostage; the spans it
            // costs are bounded by max_buffered_spans (checked above).
            return Ok(true);
        }
        if traces + new_traces > l.max_traces + l.overflow_traces {
            self.evict_blocked(new_traces, 0, now);
            return Err(self.refuse("traces"));
        }
        if traces.saturating_sub(self.draining_traces) + new_traces > l.max_traces {
            return Ok(true); // what drains by itself would not make room: refusing cannot help
        }
        Err(self.refuse("traces"))
    }

    fn refuse(&self, what: &'static str) -> Refused {
        Refused {
            what,
            traces: self.traces.len(),
            items: self.buffered_items,
        }
    }

    /// At a hard cap: evict the oldest *stuck* traces (root not ended, or a part owed, and
    /// nothing arrived for `decision_wait`) until the request would fit once the traces that
    /// complete by themselves are graded. A trace that received data within
    /// `decision_wait` is never evicted: its next parts are likely on the way, and if they
    /// are not it becomes evictable `decision_wait` later, so the buffer still drains.
    /// Scans the buffer: runs only at a hard cap.
    fn evict_blocked(&mut self, new_traces: usize, new_items: usize, now: f64) {
        let quiet = now - self.limits.decision_wait;
        let mut blocked: Vec<Arc<str>> = Vec::new();
        let (mut free_traces, mut free_items) = (0usize, 0usize);
        for key in self.all.values() {
            let Some(p) = self.traces.get(key) else {
                continue;
            };
            if p.evicted_at.is_some() || (p.draining() && !self.owed.contains_key(key)) {
                free_traces += 1;
                free_items += p.size();
            } else if p.last <= quiet {
                blocked.push(key.clone());
            }
        }
        let l = self.limits;
        let mut need_traces = if new_traces == 0 {
            0
        } else {
            signed(self.traces.len()) - signed(free_traces) + signed(new_traces)
                - signed(l.max_traces + l.overflow_traces)
        };
        let mut need_items = signed(self.buffered_items) - signed(free_items) + signed(new_items)
            - signed(l.max_buffered_spans);
        for key in blocked {
            if need_traces <= 0 && need_items <= 0 {
                break;
            }
            self.unplace(&key);
            let seq = self.next_seq();
            let Some(p) = self.traces.get_mut(&key) else {
                continue;
            };
            if !p.draining() {
                self.draining_traces += 1;
                self.draining_items += p.size();
            }
            p.evicted_at = Some(now);
            p.place = Place::Evicted(seq);
            let size = p.size();
            self.evicted.insert(seq, key);
            self.evictions += 1;
            need_traces -= 1;
            need_items -= signed(size);
        }
    }

    fn release(&mut self, trace_id: &str, reason: Reason, due_at: f64) -> Option<Released<S, L>> {
        let (key, p) = self.traces.remove_entry(trace_id)?;
        self.all.remove(&p.all_seq);
        match p.place {
            Place::Active(seq) => {
                self.active.remove(&seq);
            }
            Place::Evicted(seq) => {
                self.evicted.remove(&seq);
            }
            Place::Stalled | Place::Nowhere => {}
        }
        let size = p.size();
        self.buffered_items -= size;
        if p.draining() {
            self.draining_traces -= 1;
            self.draining_items -= size;
        }
        self.forget_owed(&key);
        if self.limits.decision_cache_size > 0 {
            self.decided.insert(key.clone());
            self.decided_order.push_back(key.clone());
            if self.decided_order.len() > self.limits.decision_cache_size {
                if let Some(oldest) = self.decided_order.pop_front() {
                    self.decided.remove(&oldest);
                }
            }
        }
        let reason = if p.dropped > 0 && reason == Reason::Complete {
            Reason::SpanLimit
        } else {
            reason
        };
        Some(Released {
            trace_id: key.to_string(),
            spans: p.spans,
            logs: p.logs,
            reason,
            due_at,
            dropped: p.dropped,
        })
    }

    /// Pop every trace gradable at `now` (at most `limit`): evicted ones first (they free
    /// memory the senders are waiting for), then complete ones, then those too old.
    pub fn due(&mut self, now: f64, limit: Option<usize>) -> Vec<Released<S, L>> {
        let mut out = Vec::new();
        let room = |out: &Vec<Released<S, L>>| limit.map_or(true, |n| out.len() < n);
        while room(&out) {
            let Some((_, key)) = self.evicted.first_key_value() else {
                break;
            };
            let key = key.clone();
            let at = self
                .traces
                .get(&key)
                .and_then(|p| p.evicted_at)
                .unwrap_or(now);
            match self.release(&key, Reason::Evicted, at) {
                Some(ready) => out.push(ready),
                None => {
                    self.evicted.pop_first();
                }
            }
        }
        let wait = self.limits.decision_wait;
        while room(&out) {
            let Some((&seq, key)) = self.active.first_key_value() else {
                break;
            };
            let key = key.clone();
            let Some(p) = self.traces.get_mut(&key) else {
                self.active.remove(&seq);
                continue;
            };
            if p.last + wait > now {
                break;
            }
            self.active.remove(&seq);
            p.place = Place::Stalled;
            // Over its span limit a trace is incomplete for sure: waiting for its root
            // (likely among the dropped spans, as roots end last) would only pin memory.
            let due_at = p.last + wait;
            if (p.root_ended || p.dropped > 0) && !self.owed.contains_key(&key) {
                if let Some(ready) = self.release(&key, Reason::Complete, due_at) {
                    out.push(ready);
                }
            }
        }
        let age = self.limits.max_trace_age;
        while room(&out) {
            let Some((&seq, key)) = self.all.first_key_value() else {
                break;
            };
            let key = key.clone();
            let Some(p) = self.traces.get(&key) else {
                self.all.remove(&seq);
                continue;
            };
            let deadline = p.first + age;
            if deadline > now {
                break;
            }
            if let Some(ready) = self.release(&key, Reason::MaxAge, deadline) {
                out.push(ready);
            }
        }
        out
    }

    /// Release everything (shutdown): evicted traces as evicted, traces whose wait has
    /// passed as complete, the rest marked incomplete.
    pub fn drain(&mut self, now: f64) -> Vec<Released<S, L>> {
        let mut out = self.due(now, None);
        let rest: Vec<Arc<str>> = self.all.values().cloned().collect();
        for key in rest {
            if let Some(ready) = self.release(&key, Reason::Shutdown, now) {
                out.push(ready);
            }
        }
        out
    }
}

/// A count as a signed number (counts here are far below `i64::MAX`).
fn signed(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A test span: its id and whether it is an ended root.
    #[derive(Debug, PartialEq, Clone)]
    struct S(&'static str, bool);

    impl BufferedSpan for S {
        fn ends_root(&self) -> bool {
            self.1
        }
    }

    fn limits() -> Limits {
        Limits {
            decision_wait: 10.0,
            max_trace_age: 60.0,
            max_traces: 100,
            overflow_traces: 100,
            max_buffered_spans: 1000,
            max_spans_per_trace: 50,
            decision_cache_size: 100,
        }
    }

    fn part(trace: &str, spans: &[S]) -> Part<S, u32> {
        part_logs(trace, spans, &[])
    }

    fn part_logs(trace: &str, spans: &[S], logs: &[u32]) -> Part<S, u32> {
        Part {
            trace_id: trace.to_string(),
            spans: spans.to_vec(),
            logs: logs.to_vec(),
            fingerprint: Fingerprint {
                first: spans.first().map_or(String::new(), |s| s.0.to_string()),
                spans: spans.len(),
                logs: logs.len(),
            },
        }
    }

    const ROOT: S = S("r", true);
    const CHILD: S = S("c", false);

    fn ids(released: &[Released<S, u32>]) -> Vec<(&str, Reason)> {
        released
            .iter()
            .map(|r| (r.trace_id.as_str(), r.reason))
            .collect()
    }

    #[test]
    fn a_trace_is_complete_after_its_root_ended_and_decision_wait_of_quiet() {
        let mut b: OnlineBuffer<S, u32> = OnlineBuffer::new(limits());
        b.offer(vec![part("t1", &[CHILD])], 0.0).unwrap();
        b.offer(vec![part("t1", &[ROOT])], 5.0).unwrap();
        assert!(
            b.due(14.9, None).is_empty(),
            "the wait counts from the last arrival"
        );
        let ready = b.due(15.0, None);
        assert_eq!(ids(&ready), vec![("t1", Reason::Complete)]);
        assert_eq!(ready[0].spans, vec![CHILD, ROOT]);
        assert!((ready[0].due_at - 15.0).abs() < 1e-9);
        assert_eq!((b.buffered_traces(), b.buffered_items()), (0, 0));
        assert_eq!(b.draining(), (0, 0));
    }

    #[test]
    fn without_a_root_a_trace_waits_for_max_age() {
        let mut b: OnlineBuffer<S, u32> = OnlineBuffer::new(limits());
        b.offer(vec![part("t1", &[CHILD])], 0.0).unwrap();
        assert!(b.due(59.0, None).is_empty());
        let ready = b.due(60.0, None);
        assert_eq!(ids(&ready), vec![("t1", Reason::MaxAge)]);
        assert!((ready[0].due_at - 60.0).abs() < 1e-9);
    }

    #[test]
    fn late_records_are_counted_not_buffered_while_remembered() {
        let mut b: OnlineBuffer<S, u32> = OnlineBuffer::new(Limits {
            decision_cache_size: 2,
            ..limits()
        });
        for t in ["t1", "t2", "t3"] {
            b.offer(vec![part(t, &[ROOT])], 0.0).unwrap();
        }
        assert_eq!(b.due(10.0, None).len(), 3);
        let late = b
            .offer(vec![part_logs("t3", &[CHILD], &[7])], 11.0)
            .unwrap();
        assert_eq!((late.late, late.accepted), (2, 0));
        assert!(late.traces.is_empty() && b.buffered_traces() == 0);
        let forgotten = b.offer(vec![part("t1", &[CHILD])], 11.0).unwrap();
        assert_eq!(
            (forgotten.late, forgotten.accepted),
            (0, 1),
            "t1 left the cache"
        );
    }

    #[test]
    fn a_refused_request_buffers_nothing_and_its_part_is_owed_until_it_returns() {
        let mut b: OnlineBuffer<S, u32> = OnlineBuffer::new(Limits {
            max_buffered_spans: 3,
            ..limits()
        });
        b.offer(vec![part("t1", &[ROOT])], 0.0).unwrap();
        b.offer(vec![part("t2", &[CHILD])], 0.0).unwrap();
        let retry = || vec![part("t1", &[S("c1", false), S("c2", false)])];
        let refused = b.offer(retry(), 1.0).unwrap_err();
        assert_eq!(
            refused,
            Refused {
                what: "spans",
                traces: 2,
                items: 2
            }
        );
        assert_eq!((b.buffered_traces(), b.buffered_items()), (2, 2));
        assert_eq!(b.owed_parts(), 1);
        // t1 is quiet and its root ended, but a part of it is owed: not complete.
        assert!(b.due(20.0, None).is_empty(), "t1 waits for its owed part");
        b.offer(vec![part("t2", &[ROOT])], 20.0).unwrap();
        assert_eq!(ids(&b.due(30.0, None)), vec![("t2", Reason::Complete)]);
        let adm = b.offer(retry(), 31.0).unwrap();
        assert_eq!(adm.accepted, 2);
        assert_eq!(b.owed_parts(), 0, "the part came back");
        assert_eq!(ids(&b.due(41.0, None)), vec![("t1", Reason::Complete)]);
    }

    #[test]
    fn a_new_trace_is_refused_only_when_draining_traces_will_make_room() {
        let mut b: OnlineBuffer<S, u32> = OnlineBuffer::new(Limits {
            max_traces: 1,
            overflow_traces: 1,
            ..limits()
        });
        b.offer(vec![part("done", &[ROOT])], 0.0).unwrap();
        let refused = b.offer(vec![part("t2", &[ROOT])], 1.0).unwrap_err();
        assert_eq!(refused.what, "traces");
        // Continuing a buffered trace is admitted beyond max_traces.
        let adm = b
            .offer(vec![part("t3", &[ROOT]), part("done", &[CHILD])], 1.0)
            .unwrap();
        assert!(adm.overflow);
        assert_eq!(adm.traces, vec!["t3".to_string(), "done".to_string()]);
        let mut stuck: OnlineBuffer<S, u32> = OnlineBuffer::new(Limits {
            max_traces: 1,
            overflow_traces: 1,
            ..limits()
        });
        stuck.offer(vec![part("open", &[CHILD])], 0.0).unwrap();
        let adm = stuck.offer(vec![part("t2", &[ROOT])], 1.0).unwrap();
        assert!(
            adm.overflow,
            "nothing drains by itself: refusing cannot help"
        );
    }

    #[test]
    fn owed_table_is_bounded() {
        let mut b: OnlineBuffer<S, u32> = OnlineBuffer::new(Limits {
            max_traces: 0,
            overflow_traces: 0,
            ..limits()
        });
        b.offer(vec![part("open", &[CHILD])], 0.0).unwrap();
        for i in 0..1100 {
            let name: &'static str = Box::leak(format!("x{i}").into_boxed_str());
            assert!(b.offer(vec![part(name, &[ROOT])], 0.0).is_err());
        }
        assert_eq!(b.owed_parts(), 1024, "the oldest owed entries went first");
    }

    #[test]
    fn spans_over_the_per_trace_limit_are_rejected_and_the_trace_is_incomplete() {
        let mut b: OnlineBuffer<S, u32> = OnlineBuffer::new(Limits {
            max_spans_per_trace: 3,
            ..limits()
        });
        let spans = [ROOT, CHILD, CHILD, CHILD, CHILD];
        let adm = b.offer(vec![part_logs("t1", &spans, &[1])], 0.0).unwrap();
        assert_eq!((adm.accepted, adm.rejected), (3, 3));
        let ready = b.due(10.0, None);
        assert_eq!(ids(&ready), vec![("t1", Reason::SpanLimit)]);
        assert_eq!(ready[0].dropped, 3);
        assert!(ready[0].logs.is_empty());
    }

    #[test]
    fn the_span_cap_evicts_the_oldest_stuck_trace_but_never_a_recent_one() {
        let mut b: OnlineBuffer<S, u32> = OnlineBuffer::new(Limits {
            max_buffered_spans: 3,
            ..limits()
        });
        b.offer(vec![part("old", &[CHILD, CHILD])], 0.0).unwrap();
        b.offer(vec![part("new", &[CHILD])], 5.0).unwrap();
        // Only "old" has been quiet for decision_wait at 12.0.
        let refused = b.offer(vec![part("x", &[CHILD, CHILD])], 12.0).unwrap_err();
        assert_eq!(refused.what, "spans");
        assert_eq!(b.evictions(), 1);
        let ready = b.due(12.0, None);
        assert_eq!(ids(&ready), vec![("old", Reason::Evicted)]);
        assert!((ready[0].due_at - 12.0).abs() < 1e-9);
        assert_eq!(
            b.offer(vec![part("x", &[CHILD, CHILD])], 12.0)
                .unwrap()
                .accepted,
            2
        );
        let late = b.offer(vec![part("old", &[ROOT])], 12.0).unwrap();
        assert_eq!(late.late, 1, "an evicted trace's late spans are counted");
    }

    #[test]
    fn the_trace_cap_does_not_evict_traces_that_just_received_data() {
        let mut b: OnlineBuffer<S, u32> = OnlineBuffer::new(Limits {
            max_traces: 2,
            overflow_traces: 1,
            ..limits()
        });
        for t in ["t1", "t2", "t3"] {
            b.offer(vec![part(t, &[CHILD])], 0.0).unwrap();
        }
        assert!(b.offer(vec![part("t4", &[CHILD])], 1.0).is_err());
        assert_eq!(b.evictions(), 0);
        assert!(b.offer(vec![part("t4", &[CHILD])], 11.0).is_err());
        assert_eq!(b.evictions(), 1, "the hard cap frees room for the retry");
        assert_eq!(ids(&b.due(11.0, None)), vec![("t1", Reason::Evicted)]);
        assert_eq!(
            b.offer(vec![part("t4", &[CHILD])], 11.0).unwrap().accepted,
            1
        );
    }

    #[test]
    fn due_respects_its_limit_and_drain_releases_the_rest() {
        let mut b: OnlineBuffer<S, u32> = OnlineBuffer::new(limits());
        for t in ["a", "b", "c"] {
            b.offer(vec![part(t, &[ROOT])], 0.0).unwrap();
        }
        b.offer(vec![part("open", &[CHILD])], 0.0).unwrap();
        assert_eq!(b.due(10.0, Some(2)).len(), 2);
        assert_eq!(b.buffered_traces(), 2);
        let rest = b.drain(10.0);
        assert_eq!(
            ids(&rest),
            vec![("c", Reason::Complete), ("open", Reason::Shutdown)]
        );
        assert_eq!((b.buffered_traces(), b.buffered_items()), (0, 0));
        assert_eq!(b.draining(), (0, 0));
    }

    #[test]
    fn a_stalled_trace_wakes_up_when_its_root_arrives() {
        let mut b: OnlineBuffer<S, u32> = OnlineBuffer::new(limits());
        b.offer(vec![part("t1", &[CHILD])], 0.0).unwrap();
        assert!(b.due(20.0, None).is_empty(), "stalled: no root");
        b.offer(vec![part("t1", &[ROOT])], 21.0).unwrap();
        assert!(b.due(30.0, None).is_empty());
        assert_eq!(ids(&b.due(31.0, None)), vec![("t1", Reason::Complete)]);
    }

    #[test]
    fn logs_count_against_the_limits_and_travel_with_their_trace() {
        let mut b: OnlineBuffer<S, u32> = OnlineBuffer::new(Limits {
            max_buffered_spans: 3,
            ..limits()
        });
        b.offer(vec![part_logs("t1", &[ROOT], &[1, 2])], 0.0)
            .unwrap();
        assert_eq!(b.buffered_items(), 3);
        assert!(b.offer(vec![part_logs("t1", &[], &[3])], 0.0).is_err());
        assert!(b.due(10.0, None).is_empty(), "a part of t1 is owed");
        let ready = b.due(60.0, None);
        assert_eq!(ids(&ready), vec![("t1", Reason::MaxAge)]);
        assert_eq!(ready[0].logs, vec![1, 2]);
    }
}
