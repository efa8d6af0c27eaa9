//! Protobuf wire-format reading (varints, length-delimited fields), zero-copy over the input,
//! and the one varint writer of the encoders ([`put_varint`], [`varint_len`]).
//!
//! The rules are those of the upb parser the Python decoder used, so a body is accepted or
//! refused exactly as before, with the same reason:
//! - a field whose wire type is not the one its declaration expects is an unknown field and
//!   skipped (groups included); unknown fields are skipped by wire type;
//! - truncation, a length past the end of its enclosing message, a varint longer than 10
//!   bytes, field number 0, wire types 6 and 7, an end-group tag that closes nothing or
//!   another field's group: [`WireError::Corrupt`];
//! - string fields must be UTF-8: [`WireError::BadUtf8`];
//! - messages and groups nest at most [`MAX_DEPTH`] levels below the request: a message
//!   deeper is [`WireError::TooDeep`], a group deeper is [`WireError::Corrupt`].
//!
//! No length is trusted beyond the bytes that remain, so a hostile length field cannot make
//! the reader allocate or read past its input.

use std::fmt;

/// Nesting levels below the top-level message that messages and groups may reach (upb's
/// default decode depth limit, which the Python decoder ran with).
pub const MAX_DEPTH: u32 = 100;

/// Why a body is not a valid protobuf message (upb's wording, which users saw before).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireError {
    Corrupt,
    BadUtf8,
    TooDeep,
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WireError::Corrupt => "Wire format was corrupt",
            WireError::BadUtf8 => "String field had bad UTF-8",
            WireError::TooDeep => "Exceeded upb_DecodeOptions_MaxDepth",
        })
    }
}

impl std::error::Error for WireError {}

pub type Result<T> = std::result::Result<T, WireError>;

/// One field's value as it is on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    Varint(u64),
    Fixed64(u64),
    Bytes(&'a [u8]),
    Fixed32(u32),
    /// A group, already skipped (no OTLP field is a group).
    Group,
}

const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LEN: u8 = 2;
const START_GROUP: u8 = 3;
const END_GROUP: u8 = 4;
const FIXED32: u8 = 5;

/// The fields of one message, in wire order.
///
/// `buf` runs from the message's first byte to the end of the whole body and `end` is the
/// message's own length: upb reads a field's bytes before it checks them against the
/// enclosing message's end, so a string that runs past its message but not past the body
/// is checked for UTF-8 first (and a bad one is reported as such, not as corruption).
/// `depth` is the message's nesting level (the request is 0); groups inside it are checked
/// against [`MAX_DEPTH`] as they are skipped. `strings` are the field numbers declared as
/// strings.
pub struct Fields<'a> {
    buf: &'a [u8],
    pos: usize,
    end: usize,
    depth: u32,
    strings: &'static [u32],
}

impl<'a> Fields<'a> {
    /// The fields of a whole request body.
    pub fn top(body: &'a [u8], strings: &'static [u32]) -> Self {
        Self {
            buf: body,
            pos: 0,
            end: body.len(),
            depth: 0,
            strings,
        }
    }

    /// The fields of `bytes`, a submessage field of this message (a value `next` returned),
    /// or [`WireError::TooDeep`] when it nests past [`MAX_DEPTH`].
    pub fn child(&self, bytes: &'a [u8], strings: &'static [u32]) -> Result<Fields<'a>> {
        let depth = self.depth + 1;
        if depth > MAX_DEPTH {
            return Err(WireError::TooDeep);
        }
        // `bytes` lies inside `buf` (it came from it): its offset locates the rest of the body.
        let offset = (bytes.as_ptr() as usize).wrapping_sub(self.buf.as_ptr() as usize);
        let buf = self.buf.get(offset..).unwrap_or(bytes);
        Ok(Fields {
            buf,
            pos: 0,
            end: bytes.len().min(buf.len()),
            depth,
            strings,
        })
    }

    /// Whether a message `levels` below this one is within [`MAX_DEPTH`] (what
    /// [`Fields::child`] would check for each level on the way).
    #[inline(always)]
    pub fn nests(&self, levels: u32) -> bool {
        self.depth + levels <= MAX_DEPTH
    }

    /// The next `(field number, value)`, `None` at the end of the message.
    ///
    /// Inlined into each message's loop, with one-byte tags and lengths read at once (every
    /// tag of OTLP and most lengths): called once per field and reading a byte at a time
    /// through a ten-step loop, with the declared strings looked up on every field, reading
    /// the fields was ~410 M instructions of decoding data-2000's protobuf (~180 a field).
    #[allow(clippy::should_implement_trait)] // fallible: not an Iterator of plain items
    #[inline(always)]
    pub fn next(&mut self) -> Result<Option<(u32, Value<'a>)>> {
        if self.pos >= self.end {
            return Ok(None);
        }
        let (number, wire_type) = self.tag()?;
        if wire_type == END_GROUP {
            // Nothing is open at a message's own level.
            return Err(WireError::Corrupt);
        }
        let value = self.value(number, wire_type, self.strings)?;
        if self.pos > self.end {
            return Err(WireError::Corrupt);
        }
        Ok(Some((number, value)))
    }

    #[inline(always)]
    fn tag(&mut self) -> Result<(u32, u8)> {
        // upb reads tags and lengths as varints of at most 5 bytes holding a u32.
        let tag = self.short_varint()?;
        let number = tag >> 3;
        if number == 0 {
            return Err(WireError::Corrupt);
        }
        // The low three bits of a u32 fit in a u8.
        Ok((number, (tag & 7) as u8))
    }

    /// The value of field `number` of `wire_type`; `strings` are the field numbers declared
    /// as strings (looked up only for a string that runs past its message).
    #[inline(always)]
    fn value(&mut self, number: u32, wire_type: u8, strings: &[u32]) -> Result<Value<'a>> {
        Ok(match wire_type {
            LEN => {
                let len = self.short_varint()?;
                let rest = self.buf.len().saturating_sub(self.pos);
                let len = usize::try_from(len)
                    .ok()
                    .filter(|len| *len <= rest)
                    .ok_or(WireError::Corrupt)?;
                let bytes = &self.buf[self.pos..self.pos + len];
                self.pos += len;
                if self.pos > self.end && strings.contains(&number) {
                    // Past its message but inside the body: upb checks the UTF-8 first.
                    string(bytes)?;
                }
                Value::Bytes(bytes)
            }
            VARINT => Value::Varint(self.varint()?),
            FIXED64 => Value::Fixed64(u64::from_le_bytes(self.array::<8>()?)),
            FIXED32 => Value::Fixed32(u32::from_le_bytes(self.array::<4>()?)),
            START_GROUP => {
                self.skip_group(number)?;
                Value::Group
            }
            _ => return Err(WireError::Corrupt),
        })
    }

    /// Skip a group up to its matching end tag, iteratively (a stack of open field numbers,
    /// at most [`MAX_DEPTH`] deep).
    #[inline(never)]
    fn skip_group(&mut self, number: u32) -> Result<()> {
        let mut open = vec![number];
        if self.depth + 1 > MAX_DEPTH {
            return Err(WireError::Corrupt);
        }
        while let Some(&innermost) = open.last() {
            if self.pos >= self.end {
                return Err(WireError::Corrupt);
            }
            let (number, wire_type) = self.tag()?;
            match wire_type {
                END_GROUP if number == innermost => {
                    open.pop();
                }
                END_GROUP => return Err(WireError::Corrupt),
                START_GROUP => {
                    // `open.len()` groups are open, each one level below the last.
                    let level = self.depth + 1 + u32::try_from(open.len()).unwrap_or(u32::MAX);
                    if level > MAX_DEPTH {
                        return Err(WireError::Corrupt);
                    }
                    open.push(number);
                }
                _ => {
                    self.value(number, wire_type, &[])?;
                }
            }
        }
        Ok(())
    }

    #[inline(always)]
    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let end = self.pos.checked_add(N).ok_or(WireError::Corrupt)?;
        let bytes = self.buf.get(self.pos..end).ok_or(WireError::Corrupt)?;
        self.pos = end;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    /// A tag or a length: a varint of at most 5 bytes whose value fits a u32. One byte
    /// (below 128) is read here; longer ones by [`Fields::short_varint_long`].
    #[inline(always)]
    fn short_varint(&mut self) -> Result<u32> {
        match self.buf.get(self.pos) {
            Some(&byte) if byte < 0x80 => {
                self.pos += 1;
                Ok(u32::from(byte))
            }
            _ => self.short_varint_long(),
        }
    }

    #[inline(never)]
    fn short_varint_long(&mut self) -> Result<u32> {
        let start = self.pos;
        let value = self.varint_long()?;
        if self.pos - start > 5 {
            return Err(WireError::Corrupt);
        }
        u32::try_from(value).map_err(|_| WireError::Corrupt)
    }

    /// A varint of at most 10 bytes; bits past the 64th are dropped, as upb does. One
    /// byte is read here; longer ones by [`Fields::varint_long`].
    #[inline(always)]
    fn varint(&mut self) -> Result<u64> {
        match self.buf.get(self.pos) {
            Some(&byte) if byte < 0x80 => {
                self.pos += 1;
                Ok(u64::from(byte))
            }
            _ => self.varint_long(),
        }
    }

    #[inline(never)]
    fn varint_long(&mut self) -> Result<u64> {
        let mut value = 0u64;
        for i in 0..10 {
            let byte = *self.buf.get(self.pos).ok_or(WireError::Corrupt)?;
            self.pos += 1;
            value |= u64::from(byte & 0x7f).wrapping_shl(7 * i);
            if byte < 0x80 {
                return Ok(value);
            }
        }
        Err(WireError::Corrupt)
    }
}

/// A string field's value, which must be UTF-8: checked as the JSON decoder checks a body
/// ([`crate::otlp_json::value::utf8`], its ASCII sixteen bytes a step).
///
/// Why: `from_utf8` on every key and value (most of a body's bytes are strings: messages
/// and tool output, ASCII as a rule) was ~117 M instructions of decoding data-2000's
/// protobuf, about two a byte.
#[inline]
pub fn string(bytes: &[u8]) -> Result<&str> {
    crate::otlp_json::value::utf8(bytes).ok_or(WireError::BadUtf8)
}

/// A length-delimited field's bytes at the start of `bytes` (after its tag) and what
/// follows them, for lengths of one to three varint bytes (up to 2 MiB); `None` for a
/// longer varint or a length past the end of `bytes`, which the caller leaves to
/// [`Fields`]. The value is the one [`Fields`] reads (a varint may be overlong: `0x85 0x00`
/// is 5).
#[inline(always)]
pub fn length_prefixed(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let (len, rest) = match *bytes {
        [b0, ref rest @ ..] if b0 < 0x80 => (usize::from(b0), rest),
        [b0, b1, ref rest @ ..] if b1 < 0x80 => {
            (usize::from(b0 & 0x7f) | usize::from(b1) << 7, rest)
        }
        [b0, b1, b2, ref rest @ ..] if b2 < 0x80 => (
            usize::from(b0 & 0x7f) | usize::from(b1 & 0x7f) << 7 | usize::from(b2) << 14,
            rest,
        ),
        _ => return None,
    };
    (len <= rest.len()).then(|| rest.split_at(len))
}

/// An `int32`/enum field: the low 32 bits of the varint (negative values are 10-byte varints).
pub fn int32(varint: u64) -> i32 {
    // Truncation is the wire format's rule for int32.
    varint as u32 as i32
}

/// A `uint32` count (OTLP's `dropped_*_count`s, the only `uint32` fields read): a varint
/// past 2^32-1 reads as `u32::MAX`. Protobuf parsers keep its low 32 bits, so a sender
/// writing 2^32 would read as "nothing dropped" and a list its SDK cut short as complete;
/// saturated, it still says "dropped" (DESIGN.md section 8: fail closed).
pub fn uint32(varint: u64) -> u32 {
    u32::try_from(varint).unwrap_or(u32::MAX)
}

/// `n` as a protobuf varint (seven bits a byte, lowest first, the high bit set on all but
/// the last), each byte handed to `put`: the one writer, for a growing buffer
/// (`|b| buf.push(b)`), a buffer cut to its size, or the bytes kept for a length before its
/// payload. Inlined, a `put` is a store.
#[inline]
pub fn put_varint(mut n: u64, mut put: impl FnMut(u8)) {
    while n >= 0x80 {
        put((n as u8) | 0x80);
        n >>= 7;
    }
    put(n as u8);
}

/// How many bytes [`put_varint`] writes for `n`: one per started group of seven bits (at
/// least one), without a loop.
#[inline]
pub fn varint_len(n: u64) -> usize {
    (64 - (n | 1).leading_zeros() as usize).div_ceil(7)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n`'s varint, as the encoders write it.
    fn varint(n: u64) -> Vec<u8> {
        let mut out = Vec::new();
        put_varint(n, |b| out.push(b));
        out
    }

    #[test]
    fn varints_are_minimal_and_their_lengths_known() {
        for (n, want) in [
            (0u64, vec![0u8]),
            (1, vec![1]),
            (127, vec![0x7f]),
            (128, vec![0x80, 0x01]),
            (300, vec![0xac, 0x02]),
            (
                u64::MAX,
                vec![0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
            ),
        ] {
            assert_eq!(varint(n), want, "{n}");
        }
        for bits in 0..64 {
            for n in [(1u64 << bits) - 1, 1 << bits, (1 << bits) + 1] {
                let written = varint(n);
                assert_eq!(varint_len(n), written.len(), "{n}");
                let field = [&[0x08][..], &written].concat();
                let mut fields = Fields::top(&field, &[]);
                assert_eq!(
                    fields.next().unwrap().map(|(_, value)| value),
                    Some(Value::Varint(n)),
                    "{n}"
                );
            }
        }
    }

    fn all(buf: &[u8]) -> Result<Vec<(u32, Value<'_>)>> {
        let mut fields = Fields::top(buf, &[]);
        let mut out = Vec::new();
        while let Some(field) = fields.next()? {
            out.push(field);
        }
        Ok(out)
    }

    #[test]
    fn reads_each_wire_type() {
        let buf = [
            0x08, 0x96, 0x01, // 1: varint 150
            0x11, 1, 0, 0, 0, 0, 0, 0, 0, // 2: fixed64 1
            0x1a, 0x02, b'h', b'i', // 3: "hi"
            0x25, 2, 0, 0, 0, // 4: fixed32 2
            0x2b, 0x08, 0x01, 0x2c, // 5: group holding a varint
        ];
        assert_eq!(
            all(&buf).unwrap(),
            vec![
                (1, Value::Varint(150)),
                (2, Value::Fixed64(1)),
                (3, Value::Bytes(b"hi")),
                (4, Value::Fixed32(2)),
                (5, Value::Group),
            ]
        );
    }

    #[test]
    fn tags_and_lengths_read_alike_on_both_sides_of_one_byte() {
        // Field numbers and lengths whose varints take one, two and three bytes.
        for number in [1u32, 15, 16, 2047, 2048, 1 << 20] {
            for len in [0usize, 1, 127, 128, 16383, 16384] {
                let payload = vec![b'x'; len];
                let mut buf = varint(u64::from(number << 3 | 2));
                buf.extend(varint(len as u64));
                buf.extend_from_slice(&payload);
                let first_end = buf.len();
                buf.extend(varint(u64::from(number << 3)));
                buf.extend(varint(len as u64 * 1000 + 1));
                assert_eq!(
                    all(&buf).unwrap(),
                    vec![
                        (number, Value::Bytes(&payload)),
                        (number, Value::Varint(len as u64 * 1000 + 1))
                    ],
                    "{number} {len}"
                );
                // Cut inside either field (its tag, its length, its bytes), the body is
                // corrupt whether the varint cut had one byte or more.
                let cuts = (1..first_end.min(8)).chain(first_end + 1..buf.len());
                for cut in cuts {
                    assert_eq!(
                        all(&buf[..cut]),
                        Err(WireError::Corrupt),
                        "{number} {len} {cut}"
                    );
                }
            }
        }
    }

    #[test]
    fn truncation_is_corrupt() {
        for buf in [
            &[0x0a, 0x05, b'a'][..],
            &[0x08, 0x80],
            &[0x11, 1, 2],
            &[0x25],
        ] {
            assert_eq!(all(buf), Err(WireError::Corrupt), "{buf:?}");
        }
    }

    #[test]
    fn a_length_is_never_trusted_beyond_the_input() {
        let buf = [0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f];
        assert_eq!(all(&buf), Err(WireError::Corrupt));
    }

    #[test]
    fn varints_stop_at_ten_bytes() {
        let mut ten = vec![0x08];
        ten.extend([0xff; 9]);
        ten.push(0x7f);
        assert_eq!(all(&ten).unwrap(), vec![(1, Value::Varint(u64::MAX))]);
        let mut eleven = vec![0x08];
        eleven.extend([0xff; 10]);
        eleven.push(0x01);
        assert_eq!(all(&eleven), Err(WireError::Corrupt));
    }

    #[test]
    fn bad_tags_are_corrupt() {
        let six_byte_tag = [0x88, 0x80, 0x80, 0x80, 0x80, 0x00, 0x01];
        for buf in [
            &[0x00][..],
            &[0x0e],
            &[0x0f],
            &[0x0c],
            &[0x0b, 0x14],
            &six_byte_tag,
        ] {
            assert_eq!(all(buf), Err(WireError::Corrupt), "{buf:?}");
        }
    }

    #[test]
    fn groups_nest_up_to_the_depth_limit() {
        let nested = |d: usize| {
            let mut buf = vec![0x7b; d];
            buf.extend(vec![0x7c; d]);
            buf
        };
        assert!(all(&nested(100)).is_ok());
        assert_eq!(all(&nested(101)), Err(WireError::Corrupt));
        // Inside a message at level 99 only one more level is left.
        let buf = [0x7b, 0x7b, 0x7c, 0x7c];
        let mut fields = Fields::top(&buf, &[]);
        fields.depth = 99;
        assert_eq!(fields.next(), Err(WireError::Corrupt));
    }

    #[test]
    fn messages_past_the_depth_limit_are_too_deep() {
        let buf = [0x0a, 0x00];
        let mut top = Fields::top(&buf, &[]);
        let Some((1, Value::Bytes(inner))) = top.next().unwrap() else {
            panic!("a submessage field")
        };
        top.depth = MAX_DEPTH - 1;
        assert!(top.child(inner, &[]).is_ok());
        top.depth = MAX_DEPTH;
        assert_eq!(top.child(inner, &[]).err(), Some(WireError::TooDeep));
    }

    #[test]
    fn a_string_past_its_message_is_checked_for_utf8_first() {
        // Message field 1 of 3 bytes holding string field 1 declared 4 bytes long.
        let run_on = |after: &[u8]| {
            let mut buf = vec![0x0a, 0x03, 0x0a, 0x04, b'a'];
            buf.extend_from_slice(after);
            let mut top = Fields::top(&buf, &[]);
            let Some((1, Value::Bytes(inner))) = top.next()? else {
                return Ok(());
            };
            let mut child = top.child(inner, &[1])?;
            while child.next()?.is_some() {}
            Ok(())
        };
        assert_eq!(run_on(&[0xff, 0xfe, 0xfd]), Err(WireError::BadUtf8));
        assert_eq!(run_on(b"bcd"), Err(WireError::Corrupt));
        assert_eq!(run_on(&[0xff, 0xfe]), Err(WireError::Corrupt));
    }

    #[test]
    fn strings_must_be_utf8_and_int32_truncates() {
        assert_eq!(string(b"ok"), Ok("ok"));
        assert_eq!(string(&[0xff, 0xfe]), Err(WireError::BadUtf8));
        assert_eq!(int32(u64::MAX), -1);
        assert_eq!(int32((1 << 32) + 1), 1);
    }
}
