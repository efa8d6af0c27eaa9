//! The evaluator's in-memory replay of a trajectory's file edits over a contract's workspace
//! (`otel_oracles.replay.WorkspaceReplay`), for the edits on its usual path.
//!
//! `InMemoryReplay` holds a workspace's own files as `otel_oracles.replay` wrote them in
//! memory (path -> bytes, the directories they need, the most entries the trajectory may
//! bring the replay to), made once per compiled contract. `replay(steps)` walks
//! the steps once, picks the file edits as `Trajectory.file_edits` does (kind equal to the
//! `file_edit` member, a path given) and writes each into a copy of the files, exactly as
//! the Python replay's usual path writes it (`_InMemory.write`).
//!
//! Only the usual path is taken here, so no rule of `posixpath.normpath` is reimplemented:
//! a path is written only when it is already in normal form (no NUL, no backslash, no empty,
//! `.` or `..` piece, no drive prefix, at most `max_parts` pieces, no piece over `name_max`
//! UTF-8 bytes and no more than `path_max` in all), its text and the content's are
//! encodable as UTF-8 (no lone surrogate), no file stands where a directory is needed, no
//! directory where the file goes, and the count of entries stays within the limit. At the
//! first edit off that path (a refusal, a path to normalize, a name only the disk can
//! decide, a value of another type) the answer is `None`, and Python replays the whole
//! trajectory again in its own order: its refusals, their order (the created-entries count
//! first) and their messages are decided there alone.
//!
//! Before, the walk was a Python comprehension comparing each step's kind (~11,000
//! instructions a run of 20 steps) and each write a Python method (~6,700 per edit).

use otel_oracles_core::hashing::{FastSet, FastSetExt};
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};

use crate::pydict::StepFields;

/// A workspace's own files written in memory, from which each trajectory's edits are
/// replayed (`otel_oracles.replay.WorkspaceReplay`, one per compiled contract).
#[pyclass(module = "otel_oracles._native", name = "InMemoryReplay", frozen)]
pub struct InMemoryReplay {
    /// The workspace's files (path -> bytes), copied for each replay.
    files: Py<PyDict>,
    /// Their paths.
    names: FastSet<String>,
    /// The directories they need.
    dirs: FastSet<String>,
    /// The most entries (files and directories) a replay may hold.
    limit: usize,
    /// The kind of a file edit (`StepKind.FILE_EDIT`).
    file_edit: Py<PyAny>,
    /// Whether `file_edit` is an `enum.Enum` member: then a kind of its class that is not
    /// the member itself is another value, unequal to it (no comparison needed).
    member: bool,
    /// Most pieces a path may have (`MAX_PATH_PARTS + 1`).
    max_parts: usize,
    /// Longest piece, in UTF-8 bytes, the memory vouches for (`NAME_MAX`).
    name_max: usize,
    /// Most UTF-8 bytes of all the pieces of a path together (`PATH_SOFT_MAX`).
    path_max: usize,
}

/// The text of an exact `str`, `None` for a subclass or a text with a lone surrogate.
fn exact_text<'a>(value: &'a Bound<'_, PyAny>) -> Option<&'a str> {
    value.cast_exact::<PyString>().ok()?.to_str().ok()
}

/// `text.encode("utf-8")`, `None` for a text holding a lone surrogate (the error cleared).
fn utf8_bytes<'py>(text: &Bound<'py, PyString>) -> Option<Bound<'py, PyBytes>> {
    // SAFETY: `text` is a live `str`; `PyUnicode_AsUTF8String` returns a new reference to a
    // `bytes`, or NULL with an exception set (taken and dropped here).
    unsafe { Bound::from_owned_ptr_or_err(text.py(), ffi::PyUnicode_AsUTF8String(text.as_ptr())) }
        .ok()
        .and_then(|bytes| bytes.cast_into::<PyBytes>().ok())
}

impl InMemoryReplay {
    /// Whether `path` is its own normal form, refused by nothing and vouched for by the
    /// memory (what `checked_parts` and `_plan` accept without normalizing it).
    fn usual(&self, path: &str) -> bool {
        let bytes = path.as_bytes();
        if bytes.contains(&0) || bytes.contains(&b'\\') {
            return false;
        }
        if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
            return false; // a drive (`_DRIVE`)
        }
        let mut parts = 0;
        for piece in bytes.split(|&b| b == b'/') {
            if piece.is_empty() || piece == b"." || piece == b".." || piece.len() > self.name_max {
                return false;
            }
            parts += 1;
        }
        let total = bytes.len() - (parts - 1); // the pieces without their slashes
        parts <= self.max_parts && total <= self.path_max
    }
}

#[pymethods]
impl InMemoryReplay {
    /// `files` (path -> bytes, each path in normal form) and `dirs` written by the Python
    /// replay; `limit` the most entries a replay may hold; `file_edit` the kind of a file
    /// edit; the path bounds as `replay` names them.
    #[new]
    #[pyo3(signature = (files, dirs, limit, file_edit, max_parts, name_max, path_max, /))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        files: &Bound<'_, PyDict>,
        dirs: &Bound<'_, PyAny>,
        limit: usize,
        file_edit: &Bound<'_, PyAny>,
        max_parts: usize,
        name_max: usize,
        path_max: usize,
    ) -> PyResult<Self> {
        let mut names = FastSet::with_capacity(files.len());
        for key in files.keys() {
            names.insert(key.cast::<PyString>()?.to_str()?.to_owned());
        }
        let mut known = FastSet::new();
        for dir in dirs.try_iter()? {
            known.insert(dir?.cast::<PyString>()?.to_str()?.to_owned());
        }
        let py = files.py();
        let enum_type = py
            .import(intern!(py, "enum"))?
            .getattr(intern!(py, "Enum"))?;
        Ok(InMemoryReplay {
            files: files.copy()?.unbind(),
            names,
            dirs: known,
            limit,
            file_edit: file_edit.clone().unbind(),
            member: file_edit.is_instance(&enum_type)?,
            max_parts,
            name_max,
            path_max,
        })
    }

    /// The files after `steps`' file edits (a new dict: the workspace's files, then each
    /// edit's path -> its content's UTF-8 bytes, `b""` for content not given), or `None`
    /// when an edit leaves the usual path (see the module's text).
    #[pyo3(signature = (steps, /))]
    fn replay<'py>(&self, steps: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let py = steps.py();
        let file_edit = self.file_edit.bind(py);
        let (kind_key, path_key) = (intern!(py, "kind"), intern!(py, "path"));
        let content_key = intern!(py, "content");
        let kind_type = file_edit.get_type();
        let files = self.files.bind(py).copy()?;
        let mut names: FastSet<String> = FastSet::new();
        let mut dirs: FastSet<String> = FastSet::new();
        let steps: Vec<Bound<'py, PyAny>> = match steps.cast_exact::<PyList>() {
            Ok(list) => list.iter().collect(),
            Err(_) => steps.try_iter()?.collect::<PyResult<_>>()?,
        };
        for step in &steps {
            let fields = StepFields::new(step.clone());
            let kind = fields.get(kind_key)?;
            // `kind == file_edit`: the member itself; another member of its enum is another
            // value (members are unique by value); anything else is compared as Python
            // compares it.
            if !kind.is(file_edit)
                && ((self.member && kind.get_type().is(&kind_type)) || !kind.eq(file_edit)?)
            {
                continue;
            }
            let path = fields.get(path_key)?;
            if path.is_none() {
                continue;
            }
            let Some(text) = exact_text(&path) else {
                return Ok(None);
            };
            if text.is_empty() {
                continue;
            }
            if !self.usual(text) {
                return Ok(None);
            }
            let content = fields.get(content_key)?;
            let data = if content.is_none() {
                PyBytes::new(py, b"")
            } else {
                match content.cast_exact::<PyString>().ok().and_then(utf8_bytes) {
                    Some(data) => data,
                    None => return Ok(None),
                }
            };
            // What the edits created so far lives beside the workspace's own entries (never
            // among them): nothing is copied per trajectory.
            let bytes = text.as_bytes();
            for at in (0..bytes.len()).filter(|&at| bytes[at] == b'/') {
                let prefix = &text[..at];
                if self.names.contains(prefix) || names.contains(prefix) {
                    return Ok(None); // a file where a directory is needed
                }
                if !self.dirs.contains(prefix) && !dirs.contains(prefix) {
                    dirs.insert(prefix.to_owned());
                }
            }
            if self.dirs.contains(text) || dirs.contains(text) {
                return Ok(None); // a directory where the file goes
            }
            files.set_item(&path, data)?;
            if !self.names.contains(text) && !names.contains(text) {
                names.insert(text.to_owned());
            }
            if self.names.len() + names.len() + self.dirs.len() + dirs.len() > self.limit {
                return Ok(None); // the count refused, in Python's words
            }
        }
        Ok(Some(files))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<InMemoryReplay>()?;
    Ok(())
}
