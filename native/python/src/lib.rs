//! `otel_oracles._native`: the native core's Python face.
//!
//! Each stage's bindings live in their own module and register their functions and classes
//! here; the Python stage packages (`otel_oracles.decode`, `otel_oracles.emit`, ...) are the
//! only importers, and `otel_oracles/_native.pyi` is the typed contract between the two.

use pyo3::prelude::*;

/// The Rust side's heap (the decoded model, parsers' scratch, the joiner's window, report
/// text; CPython's own objects keep `pymalloc` and the platform `malloc`) comes from
/// mimalloc, the allocator pydantic-core's module uses too: its per-size free lists serve the
/// core's many small short-lived blocks in a few instructions where glibc's `malloc`/`free`
/// took ~5% of a grade. On in every build of the module (the `mimalloc` feature,
/// pyproject.toml and tools/build_native.sh); off for the workspace's checks.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod assemble_offline;
mod batch;
mod check_plans;
mod check_plans_agentbench;
mod check_plans_answer;
mod check_plans_cite;
mod check_plans_more;
mod checks;
mod decode_json;
mod decode_proto;
mod draft;
mod emit_records;
mod encode;
mod encode_metrics;
mod evidence;
mod failures;
mod fields;
mod grade_tally;
mod limits;
mod linking;
mod log_events;
mod online;
mod parsers;
mod passes;
mod pydict;
mod pytree;
mod replay;
mod report_json;
mod report_markup;
mod results;
mod retries;
mod rules;
mod scan;
mod scrub;
mod session_join;
mod slots;
mod span_tree;
mod stacked;
mod step;
mod tool_glob;
mod tools;

/// The version of the core the extension was built from; the tests compare it with the
/// Python package's, so a stale build is caught.
#[pyfunction]
fn core_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(core_version, m)?)?;
    batch::register(m)?;
    assemble_offline::register(m)?;
    decode_proto::register(m)?;
    decode_json::register(m)?;
    encode::register(m)?;
    encode_metrics::register(m)?;
    emit_records::register(m)?;
    grade_tally::register(m)?;
    parsers::register(m)?;
    online::register(m)?;
    rules::register(m)?;
    fields::register(m)?;
    limits::register(m)?;
    linking::register(m)?;
    passes::register(m)?;
    stacked::register(m)?;
    draft::register(m)?;
    scan::register(m)?;
    span_tree::register(m)?;
    log_events::register(m)?;
    session_join::register(m)?;
    step::register(m)?;
    tools::register(m)?;
    tool_glob::register(m)?;
    report_json::register(m)?;
    report_markup::register(m)?;
    scrub::register(m)?;
    evidence::register(m)?;
    results::register(m)?;
    checks::register(m)?;
    check_plans::register(m)?;
    check_plans_answer::register(m)?;
    slots::register(m)?;
    replay::register(m)?;
    Ok(())
}
