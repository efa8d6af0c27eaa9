//! Invariants the fuzz targets check on every decoded body, beyond "no panic".
//!
//! A decoder that returns without panicking can still be wrong in ways a cheap independent
//! check catches: records appearing from nowhere or vanishing without being counted, problem
//! lists growing with the input, ids the record rules forbid. Each check here is a few lines
//! over the decoded batch (or one extra walk of the wire framing), so the targets keep most of
//! their speed. A violated invariant panics, which libFuzzer reports as a crash.

pub mod structured;

use arbitrary::Arbitrary;
use otel_oracles_core::model::{Batch, MAX_LISTED_PROBLEMS};
use otel_oracles_core::otlp_json;
use otel_oracles_core::otlp_proto::{self, Signal};
use otel_oracles_core::parsers::python_literal::{
    python_literal, python_repr, Literal, Value as LiteralValue,
};
use otel_oracles_core::wire::{Fields, Value, WireError};

use bumpalo::Bump;
use otel_oracles_core::content;
use otel_oracles_core::otlp_json::value::J;
use otel_oracles_core::parsers::tools::{request_tool_names, tool_names};
use otel_oracles_core::rule_regex::RegexPlan;
use std::collections::BTreeMap;

/// The body of each fuzz target, here so that `cargo test` replays saved findings
/// (`tests/regressions.rs`) through exactly what the fuzzer ran.
pub fn run_target(name: &str, data: &[u8]) {
    match name {
        "proto_traces" => proto_body(data, Signal::Traces),
        "proto_logs" => proto_body(data, Signal::Logs),
        "otlp_json" => json_body(data),
        "python_literal" => python_text(data),
        "tool_names" => tool_names_text(data),
        "rule_regex" => rule_regex_case(data),
        "structured" => {
            // As `fuzz_target!` reads a typed input, so a saved finding replays the same request.
            let input = arbitrary::Unstructured::new(data);
            if let Ok(request) = <structured::Request as Arbitrary>::arbitrary_take_rest(input) {
                structured_request(&request);
            }
        }
        _ => panic!("no fuzz target {name}"),
    }
}

/// Text a trace recorded with `str()`/`repr()`, read by both Python-repr parsers
/// (`python_literal`, `python_repr`): what they build nests no deeper than CPython's
/// tokenizer allows (200 brackets), so turning it into Python objects cannot recurse without
/// bound; the input is the fuzzer's bytes as UTF-8 (invalid sequences replaced).
pub fn python_text(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for literal in [python_literal(&text), python_repr(&text)] {
        if let Literal::Value(value) = literal {
            let depth = literal_depth(&value);
            assert!(depth <= 201, "a parsed value nests {depth} deep");
        }
    }
}

/// Nesting depth of a parsed literal (1 for a scalar), counted without recursion.
fn literal_depth(value: &LiteralValue<'_>) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 1usize)];
    while let Some((node, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        match node {
            LiteralValue::List(items) => stack.extend(items.iter().map(|v| (v, depth + 1))),
            LiteralValue::Dict(items) => stack.extend(items.iter().map(|(_, v)| (v, depth + 1))),
            _ => {}
        }
    }
    deepest
}

/// A protobuf request body read as `signal`.
pub fn proto_body(data: &[u8], signal: Signal) {
    if let Ok(decoded) = otlp_proto::decode(data, signal) {
        check_proto(data, signal, &decoded.batch);
    }
}

/// An OTLP/JSON document: one request body (`decode`) and, for files that hold a list of
/// export bodies, the list form (`decode_many`), which must agree with it on a single request.
pub fn json_body(data: &[u8]) {
    let one = otlp_json::decode(data);
    if let Ok(batch) = &one {
        check_json(data, batch);
    }
    match otlp_json::decode_many(data) {
        Ok(results) => {
            for batch in results.iter().flatten() {
                check_json(data, batch);
            }
            // A document that is not a list is one request: both entry points read it alike.
            if let (Ok(batch), [Ok(only)]) = (&one, results.as_slice()) {
                if !data.trim_ascii_start().starts_with(b"[") {
                    assert_eq!(batch, only, "decode and decode_many disagree");
                }
            }
        }
        Err(err) => assert!(
            one.is_err(),
            "decode_many refused what decode read: {err:?}"
        ),
    }
}

/// A traces request built by `arbitrary`, encoded to protobuf, decoded, and compared span by
/// span with what the record rules say the decoder must keep. Returns the spans kept and
/// rejected (none when the request is refused as too deep), so a sweep can tell it reached
/// the record rules.
pub fn structured_request(request: &structured::Request) -> (usize, usize) {
    let body = structured::encode(request);
    let deepest = structured::depth(request);
    match otlp_proto::decode(&body, Signal::Traces) {
        Err(err) => {
            assert_eq!(err, WireError::TooDeep, "a well-formed body refused");
            assert!(
                structured::too_deep(deepest),
                "refused as too deep at depth {deepest}"
            );
            (0, 0)
        }
        Ok(decoded) => {
            assert!(
                !structured::too_deep(deepest),
                "accepted at depth {deepest}"
            );
            let batch = &decoded.batch;
            check_proto(&body, Signal::Traces, batch);
            let (kept, rejected) = structured::expected(request);
            assert_eq!(batch.rejected, rejected, "rejected spans");
            assert_eq!(batch.spans.len(), kept.len(), "kept spans");
            for (got, (want, resource, scope)) in batch.spans.iter().zip(&kept) {
                structured::assert_span(got, want, resource, scope);
            }
            (batch.spans.len(), batch.rejected)
        }
    }
}

/// Checks that hold for every batch, whichever decoder made it.
pub fn check_batch(batch: &Batch) {
    assert!(
        batch.problems.listed.len() <= MAX_LISTED_PROBLEMS,
        "{} problems listed, the bound is {MAX_LISTED_PROBLEMS}",
        batch.problems.listed.len()
    );
    assert!(
        batch.problems.omitted == 0 || batch.problems.listed.len() == MAX_LISTED_PROBLEMS,
        "problems omitted while the list has room"
    );
    // Every rejected record is reported: the count may exceed the listed messages, never the total.
    assert!(
        batch.problems.total() >= batch.rejected,
        "{} records rejected but only {} problems",
        batch.rejected,
        batch.problems.total()
    );
    for message in &batch.problems.listed {
        assert!(!message.is_empty(), "an empty problem message");
    }
}

/// The records a protobuf body holds on the wire: `resource_*[1].scope_*[2].records[2]`,
/// counted by walking only the framing. Only called on bodies the decoder accepted, whose
/// framing is therefore valid.
pub fn proto_records_on_wire(body: &[u8]) -> usize {
    let mut count = 0;
    let mut top = Fields::top(body, &[]);
    while let Some((number, value)) = top.next().expect("accepted body reframes") {
        let (1, Value::Bytes(resource)) = (number, value) else {
            continue;
        };
        let mut resource = top.child(resource, &[]).expect("resource");
        while let Some((number, value)) = resource.next().expect("resource reframes") {
            let (2, Value::Bytes(scope)) = (number, value) else {
                continue;
            };
            let mut scope = resource.child(scope, &[]).expect("scope");
            while let Some((number, value)) = scope.next().expect("scope reframes") {
                if let (2, Value::Bytes(_)) = (number, value) {
                    count += 1;
                }
            }
        }
    }
    count
}

/// Checks for a protobuf body decoded as `signal`: the other signal's records never appear,
/// and every record on the wire is either decoded or counted as rejected.
pub fn check_proto(body: &[u8], signal: Signal, batch: &Batch) {
    check_batch(batch);
    let decoded = match signal {
        Signal::Traces => {
            assert!(batch.logs.is_empty(), "log records from a traces body");
            batch.spans.len()
        }
        Signal::Logs => {
            assert!(batch.spans.is_empty(), "spans from a logs body");
            batch.logs.len()
        }
    };
    let on_wire = proto_records_on_wire(body);
    assert_eq!(
        decoded + batch.rejected,
        on_wire,
        "{decoded} decoded + {} rejected != {on_wire} records on the wire",
        batch.rejected
    );
}

/// Elements of every array under a `"spans"`, `"logRecords"` or `"log_records"` key, at any
/// depth: an upper bound on the records an OTLP/JSON body can yield or reject, whichever key
/// spelling the decoder picked.
fn json_records_bound(value: &serde_json::Value) -> usize {
    match value {
        serde_json::Value::Object(map) => map
            .iter()
            .map(|(key, inner)| {
                let own = match (key.as_str(), inner) {
                    ("spans" | "logRecords" | "log_records", serde_json::Value::Array(items)) => {
                        items.len()
                    }
                    _ => 0,
                };
                own + json_records_bound(inner)
            })
            .sum(),
        serde_json::Value::Array(items) => items.iter().map(json_records_bound).sum(),
        _ => 0,
    }
}

/// Checks for an OTLP/JSON body: no span with the all-zero ids OTLP defines as invalid, no
/// all-zero parent (it means "no parent"), and no more records decoded or rejected than the
/// document lists (when an independent JSON parser reads the document too).
pub fn check_json(body: &[u8], batch: &Batch) {
    check_batch(batch);
    for span in &batch.spans {
        assert_ne!(span.trace_id, [0; 16], "a span with an all-zero trace id");
        assert_ne!(span.span_id, [0; 8], "a span with an all-zero span id");
        assert_ne!(span.parent_span_id, Some([0; 8]), "an all-zero parent id");
    }
    if let Ok(doc) = serde_json::from_slice::<serde_json::Value>(body) {
        let bound = json_records_bound(&doc);
        let records = batch.spans.len() + batch.logs.len();
        assert!(
            records + batch.rejected <= bound,
            "{records} records + {} rejected, but the document lists {bound}",
            batch.rejected
        );
    }
}

/// The tools a model call offered, read from text a span recorded (`tool_names`,
/// `request_tool_names`; the input as UTF-8, invalid sequences replaced): no name is empty,
/// and the names together are never longer than the text (each is read from its own part of
/// it, unescaping only shortens), so no input makes the parsers allocate more than it holds.
/// A flattened list (`{"N.name": ...}`) whose every index has a non-empty name answers those
/// names by index, the last entry of an index counting (an independent `BTreeMap` reading).
pub fn tool_names_text(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let bump = Bump::new();
    let value = J::Str(&text);
    for names in [tool_names(&value, &bump), request_tool_names(&value, &bump)]
        .into_iter()
        .flatten()
    {
        assert!(names.iter().all(|n| !n.is_empty()), "an empty tool name");
        let total: usize = names.iter().map(String::len).sum();
        assert!(
            total <= text.len(),
            "{total} bytes of names from {} of text",
            text.len()
        );
    }
    let Some(J::Obj(object)) = content::parse_json(&text, &bump) else {
        return;
    };
    let entries = object.entries();
    let mut by_index: BTreeMap<u64, Option<&str>> = BTreeMap::new();
    for (key, value) in entries {
        let Some((index, rest)) = key.split_once('.') else {
            return;
        };
        let Ok(index) = index.parse::<u64>() else {
            return;
        };
        let slot = by_index.entry(index).or_insert(None);
        if matches!(rest, "tool.name" | "name") {
            *slot = match value {
                J::Str(name) if !name.is_empty() => Some(name),
                _ => None,
            };
        }
    }
    if by_index.is_empty() || by_index.values().any(Option::is_none) {
        return;
    }
    let want: Vec<String> = by_index
        .values()
        .flatten()
        .map(|n| (*n).to_owned())
        .collect();
    assert_eq!(
        tool_names(&J::Obj(object), &bump),
        Some(want),
        "flattened names"
    );
}

/// A rule-table regex and texts (the input split at NUL bytes: the pattern, then the texts;
/// each as UTF-8, invalid sequences replaced). The core's plan never panics, and where it is
/// exact its answers agree with the filter plan of the same pattern made opaque by an optional
/// `\w` after it (a pattern with the same matches): a filter must never say "no match" for a
/// text the exact reading matches. `tools/fuzz/replay_rule_regex.py` replays a corpus against
/// Python's engine itself, the one meaning of a pattern.
pub fn rule_regex_case(data: &[u8]) {
    let mut parts = data.split(|b| *b == 0);
    let pattern = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let texts: Vec<String> = parts
        .map(|t| String::from_utf8_lossy(t).into_owned())
        .collect();
    let plan = RegexPlan::of(&pattern);
    let answers: Vec<Option<bool>> = texts.iter().map(|t| plan.answer(t)).collect();
    if !plan.is_exact() {
        return;
    }
    let opaque = RegexPlan::of(&format!("(?:{pattern})\\w?"));
    assert!(!opaque.is_exact(), "an opaque part read as exact");
    for (text, answer) in texts.iter().zip(answers) {
        assert!(answer.is_some(), "an exact plan left a text to the host");
        if answer == Some(true) {
            assert_eq!(
                opaque.answer(text),
                None,
                "the filter of {pattern:?} ruled out {text:?}, which the exact plan matches"
            );
        }
    }
}
