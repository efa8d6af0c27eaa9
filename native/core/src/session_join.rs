//! The offline window that joins runs split over several traces
//! (`otel_oracles.assemble.join_sessions`; the joining policy is documented in
//! `otel_oracles/assemble/_sessions.py`).
//!
//! Mechanics only: each trace arrives with what may tie it to others (its join keys, the
//! agent run it may be, the tool calls that may have run an agent traced apart) and an
//! opaque handle; groups of handles leave the window in order, and the caller merges each
//! group into one trace. Traces sharing a key, and an agent trace with the one tool call
//! that fits it (neither claimed yet, no ambiguity), fold into the earliest group; the
//! window releases its first group while it holds more than `window` spans.
//!
//! What a trace arrives with is read from its spans by one walk, [`facts`], generic over
//! how the caller holds a span ([`JoinSpan`]): the decoded [`model::Span`]s the offline
//! assembler releases, or Python records (`serve`, traces built from records), read through
//! the same trait by `otel-oracles-native`.

use crate::hashing::{FastMap, FastMapExt, FastSet, FastSetExt};
use crate::model;
use std::collections::VecDeque;
use std::convert::Infallible;

/// The span attributes a join reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinAttr {
    ConversationId,
    SessionId,
    ToolName,
    OperationName,
    AgentName,
    AgentId,
}

impl JoinAttr {
    /// The attributes that name a session: a span's value of each is a join key.
    pub const SESSIONS: [JoinAttr; 2] = [JoinAttr::ConversationId, JoinAttr::SessionId];
    /// Where a root span names the agent whose run its trace is, in order of preference.
    pub const AGENT_NAMES: [JoinAttr; 2] = [JoinAttr::AgentName, JoinAttr::AgentId];

    /// The attribute's key.
    pub const fn key(self) -> &'static str {
        match self {
            JoinAttr::ConversationId => "gen_ai.conversation.id",
            JoinAttr::SessionId => "session.id",
            JoinAttr::ToolName => "gen_ai.tool.name",
            JoinAttr::OperationName => "gen_ai.operation.name",
            JoinAttr::AgentName => "gen_ai.agent.name",
            JoinAttr::AgentId => "gen_ai.agent.id",
        }
    }
}

/// `SESSION_ATTRIBUTES` of `otel_oracles.model.span`: the keys of [`JoinAttr::SESSIONS`]
/// (also the span attributes a `serve` transfer keeps).
pub const SESSION_ATTRIBUTES: [&str; 2] =
    [JoinAttr::SESSIONS[0].key(), JoinAttr::SESSIONS[1].key()];

/// The GenAI operations of a span that runs an agent.
pub const AGENT_OPERATIONS: [&str; 2] = ["invoke_agent", "create_agent"];

/// What [`facts`] reads of one span, however the caller holds it. Reads that can fail
/// (a Python record's attribute) fail with `Error`.
pub trait JoinSpan {
    type Error;
    /// `f` of the trace id of each of its links that has one as text (hex; may be empty).
    fn each_linked_trace(&self, f: impl FnMut(&str)) -> Result<(), Self::Error>;
    /// Whether it has any link.
    fn has_links(&self) -> Result<bool, Self::Error>;
    /// `f` of the attribute's value when it is a string (the last of repeated keys), else
    /// of `None`.
    fn with_text_attr<R>(
        &self,
        attr: JoinAttr,
        f: impl FnOnce(Option<&str>) -> R,
    ) -> Result<R, Self::Error>;
    /// Whether it has no parent span id.
    fn is_root(&self) -> Result<bool, Self::Error>;
    /// Its span id (hex).
    fn span_id(&self) -> Result<String, Self::Error>;
    /// Its resource's `service.name` when that is a string, else `""`.
    fn service(&self) -> Result<String, Self::Error>;
    /// (start, end) in ns since the epoch.
    fn times(&self) -> Result<(i128, i128), Self::Error>;
}

/// What the window reads of one trace: its join keys (its own id as `trace:<id>`, the
/// traces its spans link to, its session ids as `<attribute>:<value>`), the agent run it
/// may be, the tool calls that may have run an agent traced apart, and its span count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    pub trace_id: String,
    pub keys: Vec<String>,
    pub root: Option<AgentRoot>,
    pub calls: Vec<ToolCall>,
    pub spans: u64,
}

/// The [`Facts`] of the trace `trace_id` in one walk over its `spans` (in `Trace.spans`
/// order: the keys come in that order, a session id repeated by the span before listed
/// once).
pub fn facts<S: JoinSpan>(
    trace_id: &str,
    spans: impl IntoIterator<Item = Result<S, S::Error>>,
) -> Result<Facts, S::Error> {
    let mut keys = vec![format!("trace:{trace_id}")];
    // The session ids of the span before, per attribute: a trace's spans mostly repeat
    // them, and a key listed again ties nothing more (the keys are a set).
    let mut last_session: [Option<String>; 2] = [None, None];
    let mut root = None;
    let mut roots = 0usize;
    let mut calls = Vec::new();
    let mut count = 0u64;
    for span in spans {
        let span = span?;
        count += 1;
        span.each_linked_trace(|linked| {
            if !linked.is_empty() && linked != trace_id {
                keys.push(format!("trace:{linked}"));
            }
        })?;
        for (attr, last) in JoinAttr::SESSIONS.into_iter().zip(&mut last_session) {
            let key = span.with_text_attr(attr, |value| match value {
                Some(value) if !value.is_empty() && last.as_deref() != Some(value) => {
                    *last = Some(value.to_owned());
                    Some(format!("{}:{value}", attr.key()))
                }
                _ => None,
            })?;
            keys.extend(key);
        }
        let tool = span.with_text_attr(JoinAttr::ToolName, |name| {
            name.filter(|name| !name.is_empty()).map(str::to_owned)
        })?;
        if let Some(name) = tool {
            if span.with_text_attr(JoinAttr::OperationName, |op| op == Some("execute_tool"))? {
                let (start, end) = span.times()?;
                calls.push(ToolCall {
                    trace_id: trace_id.to_owned(),
                    span_id: span.span_id()?,
                    service: span.service()?,
                    name,
                    start,
                    end,
                });
            }
        }
        if span.is_root()? {
            roots += 1;
            if roots == 1 {
                root = Some(span);
            }
        }
    }
    let root = match root {
        Some(root) if roots == 1 => agent_root(trace_id, &root)?,
        _ => None,
    };
    Ok(Facts {
        trace_id: trace_id.to_owned(),
        keys,
        root,
        calls,
        spans: count,
    })
}

/// The trace as an agent's run started as a root, from its one root span: linking nowhere
/// (links join already), a GenAI agent span naming its agent.
fn agent_root<S: JoinSpan>(trace_id: &str, root: &S) -> Result<Option<AgentRoot>, S::Error> {
    if root.has_links()? {
        return Ok(None);
    }
    let agent_span = root.with_text_attr(JoinAttr::OperationName, |op| {
        op.is_some_and(|op| AGENT_OPERATIONS.contains(&op))
    })?;
    if !agent_span {
        return Ok(None);
    }
    let mut name = None;
    for attr in JoinAttr::AGENT_NAMES {
        name = root.with_text_attr(attr, |name| {
            name.filter(|name| !name.is_empty()).map(str::to_owned)
        })?;
        if name.is_some() {
            break;
        }
    }
    let Some(name) = name else { return Ok(None) };
    let (start, end) = root.times()?;
    Ok(Some(AgentRoot {
        trace_id: trace_id.to_owned(),
        span_id: root.span_id()?,
        service: root.service()?,
        name,
        start,
        end,
    }))
}

/// The value of attribute `name` when it is a string (the last of repeated keys, as a
/// record's dict keeps it).
fn text_attr<'a>(attributes: &'a [model::KeyValue], name: &str) -> Option<&'a str> {
    match &attributes.iter().rev().find(|kv| kv.key == name)?.value {
        model::AnyValue::Str(text) => Some(text),
        _ => None,
    }
}

/// A decoded span, as the offline assembler releases it.
impl JoinSpan for &model::Span {
    type Error = Infallible;

    fn each_linked_trace(&self, mut f: impl FnMut(&str)) -> Result<(), Infallible> {
        for link in &self.links {
            f(&model::hex(&link.trace_id));
        }
        Ok(())
    }

    fn has_links(&self) -> Result<bool, Infallible> {
        Ok(!self.links.is_empty())
    }

    fn with_text_attr<R>(
        &self,
        attr: JoinAttr,
        f: impl FnOnce(Option<&str>) -> R,
    ) -> Result<R, Infallible> {
        Ok(f(text_attr(&self.attributes, attr.key())))
    }

    fn is_root(&self) -> Result<bool, Infallible> {
        Ok(self.parent_span_id.is_none())
    }

    fn span_id(&self) -> Result<String, Infallible> {
        Ok(model::hex(&self.span_id))
    }

    fn service(&self) -> Result<String, Infallible> {
        Ok(text_attr(&self.resource.attributes, "service.name")
            .unwrap_or_default()
            .to_owned())
    }

    fn times(&self) -> Result<(i128, i128), Infallible> {
        Ok((i128::from(self.start_ns), i128::from(self.end_ns)))
    }
}

/// The [`Facts`] of the trace `trace_id` whose spans are the decoded `spans` (in
/// `Trace.spans` order).
pub fn decoded_facts(trace_id: &str, spans: &[&model::Span]) -> Facts {
    match facts(trace_id, spans.iter().copied().map(Ok::<_, Infallible>)) {
        Ok(found) => found,
        Err(never) => match never {},
    }
}

/// A trace that is one agent's run started as a root of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentRoot {
    pub trace_id: String,
    pub span_id: String,
    pub service: String,
    pub name: String,
    pub start: i128,
    pub end: i128,
}

/// A GenAI `execute_tool` span that names its tool and may have run an agent traced apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    pub trace_id: String,
    pub span_id: String,
    pub service: String,
    pub name: String,
    pub start: i128,
    pub end: i128,
}

impl ToolCall {
    /// Whether `agent`'s trace may be the run this call started: another trace of the same
    /// service, the agent named as the tool is, its root within the call's time.
    pub fn holds(&self, agent: &AgentRoot) -> bool {
        agent.trace_id != self.trace_id
            && agent.service == self.service
            && agent.name == self.name
            && self.start <= agent.start
            && 0 < agent.end
            && agent.end <= self.end
    }
}

/// (agent, call) positions among those given, for every agent exactly one call fits and
/// that call no other agent: which agent roots hang under which tool calls in a joined run.
pub fn delegations(agents: &[AgentRoot], calls: &[ToolCall]) -> Vec<(usize, usize)> {
    let fits: Vec<Vec<usize>> = agents
        .iter()
        .map(|agent| {
            (0..calls.len())
                .filter(|&c| calls[c].holds(agent))
                .collect()
        })
        .collect();
    let mut taken = vec![0usize; calls.len()];
    for found in &fits {
        for &call in found {
            taken[call] += 1;
        }
    }
    fits.iter()
        .enumerate()
        .filter_map(|(agent, found)| match found.as_slice() {
            [call] if taken[*call] == 1 => Some((agent, *call)),
            _ => None,
        })
        .collect()
}

/// One trace entering the window: its handle and what ties it to others.
#[derive(Debug)]
pub struct Arrival<H> {
    pub handle: H,
    pub facts: Facts,
}

type CallKey = (String, String);

/// An agent root or a tool call left waiting for a partner, to forget when its group leaves.
#[derive(Debug)]
enum Waiting {
    Agent(CallKey, String),
    Call(CallKey, String),
}

#[derive(Debug)]
struct Group<H> {
    traces: Vec<H>,
    keys: FastSet<String>,
    spans: u64,
    waiting: Vec<Waiting>,
}

/// The window: [`Joiner::add`] a trace, get the groups that leave it.
#[derive(Debug)]
pub struct Joiner<H> {
    window: u64,
    /// Live groups by id; ids grow with creation, so the smallest is the earliest.
    groups: FastMap<u64, Group<H>>,
    order: VecDeque<u64>,
    next_id: u64,
    owner: FastMap<String, u64>,
    held: u64,
    /// Agent traces no tool call has claimed: (service, agent name) -> trace id -> root.
    agents: FastMap<CallKey, FastMap<String, AgentRoot>>,
    /// Tool calls that claimed no agent trace: (service, tool name) -> span id -> call.
    calls: FastMap<CallKey, FastMap<String, ToolCall>>,
}

impl<H> Joiner<H> {
    pub fn new(window: u64) -> Self {
        Self {
            window,
            groups: FastMap::new(),
            order: VecDeque::new(),
            next_id: 0,
            owner: FastMap::new(),
            held: 0,
            agents: FastMap::new(),
            calls: FastMap::new(),
        }
    }

    /// Spans held in the window.
    pub fn held(&self) -> u64 {
        self.held
    }

    /// Agent roots and tool calls waiting for a partner (bounded by the window: they
    /// leave with their group).
    pub fn waiting(&self) -> usize {
        self.agents.values().map(FastMap::len).sum::<usize>()
            + self.calls.values().map(FastMap::len).sum::<usize>()
    }

    /// Let `arrival` into the window; the groups that leave it, in order.
    pub fn add(&mut self, arrival: Arrival<H>) -> Vec<Vec<H>> {
        let Arrival {
            handle,
            facts:
                Facts {
                    trace_id,
                    keys,
                    root,
                    calls,
                    spans,
                },
        } = arrival;
        // The groups the arrival ties to, in first-seen order (the set beside the list: a
        // trace linking to thousands of traces searched the list per link).
        let mut found: Vec<u64> = Vec::new();
        let mut listed: FastSet<u64> = FastSet::new();
        for key in &keys {
            if let Some(&group) = self.owner.get(key) {
                if listed.insert(group) {
                    found.push(group);
                }
            }
        }
        let (partners, waiting) = self.delegation_partners(&trace_id, root, calls);
        for partner in partners {
            if let Some(&group) = self.owner.get(&format!("trace:{partner}")) {
                if listed.insert(group) {
                    found.push(group);
                }
            }
        }
        // The keys whose owner changes: the arrival's and those of the groups folded into
        // the earliest. Re-owning every key of the group on each arrival cost the square of
        // its traces (20,000 one-span traces of one session id: 209 s).
        let mut moved: Vec<String> = Vec::new();
        let target = match found.iter().min() {
            Some(&earliest) => {
                for other in found.iter().filter(|&&g| g != earliest) {
                    if let Some(folded) = self.groups.remove(other) {
                        if let Some(group) = self.groups.get_mut(&earliest) {
                            group.traces.extend(folded.traces);
                            moved.extend(folded.keys.iter().cloned());
                            group.keys.extend(folded.keys);
                            group.spans += folded.spans;
                            group.waiting.extend(folded.waiting);
                        }
                    }
                }
                earliest
            }
            None => {
                let id = self.next_id;
                self.next_id += 1;
                self.groups.insert(
                    id,
                    Group {
                        traces: Vec::new(),
                        keys: FastSet::new(),
                        spans: 0,
                        waiting: Vec::new(),
                    },
                );
                self.order.push_back(id);
                id
            }
        };
        if let Some(group) = self.groups.get_mut(&target) {
            group.traces.push(handle);
            moved.extend(keys.iter().cloned());
            group.keys.extend(keys);
            group.spans += spans;
            group.waiting.extend(waiting);
            for key in moved {
                self.owner.insert(key, target);
            }
        }
        self.held += spans;
        let mut released = Vec::new();
        while self.held > self.window && !self.order.is_empty() {
            released.extend(self.release_first());
        }
        released
    }

    /// Every group left, in order (end of input).
    pub fn flush(&mut self) -> Vec<Vec<H>> {
        let mut released = Vec::new();
        while !self.order.is_empty() {
            released.extend(self.release_first());
        }
        released
    }

    /// The traces in the window that the arriving trace delegated to or was delegated by
    /// (an agent trace and the one tool call that fits it, neither claimed yet; ambiguous
    /// fits join nothing), and the entries it leaves waiting for a partner.
    fn delegation_partners(
        &mut self,
        trace_id: &str,
        root: Option<AgentRoot>,
        calls: Vec<ToolCall>,
    ) -> (Vec<String>, Vec<Waiting>) {
        let mut partners = Vec::new();
        let mut left = Vec::new();
        if let Some(root) = root {
            let key = (root.service.clone(), root.name.clone());
            let claimable = self.calls.get_mut(&key);
            // Two fits are as ambiguous as ten thousand: the search stops at the second (each
            // of 10,000 agent traces fitting 10,000 waiting calls took 51 s).
            let fits: Vec<&ToolCall> = claimable
                .as_ref()
                .map(|calls| calls.values().filter(|c| c.holds(&root)).take(2).collect())
                .unwrap_or_default();
            match fits.as_slice() {
                [call] => {
                    let (span_id, partner) = (call.span_id.clone(), call.trace_id.clone());
                    if let Some(claimable) = claimable {
                        claimable.remove(&span_id);
                    }
                    partners.push(partner);
                }
                [] => {
                    let trace = root.trace_id.clone();
                    left.push(Waiting::Agent(key.clone(), trace.clone()));
                    self.agents.entry(key).or_default().insert(trace, root);
                }
                _ => {}
            }
        }
        for call in calls {
            let key = (call.service.clone(), call.name.clone());
            if let Some(waiting) = self.agents.get_mut(&key) {
                let held: Vec<&String> = waiting
                    .iter()
                    .filter(|(_, agent)| call.holds(agent))
                    .map(|(trace, _)| trace)
                    .take(2)
                    .collect();
                match held.as_slice() {
                    [trace] => {
                        let trace = (*trace).clone();
                        waiting.remove(&trace);
                        partners.push(trace);
                        continue;
                    }
                    [] => {}
                    _ => continue,
                }
            }
            debug_assert_eq!(call.trace_id, trace_id);
            left.push(Waiting::Call(key.clone(), call.span_id.clone()));
            self.calls
                .entry(key)
                .or_default()
                .insert(call.span_id.clone(), call);
        }
        (partners, left)
    }

    fn release_first(&mut self) -> Option<Vec<H>> {
        let id = self.order.pop_front()?;
        let group = self.groups.remove(&id)?; // folded into another: nothing to release
        for key in &group.keys {
            if self.owner.get(key) == Some(&id) {
                self.owner.remove(key);
            }
        }
        self.held -= group.spans;
        for waiting in group.waiting {
            let (index, key, id) = match waiting {
                Waiting::Agent(key, id) => (None, key, id),
                Waiting::Call(key, id) => (Some(()), key, id),
            };
            match index {
                None => forget(&mut self.agents, &key, &id),
                Some(()) => forget(&mut self.calls, &key, &id),
            }
        }
        Some(group.traces)
    }
}

/// Drop a waiting entry (one a partner claimed meanwhile is gone already).
fn forget<V>(index: &mut FastMap<CallKey, FastMap<String, V>>, key: &CallKey, id: &str) {
    if let Some(entries) = index.get_mut(key) {
        entries.remove(id);
        if entries.is_empty() {
            index.remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrival(name: &'static str, keys: &[&str], spans: u64) -> Arrival<&'static str> {
        let mut all = vec![format!("trace:{name}")];
        all.extend(keys.iter().map(|k| k.to_string()));
        Arrival {
            handle: name,
            facts: Facts {
                trace_id: name.to_string(),
                keys: all,
                root: None,
                calls: Vec::new(),
                spans,
            },
        }
    }

    fn agent(trace: &str, start: i128, end: i128) -> AgentRoot {
        AgentRoot {
            trace_id: trace.into(),
            span_id: format!("{trace}-root"),
            service: "svc".into(),
            name: "researcher".into(),
            start,
            end,
        }
    }

    fn call(trace: &str, span: &str, start: i128, end: i128) -> ToolCall {
        ToolCall {
            trace_id: trace.into(),
            span_id: span.into(),
            service: "svc".into(),
            name: "researcher".into(),
            start,
            end,
        }
    }

    #[test]
    fn shared_keys_join_and_the_window_releases_in_order() {
        let mut joiner = Joiner::new(10);
        assert!(joiner.add(arrival("a", &["session.id:s"], 4)).is_empty());
        assert!(joiner.add(arrival("b", &[], 4)).is_empty());
        // c shares a's session: joins a's group, and the window (12 > 10) releases it.
        let out = joiner.add(arrival("c", &["session.id:s"], 4));
        assert_eq!(out, vec![vec!["a", "c"]]);
        assert_eq!(joiner.held(), 4);
        assert_eq!(joiner.flush(), vec![vec!["b"]]);
        assert_eq!(joiner.held(), 0);
    }

    #[test]
    fn a_trace_linking_two_groups_folds_them_into_the_earliest() {
        let mut joiner = Joiner::new(100);
        joiner.add(arrival("a", &[], 1));
        joiner.add(arrival("b", &[], 1));
        joiner.add(arrival("c", &["trace:b", "trace:a"], 1));
        // The later group (b) folded into a; d linking to b now lands in the joined group.
        joiner.add(arrival("d", &["trace:b"], 1));
        assert_eq!(joiner.flush(), vec![vec!["a", "b", "c", "d"]]);
    }

    #[test]
    fn a_released_group_no_longer_owns_its_keys() {
        let mut joiner = Joiner::new(1);
        assert_eq!(
            joiner.add(arrival("a", &["session.id:s"], 2)),
            vec![vec!["a"]]
        );
        assert_eq!(
            joiner.add(arrival("b", &["session.id:s"], 2)),
            vec![vec!["b"]]
        );
    }

    #[test]
    fn an_agent_trace_joins_the_one_call_that_fits_it_either_way_round() {
        let mut joiner = Joiner::new(100);
        let mut caller = arrival("caller", &[], 3);
        caller.facts.calls = vec![call("caller", "c1", 10, 50)];
        joiner.add(caller);
        let mut run = arrival("run", &[], 2);
        run.facts.root = Some(agent("run", 20, 40));
        joiner.add(run);
        assert_eq!(joiner.flush(), vec![vec!["caller", "run"]]);

        let mut joiner = Joiner::new(100);
        let mut run = arrival("run", &[], 2);
        run.facts.root = Some(agent("run", 20, 40));
        joiner.add(run);
        let mut caller = arrival("caller", &[], 3);
        caller.facts.calls = vec![call("caller", "c1", 10, 50)];
        joiner.add(caller);
        assert_eq!(joiner.flush(), vec![vec!["run", "caller"]]);
    }

    #[test]
    fn two_fitting_calls_join_nothing() {
        let mut joiner = Joiner::new(100);
        let mut caller = arrival("caller", &[], 3);
        caller.facts.calls = vec![call("caller", "c1", 10, 50), call("caller", "c2", 0, 60)];
        joiner.add(caller);
        let mut run = arrival("run", &[], 2);
        run.facts.root = Some(agent("run", 20, 40));
        joiner.add(run);
        assert_eq!(joiner.flush(), vec![vec!["caller"], vec!["run"]]);
    }

    #[test]
    fn waiting_entries_leave_with_their_group() {
        let mut joiner = Joiner::new(2);
        let mut caller = arrival("caller", &[], 3);
        caller.facts.calls = vec![call("caller", "c1", 10, 50)];
        assert_eq!(joiner.add(caller), vec![vec!["caller"]]);
        assert_eq!(joiner.waiting(), 0);
        let mut run = arrival("run", &[], 1);
        run.facts.root = Some(agent("run", 20, 40));
        assert!(joiner.add(run).is_empty());
        assert_eq!(joiner.waiting(), 1);
        assert_eq!(joiner.flush(), vec![vec!["run"]]);
        assert_eq!(joiner.waiting(), 0);
    }

    #[test]
    fn holds_needs_another_trace_the_same_service_and_name_and_the_time() {
        let c = call("t", "c", 10, 50);
        assert!(c.holds(&agent("u", 10, 50)));
        assert!(!c.holds(&agent("t", 20, 40)));
        assert!(!c.holds(&agent("u", 5, 40)));
        assert!(!c.holds(&agent("u", 20, 60)));
        assert!(!c.holds(&agent("u", 20, 0)));
        let mut other = agent("u", 20, 40);
        other.service = "other".into();
        assert!(!c.holds(&other));
    }

    fn decoded(
        span: u8,
        parent: Option<u8>,
        times: (u64, u64),
        attributes: &[(&str, model::AnyValue)],
        links: &[[u8; 16]],
    ) -> model::Span {
        let text = |value: &str| model::AnyValue::Str(value.into());
        model::Span {
            trace_id: [1; 16],
            span_id: [span; 8],
            parent_span_id: parent.map(|p| [p; 8]),
            name: "s".into(),
            kind: 0,
            start_ns: times.0,
            end_ns: times.1,
            status_code: 0,
            status_message: String::new(),
            attributes: attributes
                .iter()
                .map(|(key, value)| model::KeyValue {
                    key: (*key).into(),
                    value: value.clone(),
                })
                .collect(),
            events: Vec::new(),
            links: links
                .iter()
                .map(|trace| model::Link {
                    trace_id: trace.to_vec(),
                    span_id: vec![9; 8],
                    attributes: Vec::new(),
                    dropped_attributes_count: 0,
                })
                .collect(),
            resource: std::sync::Arc::new(model::Resource {
                attributes: vec![model::KeyValue {
                    key: "service.name".into(),
                    value: text("svc"),
                }],
            }),
            scope: std::sync::Arc::default(),
            dropped_attributes_count: 0,
            dropped_events_count: 0,
            dropped_links_count: 0,
            flags: 0,
        }
    }

    #[test]
    fn the_walk_reads_keys_the_agent_root_and_tool_calls_of_decoded_spans() {
        use model::AnyValue::{Int, Str};
        let s = |value: &str| Str(value.into());
        let (conv, op, tool) = (
            "gen_ai.conversation.id",
            "gen_ai.operation.name",
            "gen_ai.tool.name",
        );
        let spans = [
            decoded(
                0,
                None,
                (0, 1000),
                &[
                    (conv, s("c1")),
                    (op, s("invoke_agent")),
                    ("gen_ai.agent.id", s("")),
                    ("gen_ai.agent.name", s("a")),
                ],
                &[],
            ),
            // The same session id again: no second key; a link to itself and to trace 5.
            decoded(
                1,
                Some(0),
                (100, 900),
                &[(conv, s("c1")), (op, s("execute_tool")), (tool, s("t"))],
                &[[1; 16], [5; 16]],
            ),
            // The last of repeated keys counts; a tool name that is no string names nothing.
            decoded(
                2,
                Some(0),
                (5, 6),
                &[
                    (conv, s("c2")),
                    (conv, s("c3")),
                    ("session.id", s("")),
                    (op, s("execute_tool")),
                    (tool, Int(7)),
                ],
                &[],
            ),
        ];
        let spans: Vec<&model::Span> = spans.iter().collect();
        let trace = model::hex(&[1; 16]);
        let found = decoded_facts(&trace, &spans);
        let linked = format!("trace:{}", model::hex(&[5; 16]));
        assert_eq!(
            found.keys,
            vec![
                format!("trace:{trace}"),
                "gen_ai.conversation.id:c1".into(),
                linked,
                "gen_ai.conversation.id:c3".into()
            ]
        );
        let root = found
            .root
            .expect("one root, an agent span naming its agent");
        assert_eq!(
            (
                root.name.as_str(),
                root.service.as_str(),
                root.start,
                root.end
            ),
            ("a", "svc", 0, 1000)
        );
        assert_eq!(root.span_id, model::hex(&[0; 8]));
        assert_eq!(found.calls.len(), 1);
        assert_eq!(
            (found.calls[0].name.as_str(), found.calls[0].span_id.clone()),
            ("t", model::hex(&[1; 8]))
        );
        assert_eq!(found.spans, 3);
        // Two roots: no agent run; a root that links somewhere: none either.
        let other = decoded(3, None, (0, 1), &[], &[]);
        assert!(decoded_facts(&trace, &[spans[0], &other]).root.is_none());
        let linking = decoded(
            0,
            None,
            (0, 1000),
            &[(op, s("create_agent")), ("gen_ai.agent.name", s("a"))],
            &[[5; 16]],
        );
        assert!(decoded_facts(&trace, &[&linking]).root.is_none());
    }

    #[test]
    fn delegations_only_where_both_sides_are_unique() {
        let agents = [agent("a", 20, 30), agent("b", 20, 30), agent("c", 100, 110)];
        let calls = [call("x", "c1", 10, 40), call("x", "c2", 90, 120)];
        // a and b both fit c1 only: c1 is taken twice, nothing for them; c fits c2 alone.
        assert_eq!(delegations(&agents, &calls), vec![(2, 1)]);
    }
}
