//! `text`: a Python `str` of a long Rust text, copied into the new string's storage rather
//! than decoded into it when the text is ASCII.
//!
//! Why: `PyString::new` is `PyUnicode_FromStringAndSize`, which decodes its bytes as UTF-8
//! (`ascii_decode`, a word-at-a-time check and copy: about one instruction a byte) even when
//! the caller knows them to be ASCII. The limited API the module is built for has no
//! constructor that skips that scan (`PyUnicode_New` and `PyUnicode_FromKindAndData` are
//! outside it), and the decoded records' long attribute values (prompts, messages, tool
//! output: most of a collector's bytes) paid it for every span, ~56 M instructions of
//! data-2000's stage decode. Here a text of at least [`MIN_COPIED`] ASCII bytes (checked in
//! Rust, vectorized) gets a fresh compact ASCII string of its length from `" " * len`
//! (`PySequence_Repeat`: `PyUnicode_New` and a `memset`), whose storage
//! `PyUnicode_AsUTF8AndSize` gives (for a compact ASCII string its UTF-8 form is its
//! storage), and the bytes are copied there before the string is handed to anyone: what
//! CPython's own constructors do between `PyUnicode_New` and returning.
//!
//! That the storage is what `PyUnicode_AsUTF8AndSize` points to is checked once per process
//! ([`Storage::probe`]): a probe string written through the pointer must compare equal to
//! its text and hash as that text's `str` does. Where it does not (another interpreter's
//! layout), every string is made by `PyString::new` as before.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyString;

/// Texts shorter than this are made by `PyString::new`: the repeat and the pointer lookup
/// cost about what scanning a few dozen bytes does.
const MIN_COPIED: usize = 128;

/// Whether fresh repeated strings can be written through their UTF-8 pointer here, found
/// once per process by [`Storage::probe`].
struct Storage {
    writable: bool,
}

static STORAGE: PyOnceLock<Storage> = PyOnceLock::new();

impl Storage {
    /// Writes a probe text into a fresh `" " * len` and checks that Python reads that text
    /// back: equal to the text's `str` made the usual way, with the same hash (computed
    /// after the write, as for every string this module makes).
    fn probe(py: Python<'_>) -> Storage {
        let sample: String = (0..MIN_COPIED as u32 + 37)
            .map(|i| char::from(b'!' + (i % 90) as u8))
            .collect();
        let writable = match copied(py, &sample) {
            Some(made) => {
                let usual = PyString::new(py, &sample);
                made.as_any().eq(&usual).unwrap_or(false)
                    && made
                        .hash()
                        .ok()
                        .is_some_and(|h| usual.hash().ok() == Some(h))
                    && made.to_str().ok() == Some(sample.as_str())
            }
            None => false,
        };
        Storage { writable }
    }
}

/// `text` as a new Python `str`: copied into its storage when it is long and ASCII and the
/// interpreter's strings were found writable that way, else `PyString::new(text)`.
pub(crate) fn text<'py>(py: Python<'py>, text: &str) -> Bound<'py, PyString> {
    if text.len() >= MIN_COPIED
        && is_ascii(text.as_bytes())
        && STORAGE.get_or_init(py, || Storage::probe(py)).writable
    {
        if let Some(made) = copied(py, text) {
            return made;
        }
    }
    PyString::new(py, text)
}

/// Whether `bytes` are all ASCII: sixty-four bytes a step with SSE2 (part of every x86-64
/// CPU), the last few by `is_ascii`.
///
/// Why not `is_ascii` throughout: it reads a word at a time, about a third of an
/// instruction a byte, which gave back a third of what skipping CPython's scan saved.
#[cfg(target_arch = "x86_64")]
fn is_ascii(bytes: &[u8]) -> bool {
    use std::arch::x86_64::{_mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128};
    const LANES: usize = 16;
    const STEP: usize = 4 * LANES;
    let mut at = 0;
    while at + STEP <= bytes.len() {
        // SAFETY: the four unaligned 16-byte loads read `bytes[at..at + STEP]`, inside
        // `bytes`; SSE2 is part of the x86_64 target.
        let high = unsafe {
            let lane = |i: usize| _mm_loadu_si128(bytes.as_ptr().add(at + i * LANES).cast());
            let any = _mm_or_si128(
                _mm_or_si128(lane(0), lane(1)),
                _mm_or_si128(lane(2), lane(3)),
            );
            _mm_movemask_epi8(any)
        };
        if high != 0 {
            return false;
        }
        at += STEP;
    }
    bytes[at..].is_ascii()
}

/// [`is_ascii`] where SSE2 is not at hand.
#[cfg(not(target_arch = "x86_64"))]
fn is_ascii(bytes: &[u8]) -> bool {
    bytes.is_ascii()
}

/// `" " * len(text)` with `text` (ASCII, at least two bytes: `" " * 1` is `" "` itself)
/// copied over its spaces, or `None` (any error cleared) when the string is not a fresh
/// one of that length whose UTF-8 pointer can be written.
fn copied<'py>(py: Python<'py>, text: &str) -> Option<Bound<'py, PyString>> {
    debug_assert!(text.is_ascii() && text.len() >= 2);
    let len = ffi::Py_ssize_t::try_from(text.len()).ok()?;
    let space = pyo3::intern!(py, " ");
    // SAFETY: `space` is a live `str`; `PySequence_Repeat` returns a new reference or NULL
    // with an exception set (cleared by `from_owned_ptr_or_err` into the `Err`).
    let repeated = unsafe {
        Bound::from_owned_ptr_or_err(py, ffi::PySequence_Repeat(space.as_ptr(), len)).ok()?
    };
    let string = repeated.cast_into_exact::<PyString>().ok()?;
    // Fresh: only this reference (not a cached or interned string), so nothing has read its
    // content, hashed it, or can see it change.
    // SAFETY: `string` is a live object.
    if unsafe { ffi::Py_REFCNT(string.as_ptr()) } != 1 {
        return None;
    }
    let mut size: ffi::Py_ssize_t = 0;
    // SAFETY: `string` is a live `str`; the pointer is NULL with an exception set, or
    // `size + 1` bytes the string owns.
    let data = unsafe { ffi::PyUnicode_AsUTF8AndSize(string.as_ptr(), &mut size) };
    if data.is_null() {
        PyErr::take(py);
        return None;
    }
    if size != len {
        return None;
    }
    // SAFETY: `data` points to `len` bytes (and the terminating NUL) of the string's own
    // storage (a compact ASCII string's UTF-8 form is its storage, which the probe
    // checked), not shared with any other object; `text` is `len` ASCII bytes, so the
    // string stays valid compact ASCII.
    unsafe { std::ptr::copy_nonoverlapping(text.as_ptr(), data.cast_mut().cast(), text.len()) };
    Some(string)
}
