//! `SlotLayout`: the `__slots__` of a plain Python class (the mapper's `Draft`) read and
//! written in the instance's memory, without a `getattr` / `setattr` each.
//!
//! A slot is a member descriptor over one `PyObject *` at a fixed offset of the instance
//! (what `obj.slot` reads through `PyObject_GenericGetAttr`, the type's method cache and the
//! descriptor's `__get__`, some 150 instructions per access). The limited API the module is
//! built for does not show the offsets, so they are found once per class by probing: a fresh
//! instance (`object.__new__`) gets a distinct object set in each slot by `setattr`, and
//! the one word of the instance holding that object is the slot's offset. A class with
//! attribute access of its own (`__setattr__`, `__getattribute__`, `__getattr__`), a name
//! that is no slot (a property), or a slot not found in exactly one word has no layout,
//! and its instances are read and written by name.
//! Only instances of exactly the probed class are accessed by offset; any other object
//! (a subclass) goes through `getattr` / `setattr`. `probe_members` finds the slots
//! whatever the class's attribute access, for storing into a fresh instance only
//! (`store_fresh`: a pydantic model's `__pydantic_*__` slots, `checks.rs` `ModelFill`).
//!
//! `SlotClass`: a class whose `__init__` only assigns its fields, made as that `__init__`
//! makes an instance (the decoders' records, the emitter's records, from Python a check's
//! `Finding` and an answer's `FinalOutput`).

use std::ops::Deref;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::type_object::PyTypeCheck;
use pyo3::types::{PyDict, PyString, PyTuple, PyType};
use pyo3::Borrowed;
use pyo3::{ffi, intern};

/// The offsets of some slots of one class.
pub(crate) struct SlotLayout {
    cls: Py<PyType>,
    offsets: Vec<usize>,
}

/// `object`'s `tp_new` slot.
pub(crate) fn object_new() -> PyResult<ffi::newfunc> {
    // SAFETY: `PyBaseObject_Type` is the static `object` type; reading a slot of a static
    // type is supported from CPython 3.10 (the module needs 3.11). A slot is a function
    // pointer or NULL, and `Option<fn>` has the pointer's layout.
    let slot = unsafe {
        ffi::PyType_GetSlot(
            std::ptr::addr_of_mut!(ffi::PyBaseObject_Type),
            ffi::Py_tp_new,
        )
    };
    let slot: Option<ffi::newfunc> = unsafe { std::mem::transmute(slot) };
    slot.ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("object has no tp_new"))
}

/// `object.__new__(cls)` through `object`'s `tp_new` (`new`), without the method wrapper
/// and its argument tuple. `cls` must inherit `object.__new__` (the caller checks).
pub(crate) fn blank<'py>(
    new: ffi::newfunc,
    cls: &Bound<'py, PyType>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = cls.py();
    // SAFETY: `new` is `object`'s `tp_new`, called as `object.__new__(cls)` calls it (no
    // arguments); `cls` is a live class. It returns a new reference or NULL with an
    // exception set.
    unsafe {
        Bound::from_owned_ptr_or_err(
            py,
            new(
                cls.as_type_ptr(),
                PyTuple::empty(py).as_ptr(),
                std::ptr::null_mut(),
            ),
        )
    }
}

/// A slot's object as `SlotLayout::held` reads it: borrowed from the instance that holds
/// it (no reference taken, none released: under the limited API each is a call into the
/// interpreter), or owned where it was read by name. Either reads as a `Bound`; the borrow
/// lives no longer than the borrow of the instance it was read from.
pub(crate) enum Held<'a, 'py, T = PyAny> {
    Borrowed(Borrowed<'a, 'py, T>),
    Owned(Bound<'py, T>),
}

impl<'py, T> Deref for Held<'_, 'py, T> {
    type Target = Bound<'py, T>;

    #[inline(always)]
    fn deref(&self) -> &Bound<'py, T> {
        match self {
            Held::Borrowed(borrowed) => borrowed,
            Held::Owned(owned) => owned,
        }
    }
}

impl<'a, 'py, T> Held<'a, 'py, T> {
    /// The object with a reference of its own, to keep past the instance's borrow.
    #[inline(always)]
    pub(crate) fn into_bound(self) -> Bound<'py, T> {
        match self {
            Held::Borrowed(borrowed) => borrowed.to_owned(),
            Held::Owned(owned) => owned,
        }
    }

    /// The object as a `U` (`cast_into`), borrowed as it was.
    #[inline(always)]
    pub(crate) fn cast_into<U: PyTypeCheck>(self) -> PyResult<Held<'a, 'py, U>> {
        match self {
            Held::Borrowed(borrowed) => Ok(Held::Borrowed(borrowed.cast::<U>()?)),
            Held::Owned(owned) => Ok(Held::Owned(owned.cast_into::<U>()?)),
        }
    }
}

/// A `Held` handed to a call (`set_item`, `contains`, ...) as the `&Bound` it reads as.
impl<'b, 'py, T: PyTypeCheck> IntoPyObject<'py> for &'b Held<'_, 'py, T> {
    type Target = T;
    type Output = Borrowed<'b, 'py, T>;
    type Error = std::convert::Infallible;

    #[inline(always)]
    fn into_pyobject(self, _py: Python<'py>) -> Result<Self::Output, Self::Error> {
        Ok(self.as_borrowed())
    }
}

/// A `Held` handed over by value: the call gets a reference of its own.
impl<'py, T: PyTypeCheck> IntoPyObject<'py> for Held<'_, 'py, T> {
    type Target = T;
    type Output = Bound<'py, T>;
    type Error = std::convert::Infallible;

    #[inline(always)]
    fn into_pyobject(self, _py: Python<'py>) -> Result<Self::Output, Self::Error> {
        Ok(self.into_bound())
    }
}

/// `object.<name>`, the way out of `SlotLayout::get`'s inlined fast path (another class, or
/// a slot not set: its `AttributeError`).
#[cold]
#[inline(never)]
fn by_name<'py>(
    object: &Bound<'py, PyAny>,
    name: &Bound<'py, PyString>,
) -> PyResult<Bound<'py, PyAny>> {
    object.getattr(name)
}

/// A class's `SlotLayout`, probed on the first read: the class `class` of module `module`
/// and its slots `names`, in the order of the slot numbers readers pass to `get`. One
/// `static` per class replaces a layout cell, a reader and a cold probe written for each.
pub(crate) struct ClassSlots {
    cell: PyOnceLock<Option<SlotLayout>>,
    module: &'static str,
    class: &'static str,
    names: &'static [&'static str],
}

impl ClassSlots {
    pub(crate) const fn new(
        module: &'static str,
        class: &'static str,
        names: &'static [&'static str],
    ) -> Self {
        Self {
            cell: PyOnceLock::new(),
            module,
            class,
            names,
        }
    }

    /// `object.<name>`, `name` being slot number `slot` (`names[slot]`): read in the
    /// instance's memory for an instance of the class, by name for any other object.
    #[inline(always)]
    pub(crate) fn get<'py>(
        &'static self,
        object: &Bound<'py, PyAny>,
        slot: usize,
        name: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyAny>> {
        debug_assert_eq!(name.to_str().ok(), Some(self.names[slot]));
        let layout = match self.cell.get(object.py()) {
            Some(layout) => layout,
            None => self.probe(object.py())?,
        };
        match layout {
            Some(layout) => layout.get(object, slot, name),
            None => object.getattr(name),
        }
    }

    /// The layout, probed on the first read (grading: the class's module is imported by
    /// then).
    #[cold]
    #[inline(never)]
    fn probe(&'static self, py: Python<'_>) -> PyResult<&'static Option<SlotLayout>> {
        self.cell.get_or_try_init(py, || {
            let cls = py
                .import(self.module)?
                .getattr(self.class)?
                .cast_into::<PyType>()?;
            let names: Vec<_> = self
                .names
                .iter()
                .map(|name| PyString::intern(py, name))
                .collect();
            SlotLayout::probe(&cls, &names, object_new()?)
        })
    }
}

impl SlotLayout {
    /// The layout of `names` in instances of `cls` (made by `object.__new__`, `new`), or
    /// `None` when probing does not find each slot in exactly one word of the instance.
    pub(crate) fn probe(
        cls: &Bound<'_, PyType>,
        names: &[Bound<'_, PyString>],
        new: ffi::newfunc,
    ) -> PyResult<Option<Self>> {
        let py = cls.py();
        // Attribute access as `object` does it (no `__setattr__`, `__getattribute__` or
        // `__getattr__` of the class's own, but for a frozen dataclass's or record's
        // refusals), each name a member descriptor (a slot).
        let object = py.import("builtins")?.getattr("object")?;
        let frozen = frozen_dataclass(cls)? || frozen_record(cls)?;
        for method in ["__new__", "__setattr__", "__getattribute__", "__delattr__"] {
            if frozen && matches!(method, "__setattr__" | "__delattr__") {
                continue;
            }
            if !cls.getattr(method)?.is(object.getattr(method)?) {
                return Ok(None);
            }
        }
        if cls.hasattr("__getattr__")? {
            return Ok(None);
        }
        Self::probe_members(cls, names, new)
    }

    /// The layout of `names` in instances of `cls`, each a member descriptor (a slot),
    /// whatever attribute access the class has of its own: only for storing into a fresh
    /// instance what `object.__setattr__` would (`store_fresh`), as a pydantic model's
    /// `__setstate__` sets its `__pydantic_*__` slots. `None` as `probe`'s.
    pub(crate) fn probe_members(
        cls: &Bound<'_, PyType>,
        names: &[Bound<'_, PyString>],
        new: ffi::newfunc,
    ) -> PyResult<Option<Self>> {
        let py = cls.py();
        let member = py.import("types")?.getattr("MemberDescriptorType")?;
        for name in names {
            if !cls.getattr(name)?.get_type().is(&member) {
                return Ok(None);
            }
        }
        let size: usize = cls.getattr("__basicsize__")?.extract()?;
        let word = std::mem::size_of::<*mut ffi::PyObject>();
        let header = std::mem::size_of::<ffi::PyObject>();
        let instance = blank(new, cls)?;
        let mut offsets = Vec::with_capacity(names.len());
        for name in names {
            // A new object of its own per slot: its address is in no other word.
            let probe = pyo3::types::PyList::empty(py);
            // SAFETY: live objects; `object.__setattr__` (a frozen dataclass's own refuses),
            // 0 or -1 with an exception set.
            let stored = unsafe {
                ffi::PyObject_GenericSetAttr(instance.as_ptr(), name.as_ptr(), probe.as_ptr())
            };
            if stored != 0 {
                drop(PyErr::take(py));
                return Ok(None);
            }
            let base = instance.as_ptr().cast::<u8>();
            let mut found = None;
            let mut offset = header;
            while offset + word <= size {
                // SAFETY: `offset + word <= __basicsize__`: inside the instance's own
                // memory; slot storage is pointer-aligned after the header.
                let held = unsafe { base.add(offset).cast::<*mut ffi::PyObject>().read() };
                if held == probe.as_ptr() {
                    if found.is_some() {
                        return Ok(None);
                    }
                    found = Some(offset);
                }
                offset += word;
            }
            let Some(offset) = found else {
                return Ok(None);
            };
            if offsets.contains(&offset) {
                return Ok(None);
            }
            offsets.push(offset);
        }
        Ok(Some(Self {
            cls: cls.clone().unbind(),
            offsets,
        }))
    }

    /// The same layout, for another holder.
    pub(crate) fn clone_ref(&self, py: Python<'_>) -> Self {
        Self {
            cls: self.cls.clone_ref(py),
            offsets: self.offsets.clone(),
        }
    }

    /// Whether `object` is exactly of the probed class: its type pointer compared with the
    /// class's, without the type object a `get_type` hands out (a reference taken and
    /// released, two calls into the interpreter under the limited API, per access).
    #[inline(always)]
    pub(crate) fn holds(&self, object: &Bound<'_, PyAny>) -> bool {
        // SAFETY: `object` is a live object; its type is a word of its header.
        unsafe { ffi::Py_TYPE(object.as_ptr()) == self.cls.as_ptr().cast::<ffi::PyTypeObject>() }
    }

    #[inline(always)]
    fn cell(&self, object: &Bound<'_, PyAny>, slot: usize) -> *mut *mut ffi::PyObject {
        // SAFETY (of the callers' use): the offset was found inside instances of the class,
        // and `object` is one (`holds`).
        unsafe {
            object
                .as_ptr()
                .cast::<u8>()
                .add(self.offsets[slot])
                .cast::<*mut ffi::PyObject>()
        }
    }

    /// `object.<name> = value` where `name` is slot number `slot`: stored in the instance's
    /// memory (the old value released) when `object` is exactly of the probed class, which
    /// is what `object.__setattr__`'s member descriptor stores there; by name for any other
    /// object. Only for classes probed by `probe` (their attribute access is `object`'s),
    /// and only for slots no caller holds borrowed (`held`'s contract).
    #[inline(always)]
    pub(crate) fn set<'py>(
        &self,
        object: &Bound<'py, PyAny>,
        slot: usize,
        name: &Bound<'py, PyString>,
        value: &Bound<'py, PyAny>,
    ) -> PyResult<()> {
        if !self.holds(object) {
            return object.setattr(name, value);
        }
        let cell = self.cell(object, slot);
        // SAFETY: a word of the instance's slots (`holds`), NULL for a slot not set; the
        // instance takes a reference of its own to `value` and releases the old one, after
        // the store (its release may run Python code, which then sees the new value).
        unsafe {
            let old = cell.read();
            cell.write(value.clone().into_ptr());
            if !old.is_null() {
                ffi::Py_DECREF(old);
            }
        }
        Ok(())
    }

    /// `object.<name>` where `name` is slot number `slot`. Inlined where it is read: the
    /// passes read some 50 slots a span, and the read itself is a type check and a load;
    /// anything else (another class, a slot not set) goes through `by_name`.
    #[inline(always)]
    pub(crate) fn get<'py>(
        &self,
        object: &Bound<'py, PyAny>,
        slot: usize,
        name: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if self.holds(object) {
            // SAFETY: a word of the instance's slots; NULL for a slot not set.
            let held = unsafe { self.cell(object, slot).read() };
            if !held.is_null() {
                // SAFETY: a live object the instance holds a reference to.
                return Ok(unsafe { Bound::from_borrowed_ptr(object.py(), held) });
            }
        }
        by_name(object, name)
    }

    /// `get`, borrowed from `object` for as long as `object` is borrowed. Only for slots
    /// nothing stores into once the instance is made (the callers name them): the object
    /// a slot holds then lives as long as the instance, and no code run meanwhile can
    /// release it by replacing it.
    #[inline(always)]
    pub(crate) fn held<'a, 'py>(
        &self,
        object: &'a Bound<'py, PyAny>,
        slot: usize,
        name: &Bound<'py, PyString>,
    ) -> PyResult<Held<'a, 'py>> {
        if self.holds(object) {
            // SAFETY: a word of the instance's slots; NULL for a slot not set.
            let held = unsafe { self.cell(object, slot).read() };
            if !held.is_null() {
                // SAFETY: a live object the instance holds a reference to, in a slot that
                // is never stored into again (the callers' contract, above): it lives as
                // long as the instance, which outlives the borrow `'a` of `object`.
                return Ok(Held::Borrowed(unsafe {
                    Borrowed::from_ptr(object.py(), held)
                }));
            }
        }
        by_name(object, name).map(Held::Owned)
    }

    /// The object in slot number `slot` of `object`, borrowed (no reference taken, so it
    /// is only compared, never kept), when `object` is exactly of the probed class and the
    /// slot is set; `None` otherwise.
    #[inline(always)]
    pub(crate) fn peek(
        &self,
        object: &Bound<'_, PyAny>,
        slot: usize,
    ) -> Option<*mut ffi::PyObject> {
        if !self.holds(object) {
            return None;
        }
        // SAFETY: a word of the instance's slots; NULL for a slot not set.
        let held = unsafe { self.cell(object, slot).read() };
        (!held.is_null()).then_some(held)
    }

    /// A new instance of the probed class (`object.__new__`, `new`) with slot number `i`
    /// set to `values[i]`: what a class whose `__init__` only assigns its fields makes,
    /// without the call's argument tuple and Python frame. `values` must cover every
    /// probed slot, no more (a `RuntimeError` otherwise, before anything is made).
    pub(crate) fn fill<'py, const N: usize>(
        &self,
        new: ffi::newfunc,
        py: Python<'py>,
        values: [Bound<'py, PyAny>; N],
    ) -> PyResult<Bound<'py, PyAny>> {
        self.covers(N)?;
        let record = blank(new, self.cls.bind(py))?;
        self.store(&record, values.into_iter().map(Bound::into_ptr));
        Ok(record)
    }

    /// `fill` of the objects `values` points at (a call's arguments, borrowed: the
    /// instance takes a reference of its own to each).
    pub(crate) fn fill_borrowed<'py>(
        &self,
        new: ffi::newfunc,
        py: Python<'py>,
        values: &[*mut ffi::PyObject],
    ) -> PyResult<Bound<'py, PyAny>> {
        self.covers(values.len())?;
        let record = blank(new, self.cls.bind(py))?;
        self.store(
            &record,
            values.iter().map(|&value| {
                // SAFETY: a live object the caller holds; the reference taken is the
                // instance's.
                unsafe { ffi::Py_IncRef(value) };
                value
            }),
        );
        Ok(record)
    }

    /// Every probed slot of `record`, a fresh instance of exactly the probed class
    /// (`holds`), set to the values in order (references the record takes over), as
    /// `object.__setattr__` sets them; `Err` and nothing stored when `record` is of another
    /// class or the values do not cover the slots.
    pub(crate) fn store_fresh<const N: usize>(
        &self,
        record: &Bound<'_, PyAny>,
        values: [Bound<'_, PyAny>; N],
    ) -> PyResult<()> {
        self.covers(N)?;
        if !self.holds(record) {
            return Err(PyRuntimeError::new_err("an instance of another class"));
        }
        self.store(record, values.into_iter().map(Bound::into_ptr));
        Ok(())
    }

    /// A `RuntimeError` unless `count` values cover the probed slots.
    fn covers(&self, count: usize) -> PyResult<()> {
        if self.offsets.len() == count {
            return Ok(());
        }
        Err(PyRuntimeError::new_err(format!(
            "{count} values for a layout of {} slots",
            self.offsets.len()
        )))
    }

    /// Slot number `i` of the fresh `record` set to the `i`-th of `values` (references the
    /// record takes over; as many as the probed slots, `covers`).
    #[inline(always)]
    fn store(&self, record: &Bound<'_, PyAny>, values: impl Iterator<Item = *mut ffi::PyObject>) {
        for (slot, value) in values.enumerate() {
            let cell = self.cell(record, slot);
            // SAFETY: a slot word of an instance of exactly the probed class, NULL in a
            // fresh instance (released all the same if not); the instance takes over
            // `value`'s reference.
            unsafe {
                let old = cell.read();
                cell.write(value);
                if !old.is_null() {
                    ffi::Py_DECREF(old);
                }
            }
        }
    }
}

/// Whether `cls` is a frozen record of the project's own (`otel_oracles._frozen.Frozen`):
/// its `__setattr__` and `__delattr__` are `Frozen`'s, which only refuse, and its
/// `__init__` stores each field through `object.__setattr__` (`set_field`), as the probe
/// does.
fn frozen_record(cls: &Bound<'_, PyType>) -> PyResult<bool> {
    let py = cls.py();
    let frozen = py.import("otel_oracles._frozen")?.getattr("Frozen")?;
    for method in [intern!(py, "__setattr__"), intern!(py, "__delattr__")] {
        if !cls.getattr(method)?.is(frozen.getattr(method)?) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Whether `cls` is itself a frozen dataclass: its own `__setattr__` and `__delattr__` then
/// only refuse (`dataclasses` will not freeze a class that defines either), and its
/// generated `__init__` stores each field through `object.__setattr__`, as the probe and
/// `SlotLayout::fill` do.
fn frozen_dataclass(cls: &Bound<'_, PyType>) -> PyResult<bool> {
    let py = cls.py();
    let own = cls.getattr(intern!(py, "__dict__"))?;
    let params = intern!(py, "__dataclass_params__");
    if !own.contains(params)? {
        return Ok(false);
    }
    let params = own.get_item(params)?;
    Ok(params.getattr(intern!(py, "frozen"))?.is_truthy()?
        && params.getattr(intern!(py, "init"))?.is_truthy()?
        && own.contains(intern!(py, "__setattr__"))?
        && own.contains(intern!(py, "__delattr__"))?)
}

/// How a `SlotClass` makes an instance when it cannot fill one in memory: the class called
/// with the values by name (`Keywords`: its `__slots__` hold the fields in any order) or in
/// order (`Positional`: its `__slots__` must list the fields in that order, so that the
/// call and the slots agree).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fallback {
    Keywords,
    Positional,
}

/// A class whose `__init__` only assigns its fields, made as that `__init__` makes an
/// instance: `object.__new__` and one word written per slot (`SlotLayout::fill`), without
/// the call's arguments, `type.__call__` and the `__init__` frame (a frozen dataclass's
/// `__init__` stores each field through `object.__setattr__`, a method call of its own).
/// That holds while the class's `__slots__` are exactly `fields` (in order for a
/// positional fallback), it has no `__post_init__`, and its attribute access is `object`'s
/// or a frozen dataclass's (`SlotLayout::probe`); any other class is called (`Fallback`).
/// Only instances of exactly this class are made this way: a subclass may add fields.
#[pyclass(module = "otel_oracles._native", name = "SlotClass", frozen)]
pub(crate) struct SlotClass {
    cls: Py<PyType>,
    names: Vec<Py<PyString>>,
    layout: Option<SlotLayout>,
    new: ffi::newfunc,
    fallback: Fallback,
}

impl SlotClass {
    /// `cls`, to be made of the values of `fields` (see the type's text).
    pub(crate) fn load(
        cls: &Bound<'_, PyType>,
        fields: &[&str],
        fallback: Fallback,
    ) -> PyResult<Self> {
        let py = cls.py();
        let new = object_new()?;
        let names: Vec<Bound<'_, PyString>> = fields
            .iter()
            .map(|field| PyString::intern(py, field))
            .collect();
        let slots: Option<Vec<String>> = cls
            .getattr(intern!(py, "__slots__"))
            .ok()
            .and_then(|slots| slots.extract().ok());
        let matching = slots.is_some_and(|mut slots| match fallback {
            Fallback::Positional => slots.iter().map(String::as_str).eq(fields.iter().copied()),
            Fallback::Keywords => {
                let mut wanted = fields.to_vec();
                slots.sort_unstable();
                wanted.sort_unstable();
                slots.iter().map(String::as_str).eq(wanted)
            }
        });
        let layout = if matching && !cls.hasattr(intern!(py, "__post_init__"))? {
            SlotLayout::probe(cls, &names, new)?
        } else {
            None
        };
        Ok(Self {
            cls: cls.clone().unbind(),
            names: names.into_iter().map(Bound::unbind).collect(),
            layout,
            new,
            fallback,
        })
    }

    /// An instance of `values`, in `fields` order.
    #[inline]
    pub(crate) fn make<'py, const N: usize>(
        &self,
        py: Python<'py>,
        values: [Bound<'py, PyAny>; N],
    ) -> PyResult<Bound<'py, PyAny>> {
        match &self.layout {
            Some(layout) => layout.fill(self.new, py, values),
            None => self.call(py, values.into_iter()),
        }
    }

    /// `make` of a call's arguments (`MAKE`).
    fn make_borrowed<'py>(
        &self,
        py: Python<'py>,
        values: &[*mut ffi::PyObject],
    ) -> PyResult<Bound<'py, PyAny>> {
        match &self.layout {
            Some(layout) => layout.fill_borrowed(self.new, py, values),
            None => self.call(
                py,
                values.iter().map(|&value| {
                    // SAFETY: a live object the caller holds.
                    unsafe { Bound::from_borrowed_ptr(py, value) }
                }),
            ),
        }
    }

    /// The class called with `values` (`Fallback`).
    fn call<'py>(
        &self,
        py: Python<'py>,
        values: impl ExactSizeIterator<Item = Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if values.len() != self.names.len() {
            return Err(PyRuntimeError::new_err(format!(
                "{} values for {} fields",
                values.len(),
                self.names.len()
            )));
        }
        let cls = self.cls.bind(py);
        match self.fallback {
            Fallback::Positional => cls.call1(PyTuple::new(py, values)?),
            Fallback::Keywords => {
                let kwargs = PyDict::new(py);
                for (name, value) in self.names.iter().zip(values) {
                    kwargs.set_item(name.bind(py), value)?;
                }
                cls.call((), Some(&kwargs))
            }
        }
    }
}

#[pymethods]
impl SlotClass {
    #[new]
    #[pyo3(signature = (target, fields, *, keywords = false))]
    fn py_new(target: &Bound<'_, PyType>, fields: Vec<String>, keywords: bool) -> PyResult<Self> {
        let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
        let fallback = if keywords {
            Fallback::Keywords
        } else {
            Fallback::Positional
        };
        Self::load(target, &fields, fallback)
    }

    /// The function that makes an instance of its arguments, in `fields` order (`MAKE`,
    /// bound to this `SlotClass`): taken once, called per instance.
    #[getter(make)]
    fn maker<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        // SAFETY: `MAKE` is static and never written; `slf` a live `SlotClass`, which the
        // function keeps a reference to (its `self`). A new reference or NULL with an
        // exception set.
        unsafe {
            Bound::from_owned_ptr_or_err(
                slf.py(),
                ffi::PyCFunction_NewEx(MAKE.0.get(), slf.as_ptr(), std::ptr::null_mut()),
            )
        }
    }

    /// Whether instances are filled in memory (else the class is called).
    #[getter]
    fn filled(&self) -> bool {
        self.layout.is_some()
    }
}

/// The definition of `SlotClass.make`'s function: `METH_FASTCALL`, so that a call hands
/// over its arguments where they stand, with no argument tuple made and read back (what a
/// `*values` method costs, some 500 instructions a call of eight values).
struct MethodDef(std::cell::UnsafeCell<ffi::PyMethodDef>);

// SAFETY: CPython only reads a method definition; nothing here writes it.
unsafe impl Sync for MethodDef {}

static MAKE: MethodDef = MethodDef(std::cell::UnsafeCell::new(ffi::PyMethodDef {
    ml_name: c"make".as_ptr(),
    ml_meth: ffi::PyMethodDefPointer {
        PyCFunctionFast: make_fastcall,
    },
    ml_flags: ffi::METH_FASTCALL,
    ml_doc: c"An instance of the arguments, in the fields' order.".as_ptr(),
}));

/// `MAKE`'s function: `slf` the `SlotClass` it is bound to, `args` the call's `nargs`
/// positional arguments.
unsafe extern "C" fn make_fastcall(
    slf: *mut ffi::PyObject,
    args: *mut *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls a builtin function attached to the interpreter.
    let py = unsafe { Python::assume_attached() };
    let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(
        || -> PyResult<Bound<'_, PyAny>> {
            // SAFETY: `slf` is the function's `self`, a live object (`SlotClass::maker`).
            let class = unsafe { Borrowed::from_ptr(py, slf) };
            let class = class.cast::<SlotClass>()?;
            let count = usize::try_from(nargs).unwrap_or(0);
            let values: &[*mut ffi::PyObject] = if count == 0 {
                &[]
            } else {
                // SAFETY: `args` points at the call's `nargs` live arguments.
                unsafe { std::slice::from_raw_parts(args, count) }
            };
            class.get().make_borrowed(py, values)
        },
    ));
    match made {
        Ok(Ok(made)) => made.into_ptr(),
        Ok(Err(err)) => {
            err.restore(py);
            std::ptr::null_mut()
        }
        Err(_) => {
            PyRuntimeError::new_err("SlotClass.make panicked").restore(py);
            std::ptr::null_mut()
        }
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SlotClass>()?;
    Ok(())
}

/// The `SpanRecord` fields the mapper's passes and the rule table read, by number
/// (`span_held`).
pub(crate) mod span {
    pub(crate) const NAMES: [&str; 14] = [
        "trace_id",
        "span_id",
        "parent_span_id",
        "name",
        "start_ns",
        "end_ns",
        "status_code",
        "status_message",
        "attributes",
        "events",
        "kind",
        "scope_name",
        "dropped_attributes",
        "dropped_events",
    ];
    pub(crate) const TRACE_ID: usize = 0;
    pub(crate) const SPAN_ID: usize = 1;
    pub(crate) const PARENT_SPAN_ID: usize = 2;
    pub(crate) const NAME: usize = 3;
    pub(crate) const START_NS: usize = 4;
    pub(crate) const END_NS: usize = 5;
    pub(crate) const STATUS_CODE: usize = 6;
    pub(crate) const STATUS_MESSAGE: usize = 7;
    pub(crate) const ATTRIBUTES: usize = 8;
    pub(crate) const EVENTS: usize = 9;
    pub(crate) const KIND: usize = 10;
    pub(crate) const SCOPE_NAME: usize = 11;
    pub(crate) const DROPPED_ATTRIBUTES: usize = 12;
    pub(crate) const DROPPED_EVENTS: usize = 13;
}

/// The layout of `otel_oracles.model.span.SpanRecord`'s `span::NAMES`, probed on first use.
static SPAN_LAYOUT: pyo3::sync::PyOnceLock<Option<SlotLayout>> = pyo3::sync::PyOnceLock::new();

/// `span.<name>`, `name` being `span::NAMES[field]`: read in the instance's memory for a
/// `SpanRecord`, by name for any other object. Inlined: the probed layout is one atomic
/// load away once made (`span_layout`). Borrowed from `span` for as long as `span` is
/// borrowed: a `SpanRecord`'s fields are set once, when it is made (a changed span is a
/// copy, `dataclasses.replace`), so what a field holds lives as long as the record.
#[inline(always)]
pub(crate) fn span_held<'a, 'py>(
    span: &'a Bound<'py, PyAny>,
    field: usize,
    name: &Bound<'py, PyString>,
) -> PyResult<Held<'a, 'py>> {
    debug_assert_eq!(name.to_str().ok(), Some(span::NAMES[field]));
    let py = span.py();
    let layout = match SPAN_LAYOUT.get(py) {
        Some(layout) => layout,
        None => span_layout(py)?,
    };
    match layout {
        Some(layout) => layout.held(span, field, name),
        None => span.getattr(name).map(Held::Owned),
    }
}

/// The object in field `field` of `span` (`span::NAMES[field]`), borrowed (no reference
/// taken: only compared, never kept), when `span` is a `SpanRecord`, the layout probed and
/// the field set; `None` otherwise.
#[inline(always)]
pub(crate) fn span_peek(span: &Bound<'_, PyAny>, field: usize) -> Option<*mut ffi::PyObject> {
    SPAN_LAYOUT.get(span.py())?.as_ref()?.peek(span, field)
}

/// `SPAN_LAYOUT`, probed on the first read.
#[cold]
#[inline(never)]
fn span_layout(py: Python<'_>) -> PyResult<&'static Option<SlotLayout>> {
    SPAN_LAYOUT.get_or_try_init(py, || {
        let cls = py
            .import("otel_oracles.model.span")?
            .getattr("SpanRecord")?
            .cast_into::<PyType>()?;
        let names = span::NAMES.map(|name| PyString::intern(py, name));
        SlotLayout::probe(&cls, &names, object_new()?)
    })
}
