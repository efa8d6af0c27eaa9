//! The JUnit and HTML reports' text of a verdict, written in the core next to the JSON
//! report's ([`crate::report_json`]).
//!
//! Laying out a testcase and a page section in Python read every field of every result
//! through pydantic's attribute hook, asked the privacy filter for each message once per
//! report, and escaped each text through a regex, `str.replace`s and f-strings: ~1.25 G
//! instructions of data-2000's three-report grade. [`VerdictMarkup`] reads the models'
//! field values (their `__dict__`s, as `VerdictJson` does) and writes each text escaped as
//! it is copied, one pass over its UTF-8.
//!
//! The bytes are those the Python writers wrote (ElementTree's escaping and `ET.indent`'s
//! layout for JUnit, `html.escape` for the page; `tests/report` holds the JUnit document to
//! what ElementTree writes of it). Every text a trace chose is shown as `terminal_safe`
//! shows it: the characters a terminal acts on (C0 but tab and newline, DEL, C1, the
//! bidirectional overrides and isolates) and every surrogate written as its Python escape
//! (`\x1b`, `\r`, `\u202e`, `\udcff`); JUnit writes the non-characters U+FFFE and U+FFFF
//! that way too (XML cannot carry them). A `str` holding a surrogate is read through its
//! `surrogatepass` bytes: the text functions below decode that generalized UTF-8
//! themselves, so every code point (a surrogate too) is one character, as in Python.

use std::borrow::Cow;

use otel_oracles_core::json_text::{write_float_text, write_int, write_string};
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::report_json::{derived_verdict, Fields, Held, ReadVerdict, VerdictJson};
use crate::scrub::{surrogatepass_bytes, JudgedAt, ShownFilter};

/// A `str`'s text as bytes: its UTF-8, or (one holding a surrogate, which has no UTF-8) its
/// `surrogatepass` bytes, each surrogate three bytes as UTF-8 would write its code point.
fn text_of<'a>(text: &'a Bound<'_, PyString>) -> PyResult<Cow<'a, [u8]>> {
    match text.to_str() {
        Ok(valid) => Ok(Cow::Borrowed(valid.as_bytes())),
        Err(_) => Ok(Cow::Owned(surrogatepass_bytes(text)?.as_bytes().to_vec())),
    }
}

/// The `str` of `text_of`'s bytes (its surrogates back as they were).
fn python_text<'py>(py: Python<'py>, bytes: &[u8]) -> PyResult<Bound<'py, PyString>> {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Ok(PyString::new(py, text));
    }
    let decoded = PyBytes::new(py, bytes).call_method1(
        intern!(py, "decode"),
        (intern!(py, "utf-8"), intern!(py, "surrogatepass")),
    )?;
    Ok(decoded.cast_into::<PyString>()?)
}

/// `str(value)`'s text: an exact `str`'s own, anything else's `str()`.
fn str_of<'a>(value: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    if value.is_exact_instance_of::<PyString>() {
        // SAFETY: an exact `str`.
        return text_of(unsafe { value.cast_unchecked::<PyString>() });
    }
    let text = value.str()?;
    Ok(Cow::Owned(text_of(&text)?.into_owned()))
}

/// An outcome's text: an `Outcome` is a `StrEnum`, whose `str()` and format are its value,
/// the text the `str` holds (read without a copy made by `str()`).
fn outcome_of<'a>(value: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    match value.cast::<PyString>() {
        Ok(text) => text_of(text),
        Err(_) => str_of(value),
    }
}

/// The code point starting at `at` in generalized UTF-8 (read from a `str`, so well formed)
/// and its length in bytes.
#[inline]
fn code_point(bytes: &[u8], at: usize) -> (u32, usize) {
    let lead = bytes[at];
    let next = |k: usize| u32::from(bytes.get(at + k).copied().unwrap_or(0x80) & 0x3f);
    if lead < 0x80 {
        (u32::from(lead), 1)
    } else if lead < 0xe0 {
        ((u32::from(lead & 0x1f) << 6) | next(1), 2)
    } else if lead < 0xf0 {
        ((u32::from(lead & 0x0f) << 12) | (next(1) << 6) | next(2), 3)
    } else {
        (
            (u32::from(lead & 0x07) << 18) | (next(1) << 12) | (next(2) << 6) | next(3),
            4,
        )
    }
}

/// Whether `terminal_safe` writes `c` as its escape: C0 controls but tab and newline, DEL,
/// the C1 controls, the bidirectional overrides and isolates, the surrogates.
#[inline]
fn terminal_unsafe(c: u32) -> bool {
    matches!(c, 0x00..=0x08 | 0x0b..=0x1f | 0x7f..=0x9f | 0x202a..=0x202e | 0x2066..=0x2069 | 0xd800..=0xdfff)
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// `ascii(c)` without its quotes: `\r`, `\xNN` below U+0100, else `\uNNNN` (every character
/// escaped here is in the Basic Multilingual Plane).
fn write_escape(c: u32, out: &mut Vec<u8>) {
    if c == 0x0d {
        out.extend_from_slice(b"\\r");
    } else if c < 0x100 {
        out.extend_from_slice(&[b'\\', b'x', HEX[(c >> 4) as usize], HEX[(c & 0xf) as usize]]);
    } else {
        out.extend_from_slice(b"\\u");
        for shift in [12, 8, 4, 0] {
            out.push(HEX[((c >> shift) & 0xf) as usize]);
        }
    }
}

/// How a markup writer escapes: JUnit character data (`&`, `<`, `>`), a JUnit attribute
/// value (those, `"`, and newline and tab as character references), HTML text
/// (`html.escape`: `&`, `<`, `>`, `"`, `'`), or no markup at all: a line for a terminal
/// (`terminal_safe`), where only what a terminal acts on is escaped.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Markup {
    XmlText,
    XmlAttribute,
    Html,
    Terminal,
}

/// `bytes` (a text's generalized UTF-8) escaped for `markup`, appended to `out`: the
/// characters `terminal_safe` escapes (and, for XML, U+FFFE and U+FFFF) as their Python
/// escapes, the markup's specials as its entities, everything else copied.
fn write_markup(bytes: &[u8], markup: Markup, out: &mut Vec<u8>) {
    out.reserve(bytes.len());
    let mut start = 0;
    let mut at = 0;
    while at < bytes.len() {
        // Printable ASCII but the markup characters is copied in runs.
        if PLAIN[usize::from(bytes[at])] {
            at += 1;
            continue;
        }
        let b = bytes[at];
        if (0x20..0x7f).contains(&b) {
            if markup == Markup::Terminal {
                at += 1;
                continue;
            }
            let entity: &[u8] = match b {
                b'&' => b"&amp;",
                b'<' => b"&lt;",
                b'>' => b"&gt;",
                b'"' if markup != Markup::XmlText => b"&quot;",
                b'\'' if markup == Markup::Html => b"&#x27;",
                _ => {
                    at += 1;
                    continue;
                }
            };
            out.extend_from_slice(&bytes[start..at]);
            out.extend_from_slice(entity);
            at += 1;
            start = at;
            continue;
        }
        let (c, len) = code_point(bytes, at);
        let xml = matches!(markup, Markup::XmlText | Markup::XmlAttribute);
        let escaped = terminal_unsafe(c) || (xml && (c == 0xfffe || c == 0xffff));
        if escaped {
            out.extend_from_slice(&bytes[start..at]);
            write_escape(c, out);
            start = at + len;
        } else if markup == Markup::XmlAttribute && (c == 0x0a || c == 0x09) {
            out.extend_from_slice(&bytes[start..at]);
            out.extend_from_slice(if c == 0x0a { b"&#10;" } else { b"&#09;" });
            start = at + len;
        }
        at += len;
    }
    out.extend_from_slice(&bytes[start..]);
}

/// The bytes `write_markup` copies without a look: printable ASCII but `&<>"'`.
const PLAIN: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0x20;
    while b < 0x7f {
        table[b] = !matches!(b as u8, b'&' | b'<' | b'>' | b'"' | b'\'');
        b += 1;
    }
    table
};

/// Whether `str.split()` splits at `c` (`str.isspace`).
#[inline]
fn python_space(c: u32) -> bool {
    matches!(
        c,
        0x09..=0x0d
            | 0x1c..=0x20
            | 0x85
            | 0xa0
            | 0x1680
            | 0x2000..=0x200a
            | 0x2028
            | 0x2029
            | 0x202f
            | 0x205f
            | 0x3000
    )
}

/// `one_line`'s definition, `" ".join(text.split())` cut: whitespace runs collapsed to one
/// space (ends trimmed), cut to `limit` characters with an ellipsis.
fn one_line(bytes: &[u8], limit: usize) -> Vec<u8> {
    let mut flat = Vec::with_capacity(bytes.len());
    let mut chars = 0;
    let mut gap = false;
    let mut at = 0;
    while at < bytes.len() {
        let (c, len) = code_point(bytes, at);
        if python_space(c) {
            gap = true;
        } else {
            if gap && !flat.is_empty() {
                flat.push(b' ');
                chars += 1;
            }
            gap = false;
            flat.extend_from_slice(&bytes[at..at + len]);
            chars += 1;
        }
        at += len;
    }
    if chars <= limit {
        return flat;
    }
    flat.truncate(prefix_len(&flat, limit.saturating_sub(1)));
    flat.extend_from_slice("…".as_bytes());
    flat
}

/// The length in bytes of the first `n` characters of `bytes` (all of it when shorter).
fn prefix_len(bytes: &[u8], n: usize) -> usize {
    let mut at = 0;
    for _ in 0..n {
        if at >= bytes.len() {
            break;
        }
        at += code_point(bytes, at).1;
    }
    at.min(bytes.len())
}

/// The number of characters in `bytes`.
fn char_count(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| (b & 0xc0) != 0x80).count()
}

/// `f"{ns / 1e9:.3f}"`: Rust's fixed precision rounds the exact value half to even, as
/// Python's does.
fn write_seconds(ns: &Bound<'_, PyAny>, out: &mut Vec<u8>) -> PyResult<()> {
    let seconds = ns.extract::<f64>()? / 1e9;
    out.extend_from_slice(format!("{seconds:.3}").as_bytes());
    Ok(())
}

/// An integer's decimal text (`str(n)`).
fn write_integer(n: &Bound<'_, PyAny>, out: &mut Vec<u8>) -> PyResult<()> {
    match n.extract::<i64>() {
        Ok(n) => write_int(n, out),
        Err(_) => out.extend_from_slice(&str_of(n)?),
    }
    Ok(())
}

/// Deepest nesting a details value's compact JSON is written to here; deeper (or anything
/// [`compact_json`] leaves) is the page's `detail_json`'s.
const MAX_DEPTH: usize = 32;

/// `json.dumps(value, ensure_ascii=False)` (compact separators `, ` and `: `) of plain JSON
/// data (`None`, `bool`, exact `int`, `float`, `str`, `list`, `tuple`, `dict` with exact `str`
/// keys, no surrogate); `Err(())` for anything else, left to the caller.
fn compact_json(value: &Bound<'_, PyAny>, depth: usize, out: &mut Vec<u8>) -> Result<(), ()> {
    if depth > MAX_DEPTH {
        return Err(());
    }
    if value.is_exact_instance_of::<PyString>() {
        let text = value
            .cast::<PyString>()
            .map_err(|_| ())?
            .to_str()
            .map_err(|_| ())?;
        write_string::<Vec<u8>>(text.as_bytes(), out);
    } else if value.is_none() {
        out.extend_from_slice(b"null");
    } else if value.is_exact_instance_of::<PyBool>() {
        out.extend_from_slice(if value.is_truthy().map_err(|_| ())? {
            b"true"
        } else {
            b"false"
        });
    } else if value.is_exact_instance_of::<PyInt>() {
        write_int(value.extract::<i64>().map_err(|_| ())?, out);
    } else if value.is_exact_instance_of::<PyFloat>() {
        write_float_text(value.extract::<f64>().map_err(|_| ())?, out);
    } else if value.is_exact_instance_of::<PyList>() || value.is_exact_instance_of::<PyTuple>() {
        out.push(b'[');
        for (i, item) in value.try_iter().map_err(|_| ())?.enumerate() {
            if i > 0 {
                out.extend_from_slice(b", ");
            }
            compact_json(&item.map_err(|_| ())?, depth + 1, out)?;
        }
        out.push(b']');
    } else if let Ok(dict) = value.cast_exact::<PyDict>() {
        out.push(b'{');
        for (i, (key, item)) in dict.iter().enumerate() {
            if !key.is_exact_instance_of::<PyString>() {
                return Err(());
            }
            if i > 0 {
                out.extend_from_slice(b", ");
            }
            compact_json(&key, depth + 1, out)?;
            out.extend_from_slice(b": ");
            compact_json(&item, depth + 1, out)?;
        }
        out.push(b'}');
    } else {
        return Err(());
    }
    Ok(())
}

/// Characters of a failure's `message` attribute (`one_line(..., 1000)`).
const FAILURE_MESSAGE_LIMIT: usize = 1000;

/// A model's field values in its [`Fields`]' order: the `__dict__`'s, or (a model held
/// otherwise) each read as an attribute.
fn field_values<'py>(
    fields: &Fields,
    model: &Bound<'py, PyAny>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    match fields.values(model)? {
        Held::Fields(values) => Ok(values),
        Held::Dumped(_) => fields
            .names
            .iter()
            .map(|name| model.getattr(name.bind(model.py())))
            .collect(),
    }
}

/// A verdict's JUnit testcase and HTML summary row and section, written from its models'
/// field values (see the module's text). Built once with the models' field names, each
/// outcome's marker (`_html._MARK`), the page's JSON of a details value that is not
/// plain data (`_html._DETAIL_JSON`) and its two limits on details.
#[pyclass(module = "otel_oracles._native", name = "VerdictMarkup", frozen)]
struct VerdictMarkup {
    verdict: Fields,
    result: Fields,
    counts: Fields,
    v_contract_id: usize,
    v_contract_version: usize,
    v_subject: usize,
    v_root_name: usize,
    v_agent_name: usize,
    v_passed: usize,
    v_results: usize,
    v_counts: usize,
    v_duration_ns: usize,
    /// The result fields the filter reads, among them the name, type, outcome, message and
    /// details a row shows.
    r_judged: JudgedAt,
    r_layer: usize,
    r_passed: usize,
    /// The counts in the summary's columns (invariant, tolerated, exhausted, missing), then
    /// the errors.
    c_columns: [usize; 4],
    c_errors: usize,
    marks: Vec<(String, String)>,
    detail_json: Py<PyAny>,
    /// Characters of one details value shown inline, and of a result's details in all
    /// (`_html.DETAIL_VALUE_LIMIT`, `DETAILS_LIMIT`).
    value_limit: usize,
    details_limit: usize,
}

/// A testcase's text with its suite's label, its failures and errors, and its duration.
type Testcase<'py> = (
    Bound<'py, PyString>,
    Bound<'py, PyBytes>,
    u8,
    u8,
    Bound<'py, PyAny>,
);

/// What a verdict's results are read as: each one's field values.
struct ResultRow<'py> {
    values: Vec<Bound<'py, PyAny>>,
}

#[pymethods]
impl VerdictMarkup {
    #[new]
    fn new(
        verdict_fields: Vec<Bound<'_, PyString>>,
        result_fields: Vec<Bound<'_, PyString>>,
        counts_fields: Vec<Bound<'_, PyString>>,
        marks: Vec<(String, String)>,
        detail_json: Bound<'_, PyAny>,
        value_limit: usize,
        details_limit: usize,
    ) -> PyResult<Self> {
        let verdict = Fields::new(verdict_fields)?;
        let result = Fields::new(result_fields)?;
        let counts = Fields::new(counts_fields)?;
        Ok(VerdictMarkup {
            v_contract_id: verdict.position("contract_id")?,
            v_contract_version: verdict.position("contract_version")?,
            v_subject: verdict.position("subject")?,
            v_root_name: verdict.position("root_name")?,
            v_agent_name: verdict.position("agent_name")?,
            v_passed: verdict.position("passed")?,
            v_results: verdict.position("results")?,
            v_counts: verdict.position("counts")?,
            v_duration_ns: verdict.position("duration_ns")?,
            r_judged: JudgedAt::find(|name| result.position(name))?,
            r_layer: result.position("layer")?,
            r_passed: result.position("passed")?,
            c_columns: [
                counts.position("invariant_failures")?,
                counts.position("tolerated_failures")?,
                counts.position("budget_exhausted")?,
                counts.position("missing_evidence")?,
            ],
            c_errors: counts.position("errors")?,
            verdict,
            result,
            counts,
            marks,
            detail_json: detail_json.unbind(),
            value_limit,
            details_limit,
        })
    }

    /// `verdict`'s testcase, as the document holds it (its line break and indent first),
    /// each message what `shown` (the privacy filter) shows of it when given; with the
    /// verdict's suite (`contract_label`), its failures and errors (0 or 1 each) and its
    /// duration in nanoseconds.
    #[pyo3(signature = (verdict, shown = None))]
    fn junit<'py>(
        &self,
        verdict: &Bound<'py, PyAny>,
        shown: Option<&Bound<'py, ShownFilter>>,
    ) -> PyResult<Testcase<'py>> {
        let shown = shown.map(Bound::get);
        let v = field_values(&self.verdict, verdict)?;
        let rows = self.rows(&v[self.v_results])?;
        let messages = self.messages(&rows, shown)?;
        self.testcase(verdict.py(), &v, None, &rows, &messages)
    }

    /// `verdict`'s summary row and its section of the page (the `index`-th verdict), each
    /// result's message and details what `shown` shows of them when given.
    #[pyo3(signature = (verdict, index, shown = None))]
    fn html<'py>(
        &self,
        verdict: &Bound<'py, PyAny>,
        index: usize,
        shown: Option<&Bound<'py, ShownFilter>>,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        let shown = shown.map(Bound::get);
        let v = field_values(&self.verdict, verdict)?;
        let counts = field_values(&self.counts, &v[self.v_counts])?;
        let rows = self.rows(&v[self.v_results])?;
        let messages = self.messages(&rows, shown)?;
        self.page(
            verdict.py(),
            &v,
            &counts,
            &rows,
            &messages,
            None,
            index,
            shown,
        )
    }
}

impl VerdictMarkup {
    /// Each result's message as the reports show it (`message`), read once for all of them.
    fn messages(
        &self,
        rows: &[ResultRow<'_>],
        shown: Option<&ShownFilter>,
    ) -> PyResult<Vec<Vec<u8>>> {
        rows.iter().map(|row| self.message(row, shown)).collect()
    }

    /// The testcase (`junit`) of a verdict of field values `v`, results `rows` and their
    /// shown `messages`; its counts' values `counts` when read before (else read when it
    /// failed).
    fn testcase<'py>(
        &self,
        py: Python<'py>,
        v: &[Bound<'py, PyAny>],
        counts: Option<&[Bound<'py, PyAny>]>,
        rows: &[ResultRow<'py>],
        messages: &[Vec<u8>],
    ) -> PyResult<Testcase<'py>> {
        let mut out = Vec::with_capacity(1024);
        out.extend_from_slice(b"\n    <testcase classname=\"");
        write_markup(
            &str_of(&v[self.v_contract_id])?,
            Markup::XmlAttribute,
            &mut out,
        );
        out.extend_from_slice(b"\" name=\"");
        write_markup(&str_of(&v[self.v_subject])?, Markup::XmlAttribute, &mut out);
        out.extend_from_slice(b"\" time=\"");
        write_seconds(&v[self.v_duration_ns], &mut out)?;
        out.extend_from_slice(b"\">");
        // Each result's line, `{outcome} {name}: {message}`, escaped as character data
        // once: the failure text and system-out share it.
        let mut lines = Vec::with_capacity(rows.len());
        for (row, message) in rows.iter().zip(messages) {
            // Escaping goes character by character: the pieces escaped one by one are the
            // line escaped whole.
            let mut line = Vec::with_capacity(message.len() + 64);
            write_markup(
                &outcome_of(&row.values[self.r_judged.outcome])?,
                Markup::XmlText,
                &mut line,
            );
            line.push(b' ');
            write_markup(
                &str_of(&row.values[self.r_judged.name])?,
                Markup::XmlText,
                &mut line,
            );
            line.extend_from_slice(b": ");
            write_markup(message, Markup::XmlText, &mut line);
            lines.push(line);
        }
        let passed = v[self.v_passed].is_truthy()?;
        let (mut failures, mut errors) = (0, 0);
        if !passed {
            let bad: Vec<usize> = rows
                .iter()
                .enumerate()
                .filter_map(|(i, row)| match row.values[self.r_passed].is_truthy() {
                    Ok(true) => None,
                    _ => Some(i),
                })
                .collect();
            let Some(&first) = bad.first() else {
                return Err(PyIndexError::new_err("list index out of range"));
            };
            let read;
            let counts = match counts {
                Some(counts) => counts,
                None => {
                    read = field_values(&self.counts, &v[self.v_counts])?;
                    &read
                }
            };
            let tag: &[u8] = if self.derived(v, counts)? == "error" {
                errors = 1;
                b"error"
            } else {
                failures = 1;
                b"failure"
            };
            let row = &rows[first];
            let mut head = str_of(&row.values[self.r_judged.name])?.into_owned();
            head.extend_from_slice(b": ");
            head.extend_from_slice(&messages[first]);
            out.extend_from_slice(b"\n      <");
            out.extend_from_slice(tag);
            out.extend_from_slice(b" message=\"");
            write_markup(
                &one_line(&head, FAILURE_MESSAGE_LIMIT),
                Markup::XmlAttribute,
                &mut out,
            );
            out.extend_from_slice(b"\" type=\"");
            write_markup(
                &outcome_of(&row.values[self.r_judged.outcome])?,
                Markup::XmlAttribute,
                &mut out,
            );
            out.extend_from_slice(b"\">");
            for (k, &i) in bad.iter().enumerate() {
                if k > 0 {
                    out.push(b'\n');
                }
                out.extend_from_slice(&lines[i]);
            }
            out.extend_from_slice(b"</");
            out.extend_from_slice(tag);
            out.push(b'>');
        }
        out.extend_from_slice(b"\n      ");
        if lines.is_empty() {
            out.extend_from_slice(b"<system-out />");
        } else {
            out.extend_from_slice(b"<system-out>");
            for (k, line) in lines.iter().enumerate() {
                if k > 0 {
                    out.push(b'\n');
                }
                out.extend_from_slice(line);
            }
            out.extend_from_slice(b"</system-out>");
        }
        out.extend_from_slice(b"\n    </testcase>");
        let label = self.contract_label(v)?;
        Ok((
            python_text(py, &label)?,
            PyBytes::new(py, &out),
            failures,
            errors,
            v[self.v_duration_ns].clone(),
        ))
    }

    /// The summary row and section (`html`) of a verdict of field values `v`, counts'
    /// values `counts`, results `rows` and their shown `messages`.
    #[allow(clippy::too_many_arguments)]
    fn page<'py>(
        &self,
        py: Python<'py>,
        v: &[Bound<'py, PyAny>],
        counts: &[Bound<'py, PyAny>],
        rows: &[ResultRow<'py>],
        messages: &[Vec<u8>],
        scrubbed: Option<&[Bound<'py, PyDict>]>,
        index: usize,
        shown: Option<&ShownFilter>,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        let derived = self.derived(v, counts)?;
        let passed = v[self.v_passed].is_truthy()?;
        let mut subject = Vec::new();
        write_markup(&str_of(&v[self.v_subject])?, Markup::Html, &mut subject);
        let mut contract = Vec::new();
        write_markup(&self.contract_label(v)?, Markup::Html, &mut contract);
        let index = index.to_string();

        let mut row = Vec::with_capacity(512);
        row.extend_from_slice(b"<tr><td><a href=\"#v");
        row.extend_from_slice(index.as_bytes());
        row.extend_from_slice(b"\">");
        row.extend_from_slice(&subject);
        row.extend_from_slice(b"</a></td><td>");
        // `agent_label`: the agent's name, else the root span's, else nothing.
        for at in [self.v_agent_name, self.v_root_name] {
            let name = &v[at];
            if name.is_truthy()? {
                write_markup(&str_of(name)?, Markup::Html, &mut row);
                break;
            }
        }
        row.extend_from_slice(b"</td><td>");
        row.extend_from_slice(&contract);
        row.extend_from_slice(b"</td>");
        let tolerated = &counts[self.c_columns[1]];
        if passed && tolerated.is_truthy()? {
            row.extend_from_slice(b"<td class=\"verdict-tolerated\">pass, ");
            write_integer(tolerated, &mut row)?;
            row.extend_from_slice(b" tolerated</td>");
        } else {
            row.extend_from_slice(b"<td class=\"");
            row.extend_from_slice(derived.as_bytes());
            row.extend_from_slice(b"\">");
            write_markup(derived.as_bytes(), Markup::Html, &mut row);
            row.extend_from_slice(b"</td>");
        }
        for (at, css) in self.c_columns.iter().zip(["inv", "tol", "exh", "miss"]) {
            let n = &counts[*at];
            row.extend_from_slice(b"<td class=\"n ");
            row.extend_from_slice(if n.is_truthy()? { css } else { "zero" }.as_bytes());
            row.extend_from_slice(b"\">");
            write_integer(n, &mut row)?;
            row.extend_from_slice(b"</td>");
        }
        row.extend_from_slice(b"</tr>");

        // Failing verdicts, and passing ones that used a budget or lack evidence, start
        // expanded: those are the verdicts a reader has to look at.
        let open = !passed || tolerated.is_truthy()? || counts[self.c_columns[3]].is_truthy()?;
        let mut out = Vec::with_capacity(4096);
        out.extend_from_slice(b"<details id=\"v");
        out.extend_from_slice(index.as_bytes());
        out.extend_from_slice(if open {
            b"\" open><summary>"
        } else {
            b"\"><summary>"
        });
        out.extend_from_slice(&contract);
        out.extend_from_slice(b" on ");
        out.extend_from_slice(&subject);
        out.extend_from_slice(b": <span class=\"");
        out.extend_from_slice(derived.as_bytes());
        out.extend_from_slice(b"\">");
        write_markup(derived.as_bytes(), Markup::Html, &mut out);
        out.extend_from_slice(
            b"</span></summary>\n<table><tr><th>check</th><th>type</th><th>layer</th>\
<th>outcome</th><th>message</th><th>details</th></tr>\n",
        );
        for (k, (row_values, message)) in rows.iter().zip(messages).enumerate() {
            if k > 0 {
                out.push(b'\n');
            }
            let scrubbed = scrubbed.map(|scrubbed| &scrubbed[k]);
            self.result_row(row_values, message, scrubbed, shown, &mut out)?;
        }
        out.extend_from_slice(b"\n</table></details>");
        Ok((PyBytes::new(py, &row), PyBytes::new(py, &out)))
    }

    /// Each result's field values, or None when one is held otherwise than validation
    /// leaves it (read as an attribute each by `rows`, as its dump by the JSON writer).
    fn read_rows<'py>(&self, results: &Bound<'py, PyAny>) -> PyResult<Option<Vec<ResultRow<'py>>>> {
        let mut rows = Vec::new();
        for result in results.try_iter()? {
            match self.result.values(&result?)? {
                Held::Fields(values) => rows.push(ResultRow { values }),
                Held::Dumped(_) => return Ok(None),
            }
        }
        Ok(Some(rows))
    }

    /// Each result's field values.
    fn rows<'py>(&self, results: &Bound<'py, PyAny>) -> PyResult<Vec<ResultRow<'py>>> {
        let mut rows = Vec::new();
        for result in results.try_iter()? {
            rows.push(ResultRow {
                values: field_values(&self.result, &result?)?,
            });
        }
        Ok(rows)
    }

    /// `contract_label`: `id@version`.
    fn contract_label(&self, v: &[Bound<'_, PyAny>]) -> PyResult<Vec<u8>> {
        let mut label = str_of(&v[self.v_contract_id])?.into_owned();
        label.push(b'@');
        label.extend_from_slice(&str_of(&v[self.v_contract_version])?);
        Ok(label)
    }

    /// `Verdict.verdict`: pass, fail, or error (a harness error with no agent failure).
    fn derived(&self, v: &[Bound<'_, PyAny>], c: &[Bound<'_, PyAny>]) -> PyResult<&'static str> {
        let [invariant, _, exhausted, missing] = self.c_columns;
        derived_verdict(
            &v[self.v_passed],
            [&c[invariant], &c[exhausted], &c[missing], &c[self.c_errors]],
        )
    }

    /// The result's message as the report shows it: `shown`'s, or its own.
    fn message(&self, row: &ResultRow<'_>, shown: Option<&ShownFilter>) -> PyResult<Vec<u8>> {
        let values = &row.values;
        match shown {
            Some(filter) => Ok(filter
                .shown_message(&self.r_judged.of(values))?
                .into_bytes()),
            None => Ok(str_of(&values[self.r_judged.message])?.into_owned()),
        }
    }

    /// A result's row of the page: check, type, layer, outcome (its marker and name),
    /// message and details.
    fn result_row(
        &self,
        row: &ResultRow<'_>,
        message: &[u8],
        scrubbed: Option<&Bound<'_, PyDict>>,
        shown: Option<&ShownFilter>,
        out: &mut Vec<u8>,
    ) -> PyResult<()> {
        let values = &row.values;
        let outcome = outcome_of(&values[self.r_judged.outcome])?;
        out.extend_from_slice(b"<tr class=\"result o-row-");
        out.extend_from_slice(&outcome);
        out.extend_from_slice(b"\"><td>");
        for (k, at) in [self.r_judged.name, self.r_judged.oracle_type, self.r_layer]
            .into_iter()
            .enumerate()
        {
            if k > 0 {
                out.extend_from_slice(b"</td><td>");
            }
            write_markup(&str_of(&values[at])?, Markup::Html, out);
        }
        out.extend_from_slice(b"</td><td class=\"outcome o-");
        out.extend_from_slice(&outcome);
        out.extend_from_slice(b"\">");
        if let Some((_, mark)) = self
            .marks
            .iter()
            .find(|(o, _)| o.as_bytes() == outcome.as_ref())
        {
            out.extend_from_slice(mark.as_bytes());
        }
        out.push(b' ');
        write_markup(&outcome, Markup::Html, out);
        out.extend_from_slice(b"</td><td><pre>");
        write_markup(message, Markup::Html, out);
        out.extend_from_slice(b"</pre></td><td>");
        let details = &values[self.r_judged.details];
        match (scrubbed, shown) {
            (Some(scrubbed), _) => self.details(scrubbed.as_any(), out)?,
            (None, Some(filter)) => self.details(filter.scrub(details)?.as_any(), out)?,
            (None, None) => self.details(details, out)?,
        }
        out.extend_from_slice(b"</td></tr>");
        Ok(())
    }

    /// Details as a two-column list (key, value): strings as they are, integers' digits,
    /// anything else as compact JSON; each value cut to `value_limit` characters, the list
    /// ended once `details_limit` characters of values were shown.
    fn details(&self, details: &Bound<'_, PyAny>, out: &mut Vec<u8>) -> PyResult<()> {
        if !details.is_truthy()? {
            return Ok(());
        }
        let py = details.py();
        let pairs: Vec<(Bound<'_, PyAny>, Bound<'_, PyAny>)> = match details.cast_exact::<PyDict>()
        {
            Ok(dict) => dict.iter().collect(),
            Err(_) => details
                .call_method0(intern!(py, "items"))?
                .try_iter()?
                .map(|pair| pair.and_then(|pair| pair.extract()))
                .collect::<PyResult<_>>()?,
        };
        out.extend_from_slice(b"<dl class=\"details\">");
        let mut budget = self.details_limit as isize;
        let mut text = Vec::new();
        for (key, value) in pairs {
            text.clear();
            let whole = value.is_exact_instance_of::<PyInt>();
            if whole {
                write_integer(&value, &mut text)?;
            } else if let Ok(string) = value.cast::<PyString>() {
                text.extend_from_slice(&text_of(string)?);
            } else if compact_json(&value, 0, &mut text).is_err() {
                text.clear();
                let json = self.detail_json.bind(py).call1((&value,))?;
                text.extend_from_slice(&text_of(json.cast::<PyString>()?)?);
            }
            let mut chars = char_count(&text);
            if chars > self.value_limit {
                text.truncate(prefix_len(&text, self.value_limit));
                text.extend_from_slice("…".as_bytes());
                chars = self.value_limit + 1;
            }
            budget -= chars as isize;
            out.extend_from_slice(b"<dt>");
            write_markup(&str_of(&key)?, Markup::Html, out);
            out.extend_from_slice(b"</dt><dd>");
            if whole {
                out.extend_from_slice(&text);
            } else {
                write_markup(&text, Markup::Html, out);
            }
            out.extend_from_slice(b"</dd>");
            if budget <= 0 {
                out.extend_from_slice(
                    "<dt>…</dt><dd>(more details in the JSON report)</dd>".as_bytes(),
                );
                break;
            }
        }
        out.extend_from_slice(b"</dl>");
        Ok(())
    }
}

/// What one verdict gives each report a run asked for: its JSON text, its JUnit testcase
/// (`VerdictMarkup.junit`'s) and its HTML summary row and section; and the derived
/// `verdict` the JSON text holds (`None` without it), which the run's tally counts by.
type Written<'py> = (
    Option<Bound<'py, PyBytes>>,
    Option<Testcase<'py>>,
    Option<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)>,
    Option<Bound<'py, PyAny>>,
);

/// Every report a run asked for (JSON, JUnit, HTML) of one verdict, in one call: the
/// verdict's, its counts' and its results' field values read once, and each result's shown
/// message rendered once, for all of them. Each writer read them again for itself, and the
/// privacy filter rendered each message once per report (~85 M instructions of
/// data-2000's three-report grade). The bytes are each writer's own: `VerdictJson.write`'s,
/// `VerdictMarkup.junit`'s and `html`'s.
#[pyclass(module = "otel_oracles._native", name = "VerdictReports", frozen)]
struct VerdictReports {
    json: Option<Py<VerdictJson>>,
    markup: Option<Py<VerdictMarkup>>,
    junit: bool,
    html: bool,
}

#[pymethods]
impl VerdictReports {
    #[new]
    #[pyo3(signature = (json, markup, junit, html))]
    fn new(
        json: Option<Bound<'_, VerdictJson>>,
        markup: Option<Bound<'_, VerdictMarkup>>,
        junit: bool,
        html: bool,
    ) -> PyResult<Self> {
        if (junit || html) && markup.is_none() {
            return Err(PyValueError::new_err(
                "JUnit and HTML are written by a VerdictMarkup",
            ));
        }
        if let (Some(json), Some(markup)) = (&json, &markup) {
            let m = markup.get();
            if !json.get().same_fields([&m.verdict, &m.counts, &m.result]) {
                return Err(PyValueError::new_err(
                    "the JSON and markup writers were built for different models",
                ));
            }
        }
        Ok(VerdictReports {
            json: json.map(Bound::unbind),
            markup: markup.map(Bound::unbind),
            junit,
            html,
        })
    }

    /// `verdict`'s text in each report asked for (`None` for the others): the JSON's, the
    /// JUnit testcase and the HTML row and section (the `index`-th verdict), each message and
    /// details what `shown` (the privacy filter) shows of them when given.
    #[pyo3(signature = (verdict, index, shown = None))]
    fn write<'py>(
        &self,
        verdict: &Bound<'py, PyAny>,
        index: usize,
        shown: Option<&Bound<'py, ShownFilter>>,
    ) -> PyResult<Written<'py>> {
        let py = verdict.py();
        let shown = shown.map(Bound::get);
        let json = self.json.as_ref().map(|json| json.get());
        let Some(m) = self.markup.as_ref().map(|markup| markup.get()) else {
            // The JSON alone: its writer reads what it writes.
            let Some(json) = json else {
                return Ok((None, None, None, None));
            };
            let (text, derived) = json.text(verdict, shown)?;
            return Ok((Some(text), None, None, Some(derived)));
        };
        // Read once: a model held otherwise than validation leaves it is read as each
        // writer reads it alone (pydantic's dump for the JSON, its attributes for markup).
        let held = m.verdict.values(verdict)?;
        let read = match &held {
            Held::Fields(v) => match (
                m.counts.values(&v[m.v_counts])?,
                m.read_rows(&v[m.v_results])?,
            ) {
                (Held::Fields(counts), Some(rows)) => Some((v.clone(), counts, rows)),
                _ => None,
            },
            Held::Dumped(_) => None,
        };
        let Some((v, counts, rows)) = read else {
            let (text, derived) = match json {
                Some(json) => {
                    let (text, derived) = json.text(verdict, shown)?;
                    (Some(text), Some(derived))
                }
                None => (None, None),
            };
            let v = field_values(&m.verdict, verdict)?;
            let counts = field_values(&m.counts, &v[m.v_counts])?;
            let rows = m.rows(&v[m.v_results])?;
            let messages = m.messages(&rows, shown)?;
            return Ok((
                text,
                self.junit
                    .then(|| m.testcase(py, &v, Some(&counts), &rows, &messages))
                    .transpose()?,
                self.html
                    .then(|| m.page(py, &v, &counts, &rows, &messages, None, index, shown))
                    .transpose()?,
                derived,
            ));
        };
        let messages = m.messages(&rows, shown)?;
        // The page and the JSON show the same scrubbed details: scrubbed once for both.
        let scrubbed = match shown {
            Some(filter) if self.html && json.is_some() => Some(
                rows.iter()
                    .map(|row| filter.scrub(&row.values[m.r_judged.details]))
                    .collect::<PyResult<Vec<_>>>()?,
            ),
            _ => None,
        };
        let (text, derived) = match json {
            Some(json) => {
                let read = ReadVerdict {
                    counts: &counts,
                    results: rows.iter().map(|row| row.values.as_slice()).collect(),
                    messages: &messages,
                    scrubbed: scrubbed.as_deref(),
                    derived: m.derived(&v, &counts)?,
                };
                let (text, derived) = json.verdict_text(verdict, held, Some(&read), shown)?;
                (Some(text), Some(derived))
            }
            None => (None, None),
        };
        Ok((
            text,
            self.junit
                .then(|| m.testcase(py, &v, Some(&counts), &rows, &messages))
                .transpose()?,
            self.html
                .then(|| {
                    let scrubbed = scrubbed.as_deref();
                    m.page(py, &v, &counts, &rows, &messages, scrubbed, index, shown)
                })
                .transpose()?,
            derived,
        ))
    }
}

/// `text` as a terminal may be shown it (`how`: `terminal`; `_common.terminal_safe`), or
/// that as HTML (`_html.escape`), JUnit character data or a JUnit attribute value (`html`,
/// `text`, `attribute`): what the page's and the document's other parts (title, notes,
/// input errors, suite names) are written with, and every line printed for a person.
#[pyfunction]
fn markup_text(text: &Bound<'_, PyString>, how: &str) -> PyResult<String> {
    let markup = match how {
        "html" => Markup::Html,
        "text" => Markup::XmlText,
        "attribute" => Markup::XmlAttribute,
        "terminal" => Markup::Terminal,
        _ => return Err(PyValueError::new_err(format!("no markup {how:?}"))),
    };
    let mut out = Vec::new();
    write_markup(&text_of(text)?, markup, &mut out);
    // Every character not copied was escaped as ASCII, and every surrogate escaped.
    String::from_utf8(out).map_err(|err| PyValueError::new_err(err.to_string()))
}

/// `text` on one line for a table cell or a message line: whitespace runs (what `str.split`
/// splits at) collapsed to one space, the ends trimmed, cut to `limit` characters (a
/// surrogate one) with an ellipsis. The one implementation: the table's result lines, the
/// JUnit input errors' messages and the testcases' failure messages.
#[pyfunction]
#[pyo3(name = "one_line", signature = (text, limit = 300))]
fn one_line_text<'py>(text: &Bound<'py, PyString>, limit: usize) -> PyResult<Bound<'py, PyString>> {
    if limit == 0 {
        return Err(PyValueError::new_err("a line holds at least one character"));
    }
    python_text(text.py(), &one_line(&text_of(text)?, limit))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<VerdictMarkup>()?;
    m.add_class::<VerdictReports>()?;
    m.add_function(wrap_pyfunction!(one_line_text, m)?)?;
    m.add_function(wrap_pyfunction!(markup_text, m)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn markup(text: &str, how: Markup) -> String {
        let mut out = Vec::new();
        write_markup(text.as_bytes(), how, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn escapes_as_terminal_safe_and_the_markup() {
        assert_eq!(
            markup("a&b<c>\"d'", Markup::Html),
            "a&amp;b&lt;c&gt;&quot;d&#x27;"
        );
        assert_eq!(
            markup("a&b<c>\"d'", Markup::XmlText),
            "a&amp;b&lt;c&gt;\"d'"
        );
        assert_eq!(
            markup("\"\t\n\r", Markup::XmlAttribute),
            "&quot;&#09;&#10;\\r"
        );
        assert_eq!(
            markup("\x1b[\u{85}\u{202e}\u{fffe}", Markup::Html),
            "\\x1b[\\x85\\u202e\u{fffe}"
        );
        assert_eq!(
            markup("\u{fffe}\u{ffff}é", Markup::XmlText),
            "\\ufffe\\uffffé"
        );
        // a surrogate's generalized UTF-8
        let mut out = Vec::new();
        write_markup(b"a\xed\xb3\xbfb", Markup::Html, &mut out);
        assert_eq!(out, b"a\\udcffb");
    }

    #[test]
    fn one_line_collapses_and_cuts_as_python() {
        assert_eq!(one_line(" a \t b\u{3000}\n".as_bytes(), 10), b"a b");
        assert_eq!(
            String::from_utf8(one_line("abcdé".as_bytes(), 4)).unwrap(),
            "abc…"
        );
        assert_eq!(one_line(b"abcd", 4), b"abcd");
    }
}
