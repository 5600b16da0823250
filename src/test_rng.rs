//! A tiny deterministic generator for the unit tests (xorshift64): the same seed gives the
//! same sequence on every machine, so a failing case reproduces. The integration tests,
//! benches and examples use `tests/support/rng.rs`.

/// Xorshift64 state; any seed but 0.
#[derive(Clone, Debug)]
pub(crate) struct XorShift(pub(crate) u64);

impl XorShift {
    /// The next 64 random bits.
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..n` (`n > 0`).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}
