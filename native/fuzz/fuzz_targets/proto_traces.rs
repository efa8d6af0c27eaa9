//! An OTLP protobuf traces request body, as `serve` and file reading hand it to the core.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| otel_oracles_fuzz::run_target("proto_traces", data));
