//! `StepBuilder`: a trace's finished drafts made into `Step` records, for
//! `otel_oracles.mapping._mapper` (`map_trace`'s last pass), in one call per trace, without
//! a Python frame per step or per field.
//!
//! The steps: each draft, then the synthesized calls placed right after it (its `follows`),
//! numbered in that order. A step's kind is the draft's (`StepKind` by value); a tool call's
//! is `file_edit` or `command` when its tool is one of AgentBench's file or shell tools, or
//! of its rule's own (`tool_class`, Python's, remembered per exact `str` names), with the
//! path and content, or the command, read from its arguments (the first key present and not
//! `None`, read through the mapping's own `in` and `[]`; a path through `normalize_path`).
//!
//! The step's values: the draft's fields, then what the mapper decided (`index`, `kind`,
//! `path`, `content`, `command`, `status`), `arguments` split into the dict (a copy when
//! anything besides the draft holds it, `sole`) or, for any other value, `arguments_raw`
//! (a `str` as it is, anything else through `parse_string`), the span's times unless the
//! step was synthesized, `source` (a `SpanRef` of the span's own trace id, else the
//! trajectory's, and its span id), the convention file, `redacted` sorted into a tuple and
//! the draft's `attributes` (a copy when anything besides the draft holds them).
//!
//! When every value has exactly its field's type (each draft field in `field_types`, of
//! that exact type or `None`; integer span times; `arguments_raw` an exact `str` or
//! `None`), the record is made as `Step.from_normalized` makes it: the values over the
//! field defaults, in declared order, set as the instance's `__dict__` (records are plain
//! classes, see `model/_record.py`). Otherwise the values are returned as a `dict` for the
//! caller to validate (`Step(**values)`), so an unusual value ends exactly as validation
//! says. `SpanRef`s likewise: two exact `str` ids are trusted (set as the record's two
//! attributes, so it has no `dict` of its own until one is asked for), anything else
//! validated.

use crate::draft::{
    draft_attr, draft_held, ATTRIBUTES, FIELDS, FOLLOWS, KIND, REDACTED, RULE, SPAN, STATUS,
    SYNTHESIZED,
};
use crate::parsers::dict_set;
use crate::slots::{blank, object_new, span, span_held, Held};
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyInt, PyList, PySet, PyString, PyTuple, PyType};
use std::sync::{Arc, Mutex, PoisonError};

/// What a tool call's kind is read with: `(tool_class, normalize_path, path keys, content
/// keys, command keys)`.
type ToolHooks = (
    Py<PyAny>,
    Py<PyAny>,
    Vec<Py<PyString>>,
    Vec<Py<PyString>>,
    Vec<Py<PyString>>,
);

#[pyclass(module = "otel_oracles._native", name = "StepBuilder", frozen)]
pub struct StepBuilder {
    step: Py<PyType>,
    span_ref: Py<PyType>,
    /// `Step`'s fields with their defaults, in declared order (`Record._template`; the one
    /// default factory, `attributes`, is always given here).
    template: Py<PyDict>,
    /// The template of each step shape (kind, status, convention) met, by the three
    /// objects' addresses (`take_shape`); a shape being filled is out of its slot.
    shapes: Mutex<Vec<ShapeSlot>>,
    /// Tool call kinds remembered per exact names, rule and `tool_kinds` (`tool_kind`).
    tools_seen: Mutex<Vec<Option<ToolSeen>>>,
    /// Draft field name -> the exact type its value must have, or `None` for any value.
    field_types: Py<PyDict>,
    /// The same, as a list found by the name's identity first (the drafts' field names are
    /// the same `str` objects every time): `field_slots` maps a name's address to its entry.
    field_list: Vec<(Py<PyAny>, Py<PyAny>)>,
    field_slots: FieldSlots,
    /// `object`'s `tp_new` (`object.__new__` without its method wrapper).
    object_new: ffi::newfunc,
    /// `Step`'s `tp_alloc` (`dict_record`).
    step_alloc: ffi::allocfunc,
    parse_string: Py<PyAny>,
    /// `StepKind` by value, and the class itself for any other value (its `ValueError`).
    kinds: Py<PyDict>,
    kind_cls: Py<PyAny>,
    tool_call: Py<PyAny>,
    file_edit: Py<PyAny>,
    /// `_tool_class` (remembered per exact `str` names) and its `__wrapped__`, for names of
    /// any other type.
    tool_class: Py<PyAny>,
    tool_class_any: Py<PyAny>,
    normalize_path: Py<PyAny>,
    path_keys: Vec<Py<PyString>>,
    content_keys: Vec<Py<PyString>>,
    command_keys: Vec<Py<PyString>>,
}

/// A remembered step shape: the addresses of its kind, status and convention (which its
/// template holds), and the shape, `None` while a step is being filled from it.
type ShapeSlot = ([usize; 3], Option<Box<Shape>>);

/// Most step shapes (kind, status, convention) whose templates `StepBuilder` keeps.
const MAX_SHAPES: usize = 256;

/// Slots of [`FieldSlots`] (a power of two, at least twice the step's field count).
const FIELD_SLOTS: usize = 128;

/// An open-addressed table from a draft field name's address to its index in
/// `StepBuilder::field_list`, which holds the names (so no other object can take one of
/// those addresses while the table exists). A name found here is the very object the table
/// was built from; any other object misses and is looked up by value.
struct FieldSlots {
    /// Per slot: the entry's index plus one, 0 for an empty slot.
    slots: [u8; FIELD_SLOTS],
    /// Per slot: the name's address.
    names: [usize; FIELD_SLOTS],
}

impl FieldSlots {
    fn new(names: impl Iterator<Item = usize>) -> PyResult<Self> {
        let mut table = Self {
            slots: [0; FIELD_SLOTS],
            names: [0; FIELD_SLOTS],
        };
        for (index, address) in names.enumerate() {
            let entry = u8::try_from(index + 1)
                .ok()
                .filter(|_| index < FIELD_SLOTS / 2)
                .ok_or_else(|| pyo3::exceptions::PyValueError::new_err("too many draft fields"))?;
            let mut slot = Self::slot(address);
            while table.slots[slot] != 0 {
                slot = (slot + 1) & (FIELD_SLOTS - 1);
            }
            table.slots[slot] = entry;
            table.names[slot] = address;
        }
        Ok(table)
    }

    /// The home slot of an address (objects are 16-byte aligned: the low bits carry nothing).
    fn slot(address: usize) -> usize {
        (address >> 4).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            >> (usize::BITS - FIELD_SLOTS.trailing_zeros())
    }

    /// The index of the entry whose name is the object at `address`.
    fn find(&self, address: usize) -> Option<usize> {
        let mut slot = Self::slot(address);
        loop {
            match self.slots[slot] {
                0 => return None,
                entry if self.names[slot] == address => return Some(usize::from(entry) - 1),
                _ => slot = (slot + 1) & (FIELD_SLOTS - 1),
            }
        }
    }
}

/// A step shape's template: `Step`'s defaults with a kind, status and convention set, and
/// in a draft field's place the object that field had in the shape's steps lately, when it
/// is a small immutable one (`holdable`: a short `str`, an `int`, a `bool`). A step's dict
/// is a copy, and a draft value that is the object held is not put in again: the copy holds
/// it already, so the step's dict is the one it always was, object for object.
/// `PyDict_SetItem` into a copy is ~200 instructions of CPython's, and the limited API has
/// nothing cheaper, so fewer are put in. A step's agent, conversation, provider and model
/// are mostly the very object the shape's step before had (the decoder's attribute
/// templates give a repeated short value as the object they hold); a field whose held
/// object a draft lacks is put back to `None`.
///
/// Objects are compared by address only: an equal `str` that is another object is put in
/// (a content comparison cost more than it saved, hits by content being ~2% of them), and
/// no value is shared that the steps did not share before. A held object is alive (the
/// template holds it), so no other object has its address; the value met last is kept by
/// address alone: an address reused by another object is at worst learnt (one set into the
/// template), never taken for the held one.
struct Shape {
    /// The shape's template: never handed out, changed only by `Shape::learn`.
    template: Py<PyDict>,
    /// Bit `i`: the template holds an object other than `None` in the place of draft field
    /// `i` (`StepBuilder::field_list`), the one at address `values[i]`.
    held: u64,
    values: Vec<usize>,
    /// Per draft field, the address of the value its place had last time it was not the
    /// one held (`None`'s for a draft without it; 0 at first). Not a reference.
    last: Vec<usize>,
}

/// Whether `value` is an object a shape's template may hold: `None`, a `bool`, an exact
/// `int`, an exact `str` of up to `HELD_MAX_CHARS` code points, so that a template keeps
/// little memory, is never tracked by the garbage collector, shares nothing mutable and
/// runs no Python code when it lets a value go.
fn holdable(value: *mut ffi::PyObject) -> bool {
    // SAFETY: `value` is a live object: its type is read, and a `str`'s length.
    unsafe {
        let kind = ffi::Py_TYPE(value);
        value == ffi::Py_None()
            || kind == std::ptr::addr_of_mut!(ffi::PyBool_Type)
            || kind == std::ptr::addr_of_mut!(ffi::PyLong_Type)
            || (kind == std::ptr::addr_of_mut!(ffi::PyUnicode_Type)
                && ffi::PyUnicode_GetLength(value) <= HELD_MAX_CHARS)
    }
}

/// Longest `str` a shape's template holds, in code points: names, ids, models.
const HELD_MAX_CHARS: ffi::Py_ssize_t = 64;

impl Shape {
    /// Called for a value `value` put into a copy in draft field `index`'s place (`name`)
    /// because the template does not hold it (`None` for a held value the draft lacks):
    /// when it is the object met there last time too, and `holdable`, the template holds
    /// it from now on (a value that changes from trace to trace and then stays), else it is
    /// remembered as met last.
    #[inline]
    fn learn(
        &mut self,
        py: Python<'_>,
        index: usize,
        name: *mut ffi::PyObject,
        value: *mut ffi::PyObject,
    ) -> PyResult<()> {
        if self.last[index] != value as usize {
            self.last[index] = value as usize;
            return Ok(());
        }
        if !holdable(value) {
            return Ok(());
        }
        // SAFETY: the template is a live dict that holds every field (a replacement: no
        // insertion, no resize) and `name` a field's `str`; the value it replaces is
        // `holdable`, whose release runs no Python code.
        if unsafe { ffi::PyDict_SetItem(self.template.as_ptr(), name, value) } < 0 {
            return Err(PyErr::fetch(py));
        }
        let bit = 1u64 << index;
        // SAFETY: `Py_None` is the address of the `None` singleton.
        if value == unsafe { ffi::Py_None() } {
            self.held &= !bit;
        } else {
            self.held |= bit;
            self.values[index] = value as usize;
        }
        Ok(())
    }
}

/// Refuses a record class whose instances `StepBuilder::record` could not make as
/// `object.__new__` does: one with a `__new__` of its own, or without an instance `__dict__`.
fn plain_record(cls: &Bound<'_, PyType>) -> PyResult<()> {
    let py = cls.py();
    let object_new = py
        .import("builtins")?
        .getattr("object")?
        .getattr(intern!(py, "__new__"))?;
    let own_new = !cls.getattr(intern!(py, "__new__"))?.is(&object_new);
    let has_dict = cls
        .getattr(intern!(py, "__dictoffset__"))?
        .extract::<isize>()?
        != 0;
    if own_new || !has_dict {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "{}: a record class needs object.__new__ and an instance __dict__",
            cls.name()?
        )));
    }
    Ok(())
}

/// `object.__setattr__(record, name, value)`: `PyObject_GenericSetAttr`, past the record
/// class's own `__setattr__` (which refuses, records being frozen).
fn set_field(
    record: &Bound<'_, PyAny>,
    name: &Bound<'_, PyString>,
    value: &Bound<'_, PyAny>,
) -> PyResult<()> {
    // SAFETY: three live objects; the call takes its own reference to `value` and returns
    // -1 with an exception set on failure.
    let set =
        unsafe { ffi::PyObject_GenericSetAttr(record.as_ptr(), name.as_ptr(), value.as_ptr()) };
    if set < 0 {
        return Err(PyErr::fetch(record.py()));
    }
    Ok(())
}

/// A class's `tp_alloc` (`PyType_GenericAlloc` for a class defined in Python), for
/// `dict_record`.
fn record_alloc(cls: &Bound<'_, PyType>) -> PyResult<ffi::allocfunc> {
    // SAFETY: `cls` is a live class; reading a slot is supported for any class from CPython
    // 3.10 (the module needs 3.11). A slot is a function pointer or NULL, and `Option<fn>`
    // has the pointer's layout.
    let slot: Option<ffi::allocfunc> =
        unsafe { std::mem::transmute(ffi::PyType_GetSlot(cls.as_type_ptr(), ffi::Py_tp_alloc)) };
    slot.ok_or_else(|| pyo3::exceptions::PyTypeError::new_err("a record class without tp_alloc"))
}

/// A record of class `cls` (a `plain_record`, whose `tp_alloc` is `alloc`) whose `__dict__`
/// is `values`: what `object.__new__(cls)` then `object.__setattr__(record, "__dict__",
/// values)` make.
///
/// The instance comes from the class's `tp_alloc` itself, which is all `object.__new__`
/// does for a class that is not abstract besides preparing the instance's inline attribute
/// values (CPython 3.11 and 3.12; from 3.13 `tp_alloc` prepares them itself): setting
/// `__dict__` at once would first turn those empty values into a `dict` and then free it
/// (~340 instructions a record on 3.11), and an instance without them (its dict pointer
/// empty, as `tp_alloc` leaves it) takes the `__dict__` directly. Either way the record
/// ends the same: its `__dict__` is `values`, no inline values. `__dict__` is set with
/// `PyObject_GenericSetAttr` (`object.__setattr__` itself), through the class's own
/// `__dict__` descriptor; not `PyObject_GenericSetDict`: on CPython 3.13 it swaps the dict
/// without retiring the instance's inline values, so attribute reads keep finding the empty
/// ones. An abstract class goes through `object.__new__`, which refuses it.
fn dict_record<'py>(
    alloc: ffi::allocfunc,
    cls: &Bound<'py, PyType>,
    values: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = cls.py();
    // SAFETY: `cls` is a live class; its flags are only read.
    let flags = unsafe { ffi::PyType_GetFlags(cls.as_type_ptr()) };
    let record = if flags & ffi::Py_TPFLAGS_IS_ABSTRACT != 0 {
        blank(object_new()?, cls)?
    } else {
        // SAFETY: `alloc` is `cls`'s own `tp_alloc` (`record_alloc`), called as `object.__new__`
        // calls it (no items); it returns a new, zeroed, GC-tracked instance or NULL with an
        // exception set.
        unsafe { Bound::from_owned_ptr_or_err(py, alloc(cls.as_type_ptr(), 0))? }
    };
    set_field(&record, intern!(py, "__dict__"), values.as_any())?;
    Ok(record)
}

/// `first_key(mapping, keys)`: the value of the first key present whose value is not `None`,
/// through the mapping's own `in` and `[]`.
fn first_key<'py>(
    mapping: &Bound<'py, PyAny>,
    keys: &[Py<PyString>],
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = mapping.py();
    for key in keys {
        let key = key.bind(py);
        if mapping.contains(key)? {
            let value = mapping.get_item(key)?;
            if !value.is_none() {
                return Ok(Some(value));
            }
        }
    }
    Ok(None)
}

/// A value as text: a `str` (or subclass) as it is, anything else through `str()`.
fn as_text<'py>(value: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if value.is_instance_of::<PyString>() {
        Ok(value)
    } else {
        Ok(value.str()?.into_any())
    }
}

impl StepBuilder {
    /// A `Step` whose `__dict__` is `values` (complete, in declared order): what
    /// `from_normalized`'s `object.__new__(cls)` and `object.__setattr__(record,
    /// "__dict__", values)` make, through the C API rather than two Python calls
    /// (`dict_record`).
    fn record<'py>(&self, values: Bound<'py, PyDict>) -> PyResult<Bound<'py, PyAny>> {
        dict_record(self.step_alloc, self.step.bind(values.py()), &values)
    }

    /// The exact type draft field `name`'s value must have (`None`: any), or `None` when
    /// `name` is no step field.
    fn field_type<'py>(&self, name: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = name.py();
        if let Some(index) = self.field_slots.find(name.as_ptr() as usize) {
            return Ok(Some(self.field_list[index].1.bind(py).clone()));
        }
        self.field_types.bind(py).get_item(name)
    }

    /// `values` (a copy of `shape`'s template) with every draft field whose value is not
    /// `None`, except `arguments` (the caller's), and `None` in the place of a field the
    /// template holds a value for that the draft lacks; `false`, with `values` left
    /// part-filled, as soon as a field's value is not exactly of its field's type (or
    /// `None`), or a field is no step field: validation then decides the step. A value the
    /// template holds (`Shape`) is not put in again; one it does not is, and is learnt.
    ///
    /// The drafts' field names are the very `str` objects of `field_list`, so the walk
    /// borrows the dict's items (`PyDict_Next`) and compares types by address, running no
    /// Python code; a name found only by value sends the whole walk through
    /// `set_draft_fields_any`, which reads the dict as any mapping's items are read.
    fn set_draft_fields(
        &self,
        fields: &Bound<'_, PyDict>,
        values: &Bound<'_, PyDict>,
        shape: &mut Shape,
    ) -> PyResult<bool> {
        let py = fields.py();
        let arguments_key = intern!(py, "arguments").as_ptr();
        // SAFETY: `Py_None` is the address of the `None` singleton.
        let none = unsafe { ffi::Py_None() };
        let mut pos: ffi::Py_ssize_t = 0;
        let mut name: *mut ffi::PyObject = std::ptr::null_mut();
        let mut value: *mut ffi::PyObject = std::ptr::null_mut();
        // Bit `i`: draft field `i` has a value here.
        let mut given = 0u64;
        // SAFETY: `fields` is a live dict; the references `PyDict_Next` lends stay valid while
        // the dict is not changed, and nothing in the loop runs Python code: a name is one of
        // `field_list`'s exact `str`s (found by address), a type and a held value are
        // compared by address, and `PyDict_SetItem` with such a name replaces the template's
        // value (`None`, or a `holdable` one the template also holds: `new` checks every
        // draft field's default is `None`), taking its own reference to the value and making
        // no object (the template holds every field: no insertion, no resize); `learn` sets
        // only a `holdable` value into the template, replacing another such. This walk is
        // `StepBuilder::make`'s hottest loop: it stays on the bare lent walk.
        while unsafe { ffi::PyDict_Next(fields.as_ptr(), &mut pos, &mut name, &mut value) } != 0 {
            let Some(index) = self.field_slots.find(name as usize) else {
                return self.set_draft_fields_any(fields, values, shape);
            };
            if value == none {
                continue;
            }
            let expected = self.field_list[index].1.as_ptr();
            // SAFETY: `value` is a live object (above).
            if expected != none
                && unsafe { ffi::Py_TYPE(value) }.cast::<ffi::PyObject>() != expected
            {
                return Ok(false);
            }
            if name == arguments_key {
                continue;
            }
            let bit = 1u64 << index;
            given |= bit;
            if shape.held & bit != 0 && shape.values[index] == value as usize {
                continue;
            }
            // SAFETY: as above.
            if unsafe { ffi::PyDict_SetItem(values.as_ptr(), name, value) } < 0 {
                return Err(PyErr::fetch(py));
            }
            shape.learn(py, index, name, value)?;
        }
        let mut lacking = shape.held & !given;
        while lacking != 0 {
            let index = lacking.trailing_zeros() as usize;
            lacking &= lacking - 1;
            let name = self.field_list[index].0.as_ptr();
            // SAFETY: as above (the value replaced is `holdable`).
            if unsafe { ffi::PyDict_SetItem(values.as_ptr(), name, none) } < 0 {
                return Err(PyErr::fetch(py));
            }
            shape.learn(py, index, name, none)?;
        }
        Ok(true)
    }

    /// `set_draft_fields` for a draft whose field names are not all `field_list`'s own
    /// objects: every value the template holds put back to `None` first (nothing learnt),
    /// then each name looked up by value (`field_types`), its value's type compared.
    fn set_draft_fields_any(
        &self,
        fields: &Bound<'_, PyDict>,
        values: &Bound<'_, PyDict>,
        shape: &Shape,
    ) -> PyResult<bool> {
        let py = fields.py();
        let mut held = shape.held;
        while held != 0 {
            let index = held.trailing_zeros() as usize;
            held &= held - 1;
            dict_set(
                values,
                self.field_list[index].0.bind(py),
                &py.None().into_bound(py),
            )?;
        }
        let arguments_key = intern!(py, "arguments");
        for (name, value) in fields.iter() {
            let Some(expected) = self.field_type(&name)? else {
                return Ok(false);
            };
            if value.is_none() {
                continue;
            }
            if !expected.is_none() && !value.get_type().is(&expected) {
                return Ok(false);
            }
            if !name.is(arguments_key) {
                dict_set(values, &name, &value)?;
            }
        }
        Ok(true)
    }

    /// The shape of a step of this `kind`, `status` and `convention` (`Shape`), taken out
    /// of its slot (`put_shape` puts it back there) or made now: `Step`'s defaults with
    /// those three set, made once per shape (a run's steps have a few dozen) so each step's
    /// `dict` takes three values fewer one by one. Shapes are remembered by the three
    /// objects' addresses, which cannot be reused while the remembered template holds them;
    /// past `MAX_SHAPES`, or while the shape's own is out of its slot (a step made inside
    /// another's), a shape is made for the step alone (no slot: not put back).
    fn take_shape(
        &self,
        kind: &Bound<'_, PyAny>,
        status: &Bound<'_, PyAny>,
        convention: &Bound<'_, PyAny>,
    ) -> PyResult<(Box<Shape>, Option<usize>)> {
        let key = [kind.as_ptr(), status.as_ptr(), convention.as_ptr()].map(|p| p as usize);
        let known = {
            let mut shapes = self.shapes.lock().unwrap_or_else(PoisonError::into_inner);
            shapes
                .iter_mut()
                .position(|(shape, _)| *shape == key)
                .map(|at| (at, shapes[at].1.take()))
        };
        match known {
            Some((at, Some(shape))) => return Ok((shape, Some(at))),
            Some((_, None)) => return Ok((self.new_shape(kind, status, convention)?, None)),
            None => {}
        }
        let shape = self.new_shape(kind, status, convention)?;
        let mut shapes = self.shapes.lock().unwrap_or_else(PoisonError::into_inner);
        if shapes.len() < MAX_SHAPES && !shapes.iter().any(|(shape, _)| *shape == key) {
            shapes.push((key, None));
            return Ok((shape, Some(shapes.len() - 1)));
        }
        Ok((shape, None))
    }

    /// `take_shape`'s shape back into its slot `at` (slots are only ever added); `None`:
    /// the step's alone, dropped.
    fn put_shape(&self, shape: Box<Shape>, at: Option<usize>) {
        let Some(at) = at else {
            return;
        };
        let replaced = self.shapes.lock().unwrap_or_else(PoisonError::into_inner)[at]
            .1
            .replace(shape);
        // None: a step made inside another takes no kept shape (`take_shape`).
        drop(replaced);
    }

    /// A new shape: `Step`'s defaults with this `kind`, `status` and `convention`, holding
    /// nothing else yet.
    fn new_shape(
        &self,
        kind: &Bound<'_, PyAny>,
        status: &Bound<'_, PyAny>,
        convention: &Bound<'_, PyAny>,
    ) -> PyResult<Box<Shape>> {
        let py = kind.py();
        let template = self.template.bind(py).copy()?;
        dict_set(&template, intern!(py, "kind"), kind)?;
        dict_set(&template, intern!(py, "status"), status)?;
        dict_set(&template, intern!(py, "convention"), convention)?;
        Ok(Box::new(Shape {
            template: template.unbind(),
            held: 0,
            values: vec![0; self.field_list.len()],
            last: vec![0; self.field_list.len()],
        }))
    }

    /// The step's `source`: `SpanRef(trace_id, span_id)`, trusted for two exact `str`s.
    ///
    /// Made as `object.__new__(cls)` then `object.__setattr__` of each field, in declared
    /// order, rather than with a `__dict__` of its own: the two values go into the
    /// instance's own attribute storage (CPython's inline values, keys shared by every
    /// `SpanRef`), and a `dict` is made only when something reads the record's `__dict__`
    /// (equality, a dump, `vars()`), which for most steps' source nothing does. `vars()`
    /// and `__dict__` show the same two items in the same order as a validated record's.
    fn source<'py>(
        &self,
        trace_id: &Bound<'py, PyAny>,
        span_id: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = trace_id.py();
        let cls = self.span_ref.bind(py);
        let (trace_key, span_key) = (intern!(py, "trace_id"), intern!(py, "span_id"));
        if trace_id.is_exact_instance_of::<PyString>() && span_id.is_exact_instance_of::<PyString>()
        {
            let record = blank(self.object_new, cls)?;
            set_field(&record, trace_key, trace_id)?;
            set_field(&record, span_key, span_id)?;
            return Ok(record);
        }
        let values = PyDict::new(py);
        values.set_item(trace_key, trace_id)?;
        values.set_item(span_key, span_id)?;
        cls.call((), Some(&values))
    }
}

#[pymethods]
impl StepBuilder {
    /// `step`, `span_ref`: the record classes; `field_types`: per draft field the exact type
    /// of its value, `None` for any; `parse_string`: the string parser; `kind_cls`: `StepKind`;
    /// `tool_hooks`: `(tool_class, normalize_path, PATH_KEYS, CONTENT_KEYS, COMMAND_KEYS)`.
    #[new]
    fn new(
        step: Bound<'_, PyType>,
        span_ref: Bound<'_, PyType>,
        field_types: Bound<'_, PyDict>,
        parse_string: Py<PyAny>,
        kind_cls: Bound<'_, PyAny>,
        tool_hooks: ToolHooks,
    ) -> PyResult<Self> {
        let py = step.py();
        let kinds = PyDict::new(py);
        for member in kind_cls.try_iter()? {
            let member = member?;
            kinds.set_item(member.getattr(intern!(py, "value"))?, &member)?;
        }
        let member = |name: &str| -> PyResult<Py<PyAny>> {
            kinds
                .get_item(name)?
                .map(Bound::unbind)
                .ok_or_else(|| pyo3::exceptions::PyValueError::new_err(name.to_owned()))
        };
        let tool_call = member("tool_call")?;
        let file_edit = member("file_edit")?;
        let (tool_class, normalize_path, path_keys, content_keys, command_keys) = tool_hooks;
        let tool_class_any = tool_class.bind(py).getattr("__wrapped__")?.unbind();
        let template = step.getattr("_template")?.cast_into::<PyDict>()?.copy()?;
        plain_record(&step)?;
        plain_record(&span_ref)?;
        let step_alloc = record_alloc(&step)?;
        // `source` sets a `SpanRef`'s two fields one by one, in this order.
        let span_fields: Vec<String> = span_ref
            .getattr("model_fields")?
            .cast_into::<PyDict>()?
            .keys()
            .extract()?;
        if span_fields != ["trace_id", "span_id"] {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "SpanRef fields {span_fields:?}, expected trace_id and span_id"
            )));
        }
        // `build` leaves out a draft field whose value is `None`: its default must be `None`.
        for name in field_types.keys() {
            if !template.get_item(&name)?.is_some_and(|d| d.is_none()) {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "draft field {name} has no default of None"
                )));
            }
        }
        let field_list: Vec<(Py<PyAny>, Py<PyAny>)> = field_types
            .iter()
            .map(|(name, expected)| (name.unbind(), expected.unbind()))
            .collect();
        let field_slots =
            FieldSlots::new(field_list.iter().map(|(name, _)| name.as_ptr() as usize))?;
        Ok(Self {
            step: step.unbind(),
            span_ref: span_ref.unbind(),
            template: template.unbind(),
            shapes: Mutex::new(Vec::new()),
            tools_seen: Mutex::new((0..TOOL_SLOTS).map(|_| None).collect()),
            field_types: field_types.unbind(),
            field_list,
            field_slots,
            object_new: object_new()?,
            step_alloc,
            parse_string,
            kinds: kinds.unbind(),
            kind_cls: kind_cls.unbind(),
            tool_call,
            file_edit,
            tool_class,
            tool_class_any,
            normalize_path,
            path_keys,
            content_keys,
            command_keys,
        })
    }

    /// Every step of a trace, from its `drafts` in order (each followed by its `follows`);
    /// `trace_id`: the trajectory's; `tool_kinds`: `(file, rule id)` -> the rule's own file
    /// and shell tools. A step whose values are not all of their fields' exact types is made
    /// by `Step(**values)`, so validation decides it.
    fn build_steps<'py>(
        &self,
        drafts: &Bound<'py, PyList>,
        trace_id: &Bound<'py, PyAny>,
        tool_kinds: &Bound<'py, PyDict>,
    ) -> PyResult<Bound<'py, PyList>> {
        let py = drafts.py();
        let steps = PyList::empty(py);
        let mut index = 0usize;
        let mut files = Files::default();
        for draft in drafts.iter() {
            self.push_step(&draft, &mut index, trace_id, tool_kinds, &mut files, &steps)?;
            let follows = draft_held(&draft, FOLLOWS, intern!(py, "follows"))?;
            for follow in follows.cast::<PyList>()?.iter() {
                self.push_step(
                    &follow, &mut index, trace_id, tool_kinds, &mut files, &steps,
                )?;
            }
        }
        Ok(steps)
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
        self.make(
            index,
            kind,
            fields,
            status,
            span,
            synthesized,
            redacted,
            attributes,
            convention,
            trace_id,
            path,
            content,
            command,
            None,
        )
    }
}

/// Whether `dict` may go into a step as it is rather than as a copy: an exact `dict` with
/// `references` references, those the caller knows of (its draft's, and the caller's own
/// when it holds one). Then no message part, other draft or step made before holds it: a
/// linked call's arguments, which a model call's output message also holds, are copied, so
/// they stay independent of that part, as ever. The draft itself goes when the trace's
/// mapping returns, nothing reading it after its step is made (`map_trace`), so the step is
/// the one holder left, as with a copy, without making one and freeing the draft's.
fn sole(dict: &Bound<'_, PyAny>, references: isize) -> bool {
    // SAFETY: `dict` is a live object; its reference count is only read.
    dict.is_exact_instance_of::<PyDict>() && unsafe { ffi::Py_REFCNT(dict.as_ptr()) } == references
}

impl StepBuilder {
    /// `build`, with `attributes` and the draft's `arguments` dict taken as they are (not
    /// copied) when nothing but the draft holds them (`sole`; `take`: the references to
    /// `attributes` the caller knows of, the draft's and its own): how `build_steps` makes
    /// its steps. `build` called from Python (`take` `None`) copies both, as its caller
    /// may keep and change them.
    #[allow(clippy::too_many_arguments)]
    fn make<'py>(
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
        take: Option<isize>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = fields.py();
        let none = py.None().into_bound(py);
        let take_attributes = take.is_some_and(|references| sole(attributes.as_any(), references));
        let mut arguments = fields
            .get_item(intern!(py, "arguments"))?
            .unwrap_or_else(|| none.clone());
        let mut arguments_raw = none.clone();
        if !arguments.is_none() {
            if let Ok(dict) = arguments.cast::<PyDict>() {
                // A copy unless only the draft's fields and this call hold it (`sole`, two
                // references): a linked call's arguments stay independent of the message
                // part they came from.
                if !(take.is_some() && sole(&arguments, 2)) {
                    arguments = dict.copy()?.into_any();
                }
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
            let start = span_held(span, span::START_NS, intern!(py, "start_ns"))?;
            let end = span_held(span, span::END_NS, intern!(py, "end_ns"))?;
            let typed =
                start.is_exact_instance_of::<PyInt>() && end.is_exact_instance_of::<PyInt>();
            if synthesized.is_truthy()? {
                (none.clone(), none.clone(), typed)
            } else {
                (start.into_bound(), end.into_bound(), typed)
            }
        };
        let source = if span.is_none() {
            none.clone()
        } else {
            // A run joined from several traces keeps each step's own trace id.
            let own = span_held(span, span::TRACE_ID, intern!(py, "trace_id"))?;
            let trace = if own.is_truthy()? { &*own } else { trace_id };
            self.source(
                trace,
                &*span_held(span, span::SPAN_ID, intern!(py, "span_id"))?,
            )?
        };
        let redacted = if redacted.is_empty() {
            PyTuple::empty(py)
        } else {
            let names = PyList::new(py, redacted.iter())?;
            names.sort()?;
            names.to_tuple()
        };
        // The shape's template (the defaults with this kind, status and convention, and the
        // draft values it holds: `Shape`) copied, then only the values that differ from it:
        // the draft fields it does not hold (`set_draft_fields`); `arguments`,
        // `arguments_raw`, the times, `path`, `content`, `command` and `source` default to
        // `None`, `synthesized` to `False`, `redacted` to the empty tuple (one object,
        // `PyTuple::empty`'s), so a value identical to its default is already in place. The
        // draft's fields are checked as they are set.
        let (mut shape, slot) = self.take_shape(kind, status, convention)?;
        let filled = shape.template.bind(py).copy().and_then(|values| {
            let well_typed = times_typed
                && (arguments_raw.is_none() || arguments_raw.is_exact_instance_of::<PyString>())
                && self.set_draft_fields(fields, &values, &mut shape)?;
            Ok((values, well_typed))
        });
        self.put_shape(shape, slot);
        let (values, well_typed) = filled?;
        if !well_typed {
            // Every value given, for `Step(**values)` to validate.
            let values = PyDict::new(py);
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
            return Ok(values.into_any());
        }
        let arguments_key = intern!(py, "arguments");
        dict_set(&values, intern!(py, "index"), index)?;
        if take_attributes {
            dict_set(&values, intern!(py, "attributes"), attributes)?;
        } else {
            dict_set(&values, intern!(py, "attributes"), &attributes.copy()?)?;
        }
        for (name, value) in [
            (arguments_key, &arguments),
            (intern!(py, "arguments_raw"), &arguments_raw),
            (intern!(py, "start_ns"), &start),
            (intern!(py, "end_ns"), &end),
            (intern!(py, "path"), path),
            (intern!(py, "content"), content),
            (intern!(py, "command"), command),
            (intern!(py, "source"), &source),
        ] {
            if !value.is_none() {
                dict_set(&values, name, value)?;
            }
        }
        if !synthesized.is(PyBool::new(py, false)) {
            dict_set(&values, intern!(py, "synthesized"), synthesized)?;
        }
        if !redacted.is(PyTuple::empty(py)) {
            dict_set(&values, intern!(py, "redacted"), &redacted)?;
        }
        self.record(values)
    }

    /// Step number `index` from `draft`, appended to `steps`.
    fn push_step<'py>(
        &self,
        draft: &Bound<'py, PyAny>,
        index: &mut usize,
        trace_id: &Bound<'py, PyAny>,
        tool_kinds: &Bound<'py, PyDict>,
        files: &mut Files<'py>,
        steps: &Bound<'py, PyList>,
    ) -> PyResult<()> {
        let py = draft.py();
        let none = py.None().into_bound(py);
        let name = draft_attr(draft, KIND, intern!(py, "kind"))?;
        let mut kind = match self.kinds.bind(py).get_item(&name)? {
            Some(kind) => kind,
            None => self.kind_cls.bind(py).call1((&name,))?,
        };
        let fields = draft_held(draft, FIELDS, intern!(py, "fields"))?.cast_into::<PyDict>()?;
        let attributes =
            draft_held(draft, ATTRIBUTES, intern!(py, "attributes"))?.cast_into::<PyDict>()?;
        let rule = draft_held(draft, RULE, intern!(py, "rule"))?;
        let (mut path, mut content, mut command) = (none.clone(), none.clone(), none.clone());
        if kind.is(self.tool_call.bind(py)) {
            kind = self.tool_kind(&fields, &attributes, &rule, tool_kinds)?;
            if !kind.is(self.tool_call.bind(py)) {
                if let Some(arguments) = fields.get_item(intern!(py, "arguments"))? {
                    if arguments.is_instance_of::<PyDict>() {
                        if kind.is(self.file_edit.bind(py)) {
                            if let Some(raw) = first_key(&arguments, &self.path_keys)? {
                                path = self.normalize_path.bind(py).call1((raw.str()?,))?;
                            }
                            if let Some(raw) = first_key(&arguments, &self.content_keys)? {
                                content = as_text(raw)?;
                            }
                        } else if let Some(raw) = first_key(&arguments, &self.command_keys)? {
                            command = as_text(raw)?;
                        }
                    }
                }
            }
        }
        let built = self.make(
            &PyInt::new(py, *index).into_any(),
            &kind,
            &fields,
            &draft_attr(draft, STATUS, intern!(py, "status"))?,
            &*draft_held(draft, SPAN, intern!(py, "span"))?,
            &*draft_held(draft, SYNTHESIZED, intern!(py, "synthesized"))?,
            draft_attr(draft, REDACTED, intern!(py, "redacted"))?.cast::<PySet>()?,
            &attributes,
            &files.of(&rule)?,
            trace_id,
            &path,
            &content,
            &command,
            // The draft's reference, and `draft_held`'s own unless borrowed (the mapper's
            // `Draft`, read in its memory).
            Some(match attributes {
                Held::Borrowed(_) => 1,
                Held::Owned(_) => 2,
            }),
        )?;
        *index += 1;
        let step = match built.cast::<PyDict>() {
            Ok(values) => self.step.bind(py).call((), Some(values))?,
            Err(_) => built,
        };
        steps.append(step)
    }

    /// A tool call's kind: `tool_class(tool, served, own)`, with `served` the name the MCP
    /// server ran it under (`attributes["mcp_tool"]`) and `own` its rule's own tools.
    ///
    /// For exact `str` names the kind is remembered in `tools_seen` by the addresses of the
    /// name, the served name, the rule and `tool_kinds` (names of up to 64 bytes are one
    /// object per body, so a body's calls of a tool share one entry): `tool_class` is pure
    /// and a compiled set's rules and `tool_kinds` are not changed once compiled, so the
    /// same four objects give the same kind, and the entry holds them so that no other
    /// object takes their addresses while it is remembered.
    fn tool_kind<'py>(
        &self,
        fields: &Bound<'py, PyDict>,
        attributes: &Bound<'py, PyDict>,
        rule: &Bound<'py, PyAny>,
        tool_kinds: &Bound<'py, PyDict>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = fields.py();
        let none = py.None().into_bound(py);
        let tool = fields
            .get_item(intern!(py, "tool"))?
            .unwrap_or(none.clone());
        let served = attributes
            .get_item(intern!(py, "mcp_tool"))?
            .unwrap_or(none.clone());
        let exact = tool.is_exact_instance_of::<PyString>()
            && (served.is_none() || served.is_exact_instance_of::<PyString>());
        let held = [&tool, &served, rule, tool_kinds.as_any()];
        let key = held.map(|object| object.as_ptr() as usize);
        let slot = ToolSeen::slot(&key);
        if exact {
            let seen = self
                .tools_seen
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if let Some(entry) = seen[slot].as_ref().filter(|entry| entry.key == key) {
                return Ok(entry.kind.bind(py).clone());
            }
        }
        let own = if tool_kinds.is_empty() {
            none.clone()
        } else {
            let file_and_id = PyTuple::new(
                py,
                [
                    rule.getattr(intern!(py, "file"))?,
                    rule.getattr(intern!(py, "rule_id"))?,
                ],
            )?;
            tool_kinds.get_item(file_and_id)?.unwrap_or(none)
        };
        let class = if exact {
            &self.tool_class
        } else {
            &self.tool_class_any
        };
        let kind = class.bind(py).call1((&tool, &served, own))?;
        if exact {
            let entry = ToolSeen {
                key,
                _held: held.map(|object| object.clone().unbind()),
                kind: kind.clone().unbind(),
            };
            let replaced = {
                let mut seen = self
                    .tools_seen
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                seen[slot].replace(entry)
            };
            // Released outside the lock: the last reference to a rule may run its finalizer.
            drop(replaced);
        }
        Ok(kind)
    }
}

/// Slots of `StepBuilder::tools_seen` (a power of two).
const TOOL_SLOTS: usize = 512;

/// Each rule's `file` (the step's `convention`), read once per trace's steps rather than
/// once per step: a trace's drafts come from a few rules, found here by identity (each
/// held here, so no address is reused), and nothing while the steps are made changes a
/// rule.
#[derive(Default)]
struct Files<'py>(Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>);

impl<'py> Files<'py> {
    fn of(&mut self, rule: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        if let Some((_, file)) = self.0.iter().find(|(known, _)| known.is(rule)) {
            return Ok(file.clone());
        }
        let file = rule.getattr(intern!(rule.py(), "file"))?;
        self.0.push((rule.clone(), file.clone()));
        Ok(file)
    }
}

/// A remembered tool call kind (`StepBuilder::tool_kind`).
struct ToolSeen {
    /// The addresses of the tool name, the served name, the rule and `tool_kinds`.
    key: [usize; 4],
    /// Those four objects, held so that no other object takes their addresses.
    _held: [Py<PyAny>; 4],
    kind: Py<PyAny>,
}

impl ToolSeen {
    /// The slot of a key: the addresses mixed (objects are 16-byte aligned: the low bits
    /// carry nothing), a collision replacing the slot's entry.
    fn slot(key: &[usize; 4]) -> usize {
        let mixed = key.iter().fold(0usize, |acc, address| {
            (acc ^ (address >> 4)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        });
        mixed >> (usize::BITS - TOOL_SLOTS.trailing_zeros())
    }
}

/// `mapping`'s items as a new plain `dict` (`_compile.plain`): an exact `dict` copied, any
/// other mapping read through its keys and `[]`.
fn plain<'py>(mapping: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    if let Ok(dict) = mapping.cast_exact::<PyDict>() {
        return dict.copy();
    }
    let out = PyDict::new(mapping.py());
    for key in mapping.try_iter()? {
        let key = key?;
        let value = mapping.get_item(&key)?;
        out.set_item(key, value)?;
    }
    Ok(out)
}

/// `None`, or an exact `str`: a value `Trajectory.from_normalized` may take unvalidated.
fn none_or_str(value: &Bound<'_, PyAny>) -> bool {
    value.is_none() || value.is_exact_instance_of::<PyString>()
}

/// A trace's `Trajectory` (`cls`) around its built `steps` (`_mapper.map_trace`'s end):
/// the trace's and its root span's ids and name, the root's `service.name` when it is a
/// `str`, the first agent step's (`agent_kind`) non-empty `agent_name`, the span count and
/// orphans, `unmapped` and `used_files` (the coverage), the set's `final_answer_tools` and
/// `model_status` (`(errors, patterns)`), and plain copies of the root's resource and
/// attributes. Made as `cls.from_normalized` makes it when every id and name is `None` or an
/// exact `str` (by the core when `TrajectoryMold` accepts `cls`: the values over a copy of
/// its field defaults, set as a new instance's `__dict__`, without a Python frame), else by
/// `cls(**values)`, so validation decides an odd one.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn build_trajectory<'py>(
    cls: &Bound<'py, PyAny>,
    agent_kind: &Bound<'py, PyAny>,
    trace: &Bound<'py, PyAny>,
    steps: &Bound<'py, PyList>,
    unmapped: &Bound<'py, PyDict>,
    used_files: &Bound<'py, PyDict>,
    final_answer_tools: &Bound<'py, PyAny>,
    model_status: (Bound<'py, PyAny>, Bound<'py, PyAny>),
) -> PyResult<Bound<'py, PyAny>> {
    let py = cls.py();
    let none = py.None().into_bound(py);
    let mut agent_name = none.clone();
    for step in steps.iter() {
        let kind = step.getattr(intern!(py, "kind"))?;
        if kind.is(agent_kind) || kind.eq(agent_kind)? {
            let name = step.getattr(intern!(py, "agent_name"))?;
            if name.is_truthy()? {
                agent_name = name;
                break;
            }
        }
    }
    let root = trace.getattr(intern!(py, "root"))?;
    let (root_span_id, root_name, resource, root_attributes) = if root.is_none() {
        (none.clone(), none.clone(), PyDict::new(py), PyDict::new(py))
    } else {
        (
            root.getattr(intern!(py, "span_id"))?,
            root.getattr(intern!(py, "name"))?,
            plain(&root.getattr(intern!(py, "resource"))?)?,
            plain(&root.getattr(intern!(py, "attributes"))?)?,
        )
    };
    let service_name = resource
        .get_item(intern!(py, "service.name"))?
        .filter(|s| s.is_instance_of::<PyString>())
        .unwrap_or_else(|| none.clone());
    let trace_id = trace.getattr(intern!(py, "trace_id"))?;
    let mut trusted = [
        &trace_id,
        &root_span_id,
        &root_name,
        &service_name,
        &agent_name,
    ]
    .into_iter()
    .all(none_or_str);
    let orphans = PyList::empty(py);
    for span in trace.getattr(intern!(py, "orphans"))?.try_iter()? {
        let span_id = span?.getattr(intern!(py, "span_id"))?;
        trusted &= span_id.is_exact_instance_of::<PyString>();
        orphans.append(span_id)?;
    }
    // Filled in place of the defaults when the core makes the record (declared order kept).
    let mold = if trusted {
        TrajectoryMold::of(cls)?
    } else {
        None
    };
    let values = match &mold {
        Some(mold) => mold.template.bind(py).copy()?,
        None => PyDict::new(py),
    };
    // `trajectory_given`'s order.
    let given: [Bound<'py, PyAny>; GIVEN] = [
        steps.clone().into_any(),
        trace_id,
        root_span_id,
        root_name,
        service_name,
        agent_name,
        trace
            .getattr(intern!(py, "spans"))?
            .len()?
            .into_pyobject(py)?
            .into_any(),
        orphans.into_any(),
        trace.getattr(intern!(py, "incomplete"))?,
        unmapped.clone().into_any(),
        used_files.clone().into_any(),
        final_answer_tools.clone(),
        model_status.0,
        model_status.1,
        resource.into_any(),
        root_attributes.into_any(),
    ];
    for (name, value) in trajectory_given(py).iter().zip(given) {
        values.set_item(name.bind(py), value)?;
    }
    if let Some(mold) = mold {
        return dict_record(mold.alloc, cls.cast::<PyType>()?, &values);
    }
    if trusted {
        return cls.call_method1(intern!(py, "from_normalized"), (values,));
    }
    cls.call((), Some(&values))
}

/// How many values `build_trajectory` gives a trajectory.
const GIVEN: usize = 16;

/// The names `build_trajectory` gives a trajectory, in the order it sets them: the names
/// it sets and those `TrajectoryMold::new` checks the class's fields against are one list.
const TRAJECTORY_GIVEN: [&str; GIVEN] = [
    "steps",
    "trace_id",
    "root_span_id",
    "root_name",
    "service_name",
    "agent_name",
    "span_count",
    "orphan_spans",
    "incomplete",
    "unmapped_spans",
    "conventions",
    "final_answer_tools",
    "model_status_errors",
    "model_status_patterns",
    "resource",
    "root_attributes",
];

/// `TRAJECTORY_GIVEN`, each name interned once for the process (the keys every trajectory's
/// `__dict__` is made with, as `intern!` makes them).
fn trajectory_given(py: Python<'_>) -> &[Py<PyString>; GIVEN] {
    static GIVEN_NAMES: PyOnceLock<[Py<PyString>; GIVEN]> = PyOnceLock::new();
    GIVEN_NAMES.get_or_init(py, || {
        TRAJECTORY_GIVEN.map(|name| PyString::intern(py, name).unbind())
    })
}

/// What `Trajectory.from_normalized` does with `build_trajectory`'s values, known once per
/// class `build_trajectory` is given (the mapper's `Trajectory`): a copy of its field
/// defaults (`Record._template`, declared order) with the given values set in it is the
/// `__dict__` `_complete` makes (`{**template, **values}`), as long as every required field
/// and every field with a default factory is among the given ones and every given name is
/// a field (so the factories are never called and the checks cannot fail). Why: the Python
/// call (`from_normalized`, `_complete`'s merge, loops and checks) cost ~13,000
/// instructions a trace, paid once per trace whatever its size.
struct TrajectoryMold {
    template: Py<PyDict>,
    /// The class's `tp_alloc` (`dict_record`).
    alloc: ffi::allocfunc,
}

/// The most classes whose mold, or refusal, `MOLDS` keeps: the classes come from code (the
/// mapper's `Trajectory`, a test's subclass), not from traces; a class past them is checked
/// again each time it is given.
const MOLDED_CLASSES: usize = 8;

/// Each class `build_trajectory` was given with its mold, or `None` when
/// `TrajectoryMold::new` refused it (a refused class is not checked again for every trace).
/// The classes are held, so one cannot be freed and another made at its address.
static MOLDS: Mutex<Vec<Molded>> = Mutex::new(Vec::new());

/// A class and its mold (`None`: refused).
type Molded = (Py<PyAny>, Option<Arc<TrajectoryMold>>);

impl TrajectoryMold {
    /// The mold of `cls`, or `None` when it has none (the caller then calls
    /// `cls.from_normalized`): found among `MOLDS`, else checked (`new`) and kept there.
    fn of(cls: &Bound<'_, PyAny>) -> PyResult<Option<Arc<TrajectoryMold>>> {
        let known = |molds: &[Molded]| {
            molds
                .iter()
                .find(|(kept, _)| kept.as_ptr() == cls.as_ptr())
                .map(|(_, mold)| mold.clone())
        };
        let found = known(&MOLDS.lock().unwrap_or_else(PoisonError::into_inner));
        if let Some(mold) = found {
            return Ok(mold);
        }
        // Checked without the lock held: the check runs Python code (attribute reads).
        let mold = Self::new(cls)?.map(Arc::new);
        let mut molds = MOLDS.lock().unwrap_or_else(PoisonError::into_inner);
        // Another thread may have kept it meanwhile: the first one stays.
        if molds.len() < MOLDED_CLASSES && known(&molds).is_none() {
            molds.push((cls.clone().unbind(), mold.clone()));
        }
        Ok(mold)
    }

    /// `None` when `cls` is no plain record class whose `from_normalized` is `Record`'s and
    /// whose fields the given names cover as `of` needs.
    fn new(cls: &Bound<'_, PyAny>) -> PyResult<Option<TrajectoryMold>> {
        let py = cls.py();
        let Ok(cls) = cls.cast::<PyType>() else {
            return Ok(None);
        };
        if plain_record(cls).is_err() {
            return Ok(None);
        }
        // `from_normalized` and `_complete` are `model._record.Record`'s, not redefined on
        // the way to it.
        for name in ["from_normalized", "_complete"] {
            let mut owner = None;
            for base in cls.getattr(intern!(py, "__mro__"))?.try_iter()? {
                let base = base?;
                if base.getattr(intern!(py, "__dict__"))?.contains(name)? {
                    owner = Some(base);
                    break;
                }
            }
            let is_record = match owner {
                Some(base) => {
                    base.getattr(intern!(py, "__module__"))?
                        .eq("otel_oracles.model._record")?
                        && base.getattr(intern!(py, "__qualname__"))?.eq("Record")?
                }
                None => false,
            };
            if !is_record {
                return Ok(None);
            }
        }
        let Ok(template) = cls.getattr(intern!(py, "_template"))?.cast_into::<PyDict>() else {
            return Ok(None);
        };
        let given = trajectory_given(py);
        for name in given {
            if !template.contains(name.bind(py))? {
                return Ok(None);
            }
        }
        let covered = |name: Bound<'_, PyAny>| -> PyResult<bool> {
            for g in given {
                if g.bind(py).as_any().eq(&name)? {
                    return Ok(true);
                }
            }
            Ok(false)
        };
        for name in cls.getattr(intern!(py, "_required"))?.try_iter()? {
            if !covered(name?)? {
                return Ok(None);
            }
        }
        for pair in cls.getattr(intern!(py, "_factories"))?.try_iter()? {
            if !covered(pair?.get_item(0)?)? {
                return Ok(None);
            }
        }
        Ok(Some(TrajectoryMold {
            template: template.copy()?.unbind(),
            alloc: record_alloc(cls)?,
        }))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<StepBuilder>()?;
    m.add_function(wrap_pyfunction!(build_trajectory, m)?)
}
