//! Structure-aware: a traces request built by `arbitrary` from the input, encoded to
//! protobuf, decoded, and compared span by span with what the record rules predict.
#![no_main]

use libfuzzer_sys::fuzz_target;
use otel_oracles_fuzz::structured::Request;

fuzz_target!(|request: Request| {
    otel_oracles_fuzz::structured_request(&request);
});
