//! The usual OTLP/JSON body read straight from its tokens into [`Span`]s, with no tree.
//!
//! Why: parsed into a tree first, every `{key, value}` attribute and its one-member
//! `AnyValue` object was two objects made in the arena (their members gathered, checked for
//! repeated keys and copied) and then looked up again by name; that was most of decoding a
//! body. Here `resourceSpans` -> `scopeSpans` -> `spans` and the spans' attribute lists are
//! read from the tokens as they come. What is rarer or carries more rules (a resource, a
//! scope, a status, events, links, a span's scalar members) is still read as a small tree
//! and handed to the tree's own readers ([`super::resource`], [`super::scope_of`],
//! [`super::span_of`], [`super::scalar_variant`]), so each rule has one implementation.
//!
//! This reader only accepts. Anything it does not recognise inside an element of
//! `resourceSpans` (a repeated structural key, an `AnyValue` of more than one member,
//! nesting past its bound, a snake_case list name) and anything that would make a problem
//! or reject a record makes it give up on that element, which is read again from its start
//! as a tree by the tree's rules (so a body with a problem in its last element costs that
//! element twice, not the body); anything else (a syntax error, logs or metrics, an element
//! that is not JSON the tree reads) makes it give up on the body, which [`super::decode`]
//! then parses into a tree and reads as before. Every message still comes from the tree's
//! rules, and a body read here decodes to exactly the [`Batch`] the tree would give (the
//! tests compare both on every tolerant form).

use std::sync::Arc;

use super::value::{has_repeated_key, read_tokens, Tokens, J};
use super::{
    decode_spans, into_attributes, resource, scalar_variant, scope_of, span_of, SpanAt, SpanKey,
    SpanMembers, MAX_ANY_VALUE_DEPTH,
};
use crate::model::{
    AnyValue, Attributes, Batch, Interner, KeyValue, Problems, Resource, Scope, Span, Text,
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

/// [`decode`] with how many elements of `resourceSpans` were read again as trees (the
/// tests hold the usual bodies to none: a reader that gave up on them would still decode
/// them right, only slower).
fn decode_counted<'a>(text: &'a str, bump: &'a Bump) -> Option<(Batch, usize)> {
    read_tokens(text, bump, |tokens| {
        let mut reader = Reader {
            texts: Interner::for_body(text.len()),
            batch: Batch::default(),
            pairs: Vec::new(),
            no_resource: Arc::default(),
            no_scope: Arc::default(),
            given_up: 0,
        };
        let mut found = false;
        tokens.members(|tokens, key| match key {
            "resourceSpans" if !found => {
                found = true;
                let mut index = 0;
                tokens.elements(|tokens| {
                    reader.resource_spans_or_tree(tokens, index)?;
                    index += 1;
                    Some(())
                })
            }
            "resourceSpans" | "resource_spans" | "resourceLogs" | "resource_logs"
            | "resourceMetrics" | "resource_metrics" => None,
            _ => tokens.value(1).map(drop),
        })?;
        (found && tokens.at_end()).then_some((reader.batch, reader.given_up))
    })
}

struct Reader<'a> {
    texts: Interner<'a>,
    batch: Batch,
    /// A span's attributes while they are read (kept from span to span, so a list is
    /// allocated once, at its final size).
    pairs: Vec<(Text, AnyValue)>,
    /// What the spans of an element hold until its resource and scope are read (either may
    /// come after the spans).
    no_resource: Arc<Resource>,
    no_scope: Arc<Scope>,
    /// Elements of `resourceSpans` read again as trees.
    given_up: usize,
}

impl<'a> Reader<'a> {
    /// Element `index` of `resourceSpans`: read here, else (anything this reader leaves to
    /// the tree) read again from its start as a tree by the tree's own rules, problems and
    /// rejections included, so that what one element holds costs only that element's
    /// second reading; `None` when it is not even JSON the tree reads (the body is left to
    /// the tree, which words the error).
    fn resource_spans_or_tree(&mut self, tokens: &mut Tokens<'a, '_>, index: usize) -> Option<()> {
        let (mark, spans) = (tokens.mark(), self.batch.spans.len());
        if self.resource_spans(tokens).is_some() {
            return Some(());
        }
        self.batch.spans.truncate(spans);
        self.given_up += 1;
        tokens.rewind(mark);
        let element = tokens.value(2)?;
        decode_spans(
            std::slice::from_ref(&element),
            index,
            &mut self.batch,
            &mut self.texts,
        );
        Some(())
    }

    /// One element of `resourceSpans`: its spans, then its resource set on them.
    fn resource_spans(&mut self, tokens: &mut Tokens<'a, '_>) -> Option<()> {
        let first = self.batch.spans.len();
        let mut res: Option<J<'a>> = None;
        let mut scopes = false;
        tokens.members(|tokens, key| match key {
            "resource" if res.is_none() => {
                res = Some(tokens.value(3)?);
                Some(())
            }
            "scopeSpans" if !scopes => {
                scopes = true;
                tokens.elements(|tokens| self.scope_spans(tokens))
            }
            "resource" | "scopeSpans" | "scope_spans" => None,
            _ => tokens.value(3).map(drop),
        })?;
        let mut problems = Problems::default();
        let res = res.filter(|res| !matches!(res, J::Null));
        let res = resource(res.as_ref(), "", &mut problems, &mut self.texts).ok()?;
        if problems.total() != 0 {
            return None;
        }
        for span in &mut self.batch.spans[first..] {
            span.resource = Arc::clone(&res);
        }
        Some(())
    }

    /// One element of `scopeSpans`: its spans, then its scope set on them.
    fn scope_spans(&mut self, tokens: &mut Tokens<'a, '_>) -> Option<()> {
        let first = self.batch.spans.len();
        let mut scope: Option<J<'a>> = None;
        let mut spans = false;
        tokens.members(|tokens, key| match key {
            "scope" if scope.is_none() => {
                scope = Some(tokens.value(5)?);
                Some(())
            }
            "spans" if !spans => {
                spans = true;
                tokens.elements(|tokens| {
                    let span = self.span(tokens)?;
                    self.batch.spans.push(span);
                    Some(())
                })
            }
            "scope" | "spans" => None,
            _ => tokens.value(5).map(drop),
        })?;
        let scope = scope_of(scope.as_ref());
        for span in &mut self.batch.spans[first..] {
            span.scope = Arc::clone(&scope);
        }
        Some(())
    }

    /// A span object: its attribute list read here, its other members as small trees
    /// handed to [`span_of`].
    fn span(&mut self, tokens: &mut Tokens<'a, '_>) -> Option<Span> {
        let mut members = SpanMembers {
            found: [None; SpanKey::COUNT],
        };
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
        let at = SpanAt {
            where_: "",
            index: 0,
        };
        let mut problems = Problems::default();
        let span = span_of(
            &members,
            read,
            at,
            &self.no_resource,
            &self.no_scope,
            &mut problems,
            &mut self.texts,
        )
        .ok()?;
        (problems.total() == 0).then_some(span)
    }

    /// A span's `attributes` list (a repeated key keeps its first position and last value,
    /// as the tree's reader does).
    fn attribute_list(&mut self, tokens: &mut Tokens<'a, '_>) -> Option<Attributes> {
        let mut pairs = std::mem::take(&mut self.pairs);
        pairs.clear();
        let read = tokens.elements(|tokens| {
            let pair = attribute(tokens, SPAN_DEPTH + 2, &mut self.texts)?;
            pairs.push(pair);
            Some(())
        });
        let attributes = read.map(|()| {
            if has_repeated_key(&pairs) {
                into_attributes(std::mem::take(&mut pairs))
            } else {
                // The usual list: moved once into its own allocation, at its final size.
                pairs
                    .drain(..)
                    .map(|(key, value)| KeyValue { key, value })
                    .collect()
            }
        });
        self.pairs = pairs;
        attributes
    }
}

/// The key and colon of a span member at the cursor when they are a camelCase key of
/// [`SpanKey`] written as exporters write it (`"traceId":`, no escape, no whitespace), told by
/// its first letter and read by its fixed bytes; `None` leaves the key unread, for the
/// generic read (any other spelling, snake_case, an unknown member).
///
/// Why: read as a string and then matched by name, each of a span's nine or so keys was a
/// scan for its closing quote and a length switch with a `memcmp` call.
#[inline(always)]
fn span_key(tokens: &mut Tokens<'_, '_>) -> Option<SpanKey> {
    if tokens.byte_ahead(0)? != b'"' {
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

/// An attribute of a span: in its usual spelling, else member by member.
#[inline(always)]
fn attribute<'a>(
    tokens: &mut Tokens<'a, '_>,
    depth: usize,
    texts: &mut Interner<'a>,
) -> Option<(Text, AnyValue)> {
    let mark = tokens.mark();
    if let Some(pair) = compact_attribute(tokens, depth, texts) {
        return Some(pair);
    }
    tokens.rewind(mark);
    key_value(tokens, depth, 0, texts)
}

/// An attribute spelled as OTLP exporters write one, `{"key":"…","value":{"<variant>":…}}`
/// without whitespace and with a scalar variant, read by its fixed bytes rather than
/// member by member (most of a body's objects are these); `None` when it is spelled
/// otherwise, and the caller reads it again from its start.
#[inline(always)]
fn compact_attribute<'a>(
    tokens: &mut Tokens<'a, '_>,
    depth: usize,
    texts: &mut Interner<'a>,
) -> Option<(Text, AnyValue)> {
    if !tokens.literal(b"{\"key\":\"") {
        return None;
    }
    let key = tokens.string_rest()?;
    // Most values are strings: their variant's key read with the bytes before it.
    if tokens.literal(b",\"value\":{\"stringValue\":\"") {
        let s = tokens.string_rest()?;
        if !tokens.literal(b"}}") {
            return None;
        }
        let value = AnyValue::Str(texts.text(s));
        return Some((texts.text(key), value));
    }
    if !tokens.literal(b",\"value\":{\"") {
        return None;
    }
    let variant = tokens.string_rest()?;
    if !tokens.literal(b":") {
        return None;
    }
    let value = match tokens.next_byte()? {
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
            if !tokens.literal(b"}}") {
                return None;
            }
            value
        }
        b'[' | b'n' => return None,
        _ => {
            let x = tokens.value(depth + 2)?;
            if !tokens.literal(b"}}") {
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
