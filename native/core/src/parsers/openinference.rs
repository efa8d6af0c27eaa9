//! `openinference_messages`: OpenInference's flattened `llm.{input,output}_messages.N.message.*`
//! attributes (the prefix already stripped: `{"0.message.role": "user", ...}`) as messages in
//! the GenAI parts format, read as the Python parser read them:
//!
//! * the keys are split on `.` into nested objects, in the keys' order; a later key that
//!   descends through a value replaces it with an object (or, when the value is itself an
//!   object, adds to a copy of it), and a key never replaces an object already built;
//! * indexed levels are read in the numeric order of their keys (keys of digits only, in any
//!   script Python's `str.isdigit()` accepts; a digit `int()` does not read, or more than
//!   4,300 of them, raises `ValueError` as `int()` did); a list stands for itself;
//! * a `tool` message is one `tool_call_response` (its `content`, else the text of its
//!   `contents`, JSON object or array text parsed; the call id from `tool_call_id` or a
//!   content's `message.tool_call_id`); others are their `content` as one text part, else the
//!   text parts of their `contents` (with a `tool_call_id`, their `content` is a
//!   `tool_call_response`, as in a `tool` message); then every `tool_calls.N.tool_call`, with
//!   no `arguments` when the attribute is absent: OpenInference leaves out empty arguments, but a tracer that
//!   hides content may leave them out too, so absent arguments are not read as "none".

use bumpalo::Bump;

use super::digits_table::{DECIMAL_ZEROS, OTHER_DIGITS};
use super::{truthy, Kind, Out, OutKey, ParserError, Tree};
use crate::content;
use crate::hashing::{FastMap, FastMapExt};
use crate::otlp_json::value::J;

/// The most digits `int()` reads from text (Python's default `sys.get_int_max_str_digits()`).
const MAX_INT_DIGITS: usize = 4300;

/// A key of a built object: a segment of a flattened key, or a key of an input object.
enum UKey<'v, V: Tree> {
    Seg(&'v str),
    In(&'v V::Key),
}

impl<'v, V: Tree> UKey<'v, V> {
    fn text(&self) -> Option<&str> {
        match self {
            UKey::Seg(s) => Some(s),
            UKey::In(k) => V::key_str(k),
        }
    }
}

/// A node of the unflattened tree: an object built here or a value of the input.
enum UNode<'v, V: Tree> {
    Dict(UDict<'v, V>),
    Leaf(&'v V),
}

/// An object built here, with `dict` semantics (insertion order, one value per key).
struct UDict<'v, V: Tree> {
    entries: Vec<(UKey<'v, V>, UNode<'v, V>)>,
    index: FastMap<&'v str, usize>,
}

impl<'v, V: Tree> UDict<'v, V> {
    fn new() -> Self {
        UDict {
            entries: Vec::new(),
            index: FastMap::new(),
        }
    }

    /// A copy of an input object, to be added to.
    fn of(entries: &'v [(V::Key, V)]) -> Self {
        let mut dict = UDict::new();
        for (key, value) in entries {
            if let Some(text) = V::key_str(key) {
                dict.index.insert(text, dict.entries.len());
            }
            dict.entries.push((UKey::In(key), UNode::Leaf(value)));
        }
        dict
    }

    fn slot(&self, key: &str) -> Option<usize> {
        self.index.get(key).copied()
    }

    fn set(&mut self, key: &'v str, node: UNode<'v, V>) -> usize {
        match self.slot(key) {
            Some(i) => {
                self.entries[i].1 = node;
                i
            }
            None => {
                let i = self.entries.len();
                self.index.insert(key, i);
                self.entries.push((UKey::Seg(key), node));
                i
            }
        }
    }
}

/// `unflatten`: `{"0.message.role": "user"}` → `{"0": {"message": {"role": "user"}}}`.
fn unflatten<'v, V: Tree>(flat: &'v [(V::Key, V)]) -> Result<UDict<'v, V>, ParserError> {
    let mut root: UDict<'v, V> = UDict::new();
    for (key, value) in flat {
        let Some(key) = V::key_str(key) else {
            return Err(ParserError::Attribute(
                "a flattened key is not a string".into(),
            ));
        };
        let mut segments = key.split('.').peekable();
        let mut cursor = &mut root;
        while let Some(seg) = segments.next() {
            if segments.peek().is_none() {
                let is_dict = cursor
                    .slot(seg)
                    .is_some_and(|i| match &cursor.entries[i].1 {
                        UNode::Dict(_) => true,
                        UNode::Leaf(v) => matches!(v.kind(), Kind::Obj(_)),
                    });
                if !is_dict {
                    cursor.set(seg, UNode::Leaf(value));
                }
                break;
            }
            let i = match cursor.slot(seg) {
                Some(i) => {
                    let promoted = match &cursor.entries[i].1 {
                        UNode::Dict(_) => None,
                        UNode::Leaf(v) => Some(match v.kind() {
                            Kind::Obj(entries) => UDict::of(entries),
                            _ => UDict::new(),
                        }),
                    };
                    if let Some(dict) = promoted {
                        cursor.entries[i].1 = UNode::Dict(dict);
                    }
                    i
                }
                None => cursor.set(seg, UNode::Dict(UDict::new())),
            };
            cursor = match &mut cursor.entries[i].1 {
                UNode::Dict(dict) => dict,
                UNode::Leaf(_) => unreachable!("made an object above"),
            };
        }
    }
    Ok(root)
}

/// A node read by the rules: an object built here, or a value of the input.
enum Node<'u, 'v, V: Tree> {
    Built(&'u UDict<'v, V>),
    In(&'v V),
}

impl<V: Tree> Clone for Node<'_, '_, V> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<V: Tree> Copy for Node<'_, '_, V> {}

impl<'u, 'v: 'u, V: Tree> Node<'u, 'v, V> {
    fn of(node: &'u UNode<'v, V>) -> Self {
        match node {
            UNode::Dict(dict) => Node::Built(dict),
            UNode::Leaf(value) => Node::In(value),
        }
    }

    fn is_dict(self) -> bool {
        match self {
            Node::Built(_) => true,
            Node::In(v) => matches!(v.kind(), Kind::Obj(_)),
        }
    }

    /// `node.get(key)` of an object; `None` for other values.
    fn get(self, key: &str) -> Option<Node<'u, 'v, V>> {
        match self {
            Node::Built(dict) => dict.slot(key).map(|i| Node::of(&dict.entries[i].1)),
            Node::In(v) => match v.kind() {
                Kind::Obj(entries) => entries
                    .iter()
                    .find(|(k, _)| V::key_str(k) == Some(key))
                    .map(|(_, v)| Node::In(v)),
                _ => None,
            },
        }
    }

    fn has(self, key: &str) -> bool {
        self.get(key).is_some()
    }

    fn is_null(self) -> bool {
        matches!(self, Node::In(v) if matches!(v.kind(), Kind::Null))
    }

    fn as_str(self) -> Option<&'v str> {
        match self {
            Node::In(v) => match v.kind() {
                Kind::Str(s) => Some(s),
                _ => None,
            },
            Node::Built(_) => None,
        }
    }

    fn truthy(self) -> bool {
        match self {
            Node::Built(dict) => !dict.entries.is_empty(),
            Node::In(v) => truthy(v),
        }
    }

    /// The value as the parser's result holds it.
    fn out(self) -> Out<'v, V> {
        match self {
            Node::In(v) => Out::In(v),
            Node::Built(dict) => Out::Obj(
                dict.entries
                    .iter()
                    .map(|(k, v)| {
                        let key = match k {
                            UKey::Seg(s) => OutKey::Str(s),
                            UKey::In(k) => OutKey::In(*k),
                        };
                        (key, Node::of(v).out())
                    })
                    .collect(),
            ),
        }
    }
}

/// `indexed`: a list's items, or an object's values under digit keys in numeric order.
fn indexed<'u, 'v: 'u, V: Tree>(
    node: Option<Node<'u, 'v, V>>,
) -> Result<Vec<Node<'u, 'v, V>>, ParserError> {
    let mut items: Vec<(Vec<u8>, Node<'u, 'v, V>)> = Vec::new();
    match node {
        Some(Node::In(v)) => match v.kind() {
            Kind::Arr(values) => return Ok(values.iter().map(Node::In).collect()),
            Kind::Obj(entries) => {
                for (key, value) in entries {
                    if let Some(digits) = V::key_str(key).map(index_digits).transpose()?.flatten() {
                        items.push((digits, Node::In(value)));
                    }
                }
            }
            _ => {}
        },
        Some(Node::Built(dict)) => {
            for (key, value) in &dict.entries {
                if let Some(digits) = key.text().map(index_digits).transpose()?.flatten() {
                    items.push((digits, Node::of(value)));
                }
            }
        }
        None => {}
    }
    // Numeric order: digits without leading zeros, shorter first; stable for equal numbers.
    items.sort_by(|(a, _), (b, _)| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
    Ok(items.into_iter().map(|(_, node)| node).collect())
}

/// The decimal digits of an index key without leading zeros, `None` when the key is no
/// index (`str.isdigit()` is false), or `ValueError` where `int(key)` raised.
fn index_digits(key: &str) -> Result<Option<Vec<u8>>, ParserError> {
    if key.is_empty() {
        return Ok(None);
    }
    let mut digits = Vec::with_capacity(key.len());
    let mut refused = false;
    for c in key.chars() {
        let cp = u32::from(c);
        let zero = DECIMAL_ZEROS.partition_point(|&z| z <= cp);
        match zero.checked_sub(1).map(|i| DECIMAL_ZEROS[i]) {
            Some(z) if cp - z < 10 => digits.push((cp - z) as u8),
            _ if OTHER_DIGITS.iter().any(|&(a, b)| (a..=b).contains(&cp)) => refused = true,
            _ => return Ok(None),
        }
    }
    if refused || digits.len() > MAX_INT_DIGITS {
        return Err(ParserError::Value(format!(
            "invalid literal for int() with base 10: {key:?}"
        )));
    }
    let first = digits.iter().position(|&d| d != 0).unwrap_or(digits.len());
    Ok(Some(digits.split_off(first)))
}

/// `openinference_messages` on the flattened attributes: `None` for an empty or non-object
/// value and when no message was found.
pub fn openinference_messages<'v, V: Tree>(
    flat: &'v V,
    bump: &'v Bump,
) -> Result<Option<Vec<Out<'v, V>>>, V::Error> {
    let Kind::Obj(entries) = flat.kind() else {
        return Ok(None);
    };
    if entries.is_empty() {
        return Ok(None);
    }
    let root = unflatten(entries)?;
    let mut out = Vec::new();
    for node in indexed(Some(Node::Built(&root)))? {
        let Some(msg) = node.get("message").filter(|m| m.is_dict()) else {
            continue;
        };
        let role = msg.get("role");
        let mut parts = Vec::new();
        if role.and_then(Node::as_str) == Some("tool") {
            let (texts, item_call_id) = contents_texts(msg.get("contents"))?;
            let captured = msg.has("content") || !texts.is_empty();
            let content = if msg.has("content") {
                msg.get("content")
                    .map_or(Out::Null, |c| json_or_text(c, bump))
            } else if texts.is_empty() {
                Out::Null
            } else {
                let joined: &'v str = bump.alloc_str(&texts.concat());
                match content::parse_json_or_text(joined, bump) {
                    Some(parsed) => Out::Parsed(parsed),
                    None => Out::Parsed(J::Str(joined)),
                }
            };
            let call_id = match msg.get("tool_call_id") {
                Some(id) if id.truthy() => Some(id),
                _ => item_call_id,
            };
            parts.push(response_part(call_id, captured.then_some(content))?);
        } else if msg.has("content") && !msg.has("tool_call_id") {
            parts.push(text_part(msg.get("content"))?);
        } else {
            for item in indexed(msg.get("contents"))? {
                let Some(mc) = item.get("message_content").filter(|m| m.is_dict()) else {
                    continue;
                };
                if mc.get("type").and_then(Node::as_str) == Some("text") {
                    parts.push(text_part(mc.get("text"))?);
                }
            }
            // A `tool_call_id` marks `content` as a tool's result (only tool messages carry
            // one): converters that merge a run into one message keep the result there, and
            // read as text it would be taken for the answer.
            if msg.has("content") {
                let content = msg
                    .get("content")
                    .map_or(Out::Null, |c| json_or_text(c, bump));
                parts.push(response_part(msg.get("tool_call_id"), Some(content))?);
            }
        }
        for call in indexed(msg.get("tool_calls"))? {
            let Some(tc) = call.get("tool_call").filter(|t| t.is_dict()) else {
                continue;
            };
            let function = tc.get("function").filter(|f| f.is_dict());
            let name = function.and_then(|f| f.get("name"));
            let mut part = vec![
                ("type", Out::Static("tool_call")),
                ("id", parse_string(tc.get("id"))?),
                ("name", name.map_or(Out::Null, Node::out)),
            ];
            if let Some(arguments) = function.and_then(|f| f.get("arguments")) {
                part.push(("arguments", normalize_arguments(arguments, bump)));
            }
            parts.push(Out::obj(part));
        }
        out.push(Out::obj(vec![
            ("role", role.map_or(Out::Null, Node::out)),
            ("parts", Out::Arr(parts)),
        ]));
    }
    Ok(if out.is_empty() { None } else { Some(out) })
}

type Contents<'u, 'v, V> = (Vec<&'v str>, Option<Node<'u, 'v, V>>);

/// The text parts of a message's `contents`, and a call id written beside a part.
fn contents_texts<'u, 'v: 'u, V: Tree>(
    contents: Option<Node<'u, 'v, V>>,
) -> Result<Contents<'u, 'v, V>, ParserError> {
    let mut texts = Vec::new();
    let mut call_id: Option<Node<'u, 'v, V>> = None;
    for item in indexed(contents)? {
        if !item.is_dict() {
            continue;
        }
        if let Some(mc) = item.get("message_content").filter(|m| m.is_dict()) {
            if mc.get("type").and_then(Node::as_str) == Some("text") {
                if let Some(text) = mc.get("text").and_then(Node::as_str) {
                    texts.push(text);
                }
            }
        }
        if call_id.map_or(true, Node::is_null) {
            if let Some(inner) = item.get("message").filter(|m| m.is_dict()) {
                call_id = inner.get("tool_call_id");
            }
        }
    }
    Ok((texts, call_id))
}

/// A `tool_call_response` part: the call id as the `string` parser reads it, and the
/// response only when one was captured (an absent key, not a `None`, says it was not).
fn response_part<'v, V: Tree>(
    call_id: Option<Node<'_, 'v, V>>,
    response: Option<Out<'v, V>>,
) -> Result<Out<'v, V>, V::Error> {
    let mut part = vec![
        ("type", Out::Static("tool_call_response")),
        ("id", parse_string(call_id)?),
    ];
    if let Some(response) = response {
        part.push(("response", response));
    }
    Ok(Out::obj(part))
}

fn json_or_text<'v, V: Tree>(node: Node<'_, 'v, V>, bump: &'v Bump) -> Out<'v, V> {
    if let Some(text) = node.as_str() {
        if let Some(parsed) = content::parse_json_or_text(text, bump) {
            return Out::Parsed(parsed);
        }
    }
    node.out()
}

fn normalize_arguments<'v, V: Tree>(node: Node<'_, 'v, V>, bump: &'v Bump) -> Out<'v, V> {
    if let Some(text) = node.as_str() {
        if let Some(parsed @ J::Obj(_)) = content::parse_json_or_text(text, bump) {
            return Out::Parsed(parsed);
        }
    }
    node.out()
}

/// The `string` parser on a node.
fn parse_string<'v, V: Tree>(node: Option<Node<'_, 'v, V>>) -> Result<Out<'v, V>, V::Error> {
    let Some(node) = node else {
        return Ok(Out::Null);
    };
    Ok(match node {
        Node::Built(_) => V::dumps_built(&node.out())?.map_or(Out::Null, Out::Text),
        Node::In(v) => match v.kind() {
            Kind::Null => Out::Null,
            Kind::Str(_) => Out::In(v),
            Kind::Arr(_) | Kind::Obj(_) => v.dumps_sorted()?.map_or(Out::Null, Out::Text),
            Kind::Other { .. } => v.display()?.map_or(Out::In(v), Out::Text),
        },
    })
}

fn text_part<'v, V: Tree>(content: Option<Node<'_, 'v, V>>) -> Result<Out<'v, V>, V::Error> {
    let mut part = vec![("type", Out::Static("text"))];
    match content {
        None => {}
        Some(c) if c.is_null() => {}
        Some(c) if c.as_str().is_some() => part.push(("content", c.out())),
        Some(c) => part.push(("content", parse_string(Some(c))?)),
    }
    Ok(Out::obj(part))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::otlp_json::repr::repr;

    /// The messages of flattened attributes given as a JSON object, as Python's `repr`.
    fn messages(flat: &str) -> Result<Option<String>, ParserError> {
        let bump = Bump::new();
        let value = bump.alloc(content::parse_json(flat, &bump).expect("test JSON"));
        let found = openinference_messages(value, &bump)?;
        Ok(found.map(|msgs| {
            let value = Out::Arr(msgs);
            let mut text = String::new();
            show(&value, &mut text);
            text
        }))
    }

    fn show(out: &Out<'_, J<'_>>, text: &mut String) {
        match out {
            Out::In(j) => text.push_str(&repr(j)),
            Out::Parsed(j) => text.push_str(&repr(j)),
            Out::Null => text.push_str("None"),
            Out::Static(s) => text.push_str(&repr(&J::Str(s))),
            Out::Text(s) => text.push_str(&repr(&J::Str(s))),
            Out::Obj(entries) => {
                text.push('{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        text.push_str(", ");
                    }
                    let key: &str = match k {
                        OutKey::Static(s) | OutKey::Str(s) => s,
                        OutKey::In(k) => k,
                    };
                    text.push_str(&repr(&J::Str(key)));
                    text.push_str(": ");
                    show(v, text);
                }
                text.push('}');
            }
            Out::Arr(items) => {
                text.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        text.push_str(", ");
                    }
                    show(v, text);
                }
                text.push(']');
            }
        }
    }

    #[test]
    fn flattened_keys_are_read_in_numeric_order() {
        assert_eq!(
            messages(
                r#"{"10.message.role": "user", "2.message.role": "tool", "2.message.content": "[1]",
                "2.message.tool_call_id": "c", "02.message.content": {"b": 1, "a": [2]},
                "x.message.role": "system", "0.message.tool_calls.0.tool_call.function.name": "f",
                "0.message.tool_calls.0.tool_call.function.arguments": "{\"q\": 1}"}"#
            ),
            Ok(Some(
                "[{'role': None, 'parts': [{'type': 'tool_call', 'id': None, 'name': 'f', 'arguments': {'q': 1}}]}, \
                 {'role': 'tool', 'parts': [{'type': 'tool_call_response', 'id': 'c', 'response': [1]}]}, \
                 {'role': None, 'parts': [{'type': 'text', 'content': '{\"a\": [2], \"b\": 1}'}]}, \
                 {'role': 'user', 'parts': []}]"
                    .into()
            ))
        );
    }

    #[test]
    fn content_beside_a_tool_call_id_is_a_tool_result_not_text() {
        assert_eq!(
            messages(
                r#"{"0.message.role": "assistant", "0.message.tool_call_id": "c1",
                "0.message.content": "{\"documents\": []}",
                "0.message.contents.0.message_content.type": "text",
                "0.message.contents.0.message_content.text": "I do not know."}"#
            ),
            Ok(Some(
                "[{'role': 'assistant', 'parts': [{'type': 'text', 'content': 'I do not know.'}, \
                 {'type': 'tool_call_response', 'id': 'c1', 'response': {'documents': []}}]}]"
                    .into()
            ))
        );
        assert_eq!(
            messages(r#"{"0.message.role": "assistant", "0.message.tool_call_id": "c1", "0.message.content": "r"}"#),
            Ok(Some(
                "[{'role': 'assistant', 'parts': [{'type': 'tool_call_response', 'id': 'c1', 'response': 'r'}]}]"
                    .into()
            ))
        );
    }

    #[test]
    fn index_keys_are_read_as_int_reads_them() {
        assert_eq!(index_digits("007"), Ok(Some(vec![7])));
        assert_eq!(index_digits("\u{0663}\u{0030}"), Ok(Some(vec![3, 0])));
        assert_eq!(index_digits("1a"), Ok(None));
        assert_eq!(index_digits(""), Ok(None));
        assert!(index_digits("\u{00b2}").is_err());
        assert!(index_digits(&"1".repeat(MAX_INT_DIGITS + 1)).is_err());
        assert_eq!(index_digits(&"0".repeat(MAX_INT_DIGITS)), Ok(Some(vec![])));
    }

    #[test]
    fn no_message_is_none_and_many_keys_cost_linear_work() {
        assert_eq!(messages("{}"), Ok(None));
        assert_eq!(messages("[]"), Ok(None));
        assert_eq!(
            messages(r#"{"0.role": "user", "a.message.role": "x"}"#),
            Ok(None)
        );
        let many: Vec<String> = (0..50_000)
            .map(|i| format!("\"{i}.message.content\": \"m\""))
            .collect();
        let found = messages(&format!("{{{}}}", many.join(","))).expect("read");
        assert_eq!(found.map(|m| m.matches("'text'").count()), Some(50_000));
    }
}
