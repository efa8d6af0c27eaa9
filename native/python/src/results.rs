//! What a tool step's result says (`otel_oracles.mapping._tool_results`): an approval step's
//! refusal, an error a framework handed the model in place of the tool's output, or an
//! empty answer. `judge_result` in `mapping/_mapper.py` asks once per tool result; the work
//! used to be three Python passes, each decoding the result again (`structured`).
//!
//! The semantics are Python's, operation for operation: the result is decoded once
//! (`structured`: JSON or Python-repr text of an object or array, content blocks and MCP
//! `CallToolResult`s unwrapped), then
//!
//! 1. a refusal (`denied_pattern`, when a file declares one): the text itself, or the first
//!    truthy value under an `error_keys` key of an object, matched at its start (its first
//!    `PATTERN_WINDOW` characters) by a declared pattern;
//! 2. unless the span already failed, an error: an object's first `error_keys` key whose value
//!    is not `None` (its text, or `parse_string` of it), or a text an `error_pattern` matches;
//! 3. else whether it is empty: `""`, `[]`, `{}`, an object whose every list (one at least)
//!    is empty, a text that is blank or matches an `empty_pattern`.
//!
//! Plain `dict`, `list` and `str` objects are read through their C API; any other object (a
//! subclass, a value a plug-in parser made) through the very Python operations the old
//! Python code ran (`get`, `keys() == {...}`, `==`, `len`, `[...]`), so a subclass's methods
//! answer as before. The regexes keep Python's meaning: each pattern is analysed once into a
//! `rule_regex::MatchPlan`, which answers a text where the analysis proves the engine's answer
//! (an exact pattern; a text that starts with none of the literals every match starts with,
//! or lacks one every match holds), and every other text is asked of `safe_regex.match` (its
//! engine, its time budget); `parse_string` (an error value that is no text) stays Python's.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PySet, PySlice, PyString, PyTuple};

use otel_oracles_core::rule_regex::MatchPlan;

use crate::parsers::{parse_json, parse_python_literal};
use crate::pydict;

/// Characters of a text result the declared patterns see (anchored at its start);
/// `_tool_results.PATTERN_WINDOW`.
pub const PATTERN_WINDOW: isize = 512;

/// What a result says: `"denied"`, `"error"` or `"empty"`, and the refusal or error text.
type Said<'py> = (&'static str, Option<Bound<'py, PyAny>>);

/// Declared patterns of one kind, each with what the core can answer of it.
struct Patterns(Vec<(Py<PyAny>, MatchPlan)>);

impl Patterns {
    /// A pattern given as an exact `str` is analysed; any other object (a compiled pattern)
    /// is the engine's for every text.
    fn of(patterns: Vec<Bound<'_, PyAny>>) -> Self {
        Self(
            patterns
                .into_iter()
                .map(|pattern| {
                    let plan = match pattern.cast_exact::<PyString>().map(|text| text.to_str()) {
                        Ok(Ok(text)) => MatchPlan::of(text),
                        _ => MatchPlan::host(),
                    };
                    (pattern.unbind(), plan)
                })
                .collect(),
        )
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The tool-result rules of every convention file, merged (`ToolResultRules`).
#[pyclass(module = "otel_oracles._native", name = "ResultRules", frozen)]
pub struct ResultRules {
    error_keys: Vec<Py<PyString>>,
    error_patterns: Patterns,
    empty_patterns: Patterns,
    denied_patterns: Patterns,
    /// `safe_regex.match(pattern, text)`.
    matcher: Py<PyAny>,
    /// `parsers.scalars.parse_string(value)`.
    parse_string: Py<PyAny>,
}

#[pymethods]
impl ResultRules {
    /// The merged `error_keys`, the compiled `error_pattern`s, `empty_pattern`s and
    /// `denied_pattern`s, and the two Python functions the rules run: `safe_regex.match` and
    /// `parse_string`.
    #[new]
    fn new(
        error_keys: Vec<Bound<'_, PyString>>,
        error_patterns: Vec<Bound<'_, PyAny>>,
        empty_patterns: Vec<Bound<'_, PyAny>>,
        denied_patterns: Vec<Bound<'_, PyAny>>,
        matcher: Bound<'_, PyAny>,
        parse_string: Bound<'_, PyAny>,
    ) -> Self {
        Self {
            error_keys: error_keys.into_iter().map(Bound::unbind).collect(),
            error_patterns: Patterns::of(error_patterns),
            empty_patterns: Patterns::of(empty_patterns),
            denied_patterns: Patterns::of(denied_patterns),
            matcher: matcher.unbind(),
            parse_string: parse_string.unbind(),
        }
    }

    /// What `result` (not `None`) says: `("denied", text)`, `("error", message)` (only when
    /// `failed` is false: a failed span's own error stands), `("empty", None)`, or `None`.
    pub(crate) fn judge<'py>(
        &self,
        result: &Bound<'py, PyAny>,
        failed: bool,
    ) -> PyResult<Option<Said<'py>>> {
        let value = structured(result)?;
        if !self.denied_patterns.is_empty() {
            if let Some(text) = self.denial(&value)? {
                return Ok(Some(("denied", Some(text))));
            }
        }
        if !failed {
            if let Some(message) = self.error(&value)? {
                return Ok(Some(("error", Some(message))));
            }
        }
        if self.empty(&value)? {
            return Ok(Some(("empty", None)));
        }
        Ok(None)
    }
}

impl ResultRules {
    /// `denial_in`: the refusal text, or `None`.
    fn denial<'py>(&self, value: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = value.py();
        let mut text = value.clone();
        if value.is_instance_of::<PyDict>() {
            // Google ADK: {"error": "This tool call is rejected."}
            text = py.None().into_bound(py);
            for key in &self.error_keys {
                let key = key.bind(py);
                if pydict::get(value, key)?.is_truthy()? {
                    text = value.get_item(key)?;
                    break;
                }
            }
        }
        if text.is_instance_of::<PyString>() && self.matches(&self.denied_patterns, &text)? {
            return Ok(Some(text));
        }
        Ok(None)
    }

    /// `error_in`: the error message, or `None`.
    fn error<'py>(&self, value: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = value.py();
        if value.is_instance_of::<PyDict>() {
            for key in &self.error_keys {
                let key = key.bind(py);
                if !pydict::get(value, key)?.is_none() {
                    let found = value.get_item(key)?;
                    if found.is_instance_of::<PyString>() {
                        return Ok(Some(found));
                    }
                    let text = self.parse_string.bind(py).call1((found,))?;
                    return Ok((!text.is_none()).then_some(text));
                }
            }
            return Ok(None);
        }
        if value.is_instance_of::<PyString>()
            && !self.error_patterns.is_empty()
            && self.matches(&self.error_patterns, value)?
        {
            return Ok(Some(value.clone()));
        }
        Ok(None)
    }

    /// `is_empty`: structurally empty, or a blank text or one an empty pattern matches.
    fn empty(&self, value: &Bound<'_, PyAny>) -> PyResult<bool> {
        let py = value.py();
        if value.is_none() {
            return Ok(false);
        }
        // `value in ("", [], {})`: each literal compared with it (`literal == value`).
        let in_empties = if value.is_exact_instance_of::<PyString>()
            || value.is_exact_instance_of::<PyList>()
            || value.is_exact_instance_of::<PyDict>()
        {
            value.len()? == 0
        } else if value.is_exact_instance_of::<PyBool>()
            || value.is_exact_instance_of::<pyo3::types::PyInt>()
            || value.is_exact_instance_of::<pyo3::types::PyFloat>()
        {
            false
        } else {
            PyString::new(py, "").as_any().eq(value)?
                || PyList::empty(py).as_any().eq(value)?
                || PyDict::new(py).as_any().eq(value)?
        };
        if in_empties {
            return Ok(true);
        }
        if value.is_instance_of::<PyDict>() {
            // {"documents": [], "status": "..."}: every list it holds is empty.
            let values = if let Ok(dict) = value.cast_exact::<PyDict>() {
                dict.values().into_any()
            } else {
                value.call_method0(intern!(py, "values"))?
            };
            let mut lists = false;
            for item in values.try_iter()? {
                let item = item?;
                if item.is_instance_of::<PyList>() {
                    lists = true;
                    if item.is_truthy()? {
                        return Ok(false);
                    }
                }
            }
            return Ok(lists);
        }
        if value.is_instance_of::<PyString>() {
            let head = window(value)?;
            if is_blank(&head)? {
                return Ok(true);
            }
            return self.any_match(&self.empty_patterns, &head);
        }
        Ok(false)
    }

    /// Whether one of `patterns` matches the start of the text `text`.
    fn matches(&self, patterns: &Patterns, text: &Bound<'_, PyAny>) -> PyResult<bool> {
        if patterns.is_empty() {
            return Ok(false);
        }
        self.any_match(patterns, &window(text)?)
    }

    /// Whether one of `patterns` matches at the start of `head`, in order: each answered by
    /// its plan where it can (an exact `str` with a UTF-8 text), else by `safe_regex.match`.
    fn any_match(&self, patterns: &Patterns, head: &Bound<'_, PyAny>) -> PyResult<bool> {
        let py = head.py();
        let text = match head.cast_exact::<PyString>() {
            Ok(exact) => exact.to_str().ok(),
            Err(_) => None,
        };
        let matcher = self.matcher.bind(py);
        for (pattern, plan) in &patterns.0 {
            let found = match text.and_then(|text| plan.answer(text)) {
                Some(found) => found,
                None => matcher.call1((pattern.bind(py), head))?.is_truthy()?,
            };
            if found {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// `not head.strip()`: whether a text is all whitespace (`str.isspace`), read natively while
/// its characters are ASCII; a non-ASCII one that is not known to end the question (any
/// non-whitespace ASCII character does) is Python's.
fn is_blank(head: &Bound<'_, PyAny>) -> PyResult<bool> {
    if let Ok(exact) = head.cast_exact::<PyString>() {
        if let Ok(text) = exact.to_str() {
            // Python's ASCII whitespace: `\t`-`\r`, `\x1c`-`\x1f` and space.
            match text
                .bytes()
                .find(|b| !matches!(b, b' ' | b'\t'..=b'\r' | 0x1c..=0x1f))
            {
                None => return Ok(true),
                Some(b) if b.is_ascii() => return Ok(false),
                Some(_) => {}
            }
        }
    }
    Ok(!head
        .call_method0(intern!(head.py(), "strip"))?
        .is_truthy()?)
}

/// `text[:PATTERN_WINDOW]`.
fn window<'py>(text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = text.py();
    if let Ok(exact) = text.cast_exact::<PyString>() {
        if exact.len()? <= PATTERN_WINDOW as usize {
            return Ok(text.clone()); // what the slice of a whole exact `str` returns
        }
    }
    text.get_item(PySlice::new(py, 0, PATTERN_WINDOW, 1))
}

/// `value.keys() == set(names)` for a dict (distinct `names`).
fn keys_are(value: &Bound<'_, PyAny>, names: &[&Bound<'_, PyString>]) -> PyResult<bool> {
    let py = value.py();
    if let Ok(dict) = value.cast_exact::<PyDict>() {
        if dict.len() != names.len() {
            return Ok(false);
        }
        for name in names {
            if !dict.contains(name)? {
                return Ok(false);
            }
        }
        return Ok(true);
    }
    let wanted = PySet::new(py, names)?;
    value.call_method0(intern!(py, "keys"))?.eq(wanted)
}

/// `value == "text"`.
fn is_text_word(value: &Bound<'_, PyAny>) -> PyResult<bool> {
    if let Ok(exact) = value.cast_exact::<PyString>() {
        return Ok(exact.to_str().is_ok_and(|text| text == "text"));
    }
    value.eq(intern!(value.py(), "text"))
}

/// Exactly `{"type": "text", "text": <str>}` (LangChain's with its `id` too): a content block,
/// not a tool's own object (`_tool_results.is_text_block`).
fn is_text_block(block: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = block.py();
    if !block.is_instance_of::<PyDict>() {
        return Ok(false);
    }
    let (kind, text, id) = (intern!(py, "type"), intern!(py, "text"), intern!(py, "id"));
    if !(keys_are(block, &[kind, text])? || keys_are(block, &[kind, text, id])?) {
        return Ok(false);
    }
    Ok(is_text_word(&block.get_item(kind)?)? && block.get_item(text)?.is_instance_of::<PyString>())
}

/// What an MCP `CallToolResult` recorded whole says (`{"content": [...],
/// "structuredContent": {...}, "isError": false}`, or snake_case): `{"error": <content>}`
/// for an `isError` result, else its structured content when an object, else its one
/// content block's value; Python's `None` for anything else.
fn call_tool_result<'py>(result: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = result.py();
    let none = py.None().into_bound(py);
    if !result.is_instance_of::<PyDict>() {
        return Ok(none);
    }
    let content_key = intern!(py, "content");
    if !pydict::get(result, content_key)?.is_instance_of::<PyList>() {
        return Ok(none);
    }
    let snake = pydict::get(result, intern!(py, "is_error"))?;
    let failed = pydict::get_or(result, intern!(py, "isError"), &snake)?;
    if !failed.is_instance_of::<PyBool>() {
        return Ok(none);
    }
    let content = unwrap_block(&result.get_item(content_key)?)?;
    if failed.is_truthy()? {
        let error = PyDict::new(py);
        error.set_item(intern!(py, "error"), content)?;
        return Ok(error.into_any());
    }
    let snake = pydict::get(result, intern!(py, "structured_content"))?;
    let body = pydict::get_or(result, intern!(py, "structuredContent"), &snake)?;
    Ok(if body.is_instance_of::<PyDict>() {
        body
    } else {
        content
    })
}

/// The value of a result that is exactly one content block (`_tool_results.unwrap_block`):
/// a bare text block's text, what an MCP `CallToolResult` says, the `json` or `text` of a
/// one-block list (`[{"json": ...}]`, `[{"text": "..."}]`, `[{"type": "text", "text":
/// "..."}]`); anything else, the very object.
#[pyfunction]
pub(crate) fn unwrap_block<'py>(result: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = result.py();
    if is_text_block(result)? {
        return result.get_item(intern!(py, "text"));
    }
    let call_result = call_tool_result(result)?;
    if !call_result.is_none() {
        return Ok(call_result);
    }
    if !result.is_instance_of::<PyList>() || result.len()? != 1 {
        return Ok(result.clone());
    }
    let block = result.get_item(0)?;
    if !block.is_instance_of::<PyDict>() {
        return Ok(result.clone());
    }
    let (json, text) = (intern!(py, "json"), intern!(py, "text"));
    if keys_are(&block, &[json])? {
        return block.get_item(json);
    }
    let text_block = keys_are(&block, &[text])? || is_text_block(&block)?;
    if text_block {
        let found = block.get_item(text)?;
        if found.is_instance_of::<PyString>() {
            return Ok(found);
        }
    }
    Ok(result.clone())
}

/// Whether a text starts (past whitespace, as `str.lstrip` strips it) with `{` or `[`.
fn opens_structure(text: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = text.py();
    if let Ok(exact) = text.cast_exact::<PyString>() {
        if let Ok(text) = exact.to_str() {
            // Python's ASCII whitespace (`str.isspace`): what `lstrip` strips of ASCII.
            let first = text
                .bytes()
                .find(|b| !matches!(b, b' ' | b'\t'..=b'\r' | 0x1c..=0x1f));
            match first {
                None => return Ok(false),
                Some(b'{' | b'[') => return Ok(true),
                Some(b) if b.is_ascii() => return Ok(false),
                Some(_) => {} // a non-ASCII character may be whitespace: Python decides
            }
        }
    }
    let first = text
        .call_method0(intern!(py, "lstrip"))?
        .get_item(PySlice::new(py, 0, 1, 1))?;
    let opening = PyTuple::new(py, ["{", "["])?;
    opening.contains(first)
}

/// A result recorded as the text of an object or array, decoded (JSON, else a Python
/// `repr`), and the value of a one-block result (`unwrap_block`), until nothing changes
/// (`_tool_results.structured`). Anything else is returned as it is.
#[pyfunction]
pub(crate) fn structured<'py>(result: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let mut value = result.clone();
    loop {
        if value.is_instance_of::<PyString>() && opens_structure(&value)? {
            value = parse_python_literal(&parse_json(&value)?)?;
        }
        let unwrapped = unwrap_block(&value)?;
        if unwrapped.is(&value) {
            return Ok(value);
        }
        value = unwrapped;
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("RESULT_PATTERN_WINDOW", PATTERN_WINDOW)?;
    m.add_function(wrap_pyfunction!(structured, m)?)?;
    m.add_function(wrap_pyfunction!(unwrap_block, m)?)?;
    m.add_class::<ResultRules>()
}
