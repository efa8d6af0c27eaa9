//! `StepBuilder`: a finished draft made into a `Step` record, for
//! `otel_oracles.mapping._mapper` (its `_step`), without a Python frame per field.
//!
//! The step's values: the draft's fields, then what the mapper decided (`index`, `kind`,
//! `path`, `content`, `command`, `status`), `arguments` split into a copy of the dict or, for
//! any other value, `arguments_raw` (a `str` as it is, anything else through
//! `parse_string`), the span's times unless the step was synthesized, `source` (a `SpanRef`
//! of the span's own trace id, else the trajectory's, and its span id), the convention file,
//! `redacted` sorted into a tuple and a copy of `attributes`.
//!
//! When every value has exactly its field's type (each draft field in `field_types`, of
//! that exact type or `None`; integer span times; `arguments_raw` an exact `str` or
//! `None`), the record is made as `Step.from_normalized` makes it: the values over the
//! field defaults, in declared order, set as the instance's `__dict__` (records are plain
//! classes, see `model/_record.py`). Otherwise the values are returned as a `dict` for the
//! caller to validate (`Step(**values)`), so an unusual value ends exactly as validation
//! says. `SpanRef`s likewise: two exact `str` ids are trusted, anything else validated.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt, PyList, PySet, PyString, PyTuple, PyType};

#[pyclass(module = "otel_oracles._native", name = "StepBuilder", frozen)]
pub struct StepBuilder {
    step: Py<PyType>,
    span_ref: Py<PyType>,
    /// `Step`'s fields with their defaults, in declared order (`Record._template`; the one
    /// default factory, `attributes`, is always given here).
    template: Py<PyDict>,
    /// Draft field name -> the exact type its value must have, or `None` for any value.
    field_types: Py<PyDict>,
    /// `object.__new__` and `object.__setattr__`: a record made as `from_normalized` does.
    new: Py<PyAny>,
    set_attr: Py<PyAny>,
    parse_string: Py<PyAny>,
}

impl StepBuilder {
    /// A record of class `cls` whose `__dict__` is `values` (complete, in declared order).
    fn record<'py>(
        &self,
        cls: &Bound<'py, PyType>,
        values: Bound<'py, PyDict>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = cls.py();
        let record = self.new.bind(py).call1((cls,))?;
        self.set_attr
            .bind(py)
            .call1((&record, intern!(py, "__dict__"), values))?;
        Ok(record)
    }

    /// Whether every draft field's value has exactly its field's type (or is `None`).
    fn well_typed(&self, fields: &Bound<'_, PyDict>) -> PyResult<bool> {
        let py = fields.py();
        let types = self.field_types.bind(py);
        for (name, value) in fields.iter() {
            let Some(expected) = types.get_item(&name)? else {
                return Ok(false); // no step field: validation reports it
            };
            if expected.is_none() || value.is_none() || value.get_type().is(&expected) {
                continue;
            }
            return Ok(false);
        }
        Ok(true)
    }

    /// The step's `source`: `SpanRef(trace_id, span_id)`, trusted for two exact `str`s.
    fn source<'py>(
        &self,
        trace_id: &Bound<'py, PyAny>,
        span_id: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = trace_id.py();
        let cls = self.span_ref.bind(py);
        let values = PyDict::new(py);
        values.set_item(intern!(py, "trace_id"), trace_id)?;
        values.set_item(intern!(py, "span_id"), span_id)?;
        if trace_id.is_exact_instance_of::<PyString>() && span_id.is_exact_instance_of::<PyString>()
        {
            return self.record(cls, values);
        }
        cls.call((), Some(&values))
    }
}

#[pymethods]
impl StepBuilder {
    /// `step`, `span_ref`: the record classes; `field_types`: per draft field the exact type
    /// of its value, `None` for any; `parse_string`: the string parser.
    #[new]
    fn new(
        step: Bound<'_, PyType>,
        span_ref: Bound<'_, PyType>,
        field_types: Bound<'_, PyDict>,
        parse_string: Py<PyAny>,
    ) -> PyResult<Self> {
        let py = step.py();
        let template = step.getattr("_template")?.cast_into::<PyDict>()?.copy()?;
        let builtins = py.import("builtins")?;
        let object = builtins.getattr("object")?;
        Ok(Self {
            step: step.unbind(),
            span_ref: span_ref.unbind(),
            template: template.unbind(),
            field_types: field_types.unbind(),
            new: object.getattr("__new__")?.unbind(),
            set_attr: object.getattr("__setattr__")?.unbind(),
            parse_string,
        })
    }

    /// Step number `index` of kind `kind` from a draft (its `fields`, `status`, `span` or
    /// `None`, `synthesized`, `redacted`, `attributes`, the rule's `convention` file) and
    /// what the mapper decided (`path`, `content`, `command`); `trace_id` is the
    /// trajectory's. Returns the `Step`, or its values as a `dict` for `Step(**values)`
    /// when one is not exactly of its field's type.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (index, kind, fields, status, span, synthesized, redacted, attributes, convention, trace_id, path, content, command))]
    fn build<'py>(
        &self,
        index: &Bound<'py, PyAny>,
        kind: &Bound<'py, PyAny>,
        fields: &Bound<'py, PyDict>,
        status: &Bound<'py, PyAny>,
        span: &Bound<'py, PyAny>,
        synthesized: &Bound<'py, PyAny>,
        redacted: &Bound<'py, PySet>,
        attributes: &Bound<'py, PyDict>,
        convention: &Bound<'py, PyAny>,
        trace_id: &Bound<'py, PyAny>,
        path: &Bound<'py, PyAny>,
        content: &Bound<'py, PyAny>,
        command: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = fields.py();
        let none = py.None().into_bound(py);
        let mut arguments = fields
            .get_item(intern!(py, "arguments"))?
            .unwrap_or_else(|| none.clone());
        let mut arguments_raw = none.clone();
        if !arguments.is_none() {
            if let Ok(dict) = arguments.cast::<PyDict>() {
                // A copy: a linked call's arguments stay independent of the message part
                // they came from.
                arguments = dict.copy()?.into_any();
            } else {
                arguments_raw = if arguments.is_instance_of::<PyString>() {
                    arguments
                } else {
                    self.parse_string.bind(py).call1((arguments,))?
                };
                arguments = none.clone();
            }
        }
        // A span's times are checked whether the step keeps them or not (a synthesized
        // call keeps none): an unusual time sends the step through validation.
        let (start, end, times_typed) = if span.is_none() {
            (none.clone(), none.clone(), true)
        } else {
            let start = span.getattr(intern!(py, "start_ns"))?;
            let end = span.getattr(intern!(py, "end_ns"))?;
            let typed =
                start.is_exact_instance_of::<PyInt>() && end.is_exact_instance_of::<PyInt>();
            if synthesized.is_truthy()? {
                (none.clone(), none.clone(), typed)
            } else {
                (start, end, typed)
            }
        };
        let source = if span.is_none() {
            none.clone()
        } else {
            // A run joined from several traces keeps each step's own trace id.
            let own = span.getattr(intern!(py, "trace_id"))?;
            let trace = if own.is_truthy()? {
                own
            } else {
                trace_id.clone()
            };
            self.source(&trace, &span.getattr(intern!(py, "span_id"))?)?
        };
        let redacted = if redacted.is_empty() {
            PyTuple::empty(py)
        } else {
            let names = PyList::new(py, redacted.iter())?;
            names.sort()?;
            names.to_tuple()
        };
        let well_typed = self.well_typed(fields)?
            && times_typed
            && (arguments_raw.is_none() || arguments_raw.is_exact_instance_of::<PyString>());
        let values = if well_typed {
            self.template.bind(py).copy()?
        } else {
            PyDict::new(py)
        };
        for (name, value) in fields.iter() {
            values.set_item(name, value)?;
        }
        values.set_item(intern!(py, "index"), index)?;
        values.set_item(intern!(py, "kind"), kind)?;
        values.set_item(intern!(py, "arguments"), arguments)?;
        values.set_item(intern!(py, "arguments_raw"), arguments_raw)?;
        values.set_item(intern!(py, "status"), status)?;
        values.set_item(intern!(py, "start_ns"), start)?;
        values.set_item(intern!(py, "end_ns"), end)?;
        values.set_item(intern!(py, "path"), path)?;
        values.set_item(intern!(py, "content"), content)?;
        values.set_item(intern!(py, "command"), command)?;
        values.set_item(intern!(py, "source"), source)?;
        values.set_item(intern!(py, "convention"), convention)?;
        values.set_item(intern!(py, "synthesized"), synthesized)?;
        values.set_item(intern!(py, "redacted"), redacted)?;
        values.set_item(intern!(py, "attributes"), attributes.copy()?)?;
        if !well_typed {
            return Ok(values.into_any());
        }
        self.record(self.step.bind(py), values)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<StepBuilder>()
}
