//! The tools a model call offered (a step's `tools_offered`): the `tool_names` and
//! `request_tool_names` parsers, over a value tree.
//!
//! Instrumentations record a request's tool definitions in several shapes: OpenInference's
//! flattened `llm.tools.N.tool.json_schema` (or `.tool.name`), OpenLLMetry's
//! `llm.request.functions.N.name`, the GenAI `gen_ai.tool.definitions` JSON array, a list of
//! texts each holding such an array (Langtrace's `gen_ai.request.tools`), or a list of bare
//! names (Mastra). A definition is named by its `name`, its `function.name` (OpenAI's chat
//! format) or its `toolSpec.name` (Bedrock's Converse). Both parsers answer with the names in
//! the order given, or `None` when the value does not say which tools were offered: text that
//! is no such JSON (a placeholder such as `HIDDEN:non-empty`), or one definition without a
//! readable name (a list whose names are partly unknown is no list of names).
//!
//! Only the names are kept: JSON text is parsed into the arena and never built as Python
//! objects (tool definitions are the largest attribute many model-call spans carry).

use bumpalo::Bump;

use super::{Iteration, Kind, Tree};
use crate::content;
use crate::otlp_json::value::J;

/// How deep text holding JSON, and lists inside lists, are followed (a list of texts each
/// holding a list, as Langtrace writes them, is two levels).
const MAX_DEPTH: usize = 3;

/// `tool_names`: the names of the tool definitions `value` records (JSON text, a list, one
/// definition, or the entries of a flattened list under an `attr_prefix`, keyed `N.rest`);
/// an empty list has none. `None` when the value is no list of named definitions.
pub fn tool_names<V: Tree>(value: &V, bump: &Bump) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let complete = match value.kind() {
        Kind::Str(text) => {
            let parsed = content::parse_json(text, bump)?;
            top(&parsed, bump, &mut out)
        }
        _ => top(value, bump, &mut out),
    };
    complete.then_some(out)
}

/// `request_tool_names`: the tools of a recorded request's parameters (an object, or JSON
/// text of one): the names of its `tools`, else of its legacy `functions`, and none (an
/// empty list) when it has neither or holds `null` there. `None` for anything that is no
/// object, or tools without readable names.
pub fn request_tool_names<V: Tree>(value: &V, bump: &Bump) -> Option<Vec<String>> {
    match value.kind() {
        Kind::Str(text) => {
            let parsed = content::parse_json(text, bump)?;
            request(&parsed, bump)
        }
        _ => request(value, bump),
    }
}

fn request<V: Tree>(value: &V, bump: &Bump) -> Option<Vec<String>> {
    let Kind::Obj(entries) = value.kind() else {
        return None;
    };
    for key in ["tools", "functions"] {
        let found = entries.iter().find(|(k, _)| V::key_str(k) == Some(key));
        if let Some((_, tools)) = found {
            if matches!(tools.kind(), Kind::Null) {
                continue;
            }
            return tool_names(tools, bump);
        }
    }
    Some(Vec::new())
}

fn top<V: Tree>(value: &V, bump: &Bump, out: &mut Vec<String>) -> bool {
    match value.kind() {
        Kind::Obj(entries) if is_flattened::<V>(entries) => flattened(entries, bump, out),
        _ => item(value, bump, out, 0),
    }
}

/// The names one item stands for, appended to `out`: a definition's name, a bare name, or
/// the names of a list (or of text holding one). `false`: the item names no tool.
fn item<V: Tree>(value: &V, bump: &Bump, out: &mut Vec<String>, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    match value.kind() {
        Kind::Obj(entries) => match definition_name::<V>(entries) {
            Some(name) => {
                out.push(name.to_owned());
                true
            }
            None => false,
        },
        Kind::Arr(items)
        | Kind::Other {
            iteration: Iteration::Items(items),
            ..
        } => items.iter().all(|i| item(i, bump, out, depth + 1)),
        Kind::Str(text) => match content::parse_json(text, bump) {
            Some(parsed @ (J::Arr(_) | J::Obj(_))) => item(&parsed, bump, out, depth + 1),
            // Text that is no JSON container: a bare tool name.
            _ if !text.is_empty() => {
                out.push(text.to_owned());
                true
            }
            _ => false,
        },
        _ => false,
    }
}

/// A non-empty text under `key` of an object's entries.
fn text_under<'v, V: Tree>(entries: &'v [(V::Key, V)], key: &str) -> Option<&'v str> {
    let (_, value) = entries.iter().find(|(k, _)| V::key_str(k) == Some(key))?;
    match value.kind() {
        Kind::Str(text) if !text.is_empty() => Some(text),
        _ => None,
    }
}

/// A definition's name: `name`, `function.name` or `toolSpec.name`.
fn definition_name<V: Tree>(entries: &[(V::Key, V)]) -> Option<&str> {
    if let Some(name) = text_under::<V>(entries, "name") {
        return Some(name);
    }
    for wrapper in ["function", "toolSpec"] {
        let found = entries.iter().find(|(k, _)| V::key_str(k) == Some(wrapper));
        if let Some((_, inner)) = found {
            if let Kind::Obj(inner) = inner.kind() {
                if let Some(name) = text_under::<V>(inner, "name") {
                    return Some(name);
                }
            }
        }
    }
    None
}

/// The index of a flattened key `N.rest` and its rest.
fn index_key(key: &str) -> Option<(u64, &str)> {
    let (index, rest) = key.split_once('.')?;
    Some((index.parse().ok()?, rest))
}

/// Whether every key is a flattened list's `N.rest` (the entries under an `attr_prefix`).
fn is_flattened<V: Tree>(entries: &[(V::Key, V)]) -> bool {
    !entries.is_empty()
        && entries
            .iter()
            .all(|(k, _)| V::key_str(k).and_then(index_key).is_some())
}

/// The names of a flattened list, by index: each entry's own name (`tool.name`, `name`),
/// else its JSON schema's (`tool.json_schema`, `json_schema`); of a key written twice the last
/// counts, and an index with neither is a definition without a name. The entries are sorted
/// by index (a stable sort keeps each index's entries in their order) rather than an index
/// looked up per entry: a span decides how many there are, and that lookup made 40,000
/// entries cost 0.26 s and 640,000 over a minute.
fn flattened<V: Tree>(entries: &[(V::Key, V)], bump: &Bump, out: &mut Vec<String>) -> bool {
    // Per entry its index, whether it is the name (`Some(true)`), the schema (`Some(false)`)
    // or another field of the definition (`None`), and its value.
    let mut keyed: Vec<(u64, Option<bool>, &V)> = Vec::with_capacity(entries.len());
    for (key, value) in entries {
        let Some((index, rest)) = V::key_str(key).and_then(index_key) else {
            continue;
        };
        let role = match rest {
            "tool.name" | "name" => Some(true),
            "tool.json_schema" | "json_schema" => Some(false),
            _ => None,
        };
        keyed.push((index, role, value));
    }
    keyed.sort_by_key(|(index, _, _)| *index);
    for definition in keyed.chunk_by(|a, b| a.0 == b.0) {
        let mut name = None;
        let mut schema = None;
        for (_, role, value) in definition {
            match role {
                Some(true) => name = Some(*value),
                Some(false) => schema = Some(*value),
                None => {}
            }
        }
        if let Some(Kind::Str(text)) = name.map(Tree::kind) {
            if !text.is_empty() {
                out.push(text.to_owned());
                continue;
            }
        }
        let mut found = Vec::new();
        let named = schema.is_some_and(|s| item(s, bump, &mut found, 1) && found.len() == 1);
        if !named {
            return false;
        }
        out.append(&mut found);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Option<Vec<String>> {
        let bump = Bump::new();
        tool_names(&J::Str(text), &bump)
    }

    fn request_names(text: &str) -> Option<Vec<String>> {
        let bump = Bump::new();
        request_tool_names(&J::Str(text), &bump)
    }

    fn owned(names: &[&str]) -> Option<Vec<String>> {
        Some(names.iter().map(|n| (*n).to_owned()).collect())
    }

    #[test]
    fn every_recorded_shape_names_its_tools() {
        assert_eq!(
            names(r#"[{"type": "function", "name": "a"}, {"name": "b"}]"#),
            owned(&["a", "b"])
        );
        assert_eq!(
            names(r#"[{"type": "function", "function": {"name": "a"}}]"#),
            owned(&["a"])
        );
        assert_eq!(names(r#"[{"toolSpec": {"name": "a"}}]"#), owned(&["a"]));
        assert_eq!(names(r#"["a", "b"]"#), owned(&["a", "b"]));
        assert_eq!(
            names(r#"["[{\"name\": \"a\"}]", "[{\"name\": \"b\"}]"]"#),
            owned(&["a", "b"])
        );
        assert_eq!(
            names(r#"{"1.name": "b", "0.tool.json_schema": "{\"name\": \"a\"}"}"#),
            owned(&["a", "b"])
        );
        assert_eq!(names("[]"), owned(&[]));
    }

    #[test]
    fn a_list_with_an_unnamed_definition_says_nothing() {
        assert_eq!(names(r#"[{"name": "a"}, {"description": "d"}]"#), None);
        assert_eq!(
            names(r#"{"0.tool.json_schema": "{\"type\": \"object\"}"}"#),
            None
        );
        assert_eq!(names("HIDDEN:non-empty"), None);
        assert_eq!(names("a,b"), None);
        assert_eq!(names("4"), None);
        assert_eq!(names(r#"[[[[["a"]]]]]"#), None); // past MAX_DEPTH
    }

    #[test]
    fn a_flattened_list_reads_by_index_the_last_entry_of_a_key() {
        assert_eq!(
            names(r#"{"1.name": "b", "0.name": "x", "0.name": "a", "2.tool.description": "d"}"#),
            None
        );
        assert_eq!(
            names(r#"{"1.name": "b", "0.name": "x", "0.name": "a", "0.description": "d"}"#),
            owned(&["a", "b"])
        );
        assert_eq!(
            names(r#"{"10.name": "c", "9.tool.json_schema": "{\"name\": \"b\"}", "0.name": ""}"#),
            None
        );
    }

    #[test]
    fn a_request_without_tools_offered_none() {
        assert_eq!(request_names(r#"{"model": "m"}"#), owned(&[]));
        assert_eq!(request_names(r#"{"tools": null}"#), owned(&[]));
        assert_eq!(
            request_names(r#"{"tools": [{"function": {"name": "a"}}]}"#),
            owned(&["a"])
        );
        assert_eq!(
            request_names(r#"{"functions": [{"name": "a"}]}"#),
            owned(&["a"])
        );
        assert_eq!(request_names(r#"{"tools": [{}]}"#), None);
        assert_eq!(request_names("[1]"), None);
        assert_eq!(request_names("not json"), None);
    }
}
