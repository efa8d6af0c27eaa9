//! A protobuf request body cut down to some of its records, without decoding them.
//!
//! Why: `serve`'s receiving process hands each grading worker process the spans of the
//! traces that worker grades, and the spans of one request belong to traces spread over
//! every worker. Sending each worker the whole body made every worker decode the whole
//! stream (a fifth of its busy time with two workers, more with more). The receiving process
//! keeps the body's bytes, not its decoded records, so it cuts the body instead: it walks
//! the request's framing (`ResourceSpans` > `ScopeSpans` > spans, or the logs' equivalent)
//! and copies the chosen records' bytes, each under a copy of its resource and scope fields,
//! into a new request of the same message. The worker decodes that with
//! [`crate::otlp_proto::decode`] and gets exactly the records the whole body gave at those
//! positions, in the same order: a record decodes from its own bytes and its container's
//! resource and scope fields only, and every occurrence of those is copied in wire order
//! (repeated resource or scope fields merge as they did). Schema URLs and unknown fields are
//! left out: the decoder reads them only to drop them.
//!
//! Positions count every record message of the body in wire order, those the decoder
//! rejected too: they are the decoded batch's positions only when the decoder rejected none
//! of the body's records (the caller checks `Batch::rejected`).

use std::mem::MaybeUninit;

use crate::wire::{put_varint, varint_len, Fields, Value, WireError};

/// `ExportTraceServiceRequest` / `ExportLogsServiceRequest`: 1 = the repeated resource
/// container; in it 1 = `Resource`, 2 = the repeated scope container; in that 1 = the
/// scope, 2 = the repeated records. Traces and logs share these numbers.
const CONTAINER: u32 = 1;
const RESOURCE: u32 = 1;
const SCOPES: u32 = 2;
const SCOPE: u32 = 1;
const RECORDS: u32 = 2;

/// The records at chosen positions of a body, with their resource and scope fields: what
/// [`Cut::write`] lays out as a request (measured first, so it is written in one pass into
/// a buffer of exactly its size, the records' bytes copied once).
#[derive(Debug, Default)]
pub struct Cut<'a> {
    containers: Vec<Container<'a>>,
    /// How many of the positions asked were found.
    pub found: usize,
}

#[derive(Debug)]
struct Container<'a> {
    resource: Vec<&'a [u8]>,
    scopes: Vec<ScopeRecords<'a>>,
}

#[derive(Debug)]
struct ScopeRecords<'a> {
    scope: Vec<&'a [u8]>,
    records: Vec<&'a [u8]>,
}

impl ScopeRecords<'_> {
    fn body_len(&self) -> usize {
        fields_len(SCOPE, &self.scope) + fields_len(RECORDS, &self.records)
    }
}

impl Container<'_> {
    fn body_len(&self) -> usize {
        fields_len(RESOURCE, &self.resource)
            + self
                .scopes
                .iter()
                .map(|s| field_len(SCOPES, s.body_len()))
                .sum::<usize>()
    }
}

impl Cut<'_> {
    /// The encoded request's size in bytes.
    pub fn len(&self) -> usize {
        self.containers
            .iter()
            .map(|c| field_len(CONTAINER, c.body_len()))
            .sum()
    }

    /// Whether the request holds no record.
    pub fn is_empty(&self) -> bool {
        self.containers.is_empty()
    }

    /// Write the encoded request into `buf`, which is `len()` bytes long.
    ///
    /// # Panics
    /// When `buf` is not `len()` bytes long.
    pub fn write(&self, buf: &mut [u8]) {
        self.write_uninit(Filling::over(buf).buf);
    }

    /// Write the encoded request into `buf`, which is `len()` bytes long and may be
    /// uninitialised: every byte of it is written. Why: the caller's buffer is the Python
    /// `bytes` object itself, so the records' bytes are copied once, and zeroing it first
    /// (`PyBytes::new_with`) cost as many instructions as the copy.
    ///
    /// # Panics
    /// When `buf` is not `len()` bytes long (so no byte of it is left unwritten).
    pub fn write_uninit(&self, buf: &mut [MaybeUninit<u8>]) {
        let mut out = Filling { buf, at: 0 };
        let out = &mut out;
        for container in &self.containers {
            field_head(out, CONTAINER, container.body_len());
            put_fields(out, RESOURCE, &container.resource);
            for scope in &container.scopes {
                field_head(out, SCOPES, scope.body_len());
                put_fields(out, SCOPE, &scope.scope);
                put_fields(out, RECORDS, &scope.records);
            }
        }
        assert_eq!(out.at, out.buf.len(), "a cut fills its buffer exactly");
    }

    /// The encoded request.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = vec![0; self.len()];
        self.write(&mut out);
        out
    }
}

/// The records at `positions` (ascending, no repeats) of `payload`, and how many of
/// `positions` were found (fewer when some lie past the body's last record). A body the
/// decoder accepted is never refused here; others may be, with the wire reader's error.
pub fn select<'a>(payload: &'a [u8], positions: &[u32]) -> Result<Cut<'a>, WireError> {
    let mut wanted = positions.iter().copied().peekable();
    let mut cut = Cut::default();
    let mut ordinal: u32 = 0;
    let mut top = Fields::top(payload, &[]);
    while let Some((number, value)) = top.next()? {
        if wanted.peek().is_none() {
            break;
        }
        let (CONTAINER, Value::Bytes(container)) = (number, value) else {
            continue;
        };
        let mut resource = Vec::new();
        let mut scopes = Vec::new();
        let mut fields = top.child(container, &[])?;
        while let Some((number, value)) = fields.next()? {
            match (number, value) {
                (RESOURCE, Value::Bytes(bytes)) => resource.push(bytes),
                (SCOPES, Value::Bytes(bytes)) => {
                    let mut scope = Vec::new();
                    let mut records = Vec::new();
                    let mut inner = fields.child(bytes, &[])?;
                    while let Some((number, value)) = inner.next()? {
                        match (number, value) {
                            (SCOPE, Value::Bytes(bytes)) => scope.push(bytes),
                            (RECORDS, Value::Bytes(bytes)) => {
                                if wanted.next_if_eq(&ordinal).is_some() {
                                    records.push(bytes);
                                }
                                ordinal = ordinal.saturating_add(1);
                            }
                            _ => {}
                        }
                    }
                    if !records.is_empty() {
                        scopes.push(ScopeRecords { scope, records });
                    }
                }
                _ => {}
            }
        }
        if !scopes.is_empty() {
            cut.containers.push(Container { resource, scopes });
        }
    }
    cut.found = positions.len() - wanted.len();
    Ok(cut)
}

/// A buffer of the cut's exact size, filled front to back.
struct Filling<'b> {
    buf: &'b mut [MaybeUninit<u8>],
    at: usize,
}

impl<'b> Filling<'b> {
    /// Filling an initialised buffer.
    fn over(buf: &'b mut [u8]) -> Self {
        let len = buf.len();
        // SAFETY: `MaybeUninit<u8>` has `u8`'s layout, and only initialised bytes are
        // written through the new slice, which borrows `buf` for as long as it lives.
        let buf = unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr().cast(), len) };
        Self { buf, at: 0 }
    }

    fn put(&mut self, bytes: &[u8]) {
        let to = &mut self.buf[self.at..self.at + bytes.len()];
        // SAFETY: `to` is `bytes.len()` elements of `MaybeUninit<u8>` (`u8`'s layout), a
        // mutable borrow, so it cannot overlap `bytes`.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), to.as_mut_ptr().cast(), bytes.len());
        }
        self.at += bytes.len();
    }

    /// `n`'s varint ([`put_varint`]).
    fn varint(&mut self, n: u64) {
        put_varint(n, |b| {
            self.buf[self.at].write(b);
            self.at += 1;
        });
    }
}

/// The tag and length of a length-delimited field `number` of `len` bytes.
fn field_head(out: &mut Filling<'_>, number: u32, len: usize) {
    out.varint(u64::from(number) << 3 | 2);
    out.varint(len as u64);
}

/// The encoded size of length-delimited field `number` holding `len` bytes.
fn field_len(number: u32, len: usize) -> usize {
    varint_len(u64::from(number) << 3 | 2) + varint_len(len as u64) + len
}

/// The encoded size of `values` as occurrences of length-delimited field `number`.
fn fields_len(number: u32, values: &[&[u8]]) -> usize {
    values.iter().map(|v| field_len(number, v.len())).sum()
}

fn put_fields(out: &mut Filling<'_>, number: u32, values: &[&[u8]]) {
    for value in values {
        field_head(out, number, value.len());
        out.put(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::otlp_proto::{decode, Signal};

    /// The cut request and how many positions were found.
    fn select(payload: &[u8], positions: &[u32]) -> Result<(Vec<u8>, usize), WireError> {
        let cut = super::select(payload, positions)?;
        assert_eq!(cut.to_vec().len(), cut.len());
        Ok((cut.to_vec(), cut.found))
    }

    fn ld(number: u32, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![0; field_len(number, payload.len())];
        put_fields(&mut Filling::over(&mut out), number, &[payload]);
        out
    }

    fn span(trace: u8, span: u8, name: &str) -> Vec<u8> {
        [
            ld(1, &[trace; 16]),
            ld(2, &[span; 8]),
            ld(5, name.as_bytes()),
        ]
        .concat()
    }

    fn attr(key: &str, value: &str) -> Vec<u8> {
        [ld(1, key.as_bytes()), ld(2, &ld(1, value.as_bytes()))].concat()
    }

    /// Two resources (the first one's resource field split in two occurrences, after its
    /// spans), three scopes, a rejected span, a schema URL and an unknown field.
    fn body() -> Vec<u8> {
        let scope_a = [
            ld(1, &ld(1, b"lib.a")),
            ld(2, &span(1, 1, "a1")),
            ld(2, &[ld(1, &[9; 3]), ld(2, &[9; 8])].concat()), // rejected: 3-byte trace id
            ld(2, &span(2, 2, "a2")),
            ld(3, b"https://schema"),
        ]
        .concat();
        let scope_b = [ld(2, &span(1, 3, "b1")), ld(1, &ld(1, b"lib.b"))].concat();
        let first = [
            ld(2, &scope_a),
            ld(1, &ld(1, &attr("service.name", "svc"))),
            ld(2, &scope_b),
            ld(1, &ld(1, &attr("host", "h"))),
            [0x38, 0x07].to_vec(), // field 7, a varint: unknown
        ]
        .concat();
        let scope_c = [ld(1, &ld(1, b"lib.c")), ld(2, &span(3, 4, "c1"))].concat();
        let second = [
            ld(1, &ld(1, &attr("service.name", "other"))),
            ld(2, &scope_c),
        ]
        .concat();
        [ld(1, &first), ld(1, &second)].concat()
    }

    fn names(payload: &[u8]) -> Vec<String> {
        let batch = decode(payload, Signal::Traces).unwrap().batch;
        batch
            .spans
            .iter()
            .map(|s| s.name.as_str().to_string())
            .collect()
    }

    #[test]
    fn chosen_spans_decode_as_in_the_whole_body() {
        let whole = decode(&body(), Signal::Traces).unwrap().batch;
        assert_eq!(whole.rejected, 1);
        // Positions count the rejected span (ordinal 1): a2 is 2, b1 3, c1 4.
        let (cut, found) = select(&body(), &[0, 3, 4]).unwrap();
        assert_eq!(found, 3);
        let part = decode(&cut, Signal::Traces).unwrap().batch;
        assert_eq!(part.rejected, 0);
        let kept: Vec<_> = [0, 2, 3].iter().map(|&i| &whole.spans[i]).collect();
        assert_eq!(part.spans.len(), kept.len());
        for (got, want) in part.spans.iter().zip(kept) {
            assert_eq!(got, want);
        }
        assert!(cut.len() < body().len());
    }

    #[test]
    fn containers_without_a_chosen_record_are_left_out() {
        let (cut, found) = select(&body(), &[4]).unwrap();
        assert_eq!((found, names(&cut)), (1, vec!["c1".to_string()]));
        let (cut, _) = select(&body(), &[2]).unwrap();
        assert_eq!(names(&cut), ["a2"]);
        assert_eq!(select(&body(), &[]).unwrap(), (Vec::new(), 0));
    }

    #[test]
    fn positions_past_the_last_record_are_not_found() {
        let (cut, found) = select(&body(), &[3, 5, 9]).unwrap();
        assert_eq!((found, names(&cut)), (1, vec!["b1".to_string()]));
    }

    #[test]
    fn log_records_are_cut_the_same_way() {
        // A log record of only `time_unix_nano` (field 1, a fixed64).
        let log = |time: u8| {
            let mut fixed = vec![0x09];
            fixed.extend_from_slice(&u64::from(time).to_le_bytes());
            fixed
        };
        let scope = [
            ld(1, &ld(1, b"lib")),
            ld(2, &log(1)),
            ld(2, &log(2)),
            ld(2, &log(3)),
        ]
        .concat();
        let whole = ld(
            1,
            &[ld(1, &ld(1, &attr("service.name", "s"))), ld(2, &scope)].concat(),
        );
        let (cut, found) = select(&whole, &[0, 2]).unwrap();
        assert_eq!(found, 2);
        let logs = decode(&cut, Signal::Logs).unwrap().batch.logs;
        let times: Vec<u64> = logs.iter().map(|r| r.time_ns).collect();
        assert_eq!(times, [1, 3]);
        assert_eq!(
            logs[0].resource,
            decode(&whole, Signal::Logs).unwrap().batch.logs[0].resource
        );
    }
}
