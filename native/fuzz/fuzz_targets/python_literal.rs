//! Python `repr` text, read by `python_literal` and `python_repr`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| otel_oracles_fuzz::run_target("python_literal", data));
