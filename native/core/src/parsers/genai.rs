//! `genai_messages`: the OTel GenAI `gen_ai.input.messages` / `gen_ai.output.messages`
//! value (semconv v1.37+ parts format) as the normalised message list every message parser
//! returns, `[{role, parts: [...], finish_reason?, name?}]`.
//!
//! Producers write more than the semconv shape, and each departure is read as the Python
//! parser read it (the results are recorded in `tests/testdata/parsers/genai_messages.jsonl`):
//!
//! * one message object instead of a list; non-object messages and parts are dropped;
//! * a message with no `parts` list but `content` or `tool_calls` is a provider chat
//!   message (OpenAI, Anthropic, Gemini, LangChain shapes: [`openai_message`]);
//! * tool-call arguments given as JSON object text become the object;
//! * a `tool_call_response` with `result` instead of `response` gets `response`;
//! * provider content blocks where parts belong (untyped Gemini / Bedrock Converse blocks,
//!   Anthropic `tool_use`/`tool_result`/`thinking`, OpenAI Responses items, a `text` part
//!   holding `text`) become parts ([`block_part`]);
//! * provider role names become GenAI roles (`model`/`ai` → `assistant`, `human` → `user`,
//!   `function` → `tool`), and so do GenAI roles in another case (`Assistant` → `assistant`).
//!
//! Everything else (unknown part types, extra keys of a part) is kept as it is. Python's
//! semantics are kept where they show: `x or y` on truthiness, `dict.get` reading a `null`
//! as absent, a rebuilt part keeping its keys' order.

use bumpalo::Bump;

use super::{lift, truthy, Iteration, Kind, Out, OutKey, ParserError, Tree};
use crate::content::{self, is_py_space};
use crate::otlp_json::value::J;

/// Block types of provider SDKs that are not GenAI part types.
const FOREIGN_BLOCKS: [&str; 9] = [
    "tool_use",
    "server_tool_use",
    "tool_result",
    "function_call",
    "function_call_output",
    "input_text",
    "output_text",
    "thinking",
    "redacted_thinking",
];

const TEXT_BLOCKS: [&str; 3] = ["text", "input_text", "output_text"];

const REASONING_BLOCKS: [&str; 3] = ["thinking", "redacted_thinking", "reasoning"];

/// Keys that make a dict a content block (typed, or Gemini's and Bedrock Converse's untyped
/// blocks).
const BLOCK_KEYS: [&str; 10] = [
    "type",
    "text",
    "functionCall",
    "function_call",
    "functionResponse",
    "function_response",
    "toolUse",
    "toolResult",
    "json",
    "reasoningContent",
];

/// Role names (any case) → GenAI roles: the provider names (Gemini `model`, LangChain
/// `human`/`ai`, `function`) and the GenAI roles themselves spelled in another case (Koog
/// writes its Kotlin enum names, `System` / `User` / `Assistant`), so that every reader
/// comparing a role with `assistant` sees the model's messages. `None` keeps the role as
/// given: an unknown name, or a GenAI role already spelled as one.
fn genai_role(role: &str) -> Option<&'static str> {
    const ROLES: [(&str, &str); 8] = [
        ("model", "assistant"),
        ("ai", "assistant"),
        ("human", "user"),
        ("function", "tool"),
        ("assistant", "assistant"),
        ("user", "user"),
        ("system", "system"),
        ("tool", "tool"),
    ];
    ROLES
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(role))
        .map(|&(_, genai)| genai)
        .filter(|&genai| genai != role)
}

/// The parsers' scratch space: parsed JSON text lives in the arena as long as the result.
struct Cx<'v> {
    bump: &'v Bump,
}

type Entries<'v, V> = &'v [(<V as Tree>::Key, V)];
type Res<'v, V> = Result<Out<'v, V>, <V as Tree>::Error>;

fn get<'v, V: Tree>(entries: Entries<'v, V>, key: &str) -> Option<&'v V> {
    entries
        .iter()
        .find(|(k, _)| V::key_str(k) == Some(key))
        .map(|(_, v)| v)
}

fn has<V: Tree>(entries: Entries<'_, V>, key: &str) -> bool {
    get(entries, key).is_some()
}

/// `dict.get(key)` that reads `None` as absent.
fn get_some<'v, V: Tree>(entries: Entries<'v, V>, key: &str) -> Option<&'v V> {
    get(entries, key).filter(|v| !matches!(v.kind(), Kind::Null))
}

fn as_obj<V: Tree>(value: Option<&V>) -> Option<Entries<'_, V>> {
    match value?.kind() {
        Kind::Obj(entries) => Some(entries),
        _ => None,
    }
}

fn as_str<V: Tree>(value: Option<&V>) -> Option<&str> {
    match value?.kind() {
        Kind::Str(s) => Some(s),
        _ => None,
    }
}

/// `d.get(a) or d.get(b)`.
fn get_or<'v, V: Tree>(entries: Entries<'v, V>, first: &str, second: &str) -> Option<&'v V> {
    match get(entries, first) {
        Some(v) if truthy(v) => Some(v),
        _ => get(entries, second),
    }
}

/// `d.get(a, d.get(b))`.
fn get_else<'v, V: Tree>(entries: Entries<'v, V>, first: &str, second: &str) -> Option<&'v V> {
    get(entries, first).or_else(|| get(entries, second))
}

fn keep<V: Tree>(value: Option<&V>) -> Out<'_, V> {
    value.map_or(Out::Null, Out::In)
}

/// `gen_ai.*.messages` already parsed from JSON text: the normalised messages, or `None`
/// when the value is neither a list nor an object.
pub fn genai_messages_json<'v>(
    value: &'v J<'v>,
    bump: &'v Bump,
) -> Result<Option<Vec<Out<'v, J<'v>>>>, ParserError> {
    genai_messages(value, bump)
}

/// `gen_ai.*.messages` as text: `None` when it is no JSON list or object.
pub fn genai_messages_text<'v>(
    text: &'v str,
    bump: &'v Bump,
) -> Result<Option<Vec<Out<'v, J<'v>>>>, ParserError> {
    match content::parse_json(text, bump) {
        Some(value) => genai_messages(bump.alloc(value), bump),
        None => Ok(None),
    }
}

/// `gen_ai.*.messages` given in structured form (a list of message objects, or one): the
/// normalised messages, or `None` when the value is neither a list nor an object.
pub fn genai_messages<'v, V: Tree>(
    value: &'v V,
    bump: &'v Bump,
) -> Result<Option<Vec<Out<'v, V>>>, V::Error> {
    let cx = Cx { bump };
    let messages: &[V] = match value.kind() {
        Kind::Obj(_) => std::slice::from_ref(value),
        Kind::Arr(items) => items,
        _ => return Ok(None),
    };
    let mut out = Vec::with_capacity(messages.len());
    for msg in messages {
        let Kind::Obj(entries) = msg.kind() else {
            continue;
        };
        let raw_parts = match get(entries, "parts").map(Tree::kind) {
            Some(Kind::Arr(items)) => Some(items),
            _ => None,
        };
        if raw_parts.is_none() && (has(entries, "content") || has(entries, "tool_calls")) {
            // A provider message where a GenAI one belongs.
            out.push(openai_message(entries, false, &cx)?);
            continue;
        }
        let mut parts = Vec::new();
        for part in raw_parts.unwrap_or_default() {
            let Kind::Obj(fields) = part.kind() else {
                continue;
            };
            let kind = match get(fields, "type").map(Tree::kind) {
                None | Some(Kind::Null) => PartType::Missing,
                Some(Kind::Str(s)) => PartType::Str(s),
                Some(_) => PartType::Other,
            };
            let arguments = get(fields, "arguments");
            match part_shape(kind, as_str(arguments).is_some(), |key| has(fields, key)) {
                PartShape::ArgumentsText => parts.push(replaced(
                    fields,
                    "arguments",
                    normalize_arguments(arguments, &cx),
                )),
                // pydantic-ai (and semconv examples before #323) write `result`.
                PartShape::ResultAsResponse => parts.push(result_as_response(fields)),
                // Provider blocks where GenAI parts belong.
                PartShape::Block => {
                    if let Some(converted) = block_part(part, &cx)? {
                        parts.push(converted);
                    }
                }
                PartShape::Kept => parts.push(Out::In(part)),
            }
        }
        let role = match get(entries, "role") {
            Some(role) => match role.kind() {
                Kind::Str(s) => genai_role(s).map_or(Out::In(role), Out::Static),
                _ => Out::In(role),
            },
            None => Out::Null,
        };
        let mut norm = vec![
            (OutKey::Static("role"), role),
            (OutKey::Static("parts"), Out::Arr(parts)),
        ];
        for key in KEPT_OPTIONAL_KEYS {
            if let Some(value) = get_some(entries, key) {
                norm.push((OutKey::Static(key), Out::In(value)));
            }
        }
        out.push(Out::Obj(norm));
    }
    Ok(Some(out))
}

/// The keys a normalised message keeps after `role` and `parts`, in this order, each only
/// when its value is not `null`.
const KEPT_OPTIONAL_KEYS: [&str; 2] = ["finish_reason", "name"];

/// A part's `type` as [`part_shape`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartType<'a> {
    /// No `type`, or `null`.
    Missing,
    /// A string.
    Str(&'a str),
    /// Any other value (a number, a list, an object).
    Other,
}

/// What [`genai_messages`] makes of a part object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartShape {
    /// A `tool_call` whose `arguments` are text: rebuilt with them parsed.
    ArgumentsText,
    /// A `tool_call_response` written with `result` and no `response`: rebuilt.
    ResultAsResponse,
    /// A provider content block (or a `text` part holding `text`): converted or dropped.
    Block,
    /// Kept as it is.
    Kept,
}

/// What [`genai_messages`] does with a part object of this `type`, whose `arguments` are a
/// string or not, `has(key)` telling which other keys it holds (asked only as needed). The
/// one test of the loop and of a host's shortcut ([`message_keys_kept`]): text whose every
/// part is kept can be made into the host's objects straight from the text.
pub fn part_shape(
    kind: PartType<'_>,
    arguments_text: bool,
    has: impl Fn(&str) -> bool,
) -> PartShape {
    match kind {
        PartType::Str("tool_call") if arguments_text => PartShape::ArgumentsText,
        PartType::Str("tool_call_response") if !has("response") && has("result") => {
            PartShape::ResultAsResponse
        }
        PartType::Missing => PartShape::Block,
        PartType::Str(k) if FOREIGN_BLOCKS.contains(&k) || (k == "text" && has("text")) => {
            PartShape::Block
        }
        _ => PartShape::Kept,
    }
}

/// Whether [`genai_messages`] writes a role string back as it is (no provider name, no GenAI
/// role in another case).
pub fn role_kept(role: &str) -> bool {
    genai_role(role).is_none()
}

/// Whether a message object's keys, in order, each with whether its value is `null`, are
/// those [`genai_messages`] writes back: `role`, `parts`, then `finish_reason` and `name`
/// when not `null`, and nothing else. With a `role` that is no string or is [`role_kept`],
/// a `parts` list whose every item is an object of [`PartShape::Kept`], such a message is
/// normalised into an object equal to itself, key order included (a host can then keep the
/// objects it made of the text: the binding's JSON text shortcut).
pub fn message_keys_kept<'k>(keys: impl IntoIterator<Item = (&'k str, bool)>) -> bool {
    let mut keys = keys.into_iter();
    if keys.next().map(|(key, _)| key) != Some("role")
        || keys.next().map(|(key, _)| key) != Some("parts")
    {
        return false;
    }
    let mut optional = KEPT_OPTIONAL_KEYS.as_slice();
    for (key, null) in keys {
        let Some(at) = optional.iter().position(|name| *name == key) else {
            return false;
        };
        if null {
            return false;
        }
        optional = &optional[at + 1..];
    }
    true
}

/// `{**fields, key: value}`: the object with one key's value replaced in place.
fn replaced<'v, V: Tree>(fields: Entries<'v, V>, key: &str, value: Out<'v, V>) -> Out<'v, V> {
    let mut value = Some(value);
    Out::Obj(
        fields
            .iter()
            .map(|(k, v)| {
                let new = if V::key_str(k) == Some(key) {
                    value.take()
                } else {
                    None
                };
                (OutKey::In(k), new.unwrap_or(Out::In(v)))
            })
            .collect(),
    )
}

/// A `tool_call_response` part written with `result`: the same without `result`, with
/// `response` last.
fn result_as_response<'v, V: Tree>(fields: Entries<'v, V>) -> Out<'v, V> {
    let mut entries: Vec<(OutKey<'v, V>, Out<'v, V>)> = Vec::with_capacity(fields.len());
    let mut result = None;
    for (k, v) in fields {
        if V::key_str(k) == Some("result") {
            result = Some(v);
        } else {
            entries.push((OutKey::In(k), Out::In(v)));
        }
    }
    entries.push((OutKey::Static("response"), keep(result)));
    Out::Obj(entries)
}

/// Tool-call arguments: JSON object text becomes the object; other values stay as they are.
fn normalize_arguments<'v, V: Tree>(value: Option<&'v V>, cx: &Cx<'v>) -> Out<'v, V> {
    let Some(value) = value else {
        return Out::Null;
    };
    if let Kind::Str(text) = value.kind() {
        if let Some(parsed @ J::Obj(_)) = content::parse_json_or_text(text, cx.bump) {
            return Out::Parsed(parsed);
        }
    }
    Out::In(value)
}

/// The `json_or_text` parser on a value of the tree.
fn json_or_text<'v, V: Tree>(value: Option<&'v V>, cx: &Cx<'v>) -> Out<'v, V> {
    let Some(value) = value else {
        return Out::Null;
    };
    if let Kind::Str(text) = value.kind() {
        if let Some(parsed) = content::parse_json_or_text(text, cx.bump) {
            return Out::Parsed(parsed);
        }
    }
    Out::In(value)
}

/// The `json_or_text` parser on text made here.
fn json_or_text_owned<'v, V: Tree>(text: String, cx: &Cx<'v>) -> Out<'v, V> {
    let text: &'v str = cx.bump.alloc_str(&text);
    match content::parse_json_or_text(text, cx.bump) {
        Some(parsed) => Out::Parsed(parsed),
        None => Out::Parsed(J::Str(text)),
    }
}

/// The `string` parser: text as it is, lists and dicts as sorted JSON, other values as
/// `str()`; `None` stays `None`.
fn parse_string<'v, V: Tree>(value: Option<&'v V>) -> Res<'v, V> {
    let Some(value) = value else {
        return Ok(Out::Null);
    };
    Ok(match value.kind() {
        Kind::Null => Out::Null,
        Kind::Str(_) => Out::In(value),
        Kind::Arr(_) | Kind::Obj(_) => value.dumps_sorted()?.map_or(Out::Null, Out::Text),
        Kind::Other { .. } => value.display()?.map_or(Out::In(value), Out::Text),
    })
}

fn text_part<'v, V: Tree>(content: Option<&'v V>) -> Res<'v, V> {
    let mut part = vec![("type", Out::Static("text"))];
    match content.map(Tree::kind) {
        None | Some(Kind::Null) => {}
        Some(Kind::Str(_)) => part.push(("content", keep(content))),
        Some(_) => part.push(("content", parse_string(content)?)),
    }
    Ok(Out::obj(part))
}

fn tool_call_part<'v, V: Tree>(
    call_id: Option<&'v V>,
    name: Option<&'v V>,
    arguments: Option<&'v V>,
    has_arguments: bool,
    cx: &Cx<'v>,
) -> Res<'v, V> {
    let mut part = vec![
        ("type", Out::Static("tool_call")),
        ("id", parse_string(call_id)?),
        ("name", keep(name)),
    ];
    if has_arguments {
        part.push(("arguments", normalize_arguments(arguments, cx)));
    }
    Ok(Out::obj(part))
}

fn tool_response_part<'v, V: Tree>(
    call_id: Option<&'v V>,
    response: Option<Out<'v, V>>,
) -> Res<'v, V> {
    let mut part = vec![
        ("type", Out::Static("tool_call_response")),
        ("id", parse_string(call_id)?),
    ];
    if let Some(response) = response {
        part.push(("response", response));
    }
    Ok(Out::obj(part))
}

fn reasoning_part<'v, V: Tree>(content: Option<Out<'v, V>>) -> Out<'v, V> {
    let mut part = vec![("type", Out::Static("reasoning"))];
    if let Some(content) = content {
        part.push(("content", content));
    }
    Out::obj(part)
}

/// Message content in any provider's shape as parts: a string, a JSON string of a block
/// list, one block, or a list of blocks or parts.
fn content_parts<'v, V: Tree>(
    content: Option<&'v V>,
    cx: &Cx<'v>,
) -> Result<Vec<Out<'v, V>>, V::Error> {
    let Some(value) = content else {
        return Ok(Vec::new());
    };
    let items: &[V] = match value.kind() {
        Kind::Null => return Ok(Vec::new()),
        Kind::Str(text) => {
            return match block_list(text, cx) {
                Some(blocks) => Ok(block_parts(blocks, cx)?.into_iter().map(lift).collect()),
                None => Ok(vec![text_part(content)?]),
            };
        }
        Kind::Obj(_) => std::slice::from_ref(value),
        Kind::Arr(items) => items,
        Kind::Other { .. } => return Ok(vec![text_part(content)?]),
    };
    block_parts(items, cx)
}

fn block_parts<'v, V: Tree>(items: &'v [V], cx: &Cx<'v>) -> Result<Vec<Out<'v, V>>, V::Error> {
    let mut parts = Vec::with_capacity(items.len());
    for item in items {
        if let Some(part) = block_part(item, cx)? {
            parts.push(part);
        }
    }
    Ok(parts)
}

/// Text that is the JSON of a content-block list, parsed; else `None` (a text answer that
/// merely looks like JSON stays text).
fn block_list<'v>(text: &'v str, cx: &Cx<'v>) -> Option<&'v [J<'v>]> {
    let start = text.trim_start_matches(is_py_space);
    let mut head = start.chars();
    let first_two = (head.next(), head.next());
    if !matches!(
        first_two,
        (Some('['), Some('{')) | (Some('['), Some(' ')) | (Some('['), Some('\n'))
    ) {
        return None;
    }
    match content::parse_json(text, cx.bump)? {
        J::Arr(items)
            if !items.is_empty()
                && items.iter().all(|item| match item {
                    J::Obj(obj) => obj.iter().any(|(k, _)| BLOCK_KEYS.contains(&k)),
                    _ => false,
                }) =>
        {
            Some(items)
        }
        _ => None,
    }
}

/// One content block as one part; `None` for what is no block.
fn block_part<'v, V: Tree>(item: &'v V, cx: &Cx<'v>) -> Result<Option<Out<'v, V>>, V::Error> {
    let fields = match item.kind() {
        Kind::Str(_) => return Ok(Some(text_part(Some(item))?)),
        Kind::Obj(fields) => fields,
        _ => return Ok(None),
    };
    let kind = match get(fields, "type").map(Tree::kind) {
        None | Some(Kind::Null) => None,
        Some(Kind::Str(s)) => Some(s),
        Some(_) => return Ok(Some(Out::In(item))),
    };
    let Some(kind) = kind else {
        return match converse_part(fields, cx)? {
            Some(part) => Ok(Some(part)),
            None => gemini_part(fields, cx),
        };
    };
    let part = match kind {
        k if TEXT_BLOCKS.contains(&k) => text_part(get_else(fields, "text", "content"))?,
        "tool_call" => {
            let arguments = get(fields, "arguments");
            if as_str(arguments).is_some() {
                replaced(fields, "arguments", normalize_arguments(arguments, cx))
            } else {
                Out::In(item)
            }
        }
        "tool_call_response" => {
            if !has(fields, "response") && has(fields, "result") {
                result_as_response(fields)
            } else {
                Out::In(item)
            }
        }
        "tool_use" | "server_tool_use" => tool_call_part(
            get(fields, "id"),
            get(fields, "name"),
            get(fields, "input"),
            has(fields, "input"),
            cx,
        )?,
        "function_call" => tool_call_part(
            get_or(fields, "call_id", "id"),
            get(fields, "name"),
            get(fields, "arguments"),
            has(fields, "arguments"),
            cx,
        )?,
        "tool_result" => tool_response_part(
            get(fields, "tool_use_id"),
            has(fields, "content").then(|| tool_result_content(get(fields, "content"), cx)),
        )?,
        "function_call_output" => tool_response_part(
            get(fields, "call_id"),
            has(fields, "output").then(|| json_or_text(get(fields, "output"), cx)),
        )?,
        k if REASONING_BLOCKS.contains(&k) => {
            let text = if has(fields, "thinking") {
                get(fields, "thinking")
            } else {
                get_else(fields, "text", "content")
            };
            reasoning_part(
                text.filter(|t| !matches!(t.kind(), Kind::Null))
                    .map(Out::In),
            )
        }
        _ => Out::In(item),
    };
    Ok(Some(part))
}

/// An untyped Bedrock Converse block (`toolUse` / `toolResult` / `json` /
/// `reasoningContent`); `None` for other blocks.
fn converse_part<'v, V: Tree>(
    fields: Entries<'v, V>,
    cx: &Cx<'v>,
) -> Result<Option<Out<'v, V>>, V::Error> {
    if let Some(call) = as_obj(get(fields, "toolUse")) {
        return tool_call_part(
            get(call, "toolUseId"),
            get(call, "name"),
            get(call, "input"),
            has(call, "input"),
            cx,
        )
        .map(Some);
    }
    if let Some(result) = as_obj(get(fields, "toolResult")) {
        return tool_response_part(
            get(result, "toolUseId"),
            has(result, "content").then(|| block_value(get(result, "content"), cx)),
        )
        .map(Some);
    }
    if let Some(value) = get(fields, "json") {
        let text = value.dumps_compact()?;
        return Ok(Some(Out::obj(vec![
            ("type", Out::Static("text")),
            ("content", Out::Text(text)),
        ])));
    }
    if let Some(reasoning) = as_obj(get(fields, "reasoningContent")) {
        let content = as_obj(get(reasoning, "reasoningText")).and_then(|t| get(t, "text"));
        return Ok(Some(reasoning_part(
            content.filter(|c| truthy(*c)).map(Out::In),
        )));
    }
    Ok(None)
}

/// An untyped Gemini part (camelCase on the wire, snake_case from the Python SDK).
fn gemini_part<'v, V: Tree>(
    fields: Entries<'v, V>,
    cx: &Cx<'v>,
) -> Result<Option<Out<'v, V>>, V::Error> {
    if let Some(call) = as_obj(get_else(fields, "functionCall", "function_call")) {
        return tool_call_part(
            get(call, "id"),
            get(call, "name"),
            get(call, "args"),
            has(call, "args"),
            cx,
        )
        .map(Some);
    }
    if let Some(response) = as_obj(get_else(fields, "functionResponse", "function_response")) {
        let mut part = tool_response_part(
            get(response, "id"),
            has(response, "response").then(|| keep(get(response, "response"))),
        )?;
        if let (Out::Obj(entries), Some(name)) = (&mut part, get_some(response, "name")) {
            entries.push((OutKey::Static("name"), Out::In(name)));
        }
        return Ok(Some(part));
    }
    if let Some(text) = get(fields, "text") {
        if get(fields, "thought").is_some_and(truthy) {
            return Ok(Some(reasoning_part(Some(Out::In(text)))));
        }
        return text_part(Some(text)).map(Some);
    }
    Ok(None)
}

/// A tool result given as content blocks (Bedrock Converse / Strands `[{"text": "{...}"}]`
/// or `[{"json": {...}}]`, Anthropic `[{"type": "text", "text": ...}]`): one `json` block is
/// its value; text blocks are joined and read as JSON when they hold an object or array.
fn block_value<'v, V: Tree>(value: Option<&'v V>, cx: &Cx<'v>) -> Out<'v, V> {
    match json_or_text(value, cx) {
        Out::Parsed(parsed) => match block_value_of(cx.bump.alloc(parsed)) {
            BlockValue::AsIs => Out::Parsed(parsed),
            BlockValue::Item(item) => Out::Parsed(*item),
            BlockValue::Joined(text) => json_or_text_owned(text, cx),
        },
        Out::In(value) => match block_value_of(value) {
            BlockValue::AsIs => Out::In(value),
            BlockValue::Item(item) => Out::In(item),
            BlockValue::Joined(text) => json_or_text_owned(text, cx),
        },
        other => other,
    }
}

enum BlockValue<'v, T> {
    AsIs,
    Item(&'v T),
    Joined(String),
}

fn block_value_of<T: Tree>(blocks: &T) -> BlockValue<'_, T> {
    let Kind::Arr(items) = blocks.kind() else {
        return BlockValue::AsIs;
    };
    if items.is_empty() {
        return BlockValue::AsIs;
    }
    if let [only] = items {
        if let Kind::Obj([(key, value)]) = only.kind() {
            if T::key_str(key) == Some("json") {
                return BlockValue::Item(value);
            }
        }
    }
    let mut joined = String::new();
    for block in items {
        let Kind::Obj(fields) = block.kind() else {
            return BlockValue::AsIs;
        };
        let typed_text =
            get(fields, "type").map_or(true, |t| matches!(t.kind(), Kind::Str("text")));
        match as_str(get(fields, "text")) {
            Some(text) if typed_text => joined.push_str(text),
            _ => return BlockValue::AsIs,
        }
    }
    BlockValue::Joined(joined)
}

/// An Anthropic `tool_result` content: a string, or a list of blocks whose text is the
/// result when every block is text.
fn tool_result_content<'v, V: Tree>(content: Option<&'v V>, cx: &Cx<'v>) -> Out<'v, V> {
    let Some(Kind::Arr(items)) = content.map(Tree::kind) else {
        return json_or_text(content, cx);
    };
    let mut joined = String::new();
    let mut texts = 0;
    for block in items {
        if let Kind::Obj(fields) = block.kind() {
            if matches!(get(fields, "type").map(Tree::kind), Some(Kind::Str("text"))) {
                texts += 1;
                if let Some(text) = as_str(get(fields, "text")) {
                    joined.push_str(text);
                }
            }
        }
    }
    if texts > 0 && texts == items.len() {
        json_or_text_owned(joined, cx)
    } else {
        keep(content)
    }
}

/// One chat message in a provider's shape: OpenAI (`{role, content, tool_calls,
/// tool_call_id}`; LangChain's message dicts, whose tool calls carry `args`), Anthropic
/// (`content` blocks) or Gemini (`{role: model, parts}`).
fn openai_message<'v, V: Tree>(msg: Entries<'v, V>, output: bool, cx: &Cx<'v>) -> Res<'v, V> {
    let role = match get(msg, "role") {
        Some(role) if truthy(role) => match role.kind() {
            Kind::Str(s) => genai_role(s).map_or(Out::In(role), Out::Static),
            _ => Out::In(role),
        },
        _ if output => Out::Static("assistant"),
        _ => Out::Null,
    };
    let mut parts = Vec::new();
    if role.is_str("tool") && !has(msg, "parts") {
        let content = get(msg, "content");
        parts = response_blocks(content, cx)?;
        if parts.is_empty() {
            parts.push(tool_response_part(
                get_or(msg, "tool_call_id", "id"),
                has(msg, "content").then(|| json_or_text(content, cx)),
            )?);
        }
    } else {
        parts.extend(content_parts(get(msg, "content"), cx)?);
        if !has(msg, "content") {
            parts.extend(content_parts(get(msg, "parts"), cx)?);
        }
    }
    if let Some(calls) = get(msg, "tool_calls").filter(|c| truthy(*c)) {
        let calls: &[V] = match calls.kind() {
            Kind::Arr(items) => items,
            Kind::Other {
                iteration: Iteration::Items(items),
                ..
            } => items,
            Kind::Other {
                iteration: Iteration::Fails,
                ..
            } => {
                return Err(ParserError::Type("object is not iterable".into()).into());
            }
            // Iterating a string, dict, bytes or set yields no dict.
            _ => &[],
        };
        for call in calls {
            let Kind::Obj(call) = call.kind() else {
                continue;
            };
            let function = as_obj(get(call, "function")).unwrap_or(call);
            let key = if has(function, "arguments") {
                "arguments"
            } else {
                "args"
            };
            parts.push(tool_call_part(
                get(call, "id"),
                get(function, "name"),
                get(function, key),
                has(function, key),
                cx,
            )?);
        }
    }
    Ok(Out::obj(vec![("role", role), ("parts", Out::Arr(parts))]))
}

/// A tool message whose content is a list of result blocks (Bedrock Converse `toolResult`,
/// Anthropic `tool_result`) as those responses; empty when the content is the result itself.
fn response_blocks<'v, V: Tree>(
    content: Option<&'v V>,
    cx: &Cx<'v>,
) -> Result<Vec<Out<'v, V>>, V::Error> {
    let parts: Vec<Out<'v, V>> = match content.map(Tree::kind) {
        Some(Kind::Str(text)) => match block_list(text, cx) {
            Some(blocks) => block_parts(blocks, cx)?.into_iter().map(lift).collect(),
            None => return Ok(Vec::new()),
        },
        Some(Kind::Arr(items)) if !items.is_empty() => block_parts(items, cx)?,
        _ => return Ok(Vec::new()),
    };
    let all_responses = !parts.is_empty()
        && parts
            .iter()
            .all(|p| p.field_is("type", "tool_call_response"));
    Ok(if all_responses { parts } else { Vec::new() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::otlp_json::repr::repr;

    /// The result as Python's `repr` of the objects the binding builds.
    fn show<V: Tree>(out: &Out<'_, V>, input: &dyn Fn(&V) -> String) -> String {
        match out {
            Out::In(value) => input(value),
            Out::Parsed(value) => repr(value),
            Out::Null => "None".into(),
            Out::Static(s) => repr(&J::Str(s)),
            Out::Text(s) => repr(&J::Str(s)),
            Out::Obj(entries) => {
                let items: Vec<String> = entries
                    .iter()
                    .map(|(k, v)| {
                        let key = match k {
                            OutKey::Static(s) | OutKey::Str(s) => s,
                            OutKey::In(k) => V::key_str(k).unwrap_or("?"),
                        };
                        format!("{}: {}", repr(&J::Str(key)), show(v, input))
                    })
                    .collect();
                format!("{{{}}}", items.join(", "))
            }
            Out::Arr(items) => {
                let items: Vec<String> = items.iter().map(|v| show(v, input)).collect();
                format!("[{}]", items.join(", "))
            }
        }
    }

    fn messages(text: &str) -> Result<Option<String>, ParserError> {
        let bump = Bump::new();
        let out = genai_messages_text(text, &bump)?;
        Ok(out.map(|msgs| show(&Out::Arr(msgs), &|j: &J<'_>| repr(j))))
    }

    #[test]
    fn roles_in_another_case_become_genai_roles() {
        // Koog writes its Kotlin enum names; a role already in GenAI spelling is kept as given.
        assert_eq!(
            messages(r#"[{"role": "System", "parts": []}, {"role": "Assistant", "parts": [{"type": "text", "content": "a"}]}, {"role": "USER", "parts": []}, {"role": "tool", "parts": []}, {"role": "Critic", "parts": []}]"#),
            Ok(Some("[{'role': 'system', 'parts': []}, {'role': 'assistant', 'parts': [{'type': 'text', 'content': 'a'}]}, {'role': 'user', 'parts': []}, {'role': 'tool', 'parts': []}, {'role': 'Critic', 'parts': []}]".into()))
        );
    }

    #[test]
    fn semconv_messages_are_kept_and_provider_shapes_converted() {
        assert_eq!(
            messages(r#"{"role": "model", "parts": [{"type": "text", "content": "hi"}], "finish_reason": "stop"}"#),
            Ok(Some("[{'role': 'assistant', 'parts': [{'type': 'text', 'content': 'hi'}], 'finish_reason': 'stop'}]".into()))
        );
        assert_eq!(
            messages(r#"[{"role": "ai", "parts": [{"type": "tool_call", "id": "c", "arguments": "{\"q\": 1}"}, {"type": "tool_call_response", "result": 2, "id": "c"}, 7]}]"#),
            Ok(Some("[{'role': 'assistant', 'parts': [{'type': 'tool_call', 'id': 'c', 'arguments': {'q': 1}}, {'type': 'tool_call_response', 'id': 'c', 'response': 2}]}]".into()))
        );
        assert_eq!(
            messages(r#"[{"role": "assistant", "content": [{"type": "tool_use", "id": 5, "name": "f", "input": {"a": 1}}], "tool_calls": [{"id": "x", "function": {"name": "g", "arguments": "[1]"}}]}]"#),
            Ok(Some("[{'role': 'assistant', 'parts': [{'type': 'tool_call', 'id': '5', 'name': 'f', 'arguments': {'a': 1}}, {'type': 'tool_call', 'id': 'x', 'name': 'g', 'arguments': '[1]'}]}]".into()))
        );
        assert_eq!(
            messages(r#"[{"role": "tool", "content": "[{\"toolResult\": {\"toolUseId\": \"u\", \"content\": [{\"json\": {\"n\": 1e-7}}]}}]"}]"#),
            Ok(Some("[{'role': 'tool', 'parts': [{'type': 'tool_call_response', 'id': 'u', 'response': {'n': 1e-07}}]}]".into()))
        );
        assert_eq!(
            messages(r#"[{"parts": [{"json": {"b": 2.5e-5}}, {"type": "text", "text": {"z": 1, "a": [true]}}]}]"#),
            Ok(Some("[{'role': None, 'parts': [{'type': 'text', 'content': '{\"b\":0.000025}'}, {'type': 'text', 'content': '{\"a\": [true], \"z\": 1}'}]}]".into()))
        );
    }

    #[test]
    fn what_holds_no_messages_is_none_and_what_python_raised_on_is_an_error() {
        for text in ["", "1", "\"[]\"", "[1", "nul", "{'role': 'user'}"] {
            assert_eq!(messages(text), Ok(None), "{text:?}");
        }
        assert_eq!(messages("[1, \"x\", []]"), Ok(Some("[]".into())));
        assert!(messages(r#"[{"content": null, "tool_calls": 1.5}]"#).is_err());
        let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
        assert!(messages(&format!(r#"[{{"parts": [{{"json": {deep}}}]}}]"#)).is_err());
        // A text part's structured text is written as `json.dumps` writes it.
        assert_eq!(
            messages(&format!(r#"[{{"parts": [{{"text": {deep}}}]}}]"#)),
            Ok(Some(format!(
                "[{{'role': None, 'parts': [{{'type': 'text', 'content': '{deep}'}}]}}]"
            )))
        );
    }

    /// Seeded messages (xorshift64*, the same on every machine): message objects whose
    /// keys and values are drawn from the shapes the rules read (parts, provider blocks,
    /// JSON text of blocks, odd scalars), nested by drawing values inside values.
    #[test]
    fn any_message_shape_is_read_without_panicking() {
        const KEYS: [&str; 22] = [
            "role",
            "parts",
            "content",
            "tool_calls",
            "type",
            "text",
            "arguments",
            "id",
            "name",
            "json",
            "toolResult",
            "toolUse",
            "functionCall",
            "functionResponse",
            "function",
            "result",
            "response",
            "input",
            "call_id",
            "thought",
            "reasoningContent",
            "finish_reason",
        ];
        const LEAVES: [&str; 18] = [
            "null",
            "true",
            "0",
            "-1.5e-7",
            "1e300",
            "\"tool\"",
            "\"model\"",
            "\"text\"",
            "\"tool_call\"",
            "\"tool_result\"",
            "\"function_call\"",
            "\"thinking\"",
            "\"tool_call_response\"",
            "\"\\ud83d\\ude00\"",
            "\"{\\\"a\\\": [1]}\"",
            "\"[{\\\"type\\\": \\\"text\\\", \\\"text\\\": \\\"{}\\\"}]\"",
            "\"\"",
            "[]",
        ];
        let mut state: u64 = 18;
        let mut next = move |n: usize| {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
        };
        fn value(next: &mut dyn FnMut(usize) -> usize, depth: usize) -> String {
            match if depth > 4 { 0 } else { next(3) } {
                0 => LEAVES[next(LEAVES.len())].to_string(),
                1 => {
                    let items: Vec<String> = (0..next(4)).map(|_| value(next, depth + 1)).collect();
                    format!("[{}]", items.join(","))
                }
                _ => {
                    let items: Vec<String> = (0..next(5))
                        .map(|_| {
                            format!("\"{}\":{}", KEYS[next(KEYS.len())], value(next, depth + 1))
                        })
                        .collect();
                    format!("{{{}}}", items.join(","))
                }
            }
        }
        let mut parts = 0;
        for _ in 0..20_000 {
            let text = value(&mut next, 0);
            if let Ok(Some(found)) = messages(&text) {
                parts += found.matches("'type'").count();
            }
        }
        assert!(parts > 500, "the sweep reaches parts too ({parts})");
    }

    /// Whether the tests say a message value is kept whole, as the binding's shortcut asks
    /// it of the objects it made of the text.
    fn kept_whole(message: &J<'_>) -> bool {
        let J::Obj(obj) = message else {
            return false;
        };
        let entries = obj.entries();
        let part_kept = |part: &J<'_>| {
            let J::Obj(obj) = part else {
                return false;
            };
            let fields = obj.entries();
            let kind = match get(fields, "type") {
                None | Some(J::Null) => PartType::Missing,
                Some(J::Str(s)) => PartType::Str(s),
                Some(_) => PartType::Other,
            };
            let arguments_text = matches!(get(fields, "arguments"), Some(J::Str(_)));
            part_shape(kind, arguments_text, |key| has(fields, key)) == PartShape::Kept
        };
        let values_kept = entries.iter().all(|(key, value)| match (*key, value) {
            ("role", J::Str(role)) => role_kept(role),
            ("parts", J::Arr(parts)) => parts.iter().all(part_kept),
            ("parts", _) => false,
            _ => true,
        });
        values_kept && message_keys_kept(entries.iter().map(|(k, v)| (*k, matches!(v, J::Null))))
    }

    /// Seeded messages in and near the semconv shape: where every message is kept whole
    /// the result is the value itself (key order included), and the sweep meets both.
    #[test]
    fn messages_kept_whole_are_the_value_itself() {
        const KEYS: [&str; 6] = ["role", "parts", "finish_reason", "name", "content", "x"];
        const ROLES: [&str; 6] = [
            "\"user\"",
            "\"assistant\"",
            "\"Assistant\"",
            "\"ai\"",
            "null",
            "3",
        ];
        const PART_KEYS: [&str; 7] = [
            "type",
            "content",
            "arguments",
            "text",
            "result",
            "response",
            "id",
        ];
        const LEAVES: [&str; 12] = [
            "null",
            "1",
            "\"text\"",
            "\"tool_call\"",
            "\"tool_call_response\"",
            "\"thinking\"",
            "\"reasoning\"",
            "\"stop\"",
            "{\"a\": -0}",
            "[1.5]",
            "\"{}\"",
            "2",
        ];
        let mut state: u64 = 37;
        let mut next = move |n: usize| {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
        };
        let (mut kept, mut converted) = (0, 0);
        for _ in 0..20_000 {
            let mut list = Vec::new();
            for _ in 0..1 + next(2) {
                // Mostly role, parts, then optional keys; sometimes a key drawn anew.
                let mut keys = vec!["role", "parts"];
                keys.extend(
                    ["finish_reason", "name"]
                        .into_iter()
                        .filter(|_| next(2) == 0),
                );
                if next(4) == 0 {
                    let at = next(keys.len());
                    keys[at] = KEYS[next(KEYS.len())];
                }
                let members: Vec<String> = keys
                    .iter()
                    .map(|key| {
                        let value = match *key {
                            "role" => ROLES[next(ROLES.len())].to_string(),
                            "parts" => {
                                let parts: Vec<String> = (0..next(3))
                                    .map(|_| {
                                        let fields: Vec<String> = (0..1 + next(3))
                                            .map(|_| {
                                                let key = PART_KEYS[next(PART_KEYS.len())];
                                                format!("\"{key}\": {}", LEAVES[next(LEAVES.len())])
                                            })
                                            .collect();
                                        format!("{{{}}}", fields.join(", "))
                                    })
                                    .collect();
                                format!("[{}]", parts.join(", "))
                            }
                            _ => LEAVES[next(LEAVES.len())].to_string(),
                        };
                        format!("\"{key}\": {value}")
                    })
                    .collect();
                list.push(format!("{{{}}}", members.join(", ")));
            }
            let text = format!("[{}]", list.join(", "));
            let bump = Bump::new();
            let Some(value) = content::parse_json(&text, &bump) else {
                panic!("{text}");
            };
            let J::Arr(items) = value else {
                panic!("{text}");
            };
            if items.iter().all(kept_whole) {
                kept += 1;
                assert_eq!(messages(&text), Ok(Some(repr(&value))), "{text}");
            } else {
                converted += 1;
            }
        }
        assert!(
            kept > 1000 && converted > 1000,
            "{kept} kept, {converted} converted"
        );
    }

    #[test]
    fn deep_and_long_input_costs_linear_work() {
        // Nesting as deep as the JSON reader allows, and many messages: nothing recurses
        // with the input's depth, and the result is built once.
        let deep = format!("{}{}", "[".repeat(1000), "]".repeat(1000));
        let text = format!(r#"[{{"role": "user", "parts": [{{"type": "x", "v": {deep}}}]}}]"#);
        assert!(messages(&text).is_ok_and(|m| m.is_some()));
        let many = format!(
            "[{}]",
            vec![r#"{"role":"user","content":"hi"}"#; 20_000].join(",")
        );
        let bump = Bump::new();
        assert_eq!(
            genai_messages_text(&many, &bump).map(|m| m.map(|m| m.len())),
            Ok(Some(20_000))
        );
    }
}
