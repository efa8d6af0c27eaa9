//! The hash maps and sets of the core: foldhash, seeded from the operating system.
//!
//! Why not std's default: SipHash-1-3 was a tenth of the core's own work in a `grade`
//! (hashing span ids, attribute keys, names, positions: short keys, where SipHash's
//! set-up and finalisation dominate). foldhash (the default of `hashbrown`) hashes such keys
//! in a few multiplications and has no dependencies.
//!
//! Why this is still safe for untrusted keys (span attributes, ids and names come from
//! whoever sends traces): what makes a map floodable is a hash whose collisions can be
//! computed without knowing its state. foldhash mixes every input word with secret seeds
//! through a folded 64x64->128-bit multiply, so colliding keys cannot be chosen offline; the
//! seeds are what must stay unknown. foldhash's own `RandomState` draws them from address
//! space layout and the clock only, so here the process-wide seed and each map's own seed
//! come from std's `RandomState`, whose keys the operating system's random source gives
//! (the same source SipHash maps were keyed from). Each map gets a distinct per-map seed,
//! as std's maps do, so moving the keys of one map into another in iteration order does
//! not degrade into long probe runs. No hash value or map order leaves the core (outputs
//! are ordered by the document, never by a map), so the seeds cannot be read back.
//!
//! Every `HashMap`/`HashSet` of the core and of the Python layer is one of these: use
//! [`FastMap`]/[`FastSet`] with [`FastMapExt`]/[`FastSetExt`] for `new`/`with_capacity`.

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, RandomState};
use std::sync::OnceLock;

use foldhash::fast::{FoldHasher, SeedableRandomState};
use foldhash::SharedSeed;

/// A `HashMap` hashed by foldhash with secret seeds.
pub type FastMap<K, V> = HashMap<K, V, FastState>;

/// A `HashSet` hashed by foldhash with secret seeds.
pub type FastSet<T> = HashSet<T, FastState>;

/// Builds foldhash hashers: the process-wide secret seed and a per-map seed, both drawn
/// from the operating system's random source (through std's `RandomState`).
#[derive(Clone, Debug)]
pub struct FastState(SeedableRandomState);

/// 64 bits from std's `RandomState`, whose SipHash keys the OS random source sets once per
/// thread (each `new` then steps them, so successive calls differ).
fn os_random() -> u64 {
    RandomState::new().hash_one(0x6f74_656c_2d6f_7261_u64)
}

static SHARED_SEED: OnceLock<SharedSeed> = OnceLock::new();

thread_local! {
    /// The next per-map seed of this thread: random start, odd step (full period).
    static NEXT_MAP_SEED: Cell<u64> = Cell::new(os_random());
}

impl Default for FastState {
    #[inline]
    fn default() -> Self {
        let shared = SHARED_SEED.get_or_init(|| SharedSeed::from_u64(os_random()));
        let per_map = NEXT_MAP_SEED.with(|next| {
            let seed = next.get();
            next.set(seed.wrapping_add(0x9e37_79b9_7f4a_7c15));
            seed
        });
        FastState(SeedableRandomState::with_seed(per_map, shared))
    }
}

impl BuildHasher for FastState {
    type Hasher = FoldHasher<'static>;

    #[inline]
    fn build_hasher(&self) -> FoldHasher<'static> {
        self.0.build_hasher()
    }
}

/// `new` and `with_capacity` for [`FastMap`] (std's are only for its default hasher).
pub trait FastMapExt {
    fn new() -> Self;
    fn with_capacity(capacity: usize) -> Self;
}

impl<K, V> FastMapExt for FastMap<K, V> {
    #[inline]
    fn new() -> Self {
        HashMap::with_hasher(FastState::default())
    }

    #[inline]
    fn with_capacity(capacity: usize) -> Self {
        HashMap::with_capacity_and_hasher(capacity, FastState::default())
    }
}

/// `new` and `with_capacity` for [`FastSet`] (std's are only for its default hasher).
pub trait FastSetExt {
    fn new() -> Self;
    fn with_capacity(capacity: usize) -> Self;
}

impl<T> FastSetExt for FastSet<T> {
    #[inline]
    fn new() -> Self {
        HashSet::with_hasher(FastState::default())
    }

    #[inline]
    fn with_capacity(capacity: usize) -> Self {
        HashSet::with_capacity_and_hasher(capacity, FastState::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_map_has_its_own_seed_and_equal_keys_hash_equal_within_one() {
        let (a, b) = (FastState::default(), FastState::default());
        assert_eq!(a.hash_one("span-id"), a.hash_one("span-id"));
        assert_ne!(a.hash_one("span-id"), b.hash_one("span-id"));
        let mut map: FastMap<&str, usize> = FastMap::with_capacity(4);
        map.insert("k", 1);
        *map.entry("k").or_insert(0) += 1;
        let set: FastSet<&str> = ["a", "b", "a"].into_iter().collect();
        assert_eq!((map["k"], set.len()), (2, 2));
    }

    #[test]
    fn the_shared_seed_is_not_foldhash_s_address_and_clock_one() {
        let _ = FastState::default();
        let ours = SeedableRandomState::with_seed(0, SHARED_SEED.get().unwrap());
        let theirs = SeedableRandomState::with_seed(0, SharedSeed::global_random());
        assert_ne!(ours.hash_one(42u64), theirs.hash_one(42u64));
    }
}
