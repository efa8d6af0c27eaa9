//! The usual OTLP/JSON body read straight from its tokens into [`Span`]s and [`LogRecord`]s,
//! with no tree.
//!
//! Why: parsed into a tree first, every `{key, value}` attribute and its one-member
//! `AnyValue` object was two objects made in the arena (their members gathered, checked for
//! repeated keys and copied) and then looked up again by name; that was most of decoding a
//! body. Here `resourceSpans` -> `scopeSpans` -> `spans`, `resourceLogs` -> `scopeLogs` ->
//! `logRecords` and the records' attribute lists are read from the tokens as they come,
//! compact as exporters write them or with whitespace between the tokens (pretty-printed, as
//! most captured files are: the same keys matched by the same fixed bytes, whitespace
//! skipped between them). What is rarer or carries more rules (a resource, a scope, a
//! status, events, links, a log record's body, a record's scalar members) is still read as a
//! small tree and handed to the tree's own readers ([`super::resource`],
//! [`super::scope_of`], [`super::span_of`], [`super::log_record_of`],
//! [`super::scalar_variant`]), so each rule has one implementation. A JSON array of requests
//! ([`super::decode_many`]) is read item by item the same way.
//!
//! This reader only accepts. Anything it does not recognise inside an element of
//! `resourceSpans` or `resourceLogs` (a repeated structural key, an `AnyValue` of more than
//! one member, nesting past its bound, a snake_case list name) and anything that would make
//! a problem or reject a record makes it give up on that element, which is read again from
//! its start as a tree by the tree's rules (so a body with a problem in its last element
//! costs that element twice, not the body); an item of an array of requests it does not take
//! is read again as a tree the same way; anything else (a syntax error, metrics, an element
//! that is not JSON the tree reads) makes it give up on the body, which [`super::decode`]
//! then parses into a tree and reads as before. Every message still comes from the tree's
//! rules, and a body read here decodes to exactly the [`Batch`] the tree would give (the
//! tests compare both on every tolerant form, compact and pretty-printed, and on every JSON
//! file of the test data).

use std::sync::Arc;

use super::value::{has_repeated_key, read_tokens, Tokens, J};
use super::{
    decode_logs, decode_spans, decode_value, into_attributes, log_record_of, resource,
    scalar_variant, scope_of, span_of, Fallible, LogKey, LogMembers, MemberKey, SpanAt, SpanKey,
    SpanMembers, MAX_ANY_VALUE_DEPTH,
};
use crate::model::{
    AnyValue, Attributes, Batch, Interner, KeyValue, LogRecord, Problems, Resource, Scope, Span,
    Text,
};
use bumpalo::Bump;

/// Nesting this reader follows (well under the fast parser's own bound); deeper attribute
/// values make it give up, and the tree reads them.
const MAX_DEPTH: usize = 96;

/// Containers around a span object: the request, `resourceSpans` and its element,
/// `scopeSpans` and its element, `spans`.
const SPAN_DEPTH: usize = 6;

/// The body's [`Batch`] when it is a `resourceSpans` request (its elements read here or,
/// one by one, as trees); `None` leaves the body to the tree.
pub(super) fn decode<'a>(text: &'a str, bump: &'a Bump) -> Option<Batch> {
    decode_counted(text, bump).map(|(batch, _)| batch)
}

/// What [`decode`] read the slow way: elements of `resourceSpans` read again as trees, and
/// span attributes read member by member rather than by their fixed bytes. The tests hold
/// the usual bodies, compact or pretty-printed, to none of either: a reader that gave up
/// on them would still decode them right, only slower.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Counts {
    given_up: usize,
    generic: usize,
}

/// [`decode`] with what it read the slow way.
fn decode_counted<'a>(text: &'a str, bump: &'a Bump) -> Option<(Batch, Counts)> {
    read_tokens(text, bump, |tokens| {
        let read = request(tokens, text.len())?;
        tokens.at_end().then_some(read)
    })
}

/// [`super::decode_many`]'s items: each request of a JSON array read here, else (an item
/// this reader leaves to the tree) read again from its start as a tree and decoded by the
/// tree's rules; a document that is not an array is one request, read as [`decode`] reads
/// it. `None` leaves the document to the tree (not JSON the tree reads, or a single
/// request this reader does not take).
///
/// Why: some tools dump a list of export bodies, most often pretty-printed; parsed whole
/// into one tree, every attribute of every item was made as objects first.
pub(super) fn decode_many<'a>(text: &'a str, bump: &'a Bump) -> Option<Vec<Result<Batch, String>>> {
    read_tokens(text, bump, |tokens| {
        if tokens.peek()? != b'[' {
            let (batch, _) = request(tokens, text.len())?;
            return tokens.at_end().then(|| vec![Ok(batch)]);
        }
        let mut items = Vec::new();
        let start = tokens.mark();
        tokens.elements(|tokens| {
            let mark = tokens.mark();
            // The items read so far say how large one is (the interner's table is sized by it).
            let size = match items.len() {
                0 => text.len(),
                n => (mark - start) / n,
            };
            if let Some((batch, _)) = request(tokens, size) {
                items.push(Ok(batch));
                return Some(());
            }
            tokens.rewind(mark);
            items.push(decode_value(&tokens.value(1)?));
            Some(())
        })?;
        tokens.at_end().then_some(items)
    })
}

/// One request object at the cursor, about `size` bytes, with what was read the slow way;
/// `None` when it is not one this reader takes (the cursor is then anywhere in it).
fn request<'a>(tokens: &mut Tokens<'a, '_>, size: usize) -> Option<(Batch, Counts)> {
    let mut reader = Reader {
        texts: Interner::for_body(size),
        batch: Batch::default(),
        logs: Batch::default(),
        pairs: Vec::new(),
        no_resource: Arc::default(),
        no_scope: Arc::default(),
        counts: Counts::default(),
    };
    let (mut spans, mut logs) = (false, false);
    tokens.members(|tokens, key| match key {
        "resourceSpans" if !spans => {
            spans = true;
            reader.resources::<Spans>(tokens)
        }
        "resourceLogs" if !logs => {
            logs = true;
            reader.resources::<Logs>(tokens)
        }
        "resourceSpans" | "resource_spans" | "resourceLogs" | "resource_logs"
        | "resourceMetrics" | "resource_metrics" => None,
        _ => tokens.value(1).map(drop),
    })?;
    if !(spans || logs) {
        return None;
    }
    // The tree reads the spans first: the logs' problems come after theirs.
    let (mut batch, logs) = (reader.batch, reader.logs);
    batch.logs = logs.logs;
    batch.rejected += logs.rejected;
    for message in logs.problems.listed {
        batch.problems.push(message);
    }
    batch.problems.omitted += logs.problems.omitted;
    Some((batch, reader.counts))
}

struct Reader<'a> {
    texts: Interner<'a>,
    /// The spans and their problems.
    batch: Batch,
    /// The log records and their problems (kept apart until the end: the tree lists the
    /// spans' problems first, wherever `resourceLogs` stands in the request).
    logs: Batch,
    /// A span's attributes while they are read (kept from span to span, so a list is
    /// allocated once, at its final size).
    pairs: Vec<KeyValue>,
    /// What the spans of an element hold until its resource and scope are read (either may
    /// come after the spans).
    no_resource: Arc<Resource>,
    no_scope: Arc<Scope>,
    counts: Counts,
}

/// What the walk of `resourceSpans` and the walk of `resourceLogs` differ in: the list
/// keys, where the records go, how one record is read, and the tree's reader of an element
/// given up on. One walk ([`Reader::resource_or_tree`]) serves both, monomorphised for each
/// so the keys stay constants.
trait Signal<'a> {
    type Record;
    /// The camelCase list of scopes in an element (`scopeSpans`) and its snake_case
    /// spelling, left to the tree.
    const SCOPES: &'static str;
    const SCOPES_SNAKE: &'static str;
    /// The camelCase list of records in a scope's element (`spans`) and its snake_case
    /// spelling, left to the tree.
    const RECORDS: &'static str;
    const RECORDS_SNAKE: &'static str;
    /// The reader's list of this signal's records (in `batch` for spans, `logs` for logs).
    fn records<'r>(reader: &'r mut Reader<'a>) -> &'r mut Vec<Self::Record>;
    /// A record's resource and scope, set once its element's are read.
    fn placed(record: &mut Self::Record) -> (&mut Arc<Resource>, &mut Arc<Scope>);
    /// One record object read from the tokens.
    fn read(reader: &mut Reader<'a>, tokens: &mut Tokens<'a, '_>) -> Option<Self::Record>;
    /// The tree's reader, on element `index` given up on here.
    fn tree(reader: &mut Reader<'a>, element: &J<'a>, index: usize);
}

/// A [`Signal`] and its one implementation, from what tells it apart: the record type, its
/// batch and list in [`Reader`], the reader of one record, the tree's reader of an element
/// and the keys (scopes, scopes in snake_case, records, records in snake_case).
macro_rules! signal {
    ($doc:literal, $name:ident, $record:ty, $batch:ident.$list:ident, $read:ident, $tree:ident,
     [$scopes:literal, $scopes_snake:literal, $records:literal, $records_snake:literal]) => {
        #[doc = $doc]
        struct $name;

        impl<'a> Signal<'a> for $name {
            type Record = $record;
            const SCOPES: &'static str = $scopes;
            const SCOPES_SNAKE: &'static str = $scopes_snake;
            const RECORDS: &'static str = $records;
            const RECORDS_SNAKE: &'static str = $records_snake;
            fn records<'r>(reader: &'r mut Reader<'a>) -> &'r mut Vec<$record> {
                &mut reader.$batch.$list
            }
            fn placed(record: &mut $record) -> (&mut Arc<Resource>, &mut Arc<Scope>) {
                (&mut record.resource, &mut record.scope)
            }
            fn read(reader: &mut Reader<'a>, tokens: &mut Tokens<'a, '_>) -> Option<$record> {
                reader.$read(tokens)
            }
            fn tree(reader: &mut Reader<'a>, element: &J<'a>, index: usize) {
                let slice = std::slice::from_ref(element);
                $tree(slice, index, &mut reader.$batch, &mut reader.texts);
            }
        }
    };
}

signal!(
    "`resourceSpans` -> `scopeSpans` -> `spans`.",
    Spans,
    Span,
    batch.spans,
    span,
    decode_spans,
    ["scopeSpans", "scope_spans", "spans", "spans"]
);
signal!(
    "`resourceLogs` -> `scopeLogs` -> `logRecords`.",
    Logs,
    LogRecord,
    logs.logs,
    log_record,
    decode_logs,
    ["scopeLogs", "scope_logs", "logRecords", "log_records"]
);

impl<'a> Reader<'a> {
    /// The elements of `resourceSpans` or `resourceLogs`, each read by
    /// [`Reader::resource_or_tree`].
    fn resources<S: Signal<'a>>(&mut self, tokens: &mut Tokens<'a, '_>) -> Option<()> {
        let mut index = 0;
        tokens.elements(|tokens| {
            self.resource_or_tree::<S>(tokens, index)?;
            index += 1;
            Some(())
        })
    }

    /// Element `index` of `resourceSpans` or `resourceLogs`: read here, else (anything this
    /// reader leaves to the tree) read again from its start as a tree by the tree's own
    /// rules, problems and rejections included, so that what one element holds costs only
    /// that element's second reading; `None` when it is not even JSON the tree reads (the
    /// body is left to the tree, which words the error).
    fn resource_or_tree<S: Signal<'a>>(
        &mut self,
        tokens: &mut Tokens<'a, '_>,
        index: usize,
    ) -> Option<()> {
        let mark = tokens.mark();
        let kept = S::records(self).len();
        if self.resource_element::<S>(tokens).is_some() {
            return Some(());
        }
        S::records(self).truncate(kept);
        self.counts.given_up += 1;
        tokens.rewind(mark);
        let element = tokens.value(2)?;
        S::tree(self, &element, index);
        Some(())
    }

    /// One element of `resourceSpans` or `resourceLogs`: its records, then its resource set
    /// on them.
    fn resource_element<S: Signal<'a>>(&mut self, tokens: &mut Tokens<'a, '_>) -> Option<()> {
        let first = S::records(self).len();
        let mut res: Option<J<'a>> = None;
        let mut scopes = false;
        tokens.members(|tokens, key| {
            if key == "resource" && res.is_none() {
                res = Some(tokens.value(3)?);
                Some(())
            } else if key == S::SCOPES && !scopes {
                scopes = true;
                tokens.elements(|tokens| self.scope_element::<S>(tokens))
            } else if key == "resource" || key == S::SCOPES || key == S::SCOPES_SNAKE {
                None
            } else {
                tokens.value(3).map(drop)
            }
        })?;
        let mut problems = Problems::default();
        let res = res.filter(|res| !matches!(res, J::Null));
        let res = resource(res.as_ref(), "", &mut problems, &mut self.texts).ok()?;
        if problems.total() != 0 {
            return None;
        }
        for record in &mut S::records(self)[first..] {
            *S::placed(record).0 = Arc::clone(&res);
        }
        Some(())
    }

    /// One element of `scopeSpans` or `scopeLogs`: its records, then its scope set on them.
    fn scope_element<S: Signal<'a>>(&mut self, tokens: &mut Tokens<'a, '_>) -> Option<()> {
        let first = S::records(self).len();
        let mut scope: Option<J<'a>> = None;
        let mut records = false;
        tokens.members(|tokens, key| {
            if key == "scope" && scope.is_none() {
                scope = Some(tokens.value(5)?);
                Some(())
            } else if key == S::RECORDS && !records {
                records = true;
                tokens.elements(|tokens| {
                    let record = S::read(self, tokens)?;
                    S::records(self).push(record);
                    Some(())
                })
            } else if key == "scope" || key == S::RECORDS || key == S::RECORDS_SNAKE {
                None
            } else {
                tokens.value(5).map(drop)
            }
        })?;
        let scope = scope_of(scope.as_ref());
        for record in &mut S::records(self)[first..] {
            *S::placed(record).1 = Arc::clone(&scope);
        }
        Some(())
    }

    /// A log record object: its attribute list read here, its other members as small
    /// trees handed to [`log_record_of`].
    fn log_record(&mut self, tokens: &mut Tokens<'a, '_>) -> Option<LogRecord> {
        let mut members = LogMembers::new();
        let mut read: Option<Attributes> = None;
        tokens.members(|tokens, key| {
            match LogKey::of(key) {
                Some(LogKey::Attributes) => {
                    if read.is_some() || members.has(LogKey::Attributes) {
                        return None; // repeated: the tree keeps the last one
                    }
                    if tokens.peek()? == b'[' {
                        read = Some(self.attribute_list(tokens)?);
                    } else {
                        members.found[LogKey::Attributes.at()] =
                            Some(tokens.value(SPAN_DEPTH + 1)?);
                    }
                }
                // A repeated member keeps its last value, as the tree's object does.
                Some(at) => members.found[at.at()] = Some(tokens.value(SPAN_DEPTH + 1)?),
                None => {
                    tokens.value(SPAN_DEPTH + 1)?;
                }
            }
            Some(())
        })?;
        self.record_of(&members, read, log_record_of)
    }

    /// A span object: its attribute list read here, its other members as small trees
    /// handed to [`span_of`].
    fn span(&mut self, tokens: &mut Tokens<'a, '_>) -> Option<Span> {
        let mut members = SpanMembers::new();
        let values = &mut members.found;
        let mut read: Option<Attributes> = None;
        if !tokens.eat(b'{') {
            return None;
        }
        if !tokens.eat(b'}') {
            loop {
                let key = match span_key(tokens) {
                    Some(key) => Some(key),
                    None => {
                        let key = tokens.string()?;
                        if !tokens.eat(b':') {
                            return None;
                        }
                        SpanKey::of(key)
                    }
                };
                match key {
                    Some(SpanKey::Attributes) => {
                        if read.is_some() || values[SpanKey::Attributes as usize].is_some() {
                            return None; // repeated: the tree keeps the last one
                        }
                        if tokens.peek()? == b'[' {
                            read = Some(self.attribute_list(tokens)?);
                        } else {
                            values[SpanKey::Attributes as usize] =
                                Some(tokens.value(SPAN_DEPTH + 1)?);
                        }
                    }
                    // A repeated member keeps its last value, as the tree's object does.
                    Some(at) => values[at as usize] = Some(tokens.value(SPAN_DEPTH + 1)?),
                    None => {
                        tokens.value(SPAN_DEPTH + 1)?;
                    }
                }
                if !tokens.eat(b',') {
                    if !tokens.eat(b'}') {
                        return None;
                    }
                    break;
                }
            }
        }
        self.record_of(&members, read, span_of)
    }

    /// The record the tree's reader (`of`: [`span_of`], [`log_record_of`]) builds from the
    /// members read here, kept only when it makes no problem (one that does is left to the
    /// tree, which words it where it stands).
    fn record_of<M, R>(
        &mut self,
        members: &M,
        read: Option<Attributes>,
        of: impl FnOnce(
            &M,
            Option<Attributes>,
            SpanAt<'_>,
            &Arc<Resource>,
            &Arc<Scope>,
            &mut Problems,
            &mut Interner<'a>,
        ) -> Fallible<R>,
    ) -> Option<R> {
        let at = SpanAt {
            where_: "",
            index: 0,
        };
        let mut problems = Problems::default();
        let record = of(
            members,
            read,
            at,
            &self.no_resource,
            &self.no_scope,
            &mut problems,
            &mut self.texts,
        )
        .ok()?;
        (problems.total() == 0).then_some(record)
    }

    /// A span's or log record's `attributes` list (a repeated key keeps its first position
    /// and last value, as the tree's reader does).
    fn attribute_list(&mut self, tokens: &mut Tokens<'a, '_>) -> Option<Attributes> {
        let mut pairs = std::mem::take(&mut self.pairs);
        pairs.clear();
        let read = tokens.elements(|tokens| {
            let (key, value) =
                attribute(tokens, SPAN_DEPTH + 2, &mut self.texts, &mut self.counts)?;
            pairs.push(KeyValue { key, value });
            Some(())
        });
        let attributes = read.map(|()| {
            if repeats_a_key(&pairs) {
                into_attributes(pairs.drain(..).map(|kv| (kv.key, kv.value)).collect())
            } else {
                // The usual list: moved once into its own allocation, at its final size,
                // by one copy of its bytes (`append`), where moving it entry by entry
                // cost ~17 instructions an entry.
                let mut attributes = Vec::with_capacity(pairs.len());
                attributes.append(&mut pairs);
                attributes
            }
        });
        self.pairs = pairs;
        attributes
    }
}

/// Whether a key of an attribute list the reader made repeats, told by the keys' addresses:
/// every key comes from the reader's one [`Interner`], which makes a single text of each
/// distinct key of up to [`Interner::MAX_SHARED`] bytes, so two such keys are equal exactly
/// when they are the same allocation. A longer list, or one with a longer key (made apart
/// each time), is compared by content ([`has_repeated_key`]).
///
/// Why: by content (a tag of each key's length and last byte, equal tags then compared) a
/// span's dozen keys cost ~470 instructions (18.6 M on data-2000's OTLP/JSON decode); an
/// address is a word already at hand. Each address sets one bit of a word, and only a key
/// whose bit an earlier key set is looked for among the keys before it.
fn repeats_a_key(pairs: &[KeyValue]) -> bool {
    /// Lists up to this long are told by addresses (a colliding bit costs a scan of the
    /// keys before); longer ones by content, which indexes a large list.
    const BY_ADDRESS: usize = 16;
    /// Spreads an address over the word's bits (Fibonacci hashing: the top six bits of the
    /// product).
    const MIX: u64 = 0x9E37_79B9_7F4A_7C15;
    let by_content = || {
        has_repeated_key(
            &pairs
                .iter()
                .map(|kv| (kv.key.as_str(), ()))
                .collect::<Vec<_>>(),
        )
    };
    if pairs.len() > BY_ADDRESS {
        return by_content();
    }
    let mut seen = 0u64;
    for (at, kv) in pairs.iter().enumerate() {
        if kv.key.len() > Interner::MAX_SHARED {
            return by_content();
        }
        let bit = 1u64 << ((kv.key.as_ptr() as u64).wrapping_mul(MIX) >> 58);
        if seen & bit != 0
            && pairs[..at]
                .iter()
                .any(|earlier| Text::ptr_eq(&earlier.key, &kv.key))
        {
            return true;
        }
        seen |= bit;
    }
    false
}

/// The key and colon of a span member at the cursor (past whitespace) when they are a
/// camelCase key of [`SpanKey`] written as exporters and pretty-printers write it
/// (`"traceId":`, no escape, the colon right after the key), told by its first letter and
/// read by its fixed bytes; `None` leaves the key unread, for the generic read (any other
/// spelling, snake_case, an unknown member).
///
/// Why: read as a string and then matched by name, each of a span's nine or so keys was a
/// scan for its closing quote and a length switch with a `memcmp` call.
#[inline(always)]
fn span_key(tokens: &mut Tokens<'_, '_>) -> Option<SpanKey> {
    if tokens.peek()? != b'"' {
        return None;
    }
    // Each literal of a constant length, so the compare is a few loads, not a call.
    Some(match tokens.byte_ahead(1)? {
        b't' if tokens.literal(b"\"traceId\":") => SpanKey::TraceId,
        b's' if tokens.literal(b"\"spanId\":") => SpanKey::SpanId,
        b's' if tokens.literal(b"\"startTimeUnixNano\":") => SpanKey::StartTimeUnixNano,
        b's' if tokens.literal(b"\"status\":") => SpanKey::Status,
        b'p' if tokens.literal(b"\"parentSpanId\":") => SpanKey::ParentSpanId,
        b'n' if tokens.literal(b"\"name\":") => SpanKey::Name,
        b'k' if tokens.literal(b"\"kind\":") => SpanKey::Kind,
        b'e' if tokens.literal(b"\"endTimeUnixNano\":") => SpanKey::EndTimeUnixNano,
        b'e' if tokens.literal(b"\"events\":") => SpanKey::Events,
        b'a' if tokens.literal(b"\"attributes\":") => SpanKey::Attributes,
        b'l' if tokens.literal(b"\"links\":") => SpanKey::Links,
        _ => return None,
    })
}

/// An attribute of a span: in its usual spelling, compact, else spaced, else member by
/// member.
#[inline(always)]
fn attribute<'a>(
    tokens: &mut Tokens<'a, '_>,
    depth: usize,
    texts: &mut Interner<'a>,
    counts: &mut Counts,
) -> Option<(Text, AnyValue)> {
    let mark = tokens.mark();
    if let Some(pair) = usual_attribute::<false>(tokens, depth, texts) {
        return Some(pair);
    }
    tokens.rewind(mark);
    attribute_not_compact(tokens, depth, texts, counts)
}

/// [`attribute`] past its compact spelling, out of the compact bodies' way.
#[inline(never)]
fn attribute_not_compact<'a>(
    tokens: &mut Tokens<'a, '_>,
    depth: usize,
    texts: &mut Interner<'a>,
    counts: &mut Counts,
) -> Option<(Text, AnyValue)> {
    let mark = tokens.mark();
    if let Some(pair) = usual_attribute::<true>(tokens, depth, texts) {
        return Some(pair);
    }
    tokens.rewind(mark);
    counts.generic += 1;
    key_value(tokens, depth, 0, texts)
}

/// An attribute spelled as OTLP exporters write one, `{"key":"…","value":{"<variant>":…}}`
/// with a scalar variant (or an array or kvlist), compact or with whitespace between its
/// tokens (pretty-printed), read by its fixed bytes rather than member by member (most of a
/// body's objects are these); `None` when it is spelled otherwise, and the caller reads it
/// again from its start.
///
/// `SPACED` reads it with whitespace between its tokens ([`Tokens::literal_spaced`]): read
/// first as compact, by exact compares alone, the compact bodies exporters write pay
/// nothing for the pretty ones.
#[inline(always)]
fn usual_attribute<'a, const SPACED: bool>(
    tokens: &mut Tokens<'a, '_>,
    depth: usize,
    texts: &mut Interner<'a>,
) -> Option<(Text, AnyValue)> {
    let spaced = SPACED;
    if !literal(tokens, spaced, b"{\"key\":\"") {
        return None;
    }
    let key = tokens.string_rest()?;
    // Most values are strings: their variant's key read with the bytes before it.
    if literal(tokens, spaced, b",\"value\":{\"stringValue\":\"") {
        let value = AnyValue::Str(tokens.string_text(texts)?);
        if !literal(tokens, spaced, b"}}") {
            return None;
        }
        return Some((texts.text(key), value));
    }
    if !literal(tokens, spaced, b",\"value\":{\"") {
        return None;
    }
    let variant = tokens.string_rest()?;
    if !literal(tokens, spaced, b":") {
        return None;
    }
    let next = if spaced {
        tokens.peek()
    } else {
        tokens.next_byte()
    };
    let value = match next? {
        // An array or kvlist read here too (as [`any_value`] would), not from the start.
        b'{' => {
            let is_array = match variant {
                "arrayValue" => true,
                "kvlistValue" => false,
                _ => return None,
            };
            if depth + 1 >= MAX_DEPTH {
                return None;
            }
            let value = list_value(tokens, is_array, depth + 2, 1, texts)?;
            if !literal(tokens, spaced, b"}}") {
                return None;
            }
            value
        }
        b'[' | b'n' => return None,
        _ => {
            let x = tokens.value(depth + 2)?;
            if !literal(tokens, spaced, b"}}") {
                return None;
            }
            match (variant, x) {
                ("stringValue", J::Str(s)) => AnyValue::Str(texts.text(s)),
                (variant, x) => scalar_variant(variant, &x, texts)?.ok()?,
            }
        }
    };
    Some((texts.text(key), value))
}

/// `bytes` at the cursor, compact or (`spaced`) with whitespace between its tokens.
#[inline(always)]
fn literal(tokens: &mut Tokens<'_, '_>, spaced: bool, bytes: &'static [u8]) -> bool {
    if spaced {
        tokens.literal_spaced(bytes)
    } else {
        tokens.literal(bytes)
    }
}

/// A `{key, value}` object at `depth`, its value `nested` arrays/kvlists deep.
fn key_value<'a>(
    tokens: &mut Tokens<'a, '_>,
    depth: usize,
    nested: usize,
    texts: &mut Interner<'a>,
) -> Option<(Text, AnyValue)> {
    let mut key: Option<&'a str> = None;
    let mut value: Option<AnyValue> = None;
    tokens.members(|tokens, name| {
        match name {
            "key" if key.is_none() => key = Some(tokens.string()?),
            "value" if value.is_none() => {
                value = Some(if tokens.peek()? == b'{' {
                    any_value(tokens, depth + 1, nested, texts)?
                } else {
                    match tokens.value(depth + 1)? {
                        J::Null => AnyValue::Empty,
                        _ => return None,
                    }
                })
            }
            "key" | "value" => return None,
            _ => {
                tokens.value(depth + 1)?;
            }
        }
        Some(())
    })?;
    Some((texts.text(key?), value.unwrap_or(AnyValue::Empty)))
}

/// An `AnyValue` object at `depth` of one member (or none), `nested` arrays/kvlists deep.
fn any_value<'a>(
    tokens: &mut Tokens<'a, '_>,
    depth: usize,
    nested: usize,
    texts: &mut Interner<'a>,
) -> Option<AnyValue> {
    let mut value = None;
    tokens.members(|tokens, variant| {
        if value.is_some() {
            return None; // more than one member: the tree's to judge
        }
        let list = match variant {
            "arrayValue" | "array_value" => Some(true),
            "kvlistValue" | "kvlist_value" => Some(false),
            _ => None,
        };
        value = Some(match list {
            Some(is_array) if tokens.peek()? == b'{' => {
                if nested >= MAX_ANY_VALUE_DEPTH || depth >= MAX_DEPTH {
                    return None;
                }
                list_value(tokens, is_array, depth + 1, nested + 1, texts)?
            }
            _ => match tokens.value(depth + 1)? {
                J::Null => AnyValue::Empty,
                x => scalar_variant(variant, &x, texts)?.ok()?,
            },
        });
        Some(())
    })?;
    Some(value.unwrap_or(AnyValue::Empty))
}

/// The `{values: [...]}` object of an `arrayValue` or `kvlistValue` at `depth`, its items
/// `nested` deep.
fn list_value<'a>(
    tokens: &mut Tokens<'a, '_>,
    is_array: bool,
    depth: usize,
    nested: usize,
    texts: &mut Interner<'a>,
) -> Option<AnyValue> {
    let mut read = None;
    tokens.members(|tokens, key| {
        match key {
            "values" if read.is_none() => {
                read = Some(if is_array {
                    let mut items = Vec::new();
                    tokens.elements(|tokens| {
                        items.push(any_value(tokens, depth + 2, nested, texts)?);
                        Some(())
                    })?;
                    AnyValue::Array(items)
                } else {
                    let mut pairs = Vec::new();
                    tokens.elements(|tokens| {
                        pairs.push(key_value(tokens, depth + 2, nested, texts)?);
                        Some(())
                    })?;
                    AnyValue::KvList(into_attributes(pairs))
                })
            }
            "values" => return None,
            _ => {
                tokens.value(depth + 1)?;
            }
        }
        Some(())
    })?;
    Some(read.unwrap_or_else(|| {
        if is_array {
            AnyValue::Array(Vec::new())
        } else {
            AnyValue::KvList(Vec::new())
        }
    }))
}

#[cfg(test)]
mod tests;
