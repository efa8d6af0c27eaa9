//! Saved findings and a fixed sweep of the structure-aware target, run by `cargo test` on the
//! stable toolchain without cargo-fuzz or libFuzzer (what CI can afford on a fresh machine).

use std::fs;

use arbitrary::Arbitrary;
use otel_oracles_core::model::{Batch, Span};
use otel_oracles_core::otlp_proto::Signal;
use otel_oracles_fuzz::{check_batch, check_proto, run_target, structured, structured_request};

const TARGETS: [&str; 7] = [
    "proto_traces",
    "proto_logs",
    "otlp_json",
    "python_literal",
    "structured",
    "tool_names",
    "rule_regex",
];

/// Every input under `regressions/<target>/` (a finding, minimised, after its fix) passes its
/// target's checks again.
#[test]
fn saved_findings_replay_clean() {
    // The manifest directory of the running test (cargo sets it), not the compiled-in one: a
    // cached build is reused after the checkout moves.
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| env!("CARGO_MANIFEST_DIR").into(), std::path::PathBuf::from);
    let root = manifest.join("regressions");
    for target in TARGETS {
        let Ok(entries) = fs::read_dir(root.join(target)) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("readable directory").path();
            let data = fs::read(&path).expect("readable finding");
            eprintln!("replaying {}", path.display());
            run_target(target, &data);
        }
    }
}

/// A small deterministic generator (xorshift64*), so the sweep is the same on every machine.
struct Bytes(u64);

impl Bytes {
    fn fill(&mut self, len: usize) -> Vec<u8> {
        (0..len)
            .map(|_| {
                self.0 ^= self.0 >> 12;
                self.0 ^= self.0 << 25;
                self.0 ^= self.0 >> 27;
                (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
            })
            .collect()
    }
}

/// 3,000 structure-built requests of up to 2 KB: each must decode to exactly the spans the
/// record rules predict. A seconds-long stand-in for the fuzzer in CI, not a replacement.
#[test]
fn structured_requests_decode_as_predicted() {
    let mut bytes = Bytes(0x6f74_656c_2d6f_7263);
    let (mut kept, mut rejected) = (0, 0);
    for i in 0..3000 {
        let data = bytes.fill(16 + (i * 37) % 2048);
        let input = arbitrary::Unstructured::new(&data);
        if let Ok(request) = structured::Request::arbitrary_take_rest(input) {
            let (k, r) = structured_request(&request);
            kept += k;
            rejected += r;
        }
    }
    eprintln!("{kept} spans kept, {rejected} rejected");
    // The sweep reaches the record rules both ways, not only empty requests.
    assert!(
        kept >= 400 && rejected >= 1000,
        "{kept} kept, {rejected} rejected"
    );
}

/// The checks can fail: a batch claiming a record the body does not hold is caught.
#[test]
#[should_panic(expected = "records on the wire")]
fn a_record_from_nowhere_is_caught() {
    let batch = Batch {
        rejected: 1,
        problems: {
            let mut problems = otel_oracles_core::model::Problems::default();
            problems.push("spans[0]: span rejected");
            problems
        },
        ..Batch::default()
    };
    check_proto(b"", Signal::Traces, &batch);
}

/// The checks can fail: a rejection nobody reported is caught.
#[test]
#[should_panic(expected = "rejected but only")]
fn an_unreported_rejection_is_caught() {
    check_batch(&Batch {
        rejected: 2,
        ..Batch::default()
    });
}

/// The checks can fail: a decoded span that differs from the prediction is caught.
#[test]
#[should_panic(expected = "name")]
fn a_span_unlike_its_prediction_is_caught() {
    let request = structured::Request {
        resources: vec![structured::ResourceSpans {
            attributes: vec![],
            scopes: vec![structured::ScopeSpans {
                name: "scope".into(),
                version: String::new(),
                spans: vec![structured::Span {
                    trace_id: structured::Id::Right([1; 16]),
                    span_id: structured::Id::Right([2; 8]),
                    parent_span_id: None,
                    name: "tool".into(),
                    kind: 3,
                    start_ns: 1,
                    end_ns: 2,
                    attributes: vec![],
                    events: vec![],
                    links: vec![],
                    status: Some((7, "bad code".into())),
                }],
            }],
        }],
    };
    let (kept, rejected) = structured::expected(&request);
    assert_eq!((kept.len(), rejected), (1, 0));
    let (want, resource, scope) = &kept[0];
    let body = structured::encode(&request);
    let decoded = otel_oracles_core::otlp_proto::decode(&body, Signal::Traces).expect("decodes");
    let span: &Span = &decoded.batch.spans[0];
    // The real span matches; the same span renamed must not.
    structured::assert_span(span, want, resource, scope);
    let mut renamed = span.clone();
    renamed.name = "other".into();
    structured::assert_span(&renamed, want, resource, scope);
}
