//! Screen hashes: 64-bit hashes of texts that cheap checks compare before a costly one.
//!
//! `loop_detected` groups a tool's calls by their normalized arguments (every string
//! whitespace-collapsed and case-folded, then the whole rendered as JSON), which is costly;
//! a call whose screen differs from every other call's cannot be in a loop, so only calls
//! sharing screens are normalized. A screen must therefore be a function of the normalized
//! text alone (equal normalized texts, equal screens), and any clash only keeps a call for
//! the full normalization, which decides. [`TextHasher`] hashes a byte stream fed in pieces
//! exactly as it hashes the same bytes fed at once; [`squeezed_lower_hash`] hashes an ASCII
//! text lower-cased and without its bytes below `!` (whitespace and control characters),
//! eight bytes at a time.
//!
//! Why those bytes removed, not whitespace collapsed to one space: the result is still a
//! function of the normalized text (removing them from `" ".join(t.split()).casefold()`
//! leaves the same bytes as removing them from `t` lower-cased, for an ASCII `t`), and
//! removal needs no state between words and no test of which control byte is whitespace,
//! so the hash reads a text a machine word at a time (words are shorter than eight bytes,
//! so a byte-by-byte copy of each word was most of the cost). Texts differing only in
//! where their words split, or in control characters, clash, which costs a
//! normalization, never a verdict. Not meant to resist chosen clashes, for the same reason.

/// The hasher's multiplier (the golden ratio's 64-bit fraction, odd).
const HASH_K: u64 = 0x9e37_79b9_7f4a_7c15;

/// `0x01` in every byte.
const ONES: u64 = 0x0101_0101_0101_0101;

/// `0x80` in every byte.
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// MurmurHash3's 64-bit finalizer: every input bit reaches every output bit.
pub fn mix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// Eight bytes folded into the running hash.
fn absorb(h: u64, word: u64) -> u64 {
    (h ^ word).wrapping_mul(HASH_K).rotate_left(29)
}

/// A hash of a byte stream fed in pieces of 0 to 8 bytes (a little-endian `u64` whose
/// bytes above the piece's length are zero): the bytes are packed into words in stream
/// order whatever the pieces were, so the hash is a function of the bytes alone.
#[derive(Clone, Debug)]
pub struct TextHasher {
    h: u64,
    word: u64,
    filled: u32,
    len: u64,
}

impl Default for TextHasher {
    fn default() -> Self {
        Self::new()
    }
}

impl TextHasher {
    /// An empty stream's hasher.
    pub fn new() -> Self {
        TextHasher {
            h: HASH_K,
            word: 0,
            filled: 0,
            len: 0,
        }
    }

    /// The `count` (0 to 8) low bytes of `bytes` appended; the bytes above them are zero.
    #[inline]
    pub fn push(&mut self, bytes: u64, count: u32) {
        debug_assert!(count <= 8 && (count == 8 || bytes >> (8 * count) == 0));
        if count == 0 {
            return;
        }
        let shift = self.filled * 8;
        self.word |= bytes << shift;
        self.filled += count;
        self.len += u64::from(count);
        if self.filled >= 8 {
            self.h = absorb(self.h, self.word);
            self.filled -= 8;
            self.word = if shift == 0 { 0 } else { bytes >> (64 - shift) };
        }
    }

    /// `bytes` appended.
    pub fn push_bytes(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.push(load(chunk), 8);
        }
        let rest = chunks.remainder();
        self.push(load(rest), rest.len() as u32);
    }

    /// The hash of the bytes appended (their length mixed in: trailing zero bytes count).
    pub fn finish(&self) -> u64 {
        let h = if self.filled > 0 {
            absorb(self.h, self.word)
        } else {
            self.h
        };
        mix64(h ^ self.len)
    }
}

/// Up to eight bytes as a little-endian `u64`, zero above them.
#[inline]
fn load(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(word)
}

/// The hash of `bytes` (`TextHasher` fed them at once).
pub fn bytes_hash(bytes: &[u8]) -> u64 {
    let mut hasher = TextHasher::new();
    hasher.push_bytes(bytes);
    hasher.finish()
}

/// Eight ASCII bytes lower-cased (`A`-`Z` get `0x20`): no byte's sum carries into the next,
/// as every byte is below `0x80`.
#[inline]
fn lower8(x: u64) -> u64 {
    let at_least_a = x.wrapping_add(ONES * u64::from(0x80 - b'A'));
    let above_z = x.wrapping_add(ONES * u64::from(0x7f - b'Z'));
    x | ((at_least_a & !above_z & HIGHS) >> 2)
}

/// The high bit of each of eight ASCII bytes below `!` (`0x21`): the space, every ASCII
/// whitespace and the other control characters.
#[inline]
fn low8(x: u64) -> u64 {
    !x.wrapping_add(ONES * u64::from(0x80 - b'!')) & HIGHS
}

/// `x` without the bytes `flags` marks (`low8`'s bits), the others moved down in order and
/// zeros above them, one marked byte at a time (highest first: removing a byte moves only
/// the bytes above it).
#[inline(always)]
fn squeeze_bytewise(mut x: u64, mut flags: u64) -> u64 {
    while flags != 0 {
        let bit = 63 - flags.leading_zeros();
        flags ^= 1u64 << bit;
        let at = bit & !7;
        let above = if at == 56 { 0 } else { x >> (at + 8) };
        x = (x & ((1u64 << at) - 1)) | (above << at);
    }
    x
}

/// `squeeze_bytewise` in one instruction: BMI2's `pext` gathers the bytes kept.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn squeeze_pext(x: u64, flags: u64) -> u64 {
    // 0xff in each marked byte (0x01 times 0xff carries into no other byte).
    let dropped = (flags >> 7).wrapping_mul(0xff);
    // SAFETY: only inlined into `squeezed_lower_hash_bmi2`, which runs only on a CPU with
    // BMI2 (`squeezed_lower_hash` checks).
    unsafe { std::arch::x86_64::_pext_u64(x, !dropped) }
}

/// The loop of `squeezed_lower_hash`, its bytes removed by `pext` (`PEXT`) or one by one.
#[inline(always)]
fn squeeze_chunks<const PEXT: bool>(text: &[u8]) -> u64 {
    let squeeze = |x: u64, flags: u64| -> u64 {
        #[cfg(target_arch = "x86_64")]
        if PEXT {
            return squeeze_pext(x, flags);
        }
        squeeze_bytewise(x, flags)
    };
    let mut hasher = TextHasher::new();
    let mut chunks = text.chunks_exact(8);
    for chunk in &mut chunks {
        let x = lower8(load(chunk));
        let flags = low8(x);
        if flags == 0 {
            hasher.push(x, 8);
        } else if flags != HIGHS {
            hasher.push(squeeze(x, flags), 8 - flags.count_ones());
        }
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let count = rest.len() as u32;
        let x = lower8(load(rest));
        // Only the piece's own bytes: the zeros above it are no text.
        let flags = low8(x) & ((1u64 << (8 * count)) - 1);
        hasher.push(squeeze(x, flags), count - flags.count_ones());
    }
    hasher.finish()
}

/// `squeeze_chunks` compiled for BMI2 and POPCNT (`pext`, `popcnt`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2,popcnt")]
fn squeezed_lower_hash_bmi2(text: &[u8]) -> u64 {
    squeeze_chunks::<true>(text)
}

/// The hash (`bytes_hash`) of `text` (ASCII) lower-cased and without its bytes below `!`:
/// of `" ".join(text.split()).casefold()` without those bytes (the normalized text's
/// spaces and every whitespace run of `text` are among them, and so are the control
/// characters that both keep: removing them from either leaves the same bytes). Eight
/// bytes a step, without a branch per byte: a step with such bytes has them removed by
/// BMI2's `pext` where the CPU runs it fast (`pext_is_fast`), else one by one.
pub fn squeezed_lower_hash(text: &[u8]) -> u64 {
    debug_assert!(text.is_ascii());
    #[cfg(target_arch = "x86_64")]
    if pext_is_fast() {
        // SAFETY: the CPU has BMI2 and POPCNT (`pext_is_fast` checks).
        return unsafe { squeezed_lower_hash_bmi2(text) };
    }
    squeeze_chunks::<false>(text)
}

/// Whether this CPU has BMI2 and POPCNT and runs `pext` in hardware: Intel's (Haswell on)
/// and AMD's from Zen 3 (family 0x19) on. Zen 1 and 2, and Hygon's Zen-based parts, run it
/// in microcode at up to ~300 cycles an instruction, slower than the bytes removed one by
/// one; instruction counts (cachegrind) do not show that, so the choice is by vendor and
/// family. Asked once per process.
#[cfg(target_arch = "x86_64")]
#[allow(unused_unsafe)] // `__cpuid` is an `unsafe fn` in older releases (MSRV 1.80)
fn pext_is_fast() -> bool {
    static FAST: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FAST.get_or_init(|| {
        if !(std::is_x86_feature_detected!("bmi2") && std::is_x86_feature_detected!("popcnt")) {
            return false;
        }
        // SAFETY: CPUID leaves 0 and 1 exist on every x86-64 CPU.
        let (vendor, signature) = unsafe {
            (
                std::arch::x86_64::__cpuid(0),
                std::arch::x86_64::__cpuid(1).eax,
            )
        };
        pext_fast_on([vendor.ebx, vendor.edx, vendor.ecx], signature)
    })
}

/// `pext_is_fast`'s answer for a CPU of this vendor (CPUID leaf 0's `ebx`, `edx`, `ecx`) and
/// signature (leaf 1's `eax`), given BMI2.
#[cfg(any(target_arch = "x86_64", test))]
fn pext_fast_on(vendor: [u32; 3], signature: u32) -> bool {
    let word = |text: &[u8; 4]| u32::from_le_bytes(*text);
    if vendor == [word(b"Genu"), word(b"ineI"), word(b"ntel")] {
        return true;
    }
    if vendor != [word(b"Auth"), word(b"enti"), word(b"cAMD")] {
        return false;
    }
    let family = ((signature >> 8) & 0xf) + ((signature >> 20) & 0xff);
    family >= 0x19
}

/// The hash (`bytes_hash`) of `text` without its bytes below `!`: of a normalized text
/// (`" ".join(t.split()).casefold()`, any UTF-8: such bytes are ASCII characters) as
/// `squeezed_lower_hash` hashes an ASCII text that normalizes to it.
pub fn squeezed_hash(text: &[u8]) -> u64 {
    let mut hasher = TextHasher::new();
    for piece in text.split(|&b| b < b'!') {
        hasher.push_bytes(piece);
    }
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `c` is whitespace to Python's `str.split()` (ASCII only: `\t\n\v\f\r`, the
    /// separators `\x1c`-`\x1f` and the space).
    fn is_python_ascii_space(c: u8) -> bool {
        matches!(c, b'\t'..=b'\r' | 0x1c..=0x1f | b' ')
    }

    /// `" ".join(text.split()).casefold()` of an ASCII text, as Python makes it.
    fn normalized(text: &[u8]) -> Vec<u8> {
        let words: Vec<&[u8]> = text
            .split(|&b| is_python_ascii_space(b))
            .filter(|w| !w.is_empty())
            .collect();
        words.join(&b' ').to_ascii_lowercase()
    }

    /// The specification: the normalized text without its bytes below `!`.
    fn squeezed(text: &[u8]) -> Vec<u8> {
        normalized(text)
            .into_iter()
            .filter(|&b| b >= b'!')
            .collect()
    }

    /// Texts with words, whitespace runs of every kind, control bytes that are not
    /// whitespace, capitals, at every length and offset around the eight-byte steps.
    fn samples() -> Vec<Vec<u8>> {
        let parts: [&[u8]; 12] = [
            b"Hello",
            b" ",
            b"  \t\n",
            b"WORLD",
            b"x",
            b"\x1c\x1f",
            b"\x00\x01\x08\x0e\x1b",
            b"@[`{Z",
            b"aZ",
            b"\x0b\x0c\r",
            b"~\x7f!",
            b"abcdefghijklmnopq",
        ];
        let mut out = vec![Vec::new()];
        let mut state: u64 = 7;
        for _ in 0..4000 {
            let mut text = Vec::new();
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            let pieces = (state >> 60) as usize;
            for k in 0..pieces {
                let pick = ((state >> (k * 4 % 56)) as usize + k) % parts.len();
                text.extend_from_slice(parts[pick]);
            }
            out.push(text);
        }
        for len in 0..40 {
            out.push((0..len).map(|i| b"Ab \tC\nd"[i % 7]).collect());
        }
        out
    }

    #[test]
    fn squeezed_lower_hash_is_the_hash_of_the_squeezed_text() {
        // Both ways of removing bytes: `pext` where this CPU has it, and one by one.
        for text in samples() {
            let want = bytes_hash(&squeezed(&text));
            assert_eq!(squeezed_lower_hash(&text), want, "{text:?}");
            assert_eq!(squeeze_chunks::<false>(&text), want, "{text:?}");
        }
    }

    #[test]
    fn every_ascii_byte_is_lowered_or_removed() {
        for b in 0u8..0x80 {
            let text = [b'a', b, b'b'];
            let want: Vec<u8> = if b < b'!' {
                b"ab".to_vec()
            } else {
                vec![b'a', b.to_ascii_lowercase(), b'b']
            };
            assert_eq!(squeezed_lower_hash(&text), bytes_hash(&want), "{b:#x}");
        }
    }

    #[test]
    fn squeezed_hash_of_the_normalized_text_is_the_ascii_squeeze() {
        // A normalized text (single spaces between words) hashes as its source does.
        assert_eq!(squeezed_hash(b"a b  c\x00"), bytes_hash(b"abc"));
        assert_eq!(squeezed_hash("ß x".as_bytes()), bytes_hash("ßx".as_bytes()));
        for text in samples() {
            assert_eq!(
                squeezed_hash(&normalized(&text)),
                squeezed_lower_hash(&text)
            );
        }
    }

    #[test]
    fn pext_is_used_where_the_cpu_runs_it_in_hardware() {
        let vendor = |text: &[u8; 12]| {
            let word = |at: usize| u32::from_le_bytes(text[at..at + 4].try_into().unwrap());
            [word(0), word(4), word(8)]
        };
        // Signatures (leaf 1's eax): Zen 2 (EPYC 7002), Zen 3 (EPYC 7003), Zen 4, Skylake.
        assert!(!pext_fast_on(vendor(b"AuthenticAMD"), 0x0083_0f10));
        assert!(!pext_fast_on(vendor(b"AuthenticAMD"), 0x0080_0f12)); // Zen 1
        assert!(pext_fast_on(vendor(b"AuthenticAMD"), 0x00a0_0f11));
        assert!(pext_fast_on(vendor(b"AuthenticAMD"), 0x00a1_0f11));
        assert!(pext_fast_on(vendor(b"GenuineIntel"), 0x0005_0654));
        assert!(!pext_fast_on(vendor(b"HygonGenuine"), 0x0090_0f00));
    }

    #[test]
    fn pieces_hash_as_the_whole() {
        let text = b"the quick brown fox jumps over the lazy dog, twice over";
        let whole = bytes_hash(text);
        for split in 0..text.len() {
            let mut hasher = TextHasher::new();
            hasher.push_bytes(&text[..split]);
            hasher.push_bytes(&text[split..]);
            assert_eq!(hasher.finish(), whole, "split at {split}");
        }
        // Different texts (and lengths: trailing zero bytes) hash apart.
        assert_ne!(bytes_hash(b"ab"), bytes_hash(b"ab\0"));
        assert_ne!(bytes_hash(b""), bytes_hash(b"\0"));
        assert_ne!(squeezed_lower_hash(b"ab c"), squeezed_lower_hash(b"ab d"));
    }
}
