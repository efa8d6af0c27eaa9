//! What a model call's messages say, as the evidence facts read them: the text a message
//! carries (`message_text`), the answer text of a model call's output (`assistant_text`,
//! with its count of text parts), the tool names and call ids requested in messages, and
//! whether messages are structure only (`messages_empty`).
//!
//! One implementation of each, read by `StepView`'s final output and fragment facts and
//! by the probes `otel_oracles.grade.evidence` still runs in Python (`tool_names`, the
//! message probes, `refused_model_call`). Messages are the mapping's Python values (a
//! `dict` per message; GenAI `parts`, OpenAI `content` and `tool_calls`): read through the
//! C API as Python reads them (a `dict` subclass through its own `get`, values compared as
//! Python compares them), the texts handed back as the same `str` objects.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use super::placeholder;
use crate::pydict::{self, eq_text, items_of};

/// `value in texts` as Python's `in` over a tuple of `str`s answers it.
fn is_one_of(value: &Bound<'_, PyAny>, texts: &[&Bound<'_, PyString>]) -> PyResult<bool> {
    for text in texts {
        if eq_text(value, text)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The text of one part of a message's `parts` or `content` list: a `str` that is no
/// placeholder; a `dict` of type `text`, `output_text` or `input_text` (no type: `text`)
/// whose `content`, else `text`, is a `str` and no placeholder.
fn part_text<'py>(part: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = part.py();
    if part.is_instance_of::<PyString>() {
        return Ok((!placeholder(part, 0)?).then(|| part.clone()));
    }
    if !part.is_instance_of::<PyDict>() {
        return Ok(None);
    }
    let text = intern!(py, "text");
    let kind = pydict::get_or(part, intern!(py, "type"), text.as_any())?;
    if !is_one_of(
        &kind,
        &[text, intern!(py, "output_text"), intern!(py, "input_text")],
    )? {
        return Ok(None);
    }
    for key in [intern!(py, "content"), text] {
        let value = pydict::get(part, key)?;
        if value.is_instance_of::<PyString>() && !placeholder(&value, 0)? {
            return Ok(Some(value));
        }
    }
    Ok(None)
}

/// The texts a message carries, in order, into `out`: a `str` message that is no
/// placeholder; a `dict`'s `parts`, then `content`, each a `str` (no placeholder) or a
/// `list` of parts (`part_text`).
fn message_texts<'py>(
    message: &Bound<'py, PyAny>,
    out: &mut Vec<Bound<'py, PyAny>>,
) -> PyResult<()> {
    let py = message.py();
    if message.is_instance_of::<PyString>() {
        if !placeholder(message, 0)? {
            out.push(message.clone());
        }
        return Ok(());
    }
    if !message.is_instance_of::<PyDict>() {
        return Ok(());
    }
    for key in [intern!(py, "parts"), intern!(py, "content")] {
        let value = pydict::get(message, key)?;
        if value.is_instance_of::<PyString>() {
            if !placeholder(&value, 0)? {
                out.push(value);
            }
        } else if let Ok(list) = value.cast::<PyList>() {
            for part in list.iter() {
                if let Some(text) = part_text(&part)? {
                    out.push(text);
                }
            }
        }
    }
    Ok(())
}

/// `"\n".join(texts)`, or `None` when there are none (one exact `str`: itself, as `join`
/// gives it).
fn joined<'py>(
    py: Python<'py>,
    texts: Vec<Bound<'py, PyAny>>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    match texts.len() {
        0 => Ok(None),
        1 if texts[0].is_exact_instance_of::<PyString>() => Ok(texts.into_iter().next()),
        _ => Ok(Some(intern!(py, "\n").call_method1(
            intern!(py, "join"),
            (PyList::new(py, texts)?,),
        )?)),
    }
}

/// The text a message carries (GenAI `parts`, OpenAI `content` string or list; several
/// texts joined by a newline), or `None` when it carries none (structure only, as with
/// content capture off).
#[pyfunction]
pub(super) fn message_text<'py>(
    message: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let mut texts = Vec::new();
    message_texts(message, &mut texts)?;
    joined(message.py(), texts)
}

/// The answer a model call's output messages hold: the text of the last message that
/// carries text and whose role is none or the model's (`assistant`, `model`, `ai`), and
/// how many text parts it is made of (`(None, 0)`: no such message).
pub(super) fn assistant_text<'py>(
    messages: &Bound<'py, PyAny>,
) -> PyResult<(Option<Bound<'py, PyAny>>, usize)> {
    let py = messages.py();
    let messages = items_of(messages)?;
    let roles = [
        intern!(py, "assistant"),
        intern!(py, "model"),
        intern!(py, "ai"),
    ];
    let mut texts = Vec::new();
    for message in messages.iter().rev() {
        if message.is_instance_of::<PyDict>() {
            let role = pydict::get(message, intern!(py, "role"))?;
            if !role.is_none() && !is_one_of(&role, &roles)? {
                continue;
            }
        }
        texts.clear();
        message_texts(message, &mut texts)?;
        let parts = texts.len();
        if let Some(text) = joined(py, std::mem::take(&mut texts))? {
            return Ok((Some(text), parts));
        }
    }
    Ok((None, 0))
}

/// The tool names one message requests, added to `names` in order: a `tool_call` part's
/// `name`, an OpenAI `tool_calls` entry's `function.name` (or its own `name`), each a
/// non-empty `str` (a message that is no `dict` requests none).
fn message_names<'py>(
    message: &Bound<'py, PyAny>,
    names: &mut Vec<Bound<'py, PyAny>>,
) -> PyResult<()> {
    let py = message.py();
    if !message.is_instance_of::<PyDict>() {
        return Ok(());
    }
    let name_key = intern!(py, "name");
    let mut named = |name: Bound<'py, PyAny>| -> PyResult<()> {
        if name.is_instance_of::<PyString>() && name.is_truthy()? {
            names.push(name);
        }
        Ok(())
    };
    for part in items_of(&pydict::get(message, intern!(py, "parts"))?)? {
        if part.is_instance_of::<PyDict>()
            && eq_text(
                &pydict::get(&part, intern!(py, "type"))?,
                intern!(py, "tool_call"),
            )?
        {
            named(pydict::get(&part, name_key)?)?;
        }
    }
    for call in items_of(&pydict::get(message, intern!(py, "tool_calls"))?)? {
        if !call.is_instance_of::<PyDict>() {
            continue;
        }
        let function = pydict::get(&call, intern!(py, "function"))?;
        named(if function.is_instance_of::<PyDict>() {
            pydict::get(&function, name_key)?
        } else {
            pydict::get(&call, name_key)?
        })?;
    }
    Ok(())
}

/// The tool names requested in `messages`, in order (`message_names` of each).
pub(super) fn tool_names<'py>(messages: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let mut names = Vec::new();
    for message in items_of(messages)? {
        message_names(&message, &mut names)?;
    }
    Ok(names)
}

/// Tool names requested inside messages (GenAI `tool_call` parts, OpenAI `tool_calls`).
#[pyfunction]
pub(super) fn message_tool_names<'py>(
    messages: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyList>> {
    PyList::new(messages.py(), tool_names(messages)?)
}

/// Messages present as structure only: a `list` in which no message carries text or a
/// requested tool name (roles and part types only). Anything that is no `list` is not.
#[pyfunction]
pub(super) fn messages_empty(messages: &Bound<'_, PyAny>) -> PyResult<bool> {
    let Ok(list) = messages.cast::<PyList>() else {
        return Ok(false);
    };
    let mut found = Vec::new();
    for message in list.iter() {
        message_texts(&message, &mut found)?;
        if found.is_empty() {
            message_names(&message, &mut found)?;
        }
        if !found.is_empty() {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Whether a model call's output holds a `tool_call` part whose name was not recorded (no
/// non-empty `str`): a call was asked for, so no finish reason can say the model asked for
/// nothing, and which tool it was is unknown.
#[pyfunction]
pub(super) fn unnamed_request(messages: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = messages.py();
    for message in items_of(messages)? {
        if !message.is_instance_of::<PyDict>() {
            continue;
        }
        let unnamed = tool_call_parts(&message, |part| {
            let name = pydict::get(part, intern!(py, "name"))?;
            Ok(!(name.is_instance_of::<PyString>() && name.is_truthy()?))
        })?;
        if unnamed {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Calls `each` with the `tool_call` parts (`dict`s whose `type` is `"tool_call"`) of one
/// message, in order, until it answers `true`; whether it did. The one walk of a message's
/// requested calls that `unnamed_request` and `call_ids` share.
fn tool_call_parts<'py>(
    message: &Bound<'py, PyAny>,
    mut each: impl FnMut(&Bound<'py, PyAny>) -> PyResult<bool>,
) -> PyResult<bool> {
    let py = message.py();
    for part in items_of(&pydict::get(message, intern!(py, "parts"))?)? {
        if part.is_instance_of::<PyDict>()
            && eq_text(
                &pydict::get(&part, intern!(py, "type"))?,
                intern!(py, "tool_call"),
            )?
            && each(&part)?
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// `str(value)`: an exact `str` as itself.
fn as_text<'py>(value: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if value.is_exact_instance_of::<PyString>() {
        return Ok(value);
    }
    Ok(value.str()?.into_any())
}

/// The call ids of the tool calls requested in `messages` (a `tool_call` part's `id`, an
/// OpenAI `tool_calls` entry's `id`, each truthy, as `str`), added to `out`.
pub(super) fn call_ids<'py>(
    messages: &Bound<'py, PyAny>,
    out: &mut Vec<Bound<'py, PyAny>>,
) -> PyResult<()> {
    let py = messages.py();
    let (id_key, calls_key) = (intern!(py, "id"), intern!(py, "tool_calls"));
    for message in items_of(messages)? {
        if !message.is_instance_of::<PyDict>() {
            continue;
        }
        tool_call_parts(&message, |part| {
            let id = pydict::get(part, id_key)?;
            if id.is_truthy()? {
                out.push(as_text(id)?);
            }
            Ok(false)
        })?;
        for call in items_of(&pydict::get(&message, calls_key)?)? {
            if call.is_instance_of::<PyDict>() {
                let id = pydict::get(&call, id_key)?;
                if id.is_truthy()? {
                    out.push(as_text(id)?);
                }
            }
        }
    }
    Ok(())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(message_text, m)?)?;
    m.add_function(wrap_pyfunction!(message_tool_names, m)?)?;
    m.add_function(wrap_pyfunction!(messages_empty, m)?)?;
    m.add_function(wrap_pyfunction!(unnamed_request, m)?)
}
