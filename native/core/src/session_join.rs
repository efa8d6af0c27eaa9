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
use std::sync::Arc;

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
    /// `f` of what the walk reads of every span's attributes, each as `with_text_attr`
    /// reads it: its session ids ([`JoinAttr::SESSIONS`], in order), its tool name, then its
    /// operation name (read where the tool name is a non-empty text: `None` may stand for it
    /// elsewhere). A caller that can read them in one pass does (a decoded span's list).
    fn with_walk_texts<R>(&self, f: impl FnOnce(WalkTexts<'_>) -> R) -> Result<R, Self::Error> {
        let [first, second] = JoinAttr::SESSIONS;
        self.with_text_attr(first, move |conversation| {
            self.with_text_attr(second, move |session| {
                self.with_text_attr(JoinAttr::ToolName, move |tool| {
                    let sessions = [conversation, session];
                    if !tool.is_some_and(|name| !name.is_empty()) {
                        return Ok(f(WalkTexts {
                            sessions,
                            tool,
                            operation: None,
                        }));
                    }
                    self.with_text_attr(JoinAttr::OperationName, move |operation| {
                        f(WalkTexts {
                            sessions,
                            tool,
                            operation,
                        })
                    })
                })
            })
        })???
    }
    /// Whether it has no parent span id.
    fn is_root(&self) -> Result<bool, Self::Error>;
    /// Its span id (hex), in the one text that its [`ToolCall`] or [`AgentRoot`] and the
    /// window share.
    fn span_id(&self) -> Result<Arc<str>, Self::Error>;
    /// Its resource's `service.name` when that is a string, else `""`.
    fn service(&self) -> Result<String, Self::Error>;
    /// (start, end) in ns since the epoch.
    fn times(&self) -> Result<(i128, i128), Self::Error>;
}

/// The text attributes the walk reads of one span ([`JoinSpan::with_walk_texts`]).
#[derive(Debug, Clone, Copy)]
pub struct WalkTexts<'a> {
    pub sessions: [Option<&'a str>; 2],
    pub tool: Option<&'a str>,
    pub operation: Option<&'a str>,
}

/// What the window reads of one trace: its join keys (its own id as `trace:<id>`, the
/// traces its spans link to, its session ids as `<attribute>:<value>`), the agent run it
/// may be, the tool calls that may have run an agent traced apart, and its span count.
/// The trace id is one text shared with its root and calls (the window keeps it as well).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    pub trace_id: Arc<str>,
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
    let trace: Arc<str> = Arc::from(trace_id);
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
        let tool = span.with_walk_texts(|texts| {
            let sessions = JoinAttr::SESSIONS.into_iter().zip(&mut last_session);
            for ((attr, last), value) in sessions.zip(texts.sessions) {
                match value {
                    Some(value) if !value.is_empty() && last.as_deref() != Some(value) => {
                        *last = Some(value.to_owned());
                        keys.push(format!("{}:{value}", attr.key()));
                    }
                    _ => {}
                }
            }
            match texts.tool {
                Some(name) if !name.is_empty() && texts.operation == Some("execute_tool") => {
                    Some(name.to_owned())
                }
                _ => None,
            }
        })?;
        if let Some(name) = tool {
            let (start, end) = span.times()?;
            calls.push(ToolCall {
                trace_id: Arc::clone(&trace),
                span_id: span.span_id()?,
                service: span.service()?,
                name,
                start,
                end,
            });
        }
        if span.is_root()? {
            roots += 1;
            if roots == 1 {
                root = Some(span);
            }
        }
    }
    let root = match root {
        Some(root) if roots == 1 => agent_root(&trace, &root)?,
        _ => None,
    };
    Ok(Facts {
        trace_id: trace,
        keys,
        root,
        calls,
        spans: count,
    })
}

/// The trace as an agent's run started as a root, from its one root span: linking nowhere
/// (links join already), a GenAI agent span naming its agent.
fn agent_root<S: JoinSpan>(trace_id: &Arc<str>, root: &S) -> Result<Option<AgentRoot>, S::Error> {
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
        trace_id: Arc::clone(trace_id),
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
            model::with_hex(&link.trace_id, &mut f);
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

    /// One pass over the span's attributes for the four keys (each a key of its own
    /// length), the last of repeated keys kept: the walk searched the list once per key.
    fn with_walk_texts<R>(&self, f: impl FnOnce(WalkTexts<'_>) -> R) -> Result<R, Infallible> {
        const CONVERSATION: &str = JoinAttr::ConversationId.key();
        const SESSION: &str = JoinAttr::SessionId.key();
        const TOOL: &str = JoinAttr::ToolName.key();
        const OPERATION: &str = JoinAttr::OperationName.key();
        let mut found: [Option<&str>; 4] = [None; 4];
        for kv in &self.attributes {
            let at = match kv.key.as_str() {
                CONVERSATION => 0,
                SESSION => 1,
                TOOL => 2,
                OPERATION => 3,
                _ => continue,
            };
            found[at] = match &kv.value {
                model::AnyValue::Str(text) => Some(text),
                _ => None,
            };
        }
        let [conversation, session, tool, operation] = found;
        Ok(f(WalkTexts {
            sessions: [conversation, session],
            tool,
            operation,
        }))
    }

    fn is_root(&self) -> Result<bool, Infallible> {
        Ok(self.parent_span_id.is_none())
    }

    fn span_id(&self) -> Result<Arc<str>, Infallible> {
        Ok(model::with_hex(&self.span_id, |id| Arc::from(id)))
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
    pub trace_id: Arc<str>,
    pub span_id: Arc<str>,
    pub service: String,
    pub name: String,
    pub start: i128,
    pub end: i128,
}

/// A GenAI `execute_tool` span that names its tool and may have run an agent traced apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    pub trace_id: Arc<str>,
    pub span_id: Arc<str>,
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

/// Where a waiting tool call and the agent trace it may have run meet: the service and the
/// name (of the tool, of the agent), written `<service length>:<service><name>` so that no
/// two pairs write the same text. One text, not a pair of `String`s: a lookup writes it
/// into the window's buffer and searches by `&str`, and every entry filed under it shares
/// the map's own copy.
type CallKey = Arc<str>;

/// `key`'s text for `service` and `name`, written into `out` (cleared first). The length's
/// digits are written by hand: `write!` cost more than the lookup it served.
fn write_call_key(out: &mut String, service: &str, name: &str) {
    out.clear();
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut len = service.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (len % 10) as u8;
        len /= 10;
        if len == 0 {
            break;
        }
    }
    for &digit in &digits[at..] {
        out.push(char::from(digit));
    }
    out.push(':');
    out.push_str(service);
    out.push_str(name);
}

/// An agent root or a tool call waiting in the window, as [`Joiner`] files it under its
/// [`CallKey`]: what [`ToolCall::holds`] reads besides the service and name (which the key
/// is). `trace` is shared by every entry of one arrival.
#[derive(Debug)]
struct Held {
    trace: Arc<str>,
    start: i128,
    end: i128,
}

/// [`ToolCall::holds`] of the call `call` and the agent root `agent` filed under one key.
fn holds(call: &Held, agent: &Held) -> bool {
    agent.trace != call.trace && call.start <= agent.start && 0 < agent.end && agent.end <= call.end
}

/// Entries waiting for a partner: key -> id (a trace id for agent roots, a span id for tool
/// calls) -> entry.
type Filed = FastMap<CallKey, FastMap<Arc<str>, Held>>;

/// `index`'s entries under `key` (an empty map filed when there are none) and the key as
/// the index holds it.
fn filed<'a>(index: &'a mut Filed, key: &str) -> (CallKey, &'a mut FastMap<Arc<str>, Held>) {
    let key = match index.get_key_value(key) {
        Some((held, _)) => Arc::clone(held),
        None => Arc::from(key),
    };
    let entries = index.entry(Arc::clone(&key)).or_default();
    (key, entries)
}

/// An agent root or a tool call left waiting for a partner, to forget when its group
/// leaves: its key and id, shared with the index.
#[derive(Debug)]
enum Waiting {
    Agent(CallKey, Arc<str>),
    Call(CallKey, Arc<str>),
}

#[derive(Debug)]
struct Group<H> {
    traces: Vec<H>,
    /// The keys it owns (each shared with `Joiner::owner`).
    keys: FastSet<Arc<str>>,
    spans: u64,
    waiting: Vec<Waiting>,
}

/// The window: [`Joiner::add`] a trace, get the groups that leave it.
///
/// What it keeps of an arrival is copied from the arrival's [`Facts`], which it only
/// borrows: each key once (shared by `owner` and its group), a [`CallKey`] only when the
/// index holds none equal; the trace id and a waiting call's span id are the facts' own
/// texts, shared (the span id by the index and the group's `waiting`), not copied again.
#[derive(Debug)]
pub struct Joiner<H> {
    window: u64,
    /// Live groups by id; ids grow with creation, so the smallest is the earliest.
    groups: FastMap<u64, Group<H>>,
    order: VecDeque<u64>,
    next_id: u64,
    owner: FastMap<Arc<str>, u64>,
    held: u64,
    /// Agent traces no tool call has claimed: key -> trace id -> root.
    agents: Filed,
    /// Tool calls that claimed no agent trace: key -> span id -> call.
    calls: Filed,
    /// Where a [`CallKey`] is written to be looked up.
    key_text: String,
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
            key_text: String::new(),
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

    /// Let the trace `handle`, of which `facts` tell what ties it to others, into the
    /// window; the groups that leave it, in order.
    pub fn add(&mut self, handle: H, facts: &Facts) -> Vec<Vec<H>> {
        // The groups the arrival ties to, in first-seen order (the set beside the list: a
        // trace linking to thousands of traces searched the list per link).
        let mut found: Vec<u64> = Vec::new();
        let mut listed: FastSet<u64> = FastSet::new();
        for key in &facts.keys {
            if let Some(&group) = self.owner.get(key.as_str()) {
                if listed.insert(group) {
                    found.push(group);
                }
            }
        }
        let (partners, waiting) = self.delegation_partners(facts);
        for partner in partners {
            if let Some(&group) = self.owner.get(format!("trace:{partner}").as_str()) {
                if listed.insert(group) {
                    found.push(group);
                }
            }
        }
        // Only the keys whose owner changes are written: those of the groups folded into
        // the earliest and the arrival's own not owned yet. Re-owning every key of the group
        // on each arrival cost the square of its traces (20,000 one-span traces of one
        // session id: 209 s).
        let target = match found.iter().min() {
            Some(&earliest) => {
                for other in found.iter().filter(|&&g| g != earliest) {
                    if let Some(folded) = self.groups.remove(other) {
                        if let Some(group) = self.groups.get_mut(&earliest) {
                            group.traces.extend(folded.traces);
                            for key in &folded.keys {
                                self.owner.insert(Arc::clone(key), earliest);
                            }
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
            // Every key owned before belonged to a group found above, now the target.
            for key in &facts.keys {
                if !self.owner.contains_key(key.as_str()) {
                    let key: Arc<str> = Arc::from(key.as_str());
                    self.owner.insert(Arc::clone(&key), target);
                    group.keys.insert(key);
                }
            }
            group.spans += facts.spans;
            group.waiting.extend(waiting);
        }
        self.held += facts.spans;
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

    /// The traces in the window that the arriving trace (of `facts`) delegated to or was
    /// delegated by (an agent trace and the one tool call that fits it, neither claimed yet;
    /// ambiguous fits join nothing), and the entries it leaves waiting for a partner.
    fn delegation_partners(&mut self, facts: &Facts) -> (Vec<Arc<str>>, Vec<Waiting>) {
        let mut partners = Vec::new();
        let mut left = Vec::new();
        if facts.root.is_none() && facts.calls.is_empty() {
            return (partners, left);
        }
        let trace = Arc::clone(&facts.trace_id);
        if let Some(root) = &facts.root {
            let agent = Held {
                trace: Arc::clone(&trace),
                start: root.start,
                end: root.end,
            };
            write_call_key(&mut self.key_text, &root.service, &root.name);
            let claimable = self.calls.get_mut(self.key_text.as_str());
            // Two fits are as ambiguous as ten thousand: the search stops at the second (each
            // of 10,000 agent traces fitting 10,000 waiting calls took 51 s).
            let fits: Vec<(&Arc<str>, &Held)> = claimable
                .as_ref()
                .map(|calls| {
                    calls
                        .iter()
                        .filter(|(_, call)| holds(call, &agent))
                        .take(2)
                        .collect()
                })
                .unwrap_or_default();
            match fits.as_slice() {
                [(span_id, call)] => {
                    let (span_id, partner) = (Arc::clone(span_id), Arc::clone(&call.trace));
                    if let Some(claimable) = claimable {
                        claimable.remove(&span_id);
                    }
                    partners.push(partner);
                }
                [] => {
                    let (key, agents) = filed(&mut self.agents, &self.key_text);
                    left.push(Waiting::Agent(key, Arc::clone(&trace)));
                    agents.insert(Arc::clone(&trace), agent);
                }
                _ => {}
            }
        }
        for call in &facts.calls {
            debug_assert_eq!(call.trace_id, facts.trace_id);
            let held = Held {
                trace: Arc::clone(&trace),
                start: call.start,
                end: call.end,
            };
            write_call_key(&mut self.key_text, &call.service, &call.name);
            if let Some(waiting) = self.agents.get_mut(self.key_text.as_str()) {
                let fits: Vec<&Arc<str>> = waiting
                    .iter()
                    .filter(|(_, agent)| holds(&held, agent))
                    .map(|(trace, _)| trace)
                    .take(2)
                    .collect();
                match fits.as_slice() {
                    [agent_trace] => {
                        let agent_trace = Arc::clone(agent_trace);
                        waiting.remove(&agent_trace);
                        partners.push(agent_trace);
                        continue;
                    }
                    [] => {}
                    _ => continue,
                }
            }
            let (key, calls) = filed(&mut self.calls, &self.key_text);
            left.push(Waiting::Call(key, Arc::clone(&call.span_id)));
            calls.insert(Arc::clone(&call.span_id), held);
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
            match waiting {
                Waiting::Agent(key, id) => forget(&mut self.agents, &key, &id),
                Waiting::Call(key, id) => forget(&mut self.calls, &key, &id),
            }
        }
        Some(group.traces)
    }
}

/// Drop a waiting entry (one a partner claimed meanwhile is gone already).
fn forget(index: &mut Filed, key: &str, id: &str) {
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

    /// One trace entering the window: its handle and what ties it to others.
    struct Arrival<H> {
        handle: H,
        facts: Facts,
    }

    impl<H> Joiner<H> {
        fn enter(&mut self, arrival: Arrival<H>) -> Vec<Vec<H>> {
            self.add(arrival.handle, &arrival.facts)
        }
    }

    fn arrival(name: &'static str, keys: &[&str], spans: u64) -> Arrival<&'static str> {
        let mut all = vec![format!("trace:{name}")];
        all.extend(keys.iter().map(|k| k.to_string()));
        Arrival {
            handle: name,
            facts: Facts {
                trace_id: name.into(),
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
            span_id: format!("{trace}-root").into(),
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
        assert!(joiner.enter(arrival("a", &["session.id:s"], 4)).is_empty());
        assert!(joiner.enter(arrival("b", &[], 4)).is_empty());
        // c shares a's session: joins a's group, and the window (12 > 10) releases it.
        let out = joiner.enter(arrival("c", &["session.id:s"], 4));
        assert_eq!(out, vec![vec!["a", "c"]]);
        assert_eq!(joiner.held(), 4);
        assert_eq!(joiner.flush(), vec![vec!["b"]]);
        assert_eq!(joiner.held(), 0);
    }

    #[test]
    fn a_trace_linking_two_groups_folds_them_into_the_earliest() {
        let mut joiner = Joiner::new(100);
        joiner.enter(arrival("a", &[], 1));
        joiner.enter(arrival("b", &[], 1));
        joiner.enter(arrival("c", &["trace:b", "trace:a"], 1));
        // The later group (b) folded into a; d linking to b now lands in the joined group.
        joiner.enter(arrival("d", &["trace:b"], 1));
        assert_eq!(joiner.flush(), vec![vec!["a", "b", "c", "d"]]);
    }

    #[test]
    fn a_released_group_no_longer_owns_its_keys() {
        let mut joiner = Joiner::new(1);
        assert_eq!(
            joiner.enter(arrival("a", &["session.id:s"], 2)),
            vec![vec!["a"]]
        );
        assert_eq!(
            joiner.enter(arrival("b", &["session.id:s"], 2)),
            vec![vec!["b"]]
        );
    }

    #[test]
    fn an_agent_trace_joins_the_one_call_that_fits_it_either_way_round() {
        let mut joiner = Joiner::new(100);
        let mut caller = arrival("caller", &[], 3);
        caller.facts.calls = vec![call("caller", "c1", 10, 50)];
        joiner.enter(caller);
        let mut run = arrival("run", &[], 2);
        run.facts.root = Some(agent("run", 20, 40));
        joiner.enter(run);
        assert_eq!(joiner.flush(), vec![vec!["caller", "run"]]);

        let mut joiner = Joiner::new(100);
        let mut run = arrival("run", &[], 2);
        run.facts.root = Some(agent("run", 20, 40));
        joiner.enter(run);
        let mut caller = arrival("caller", &[], 3);
        caller.facts.calls = vec![call("caller", "c1", 10, 50)];
        joiner.enter(caller);
        assert_eq!(joiner.flush(), vec![vec!["run", "caller"]]);
    }

    #[test]
    fn a_call_meets_only_an_agent_of_its_own_service_and_name() {
        // The window files both under one text per (service, name): "ab" + "c" and
        // "a" + "bc" must not read alike.
        let mut joiner = Joiner::new(100);
        let mut caller = arrival("caller", &[], 3);
        let mut c1 = call("caller", "c1", 10, 50);
        (c1.service, c1.name) = ("ab".into(), "c".into());
        caller.facts.calls = vec![c1];
        joiner.enter(caller);
        let mut run = arrival("run", &[], 2);
        let mut root = agent("run", 20, 40);
        (root.service, root.name) = ("a".into(), "bc".into());
        run.facts.root = Some(root);
        joiner.enter(run);
        assert_eq!(joiner.waiting(), 2);
        assert_eq!(joiner.flush(), vec![vec!["caller"], vec!["run"]]);
        let mut key = String::new();
        write_call_key(&mut key, "ab", "c");
        let first = key.clone();
        write_call_key(&mut key, "a", "bc");
        assert_ne!(first, key);
        assert_eq!((first.as_str(), key.as_str()), ("2:abc", "1:abc"));
        write_call_key(&mut key, &"s".repeat(120), "t");
        assert!(key.starts_with("120:ss") && key.ends_with("st"));
    }

    #[test]
    fn two_fitting_calls_join_nothing() {
        let mut joiner = Joiner::new(100);
        let mut caller = arrival("caller", &[], 3);
        caller.facts.calls = vec![call("caller", "c1", 10, 50), call("caller", "c2", 0, 60)];
        joiner.enter(caller);
        let mut run = arrival("run", &[], 2);
        run.facts.root = Some(agent("run", 20, 40));
        joiner.enter(run);
        assert_eq!(joiner.flush(), vec![vec!["caller"], vec!["run"]]);
    }

    #[test]
    fn waiting_entries_leave_with_their_group() {
        let mut joiner = Joiner::new(2);
        let mut caller = arrival("caller", &[], 3);
        caller.facts.calls = vec![call("caller", "c1", 10, 50)];
        assert_eq!(joiner.enter(caller), vec![vec!["caller"]]);
        assert_eq!(joiner.waiting(), 0);
        let mut run = arrival("run", &[], 1);
        run.facts.root = Some(agent("run", 20, 40));
        assert!(joiner.enter(run).is_empty());
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
        assert_eq!(*root.span_id, model::hex(&[0; 8]));
        assert_eq!(found.calls.len(), 1);
        assert_eq!(
            (
                found.calls[0].name.as_str(),
                found.calls[0].span_id.to_string()
            ),
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
