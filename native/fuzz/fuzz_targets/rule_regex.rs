//! A rule-table regex and texts: the core's plan of the pattern (`rule_regex`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| otel_oracles_fuzz::run_target("rule_regex", data));
