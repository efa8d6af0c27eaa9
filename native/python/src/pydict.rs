//! Python's small reads of mappings, sequences and texts, done through the C API as Python
//! code does them: `mapping.get(key)` (and with a default), `key in mapping` then
//! `mapping[key]`, `list(value)` and `list(value or [])`, and `value == text`.
//!
//! One implementation of each for every binding that reads the mapping's Python values
//! (drafts' fields and attributes, messages and their parts, tool results): an exact
//! `dict`, `list` or `str` is read through its storage, and anything else goes through its
//! own methods, so a subclass that defines its own `get`, `__iter__` or `__eq__` is
//! answered as Python would answer it.
//!
//! And the one reader of a record's fields where it keeps them, its instance `__dict__`
//! (`StepFields`: a `Record`'s and a pydantic model's, the steps, results and verdicts the
//! checks, the tally and the emitter read), by name (first at the entry where records of
//! its type keep the field, `placed`) or several in one walk of the dict.

use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use pyo3::Borrowed;

use std::sync::atomic::{AtomicU64, Ordering};

/// `mapping.get(key)` as Python calls it: an exact `dict` through its storage (`None` when
/// missing), any other object (a subclass) through its own `get`.
pub(crate) fn get<'py>(
    mapping: &Bound<'py, PyAny>,
    key: &Bound<'py, PyString>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = mapping.py();
    if let Ok(dict) = mapping.cast_exact::<PyDict>() {
        return Ok(dict
            .get_item(key)?
            .unwrap_or_else(|| py.None().into_bound(py)));
    }
    mapping.call_method1(intern!(py, "get"), (key,))
}

/// `mapping.get(key, default)` as Python calls it (an exact `dict` through its storage).
pub(crate) fn get_or<'py>(
    mapping: &Bound<'py, PyAny>,
    key: &Bound<'py, PyString>,
    default: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    if let Ok(dict) = mapping.cast_exact::<PyDict>() {
        return Ok(dict.get_item(key)?.unwrap_or_else(|| default.clone()));
    }
    mapping.call_method1(intern!(mapping.py(), "get"), (key, default))
}

/// `mapping[key] if key in mapping else None` (as `Some` / `None`): a `dict`, subclasses
/// included, read through its storage; any other mapping by its `__contains__` and
/// `__getitem__`. What the field readers do with span and event attributes, which the
/// decoders make as plain `dict`s.
pub(crate) fn lookup<'py>(
    mapping: &Bound<'py, PyAny>,
    key: &Bound<'py, PyString>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    if let Ok(dict) = mapping.cast::<PyDict>() {
        return dict.get_item(key);
    }
    if mapping.contains(key)? {
        mapping.get_item(key).map(Some)
    } else {
        Ok(None)
    }
}

/// The items of an iterable, in order (`list(value)`; an exact `list`'s or `tuple`'s read in
/// place).
///
/// Why: collecting through an iterator asks pyo3's `size_hint`, which under the limited API
/// calls `operator.length_hint` through the interpreter (~1,000 instructions) at the start
/// and on each growth of the `Vec`; a list's or tuple's length is known.
pub(crate) fn items<'py>(value: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyAny>>> {
    if let Ok(list) = value.cast_exact::<PyList>() {
        return Ok(list.iter().collect());
    }
    if let Ok(tuple) = value.cast_exact::<PyTuple>() {
        return Ok(tuple.iter().collect());
    }
    value.try_iter()?.collect()
}

/// The items of `value or []` (`None` and any other falsy value hold none).
pub(crate) fn items_of<'py>(value: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyAny>>> {
    if !value.is_exact_instance_of::<PyList>() && (value.is_none() || !value.is_truthy()?) {
        return Ok(Vec::new());
    }
    items(value)
}

/// `for item in value: f(item)` as Python's loop reads it, with no copy of the items: an
/// exact `list` in place, by index, its length read again before each item (as a list's
/// iterator does, so an item `f` appends is met and a removed one is not read past the end);
/// any other iterable through its own iterator. Each item is held while `f` has it.
pub(crate) fn for_each_item<'py>(
    value: &Bound<'py, PyAny>,
    mut f: impl FnMut(Bound<'py, PyAny>) -> PyResult<()>,
) -> PyResult<()> {
    if let Ok(list) = value.cast_exact::<PyList>() {
        let mut at = 0;
        while at < list.len() {
            f(list.get_item(at)?)?;
            at += 1;
        }
        return Ok(());
    }
    for item in value.try_iter()? {
        f(item?)?;
    }
    Ok(())
}

/// [`for_each_item`] of `value or []` (`None` and any other falsy value hold none), as
/// [`items_of`] reads them.
pub(crate) fn for_each_item_of<'py>(
    value: &Bound<'py, PyAny>,
    f: impl FnMut(Bound<'py, PyAny>) -> PyResult<()>,
) -> PyResult<()> {
    if !value.is_exact_instance_of::<PyList>() && (value.is_none() || !value.is_truthy()?) {
        return Ok(());
    }
    for_each_item(value, f)
}

/// A new `list` of `len` items, filled slot by slot from `items` (`PyList_New`, then
/// `PyList_SetItem` into each slot once), as `list(tuple)` or a JSON array's values make one:
/// ~60 instructions a list, where `PySequence_List` or appends grow it (~170). `items`
/// yields `len` items; a shorter one would leave slots empty, so it is refused rather than
/// the list handed out.
pub(crate) fn filled_list<'py>(
    py: Python<'py>,
    len: usize,
    items: impl IntoIterator<Item = PyResult<Bound<'py, PyAny>>>,
) -> PyResult<Bound<'py, PyList>> {
    let size = ffi::Py_ssize_t::try_from(len)?;
    // SAFETY: `PyList_New` returns a new list of `size` empty slots, or NULL with an
    // exception set.
    let list = unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyList_New(size))? };
    let mut filled = 0;
    for (at, item) in (0..size).zip(items) {
        // SAFETY: `at` is a slot of the new list, filled once; `PyList_SetItem` takes the
        // item's reference. A list dropped half filled (an item's error, or refused below)
        // releases what it holds (`Py_XDECREF` of its slots).
        unsafe { ffi::PyList_SetItem(list.as_ptr(), at, item?.into_ptr()) };
        filled += 1;
    }
    if filled != size {
        return Err(pyo3::exceptions::PyRuntimeError::new_err(
            "a list's items were fewer than its length",
        ));
    }
    // SAFETY: `PyList_New` made it a `list`, and every slot is filled (above).
    Ok(unsafe { list.cast_into_unchecked() })
}

/// `len(text)`: its code points, read from the `str` (`PyUnicode_GetLength`, where
/// `PyObject_Size` goes through the type's slots first: ~17 instructions against ~8).
#[inline]
pub(crate) fn code_points(text: &Bound<'_, PyString>) -> usize {
    // SAFETY: `text` is a live `str` (a `PyString` cast succeeded), for which
    // `PyUnicode_GetLength` cannot fail (it fails only for objects of another type).
    let len = unsafe { ffi::PyUnicode_GetLength(text.as_ptr()) };
    usize::try_from(len).unwrap_or(0)
}

/// `value == text` as Python compares them: the same object, an exact `str` by its
/// characters, anything else through its own comparison.
pub(crate) fn eq_text(value: &Bound<'_, PyAny>, text: &Bound<'_, PyString>) -> PyResult<bool> {
    if value.is(text) {
        return Ok(true);
    }
    if let Ok(own) = value.cast_exact::<PyString>() {
        return Ok(match (own.to_str(), text.to_str()) {
            (Ok(a), Ok(b)) => a == b,
            _ => PyAnyMethods::eq(own.as_any(), text)?,
        });
    }
    value.eq(text)
}

/// The pairs of a dict as `PyDict_Next` lends them ([`lent_pairs`]).
pub(crate) struct LentPairs<'a, 'py> {
    dict: &'a Bound<'py, PyDict>,
    at: ffi::Py_ssize_t,
    /// The position the last pair was read from (`again` reads it there again).
    before: ffi::Py_ssize_t,
}

/// `dict`'s pairs in order, each key and value lent by the dict: no reference taken or
/// released per key and value and no `PyDict_Size` per pair, as pyo3's iterator has (four
/// calls of the interpreter's reference counting and one of its size, under the stable ABI).
/// `PyDict_Next` itself stays safe whatever happens to the dict.
///
/// Python code can run inside many C calls: a `str` subclass's `__eq__` or `__hash__`, a
/// container's `__bool__` or `__iter__`, and, on any allocation of an object the collector
/// tracks, a finalizer (`__del__`, a weakref callback, a `gc.callbacks` entry) the
/// collection runs. Making an exception is such an allocation: `to_str` of a `str` that is
/// no UTF-8 (lone surrogates) makes one (which holds the text while it is made, so the
/// text is at risk only once `to_str` has returned), and so is a method's call through
/// `call_method1` (the bound method). Any of these may change the dict and free the pair
/// it lent; `PyDict_Next` itself stays safe whatever happens to the dict.
///
/// # Safety
///
/// A pair is valid while the dict holds it: the caller runs nothing that could change
/// `dict` (Python code, as above) while it reads a pair it has not given references of its
/// own (`Borrowed::to_owned`). A caller whose call of that kind is rare makes it with
/// references of its own taken first, or reads the pair `again` after it.
pub(crate) unsafe fn lent_pairs<'a, 'py>(dict: &'a Bound<'py, PyDict>) -> LentPairs<'a, 'py> {
    LentPairs {
        dict,
        at: 0,
        before: 0,
    }
}

impl<'a, 'py> LentPairs<'a, 'py> {
    /// The pair last given, read again with references of its own, for a caller whose code
    /// may have run Python's since (see [`lent_pairs`]): what the dict holds now at the same
    /// place (its value replaced, if it was), where it must still hold a key at `key`'s
    /// address (compared only, never read: the key may be gone). A dict whose keys changed
    /// there (the key deleted, the dict emptied or rebuilt) is refused as iterating it in
    /// Python refuses it (`RuntimeError`).
    pub(crate) fn again(
        &self,
        key: *mut ffi::PyObject,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let mut at = self.before;
        let mut found = std::ptr::null_mut();
        let mut value = std::ptr::null_mut();
        // SAFETY: `dict` is a live dict; `PyDict_Next` from a position it answered before
        // lends the first pair the dict holds from there now, or answers 0 at the end.
        let read = unsafe { ffi::PyDict_Next(self.dict.as_ptr(), &mut at, &mut found, &mut value) };
        if read == 0 || at != self.at || found != key {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "dictionary keys changed during iteration",
            ));
        }
        let py = self.dict.py();
        // SAFETY: live objects the dict holds now, each made a reference of its own.
        Ok(unsafe {
            (
                Bound::from_borrowed_ptr(py, found),
                Bound::from_borrowed_ptr(py, value),
            )
        })
    }
}

impl<'a, 'py> Iterator for LentPairs<'a, 'py> {
    type Item = (Borrowed<'a, 'py, PyAny>, Borrowed<'a, 'py, PyAny>);

    fn next(&mut self) -> Option<Self::Item> {
        let mut key = std::ptr::null_mut();
        let mut value = std::ptr::null_mut();
        self.before = self.at;
        // SAFETY: `dict` is a live dict; `PyDict_Next` lends its key and value (no reference
        // taken), or answers 0 at the end.
        if unsafe { ffi::PyDict_Next(self.dict.as_ptr(), &mut self.at, &mut key, &mut value) } == 0
        {
            return None;
        }
        let py = self.dict.py();
        // SAFETY: live objects the dict holds, read while it is not changed (`lent_pairs`).
        Some(unsafe { (Borrowed::from_ptr(py, key), Borrowed::from_ptr(py, value)) })
    }
}

/// The pairs of a dict, each with references of its own ([`held_pairs`]).
pub(crate) struct HeldPairs<'a, 'py> {
    dict: &'a Bound<'py, PyDict>,
    at: ffi::Py_ssize_t,
    len: usize,
    read: usize,
}

/// `dict`'s pairs in order, each with references of its own, for a walk whose body may run
/// Python code (see [`lent_pairs`]): a dict whose size changed since the walk began, or
/// that gives more pairs than it had, is refused as iterating it in Python refuses it
/// (`RuntimeError`; pyo3's iterator panics).
pub(crate) fn held_pairs<'a, 'py>(dict: &'a Bound<'py, PyDict>) -> HeldPairs<'a, 'py> {
    HeldPairs {
        dict,
        at: 0,
        len: dict.len(),
        read: 0,
    }
}

impl<'py> Iterator for HeldPairs<'_, 'py> {
    type Item = PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.read > self.len {
            return None; // refused below
        }
        let changed = if self.dict.len() != self.len {
            "dictionary changed size during iteration"
        } else {
            let mut key = std::ptr::null_mut();
            let mut value = std::ptr::null_mut();
            // SAFETY: `dict` is a live dict; `PyDict_Next` lends its key and value, or
            // answers 0 at the end.
            if unsafe { ffi::PyDict_Next(self.dict.as_ptr(), &mut self.at, &mut key, &mut value) }
                == 0
            {
                return None;
            }
            self.read += 1;
            if self.read <= self.len {
                let py = self.dict.py();
                // SAFETY: live objects the dict holds, each made a reference of its own
                // before anything else runs.
                return Some(Ok(unsafe {
                    (
                        Bound::from_borrowed_ptr(py, key),
                        Bound::from_borrowed_ptr(py, value),
                    )
                }));
            }
            "dictionary keys changed during iteration"
        };
        self.read = self.len + 1;
        Some(Err(pyo3::exceptions::PyRuntimeError::new_err(changed)))
    }
}

/// `object`'s instance `__dict__` as `object`'s own `__dict__` descriptor gives it
/// (`PyObject_GenericGetDict`, which that descriptor calls for a class defined in Python: a
/// `Record` does not define `__dict__` itself, and pydantic declares it a slot), without
/// the attribute lookup through the class's MRO that `object.__dict__` costs (~200
/// instructions). `None` for an object without one.
pub(crate) fn instance_dict<'py>(object: &Bound<'py, PyAny>) -> Option<Bound<'py, PyDict>> {
    // SAFETY: `object` is a live object; `PyObject_GenericGetDict` returns a new reference
    // to its instance dict (made if it had none yet), or NULL with an exception set when it
    // has no room for one (taken here: the caller then reads by name).
    unsafe {
        Bound::from_owned_ptr_or_err(
            object.py(),
            ffi::PyObject_GenericGetDict(object.as_ptr(), std::ptr::null_mut()),
        )
    }
    .ok()
    .and_then(|dict| dict.cast_into::<PyDict>().ok())
}

/// A record's fields (a step's, a trajectory's, a verdict's or a result's: a pydantic model
/// keeps its fields in its instance `__dict__` too), each read from its instance dict
/// (`instance_dict`, read once), else as an attribute (a property, an object without one).
/// The checks read every step of a trajectory several times, the emitter eleven fields of
/// every result.
pub(crate) struct StepFields<'py> {
    /// The record itself.
    pub(crate) step: Bound<'py, PyAny>,
    values: Option<Bound<'py, PyDict>>,
}

impl<'py> StepFields<'py> {
    pub(crate) fn new(step: Bound<'py, PyAny>) -> Self {
        let values = instance_dict(&step);
        StepFields { step, values }
    }

    /// The field `name`: the dict's value, else the attribute. Read first at the entry
    /// where records of the same type keep it (`placed`), else looked up.
    pub(crate) fn get(&self, name: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyAny>> {
        if let Some(values) = &self.values {
            if let Some(found) = placed(&self.step, values, name) {
                return Ok(found);
            }
            if let Some(found) = values.get_item(name)? {
                return Ok(found);
            }
        }
        self.step.getattr(name)
    }

    /// The fields `names` (interned), each as `get` reads it, in one walk of the dict from
    /// its entry `at` on (0: the first; `PyDict_Next` from there). A dict made in field
    /// order and never deleted from (a `Record`'s, a model's filled from its template or
    /// validated) is keyed by the interned names themselves at the fields' places, so keys
    /// are matched by identity, without hashing and probing, and the walk stops at the last
    /// one wanted: given in declaration order, from the first one's place, each is met at
    /// the first comparison. A lookup cost ~145 instructions a field. A field whose key is
    /// not the name itself (a dict filled another way), or not in the dict (a property), is
    /// read as `get` reads it.
    pub(crate) fn read<const N: usize>(
        &self,
        at: isize,
        names: [&Bound<'py, PyString>; N],
    ) -> PyResult<[Bound<'py, PyAny>; N]> {
        let py = self.step.py();
        let mut found: [Option<Bound<'py, PyAny>>; N] = std::array::from_fn(|_| None);
        let mut left = N;
        if let Some(values) = &self.values {
            let (mut pos, mut key, mut value): (ffi::Py_ssize_t, _, _) =
                (at, std::ptr::null_mut(), std::ptr::null_mut());
            let mut next = 0;
            // SAFETY: `values` is a live dict, unchanged during the walk (no Python code runs
            // in it: keys are compared by address); `PyDict_Next` lends its key and value
            // (none past its end), and each value kept is taken as a reference of its own
            // while the dict still holds it.
            while left > 0
                && unsafe { ffi::PyDict_Next(values.as_ptr(), &mut pos, &mut key, &mut value) } != 0
            {
                let place = if names.get(next).is_some_and(|n| n.as_ptr() == key) {
                    Some(next)
                } else {
                    names.iter().position(|n| n.as_ptr() == key)
                };
                if let Some(place) = place {
                    if found[place].is_none() {
                        found[place] = Some(unsafe { Bound::from_borrowed_ptr(py, value) });
                        left -= 1;
                    }
                    next = place + 1;
                }
            }
        }
        if left > 0 {
            for (slot, name) in found.iter_mut().zip(names) {
                if slot.is_none() {
                    *slot = Some(self.get(name)?);
                }
            }
        }
        Ok(found.map(|f| f.expect("every field read above")))
    }
}

/// Where records keep their fields in their instance dicts, learned per record type and
/// field name (`placed`): a direct-mapped table of `PLACE_SLOTS` entries, each the
/// pair's fingerprint (`place_key` without its low 16 bits) and the field's entry plus
/// one (0: the dict did not hold it). A slot is filled once, by the first pair that
/// meets it empty; a pair whose slot another took is looked up as before. An entry is a
/// hint only: the key found there is compared with the name by identity before its value
/// is taken, so a wrong or stale place (another order, a collision, a race between
/// threads) costs one `PyDict_Next` and the lookup, never a wrong value.
const PLACE_SLOTS: usize = 512;
static PLACES: [AtomicU64; PLACE_SLOTS] = [const { AtomicU64::new(0) }; PLACE_SLOTS];
const PLACE_BITS: u64 = 0xFFFF;

/// The table's key of a record type and a field name (their addresses, mixed).
#[inline(always)]
fn place_key(ty: usize, name: usize) -> u64 {
    ((ty as u64).rotate_left(29) ^ name as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// `values[name]` read at the entry where `record`'s type keeps `name` (`PLACES`), when
/// the key there is `name` itself; `None` to look it up. A record's dict (a `Record`'s,
/// a model's) is made in field order from its class's template and never deleted from,
/// and its keys are the interned field names the core's `intern!` names are, so the
/// field is at the same entry in every record of its type: `PyDict_Next` from that entry
/// (~50 instructions) instead of a lookup (~120 in a step's 36-key dict, ~950 k a grade
/// of data-2000). The first read of a pair finds its entry by walking the dict once.
#[inline]
fn placed<'py>(
    record: &Bound<'py, PyAny>,
    values: &Bound<'py, PyDict>,
    name: &Bound<'py, PyString>,
) -> Option<Bound<'py, PyAny>> {
    let key = place_key(record.get_type_ptr() as usize, name.as_ptr() as usize);
    let slot = &PLACES[(key >> 55) as usize % PLACE_SLOTS];
    let entry = slot.load(Ordering::Relaxed);
    if entry & !PLACE_BITS != key & !PLACE_BITS || entry == 0 {
        return if entry == 0 {
            learn(slot, key, values, name)
        } else {
            None // another pair's slot
        };
    }
    let place = entry & PLACE_BITS;
    if place == 0 {
        return None;
    }
    let mut pos = (place - 1) as ffi::Py_ssize_t;
    let (mut found, mut value) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: `values` is a live dict; `PyDict_Next` lends the key and value of its first
    // entry at or after `pos` (none past its end) and runs no Python code.
    let more = unsafe { ffi::PyDict_Next(values.as_ptr(), &mut pos, &mut found, &mut value) };
    if more == 0 || found != name.as_ptr() {
        return None;
    }
    // SAFETY: `value` is lent by the live dict, which still holds it (nothing ran since
    // `PyDict_Next` gave it); the reference taken here is the caller's own.
    Some(unsafe { Bound::from_borrowed_ptr(values.py(), value) })
}

/// A pair's first read (`placed`): its entry found by walking `values`, kept in `slot`
/// (0: not held, or past the table's 16 bits), and its value.
#[cold]
#[inline(never)]
fn learn<'py>(
    slot: &AtomicU64,
    key: u64,
    values: &Bound<'py, PyDict>,
    name: &Bound<'py, PyString>,
) -> Option<Bound<'py, PyAny>> {
    let mut pos: ffi::Py_ssize_t = 0;
    let (mut found, mut value) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: as in `placed`; keys are compared by address only, no Python code runs.
    while unsafe { ffi::PyDict_Next(values.as_ptr(), &mut pos, &mut found, &mut value) } != 0 {
        if found == name.as_ptr() {
            // `pos` is past the entry: its index plus one, what the table keeps.
            let place = u64::try_from(pos).unwrap_or(0);
            let place = if place < PLACE_BITS { place } else { 0 };
            slot.store((key & !PLACE_BITS) | place, Ordering::Relaxed);
            // SAFETY: as in `placed`: lent by the live dict, nothing ran since.
            return Some(unsafe { Bound::from_borrowed_ptr(values.py(), value) });
        }
    }
    slot.store(key & !PLACE_BITS, Ordering::Relaxed);
    None
}
