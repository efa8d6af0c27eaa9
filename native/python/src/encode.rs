//! Encoding of the emitter's records (`otel_oracles.emit._records`) to OTLP protobuf and
//! OTLP/JSON bytes, read straight from the Python objects.
//!
//! A shared attribute run (`Attrs`) is encoded once per form and kept in its `encoded` dict,
//! so every later record (in this batch or the next) that shares it copies bytes instead of
//! reading its values again; a record's own values (`extra`) are read each time. Values the
//! OTLP `AnyValue` cannot hold (an unknown type, an int outside int64, nesting deeper than
//! [`MAX_VALUE_DEPTH`]) are left out with a warning on the `otel_oracles.emit` logger, as the
//! SDK's encoder skips what it cannot encode.

use std::borrow::Cow;
use std::sync::{Mutex, MutexGuard};

use otel_oracles_core::encode::records::{
    Attribute, Event, Head, LogRecord, Piece, Scope, Span, Value, MAX_VALUE_DEPTH,
};
use otel_oracles_core::encode::{json, proto, Framed};
use pyo3::exceptions::{PyOverflowError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyBytes, PyDict, PyFloat, PyInt, PyMapping, PyMemoryView, PySequence, PyString,
};
use pyo3::{ffi, intern};

use crate::scrub::str_text;

/// The output format of one call.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Proto,
    Json,
}

/// Writes records into one request of either format.
enum Writer {
    Proto(proto::RequestWriter),
    Json(json::RequestWriter),
}

impl Writer {
    fn span(&mut self, span: &Span<'_>) {
        match self {
            Writer::Proto(w) => w.span(span),
            Writer::Json(w) => w.span(span),
        }
    }

    fn log_record(&mut self, log: &LogRecord<'_>) {
        match self {
            Writer::Proto(w) => w.log_record(log),
            Writer::Json(w) => w.log_record(log),
        }
    }

    fn framed(self, head: &Head<'_>) -> Framed {
        match self {
            Writer::Proto(w) => w.framed(head),
            Writer::Json(w) => w.framed(head),
        }
    }
}

/// Where the values that could not be encoded are noted, to be logged once per call.
#[derive(Default)]
pub(crate) struct Skipped(pub(crate) Vec<String>);

impl Skipped {
    pub(crate) fn log(self, py: Python<'_>) -> PyResult<()> {
        if self.0.is_empty() {
            return Ok(());
        }
        let logger = py
            .import(intern!(py, "logging"))?
            .call_method1(intern!(py, "getLogger"), ("otel_oracles.emit",))?;
        logger.call_method1(
            intern!(py, "warning"),
            (
                "cannot encode attribute(s) %s: not an OTLP attribute value",
                self.0.join(", "),
            ),
        )?;
        Ok(())
    }
}

/// A Python attribute value as an OTLP value, as the SDK's encoder maps it (None, bool,
/// str, int, float, bytes, sequences, mappings, in that order); `None` when it has none.
pub(crate) fn value<'a>(obj: &'a Bound<'_, PyAny>, depth: usize) -> PyResult<Option<Value<'a>>> {
    if obj.is_none() {
        return Ok(Some(Value::Empty));
    }
    if let Ok(b) = obj.cast_exact::<PyBool>() {
        return Ok(Some(Value::Bool(b.is_true())));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Some(Value::Str(str_text(s)?)));
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(obj.extract::<i64>().ok().map(Value::Int));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Some(Value::Double(f.value())));
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Some(Value::Bytes(Cow::Borrowed(b.as_bytes()))));
    }
    if depth >= MAX_VALUE_DEPTH {
        return Ok(None);
    }
    if obj.is_instance_of::<PySequence>() {
        let mut items = Vec::new();
        for item in obj.try_iter()? {
            let item = item?;
            match value(&item, depth + 1)? {
                Some(v) => items.push(v.into_owned()),
                None => return Ok(None),
            }
        }
        return Ok(Some(Value::Array(items)));
    }
    if obj.is_instance_of::<PyMapping>() {
        let mut items = Vec::new();
        for (key, item) in pairs(obj)? {
            match value(&item, depth + 1)? {
                Some(v) => items.push(Attribute {
                    key: Cow::Owned(str_text(&key.str()?)?.into_owned()),
                    value: v.into_owned(),
                }),
                None => return Ok(None),
            }
        }
        return Ok(Some(Value::KvList(items)));
    }
    Ok(None)
}

/// The `(key, value)` pairs of a mapping, held so the attributes can borrow their text.
pub(crate) fn pairs<'py>(
    mapping: &Bound<'py, PyAny>,
) -> PyResult<Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
    if let Ok(dict) = mapping.cast::<PyDict>() {
        return Ok(dict.iter().collect());
    }
    let mut out = Vec::new();
    for item in mapping
        .call_method0(intern!(mapping.py(), "items"))?
        .try_iter()?
    {
        out.push(item?.extract()?);
    }
    Ok(out)
}

/// Attributes from `(key, value)` pairs; keys that are not text are written as `str(key)`.
pub(crate) fn attributes<'a>(
    held: &'a [(Bound<'_, PyAny>, Bound<'_, PyAny>)],
    skipped: &mut Skipped,
) -> PyResult<Vec<Attribute<'a>>> {
    let mut out = Vec::with_capacity(held.len());
    attributes_into(held, skipped, &mut out)?;
    Ok(out)
}

/// [`attributes`] appended to `out`: a vector a caller keeps across records.
pub(crate) fn attributes_into<'a>(
    held: &'a [(Bound<'_, PyAny>, Bound<'_, PyAny>)],
    skipped: &mut Skipped,
    out: &mut Vec<Attribute<'a>>,
) -> PyResult<()> {
    for (key, item) in held {
        let key: Cow<'a, str> = match key.cast::<PyString>() {
            Ok(s) => str_text(s)?,
            Err(_) => Cow::Owned(str_text(&key.str()?)?.into_owned()),
        };
        match value(item, 0)? {
            Some(value) => out.push(Attribute { key, value }),
            None => skipped.0.push(key.into_owned()),
        }
    }
    Ok(())
}

/// The pairs of an optional mapping (`None` or empty: none).
pub(crate) fn optional_pairs<'py>(
    obj: &Bound<'py, PyAny>,
) -> PyResult<Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
    if obj.is_none() {
        Ok(Vec::new())
    } else {
        pairs(obj)
    }
}

/// The form a run is encoded and cached in (its key in `Attrs.encoded`).
#[derive(Clone, Copy)]
enum RunForm {
    Proto(proto::AttributeField),
    Json,
}

impl RunForm {
    fn key<'py>(self, py: Python<'py>) -> &'py Bound<'py, PyString> {
        match self {
            RunForm::Proto(proto::AttributeField::Span) => intern!(py, "otlp.proto.span"),
            RunForm::Proto(proto::AttributeField::Event) => intern!(py, "otlp.proto.event"),
            RunForm::Proto(proto::AttributeField::Log) => intern!(py, "otlp.proto.log"),
            RunForm::Json => intern!(py, "otlp.json"),
        }
    }
}

/// The encoded bytes of each shared run in `chunks` (a tuple of `Attrs`), from its
/// `encoded` dict or encoded now and stored there.
fn runs<'py>(
    chunks: &Bound<'py, PyAny>,
    form: RunForm,
    skipped: &mut Skipped,
) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    let py = chunks.py();
    let key = form.key(py);
    let mut out = Vec::new();
    for chunk in chunks.try_iter()? {
        let chunk = chunk?;
        let encoded = chunk.getattr(intern!(py, "encoded"))?;
        let encoded = encoded.cast::<PyDict>()?;
        if let Some(held) = encoded.get_item(key)? {
            if let Ok(bytes) = held.cast_into::<PyBytes>() {
                out.push(bytes);
                continue;
            }
        }
        let items = pairs(&chunk.getattr(intern!(py, "items"))?)?;
        let attrs = attributes(&items, skipped)?;
        let bytes = match form {
            RunForm::Proto(field) => proto::attributes(field, &attrs),
            RunForm::Json => json::attributes(&attrs),
        };
        let bytes = PyBytes::new(py, &bytes);
        encoded.set_item(key, &bytes)?;
        out.push(bytes);
    }
    Ok(out)
}

fn encoded_pieces<'a>(runs: &'a [Bound<'_, PyBytes>]) -> Vec<Piece<'a>> {
    runs.iter().map(|r| Piece::Encoded(r.as_bytes())).collect()
}

/// Text of an optional str attribute (`None`: empty), a surrogate written as its escape
/// as the reports write it (`str_text`).
pub(crate) fn text<'a>(obj: &'a Bound<'_, PyAny>, field: &str) -> PyResult<Cow<'a, str>> {
    if obj.is_none() {
        return Ok(Cow::Borrowed(""));
    }
    str_text(
        obj.cast::<PyString>()
            .map_err(|_| PyValueError::new_err(format!("{field}: expected a str")))?,
    )
}

pub(crate) fn trace_id(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<[u8; 16]> {
    obj.extract::<u128>().map(u128::to_be_bytes).map_err(|_| {
        PyValueError::new_err(format!("{field}: expected a trace id (an int of 128 bits)"))
    })
}

pub(crate) fn span_id(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<[u8; 8]> {
    obj.extract::<u64>().map(u64::to_be_bytes).map_err(|_| {
        PyValueError::new_err(format!("{field}: expected a span id (an int of 64 bits)"))
    })
}

pub(crate) fn nanos(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<u64> {
    obj.extract::<u64>().map_err(|_| {
        PyValueError::new_err(format!("{field}: expected nanoseconds since the epoch"))
    })
}

/// One event of a grade span, with what it borrows from.
struct HeldEvent<'py> {
    name: Bound<'py, PyAny>,
    time_ns: u64,
    runs: Vec<Bound<'py, PyBytes>>,
}

fn write_span(
    item: &Bound<'_, PyAny>,
    format: Format,
    writer: &mut Writer,
    skipped: &mut Skipped,
) -> PyResult<()> {
    let py = item.py();
    let (span_form, event_form) = match format {
        Format::Proto => (
            RunForm::Proto(proto::AttributeField::Span),
            RunForm::Proto(proto::AttributeField::Event),
        ),
        Format::Json => (RunForm::Json, RunForm::Json),
    };
    let span_runs = runs(&item.getattr(intern!(py, "chunks"))?, span_form, skipped)?;
    let extra = optional_pairs(&item.getattr(intern!(py, "extra"))?)?;
    let mut events = Vec::new();
    for event in item.getattr(intern!(py, "events"))?.try_iter()? {
        let event = event?;
        events.push(HeldEvent {
            name: event.getattr(intern!(py, "name"))?,
            time_ns: nanos(&event.getattr(intern!(py, "time"))?, "EventItem.time")?,
            runs: runs(&event.getattr(intern!(py, "chunks"))?, event_form, skipped)?,
        });
    }
    let name = item.getattr(intern!(py, "name"))?;
    let status_message = item.getattr(intern!(py, "status_message"))?;
    let parent = item.getattr(intern!(py, "parent_id"))?;

    let mut attributes_ = encoded_pieces(&span_runs);
    if !extra.is_empty() {
        attributes_.push(Piece::Values(attributes(&extra, skipped)?));
    }
    let event_names = events
        .iter()
        .map(|e| text(&e.name, "EventItem.name"))
        .collect::<PyResult<Vec<_>>>()?;
    let events = events
        .iter()
        .zip(&event_names)
        .map(|(e, name)| Event {
            name,
            time_ns: e.time_ns,
            attributes: encoded_pieces(&e.runs),
        })
        .collect();
    let name = text(&name, "SpanItem.name")?;
    let status_message = text(&status_message, "SpanItem.status_message")?;
    writer.span(&Span {
        trace_id: trace_id(&item.getattr(intern!(py, "trace_id"))?, "SpanItem.trace_id")?,
        span_id: span_id(&item.getattr(intern!(py, "span_id"))?, "SpanItem.span_id")?,
        parent_span_id: if parent.is_none() {
            None
        } else {
            Some(span_id(&parent, "SpanItem.parent_id")?)
        },
        name: &name,
        start_ns: nanos(&item.getattr(intern!(py, "start"))?, "SpanItem.start")?,
        end_ns: nanos(&item.getattr(intern!(py, "end"))?, "SpanItem.end")?,
        attributes: attributes_,
        events,
        status_code: item
            .getattr(intern!(py, "status_code"))?
            .extract::<u32>()
            .map_err(|_| {
                PyValueError::new_err("SpanItem.status_code: expected a StatusCode value")
            })?,
        status_message: &status_message,
    });
    Ok(())
}

/// A log record's `SeverityNumber` (None: 0, unspecified) as its number.
pub(crate) fn severity_number(severity: &Bound<'_, PyAny>) -> PyResult<u32> {
    if severity.is_none() {
        return Ok(0);
    }
    severity
        .getattr(intern!(severity.py(), "value"))?
        .extract::<u32>()
        .map_err(|_| PyValueError::new_err("LogItem.severity: expected a SeverityNumber"))
}

/// What consecutive log records of one check or verdict share, remembered by identity: the
/// severity enum member (its `.value` is a property lookup) and the trace id (an int of 128
/// bits, read in several calls under the limited API).
#[derive(Default)]
struct LogCache<'py> {
    severity: Option<(Bound<'py, PyAny>, u32)>,
    trace_id: Option<(Bound<'py, PyAny>, Option<[u8; 16]>)>,
}

fn write_log<'py>(
    item: &Bound<'py, PyAny>,
    format: Format,
    writer: &mut Writer,
    skipped: &mut Skipped,
    cache: &mut LogCache<'py>,
) -> PyResult<()> {
    let py = item.py();
    let form = match format {
        Format::Proto => RunForm::Proto(proto::AttributeField::Log),
        Format::Json => RunForm::Json,
    };
    let log_runs = runs(&item.getattr(intern!(py, "chunks"))?, form, skipped)?;
    let extra = optional_pairs(&item.getattr(intern!(py, "extra"))?)?;
    let severity_text = item.getattr(intern!(py, "severity_text"))?;
    let event_name = item.getattr(intern!(py, "event_name"))?;

    let severity = item.getattr(intern!(py, "severity"))?;
    let severity_number = match &cache.severity {
        Some((held, number)) if held.is(&severity) => *number,
        _ => {
            let number = severity_number(&severity)?;
            cache.severity = Some((severity, number));
            number
        }
    };
    let trace = item.getattr(intern!(py, "trace_id"))?;
    let trace_id = match &cache.trace_id {
        Some((held, id)) if held.is(&trace) => *id,
        _ => {
            let id = trace_id(&trace, "LogItem.trace_id")?;
            let id = (id != [0; 16]).then_some(id);
            cache.trace_id = Some((trace, id));
            id
        }
    };
    let span = span_id(&item.getattr(intern!(py, "span_id"))?, "LogItem.span_id")?;

    let mut attributes_ = encoded_pieces(&log_runs);
    if !extra.is_empty() {
        attributes_.push(Piece::Values(attributes(&extra, skipped)?));
    }
    let severity_text = text(&severity_text, "LogItem.severity_text")?;
    let event_name = text(&event_name, "LogItem.event_name")?;
    writer.log_record(&LogRecord {
        time_ns: nanos(&item.getattr(intern!(py, "time"))?, "LogItem.time")?,
        trace_id,
        span_id: (span != [0; 8]).then_some(span),
        severity_number,
        severity_text: &severity_text,
        event_name: &event_name,
        attributes: attributes_,
    });
    Ok(())
}

/// Which records a batch holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Signal {
    Traces,
    Logs,
}

fn encode<'py>(
    batch: &Bound<'py, PyAny>,
    signal: Signal,
    format: Format,
) -> PyResult<Bound<'py, PyBytes>> {
    let py = batch.py();
    let mut skipped = Skipped::default();
    let expected = batch.len().unwrap_or(0);
    let mut writer = match format {
        Format::Proto => Writer::Proto(proto::RequestWriter::for_records(expected)),
        Format::Json => Writer::Json(json::RequestWriter::for_records(
            match signal {
                Signal::Traces => json::Signal::Traces,
                Signal::Logs => json::Signal::Logs,
            },
            expected,
        )),
    };
    let mut count = 0usize;
    let mut cache = LogCache::default();
    for item in batch.try_iter()? {
        let item = item?;
        match signal {
            Signal::Traces => write_span(&item, format, &mut writer, &mut skipped)?,
            Signal::Logs => write_log(&item, format, &mut writer, &mut skipped, &mut cache)?,
        }
        count += 1;
    }
    let out = request(
        py,
        writer,
        count,
        || {
            Ok((
                batch.getattr(intern!(py, "resource"))?,
                batch.getattr(intern!(py, "scope"))?,
            ))
        },
        &mut skipped,
    )?;
    skipped.log(py)?;
    Ok(out)
}

/// The request of the `count` records written into `writer`, framed with the resource
/// and the instrumentation scope `head` gives (read only when there are records or the
/// format is JSON: a protobuf request without records is empty bytes).
fn request<'py>(
    py: Python<'py>,
    writer: Writer,
    count: usize,
    head: impl FnOnce() -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)>,
    skipped: &mut Skipped,
) -> PyResult<Bound<'py, PyBytes>> {
    let out = if count == 0 && matches!(writer, Writer::Proto(_)) {
        Framed::default()
    } else {
        let (resource, scope) = head()?;
        with_head(&resource, &scope, skipped, |head| writer.framed(head))?
    };
    framed_bytes(py, &out)
}

/// `frame` called with the envelope of `resource` and `scope` (the SDK's `Resource` and
/// `InstrumentationScope`, or None), read from them.
fn with_head<'py, R>(
    resource: &Bound<'py, PyAny>,
    scope: &Bound<'py, PyAny>,
    skipped: &mut Skipped,
    frame: impl FnOnce(&Head<'_>) -> R,
) -> PyResult<R> {
    let py = resource.py();
    let resource_attrs = optional_pairs(&resource.getattr(intern!(py, "attributes"))?)?;
    let resource_schema = resource.getattr(intern!(py, "schema_url"))?;
    let (scope_name, scope_version, scope_schema, scope_attrs) = if scope.is_none() {
        (None, None, None, Vec::new())
    } else {
        let attrs = scope.getattr(intern!(py, "attributes"))?;
        (
            Some(scope.getattr(intern!(py, "name"))?),
            Some(scope.getattr(intern!(py, "version"))?),
            Some(scope.getattr(intern!(py, "schema_url"))?),
            optional_pairs(&attrs)?,
        )
    };
    let resource_schema = text(&resource_schema, "Resource.schema_url")?;
    let scope_texts = match (&scope_name, &scope_version, &scope_schema) {
        (Some(name), Some(version), Some(schema)) => Some((
            text(name, "InstrumentationScope.name")?,
            text(version, "InstrumentationScope.version")?,
            text(schema, "InstrumentationScope.schema_url")?,
        )),
        _ => None,
    };
    let head = Head {
        resource: attributes(&resource_attrs, skipped)?,
        resource_schema_url: &resource_schema,
        scope: match &scope_texts {
            Some((name, version, schema)) => Some(Scope {
                name,
                version,
                attributes: attributes(&scope_attrs, skipped)?,
                schema_url: schema,
            }),
            None => None,
        },
    };
    Ok(frame(&head))
}

/// `framed`'s request as one `bytes`, copied once into the object's storage. Not through
/// `PyBytes::new_with`, which zeroes the storage before the copy overwrites it: that
/// `memset` was as dear as the copy itself (an OTLP export of 25,000 log records zeroed
/// ~15 MB, ~23 M instructions).
fn framed_bytes<'py>(py: Python<'py>, framed: &Framed) -> PyResult<Bound<'py, PyBytes>> {
    let len = framed.len();
    let size = ffi::Py_ssize_t::try_from(len)
        .map_err(|_| PyOverflowError::new_err("a request over isize::MAX bytes"))?;
    // SAFETY: a null source makes CPython allocate the object's `len` bytes (and the
    // terminating NUL) without initialising them; nothing else holds the object until it
    // is returned, and the three copies fill exactly those `len` bytes (`Framed::len` is
    // the sum of the three parts' lengths).
    unsafe {
        let bytes = Bound::from_owned_ptr_or_err(
            py,
            ffi::PyBytes_FromStringAndSize(std::ptr::null(), size),
        )?
        .cast_into_unchecked::<PyBytes>();
        let mut at = ffi::PyBytes_AsString(bytes.as_ptr()).cast::<u8>();
        for part in [&framed.head, &framed.items, &framed.tail] {
            std::ptr::copy_nonoverlapping(part.as_ptr(), at, part.len());
            at = at.add(part.len());
        }
        Ok(bytes)
    }
}

/// One pending OTLP protobuf request of grade spans or of log records, written straight by
/// `VerdictRecords.build` (the emitter's direct path, when every sink sends OTLP protobuf:
/// no `SpanItem`/`LogItem` a record, no reading them back). `take` frames what was written
/// with the resource and scope, as `encode_*_proto` frames an `ItemBatch`, and starts anew.
#[pyclass(module = "otel_oracles._native", name = "ProtoRequest", frozen)]
pub(crate) struct ProtoRequest {
    writer: Mutex<proto::RequestWriter>,
    /// How many records a request is expected to hold (the emitter's batch size): room
    /// for them is reserved after the first.
    expected: usize,
}

impl ProtoRequest {
    /// The writer, for `VerdictRecords.build` (one export call at a time holds it).
    pub(crate) fn writer(&self) -> PyResult<MutexGuard<'_, proto::RequestWriter>> {
        self.writer
            .try_lock()
            .map_err(|_| PyValueError::new_err("ProtoRequest: in use by another call"))
    }

    /// A writer keeping room for the envelope before the records, so that `take` hands out
    /// its buffer instead of copying the request into a `bytes`.
    fn fresh_writer(expected: usize) -> proto::RequestWriter {
        proto::RequestWriter::with_envelope_room(expected, proto::ENVELOPE_ROOM)
    }
}

#[pymethods]
impl ProtoRequest {
    #[new]
    fn new(expected: usize) -> Self {
        ProtoRequest {
            writer: Mutex::new(Self::fresh_writer(expected)),
            expected,
        }
    }

    /// How many records are written and not yet taken.
    fn __len__(&self) -> PyResult<usize> {
        Ok(self.writer()?.len())
    }

    /// The serialized request of the records written so far, framed with `resource` and
    /// `scope` (the SDK's `Resource` and `InstrumentationScope`, or None), as a `memoryview`
    /// of the writer's own buffer ([`TakenRequest`]); empty when none were. The request
    /// starts anew.
    fn take<'py>(
        &self,
        resource: Bound<'py, PyAny>,
        scope: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyMemoryView>> {
        let py = resource.py();
        let writer = std::mem::replace(&mut *self.writer()?, Self::fresh_writer(self.expected));
        let out = if writer.is_empty() {
            proto::Request::default()
        } else {
            let mut skipped = Skipped::default();
            let out = with_head(&resource, &scope, &mut skipped, |head| {
                writer.into_request(head)
            })?;
            skipped.log(py)?;
            out
        };
        PyMemoryView::from(Bound::new(py, TakenRequest(out))?.as_any())
    }
}

/// A request `ProtoRequest.take` hands out: the writer's own buffer, read through the buffer
/// protocol (a `memoryview` of it goes to `len`, sockets, `gzip`), so the request is not
/// copied into a `bytes` (a copy of every byte sent: ~23 M instructions an export of
/// 25,000 results).
#[pyclass(module = "otel_oracles._native", name = "TakenRequest", frozen)]
pub(crate) struct TakenRequest(proto::Request);

#[pymethods]
impl TakenRequest {
    fn __len__(&self) -> usize {
        self.0.bytes().len()
    }

    /// A read-only view of the request's bytes (unsigned bytes, one dimension).
    ///
    /// # Safety
    /// `view` is the `Py_buffer` CPython passes to `bf_getbuffer`.
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: std::os::raw::c_int,
    ) -> PyResult<()> {
        let bytes = slf.get().0.bytes();
        let len = ffi::Py_ssize_t::try_from(bytes.len())
            .map_err(|_| PyOverflowError::new_err("a request over isize::MAX bytes"))?;
        // SAFETY: the object is frozen and its buffer never changes while it lives; the view
        // holds a reference to it (`PyBuffer_FillInfo` takes one), so the bytes outlive the
        // view. Read-only: a request for a writable view fails with BufferError.
        let filled = unsafe {
            ffi::PyBuffer_FillInfo(
                view,
                slf.as_ptr(),
                bytes.as_ptr().cast_mut().cast(),
                len,
                1,
                flags,
            )
        };
        if filled == -1 {
            return Err(PyErr::fetch(slf.py()));
        }
        Ok(())
    }
}

/// The serialized `ExportTraceServiceRequest` of an `ItemBatch` of `SpanItem`s (empty bytes
/// for an empty batch).
#[pyfunction]
fn encode_spans_proto<'py>(batch: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    encode(batch, Signal::Traces, Format::Proto)
}

/// The serialized `ExportLogsServiceRequest` of an `ItemBatch` of `LogItem`s (empty bytes
/// for an empty batch).
#[pyfunction]
fn encode_logs_proto<'py>(batch: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    encode(batch, Signal::Logs, Format::Proto)
}

/// `{"resourceSpans": ...}` of an `ItemBatch` of `SpanItem`s, as one line of OTLP/JSON.
#[pyfunction]
fn encode_spans_json<'py>(batch: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    encode(batch, Signal::Traces, Format::Json)
}

/// `{"resourceLogs": ...}` of an `ItemBatch` of `LogItem`s, as one line of OTLP/JSON.
#[pyfunction]
fn encode_logs_json<'py>(batch: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    encode(batch, Signal::Logs, Format::Json)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ProtoRequest>()?;
    m.add_class::<TakenRequest>()?;
    m.add_function(wrap_pyfunction!(encode_spans_proto, m)?)?;
    m.add_function(wrap_pyfunction!(encode_logs_proto, m)?)?;
    m.add_function(wrap_pyfunction!(encode_spans_json, m)?)?;
    m.add_function(wrap_pyfunction!(encode_logs_json, m)?)?;
    Ok(())
}
