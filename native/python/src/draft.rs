//! `Drafter`: the per-span part of a draft step, for `otel_oracles.mapping._mapper` (its
//! `_draft`): a span's fields read by its rule's plan (the `FieldReader`), its status from
//! the error signals, and the fields normalized, in one call per span.
//!
//! What it decides, in this order (the mapper's docstrings say why):
//!
//! 1. **Fields**: the rule's read plan into `fields` / `redacted` (`FieldReader::read_into`).
//! 2. **Error signals**: an `ERROR` status, an `error.type` attribute (any value, `None`
//!    included) or an `exception` event. When every type they name (the attribute, each
//!    `exception` event's `exception.type`, the first of those replaced by the `error_type`
//!    the rule read when that is a `str`) is a `str` whose last dotted part is one of the
//!    conventions' `control_flow_exceptions`, nothing failed: the read `error_type` is
//!    dropped and the span is no error. A failed span's `error_type` is, unless its rule
//!    read one, the attribute's value, else the first `exception` event's `exception.type`;
//!    its `error_message` the status message, else that event's `exception.message`. A span
//!    that did not fail is `ok` once it has ended (a truthy `end_ns`), else `unset`. A failed
//!    span with `run_limit_errors` configured asks `run_limit(fields)` (Python) for
//!    `attributes["run_limit"]`.
//! 3. **Normalization**: string fields that are no exact `str` through `parse_string`, token
//!    counts that are no exact `int` through `parse_int`, `finish_reasons` copied when it is
//!    an exact `list` of exact `str` (else the core's `string_list` parser); message and document lists
//!    that are not lists of dicts dropped; a message list whose content capture dropped the
//!    content (a message without parts, a text part without content, a tool call without
//!    arguments, a tool response without a response) flagged in `redacted`; `result` read
//!    by `json_or_text`, and an MCP text block's text read so too; `structured_output` (an
//!    object only) moved to `attributes`; `output` made into `output_messages` by
//!    `output_messages(output)` (Python) when the span has none (`output` flagged redacted
//!    becomes `output_messages`); `finish_reasons` from the output messages' when none was
//!    read; each finish reason in the conventions' vocabulary (`str.lower()` of it looked
//!    up, ASCII lower-cased here, any other text by Python).
//!
//! Python's meaning is kept wherever a value is unusual: the conversions (`parse_string`,
//! `parse_int`) are the Python parsers, called for the values they change; `==` on a value
//! that is no exact `str` is Python's comparison. Dicts and lists, including subclasses
//! (which no parser makes), are read with `dict`'s and `list`'s own operations.

use otel_oracles_core::hashing::{FastMap, FastMapExt, FastSet, FastSetExt};

use std::sync::Mutex;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyFrozenSet, PyInt, PyList, PySet, PyString, PyTuple, PyType};

use crate::fields::FieldReader;
use crate::parsers::{dict_set, parse_json_or_text, parse_string_list};
use crate::pydict::{self, lookup};
use crate::results::ResultRules;
use crate::slots::{object_new, span, span_held, Held, SlotLayout};

/// Fields that hold a string (`STRING_FIELDS` of the mapper).
const STRING_FIELDS: [&str; 12] = [
    "tool",
    "call_id",
    "error_type",
    "error_message",
    "provider",
    "model",
    "agent_name",
    "agent_id",
    "conversation_id",
    "from_agent",
    "to_agent",
    "query",
];

/// The hooks as Python hands them over: `(parse_string, parse_int, output_messages,
/// run_limit)`.
type HookTuple = (Py<PyAny>, Py<PyAny>, Py<PyAny>, Py<PyAny>);

/// The Python functions the drafter calls for the rare values it does not convert itself.
struct Hooks {
    parse_string: Py<PyAny>,
    parse_int: Py<PyAny>,
    /// `output_messages(output)`: the messages an `output` field stands for.
    output_messages: Py<PyAny>,
    /// `run_limit(fields)`: the `run_limit_errors` entry a failed span's error is, or `None`.
    run_limit: Py<PyAny>,
}

#[pyclass(module = "otel_oracles._native", name = "Drafter", frozen)]
pub struct Drafter {
    reader: Py<FieldReader>,
    /// The control-flow exception names, for texts that are UTF-8.
    control_flow: FastSet<String>,
    /// The same names as Python compares them (a type name holding lone surrogates).
    control_flow_set: Py<PyFrozenSet>,
    has_control_flow: bool,
    run_limit_errors: bool,
    /// Lower-cased spelling -> canonical finish reason, for texts that are UTF-8.
    vocabulary: FastMap<String, Py<PyAny>>,
    /// The same vocabulary as Python looks it up (any other key).
    vocabulary_dict: Py<PyDict>,
    has_vocabulary: bool,
    /// `StatusCode.ERROR`, compared with a status that is no `int`.
    error_code: Py<PyAny>,
    hooks: Hooks,
    /// `"ok"`, `"error"`, `"unset"`, interned.
    statuses: [Py<PyString>; 3],
    /// What `normalize` makes of a field name, by the name's address: every plan field name
    /// of `reader` (held by it) and the interned `NORMALIZED` and `STRING_FIELDS` names (held
    /// in `interned`), so most keys are told apart without reading their text.
    name_classes: FastMap<usize, NameClass>,
    _interned: Vec<Py<PyString>>,
}

/// A field name as `normalize` reads it: one of `NORMALIZED` (its number), one of
/// `STRING_FIELDS`, or neither.
#[derive(Clone, Copy)]
enum NameClass {
    Normalized(usize),
    StringField,
    Other,
}

impl NameClass {
    /// The class of a name by its text.
    fn of(text: &str) -> Self {
        if let Some(bit) = NORMALIZED.iter().position(|name| *name == text) {
            NameClass::Normalized(bit)
        } else if STRING_FIELDS.contains(&text) {
            NameClass::StringField
        } else {
            NameClass::Other
        }
    }
}

const OK: usize = 0;
const ERROR: usize = 1;
const UNSET: usize = 2;

/// The last dotted part of `text` (`text.rsplit(".", 1)[-1]`).
fn last_part(text: &str) -> &str {
    text.rsplit('.').next().unwrap_or(text)
}

impl Drafter {
    /// Whether `value` is a `str` naming a control-flow exception.
    fn control_flow_name(&self, value: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Ok(text) = value.cast::<PyString>() else {
            return Ok(false);
        };
        if let Ok(text) = text.to_str() {
            return Ok(self.control_flow.contains(last_part(text)));
        }
        let py = value.py();
        let short = value
            .call_method1(intern!(py, "rsplit"), (".", 1))?
            .get_item(-1)?;
        self.control_flow_set.bind(py).contains(short)
    }

    /// The mapper's `_control_flow_only`: whether the span's error signals (its `error.type`
    /// attribute, its `exception` events) all name control-flow exceptions; the first
    /// event's type is the rule's own `error_type` when that is a `str`.
    fn control_flow_only(
        &self,
        py: Python<'_>,
        error_type_attr: Option<&Bound<'_, PyAny>>,
        exceptions: &[Bound<'_, PyAny>],
        read_type: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        if !self.has_control_flow || (error_type_attr.is_none() && exceptions.is_empty()) {
            return Ok(false);
        }
        if let Some(value) = error_type_attr {
            if !self.control_flow_name(value)? {
                return Ok(false);
            }
        }
        let read_type = read_type.filter(|t| t.is_instance_of::<PyString>());
        for (i, event) in exceptions.iter().enumerate() {
            let value = match read_type {
                Some(read) if i == 0 => read.clone(),
                _ => get(
                    &event.getattr(intern!(py, "attributes"))?,
                    intern!(py, "exception.type"),
                )?,
            };
            if !self.control_flow_name(&value)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn status(&self, py: Python<'_>, which: usize) -> Py<PyString> {
        self.statuses[which].clone_ref(py)
    }
}

/// `mapping.get(key)`: the value, or `None`.
fn get<'py>(
    mapping: &Bound<'py, PyAny>,
    key: &Bound<'py, PyString>,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(lookup(mapping, key)?.unwrap_or_else(|| mapping.py().None().into_bound(mapping.py())))
}

/// `value` is truthy (Python's `bool(value)`).
fn truthy(value: &Bound<'_, PyAny>) -> PyResult<bool> {
    value.is_truthy()
}

/// `value == text` as Python compares them.
pub(crate) fn equals(value: &Bound<'_, PyAny>, text: &str) -> PyResult<bool> {
    if value.is_exact_instance_of::<PyString>() {
        if let Ok(own) = value.cast::<PyString>()?.to_str() {
            return Ok(own == text);
        }
    }
    value.eq(text)
}

/// The field names `Drafter::normalize` reads, by number.
const NORMALIZED: [&str; 9] = [
    "input_tokens",
    "output_tokens",
    "finish_reasons",
    "input_messages",
    "output_messages",
    "documents",
    "result",
    "structured_output",
    "output",
];
const INPUT_TOKENS: usize = 0;
const OUTPUT_TOKENS: usize = 1;
const FINISH_REASONS: usize = 2;
const INPUT_MESSAGES: usize = 3;
const OUTPUT_MESSAGES: usize = 4;
const DOCUMENTS: usize = 5;
const RESULT: usize = 6;
const STRUCTURED_OUTPUT: usize = 7;
const OUTPUT: usize = 8;

/// Which of `NORMALIZED` a draft's fields may hold, one bit each: a clear bit means the
/// name is certainly not a key (so it is not looked up), a set bit that it is or was not
/// ruled out. Found by one walk over the keys (`see`), kept as `normalize` deletes and sets.
struct Named(u16);

impl Named {
    /// `NORMALIZED` as interned `str`s: the very objects the field reader's and the
    /// drafter's names are (both interned), so a key is most often found by address.
    fn names(py: Python<'_>) -> [&Bound<'_, PyString>; 9] {
        [
            intern!(py, "input_tokens"),
            intern!(py, "output_tokens"),
            intern!(py, "finish_reasons"),
            intern!(py, "input_messages"),
            intern!(py, "output_messages"),
            intern!(py, "documents"),
            intern!(py, "result"),
            intern!(py, "structured_output"),
            intern!(py, "output"),
        ]
    }

    /// Notes `key`: one of the names by address, else an exact `str` by its text; a key of
    /// any other class might equal any name (its own `__eq__`), so all are looked up.
    fn see(&mut self, key: &Bound<'_, PyAny>, names: &[&Bound<'_, PyString>; 9]) {
        if let Some(bit) = names.iter().position(|name| name.as_ptr() == key.as_ptr()) {
            self.0 |= 1 << bit;
        } else if let Ok(text) = key.cast_exact::<PyString>() {
            if let Some(bit) = text
                .to_str()
                .ok()
                .and_then(|text| NORMALIZED.iter().position(|name| *name == text))
            {
                self.0 |= 1 << bit;
            }
        } else {
            self.0 = u16::MAX;
        }
    }

    fn may(&self, bit: usize) -> bool {
        self.0 & (1 << bit) != 0
    }

    fn set(&mut self, bit: usize) {
        self.0 |= 1 << bit;
    }

    /// `fields.get(name)` for name number `bit`, without a lookup when it is not a key.
    fn get<'py>(
        &self,
        fields: &Bound<'py, PyDict>,
        names: &[&Bound<'py, PyString>; 9],
        bit: usize,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        if !self.may(bit) {
            return Ok(None);
        }
        fields.get_item(names[bit])
    }

    /// `name in fields` for name number `bit`.
    fn contains(
        &self,
        fields: &Bound<'_, PyDict>,
        names: &[&Bound<'_, PyString>; 9],
        bit: usize,
    ) -> PyResult<bool> {
        Ok(self.may(bit) && fields.contains(names[bit])?)
    }

    /// `del fields[name]` for name number `bit` (a key: the caller has just read it).
    fn del(
        &mut self,
        fields: &Bound<'_, PyDict>,
        names: &[&Bound<'_, PyString>; 9],
        bit: usize,
    ) -> PyResult<()> {
        fields.del_item(names[bit])?;
        self.0 &= !(1 << bit);
        Ok(())
    }
}

/// The mapper's `_content_dropped`: capture kept the message structure but dropped the
/// content (a message without parts, a text part without content, a tool call without
/// arguments, a tool response without a response). `messages` is a list of dicts.
fn content_dropped(messages: &Bound<'_, PyList>) -> PyResult<bool> {
    let py = messages.py();
    for message in messages.iter() {
        let message = message.cast_into::<PyDict>()?;
        let parts = message.get_item(intern!(py, "parts"))?;
        let Some(parts) = parts else {
            return Ok(true);
        };
        let Ok(parts) = parts.cast::<PyList>() else {
            return Ok(true); // no list (a falsy value, or any other: no parts either way)
        };
        if parts.is_empty() {
            return Ok(true);
        }
        for part in parts.iter() {
            let Ok(part) = part.cast::<PyDict>() else {
                continue;
            };
            let Some(kind) = part.get_item(intern!(py, "type"))? else {
                continue; // `None == "text"` and the rest are false
            };
            // Each test as Python evaluates it (`kind` need not be a `str`).
            if equals(&kind, "text")?
                && part
                    .get_item(intern!(py, "content"))?
                    .map_or(true, |c| c.is_none())
            {
                return Ok(true);
            }
            if equals(&kind, "tool_call")? && !part.contains(intern!(py, "arguments"))? {
                return Ok(true);
            }
            if equals(&kind, "tool_call_response")? && !part.contains(intern!(py, "response"))? {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// Exactly `{"type": "text", "text": <str>}`, or LangChain's with its `id` too (the
/// mapping's `is_text_block`): its text, else `None`.
fn text_block<'py>(value: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = value.py();
    let Ok(block) = value.cast::<PyDict>() else {
        return Ok(None);
    };
    let size = block.len();
    if !(size == 2 || (size == 3 && block.contains(intern!(py, "id"))?)) {
        return Ok(None);
    }
    let (Some(kind), Some(text)) = (
        block.get_item(intern!(py, "type"))?,
        block.get_item(intern!(py, "text"))?,
    ) else {
        return Ok(None);
    };
    if equals(&kind, "text")? && text.is_instance_of::<PyString>() {
        return Ok(Some(text));
    }
    Ok(None)
}

impl Drafter {
    /// The error signals and the status (step 2 of the module's doc); `fields` as read.
    fn signals(
        &self,
        span: &Bound<'_, PyAny>,
        fields: &Bound<'_, PyDict>,
        attributes: &Bound<'_, PyDict>,
    ) -> PyResult<usize> {
        let py = span.py();
        let span_attributes = span_held(span, span::ATTRIBUTES, intern!(py, "attributes"))?;
        let mut exceptions = Vec::new();
        let events = span_held(span, span::EVENTS, intern!(py, "events"))?;
        if truthy(&events)? {
            for event in events.try_iter()? {
                let event = event?;
                if equals(&event.getattr(intern!(py, "name"))?, "exception")? {
                    exceptions.push(event);
                }
            }
        }
        let error_type_attr = lookup(&span_attributes, intern!(py, "error.type"))?;
        let code = span_held(span, span::STATUS_CODE, intern!(py, "status_code"))?;
        let failed_status = match code.cast::<PyInt>() {
            Ok(code) => code.extract::<i64>().is_ok_and(|c| c == 2),
            Err(_) => code.eq(self.error_code.bind(py))?,
        };
        let mut signalled = failed_status || error_type_attr.is_some() || !exceptions.is_empty();
        if signalled {
            let read_type = fields.get_item(intern!(py, "error_type"))?;
            if self.control_flow_only(
                py,
                error_type_attr.as_ref(),
                &exceptions,
                read_type.as_ref(),
            )? {
                // Nothing failed: a control-flow exception has no type.
                if read_type.is_some() {
                    fields.del_item(intern!(py, "error_type"))?;
                }
                signalled = false;
            }
        }
        let exception = exceptions.first();
        if !signalled {
            return Ok(
                if truthy(&*span_held(span, span::END_NS, intern!(py, "end_ns"))?)? {
                    OK
                } else {
                    UNSET
                },
            );
        }
        if !fields.contains(intern!(py, "error_type"))? {
            let mut etype = error_type_attr.filter(|t| !t.is_none());
            if etype.is_none() {
                if let Some(event) = exception {
                    let attrs = event.getattr(intern!(py, "attributes"))?;
                    etype = Some(get(&attrs, intern!(py, "exception.type"))?);
                }
            }
            if let Some(etype) = etype.filter(|t| !t.is_none()) {
                fields.set_item(intern!(py, "error_type"), etype)?;
            }
        }
        if !fields.contains(intern!(py, "error_message"))? {
            let message = span_held(span, span::STATUS_MESSAGE, intern!(py, "status_message"))?;
            let mut message = truthy(&message)?.then_some(message);
            if message.is_none() {
                if let Some(event) = exception {
                    let attrs = event.getattr(intern!(py, "attributes"))?;
                    message = Some(Held::Owned(get(&attrs, intern!(py, "exception.message"))?));
                }
            }
            if let Some(message) = message.filter(|m| !m.is_none()) {
                fields.set_item(intern!(py, "error_message"), &message)?;
            }
        }
        if self.run_limit_errors {
            let limit = self.hooks.run_limit.bind(py).call1((fields,))?;
            if !limit.is_none() {
                attributes.set_item(intern!(py, "run_limit"), limit)?;
            }
        }
        Ok(ERROR)
    }

    /// The fields normalized (step 3 of the module's doc). Returns whether `finish_reasons`
    /// may be among the fields (`canonical_reasons` has nothing to do otherwise).
    ///
    /// One walk over the fields finds which of the names read here they hold (`Named`),
    /// so a name a draft does not hold (most drafts hold two or three of the nine) costs
    /// no `dict` lookup; the names that are there are read as before.
    fn normalize(
        &self,
        fields: &Bound<'_, PyDict>,
        redacted: &Bound<'_, PySet>,
        attributes: &Bound<'_, PyDict>,
    ) -> PyResult<bool> {
        let py = fields.py();
        let hooks = &self.hooks;
        let names = Named::names(py);
        let mut named = Named(0);
        let mut strings = Vec::new();
        for (name, value) in fields.iter() {
            // A name the drafter knows by its address (the plans' names and the interned
            // ones, the keys of nearly every draft) is classified without reading its text.
            match self.name_classes.get(&(name.as_ptr() as usize)) {
                Some(NameClass::Normalized(bit)) => named.set(*bit),
                Some(NameClass::StringField) => {
                    if !value.is_exact_instance_of::<PyString>() {
                        strings.push((name.cast_into::<PyString>()?, value));
                    }
                }
                Some(NameClass::Other) => {}
                None => {
                    named.see(&name, &names);
                    if value.is_exact_instance_of::<PyString>() {
                        continue;
                    }
                    let name = name.cast_into::<PyString>()?;
                    if name.to_str().is_ok_and(|n| STRING_FIELDS.contains(&n)) {
                        strings.push((name, value));
                    }
                }
            }
        }
        for (name, value) in strings {
            fields.set_item(name, hooks.parse_string.bind(py).call1((value,))?)?;
        }
        for bit in [INPUT_TOKENS, OUTPUT_TOKENS] {
            if let Some(value) = named.get(fields, &names, bit)? {
                if !value.is_exact_instance_of::<PyInt>() {
                    fields.set_item(names[bit], hooks.parse_int.bind(py).call1((value,))?)?;
                }
            }
        }
        let reasons_key = names[FINISH_REASONS];
        if let Some(reasons) = named.get(fields, &names, FINISH_REASONS)? {
            // An exact list of exact `str`s, or `None`.
            let strings = reasons
                .cast_exact::<PyList>()
                .ok()
                .filter(|list| list.iter().all(|r| r.is_exact_instance_of::<PyString>()));
            match strings {
                // `canonical_reasons` (after this) puts a new list of these reasons in its
                // place when there is a vocabulary and the list holds any: a copy made here
                // would only be thrown away (a model call's reasons were copied twice, ~19,300
                // a data-2000 grade). Nothing in between reads the list but to test it for
                // `None`.
                Some(list) if self.has_vocabulary && !list.is_empty() => {}
                Some(list) => {
                    fields.set_item(reasons_key, PyList::new(py, list.iter())?)?;
                }
                None => fields.set_item(reasons_key, parse_string_list(&reasons)?)?,
            }
        }
        let output = names[OUTPUT_MESSAGES];
        for bit in [INPUT_MESSAGES, OUTPUT_MESSAGES, DOCUMENTS] {
            if let Some(value) = named.get(fields, &names, bit)? {
                let dicts = match value.cast::<PyList>() {
                    Ok(list) => list.iter().all(|m| m.is_instance_of::<PyDict>()),
                    Err(_) => false,
                };
                if !dicts {
                    named.del(fields, &names, bit)?;
                }
            }
        }
        for bit in [INPUT_MESSAGES, OUTPUT_MESSAGES] {
            if let Some(value) = named.get(fields, &names, bit)? {
                if content_dropped(value.cast::<PyList>()?)? {
                    redacted.add(names[bit])?;
                }
            }
        }
        if let Some(result) = named.get(fields, &names, RESULT)? {
            let mut result = parse_json_or_text(&result)?;
            if let Some(text) = text_block(&result)? {
                // An MCP tool's text output as the agent SDK records it.
                result = parse_json_or_text(&text)?;
            }
            fields.set_item(names[RESULT], result)?;
        }
        let structured = names[STRUCTURED_OUTPUT];
        if let Some(answer) = named.get(fields, &names, STRUCTURED_OUTPUT)? {
            // No step field of its own: an agent's structured answer, kept for grading (an
            // object only; anything else is no such answer).
            named.del(fields, &names, STRUCTURED_OUTPUT)?;
            if answer.is_instance_of::<PyDict>() && truthy(&answer)? {
                attributes.set_item(structured, answer)?;
            }
        }
        let output_key = names[OUTPUT];
        if let Some(value) = named.get(fields, &names, OUTPUT)? {
            named.del(fields, &names, OUTPUT)?;
            if !value.is_none() && !named.contains(fields, &names, OUTPUT_MESSAGES)? {
                fields.set_item(output, hooks.output_messages.bind(py).call1((value,))?)?;
                named.set(OUTPUT_MESSAGES);
            }
        }
        if !redacted.is_empty()
            && redacted.contains(output_key)?
            && !named.contains(fields, &names, OUTPUT_MESSAGES)?
        {
            redacted.discard(output_key)?;
            redacted.add(output)?;
        }
        let reasons_read = named
            .get(fields, &names, FINISH_REASONS)?
            .is_some_and(|r| !r.is_none());
        if !reasons_read {
            if let Some(messages) = named.get(fields, &names, OUTPUT_MESSAGES)? {
                if truthy(&messages)? {
                    let found = PyList::empty(py);
                    for message in messages.try_iter()? {
                        let message = message?;
                        let reason = pydict::get(&message, intern!(py, "finish_reason"))?;
                        if truthy(&reason)? {
                            found.append(reason.str()?)?;
                        }
                    }
                    if !found.is_empty() {
                        fields.set_item(reasons_key, found)?;
                        named.set(FINISH_REASONS);
                    }
                }
            }
        }
        Ok(named.may(FINISH_REASONS))
    }

    /// Each finish reason in the conventions' vocabulary: `vocabulary.get(r.lower(), r)`.
    fn canonical_reasons(&self, fields: &Bound<'_, PyDict>) -> PyResult<()> {
        let py = fields.py();
        let key = intern!(py, "finish_reasons");
        let Some(reasons) = fields.get_item(key)? else {
            return Ok(());
        };
        if !self.has_vocabulary || !truthy(&reasons)? {
            return Ok(());
        }
        if let Ok(list) = reasons.cast_exact::<PyList>() {
            if list.iter().all(|r| r.is_exact_instance_of::<PyString>()) {
                // Exact `str`s are looked up without Python code running (nothing can
                // change the list meanwhile): the new list is made at its length.
                let out = pydict::filled_list(
                    py,
                    list.len(),
                    list.iter().map(|reason| self.canonical(&reason)),
                )?;
                return dict_set(fields, key, &out);
            }
        }
        let out = PyList::empty(py);
        for reason in reasons.try_iter()? {
            let reason = reason?;
            out.append(self.canonical(&reason)?)?;
        }
        fields.set_item(key, out)
    }

    fn canonical<'py>(&self, reason: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let py = reason.py();
        if reason.is_exact_instance_of::<PyString>() {
            if let Ok(text) = reason.cast::<PyString>()?.to_str() {
                let found = if text.is_ascii() {
                    // Reasons are mostly written lower-case already (`stop`, `tool_calls`):
                    // looked up as they are, with no lowered copy made.
                    if text.bytes().any(|b| b.is_ascii_uppercase()) {
                        self.vocabulary.get(&text.to_ascii_lowercase())
                    } else {
                        self.vocabulary.get(text)
                    }
                } else {
                    let lowered = reason.call_method0(intern!(py, "lower"))?;
                    match lowered.cast::<PyString>()?.to_str() {
                        Ok(lowered) => self.vocabulary.get(lowered),
                        Err(_) => return self.canonical_by_python(reason, &lowered),
                    }
                };
                return Ok(found.map_or_else(|| reason.clone(), |c| c.bind(py).clone()));
            }
        }
        let lowered = reason.call_method0(intern!(py, "lower"))?;
        self.canonical_by_python(reason, &lowered)
    }

    fn canonical_by_python<'py>(
        &self,
        reason: &Bound<'py, PyAny>,
        lowered: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = reason.py();
        Ok(self
            .vocabulary_dict
            .bind(py)
            .get_item(lowered)?
            .unwrap_or_else(|| reason.clone()))
    }
}

#[pymethods]
impl Drafter {
    /// `reader`: the rules' read plans; `control_flow`: the `control_flow_exceptions`;
    /// `run_limit_errors`: whether any file declares some; `vocabulary`: lower-cased
    /// spelling -> canonical finish reason; `error_code`: `StatusCode.ERROR`; `hooks`:
    /// `(parse_string, parse_int, output_messages, run_limit)`.
    #[new]
    fn new(
        reader: Py<FieldReader>,
        control_flow: Bound<'_, PyFrozenSet>,
        run_limit_errors: bool,
        vocabulary: Bound<'_, PyDict>,
        error_code: Py<PyAny>,
        hooks: HookTuple,
    ) -> PyResult<Self> {
        let py = control_flow.py();
        let mut names = FastSet::new();
        for name in control_flow.iter() {
            if let Ok(text) = name.cast::<PyString>()?.to_str() {
                names.insert(text.to_owned());
            }
        }
        let mut spellings = FastMap::new();
        for (spelling, canonical) in vocabulary.iter() {
            if let Ok(text) = spelling.cast::<PyString>()?.to_str() {
                spellings.insert(text.to_owned(), canonical.unbind());
            }
        }
        let (parse_string, parse_int, output_messages, run_limit) = hooks;
        let interned: Vec<Py<PyString>> = NORMALIZED
            .iter()
            .chain(STRING_FIELDS.iter())
            .map(|name| PyString::intern(py, name).unbind())
            .collect();
        let mut name_classes = FastMap::new();
        for name in interned.iter().chain(reader.get().field_names()) {
            // A subclass of `str` may compare as it likes: left to the text path.
            if !name.bind(py).is_exact_instance_of::<PyString>() {
                continue;
            }
            let class = match name.bind(py).to_str() {
                Ok(text) => NameClass::of(text),
                // Lone surrogates: equal to none of the names, which are ASCII.
                Err(_) => NameClass::Other,
            };
            name_classes.insert(name.as_ptr() as usize, class);
        }
        Ok(Self {
            name_classes,
            _interned: interned,
            reader,
            has_control_flow: !control_flow.is_empty(),
            control_flow: names,
            control_flow_set: control_flow.unbind(),
            run_limit_errors,
            vocabulary: spellings,
            has_vocabulary: !vocabulary.is_empty(),
            vocabulary_dict: vocabulary.unbind(),
            error_code,
            hooks: Hooks {
                parse_string,
                parse_int,
                output_messages,
                run_limit,
            },
            statuses: ["ok", "error", "unset"].map(|s| PyString::intern(py, s).unbind()),
        })
    }

    /// Draft `span` by read plan `plan`: its fields into `fields` / `redacted`, what the
    /// draft learns beyond its fields (`run_limit`, `structured_output`) into
    /// `attributes`; returns the status (`"ok"`, `"error"` or `"unset"`).
    fn draft(
        &self,
        span: &Bound<'_, PyAny>,
        children: &Bound<'_, PyAny>,
        plan: usize,
        fields: &Bound<'_, PyDict>,
        redacted: &Bound<'_, PySet>,
        attributes: &Bound<'_, PyDict>,
    ) -> PyResult<Py<PyString>> {
        let py = span.py();
        self.reader
            .get()
            .read_into(span, children, plan, fields, redacted)?;
        let status = self.signals(span, fields, attributes)?;
        if self.normalize(fields, redacted, attributes)? {
            self.canonical_reasons(fields)?;
        }
        Ok(self.status(py, status))
    }
}

/// What drafting a span by one compiled rule needs of the rule, read once per set.
struct RuleInfo {
    /// The `CompiledRule`, the draft's `rule`.
    rule: Py<PyAny>,
    /// `rule.step`: the draft's `kind`.
    step: Py<PyAny>,
    /// `step == "none"`: the span is recognised and makes no step.
    no_step: bool,
    generation: bool,
    /// `rule.file`, counted in the trajectory's `conventions`.
    file: Py<PyAny>,
    plan: usize,
    /// `rule.keep`: attributes copied as they are into the draft's `attributes`.
    keep: Vec<Py<PyAny>>,
    /// The draft attributes the rule sets to `True` (`merged_model_calls`,
    /// `thoughts_unmarked`, `delivers_answer`).
    flags: Vec<Py<PyString>>,
    /// `rule.run_limit_call`: the `run_limit` of every draft of the rule that no final-answer
    /// request marked.
    run_limit_call: Option<Py<PyAny>>,
    /// `rule.outcome_reads`: the plan fields of the `outcome` field, in source order, and
    /// whether an undeclared value read there is unknown.
    outcome_reads: Vec<(Py<PyString>, bool)>,
    /// A tool, retrieval or handoff step: its result is judged.
    toolish: bool,
    /// `rule.result_attrs`: the plain attributes the `result` field is read from.
    result_attrs: Vec<Py<PyString>>,
    /// Whether Python finishes the draft (`finish`), between its outcome and its result:
    /// the rule's `result_error_keys` (`safe_regex`).
    tail: bool,
}

/// Python's `str.strip()` whitespace among ASCII characters (`\x1c`-`\x1f` included).
fn py_ascii_space(c: char) -> bool {
    matches!(c, ' ' | '\t'..='\r' | '\x1c'..='\x1f')
}

/// Whether the tool's result attribute (the first of `keys` the span holds) was captured as
/// JSON `null` (or Python's `None`), stripped as `str.strip()` strips: the tool returned
/// nothing. Parsing leaves no value for it, which would read as "not captured"; it is an
/// empty result.
fn null_result(attributes: &Bound<'_, PyAny>, keys: &[Py<PyString>]) -> PyResult<bool> {
    let py = attributes.py();
    for key in keys {
        let Some(raw) = lookup(attributes, key.bind(py))? else {
            continue;
        };
        let Ok(text) = raw.cast::<PyString>() else {
            return Ok(false);
        };
        if text.is_exact_instance_of::<PyString>() {
            if let Ok(own) = text.to_str() {
                if own.is_ascii() {
                    let stripped = own.trim_matches(py_ascii_space);
                    return Ok(stripped == "null" || stripped == "None");
                }
            }
        }
        let stripped = raw.call_method0(intern!(py, "strip"))?;
        return Ok(equals(&stripped, "null")? || equals(&stripped, "None")?);
    }
    Ok(false)
}

/// The `run_limit_prompts` entry a model call's system or user messages hold, if any: the
/// framework's own request for a final answer once its limit was reached. Only those roles
/// are searched (the framework writes the request as one; a tool's result or the model's own
/// text quoting it is not the framework asking), each text part (`content` of a `dict` part)
/// with a plain substring search, linear in the untrusted text; the prompts in the files'
/// order, the first found returned. `messages` is the draft's `input_messages`, read as a
/// `list` of `dict`s (anything else holds none).
fn run_limit_prompt<'py>(
    messages: &Bound<'py, PyAny>,
    prompts: &[(Option<String>, Py<PyString>)],
) -> PyResult<Option<Bound<'py, PyString>>> {
    let py = messages.py();
    if prompts.is_empty() || !messages.is_instance_of::<PyList>() {
        return Ok(None);
    }
    for message in messages.try_iter()? {
        let message = message?;
        if !message.is_instance_of::<PyDict>() {
            continue;
        }
        let role = pydict::get(&message, intern!(py, "role"))?;
        if !(equals(&role, "system")? || equals(&role, "user")?) {
            continue;
        }
        let parts = pydict::get(&message, intern!(py, "parts"))?;
        if !parts.is_instance_of::<PyList>() {
            continue;
        }
        for part in parts.try_iter()? {
            let part = part?;
            if !part.is_instance_of::<PyDict>() {
                continue;
            }
            let text = pydict::get(&part, intern!(py, "content"))?;
            let Ok(text) = text.cast::<PyString>() else {
                continue;
            };
            let own = if text.is_exact_instance_of::<PyString>() {
                text.to_str().ok()
            } else {
                None // a subclass's own `in`, a text with lone surrogates: Python's
            };
            for (prompt, object) in prompts {
                let found = match (own, prompt) {
                    (Some(own), Some(prompt)) => own.contains(prompt.as_str()),
                    _ => text.contains(object.bind(py))?,
                };
                if found {
                    return Ok(Some(object.bind(py).clone()));
                }
            }
        }
    }
    Ok(None)
}

/// A trace's spans drafted in one call (`otel_oracles.mapping._mapper.map_trace`): per span
/// its selected rule (the rule table's answer), an unrecognised span set aside, a span whose
/// rule makes no step counted and skipped, any other made a `Draft` by `Drafter::draft`;
/// a model call recording 0 input tokens loses its token counts (below) and is marked
/// `run_limit` when its system or user messages hold one of the files' final-answer
/// requests (or its rule says so, `run_limit_call`); a tool, retrieval or handoff step's
/// `outcome` field is applied (`apply_outcome`, Python) and its result judged by the
/// result rules (`ResultRules::judge`, what they say applied by `apply_judgement`); only the
/// rules with `result_error_keys` finish their drafts in Python (`finish`), between the two.
#[pyclass(module = "otel_oracles._native", name = "TraceDrafter", frozen)]
pub struct TraceDrafter {
    drafter: Py<Drafter>,
    rules: Vec<RuleInfo>,
    /// The mapper's `Draft` class, made as `object.__new__` makes it, every slot set here.
    draft_cls: Py<PyType>,
    new: Py<PyAny>,
    /// Where `SLOTS` are in a `Draft` (`None`: a class whose slots are set by name).
    layout: Option<SlotLayout>,
    /// `object`'s `tp_new`, which makes a `Draft` when it has a layout.
    object_new: pyo3::ffi::newfunc,
    finish: Py<PyAny>,
    /// The files' `run_limit_prompts`, as UTF-8 and as the `str` set as `run_limit`.
    run_limit_prompts: Vec<(Option<String>, Py<PyString>)>,
    /// The tool-result rules (`ToolResultRules.core`).
    results: Py<ResultRules>,
    /// `apply_outcome(draft, value, undeclared_unknown)`: an `outcome` field's value into
    /// the draft (Python: the conventions' outcome vocabulary).
    apply_outcome: Py<PyAny>,
    /// `apply_judgement(draft, said)`: what the result rules said of the draft's result.
    apply_judgement: Py<PyAny>,
    /// `"fields"`, `"status"`, ... : the draft's slots, interned.
    slots: [Py<PyString>; 13],
    zero: Py<PyAny>,
    /// Per rule, the spans it recognised in the trace being drafted.
    counts: Mutex<RuleCounts>,
}

/// Spans counted per rule for one `draft_trace` call: an entry counts only when it is of
/// the call's generation, so a call starts with every count at zero without clearing them.
#[derive(Default)]
struct RuleCounts {
    generation: u64,
    /// Per rule, the generation that last counted it and its count then.
    per_rule: Vec<(u64, usize)>,
}

impl RuleCounts {
    /// A new call over `rules` rules: every count zero.
    fn begin(&mut self, rules: usize) {
        self.generation += 1;
        if self.per_rule.len() < rules {
            self.per_rule.resize(rules, (0, 0));
        }
    }

    /// One more span of rule `n`; `true` for its first in this call.
    fn add(&mut self, n: usize) -> bool {
        let entry = &mut self.per_rule[n];
        if entry.0 == self.generation {
            entry.1 += 1;
            false
        } else {
            *entry = (self.generation, 1);
            true
        }
    }

    fn count(&self, n: usize) -> usize {
        let (generation, count) = self.per_rule[n];
        if generation == self.generation {
            count
        } else {
            0
        }
    }
}

const SLOTS: [&str; 13] = [
    "kind",
    "span",
    "rule",
    "fields",
    "redacted",
    "attributes",
    "status",
    "scope",
    "synthesized",
    "children",
    "follows",
    "claimed",
    "outcome_hidden",
];

/// `SLOTS` by number (those read elsewhere; `children` is 9, `outcome_hidden` 12).
pub(crate) const KIND: usize = 0;
pub(crate) const SPAN: usize = 1;
pub(crate) const RULE: usize = 2;
pub(crate) const FIELDS: usize = 3;
pub(crate) const REDACTED: usize = 4;
pub(crate) const ATTRIBUTES: usize = 5;
pub(crate) const STATUS: usize = 6;
pub(crate) const SCOPE: usize = 7;
pub(crate) const SYNTHESIZED: usize = 8;
pub(crate) const FOLLOWS: usize = 10;
pub(crate) const CLAIMED: usize = 11;

/// The layout of the first `Draft` class a `TraceDrafter` was made with (the mapper's: one
/// per process), for the passes that read drafts (`draft_attr`).
static DRAFT_LAYOUT: PyOnceLock<Option<SlotLayout>> = PyOnceLock::new();

/// `draft.<name>`, `name` being `SLOTS[slot]`: read in the instance's memory for a draft of
/// the mapper's `Draft` class, by name for any other object. Inlined, as `span_held` is.
#[inline(always)]
pub(crate) fn draft_attr<'py>(
    draft: &Bound<'py, PyAny>,
    slot: usize,
    name: &Bound<'py, PyString>,
) -> PyResult<Bound<'py, PyAny>> {
    debug_assert_eq!(name.to_str().ok(), Some(SLOTS[slot]));
    match DRAFT_LAYOUT.get(draft.py()) {
        Some(Some(layout)) => layout.get(draft, slot, name),
        _ => draft.getattr(name),
    }
}

/// `draft.<name> = value`, `name` being `SLOTS[slot]`: stored in the instance's memory for
/// a draft of the mapper's `Draft` class (a `setattr` by name found the member descriptor
/// and called it, ~190 instructions a draft), by name for any other object. Only for the
/// slots the passes replace (`draft_held`'s list is read borrowed).
#[inline(always)]
pub(crate) fn draft_set<'py>(
    draft: &Bound<'py, PyAny>,
    slot: usize,
    name: &Bound<'py, PyString>,
    value: &Bound<'py, PyAny>,
) -> PyResult<()> {
    debug_assert_eq!(name.to_str().ok(), Some(SLOTS[slot]));
    debug_assert!(matches!(
        slot,
        KIND | REDACTED | STATUS | SCOPE | CLAIMED | 12
    ));
    match DRAFT_LAYOUT.get(draft.py()) {
        Some(Some(layout)) => layout.set(draft, slot, name, value),
        _ => draft.setattr(name, value),
    }
}

/// `draft_attr`, borrowed from `draft` for as long as `draft` is borrowed, for the slots
/// set once, when the drafter makes the draft (`span`, `rule`, `fields`, `attributes`,
/// `synthesized`, `children`, `follows`: the passes change what `fields`, `attributes` and
/// `follows` hold, never which object they are), so what they hold lives as long as the
/// draft. `kind`, `redacted`, `status`, `scope`, `claimed` and `outcome_hidden` are
/// replaced by the passes: those are read with `draft_attr`.
#[inline(always)]
pub(crate) fn draft_held<'a, 'py>(
    draft: &'a Bound<'py, PyAny>,
    slot: usize,
    name: &Bound<'py, PyString>,
) -> PyResult<Held<'a, 'py>> {
    debug_assert_eq!(name.to_str().ok(), Some(SLOTS[slot]));
    debug_assert!(matches!(
        slot,
        SPAN | RULE | FIELDS | ATTRIBUTES | SYNTHESIZED | 9 | FOLLOWS
    ));
    match DRAFT_LAYOUT.get(draft.py()) {
        Some(Some(layout)) => layout.held(draft, slot, name),
        _ => draft.getattr(name).map(Held::Owned),
    }
}

/// `draft.fields`, borrowed as `draft_held` reads it, as the `dict` the drafter made it.
pub(crate) fn draft_fields<'a, 'py>(
    draft: &'a Bound<'py, PyAny>,
) -> PyResult<Held<'a, 'py, PyDict>> {
    draft_held(draft, FIELDS, intern!(draft.py(), "fields"))?.cast_into::<PyDict>()
}

/// The step kinds (`StepKind`'s values), interned: the objects every draft's `kind` is
/// when a `TraceDrafter` made it (its rules' steps are interned, `TraceDrafter::new`), and
/// that every `intern!` of a kind text is. Held here, so each stays the one interned object
/// of its text while the module lives; in `Kind`'s order.
static STEP_KINDS: PyOnceLock<[Py<PyString>; 8]> = PyOnceLock::new();

/// A step kind, by its place in `STEP_KINDS`: what the passes ask a draft's kind to be.
/// Every kind keeps its place, the ones no pass asks about included.
#[allow(dead_code)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    ToolCall,
    Generation,
    Agent,
    Handoff,
    Retrieval,
    FileEdit,
    Command,
    Other,
}

/// `STEP_KINDS`, made on first use.
#[inline(always)]
fn step_kinds(py: Python<'_>) -> &[Py<PyString>; 8] {
    STEP_KINDS.get_or_init(py, || {
        [
            "tool_call",
            "generation",
            "agent",
            "handoff",
            "retrieval",
            "file_edit",
            "command",
            "other",
        ]
        .map(|text| PyString::intern(py, text).unbind())
    })
}

/// `draft.kind == kind`, the kind read in the draft's memory (no reference taken) when the
/// draft is of the mapper's `Draft` class. The kind's own interned object is equal without
/// Python's comparison, and any other of `STEP_KINDS` is another text: most calls end
/// there, on address compares, with no `intern!` read at the caller.
#[inline]
pub(crate) fn kind_is(draft: &Bound<'_, PyAny>, kind: Kind) -> PyResult<bool> {
    let py = draft.py();
    let kinds = step_kinds(py);
    if let Some(Some(layout)) = DRAFT_LAYOUT.get(py) {
        if let Some(own) = layout.peek(draft, KIND) {
            if own == kinds[kind as usize].as_ptr() {
                return Ok(true);
            }
            if kinds.iter().any(|k| k.as_ptr() == own) {
                return Ok(false);
            }
        }
    }
    kind_compared(draft, kinds[kind as usize].bind(py))
}

/// `kind_is(draft, k)` for any `k` of `kinds`, tried in order: the draft's kind read and
/// placed among `STEP_KINDS` once for all of them (a pass asking whether a draft is one of
/// several kinds otherwise read and compared it per kind).
#[inline]
pub(crate) fn kind_in(draft: &Bound<'_, PyAny>, kinds: &[Kind]) -> PyResult<bool> {
    let py = draft.py();
    let all = step_kinds(py);
    if let Some(Some(layout)) = DRAFT_LAYOUT.get(py) {
        if let Some(own) = layout.peek(draft, KIND) {
            if let Some(at) = all.iter().position(|k| k.as_ptr() == own) {
                return Ok(kinds.iter().any(|&kind| kind as usize == at));
            }
        }
    }
    for &kind in kinds {
        if kind_compared(draft, all[kind as usize].bind(py))? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// `kind_is` for a kind that is no step kind's interned text: two `str` (no subclass)
/// compared by their UTF-8 text, without Python's rich comparison and the `bool` it returns;
/// a kind of another class (an enum member) compared by Python.
#[cold]
#[inline(never)]
fn kind_compared(draft: &Bound<'_, PyAny>, kind: &Bound<'_, PyString>) -> PyResult<bool> {
    let own = draft_attr(draft, KIND, intern!(draft.py(), "kind"))?;
    if own.is(kind) {
        return Ok(true);
    }
    if let (Ok(text), true) = (
        own.cast_exact::<PyString>(),
        kind.is_exact_instance_of::<PyString>(),
    ) {
        if let (Ok(own), Ok(kind)) = (text.to_str(), kind.to_str()) {
            return Ok(own == kind);
        }
    }
    own.eq(kind)
}

impl TraceDrafter {
    /// A model call recording 0 input tokens recorded no usage: every request sends tokens
    /// (its messages at least). The OpenAI Agents SDK fills a streamed chat-completions
    /// call's usage with zeros when the stream carried none (no `include_usage`), and
    /// Logfire writes them as `gen_ai.usage.*`: read as counts, they would pass any token
    /// budget. The output count goes too when it is 0 as well (nothing says the call
    /// answered nothing). `0` is compared as Python compares it (`False == 0`).
    /// The `outcome` field: every plan field of it taken out of `fields`, the first found
    /// handed to `apply_outcome` with how its source reads an undeclared value.
    fn outcome(
        &self,
        draft: &Bound<'_, PyAny>,
        fields: &Bound<'_, PyDict>,
        reads: &[(Py<PyString>, bool)],
    ) -> PyResult<()> {
        let py = draft.py();
        let mut first = None;
        for (name, unknown) in reads {
            let name = name.bind(py);
            if let Some(value) = fields.get_item(name)? {
                fields.del_item(name)?;
                if first.is_none() {
                    first = Some((value, *unknown));
                }
            }
        }
        if let Some((value, unknown)) = first {
            self.apply_outcome.bind(py).call1((draft, value, unknown))?;
        }
        Ok(())
    }

    /// A tool, retrieval or handoff step's result: judged by the result rules (a failed
    /// step's own error standing), what they say handed to `apply_judgement`; a result
    /// captured as `null` marks the step `result_empty`.
    fn result(
        &self,
        draft: &Bound<'_, PyAny>,
        span: &Bound<'_, PyAny>,
        fields: &Bound<'_, PyDict>,
        attributes: &Bound<'_, PyDict>,
        result_attrs: &[Py<PyString>],
    ) -> PyResult<()> {
        let py = draft.py();
        let key = intern!(py, "result");
        if let Some(result) = fields.get_item(key)? {
            if result.is_none() {
                return Ok(());
            }
            let failed = equals(&draft_attr(draft, STATUS, intern!(py, "status"))?, "error")?;
            if let Some(said) = self.results.get().judge(&result, failed)? {
                self.apply_judgement.bind(py).call1((draft, said))?;
            }
        } else if !result_attrs.is_empty()
            && null_result(
                &*span_held(span, span::ATTRIBUTES, intern!(py, "attributes"))?,
                result_attrs,
            )?
        {
            attributes.set_item(intern!(py, "result_empty"), true)?;
        }
        Ok(())
    }

    fn zero_usage_unrecorded(&self, fields: &Bound<'_, PyDict>) -> PyResult<()> {
        let py = fields.py();
        let zero = self.zero.bind(py);
        let input = intern!(py, "input_tokens");
        let Some(count) = fields.get_item(input)? else {
            return Ok(());
        };
        if !count.eq(zero)? {
            return Ok(());
        }
        fields.del_item(input)?;
        let output = intern!(py, "output_tokens");
        if let Some(count) = fields.get_item(output)? {
            if count.eq(zero)? {
                fields.del_item(output)?;
            }
        }
        Ok(())
    }
}

#[pymethods]
impl TraceDrafter {
    /// `drafter`: the set's `Drafter`; `rules`: per compiled rule (the rule table's
    /// numbering) `(rule, tail)`, `tail` whether Python finishes its drafts; `draft_cls`: the
    /// mapper's `Draft`; `finish(draft)`: the Python rest of a draft; `run_limit_prompts`:
    /// the files' final-answer request texts; `results`: the tool-result rules; `hooks`:
    /// `(apply_outcome, apply_judgement)`.
    #[new]
    fn new(
        drafter: Py<Drafter>,
        rules: Vec<(Bound<'_, PyAny>, bool)>,
        draft_cls: Bound<'_, PyType>,
        finish: Py<PyAny>,
        run_limit_prompts: Vec<Bound<'_, PyString>>,
        results: Py<ResultRules>,
        hooks: (Py<PyAny>, Py<PyAny>),
    ) -> PyResult<Self> {
        let py = draft_cls.py();
        let mut infos = Vec::with_capacity(rules.len());
        for (rule, tail) in rules {
            let step = rule.getattr(intern!(py, "step"))?;
            let step_text = step.extract::<String>().unwrap_or_default();
            // The draft's `kind` interned (a rule read back from the cache holds JSON's
            // text, a `str` of its own): `kind_is` then answers by address.
            let step = match step.cast_exact::<PyString>().map(|text| text.to_str()) {
                Ok(Ok(text)) => PyString::intern(py, text).into_any(),
                _ => step,
            };
            let mut keep = Vec::new();
            for key in rule.getattr(intern!(py, "keep"))?.try_iter()? {
                keep.push(key?.unbind());
            }
            let mut flags = Vec::new();
            for flag in ["merged_model_calls", "thoughts_unmarked", "delivers_answer"] {
                if rule.getattr(flag)?.is_truthy()? {
                    flags.push(PyString::intern(py, flag).unbind());
                }
            }
            let run_limit_call = rule.getattr(intern!(py, "run_limit_call"))?;
            let mut outcome_reads = Vec::new();
            for read in rule.getattr(intern!(py, "outcome_reads"))?.try_iter()? {
                let (name, unknown): (String, bool) = read?.extract()?;
                outcome_reads.push((PyString::intern(py, &name).unbind(), unknown));
            }
            let mut result_attrs = Vec::new();
            for key in rule.getattr(intern!(py, "result_attrs"))?.try_iter()? {
                let key: String = key?.extract()?;
                result_attrs.push(PyString::intern(py, &key).unbind());
            }
            infos.push(RuleInfo {
                outcome_reads,
                toolish: matches!(step_text.as_str(), "tool_call" | "retrieval" | "handoff"),
                result_attrs,
                run_limit_call: (!run_limit_call.is_none()).then(|| run_limit_call.unbind()),
                file: rule.getattr(intern!(py, "file"))?.unbind(),
                plan: rule.getattr(intern!(py, "plan"))?.extract()?,
                no_step: step_text == "none",
                generation: step_text == "generation",
                step: step.unbind(),
                keep,
                flags,
                tail,
                rule: rule.unbind(),
            });
        }
        let object = py.import("builtins")?.getattr("object")?;
        let mut prompts = Vec::with_capacity(run_limit_prompts.len());
        for prompt in run_limit_prompts {
            // A prompt holding lone surrogates is in no UTF-8 text: Python's `in` decides.
            let own = prompt.to_str().ok().map(str::to_owned);
            prompts.push((own, prompt.unbind()));
        }
        let (apply_outcome, apply_judgement) = hooks;
        let slot_names = SLOTS.map(|name| PyString::intern(py, name));
        let object_new = object_new()?;
        let layout = SlotLayout::probe(&draft_cls, &slot_names, object_new)?;
        if let Some(layout) = &layout {
            DRAFT_LAYOUT.get_or_init(py, || Some(layout.clone_ref(py)));
        }
        Ok(Self {
            layout,
            object_new,
            run_limit_prompts: prompts,
            results,
            apply_outcome,
            apply_judgement,
            drafter,
            rules: infos,
            draft_cls: draft_cls.unbind(),
            new: object.getattr("__new__")?.unbind(),
            finish,
            slots: SLOTS.map(|name| PyString::intern(py, name).unbind()),
            zero: PyInt::new(py, 0).into_any().unbind(),
            counts: Mutex::new(RuleCounts::default()),
        })
    }

    /// Draft the trace's `spans` (`children`: the trace's children by span id) by their
    /// rules (`selected`: the rule table's numbers, -1 for none). Returns `(drafts,
    /// draft_by_span, used_files, unrecognised, by_id)`: the drafts in span order, the same by
    /// span id, how many spans each convention file recognised, the spans no rule matched,
    /// and every span by its id (`{s.span_id: s for s in spans}`, the last of an id kept:
    /// the mapper's passes read it, and the walk here reads each id anyway).
    fn draft_trace<'py>(
        &self,
        spans: &Bound<'py, PyList>,
        children: &Bound<'py, PyDict>,
        selected: Vec<isize>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let py = spans.py();
        let drafts = PyList::empty(py);
        let by_span = PyDict::new(py);
        let used = PyDict::new(py);
        let unrecognised = PyList::empty(py);
        let by_id = PyDict::new(py);
        let no_children = PyList::empty(py);
        let drafter = self.drafter.get();
        let cls = self.draft_cls.bind(py);
        let new = self.new.bind(py);
        let finish = self.finish.bind(py);
        let empty = PyString::intern(py, "");
        let false_ = false.into_pyobject(py)?.to_owned();
        let true_ = true.into_pyobject(py)?.to_owned();
        // Spans recognised per rule, and the rules in the order their first span came: the
        // files' counts are summed from them once the spans are drafted (below). The counts
        // are kept in the drafter's own table, an entry of an earlier call being one of
        // another generation (so no call clears it), or in a new one while another call
        // holds it (a hook drafting a trace of its own).
        let mut held = self.counts.try_lock().ok();
        let mut own = RuleCounts::default();
        let counts: &mut RuleCounts = match held.as_deref_mut() {
            Some(counts) => counts,
            None => &mut own,
        };
        counts.begin(self.rules.len());
        let mut seen = Vec::new();
        for (i, span) in spans.iter().enumerate() {
            let span_id = span_held(&span, span::SPAN_ID, intern!(py, "span_id"))?;
            by_id.set_item(&span_id, &span)?;
            let number = selected.get(i).copied().unwrap_or(-1);
            let Some((n, info)) = usize::try_from(number)
                .ok()
                .and_then(|n| Some((n, self.rules.get(n)?)))
            else {
                unrecognised.append(&span)?;
                continue;
            };
            if counts.add(n) {
                seen.push(n);
            }
            if info.no_step {
                continue;
            }
            let kids = match children.get_item(&span_id)? {
                Some(kids) => kids,
                None => no_children.clone().into_any(),
            };
            let fields = PyDict::new(py);
            let redacted = PySet::empty(py)?;
            let attributes = PyDict::new(py);
            let follows = PyList::empty(py);
            if !info.keep.is_empty() {
                let span_attributes =
                    span_held(&span, span::ATTRIBUTES, intern!(py, "attributes"))?;
                for key in &info.keep {
                    let key = key.bind(py);
                    if span_attributes.contains(key)? {
                        attributes.set_item(key, span_attributes.get_item(key)?)?;
                    }
                }
            }
            for flag in &info.flags {
                attributes.set_item(flag.bind(py), &true_)?;
            }
            let drafted =
                drafter.draft(&span, &kids, info.plan, &fields, &redacted, &attributes)?;
            // The draft made once drafted, every slot written in one go (`SLOTS` order).
            let draft = match &self.layout {
                Some(layout) => layout.fill(
                    self.object_new,
                    py,
                    [
                        info.step.bind(py).clone(),
                        span.clone(),
                        info.rule.bind(py).clone(),
                        fields.clone().into_any(),
                        redacted.clone().into_any(),
                        attributes.clone().into_any(),
                        drafted.bind(py).clone().into_any(),
                        empty.clone().into_any(),
                        false_.clone().into_any(),
                        kids.clone(),
                        follows.clone().into_any(),
                        false_.clone().into_any(),
                        false_.clone().into_any(),
                    ],
                )?,
                None => {
                    let draft = new.call1((cls,))?;
                    // Every slot but `status`, in `SLOTS` order, then `status`.
                    for (slot, value) in [
                        info.step.bind(py),
                        &span,
                        info.rule.bind(py),
                        fields.as_any(),
                        redacted.as_any(),
                        attributes.as_any(),
                    ]
                    .into_iter()
                    .enumerate()
                    .chain(
                        [
                            empty.as_any(),
                            false_.as_any(),
                            &kids,
                            follows.as_any(),
                            false_.as_any(),
                            false_.as_any(),
                        ]
                        .into_iter()
                        .enumerate()
                        .map(|(i, value)| (STATUS + 1 + i, value)),
                    ) {
                        draft.setattr(self.slots[slot].bind(py), value)?;
                    }
                    draft.setattr(self.slots[STATUS].bind(py), drafted.bind(py))?;
                    draft
                }
            };
            if info.generation {
                self.zero_usage_unrecorded(&fields)?;
                if let Some(input) = fields.get_item(intern!(py, "input_messages"))? {
                    if let Some(prompt) = run_limit_prompt(&input, &self.run_limit_prompts)? {
                        attributes.set_item(intern!(py, "run_limit"), prompt)?;
                    }
                }
            }
            if let Some(call) = &info.run_limit_call {
                let key = intern!(py, "run_limit");
                if !attributes.contains(key)? {
                    attributes.set_item(key, call.bind(py))?;
                }
            }
            if !info.outcome_reads.is_empty() {
                self.outcome(&draft, &fields, &info.outcome_reads)?;
            }
            if info.tail {
                finish.call1((&draft,))?;
            }
            if info.toolish {
                self.result(&draft, &span, &fields, &attributes, &info.result_attrs)?;
            }
            drafts.append(&draft)?;
            by_span.set_item(&span_id, &draft)?;
        }
        // How many spans each file recognised, the files in the order their first span
        // came: a file's earliest rule comes first among its rules in `seen`, so it is
        // inserted where its first span would have put it.
        for n in seen {
            let file = self.rules[n].file.bind(py);
            let count = match used.get_item(file)? {
                Some(count) => count.extract::<usize>()? + counts.count(n),
                None => counts.count(n),
            };
            used.set_item(file, count)?;
        }
        PyTuple::new(
            py,
            [
                drafts.into_any(),
                by_span.into_any(),
                used.into_any(),
                unrecognised.into_any(),
                by_id.into_any(),
            ],
        )
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Drafter>()?;
    m.add_class::<TraceDrafter>()
}
