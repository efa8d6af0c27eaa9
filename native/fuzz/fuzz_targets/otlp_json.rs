//! An OTLP/JSON document, as one request body and as a list of them.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| otel_oracles_fuzz::run_target("otlp_json", data));
