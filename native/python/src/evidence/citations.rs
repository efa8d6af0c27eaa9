//! `citations_grounded`'s search for the cited ids (`otel_oracles.grade.oracles
//! .trace_answers._ground`): per id, the first source whose text holds it as a whole id
//! (`otel_oracles_core::citations`), the sources' texts asked of Python once each, when a
//! search first reaches them.

use otel_oracles_core::citations::{
    breaks_run, cites_whole_id, Budget, IdPattern, Needle, Stop, MAX_ID_TEXT,
};
use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyList, PyString};

/// A source's text as the search reads it: its UTF-8 (or, holding a lone surrogate, its
/// `surrogatepass` bytes) and its length in characters; or a text the core made itself
/// (`check_plans_cite`: a structured result written by `json_indented`).
pub(crate) enum Text<'py> {
    Utf8(Bound<'py, PyString>, usize),
    Passed(Bound<'py, PyBytes>, usize),
    Made(String, usize),
}

impl<'py> Text<'py> {
    pub(crate) fn of(text: Bound<'py, PyString>) -> PyResult<Self> {
        let py = text.py();
        let chars = text.len()?;
        if text.to_str().is_ok() {
            return Ok(Text::Utf8(text, chars));
        }
        let passed = text
            .call_method1(
                intern!(py, "encode"),
                (intern!(py, "utf-8"), intern!(py, "surrogatepass")),
            )?
            .cast_into::<PyBytes>()?;
        Ok(Text::Passed(passed, chars))
    }

    /// A text made in the core, its characters counted by the standard library's count,
    /// which reads a word of bytes a step (a byte at a time was ~6 k instructions for the
    /// usual kilobyte-long tool result, more than searching it).
    pub(crate) fn made(text: String) -> Self {
        let chars = text.chars().count();
        Text::Made(text, chars)
    }

    fn bytes(&self) -> PyResult<(&[u8], usize)> {
        Ok(match self {
            Text::Utf8(text, chars) => (text.to_str()?.as_bytes(), *chars),
            Text::Passed(bytes, chars) => (bytes.as_bytes(), *chars),
            Text::Made(text, chars) => (text.as_bytes(), *chars),
        })
    }
}

/// What a search asks of a source (`ground`): there is none (past the last source), its
/// text is unknown (not captured), or its text.
pub(crate) enum Source<'py> {
    End,
    Unknown,
    Text(Text<'py>),
}

/// What the search knows of a source's text of one kind: not asked yet, asked and unknown
/// (`None`: not captured), or the text.
enum Known<'py> {
    Unasked,
    Unknown,
    Text(Text<'py>),
}

/// The texts a search asked of its sources: per source its two texts (made, searched), and
/// the first index with no source once known. Kept by a caller that searches twice (the
/// second search asks only what the first did not) or reads the stand-in texts afterwards
/// (`check_plans_cite`: a failure's list of the ids the sources returned).
#[derive(Default)]
pub(crate) struct Asked<'py> {
    texts: Vec<[Known<'py>; 2]>,
    end: Option<usize>,
}

impl<'py> Asked<'py> {
    /// The `i`-th source's stand-in text, taken out (asked again, it is asked of the
    /// source): `None` when a search did not ask it, `Some(None)` when not captured.
    pub(crate) fn take_searched(&mut self, i: usize) -> Option<Option<Text<'py>>> {
        let known = self.texts.get_mut(i)?;
        match std::mem::replace(&mut known[1], Known::Unasked) {
            Known::Unasked => None,
            Known::Unknown => Some(None),
            Known::Text(text) => Some(Some(text)),
        }
    }
}

/// For each of `ids` (non-empty `str`s), the index of the first source whose text holds it
/// as a whole id, `None` when none does, and the characters left of `budget`; `None` for
/// the whole answer when the search runs past `budget` (the text's characters charged
/// for each text searched, `OCCURRENCE_COST` for each occurrence tested). `source(i, searched)` gives the `i`-th
/// source's text (`searched`: the text `_search_text` stands in for it with, asked for an
/// id without a `_RUN_BREAKS` character; else the made text), `None` when not captured,
/// `False` past the last source; each asked once. `continues_id(char)` says whether a
/// character beyond ASCII would continue an id.
#[pyfunction]
#[pyo3(signature = (ids, source, continues_id, searched, budget, /))]
fn ground_ids<'py>(
    ids: &Bound<'py, PyList>,
    source: &Bound<'py, PyAny>,
    continues_id: &Bound<'py, PyAny>,
    searched: bool,
    budget: i64,
) -> PyResult<Option<(Vec<Option<usize>>, i64)>> {
    let py = ids.py();
    let ask = |i: usize, searched: bool| -> PyResult<Source<'py>> {
        let text = source.call1((i, searched))?;
        Ok(if text.is(PyBool::new(py, false)) {
            Source::End
        } else if text.is_none() {
            Source::Unknown
        } else {
            Source::Text(Text::of(text.cast_into::<PyString>()?)?)
        })
    };
    ground(
        ids,
        ask,
        continues_id,
        searched,
        budget,
        &mut Asked::default(),
    )
}

/// `ground_ids` of a source the caller answers in Rust (`source(i, searched)`, each asked
/// once, the texts kept in `asked`): the one search for cited ids, shared by the function
/// Python calls and `citations_grounded`'s plan.
pub(crate) fn ground<'py>(
    ids: &Bound<'py, PyList>,
    mut source: impl FnMut(usize, bool) -> PyResult<Source<'py>>,
    continues_id: &Bound<'py, PyAny>,
    searched: bool,
    budget: i64,
    asked: &mut Asked<'py>,
) -> PyResult<Option<(Vec<Option<usize>>, i64)>> {
    let py = ids.py();
    let mut budget = Budget::of(budget);
    let Asked { texts, end } = asked;
    let continues = |cp: u32| -> PyResult<bool> {
        // SAFETY: `PyUnicode_FromOrdinal` returns a new reference to a one-character
        // `str`, or NULL with an exception set for a code point beyond U+10FFFF (which
        // `decode_at` never gives from Python's encoded text).
        let char = unsafe {
            Bound::from_owned_ptr_or_err(py, ffi::PyUnicode_FromOrdinal(cp as std::ffi::c_int))?
        };
        continues_id.call1((char,))?.is_truthy()
    };
    let mut found = Vec::with_capacity(ids.len());
    for ident in ids.iter() {
        let ident = ident.cast_into::<PyString>()?;
        let id = Text::of(ident)?;
        let (id_bytes, _) = id.bytes()?;
        if id_bytes.is_empty() {
            return Err(PyValueError::new_err("a cited id is never empty"));
        }
        let kind = usize::from(searched && !breaks_run(id_bytes));
        let needle = Needle::new(id_bytes);
        let mut hit = None;
        let mut i = 0;
        while !end.is_some_and(|end| i >= end) {
            if i == texts.len() {
                texts.push([Known::Unasked, Known::Unasked]);
            }
            if matches!(texts[i][kind], Known::Unasked) {
                texts[i][kind] = match source(i, kind == 1)? {
                    Source::End => {
                        texts.truncate(i);
                        *end = Some(i);
                        break;
                    }
                    Source::Unknown => Known::Unknown,
                    Source::Text(text) => Known::Text(text),
                };
            }
            if let Known::Text(text) = &texts[i][kind] {
                let (bytes, chars) = text.bytes()?;
                match cites_whole_id(&needle, bytes, chars, &mut budget, &continues) {
                    Ok(true) => {
                        hit = Some(i);
                        break;
                    }
                    Ok(false) => {}
                    Err(Stop::OverBudget) => return Ok(None),
                    Err(Stop::Failed(err)) => return Err(err),
                }
            }
            i += 1;
        }
        found.push(hit);
    }
    Ok(Some((found, budget.left())))
}

/// The ids `text` cites under `plan` (`_cited_ids`: in first-seen order, each once) when
/// the core answers it: `None` for a text past `MAX_ID_TEXT` characters, holding a lone
/// surrogate, or with a character beyond ASCII where a `\d` run could take it.
pub(crate) fn plan_ids<'py>(
    plan: &IdPattern,
    text: &Bound<'py, PyString>,
) -> PyResult<Option<Bound<'py, PyList>>> {
    if text.len()? > MAX_ID_TEXT {
        return Ok(None);
    }
    let Ok(utf8) = text.to_str() else {
        return Ok(None);
    };
    plan.ids(utf8)
        .map(|ids| PyList::new(text.py(), ids))
        .transpose()
}

/// The ids `text` cites under `pattern`, when the core answers it: `pattern` is a literal
/// and a digit run (`doc-\d+`, `otel_oracles_core::citations::IdPattern`) and `text` within
/// what `plan_ids` reads; else `None` (the regex engine answers).
#[pyfunction]
#[pyo3(signature = (pattern, text, /))]
fn cited_ids<'py>(
    pattern: &Bound<'py, PyString>,
    text: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyList>>> {
    let (Ok(pattern), Ok(text)) = (pattern.to_str(), text.cast::<PyString>()) else {
        return Ok(None);
    };
    match IdPattern::of(pattern) {
        Some(plan) => plan_ids(&plan, text),
        None => Ok(None),
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(ground_ids, m)?)?;
    m.add_function(wrap_pyfunction!(cited_ids, m)?)
}
