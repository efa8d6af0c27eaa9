//! The per-span hot path of otel-oracles, in plain Rust.
//!
//! Python owns configuration (contracts, conventions), orchestration and the oracles; this
//! crate owns the work done once per span or per byte: decoding OTLP into [`model`] records,
//! grouping them into traces offline ([`assemble_offline`]) and encoding what the grader
//! emits. Everything here is independent of Python so it is tested by `cargo test` alone;
//! the `otel-oracles-native` crate exposes it to Python.

pub mod assemble_offline;
pub mod citations;
pub mod content;
pub mod encode;
pub mod hashing;
pub mod json_text;
pub mod log_events;
pub mod model;
pub mod online;
pub mod otlp_json;
pub mod otlp_proto;
pub mod otlp_select;
pub mod parsers;
pub mod placeholder;
mod pyrepr;
mod pyrepr_table;
pub mod rule_regex;
pub mod rules;
pub mod scan;
pub mod screen;
pub mod sequence;
pub mod session_join;
pub mod span_tree;
pub mod tool_glob;
pub mod trace_passes;
pub mod wire;
pub mod words;
