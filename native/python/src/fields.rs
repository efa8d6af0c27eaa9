//! `FieldReader`: a selected rule's fields read from a Python span record, for
//! `otel_oracles.mapping._compile` (its `read_fields`).
//!
//! Per field, the sources are tried in order and the first usable value wins. A redaction
//! placeholder (`__REDACTED__`, `""`...) is remembered but later sources are still tried; if
//! nothing better turns up the field stays unset and, for a content field, is flagged
//! redacted. A placeholder the parsers unwrap counts the same. The core's own parsers
//! (`json`, `json_or_text`, `genai_messages`, `openinference_messages`, `tool_names`,
//! `request_tool_names`, `string_list`, `streamed_partials`, `python_literal`) are called
//! directly, alone or in a `parse:` chain of several (each in turn, `None` ending it); any
//! other parser (plug-ins, the Python built-ins) through Python, and an `Exception` a parser
//! raises means "no value" (handed to `failed` for the log).
//!
//! Plans arrive as the compiled set's plain data (`_compile.blueprint`, as read back from the
//! cache: lists or tuples alike): the distinct sources, each `(tag, a, b, parse, key)` with
//! its `parse:` names, and per plan, per field `(name, content, source numbers)`. Each source
//! is resolved once here (its parsers by name, a span-name pattern's group function) and
//! shared by number among the fields that read it.

use pyo3::exceptions::{PyException, PyIndexError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFrozenSet, PyList, PyNone, PySet, PyString, PyTuple};

use crate::parsers::{
    dict_set, parse_genai_messages, parse_json, parse_json_or_text, parse_openinference_messages,
    parse_python_literal, parse_streamed_partials, parse_string_list,
};
use crate::pydict::lookup;
use crate::slots::{span, span_held};
use crate::tools::{parse_request_tool_names, parse_tool_names};

/// Where a source's raw value comes from (the `Source` of `mapping/config.py`).
pub(crate) enum Origin {
    Attr(Py<PyString>),
    Attrs(Vec<Py<PyString>>),
    Prefix(String),
    /// Events with these names: the list of them.
    Events(Vec<String>),
    /// The first such event holding this attribute: its value.
    EventAttr(Vec<String>, Py<PyString>),
    /// The first such event with a body: the body.
    EventBody(Vec<String>),
    /// `first_group(name)`: the span name's first regex group, or `None`.
    SpanName(Py<PyAny>),
    StatusMessage,
    ChildAttr(Py<PyString>),
    Const(Py<PyAny>),
}

enum Parser {
    None,
    Json,
    JsonOrText,
    GenaiMessages,
    OpenInferenceMessages,
    ToolNames,
    RequestToolNames,
    StringList,
    StreamedPartials,
    PythonLiteral,
    Python(Py<PyAny>),
    /// A `parse:` list of several: each parser in order, `None` from one ending the chain
    /// with no value (the registry's `_Chain`), with no Python frame between the core's own.
    Chain(Vec<Parser>),
}

impl Parser {
    /// `raw` through this parser (`Parser::None`: unchanged).
    fn apply<'py>(&self, raw: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        match self {
            Parser::None => Ok(raw),
            Parser::Json => parse_json(&raw),
            Parser::JsonOrText => parse_json_or_text(&raw),
            Parser::GenaiMessages => parse_genai_messages(&raw),
            Parser::OpenInferenceMessages => parse_openinference_messages(&raw),
            Parser::ToolNames => parse_tool_names(&raw),
            Parser::RequestToolNames => parse_request_tool_names(&raw),
            Parser::StringList => parse_string_list(&raw),
            Parser::StreamedPartials => parse_streamed_partials(&raw),
            Parser::PythonLiteral => parse_python_literal(&raw),
            Parser::Python(parse) => parse.bind(raw.py()).call1((raw,)),
            Parser::Chain(parsers) => {
                let mut value = raw;
                for parser in parsers {
                    if value.is_none() {
                        return Ok(value);
                    }
                    value = parser.apply(value)?;
                }
                Ok(value)
            }
        }
    }

    /// A parser from its plan item: `None`, the name of one of the core's own, a list of
    /// those or Python callables (a chain), or a Python callable.
    fn from_plan(parser: &Bound<'_, PyAny>) -> PyResult<Self> {
        if parser.is_none() {
            return Ok(Parser::None);
        }
        if let Ok(name) = parser.cast::<PyString>() {
            return Ok(match name.to_str()? {
                "json" => Parser::Json,
                "json_or_text" => Parser::JsonOrText,
                "genai_messages" => Parser::GenaiMessages,
                "openinference_messages" => Parser::OpenInferenceMessages,
                "tool_names" => Parser::ToolNames,
                "request_tool_names" => Parser::RequestToolNames,
                "string_list" => Parser::StringList,
                "streamed_partials" => Parser::StreamedPartials,
                "python_literal" => Parser::PythonLiteral,
                other => {
                    return Err(PyValueError::new_err(format!(
                        "unknown native parser {other:?}"
                    )))
                }
            });
        }
        if let Ok(steps) = parser.cast::<PyList>() {
            return Ok(Parser::Chain(
                steps
                    .iter()
                    .map(|step| Parser::from_plan(&step))
                    .collect::<PyResult<_>>()?,
            ));
        }
        Ok(Parser::Python(parser.clone().unbind()))
    }
}

struct Source {
    origin: Origin,
    parser: Parser,
    key: Option<Py<PyString>>,
}

struct Field {
    name: Py<PyString>,
    content: bool,
    /// Numbers in `FieldReader::sources`, in order.
    sources: Vec<usize>,
}

#[pyclass(module = "otel_oracles._native", name = "FieldReader", frozen)]
pub struct FieldReader {
    /// The set's distinct sources, resolved once: a field holds their numbers.
    sources: Vec<Source>,
    plans: Vec<Vec<Field>>,
    reader: RawReader,
    /// `failed(field_name, exception)`: logs a parser's failure.
    failed: Py<PyAny>,
}

/// A source's raw value read from a Python span record, and the placeholder test: the one
/// raw read behind the field reader and the rule table's content conditions (`rules.rs`).
pub(crate) struct RawReader {
    /// The redaction placeholders, as Python compares them (`str in frozenset`).
    placeholders: Py<PyFrozenSet>,
    /// The placeholders' lengths in characters, bit `n` for `n` characters, when every
    /// placeholder is an exact `str` shorter than 64: an exact `str` of another length is
    /// none of them, found without hashing it (attribute values are often kilobytes of JSON,
    /// and a new string's hash reads all of it) and with no set lookup for the short texts
    /// (names, ids, reasons) that most values are. `None`: every `str` is looked up in the
    /// set.
    placeholder_lengths: Option<u64>,
    /// The record field names read, interned once.
    interned: [Py<PyString>; 5],
}

/// Field names of the record fields read, lent by the reader's interned ones (no reference
/// taken and released per read: content is read ~40,000 times in a grade of 2,000 traces).
struct Names<'a, 'py> {
    attributes: &'a Bound<'py, PyString>,
    events: &'a Bound<'py, PyString>,
    name: &'a Bound<'py, PyString>,
    body: &'a Bound<'py, PyString>,
    status_message: &'a Bound<'py, PyString>,
}

const NAMES: [&str; 5] = ["attributes", "events", "name", "body", "status_message"];

impl<'a, 'py> Names<'a, 'py> {
    fn new(py: Python<'py>, interned: &'a [Py<PyString>; 5]) -> Self {
        let [attributes, events, name, body, status_message] =
            interned.each_ref().map(|n| n.bind(py));
        Self {
            attributes,
            events,
            name,
            body,
            status_message,
        }
    }
}

/// The span's events whose name is one of `names`.
fn named_events<'py>(
    span: &Bound<'py, PyAny>,
    names: &Names<'_, 'py>,
    wanted: &[String],
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let events = span_held(span, span::EVENTS, names.events)?;
    let mut out = Vec::new();
    if events.len().unwrap_or(1) == 0 {
        return Ok(out);
    }
    for event in events.try_iter()? {
        let event = event?;
        let name = event.getattr(names.name)?;
        let hit = match name.cast::<PyString>() {
            Ok(name) => match name.to_str() {
                Ok(text) => wanted.iter().any(|w| w == text),
                Err(_) => false,
            },
            Err(_) => false,
        };
        if hit {
            out.push(event);
        }
    }
    Ok(out)
}

impl RawReader {
    /// The raw value of one source, or `None` for "no value" (absent, or `None`). Most
    /// sources are an attribute of a span whose attributes are a plain `dict`: that one is
    /// read here, inlined where a field or a content test reads it (~11 reads a span, four
    /// in ten of a key the span lacks, where a call and its result moved through memory
    /// cost a third of the lookup); every other source through `read`.
    #[inline(always)]
    fn raw<'py>(
        &self,
        origin: &Origin,
        span: &Bound<'py, PyAny>,
        attributes: &Bound<'py, PyAny>,
        children: &Bound<'py, PyAny>,
        names: &Names<'_, 'py>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        if let (Origin::Attr(key), Ok(dict)) = (origin, attributes.cast_exact::<PyDict>()) {
            return Ok(dict.get_item(key.bind(span.py()))?.filter(|v| !v.is_none()));
        }
        self.read(origin, span, attributes, children, names)
    }

    /// `raw` of any source.
    #[inline(never)]
    fn read<'py>(
        &self,
        origin: &Origin,
        span: &Bound<'py, PyAny>,
        attributes: &Bound<'py, PyAny>,
        children: &Bound<'py, PyAny>,
        names: &Names<'_, 'py>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = span.py();
        let value = match origin {
            Origin::Attr(key) => lookup(attributes, key.bind(py))?,
            Origin::Attrs(keys) => {
                let found = PyDict::new(py);
                for key in keys {
                    let key = key.bind(py);
                    if let Some(value) = lookup(attributes, key)? {
                        found.set_item(key, value)?;
                    }
                }
                (!found.is_empty()).then(|| found.into_any())
            }
            Origin::Prefix(prefix) => {
                let found = PyDict::new(py);
                for key in attributes.try_iter()? {
                    let key = key?;
                    let Ok(text) = key.cast::<PyString>() else {
                        continue;
                    };
                    let Ok(text) = text.to_str() else {
                        // A key that is no UTF-8 (lone surrogates): Python compares it.
                        let start = format!("{prefix}.");
                        if key.call_method1("startswith", (&start,))?.is_truthy()? {
                            let rest = key.get_item(pyo3::types::PySlice::new(
                                py,
                                start.chars().count() as isize,
                                isize::MAX,
                                1,
                            ))?;
                            found.set_item(rest, attributes.get_item(&key)?)?;
                        }
                        continue;
                    };
                    if let Some(rest) = text
                        .strip_prefix(prefix.as_str())
                        .and_then(|rest| rest.strip_prefix('.'))
                    {
                        found.set_item(rest, attributes.get_item(&key)?)?;
                    }
                }
                (!found.is_empty()).then(|| found.into_any())
            }
            Origin::Events(wanted) => {
                let found = named_events(span, names, wanted)?;
                (!found.is_empty())
                    .then(|| PyList::new(py, found))
                    .transpose()?
                    .map(Bound::into_any)
            }
            Origin::EventAttr(wanted, key) => {
                let key = key.bind(py);
                let mut out = None;
                for event in named_events(span, names, wanted)? {
                    let attrs = event.getattr(names.attributes)?;
                    if let Some(value) = lookup(&attrs, key)? {
                        out = Some(value);
                        break;
                    }
                }
                out
            }
            Origin::EventBody(wanted) => {
                let mut out = None;
                for event in named_events(span, names, wanted)? {
                    let body = event.getattr(names.body)?;
                    if !body.is_none() {
                        out = Some(body);
                        break;
                    }
                }
                out
            }
            Origin::SpanName(first_group) => {
                let name = span_held(span, span::NAME, names.name)?;
                Some(first_group.bind(py).call1((&*name,))?)
            }
            Origin::StatusMessage => {
                let message = span_held(span, span::STATUS_MESSAGE, names.status_message)?;
                message.is_truthy()?.then(|| message.into_bound())
            }
            Origin::ChildAttr(key) => {
                let key = key.bind(py);
                let mut out = None;
                for child in children.try_iter()? {
                    let child = child?;
                    let attrs = span_held(&child, span::ATTRIBUTES, names.attributes)?;
                    if let Some(value) = lookup(&attrs, key)? {
                        out = Some(value);
                        break;
                    }
                }
                out
            }
            Origin::Const(value) => Some(value.bind(py).clone()),
        };
        Ok(value.filter(|v| !v.is_none()))
    }

    /// Whether `value` is one of the placeholders (`value in placeholders`, a `str` only):
    /// an exact `str` of no placeholder's length is decided by its length, inlined where a
    /// value is tested (~8 a span); the rest are looked up in the set.
    #[inline(always)]
    fn is_placeholder(&self, value: &Bound<'_, PyAny>) -> PyResult<bool> {
        if let (Ok(text), Some(lengths)) =
            (value.cast_exact::<PyString>(), self.placeholder_lengths)
        {
            // SAFETY: `text` is a live `str`, held by `value` for the call.
            let len = unsafe { ffi::PyUnicode_GetLength(text.as_ptr()) };
            if !u32::try_from(len).is_ok_and(|n| n < u64::BITS && (lengths >> n) & 1 == 1) {
                return Ok(false);
            }
        } else if value.is_exact_instance_of::<PyDict>() || value.is_exact_instance_of::<PyList>() {
            // What the content parsers make (a parsed object or message list, tested again
            // after parsing) is no `str`: told by its type's address, without the call.
            return Ok(false);
        }
        self.in_placeholders(value)
    }

    /// `value in placeholders` for a `str` (subclasses included), `false` for any other value.
    #[inline(never)]
    fn in_placeholders(&self, value: &Bound<'_, PyAny>) -> PyResult<bool> {
        if !value.is_instance_of::<PyString>() {
            return Ok(false);
        }
        self.placeholders.bind(value.py()).contains(value)
    }

    /// The raw reader of `placeholders` (the conventions' redaction placeholders).
    pub(crate) fn new(placeholders: Bound<'_, PyFrozenSet>) -> Self {
        let py = placeholders.py();
        let mut lengths = Some(0u64);
        for placeholder in placeholders.iter() {
            let length = placeholder
                .cast_exact::<PyString>()
                .ok()
                .and_then(|text| text.len().ok())
                .and_then(|n| u32::try_from(n).ok())
                .filter(|&n| n < u64::BITS);
            lengths = lengths.zip(length).map(|(bits, n)| bits | 1 << n);
        }
        Self {
            placeholders: placeholders.unbind(),
            placeholder_lengths: lengths,
            interned: NAMES.map(|name| PyString::intern(py, name).unbind()),
        }
    }

    /// The content a rule's `field` condition tests: the raw value of the first of
    /// `origins` with one that is no placeholder, as the field reader reads it (before
    /// any parser), and as text: a `str` as it is, any other value through `dumps` (JSON).
    /// Events are handed over as their bodies, or their attributes (a `dict`) for an event
    /// without a body. Origins that hold no content (span name, status message, children,
    /// constants) are passed over.
    pub(crate) fn content<'py>(
        &self,
        span: &Bound<'py, PyAny>,
        origins: &[Origin],
        dumps: &Py<PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = span.py();
        let names = Names::new(py, &self.interned);
        let attributes = span_held(span, span::ATTRIBUTES, names.attributes)?;
        let none = PyNone::get(py);
        for origin in origins {
            let value = match origin {
                Origin::SpanName(_)
                | Origin::StatusMessage
                | Origin::ChildAttr(_)
                | Origin::Const(_) => continue,
                Origin::Events(wanted) => {
                    let found = named_events(span, &names, wanted)?;
                    if found.is_empty() {
                        continue;
                    }
                    let list = PyList::empty(py);
                    for event in found {
                        let body = event.getattr(names.body)?;
                        if body.is_none() {
                            let attrs = event.getattr(names.attributes)?;
                            list.append(py.get_type::<PyDict>().call1((attrs,))?)?;
                        } else {
                            list.append(body)?;
                        }
                    }
                    list.into_any()
                }
                _ => match self.raw(origin, span, &attributes, none.as_any(), &names)? {
                    Some(value) => value,
                    None => continue,
                },
            };
            if self.is_placeholder(&value)? {
                continue;
            }
            if value.is_instance_of::<PyString>() {
                return Ok(Some(value));
            }
            return dumps.bind(py).call1((value,)).map(Some);
        }
        Ok(None)
    }
}

impl FieldReader {
    /// The parsed value, `None` for "no value" (the parser gave `None`, raised, or `key:`
    /// found nothing).
    fn parse<'py>(
        &self,
        source: &Source,
        field: &Field,
        raw: Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = raw.py();
        let parsed = match source.parser.apply(raw) {
            Ok(parsed) => parsed,
            Err(err) if err.is_instance_of::<PyException>(py) => {
                self.failed
                    .bind(py)
                    .call1((field.name.bind(py), err.value(py)))?;
                return Ok(None);
            }
            Err(err) => return Err(err),
        };
        let Some(key) = &source.key else {
            return Ok((!parsed.is_none()).then_some(parsed));
        };
        // `key:` applies only to what a parser made of the value (or the value itself).
        if parsed.is_none() {
            return Ok(None);
        }
        let Ok(dict) = parsed.cast::<PyDict>() else {
            return Ok(None);
        };
        Ok(dict.get_item(key.bind(py))?.filter(|v| !v.is_none()))
    }
}

fn strings(value: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    value.extract()
}

/// The first `N` items of a plan item, a tuple or a list (plain data as JSON reads it back).
pub(crate) fn leading<'py, const N: usize>(
    item: &Bound<'py, PyAny>,
) -> PyResult<[Bound<'py, PyAny>; N]> {
    let items: Vec<Bound<'py, PyAny>> = if let Ok(tuple) = item.cast::<PyTuple>() {
        tuple.iter().take(N).collect()
    } else if let Ok(list) = item.cast::<PyList>() {
        list.iter().take(N).collect()
    } else {
        return Err(PyTypeError::new_err("a plan item is a tuple or a list"));
    };
    items
        .try_into()
        .map_err(|_| PyValueError::new_err(format!("a plan item has fewer than {N} items")))
}

/// A source's origin from the first three items of its plan item: `(tag, a, b, ...)`.
pub(crate) fn origin(item: &Bound<'_, PyAny>) -> PyResult<Origin> {
    let py = item.py();
    let [tag, a, b] = leading::<3>(item)?;
    let tag: String = tag.extract()?;
    let intern = |v: &Bound<'_, PyAny>| -> PyResult<Py<PyString>> {
        let text: String = v.extract()?;
        Ok(PyString::intern(py, &text).unbind())
    };
    Ok(match tag.as_str() {
        "attr" => Origin::Attr(intern(&a)?),
        "attrs" => Origin::Attrs(
            a.try_iter()?
                .map(|k| intern(&k?))
                .collect::<PyResult<Vec<_>>>()?,
        ),
        "prefix" => Origin::Prefix(a.extract()?),
        "events" => Origin::Events(strings(&a)?),
        "event_attr" => Origin::EventAttr(strings(&a)?, intern(&b)?),
        "event_body" => Origin::EventBody(strings(&a)?),
        "span_name" => Origin::SpanName(a.unbind()),
        "status_message" => Origin::StatusMessage,
        "child_attr" => Origin::ChildAttr(intern(&a)?),
        "const" => Origin::Const(a.unbind()),
        other => return Err(PyValueError::new_err(format!("unknown source {other:?}"))),
    })
}

/// What a set's sources need from Python, each asked once per distinct name or pattern:
/// `parser(name)`, what the reader runs for a registered parser's name (the name of one of
/// the core's own, a list for a registered chain, else the Python callable; `KeyError` for
/// an unregistered name), and `span_name(pattern)`, the function giving a span name's first
/// group of `pattern`. What they gave is kept in lists searched in order: a set names a few
/// dozen parsers and patterns.
struct Resolver<'a, 'py> {
    parser: &'a Bound<'py, PyAny>,
    span_name: &'a Bound<'py, PyAny>,
    parsers: Vec<(String, Bound<'py, PyAny>)>,
    groups: Vec<(String, Bound<'py, PyAny>)>,
}

/// What `ask(key)` gave for `key`, asked only the first time (`known` keeps the answers).
fn asked_once<'py>(
    known: &mut Vec<(String, Bound<'py, PyAny>)>,
    key: String,
    ask: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    if let Some((_, found)) = known.iter().find(|(k, _)| *k == key) {
        return Ok(found.clone());
    }
    let found = ask.call1((&key,))?;
    known.push((key, found.clone()));
    Ok(found)
}

impl<'py> Resolver<'_, 'py> {
    /// The parser of a `parse:` list: none for no name, the registered parser for one, a
    /// chain of them for several (as `ParserRegistry.chain` makes them).
    fn parser(&mut self, names: &Bound<'py, PyAny>) -> PyResult<Parser> {
        let mut steps = Vec::new();
        for name in names.try_iter()? {
            let item = asked_once(&mut self.parsers, name?.extract()?, self.parser)?;
            steps.push(Parser::from_plan(&item)?);
        }
        Ok(match steps.len() {
            0 => Parser::None,
            1 => steps.pop().unwrap_or(Parser::None),
            _ => Parser::Chain(steps),
        })
    }

    /// A span-name pattern's group function, one per distinct pattern (its memo of names
    /// shared by every source with that pattern).
    fn group(&mut self, pattern: &Bound<'py, PyAny>) -> PyResult<Py<PyAny>> {
        Ok(asked_once(&mut self.groups, pattern.extract()?, self.span_name)?.unbind())
    }

    /// A set's source, `(tag, a, b, parse, key)`, as the reader runs it.
    fn source(&mut self, item: &Bound<'py, PyAny>) -> PyResult<Source> {
        let py = item.py();
        let [_, a, _, parse, key] = leading::<5>(item)?;
        let origin = match origin(item)? {
            Origin::SpanName(_) => Origin::SpanName(self.group(&a)?),
            origin => origin,
        };
        let parser = self.parser(&parse)?;
        let key = if key.is_none() {
            None
        } else {
            let text: String = key.extract()?;
            Some(PyString::intern(py, &text).unbind())
        };
        Ok(Source {
            origin,
            parser,
            key,
        })
    }
}

#[pymethods]
impl FieldReader {
    /// `sources`: the set's distinct sources, each `(tag, a, b, parse, key)` (`parse` the
    /// `parse:` names); `plans`: per plan, per field `(name, is_content_field, source
    /// numbers)`; `parser` and `span_name` resolve the sources' parser names and span-name
    /// patterns (`Resolver`); `placeholders`: the redaction placeholders; `failed(field,
    /// exception)` is told of each parser failure. Every source is resolved, read by a field
    /// or not, and a number with no source is an `IndexError`.
    #[new]
    fn new(
        sources: &Bound<'_, PyAny>,
        plans: &Bound<'_, PyAny>,
        parser: &Bound<'_, PyAny>,
        span_name: &Bound<'_, PyAny>,
        placeholders: Bound<'_, PyFrozenSet>,
        failed: Py<PyAny>,
    ) -> PyResult<Self> {
        let py = plans.py();
        let mut resolver = Resolver {
            parser,
            span_name,
            parsers: Vec::new(),
            groups: Vec::new(),
        };
        let sources = sources
            .try_iter()?
            .map(|item| resolver.source(&item?))
            .collect::<PyResult<Vec<_>>>()?;
        let mut out = Vec::new();
        for plan in plans.try_iter()? {
            let mut fields = Vec::new();
            for field in plan?.try_iter()? {
                let [name, content, numbers] = leading::<3>(&field?)?;
                let name: String = name.extract()?;
                let mut read = Vec::new();
                for number in numbers.try_iter()? {
                    let number: usize = number?.extract()?;
                    if number >= sources.len() {
                        return Err(PyIndexError::new_err("a field reads no such source"));
                    }
                    read.push(number);
                }
                fields.push(Field {
                    name: PyString::intern(py, &name).unbind(),
                    content: content.extract()?,
                    sources: read,
                });
            }
            out.push(fields);
        }
        Ok(Self {
            sources,
            plans: out,
            reader: RawReader::new(placeholders),
            failed,
        })
    }

    /// Read plan `plan` of `span` (whose direct children are `children`) into `fields`;
    /// content fields left with only a placeholder go into `redacted`.
    fn read(
        &self,
        span: &Bound<'_, PyAny>,
        children: &Bound<'_, PyAny>,
        plan: usize,
        fields: &Bound<'_, PyDict>,
        redacted: &Bound<'_, PySet>,
    ) -> PyResult<()> {
        self.read_into(span, children, plan, fields, redacted)
    }
}

impl FieldReader {
    /// Every field name of every plan (a name once per field that reads it): the very
    /// objects `read_into` sets as `fields` keys, held as long as the reader is.
    pub(crate) fn field_names(&self) -> impl Iterator<Item = &Py<PyString>> {
        self.plans.iter().flatten().map(|field| &field.name)
    }

    /// `read`, for the drafter (`draft.rs`), which reads a span's fields first.
    pub(crate) fn read_into(
        &self,
        span: &Bound<'_, PyAny>,
        children: &Bound<'_, PyAny>,
        plan: usize,
        fields: &Bound<'_, PyDict>,
        redacted: &Bound<'_, PySet>,
    ) -> PyResult<()> {
        let py = span.py();
        let Some(plan) = self.plans.get(plan) else {
            return Err(PyValueError::new_err("no such field plan"));
        };
        let names = Names::new(py, &self.reader.interned);
        let attributes = span_held(span, span::ATTRIBUTES, names.attributes)?;
        for field in plan {
            let mut flagged = false;
            let mut found = None;
            // Every number was checked against `sources` when the plan was made.
            for source in field.sources.iter().filter_map(|&n| self.sources.get(n)) {
                let Some(raw) =
                    self.reader
                        .raw(&source.origin, span, &attributes, children, &names)?
                else {
                    continue;
                };
                if self.reader.is_placeholder(&raw)? {
                    flagged = true;
                    continue;
                }
                let Some(value) = self.parse(source, field, raw)? else {
                    continue;
                };
                let transformed = !matches!(source.parser, Parser::None) || source.key.is_some();
                if transformed && self.reader.is_placeholder(&value)? {
                    flagged = true;
                    continue;
                }
                found = Some(value);
                break;
            }
            match found {
                Some(value) => dict_set(fields, field.name.bind(py), &value)?,
                None if flagged && field.content => redacted.add(field.name.bind(py))?,
                None => {}
            }
        }
        Ok(())
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<FieldReader>()
}
