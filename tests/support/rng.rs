//! SplitMix64: a tiny, fast, seedable pseudo-random generator for tests, benchmarks and
//! examples.
//!
//! The same seed gives the same sequence on every machine, so a failing seed reproduces
//! exactly. Every seed is usable, 0 included. Included with `#[path]` by the targets that
//! need it (directly, or through `corpus.rs`), each of which uses a part of it.
#![allow(dead_code)]

/// SplitMix64 state: a counter advanced by a fixed odd constant, whose value is mixed into
/// each output.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator whose whole output is determined by `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`0 < n <= 2^32`): the high 32 bits of the next output scaled
    /// by `n` (multiply and shift, no division; uniform within `n / 2^32`).
    pub fn below(&mut self, n: usize) -> usize {
        (((self.next_u64() >> 32) * n as u64) >> 32) as usize
    }

    /// A number in `lo..=hi` (`lo <= hi`).
    pub fn between(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// True with a probability of `percent` in 100 (`percent` 0 never, 100 always).
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// A random element of a non-empty slice.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}
