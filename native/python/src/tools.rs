//! The `tool_names` and `request_tool_names` parsers of `otel_oracles_core::parsers::tools`
//! (a model call's `tools_offered`) as the registered parsers of
//! `otel_oracles.mapping.parsers.scalars`.
//!
//! Each takes any value as a `parse:` chain hands it over: a `str` is read as JSON text in
//! the arena (only the names become Python objects), a structured value (an `attr_prefix`
//! mapping, an OTLP array) through [`PyValue`]. The answer is a `tuple` of the names, or
//! `None` when the value does not say which tools were offered (a `str` holding lone
//! surrogates included: no UTF-8, so no JSON).

use otel_oracles_core::otlp_json::value::J;
use otel_oracles_core::parsers::tools;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};

use crate::pytree::PyValue;

/// Which parser [`read`] runs.
#[derive(Clone, Copy)]
enum Which {
    Definitions,
    Request,
}

fn parse<V: otel_oracles_core::parsers::Tree>(
    which: Which,
    value: &V,
    bump: &bumpalo::Bump,
) -> Option<Vec<String>> {
    match which {
        Which::Definitions => tools::tool_names(value, bump),
        Which::Request => tools::request_tool_names(value, bump),
    }
}

fn read<'py>(value: &Bound<'py, PyAny>, which: Which) -> PyResult<Bound<'py, PyAny>> {
    let py = value.py();
    let bump = bumpalo::Bump::new();
    let names = if let Ok(text) = value.cast::<PyString>() {
        match text.to_str() {
            Ok(text) => parse(which, &J::Str(text), &bump),
            Err(_) => None,
        }
    } else {
        parse(which, &PyValue::read(value)?, &bump)
    };
    match names {
        Some(names) => Ok(PyTuple::new(py, names)?.into_any()),
        None => Ok(py.None().into_bound(py)),
    }
}

/// `tool_names`: the names of the tool definitions `value` records (JSON text, a list, one
/// definition, or an `attr_prefix` mapping of a flattened list) as a `tuple`; an empty list
/// is `()`. `None` when the value is no list of named definitions. An attribute written only
/// when tools were offered says nothing through its absence: absence is no value, never `()`.
#[pyfunction]
pub(crate) fn parse_tool_names<'py>(value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    read(value, Which::Definitions)
}

/// `request_tool_names`: the tools of a recorded request's parameters (an object, or JSON
/// text of one, such as OpenInference's `llm.invocation_parameters` where an instrumentation
/// copies every keyword the request was made with): the names of its `tools` (else its
/// legacy `functions`), and `()` when it has neither or holds `null` there (the request
/// offered none). `None` for anything that is no object, or tools without readable names.
/// Only for instrumentations that copy the whole request: where they keep a selection, a
/// missing `tools` says nothing.
#[pyfunction]
pub(crate) fn parse_request_tool_names<'py>(
    value: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    read(value, Which::Request)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(parse_tool_names, m)?)?;
    m.add_function(wrap_pyfunction!(parse_request_tool_names, m)?)?;
    Ok(())
}
