//! Text a span recorded as the tools a model call offered, read by `tool_names` and
//! `request_tool_names`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| otel_oracles_fuzz::run_target("tool_names", data));
